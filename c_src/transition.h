/*
** transition.h: what one transition does to a state, apart from the order
** in which transitions are explored (search.c).  A process's step
** (transition_run) applies the effects the executor recorded and the step's
** outcome with Erlang's signal semantics: sends, spawns, links, monitors,
** aliases, registered names, process death and the exit-signal cascade it
** starts.  The ether (ether.h) carries the signals that travel between
** processes and injects the faults.
**
** Invariant: a transition reads and writes only the sys_state it is given
** and the trans_ctx: the same state, context and step give the same
** successor, whoever calls (the search, a step cache replaying recorded
** effects, one of several explorers).  The context's constants are fixed
** for a check; its record (the pids and refs made, the deaths) belongs to
** one transition, and the caller empties it before the next.
*/
#ifndef MCE_TRANSITION_H
#define MCE_TRANSITION_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "etf_build.h"
#include "search.h"
#include "sys_state.h"

typedef struct trans_ctx {
    /* The check's constants, set once by whoever explores. */
    part_store *ps;            /* every state's parts (borrowed) */
    ext_names names;           /* names.ps is ps; the nodes and creation of
                                  simulated pids and refs */
    part_id atoms[N_ATOMS];    /* enum search_atom, as stored terms */
    part_id empty_mailbox;
    int delivery_ether, node_pair, timeouts_when_idle;   /* search_config's */
    uint32_t max_crashes, max_disconnects, max_kills;   /* fault budgets */
    int timers_bounded;        /* search_config's */
    int kill_targeted;
    uint64_t crash_nodes;
    uint64_t disconnect_pairs[64];
    uint32_t entry_pid;        /* the first process: no blind kill hits it */
    uint64_t timers_never_from;
    /* One transition's record. */
    uint32_t *allocated;       /* pids handed out during the current run */
    size_t nallocated, capallocated;
    uint32_t *allocated_refs;  /* refs handed out during the current run */
    size_t nallocated_refs, capallocated_refs;
    death *deaths;             /* by exit signal, in the order they happened */
    size_t ndeaths, capdeaths;
    int name_freed;            /* a registered name was freed (rule 12's
                                  guard) ... */
    int name_freed_armed;      /* ... while another process that had found
                                  a name lived (PF_NAME_ARMED) */
    int monitor_race;          /* a process died watched by an armed one, or
                                  an armed one demonitored without flush
                                  (PF_MON_ARMED, the guard of por.h's rule
                                  11) */
} trans_ctx;

_Static_assert(SEARCH_MAX_NODES <= ETF_MAX_NODES, "a node without a name");

/* Empties one transition's record of deaths and guard events before the
** transition (the pids and refs made are emptied with each run). */
static inline void trans_ctx_begin(trans_ctx *cx)
{
    cx->ndeaths = 0;
    cx->name_freed = 0;
    cx->name_freed_armed = 0;
    cx->monitor_race = 0;
}

/* A registered name was freed (unregister/1, its holder's end, its node's
** stop): the guard of lookups taken as safe (por.h, rule 12) wants to know
** whether a process other than the holder `holder` (an index of st, or -1)
** had found a name and still lives. */
static inline void trans_name_freed(trans_ctx *cx, const sys_state *st, int holder)
{
    cx->name_freed = 1;
    for (uint32_t k = 0; k < st->nprocs && !cx->name_freed_armed; k++)
        if ((int)k != holder && (st->procs[k].flags & PF_NAME_ARMED))
            cx->name_freed_armed = 1;
}

/* Interns an encoded term, recording the simulated pids it references;
** the id is kept in t->id, and a term with an id is not interned again. */
part_id transition_intern_term(trans_ctx *cx, term_in *t);

/* Applies the step process `pid` ran (`run`; RUN_RECEIVE: it received the
** message at msg_index of its mailbox) to st: its effects, then its new
** continuation or its death; with timeouts_when_idle, `elapsed` ms pass
** for the other receive timeouts.  0, or -1 with *why (st is then partly
** changed).  Keeps nothing of res. */
int transition_run(trans_ctx *cx, sys_state *st, uint32_t pid,
                   enum run_kind run, uint32_t msg_index, uint32_t elapsed,
                   run_result *res, const char **why);

/*
** Exit signals, shared with ether.c, which delivers those that travel.
*/

/* An exit signal on its way: from a dying linked process, or from exit/2
** (untrappable when its reason is kill). */
typedef struct exit_signal {
    uint32_t from, to;
    part_id reason;
    int untrappable;
} exit_signal;

typedef struct signal_queue {
    exit_signal *q;
    size_t n, cap;
} signal_queue;

static inline int queue_signal(signal_queue *sq, exit_signal sig)
{
    if (sq->n == sq->cap) {
        size_t cap = sq->cap ? 2 * sq->cap : 8;
        exit_signal *grown = realloc(sq->q, cap * sizeof *grown);
        if (grown == NULL)
            return -1;
        sq->q = grown;
        sq->cap = cap;
    }
    sq->q[sq->n++] = sig;
    return 0;
}

static inline int holds_monitor(const proc *p, uint32_t ref)
{
    for (uint32_t k = 0; k < p->mons.n; k++)
        if (p->mons.m[k].ref == ref)
            return 1;
    return 0;
}

static inline int has_link(const proc *p, uint32_t pid)
{
    for (uint32_t k = 0; k < p->nlinks; k++)
        if (p->links[k] == pid)
            return 1;
    return 0;
}

/* Delivers the queued exit signals, and those they cause (deaths are
** recorded in cx); empties the queue. */
int deliver_signals(trans_ctx *cx, sys_state *st, signal_queue *sq);
/* An exit signal that acts at once on its target. */
int signal_now(trans_ctx *cx, sys_state *st, signal_queue *sq,
               exit_signal sig);
/* Appends {'DOWN', Ref, process, Item, Reason} to st->procs[to]'s mailbox
** (Item: the monitor's item term, or its pid when it has none). */
int deliver_down(trans_ctx *cx, sys_state *st, int to, monitor m,
                 part_id reason);
/* Appends {nodedown, Node} to st->procs[to]'s mailbox. */
int deliver_nodedown(trans_ctx *cx, sys_state *st, int to, uint32_t node);
/* Appends a monitor_nodes message (nodeup when `up`, else nodedown with
** `reason`) about `node`, shaped by the subscription's NODES_OPT_* `opts`. */
int deliver_nodes_event(trans_ctx *cx, sys_state *st, int to, uint32_t opts,
                        int up, uint32_t node, part_id reason);
/* A message sent to alias ref arrives at st->procs[q], if the alias is
** still active there. */
int deliver_via_alias(sys_state *st, int q, uint32_t ref, part_id msg);

#endif
