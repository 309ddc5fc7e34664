/*
** stack_set.h: a multiset of state keys.  The search uses it for the
** states on the depth-first stack, for the cycle proviso of the
** partial-order reduction (por.h, search.c: a state may be cut to its safe
** step only if that step does not lead back onto the stack), and with
** pass_cut for the states passed through rather than kept and how often
** each was passed after other transitions (search.c, search_pass_cut).
**
** A key is a state's part id (the exact table) or a hash of its root vector
** (the lossy tables, whose states are not interned; a collision only makes
** a state look on the stack, which cuts less).
**
** Invariant: the set holds each key as many times as it was added and not
** yet removed; 0 is never a member.  Linear probing with backward-shift
** deletion, so no tombstones build up over a long search; the table is at
** most half full.
*/
#ifndef MCE_STACK_SET_H
#define MCE_STACK_SET_H

#include <stddef.h>
#include <stdint.h>

typedef struct stack_set {
    uint64_t *ids;          /* 0: empty slot */
    uint32_t *counts;
    size_t cap;             /* a power of two, or 0 */
    size_t n;               /* distinct ids held */
} stack_set;

/* Adds id (not 0).  0, or -1 out of memory (the set is unchanged). */
int stack_set_add(stack_set *set, uint64_t id);
/* Removes one occurrence of id; nothing if it is not a member. */
void stack_set_remove(stack_set *set, uint64_t id);
/* Whether id is a member. */
int stack_set_has(const stack_set *set, uint64_t id);
/* How many times id was added and not removed. */
uint32_t stack_set_count(const stack_set *set, uint64_t id);
void stack_set_free(stack_set *set);
/* The memory the set holds. */
size_t stack_set_bytes(const stack_set *set);

#endif
