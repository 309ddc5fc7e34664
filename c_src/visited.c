/*
** visited.c: owns the lossy visited tables (hash compaction's fingerprint
** table and bitstate's bit array) and their omission estimates.
*/
#include "visited.h"
#include "huge_alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* Seeds of the state hashes: any constants unlike the part store's seeds
** (the part kinds, 1 to 6), so a fingerprint is independent of where the
** store's index puts the parts. */
#define FP_SEED 0x9e3779b97f4a7c15ULL
#define BS_SEED 0xc2b2ae3d27d4eb4fULL

#define DEFAULT_SLOTS 2048

/* Slots of the old table moved to the new one per insertion while the
** table grows: growing costs O(MIGRATE_STEP) per call instead of a pause
** over millions of slots.  The new table (2N slots) holds at most N/2
** fingerprints when it starts, and the old table's N slots are moved
** within N/MIGRATE_STEP insertions, long before the new one needs to grow
** (N/2 insertions): any step of 2 or more would do. */
#define MIGRATE_STEP 8

struct visited {
    enum visited_mode mode;
    uint64_t n;             /* states taken as new */
    /* HASH_COMPACT */
    uint64_t *slots;        /* fingerprints, 0 = empty */
    size_t nslots;          /* power of two */
    /* While growing: the previous table, unchanged, whose slots below
    ** `moved` have been copied into `slots`; a fingerprint is in the set
    ** if it is in either.  NULL when not growing. */
    uint64_t *old;
    size_t nold, moved;
    /* BITSTATE */
    uint64_t *bits;         /* m bits, 64 a word */
    uint64_t m;             /* power of two */
    uint64_t set_bits;      /* bits set in `bits` */
    /* Expected number of new states wrongly taken as visited so far: each
    ** time a state is stored, the states met since the previous store were
    ** each lost with the probability f of a match at the current fill, a
    ** geometric count of mean f/(1-f).  Kept as the search goes because
    ** the fill at each insertion is known exactly only then. */
    double lost;
};

visited *visited_new(enum visited_mode mode, uint64_t size)
{
    if (mode != VISITED_HASH_COMPACT && mode != VISITED_BITSTATE)
        return NULL;
    visited *v = calloc(1, sizeof *v);
    if (v == NULL)
        return NULL;
    v->mode = mode;
    if (mode == VISITED_HASH_COMPACT) {
        size_t want = size ? (size_t)(size < ((uint64_t)1 << 40) ? size : (uint64_t)1 << 40)
                           : DEFAULT_SLOTS;
        size_t nslots = 16;
        while (nslots < want)
            nslots *= 2;
        v->nslots = nslots;
        v->slots = nslots <= SIZE_MAX / sizeof *v->slots ? huge_calloc(nslots * sizeof *v->slots)
                                                         : NULL;
        if (v->slots == NULL) {
            free(v);
            return NULL;
        }
    } else {
        uint64_t m = VISITED_MIN_BITS;
        while (m < size && m < VISITED_MAX_BITS)
            m *= 2;
        if ((m / 64) > SIZE_MAX / sizeof *v->bits) {
            free(v);
            return NULL;
        }
        v->m = m;
        v->bits = huge_calloc((size_t)(m / 64) * sizeof *v->bits);
        if (v->bits == NULL) {
            free(v);
            return NULL;
        }
    }
    return v;
}

void visited_free(visited *v)
{
    if (v == NULL)
        return;
    huge_free(v->slots, v->nslots * sizeof *v->slots);
    huge_free(v->old, v->nold * sizeof *v->old);
    huge_free(v->bits, (size_t)(v->m / 64) * sizeof *v->bits);
    free(v);
}

/* -------------------------------------------------- hash compaction */

static uint64_t fingerprint_of(const void *data, size_t len)
{
    return XXH3_64bits_withSeed(data, len, FP_SEED);
}

/* The slot holding fp, or the empty slot where it would go. */
static size_t probe(const uint64_t *slots, size_t nslots, uint64_t fp)
{
    size_t mask = nslots - 1;
    size_t i = (size_t)fp & mask;
    while (slots[i] != 0 && slots[i] != fp)
        i = (i + 1) & mask;
    return i;
}

/* Moves up to `count` slots of the old table into the new one; frees the
** old table once all are moved. */
static void migrate(visited *v, size_t count)
{
    if (v->old == NULL)
        return;
    size_t end = v->nold - v->moved < count ? v->nold : v->moved + count;
    for (size_t j = v->moved; j < end; j++)
        if (v->old[j] != 0)
            v->slots[probe(v->slots, v->nslots, v->old[j])] = v->old[j];
    v->moved = end;
    if (v->moved == v->nold) {
        huge_free(v->old, v->nold * sizeof *v->old);
        v->old = NULL;
        v->nold = v->moved = 0;
    }
}

/* Starts growing: a table twice the size becomes the one inserted into,
** the current one is kept to be moved over by later insertions. */
static int grow(visited *v)
{
    /* Never two old tables (cannot happen with MIGRATE_STEP >= 2). */
    migrate(v, SIZE_MAX);
    if (v->nslots > SIZE_MAX / 2 / sizeof *v->slots)
        return -1;
    size_t nslots = v->nslots * 2;
    uint64_t *slots = huge_calloc(nslots * sizeof *slots);
    if (slots == NULL)
        return -1;
    v->old = v->slots;
    v->nold = v->nslots;
    v->moved = 0;
    v->slots = slots;
    v->nslots = nslots;
    return 0;
}

static int holds(const visited *v, uint64_t fp)
{
    if (v->slots[probe(v->slots, v->nslots, fp)] == fp)
        return 1;
    return v->old != NULL && v->old[probe(v->old, v->nold, fp)] == fp;
}

int visited_insert_fingerprint(visited *v, uint64_t fp)
{
    if (v->mode != VISITED_HASH_COMPACT)
        return -1;
    if (fp == 0)
        fp = 1;
    if (holds(v, fp))
        return 0;
    /* Load stays at most 1/2, so probes stay short and the table never
    ** fills. */
    if ((v->n + 1) * 2 > v->nslots && grow(v) != 0)
        return -1;
    migrate(v, MIGRATE_STEP);
    v->slots[probe(v->slots, v->nslots, fp)] = fp;
    /* A new state collides with one of n fingerprints: p = n/2^64, and
    ** p/(1-p) is p at any n this table can hold. */
    v->lost += ldexp((double)v->n, -64);
    v->n++;
    return 1;
}

int visited_contains_fingerprint(const visited *v, uint64_t fp)
{
    if (v->mode != VISITED_HASH_COMPACT)
        return -1;
    if (fp == 0)
        fp = 1;
    return holds(v, fp);
}

int visited_growing(const visited *v)
{
    return v->old != NULL;
}

/* --------------------------------------------------------- bitstate */

/* Kirsch-Mitzenmacher: position i is h1 + i*h2 mod m.  h2 is made odd,
** so with m a power of two the k positions are distinct. */
static uint64_t bit_position(const visited *v, uint64_t h1, uint64_t h2,
                             unsigned i)
{
    return (h1 + (uint64_t)i * (h2 | 1)) & (v->m - 1);
}

int visited_insert_hashes(visited *v, uint64_t h1, uint64_t h2)
{
    if (v->mode != VISITED_BITSTATE)
        return -1;
    /* The match probability at the fill before this insertion: a state
    ** stored now ends the run of states lost at that fill. */
    double fill = (double)v->set_bits / (double)v->m;
    double f = 1.0;
    for (unsigned i = 0; i < VISITED_BITSTATE_K; i++)
        f *= fill;
    int fresh = 0;
    for (unsigned i = 0; i < VISITED_BITSTATE_K; i++) {
        uint64_t b = bit_position(v, h1, h2, i);
        uint64_t mask = (uint64_t)1 << (b & 63);
        if ((v->bits[b >> 6] & mask) == 0) {
            v->bits[b >> 6] |= mask;
            v->set_bits++;
            fresh = 1;
        }
    }
    if (fresh) {
        /* fresh implies a clear bit before, so f < 1. */
        v->lost += f / (1.0 - f);
        v->n++;
    }
    return fresh;
}

int visited_contains_hashes(const visited *v, uint64_t h1, uint64_t h2)
{
    if (v->mode != VISITED_BITSTATE)
        return -1;
    for (unsigned i = 0; i < VISITED_BITSTATE_K; i++) {
        uint64_t b = bit_position(v, h1, h2, i);
        if ((v->bits[b >> 6] & ((uint64_t)1 << (b & 63))) == 0)
            return 0;
    }
    return 1;
}

/* ------------------------------------------------------------ states */

int visited_insert(visited *v, const void *data, size_t len)
{
    if (v->mode == VISITED_HASH_COMPACT)
        return visited_insert_fingerprint(v, fingerprint_of(data, len));
    XXH128_hash_t h = XXH3_128bits_withSeed(data, len, BS_SEED);
    return visited_insert_hashes(v, h.low64, h.high64);
}

int visited_contains(const visited *v, const void *data, size_t len)
{
    if (v->mode == VISITED_HASH_COMPACT)
        return visited_contains_fingerprint(v, fingerprint_of(data, len));
    XXH128_hash_t h = XXH3_128bits_withSeed(data, len, BS_SEED);
    return visited_contains_hashes(v, h.low64, h.high64);
}

enum visited_mode visited_get_mode(const visited *v)
{
    return v->mode;
}

uint64_t visited_count(const visited *v)
{
    return v->n;
}

uint64_t visited_capacity(const visited *v)
{
    return v->mode == VISITED_HASH_COMPACT ? (uint64_t)v->nslots : v->m;
}

size_t visited_bytes(const visited *v)
{
    size_t table = v->mode == VISITED_HASH_COMPACT
                       ? (v->nslots + v->nold) * sizeof *v->slots
                       : (size_t)(v->m / 8);
    return sizeof *v + table;
}

/* The probability that some new state was wrongly taken as visited.
**
** Hash compaction, n states stored with b = 64-bit fingerprints: a state
** is lost when its fingerprint equals one of a state stored before it.
** Over all pairs (the birthday bound) p <= n(n-1)/2 / 2^b, reported as
** min(1, n^2 / 2^65).
**
** Bitstate, m bits, k hashes, n states stored: after n insertions a
** fraction of about 1 - e^{-kn/m} of the bits is set, so a new state is
** wrongly matched (all its k bits already set) with probability
**     f = (1 - e^{-kn/m})^k.
** The expected number of omissions is the sum of that probability over
** the insertions, at most n*f (f only grows with n); taking omissions as
** rare independent events, the probability of at least one is
**     p = 1 - e^{-n*f},
** which stays in [0, 1].  Both are estimates of what happened in this run
** (the states the search did explore), not of the full state space. */
/* See `lost` in struct visited.  Only the states stored so far are
** counted: the states a lost state would have led to are unknown, so this
** is a lower bound on what the full state space lost. */
double visited_lost_estimate(const visited *v)
{
    return v->lost;
}

double visited_coverage_estimate(const visited *v)
{
    double n = (double)v->n;
    return n + v->lost > 0.0 ? n / (n + v->lost) : 1.0;
}

double visited_omission_probability(const visited *v)
{
    double n = (double)v->n;
    if (v->mode == VISITED_HASH_COMPACT) {
        double p = ldexp(n * n, -65);
        return p < 1.0 ? p : 1.0;
    }
    double k = VISITED_BITSTATE_K;
    double f = pow(-expm1(-k * n / (double)v->m), k);
    double p = -expm1(-n * f);
    return p < 0.0 ? 0.0 : p > 1.0 ? 1.0 : p;
}
