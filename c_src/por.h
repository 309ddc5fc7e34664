/*
** por.h: partial-order reduction of the safety search (issue 18): which
** process steps are *safe*, i.e. form a persistent set on their own
** (Godefroid, "Partial-Order Methods for the Verification of Concurrent
** Systems", 1996, ch. 4; a stubborn set with one key transition in
** Valmari's terms).  The search (search.c) decides, from the answer, where
** to cut a state's expansion; this file only judges one step.
**
** Invariant: por_step_safe is a pure function of the step's request (run
** kind, the choice count, the consumed message, the old continuation and
** dictionary), of what the step did (outcome, effects, whether it read
** shared state, whether it stops the search) and of the part store's pid
** lists; it changes nothing.  A step it calls safe, of process P in state
** s, commutes with every transition of every other process, channel and
** fault from s on, or is absorbed by one that kills P (the same state
** whether P took the step or not), and no such transition changes its
** outcome, as long as no step reads another process's record
** (search_peek_proc), which the search watches at run time.  The argument,
** rule by rule, is in docs/ARCHITECTURE.md, "Partial-order reduction".
**
** With `renaming` (the search's cfg.reduction 2) the commutations may hold
** only up to a renaming of pid numbers and ref counters: a step may take a
** fresh pid (a plain spawn) or ref, free numbers (drop pids and refs, end
** its process), which changes the numbers later steps get but nothing a
** program that never observes them can tell.  Such a verdict carries
** POR_RENAMED, and the search voids itself when a step observes pid
** numbers or the order of refs (search_numbers_observed).
** docs/ARCHITECTURE.md, "Safe steps up to a renaming of pids and refs".
*/
#ifndef MCE_POR_H
#define MCE_POR_H

#include <stdint.h>

#include "match_memo.h"
#include "part_store.h"
#include "search.h"
#include "sys_state.h"

/* What a step with sends needs besides its own request (rules 7a-7d of
** docs/ARCHITECTURE.md): the state it is taken from and the one it
** gives, what the search knows of matches, and the options that decide
** whether a process can die or a receive time out before the step. */
typedef struct por_sends {
    const sys_state *before;    /* s, the state being expanded */
    const sys_state *after;     /* t(s) */
    const match_memo *memo;     /* (cont, msg) -> matches, -1 unknown */
    const effect *effects;      /* the step's effects, terms interned */
    int instant;                /* no delivery => ether */
    int timeouts_when_idle;
    int faults_left;            /* a kill or crash fault may still come */
    uint32_t entry;             /* the entry process's pid key (rule 9) */
} por_sends;

/* One answered process step, as the search knows it when it applies it. */
typedef struct por_step {
    enum run_kind run;
    uint32_t choices;       /* RUN_CHOICE: the process's alternatives */
    int poll;               /* RUN_TIMEOUT: the process's flags had PF_POLL */
    uint32_t pid;           /* the running process's key */
    part_id msg;            /* RUN_RECEIVE: the consumed message, else 0 */
    part_id old_cont, old_dict;     /* before the step (dict 0: []) */
    part_id new_cont, new_dict;     /* after it */
    enum outcome_kind outcome;
    size_t neffects;
    int read_shared;        /* the step asked the state anything (a peek,
                               a fresh ref), or its cache entry holds such
                               reads */
    int read_fresh_pid;     /* it took a fresh pid (a spawn) */
    int read_fresh_ref;     /* it took a fresh ref */
    int read_names;         /* it looked up names registered to live
                               processes (whereis), and read_shared does
                               not count those reads (rule 12) */
    int renaming;           /* commutation up to a renaming of pid numbers
                               and ref counters is enough (the header) */
    int stop;               /* the step stops the search (a violation) */
    int monitor_rule;       /* rules 11 and 12 on (a guard of theirs may */
    int name_rule;          /* have turned them off for a rerun) */
    const por_sends *sends; /* NULL: a step with effects is never safe */
} por_step;

/* A verdict is POR_UNSAFE, or one of the two safe kinds, with POR_RENAMED
** (and for an end POR_EXIT) or'ed in when it holds only up to a renaming. */
enum por_verdict {
    POR_UNSAFE = 0,
    POR_SAFE_LOCAL = 1,     /* rules 1-5: no effect at all */
    POR_SAFE_SENDS = 2,     /* rule 7 (and 8): only sends to exclusive
                               blocked processes (and plain spawns); sound
                               only while no step sends an exit signal to or
                               links another process (the run-time guard,
                               search.c) */
    POR_RENAMED = 4,        /* rules 4, 5, 7d, 8 and 9 up to a renaming
                               of pid numbers and ref counters: sound only
                               while no step observes them
                               (search_numbers_observed) */
    POR_EXIT = 8,           /* rule 9, an exit: sound only while no step
                               aims a link, monitor, exit signal or
                               liveness test at a process that is gone
                               (search_dead_target) */
    POR_DEMONITOR = 16,     /* rule 10: sound only while no process reads
                               its own monitors (search_monby_read) */
    POR_MONITOR = 32,       /* rule 11, a monitor: sound only while no
                               watched process dies while its watcher is
                               armed (search_transition_guards), and as
                               rule 10 */
    POR_NAMED = 64          /* rule 12, a step that looked up a taken name:
                               sound only while no name is freed
                               (search_transition_guards) */
};

/* Whether the step is safe (rules 1-5 and 7-12 of docs/ARCHITECTURE.md). */
enum por_verdict por_step_safe(const part_store *ps, const por_step *t);

#endif
