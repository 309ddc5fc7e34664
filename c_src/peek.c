/*
** peek.c: the running step's questions about the state being expanded
** (is_process_alive, whereis, registered, monitors, aliases, timers, ETS
** tables, nodes...), declared in search.h.
**
** Invariant: read-only.  A peek answers from the state being expanded, as
** it was before the running step (whose effects are applied only when its
** run is answered), or, for search_peek_node while the monitors judge a
** successor, from that successor.  Peeking changes neither a state nor the
** search's position: any number of peeks, in any order, leave the next
** request as it was.
**
** While a run is outstanding, every peek is logged as a read of the step
** (step_cache.h), and search_reask answers a logged read again through the
** same code; peeks whose answers the cache does not compare (a process's
** record, the registry, a node's pids and tables) keep the step out of the
** cache.
*/
#include <string.h>

#include "search_internal.h"

static int logging(const search *s)
{
    return s->cache != NULL && s->pending == REQ_RUN;
}

static void log_read(search *s, uint32_t kind, uint32_t a, uint32_t b,
                     const uint8_t *name, size_t len, const uint32_t *ans, int nans)
{
    step_read r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    r.a = a;
    r.b = b;
    for (int i = 0; i < nans; i++)
        r.ans[i] = ans[i];
    /* The step is not safe (por.h), but for a name found (rule 12). */
    if (s->pending == REQ_RUN) {
        if (step_read_finds_name(&r, &s->run_named_pid))
            s->run_name_reads = 1;
        else
            s->run_reads = 1;
    }
    if (!logging(s))
        return;
    step_log_add(&s->log, &r, name, len);
}

static void poison(search *s)
{
    if (s->pending == REQ_RUN)
        s->run_reads = 1;
    if (logging(s))
        s->log.poisoned = 1;
}

static int peek_alive(search *s, uint32_t pid)
{
    if (s->depth == 0 || search_decode_top(s) != 0)
        return 0;
    int alive = sys_state_find(&s->cur, pid) >= 0;
    /* A liveness test of a process that is gone: the guard of exits
    ** taken as safe (por.h, rule 9). */
    if (!alive && pid != s->run_pid)
        search_dead_target(s);
    return alive;
}

static int peek_monitor(search *s, uint32_t pid, uint32_t ref)
{
    if (s->depth == 0 || search_decode_top(s) != 0)
        return 0;
    int i = sys_state_find(&s->cur, pid);
    if (i < 0)
        return 0;
    for (uint32_t k = 0; k < s->cur.procs[i].mons.n; k++)
        if (s->cur.procs[i].mons.m[k].ref == ref)
            return 1;
    return 0;
}

static int peek_alias(search *s, uint32_t pid, uint32_t ref)
{
    if (s->depth == 0 || search_decode_top(s) != 0)
        return 0;
    int i = sys_state_find(&s->cur, pid);
    if (i < 0)
        return 0;
    for (uint32_t k = 0; k < s->cur.procs[i].aliases.n; k++)
        if (s->cur.procs[i].aliases.m[k].ref == ref)
            return 1;
    return 0;
}

static int64_t peek_timer(search *s, uint32_t ref)
{
    if (s->depth == 0 || search_decode_top(s) != 0)
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
    poison(s);
    /* Another process's record shows its continuation, mailbox and
    ** dictionary, so it tells a safe step taken from one not taken: the
    ** reduced search is void (docs/ARCHITECTURE.md, "Partial-order
    ** reduction"). */
    if (s->cfg.reduction && s->pending == REQ_RUN && pid != s->run_pid)
        s->por_void = POR_VOID_READS;
    *skip = UINT32_MAX;
    if (s->depth == 0 || search_decode_top(s) != 0)
        return NULL;
    int i = sys_state_find(&s->cur, pid);
    if (i < 0)
        return NULL;
    if (s->pending == REQ_RUN && s->run == RUN_RECEIVE && s->run_pid == pid)
        *skip = s->run_msg_index;
    return &s->cur.procs[i];
}

static const ets_table *peek_table(search *s, uint32_t tid)
{
    if (s->depth == 0 || search_decode_top(s) != 0)
        return NULL;
    int i = sys_state_find_table(&s->cur, tid);
    return i < 0 ? NULL : &s->cur.tables[i];
}

static uint32_t peek_table_named(search *s, uint32_t node, const uint8_t *etf,
                                 size_t len)
{
    if (s->depth == 0 || search_decode_top(s) != 0)
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
    poison(s);
    if (s->depth == 0 || search_decode_top(s) != 0)
        return 0;
    for (uint32_t i = 0; i < s->cur.ntables; i++)
        if (KEY_NODE(s->cur.tables[i].tid) == node) {
            if (n < max)
                out[n] = s->cur.tables[i].tid;
            n++;
        }
    return n;
}

static part_id peek_app_env(search *s)
{
    if (s->depth == 0 || search_decode_top(s) != 0)
        return 0;
    return s->cur.app_env;
}

static uint32_t peek_unique(search *s)
{
    if (s->depth == 0 || search_decode_top(s) != 0)
        return 0;
    return s->cur.uniq;
}

static int peek_whereis(search *s, uint32_t node, const uint8_t *etf,
                        size_t len, uint32_t *pid)
{
    if (s->depth == 0 || search_decode_top(s) != 0)
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

static int peek_node(search *s, uint32_t a, uint32_t b)
{
    /* While the monitors judge a successor, they see its nodes. */
    const sys_state *st = s->obs_pending ? &s->obs_st : &s->cur;
    if (!s->obs_pending && (s->depth == 0 || search_decode_top(s) != 0))
        return 1;
    if (a >= s->tx.names.nodes.n || b >= s->tx.names.nodes.n)
        return 1;
    if ((st->down >> a & 1) || (st->down >> b & 1))
        return 1;
    return a != b && sys_state_disconnected(st, a, b) ? 2 : 0;
}

size_t search_peek_names(search *s, uint32_t node, part_id *out, size_t max)
{
    size_t n = 0;
    poison(s);
    if (s->depth == 0 || search_decode_top(s) != 0)
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
    poison(s);
    /* The list names processes whose pids no term held (por.h, rule 7). */
    if (s->pending == REQ_RUN)
        search_por_hazard(s, POR_VOID_PROCESSES);
    if (s->depth == 0 || search_decode_top(s) != 0)
        return 0;
    for (uint32_t i = 0; i < s->cur.nprocs; i++)
        if (KEY_NODE(s->cur.procs[i].pid) == node) {
            if (n < max)
                out[n] = s->cur.procs[i].pid;
            n++;
        }
    return n;
}

static int peek_group_leader(search *s, uint32_t pid, uint32_t *gl)
{
    *gl = 0;
    if (s->depth == 0 || search_decode_top(s) != 0)
        return 0;
    int i = sys_state_find(&s->cur, pid);
    if (i < 0)
        return 0;
    *gl = s->cur.procs[i].gl;
    return 1;
}

/* The answer of one read, as the words the log keeps. */
static int answer(search *s, uint32_t kind, uint32_t a, uint32_t b,
                  const uint8_t *name, size_t len, uint32_t ans[STEP_READ_WORDS])
{
    memset(ans, 0, STEP_READ_WORDS * sizeof *ans);
    switch (kind) {
    case READ_MONITOR: ans[0] = (uint32_t)peek_monitor(s, a, b); return 0;
    case READ_ALIAS: ans[0] = (uint32_t)peek_alias(s, a, b); return 0;
    case READ_TIMER: {
        uint64_t t = (uint64_t)peek_timer(s, a);
        ans[0] = (uint32_t)t;
        ans[1] = (uint32_t)(t >> 32);
        return 0;
    }
    case READ_ALIVE: ans[0] = (uint32_t)peek_alive(s, a); return 0;
    case READ_WHEREIS: ans[0] = (uint32_t)peek_whereis(s, a, name, len, &ans[1]); return 0;
    case READ_ETS_NAMED: ans[0] = peek_table_named(s, a, name, len); return 0;
    case READ_ETS_TABLE: {
        const ets_table *t = peek_table(s, a);
        if (t != NULL) {
            ans[0] = 1;
            ans[1] = t->owner;
            ans[2] = t->heir;
            ans[3] = t->heir_data;
            ans[4] = t->name;
            ans[5] = t->data;
        }
        return 0;
    }
    case READ_NODE: ans[0] = (uint32_t)peek_node(s, a, b); return 0;
    case READ_UNIQUE: ans[0] = peek_unique(s); return 0;
    case READ_GROUP_LEADER: ans[0] = (uint32_t)peek_group_leader(s, a, &ans[1]); return 0;
    case READ_APP_ENV: ans[0] = peek_app_env(s); return 0;
    case READ_FRESH_PID:
    case READ_FRESH_REF:
        ans[0] = search_fresh_number(s, a, kind == READ_FRESH_REF);
        return ans[0] == 0 ? -1 : 0;
    }
    return -1;
}

int search_reask(search *s, const step_read *r, const uint8_t *names,
                 uint32_t ans[STEP_READ_WORDS])
{
    return answer(s, r->kind, r->a, r->b, names + r->name_off, r->name_len, ans);
}

/* Answers a read and logs it. */
static const uint32_t *logged(search *s, uint32_t kind, uint32_t a, uint32_t b,
                              const uint8_t *name, size_t len,
                              uint32_t ans[STEP_READ_WORDS])
{
    answer(s, kind, a, b, name, len, ans);
    log_read(s, kind, a, b, name, len, ans, STEP_READ_WORDS);
    return ans;
}

int search_peek_alive(search *s, uint32_t pid)
{
    uint32_t ans[STEP_READ_WORDS];
    return (int)logged(s, READ_ALIVE, pid, 0, NULL, 0, ans)[0];
}

int search_peek_monitor(search *s, uint32_t pid, uint32_t ref)
{
    uint32_t ans[STEP_READ_WORDS];
    return (int)logged(s, READ_MONITOR, pid, ref, NULL, 0, ans)[0];
}

int search_peek_alias(search *s, uint32_t pid, uint32_t ref)
{
    uint32_t ans[STEP_READ_WORDS];
    return (int)logged(s, READ_ALIAS, pid, ref, NULL, 0, ans)[0];
}

int64_t search_peek_timer(search *s, uint32_t ref)
{
    uint32_t ans[STEP_READ_WORDS];
    logged(s, READ_TIMER, ref, 0, NULL, 0, ans);
    return (int64_t)((uint64_t)ans[0] | (uint64_t)ans[1] << 32);
}

const ets_table *search_peek_table(search *s, uint32_t tid)
{
    uint32_t ans[STEP_READ_WORDS];
    logged(s, READ_ETS_TABLE, tid, 0, NULL, 0, ans);
    return peek_table(s, tid);
}

uint32_t search_peek_table_named(search *s, uint32_t node, const uint8_t *etf,
                                 size_t len)
{
    uint32_t ans[STEP_READ_WORDS];
    return logged(s, READ_ETS_NAMED, node, 0, etf, len, ans)[0];
}

part_id search_peek_app_env(search *s)
{
    uint32_t ans[STEP_READ_WORDS];
    return logged(s, READ_APP_ENV, 0, 0, NULL, 0, ans)[0];
}

uint32_t search_peek_unique(search *s)
{
    uint32_t ans[STEP_READ_WORDS];
    return logged(s, READ_UNIQUE, 0, 0, NULL, 0, ans)[0];
}

int search_peek_whereis(search *s, uint32_t node, const uint8_t *etf,
                        size_t len, uint32_t *pid)
{
    uint32_t ans[STEP_READ_WORDS];
    logged(s, READ_WHEREIS, node, 0, etf, len, ans);
    if (ans[0])
        *pid = ans[1];
    return (int)ans[0];
}

int search_peek_node(search *s, uint32_t a, uint32_t b)
{
    uint32_t ans[STEP_READ_WORDS];
    return (int)logged(s, READ_NODE, a, b, NULL, 0, ans)[0];
}

int search_peek_group_leader(search *s, uint32_t pid, uint32_t *gl)
{
    uint32_t ans[STEP_READ_WORDS];
    logged(s, READ_GROUP_LEADER, pid, 0, NULL, 0, ans);
    *gl = ans[1];
    return (int)ans[0];
}
