/*
** canon.c: least-fresh numbering of pids and refs (see canon.h).
*/
#include "canon.h"

#include <stdlib.h>
#include <string.h>

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
    if (KEY_NODE(key) != m->node || m->err)
        return;
    uint32_t num = KEY_NUM(key);
    if (is_ref && !m->refs) {
        /* A pid number stays taken while a ref its process made is held
        ** (the ref's region is its creator's number): a process given it
        ** would make its refs among the dead one's, and which of the two
        ** made a ref, and so the refs' order, would depend on when the
        ** number was reused.  This keeps numbers a pure renaming apart
        ** (docs/ARCHITECTURE.md, "Safe steps up to a renaming of pids and refs"). */
        num >>= ETF_REF_COUNTER_BITS;
        if (num == 0)
            return;         /* the shared region: no creator */
    } else if (is_ref != m->refs) {
        return;
    } else if (m->refs) {
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
static void mark_state(const trans_ctx *cx, const sys_state *cur,
                       key_marks *m)
{
    const part_store *ps = cx->ps;
    for (uint32_t i = 0; i < cur->nprocs; i++) {
        const proc *p = &cur->procs[i];
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
    for (uint32_t i = 0; i < cur->nchans; i++) {
        const channel *c = &cur->chans[i];
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
    for (uint32_t i = 0; i < cur->nnodemons; i++)
        mark(m, cur->nodemons[i].pid);
    for (uint32_t i = 0; i < cur->ntables; i++) {
        const ets_table *t = &cur->tables[i];
        mark(m, t->tid | ETF_REF_TAG);
        mark(m, t->owner);
        if (t->heir != 0)
            mark(m, t->heir);
        mark_term(m, ps, t->heir_data);
        mark_term(m, ps, t->data);
    }
    mark_term(m, ps, cur->app_env);
    mark_term(m, ps, cur->observer);
    for (size_t k = 0; k < cx->nallocated; k++)
        mark(m, cx->allocated[k]);
    for (size_t k = 0; k < cx->nallocated_refs; k++)
        mark(m, cx->allocated_refs[k] | ETF_REF_TAG);
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
static uint32_t free_number(const trans_ctx *cx, const sys_state *cur,
                            uint32_t node, int refs, uint32_t region)
{
    key_marks m = { .node = node, .refs = refs, .region = region, .counting = 1 };
    mark_state(cx, cur, &m);
    m.counting = 0;
    m.limit = m.count + 2;
    mark_state(cx, cur, &m);
    uint32_t num = 1;
    while (!m.err && num < m.cap && m.used[num])
        num++;
    free(m.used);
    uint32_t limit = refs ? ETF_REF_COUNTER_LIMIT : ETF_NUM_LIMIT;
    return m.err || num >= limit ? 0 : num;
}

/* A fresh pid of `node`, or a fresh ref of `node` in the running process's
** region (see ETF_REF_COUNTER_BITS), else in the shared one; 0 on failure. */
uint32_t canon_fresh_key(trans_ctx *cx, const sys_state *cur, uint32_t run_pid,
                         uint32_t node, int refs)
{
    uint32_t num;
    if (refs) {
        uint32_t region = KEY_NODE(run_pid) == node ? KEY_NUM(run_pid) : 0;
        if (region >= ETF_REF_CREATOR_LIMIT)
            region = 0;
        num = free_number(cx, cur, node, 1, region);
        if (num == 0 && region != 0)
            num = free_number(cx, cur, node, 1, region = 0);
        if (num != 0)
            num |= region << ETF_REF_COUNTER_BITS;
    } else {
        num = free_number(cx, cur, node, 0, 0);
    }
    if (num == 0)
        return 0;
    uint32_t key = MAKE_KEY(node, num);
    if (refs ? push_allocated(&cx->allocated_refs, &cx->nallocated_refs,
                              &cx->capallocated_refs, key)
             : push_allocated(&cx->allocated, &cx->nallocated, &cx->capallocated, key))
        return 0;
    return key;
}
