/*
** sys_state.c: editing one decoded system state: copying it, its processes,
** links, monitors, mailboxes, channels, tables and node status.  Decoding
** it from parts and re-interning it are sys_state_codec.c's.
*/
#include "sys_state.h"
#include "sys_state_internal.h"

#include <stdlib.h>
#include <string.h>

void proc_free(proc *p)
{
    free(p->links);
    free(p->mons.m);
    free(p->monby.m);
    free(p->aliases.m);
    p->aliases.m = NULL;
    p->links = NULL;
    p->mons.m = p->monby.m = NULL;
}

static int monitors_copy(monitor_set *dst, const monitor *src, uint32_t n)
{
    dst->m = NULL;
    dst->n = dst->cap = 0;
    if (n == 0)
        return 0;
    dst->m = malloc(n * sizeof *dst->m);
    if (dst->m == NULL)
        return -1;
    memcpy(dst->m, src, n * sizeof *dst->m);
    dst->n = dst->cap = n;
    return 0;
}

int monitor_add(monitor_set *ms, monitor m)
{
    uint32_t i = 0;
    while (i < ms->n && ms->m[i].ref < m.ref)
        i++;
    if (i < ms->n && ms->m[i].ref == m.ref)
        return 0;
    if (ms->n == ms->cap) {
        uint32_t cap = ms->cap ? 2 * ms->cap : 4;
        monitor *grown = realloc(ms->m, cap * sizeof *grown);
        if (grown == NULL)
            return -1;
        ms->m = grown;
        ms->cap = cap;
    }
    memmove(&ms->m[i + 1], &ms->m[i], (ms->n - i) * sizeof *ms->m);
    ms->m[i] = m;
    ms->n++;
    return 0;
}

int monitor_remove(monitor_set *ms, uint32_t ref, monitor *out)
{
    for (uint32_t i = 0; i < ms->n; i++) {
        if (ms->m[i].ref == ref) {
            if (out)
                *out = ms->m[i];
            memmove(&ms->m[i], &ms->m[i + 1], (ms->n - i - 1) * sizeof *ms->m);
            ms->n--;
            return 1;
        }
    }
    return 0;
}

void sys_state_clear(sys_state *s)
{
    while (s->npend > 0)
        drop_pending(s, s->npend - 1);
    free(s->pend);
    for (uint32_t i = 0; i < s->nprocs; i++)
        proc_free(&s->procs[i]);
    free(s->procs);
    free(s->disc);
    free(s->nodemons);
    free(s->chans);
    free(s->tables);
    memset(s, 0, sizeof *s);
}

/* A fresh copy of a vector of n `size`-byte elements (dst's old buffer is
** not freed: the caller's dst holds none). */
static int copy_vec(void **dst, uint32_t *cap, const void *src, uint32_t n,
                    size_t size)
{
    *dst = NULL;
    *cap = 0;
    return refill(dst, cap, src, n, size);
}

/* The world's fields that are not vectors, and the vectors' lengths: what
** both copies take as they are. */
static void copy_world_scalars(sys_state *dst, const sys_state *src)
{
    dst->down = src->down;
    dst->crashes = src->crashes;
    dst->disconnects = src->disconnects;
    dst->kills = src->kills;
    dst->uniq = src->uniq;
    dst->app_env = src->app_env;
    dst->observer = src->observer;
    dst->ndisc = src->ndisc;
    dst->nnodemons = src->nnodemons;
    dst->nchans = src->nchans;
    dst->ntables = src->ntables;
    dst->world_enc = src->world_enc;
}

static int copy_world(sys_state *dst, const sys_state *src)
{
    copy_world_scalars(dst, src);
    return copy_vec((void **)&dst->tables, &dst->captables, src->tables,
                    src->ntables, sizeof *src->tables) |
           copy_vec((void **)&dst->disc, &dst->capdisc, src->disc, src->ndisc,
                    sizeof *src->disc) |
           copy_vec((void **)&dst->nodemons, &dst->capnodemons, src->nodemons,
                    src->nnodemons, sizeof *src->nodemons) |
           copy_vec((void **)&dst->chans, &dst->capchans, src->chans,
                    src->nchans, sizeof *src->chans);
}

static int copy_links(proc *dst, const uint32_t *links, uint32_t n)
{
    dst->links = NULL;
    dst->nlinks = dst->caplinks = 0;
    if (n == 0)
        return 0;
    dst->links = malloc(n * sizeof *dst->links);
    if (dst->links == NULL)
        return -1;
    memcpy(dst->links, links, n * sizeof *dst->links);
    dst->nlinks = dst->caplinks = n;
    return 0;
}

int sys_state_copy(sys_state *dst, const sys_state *src)
{
    memset(dst, 0, sizeof *dst);
    if (src->npend != 0)
        return -1;      /* only complete states are copied */
    if (copy_world(dst, src) != 0 || reserve(dst, src->nprocs) != 0) {
        sys_state_clear(dst);
        return -1;
    }
    for (uint32_t i = 0; i < src->nprocs; i++) {
        const proc *sp = &src->procs[i];
        proc *dp = &dst->procs[i];
        *dp = *sp;
        dp->mons.m = dp->monby.m = dp->aliases.m = NULL;
        if (copy_links(dp, sp->links, sp->nlinks) != 0 ||
            monitors_copy(&dp->mons, sp->mons.m, sp->mons.n) != 0 ||
            monitors_copy(&dp->monby, sp->monby.m, sp->monby.n) != 0 ||
            monitors_copy(&dp->aliases, sp->aliases.m, sp->aliases.n) != 0) {
            dst->nprocs = i + 1;
            sys_state_clear(dst);
            return -1;
        }
    }
    dst->nprocs = src->nprocs;
    return 0;
}

/* n elements of src into *dst, reusing its buffer. */
static int refill_monitors(monitor_set *dst, const monitor_set *src)
{
    dst->n = 0;
    if (refill((void **)&dst->m, &dst->cap, src->m, src->n, sizeof *src->m) != 0)
        return -1;
    dst->n = src->n;
    return 0;
}

int sys_state_copy_into(sys_state *dst, const sys_state *src)
{
    if (src->npend != 0) {
        sys_state_clear(dst);
        return -1;
    }
    while (dst->npend > 0)
        drop_pending(dst, dst->npend - 1);
    while (dst->nprocs > src->nprocs)
        proc_free(&dst->procs[--dst->nprocs]);
    if (reserve(dst, src->nprocs) != 0 ||
        refill((void **)&dst->tables, &dst->captables, src->tables, src->ntables,
               sizeof *src->tables) != 0 ||
        refill((void **)&dst->disc, &dst->capdisc, src->disc, src->ndisc,
               sizeof *src->disc) != 0 ||
        refill((void **)&dst->nodemons, &dst->capnodemons, src->nodemons,
               src->nnodemons, sizeof *src->nodemons) != 0 ||
        refill((void **)&dst->chans, &dst->capchans, src->chans, src->nchans,
               sizeof *src->chans) != 0)
        goto fail;
    copy_world_scalars(dst, src);
    for (uint32_t i = 0; i < src->nprocs; i++) {
        const proc *sp = &src->procs[i];
        proc *dp = &dst->procs[i];
        proc keep;
        if (i < dst->nprocs) {
            keep = *dp;     /* its buffers, reused */
        } else {
            memset(&keep, 0, sizeof keep);
            dst->nprocs = i + 1;
        }
        *dp = *sp;
        dp->links = keep.links;
        dp->caplinks = keep.caplinks;
        dp->nlinks = 0;
        dp->mons = keep.mons;
        dp->monby = keep.monby;
        dp->aliases = keep.aliases;
        if (refill((void **)&dp->links, &dp->caplinks, sp->links, sp->nlinks,
                   sizeof *sp->links) != 0 ||
            refill_monitors(&dp->mons, &sp->mons) != 0 ||
            refill_monitors(&dp->monby, &sp->monby) != 0 ||
            refill_monitors(&dp->aliases, &sp->aliases) != 0)
            goto fail;
        dp->nlinks = sp->nlinks;
    }
    return 0;
fail:
    sys_state_clear(dst);
    return -1;
}

int sys_state_find(const sys_state *s, uint32_t pid)
{
    uint32_t lo = 0, hi = s->nprocs;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->procs[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->nprocs && s->procs[lo].pid == pid ? (int)lo : -1;
}

int sys_state_find_alias(const sys_state *s, uint32_t ref)
{
    for (uint32_t i = 0; i < s->nprocs; i++) {
        const proc *p = &s->procs[i];
        if (KEY_NODE(p->pid) != KEY_NODE(ref))
            continue;
        for (uint32_t k = 0; k < p->aliases.n; k++)
            if (p->aliases.m[k].ref == ref)
                return (int)i;
    }
    return -1;
}

int sys_state_find_name(const sys_state *s, part_id name, uint32_t node)
{
    for (uint32_t i = 0; name != 0 && i < s->nprocs; i++)
        if (s->procs[i].name == name && KEY_NODE(s->procs[i].pid) == node)
            return (int)i;
    return -1;
}

static int chan_cmp(const channel *c, uint32_t from, uint32_t to, part_id name)
{
    if (c->from != from)
        return c->from < from ? -1 : 1;
    if (c->to != to)
        return c->to < to ? -1 : 1;
    if (c->name != name)
        return c->name < name ? -1 : 1;
    return 0;
}

int sys_state_channel_order(const void *a, const void *b)
{
    const channel *y = b;
    return chan_cmp(a, y->from, y->to, y->name);
}

int sys_state_find_channel(const sys_state *s, uint32_t from, uint32_t to,
                           part_id name)
{
    for (uint32_t i = 0; i < s->nchans; i++)
        if (chan_cmp(&s->chans[i], from, to, name) == 0)
            return (int)i;
    return -1;
}

part_id signal_intern(part_store *ps, uint32_t kind, uint32_t a, uint32_t b,
                      uint32_t c)
{
    uint32_t w[4] = { kind, a, b, c };
    int fresh;
    return part_store_intern(ps, PART_SIGNAL, w, sizeof w, NULL, 0, &fresh);
}

int signal_get(const part_store *ps, part_id id, uint32_t out[4])
{
    const part *p = part_store_get(ps, id);
    if (p == NULL || p->kind != PART_SIGNAL || p->len != 16)
        return -1;
    for (uint32_t k = 0; k < 4; k++)
        out[k] = word(p->data, k);
    return 0;
}

part_id envelope_intern(part_store *ps, uint32_t from, uint32_t to,
                        part_id name, part_id sig)
{
    if (sig == 0)
        return 0;
    uint32_t w[5] = { SIG_ENVELOPE, from, to, name, sig };
    int fresh;
    return part_store_intern(ps, PART_SIGNAL, w, sizeof w, NULL, 0, &fresh);
}

int envelope_get(const part_store *ps, part_id id, uint32_t out[4])
{
    const part *p = part_store_get(ps, id);
    if (p == NULL || p->kind != PART_SIGNAL || p->len != 20 ||
        word(p->data, 0) != SIG_ENVELOPE)
        return -1;
    for (uint32_t k = 0; k < 4; k++)
        out[k] = word(p->data, k + 1);
    return 0;
}

static part_id empty_vector(part_store *ps)
{
    int fresh;
    return part_store_intern(ps, PART_MAILBOX, "", 0, NULL, 0, &fresh);
}

static int pend_match(const pending_append *p, int is_chan, uint32_t from,
                      uint32_t to, part_id name)
{
    return p->is_chan == is_chan && p->from == from && p->to == to && p->name == name;
}

/* Adds id to the pending appends of a process (is_chan 0, from: its pid)
** or a channel.  Bursts go to one target: the last entry is looked at
** first. */
static int pend_push(sys_state *s, int is_chan, uint32_t from, uint32_t to,
                     part_id name, part_id id)
{
    uint32_t k = s->npend;
    if (k > 0 && pend_match(&s->pend[k - 1], is_chan, from, to, name))
        k--;
    else
        for (k = 0; k < s->npend && !pend_match(&s->pend[k], is_chan, from, to, name); k++)
            ;
    if (k == s->npend) {
        if (grow((void **)&s->pend, &s->cappend, s->npend + 1, sizeof *s->pend) != 0)
            return -1;
        s->pend[k] = (pending_append){ is_chan, from, to, name, NULL, 0, 0 };
        s->npend++;
    }
    pending_append *p = &s->pend[k];
    if (grow((void **)&p->ids, &p->cap, p->n + 1, sizeof *p->ids) != 0)
        return -1;
    p->ids[p->n++] = id;
    return 0;
}

/* Drops the pending appends of a process or channel that goes away. */
static void pend_drop(sys_state *s, int is_chan, uint32_t from, uint32_t to, part_id name)
{
    for (uint32_t k = s->npend; k-- > 0;)
        if (pend_match(&s->pend[k], is_chan, from, to, name))
            drop_pending(s, k);
}

int sys_state_append(sys_state *s, uint32_t index, part_id msg)
{
    if (msg == 0)
        return -1;
    return pend_push(s, 0, s->procs[index].pid, 0, 0, msg);
}

static part_id concat(part_store *ps, part_id base, const part_id *ids, uint32_t n)
{
    const part *m = part_store_get(ps, base);
    if (m == NULL || m->kind != PART_MAILBOX)
        return 0;
    uint32_t had = m->len / 4;
    uint32_t *buf = malloc(((size_t)had + n) * sizeof *buf);
    if (buf == NULL)
        return 0;
    if (had)
        memcpy(buf, m->data, 4 * (size_t)had);
    memcpy(buf + had, ids, 4 * (size_t)n);
    int fresh;
    part_id id = part_store_intern(ps, PART_MAILBOX, buf, 4 * (had + n), NULL, 0, &fresh);
    free(buf);
    return id;
}

int sys_state_flush(part_store *ps, sys_state *s)
{
    while (s->npend > 0) {
        pending_append *p = &s->pend[s->npend - 1];
        part_id *field = NULL;
        if (p->is_chan) {
            int i = sys_state_find_channel(s, p->from, p->to, p->name);
            if (i >= 0)
                field = &s->chans[i].queue;
        } else {
            int i = sys_state_find(s, p->from);
            if (i >= 0)
                field = &s->procs[i].mailbox;
        }
        if (field != NULL) {
            part_id id = concat(ps, *field, p->ids, p->n);
            if (id == 0)
                return -1;
            *field = id;
        }
        drop_pending(s, s->npend - 1);
    }
    return 0;
}

int sys_state_enqueue(part_store *ps, sys_state *s, uint32_t from,
                      uint32_t to, part_id name, part_id sig)
{
    if (sig == 0)
        return -1;
    uint32_t i = 0;
    while (i < s->nchans && chan_cmp(&s->chans[i], from, to, name) < 0)
        i++;
    if (i == s->nchans || chan_cmp(&s->chans[i], from, to, name) != 0) {
        part_id empty = empty_vector(ps);
        if (empty == 0 ||
            grow((void **)&s->chans, &s->capchans, s->nchans + 1, sizeof *s->chans) != 0)
            return -1;
        memmove(&s->chans[i + 1], &s->chans[i], (s->nchans - i) * sizeof *s->chans);
        s->chans[i] = (channel){ from, to, name, empty };
        s->nchans++;
    }
    return pend_push(s, 1, from, to, name, sig);
}

void sys_state_remove_channel(sys_state *s, uint32_t i)
{
    pend_drop(s, 1, s->chans[i].from, s->chans[i].to, s->chans[i].name);
    memmove(&s->chans[i], &s->chans[i + 1], (s->nchans - i - 1) * sizeof *s->chans);
    s->nchans--;
}

int sys_state_dequeue(part_store *ps, sys_state *s, uint32_t i)
{
    if (s->npend != 0 && sys_state_flush(ps, s) != 0)
        return -1;
    if (mailbox_length(ps, s->chans[i].queue) <= 1) {
        sys_state_remove_channel(s, i);
        return 0;
    }
    part_id q = mailbox_remove(ps, s->chans[i].queue, 0);
    if (q == 0)
        return -1;
    s->chans[i].queue = q;
    return 0;
}

int sys_state_find_table(const sys_state *s, uint32_t tid)
{
    for (uint32_t i = 0; i < s->ntables; i++)
        if (s->tables[i].tid == tid)
            return (int)i;
    return -1;
}

int sys_state_put_table(sys_state *s, const ets_table *t)
{
    uint32_t i = 0;
    while (i < s->ntables && s->tables[i].tid < t->tid)
        i++;
    if (i < s->ntables && s->tables[i].tid == t->tid) {
        s->tables[i] = *t;
        return 0;
    }
    if (grow((void **)&s->tables, &s->captables, s->ntables + 1, sizeof *s->tables) != 0)
        return -1;
    memmove(&s->tables[i + 1], &s->tables[i], (s->ntables - i) * sizeof *s->tables);
    s->tables[i] = *t;
    s->ntables++;
    return 0;
}

void sys_state_remove_table(sys_state *s, uint32_t i)
{
    memmove(&s->tables[i], &s->tables[i + 1], (s->ntables - i - 1) * sizeof *s->tables);
    s->ntables--;
}

static uint32_t pair(uint32_t a, uint32_t b)
{
    return a < b ? a << 8 | b : b << 8 | a;
}

int sys_state_disconnected(const sys_state *s, uint32_t a, uint32_t b)
{
    uint32_t p = pair(a, b);
    for (uint32_t i = 0; i < s->ndisc; i++)
        if (s->disc[i] == p)
            return 1;
    return 0;
}

int sys_state_set_disconnected(sys_state *s, uint32_t a, uint32_t b, int on)
{
    uint32_t p = pair(a, b), i = 0;
    while (i < s->ndisc && s->disc[i] < p)
        i++;
    int there = i < s->ndisc && s->disc[i] == p;
    if (on && !there) {
        if (grow((void **)&s->disc, &s->capdisc, s->ndisc + 1, sizeof *s->disc) != 0)
            return -1;
        memmove(&s->disc[i + 1], &s->disc[i], (s->ndisc - i) * sizeof *s->disc);
        s->disc[i] = p;
        s->ndisc++;
    } else if (!on && there) {
        memmove(&s->disc[i], &s->disc[i + 1], (s->ndisc - i - 1) * sizeof *s->disc);
        s->ndisc--;
    }
    return 0;
}

int sys_state_node_monitor(sys_state *s, uint32_t pid, uint32_t node, int delta)
{
    uint32_t i = 0;
    while (i < s->nnodemons && (s->nodemons[i].pid < pid ||
                                (s->nodemons[i].pid == pid && s->nodemons[i].node < node)))
        i++;
    int there = i < s->nnodemons && s->nodemons[i].pid == pid && s->nodemons[i].node == node;
    if (delta > 0) {
        if (there) {
            s->nodemons[i].count++;
            return 0;
        }
        if (grow((void **)&s->nodemons, &s->capnodemons, s->nnodemons + 1,
                 sizeof *s->nodemons) != 0)
            return -1;
        memmove(&s->nodemons[i + 1], &s->nodemons[i],
                (s->nnodemons - i) * sizeof *s->nodemons);
        s->nodemons[i] = (node_monitor){ pid, node, 1 };
        s->nnodemons++;
    } else if (there && --s->nodemons[i].count == 0) {
        memmove(&s->nodemons[i], &s->nodemons[i + 1],
                (s->nnodemons - i - 1) * sizeof *s->nodemons);
        s->nnodemons--;
    }
    return 0;
}

int sys_state_insert(sys_state *s, const proc *p)
{
    if (reserve(s, s->nprocs + 1) != 0)
        return -1;
    uint32_t i = 0;
    while (i < s->nprocs && s->procs[i].pid < p->pid)
        i++;
    memmove(&s->procs[i + 1], &s->procs[i],
            (s->nprocs - i) * sizeof *s->procs);
    s->procs[i] = *p;
    s->nprocs++;
    return (int)i;
}

void sys_state_remove(sys_state *s, uint32_t index)
{
    pend_drop(s, 0, s->procs[index].pid, 0, 0);
    proc_free(&s->procs[index]);
    memmove(&s->procs[index], &s->procs[index + 1],
            (s->nprocs - index - 1) * sizeof *s->procs);
    s->nprocs--;
}

int proc_link_add(proc *p, uint32_t pid)
{
    uint32_t i = 0;
    while (i < p->nlinks && p->links[i] < pid)
        i++;
    if (i < p->nlinks && p->links[i] == pid)
        return 0;
    if (p->nlinks == p->caplinks) {
        uint32_t cap = p->caplinks ? p->caplinks * 2 : 4;
        uint32_t *grown = realloc(p->links, cap * sizeof *grown);
        if (grown == NULL)
            return -1;
        p->links = grown;
        p->caplinks = cap;
    }
    memmove(&p->links[i + 1], &p->links[i],
            (p->nlinks - i) * sizeof *p->links);
    p->links[i] = pid;
    p->nlinks++;
    return 0;
}

void proc_link_remove(proc *p, uint32_t pid)
{
    for (uint32_t i = 0; i < p->nlinks; i++) {
        if (p->links[i] == pid) {
            memmove(&p->links[i], &p->links[i + 1],
                    (p->nlinks - i - 1) * sizeof *p->links);
            p->nlinks--;
            return;
        }
    }
}

uint32_t mailbox_length(const part_store *ps, part_id mailbox)
{
    const part *m = part_store_get(ps, mailbox);
    return m ? m->len / 4 : 0;
}

part_id mailbox_at(const part_store *ps, part_id mailbox, uint32_t index)
{
    const part *m = part_store_get(ps, mailbox);
    if (m == NULL || index >= m->len / 4)
        return 0;
    return word(m->data, index);
}

part_id mailbox_append(part_store *ps, part_id mailbox, part_id msg)
{
    const part *m = part_store_get(ps, mailbox);
    if (m == NULL)
        return 0;
    uint32_t n = m->len / 4;
    uint32_t *buf = malloc((n + 1) * sizeof *buf);
    if (buf == NULL)
        return 0;
    if (n)
        memcpy(buf, m->data, 4 * (size_t)n);
    buf[n] = msg;
    int fresh;
    part_id id = part_store_intern(ps, PART_MAILBOX, buf, 4 * (n + 1), NULL,
                                   0, &fresh);
    free(buf);
    return id;
}

part_id mailbox_replace(part_store *ps, part_id mailbox, uint32_t index, part_id msg)
{
    const part *m = part_store_get(ps, mailbox);
    if (m == NULL || index >= m->len / 4)
        return 0;
    uint32_t n = m->len / 4;
    uint32_t *buf = malloc(n * sizeof *buf);
    if (buf == NULL)
        return 0;
    for (uint32_t i = 0; i < n; i++)
        buf[i] = i == index ? msg : word(m->data, i);
    int fresh;
    part_id id = part_store_intern(ps, PART_MAILBOX, buf, 4 * n, NULL, 0, &fresh);
    free(buf);
    return id;
}

part_id mailbox_remove(part_store *ps, part_id mailbox, uint32_t index)
{
    const part *m = part_store_get(ps, mailbox);
    if (m == NULL || index >= m->len / 4)
        return 0;
    uint32_t n = m->len / 4;
    uint32_t *buf = malloc((n ? n : 1) * sizeof *buf);
    if (buf == NULL)
        return 0;
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (i != index)
            buf[k++] = word(m->data, i);
    int fresh;
    part_id id = part_store_intern(ps, PART_MAILBOX, buf, 4 * k, NULL, 0,
                                   &fresh);
    free(buf);
    return id;
}
