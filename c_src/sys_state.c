/*
** sys_state.c: decoding, editing and re-interning of one system state.
*/
#include "sys_state.h"

#include <stdlib.h>
#include <string.h>

#define PROC_FIXED_WORDS 8

void proc_free(proc *p)
{
    free(p->links);
    free(p->mons.m);
    free(p->monby.m);
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
    for (uint32_t i = 0; i < s->nprocs; i++)
        proc_free(&s->procs[i]);
    free(s->procs);
    s->procs = NULL;
    s->nprocs = s->cap = 0;
}

static int reserve(sys_state *s, uint32_t n)
{
    if (n <= s->cap)
        return 0;
    uint32_t cap = s->cap ? s->cap : 8;
    while (cap < n)
        cap *= 2;
    proc *grown = realloc(s->procs, cap * sizeof *grown);
    if (grown == NULL)
        return -1;
    s->procs = grown;
    s->cap = cap;
    return 0;
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
    dst->procs = NULL;
    dst->nprocs = dst->cap = 0;
    if (reserve(dst, src->nprocs) != 0)
        return -1;
    for (uint32_t i = 0; i < src->nprocs; i++) {
        const proc *sp = &src->procs[i];
        proc *dp = &dst->procs[i];
        *dp = *sp;
        dp->mons.m = dp->monby.m = NULL;
        if (copy_links(dp, sp->links, sp->nlinks) != 0 ||
            monitors_copy(&dp->mons, sp->mons.m, sp->mons.n) != 0 ||
            monitors_copy(&dp->monby, sp->monby.m, sp->monby.n) != 0) {
            dst->nprocs = i + 1;
            sys_state_clear(dst);
            return -1;
        }
    }
    dst->nprocs = src->nprocs;
    return 0;
}

static uint32_t word(const uint8_t *data, uint32_t i)
{
    uint32_t w;
    memcpy(&w, data + 4 * (size_t)i, 4);
    return w;
}

int sys_state_decode(const part_store *ps, part_id root, sys_state *out)
{
    out->procs = NULL;
    out->nprocs = out->cap = 0;
    const part *r = part_store_get(ps, root);
    if (r == NULL || r->kind != PART_STATE)
        return -1;
    uint32_t n = r->len / 4;
    if (reserve(out, n) != 0)
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        const part *pp = part_store_get(ps, word(r->data, i));
        if (pp == NULL || pp->kind != PART_PROC || pp->len < 4 * PROC_FIXED_WORDS)
            goto fail;
        proc *p = &out->procs[i];
        p->pid = word(pp->data, 0);
        p->status = word(pp->data, 1);
        p->cont = word(pp->data, 2);
        p->mailbox = word(pp->data, 3);
        p->flags = word(pp->data, 4);
        p->dict = word(pp->data, 5);
        p->name = word(pp->data, 6);
        p->links = NULL;
        p->mons.m = p->monby.m = NULL;
        out->nprocs = i + 1;
        /* Every count is checked against the words left, so a huge count
        ** cannot make the reads run past the record. */
        uint32_t total = pp->len / 4, at = PROC_FIXED_WORDS - 1;
        if (pp->len % 4 != 0)
            goto fail;
        uint32_t nlinks = word(pp->data, at++);
        if (nlinks > total - at ||
            copy_links(p, (const uint32_t *)(const void *)(pp->data + 4 * (size_t)at),
                       nlinks) != 0)
            goto fail;
        at += nlinks;
        for (int set = 0; set < 2; set++) {
            monitor_set *ms = set == 0 ? &p->mons : &p->monby;
            if (at >= total)
                goto fail;
            uint32_t n = word(pp->data, at++);
            if (n > (total - at) / 3)
                goto fail;
            ms->m = n ? malloc(n * sizeof *ms->m) : NULL;
            if (n && ms->m == NULL)
                goto fail;
            for (uint32_t k = 0; k < n; k++) {
                ms->m[k].ref = word(pp->data, at++);
                ms->m[k].pid = word(pp->data, at++);
                ms->m[k].item = word(pp->data, at++);
            }
            ms->n = ms->cap = n;
        }
        if (at != total)
            goto fail;
    }
    return 0;
fail:
    sys_state_clear(out);
    return -1;
}

part_id sys_state_encode(part_store *ps, const sys_state *s, int *is_new)
{
    uint32_t *ids = malloc((s->nprocs ? s->nprocs : 1) * sizeof *ids);
    if (ids == NULL)
        return 0;
    uint32_t *buf = NULL;
    uint32_t bufcap = 0;
    part_id root = 0;
    for (uint32_t i = 0; i < s->nprocs; i++) {
        const proc *p = &s->procs[i];
        uint32_t words = PROC_FIXED_WORDS + p->nlinks + 2 +
                         3 * (p->mons.n + p->monby.n);
        if (words > bufcap) {
            uint32_t *grown = realloc(buf, words * sizeof *grown);
            if (grown == NULL)
                goto out;
            buf = grown;
            bufcap = words;
        }
        buf[0] = p->pid;
        buf[1] = p->status;
        buf[2] = p->cont;
        buf[3] = p->mailbox;
        buf[4] = p->flags;
        buf[5] = p->dict;
        buf[6] = p->name;
        buf[7] = p->nlinks;
        if (p->nlinks)
            memcpy(buf + PROC_FIXED_WORDS, p->links, p->nlinks * sizeof *buf);
        uint32_t at = PROC_FIXED_WORDS + p->nlinks;
        for (int set = 0; set < 2; set++) {
            const monitor_set *ms = set == 0 ? &p->mons : &p->monby;
            buf[at++] = ms->n;
            for (uint32_t k = 0; k < ms->n; k++) {
                buf[at++] = ms->m[k].ref;
                buf[at++] = ms->m[k].pid;
                buf[at++] = ms->m[k].item;
            }
        }
        int fresh;
        ids[i] = part_store_intern(ps, PART_PROC, buf, 4 * words, NULL, 0,
                                   &fresh);
        if (ids[i] == 0)
            goto out;
    }
    root = part_store_intern(ps, PART_STATE, ids, 4 * s->nprocs, NULL, 0,
                             is_new);
out:
    free(buf);
    free(ids);
    return root;
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

int sys_state_find_name(const sys_state *s, part_id name)
{
    for (uint32_t i = 0; name != 0 && i < s->nprocs; i++)
        if (s->procs[i].name == name)
            return (int)i;
    return -1;
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
