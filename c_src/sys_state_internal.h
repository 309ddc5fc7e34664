/*
** sys_state_internal.h: what sys_state.c (editing a decoded state) and
** sys_state_codec.c (decoding and encoding it) share, and state_wire.c
** (decoding a state's wire bytes) with them: the process record's fixed
** words and the growth of the state's vectors.  Nothing else includes it.
*/
#ifndef MCE_SYS_STATE_INTERNAL_H
#define MCE_SYS_STATE_INTERNAL_H

#include <stdlib.h>
#include <string.h>

#include "sys_state.h"

/* Words of a PART_PROC record before its links (sys_state.h). */
#define PROC_FIXED_WORDS 8

static inline void drop_pending(sys_state *s, uint32_t k)
{
    free(s->pend[k].ids);
    s->pend[k] = s->pend[--s->npend];
}

/* Before a state is decoded again: its world emptied, its pending
** appends dropped, its buffers kept (the processes are overwritten). */
static inline void empty_keeping_buffers(sys_state *s)
{
    while (s->npend > 0)
        drop_pending(s, s->npend - 1);
    s->down = 0;
    s->crashes = s->disconnects = s->kills = s->uniq = 0;
    s->app_env = s->observer = s->world_enc = 0;
    s->ndisc = s->nnodemons = s->nchans = s->ntables = 0;
}

static inline int grow(void **v, uint32_t *cap, uint32_t n, size_t size)
{
    if (n <= *cap)
        return 0;
    uint32_t ncap = *cap ? *cap : 4;
    while (ncap < n)
        ncap *= 2;
    void *grown = realloc(*v, ncap * size);
    if (grown == NULL)
        return -1;
    *v = grown;
    *cap = ncap;
    return 0;
}

static inline int reserve(sys_state *s, uint32_t n)
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

static inline int refill(void **dst, uint32_t *cap, const void *src, uint32_t n, size_t size)
{
    if (n == 0)
        return 0;
    if (grow(dst, cap, n, size) != 0)
        return -1;
    memcpy(*dst, src, n * size);
    return 0;
}

static inline uint32_t word(const uint8_t *data, uint32_t i)
{
    uint32_t w;
    memcpy(&w, data + 4 * (size_t)i, 4);
    return w;
}

#endif
