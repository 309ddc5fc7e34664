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
            if (p->flags & PF_TIMEOUT) {
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
            s->pending = REQ_RUN;
            s->run = req->run;
            s->run_pid = req->pid;
            s->run_cont = req->cont;
            s->run_msg = req->msg;
            s->nallocated = 0;
            return 0;
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

/* Removes `pid` and, for an abnormal reason, everything linked to it that
** does not trap exits (no process traps exits yet), transitively. */
static int exit_process(sys_state *st, uint32_t pid, int normal)
{
    uint32_t *work = malloc(sizeof *work);
    size_t nwork = 0, capwork = 1;
    if (work == NULL)
        return -1;
    work[nwork++] = pid;
    while (nwork > 0) {
        uint32_t dead = work[--nwork];
        int i = sys_state_find(st, dead);
        if (i < 0)
            continue;
        proc gone = st->procs[i];
        st->procs[i].links = NULL;      /* ownership moves to `gone` */
        sys_state_remove(st, (uint32_t)i);
        for (uint32_t k = 0; k < gone.nlinks; k++) {
            int j = sys_state_find(st, gone.links[k]);
            if (j < 0)
                continue;
            proc_link_remove(&st->procs[j], dead);
            if (!normal) {
                if (nwork == capwork) {
                    uint32_t *grown = realloc(work, 2 * capwork * sizeof *grown);
                    if (grown == NULL) {
                        free(gone.links);
                        free(work);
                        return -1;
                    }
                    work = grown;
                    capwork *= 2;
                }
                work[nwork++] = gone.links[k];
            }
        }
        free(gone.links);
    }
    free(work);
    return 0;
}

static int apply_effects(search *s, sys_state *st, run_result *res, int self)
{
    for (size_t e = 0; e < res->neffects; e++) {
        effect *ef = &res->effects[e];
        part_id term = intern_term(s, &ef->term);
        if (term == 0)
            return -1;
        if (ef->kind == EFFECT_SPAWN) {
            if (sys_state_find(st, ef->pid) >= 0)
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
        } else {
            int q = sys_state_find(st, ef->pid);
            if (q < 0)
                continue;           /* sending to a dead process is a no-op */
            part_id mb = mailbox_append(s->ps, st->procs[q].mailbox, term);
            if (mb == 0)
                return -1;
            st->procs[q].mailbox = mb;
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
    if (apply_effects(s, &st, res, self) != 0) {
        why = "malformed effects (bad term or pid)";
        goto error;
    }
    self = sys_state_find(&st, s->run_pid);
    if (res->outcome == OUTCOME_WAIT) {
        part_id cont = intern_term(s, &res->cont);
        if (cont == 0) {
            why = "continuation is not an encodable term";
            goto error;
        }
        st.procs[self].status = PROC_WAITING;
        st.procs[self].cont = cont;
        st.procs[self].flags = res->has_timeout ? PF_TIMEOUT : 0;
    } else if (exit_process(&st, s->run_pid, res->normal) != 0) {
        goto error;
    }
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
        n += 1 + p->nlinks + term_pid_count(s->ps, p->cont);
        uint32_t m = mailbox_length(s->ps, p->mailbox);
        for (uint32_t k = 0; k < m; k++)
            n += term_pid_count(s->ps, mailbox_at(s->ps, p->mailbox, k));
    }
    return n;
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
