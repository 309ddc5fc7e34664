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

/* Under AddressSanitizer every allocation is calloc's, so that an access
** past the end of an index or a segment is still caught (a mapping has no
** redzone). */
#if defined(__SANITIZE_ADDRESS__)
#define HUGE_MAPPED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HUGE_MAPPED 0
#endif
#endif
#ifndef HUGE_MAPPED
#define HUGE_MAPPED 1
#endif

/* Zeroed memory of `bytes` bytes, or NULL. */
void *huge_calloc(size_t bytes);

/* Frees what huge_calloc(bytes) returned (NULL is ignored). */
void huge_free(void *p, size_t bytes);

#endif
