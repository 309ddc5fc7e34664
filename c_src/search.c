/*
** search.c: owns the DFS stack, the match memo and the state being
** expanded; applies run results to build successors.
*/
#include "search.h"

#include <stdlib.h>
#include <string.h>

#include "etf_scan.h"

typedef struct frame {
    part_id state;
    uint32_t next_proc;   /* index of the next process to consider */
    uint32_t msg_idx;     /* next message to test for that process */
    uint32_t enabled;     /* transitions taken from this state */
    int expand;           /* 0: beyond max_depth, not expanded */
    uint8_t phase;        /* when_idle: 0 other transitions, 1 timeouts */
    uint8_t saw_timeout;  /* phase 0 passed over a timeout */
    uint8_t *label;       /* ETF of the transition into this state */
    size_t label_len;
} frame;

/* Memo of "does message M match receive continuation C": parts are
** interned, so (C, M) ids name the question exactly. */
typedef struct memo {
    uint64_t *keys;       /* (cont << 32 | msg) + 1, 0 = empty */
    uint8_t *vals;
    size_t nslots, n;
} memo;

struct search {
    search_config cfg;
    char *node;
    part_store *ps;
    part_id empty_mailbox;
    frame *stack;
    size_t depth, cap;
    sys_state cur;        /* decoded stack top */
    part_id cur_id;
    memo memo;
    /* the outstanding request */
    enum request_kind pending;
    enum run_kind run;
    uint32_t run_pid;
    part_id run_cont, run_msg;
    uint32_t run_msg_index;
    uint32_t *allocated;  /* pids handed out during the current run */
    size_t nallocated, capallocated;
    search_stats st;
    int finished;
    part_id atoms[N_ATOMS];
    uint32_t *allocated_refs;     /* refs handed out during the current run */
    size_t nallocated_refs, capallocated_refs;
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
    s->node = malloc(cfg->nodelen + 1);
    s->ps = cfg->table_slots ? part_store_new_sized(cfg->table_slots)
                             : part_store_new();
    s->memo.nslots = 1024;
    s->memo.keys = calloc(s->memo.nslots, sizeof *s->memo.keys);
    s->memo.vals = calloc(s->memo.nslots, 1);
    if (s->node == NULL || s->ps == NULL || s->memo.keys == NULL ||
        s->memo.vals == NULL) {
        search_free(s);
        return NULL;
    }
    memcpy(s->node, cfg->node, cfg->nodelen);
    s->node[cfg->nodelen] = '\0';
    s->cfg.node = s->node;
    int fresh;
    s->empty_mailbox = part_store_intern(s->ps, PART_MAILBOX, "", 0, NULL, 0,
                                         &fresh);
    static const char *const names[N_ATOMS] = { "normal", "killed", "kill", "EXIT",
                                                 "DOWN", "process", "noproc" };
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
    for (size_t i = 0; i < s->depth; i++)
        free(s->stack[i].label);
    free(s->stack);
    sys_state_clear(&s->cur);
    part_store_free(s->ps);
    free(s->memo.keys);
    free(s->memo.vals);
    free(s->allocated);
    free(s->allocated_refs);
    free(s->node);
    free(s);
}

/* Interns an encoded term, recording the simulated pids it references. */
static part_id intern_term(search *s, term_in *t)
{
    etf_pid_sink sink = { NULL, 0, 0 };
    if (etf_scan_pids(t->etf, t->len, s->cfg.node, s->cfg.nodelen,
                      s->cfg.creation, &sink) != 0) {
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
}

static int decode_top(search *s)
{
    frame *f = &s->stack[s->depth - 1];
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

/* Finds the next transition of the top state, or a match question. */
static int next_request(search *s, request *req)
{
    memset(req, 0, sizeof *req);
    if (s->finished) {
        req->kind = s->pending;
        return 0;
    }
    while (s->depth > 0) {
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
            if ((p->flags & PF_TIMEOUT) && s->cfg.timeouts_when_idle && f->phase == 0) {
                f->saw_timeout = 1;       /* only if nothing else can move */
            } else if (p->flags & PF_TIMEOUT) {
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
            s->nallocated = 0;
            s->nallocated_refs = 0;
            return 0;
        }
        if (f->expand && f->phase == 0 && f->enabled == 0 && f->saw_timeout) {
            /* when_idle: nothing else was enabled, so the timeouts are. */
            f->phase = 1;
            f->next_proc = 0;
            f->msg_idx = 0;
            continue;
        }
        if (s->cfg.check_deadlock && f->expand && f->enabled == 0 &&
            s->cur.nprocs > 0) {
            s->finished = 1;
            s->pending = req->kind = REQ_DEADLOCK;
            return 0;
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
    sys_state st = { NULL, 0, 0 };
    proc p = { .pid = pid, .status = PROC_INIT, .cont = cont,
               .mailbox = s->empty_mailbox };
    if (sys_state_insert(&st, &p) < 0)
        return fail(req, "out of memory");
    int fresh;
    part_id root = sys_state_encode(s->ps, &st, &fresh);
    sys_state_clear(&st);
    if (root == 0 || push(s, root, NULL, 0) != 0)
        return fail(req, "out of memory");
    s->st.states = 1;
    /* The initial state counts: max_states = 1 stores nothing more. */
    if (s->cfg.max_states != 0 && s->st.states >= s->cfg.max_states) {
        memset(req, 0, sizeof *req);
        s->finished = 1;
        s->pending = req->kind = REQ_LIMIT_STATES;
        return 0;
    }
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

static void ext_node(search *s, ext_buf *e)
{
    ext_u8(e, 100);                     /* ATOM_EXT, as the VM writes it */
    ext_u8(e, 0);
    ext_u8(e, (uint8_t)s->cfg.nodelen);
    ext_put(e, s->cfg.node, s->cfg.nodelen);
}

/* A simulated pid and ref, byte for byte as mce_pid and mce_ref build
** them (and as the VM re-encodes them). */
static void ext_pid(search *s, ext_buf *e, uint32_t pid)
{
    ext_u8(e, 88);                      /* NEW_PID_EXT */
    ext_node(s, e);
    ext_u32(e, pid);
    ext_u32(e, 0);
    ext_u32(e, s->cfg.creation);
}

static void ext_ref(search *s, ext_buf *e, uint32_t ref)
{
    ext_u8(e, 90);                      /* NEWER_REFERENCE_EXT, 3 words */
    ext_u8(e, 0);
    ext_u8(e, 3);
    ext_node(s, e);
    ext_u32(e, s->cfg.creation);
    ext_u32(e, ref);
    ext_u32(e, 0);
    ext_u32(e, 0);
}

/* Interns the built term and appends it to st->procs[to]'s mailbox. */
static int deliver_built(search *s, sys_state *st, int to, ext_buf *e)
{
    int err = e->err || s->cfg.nodelen > 255;
    part_id msg = 0;
    if (!err) {
        term_in t = { e->b, e->n };
        msg = intern_term(s, &t);
    }
    free(e->b);
    if (err || msg == 0)
        return -1;
    part_id mb = mailbox_append(s->ps, st->procs[to].mailbox, msg);
    if (mb == 0)
        return -1;
    st->procs[to].mailbox = mb;
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
static int deliver_down(search *s, sys_state *st, int to, monitor m,
                        part_id reason)
{
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

/* Removes process `pid`, which ends with `reason`: its linked processes
** get exit signals, its watchers 'DOWN' messages, and the monitors it held
** are dropped. */
static int process_dies(search *s, sys_state *st, uint32_t pid, part_id reason,
                        signal_queue *sq)
{
    int i = sys_state_find(st, pid);
    if (i < 0)
        return 0;
    proc gone = st->procs[i];
    st->procs[i].links = NULL;          /* ownership moves to `gone` */
    st->procs[i].mons.m = st->procs[i].monby.m = NULL;
    sys_state_remove(st, (uint32_t)i);
    int err = 0;
    for (uint32_t k = 0; k < gone.nlinks && !err; k++) {
        int j = sys_state_find(st, gone.links[k]);
        if (j < 0)
            continue;
        proc_link_remove(&st->procs[j], pid);
        err = queue_signal(sq, (exit_signal){ pid, gone.links[k], reason, 0 });
    }
    for (uint32_t k = 0; k < gone.mons.n && !err; k++) {
        int j = sys_state_find(st, gone.mons.m[k].pid);
        if (j >= 0)
            monitor_remove(&st->procs[j].monby, gone.mons.m[k].ref, NULL);
    }
    for (uint32_t k = 0; k < gone.monby.n && !err; k++) {
        int j = sys_state_find(st, gone.monby.m[k].pid);
        monitor held;
        if (j >= 0 && monitor_remove(&st->procs[j].mons, gone.monby.m[k].ref, &held))
            err = deliver_down(s, st, j, held, reason);
    }
    proc_free(&gone);
    return err;
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
        int err;
        if (sig.untrappable)
            err = process_dies(s, st, sig.to, s->atoms[ATOM_KILLED], sq);
        else if (st->procs[q].flags & PF_TRAP_EXIT)
            err = deliver_exit_message(s, st, q, sig.from, sig.reason);
        else if (sig.reason == s->atoms[ATOM_NORMAL])
            err = 0;
        else
            err = process_dies(s, st, sig.to, sig.reason, sq);
        if (err)
            return -1;
    }
    sq->n = 0;
    return 0;
}

static int apply_effects(search *s, sys_state *st, run_result *res,
                         signal_queue *sq)
{
    for (size_t e = 0; e < res->neffects; e++) {
        effect *ef = &res->effects[e];
        part_id term = 0;
        if (ef->term.etf != NULL && (term = intern_term(s, &ef->term)) == 0)
            return -1;
        int self = sys_state_find(st, s->run_pid);
        int q = sys_state_find(st, ef->pid);
        switch (ef->kind) {
        case EFFECT_SPAWN: {
            if (q >= 0 || term == 0 || self < 0)
                return -1;
            proc child = { .pid = ef->pid, .status = PROC_INIT, .cont = term,
                           .mailbox = s->empty_mailbox };
            if (ef->link && proc_link_add(&child, s->run_pid) != 0)
                return -1;
            if (sys_state_insert(st, &child) < 0) {
                free(child.links);
                return -1;
            }
            self = sys_state_find(st, s->run_pid);
            if (ef->link && proc_link_add(&st->procs[self], ef->pid) != 0)
                return -1;
            break;
        }
        case EFFECT_SEND: {
            if (term == 0)
                return -1;
            if (q < 0)
                break;              /* sending to a dead process is a no-op */
            part_id mb = mailbox_append(s->ps, st->procs[q].mailbox, term);
            if (mb == 0)
                return -1;
            st->procs[q].mailbox = mb;
            break;
        }
        case EFFECT_LINK:
            if (q >= 0 && self >= 0 && ef->pid != s->run_pid &&
                (proc_link_add(&st->procs[q], s->run_pid) != 0 ||
                 proc_link_add(&st->procs[self], ef->pid) != 0))
                return -1;
            break;
        case EFFECT_UNLINK:
            if (q >= 0)
                proc_link_remove(&st->procs[q], s->run_pid);
            if (self >= 0)
                proc_link_remove(&st->procs[self], ef->pid);
            break;
        case EFFECT_EXIT:
            if (term == 0 ||
                queue_signal(sq, (exit_signal){ s->run_pid, ef->pid, term,
                                                term == s->atoms[ATOM_KILL] })
                    != 0 ||
                deliver_signals(s, st, sq) != 0)
                return -1;
            break;
        case EFFECT_REGISTER:
            if (term == 0)
                return -1;
            if (q >= 0 && sys_state_find_name(st, term) < 0)
                st->procs[q].name = term;
            break;
        case EFFECT_UNREGISTER: {
            int r = term ? sys_state_find_name(st, term) : -1;
            if (r >= 0)
                st->procs[r].name = 0;
            break;
        }
        case EFFECT_MONITOR: {
            if (self < 0)
                return -1;
            monitor held = { ef->ref, ef->pid, term };
            if (q < 0) {
                if (deliver_down(s, st, self, held, s->atoms[ATOM_NOPROC]) != 0)
                    return -1;
            } else if (ef->pid != s->run_pid) {
                if (monitor_add(&st->procs[self].mons, held) != 0)
                    return -1;
                q = sys_state_find(st, ef->pid);
                monitor on = { ef->ref, s->run_pid, term };
                if (monitor_add(&st->procs[q].monby, on) != 0)
                    return -1;
            }
            break;
        }
        case EFFECT_DEMONITOR: {
            if (self < 0)
                return -1;
            monitor held;
            if (monitor_remove(&st->procs[self].mons, ef->ref, &held)) {
                int t = sys_state_find(st, held.pid);
                if (t >= 0)
                    monitor_remove(&st->procs[t].monby, ef->ref, NULL);
            }
            if (ef->link && flush_down(s, st, self, ef->ref) != 0)
                return -1;
            break;
        }
        case EFFECT_TRAP_EXIT:
            if (self < 0)
                return -1;
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

int search_answer_run(search *s, run_result *res, request *req)
{
    if (s->pending != REQ_RUN || s->finished) {
        free_result(res);
        return fail(req, "no run is outstanding");
    }
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
    if (s->run == RUN_RECEIVE) {
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
            st.procs[self].flags = keep | (res->has_timeout ? PF_TIMEOUT : 0);
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
    int is_new;
    part_id root = sys_state_encode(s->ps, &st, &is_new);
    sys_state_clear(&st);
    if (root == 0) {
        free_result(res);
        return fail(req, "out of memory");
    }
    s->st.transitions++;
    s->pending = 0;
    if (is_new)
        s->st.states++;
    if (res->stop || is_new) {
        if (push(s, root, res->label, res->label_len) != 0) {
            free_result(res);
            return fail(req, "out of memory");
        }
        res->label = NULL;
    } else {
        free_result(res);
    }
    if (res->stop) {
        s->finished = 1;
        s->pending = req->kind = REQ_STOPPED;
        return 0;
    }
    if (s->cfg.max_states != 0 && s->st.states >= s->cfg.max_states) {
        s->finished = 1;
        s->pending = req->kind = REQ_LIMIT_STATES;
        return 0;
    }
    return next_request(s, req);
error:
    sys_state_clear(&st);
    free_result(res);
    return fail(req, why);
}

/* Marks pid as used.  The smallest free pid is at most one more than the
** number of pids marked, so larger ones are ignored: a term naming pid
** 4000000000 must not make the bitmap 4 GB. */
static int add_used(uint8_t **used, size_t *cap, uint32_t pid, size_t limit)
{
    if (pid >= limit)
        return 0;
    if (pid >= *cap) {
        size_t ncap = *cap ? *cap : 64;
        while (ncap <= pid)
            ncap *= 2;
        uint8_t *grown = realloc(*used, ncap);
        if (grown == NULL)
            return -1;
        memset(grown + *cap, 0, ncap - *cap);
        *used = grown;
        *cap = ncap;
    }
    (*used)[pid] = 1;
    return 0;
}

static int add_term_pids(const part_store *ps, part_id id, uint8_t **used,
                         size_t *cap, size_t limit)
{
    const part *t = part_store_get(ps, id);
    if (t == NULL)
        return 0;
    for (uint32_t k = 0; k < t->npids; k++)
        if (add_used(used, cap, t->pids[k], limit) != 0)
            return -1;
    return 0;
}

static size_t term_pid_count(const part_store *ps, part_id id)
{
    const part *t = part_store_get(ps, id);
    return t ? t->npids : 0;
}

/* How many pid marks the current state and run can make at most. */
static size_t pid_mark_bound(const search *s)
{
    size_t n = s->nallocated + 2;
    for (uint32_t i = 0; i < s->cur.nprocs; i++) {
        const proc *p = &s->cur.procs[i];
        n += 1 + p->nlinks + term_pid_count(s->ps, p->cont) +
             term_pid_count(s->ps, p->dict);
        uint32_t m = mailbox_length(s->ps, p->mailbox);
        for (uint32_t k = 0; k < m; k++)
            n += term_pid_count(s->ps, mailbox_at(s->ps, p->mailbox, k));
    }
    return n;
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

/* Smallest ref number (from 1) not in the state being expanded (terms,
** monitors) nor handed out during this run. */
uint32_t search_fresh_ref(search *s)
{
    if (s->pending != REQ_RUN || s->depth == 0 || decode_top(s) != 0)
        return 0;
    size_t limit = s->nallocated_refs + 2;
    for (uint32_t i = 0; i < s->cur.nprocs; i++) {
        const proc *p = &s->cur.procs[i];
        limit += p->mons.n + p->monby.n + term_pid_count(s->ps, p->cont) +
                 term_pid_count(s->ps, p->dict);
        uint32_t m = mailbox_length(s->ps, p->mailbox);
        for (uint32_t k = 0; k < m; k++)
            limit += term_pid_count(s->ps, mailbox_at(s->ps, p->mailbox, k));
    }
    uint8_t *used = NULL;
    size_t cap = 0;
    int err = 0;
    for (uint32_t i = 0; i < s->cur.nprocs && !err; i++) {
        const proc *p = &s->cur.procs[i];
        for (uint32_t k = 0; k < p->mons.n && !err; k++)
            err |= add_used(&used, &cap, p->mons.m[k].ref, limit);
        for (uint32_t k = 0; k < p->monby.n && !err; k++)
            err |= add_used(&used, &cap, p->monby.m[k].ref, limit);
        part_id terms[2] = { p->cont, p->dict };
        uint32_t m = mailbox_length(s->ps, p->mailbox);
        for (uint32_t k = 0; k < 2 + m && !err; k++) {
            const part *t = part_store_get(s->ps, k < 2 ? terms[k]
                                           : mailbox_at(s->ps, p->mailbox, k - 2));
            for (uint32_t j = 0; t != NULL && j < t->npids && !err; j++)
                if (t->pids[j] & ETF_REF_TAG)
                    err |= add_used(&used, &cap, t->pids[j] & ~ETF_REF_TAG, limit);
        }
    }
    for (size_t k = 0; k < s->nallocated_refs && !err; k++)
        err |= add_used(&used, &cap, s->allocated_refs[k], limit);
    uint32_t ref = 1;
    while (!err && ref < cap && used[ref])
        ref++;
    free(used);
    if (err || push_allocated(&s->allocated_refs, &s->nallocated_refs,
                              &s->capallocated_refs, ref) != 0)
        return 0;
    return ref;
}

uint32_t search_fresh_pid(search *s)
{
    if (s->pending != REQ_RUN || s->depth == 0 || decode_top(s) != 0)
        return 0;
    uint8_t *used = NULL;
    size_t cap = 0;
    size_t limit = pid_mark_bound(s);
    int err = 0;
    for (uint32_t i = 0; i < s->cur.nprocs && !err; i++) {
        const proc *p = &s->cur.procs[i];
        err |= add_used(&used, &cap, p->pid, limit);
        for (uint32_t k = 0; k < p->nlinks && !err; k++)
            err |= add_used(&used, &cap, p->links[k], limit);
        err |= add_term_pids(s->ps, p->cont, &used, &cap, limit);
        err |= add_term_pids(s->ps, p->dict, &used, &cap, limit);
        uint32_t n = mailbox_length(s->ps, p->mailbox);
        for (uint32_t k = 0; k < n && !err; k++)
            err |= add_term_pids(s->ps, mailbox_at(s->ps, p->mailbox, k),
                                 &used, &cap, limit);
    }
    for (size_t k = 0; k < s->nallocated && !err; k++)
        err |= add_used(&used, &cap, s->allocated[k], limit);
    uint32_t pid = 1;
    while (!err && pid < cap && used[pid])
        pid++;
    free(used);
    if (err)
        return 0;
    if (s->nallocated == s->capallocated) {
        size_t ncap = s->capallocated ? 2 * s->capallocated : 8;
        uint32_t *grown = realloc(s->allocated, ncap * sizeof *grown);
        if (grown == NULL)
            return 0;
        s->allocated = grown;
        s->capallocated = ncap;
    }
    s->allocated[s->nallocated++] = pid;
    return pid;
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
}

const part_store *search_store(const search *s)
{
    return s->ps;
}

const sys_state *search_top_state(search *s)
{
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

int search_peek_whereis(search *s, const uint8_t *etf, size_t len,
                        uint32_t *pid)
{
    if (s->depth == 0 || decode_top(s) != 0)
        return 0;
    for (uint32_t i = 0; i < s->cur.nprocs; i++) {
        const part *n = part_store_get(s->ps, s->cur.procs[i].name);
        if (n != NULL && n->len == len && memcmp(n->data, etf, len) == 0) {
            *pid = s->cur.procs[i].pid;
            return 1;
        }
    }
    return 0;
}

size_t search_peek_names(search *s, part_id *out, size_t max)
{
    size_t n = 0;
    if (s->depth == 0 || decode_top(s) != 0)
        return 0;
    for (uint32_t i = 0; i < s->cur.nprocs; i++)
        if (s->cur.procs[i].name != 0) {
            if (n < max)
                out[n] = s->cur.procs[i].name;
            n++;
        }
    return n;
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
