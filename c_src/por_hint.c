/*
** por_hint.c: the reduced search's memory of safe requests (por_hint.h).
*/
#include "por_hint.h"

#include <stdlib.h>
#include <xxhash.h>

static uint64_t key_hash(const step_key *k)
{
    uint32_t words[7] = { k->pid, k->run, k->choice, k->flags, k->cont, k->msg, k->dict };
    return XXH3_64bits(words, sizeof words) | 1;
}

static size_t slot_of(const por_hint *h, uint64_t hash)
{
    return (size_t)(hash >> 20) & (h->cap - 1);
}

/* The slot holding hash, or the empty slot where it would go (linear
** probing; the table is never more than three quarters full), or, in a
** full table, its home slot, which it then takes over. */
static size_t find(const por_hint *h, uint64_t hash)
{
    size_t home = slot_of(h, hash), i = home;
    for (size_t probes = 0; probes < h->cap; probes++) {
        if (h->keys[i] == 0 || h->keys[i] == hash)
            return i;
        i = (i + 1) & (h->cap - 1);
    }
    return home;
}

/* Doubles the table, keeping every hint.  On failure the table stays as
** it was: only later hints may be lost. */
static void grow(por_hint *h)
{
    size_t cap = h->cap * 2;
    uint64_t *keys = calloc(cap, sizeof *keys);
    uint8_t *safe = calloc(cap, sizeof *safe);
    if (keys == NULL || safe == NULL) {
        free(keys);
        free(safe);
        return;
    }
    por_hint bigger = { keys, safe, cap, 0 };
    for (size_t i = 0; i < h->cap; i++) {
        if (h->keys[i] == 0)
            continue;
        size_t j = find(&bigger, h->keys[i]);
        if (keys[j] == 0)
            bigger.n++;
        keys[j] = h->keys[i];
        safe[j] = h->safe[i];
    }
    free(h->keys);
    free(h->safe);
    *h = bigger;
}

int por_hint_init(por_hint *h)
{
    h->cap = POR_HINT_MIN_SLOTS;
    h->n = 0;
    h->keys = calloc(h->cap, sizeof *h->keys);
    h->safe = calloc(h->cap, sizeof *h->safe);
    if (h->keys == NULL || h->safe == NULL) {
        por_hint_free(h);
        return -1;
    }
    return 0;
}

void por_hint_free(por_hint *h)
{
    free(h->keys);
    free(h->safe);
    *h = (por_hint){ 0 };
}

size_t por_hint_bytes(const por_hint *h)
{
    return h->keys != NULL ? h->cap * (sizeof *h->keys + sizeof *h->safe) : 0;
}

void por_hint_set(por_hint *h, const step_key *k, int safe)
{
    if (h->keys == NULL)
        return;
    uint64_t hash = key_hash(k);
    size_t i = find(h, hash);
    if (h->keys[i] == 0)
        h->n++;
    h->keys[i] = hash;
    h->safe[i] = safe != 0;
    if (2 * h->n > h->cap && h->cap < POR_HINT_MAX_SLOTS)
        grow(h);
}

int por_hint_get(const por_hint *h, const step_key *k)
{
    if (h->keys == NULL)
        return -1;
    uint64_t hash = key_hash(k);
    size_t i = find(h, hash);
    return h->keys[i] != hash ? -1 : h->safe[i] != 0;
}
