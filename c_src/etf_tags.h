/*
** etf_tags.h: the external term format's tags and the sizes of its leaf
** terms, for the two walkers of encoded terms (etf_scan.c: pids and refs
** to rename or list; etf_order.c: term order and map keys).
**
** A leaf term is one with no terms inside (numbers, atoms, strings,
** binaries): its bytes after the tag are known from a length field, so
** both walkers skip it the same way.
*/
#ifndef MCE_ETF_TAGS_H
#define MCE_ETF_TAGS_H

#include <stddef.h>
#include <stdint.h>

enum {
    NEW_FLOAT_EXT = 70, BIT_BINARY_EXT = 77, NEW_PID_EXT = 88, NEW_PORT_EXT = 89,
    NEWER_REFERENCE_EXT = 90, SMALL_INTEGER_EXT = 97, INTEGER_EXT = 98, FLOAT_EXT = 99,
    ATOM_EXT = 100, REFERENCE_EXT = 101, PORT_EXT = 102, PID_EXT = 103,
    SMALL_TUPLE_EXT = 104, LARGE_TUPLE_EXT = 105, NIL_EXT = 106, STRING_EXT = 107,
    LIST_EXT = 108, BINARY_EXT = 109, SMALL_BIG_EXT = 110, LARGE_BIG_EXT = 111,
    NEW_FUN_EXT = 112, EXPORT_EXT = 113, NEW_REFERENCE_EXT = 114, SMALL_ATOM_EXT = 115,
    MAP_EXT = 116, FUN_EXT = 117, ATOM_UTF8_EXT = 118, SMALL_ATOM_UTF8_EXT = 119,
    V4_PORT_EXT = 120
};

static inline uint32_t etf_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static inline uint16_t etf_be16(const uint8_t *p)
{
    return (uint16_t)(((unsigned)p[0] << 8) | p[1]);
}

/* A leaf term's bytes after its tag, given the `avail' bytes at p (just
** past the tag): 1 and *size for a leaf, whether or not all of it is
** there (the caller checks *size against what is left); 0 for a tag that
** is no leaf; -1 when its length field is cut short. */
static inline int etf_leaf_size(uint8_t tag, const uint8_t *p, size_t avail, size_t *size)
{
    switch (tag) {
    case SMALL_INTEGER_EXT: *size = 1; return 1;
    case INTEGER_EXT: *size = 4; return 1;
    case FLOAT_EXT: *size = 31; return 1;
    case NEW_FLOAT_EXT: *size = 8; return 1;
    case NIL_EXT: *size = 0; return 1;
    case ATOM_EXT: case ATOM_UTF8_EXT: case STRING_EXT:
        if (avail < 2) return -1;
        *size = 2 + (size_t)etf_be16(p);
        return 1;
    case SMALL_ATOM_EXT: case SMALL_ATOM_UTF8_EXT:
        if (avail < 1) return -1;
        *size = 1 + (size_t)p[0];
        return 1;
    case BINARY_EXT:
        if (avail < 4) return -1;
        *size = 4 + (size_t)etf_be32(p);
        return 1;
    case BIT_BINARY_EXT: case LARGE_BIG_EXT:
        if (avail < 4) return -1;
        *size = 5 + (size_t)etf_be32(p);
        return 1;
    case SMALL_BIG_EXT:
        if (avail < 1) return -1;
        *size = 2 + (size_t)p[0];
        return 1;
    default:
        return 0;
    }
}

#endif
