/*
** sys_state_codec.c: a system state to and from interned parts: decoding
** a PART_STATE root (or a lossy table's bare root vector) into the working
** sys_state, and encoding a sys_state back, re-interning only the process
** records and the world a step changed.
**
** Invariant: encode(decode(id)) == id.  A decoded record remembers the part
** it came from (proc.enc, world_enc) only as a hint: the encoder compares
** the bytes before reusing the id, so an edit never has to clear it.
*/
#include "sys_state.h"
#include "sys_state_internal.h"

#include <stdlib.h>
#include <string.h>

static int decode_world(const part_store *ps, part_id id, sys_state *out)
{
    if (id == 0)
        return 0;
    const part *w = part_store_get(ps, id);
    if (w == NULL || w->kind != PART_WORLD || w->len % 4 != 0)
        return -1;
    uint32_t total = w->len / 4, at = 0;
    if (total < 9)
        return -1;
    out->down = (uint64_t)word(w->data, 0) | (uint64_t)word(w->data, 1) << 32;
    out->crashes = word(w->data, 2);
    out->disconnects = word(w->data, 3);
    out->kills = word(w->data, 4);
    out->uniq = word(w->data, 5);
    out->app_env = word(w->data, 6);
    out->observer = word(w->data, 7);
    at = 8;
    uint32_t n = word(w->data, at++);
    if (n > total - at || grow((void **)&out->disc, &out->capdisc, n, 4) != 0)
        return -1;
    for (uint32_t k = 0; k < n; k++)
        out->disc[k] = word(w->data, at++);
    out->ndisc = n;
    if (at >= total)
        return -1;
    n = word(w->data, at++);
    if (n > (total - at) / 3 ||
        grow((void **)&out->nodemons, &out->capnodemons, n, sizeof *out->nodemons) != 0)
        return -1;
    for (uint32_t k = 0; k < n; k++) {
        out->nodemons[k].pid = word(w->data, at++);
        out->nodemons[k].node = word(w->data, at++);
        out->nodemons[k].count = word(w->data, at++);
    }
    out->nnodemons = n;
    if (at >= total)
        return -1;
    n = word(w->data, at++);
    if (n > (total - at) / 4 ||
        grow((void **)&out->chans, &out->capchans, n, sizeof *out->chans) != 0)
        return -1;
    for (uint32_t k = 0; k < n; k++) {
        out->chans[k].from = word(w->data, at++);
        out->chans[k].to = word(w->data, at++);
        out->chans[k].name = word(w->data, at++);
        out->chans[k].queue = word(w->data, at++);
    }
    out->nchans = n;
    if (at >= total)
        return -1;
    n = word(w->data, at++);
    if (n > (total - at) / 6 ||
        grow((void **)&out->tables, &out->captables, n, sizeof *out->tables) != 0)
        return -1;
    for (uint32_t k = 0; k < n; k++) {
        out->tables[k].tid = word(w->data, at++);
        out->tables[k].owner = word(w->data, at++);
        out->tables[k].heir = word(w->data, at++);
        out->tables[k].heir_data = word(w->data, at++);
        out->tables[k].name = word(w->data, at++);
        out->tables[k].data = word(w->data, at++);
    }
    out->ntables = n;
    return at == total ? 0 : -1;
}

int sys_state_decode(const part_store *ps, part_id root, sys_state *out)
{
    memset(out, 0, sizeof *out);
    return sys_state_decode_into(ps, root, out);
}

int sys_state_decode_into(const part_store *ps, part_id root, sys_state *out)
{
    const part *r = part_store_get(ps, root);
    if (r == NULL || r->kind != PART_STATE) {
        sys_state_clear(out);
        return -1;
    }
    return sys_state_decode_bytes_into(ps, r->data, r->len, out);
}

int sys_state_decode_bytes(const part_store *ps, const uint8_t *root,
                           size_t len, sys_state *out)
{
    memset(out, 0, sizeof *out);
    return sys_state_decode_bytes_into(ps, root, len, out);
}

int sys_state_decode_bytes_into(const part_store *ps, const uint8_t *root,
                                size_t len, sys_state *out)
{
    empty_keeping_buffers(out);
    if (len < 4 || len % 4 != 0 || len / 4 > UINT32_MAX)
        goto fail;
    if (decode_world(ps, word(root, 0), out) != 0)
        goto fail;
    out->world_enc = word(root, 0);
    uint32_t n = (uint32_t)(len / 4) - 1;
    while (out->nprocs > n)
        proc_free(&out->procs[--out->nprocs]);
    if (reserve(out, n) != 0)
        goto fail;
    for (uint32_t i = 0; i < n; i++) {
        const part *pp = part_store_get(ps, word(root, i + 1));
        if (pp == NULL || pp->kind != PART_PROC || pp->len < 4 * PROC_FIXED_WORDS)
            goto fail;
        proc *p = &out->procs[i];
        if (i >= out->nprocs) {
            memset(p, 0, sizeof *p);
            out->nprocs = i + 1;
        }
        p->pid = word(pp->data, 0);
        p->status = word(pp->data, 1);
        p->cont = word(pp->data, 2);
        p->mailbox = word(pp->data, 3);
        p->flags = word(pp->data, 4);
        p->dict = word(pp->data, 5);
        p->name = word(pp->data, 6);
        p->gl = 0;
        p->enc = word(root, i + 1);
        p->nlinks = p->mons.n = p->monby.n = p->aliases.n = 0;
        /* Every count is checked against the words left, so a huge count
        ** cannot make the reads run past the record. */
        uint32_t total = pp->len / 4, at = PROC_FIXED_WORDS - 1;
        if (pp->len % 4 != 0)
            goto fail;
        uint32_t nlinks = word(pp->data, at++);
        if (nlinks > total - at ||
            refill((void **)&p->links, &p->caplinks, pp->data + 4 * (size_t)at,
                   nlinks, sizeof *p->links) != 0)
            goto fail;
        p->nlinks = nlinks;
        at += nlinks;
        for (int set = 0; set < 3; set++) {
            monitor_set *ms = set == 0 ? &p->mons : set == 1 ? &p->monby : &p->aliases;
            if (at >= total)
                goto fail;
            uint32_t n = word(pp->data, at++);
            if (n > (total - at) / 3 ||
                grow((void **)&ms->m, &ms->cap, n, sizeof *ms->m) != 0)
                goto fail;
            for (uint32_t k = 0; k < n; k++) {
                ms->m[k].ref = word(pp->data, at++);
                ms->m[k].pid = word(pp->data, at++);
                ms->m[k].item = word(pp->data, at++);
            }
            ms->n = n;
        }
        /* The default group leader has no word: a stored 0 would make a
        ** second encoding of the same state. */
        if (at + 1 == total && (p->gl = word(pp->data, at++)) == 0)
            goto fail;
        if (at != total)
            goto fail;
    }
    return 0;
fail:
    sys_state_clear(out);
    return -1;
}

/* The world part, 0 when it is all empty; 0 and *err on failure. */
static part_id encode_world(part_store *ps, const sys_state *s, int *err)
{
    *err = 0;
    if (s->down == 0 && s->crashes == 0 && s->disconnects == 0 &&
        s->kills == 0 && s->uniq == 0 && s->app_env == 0 && s->observer == 0 &&
        s->ndisc == 0 && s->nnodemons == 0 &&
        s->nchans == 0 && s->ntables == 0)
        return 0;
    uint32_t words = 12 + s->ndisc + 3 * s->nnodemons + 4 * s->nchans + 6 * s->ntables;
    uint32_t small[64];
    uint32_t *buf = words <= 64 ? small : malloc(words * sizeof *buf);
    if (buf == NULL) {
        *err = 1;
        return 0;
    }
    uint32_t at = 0;
    buf[at++] = (uint32_t)s->down;
    buf[at++] = (uint32_t)(s->down >> 32);
    buf[at++] = s->crashes;
    buf[at++] = s->disconnects;
    buf[at++] = s->kills;
    buf[at++] = s->uniq;
    buf[at++] = s->app_env;
    buf[at++] = s->observer;
    buf[at++] = s->ndisc;
    for (uint32_t k = 0; k < s->ndisc; k++)
        buf[at++] = s->disc[k];
    buf[at++] = s->nnodemons;
    for (uint32_t k = 0; k < s->nnodemons; k++) {
        buf[at++] = s->nodemons[k].pid;
        buf[at++] = s->nodemons[k].node;
        buf[at++] = s->nodemons[k].count;
    }
    buf[at++] = s->nchans;
    for (uint32_t k = 0; k < s->nchans; k++) {
        buf[at++] = s->chans[k].from;
        buf[at++] = s->chans[k].to;
        buf[at++] = s->chans[k].name;
        buf[at++] = s->chans[k].queue;
    }
    buf[at++] = s->ntables;
    for (uint32_t k = 0; k < s->ntables; k++) {
        buf[at++] = s->tables[k].tid;
        buf[at++] = s->tables[k].owner;
        buf[at++] = s->tables[k].heir;
        buf[at++] = s->tables[k].heir_data;
        buf[at++] = s->tables[k].name;
        buf[at++] = s->tables[k].data;
    }
    int fresh;
    part_id id = part_store_intern_hinted(ps, s->world_enc, PART_WORLD, buf, 4 * at, &fresh);
    if (buf != small)
        free(buf);
    if (id == 0)
        *err = 1;
    return id;
}

/* Interns the world and the processes; returns the root vector (malloc'd,
** nprocs + 1 words), NULL on allocation failure. */
static uint32_t *encode_root(part_store *ps, const sys_state *s)
{
    uint32_t *ids = malloc((s->nprocs + 1) * sizeof *ids);
    if (ids == NULL)
        return NULL;
    uint32_t small[128];    /* most records fit: no allocation */
    uint32_t *buf = small;
    uint32_t bufcap = 128;
    int err;
    ids[0] = encode_world(ps, s, &err);
    if (err)
        goto fail;
    for (uint32_t i = 0; i < s->nprocs; i++) {
        const proc *p = &s->procs[i];
        uint32_t words = PROC_FIXED_WORDS + p->nlinks + 3 +
                         3 * (p->mons.n + p->monby.n + p->aliases.n) + (p->gl != 0);
        if (words > bufcap) {
            uint32_t *grown = realloc(buf == small ? NULL : buf, words * sizeof *grown);
            if (grown == NULL)
                goto fail;
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
        for (int set = 0; set < 3; set++) {
            const monitor_set *ms = set == 0 ? &p->mons : set == 1 ? &p->monby : &p->aliases;
            buf[at++] = ms->n;
            for (uint32_t k = 0; k < ms->n; k++) {
                buf[at++] = ms->m[k].ref;
                buf[at++] = ms->m[k].pid;
                buf[at++] = ms->m[k].item;
            }
        }
        if (p->gl != 0)
            buf[at++] = p->gl;
        int fresh;
        ids[i + 1] = part_store_intern_hinted(ps, p->enc, PART_PROC, buf, 4 * words,
                                              &fresh);
        if (ids[i + 1] == 0)
            goto fail;
    }
    if (buf != small)
        free(buf);
    return ids;
fail:
    if (buf != small)
        free(buf);
    free(ids);
    return NULL;
}

part_id sys_state_encode(part_store *ps, const sys_state *s, int *is_new)
{
    if (s->npend != 0)
        return 0;
    uint32_t *ids = encode_root(ps, s);
    if (ids == NULL)
        return 0;
    part_id root = part_store_intern(ps, PART_STATE, ids, 4 * (s->nprocs + 1),
                                     NULL, 0, is_new);
    free(ids);
    return root;
}

uint8_t *sys_state_encode_root(part_store *ps, const sys_state *s,
                               uint32_t *len)
{
    if (s->npend != 0)
        return NULL;
    uint32_t *ids = encode_root(ps, s);
    if (ids == NULL)
        return NULL;
    *len = 4 * (s->nprocs + 1);
    return (uint8_t *)ids;
}
