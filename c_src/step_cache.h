/*
** step_cache.h: the step cache: the outcomes of process steps, kept under
** their inputs, so that a step met again is applied in C without running
** Erlang (issue 17; docs/STEP_CACHE.md measured the premise).
**
** A step's inputs are its request (the process, how it runs, its
** continuation, the message, the choice, its dictionary and its flags: the
** key, all interned part ids or numbers, so equal keys are equal terms)
** and the answers of the reads of shared state it makes while it runs (the
** read NIFs: fresh pids and refs, monitors, aliases, timers, liveness, the
** registry, ETS tables, nodes, ...), in the order it makes them.  An entry
** holds, under one key, a short list of alternatives, each a sequence of
** reads with their answers and the outcome the step gave (what `ran`
** delivered: outcome, continuation, dictionary, effects, label).
**
** Invariant: every alternative was recorded from a step that ran in Erlang
** and ended without a checker error and without stopping the search, and
** its reads are all of that step's reads of the stored state.  The
** executor is a function of the request and those answers, so a step with
** the same key whose reads, asked again in order against its own state,
** get the same answers makes exactly those reads and gives exactly that
** outcome: applying it is indistinguishable from running the step.
**
** The owner (the search) re-asks the reads and applies the outcome; this
** file only stores, finds and evicts (CLOCK over a bounded number of
** entries and bytes).  No global state: each search owns its cache.
*/
#ifndef MCE_STEP_CACHE_H
#define MCE_STEP_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "search.h"

enum step_read_kind {
    READ_FRESH_PID = 1,   /* a: node; ans[0]: the pid key */
    READ_FRESH_REF,       /* a: node; ans[0]: the ref number */
    READ_MONITOR,         /* a: pid, b: ref; ans[0]: held */
    READ_ALIAS,           /* a: pid, b: ref; ans[0]: active */
    READ_TIMER,           /* a: ref; ans[0..1]: the time as int64 (-1: none) */
    READ_ALIVE,           /* a: pid; ans[0] */
    READ_WHEREIS,         /* a: node, name; ans[0]: found, ans[1]: pid */
    READ_ETS_NAMED,       /* a: node, name; ans[0]: tid (0: none) */
    READ_ETS_TABLE,       /* a: tid; ans: present, owner, heir, heir data,
                             name, data (part ids) */
    READ_NODE,            /* a, b: nodes; ans[0]: status */
    READ_UNIQUE,          /* ans[0]: the last unique integer */
    READ_GROUP_LEADER,    /* a: pid; ans[0]: alive, ans[1]: gl as stored */
    READ_APP_ENV          /* ans[0]: the term's part id (0: none) */
};

#define STEP_READ_WORDS 6

typedef struct step_read {
    uint32_t kind;
    uint32_t a, b;
    uint32_t name_off, name_len;  /* the name's external format in the
                                     log's (or alternative's) bytes */
    uint32_t ans[STEP_READ_WORDS];
} step_read;

/* Whether a read looked up a name and found it registered to a live
** process, or (whereis/1's own check) found that process alive: rule 12
** of por.h takes such reads as safe, guarded.  *named: the pid the last
** lookup of the step found (0: none), kept across its reads. */
static inline int step_read_finds_name(const step_read *r, uint32_t *named)
{
    if (r->kind == READ_WHEREIS && r->ans[0] == 1) {
        *named = r->ans[1];
        return 1;
    }
    return r->kind == READ_ALIVE && r->ans[0] == 1 && *named != 0 && r->a == *named;
}

/* The reads of the running step, as they happen. */
typedef struct step_log {
    step_read *r;
    size_t n, cap;
    uint8_t *bytes;
    size_t nbytes, capbytes;
    int poisoned;          /* a read that cannot be re-asked (process_info,
                              registered/0, processes/0, ets:all/0) or an
                              allocation failed: the step makes no entry */
} step_log;

/* Appends a read (its name_off/name_len are set from name).  On failure
** the log is poisoned. */
void step_log_add(step_log *l, const step_read *r, const uint8_t *name, size_t len);
void step_log_reset(step_log *l);
void step_log_free(step_log *l);

typedef struct step_key {
    uint32_t pid, run, choice, flags;
    part_id cont, msg, dict;
} step_key;

typedef struct step_alt {
    struct step_alt *next;
    step_read *reads;
    size_t nreads;
    uint8_t *names;        /* the names the reads point into */
    run_result res;        /* owned: effects, every term's bytes (with the
                              part id when the recording interned it),
                              the label */
} step_alt;

typedef struct step_entry {
    step_key key;
    uint64_t hash;
    struct step_entry *chain;   /* next in the bucket */
    step_alt *alts;             /* oldest first */
    uint32_t nalts;
    uint32_t slot;              /* index in the clock */
    int referenced;             /* CLOCK's bit */
    size_t bytes;
} step_entry;

typedef struct step_cache {
    step_entry **buckets;
    size_t nbuckets;
    step_entry **slots;         /* the clock: every entry once */
    size_t capslots, max_entries, n, hand;
    size_t bytes, max_bytes;
    uint64_t hits, misses, evictions;
} step_cache;

/* The default bounds: docs/STEP_CACHE.md found a few thousand distinct
** steps on the bench models (an LRU of 4,096 entries hit as often as an
** unbounded cache), a few hundred bytes each. */
#define STEP_CACHE_ENTRIES 16384
#define STEP_CACHE_BYTES ((size_t)64 << 20)

/* An outcome larger than this is not kept (a step sending a burst of
** thirty thousand messages is met once; steps measured 0.2 to 3 KB). */
#define STEP_CACHE_MAX_ALT_BYTES ((size_t)64 << 10)

/* At most 16 alternatives under one key (a request whose reads keep
** answering differently is better run). */
#define STEP_CACHE_MAX_ALTS 16

step_cache *step_cache_new(size_t max_entries, size_t max_bytes);
void step_cache_free(step_cache *c);
/* The entry of key k (marked as used), or NULL. */
step_entry *step_cache_find(step_cache *c, const step_key *k);
/* Stores the outcome res of a step with key k and reads log (copies
** both; res's terms keep the part ids the transition gave them), unless
** it is larger than STEP_CACHE_MAX_ALT_BYTES or the key has its
** STEP_CACHE_MAX_ALTS.  0, or -1 when out of memory (the cache is
** unchanged). */
int step_cache_add(step_cache *c, const step_key *k, const step_log *log,
                   const run_result *res);
/* Everything the cache holds, in bytes. */
size_t step_cache_bytes(const step_cache *c);

#endif
