/*
** symmetry.h: symmetry reduction under pid permutation (issue 18, option
** `symmetry'), after Ip & Dill, "Better verification through symmetry"
** (Formal Methods in System Design 9, 1996): the scalarsets of Murphi.
**
** Why a renaming is an automorphism.  A program that only tests pids for
** equality (send, link, monitor, =:=, matching) cannot tell a state from
** the state with the pid numbers of one node renamed by a bijection, every
** occurrence renamed: both behave alike, renamed.  Least-fresh numbering
** (canon.c) commutes with the renaming when the bijection maps the numbers
** not in use onto the numbers not in use *in order*, so the least free
** number goes to the least free number; a ref's number carries its
** creator's pid number (etf_scan.h), so a ref made by p is renamed to
** creator pi(p), and the next ref p makes is still the least free in its
** region.  Only processes
** with numbers below ETF_REF_CREATOR_LIMIT take part (a larger one makes
** its refs in the shared region 0, which is never renamed), and none whose
** pid or refs an ETS table's data holds (mce_ets keeps objects sorted by
** key: renaming a key there would unsort them) or a map holds (the VM
** writes a map's keys in term order).  The precondition, which
** the user asserts by asking for `symmetry => true', is that the program
** never observes pid *order* (<, lists:sort of pids, ordered structures
** keyed by pids, term_to_binary, pid_to_list, phash2 of a pid,
** erlang:processes/0's order).
**
** Invariant: symmetry_canon leaves st in the orbit of the state it was
** given (one such bijection of pid numbers per node, applied to every pid
** and ref creator in the state), with the canonical order restored, and
** returns that bijection; any representative is sound, a better one merges
** more.  It is a function of the state alone (and of the store, which only
** grows), so equal states get equal representatives.
*/
#ifndef MCE_SYMMETRY_H
#define MCE_SYMMETRY_H

#include <stddef.h>
#include <stdint.h>

#include "sys_state.h"
#include "transition.h"

/* One pid key renamed: from -> to (both of one node). */
typedef struct sym_pair {
    uint32_t from, to;
} sym_pair;

typedef struct symmetry symmetry;

symmetry *symmetry_new(void);
void symmetry_free(symmetry *sy);
size_t symmetry_bytes(const symmetry *sy);
/* Successors renamed to a representative other than themselves, and the
** largest number of live processes of one node sharing one signature. */
uint64_t symmetry_renamed(const symmetry *sy);
uint32_t symmetry_max_group(const symmetry *sy);

/* Replaces the flushed state st by its representative.  *perm (malloc'd,
** sorted by `from') and *nperm get the renaming applied, NULL and 0 for
** none.  0, or -1 when out of memory or on a malformed term (st is then
** partly renamed and must be dropped). */
int symmetry_canon(symmetry *sy, trans_ctx *cx, sys_state *st,
                   sym_pair **perm, uint32_t *nperm);

/* Renames every pid (and ref creator) of st by perm (sorted by `from', a
** bijection on the keys it moves, each within one node) and restores the
** canonical order.  0 or -1 as symmetry_canon. */
int symmetry_rename(symmetry *sy, trans_ctx *cx, sys_state *st,
                    const sym_pair *perm, uint32_t nperm);

#endif
