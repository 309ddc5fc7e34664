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

int por_hint_init(por_hint *h)
{
    h->keys = calloc(POR_HINT_SLOTS, sizeof *h->keys);
    h->safe = calloc(POR_HINT_SLOTS, sizeof *h->safe);
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
    h->keys = NULL;
    h->safe = NULL;
}

void por_hint_set(por_hint *h, const step_key *k, int safe)
{
    if (h->keys == NULL)
        return;
    uint64_t hash = key_hash(k);
    size_t i = (size_t)(hash >> 20) & (POR_HINT_SLOTS - 1);
    h->keys[i] = hash;
    h->safe[i] = safe != 0;
}

int por_hint_safe(const por_hint *h, const step_key *k)
{
    if (h->keys == NULL)
        return 0;
    uint64_t hash = key_hash(k);
    size_t i = (size_t)(hash >> 20) & (POR_HINT_SLOTS - 1);
    return h->keys[i] == hash && h->safe[i];
}
