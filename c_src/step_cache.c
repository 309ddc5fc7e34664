/*
** step_cache.c: storing, finding and evicting step outcomes by their
** inputs.  See step_cache.h for the invariant it keeps; the search
** (search.c) records the reads, re-asks them and applies the outcomes.
*/
#include "step_cache.h"

#include <stdlib.h>
#include <string.h>

void step_log_add(step_log *l, const step_read *r, const uint8_t *name, size_t len)
{
    if (l->poisoned)
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        step_read *grown = realloc(l->r, cap * sizeof *grown);
        if (grown == NULL) {
            l->poisoned = 1;
            return;
        }
        l->r = grown;
        l->cap = cap;
    }
    if (l->nbytes + len > l->capbytes) {
        size_t cap = l->capbytes ? 2 * l->capbytes : 256;
        while (cap < l->nbytes + len)
            cap *= 2;
        uint8_t *grown = realloc(l->bytes, cap);
        if (grown == NULL) {
            l->poisoned = 1;
            return;
        }
        l->bytes = grown;
        l->capbytes = cap;
    }
    step_read *at = &l->r[l->n++];
    *at = *r;
    at->name_off = (uint32_t)l->nbytes;
    at->name_len = (uint32_t)len;
    if (len > 0)
        memcpy(l->bytes + l->nbytes, name, len);
    l->nbytes += len;
}

void step_log_reset(step_log *l)
{
    l->n = 0;
    l->nbytes = 0;
    l->poisoned = 0;
}

void step_log_free(step_log *l)
{
    free(l->r);
    free(l->bytes);
    memset(l, 0, sizeof *l);
}

static uint64_t key_hash(const step_key *k)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    uint32_t w[7] = { k->pid, k->run, k->choice, k->flags, k->cont, k->msg, k->dict };
    for (int i = 0; i < 7; i++) {
        h ^= w[i];
        h *= 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    return h;
}

static int key_eq(const step_key *a, const step_key *b)
{
    return a->pid == b->pid && a->run == b->run && a->choice == b->choice &&
           a->flags == b->flags && a->cont == b->cont && a->msg == b->msg &&
           a->dict == b->dict;
}

step_cache *step_cache_new(size_t max_entries, size_t max_bytes)
{
    if (max_entries == 0)
        max_entries = 1;
    step_cache *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->nbuckets = 64;
    c->capslots = 32;
    c->buckets = calloc(c->nbuckets, sizeof *c->buckets);
    c->slots = calloc(c->capslots, sizeof *c->slots);
    if (c->buckets == NULL || c->slots == NULL) {
        free(c->buckets);
        free(c->slots);
        free(c);
        return NULL;
    }
    c->max_entries = max_entries;
    c->max_bytes = max_bytes;
    c->bytes = c->nbuckets * sizeof *c->buckets + c->capslots * sizeof *c->slots;
    return c;
}

/* Room for one more entry: the clock and the buckets grow by doubling (at
** most two entries per bucket on average).  0, or -1 when out of memory. */
static int grow(step_cache *c)
{
    if (c->n == c->capslots) {
        size_t cap = 2 * c->capslots;
        step_entry **slots = realloc(c->slots, cap * sizeof *slots);
        if (slots == NULL)
            return -1;
        c->slots = slots;
        c->bytes += (cap - c->capslots) * sizeof *slots;
        c->capslots = cap;
    }
    if (c->n + 1 > 2 * c->nbuckets) {
        size_t nb = 2 * c->nbuckets;
        step_entry **b = calloc(nb, sizeof *b);
        if (b == NULL)
            return -1;
        for (size_t i = 0; i < c->n; i++) {
            step_entry *e = c->slots[i];
            e->chain = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
        }
        free(c->buckets);
        c->buckets = b;
        c->bytes += (nb - c->nbuckets) * sizeof *b;
        c->nbuckets = nb;
    }
    return 0;
}

static void term_free(term_in *t)
{
    free(t->etf);
    t->etf = NULL;
}

static void alt_free(step_alt *a)
{
    for (size_t i = 0; i < a->res.neffects; i++) {
        term_free(&a->res.effects[i].term);
        term_free(&a->res.effects[i].term2);
        term_free(&a->res.effects[i].term3);
    }
    free(a->res.effects);
    term_free(&a->res.cont);
    term_free(&a->res.reason);
    term_free(&a->res.dict);
    free(a->res.label);
    free(a->reads);
    free(a->names);
    free(a);
}

static void entry_free(step_entry *e)
{
    for (step_alt *a = e->alts; a != NULL;) {
        step_alt *next = a->next;
        alt_free(a);
        a = next;
    }
    free(e);
}

void step_cache_free(step_cache *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->n; i++)
        entry_free(c->slots[i]);
    free(c->buckets);
    free(c->slots);
    free(c);
}

size_t step_cache_bytes(const step_cache *c)
{
    return c == NULL ? 0 : c->bytes;
}

step_entry *step_cache_find(step_cache *c, const step_key *k)
{
    uint64_t h = key_hash(k);
    for (step_entry *e = c->buckets[h & (c->nbuckets - 1)]; e != NULL; e = e->chain)
        if (e->hash == h && key_eq(&e->key, k)) {
            e->referenced = 1;
            return e;
        }
    return NULL;
}

/* Removes the entry in clock slot i: the last slot's entry moves there. */
static void evict_slot(step_cache *c, size_t i)
{
    step_entry *e = c->slots[i];
    step_entry **p = &c->buckets[e->hash & (c->nbuckets - 1)];
    while (*p != e)
        p = &(*p)->chain;
    *p = e->chain;
    c->bytes -= e->bytes;
    entry_free(e);
    c->n--;
    if (i != c->n) {
        c->slots[i] = c->slots[c->n];
        c->slots[i]->slot = (uint32_t)i;
    }
    c->evictions++;
}

/* CLOCK: the first entry from the hand on not used since the hand last
** passed it, never `keep`.  0, or -1 when only `keep` is left. */
static int evict_one(step_cache *c, const step_entry *keep)
{
    if (c->n == 0 || (c->n == 1 && c->slots[0] == keep))
        return -1;
    for (;;) {
        if (c->hand >= c->n)
            c->hand = 0;
        step_entry *e = c->slots[c->hand];
        if (e != keep && !e->referenced) {
            evict_slot(c, c->hand);
            return 0;
        }
        e->referenced = 0;
        c->hand++;
    }
}

static int term_copy(term_in *dst, const term_in *src, size_t *bytes)
{
    dst->id = src->id;
    dst->len = src->len;
    dst->etf = NULL;
    if (src->etf == NULL)
        return 0;
    dst->etf = malloc(src->len ? src->len : 1);
    if (dst->etf == NULL)
        return -1;
    memcpy(dst->etf, src->etf, src->len);
    *bytes += src->len;
    return 0;
}

static step_alt *alt_new(const step_log *log, const run_result *res, size_t *bytes)
{
    step_alt *a = calloc(1, sizeof *a);
    if (a == NULL)
        return NULL;
    *bytes = sizeof *a;
    a->res = *res;
    a->res.effects = NULL;
    a->res.neffects = 0;
    a->res.cont.etf = a->res.reason.etf = a->res.dict.etf = NULL;
    a->res.label = NULL;
    /* Borrowed for the call that ran the step: the descriptor is kept by
    ** the continuation's part (dead_payload.h), which a hit finds again. */
    a->res.payload = NULL;
    a->res.payload_len = 0;
    int err = 0;
    a->reads = malloc((log->n ? log->n : 1) * sizeof *a->reads);
    a->names = malloc(log->nbytes ? log->nbytes : 1);
    a->res.effects = calloc(res->neffects ? res->neffects : 1, sizeof *a->res.effects);
    a->res.label = malloc(res->label_len ? res->label_len : 1);
    if (a->reads == NULL || a->names == NULL || a->res.effects == NULL ||
        a->res.label == NULL) {
        alt_free(a);
        return NULL;
    }
    if (log->n > 0)
        memcpy(a->reads, log->r, log->n * sizeof *a->reads);
    a->nreads = log->n;
    if (log->nbytes > 0)
        memcpy(a->names, log->bytes, log->nbytes);
    if (res->label_len > 0)
        memcpy(a->res.label, res->label, res->label_len);
    *bytes += log->n * sizeof *a->reads + log->nbytes +
              res->neffects * sizeof *a->res.effects + res->label_len;
    for (size_t i = 0; i < res->neffects && !err; i++) {
        effect *d = &a->res.effects[i];
        const effect *e = &res->effects[i];
        *d = *e;
        d->term.etf = d->term2.etf = d->term3.etf = NULL;
        a->res.neffects = i + 1;
        err = term_copy(&d->term, &e->term, bytes) ||
              term_copy(&d->term2, &e->term2, bytes) ||
              term_copy(&d->term3, &e->term3, bytes);
    }
    if (err || term_copy(&a->res.cont, &res->cont, bytes) ||
        term_copy(&a->res.reason, &res->reason, bytes) ||
        term_copy(&a->res.dict, &res->dict, bytes)) {
        alt_free(a);
        return NULL;
    }
    return a;
}

/* The bytes an alternative for (log, res) would hold, roughly. */
static size_t alt_size(const step_log *log, const run_result *res)
{
    size_t n = sizeof(step_alt) + log->n * sizeof(step_read) + log->nbytes +
               res->label_len + res->cont.len + res->reason.len + res->dict.len;
    for (size_t i = 0; i < res->neffects; i++)
        n += sizeof(effect) + res->effects[i].term.len + res->effects[i].term2.len +
             res->effects[i].term3.len;
    return n;
}

int step_cache_add(step_cache *c, const step_key *k, const step_log *log,
                   const run_result *res)
{
    size_t bytes;
    if (alt_size(log, res) > STEP_CACHE_MAX_ALT_BYTES)
        return 0;
    step_entry *e = step_cache_find(c, k);
    if (e != NULL && e->nalts >= STEP_CACHE_MAX_ALTS)
        return 0;
    step_alt *a = alt_new(log, res, &bytes);
    if (a == NULL)
        return -1;
    if (e == NULL) {
        if ((c->n >= c->max_entries && evict_one(c, NULL) != 0) ||
            (c->n < c->max_entries && grow(c) != 0)) {
            alt_free(a);
            return -1;
        }
        e = calloc(1, sizeof *e);
        if (e == NULL) {
            alt_free(a);
            return -1;
        }
        e->key = *k;
        e->hash = key_hash(k);
        size_t b = e->hash & (c->nbuckets - 1);
        e->chain = c->buckets[b];
        c->buckets[b] = e;
        e->slot = (uint32_t)c->n;
        c->slots[c->n++] = e;
        e->bytes = sizeof *e;
        c->bytes += sizeof *e;
    }
    step_alt **tail = &e->alts;
    while (*tail != NULL)
        tail = &(*tail)->next;
    *tail = a;
    e->nalts++;
    e->bytes += bytes;
    c->bytes += bytes;
    while (c->bytes > c->max_bytes && evict_one(c, e) == 0)
        ;
    return 0;
}
