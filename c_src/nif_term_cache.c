/*
** nif_term_cache.c: owns a search's decoded terms (nif_term_cache.h).
**
** Invariants: `ids` and `terms` are an open-addressing table of `nslots`
** (a power of two, at most TERM_CACHE_MAX_SLOTS) slots, id 0 empty, at
** most 3/4 full; each term lives in
** `env`, a process-independent environment, until the next reset, which
** clears the environment and the table together; `bytes` counts the
** external format of the parts decoded since the reset.
*/
#include "nif_term_cache.h"

#include <stdlib.h>

/* The table starts small (a check of a few states decodes a few terms)
** and doubles up to TERM_CACHE_MAX_SLOTS. */
#define TERM_CACHE_SLOTS 256u
#define TERM_CACHE_MAX_SLOTS 8192u
#define TERM_CACHE_BYTES ((size_t)4 << 20)

struct term_cache {
    ErlNifEnv *env;
    part_id *ids;
    ERL_NIF_TERM *terms;
    size_t nslots, count, bytes;
};

term_cache *term_cache_new(void)
{
    term_cache *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->nslots = TERM_CACHE_SLOTS;
    c->ids = calloc(c->nslots, sizeof *c->ids);
    c->terms = calloc(c->nslots, sizeof *c->terms);
    c->env = enif_alloc_env();
    if (c->ids == NULL || c->terms == NULL || c->env == NULL) {
        term_cache_free(c);
        return NULL;
    }
    return c;
}

void term_cache_free(term_cache *c)
{
    if (c == NULL)
        return;
    if (c->env != NULL)
        enif_free_env(c->env);
    free(c->ids);
    free(c->terms);
    free(c);
}

static void reset(term_cache *c)
{
    enif_clear_env(c->env);
    for (size_t i = 0; i < c->nslots; i++)
        c->ids[i] = 0;
    c->count = 0;
    c->bytes = 0;
}

static size_t slot_of(const term_cache *c, part_id id)
{
    return ((size_t)id * 0x9E3779B97F4A7C15ull) >> 11 & (c->nslots - 1);
}

/* Doubles the table, its terms kept: 0, or -1 when out of memory (the
** caller then empties it instead). */
static int grow(term_cache *c)
{
    size_t n = c->nslots * 2;
    part_id *ids = calloc(n, sizeof *ids);
    ERL_NIF_TERM *terms = calloc(n, sizeof *terms);
    if (ids == NULL || terms == NULL) {
        free(ids);
        free(terms);
        return -1;
    }
    part_id *old_ids = c->ids;
    ERL_NIF_TERM *old_terms = c->terms;
    size_t old_n = c->nslots;
    c->ids = ids;
    c->terms = terms;
    c->nslots = n;
    for (size_t j = 0; j < old_n; j++) {
        if (old_ids[j] == 0)
            continue;
        size_t i = slot_of(c, old_ids[j]);
        while (c->ids[i] != 0)
            i = (i + 1) & (n - 1);
        c->ids[i] = old_ids[j];
        c->terms[i] = old_terms[j];
    }
    free(old_ids);
    free(old_terms);
    return 0;
}

static int decode(ErlNifEnv *env, const part *p, ERL_NIF_TERM *out)
{
    return enif_binary_to_term(env, p->data, p->len, out, 0) == p->len;
}

int term_cache_get(term_cache *c, ErlNifEnv *env, const part_store *ps, part_id id,
                   ERL_NIF_TERM *out)
{
    const part *p = part_store_get(ps, id);
    if (p == NULL || p->kind != PART_TERM)
        return 0;
    /* A big term is decoded where it is needed: one would take the
    ** cache's room from many small ones. */
    if (c == NULL || p->len > TERM_CACHE_BYTES / 16)
        return decode(env, p, out);
    size_t mask = c->nslots - 1;
    size_t i = slot_of(c, id);
    for (; c->ids[i] != 0; i = (i + 1) & mask) {
        if (c->ids[i] == id) {
            *out = enif_make_copy(env, c->terms[i]);
            return 1;
        }
    }
    if (c->count + 1 > c->nslots / 4 * 3 && c->nslots < TERM_CACHE_MAX_SLOTS && grow(c) == 0)
        return term_cache_get(c, env, ps, id, out);
    if (c->count + 1 > c->nslots / 4 * 3 || c->bytes + p->len > TERM_CACHE_BYTES) {
        reset(c);
        return term_cache_get(c, env, ps, id, out);
    }
    ERL_NIF_TERM kept;
    if (!decode(c->env, p, &kept))
        return 0;
    c->ids[i] = id;
    c->terms[i] = kept;
    c->count++;
    c->bytes += p->len;
    *out = enif_make_copy(env, kept);
    return 1;
}

size_t term_cache_bytes(const term_cache *c)
{
    return c == NULL ? 0 : c->bytes + c->nslots * (sizeof *c->ids + sizeof *c->terms);
}
