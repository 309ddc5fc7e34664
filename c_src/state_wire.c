/*
** state_wire.c: a system state to and from its canonical bytes (the
** format and its invariant are in state_wire.h).
**
** Every part id of a state is in one of these fields, each written here
** as what it names (the audit of sys_state.h for the wire): a process's
** cont, dict and name (terms), its mailbox (a vector of terms), the item
** of each monitor it holds or is held by (a term, 0: the pid); the
** world's app_env and observer (terms), each channel's name (a term) and
** queue (a vector of signals: a message's or exit's term, a monitor's
** item, a 'DOWN''s item and reason, an alias message's term; envelopes
** wrap one signal with a name term), each ETS table's heir_data, name and
** data (terms).  Every other word is a number or a pid or ref key, the
** same in every store.
**
** Import trusts nothing: every count is checked against the bytes left,
** every back-reference against the terms read so far, every term by the
** external-format scanner that interns it, and the state's order
** invariants (pids, links, monitors, tables sorted; channels never empty)
** before the state is handed on.
*/
#include "state_wire.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "sys_state_internal.h"

#define WIRE_MAGIC 'M'
#define WIRE_VERSION 1

/*
** Writing.
*/

/* An export in progress: the store, the bytes being written (`out`) and
** the terms written so far with their ranks (`terms`: the same buffer for
** a canonical export, whose ranks are the state's own; a connection's
** dictionary for the transport form). */
typedef struct exporter {
    const part_store *ps;
    wire_buf *out, *terms;
    int err;
} exporter;

static void put_bytes(exporter *x, const void *p, size_t n)
{
    wire_buf *w = x->out;
    if (x->err)
        return;
    if (w->cap - w->n < n) {
        size_t cap = w->cap ? w->cap : 1024;
        while (cap - w->n < n)
            cap *= 2;
        uint8_t *grown = realloc(w->b, cap);
        if (grown == NULL) {
            x->err = 1;
            return;
        }
        w->b = grown;
        w->cap = cap;
    }
    memcpy(w->b + w->n, p, n);
    w->n += n;
}

static void put_var(exporter *x, uint64_t v)
{
    uint8_t tmp[10];
    size_t k = 0;
    do {
        uint8_t byte = v & 0x7f;
        v >>= 7;
        tmp[k++] = byte | (v ? 0x80 : 0);
    } while (v);
    put_bytes(x, tmp, k);
}

static size_t slot_of(uint32_t id, size_t slots)
{
    return ((uint64_t)id * 0x9E3779B97F4A7C15ull >> 20) & (slots - 1);
}

/* The rank of a term written before, or -1 (and it is recorded as the
** next rank). */
static int64_t term_rank(exporter *x, uint32_t id)
{
    wire_buf *w = x->terms;
    if (2 * (w->nterms + 1) > w->slots) {
        size_t slots = w->slots ? 2 * w->slots : 64;
        uint32_t *ids = calloc(slots, sizeof *ids), *ranks = malloc(slots * sizeof *ranks);
        if (ids == NULL || ranks == NULL) {
            free(ids);
            free(ranks);
            x->err = 1;
            return -1;
        }
        for (size_t k = 0; k < w->slots; k++) {
            if (w->ids[k] == 0)
                continue;
            size_t at = slot_of(w->ids[k], slots);
            while (ids[at] != 0)
                at = (at + 1) & (slots - 1);
            ids[at] = w->ids[k];
            ranks[at] = w->ranks[k];
        }
        free(w->ids);
        free(w->ranks);
        w->ids = ids;
        w->ranks = ranks;
        w->slots = slots;
    }
    size_t at = slot_of(id, w->slots);
    while (w->ids[at] != 0) {
        if (w->ids[at] == id)
            return w->ranks[at];
        at = (at + 1) & (w->slots - 1);
    }
    w->ids[at] = id;
    w->ranks[at] = (uint32_t)w->nterms++;
    return -1;
}

static void put_term(exporter *x, part_id id)
{
    if (x->err)
        return;
    if (id == 0) {
        put_var(x, 0);
        return;
    }
    const part *t = part_store_get(x->ps, id);
    if (t == NULL || t->kind != PART_TERM || t->len == 0) {
        x->err = 1;
        return;
    }
    int64_t rank = term_rank(x, id);
    if (x->err)
        return;
    if (rank >= 0) {
        put_var(x, 2 * (uint64_t)rank + 1);
        return;
    }
    put_var(x, 2 * (uint64_t)t->len + 2);
    put_bytes(x, t->data, t->len);
}

/* A vector part (mailbox, queue): its words, or NULL. */
static const part *vector(const part_store *ps, part_id id)
{
    const part *v = part_store_get(ps, id);
    return v != NULL && v->kind == PART_MAILBOX && v->len % 4 == 0 ? v : NULL;
}

static void put_mailbox(exporter *x, part_id id)
{
    const part *v = vector(x->ps, id);
    if (v == NULL) {
        x->err = 1;
        return;
    }
    put_var(x, v->len / 4);
    for (uint32_t k = 0; k < v->len / 4; k++)
        put_term(x, word(v->data, k));
}

static void put_signal(exporter *x, part_id id, int inner)
{
    uint32_t env[4], s[4];
    if (!inner && envelope_get(x->ps, id, env) == 0) {
        put_var(x, SIG_ENVELOPE);
        put_var(x, env[0]);
        put_var(x, env[1]);
        put_term(x, env[2]);
        put_signal(x, env[3], 1);
        return;
    }
    if (signal_get(x->ps, id, s) != 0 || s[0] == 0 || s[0] >= SIG_ENVELOPE) {
        x->err = 1;
        return;
    }
    put_var(x, s[0]);
    switch (s[0]) {
    case SIG_MSG: case SIG_EXIT: case SIG_ALIAS_MSG:
        put_term(x, s[1]);
        put_var(x, s[2]);
        put_var(x, s[3]);
        break;
    case SIG_MONITOR:
        put_var(x, s[1]);
        put_term(x, s[2]);
        put_var(x, s[3]);
        break;
    case SIG_DOWN:
        put_var(x, s[1]);
        put_term(x, s[2]);
        put_term(x, s[3]);
        break;
    default:
        put_var(x, s[1]);
        put_var(x, s[2]);
        put_var(x, s[3]);
    }
}

/* Channel order on the wire: by ends, then by the name's bytes (the store
** orders names by id, which differs between stores). */
static int wire_chan_cmp(const part_store *ps, const channel *a, const channel *b)
{
    if (a->from != b->from)
        return a->from < b->from ? -1 : 1;
    if (a->to != b->to)
        return a->to < b->to ? -1 : 1;
    if (a->name == b->name)
        return 0;
    if (a->name == 0 || b->name == 0)
        return a->name == 0 ? -1 : 1;
    const part *x = part_store_get(ps, a->name), *y = part_store_get(ps, b->name);
    if (x == NULL || y == NULL)
        return x == NULL ? -1 : 1;
    uint32_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->data, y->data, n);
    if (c != 0)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

static int world_empty(const sys_state *s)
{
    return s->down == 0 && s->crashes == 0 && s->disconnects == 0 && s->kills == 0 &&
           s->uniq == 0 && s->app_env == 0 && s->observer == 0 && s->ndisc == 0 &&
           s->nnodemons == 0 && s->nchans == 0 && s->ntables == 0;
}

static void put_world(exporter *x, const sys_state *s)
{
    put_var(x, s->down);
    put_var(x, s->crashes);
    put_var(x, s->disconnects);
    put_var(x, s->kills);
    put_var(x, s->uniq);
    put_term(x, s->app_env);
    put_term(x, s->observer);
    put_var(x, s->ndisc);
    for (uint32_t k = 0; k < s->ndisc; k++)
        put_var(x, s->disc[k]);
    put_var(x, s->nnodemons);
    for (uint32_t k = 0; k < s->nnodemons; k++) {
        put_var(x, s->nodemons[k].pid);
        put_var(x, s->nodemons[k].node);
        put_var(x, s->nodemons[k].count);
    }
    put_var(x, s->nchans);
    /* Channels in wire order: an insertion sort of their indexes (a state
    ** has few, and almost always already in that order). */
    uint32_t small[32];
    uint32_t *order = s->nchans <= 32 ? small : malloc(s->nchans * sizeof *order);
    if (order == NULL) {
        x->err = 1;
        return;
    }
    for (uint32_t k = 0; k < s->nchans; k++) {
        uint32_t j = k;
        while (j > 0 && wire_chan_cmp(x->ps, &s->chans[order[j - 1]], &s->chans[k]) > 0) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = k;
    }
    for (uint32_t k = 0; k < s->nchans && !x->err; k++) {
        const channel *c = &s->chans[order[k]];
        const part *q = vector(x->ps, c->queue);
        if (q == NULL) {
            x->err = 1;
            break;
        }
        put_var(x, c->from);
        put_var(x, c->to);
        put_term(x, c->name);
        put_var(x, q->len / 4);
        for (uint32_t j = 0; j < q->len / 4; j++)
            put_signal(x, word(q->data, j), 0);
    }
    if (order != small)
        free(order);
    put_var(x, s->ntables);
    for (uint32_t k = 0; k < s->ntables; k++) {
        const ets_table *t = &s->tables[k];
        put_var(x, t->tid);
        put_var(x, t->owner);
        put_var(x, t->heir);
        put_term(x, t->heir_data);
        put_term(x, t->name);
        put_term(x, t->data);
    }
}

static void put_proc(exporter *x, const proc *p)
{
    put_var(x, p->pid);
    put_var(x, p->status);
    put_term(x, p->cont);
    put_mailbox(x, p->mailbox);
    put_var(x, p->flags);
    put_term(x, p->dict);
    put_term(x, p->name);
    put_var(x, p->gl);
    put_var(x, p->nlinks);
    for (uint32_t k = 0; k < p->nlinks; k++)
        put_var(x, p->links[k]);
    const monitor_set *sets[3] = { &p->mons, &p->monby, &p->aliases };
    for (int k = 0; k < 3; k++) {
        put_var(x, sets[k]->n);
        for (uint32_t j = 0; j < sets[k]->n; j++) {
            put_var(x, sets[k]->m[j].ref);
            put_var(x, sets[k]->m[j].pid);
            put_term(x, sets[k]->m[j].item);
        }
    }
}

void state_wire_buf_free(wire_buf *w)
{
    free(w->b);
    free(w->ids);
    free(w->ranks);
    memset(w, 0, sizeof *w);
}

/* Writes st to x->out (emptied first). */
static int export_state(exporter *x, const sys_state *st)
{
    x->out->n = 0;
    if (st->npend != 0)
        return -1;
    const uint8_t head[2] = { WIRE_MAGIC, WIRE_VERSION };
    put_bytes(x, head, 2);
    int world = !world_empty(st);
    put_var(x, (uint64_t)world);
    if (world)
        put_world(x, st);
    put_var(x, st->nprocs);
    for (uint32_t i = 0; i < st->nprocs && !x->err; i++)
        put_proc(x, &st->procs[i]);
    return x->err ? -1 : 0;
}

int state_wire_export_into(const part_store *ps, const sys_state *st, wire_buf *w)
{
    /* Empty, keeping the buffers: the rank table is cleared only when the
    ** last export wrote to it. */
    if (w->nterms > 0)
        memset(w->ids, 0, w->slots * sizeof *w->ids);
    w->nterms = 0;
    exporter x = { .ps = ps, .out = w, .terms = w };
    return export_state(&x, st);
}

int state_wire_encode_for(const part_store *ps, const sys_state *st, wire_buf *dict,
                          wire_buf *out)
{
    exporter x = { .ps = ps, .out = out, .terms = dict };
    return export_state(&x, st);
}

uint8_t *state_wire_export(const part_store *ps, const sys_state *st, size_t *len)
{
    wire_buf w;
    memset(&w, 0, sizeof w);
    uint8_t *b = NULL;
    if (state_wire_export_into(ps, st, &w) == 0) {
        b = w.b;            /* the caller's now */
        *len = w.n;
        w.b = NULL;
    }
    state_wire_buf_free(&w);
    return b;
}

uint8_t *state_wire_export_id(const part_store *ps, part_id root, size_t *len)
{
    sys_state st;
    if (sys_state_decode(ps, root, &st) != 0)
        return NULL;
    uint8_t *b = state_wire_export(ps, &st, len);
    sys_state_clear(&st);
    return b;
}

uint32_t state_wire_owner(const uint8_t *buf, size_t len, uint32_t n)
{
    return n <= 1 ? 0 : (uint32_t)(XXH3_64bits(buf, len) % n);
}

/*
** Reading.
*/

typedef struct importer {
    trans_ctx *cx;
    const uint8_t *p, *end;
    const char *why;           /* set on the first failure */
    wire_dict *terms;          /* by rank: the state's own, or a connection's */
    uint8_t *scratch;          /* a term's bytes: the scanner edits them */
    size_t capscratch;
    part_id *vec;              /* a vector being read */
    size_t capvec;
} importer;

static int bad(importer *im, const char *why)
{
    if (im->why == NULL)
        im->why = why;
    return -1;
}

static uint64_t get_var(importer *im)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (im->p >= im->end) {
            bad(im, "truncated");
            return 0;
        }
        uint8_t byte = *im->p++;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            return v;
    }
    bad(im, "a number too long");
    return 0;
}

static uint32_t get_u32(importer *im)
{
    uint64_t v = get_var(im);
    if (v > UINT32_MAX) {
        bad(im, "a word out of range");
        return 0;
    }
    return (uint32_t)v;
}

/* A count of items of at least `min` bytes each: no more than the bytes
** left can hold, so a huge count cannot make an allocation huge. */
static uint32_t get_count(importer *im, size_t min)
{
    uint32_t n = get_u32(im);
    if ((size_t)(im->end - im->p) / min < n) {
        bad(im, "a count past the end");
        return 0;
    }
    return n;
}

/* A pid or ref key of one of the check's nodes. */
static uint32_t get_key(importer *im)
{
    uint32_t k = get_u32(im);
    if (KEY_NODE(k) >= im->cx->names.nodes.n)
        bad(im, "a key of no node");
    return k;
}

static part_id get_term(importer *im)
{
    uint64_t v = get_var(im);
    if (im->why != NULL || v == 0)
        return 0;
    wire_dict *d = im->terms;
    if (v & 1) {
        if ((v - 1) / 2 >= d->n) {
            bad(im, "a back-reference to no term");
            return 0;
        }
        return d->ids[(v - 1) / 2];
    }
    uint64_t len = v / 2 - 1;
    if (len == 0 || len > (uint64_t)(im->end - im->p) || len > UINT32_MAX) {
        bad(im, "a term past the end");
        return 0;
    }
    if (im->capscratch < len) {
        uint8_t *grown = realloc(im->scratch, len);
        if (grown == NULL) {
            bad(im, "out of memory");
            return 0;
        }
        im->scratch = grown;
        im->capscratch = len;
    }
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 64;
        part_id *grown = realloc(d->ids, cap * sizeof *grown);
        if (grown == NULL) {
            bad(im, "out of memory");
            return 0;
        }
        d->ids = grown;
        d->cap = cap;
    }
    memcpy(im->scratch, im->p, len);
    im->p += len;
    term_in t = { im->scratch, (size_t)len, 0 };
    part_id id = transition_intern_term(im->cx, &t);
    if (id == 0) {
        bad(im, "a term that does not scan");
        return 0;
    }
    d->ids[d->n++] = id;
    return id;
}

/* A vector of parts read by f (terms or signals, which hold no vector
** themselves, so one buffer serves), interned. */
static part_id get_vector(importer *im, part_id (*f)(importer *), size_t min)
{
    uint32_t n = get_count(im, min);
    if (im->why != NULL)
        return 0;
    if (n > im->capvec) {
        part_id *grown = realloc(im->vec, n * sizeof *grown);
        if (grown == NULL) {
            bad(im, "out of memory");
            return 0;
        }
        im->vec = grown;
        im->capvec = n;
    }
    for (uint32_t k = 0; k < n && im->why == NULL; k++)
        if ((im->vec[k] = f(im)) == 0)
            bad(im, "an empty slot in a vector");
    if (im->why != NULL)
        return 0;
    int fresh;
    part_id id = part_store_intern(im->cx->ps, PART_MAILBOX, n ? (const void *)im->vec : "",
                                   4 * n, NULL, 0, &fresh);
    if (id == 0)
        bad(im, "out of memory");
    return id;
}

static part_id get_plain_signal(importer *im, uint32_t kind)
{
    uint32_t a, b, c;
    switch (kind) {
    case SIG_MSG: case SIG_EXIT: case SIG_ALIAS_MSG:
        a = get_term(im);
        b = get_u32(im);
        c = get_u32(im);
        if (a == 0)
            bad(im, "a signal without its term");
        break;
    case SIG_MONITOR:
        a = get_u32(im);
        b = get_term(im);
        c = get_u32(im);
        break;
    case SIG_DOWN:
        a = get_u32(im);
        b = get_term(im);
        c = get_term(im);
        if (c == 0)
            bad(im, "a 'DOWN' without its reason");
        break;
    case SIG_LINK: case SIG_UNLINK: case SIG_DEMONITOR:
        a = get_u32(im);
        b = get_u32(im);
        c = get_u32(im);
        break;
    default:
        bad(im, "no such signal");
        return 0;
    }
    if (im->why != NULL)
        return 0;
    part_id id = signal_intern(im->cx->ps, kind, a, b, c);
    if (id == 0)
        bad(im, "out of memory");
    return id;
}

static part_id get_signal(importer *im)
{
    uint32_t kind = get_u32(im);
    if (im->why != NULL)
        return 0;
    if (kind != SIG_ENVELOPE)
        return get_plain_signal(im, kind);
    uint32_t from = get_key(im), to = get_key(im);
    part_id name = get_term(im);
    uint32_t inner = get_u32(im);
    if (im->why != NULL)
        return 0;
    part_id sig = get_plain_signal(im, inner);
    if (sig == 0)
        return 0;
    part_id id = envelope_intern(im->cx->ps, from, to, name, sig);
    if (id == 0)
        bad(im, "out of memory");
    return id;
}

static int get_monitors(importer *im, monitor_set *ms, int pids)
{
    uint32_t n = get_count(im, 3);
    if (im->why != NULL || grow((void **)&ms->m, &ms->cap, n, sizeof *ms->m) != 0)
        return bad(im, "out of memory");
    ms->n = 0;
    for (uint32_t k = 0; k < n && im->why == NULL; k++) {
        monitor m;
        m.ref = get_key(im);
        m.pid = pids ? get_key(im) : get_u32(im);
        m.item = get_term(im);
        if (k > 0 && ms->m[k - 1].ref >= m.ref)
            bad(im, "monitors out of order");
        ms->m[ms->n++] = m;
    }
    return im->why == NULL ? 0 : -1;
}

static int get_proc(importer *im, proc *p, uint32_t prev_pid, int first)
{
    p->pid = get_key(im);
    p->status = get_u32(im);
    p->cont = get_term(im);
    p->mailbox = get_vector(im, get_term, 1);
    p->flags = get_u32(im);
    p->dict = get_term(im);
    p->name = get_term(im);
    p->gl = get_u32(im);
    p->enc = 0;
    if (im->why != NULL)
        return -1;
    if (p->status > PROC_CHOICE || p->cont == 0)
        return bad(im, "a process without a status or a continuation");
    if (!first && p->pid <= prev_pid)
        return bad(im, "processes out of order");
    uint32_t n = get_count(im, 1);
    if (im->why != NULL || grow((void **)&p->links, &p->caplinks, n, sizeof *p->links) != 0)
        return bad(im, "out of memory");
    p->nlinks = 0;
    for (uint32_t k = 0; k < n && im->why == NULL; k++) {
        uint32_t l = get_key(im);
        if (k > 0 && p->links[k - 1] >= l)
            bad(im, "links out of order");
        p->links[p->nlinks++] = l;
    }
    if (im->why != NULL)
        return -1;
    if (get_monitors(im, &p->mons, 1) != 0 || get_monitors(im, &p->monby, 1) != 0 ||
        get_monitors(im, &p->aliases, 0) != 0)
        return -1;
    return 0;
}

static int get_world(importer *im, sys_state *s)
{
    s->down = get_var(im);
    s->crashes = get_u32(im);
    s->disconnects = get_u32(im);
    s->kills = get_u32(im);
    s->uniq = get_u32(im);
    s->app_env = get_term(im);
    s->observer = get_term(im);
    uint32_t nodes = im->cx->names.nodes.n;
    uint32_t n = get_count(im, 1);
    if (im->why != NULL || grow((void **)&s->disc, &s->capdisc, n, sizeof *s->disc) != 0)
        return bad(im, "out of memory");
    for (uint32_t k = 0; k < n && im->why == NULL; k++) {
        uint32_t d = get_u32(im);
        if ((d >> 8) >= (d & 0xff) || (d & 0xff) >= nodes || (k > 0 && s->disc[k - 1] >= d))
            bad(im, "a disconnected pair of no nodes");
        s->disc[s->ndisc++] = d;
    }
    n = get_count(im, 3);
    if (im->why != NULL ||
        grow((void **)&s->nodemons, &s->capnodemons, n, sizeof *s->nodemons) != 0)
        return bad(im, "out of memory");
    for (uint32_t k = 0; k < n && im->why == NULL; k++) {
        node_monitor m;
        m.pid = get_key(im);
        m.node = get_u32(im);
        m.count = get_u32(im);
        if (!(m.node & NODEMON_ALL) && m.node >= nodes)
            bad(im, "a node monitor of no node");
        s->nodemons[s->nnodemons++] = m;
    }
    n = get_count(im, 4);
    if (im->why != NULL || grow((void **)&s->chans, &s->capchans, n, sizeof *s->chans) != 0)
        return bad(im, "out of memory");
    for (uint32_t k = 0; k < n && im->why == NULL; k++) {
        channel c;
        c.from = get_key(im);
        c.to = get_key(im);
        c.name = get_term(im);
        c.queue = get_vector(im, get_signal, 4);
        if (im->why == NULL && mailbox_length(im->cx->ps, c.queue) == 0)
            bad(im, "an empty channel");
        s->chans[s->nchans++] = c;
    }
    if (im->why != NULL)
        return -1;
    /* The store's order: by the name's id in this store (no channels: no
    ** array to sort, and qsort must not be given NULL). */
    if (s->nchans > 1)
        qsort(s->chans, s->nchans, sizeof *s->chans, sys_state_channel_order);
    for (uint32_t k = 1; k < s->nchans; k++)
        if (sys_state_channel_order(&s->chans[k - 1], &s->chans[k]) == 0)
            return bad(im, "a channel twice");
    n = get_count(im, 6);
    if (im->why != NULL || grow((void **)&s->tables, &s->captables, n, sizeof *s->tables) != 0)
        return bad(im, "out of memory");
    for (uint32_t k = 0; k < n && im->why == NULL; k++) {
        ets_table t;
        t.tid = get_key(im);
        t.owner = get_key(im);
        t.heir = get_u32(im);
        t.heir_data = get_term(im);
        t.name = get_term(im);
        t.data = get_term(im);
        if (t.data == 0 || (t.heir != 0 && KEY_NODE(t.heir) >= nodes) ||
            (k > 0 && s->tables[k - 1].tid >= t.tid))
            bad(im, "a table out of order or without its data");
        s->tables[s->ntables++] = t;
    }
    return im->why == NULL ? 0 : -1;
}

int state_wire_import(trans_ctx *cx, const uint8_t *buf, size_t len, sys_state *out,
                      const char **why)
{
    wire_dict own = { NULL, 0, 0 };
    int r = state_wire_decode_for(cx, buf, len, &own, out, why);
    free(own.ids);
    return r;
}

void state_wire_dict_free(wire_dict *d)
{
    free(d->ids);
    memset(d, 0, sizeof *d);
}

int state_wire_decode_for(trans_ctx *cx, const uint8_t *buf, size_t len, wire_dict *dict,
                          sys_state *out, const char **why)
{
    empty_keeping_buffers(out);
    importer im = { .cx = cx, .p = buf, .end = buf + len, .terms = dict };
    if (len < 2 || buf[0] != WIRE_MAGIC || buf[1] != WIRE_VERSION) {
        bad(&im, "not a state of this version");
        goto done;
    }
    im.p += 2;
    uint64_t world = get_var(&im);
    if (im.why == NULL && world > 1)
        bad(&im, "no such world flag");
    if (im.why == NULL && world == 1 && get_world(&im, out) == 0 && world_empty(out))
        bad(&im, "an empty world written out");
    if (im.why != NULL)
        goto done;
    uint32_t n = get_count(&im, 8);
    if (im.why != NULL)
        goto done;
    while (out->nprocs > n)
        proc_free(&out->procs[--out->nprocs]);
    if (reserve(out, n) != 0) {
        bad(&im, "out of memory");
        goto done;
    }
    for (uint32_t i = 0; i < n; i++) {
        proc *p = &out->procs[i];
        if (i >= out->nprocs) {
            memset(p, 0, sizeof *p);
            out->nprocs = i + 1;
        }
        if (get_proc(&im, p, i > 0 ? out->procs[i - 1].pid : 0, i == 0) != 0)
            goto done;
    }
    if (im.p != im.end)
        bad(&im, "bytes after the state");
done:
    free(im.scratch);
    free(im.vec);
    if (im.why != NULL) {
        sys_state_clear(out);
        *why = im.why;
        return -1;
    }
    return 0;
}
