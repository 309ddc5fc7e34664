/*
** search.h: the explicit-state DFS, written as a resumable state machine.
**
** The search cannot run to completion in C: running a process means
** running Erlang code on the BEAM.  So the search stops whenever it needs
** Erlang (does message M match receive continuation C?  what does process P
** do from continuation C?) and resumes when the answer comes back.  Only
** deltas cross: the continuation and message in a request, the new
** continuation and effects in an answer; whole states never do.
**
** Transitions of a state, in pid order, one per process at most:
**   INIT process              -> run it from its initial call
**   WAITING, a message matches -> receive the first matching message
**   WAITING, none, finite after -> fire the timeout
** then one per ether channel (deliver its oldest signal; done in C, ether.c,
** without Erlang), then the faults the budgets still allow (crash a node,
** disconnect or reconnect two nodes, kill a process).  A state with live
** processes and no transition but faults is a deadlock.  With `reduction`
** a state whose safe process step (por.h) leads to a new state explores
** nothing after it.
*/
#ifndef MCE_SEARCH_H
#define MCE_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "sys_state.h"

typedef struct search search;

#define SEARCH_MAX_NODES 64

enum search_atom {
    ATOM_NORMAL = 0, ATOM_KILLED, ATOM_KILL, ATOM_EXIT, ATOM_DOWN, ATOM_PROCESS,
    ATOM_NOPROC, ATOM_NOCONNECTION, ATOM_NODEDOWN, ATOM_ETS_TRANSFER,
    /* net_kernel:monitor_nodes/1,2 messages (transition.c deliver_nodes_event) */
    ATOM_NODEUP, ATOM_NODEDOWN_REASON, ATOM_NODE_TYPE, ATOM_VISIBLE,
    ATOM_CONNECTION_CLOSED, ATOM_NET_TICK_TIMEOUT, N_ATOMS
};
#define SEARCH_ATOM_NAMES { "normal", "killed", "kill", "EXIT", "DOWN", "process", \
                            "noproc", "noconnection", "nodedown", "ETS-TRANSFER", \
                            "nodeup", "nodedown_reason", "node_type", "visible", \
                            "connection_closed", "net_tick_timeout" }

typedef struct search_config {
    const char *node;          /* the simulated node's name (UTF-8) when
                                  nnodes is 0 */
    size_t nodelen;
    /* Simulated nodes (0: just `node`): names, and each name's external
    ** format as a plain atom the way the VM encodes it (NULL: ATOM_EXT). */
    uint32_t nnodes;
    const char *node_names[SEARCH_MAX_NODES];
    size_t node_lens[SEARCH_MAX_NODES];
    const uint8_t *node_atom_etf[SEARCH_MAX_NODES];
    size_t node_atom_etf_len[SEARCH_MAX_NODES];
    int delivery_ether;        /* 1: signals inside a node also travel
                                  through the ether */
    int node_pair;             /* 1: signals between two nodes keep their
                                  send order across all the processes of
                                  the sending node (one channel per ordered
                                  pair of nodes, as BEAM's one connection);
                                  0: per ordered pair of processes */
    uint32_t max_crashes, max_disconnects, max_kills;   /* fault budgets */
    /* Their targets (faults => #{K => {N, Targets}}).  kill_targeted 1:
    ** a kill hits only processes marked PF_TARGET; 0: any process but the
    ** entry.  crash_nodes: bit i, node i may crash; disconnect_pairs[a]
    ** bit b (a < b): nodes a and b may be disconnected.  search_new with
    ** both 0 (the structure zeroed) means every node and every pair. */
    int kill_targeted;
    int nodes_targeted;
    uint64_t crash_nodes;
    uint64_t disconnect_pairs[64];
    uint32_t creation;         /* creation of simulated pids */
    uint64_t max_states;       /* 0: unlimited */
    uint64_t max_depth;        /* 0: unlimited */
    int check_deadlock;        /* 0: a stuck state just ends its path */
    int observe;               /* 1: every successor is judged by the
                                  safety monitors (REQ_OBSERVE) */
    int judge_deaths;          /* 1: a successor in which processes died
                                  of exit signals waits for the caller's
                                  verdict on their reasons (REQ_DEATHS) */
    int breadth_first;         /* 1: breadth-first order, so the first
                                  violation found is one nearest the
                                  initial state */
    uint32_t workers;          /* breadth-first: how many searches
                                  (search_join) will share this one's
                                  states and queue (search_pool.h); 0 and 1:
                                  it runs alone */
    uint32_t cluster_n;        /* breadth-first, one worker: a distributed
                                  search's participants (search_cluster.h);
                                  0 and 1: none */
    uint32_t cluster_me;       /* this search's index among them */
    int timers_bounded;        /* timeouts => {infinite_above, Ms}: a timer
                                  (send_after, start_timer) of at least Ms =
                                  timers_never_from (and more than 0) ms
                                  never fires, as an `after` that long
                                  never does (the executor reports it as
                                  `after infinity`).  0: every timer may */
    uint64_t timers_never_from;
    int timeouts_when_idle;    /* 1: an `after` fires only when no other
                                  transition is enabled */
    int expand_only;           /* 1 (2): no search order of its own: each
                                  expansion lists the successors of one
                                  state (REQ_EXPANDED) and the caller picks
                                  the next with search_expand.  The LTL
                                  product search (buchi.c) drives it.
                                  Ignores max_states, max_depth,
                                  check_deadlock, observe, breadth_first.
                                  1 ends an expansion at a successor that
                                  stops the search; 2 (sessions) lists
                                  every successor. */
    size_t table_slots;        /* initial index size, 0: default */
    int table_mode;            /* visited set, an enum visited_mode:
                                  VISITED_EXACT (the part store),
                                  VISITED_HASH_COMPACT or VISITED_BITSTATE
                                  (visited.h; root vectors then live only in
                                  stack frames, so neither breadth_first nor
                                  expand_only, which name states by part id,
                                  is allowed: search_new refuses them) */
    uint64_t bitstate_bits;    /* VISITED_BITSTATE: the bit array's size */
    int step_cache;            /* 1: steps met again are applied from the
                                  step cache (step_cache.h) without Erlang */
    size_t step_cache_entries; /* its bounds, 0: the defaults */
    size_t step_cache_bytes;
    int dead_payload;          /* 1: the message a waiting process takes
                                  next is stored with its dead parts
                                  replaced (dead_payload.h) */
    int reduction;             /* 1: partial-order reduction (por.h): a
                                  state whose process step is safe and
                                  leads to a new state is not expanded
                                  further.  Ignored (off) with observe
                                  and expand_only.  2: also the steps
                                  safe up to a renaming of pid numbers
                                  and ref counters (POR_RENAMED); one
                                  worker, one node and no untargeted
                                  kill, else taken as 1. */
    int pass_cut;              /* 1, with the reduction depth-first: a
                                  state whose frame is cut is not kept
                                  as visited nor counted (search.c) */
    int monitor_rule;          /* rule 11 of por.h on (1) or off (0) */
    int name_rule;             /* rule 12 of por.h on (1) or off (0) */
    int small_steps;           /* 1: granularity small, where a start runs
                                  only to its first effect, so the
                                  reduction tries untried starts early
                                  (search_safe_first); an order only */
    int symmetry;              /* 1: each successor is replaced by the
                                  representative of its orbit under pid
                                  permutation (symmetry.h), and the search
                                  is void once the program observes pid
                                  order (search_pid_order) or iterates a
                                  map with pids in its keys
                                  (search_key_order); 3: as 1, but the
                                  processes named in map keys keep their
                                  numbers (no key order guard); 2: as 1,
                                  the user asserting that it never does
                                  (no guard); ignored by expand_only and
                                  observe searches */
    /* External format (with the 131 version byte) of the atoms normal,
    ** killed, kill and 'EXIT' as the VM encodes them, so that exit reasons
    ** and the 'EXIT' messages built here intern like the VM's own terms.
    ** NULL: a latin-1 ATOM_EXT encoding is assumed. */
    const uint8_t *atom_etf[N_ATOMS];
    size_t atom_etf_len[N_ATOMS];
} search_config;

/* An encoded Erlang term on its way into the store. */
typedef struct term_in {
    uint8_t *etf;              /* external format; scanned and canonicalised in place */
    size_t len;
    part_id id;                /* 0, or the part the bytes were interned as
                                  (transition_intern_term sets it and then
                                  uses it: a step cache's stored outcome
                                  skips interning again) */
} term_in;

enum effect_kind {
    EFFECT_SEND = 1,        /* pid: receiver, term: message */
    EFFECT_SPAWN,           /* pid: child, term: initial call, flag: link */
    EFFECT_LINK,            /* pid */
    EFFECT_UNLINK,          /* pid */
    EFFECT_EXIT,            /* pid: target of exit/2, term: reason */
    EFFECT_REGISTER,        /* pid, term: name */
    EFFECT_UNREGISTER,      /* term: name */
    EFFECT_TRAP_EXIT,       /* flag: new value for the running process */
    EFFECT_MONITOR,         /* pid: target (a KEY_BY_NAME key: term2 is the
                               name), ref, term: item named by 'DOWN' */
    EFFECT_DEMONITOR,       /* ref, flag: flush 'DOWN' messages */
    EFFECT_SEND_NAME,       /* pid: KEY_BY_NAME key of the node, term2: the
                               name, term: message ({Name, Node} ! Msg) */
    EFFECT_MONITOR_NODE,    /* pid: node index, flag: on or off */
    EFFECT_ALIAS,           /* ref, flag: its ALIAS_* mode */
    EFFECT_UNALIAS,         /* ref */
    EFFECT_SEND_ALIAS,      /* ref: the alias, term: message */
    EFFECT_TIMER,           /* ref, pid: destination (a KEY_BY_NAME key:
                               term2 is the name), term: the message,
                               flag: the time */
    EFFECT_CANCEL_TIMER,    /* ref */
    EFFECT_UNIQUE,          /* ref: the unique integer handed out */
    EFFECT_ETS_PUT,         /* ref: table, pid: owner, flag: heir (0: none),
                               term: data, term2: name (named tables),
                               term3: heir data */
    EFFECT_ETS_DELETE,      /* ref: table */
    EFFECT_APP_ENV,         /* term: all application environments */
    EFFECT_KEEP_MESSAGE,    /* the message received stays in the mailbox
                               (erlang:hibernate/3 wakes on it) */
    EFFECT_HALT,            /* the running process's node stops, as if
                               crashed (erlang:halt/0,1,2) */
    EFFECT_GROUP_LEADER     /* pid: the process, ref: its new group leader
                               as stored (see sys_state.h, 0: default) */
};

typedef struct effect {
    enum effect_kind kind;
    uint32_t pid;
    uint32_t ref;
    int link;                  /* spawn: spawn_link; trap_exit: the value;
                                  demonitor: flush; monitor: made with the
                                  spawn (spawn_monitor), one signal with it */
    term_in term;              /* etf NULL when the effect has no term */
    term_in term2;
    term_in term3;
} effect;

enum outcome_kind { OUTCOME_WAIT = 1, OUTCOME_EXIT = 2, OUTCOME_CHOICE = 3 };

typedef struct run_result {
    enum outcome_kind outcome;
    int has_timeout;           /* WAIT: the receive has a finite after
                                  (2: after 0) */
    uint32_t timeout_ms;       /* WAIT: that after's time (0: not known) */
    int idle;                  /* WAIT: in an idle loop (PF_IDLE) */
    int target;                /* WAIT or CHOICE: a kill target (PF_TARGET) */
    uint32_t alternatives;     /* CHOICE: how many (1..65535) */
    term_in cont;              /* WAIT: continuation */
    int normal;                /* EXIT: reason is `normal` */
    term_in reason;            /* EXIT: the reason (etf NULL: normal, or
                                  the atom killed when !normal) */
    term_in dict;              /* WAIT: process dictionary (etf NULL: []) */
    effect *effects;
    size_t neffects;
    uint8_t *label;            /* malloc'd ETF, ownership passes to search */
    size_t label_len;
    int stop;                  /* keep this successor on the stack and stop */
    const uint8_t *payload;    /* WAIT: the receive's dead-payload descriptor
                                  (dead_payload.h), NULL: none; borrowed
                                  for the call */
    size_t payload_len;
} run_result;

enum request_kind {
    REQ_MATCH = 1,      /* does msg match cont? */
    REQ_RUN,            /* run pid: see run_kind */
    REQ_DONE,           /* exhausted (possibly truncated by max_depth) */
    REQ_LIMIT_STATES,   /* stopped at max_states */
    REQ_DEADLOCK,       /* top of stack is a deadlock */
    REQ_STOPPED,        /* stopped on the caller's request */
    REQ_OBSERVE,        /* safety monitors: judge the successor that
                           search_top_state shows (observer: the monitors'
                           state before it; search_observed_label: the
                           step into it) */
    REQ_EXPANDED,       /* expand_only: the state search_expanding names
                           is expanded; search_expansion lists them */
    REQ_DEATHS,         /* judge_deaths: processes died of exit signals in
                           the step into a successor (search_deaths lists
                           them); is one of them a violation? */
    REQ_YIELD,          /* SEARCH_WORK_BUDGET units of work (deliveries,
                           faults, backtracking) done in C within one call,
                           or SEARCH_BYTES_BUDGET more bytes stored: the
                           caller may check its limits, then
                           search_resume */
    REQ_REDUCTION_VOID, /* reduction: a step read another process's record
                           (process_info), which can tell a safe step
                           taken from one not taken, or, once a sending
                           safe step was taken, a step sent an exit signal,
                           linked or listed the processes (request.why):
                           the reduced search proves nothing; check again
                           without it */
    REQ_IDLE,           /* workers: nothing to expand now, but others
                           are expanding; ask again (search_resume)
                           after a pause */
    REQ_ABANDONED,      /* workers: another worker ended the search (a
                           violation, a limit) or it was stopped
                           (search_stop_workers) */
    REQ_ERROR           /* out of memory or a malformed answer */
};

/* Why a reduced search is void (REQ_REDUCTION_VOID). */
enum por_void_why {
    POR_VOID_READS = 1,     /* process_info of another process */
    POR_VOID_EXIT,          /* exit/2 to another process, after a send was
                               taken as safe */
    POR_VOID_LINK,          /* link/1 to another process, likewise */
    POR_VOID_PROCESSES,     /* processes/0, likewise */
    SYM_VOID_PID_ORDER,     /* symmetry: a step observed the order of
                               pids (search_pid_order) */
    SYM_VOID_KEY_ORDER,     /* symmetry renaming pids in map keys: a step
                               iterated such a map (search_key_order) */
    POR_VOID_NUMBERS,       /* a step observed pid numbers or the order
                               of refs, after a frame was cut by a step
                               safe only up to a renaming of them (por.h) */
    POR_VOID_DEAD_TARGET,   /* a step aimed at a process that is gone,
                               after a frame was cut by an exit (por.h,
                               rule 9) */
    POR_VOID_MONITOR_RACE,  /* a monitored process died while its watcher
                               was armed (PF_MON_ARMED), or a process read
                               its own monitors, after a frame was cut by a
                               monitor (rule 11; the read: or a demonitor,
                               rule 10) */
    POR_VOID_NAME_FREED,    /* a registered name was freed while a process
                               that had found one lived (or after such a
                               process's end was cut), after a frame was cut
                               by a step that looked a name up (rule 12) */
    SYM_VOID_FEW_RENAMED    /* symmetry => auto: too few successors were
                               renamed to pay for canonicalising them
                               (search_sym_judge): the check runs again
                               without symmetry */
};

enum run_kind { RUN_START = 1, RUN_RECEIVE, RUN_TIMEOUT, RUN_CHOICE };

typedef struct request {
    enum request_kind kind;
    enum run_kind run;
    uint32_t pid;
    part_id cont, msg;
    part_id dict;              /* RUN: the process dictionary, 0: [] */
    uint32_t choice;           /* RUN_CHOICE: the alternative, from 0 */
    uint32_t flags;            /* RUN: the process's flags */
    part_id observer;          /* OBSERVE: the monitors' state, 0: initial */
    int why;                   /* REDUCTION_VOID: a POR_VOID_* */
    const char *error;
} request;

search *search_new(const search_config *cfg);
void search_free(search *s);

/* Starts from one INIT process running `init` (ownership of nothing). */
int search_start(search *s, term_in *init, uint32_t pid, request *req);

/* Parallel breadth-first search (cfg.workers > 1).  A new search of the
** same configuration that shares `first`'s store, visited set and queue
** (search_pool.h); NULL when out of memory or when `first` is not a
** breadth-first search made for workers.  Each search is driven by one
** thread at a time; different searches of one pool run at once. */
search *search_join(search *first);
/* A joined search's first request: it takes states from the queue that
** `first`'s search_start filled (REQ_IDLE until there are some).  pid:
** the entry process's pid, as given to search_start. */
int search_start_worker(search *s, uint32_t pid, request *req);
/* Ends the search of every worker sharing s's pool: their next request is
** REQ_ABANDONED.  Also done by a worker whose search ends with anything
** but REQ_DONE (search_settled). */
void search_stop_workers(search *s);
/* To be called with every request a search call returns: a final one
** other than REQ_DONE stops the other workers. */
void search_settled(search *s, const request *req);
/* Work done in C (a delivery, a fault, a backtrack) between two requests
** before the search yields (REQ_YIELD): a few hundred microseconds, so a
** NIF call stays near the 1 ms a normal scheduler allows and the caller's
** time, memory and stop checks run often.  Not in expand_only mode, whose
** calls expand one state. */
#define SEARCH_WORK_BUDGET 64
/* ... and whenever the store grew by this many bytes since the last
** yield, so a `memory` cap holds however the growth comes (long mailboxes
** answered one match question at a time). */
#define SEARCH_BYTES_BUDGET ((size_t)1 << 20)
/* Answers a REQ_YIELD and returns the next request. */
int search_resume(search *s, request *req);
/* Answers a REQ_MATCH (0 no, 1 yes, MATCH_MAYBE: the abstract mode's "may
** match", a transition that receives it while the scan goes on past it)
** and returns the next request. */
#define MATCH_MAYBE 2
int search_answer_match(search *s, int matches, request *req);
/* Answers a REQ_RUN.  Frees everything in `res` that it does not keep. */
int search_answer_run(search *s, run_result *res, request *req);
/* Answers a REQ_OBSERVE: OK with the monitors' new state (scanned and
** interned; ownership stays with the caller), SKIP to prune the successor,
** VIOLATION to stop the search at it. */
enum observe_verdict { OBSERVE_OK = 0, OBSERVE_SKIP, OBSERVE_VIOLATION };
int search_answer_observe(search *s, int verdict, term_in *observer, request *req);
/* A process that died of an exit signal in the step being built (not the
** process that ran and ended by itself, nor the direct victim of a kill
** fault or of a node crash: the user asked for those). */
typedef struct death {
    uint32_t pid;
    part_id reason;
} death;
/* During a REQ_DEATHS: the deaths in the order they happened. */
size_t search_deaths(const search *s, const death **out);
/* Answers a REQ_DEATHS: violation (non-zero) stops the search at the
** successor; otherwise it goes on to the monitors or is committed. */
int search_answer_deaths(search *s, int violation, request *req);
/* The label of the step into the successor being observed (NULL: none). */
const uint8_t *search_observed_label(const search *s, size_t *len);

/* expand_only.  Who moves in a transition, for weak fairness: a process,
** an ether channel (its oldest signal is delivered), or nobody (a fault). */
enum agent_kind { AGENT_NONE = 0, AGENT_PROC, AGENT_CHAN };
typedef struct agent {
    enum agent_kind kind;
    uint32_t a;                /* PROC: pid; CHAN: from key */
    uint32_t b;                /* CHAN: to key */
    part_id name;              /* CHAN: the name of a by-name channel */
} agent;

/* One successor of an expanded state: the state (a PART_STATE id, the
** same id for the same state), who moved, the label of the step, and
** whether the step was a violation the caller asked to stop at (then it
** is the last of the list).  With the reduction on, `safe` is
** por_step_safe's verdict on the step (an enum por_verdict of por.h: 0
** unsafe, never for deliveries, faults and stops); without, 0. */
typedef struct expansion {
    part_id state;
    agent who;
    uint8_t *label;            /* ETF, owned by the search */
    size_t label_len;
    int stop;
    int safe;
} expansion;

/* expand_only, between expansions (after REQ_EXPANDED): expands `state`
** (an id an expansion returned).  The previous expansion is freed. */
int search_expand(search *s, part_id state, request *req);
/* The state expanded last, its successors (valid until the next
** search_expand) and whether it is a deadlock: live processes and no
** transition but faults. */
part_id search_expanding(const search *s);
size_t search_expansion(const search *s, const expansion **out, int *deadlock);
/* expand_only, between expansions: makes `state` the one that
** search_top_state and the peeks show, without expanding it.  0, or -1
** when the id is not a state or an expansion is under way. */
int search_focus(search *s, part_id state);

/* Smallest pid key of `node` not used by the state being expanded nor
** allocated during the current run; records it as allocated.  0 on
** allocation failure. */
uint32_t search_fresh_pid(search *s, uint32_t node);
/* The same for refs (make_ref, monitor). */
uint32_t search_fresh_ref(search *s, uint32_t node);

typedef struct search_stats {
    uint64_t states, transitions, max_depth_seen, depth;
    uint64_t parts, bytes, used_bytes, memo_entries;
    int truncated;             /* some state was not expanded (max_depth) */
    int table_mode;            /* the config's */
    uint64_t table_bytes;      /* the visited set: the lossy table, or with
                                  the exact table the store's used bytes
                                  (the store is the visited set) */
    double omission_probability;   /* lossy tables: some state was wrongly
                                      taken as visited (an estimate) */
    double lost_estimate;          /* lossy tables: expected new states
                                      wrongly taken as visited */
    double coverage_estimate;      /* lossy tables: stored / (stored + lost) */
    int step_cache;                /* the cache is on */
    uint64_t step_cache_hits;      /* steps applied from the cache */
    uint64_t step_cache_misses;    /* steps asked of Erlang with the cache on */
    uint64_t step_cache_entries, step_cache_bytes;   /* bytes: counted in
                                                        bytes and used_bytes */
    int reduction;                 /* partial-order reduction is on */
    uint64_t reduced_states;       /* states expanded with a reduced set */
    uint64_t renamed_states;       /* ... of them, by a step safe only up
                                      to a renaming of pids and refs */
    uint64_t passed_states;        /* ... of them, passed through and not
                                      kept (pass_cut): not in `states` */
    uint64_t dead_payloads;        /* messages stored with dead parts replaced */
    int symmetry;                  /* symmetry reduction is on */
    uint64_t symmetric_states;     /* successors renamed to a representative
                                      other than themselves */
    uint64_t symmetry_groups;      /* the most live processes of one node
                                      sharing one signature in a state */
    int pid_order;                 /* the symmetric search is void:
                                      1 search_pid_order, 2 search_key_order */
    uint64_t symmetry_stopped;     /* symmetry => auto gave up canonicalising
                                      at this many states (search.c:
                                      sym_judge); 0: it did not */
    uint64_t pool_states;          /* workers: the states all of them
                                      found so far (states: this one's) */
    uint64_t shared_bytes;         /* of bytes: what the workers of one pool
                                      share (the store and the nodes), 0
                                      when alone; each worker's bytes count
                                      it, so a sum counts it once */
} search_stats;
void search_get_stats(const search *s, search_stats *st);

/* The running code compared, sorted, hashed or printed terms holding pids
** (src/mce_rt_order.erl): a renaming of pids is no automorphism of this
** program, so a symmetric search is void (REQ_REDUCTION_VOID with
** SYM_VOID_PID_ORDER at the next request).  Nothing without symmetry. */
void search_pid_order(search *s);

/* The running code observed pid numbers or ref counters (any report of
** mce_rt_order): a search whose reduction took steps safe only up to a
** renaming of them (por.h) is void (POR_VOID_NUMBERS). */
void search_numbers_observed(search *s);

/* The running code iterated a map with two pids or refs among its keys
** (mce_rt_order:map_keys/1): a symmetric search that renames pids in map
** keys (symmetry 1) is void (SYM_VOID_KEY_ORDER; the check runs again with
** symmetry 3, which pins them).  Nothing otherwise. */
void search_key_order(search *s);

/* The running process asked who monitors it (process_info(self(),
** monitored_by)): a search that took a monitor or demonitor as safe (por.h,
** rules 10 and 11) is void (POR_VOID_MONITOR_RACE). */
void search_monby_read(search *s);

const part_store *search_store(const search *s);
/* The state on top of the stack (decoded), or NULL. */
const sys_state *search_top_state(search *s);
/* Queries about the state being expanded (before the current run's
** effects), for BIFs that read it: is_process_alive, whereis,
** registered.  While a run is outstanding each is logged for the step
** cache; those whose answers it cannot compare keep the step out of it. */
int search_peek_alive(search *s, uint32_t pid);
/* 1 and *pid when a process on `node` is registered under the name whose
** external format is etf[0..len), else 0. */
int search_peek_whereis(search *s, uint32_t node, const uint8_t *etf,
                        size_t len, uint32_t *pid);
/* 0: node b is up and connected to node a; 1: b is down; 2: they are
** disconnected. */
int search_peek_node(search *s, uint32_t a, uint32_t b);
/* 1 if process pid holds the monitor numbered ref. */
int search_peek_monitor(search *s, uint32_t pid, uint32_t ref);
/* 1 if process pid has the alias ref active. */
int search_peek_alias(search *s, uint32_t pid, uint32_t ref);
/* The time of pending timer ref, or -1 when there is none. */
int64_t search_peek_timer(search *s, uint32_t ref);
/* Whether process pid is alive, and its group leader as stored. */
int search_peek_group_leader(search *s, uint32_t pid, uint32_t *gl);
/* The record of process pid in the state being expanded (NULL if dead),
** and in *skip the index of the message the running step is receiving
** (UINT32_MAX: none), which is no longer in that process's mailbox. */
const proc *search_peek_proc(search *s, uint32_t pid, uint32_t *skip);
/* ETS: table tid in the state being expanded (NULL: none); the table
** named `name` (atom external format) on `node` (0: none); all tables of
** `node` (fills up to max, returns the count). */
const ets_table *search_peek_table(search *s, uint32_t tid);
uint32_t search_peek_table_named(search *s, uint32_t node, const uint8_t *etf,
                                 size_t len);
size_t search_peek_tables(search *s, uint32_t node, uint32_t *out, size_t max);
/* The application environments term (0: still the options'). */
part_id search_peek_app_env(search *s);
/* The last unique integer handed out. */
uint32_t search_peek_unique(search *s);
/* The names registered on `node` (PART_TERM ids): fills up to max,
** returns the count. */
size_t search_peek_names(search *s, uint32_t node, part_id *out, size_t max);
/* The pids of the processes of `node`, in pid order: fills up to max,
** returns the count. */
size_t search_peek_pids(search *s, uint32_t node, uint32_t *out, size_t max);

/* Stack depth (states on the stack) and the label of the transition that
** led to stack entry i (1 <= i < depth), valid until the next call. */
size_t search_stack_depth(const search *s);
int search_label(const search *s, size_t i, const uint8_t **label,
                 size_t *len);
/* The renaming of pid keys (pairs from, to) symmetry reduction applied to
** the state of stack entry i to make it its representative (0 pairs: none);
** its label names the pids of entry i - 1's state.  -1: no entry i. */
int search_renaming(const search *s, size_t i, const uint32_t **pairs,
                    uint32_t *npairs);

#endif
