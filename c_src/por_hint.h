/*
** por_hint.h: which process a frame of the reduced search tries first
** (por.h, search.c).  "Commit, then decide" keeps every transition a frame
** took before its safe one, so a safe step late in pid order cuts little.
** This table remembers, per step request (the step cache's key, hashed),
** whether the last step applied under it was safe, and the frame starts
** its round of the processes at the first one whose next request was (or,
** knowing none, at an untried resume or start: search_safe_first).
**
** Invariant: a hint is only an order, never a verdict: the frame still
** takes every transition once (a rotation of pid order) unless the step
** it takes is judged safe again on its own.  The table is open-addressed
** and grows with the requests met up to POR_HINT_MAX_SLOTS, where it
** becomes lossy (a full table forgets a hint, or two hashes collide);
** its contents depend only on the steps the search applied, in its order,
** so the search stays deterministic and does not depend on whether the
** step cache is on.
*/
#ifndef MCE_POR_HINT_H
#define MCE_POR_HINT_H

#include <stddef.h>
#include <stdint.h>

#include "step_cache.h"

/* Powers of two, 9 bytes a slot: the table starts small (a small check
** pays 2 KB) and doubles when more than half its slots are taken. */
#define POR_HINT_MIN_SLOTS 256u
#define POR_HINT_MAX_SLOTS 65536u

typedef struct por_hint {
    uint64_t *keys;             /* the request's hash | 1 (0: empty) */
    uint8_t *safe;
    size_t cap, n;              /* slots, and slots taken */
} por_hint;

/* Allocates the table.  0, or -1 out of memory. */
int por_hint_init(por_hint *h);
void por_hint_free(por_hint *h);
/* The memory the table holds (0 when not allocated). */
size_t por_hint_bytes(const por_hint *h);
/* Records the verdict of a step applied under request k. */
void por_hint_set(por_hint *h, const step_key *k, int safe);
/* Whether the last step applied under request k was safe: 1 safe, 0 not,
** -1 no step applied under k yet (or forgotten). */
int por_hint_get(const por_hint *h, const step_key *k);

#endif
