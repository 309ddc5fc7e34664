/*
** part_store.c: owns the interned parts, their arena and the hash index.
**
** Parts live in a chunked bump arena (they are never freed one by one: a
** search only adds states).  The index is open addressing with linear
** probing over part ids; it doubles at 70% load.  Lookups compare the
** 64-bit hash first, then kind, length and bytes, so the table is exact.
*/
#include "part_store.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define ARENA_CHUNK (1u << 20)

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap;
    uint8_t mem[];
} arena_chunk;

struct part_store {
    part *parts;            /* parts[id], index 0 unused */
    size_t nparts, capparts;
    part_id *index;         /* hash slots holding ids, 0 = empty */
    size_t nslots;          /* power of two */
    /* While the index grows: the previous one, which still finds the ids
    ** below `old_end` not yet moved (those below `moved` are in both).  A
    ** few ids move at each intern, so no call rehashes the whole store. */
    part_id *old_index;
    size_t old_nslots, moved, old_end;
    arena_chunk *arena;
    size_t arena_bytes;
    size_t arena_used;
};

static void *arena_alloc(part_store *ps, size_t n)
{
    n = (n + 7u) & ~(size_t)7u;
    arena_chunk *c = ps->arena;
    if (c == NULL || c->cap - c->used < n) {
        size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;
        arena_chunk *fresh = malloc(sizeof *fresh + cap);
        if (fresh == NULL)
            return NULL;
        fresh->next = c;
        fresh->used = 0;
        fresh->cap = cap;
        ps->arena = fresh;
        ps->arena_bytes += sizeof *fresh + cap;
        c = fresh;
    }
    void *p = c->mem + c->used;
    c->used += n;
    ps->arena_used += n;
    return p;
}

part_store *part_store_new(void)
{
    return part_store_new_sized(2048);
}

part_store *part_store_new_sized(size_t slots)
{
    size_t nslots = 16;
    while (nslots < slots && nslots < ((size_t)1 << 40))
        nslots *= 2;
    part_store *ps = calloc(1, sizeof *ps);
    if (ps == NULL)
        return NULL;
    ps->capparts = 1024;
    ps->parts = calloc(ps->capparts, sizeof *ps->parts);
    ps->nslots = nslots;
    ps->index = calloc(ps->nslots, sizeof *ps->index);
    if (ps->parts == NULL || ps->index == NULL) {
        part_store_free(ps);
        return NULL;
    }
    ps->nparts = 1;
    return ps;
}

void part_store_free(part_store *ps)
{
    if (ps == NULL)
        return;
    arena_chunk *c = ps->arena;
    while (c != NULL) {
        arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    free(ps->parts);
    free(ps->index);
    free(ps->old_index);
    free(ps);
}

static uint64_t part_hash(uint8_t kind, const void *data, uint32_t len)
{
    return XXH3_64bits_withSeed(data, len, kind);
}

static void index_put(part_id *index, size_t nslots, uint64_t hash, part_id id)
{
    size_t i = hash & (nslots - 1);
    while (index[i] != 0)
        i = (i + 1) & (nslots - 1);
    index[i] = id;
}

/* Moves up to n ids into the grown index; frees the old one when done. */
static void move_ids(part_store *ps, size_t n)
{
    if (ps->old_index == NULL)
        return;
    for (; n > 0 && ps->moved < ps->old_end; n--, ps->moved++)
        index_put(ps->index, ps->nslots, ps->parts[ps->moved].hash, (part_id)ps->moved);
    if (ps->moved == ps->old_end) {
        free(ps->old_index);
        ps->old_index = NULL;
        ps->old_nslots = 0;
    }
}

/* Doubles the index.  The ids move a few per intern (move_ids): the new
** index has room for as many again before it must grow, and 8 moves per
** intern finish long before. */
static int grow_index(part_store *ps)
{
    move_ids(ps, SIZE_MAX);         /* a previous growth, if unfinished */
    size_t nslots = ps->nslots * 2;
    part_id *index = calloc(nslots, sizeof *index);
    if (index == NULL)
        return -1;
    ps->old_index = ps->index;
    ps->old_nslots = ps->nslots;
    ps->moved = 1;
    ps->old_end = ps->nparts;
    ps->index = index;
    ps->nslots = nslots;
    return 0;
}

/* The id of (h, kind, data, len) in an index, or 0; *slot: where the probe
** ended (the empty slot for an insert). */
static part_id probe(const part_store *ps, const part_id *index, size_t nslots, uint64_t h,
                     uint8_t kind, const void *data, uint32_t len, size_t *slot)
{
    size_t mask = nslots - 1;
    size_t i = h & mask;
    for (;;) {
        part_id id = index[i];
        if (id == 0)
            break;
        const part *p = &ps->parts[id];
        if (p->hash == h && p->kind == kind && p->len == len &&
            (len == 0 || memcmp(p->data, data, len) == 0))
            return id;
        i = (i + 1) & mask;
    }
    *slot = i;
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

part_id part_store_intern(part_store *ps, uint8_t kind, const void *data,
                          uint32_t len, const uint32_t *pids, uint32_t npids,
                          int *is_new)
{
    uint64_t h = part_hash(kind, data, len);
    /* Grow before probing so the table never fills: a failed grow is an
    ** allocation failure like any other. */
    if (ps->nparts * 10 > ps->nslots * 7 && grow_index(ps) != 0)
        return 0;
    move_ids(ps, 8);
    size_t i = 0, unused;
    *is_new = 0;
    part_id found = ps->old_index != NULL
                        ? probe(ps, ps->old_index, ps->old_nslots, h, kind, data, len, &unused)
                        : 0;
    if (found == 0)
        found = probe(ps, ps->index, ps->nslots, h, kind, data, len, &i);
    if (found != 0)
        return found;
    if (ps->nparts >= UINT32_MAX - 1)
        return 0;
    if (ps->nparts == ps->capparts) {
        size_t cap = ps->capparts * 2;
        part *grown = realloc(ps->parts, cap * sizeof *grown);
        if (grown == NULL)
            return 0;
        ps->parts = grown;
        ps->capparts = cap;
    }
    uint8_t *copy = arena_alloc(ps, len ? len : 1);
    if (copy == NULL)
        return 0;
    if (len)
        memcpy(copy, data, len);
    uint32_t *pidcopy = NULL;
    uint32_t nuniq = 0;
    if (npids > 0) {
        pidcopy = arena_alloc(ps, (size_t)npids * sizeof *pidcopy);
        if (pidcopy == NULL)
            return 0;
        memcpy(pidcopy, pids, (size_t)npids * sizeof *pidcopy);
        qsort(pidcopy, npids, sizeof *pidcopy, cmp_u32);
        for (uint32_t k = 0; k < npids; k++)
            if (nuniq == 0 || pidcopy[nuniq - 1] != pidcopy[k])
                pidcopy[nuniq++] = pidcopy[k];
    }
    part_id id = (part_id)ps->nparts++;
    ps->parts[id] = (part){ .hash = h, .data = copy, .len = len,
                            .kind = kind, .npids = nuniq, .pids = pidcopy };
    ps->index[i] = id;
    *is_new = 1;
    return id;
}

part_id part_store_intern_hinted(part_store *ps, part_id hint, uint8_t kind,
                                 const void *data, uint32_t len, int *is_new)
{
    if (hint != 0 && hint < ps->nparts) {
        const part *p = &ps->parts[hint];
        if (p->kind == kind && p->len == len &&
            (len == 0 || memcmp(p->data, data, len) == 0)) {
            *is_new = 0;
            return hint;
        }
    }
    return part_store_intern(ps, kind, data, len, NULL, 0, is_new);
}

const part *part_store_get(const part_store *ps, part_id id)
{
    if (id == 0 || id >= ps->nparts)
        return NULL;
    return &ps->parts[id];
}

size_t part_store_count(const part_store *ps)
{
    return ps->nparts - 1;
}

size_t part_store_used_bytes(const part_store *ps)
{
    return ps->arena_used + ps->nparts * sizeof *ps->parts +
           (ps->nslots + ps->old_nslots) * sizeof *ps->index;
}

size_t part_store_bytes(const part_store *ps)
{
    return ps->arena_bytes + ps->capparts * sizeof *ps->parts +
           (ps->nslots + ps->old_nslots) * sizeof *ps->index;
}
