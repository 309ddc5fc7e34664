/*
** canon.h: canonical numbering of the pids and refs a step makes.
**
** Invariant: a pid or ref handed out is the smallest number of its node
** (for refs, of its creator's region) that the state being expanded does
** not hold anywhere (processes, links, monitors, aliases, mailboxes, the
** ether, tables, terms) and that the same run has not handed out already.
** So the numbers depend on the state alone, not on the path to it: two
** interleavings that reach one state make the same pids and refs, and a
** dead process's number is reused once nothing refers to it (no pid, and
** no ref it made: a ref's region is its creator's number), which keeps
** states that differ only in such numbers from multiplying.
*/
#ifndef MCE_CANON_H
#define MCE_CANON_H

#include <stdint.h>

#include "sys_state.h"
#include "transition.h"

/* A fresh pid (refs 0) or ref (refs 1) of `node` for the step process
** run_pid is running from state cur; recorded in cx's list of the pids or
** refs made during the run.  0 on allocation failure or a full region. */
uint32_t canon_fresh_key(trans_ctx *cx, const sys_state *cur, uint32_t run_pid,
                         uint32_t node, int refs);

#endif
