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
*/
#include <string.h>

#include "search_internal.h"

int search_peek_alive(search *s, uint32_t pid)
{
    if (s->depth == 0 || search_decode_top(s) != 0)
        return 0;
    return sys_state_find(&s->cur, pid) >= 0;
}

int search_peek_monitor(search *s, uint32_t pid, uint32_t ref)
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

int search_peek_alias(search *s, uint32_t pid, uint32_t ref)
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

int64_t search_peek_timer(search *s, uint32_t ref)
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

const ets_table *search_peek_table(search *s, uint32_t tid)
{
    if (s->depth == 0 || search_decode_top(s) != 0)
        return NULL;
    int i = sys_state_find_table(&s->cur, tid);
    return i < 0 ? NULL : &s->cur.tables[i];
}

uint32_t search_peek_table_named(search *s, uint32_t node, const uint8_t *etf,
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

part_id search_peek_app_env(search *s)
{
    if (s->depth == 0 || search_decode_top(s) != 0)
        return 0;
    return s->cur.app_env;
}

uint32_t search_peek_unique(search *s)
{
    if (s->depth == 0 || search_decode_top(s) != 0)
        return 0;
    return s->cur.uniq;
}

int search_peek_whereis(search *s, uint32_t node, const uint8_t *etf,
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

int search_peek_node(search *s, uint32_t a, uint32_t b)
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
