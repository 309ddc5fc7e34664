/*
** sym_rename.c: applying a renaming of pid keys (symmetry.h's sym_pair
** list) to a whole state: process records (pid, links, monitors, aliases,
** group leader), every term (continuation, dictionary, mailbox messages,
** rewritten in external format and interned again), the ether (channel
** ends, signals, node-pair envelopes, timers), node monitors and ETS tables;
** then the canonical order is restored.  symmetry.c chooses the renaming.
**
** A term is renamed in its bytes; where a renamed pid or ref sits inside a
** key of a small map, the map's pairs are then put back into term order of
** the keys (etf_order.c), so the bytes are those the VM writes for the
** renamed term (symmetry.c pins the pids of the maps this cannot repair:
** large ones, and keys of types etf_order.c does not order); where a pid in
** an ETS object's key moves, the table's objects are put back into
** mce_ets's order of keys (symmetry.c pins them when it cannot be, and
** when the search runs with keys pinned: mce_rt_order's guard).
**
** Invariant: a renamed state is the same state with every occurrence of a
** renamed pid (and ref creator) replaced, in the order sys_state.h requires,
** and every renamed term is byte for byte what term_to_binary gives for it.
*/
#include <stdlib.h>
#include <string.h>

#include "etf_order.h"
#include "etf_scan.h"
#include "symmetry_internal.h"

/*
** Applying a renaming.
*/

typedef struct renamer {
    symmetry *sy;
    trans_ctx *cx;
    const sym_pair *perm;
    uint32_t nperm;
    etf_pid_sink keys;  /* the renamed term's keys, for its part */
    int resort;         /* a key inside a small map's key moved */
} renamer;

static uint32_t map_pid(const renamer *r, uint32_t key)
{
    uint32_t lo = 0, hi = r->nperm;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (r->perm[mid].from < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->nperm && r->perm[lo].from == key ? r->perm[lo].to : key;
}

/* A ref key (tagged or not): its creator renamed, the tag kept. */
static uint32_t map_ref(const renamer *r, uint32_t key)
{
    uint32_t tag = key & ETF_REF_TAG, k = key & ~ETF_REF_TAG;
    uint32_t num = KEY_NUM(k), creator = num >> ETF_REF_COUNTER_BITS;
    if (creator == 0)
        return key;
    uint32_t to = map_pid(r, MAKE_KEY(KEY_NODE(k), creator));
    return tag | MAKE_KEY(KEY_NODE(k), KEY_NUM(to) << ETF_REF_COUNTER_BITS |
                                       (num & (ETF_REF_COUNTER_LIMIT - 1)));
}

static uint32_t map_key(const renamer *r, uint32_t key)
{
    return key & ETF_REF_TAG ? map_ref(r, key) : map_pid(r, key);
}

static int rename_visit(void *ctx, uint32_t key, uint8_t *word, int where)
{
    renamer *r = ctx;
    uint32_t to = map_key(r, key);
    if (to != key) {
        if (where & ETF_IN_BIG_MAP_KEY)
            return -1;      /* symmetry.c pins these */
        r->resort |= (where & ETF_IN_MAP_KEY) != 0;
        uint32_t num = KEY_NUM(to & ~ETF_REF_TAG);
        sym_put_be32(word, key & ETF_REF_TAG ? num >> ETF_REF_COUNTER_BITS : num);
    }
    return etf_sink_push(&r->keys, to);
}

/* Stops the walk at a key the renaming moves (of an ETS object's key). */
static int moved_visit(void *ctx, uint32_t key, uint8_t *word, int where)
{
    (void)word;
    (void)where;
    return map_key(ctx, key) != key;
}

/* Renames the term buf[0..len) (version byte first) in place; r->keys gets
** its keys in order of occurrence.  ets: the term is an ETS table's data,
** whose objects mce_ets keeps in order of their keys: when a pid in a key
** moves, the objects are sorted again.  0, or -1 on malformed input, out of
** memory, or a renamed key where the VM's order cannot be restored (which
** symmetry.c never asks for). */
static int rename_bytes(renamer *r, const etf_nodes *nodes, uint32_t creation,
                        uint8_t *buf, size_t len, int ets)
{
    int key_moved = 0;
    if (ets) {
        uint8_t *keys;
        size_t n;
        if (etf_ets_keys(buf, len, &keys, &n) != 0)
            return -1;
        key_moved = etf_walk_keys(keys, n, nodes, creation, moved_visit, r) != 0;
        free(keys);
    }
    r->keys.n = 0;
    r->resort = 0;
    if (etf_walk_keys(buf, len, nodes, creation, rename_visit, r) != 0)
        return -1;
    if (!r->resort && !key_moved)
        return 0;
    if (r->resort && etf_sort_maps(buf, len, creation, 0) != 0)
        return -1;
    if (key_moved && etf_ets_sort(buf, len, creation, 0) != 0)
        return -1;
    /* The pairs or objects moved: the keys again, in their new order. */
    r->keys.n = 0;
    return etf_scan_keys(buf, len, nodes, creation, &r->keys);
}

int symmetry_rename_term(const etf_nodes *nodes, uint32_t creation, uint8_t *buf,
                         size_t len, int ets, const sym_pair *perm, uint32_t nperm)
{
    renamer r = { NULL, NULL, perm, nperm, { NULL, 0, 0 }, 0 };
    int rc = rename_bytes(&r, nodes, creation, buf, len, ets);
    free(r.keys.pids);
    return rc;
}

/* The term renamed (id itself when it names no key that moves). */
static part_id rename_term_as(renamer *r, part_id id, int ets)
{
    if (id == 0)
        return 0;
    const part *p = part_store_get(r->cx->ps, id);
    if (p == NULL || p->kind != PART_TERM)
        return 0;
    int moves = 0;
    for (uint32_t j = 0; j < p->npids && !moves; j++)
        moves = map_key(r, p->pids[j]) != p->pids[j];
    if (!moves)
        return id;
    symmetry *sy = r->sy;
    if (sym_grow((void **)&sy->buf, &sy->capbuf, p->len, 1))
        return 0;
    memcpy(sy->buf, p->data, p->len);
    if (rename_bytes(r, &r->cx->names.nodes, r->cx->names.creation, sy->buf, p->len,
                     ets) != 0)
        return 0;
    int fresh;
    return part_store_intern(r->cx->ps, PART_TERM, sy->buf, p->len,
                             r->keys.pids, r->keys.n, &fresh);
}

static part_id rename_term(renamer *r, part_id id)
{
    return rename_term_as(r, id, 0);
}

/* Renames each element of a vector of parts (a mailbox: terms; a channel
** queue: signals) with f; the vector itself when nothing moved. */
static part_id rename_vector(renamer *r, part_id vec,
                             part_id (*f)(renamer *, part_id))
{
    uint32_t n = mailbox_length(r->cx->ps, vec);
    symmetry *sy = r->sy;
    if (sym_grow((void **)&sy->ids, &sy->capids, n ? n : 1, sizeof *sy->ids))
        return 0;
    int moved = 0;
    for (uint32_t j = 0; j < n; j++) {
        part_id id = mailbox_at(r->cx->ps, vec, j);
        part_id to = f(r, id);
        if (to == 0)
            return 0;
        moved |= to != id;
        sy->ids[j] = to;
    }
    if (!moved)
        return vec;
    int fresh;      /* f uses sy->buf, never sy->ids */
    return part_store_intern(r->cx->ps, PART_MAILBOX, sy->ids, 4 * n, NULL, 0,
                             &fresh);
}

static part_id rename_term_f(renamer *r, part_id id)
{
    return rename_term(r, id);
}

static part_id rename_signal(renamer *r, part_id id)
{
    part_store *ps = r->cx->ps;
    uint32_t env[4], s[4];
    if (envelope_get(ps, id, env) == 0) {
        part_id inner = rename_signal(r, env[3]);
        if (inner == 0)
            return 0;
        uint32_t from = map_pid(r, env[0]), to = map_pid(r, env[1]);
        if (inner == env[3] && from == env[0] && to == env[1])
            return id;
        return envelope_intern(ps, from, to, env[2], inner);
    }
    if (signal_get(ps, id, s) != 0)
        return 0;
    uint32_t a = s[1], b = s[2], c = s[3];
    switch (s[0]) {
    case SIG_MSG: case SIG_EXIT:
        a = rename_term(r, a);
        break;
    case SIG_ALIAS_MSG:
        a = rename_term(r, a);
        b = map_ref(r, b);
        break;
    case SIG_MONITOR:
        a = map_ref(r, a);
        b = rename_term(r, b);
        break;
    case SIG_DEMONITOR:
        a = map_ref(r, a);
        break;
    case SIG_DOWN:
        a = map_ref(r, a);
        b = rename_term(r, b);
        c = rename_term(r, c);
        break;
    default:
        break;
    }
    /* rename_term gives 0 only for 0 or on failure. */
    if ((s[1] != 0 && a == 0) || (s[2] != 0 && b == 0) || (s[3] != 0 && c == 0))
        return 0;
    if (a == s[1] && b == s[2] && c == s[3])
        return id;
    return signal_intern(ps, s[0], a, b, c);
}

static int cmp_monitor(const void *a, const void *b)
{
    const monitor *x = a, *y = b;
    return x->ref < y->ref ? -1 : x->ref > y->ref;
}

static int rename_monitors(renamer *r, monitor_set *ms, int pids)
{
    for (uint32_t j = 0; j < ms->n; j++) {
        monitor *m = &ms->m[j];
        m->ref = map_ref(r, m->ref);
        if (pids) {
            m->pid = map_pid(r, m->pid);
            if (m->item != 0 && (m->item = rename_term(r, m->item)) == 0)
                return -1;
        }
    }
    sym_sort(ms->m, ms->n, sizeof *ms->m, cmp_monitor);
    return 0;
}

static int cmp_proc(const void *a, const void *b)
{
    const proc *x = a, *y = b;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int cmp_nodemon(const void *a, const void *b)
{
    const node_monitor *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

static int cmp_table(const void *a, const void *b)
{
    const ets_table *x = a, *y = b;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* A term field renamed in place; -1 when it could not be. */
static int term_field_as(renamer *r, part_id *id, int ets)
{
    if (*id == 0)
        return 0;
    part_id to = rename_term_as(r, *id, ets);
    if (to == 0)
        return -1;
    *id = to;
    return 0;
}

static int term_field(renamer *r, part_id *id)
{
    return term_field_as(r, id, 0);
}

int symmetry_rename(symmetry *sy, trans_ctx *cx, sys_state *st,
                    const sym_pair *perm, uint32_t nperm)
{
    if (st->npend != 0)
        return -1;
    renamer r = { sy, cx, perm, nperm, { NULL, 0, 0 }, 0 };
    int err = 0;
    for (uint32_t i = 0; i < st->nprocs && !err; i++) {
        proc *p = &st->procs[i];
        p->pid = map_pid(&r, p->pid);
        for (uint32_t j = 0; j < p->nlinks; j++)
            p->links[j] = map_pid(&r, p->links[j]);
        sym_sort(p->links, p->nlinks, sizeof *p->links, sym_cmp_u32);
        if (p->gl != 0)
            p->gl = map_pid(&r, p->gl ^ DEFAULT_GL_KEY) ^ DEFAULT_GL_KEY;
        err = rename_monitors(&r, &p->mons, 1) || rename_monitors(&r, &p->monby, 1) ||
              rename_monitors(&r, &p->aliases, 0) ||
              term_field(&r, &p->cont) || term_field(&r, &p->dict) ||
              term_field(&r, &p->name);
        if (!err && (p->mailbox = rename_vector(&r, p->mailbox, rename_term_f)) == 0)
            err = 1;
    }
    if (!err)
        sym_sort(st->procs, st->nprocs, sizeof *st->procs, cmp_proc);
    for (uint32_t i = 0; i < st->nnodemons && !err; i++)
        st->nodemons[i].pid = map_pid(&r, st->nodemons[i].pid);
    if (!err)
        sym_sort(st->nodemons, st->nnodemons, sizeof *st->nodemons, cmp_nodemon);
    for (uint32_t i = 0; i < st->nchans && !err; i++) {
        channel *ch = &st->chans[i];
        ch->from = ch->from & KEY_TIMER ? map_ref(&r, ch->from) : map_pid(&r, ch->from);
        ch->to = map_pid(&r, ch->to);
        if ((ch->queue = rename_vector(&r, ch->queue, rename_signal)) == 0)
            err = 1;
    }
    if (!err)
        sym_sort(st->chans, st->nchans, sizeof *st->chans, sys_state_channel_order);
    for (uint32_t i = 0; i < st->ntables && !err; i++) {
        ets_table *t = &st->tables[i];
        t->tid = map_ref(&r, t->tid);
        t->owner = map_pid(&r, t->owner);
        if (t->heir != 0)
            t->heir = map_pid(&r, t->heir);
        err = term_field(&r, &t->heir_data) || term_field_as(&r, &t->data, 1);
    }
    if (!err)
        sym_sort(st->tables, st->ntables, sizeof *st->tables, cmp_table);
    if (!err)
        err = term_field(&r, &st->app_env) || term_field(&r, &st->observer);
    free(r.keys.pids);
    return err ? -1 : 0;
}
