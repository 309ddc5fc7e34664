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
** its refs in the shared region 0, which is never renamed).  A renamed
** pid inside a small map's key moves its pair (the VM writes a small map's
** keys in term order): sym_rename.c re-sorts the pairs (etf_order.c).
** Processes whose pids or refs occur where that cannot be done (a key of
** a map of more than 32 pairs, hash-ordered; of a map with a key type
** etf_order.c does not order, such as a float; an ETS object's key, in
** whose order mce_ets iterates) keep their numbers, and so, for cost
** alone, do processes a map holds under a pid-free key.  The
** precondition, which the user asserts by asking for `symmetry => true',
** is that the program
** never observes pid *order* (<, lists:sort of pids, ordered structures
** keyed by pids, iterating a map keyed by pids, term_to_binary,
** pid_to_list, phash2 of a pid, erlang:processes/0's order).
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

#include "etf_scan.h"
#include "sys_state.h"
#include "transition.h"

/* One pid key renamed: from -> to (both of one node). */
typedef struct sym_pair {
    uint32_t from, to;
} sym_pair;

typedef struct symmetry symmetry;

/* pin_keys: processes whose pids or refs occur in a map's key keep their
** numbers (renaming them reorders the map's iteration, which the program
** may observe: the search with the guard runs again this way when it does,
** search_key_order); otherwise only where the pairs cannot be re-sorted. */
symmetry *symmetry_new(int pin_keys);
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

/* Renames one term, buf[0..len) with its version byte, in place by perm
** (as symmetry_rename renames the terms of a state): the pids and ref
** creators, then the pairs of small maps whose keys moved re-sorted, and
** with ets (an mce_ets table's data) its objects, into the order the VM
** writes.  nodes and creation: the simulated nodes' (etf_scan.h).  0, or -1 (malformed, out of memory, or
** a moved key the VM's order cannot be restored for: in a large map's key,
** or beside a key type etf_order.h does not order).  For the tests
** (mce_nif:rename_term/4). */
int symmetry_rename_term(const etf_nodes *nodes, uint32_t creation, uint8_t *buf,
                         size_t len, int ets, const sym_pair *perm, uint32_t nperm);

#endif
