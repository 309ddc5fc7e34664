/*
** match_memo.c: the match questions' answers (match_memo.h), an open-
** addressing table of uint64 keys that doubles at load 1/2.
*/
#include "match_memo.h"

#include <stdlib.h>

int match_memo_init(match_memo *m)
{
    m->n = 0;
    m->nslots = 1024;
    m->keys = calloc(m->nslots, sizeof *m->keys);
    m->vals = calloc(m->nslots, 1);
    return m->keys == NULL || m->vals == NULL ? -1 : 0;
}

void match_memo_free(match_memo *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->nslots = m->n = 0;
}

size_t match_memo_bytes(const match_memo *m)
{
    return m->nslots * (sizeof *m->keys + 1);
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

int match_memo_get(const match_memo *m, part_id cont, part_id msg)
{
    uint64_t key = (((uint64_t)cont << 32) | msg) + 1;
    size_t i = mix64(key) & (m->nslots - 1);
    while (m->keys[i] != 0) {
        if (m->keys[i] == key)
            return m->vals[i];
        i = (i + 1) & (m->nslots - 1);
    }
    return -1;
}

int match_memo_put(match_memo *m, part_id cont, part_id msg, int val)
{
    if ((m->n + 1) * 2 > m->nslots) {
        size_t nslots = m->nslots * 2;
        uint64_t *keys = calloc(nslots, sizeof *keys);
        uint8_t *vals = calloc(nslots, 1);
        if (keys == NULL || vals == NULL) {
            free(keys);
            free(vals);
            return -1;
        }
        for (size_t j = 0; j < m->nslots; j++) {
            if (m->keys[j] == 0)
                continue;
            size_t i = mix64(m->keys[j]) & (nslots - 1);
            while (keys[i] != 0)
                i = (i + 1) & (nslots - 1);
            keys[i] = m->keys[j];
            vals[i] = m->vals[j];
        }
        free(m->keys);
        free(m->vals);
        m->keys = keys;
        m->vals = vals;
        m->nslots = nslots;
    }
    uint64_t key = (((uint64_t)cont << 32) | msg) + 1;
    size_t i = mix64(key) & (m->nslots - 1);
    while (m->keys[i] != 0 && m->keys[i] != key)
        i = (i + 1) & (m->nslots - 1);
    if (m->keys[i] == 0)
        m->n++;
    m->keys[i] = key;
    m->vals[i] = (uint8_t)val;
    return 0;
}
