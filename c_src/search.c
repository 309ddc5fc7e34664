/*
** search.c: owns the DFS stack, the match memo and the state being
** expanded; applies run results to build successors.  With a lossy
** visited table (visited.h) each stack frame owns its state's root vector.
*/
#include "search.h"

#include <stdlib.h>
#include <string.h>

#include "etf_scan.h"
#include "visited.h"

typedef struct frame {
    part_id state;
    uint32_t next_proc;   /* index of the next process to consider */
    uint32_t msg_idx;     /* next message to test for that process */
    uint32_t enabled;     /* transitions taken from this state */
    int expand;           /* 0: beyond max_depth, not expanded */
    uint32_t fault_idx;   /* next fault to inject */
    uint8_t phase;        /* when_idle: 0 other transitions, 1 timeouts */
    uint8_t saw_timeout;  /* phase 0 passed over a timeout */
    uint32_t idle_min;    /* when_idle: 1 + the least time left of a receive
                             timeout phase 0 passed over (0: none); only
                             those fire, time passing in order */
    uint8_t *label;       /* ETF of the transition into this state */
    size_t label_len;
    /* Lossy tables (state is 0): the state's root vector, malloc'd, and a
    ** number naming this push, so decode_top knows what `cur` holds. */
    uint8_t *root;
    uint32_t root_len;
    uint64_t serial;
} frame;

/* Breadth-first order (shortest counterexamples): every discovered state
** is a node that remembers its parent and the label of the transition in.
** The stack then holds one frame, the node being expanded; when the search
** stops on a violation the path to it is rebuilt as the stack, so the
** trace and the final state read the same way in both orders. */
typedef struct bfs_node {
    part_id state;
    uint32_t parent;      /* node index; the root is its own parent */
    uint32_t depth;
    uint8_t *label;
    size_t label_len;
} bfs_node;

/* Memo of "does message M match receive continuation C": parts are
** interned, so (C, M) ids name the question exactly. */
typedef struct memo {
    uint64_t *keys;       /* (cont << 32 | msg) + 1, 0 = empty */
    uint8_t *vals;
    size_t nslots, n;
} memo;

struct search {
    search_config cfg;
    char *names;          /* the node names, back to back */
    etf_nodes nodes;
    part_id node_atoms[SEARCH_MAX_NODES];
    part_store *ps;
    part_id empty_mailbox;
    frame *stack;
    size_t depth, cap;
    sys_state cur;        /* decoded stack top */
    part_id cur_id;
    /* Lossy visited tables (NULL: exact, the store's interning is the
    ** visited test): the table, the last push serial, the serial of the
    ** frame `cur` decodes (0: none), the root bytes held by frames. */
    visited *vis;
    uint64_t serial, cur_serial;
    size_t root_bytes;
    memo memo;
    /* the outstanding request */
    enum request_kind pending;
    enum run_kind run;
    uint32_t run_pid;
    uint32_t run_elapsed; /* when_idle: the time a timeout step lets pass */
    part_id run_cont, run_msg;
    uint32_t run_msg_index;
    uint32_t *allocated;  /* pids handed out during the current run */
    size_t nallocated, capallocated;
    search_stats st;
    int finished;
    part_id atoms[N_ATOMS];
    uint32_t *allocated_refs;     /* refs handed out during the current run */
    size_t nallocated_refs, capallocated_refs;
    /* A successor waiting for the safety monitors' verdict (REQ_OBSERVE):
    ** the state (its observer still the parent's), the label and whether
    ** the search stops at it. */
    int obs_pending;
    sys_state obs_st;
    uint8_t *obs_label;
    size_t obs_label_len;
    int obs_stop;
    /* Deaths by exit signal in the step being built (REQ_DEATHS), and
    ** whether the parked successor waits for their verdict. */
    death *deaths;
    size_t ndeaths, capdeaths;
    int deaths_pending;
    /* breadth-first order only */
    bfs_node *bfs;
    size_t nbfs, capbfs;
    size_t expanding;             /* node of the single stack frame */
    /* expand_only: the successors of the state being expanded, and who
    ** moves in the transition being built */
    expansion *exp;
    size_t nexp, capexp;
    int exp_deadlock;
    agent mover;
    uint32_t work;        /* units done in C since the last request */
    size_t used_at_yield; /* the store's used bytes at the last yield */
};

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static int memo_get(const memo *m, part_id cont, part_id msg)
{
    uint64_t key = (((uint64_t)cont << 32) | msg) + 1;
    size_t i = mix64(key) & (m->nslots - 1);
    while (m->keys[i] != 0) {
        if (m->keys[i] == key)
            return m->vals[i];
        i = (i + 1) & (m->nslots - 1);
    }
    return -1;
}

static int memo_put(memo *m, part_id cont, part_id msg, int val)
{
    if ((m->n + 1) * 2 > m->nslots) {
        size_t nslots = m->nslots * 2;
        uint64_t *keys = calloc(nslots, sizeof *keys);
        uint8_t *vals = calloc(nslots, 1);
        if (keys == NULL || vals == NULL) {
            free(keys);
            free(vals);
            return -1;
        }
        for (size_t j = 0; j < m->nslots; j++) {
            if (m->keys[j] == 0)
                continue;
            size_t i = mix64(m->keys[j]) & (nslots - 1);
            while (keys[i] != 0)
                i = (i + 1) & (nslots - 1);
            keys[i] = m->keys[j];
            vals[i] = m->vals[j];
        }
        free(m->keys);
        free(m->vals);
        m->keys = keys;
        m->vals = vals;
        m->nslots = nslots;
    }
    uint64_t key = (((uint64_t)cont << 32) | msg) + 1;
    size_t i = mix64(key) & (m->nslots - 1);
    while (m->keys[i] != 0 && m->keys[i] != key)
        i = (i + 1) & (m->nslots - 1);
    if (m->keys[i] == 0)
        m->n++;
    m->keys[i] = key;
    m->vals[i] = (uint8_t)val;
    return 0;
}

search *search_new(const search_config *cfg)
{
    search *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->cfg = *cfg;
    if (cfg->nnodes == 0) {
        s->cfg.nnodes = 1;
        s->cfg.node_names[0] = cfg->node;
        s->cfg.node_lens[0] = cfg->nodelen;
        s->cfg.node_atom_etf[0] = NULL;
    }
    if (s->cfg.nnodes > SEARCH_MAX_NODES) {
        free(s);
        return NULL;
    }
    size_t total = 0;
    for (uint32_t i = 0; i < s->cfg.nnodes; i++) {
        if (s->cfg.node_lens[i] > 255) {
            free(s);
            return NULL;
        }
        total += s->cfg.node_lens[i] + 1;
    }
    if (cfg->table_mode != VISITED_EXACT &&
        (cfg->breadth_first || cfg->expand_only)) {
        free(s);
        return NULL;
    }
    s->names = malloc(total);
    s->ps = cfg->table_slots ? part_store_new_sized(cfg->table_slots)
                             : part_store_new();
    s->used_at_yield = s->ps != NULL ? part_store_used_bytes(s->ps) : 0;
    if (cfg->table_mode != VISITED_EXACT)
        s->vis = visited_new((enum visited_mode)cfg->table_mode,
                             cfg->table_mode == VISITED_BITSTATE
                                 ? cfg->bitstate_bits : cfg->table_slots);
    s->memo.nslots = 1024;
    s->memo.keys = calloc(s->memo.nslots, sizeof *s->memo.keys);
    s->memo.vals = calloc(s->memo.nslots, 1);
    if (s->names == NULL || s->ps == NULL || s->memo.keys == NULL ||
        s->memo.vals == NULL || (cfg->table_mode != VISITED_EXACT && s->vis == NULL)) {
        search_free(s);
        return NULL;
    }
    int fresh;
    char *at = s->names;
    s->nodes.n = s->cfg.nnodes;
    for (uint32_t i = 0; i < s->cfg.nnodes; i++) {
        size_t n = s->cfg.node_lens[i];
        memcpy(at, s->cfg.node_names[i], n);
        at[n] = '\0';
        s->cfg.node_names[i] = s->nodes.names[i] = at;
        s->nodes.lens[i] = n;
        uint8_t buf[4 + 255];
        const uint8_t *etf = s->cfg.node_atom_etf[i];
        size_t len = s->cfg.node_atom_etf_len[i];
        if (etf == NULL) {
            buf[0] = 131;
            buf[1] = 100;
            buf[2] = 0;
            buf[3] = (uint8_t)n;
            memcpy(buf + 4, at, n);
            etf = buf;
            len = 4 + n;
        }
        s->cfg.node_atom_etf[i] = NULL;     /* not kept: the caller's memory */
        s->node_atoms[i] = part_store_intern(s->ps, PART_TERM, etf, (uint32_t)len,
                                             NULL, 0, &fresh);
        if (s->node_atoms[i] == 0) {
            search_free(s);
            return NULL;
        }
        at += n + 1;
    }
    s->cfg.node = s->cfg.node_names[0];
    s->cfg.nodelen = s->cfg.node_lens[0];
    s->empty_mailbox = part_store_intern(s->ps, PART_MAILBOX, "", 0, NULL, 0,
                                         &fresh);
    static const char *const names[N_ATOMS] = SEARCH_ATOM_NAMES;
    for (int a = 0; a < N_ATOMS && s->empty_mailbox != 0; a++) {
        uint8_t buf[16];
        const uint8_t *etf = cfg->atom_etf[a];
        size_t len = cfg->atom_etf_len[a];
        if (etf == NULL) {      /* ATOM_EXT, as the VM writes latin-1 atoms */
            size_t n = strlen(names[a]);
            buf[0] = 131;
            buf[1] = 100;
            buf[2] = 0;
            buf[3] = (uint8_t)n;
            memcpy(buf + 4, names[a], n);
            etf = buf;
            len = 4 + n;
        }
        s->atoms[a] = part_store_intern(s->ps, PART_TERM, etf, (uint32_t)len,
                                        NULL, 0, &fresh);
        if (s->atoms[a] == 0)
            s->empty_mailbox = 0;
    }
    if (s->empty_mailbox == 0) {
        search_free(s);
        return NULL;
    }
    return s;
}

void search_free(search *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->depth; i++) {
        free(s->stack[i].label);
        free(s->stack[i].root);
    }
    free(s->stack);
    sys_state_clear(&s->cur);
    part_store_free(s->ps);
    visited_free(s->vis);
    free(s->memo.keys);
    free(s->memo.vals);
    free(s->allocated);
    free(s->allocated_refs);
    sys_state_clear(&s->obs_st);
    free(s->obs_label);
    free(s->deaths);
    for (size_t i = 0; i < s->nbfs; i++)
        free(s->bfs[i].label);
    free(s->bfs);
    for (size_t i = 0; i < s->nexp; i++)
        free(s->exp[i].label);
    free(s->exp);
    free(s->names);
    free(s);
}

/* Interns an encoded term, recording the simulated pids it references. */
static part_id intern_term(search *s, term_in *t)
{
    etf_pid_sink sink = { NULL, 0, 0 };
    if (etf_scan_keys(t->etf, t->len, &s->nodes, s->cfg.creation, &sink) != 0) {
        free(sink.pids);
        return 0;
    }
    int fresh;
    part_id id = part_store_intern(s->ps, PART_TERM, t->etf, (uint32_t)t->len,
                                   sink.pids, sink.n, &fresh);
    free(sink.pids);
    return id;
}

static int push(search *s, part_id state, uint8_t *label, size_t label_len)
{
    if (s->depth == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        frame *grown = realloc(s->stack, cap * sizeof *grown);
        if (grown == NULL)
            return -1;
        s->stack = grown;
        s->cap = cap;
    }
    frame *f = &s->stack[s->depth];
    *f = (frame){ .state = state, .label = label, .label_len = label_len,
                  .expand = 1 };
    if (s->cfg.max_depth != 0 && s->depth >= s->cfg.max_depth) {
        f->expand = 0;
        s->st.truncated = 1;
    }
    s->depth++;
    if (s->depth - 1 > s->st.max_depth_seen)
        s->st.max_depth_seen = s->depth - 1;
    return 0;
}

static void pop(search *s)
{
    s->depth--;
    free(s->stack[s->depth].label);
    free(s->stack[s->depth].root);
    s->root_bytes -= s->stack[s->depth].root_len;
}

/* Lossy tables: pushes the state whose root vector is root[0..len)
** (taking it and the label on success). */
static int push_root(search *s, uint8_t *root, uint32_t len, uint8_t *label,
                     size_t label_len)
{
    if (push(s, 0, label, label_len) != 0)
        return -1;
    frame *f = &s->stack[s->depth - 1];
    f->root = root;
    f->root_len = len;
    f->serial = ++s->serial;
    s->root_bytes += len;
    return 0;
}

/* Breadth-first: records a new state as a child of the node being
** expanded (the label's ownership passes on success). */
static int bfs_add(search *s, part_id state, uint8_t *label, size_t label_len)
{
    if (s->nbfs == s->capbfs) {
        size_t cap = s->capbfs ? 2 * s->capbfs : 1024;
        bfs_node *grown = realloc(s->bfs, cap * sizeof *grown);
        if (grown == NULL)
            return -1;
        s->bfs = grown;
        s->capbfs = cap;
    }
    uint32_t parent = s->nbfs == 0 ? 0 : (uint32_t)s->expanding;
    uint32_t depth = s->nbfs == 0 ? 0 : s->bfs[parent].depth + 1;
    s->bfs[s->nbfs++] = (bfs_node){ state, parent, depth, label, label_len };
    if (depth > s->st.max_depth_seen)
        s->st.max_depth_seen = depth;
    return 0;
}

/* Breadth-first: the single frame becomes node i (fresh iteration). */
static void bfs_expand(search *s, size_t i)
{
    s->expanding = i;
    s->stack[0] = (frame){ .state = s->bfs[i].state, .expand = 1 };
    if (s->cfg.max_depth != 0 && s->bfs[i].depth >= s->cfg.max_depth) {
        s->stack[0].expand = 0;
        s->st.truncated = 1;
    }
    s->depth = 1;
}

/* Breadth-first: makes the stack the path from the root to node i, so the
** trace and final state of a counterexample read as in depth-first order.
** The labels move from the nodes to the frames. */
static int bfs_path_to_stack(search *s, size_t i)
{
    size_t len = 0;
    for (size_t k = i;; k = s->bfs[k].parent) {
        len++;
        if (k == 0)
            break;
    }
    if (len > s->cap) {
        frame *grown = realloc(s->stack, len * sizeof *grown);
        if (grown == NULL)
            return -1;
        s->stack = grown;
        s->cap = len;
    }
    size_t d = len;
    for (size_t k = i;; k = s->bfs[k].parent) {
        bfs_node *n = &s->bfs[k];
        s->stack[--d] = (frame){ .state = n->state, .label = n->label,
                                 .label_len = n->label_len };
        n->label = NULL;
        if (k == 0)
            break;
    }
    s->depth = len;
    return 0;
}

/* A new successor of the state being expanded: pushed (depth-first) or
** queued (breadth-first).  With `stop' the search ends at it, so
** breadth-first rebuilds the path to it. */
static int discover(search *s, part_id state, uint8_t *label, size_t label_len, int stop)
{
    if (!s->cfg.breadth_first)
        return push(s, state, label, label_len);
    if (bfs_add(s, state, label, label_len) != 0)
        return -1;
    return stop ? bfs_path_to_stack(s, s->nbfs - 1) : 0;
}

static int decode_top(search *s)
{
    frame *f = &s->stack[s->depth - 1];
    if (f->root != NULL) {
        if (s->cur_serial == f->serial)
            return 0;
        sys_state_clear(&s->cur);
        s->cur_serial = 0;
        if (sys_state_decode_bytes(s->ps, f->root, f->root_len, &s->cur) != 0)
            return -1;
        s->cur_serial = f->serial;
        return 0;
    }
    if (s->cur_id == f->state)
        return 0;
    sys_state_clear(&s->cur);
    s->cur_id = 0;
    if (sys_state_decode(s->ps, f->state, &s->cur) != 0)
        return -1;
    s->cur_id = f->state;
    return 0;
}

static int fail(request *req, const char *why)
{
    req->kind = REQ_ERROR;
    req->error = why;
    return -1;
}

enum fault_kind { FAULT_CRASH = 1, FAULT_DISCONNECT, FAULT_RECONNECT, FAULT_KILL };

typedef struct fault {
    enum fault_kind kind;
    uint32_t a, b;          /* nodes, or a: the pid to kill */
} fault;
static int nth_fault(const search *s, const sys_state *st, uint32_t idx,
                     fault *out);
static int c_transition(search *s, uint32_t ci, const fault *f, request *req);

/* Finds the next transition of the top state, or a match question.
** Deliveries and faults are taken here, without a request. */
static int next_request(search *s, request *req)
{
    memset(req, 0, sizeof *req);
    if (s->finished) {
        req->kind = s->pending;
        return 0;
    }
    s->work = 0;
    while (s->depth > 0) {
        if (!s->cfg.expand_only &&
            (s->work++ >= SEARCH_WORK_BUDGET ||
             part_store_used_bytes(s->ps) - s->used_at_yield >= SEARCH_BYTES_BUDGET)) {
            s->used_at_yield = part_store_used_bytes(s->ps);
            s->pending = req->kind = REQ_YIELD;
            return 0;
        }
        if (decode_top(s) != 0)
            return fail(req, "out of memory decoding a state");
        frame *f = &s->stack[s->depth - 1];
        while (f->expand && f->next_proc < s->cur.nprocs) {
            const proc *p = &s->cur.procs[f->next_proc];
            if (p->status == PROC_INIT) {
                req->kind = REQ_RUN;
                req->run = RUN_START;
                goto issue;
            }
            if (p->status == PROC_CHOICE) {
                if (f->msg_idx < (p->flags >> PF_CHOICE_SHIFT)) {
                    req->kind = REQ_RUN;
                    req->run = RUN_CHOICE;
                    req->choice = f->msg_idx++;
                    f->enabled++;
                    req->pid = p->pid;
                    req->cont = p->cont;
                    goto remember;
                }
                f->next_proc++;
                f->msg_idx = 0;
                continue;
            }
            uint32_t n = mailbox_length(s->ps, p->mailbox);
            while (f->msg_idx < n) {
                part_id msg = mailbox_at(s->ps, p->mailbox, f->msg_idx);
                int m = memo_get(&s->memo, p->cont, msg);
                if (m < 0) {
                    req->kind = REQ_MATCH;
                    req->pid = p->pid;
                    req->cont = p->cont;
                    req->msg = msg;
                    s->pending = REQ_MATCH;
                    s->run_cont = p->cont;
                    s->run_msg = msg;
                    return 0;
                }
                if (m == 1) {
                    req->kind = REQ_RUN;
                    req->run = RUN_RECEIVE;
                    req->msg = msg;
                    s->run_msg_index = f->msg_idx;
                    goto issue;
                }
                f->msg_idx++;
            }
            f->next_proc++;
            f->msg_idx = 0;
            uint32_t left = p->flags >> PF_TIMEOUT_SHIFT;
            if ((p->flags & PF_TIMEOUT) && !(p->flags & PF_TIMEOUT_ZERO) &&
                s->cfg.timeouts_when_idle && f->phase == 0) {
                f->saw_timeout = 1;       /* only if nothing else can move */
                if (f->idle_min == 0 || left + 1 < f->idle_min)
                    f->idle_min = left + 1;
            } else if ((p->flags & PF_TIMEOUT) &&
                       (!s->cfg.timeouts_when_idle || f->phase == 0 ||
                        left + 1 == f->idle_min)) {
                req->kind = REQ_RUN;
                req->run = RUN_TIMEOUT;
                f->enabled++;
                req->pid = p->pid;
                req->cont = p->cont;
                goto remember;
            }
            continue;
        issue:
            f->next_proc++;
            f->msg_idx = 0;
            f->enabled++;
            req->pid = p->pid;
            req->cont = p->cont;
        remember:
            req->dict = p->dict;
            req->flags = p->flags;
            s->pending = REQ_RUN;
            s->run = req->run;
            s->run_pid = req->pid;
            s->run_cont = req->cont;
            s->run_msg = req->msg;
            s->run_elapsed = req->run == RUN_TIMEOUT && s->cfg.timeouts_when_idle
                             ? req->flags >> PF_TIMEOUT_SHIFT : 0;
            s->nallocated = 0;
            s->nallocated_refs = 0;
            return 0;
        }
        /* The ether: deliver the oldest signal of each channel.  Timers
        ** are timeouts: with when_idle they fire only in the second phase. */
        if (f->expand && f->next_proc < s->cur.nprocs + s->cur.nchans) {
            uint32_t ci = f->next_proc - s->cur.nprocs;
            f->next_proc++;
            int is_timer = (s->cur.chans[ci].from & KEY_TIMER) != 0;
            if (s->cfg.timeouts_when_idle ? is_timer != (f->phase == 1)
                                          : f->phase == 1) {
                if (is_timer)
                    f->saw_timeout = 1;
                continue;
            }
            f->enabled++;
            int r = c_transition(s, ci, NULL, req);
            if (r != 0)
                return r < 0 ? -1 : 0;
            continue;
        }
        /* Faults do not count as enabled: a state that only a fault can
        ** leave is still a deadlock. */
        if (f->expand && f->phase == 0) {
            fault flt;
            if (nth_fault(s, &s->cur, f->fault_idx, &flt)) {
                f->fault_idx++;
                int r = c_transition(s, 0, &flt, req);
                if (r != 0)
                    return r < 0 ? -1 : 0;
                continue;
            }
        }
        if (f->expand && f->phase == 0 && f->enabled == 0 && f->saw_timeout) {
            /* when_idle: nothing else was enabled, so the timeouts are. */
            f->phase = 1;
            f->next_proc = 0;
            f->msg_idx = 0;
            continue;
        }
        if (s->cfg.expand_only) {
            s->exp_deadlock = f->enabled == 0 && s->cur.nprocs > 0;
            s->pending = req->kind = REQ_EXPANDED;
            return 0;
        }
        if (s->cfg.check_deadlock && f->expand && f->enabled == 0 &&
            s->cur.nprocs > 0) {
            if (s->cfg.breadth_first && bfs_path_to_stack(s, s->expanding) != 0)
                return fail(req, "out of memory");
            s->finished = 1;
            s->pending = req->kind = REQ_DEADLOCK;
            return 0;
        }
        if (s->cfg.breadth_first) {
            if (s->expanding + 1 < s->nbfs) {
                bfs_expand(s, s->expanding + 1);
                continue;
            }
            s->depth = 0;
            break;
        }
        pop(s);
    }
    s->finished = 1;
    s->pending = req->kind = REQ_DONE;
    return 0;
}

int search_start(search *s, term_in *init, uint32_t pid, request *req)
{
    if (s->depth != 0 || s->finished || s->st.states != 0)
        return fail(req, "search already started");
    part_id cont = intern_term(s, init);
    if (cont == 0)
        return fail(req, "initial call is not an encodable term");
    sys_state st;
    memset(&st, 0, sizeof st);
    proc p = { .pid = pid, .status = PROC_INIT, .cont = cont,
               .mailbox = s->empty_mailbox };
    if (sys_state_insert(&st, &p) < 0)
        return fail(req, "out of memory");
    if (s->vis != NULL) {
        uint32_t len;
        uint8_t *bytes = sys_state_encode_root(s->ps, &st, &len);
        sys_state_clear(&st);
        if (bytes == NULL || visited_insert(s->vis, bytes, len) < 0 ||
            push_root(s, bytes, len, NULL, 0) != 0) {
            free(bytes);
            return fail(req, "out of memory");
        }
    } else {
        int fresh;
        part_id root = sys_state_encode(s->ps, &st, &fresh);
        sys_state_clear(&st);
        if (root == 0 || push(s, root, NULL, 0) != 0)
            return fail(req, "out of memory");
    }
    if (s->cfg.breadth_first) {
        if (bfs_add(s, s->stack[0].state, NULL, 0) != 0)
            return fail(req, "out of memory");
        bfs_expand(s, 0);
    }
    s->st.states = 1;
    /* The initial state counts: max_states = 1 stores nothing more. */
    if (!s->cfg.expand_only && s->cfg.max_states != 0 &&
        s->st.states >= s->cfg.max_states) {
        memset(req, 0, sizeof *req);
        s->finished = 1;
        s->pending = req->kind = REQ_LIMIT_STATES;
        return 0;
    }
    return next_request(s, req);
}

int search_resume(search *s, request *req)
{
    if (s->pending != REQ_YIELD || s->finished)
        return fail(req, "the search has not yielded");
    s->pending = 0;
    return next_request(s, req);
}

int search_answer_match(search *s, int matches, request *req)
{
    if (s->pending != REQ_MATCH || s->finished)
        return fail(req, "no match question is outstanding");
    if (memo_put(&s->memo, s->run_cont, s->run_msg, matches ? 1 : 0) != 0)
        return fail(req, "out of memory");
    return next_request(s, req);
}

static void free_result(run_result *res)
{
    free(res->label);
    res->label = NULL;
}

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

static int queue_signal(signal_queue *sq, exit_signal sig)
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

/* A growing buffer for building external-format terms. */
typedef struct ext_buf {
    uint8_t *b;
    size_t n, cap;
    int err;
} ext_buf;

static void ext_put(ext_buf *e, const void *p, size_t n)
{
    if (e->err)
        return;
    if (e->n + n > e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 128;
        while (cap < e->n + n)
            cap *= 2;
        uint8_t *grown = realloc(e->b, cap);
        if (grown == NULL) {
            e->err = 1;
            return;
        }
        e->b = grown;
        e->cap = cap;
    }
    memcpy(e->b + e->n, p, n);
    e->n += n;
}

static void ext_u8(ext_buf *e, uint8_t v) { ext_put(e, &v, 1); }

static void ext_u32(ext_buf *e, uint32_t v)
{
    uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8),
                     (uint8_t)v };
    ext_put(e, b, 4);
}

/* A stored term, without its version byte. */
static void ext_part(search *s, ext_buf *e, part_id id)
{
    const part *p = part_store_get(s->ps, id);
    if (p == NULL || p->len < 1) {
        e->err = 1;
        return;
    }
    ext_put(e, p->data + 1, p->len - 1);
}

/* The node atom inside a pid or ref. */
static void ext_node(search *s, ext_buf *e, uint32_t node)
{
    if (node >= s->nodes.n) {
        e->err = 1;
        return;
    }
    ext_u8(e, 100);                     /* ATOM_EXT, as the VM writes it */
    ext_u8(e, 0);
    ext_u8(e, (uint8_t)s->nodes.lens[node]);
    ext_put(e, s->nodes.names[node], s->nodes.lens[node]);
}

/* A simulated pid and ref, byte for byte as mce_pid and mce_ref build
** them (and as the VM re-encodes them). */
static void ext_pid(search *s, ext_buf *e, uint32_t pid)
{
    ext_u8(e, 88);                      /* NEW_PID_EXT */
    ext_node(s, e, KEY_NODE(pid));
    ext_u32(e, KEY_NUM(pid));
    ext_u32(e, 0);
    ext_u32(e, s->cfg.creation);
}

static void ext_ref_marked(search *s, ext_buf *e, uint32_t ref, uint32_t mark)
{
    ext_u8(e, 90);                      /* NEWER_REFERENCE_EXT, 3 words */
    ext_u8(e, 0);
    ext_u8(e, 3);
    ext_node(s, e, KEY_NODE(ref));
    ext_u32(e, s->cfg.creation);
    ext_u32(e, KEY_NUM(ref) & (ETF_REF_COUNTER_LIMIT - 1));
    ext_u32(e, KEY_NUM(ref) >> ETF_REF_COUNTER_BITS);
    ext_u32(e, mark);
}

static void ext_ref(search *s, ext_buf *e, uint32_t ref)
{
    ext_ref_marked(s, e, ref, 0);
}

/* An atom for a label (labels are only decoded, never compared). */
static void ext_atom(ext_buf *e, const char *name)
{
    size_t n = strlen(name);
    ext_u8(e, 100);
    ext_u8(e, 0);
    ext_u8(e, (uint8_t)n);
    ext_put(e, name, n);
}

static void ext_tuple(ext_buf *e, uint8_t arity)
{
    ext_u8(e, 104);
    ext_u8(e, arity);
}

/* A process key as a term: its pid, or {Name, Node} for a name key. */
static void ext_target(search *s, ext_buf *e, uint32_t key, part_id name)
{
    if (KEY_NUM(key) == KEY_BY_NAME) {
        ext_tuple(e, 2);
        if (name != 0)
            ext_part(s, e, name);
        else
            ext_atom(e, "undefined");
        ext_part(s, e, s->node_atoms[KEY_NODE(key)]);
    } else {
        ext_pid(s, e, key);
    }
}

/* Interns the built term and appends it to st->procs[to]'s mailbox. */
static int deliver_built(search *s, sys_state *st, int to, ext_buf *e)
{
    int err = e->err;
    part_id msg = 0;
    if (!err) {
        term_in t = { e->b, e->n };
        msg = intern_term(s, &t);
    }
    free(e->b);
    if (err || msg == 0)
        return -1;
    if (sys_state_append(st, (uint32_t)to, msg) != 0)
        return -1;
    return 0;
}

/* Appends {'EXIT', From, Reason} to the mailbox of st->procs[to]. */
static int deliver_exit_message(search *s, sys_state *st, int to,
                                uint32_t from, part_id reason)
{
    ext_buf e = { NULL, 0, 0, 0 };
    ext_u8(&e, 131);
    ext_u8(&e, 104);                    /* SMALL_TUPLE_EXT */
    ext_u8(&e, 3);
    ext_part(s, &e, s->atoms[ATOM_EXIT]);
    ext_pid(s, &e, from);
    ext_part(s, &e, reason);
    return deliver_built(s, st, to, &e);
}

/* Appends {'DOWN', Ref, process, Item, Reason} to st->procs[to]'s mailbox;
** Item is the monitor's item term, or the pid when it has none. */
static void drop_monitor_alias(proc *p, uint32_t ref)
{
    for (uint32_t k = 0; k < p->aliases.n; k++)
        if (p->aliases.m[k].ref == ref &&
            (p->aliases.m[k].pid == ALIAS_DEMONITOR ||
             p->aliases.m[k].pid == ALIAS_REPLY_DEMONITOR))
            monitor_remove(&p->aliases, ref, NULL);
}

static int deliver_down(search *s, sys_state *st, int to, monitor m,
                        part_id reason)
{
    drop_monitor_alias(&st->procs[to], m.ref);
    ext_buf e = { NULL, 0, 0, 0 };
    ext_u8(&e, 131);
    ext_u8(&e, 104);
    ext_u8(&e, 5);
    ext_part(s, &e, s->atoms[ATOM_DOWN]);
    ext_ref(s, &e, m.ref);
    ext_part(s, &e, s->atoms[ATOM_PROCESS]);
    if (m.item != 0)
        ext_part(s, &e, m.item);
    else
        ext_pid(s, &e, m.pid);
    ext_part(s, &e, reason);
    return deliver_built(s, st, to, &e);
}

/* Removes {'DOWN', Ref, ...} messages from st->procs[at]'s mailbox
** (demonitor with flush). */
static int flush_down(search *s, sys_state *st, int at, uint32_t ref)
{
    ext_buf e = { NULL, 0, 0, 0 };
    ext_u8(&e, 131);
    ext_u8(&e, 104);
    ext_u8(&e, 5);
    ext_part(s, &e, s->atoms[ATOM_DOWN]);
    ext_ref(s, &e, ref);
    if (e.err) {
        free(e.b);
        return -1;
    }
    if (sys_state_flush(s->ps, st) != 0) {
        free(e.b);
        return -1;
    }
    uint32_t n = mailbox_length(s->ps, st->procs[at].mailbox);
    for (uint32_t k = n; k-- > 0;) {
        const part *m = part_store_get(s->ps, mailbox_at(s->ps, st->procs[at].mailbox, k));
        if (m != NULL && m->len >= e.n && memcmp(m->data, e.b, e.n) == 0) {
            part_id mb = mailbox_remove(s->ps, st->procs[at].mailbox, k);
            if (mb == 0) {
                free(e.b);
                return -1;
            }
            st->procs[at].mailbox = mb;
        }
    }
    free(e.b);
    return 0;
}

/* Signals from `from` to `to` travel through the ether: between nodes
** always, inside a node with delivery => ether; a process's signals to
** itself never do. */
static int routed(const search *s, uint32_t from, uint32_t to)
{
    return from != to &&
           (KEY_NODE(from) != KEY_NODE(to) || s->cfg.delivery_ether);
}

/* Node b can be reached from node a: both are up and connected. */
static int reachable(const sys_state *st, uint32_t a, uint32_t b)
{
    if (a >= 64 || b >= 64 || (st->down >> a & 1) || (st->down >> b & 1))
        return 0;
    return a == b || !sys_state_disconnected(st, a, b);
}

static int enqueue(search *s, sys_state *st, uint32_t from, uint32_t to,
                   part_id name, uint32_t kind, uint32_t a, uint32_t b,
                   uint32_t c)
{
    part_id sig = signal_intern(s->ps, kind, a, b, c);
    if (s->cfg.node_pair && !(from & KEY_TIMER) && KEY_NODE(from) != KEY_NODE(to))
        return sys_state_enqueue(s->ps, st, MAKE_KEY(KEY_NODE(from), KEY_NODE_CHAN),
                                 MAKE_KEY(KEY_NODE(to), KEY_NODE_CHAN), 0,
                                 envelope_intern(s->ps, from, to, name, sig));
    return sys_state_enqueue(s->ps, st, from, to, name, sig);
}

/* The head signal of a channel, with the ends it travels between: a
** node-pair channel's envelope gives them. */
static int channel_head(const part_store *ps, channel *c, uint32_t sig[4])
{
    part_id id = mailbox_at(ps, c->queue, 0);
    if (KEY_NUM(c->from) == KEY_NODE_CHAN && !(c->from & KEY_TIMER)) {
        uint32_t env[4];
        if (envelope_get(ps, id, env) != 0)
            return -1;
        c->from = env[0];
        c->to = env[1];
        c->name = env[2];
        id = env[3];
    }
    return signal_get(ps, id, sig);
}

/* Appends {nodedown, Node} to st->procs[to]'s mailbox. */
static int deliver_nodedown(search *s, sys_state *st, int to, uint32_t node)
{
    ext_buf e = { NULL, 0, 0, 0 };
    ext_u8(&e, 131);
    ext_tuple(&e, 2);
    ext_part(s, &e, s->atoms[ATOM_NODEDOWN]);
    ext_part(s, &e, s->node_atoms[node]);
    return deliver_built(s, st, to, &e);
}

static int holds_monitor(const proc *p, uint32_t ref)
{
    for (uint32_t k = 0; k < p->mons.n; k++)
        if (p->mons.m[k].ref == ref)
            return 1;
    return 0;
}

static int has_link(const proc *p, uint32_t pid)
{
    for (uint32_t k = 0; k < p->nlinks; k++)
        if (p->links[k] == pid)
            return 1;
    return 0;
}

/* Removes process `pid`, which ends with `reason`: its linked processes
** get exit signals, its watchers 'DOWN' messages (through the ether when
** they are routed there), the monitors it held are dropped, and so are
** its node monitors. */
static int process_dies(search *s, sys_state *st, uint32_t pid, part_id reason,
                        signal_queue *sq)
{
    int i = sys_state_find(st, pid);
    if (i < 0)
        return 0;
    proc gone = st->procs[i];
    st->procs[i].links = NULL;          /* ownership moves to `gone` */
    st->procs[i].mons.m = st->procs[i].monby.m = st->procs[i].aliases.m = NULL;
    sys_state_remove(st, (uint32_t)i);
    int err = 0;
    for (uint32_t k = 0; k < gone.nlinks && !err; k++) {
        uint32_t other = gone.links[k];
        int j = sys_state_find(st, other);
        if (j < 0)
            continue;
        if (routed(s, pid, other)) {
            if (reachable(st, KEY_NODE(pid), KEY_NODE(other)))
                err = enqueue(s, st, pid, other, 0, SIG_EXIT, reason, SIGF_LINK, 0);
            continue;
        }
        proc_link_remove(&st->procs[j], pid);
        err = queue_signal(sq, (exit_signal){ pid, other, reason, 0 });
    }
    for (uint32_t k = 0; k < gone.mons.n && !err; k++) {
        int j = sys_state_find(st, gone.mons.m[k].pid);
        if (j >= 0)
            monitor_remove(&st->procs[j].monby, gone.mons.m[k].ref, NULL);
    }
    for (uint32_t k = 0; k < gone.monby.n && !err; k++) {
        monitor m = gone.monby.m[k];
        int j = sys_state_find(st, m.pid);
        if (j < 0)
            continue;
        if (routed(s, pid, m.pid)) {
            if (reachable(st, KEY_NODE(pid), KEY_NODE(m.pid)))
                err = enqueue(s, st, pid, m.pid, 0, SIG_DOWN, m.ref, m.item, reason);
            continue;
        }
        monitor held;
        if (monitor_remove(&st->procs[j].mons, m.ref, &held))
            err = deliver_down(s, st, j, held, reason);
    }
    for (uint32_t k = st->nnodemons; k-- > 0;)
        if (st->nodemons[k].pid == pid) {
            memmove(&st->nodemons[k], &st->nodemons[k + 1],
                    (st->nnodemons - k - 1) * sizeof *st->nodemons);
            st->nnodemons--;
        }
    /* Its tables go to their heir ({'ETS-TRANSFER', Tab, Pid, HeirData})
    ** or are deleted. */
    for (uint32_t k = st->ntables; k-- > 0 && !err;) {
        ets_table *t = &st->tables[k];
        if (t->owner != pid)
            continue;
        int h = t->heir != 0 && t->heir != pid ? sys_state_find(st, t->heir) : -1;
        if (h < 0) {
            sys_state_remove_table(st, k);
            continue;
        }
        ext_buf e = { NULL, 0, 0, 0 };
        ext_u8(&e, 131);
        ext_tuple(&e, 4);
        ext_part(s, &e, s->atoms[ATOM_ETS_TRANSFER]);
        if (t->name != 0)
            ext_part(s, &e, t->name);
        else
            ext_ref_marked(s, &e, t->tid, ETF_REF_TID_MARK);
        ext_pid(s, &e, pid);
        if (t->heir_data != 0)
            ext_part(s, &e, t->heir_data);
        else
            ext_atom(&e, "undefined");
        /* OTP keeps the heir (and its data): a table given away again
        ** comes back to it when the new owner dies. */
        t->owner = t->heir;
        err = deliver_built(s, st, h, &e);
    }
    /* Timers aimed at a pid are cancelled when it dies. */
    for (uint32_t k = st->nchans; k-- > 0;)
        if ((st->chans[k].from & KEY_TIMER) && st->chans[k].to == pid)
            sys_state_remove_channel(st, k);
    proc_free(&gone);
    return err;
}

/* Remembers a death by exit signal for the driver to judge: the policy
** of which reasons are normal (treat_as_normal, funs included) lives in
** Erlang. */
static int record_death(search *s, uint32_t pid, part_id reason)
{
    if (s->ndeaths == s->capdeaths) {
        size_t cap = s->capdeaths ? 2 * s->capdeaths : 4;
        death *grown = realloc(s->deaths, cap * sizeof *grown);
        if (grown == NULL)
            return -1;
        s->deaths = grown;
        s->capdeaths = cap;
    }
    s->deaths[s->ndeaths++] = (death){ pid, reason };
    return 0;
}

/* Delivers the queued exit signals, and those they cause, as OTP does: an
** untrappable kill kills with reason killed; a trapping process gets an
** 'EXIT' message; normal is otherwise ignored; any other reason kills. */
static int deliver_signals(search *s, sys_state *st, signal_queue *sq)
{
    for (size_t k = 0; k < sq->n; k++) {
        exit_signal sig = sq->q[k];
        int q = sys_state_find(st, sig.to);
        if (q < 0)
            continue;
        int err = 0;
        part_id dies = 0;
        if (sig.untrappable)
            dies = s->atoms[ATOM_KILLED];
        else if (st->procs[q].flags & PF_TRAP_EXIT)
            err = deliver_exit_message(s, st, q, sig.from, sig.reason);
        else if (sig.reason == s->atoms[ATOM_NORMAL])
            err = 0;
        else
            dies = sig.reason;
        if (dies != 0)
            err = record_death(s, sig.to, dies) != 0 ||
                  process_dies(s, st, sig.to, dies, sq) != 0;
        if (err)
            return -1;
    }
    sq->n = 0;
    return 0;
}

/* An exit signal that acts at once on `to` (a local link exit, or
** noconnection raised by the receiver's own node). */
static int signal_now(search *s, sys_state *st, signal_queue *sq,
                      exit_signal sig)
{
    return queue_signal(sq, sig) != 0 || deliver_signals(s, st, sq) != 0 ? -1 : 0;
}

/* Index of the process with alias `ref` active, or -1. */
static int alias_owner(const sys_state *st, uint32_t ref)
{
    for (uint32_t i = 0; i < st->nprocs; i++) {
        const proc *p = &st->procs[i];
        if (KEY_NODE(p->pid) != KEY_NODE(ref))
            continue;
        for (uint32_t k = 0; k < p->aliases.n; k++)
            if (p->aliases.m[k].ref == ref)
                return (int)i;
    }
    return -1;
}

/* A message sent to alias ref arrives at st->procs[q], if the alias is
** still active there; a reply alias is then used up. */
static int deliver_via_alias(sys_state *st, int q, uint32_t ref, part_id msg)
{
    proc *p = &st->procs[q];
    for (uint32_t k = 0; k < p->aliases.n; k++) {
        if (p->aliases.m[k].ref != ref)
            continue;
        uint32_t mode = p->aliases.m[k].pid;
        if (mode == ALIAS_REPLY || mode == ALIAS_REPLY_DEMONITOR)
            monitor_remove(&p->aliases, ref, NULL);
        if (mode == ALIAS_REPLY_DEMONITOR) {
            monitor held;
            if (monitor_remove(&p->mons, ref, &held)) {
                int t = sys_state_find(st, held.pid);
                if (t >= 0)
                    monitor_remove(&st->procs[t].monby, ref, NULL);
            }
        }
        if (sys_state_append(st, (uint32_t)q, msg) != 0)
            return -1;
        return 0;
    }
    return 0;
}

/* timeouts_when_idle: a receive timeout fired after `elapsed` ms of an
** idle system, so every other pending receive timeout has that much less
** time left (the one that fired has started anew, or ended). */
static void pass_time(sys_state *st, uint32_t fired, uint32_t elapsed)
{
    for (size_t k = 0; k < st->nprocs; k++) {
        proc *q = &st->procs[k];
        if (q->pid == fired || q->status != PROC_WAITING || !(q->flags & PF_TIMEOUT) ||
            (q->flags & PF_TIMEOUT_ZERO))
            continue;
        uint32_t left = q->flags >> PF_TIMEOUT_SHIFT;
        left = left > elapsed ? left - elapsed : 0;
        q->flags = (q->flags & ((1u << PF_TIMEOUT_SHIFT) - 1)) | (left << PF_TIMEOUT_SHIFT);
    }
}

/* Was `pid` spawned by the step being applied?  A spawn_monitor's monitor
** of it travels with the spawn request (one atomic operation in OTP), so
** it is set up at once; a monitor made after a plain spawn is a signal of
** its own, which may arrive after the new process has ended (noproc). */
static int spawned_now(const search *s, uint32_t pid)
{
    for (size_t k = 0; k < s->nallocated; k++)
        if (s->allocated[k] == pid)
            return 1;
    return 0;
}

static int node_down(search *s, sys_state *st, uint32_t a, signal_queue *sq);

static int apply_effects(search *s, sys_state *st, run_result *res,
                         signal_queue *sq)
{
    uint32_t me = s->run_pid, mynode = KEY_NODE(me);
    for (size_t e = 0; e < res->neffects; e++) {
        effect *ef = &res->effects[e];
        int self = sys_state_find(st, me);
        if (self < 0)
            return 0;       /* killed by its own earlier effects */
        part_id term = 0, term2 = 0;
        if (ef->term.etf != NULL && (term = intern_term(s, &ef->term)) == 0)
            return -1;
        if (ef->term2.etf != NULL && (term2 = intern_term(s, &ef->term2)) == 0)
            return -1;
        part_id term3 = 0;
        if (ef->term3.etf != NULL && (term3 = intern_term(s, &ef->term3)) == 0)
            return -1;
        uint32_t target = ef->pid, tnode = KEY_NODE(target);
        int q = sys_state_find(st, target);
        int reach = reachable(st, mynode, tnode);
        if ((ef->kind == EFFECT_SEND || ef->kind == EFFECT_SEND_NAME ||
             ef->kind == EFFECT_ETS_PUT ||
             ef->kind == EFFECT_SPAWN || ef->kind == EFFECT_LINK ||
             ef->kind == EFFECT_UNLINK || ef->kind == EFFECT_EXIT ||
             ef->kind == EFFECT_REGISTER || ef->kind == EFFECT_MONITOR ||
             ef->kind == EFFECT_TIMER) && tnode >= s->nodes.n)
            return -1;
        switch (ef->kind) {
        case EFFECT_SPAWN: {
            if (q >= 0 || term == 0 || KEY_NUM(target) == KEY_BY_NAME)
                return -1;
            if (!reach) {       /* the node is down: no process */
                if (ef->link &&
                    signal_now(s, st, sq, (exit_signal){ target, me,
                                                         s->atoms[ATOM_NOCONNECTION], 0 }) != 0)
                    return -1;
                break;
            }
            /* erlang(3): a spawned process, remote too, gets its parent's
            ** group leader. */
            proc child = { .pid = target, .status = PROC_INIT, .cont = term,
                           .mailbox = s->empty_mailbox, .gl = st->procs[self].gl };
            if (ef->link && proc_link_add(&child, me) != 0)
                return -1;
            if (sys_state_insert(st, &child) < 0) {
                free(child.links);
                return -1;
            }
            self = sys_state_find(st, me);
            if (ef->link && proc_link_add(&st->procs[self], target) != 0)
                return -1;
            break;
        }
        case EFFECT_SEND: {
            if (term == 0)
                return -1;
            if (q < 0 || !reach)
                break;              /* to a dead process: a no-op */
            if (routed(s, me, target)) {
                if (enqueue(s, st, me, target, 0, SIG_MSG, term, 0, 0) != 0)
                    return -1;
                break;
            }
            if (sys_state_append(st, (uint32_t)q, term) != 0)
                return -1;
            break;
        }
        case EFFECT_SEND_NAME: {
            if (term == 0 || term2 == 0 || KEY_NUM(target) != KEY_BY_NAME)
                return -1;
            if (!reach)
                break;
            if (tnode != mynode || s->cfg.delivery_ether) {
                if (enqueue(s, st, me, target, term2, SIG_MSG, term, 0, 0) != 0)
                    return -1;
                break;
            }
            int r = sys_state_find_name(st, term2, tnode);
            if (r >= 0) {
                if (sys_state_append(st, (uint32_t)r, term) != 0)
                    return -1;
            }
            break;
        }
        case EFFECT_LINK:
            if (target == me)
                break;
            if (!reach) {
                if (signal_now(s, st, sq, (exit_signal){ target, me,
                                                         s->atoms[ATOM_NOCONNECTION], 0 }) != 0)
                    return -1;
                break;
            }
            if (routed(s, me, target)) {
                if (!has_link(&st->procs[self], target) &&
                    (proc_link_add(&st->procs[self], target) != 0 ||
                     enqueue(s, st, me, target, 0, SIG_LINK, 0, 0, 0) != 0))
                    return -1;
                break;
            }
            if (q >= 0 &&
                (proc_link_add(&st->procs[q], me) != 0 ||
                 proc_link_add(&st->procs[self], target) != 0))
                return -1;
            break;
        case EFFECT_UNLINK:
            if (!has_link(&st->procs[self], target))
                break;
            proc_link_remove(&st->procs[self], target);
            if (routed(s, me, target)) {
                if (q >= 0 && reach &&
                    enqueue(s, st, me, target, 0, SIG_UNLINK, 0, 0, 0) != 0)
                    return -1;
            } else if (q >= 0) {
                proc_link_remove(&st->procs[q], me);
            }
            break;
        case EFFECT_EXIT:
            if (term == 0)
                return -1;
            if (routed(s, me, target)) {
                if (q >= 0 && reach &&
                    enqueue(s, st, me, target, 0, SIG_EXIT, term,
                            term == s->atoms[ATOM_KILL] ? SIGF_KILL : 0, 0) != 0)
                    return -1;
                break;
            }
            if (signal_now(s, st, sq, (exit_signal){ me, target, term,
                                                     term == s->atoms[ATOM_KILL] }) != 0)
                return -1;
            break;
        case EFFECT_REGISTER:
            if (term == 0)
                return -1;
            if (q >= 0 && tnode == mynode && sys_state_find_name(st, term, mynode) < 0)
                st->procs[q].name = term;
            break;
        case EFFECT_UNREGISTER: {
            int r = term ? sys_state_find_name(st, term, mynode) : -1;
            if (r >= 0)
                st->procs[r].name = 0;
            break;
        }
        case EFFECT_MONITOR: {
            monitor held = { ef->ref, target, term };
            if (!reach) {
                if (deliver_down(s, st, self, held, s->atoms[ATOM_NOCONNECTION]) != 0)
                    return -1;
                break;
            }
            if (KEY_NUM(target) == KEY_BY_NAME) {
                if (term2 == 0 || monitor_add(&st->procs[self].mons, held) != 0 ||
                    enqueue(s, st, me, target, term2, SIG_MONITOR, ef->ref, term, 0) != 0)
                    return -1;
                break;
            }
            if (routed(s, me, target) && !(ef->link && spawned_now(s, target))) {
                if (monitor_add(&st->procs[self].mons, held) != 0 ||
                    enqueue(s, st, me, target, 0, SIG_MONITOR, ef->ref, term, 0) != 0)
                    return -1;
                break;
            }
            if (q < 0) {
                if (deliver_down(s, st, self, held, s->atoms[ATOM_NOPROC]) != 0)
                    return -1;
            } else if (target != me) {
                if (monitor_add(&st->procs[self].mons, held) != 0)
                    return -1;
                q = sys_state_find(st, target);
                monitor on = { ef->ref, me, term };
                if (monitor_add(&st->procs[q].monby, on) != 0)
                    return -1;
            }
            break;
        }
        case EFFECT_DEMONITOR: {
            monitor held;
            if (monitor_remove(&st->procs[self].mons, ef->ref, &held)) {
                int t = sys_state_find(st, held.pid);
                if (t >= 0 && routed(s, me, held.pid)) {
                    if (reachable(st, mynode, KEY_NODE(held.pid)) &&
                        enqueue(s, st, me, held.pid, 0, SIG_DEMONITOR, ef->ref, 0, 0) != 0)
                        return -1;
                } else if (t >= 0) {
                    monitor_remove(&st->procs[t].monby, ef->ref, NULL);
                }
            }
            drop_monitor_alias(&st->procs[self], ef->ref);
            if (ef->link && flush_down(s, st, self, ef->ref) != 0)
                return -1;
            break;
        }
        case EFFECT_ALIAS:
            if (ef->link < ALIAS_EXPLICIT || ef->link > ALIAS_REPLY ||
                monitor_add(&st->procs[self].aliases,
                            (monitor){ ef->ref, (uint32_t)ef->link, 0 }) != 0)
                return -1;
            break;
        case EFFECT_UNALIAS:
            monitor_remove(&st->procs[self].aliases, ef->ref, NULL);
            break;
        case EFFECT_SEND_ALIAS: {
            if (term == 0)
                return -1;
            int owner = alias_owner(st, ef->ref);
            if (owner < 0 || !reachable(st, mynode, KEY_NODE(st->procs[owner].pid)))
                break;          /* not an active alias: dropped, as in OTP */
            uint32_t to = st->procs[owner].pid;
            if (routed(s, me, to)) {
                if (enqueue(s, st, me, to, 0, SIG_ALIAS_MSG, term, ef->ref, 0) != 0)
                    return -1;
            } else if (deliver_via_alias(st, owner, ef->ref, term) != 0) {
                return -1;
            }
            break;
        }
        case EFFECT_TIMER: {
            if (term == 0 || KEY_NODE(ef->ref) != mynode ||
                (KEY_NUM(target) == KEY_BY_NAME && term2 == 0))
                return -1;
            if (KEY_NUM(target) != KEY_BY_NAME && q < 0)
                break;          /* aimed at a dead process: cancelled */
            if (enqueue(s, st, ef->ref | KEY_TIMER, target, term2, SIG_MSG, term,
                        (uint32_t)ef->link, 0) != 0)
                return -1;
            break;
        }
        case EFFECT_CANCEL_TIMER:
            for (uint32_t k = 0; k < st->nchans; k++)
                if (st->chans[k].from == (ef->ref | KEY_TIMER)) {
                    sys_state_remove_channel(st, k);
                    break;
                }
            break;
        case EFFECT_KEEP_MESSAGE:
            break;
        case EFFECT_UNIQUE:
            if (ef->ref > st->uniq)
                st->uniq = ef->ref;
            break;
        case EFFECT_ETS_PUT: {
            if (term == 0 || KEY_NODE(ef->ref) != mynode || ef->link < 0)
                return -1;
            ets_table t = { ef->ref, target, (uint32_t)ef->link, term3, term2, term };
            if (sys_state_find(st, target) < 0)
                break;          /* the owner is gone: so is the table */
            if (sys_state_put_table(st, &t) != 0)
                return -1;
            break;
        }
        case EFFECT_HALT:
            /* The running process goes with its node: the effects after
            ** this one are dropped by the check at the loop's head. */
            if (node_down(s, st, mynode, sq) != 0)
                return -1;
            break;
        case EFFECT_APP_ENV:
            if (term == 0)
                return -1;
            st->app_env = term;
            break;
        case EFFECT_ETS_DELETE: {
            int t = sys_state_find_table(st, ef->ref);
            if (t >= 0)
                sys_state_remove_table(st, (uint32_t)t);
            break;
        }
        case EFFECT_MONITOR_NODE:
            if (target >= s->nodes.n)
                return -1;
            if (!ef->link) {
                if (sys_state_node_monitor(st, me, target, -1) != 0)
                    return -1;
            } else if (!reachable(st, mynode, target)) {
                if (deliver_nodedown(s, st, self, target) != 0)
                    return -1;
            } else if (target != mynode &&
                       sys_state_node_monitor(st, me, target, 1) != 0) {
                return -1;
            }
            break;
        case EFFECT_GROUP_LEADER:
            /* The runtime refused a dead target (badarg, as the VM). */
            if (q >= 0)
                st->procs[q].gl = ef->ref;
            break;
        case EFFECT_TRAP_EXIT:
            if (ef->link)
                st->procs[self].flags |= PF_TRAP_EXIT;
            else
                st->procs[self].flags &= ~(uint32_t)PF_TRAP_EXIT;
            break;
        default:
            return -1;
        }
    }
    return 0;
}

/*
** Transitions computed here, without Erlang: delivering the oldest signal
** of an ether channel, and injecting a fault.  Each builds its own label
** ({'$mce_deliver', From, To, Signal} or {'$mce_fault', Fault}).
*/

/* Delivers the head signal of channel ci of st. */
static int deliver_channel(search *s, sys_state *st, uint32_t ci, ext_buf *lb,
                           signal_queue *sq)
{
    channel c = st->chans[ci];
    uint32_t sig[4];
    if (channel_head(s->ps, &c, sig) != 0 || sys_state_dequeue(s->ps, st, ci) != 0)
        return -1;
    int q = KEY_NUM(c.to) == KEY_BY_NAME
                ? sys_state_find_name(st, c.name, KEY_NODE(c.to))
                : sys_state_find(st, c.to);
    uint32_t to = q >= 0 ? st->procs[q].pid : c.to;
    ext_tuple(lb, 4);
    if (c.from & KEY_TIMER) {
        ext_atom(lb, "$mce_timer");
        ext_ref(s, lb, c.from & ~KEY_TIMER);
    } else {
        ext_atom(lb, "$mce_deliver");
        ext_target(s, lb, c.from, KEY_NUM(c.from) == KEY_BY_NAME ? c.name : 0);
    }
    ext_target(s, lb, c.to, c.name);
    switch (sig[0]) {
    case SIG_ALIAS_MSG:
        ext_tuple(lb, 2);
        ext_atom(lb, "message");
        ext_part(s, lb, sig[1]);
        return q >= 0 ? deliver_via_alias(st, q, sig[2], sig[1]) : 0;
    case SIG_MSG:
        ext_tuple(lb, 2);
        ext_atom(lb, "message");
        ext_part(s, lb, sig[1]);
        if (q >= 0) {
            if (sys_state_append(st, (uint32_t)q, sig[1]) != 0)
                return -1;
        }
        return 0;
    case SIG_EXIT:
        ext_tuple(lb, 2);
        ext_atom(lb, (sig[2] & SIGF_LINK) ? "link_exit" : "exit");
        ext_part(s, lb, sig[1]);
        if (q < 0)
            return 0;
        if (sig[2] & SIGF_LINK) {
            if (!has_link(&st->procs[q], c.from))
                return 0;       /* unlinked meanwhile: ignored, as in OTP */
            proc_link_remove(&st->procs[q], c.from);
        }
        return signal_now(s, st, sq, (exit_signal){ c.from, to, sig[1],
                                                    (sig[2] & SIGF_KILL) != 0 });
    case SIG_LINK:
        ext_atom(lb, "link");
        if (q >= 0)
            return proc_link_add(&st->procs[q], c.from);
        return enqueue(s, st, c.to, c.from, 0, SIG_EXIT, s->atoms[ATOM_NOPROC],
                       SIGF_LINK, 0);
    case SIG_UNLINK:
        ext_atom(lb, "unlink");
        if (q >= 0)
            proc_link_remove(&st->procs[q], c.from);
        return 0;
    case SIG_MONITOR: {
        ext_tuple(lb, 2);
        ext_atom(lb, "monitor");
        ext_ref(s, lb, sig[1]);
        int h = sys_state_find(st, c.from);
        if (h < 0 || !holds_monitor(&st->procs[h], sig[1]))
            return 0;           /* demonitored, or the watcher died */
        if (q < 0)
            return enqueue(s, st, c.to, c.from, c.name, SIG_DOWN, sig[1], sig[2],
                           s->atoms[ATOM_NOPROC]);
        for (uint32_t k = 0; k < st->procs[h].mons.n; k++)
            if (st->procs[h].mons.m[k].ref == sig[1])
                st->procs[h].mons.m[k].pid = to;    /* a name is resolved */
        return monitor_add(&st->procs[q].monby, (monitor){ sig[1], c.from, sig[2] });
    }
    case SIG_DEMONITOR:
        ext_tuple(lb, 2);
        ext_atom(lb, "demonitor");
        ext_ref(s, lb, sig[1]);
        if (q >= 0)
            monitor_remove(&st->procs[q].monby, sig[1], NULL);
        return 0;
    case SIG_DOWN: {
        ext_tuple(lb, 3);
        ext_atom(lb, "down");
        ext_ref(s, lb, sig[1]);
        ext_part(s, lb, sig[3]);
        monitor held;
        if (q >= 0 && monitor_remove(&st->procs[q].mons, sig[1], &held))
            return deliver_down(s, st, q, held, sig[3]);
        return 0;
    }
    }
    return -1;
}


/* The idx-th fault the options allow in st, in a fixed order; 0: none. */
static int nth_fault(const search *s, const sys_state *st, uint32_t idx,
                     fault *out)
{
    uint32_t n = s->nodes.n;
    if (st->crashes < s->cfg.max_crashes)
        for (uint32_t a = 0; a < n; a++)
            if (!(st->down >> a & 1) && idx-- == 0) {
                *out = (fault){ FAULT_CRASH, a, 0 };
                return 1;
            }
    if (st->disconnects < s->cfg.max_disconnects)
        for (uint32_t a = 0; a < n; a++)
            for (uint32_t b = a + 1; b < n; b++)
                if (reachable(st, a, b) && idx-- == 0) {
                    *out = (fault){ FAULT_DISCONNECT, a, b };
                    return 1;
                }
    for (uint32_t k = 0; k < st->ndisc; k++)
        if (idx-- == 0) {
            *out = (fault){ FAULT_RECONNECT, st->disc[k] >> 8, st->disc[k] & 0xff };
            return 1;
        }
    if (st->kills < s->cfg.max_kills)
        for (uint32_t k = 0; k < st->nprocs; k++)
            if (idx-- == 0) {
                *out = (fault){ FAULT_KILL, st->procs[k].pid, 0 };
                return 1;
            }
    return 0;
}

/* Nodes x and y lose sight of each other when a node crashes (cut(n, n):
** n against every other node) or two nodes disconnect (cut(a, b)). */
static int cut(uint32_t a, uint32_t b, uint32_t x, uint32_t y)
{
    if (a == b)
        return x != y && (x == a || y == a);
    return (x == a && y == b) || (x == b && y == a);
}

/* What the surviving side sees when nodes a and b lose each other (or node
** a crashes, a == b): links across give noconnection exit signals,
** monitors across 'DOWN' with noconnection, node monitors {nodedown, N};
** signals in transit across are lost. */
static int sever(search *s, sys_state *st, uint32_t a, uint32_t b,
                 signal_queue *sq)
{
    for (uint32_t i = 0; i < st->nprocs; i++) {
        proc *p = &st->procs[i];
        uint32_t pn = KEY_NODE(p->pid);
        for (uint32_t k = p->nlinks; k-- > 0;) {
            uint32_t other = p->links[k];
            if (!cut(a, b, pn, KEY_NODE(other)))
                continue;
            proc_link_remove(p, other);
            if (queue_signal(sq, (exit_signal){ other, p->pid,
                                                s->atoms[ATOM_NOCONNECTION], 0 }) != 0)
                return -1;
        }
        for (uint32_t k = p->monby.n; k-- > 0;)
            if (cut(a, b, pn, KEY_NODE(p->monby.m[k].pid)))
                monitor_remove(&p->monby, p->monby.m[k].ref, NULL);
        for (uint32_t k = p->mons.n; k-- > 0;) {
            monitor m = p->mons.m[k];
            if (!cut(a, b, pn, KEY_NODE(m.pid)))
                continue;
            monitor_remove(&p->mons, m.ref, NULL);
            if (deliver_down(s, st, (int)i, m, s->atoms[ATOM_NOCONNECTION]) != 0)
                return -1;
            p = &st->procs[i];
        }
    }
    for (uint32_t k = st->nnodemons; k-- > 0;) {
        node_monitor nm = st->nodemons[k];
        if (!cut(a, b, KEY_NODE(nm.pid), nm.node))
            continue;
        int w = sys_state_find(st, nm.pid);
        for (uint32_t c = 0; w >= 0 && c < nm.count; c++)
            if (deliver_nodedown(s, st, w, nm.node) != 0)
                return -1;
        memmove(&st->nodemons[k], &st->nodemons[k + 1],
                (st->nnodemons - k - 1) * sizeof *st->nodemons);
        st->nnodemons--;
    }
    for (uint32_t k = st->nchans; k-- > 0;)
        if (cut(a, b, KEY_NODE(st->chans[k].from), KEY_NODE(st->chans[k].to)))
            sys_state_remove_channel(st, k);
    return deliver_signals(s, st, sq);
}

static void ext_node_atom(search *s, ext_buf *e, uint32_t node)
{
    ext_part(s, e, s->node_atoms[node]);
}

/* Node a stops (a crash, or halt/0 in its code): its processes, tables
** and channels vanish and the survivors see it go. */
static int node_down(search *s, sys_state *st, uint32_t a, signal_queue *sq)
{
    st->down |= (uint64_t)1 << a;
    for (uint32_t k = st->nchans; k-- > 0;)
        if (KEY_NODE(st->chans[k].from) == a || KEY_NODE(st->chans[k].to) == a)
            sys_state_remove_channel(st, k);
    for (uint32_t k = st->ntables; k-- > 0;)
        if (KEY_NODE(st->tables[k].tid) == a)
            sys_state_remove_table(st, k);
    for (uint32_t k = st->nprocs; k-- > 0;)
        if (KEY_NODE(st->procs[k].pid) == a)
            sys_state_remove(st, k);
    for (uint32_t k = st->nnodemons; k-- > 0;)
        if (KEY_NODE(st->nodemons[k].pid) == a) {
            memmove(&st->nodemons[k], &st->nodemons[k + 1],
                    (st->nnodemons - k - 1) * sizeof *st->nodemons);
            st->nnodemons--;
        }
    for (uint32_t k = st->ndisc; k-- > 0;)
        if (st->disc[k] >> 8 == a || (st->disc[k] & 0xff) == a)
            sys_state_set_disconnected(st, st->disc[k] >> 8, st->disc[k] & 0xff, 0);
    return sever(s, st, a, a, sq);
}

static int apply_fault(search *s, sys_state *st, const fault *f, ext_buf *lb,
                       signal_queue *sq)
{
    ext_tuple(lb, 2);
    ext_atom(lb, "$mce_fault");
    switch (f->kind) {
    case FAULT_CRASH:
        ext_tuple(lb, 2);
        ext_atom(lb, "crash_node");
        ext_node_atom(s, lb, f->a);
        st->crashes++;
        return node_down(s, st, f->a, sq);
    case FAULT_DISCONNECT:
        ext_tuple(lb, 3);
        ext_atom(lb, "disconnect");
        ext_node_atom(s, lb, f->a);
        ext_node_atom(s, lb, f->b);
        st->disconnects++;
        if (sys_state_set_disconnected(st, f->a, f->b, 1) != 0)
            return -1;
        return sever(s, st, f->a, f->b, sq);
    case FAULT_RECONNECT:
        ext_tuple(lb, 3);
        ext_atom(lb, "reconnect");
        ext_node_atom(s, lb, f->a);
        ext_node_atom(s, lb, f->b);
        return sys_state_set_disconnected(st, f->a, f->b, 0);
    case FAULT_KILL:
        ext_tuple(lb, 2);
        ext_atom(lb, "kill");
        ext_pid(s, lb, f->a);
        st->kills++;
        if (signal_now(s, st, sq, (exit_signal){ f->a, f->a, s->atoms[ATOM_KILL], 1 }) != 0)
            return -1;
        /* The victim's death is the fault the user asked for, not a
        ** violation; those it takes along through links are judged. */
        if (s->ndeaths > 0 && s->deaths[0].pid == f->a)
            memmove(&s->deaths[0], &s->deaths[1], --s->ndeaths * sizeof *s->deaths);
        return 0;
    }
    return -1;
}

static int record_successor(search *s, part_id state, uint8_t *label,
                            size_t label_len, int stop, request *req);
static int commit_lossy(search *s, sys_state *st, uint8_t *label,
                        size_t label_len, int stop, request *req);

/* Stores a successor of the state being expanded: counts the transition,
** pushes or queues the state if new (or if the search stops at it), and
** applies the limits.  Takes st (cleared) and the label (kept or freed).
** 0: go on; 1: *req is final. */
static int commit_successor(search *s, sys_state *st, uint8_t *label,
                            size_t label_len, int stop, request *req)
{
    if (s->vis != NULL)
        return commit_lossy(s, st, label, label_len, stop, req);
    int is_new;
    part_id root = sys_state_encode(s->ps, st, &is_new);
    sys_state_clear(st);
    if (root == 0) {
        free(label);
        return fail(req, "out of memory");
    }
    s->st.transitions++;
    if (is_new)
        s->st.states++;
    if (s->cfg.expand_only)
        return record_successor(s, root, label, label_len, stop, req);
    if (is_new || stop) {
        if (discover(s, root, label, label_len, stop) != 0) {
            free(label);
            return fail(req, "out of memory");
        }
    } else {
        free(label);
    }
    memset(req, 0, sizeof *req);
    if (stop) {
        s->finished = 1;
        s->pending = req->kind = REQ_STOPPED;
        return 1;
    }
    if (s->cfg.max_states != 0 && s->st.states >= s->cfg.max_states) {
        s->finished = 1;
        s->pending = req->kind = REQ_LIMIT_STATES;
        return 1;
    }
    return 0;
}

/* commit_successor with a lossy table: the root vector is not interned,
** only recorded in the table; a new state's frame keeps it.  Depth-first
** only (search_new refuses the other orders). */
static int commit_lossy(search *s, sys_state *st, uint8_t *label,
                        size_t label_len, int stop, request *req)
{
    uint32_t len;
    uint8_t *root = sys_state_encode_root(s->ps, st, &len);
    sys_state_clear(st);
    int is_new = root != NULL ? visited_insert(s->vis, root, len) : -1;
    if (is_new < 0) {
        free(root);
        free(label);
        return fail(req, "out of memory");
    }
    s->st.transitions++;
    if (is_new)
        s->st.states++;
    if (is_new || stop) {
        if (push_root(s, root, len, label, label_len) != 0) {
            free(root);
            free(label);
            return fail(req, "out of memory");
        }
    } else {
        free(root);
        free(label);
    }
    memset(req, 0, sizeof *req);
    if (stop) {
        s->finished = 1;
        s->pending = req->kind = REQ_STOPPED;
        return 1;
    }
    if (s->cfg.max_states != 0 && s->st.states >= s->cfg.max_states) {
        s->finished = 1;
        s->pending = req->kind = REQ_LIMIT_STATES;
        return 1;
    }
    return 0;
}

/* expand_only: lists a successor (taking the label).  A stop ends the
** expansion at it.  0: go on; 1: *req is final. */
static int record_successor(search *s, part_id state, uint8_t *label,
                            size_t label_len, int stop, request *req)
{
    if (s->nexp == s->capexp) {
        size_t cap = s->capexp ? 2 * s->capexp : 16;
        expansion *grown = realloc(s->exp, cap * sizeof *grown);
        if (grown == NULL) {
            free(label);
            return fail(req, "out of memory");
        }
        s->exp = grown;
        s->capexp = cap;
    }
    s->exp[s->nexp++] = (expansion){ state, s->mover, label, label_len, stop };
    if (!stop)
        return 0;
    memset(req, 0, sizeof *req);
    s->exp_deadlock = 0;
    s->pending = req->kind = REQ_EXPANDED;
    return 1;
}

/* A successor: with safety monitors it waits for their verdict (the state
** and label move into the search; *req becomes REQ_OBSERVE), else it is
** committed at once.  0: go on; 1: *req is final or a request. */
static int successor(search *s, sys_state *st, uint8_t *label, size_t label_len,
                     int stop, request *req)
{
    if (sys_state_flush(s->ps, st) != 0) {
        sys_state_clear(st);
        free(label);
        return fail(req, "out of memory");
    }
    int judge = s->cfg.judge_deaths && s->ndeaths > 0 && !stop;
    if (!s->cfg.observe && !judge)
        return commit_successor(s, st, label, label_len, stop, req);
    sys_state_clear(&s->obs_st);
    s->obs_st = *st;
    memset(st, 0, sizeof *st);
    s->obs_label = label;
    s->obs_label_len = label_len;
    s->obs_stop = stop;
    s->obs_pending = 1;
    s->deaths_pending = judge;
    memset(req, 0, sizeof *req);
    req->kind = s->pending = judge ? REQ_DEATHS : REQ_OBSERVE;
    req->observer = s->obs_st.observer;
    return 1;
}

int search_answer_deaths(search *s, int violation, request *req)
{
    if (s->pending != REQ_DEATHS || !s->deaths_pending || s->finished)
        return fail(req, "no deaths are waiting for a verdict");
    s->deaths_pending = 0;
    if (!violation && s->cfg.observe) {
        memset(req, 0, sizeof *req);
        req->kind = s->pending = REQ_OBSERVE;
        req->observer = s->obs_st.observer;
        return 0;
    }
    s->obs_pending = 0;
    s->pending = 0;
    uint8_t *label = s->obs_label;
    s->obs_label = NULL;
    int r = commit_successor(s, &s->obs_st, label, s->obs_label_len,
                             s->obs_stop || violation, req);
    if (r != 0)
        return r < 0 ? -1 : 0;
    return next_request(s, req);
}

size_t search_deaths(const search *s, const death **out)
{
    *out = s->deaths;
    return s->deaths_pending ? s->ndeaths : 0;
}

int search_answer_observe(search *s, int verdict, term_in *observer, request *req)
{
    if (s->pending != REQ_OBSERVE || !s->obs_pending || s->finished)
        return fail(req, "no observation is outstanding");
    s->obs_pending = 0;
    s->pending = 0;
    uint8_t *label = s->obs_label;
    s->obs_label = NULL;
    int r;
    if (verdict == OBSERVE_SKIP) {
        /* The monitor prunes the successor: the path ends before it. */
        sys_state_clear(&s->obs_st);
        free(label);
        s->st.transitions++;
        r = 0;
    } else {
        if (verdict == OBSERVE_OK) {
            part_id obs = observer != NULL && observer->etf ? intern_term(s, observer) : 0;
            if (obs == 0) {
                sys_state_clear(&s->obs_st);
                free(label);
                return fail(req, "the monitors' state is not an encodable term");
            }
            s->obs_st.observer = obs;
        }
        r = commit_successor(s, &s->obs_st, label, s->obs_label_len,
                             s->obs_stop || verdict == OBSERVE_VIOLATION, req);
    }
    if (r != 0)
        return r < 0 ? -1 : 0;
    return next_request(s, req);
}

/* Builds the successor of the top state by a delivery (f == NULL: channel
** ci) or a fault, and pushes it if new.  0: go on; 1: *req is final
** (a limit); -1: failure (*req says why). */
static int c_transition(search *s, uint32_t ci, const fault *f, request *req)
{
    if (f == NULL) {
        const channel *c = &s->cur.chans[ci];
        s->mover = (agent){ AGENT_CHAN, c->from, c->to, c->name };
    } else {
        s->mover = (agent){ AGENT_NONE, 0, 0, 0 };
    }
    s->ndeaths = 0;
    sys_state st;
    if (sys_state_copy(&st, &s->cur) != 0)
        return fail(req, "out of memory");
    ext_buf lb = { NULL, 0, 0, 0 };
    ext_u8(&lb, 131);
    signal_queue sq = { NULL, 0, 0 };
    int err = f == NULL ? deliver_channel(s, &st, ci, &lb, &sq)
                        : apply_fault(s, &st, f, &lb, &sq);
    free(sq.q);
    if (err || lb.err) {
        sys_state_clear(&st);
        free(lb.b);
        return fail(req, "out of memory, or a malformed ether");
    }
    return successor(s, &st, lb.b, lb.n, 0, req);
}

int search_answer_run(search *s, run_result *res, request *req)
{
    if (s->pending != REQ_RUN || s->finished) {
        free_result(res);
        return fail(req, "no run is outstanding");
    }
    s->ndeaths = 0;
    sys_state st;
    if (sys_state_copy(&st, &s->cur) != 0) {
        free_result(res);
        return fail(req, "out of memory");
    }
    const char *why = "out of memory";
    int self = sys_state_find(&st, s->run_pid);
    if (self < 0) {
        why = "running process vanished";
        goto error;
    }
    int keep = 0;
    for (size_t k = 0; k < res->neffects; k++)
        keep |= res->effects[k].kind == EFFECT_KEEP_MESSAGE;
    if (s->run == RUN_RECEIVE && !keep) {
        part_id mb = mailbox_remove(s->ps, st.procs[self].mailbox,
                                    s->run_msg_index);
        if (mb == 0)
            goto error;
        st.procs[self].mailbox = mb;
    }
    signal_queue sq = { NULL, 0, 0 };
    if (apply_effects(s, &st, res, &sq) != 0) {
        free(sq.q);
        why = "malformed effects (bad term or pid)";
        goto error;
    }
    self = sys_state_find(&st, s->run_pid);
    if (self < 0) {
        /* Killed by its own effects (exit/2 to a linked process that
        ** propagated back): nothing more to record. */
    } else if (res->outcome == OUTCOME_WAIT || res->outcome == OUTCOME_CHOICE) {
        part_id cont = intern_term(s, &res->cont);
        part_id dict = res->dict.etf ? intern_term(s, &res->dict) : 0;
        if (cont == 0 || (res->dict.etf && dict == 0)) {
            free(sq.q);
            why = "continuation is not an encodable term";
            goto error;
        }
        uint32_t keep = st.procs[self].flags & PF_TRAP_EXIT;
        if (res->outcome == OUTCOME_CHOICE) {
            if (res->alternatives == 0 || res->alternatives > 0xffff) {
                free(sq.q);
                why = "a choice needs 1 to 65535 alternatives";
                goto error;
            }
            st.procs[self].status = PROC_CHOICE;
            st.procs[self].flags = keep | (res->alternatives << PF_CHOICE_SHIFT);
        } else {
            st.procs[self].status = PROC_WAITING;
            st.procs[self].flags = keep | (res->has_timeout ? PF_TIMEOUT : 0) |
                                   (res->has_timeout == 2 ? PF_TIMEOUT_ZERO : 0) |
                                   (s->cfg.timeouts_when_idle && res->has_timeout == 1
                                    ? res->timeout_ms << PF_TIMEOUT_SHIFT : 0);
        }
        st.procs[self].cont = cont;
        st.procs[self].dict = dict;
    } else {
        part_id reason = res->reason.etf ? intern_term(s, &res->reason)
                         : s->atoms[res->normal ? ATOM_NORMAL : ATOM_KILLED];
        if (reason == 0 || process_dies(s, &st, s->run_pid, reason, &sq) != 0 ||
            deliver_signals(s, &st, &sq) != 0) {
            free(sq.q);
            goto error;
        }
    }
    free(sq.q);
    if (s->run_elapsed > 0)
        pass_time(&st, s->run_pid, s->run_elapsed);
    s->pending = 0;
    uint8_t *label = res->label;
    size_t label_len = res->label_len;
    int stop = res->stop;
    res->label = NULL;
    free_result(res);
    s->mover = (agent){ AGENT_PROC, s->run_pid, 0, 0 };
    int r = successor(s, &st, label, label_len, stop, req);
    if (r != 0)
        return r < 0 ? -1 : 0;
    return next_request(s, req);
error:
    sys_state_clear(&st);
    free_result(res);
    return fail(req, why);
}

/*
** Least-fresh numbering.  The smallest free number of a node is at most one
** more than the number of keys of that node in use, so a first pass counts
** them and the bitmap of the second pass is bounded by that count: a term
** naming pid 4000000 must not make the bitmap 4 MB.
*/
typedef struct key_marks {
    uint32_t node;
    int refs;             /* marking refs (tagged keys), not pids */
    uint32_t region;      /* refs: the creator region marked */
    int counting;         /* first pass */
    size_t count, limit, cap;
    uint8_t *used;
    int err;
} key_marks;

static void mark(key_marks *m, uint32_t key)
{
    int is_ref = (key & ETF_REF_TAG) != 0;
    key &= ~ETF_REF_TAG;
    if (is_ref != m->refs || KEY_NODE(key) != m->node || m->err)
        return;
    uint32_t num = KEY_NUM(key);
    if (m->refs) {
        if (num >> ETF_REF_COUNTER_BITS != m->region)
            return;
        num &= ETF_REF_COUNTER_LIMIT - 1;
    }
    if (m->counting) {
        m->count++;
        return;
    }
    if (num >= m->limit)
        return;
    if (num >= m->cap) {
        size_t ncap = m->cap ? m->cap : 64;
        while (ncap <= num)
            ncap *= 2;
        uint8_t *grown = realloc(m->used, ncap);
        if (grown == NULL) {
            m->err = 1;
            return;
        }
        memset(grown + m->cap, 0, ncap - m->cap);
        m->used = grown;
        m->cap = ncap;
    }
    m->used[num] = 1;
}

static void mark_term(key_marks *m, const part_store *ps, part_id id)
{
    const part *t = id ? part_store_get(ps, id) : NULL;
    for (uint32_t k = 0; t != NULL && k < t->npids; k++)
        mark(m, t->pids[k]);
}

static void mark_monitors(key_marks *m, const monitor_set *ms)
{
    for (uint32_t k = 0; k < ms->n; k++) {
        mark(m, ms->m[k].ref | ETF_REF_TAG);
        mark(m, ms->m[k].pid);
    }
}

/* Every pid and ref the state being expanded holds, and those handed out
** during the current run. */
static void mark_state(search *s, key_marks *m)
{
    const part_store *ps = s->ps;
    for (uint32_t i = 0; i < s->cur.nprocs; i++) {
        const proc *p = &s->cur.procs[i];
        mark(m, p->pid);
        for (uint32_t k = 0; k < p->nlinks; k++)
            mark(m, p->links[k]);
        mark_monitors(m, &p->mons);
        mark_monitors(m, &p->monby);
        for (uint32_t k = 0; k < p->aliases.n; k++)
            mark(m, p->aliases.m[k].ref | ETF_REF_TAG);
        mark_term(m, ps, p->cont);
        mark_term(m, ps, p->dict);
        uint32_t n = mailbox_length(ps, p->mailbox);
        for (uint32_t k = 0; k < n; k++)
            mark_term(m, ps, mailbox_at(ps, p->mailbox, k));
    }
    for (uint32_t i = 0; i < s->cur.nchans; i++) {
        const channel *c = &s->cur.chans[i];
        mark(m, c->from);
        mark(m, c->to);
        uint32_t n = mailbox_length(ps, c->queue);
        for (uint32_t k = 0; k < n; k++) {
            uint32_t sig[4], env[4];
            part_id id = mailbox_at(ps, c->queue, k);
            if (envelope_get(ps, id, env) == 0) {
                mark(m, env[0]);
                mark(m, env[1]);
                id = env[3];
            }
            if (signal_get(ps, id, sig) != 0)
                continue;
            switch (sig[0]) {
            case SIG_MSG: case SIG_EXIT:
                mark_term(m, ps, sig[1]);
                break;
            case SIG_ALIAS_MSG:
                mark_term(m, ps, sig[1]);
                mark(m, sig[2] | ETF_REF_TAG);
                break;
            case SIG_MONITOR:
                mark(m, sig[1] | ETF_REF_TAG);
                mark_term(m, ps, sig[2]);
                break;
            case SIG_DEMONITOR:
                mark(m, sig[1] | ETF_REF_TAG);
                break;
            case SIG_DOWN:
                mark(m, sig[1] | ETF_REF_TAG);
                mark_term(m, ps, sig[2]);
                mark_term(m, ps, sig[3]);
                break;
            default:
                break;
            }
        }
    }
    for (uint32_t i = 0; i < s->cur.nnodemons; i++)
        mark(m, s->cur.nodemons[i].pid);
    for (uint32_t i = 0; i < s->cur.ntables; i++) {
        const ets_table *t = &s->cur.tables[i];
        mark(m, t->tid | ETF_REF_TAG);
        mark(m, t->owner);
        if (t->heir != 0)
            mark(m, t->heir);
        mark_term(m, ps, t->heir_data);
        mark_term(m, ps, t->data);
    }
    mark_term(m, ps, s->cur.app_env);
    mark_term(m, ps, s->cur.observer);
    for (size_t k = 0; k < s->nallocated; k++)
        mark(m, s->allocated[k]);
    for (size_t k = 0; k < s->nallocated_refs; k++)
        mark(m, s->allocated_refs[k] | ETF_REF_TAG);
}

static int push_allocated(uint32_t **list, size_t *n, size_t *cap, uint32_t id)
{
    if (*n == *cap) {
        size_t ncap = *cap ? 2 * *cap : 8;
        uint32_t *grown = realloc(*list, ncap * sizeof *grown);
        if (grown == NULL)
            return -1;
        *list = grown;
        *cap = ncap;
    }
    (*list)[(*n)++] = id;
    return 0;
}

/* Smallest number (from 1) of `node` that is free in `region` (refs only);
** 0 if the region is full or on failure. */
static uint32_t free_number(search *s, uint32_t node, int refs, uint32_t region)
{
    key_marks m = { .node = node, .refs = refs, .region = region, .counting = 1 };
    mark_state(s, &m);
    m.counting = 0;
    m.limit = m.count + 2;
    mark_state(s, &m);
    uint32_t num = 1;
    while (!m.err && num < m.cap && m.used[num])
        num++;
    free(m.used);
    uint32_t limit = refs ? ETF_REF_COUNTER_LIMIT : ETF_NUM_LIMIT;
    return m.err || num >= limit ? 0 : num;
}

/* A fresh pid of `node`, or a fresh ref of `node` in the running process's
** region (see ETF_REF_COUNTER_BITS), else in the shared one; 0 on failure. */
static uint32_t fresh_number(search *s, uint32_t node, int refs)
{
    if (s->pending != REQ_RUN || s->depth == 0 || decode_top(s) != 0 ||
        node >= s->nodes.n)
        return 0;
    uint32_t num;
    if (refs) {
        uint32_t region = KEY_NODE(s->run_pid) == node ? KEY_NUM(s->run_pid) : 0;
        if (region >= ETF_REF_CREATOR_LIMIT)
            region = 0;
        num = free_number(s, node, 1, region);
        if (num == 0 && region != 0)
            num = free_number(s, node, 1, region = 0);
        if (num != 0)
            num |= region << ETF_REF_COUNTER_BITS;
    } else {
        num = free_number(s, node, 0, 0);
    }
    if (num == 0)
        return 0;
    uint32_t key = MAKE_KEY(node, num);
    if (refs ? push_allocated(&s->allocated_refs, &s->nallocated_refs,
                              &s->capallocated_refs, key)
             : push_allocated(&s->allocated, &s->nallocated, &s->capallocated, key))
        return 0;
    return key;
}

uint32_t search_fresh_ref(search *s, uint32_t node)
{
    return fresh_number(s, node, 1);
}

uint32_t search_fresh_pid(search *s, uint32_t node)
{
    return fresh_number(s, node, 0);
}


void search_get_stats(const search *s, search_stats *st)
{
    *st = s->st;
    st->depth = s->depth;
    st->parts = part_store_count(s->ps);
    st->memo_entries = s->memo.n;
    size_t fixed = s->cap * sizeof *s->stack +
                   s->memo.nslots * (sizeof *s->memo.keys + 1);
    st->bytes = part_store_bytes(s->ps) + fixed;
    st->used_bytes = part_store_used_bytes(s->ps) + fixed;
    st->table_mode = s->cfg.table_mode;
    if (s->vis != NULL) {
        /* The table and the root vectors kept in the frames count too, so
        ** the `memory` cap sees them. */
        size_t lossy = visited_bytes(s->vis) + s->root_bytes;
        st->table_bytes = visited_bytes(s->vis);
        st->omission_probability = visited_omission_probability(s->vis);
        st->lost_estimate = visited_lost_estimate(s->vis);
        st->coverage_estimate = visited_coverage_estimate(s->vis);
        st->bytes += lossy;
        st->used_bytes += lossy;
    } else {
        st->table_bytes = part_store_used_bytes(s->ps);
        st->omission_probability = 0.0;
        st->lost_estimate = 0.0;
        st->coverage_estimate = 1.0;
    }
}

const part_store *search_store(const search *s)
{
    return s->ps;
}

const sys_state *search_top_state(search *s)
{
    if (s->obs_pending)
        return &s->obs_st;
    if (s->depth == 0 || decode_top(s) != 0)
        return NULL;
    return &s->cur;
}

int search_peek_alive(search *s, uint32_t pid)
{
    if (s->depth == 0 || decode_top(s) != 0)
        return 0;
    return sys_state_find(&s->cur, pid) >= 0;
}

int search_peek_monitor(search *s, uint32_t pid, uint32_t ref)
{
    if (s->depth == 0 || decode_top(s) != 0)
        return 0;
    int i = sys_state_find(&s->cur, pid);
    if (i < 0)
        return 0;
    for (uint32_t k = 0; k < s->cur.procs[i].mons.n; k++)
        if (s->cur.procs[i].mons.m[k].ref == ref)
            return 1;
    return 0;
}

int search_peek_alias(search *s, uint32_t pid, uint32_t ref)
{
    if (s->depth == 0 || decode_top(s) != 0)
        return 0;
    int i = sys_state_find(&s->cur, pid);
    if (i < 0)
        return 0;
    for (uint32_t k = 0; k < s->cur.procs[i].aliases.n; k++)
        if (s->cur.procs[i].aliases.m[k].ref == ref)
            return 1;
    return 0;
}

int64_t search_peek_timer(search *s, uint32_t ref)
{
    if (s->depth == 0 || decode_top(s) != 0)
        return -1;
    for (uint32_t k = 0; k < s->cur.nchans; k++) {
        uint32_t sig[4];
        if (s->cur.chans[k].from == (ref | KEY_TIMER) &&
            signal_get(s->ps, mailbox_at(s->ps, s->cur.chans[k].queue, 0), sig) == 0)
            return sig[2];
    }
    return -1;
}

const proc *search_peek_proc(search *s, uint32_t pid, uint32_t *skip)
{
    *skip = UINT32_MAX;
    if (s->depth == 0 || decode_top(s) != 0)
        return NULL;
    int i = sys_state_find(&s->cur, pid);
    if (i < 0)
        return NULL;
    if (s->pending == REQ_RUN && s->run == RUN_RECEIVE && s->run_pid == pid)
        *skip = s->run_msg_index;
    return &s->cur.procs[i];
}

const ets_table *search_peek_table(search *s, uint32_t tid)
{
    if (s->depth == 0 || decode_top(s) != 0)
        return NULL;
    int i = sys_state_find_table(&s->cur, tid);
    return i < 0 ? NULL : &s->cur.tables[i];
}

uint32_t search_peek_table_named(search *s, uint32_t node, const uint8_t *etf,
                                 size_t len)
{
    if (s->depth == 0 || decode_top(s) != 0)
        return 0;
    for (uint32_t i = 0; i < s->cur.ntables; i++) {
        const ets_table *t = &s->cur.tables[i];
        const part *n = t->name ? part_store_get(s->ps, t->name) : NULL;
        if (n != NULL && KEY_NODE(t->tid) == node && n->len == len &&
            memcmp(n->data, etf, len) == 0)
            return t->tid;
    }
    return 0;
}

size_t search_peek_tables(search *s, uint32_t node, uint32_t *out, size_t max)
{
    size_t n = 0;
    if (s->depth == 0 || decode_top(s) != 0)
        return 0;
    for (uint32_t i = 0; i < s->cur.ntables; i++)
        if (KEY_NODE(s->cur.tables[i].tid) == node) {
            if (n < max)
                out[n] = s->cur.tables[i].tid;
            n++;
        }
    return n;
}

part_id search_peek_app_env(search *s)
{
    if (s->depth == 0 || decode_top(s) != 0)
        return 0;
    return s->cur.app_env;
}

uint32_t search_peek_unique(search *s)
{
    if (s->depth == 0 || decode_top(s) != 0)
        return 0;
    return s->cur.uniq;
}

int search_peek_whereis(search *s, uint32_t node, const uint8_t *etf,
                        size_t len, uint32_t *pid)
{
    if (s->depth == 0 || decode_top(s) != 0)
        return 0;
    for (uint32_t i = 0; i < s->cur.nprocs; i++) {
        if (KEY_NODE(s->cur.procs[i].pid) != node)
            continue;
        const part *n = part_store_get(s->ps, s->cur.procs[i].name);
        if (n != NULL && n->len == len && memcmp(n->data, etf, len) == 0) {
            *pid = s->cur.procs[i].pid;
            return 1;
        }
    }
    return 0;
}

int search_peek_node(search *s, uint32_t a, uint32_t b)
{
    /* While the monitors judge a successor, they see its nodes. */
    const sys_state *st = s->obs_pending ? &s->obs_st : &s->cur;
    if (!s->obs_pending && (s->depth == 0 || decode_top(s) != 0))
        return 1;
    if (a >= s->nodes.n || b >= s->nodes.n)
        return 1;
    if ((st->down >> a & 1) || (st->down >> b & 1))
        return 1;
    return a != b && sys_state_disconnected(st, a, b) ? 2 : 0;
}

size_t search_peek_names(search *s, uint32_t node, part_id *out, size_t max)
{
    size_t n = 0;
    if (s->depth == 0 || decode_top(s) != 0)
        return 0;
    for (uint32_t i = 0; i < s->cur.nprocs; i++)
        if (s->cur.procs[i].name != 0 && KEY_NODE(s->cur.procs[i].pid) == node) {
            if (n < max)
                out[n] = s->cur.procs[i].name;
            n++;
        }
    return n;
}

size_t search_peek_pids(search *s, uint32_t node, uint32_t *out, size_t max)
{
    size_t n = 0;
    if (s->depth == 0 || decode_top(s) != 0)
        return 0;
    for (uint32_t i = 0; i < s->cur.nprocs; i++)
        if (KEY_NODE(s->cur.procs[i].pid) == node) {
            if (n < max)
                out[n] = s->cur.procs[i].pid;
            n++;
        }
    return n;
}

/* Makes the stack the single frame of `state`, freeing what was there. */
static int reset_to(search *s, part_id state)
{
    const part *p = part_store_get(s->ps, state);
    if (p == NULL || p->kind != PART_STATE)
        return -1;
    while (s->depth > 0)
        pop(s);
    return push(s, state, NULL, 0);
}

int search_expand(search *s, part_id state, request *req)
{
    if (!s->cfg.expand_only || s->pending != REQ_EXPANDED || s->finished)
        return fail(req, "no expansion can start now");
    for (size_t i = 0; i < s->nexp; i++)
        free(s->exp[i].label);
    s->nexp = 0;
    s->exp_deadlock = 0;
    if (reset_to(s, state) != 0)
        return fail(req, "not a state id, or out of memory");
    s->pending = 0;
    return next_request(s, req);
}

int search_focus(search *s, part_id state)
{
    if (!s->cfg.expand_only || s->pending != REQ_EXPANDED || s->finished)
        return -1;
    return reset_to(s, state);
}

part_id search_expanding(const search *s)
{
    return s->depth > 0 ? s->stack[0].state : 0;
}

size_t search_expansion(const search *s, const expansion **out, int *deadlock)
{
    *out = s->exp;
    *deadlock = s->exp_deadlock;
    return s->nexp;
}

size_t search_stack_depth(const search *s)
{
    return s->depth;
}

int search_label(const search *s, size_t i, const uint8_t **label,
                 size_t *len)
{
    if (i == 0 || i >= s->depth)
        return -1;
    *label = s->stack[i].label;
    *len = s->stack[i].label_len;
    return 0;
}

const uint8_t *search_observed_label(const search *s, size_t *len)
{
    if (!s->obs_pending)
        return NULL;
    *len = s->obs_label_len;
    return s->obs_label;
}
