/*
** part_store.h: the hash-consed store of state parts.
**
** A system state is a tree of parts (root vector -> process records ->
** mailboxes -> encoded terms).  Every distinct part is stored exactly once
** and named by a small integer id, so a state costs one short vector plus
** whatever parts it does not share with states seen before (SPIN's COLLAPSE,
** LTSmin's tree compression).  Interning a root vector doubles as the exact
** visited-set test (with the lossy tables of visited.h, roots are not
** interned: the store then holds only the sub-parts).
**
** Ids start at 1 (0 means "none").  An unshared store's are dense and
** assigned in interning order, which is deterministic for a deterministic
** search.  A part never
** moves once stored: a `const part *` stays valid until part_store_free.
**
** Concurrency contract.  A store is unshared when made: one thread at a
** time may call anything, and no call takes a lock.  part_store_set_concurrent
** shares it, once, before a second thread touches it (starting that thread
** is what orders the two); it never goes back.  On a shared store:
**  - part_store_intern, part_store_intern_hinted, part_store_get and the
**    statistics may run at once from any number of threads;
**  - interning the same (kind, bytes) at once yields one id, and exactly one
**    caller sees *is_new == 1 (the visited-set claim of a state);
**  - a part is written whole before its id is published (release); a thread
**    that gets an id, from part_store_intern or from inside another part it
**    read, reads the part's fields and bytes without further ado;
**  - part_store_get never blocks, and returns NULL for an id not (yet)
**    published;
**  - ids are not dense: each shard of the index takes ids a block at a
**    time, so ids a block never gave out are holes (part_store_get answers
**    NULL for them), and the order of ids is not deterministic;
**  - the statistics are relaxed counters: exact once the other threads are
**    joined, a moment stale while they run; the parts' bytes in use are
**    counted a whole arena chunk at a time;
**  - part_store_new*, part_store_set_concurrent and part_store_free are not
**    concurrent with anything.
*/
#ifndef MCE_PART_STORE_H
#define MCE_PART_STORE_H

#include <stddef.h>
#include <stdint.h>

typedef uint32_t part_id;

enum part_kind {
    PART_TERM = 1,     /* external term format bytes of an Erlang term */
    PART_MAILBOX = 2,  /* vector of PART_TERM ids, oldest message first */
    PART_PROC = 3,     /* process record, see sys_state.h */
    PART_STATE = 4,    /* root: PART_WORLD id (or 0), then PART_PROC ids by pid */
    PART_WORLD = 5,    /* nodes, faults, node monitors, ether: sys_state.h */
    PART_SIGNAL = 6,   /* a signal in the ether: kind and three words */
    PART_LABEL = 7     /* a step's label (search_pool.c keeps one per node) */
};

typedef struct part {
    uint64_t hash;          /* XXH3 of kind and bytes */
    const uint8_t *data;    /* owned by the store's arena */
    uint32_t len;           /* bytes */
    uint8_t kind;
    uint32_t npids;         /* simulated pids referenced (PART_TERM only) */
    const uint32_t *pids;   /* sorted, owned by the arena */
} part;

typedef struct part_store part_store;

part_store *part_store_new(void);
/* As part_store_new, with the index starting at `slots` slots (rounded up
** to a power of two, at least 16).  The index only grows, so ids, and thus
** everything the search reports, do not depend on this. */
part_store *part_store_new_sized(size_t slots);
void part_store_free(part_store *ps);
/* Shares the store among threads (the contract above).  0, or -1 when the
** locks cannot be made (the store then stays unshared and usable).  Calling
** it again on a shared store does nothing. */
int part_store_set_concurrent(part_store *ps);

/* Interns (kind, data, len).  Returns the id, 0 on allocation failure.
** *is_new tells whether the part was absent before.  For PART_TERM the
** caller passes the simulated pids the term references (any order, may
** repeat); they are kept with the part for least-fresh pid allocation. */
part_id part_store_intern(part_store *ps, uint8_t kind, const void *data,
                          uint32_t len, const uint32_t *pids, uint32_t npids,
                          int *is_new);
/* part_store_intern of a part without pids when the caller knows which id
** it probably has (the part a state was decoded from, its record since
** edited or not): `hint` when its kind and bytes are these, without hashing
** or probing; else the same as part_store_intern.  Either way the store
** ends as part_store_intern would leave it (a found part creates nothing). */
part_id part_store_intern_hinted(part_store *ps, part_id hint, uint8_t kind,
                                 const void *data, uint32_t len, int *is_new);

/* NULL for an id that was never returned (on a shared store: not yet
** published).  Lock-free. */
const part *part_store_get(const part_store *ps, part_id id);

/* Any thread, no lock (relaxed counters; they feed the memory cap).
** part_store_count: the parts stored (holes not counted). */
size_t part_store_count(const part_store *ps);
size_t part_store_bytes(const part_store *ps);   /* all memory held */
size_t part_store_used_bytes(const part_store *ps);  /* bytes actually in use */

#endif
