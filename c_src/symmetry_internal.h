/*
** symmetry_internal.h: what symmetry.c (choosing a state's representative)
** and sym_rename.c (applying a renaming to a state) share: the memo and
** scratch of a symmetry record, the fixed keys, and small helpers.
*/
#ifndef MCE_SYMMETRY_INTERNAL_H
#define MCE_SYMMETRY_INTERNAL_H

#include <stdlib.h>
#include <xxhash.h>

#include "symmetry.h"

/* A term part's pid-free hash and the keys it names, in order of
** occurrence (pids, and refs tagged ETF_REF_TAG), memoised by part id:
** terms recur across states.  The hash is of the bytes with every pid
** masked and then the small maps' pairs sorted again (by masked key, then
** bytes), and the keys are in the order of that layout, so renaming the
** pids in map keys (which moves their pairs) does not change either.
** Pairs whose masked bytes are equal (`#{Client => []}' of a set of
** clients) are in the order of their pids there, which is no property of
** the orbit: they are recorded as runs, and the refinement and the walk
** take each run's pairs as a multiset. */
typedef struct term_info {
    uint64_t hash;
    uint32_t off, n;    /* keys[off .. off+n) */
    uint32_t moff, mn;  /* mkeys[moff .. moff+mn): those that must keep
                           their numbers (in a key of a map whose order
                           cannot be restored after renaming) */
    uint32_t roff, rn;  /* runs[roff .. roff+rn), by first key */
    uint8_t done;
} term_info;

/* A run of equal pairs of a term (etf_equal_runs, outermost only): keys
** [first, first + npairs * width) of the term's, `width' keys a pair. */
typedef struct sym_run {
    uint32_t first, npairs, width;
} sym_run;

struct symmetry {
    term_info *info;
    size_t capinfo;
    uint32_t *keys;
    size_t nkeys, capkeys;
    uint32_t *mkeys;
    size_t nmkeys, capmkeys;
    uint8_t *buf;       /* scratch copy of a term's bytes */
    size_t capbuf;
    uint8_t *buf2;      /* a second one (term_of) */
    size_t capbuf2;
    uint8_t *wh;        /* ETF_IN_* bits of the keys of the term being
                           scanned, from keys[kbase] on */
    size_t capwh, kbase;
    size_t *koff;       /* with walkbase set, the byte offset of each of
                           those keys in the buffer walked */
    size_t capkoff;
    const uint8_t *walkbase;
    sym_run *runs;
    size_t nruns, capruns;
    uint32_t *ids;      /* scratch vector of part ids */
    size_t capids;
    uint64_t renamed;
    uint32_t max_group;
    int pin_keys;       /* pids in map keys keep their numbers (symmetry_new) */
};

/* The group leader word of a process record is the leader's key xor'ed
** with the default's, the first node's `user' (mce_rt_procs). */
#define DEFAULT_GL_KEY MAKE_KEY(0, 0xfffffeu)
/* The entry process: mce_search:run/2 starts the search with pid 1. */
#define ENTRY_KEY MAKE_KEY(0, 1u)

static inline int sym_grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need)
        ncap *= 2;
    void *grown = realloc(*p, ncap * size);
    if (grown == NULL)
        return -1;
    *p = grown;
    *cap = ncap;
    return 0;
}

/* qsort, which may not be given NULL even for no elements. */
static inline void sym_sort(void *base, size_t n, size_t size,
                 int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(base, n, size, cmp);
}

static inline uint64_t sym_mix(uint64_t h, uint64_t v)
{
    uint64_t w[2] = { h, v };
    return XXH3_64bits(w, sizeof w);
}

static inline void sym_put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline int sym_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Sorts v[0..n) and drops repeats; the number of distinct keys left. */
static inline size_t sym_sort_unique_u32(uint32_t *v, size_t n)
{
    sym_sort(v, n, sizeof *v, sym_cmp_u32);
    size_t u = 0;
    for (size_t j = 0; j < n; j++)
        if (u == 0 || v[u - 1] != v[j])
            v[u++] = v[j];
    return u;
}

#endif
