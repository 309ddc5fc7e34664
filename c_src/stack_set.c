/*
** stack_set.c: a multiset of state keys (stack_set.h).
*/
#include "stack_set.h"

#include <stdlib.h>

static size_t slot_of(const stack_set *set, uint64_t id)
{
    /* Fibonacci hashing: part ids are dense, so spread them. */
    return (size_t)((id * 0x9E3779B97F4A7C15ull) >> 32) & (set->cap - 1);
}

/* The slot holding id, or the empty slot where it would go. */
static size_t find(const stack_set *set, uint64_t id)
{
    size_t i = slot_of(set, id);
    while (set->ids[i] != 0 && set->ids[i] != id)
        i = (i + 1) & (set->cap - 1);
    return i;
}

static int grow(stack_set *set)
{
    size_t cap = set->cap ? set->cap * 2 : 256;
    uint64_t *ids = calloc(cap, sizeof *ids);
    uint32_t *counts = calloc(cap, sizeof *counts);
    if (ids == NULL || counts == NULL) {
        free(ids);
        free(counts);
        return -1;
    }
    stack_set bigger = { ids, counts, cap, set->n };
    for (size_t i = 0; i < set->cap; i++) {
        if (set->ids[i] == 0)
            continue;
        size_t j = find(&bigger, set->ids[i]);
        ids[j] = set->ids[i];
        counts[j] = set->counts[i];
    }
    free(set->ids);
    free(set->counts);
    *set = bigger;
    return 0;
}

int stack_set_add(stack_set *set, uint64_t id)
{
    if (id == 0)
        return 0;
    if (2 * (set->n + 1) > set->cap && grow(set) != 0)
        return -1;
    size_t i = find(set, id);
    if (set->ids[i] == 0) {
        set->ids[i] = id;
        set->counts[i] = 0;
        set->n++;
    }
    set->counts[i]++;
    return 0;
}

void stack_set_remove(stack_set *set, uint64_t id)
{
    if (id == 0 || set->cap == 0)
        return;
    size_t i = find(set, id);
    if (set->ids[i] == 0 || --set->counts[i] > 0)
        return;
    /* Backward shift: move up every later entry of the probe run whose
    ** home slot is not between the hole and it (cyclically). */
    size_t mask = set->cap - 1, hole = i, j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (set->ids[j] == 0)
            break;
        size_t home = slot_of(set, set->ids[j]);
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            set->ids[hole] = set->ids[j];
            set->counts[hole] = set->counts[j];
            hole = j;
        }
    }
    set->ids[hole] = 0;
    set->counts[hole] = 0;
    set->n--;
}

int stack_set_has(const stack_set *set, uint64_t id)
{
    return id != 0 && set->cap != 0 && set->ids[find(set, id)] == id;
}

uint32_t stack_set_count(const stack_set *set, uint64_t id)
{
    if (id == 0 || set->cap == 0)
        return 0;
    size_t i = find(set, id);
    return set->ids[i] == id ? set->counts[i] : 0;
}

size_t stack_set_bytes(const stack_set *set)
{
    return set->cap * (sizeof *set->ids + sizeof *set->counts);
}

void stack_set_free(stack_set *set)
{
    free(set->ids);
    free(set->counts);
    *set = (stack_set){ 0 };
}
