/*
** label_dict.c: a connection's dictionary of step labels (the protocol and
** its invariant are in label_dict.h).  The sender's table is open
** addressing over the labels' 128-bit hashes, doubled at half load; the
** receiver keeps a copy of each label it read, by index.
*/
#include "label_dict.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

static size_t slot_of(uint64_t lo, size_t slots)
{
    return (size_t)(lo * 0x9E3779B97F4A7C15ull >> 17) & (slots - 1);
}

static int grow_sent(label_sent *d)
{
    size_t slots = d->slots ? 2 * d->slots : 256;
    uint64_t *keys = malloc(2 * slots * sizeof *keys);
    uint32_t *index = calloc(slots, sizeof *index);
    if (keys == NULL || index == NULL) {
        free(keys);
        free(index);
        return -1;
    }
    for (size_t k = 0; k < d->slots; k++) {
        if (d->index[k] == 0)
            continue;
        size_t at = slot_of(d->keys[2 * k], slots);
        while (index[at] != 0)
            at = (at + 1) & (slots - 1);
        keys[2 * at] = d->keys[2 * k];
        keys[2 * at + 1] = d->keys[2 * k + 1];
        index[at] = d->index[k];
    }
    free(d->keys);
    free(d->index);
    d->keys = keys;
    d->index = index;
    d->slots = slots;
    return 0;
}

uint8_t *label_dict_send(label_sent *d, const uint8_t *label, size_t len, size_t *out_len)
{
    if (2 * (d->n + 1) > d->slots && grow_sent(d) != 0)
        return NULL;
    XXH128_hash_t h = XXH3_128bits(label, len);
    size_t at = slot_of(h.low64, d->slots);
    while (d->index[at] != 0) {
        if (d->keys[2 * at] == h.low64 && d->keys[2 * at + 1] == h.high64) {
            uint8_t *out = malloc(5);
            if (out == NULL)
                return NULL;
            uint32_t i = d->index[at] - 1;
            out[0] = 1;
            for (int b = 0; b < 4; b++)
                out[1 + b] = (uint8_t)(i >> (8 * b));
            *out_len = 5;
            return out;
        }
        at = (at + 1) & (d->slots - 1);
    }
    if (d->n >= UINT32_MAX - 1)
        return NULL;
    uint8_t *out = malloc(len + 1);
    if (out == NULL)
        return NULL;
    out[0] = 0;
    if (len > 0)
        memcpy(out + 1, label, len);
    d->keys[2 * at] = h.low64;
    d->keys[2 * at + 1] = h.high64;
    d->index[at] = (uint32_t)++d->n;
    *out_len = len + 1;
    return out;
}

int label_dict_read(label_read *d, const uint8_t *in, size_t len, const uint8_t **label,
                    size_t *label_len, const char **why)
{
    if (len == 5 && in[0] == 1) {
        uint32_t i = 0;
        for (int b = 0; b < 4; b++)
            i |= (uint32_t)in[1 + b] << (8 * b);
        if (i >= d->n) {
            *why = "a label index of no label";
            return -1;
        }
        *label = d->labels[i];
        *label_len = d->lens[i];
        return 0;
    }
    if (len < 1 || in[0] != 0) {
        *why = "not a label";
        return -1;
    }
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 256;
        uint8_t **labels = realloc(d->labels, cap * sizeof *labels);
        if (labels == NULL) {
            *why = "out of memory";
            return -1;
        }
        d->labels = labels;
        size_t *lens = realloc(d->lens, cap * sizeof *lens);
        if (lens == NULL) {
            *why = "out of memory";
            return -1;
        }
        d->lens = lens;
        d->cap = cap;
    }
    uint8_t *copy = malloc(len > 1 ? len - 1 : 1);
    if (copy == NULL) {
        *why = "out of memory";
        return -1;
    }
    if (len > 1)
        memcpy(copy, in + 1, len - 1);
    d->labels[d->n] = copy;
    d->lens[d->n] = len - 1;
    d->n++;
    d->bytes += len - 1;
    *label = copy;
    *label_len = len - 1;
    return 0;
}

size_t label_sent_bytes(const label_sent *d)
{
    return d->slots * (2 * sizeof *d->keys + sizeof *d->index);
}

size_t label_read_bytes(const label_read *d)
{
    return d->cap * (sizeof *d->labels + sizeof *d->lens) + d->bytes;
}

void label_sent_free(label_sent *d)
{
    free(d->keys);
    free(d->index);
    memset(d, 0, sizeof *d);
}

void label_read_free(label_read *d)
{
    for (size_t k = 0; k < d->n; k++)
        free(d->labels[k]);
    free(d->labels);
    free(d->lens);
    memset(d, 0, sizeof *d);
}
