/*
** sys_state.h: the decoded (working) form of one system state.
**
** The visited set keeps states as interned part vectors; the search decodes
** the state it is expanding into this struct, edits a copy to build a
** successor, and interns the copy back.  Processes are kept sorted by pid,
** links sorted within each process: that is the canonical order, so equal
** states intern to the same root id.
**
** Process record layout (PART_PROC, 32-bit words):
**   pid, status, cont, mailbox, flags, dict, name, nlinks, links[nlinks],
**   nmons, mons[nmons] (3 words each), nmonby, monby[nmonby] (3 words each),
**   naliases, aliases[naliases] (3 words each: ref, ALIAS_* mode, 0)
**   [gl]: only when the process's group leader is not the default
** gl is the group leader's pid key xor'ed with the default's (the first
** node's `user'), so the default is 0 and stored as no word at all: states
** of programs that never call group_leader/2 encode as before.
** mons are the monitors this process holds, monby those held on it, each
** (ref number, the other process, item) sorted by ref; item is the PART_TERM
** the 'DOWN' message names (a registered name's {Name, Node}), 0: the pid.
** dict is the PART_TERM of the process dictionary (0: empty); name is the
** PART_TERM of its registered name (0: none).  The registry is the set of
** names held by live processes, so a process's death unregisters it.
**
** Pids are keys: (node index << 24) | number (see etf_scan.h).  The key
** with number KEY_BY_NAME stands for "the process registered under a name
** on that node", the target of {Name, Node} sends and monitors.
**
** The world (PART_WORLD, 0 when everything in it is empty or zero):
**   down_lo, down_hi, crashes, disconnects, kills, uniq, app_env, observer,
**   ndisc, disc[ndisc], nnodemons, nodemons[nnodemons] (3 words each),
**   nchans, chans[nchans] (4 words each), ntables, tables[ntables] (6 words:
**   tid, owner, heir, heir_data, name, data)
** down is the set of crashed nodes; crashes, disconnects and kills count
** the faults injected so far; disc the disconnected node pairs (a << 8 | b,
** a < b, sorted); uniq the last erlang:unique_integer handed out;
** nodemons the node monitors (pid, node, count) sorted; an entry whose
** node has NODEMON_ALL set is `count` subscriptions of
** net_kernel:monitor_nodes/1,2 with the options in its low bits (they
** outlive nodedowns and get nodeup on reconnection);
** chans the ether: one FIFO queue (a vector of PART_SIGNAL ids) per
** ordered pair of processes (from, to, name) with signals in transit,
** sorted, never empty.  A pending timer (erlang:send_after, start_timer)
** is a channel whose `from` is its ref key or'ed with KEY_TIMER: its one
** SIG_MSG (b: the time in ms) is delivered when it fires.
*/
#ifndef MCE_SYS_STATE_H
#define MCE_SYS_STATE_H

#include <string.h>

#include "part_store.h"

enum proc_status {
    PROC_INIT = 0,      /* spawned, not yet run: cont is the initial call */
    PROC_WAITING = 1,   /* suspended in receive: cont is the continuation */
    PROC_CHOICE = 2     /* suspended in mcerlang:choice/1: one transition per
                           alternative, their count in flags >> PF_CHOICE_SHIFT */
};

#define PF_CHOICE_SHIFT 8
/* A waiting process's bits from here on, with timeouts_when_idle: the time
** left of its receive timeout, in ms (capped), which idle steps reduce. */
#define PF_TIMEOUT_SHIFT 8
#define PF_TIMEOUT_MAX 0xffffffu

enum proc_flag {
    PF_TIMEOUT = 1,     /* the receive has a finite `after` */
    PF_TRAP_EXIT = 2,   /* process_flag(trap_exit, true) */
    PF_TIMEOUT_ZERO = 4, /* ... and it is `after 0`: it fires as soon as no
                           message matches, even under timeouts_when_idle */
    PF_POLL = 8,        /* ... of a receive without clauses (erlang:yield()):
                           no message matches, so nothing disables it (a
                           function of the continuation: it splits no state) */
    PF_IDLE = 16,       /* ... in an idle loop (the option `idle`: an OTP
                           behaviour's main loop, or a process the user
                           names): blocked there is not a deadlock.  Set by
                           the executor from the continuation (and the
                           process's name), so it splits no state */
    PF_TARGET = 32,     /* a `kill` fault may hit this process (faults =>
                           #{kill => {N, Targets}}): set by the executor
                           when a step ends and the process matches a
                           target, then kept for the process's life */
    PF_MON_ARMED = 64,  /* the process monitored a live process and has
                           sent nothing to it since (transition.c): a death
                           of the watched process now may have come before
                           the monitor, which is the run-time guard of
                           monitors taken as safe (por.h, rule 11).  Set
                           and cleared by the semantics, whatever the
                           search cuts; kept out of the step cache's keys */
    PF_NAME_ARMED = 128 /* a step of the process found a registered name
                           (whereis/1, a call to a named server) while the
                           lookup rule was on (search.c, apply_run): a name
                           freed while it lives may have been freed before
                           that lookup, the run-time guard of lookups taken
                           as safe (por.h, rule 12).  Kept for the process's
                           life; kept out of the step cache's keys */
};

/* The marks of the reduction's guards: a function of the path, not of
** what a step does, so no step cache key holds them. */
#define PF_GUARD_MARKS ((uint32_t)(PF_MON_ARMED | PF_NAME_ARMED))

typedef struct monitor {
    uint32_t ref;
    uint32_t pid;
    part_id item;
} monitor;

typedef struct monitor_set {
    uint32_t n, cap;
    monitor *m;         /* sorted by ref, owned */
} monitor_set;

typedef struct proc {
    uint32_t pid;
    uint32_t status;
    part_id cont;
    part_id mailbox;
    uint32_t flags;
    part_id dict;
    part_id name;
    uint32_t gl;        /* group leader, see the layout above; 0: default */
    uint32_t nlinks, caplinks;
    uint32_t *links;    /* sorted pids, owned by this struct */
    monitor_set mons;
    monitor_set monby;
    monitor_set aliases;    /* (ref, mode, 0) */
    part_id enc;        /* the PART_PROC this record was decoded from (0:
                           none); only a hint: encoding reuses it when its
                           bytes are the record's, so edits need not clear it */
} proc;

#define KEY_NODE_SHIFT 24
#define KEY_NODE(k) (((k) >> KEY_NODE_SHIFT) & 0x7f)
#define KEY_NUM(k) ((k) & 0xffffffu)
#define MAKE_KEY(node, num) ((uint32_t)(node) << KEY_NODE_SHIFT | (num))
#define KEY_BY_NAME 0xffffffu
/* ordering => node_pair: the channel between two nodes is keyed by
** MAKE_KEY(node, KEY_NODE_CHAN) at both ends; its queue holds envelopes. */
#define KEY_NODE_CHAN 0xfffffeu
#define KEY_TIMER 0x80000000u   /* = ETF_REF_TAG: marks the ref as used */

enum alias_mode {
    ALIAS_EXPLICIT = 1,         /* until unalias/1 */
    ALIAS_DEMONITOR = 2,        /* also until its monitor goes */
    ALIAS_REPLY_DEMONITOR = 3,  /* also until one message arrives through it */
    ALIAS_REPLY = 4             /* until one message arrives (alias([reply])) */
};

/* A signal in the ether (PART_SIGNAL: kind, a, b, c). */
enum signal_kind {
    SIG_MSG = 1,        /* a: message term */
    SIG_EXIT,           /* a: reason term, b: SIGF_* flags */
    SIG_LINK,
    SIG_UNLINK,
    SIG_MONITOR,        /* a: ref, b: item term (0: the target's pid) */
    SIG_DEMONITOR,      /* a: ref */
    SIG_DOWN,           /* a: ref, b: item term (0: the sender's pid), c: reason */
    SIG_ALIAS_MSG,      /* a: message term, b: the alias (ref) it was sent to */
    SIG_ENVELOPE        /* see envelope_intern */
};

enum signal_flag {
    SIGF_KILL = 1,      /* exit/2 with reason kill: cannot be trapped */
    SIGF_LINK = 2       /* sent along a link: acts only if the link exists */
};

typedef struct channel {
    uint32_t from, to;
    part_id name;       /* to is a KEY_BY_NAME key: the name's PART_TERM */
    part_id queue;      /* vector of PART_SIGNAL ids, oldest first */
} channel;

/* An ETS table: its data (type, access, objects) is one Erlang term that
** the runtime's Erlang side reads and rewrites; C keeps what owner death
** needs. */
typedef struct ets_table {
    uint32_t tid;           /* its ref key */
    uint32_t owner, heir;   /* pid keys; heir 0: none */
    part_id heir_data;      /* term, 0: none */
    part_id name;           /* atom term of a named table, 0: unnamed */
    part_id data;           /* term */
} ets_table;

typedef struct node_monitor {
    uint32_t pid, node, count;
} node_monitor;

/* A node monitor's node field for a monitor_nodes subscription: the flag
** and the subscription's options (the message's shape). */
#define NODEMON_ALL 0x100u
#define NODES_OPT_INFO 0x1u         /* {nodeup|nodedown, Node, InfoList} */
#define NODES_OPT_REASON 0x2u       /* {nodedown_reason, R} in a nodedown's list */
#define NODES_OPT_TYPE 0x4u         /* {node_type, visible} in the list */
#define NODES_OPT_HIDDEN_ONLY 0x8u  /* {node_type, hidden}: the model's nodes
                                       are all visible, so never a message */
#define NODES_OPT_MASK 0xfu

/* Messages (or signals) appended during one transition to a process's
** mailbox or a channel's queue, not yet interned: interning each append
** would store every intermediate vector, 2·N² bytes for N sends in one
** step.  sys_state_flush interns each grown vector once. */
typedef struct pending_append {
    int is_chan;
    uint32_t from, to;  /* process: from is its pid; channel: its key */
    part_id name;
    part_id *ids;
    uint32_t n, cap;
} pending_append;

typedef struct sys_state {
    pending_append *pend;   /* see pending_append: empty in a stored or
                               decoded state */
    uint32_t npend, cappend;
    proc *procs;
    uint32_t nprocs, cap;
    uint64_t down;      /* bit i: node i has crashed */
    uint32_t crashes, disconnects, kills, uniq;
    part_id app_env;        /* term: application environments, 0: the options' */
    part_id observer;       /* term: the safety monitors' states, 0: none */
    uint32_t *disc;
    uint32_t ndisc, capdisc;
    node_monitor *nodemons;
    uint32_t nnodemons, capnodemons;
    channel *chans;
    uint32_t nchans, capchans;
    ets_table *tables;      /* sorted by tid */
    uint32_t ntables, captables;
    part_id world_enc;      /* the PART_WORLD decoded, a hint like proc.enc */
} sys_state;

void sys_state_clear(sys_state *s);          /* frees and empties */
int sys_state_copy(sys_state *dst, const sys_state *src);
/* sys_state_copy into a state that may hold an earlier state (or be
** zeroed): its buffers are reused, so a search copying the state being
** expanded once per successor does not allocate each time.  On failure
** dst is cleared. */
int sys_state_copy_into(sys_state *dst, const sys_state *src);
/* Moves src (and what it owns) into dst, freeing what dst held; src is
** left empty.  The search keeps the last successor's buffers this way. */
static inline void sys_state_move(sys_state *dst, sys_state *src)
{
    sys_state_clear(dst);
    *dst = *src;
    memset(src, 0, sizeof *src);
}
int sys_state_decode(const part_store *ps, part_id root, sys_state *out);
/* Interns the state's parts; returns the root id (0: out of memory). */
part_id sys_state_encode(part_store *ps, const sys_state *s, int *is_new);
/* The lossy visited tables (visited.h) keep root vectors out of the store:
** interns the state's sub-parts (world, processes) and returns its root
** vector, the bytes a PART_STATE part would hold (malloc'd, *len bytes;
** NULL: out of memory), and decodes a state from such bytes. */
uint8_t *sys_state_encode_root(part_store *ps, const sys_state *s,
                               uint32_t *len);
int sys_state_decode_bytes(const part_store *ps, const uint8_t *root,
                           size_t len, sys_state *out);
/* The same into a state that may hold an earlier one (or be zeroed),
** reusing its buffers; on failure out is cleared. */
int sys_state_decode_into(const part_store *ps, part_id root, sys_state *out);
int sys_state_decode_bytes_into(const part_store *ps, const uint8_t *root,
                                size_t len, sys_state *out);

/* Index of the process with `pid`, or -1. */
int sys_state_find(const sys_state *s, uint32_t pid);
/* Index of the process registered as `name` (a PART_TERM id) on `node`,
** or -1. */
int sys_state_find_name(const sys_state *s, part_id name, uint32_t node);
/* Index of the process on ref's node with alias `ref` active, or -1. */
int sys_state_find_alias(const sys_state *s, uint32_t ref);

/* The ether.  Index of channel (from, to, name), or -1. */
int sys_state_find_channel(const sys_state *s, uint32_t from, uint32_t to,
                           part_id name);
/* Channels in a state's order, by (from, to, name id): a comparator for
** qsort of channel records (symmetry's renaming, the wire's import). */
int sys_state_channel_order(const void *a, const void *b);
/* Appends signal `sig` to channel (from, to, name), creating it. */
int sys_state_enqueue(part_store *ps, sys_state *s, uint32_t from,
                      uint32_t to, part_id name, part_id sig);
/* Removes the head signal of channel i (and the channel when empty). */
int sys_state_dequeue(part_store *ps, sys_state *s, uint32_t i);
void sys_state_remove_channel(sys_state *s, uint32_t i);
part_id signal_intern(part_store *ps, uint32_t kind, uint32_t a, uint32_t b,
                      uint32_t c);
/* Decodes a PART_SIGNAL; -1 if id is not one. */
int signal_get(const part_store *ps, part_id id, uint32_t out[4]);
/* A signal on a node-pair channel with its ends: a PART_SIGNAL of five
** words (SIG_ENVELOPE, from, to, name, signal id), so it never decodes as
** a plain signal.  envelope_get: -1 if id is not one. */
part_id envelope_intern(part_store *ps, uint32_t from, uint32_t to,
                        part_id name, part_id sig);
int envelope_get(const part_store *ps, part_id id, uint32_t out[4]);

/* Index of table tid, or -1; sets (replacing) and removes tables. */
int sys_state_find_table(const sys_state *s, uint32_t tid);
int sys_state_put_table(sys_state *s, const ets_table *t);
void sys_state_remove_table(sys_state *s, uint32_t i);

int sys_state_disconnected(const sys_state *s, uint32_t a, uint32_t b);
int sys_state_set_disconnected(sys_state *s, uint32_t a, uint32_t b, int on);
/* Adds delta (+1 or -1) to the node monitors of pid on node. */
int sys_state_node_monitor(sys_state *s, uint32_t pid, uint32_t node, int delta);
/* Inserts a process in pid order; returns its index or -1. */
int sys_state_insert(sys_state *s, const proc *p);
void sys_state_remove(sys_state *s, uint32_t index);

int monitor_add(monitor_set *ms, monitor m);
/* Removes the monitor with `ref`; 1 if there was one (copied to *out). */
int monitor_remove(monitor_set *ms, uint32_t ref, monitor *out);
void proc_free(proc *p);   /* frees what the record owns */

int proc_link_add(proc *p, uint32_t pid);
void proc_link_remove(proc *p, uint32_t pid);

/* Appends msg to the mailbox of s->procs[index], pending (see
** pending_append); mailbox reads of that process must flush first. */
int sys_state_append(sys_state *s, uint32_t index, part_id msg);
/* Interns the pending appends: every mailbox and queue field is then
** complete.  Encoding refuses a state with appends pending. */
int sys_state_flush(part_store *ps, sys_state *s);

/* Mailbox parts (and ether queues) are vectors of message term ids. */
part_id mailbox_append(part_store *ps, part_id mailbox, part_id msg);
part_id mailbox_remove(part_store *ps, part_id mailbox, uint32_t index);
/* The mailbox with its message at index replaced by msg; 0 when out of
** memory or out of range. */
part_id mailbox_replace(part_store *ps, part_id mailbox, uint32_t index, part_id msg);
uint32_t mailbox_length(const part_store *ps, part_id mailbox);
part_id mailbox_at(const part_store *ps, part_id mailbox, uint32_t index);

#endif
