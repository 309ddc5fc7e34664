/*
** search_internal.h: the search's own record, shared by search.c (the
** search order and the request protocol), peek.c (the running step's
** read-only questions about the state being expanded), search_info.c
** (what the NIF reads of the search between requests) and search_cluster.c
** (a distributed search's share).  Nothing else includes it: the NIF sees only search.h.
**
** Invariant: `cur` is the decoded state of the stack's top frame whenever
** cur_id (exact table) or cur_serial (lossy tables) names that frame;
** search_decode_top restores it after the stack moved.  The transition
** context `tx` borrows the store `ps`, which the search owns.
*/
#ifndef MCE_SEARCH_INTERNAL_H
#define MCE_SEARCH_INTERNAL_H

#include "dead_payload.h"
#include "match_memo.h"
#include "por_hint.h"
#include "search_pool.h"
#include "search.h"
#include "stack_set.h"
#include "step_cache.h"
#include "symmetry.h"
#include "sys_state.h"
#include "transition.h"
#include "visited.h"

typedef struct frame {
    part_id state;
    uint32_t next_proc;   /* index of the next process to consider */
    uint32_t msg_idx;     /* next message to test for that process */
    uint32_t enabled;     /* transitions taken from this state */
    uint32_t maybe_enabled; /* of those, receives of a message that only
                             may match (abstract mode): if they are all,
                             the state may be a deadlock */
    int expand;           /* 0: beyond max_depth, not expanded */
    uint32_t fault_idx;   /* next fault to inject */
    uint8_t phase;        /* when_idle: 0 other transitions, 1 timeouts */
    uint8_t saw_timeout;  /* phase 0 passed over a timeout */
    uint8_t rotated;      /* reduction: `first` is chosen */
    uint32_t first;       /* reduction: the round of the processes starts at
                             this index (search.c: safe_first) */
    uint8_t reduced;      /* reduction: a safe step led to a new state, so
                             the rest of this state's transitions are not
                             explored (por.h) */
    uint32_t idle_min;    /* when_idle: 1 + the least time left of a receive
                             timeout phase 0 passed over (0: none); only
                             those fire, time passing in order */
    uint8_t *label;       /* ETF of the transition into this state */
    size_t label_len;
    /* Lossy tables (state is 0): the state's root vector, malloc'd, and a
    ** number naming this push, so search_decode_top knows what `cur` holds. */
    uint8_t *root;
    uint32_t root_len;
    uint64_t serial;
    /* Symmetry: the renaming that made this state its representative
    ** (malloc'd, sorted by from; NULL: none). */
    sym_pair *perm;
    uint32_t nperm;
} frame;

struct search {
    search_config cfg;
    char *names;          /* the node names, back to back */
    part_store *ps;
    /* What the transitions read (the store, the nodes, the atoms, the
    ** config they need) and record (the pids and refs made during the
    ** run, the deaths by exit signal): tx.ps is ps. */
    trans_ctx tx;
    frame *stack;
    size_t depth, cap;
    sys_state cur;        /* decoded stack top */
    sys_state spare;      /* buffers of the last successor, reused */
    part_id cur_id;
    /* Lossy visited tables (NULL: exact, the store's interning is the
    ** visited test): the table, the last push serial, the serial of the
    ** frame `cur` decodes (0: none), the root bytes held by frames. */
    visited *vis;
    uint64_t serial, cur_serial;
    size_t root_bytes;
    match_memo memo;      /* answers to match questions */
    payload_table payloads;   /* dead-payload descriptors by continuation */
    /* the outstanding request */
    enum request_kind pending;
    enum run_kind run;
    uint32_t run_pid;
    uint32_t run_elapsed; /* when_idle: the time a timeout step lets pass */
    part_id run_cont, run_msg;
    uint32_t run_msg_index;
    /* the rest of the outstanding run's key (step_cache.h) */
    uint32_t run_choice, run_flags;
    part_id run_dict;
    /* The step cache (NULL: off) and the reads of the running step, logged
    ** by the peeks and fresh numbers while a REQ_RUN is outstanding. */
    step_cache *cache;
    step_log log;
    /* Reduction: the running step asked the state anything (set by every
    ** peek and fresh number while a REQ_RUN is outstanding, cache or
    ** not), and whether a step read another process's record, which
    ** voids the reduced search (REQ_REDUCTION_VOID). */
    int run_reads;
    /* ... and took a fresh pid or ref, kept apart from run_reads: up to a
    ** renaming of numbers neither is a read (por.h). */
    int run_fresh_pid;
    int run_fresh_ref;
    /* ... and looked up names registered to live processes (whereis), kept
    ** apart from run_reads: rule 12 takes such a step as safe, guarded. */
    int run_name_reads;
    uint32_t run_named_pid;     /* the pid the step's last lookup found */
    int por_void;         /* 0, or the POR_VOID_* reason (search.h) */
    /* The halves of the reductions' guards met so far (enum guard_half in
    ** search_reduce.c: a frame cut by a sending step or one safe up to the
    ** renaming, or a step that could tell that cut apart); with workers,
    ** also published in the pool, whose other workers' halves count too. */
    uint32_t guard_halves;
    /* Sending safe steps (por.h, rule 7) hold only while no step sends an
    ** exit signal to another process, links to one or lists the
    ** processes: por_sent, a frame was reduced by one; por_hazard, the
    ** first such step met (POR_VOID_*).  Both: the search is void. */
    int por_sent;
    int por_hazard;
    /* The cycle proviso (docs/ARCHITECTURE.md, "Partial-order reduction"):
    ** depth-first, the states on the stack (`stack_proviso`, keyed by
    ** stack_key; breadth-first a cut needs a new state), and the key of
    ** the state the last committed successor was, new or not (0: none). */
    int stack_proviso;
    stack_set on_stack;
    /* Depth-first with the reduction (`pass_cut`): the states whose frame
    ** was cut, which are not kept as visited: a later visit goes through
    ** them again (docs/ARCHITECTURE.md, "Cut states are passed, not
    ** stored").  Keyed as on_stack. */
    int pass_cut;
    stack_set passed;
    stack_set branched;   /* how often each state was passed after taking
                             other transitions first (search_pass_cut) */
    por_hint hint;        /* reduction: which requests were safe */
    uint64_t last_successor;
    /* Symmetry reduction (NULL: off) and the renaming of the last
    ** successor canonicalised, which the frame or node pushed for it
    ** takes (else the next successor frees it). */
    symmetry *sym;
    sym_pair *sym_perm;
    uint32_t sym_nperm;
    /* A step observed the order of pids (search_pid_order, 1) or of a
    ** map's pid keys (search_key_order, 2): the symmetric search proves
    ** nothing (REQ_REDUCTION_VOID, SYM_VOID_PID_ORDER or _KEY_ORDER); or
    ** symmetry => auto found it does not pay (search_sym_judge, 3:
    ** SYM_VOID_FEW_RENAMED). */
    int sym_void;
    int sym_judged;       /* how many times search_sym_judge judged */
    search_stats st;
    int finished;
    /* A successor waiting for the safety monitors' verdict (REQ_OBSERVE):
    ** the state (its observer still the parent's), the label and whether
    ** the search stops at it. */
    int obs_pending;
    sys_state obs_st;
    uint8_t *obs_label;
    size_t obs_label_len;
    int obs_stop;
    /* Whether the successor parked with deaths by exit signal in the step
    ** into it (tx.deaths) waits for their verdict (REQ_DEATHS). */
    int deaths_pending;
    /* Breadth-first order (shortest counterexamples) only: the pool of
    ** discovered states (search_pool.h), which it may share with other
    ** workers (cfg.workers > 1; then ps is the pool's store).  Every
    ** discovered state is a node that remembers its parent and the label
    ** of the step into it; the stack holds one frame, the node being
    ** expanded (`expanding`, taken while pool_busy), or none between two.
    ** When the search stops on a violation the path to it is rebuilt as
    ** the stack, so the trace and the final state read the same way in
    ** both orders. */
    search_pool *pool;
    pool_cursor pool_cursor;    /* this worker's node indices (search_pool.h) */
    int pool_busy, pool_hungry;
    uint32_t expanding, expanding_depth;
    /* workers with the reduction: cut states are passed through as
    ** depth-first (search_pool_mark_passed); `states' then counts the
    ** states this worker claimed, and the check's count is the workers'
    ** claims less their passes (mce_workers). */
    int pool_pass;
    /* workers: the nodes this worker discovered and keeps to expand
    ** itself, newest last (search_pool.h) */
    struct kept_node { uint32_t node, depth; part_id state; } *kept;
    size_t nkept, capkept;
    /* expand_only: the successors of the state being expanded, and who
    ** moves in the transition being built */
    expansion *exp;
    size_t nexp, capexp;
    int exp_deadlock;
    /* expand_only with the reduction: the verdict (por.h) on the run
    ** whose successor is recorded next; reset once recorded. */
    int exp_safe;
    agent mover;
    /* Distributed search (cfg.cluster_n > 1, search_cluster.c): the
    ** outbox, the imports' remote parents; made at the first use.  And
    ** the pool node bfs_path_to_stack last put on the stack. */
    struct search_cluster *cl;
    uint32_t path_node;
    uint32_t work;        /* units done in C since the last request */
    uint32_t bytes_tick;  /* workers: units since the store's bytes were
                             last read */
    size_t used_at_yield; /* the store's used bytes at the last yield */
};

/* Decodes the top frame's state into s->cur unless it holds it already;
** 0, or -1 when out of memory. */
int search_decode_top(search *s);

/* The key of the outstanding run in the step cache (and the reduction's
** hints). */
static inline step_key search_run_key(const search *s)
{
    return (step_key){ .pid = s->run_pid, .run = s->run, .choice = s->run_choice,
                       .flags = s->run_flags, .cont = s->run_cont,
                       .msg = s->run == RUN_RECEIVE ? s->run_msg : 0,
                       .dict = s->run_dict };
}

/* search.c: hands a successor of the state being expanded on (taking st
** and the label): with safety monitors it waits for their verdict (*req
** becomes REQ_OBSERVE), else it is committed.  0: go on; 1: *req is final
** or a request; -1: failure. */
int search_successor(search *s, sys_state *st, uint8_t *label, size_t label_len,
                     int stop, request *req);

/* search.c: the frame fi was cut (its state is passed, not kept, with
** pass_cut). */
void search_pass_cut(search *s, size_t fi);

/* search_reduce.c: the reduction's decisions (its file header says which). */
uint32_t search_safe_first(const search *s);
int search_canonical(search *s, sys_state *st, int stop);
void search_sym_judge(search *s, int is_new);
int search_reduced_successor(search *s, const run_result *res, sys_state *st,
                             uint8_t *label, size_t label_len, request *req);
int search_expand_flagged(search *s, const run_result *res, sys_state *st,
                          uint8_t *label, size_t label_len, request *req);
/* The guard of sending safe steps: a step met a hazard (POR_VOID_*). */
void search_por_hazard(search *s, int why);
void search_dead_target(search *s);
/* The guards of rules 11 and 12 after a transition was applied: a process
** died watched by an armed process (PF_MON_ARMED) or an armed one
** demonitored without flush, or a registered name was freed (s->tx's
** record); void after a monitor or a name lookup taken as safe. */
void search_transition_guards(search *s);

/* peek.c: asks read r (names: the bytes its name points into) again
** against the state being expanded, without logging it; 0 and the answer
** in ans, or -1 when it cannot be answered (a miss). */
int search_reask(search *s, const step_read *r, const uint8_t *names,
                 uint32_t ans[STEP_READ_WORDS]);
/* search.c: a fresh number for the running step without logging it. */
uint32_t search_fresh_number(search *s, uint32_t node, int refs);

#endif
