/*
** huge_alloc.c: owns the mappings of big allocations (huge_alloc.h).
**
** Invariant: an allocation of HUGE_MIN bytes or more is a private anonymous
** mapping of `bytes` rounded up to HUGE_MIN, starting at a multiple of
** HUGE_MIN (a huge page can only back an aligned 2 MB range); anything
** smaller, and everything under AddressSanitizer, is calloc's.  Anonymous
** mappings are zeroed by the kernel.
*/
#define _DEFAULT_SOURCE
#include "huge_alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

static size_t mapped_size(size_t bytes)
{
    return (bytes + HUGE_MIN - 1) & ~(HUGE_MIN - 1);
}

void *huge_calloc(size_t bytes)
{
    /* No address space holds half of it: refused here, not by the
    ** allocator (AddressSanitizer's aborts on such a size). */
    if (bytes > SIZE_MAX / 2)
        return NULL;
    if (bytes < HUGE_MIN || !HUGE_MAPPED)
        return calloc(1, bytes);
    size_t len = mapped_size(bytes);
    if (len < bytes || len + HUGE_MIN < len)
        return NULL;
    /* Over-map by one huge page, then give back the unaligned head and
    ** the tail. */
    uint8_t *raw = mmap(NULL, len + HUGE_MIN, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    uintptr_t at = ((uintptr_t)raw + HUGE_MIN - 1) & ~(uintptr_t)(HUGE_MIN - 1);
    uint8_t *p = (uint8_t *)at;
    size_t head = (size_t)(p - raw), tail = HUGE_MIN - head;
    if (head > 0)
        munmap(raw, head);
    if (tail > 0)
        munmap(p + len, tail);
#ifdef MADV_HUGEPAGE
    /* Advice only: a kernel without huge pages keeps small ones. */
    (void)madvise(p, len, MADV_HUGEPAGE);
#endif
    return p;
}

void huge_free(void *p, size_t bytes)
{
    if (p == NULL)
        return;
    if (bytes < HUGE_MIN || !HUGE_MAPPED)
        free(p);
    else
        munmap(p, mapped_size(bytes));
}
