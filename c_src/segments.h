/*
** segments.h: where item i of a segmented array lives.  Segment k holds
** 2^(k + base) items, so a few dozen segment pointers cover every 32-bit
** index and a segment, once allocated, never moves: a reader may follow
** an index while another thread appends (part_store.c, search_pool.c).
*/
#ifndef MCE_SEGMENTS_H
#define MCE_SEGMENTS_H

#include <stdint.h>

/* The segment of item i; *off its place in it. */
static inline unsigned segment_of(uint64_t i, unsigned base, uint64_t *off)
{
    uint64_t x = i + ((uint64_t)1 << base);
#if defined(__GNUC__) || defined(__clang__)
    unsigned top = 63u - (unsigned)__builtin_clzll(x);
#else
    unsigned top = 0;
    while ((x >> top) > 1)
        top++;
#endif
    *off = x - ((uint64_t)1 << top);
    return top - base;
}

#endif
