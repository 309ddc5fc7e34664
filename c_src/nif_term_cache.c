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
#include "nif_common.h"

#include <stdlib.h>
#include <string.h>

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
    memset(c->ids, 0, c->nslots * sizeof *c->ids);
    c->count = 0;
    c->bytes = 0;
}

/* The slot holding `id`, or the empty slot where it would go. */
static size_t find_slot(const term_cache *c, part_id id)
{
    size_t mask = c->nslots - 1;
    size_t i = ((size_t)id * 0x9E3779B97F4A7C15ull) >> 11 & mask;
    while (c->ids[i] != 0 && c->ids[i] != id)
        i = (i + 1) & mask;
    return i;
}

/* Doubles the table, its terms kept: 0, or -1 when out of memory (the
** caller then empties it instead). */
static int grow(term_cache *c)
{
    term_cache bigger = { c->env, calloc(2 * c->nslots, sizeof *c->ids),
                          calloc(2 * c->nslots, sizeof *c->terms), 2 * c->nslots,
                          c->count, c->bytes };
    if (bigger.ids == NULL || bigger.terms == NULL) {
        free(bigger.ids);
        free(bigger.terms);
        return -1;
    }
    for (size_t j = 0; j < c->nslots; j++) {
        if (c->ids[j] == 0)
            continue;
        size_t i = find_slot(&bigger, c->ids[j]);
        bigger.ids[i] = c->ids[j];
        bigger.terms[i] = c->terms[j];
    }
    free(c->ids);
    free(c->terms);
    *c = bigger;
    return 0;
}

int term_cache_get(term_cache *c, ErlNifEnv *env, const part_store *ps, part_id id,
                   ERL_NIF_TERM *out)
{
    const part *p = part_store_get(ps, id);
    /* A big term is decoded where it is needed: one would take the
    ** cache's room from many small ones. */
    if (c == NULL || p == NULL || p->kind != PART_TERM || p->len > TERM_CACHE_BYTES / 16)
        return part_term(env, ps, id, out);
    size_t i = find_slot(c, id);
    if (c->ids[i] == id) {
        *out = enif_make_copy(env, c->terms[i]);
        return 1;
    }
    if (c->count + 1 > c->nslots / 4 * 3 && c->nslots < TERM_CACHE_MAX_SLOTS && grow(c) == 0)
        return term_cache_get(c, env, ps, id, out);
    if (c->count + 1 > c->nslots / 4 * 3 || c->bytes + p->len > TERM_CACHE_BYTES) {
        reset(c);
        return term_cache_get(c, env, ps, id, out);
    }
    ERL_NIF_TERM kept;
    if (enif_binary_to_term(c->env, p->data, p->len, &kept, 0) != p->len)
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
