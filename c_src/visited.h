/*
** visited.h: the lossy visited sets, hash compaction and bitstate.
**
** The exact visited set is the part store itself (part_store.h: interning
** a state's root vector is the visited test).  The two tables here trade
** that exactness for memory.  Neither keeps the state: the caller hands in
** the encoded root vector (the bytes sys_state_encode_root returns) and
** keeps those bytes itself for as long as it needs the state (the search:
** in its stack frame).
**
**   VISITED_HASH_COMPACT  (Wolper and Leroy 1993; Holzmann's hash
**       compaction): a 64-bit fingerprint of each state (XXH3-64 with a
**       seed of its own, unrelated to the part store's hash) in an
**       open-addressing table of uint64 with linear probing.  0 marks an
**       empty slot, so a zero fingerprint is stored as 1.  The table
**       doubles when it would pass load 1/2, incrementally: the old table
**       is moved over a few slots per insertion, looked up meanwhile.  Two states whose fingerprints
**       collide are taken for one: the second is never explored.
**   VISITED_BITSTATE  (Holzmann's supertrace, bitstate hashing): a bit
**       array of m bits (a power of two in [2^10, 2^40]) and k = 3 bit
**       positions per state, h1 + i*h2 mod m for i < k from one XXH3-128
**       hash (Kirsch and Mitzenmacher 2006: two hashes make a Bloom
**       filter as good as k).  A state is seen iff all its k bits are set.
**       The array never grows; as it fills, more and more new states are
**       wrongly taken as seen, and once every bit is set nothing is new.
**
** Both can only err one way: a new state taken as visited (an omission),
** never a visited state taken as new.  So a lossy search explores a subset
** of the state space: a violation it reports is real (the trace is the
** search's own path), but "no violation" is only probable.
** visited_omission_probability estimates how probable an omission was.
*/
#ifndef MCE_VISITED_H
#define MCE_VISITED_H

#include <stddef.h>
#include <stdint.h>

enum visited_mode {
    VISITED_EXACT = 0,          /* the part store; no table here */
    VISITED_HASH_COMPACT = 1,
    VISITED_BITSTATE = 2
};

#define VISITED_BITSTATE_K 3
#define VISITED_MIN_BITS ((uint64_t)1 << 10)
#define VISITED_MAX_BITS ((uint64_t)1 << 40)

typedef struct visited visited;

/* A new, empty table.  HASH_COMPACT: `size` is the initial number of
** slots (rounded up to a power of two, at least 16; 0: a default).
** BITSTATE: `size` is m, the number of bits (rounded up to a power of two
** and clamped to [VISITED_MIN_BITS, VISITED_MAX_BITS]).  NULL on
** allocation failure and for VISITED_EXACT. */
visited *visited_new(enum visited_mode mode, uint64_t size);
void visited_free(visited *v);

/* Records the state whose root vector is data[0..len): 1 if it was taken
** as new, 0 if as already visited, -1 on allocation failure (hash
** compaction growing; the table is unchanged then). */
int visited_insert(visited *v, const void *data, size_t len);
/* 1 if the state would be taken as visited, else 0. */
int visited_contains(const visited *v, const void *data, size_t len);

/* The same below the hashing, for tests.  Fingerprints (HASH_COMPACT) and
** hash pairs (BITSTATE); -1 when the table is of the other mode. */
int visited_insert_fingerprint(visited *v, uint64_t fp);
int visited_contains_fingerprint(const visited *v, uint64_t fp);
int visited_insert_hashes(visited *v, uint64_t h1, uint64_t h2);
/* HASH_COMPACT: 1 while the table grows (its previous, half-size table
** still being moved over, MIGRATE_STEP slots per insertion), else 0. */
int visited_growing(const visited *v);
int visited_contains_hashes(const visited *v, uint64_t h1, uint64_t h2);

enum visited_mode visited_get_mode(const visited *v);
/* States taken as new so far. */
uint64_t visited_count(const visited *v);
/* Slots (HASH_COMPACT) or bits (BITSTATE). */
uint64_t visited_capacity(const visited *v);
/* Memory the table holds, in bytes. */
size_t visited_bytes(const visited *v);
/* Estimated probability that at least one new state was wrongly taken as
** visited so far (see visited.c for the formulas). */
double visited_omission_probability(const visited *v);
/* Expected number of new states wrongly taken as visited so far, from the
** fill (bitstate) or the fingerprint count (hash compaction) at each
** insertion; unlike the probability above it does not saturate. */
double visited_lost_estimate(const visited *v);
/* n / (n + lost): the estimated fraction of the new states met that were
** stored; 1.0 for an empty table. */
double visited_coverage_estimate(const visited *v);

#endif
