/*
** huge_alloc.h: big zeroed allocations, backed by transparent huge pages
** where the kernel allows them.
**
** The part store's segments, arenas and index are read at random (a probe
** per part interned: the index slot, the part, its bytes), so with 4 KB
** pages nearly every probe of a big state space misses the TLB, and in a
** virtual machine each miss is a two-level page walk.  An allocation of
** HUGE_MIN bytes or more is mapped 2 MB-aligned and advised as huge
** (madvise MADV_HUGEPAGE: kernels set to `madvise', Debian's and Ubuntu's
** default among them, give huge pages only to memory so advised); a
** smaller one is an ordinary calloc.  Either way the memory is zeroed and
** freed with huge_free, given the same size.
*/
#ifndef MCE_HUGE_ALLOC_H
#define MCE_HUGE_ALLOC_H

#include <stddef.h>

#define HUGE_MIN ((size_t)2 << 20)

/* Zeroed memory of `bytes` bytes, or NULL. */
void *huge_calloc(size_t bytes);

/* Frees what huge_calloc(bytes) returned (NULL is ignored). */
void huge_free(void *p, size_t bytes);

#endif
