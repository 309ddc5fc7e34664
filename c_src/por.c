/*
** por.c: the safe-step test of partial-order reduction (por.h).  The
** rules and why each is needed are in docs/ARCHITECTURE.md, "Partial-order
** reduction"; here each test names its rule.
*/
#include "por.h"

#include <stddef.h>

/* Whether `key` is among the pids and refs of one of the term parts
** ids[0..n) (0 ids are [] and hold nothing).  The parts' lists are
** sorted (part_store.h), so each is a binary search. */
static int held_by(const part_store *ps, const part_id *ids, int n, uint32_t key)
{
    for (int i = 0; i < n; i++) {
        const part *p = ids[i] != 0 ? part_store_get(ps, ids[i]) : NULL;
        if (p == NULL)
            continue;
        size_t lo = 0, hi = p->npids;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (p->pids[mid] == key)
                return 1;
            if (p->pids[mid] < key)
                lo = mid + 1;
            else
                hi = mid;
        }
    }
    return 0;
}

/* Every pid and ref key of the parts from[0..nfrom) is the running
** process's own pid or is held by one of the parts to[0..nto). */
static int keys_within(const part_store *ps, const part_id *from, int nfrom,
                       const part_id *to, int nto, uint32_t self)
{
    for (int i = 0; i < nfrom; i++) {
        const part *p = from[i] != 0 ? part_store_get(ps, from[i]) : NULL;
        if (from[i] != 0 && p == NULL)
            return 0;           /* not a part we know: not safe */
        for (uint32_t k = 0; p != NULL && k < p->npids; k++)
            if (p->pids[k] != self && !held_by(ps, to, nto, p->pids[k]))
                return 0;
    }
    return 1;
}

int por_step_safe(const part_store *ps, const por_step *t)
{
    /* Rule 1: a start, a receive (one per process: the first matching
    ** message) or the resume of a one-way choice.  Never a timeout (a
    ** send to the process disables it), never one of several
    ** alternatives (the others are not in the set). */
    if (t->run != RUN_START && t->run != RUN_RECEIVE &&
        !(t->run == RUN_CHOICE && t->choices == 1))
        return 0;
    /* Rule 2: the process lives on (an exit frees its pid and signals
    ** its links and monitors). */
    if (t->outcome != OUTCOME_WAIT && t->outcome != OUTCOME_CHOICE)
        return 0;
    /* Rule 3: no effect of any kind. */
    if (t->neffects != 0)
        return 0;
    /* Rule 4: no read of shared state, so nothing another process does
    ** changes the step's outcome. */
    if (t->read_shared)
        return 0;
    if (t->stop)
        return 0;
    /* Rule 5: the step frees no pid or ref number and takes none: the
    ** keys of what it consumed (message, continuation, dictionary) are
    ** those of what it leaves (continuation, dictionary), its own pid
    ** aside, so least-fresh numbering (canon.c) gives every other step
    ** the same numbers before and after it. */
    part_id before[3] = { t->msg, t->old_cont, t->old_dict };
    part_id after[2] = { t->new_cont, t->new_dict };
    return keys_within(ps, before, 3, after, 2, t->pid) &&
           keys_within(ps, after, 2, before, 3, t->pid);
}
