/*
** part_store.c: owns the interned parts, their arenas and the hash index.
**
** Invariants:
**  - Part `id` lives in segment k = floor(log2(id + SEG0)) - SEG_BITS, at
**    offset id + SEG0 - 2^(k + SEG_BITS).  Segments are allocated once, when
**    the first id in them is claimed, and never move or shrink, so a reader
**    needs no lock to follow an id (a realloc'd array would be freed under
**    it).  Each segment's parts are followed by one ready byte per part.
**  - Ids below `next_id` are taken.  An unshared store claims them one by
**    one; a shared store's shard takes ID_BLOCK at a time and claims them
**    in order, so an id its block never gave out is a hole whose ready byte
**    stays 0 (part_store_get answers NULL).  A claimed part's ready byte is
**    set (release) after its fields and bytes are written and before its
**    id is put in the index, so every id found in an index or handed out
**    names a whole part.  An id is claimed only after its bytes are copied
**    and its segment exists: a failed intern claims nothing, and an
**    unshared store's ids stay dense.
**  - The index is split into NSHARDS shards by the top bits of the hash.  A
**    part's id is in the index of its shard, and only there; the shard's
**    mutex (on a shared store) covers its index, its counts and its arena.
**    So "absent, then added" is atomic per content, which is what makes
**    exactly one interner see is_new.
**  - Each shard's index is open addressing with linear probing over
**    entries (an id and the low 32 bits of its part's hash; 0 = empty) on
**    the low bits of the hash, doubling at 70% load.  While it grows, the
**    old index is kept whole and still probed; its slots move to the new
**    one MOVES at each intern into the shard, so no call rehashes millions
**    of ids.  Lookups compare the entry's hash bits, then the part's 64-bit
**    hash, kind, length and bytes, so the table is exact.
**
** Parts live in chunked bump arenas (a search only adds parts, never frees
** one): one arena for an unshared store, one per shard for a shared one (it
** is then written under the shard's lock only).  Unshared stores take no
** lock and do no read-modify-write atomics: their counters are relaxed
** load-then-store, which compiles to plain moves.
*/
#include "part_store.h"
#include "huge_alloc.h"
#include "segments.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* An arena chunk, its header included, is one huge page (huge_alloc.h). */
#define ARENA_CHUNK (HUGE_MIN - sizeof(arena_chunk))
/* A shared store's shard arenas start smaller, at 64 KB: 64 of them at
** 2 MB each would hold 128 MB before the first state. */
#define SHARD_CHUNK_MIN (ARENA_CHUNK / 32)

#define SHARD_BITS 6
#define NSHARDS (1u << SHARD_BITS)

#define SEG_BITS 10
#define SEG0 ((uint64_t)1 << SEG_BITS)
/* Segments 0..22 hold ids up to 2^33 - 2^10 - 1, past UINT32_MAX. */
#define NSEGS 23

/* Old-index slots moved per intern into a growing shard.  At growth the new
** index is 35% full and must reach 70% before it grows again: that takes
** at least 0.7 * old_nslots new parts, and the old index is gone after
** old_nslots / MOVES interns. */
#define MOVES 16

#define MAX_ID (UINT32_MAX - 2u)

/* Ids a shard of a shared store claims at once (claim_id). */
#define ID_BLOCK 64u

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap;
    alignas(8) uint8_t mem[];
} arena_chunk;

typedef struct arena {
    arena_chunk *head;
    size_t next_cap;        /* the next chunk's size (ordinary parts) */
} arena;

/* An index slot holds a part's id in its low 32 bits and the low 32 bits
** of the part's hash above them (0: empty; ids start at 1).  The hash bits
** let a probe pass a slot without reading the part, a cache miss each (a
** new part's probe passes about six slots at 70% load), and let the index
** grow without reading any part.  The slots are atomics so that a shared
** store can be looked up without the lock (part_store_intern); relaxed
** loads and stores of them are plain moves, so an unshared store pays
** nothing. */
typedef _Atomic uint64_t slot_t;

/* A shard's index never passes 2^32 slots: a slot's position is the low
** bits of its hash, and the slot keeps 32 of them. */
#define MAX_SLOTS ((size_t)1 << 32)

/* Index generations a shared store retired but must keep: a lock-free
** lookup may still probe one.  Each is half the next, so together they
** are smaller than the index in use; 40 growths pass any real size. */
#define MAX_RETIRED 40

typedef struct shard {
    alignas(64) pthread_mutex_t lock;   /* shared stores only */
    slot_t *index;          /* entries, 0 = empty; nslots a power of two */
    size_t nslots;
    _Atomic size_t nids;    /* ids in this shard (written under the lock) */
    /* Shared stores: the ids this shard claimed from `next_id` and has not
    ** given out yet, [id_next, id_end).  Taking ids a block at a time keeps
    ** new parts from bumping one counter every thread writes. */
    size_t id_next, id_end;
    slot_t *old_index;      /* while growing: the previous index, whole */
    size_t old_nslots;
    size_t moved;           /* old slots below this are in `index` too */
    arena arena;            /* shared stores only */
    /* Shared stores: the index as lock-free lookups see it.  The mask is
    ** published after the array, and read before it: a reader gets the
    ** array of its mask's generation or a larger one, so it never probes
    ** past an array's end; a mismatch only makes it miss. */
    _Atomic(slot_t *) pub_index;
    _Atomic size_t pub_mask;
    slot_t *retired[MAX_RETIRED];
    size_t retired_nslots[MAX_RETIRED];
    unsigned nretired;
} shard;

struct part_store {
    _Atomic(part *) seg[NSEGS];
    int concurrent;         /* set once, before a second thread */
    arena arena;            /* unshared stores */
    alignas(64) _Atomic size_t next_id;     /* the next id to claim */
    _Atomic size_t arena_used, arena_bytes; /* all arenas */
    _Atomic size_t seg_bytes;               /* segments allocated */
    _Atomic size_t index_slots;             /* all shards, old and new */
    shard shards[NSHARDS];
};

/* ---- statistics ---------------------------------------------------- */

/* Adds n (wrapping, so a "negative" n subtracts) to a statistic. */
static void stat_add(part_store *ps, _Atomic size_t *c, size_t n)
{
    if (ps->concurrent)
        atomic_fetch_add_explicit(c, n, memory_order_relaxed);
    else
        atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                              memory_order_relaxed);
}

static size_t stat_get(const _Atomic size_t *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

/* ---- segments: where part `id` lives ------------------------------- */

static unsigned seg_of(uint64_t id, size_t *off)
{
    uint64_t o;
    unsigned k = segment_of(id, SEG_BITS, &o);
    *off = (size_t)o;
    return k;
}

static size_t seg_size(unsigned k)
{
    return (size_t)1 << (k + SEG_BITS);
}

static _Atomic uint8_t *ready_bytes(part *seg, unsigned k)
{
    return (_Atomic uint8_t *)(void *)(seg + seg_size(k));
}

/* The slot of an id known to be claimed (its segment exists). */
static part *slot_of(const part_store *ps, part_id id)
{
    size_t off;
    unsigned k = seg_of(id, &off);
    part *seg = atomic_load_explicit((_Atomic(part *) *)&ps->seg[k], memory_order_acquire);
    return &seg[off];
}

/* A segment's parts and their ready bytes. */
static size_t segment_bytes(unsigned k)
{
    return seg_size(k) * (sizeof(part) + 1);
}

/* Makes sure the segment holding `id` exists.  Whoever needs a segment
** first allocates it; a thread that loses the race frees its copy. */
static int ensure_segment(part_store *ps, size_t id)
{
    size_t off;
    unsigned k = seg_of(id, &off);
    if (atomic_load_explicit(&ps->seg[k], memory_order_acquire) != NULL)
        return 0;
    size_t bytes = segment_bytes(k);
    part *fresh = huge_calloc(bytes);
    if (fresh == NULL)
        return -1;
    part *expected = NULL;
    if (atomic_compare_exchange_strong_explicit(&ps->seg[k], &expected, fresh,
                                                memory_order_acq_rel,
                                                memory_order_acquire))
        stat_add(ps, &ps->seg_bytes, bytes);
    else
        huge_free(fresh, bytes);
    return 0;
}

/* Claims the next id, its segment made first: an unshared store's next
** one; a shared store's next one of the shard's block (`sh`, whose lock is
** held), a new block of ID_BLOCK taken when it is spent.  0 when the ids
** are spent or the segment cannot be allocated; nothing is claimed then. */
static part_id claim_id(part_store *ps, shard *sh)
{
    if (!ps->concurrent) {
        size_t n = atomic_load_explicit(&ps->next_id, memory_order_relaxed);
        if (n > MAX_ID || ensure_segment(ps, n) != 0)
            return 0;
        atomic_store_explicit(&ps->next_id, n + 1, memory_order_relaxed);
        return (part_id)n;
    }
    if (sh->id_next == sh->id_end) {
        /* Relaxed: a part is published by its ready byte, not by the
        ** counter. */
        size_t first = atomic_fetch_add_explicit(&ps->next_id, ID_BLOCK, memory_order_relaxed);
        if (first > MAX_ID)
            return 0;
        sh->id_next = first;
        sh->id_end = first + ID_BLOCK <= (size_t)MAX_ID + 1 ? first + ID_BLOCK : (size_t)MAX_ID + 1;
    }
    if (ensure_segment(ps, sh->id_next) != 0)
        return 0;
    return (part_id)sh->id_next++;
}

/* ---- arenas -------------------------------------------------------- */

static void *arena_alloc(part_store *ps, arena *a, size_t n)
{
    n = (n + 7u) & ~(size_t)7u;
    arena_chunk *c = a->head;
    if (c == NULL || c->cap - c->used < n) {
        size_t cap = n > a->next_cap ? n : a->next_cap;
        arena_chunk *fresh = huge_calloc(sizeof *fresh + cap);
        if (fresh == NULL)
            return NULL;
        fresh->next = c;
        fresh->used = 0;
        fresh->cap = cap;
        a->head = fresh;
        if (a->next_cap < ARENA_CHUNK)
            a->next_cap *= 2;
        stat_add(ps, &ps->arena_bytes, sizeof *fresh + cap);
        /* A shared store counts its shards' chunks as used whole: a count
        ** bumped by every part of every thread would be one more cache
        ** line they all write. */
        if (ps->concurrent)
            stat_add(ps, &ps->arena_used, sizeof *fresh + cap);
        c = fresh;
    }
    void *p = c->mem + c->used;
    c->used += n;
    if (!ps->concurrent)
        stat_add(ps, &ps->arena_used, n);
    return p;
}

static void arena_free(arena *a)
{
    arena_chunk *c = a->head;
    while (c != NULL) {
        arena_chunk *next = c->next;
        huge_free(c, sizeof *c + c->cap);
        c = next;
    }
    a->head = NULL;
}

/* ---- making and freeing ------------------------------------------- */

part_store *part_store_new(void)
{
    return part_store_new_sized(2048);
}

/* A zeroed index, its pages written now.  calloc's fresh pages are mapped
** to the shared zero page until written, and lookups read empty slots
** before an intern writes them: with two threads each such first write is
** a copy-on-write fault that flushes the TLB of the other core too (an
** interprocessor interrupt), a tenth of the CPU the kernel took with two
** workers.  The index fills uniformly, so every page is touched anyway.
** The touch is an atomic store: a malloc followed by a memset of zeros is
** turned into calloc by the compiler, which is how an earlier memset here
** came to do nothing. */
static slot_t *index_alloc(size_t nslots)
{
    if (nslots > MAX_SLOTS || nslots > SIZE_MAX / sizeof(slot_t))
        return NULL;
    slot_t *index = huge_calloc(nslots * sizeof *index);
    if (index == NULL)
        return NULL;
    size_t per_page = 4096 / sizeof *index;
    for (size_t i = 0; i < nslots; i += per_page)
        atomic_store_explicit(&index[i], 0, memory_order_relaxed);
    return index;
}

part_store *part_store_new_sized(size_t slots)
{
    size_t per_shard = slots / NSHARDS, nslots = 16;
    while (nslots < per_shard && nslots < ((size_t)1 << 34))
        nslots *= 2;
    part_store *ps = aligned_alloc(alignof(part_store), sizeof *ps);
    if (ps == NULL)
        return NULL;
    memset(ps, 0, sizeof *ps);
    for (unsigned k = 0; k < NSEGS; k++)
        atomic_init(&ps->seg[k], NULL);
    atomic_init(&ps->next_id, 1);
    atomic_init(&ps->arena_used, 0);
    atomic_init(&ps->arena_bytes, 0);
    atomic_init(&ps->seg_bytes, 0);
    atomic_init(&ps->index_slots, 0);
    ps->arena.next_cap = ARENA_CHUNK;
    int failed = ensure_segment(ps, 0) != 0;
    for (unsigned s = 0; s < NSHARDS; s++) {
        shard *sh = &ps->shards[s];
        sh->index = index_alloc(nslots);
        sh->nslots = nslots;
        atomic_init(&sh->pub_index, sh->index);
        atomic_init(&sh->pub_mask, nslots - 1);
        atomic_init(&sh->nids, 0);
        failed |= sh->index == NULL;
        stat_add(ps, &ps->index_slots, nslots);
    }
    if (failed) {
        part_store_free(ps);
        return NULL;
    }
    return ps;
}

int part_store_set_concurrent(part_store *ps)
{
    if (ps->concurrent)
        return 0;
    for (unsigned s = 0; s < NSHARDS; s++) {
        if (pthread_mutex_init(&ps->shards[s].lock, NULL) != 0) {
            while (s-- > 0)
                pthread_mutex_destroy(&ps->shards[s].lock);
            return -1;
        }
        ps->shards[s].arena.next_cap = SHARD_CHUNK_MIN;
    }
    ps->concurrent = 1;
    return 0;
}

void part_store_free(part_store *ps)
{
    if (ps == NULL)
        return;
    arena_free(&ps->arena);
    for (unsigned s = 0; s < NSHARDS; s++) {
        shard *sh = &ps->shards[s];
        arena_free(&sh->arena);
        huge_free(sh->index, sh->nslots * sizeof(slot_t));
        huge_free(sh->old_index, sh->old_nslots * sizeof(slot_t));
        for (unsigned r = 0; r < sh->nretired; r++)
            huge_free(sh->retired[r], sh->retired_nslots[r] * sizeof(slot_t));
        if (ps->concurrent)
            pthread_mutex_destroy(&sh->lock);
    }
    for (unsigned k = 0; k < NSEGS; k++)
        huge_free(atomic_load_explicit(&ps->seg[k], memory_order_relaxed), segment_bytes(k));
    free(ps);
}

/* ---- the index ----------------------------------------------------- */

static uint64_t part_hash(uint8_t kind, const void *data, uint32_t len)
{
    return XXH3_64bits_withSeed(data, len, kind);
}

static shard *shard_of(part_store *ps, uint64_t h)
{
    return &ps->shards[h >> (64 - SHARD_BITS)];
}

static uint64_t slot_get(const slot_t *index, size_t i)
{
    return atomic_load_explicit((slot_t *)&index[i], memory_order_relaxed);
}

static uint64_t entry_of(uint64_t hash, part_id id)
{
    return (hash << 32) | id;
}

static part_id entry_id(uint64_t entry)
{
    return (part_id)(entry & 0xffffffffu);
}

/* Whether an entry may be the part of this hash: its hash bits agree. */
static int entry_may_be(uint64_t entry, uint64_t hash)
{
    return (uint32_t)(entry >> 32) == (uint32_t)hash;
}

/* Release: a lock-free lookup that reads the entry (acquire) sees the part
** whole, its ready byte set before. */
static void slot_set(slot_t *index, size_t i, uint64_t entry)
{
    atomic_store_explicit(&index[i], entry, memory_order_release);
}

static void index_put(slot_t *index, size_t nslots, uint64_t entry)
{
    size_t i = (entry >> 32) & (nslots - 1);
    while (slot_get(index, i) != 0)
        i = (i + 1) & (nslots - 1);
    slot_set(index, i, entry);
}

/* Moves up to n old slots into the grown index; frees the old one when
** done.  An entry carries the hash bits that place it, so no part is read. */
static void move_slots(part_store *ps, shard *sh, size_t n)
{
    if (sh->old_index == NULL)
        return;
    size_t end = sh->old_nslots - sh->moved < n ? sh->old_nslots : sh->moved + n;
    for (size_t j = sh->moved; j < end; j++) {
        uint64_t entry = slot_get(sh->old_index, j);
        if (entry != 0)
            index_put(sh->index, sh->nslots, entry);
    }
    sh->moved = end;
    if (sh->moved == sh->old_nslots) {
        /* A shared store keeps it: a lock-free lookup may be probing it. */
        if (ps->concurrent && sh->nretired < MAX_RETIRED) {
            sh->retired_nslots[sh->nretired] = sh->old_nslots;
            sh->retired[sh->nretired++] = sh->old_index;
        } else {
            huge_free(sh->old_index, sh->old_nslots * sizeof(slot_t));
            stat_add(ps, &ps->index_slots, -sh->old_nslots);
        }
        sh->old_index = NULL;
        sh->old_nslots = 0;
    }
}

/* Doubles a shard's index; its slots move a few per intern (move_slots). */
static int grow_index(part_store *ps, shard *sh)
{
    move_slots(ps, sh, SIZE_MAX);   /* a previous growth, if unfinished */
    size_t nslots = sh->nslots * 2;
    slot_t *index = index_alloc(nslots);
    if (index == NULL)
        return -1;
    sh->old_index = sh->index;
    sh->old_nslots = sh->nslots;
    sh->moved = 0;
    sh->index = index;
    sh->nslots = nslots;
    /* Until its slots have moved the new index misses old parts; a
    ** lock-free lookup that misses takes the lock, which probes both. */
    atomic_store_explicit(&sh->pub_index, index, memory_order_release);
    atomic_store_explicit(&sh->pub_mask, nslots - 1, memory_order_release);
    stat_add(ps, &ps->index_slots, nslots);
    return 0;
}

/* The id of (h, kind, data, len) in an index, or 0; *slot: where the probe
** ended (the empty slot for an insert). */
static part_id probe(const part_store *ps, const slot_t *index, size_t nslots, uint64_t h,
                     uint8_t kind, const void *data, uint32_t len, size_t *slot)
{
    size_t mask = nslots - 1;
    size_t i = h & mask;
    for (;;) {
        uint64_t entry = slot_get(index, i);
        if (entry == 0)
            break;
        if (entry_may_be(entry, h)) {
            const part *p = slot_of(ps, entry_id(entry));
            if (p->hash == h && p->kind == kind && p->len == len &&
                (len == 0 || memcmp(p->data, data, len) == 0))
                return entry_id(entry);
        }
        i = (i + 1) & mask;
    }
    *slot = i;
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* A shared store's lookup without the lock: the id of the part in the
** index as last published, or 0 when it is absent or missed (the index
** grew and its slots are still moving, an insert is under way): the
** caller then takes the lock.  Every id read was published (acquire on
** the slot, release when it was set), so its part is whole. */
static part_id lookup_lock_free(const part_store *ps, shard *sh, uint64_t h, uint8_t kind,
                                const void *data, uint32_t len)
{
    size_t mask = atomic_load_explicit(&sh->pub_mask, memory_order_acquire);
    const slot_t *index = atomic_load_explicit(&sh->pub_index, memory_order_acquire);
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        uint64_t entry = atomic_load_explicit((slot_t *)&index[i], memory_order_acquire);
        if (entry == 0)
            return 0;
        if (!entry_may_be(entry, h))
            continue;
        const part *p = slot_of(ps, entry_id(entry));
        if (p->hash == h && p->kind == kind && p->len == len &&
            (len == 0 || memcmp(p->data, data, len) == 0))
            return entry_id(entry);
    }
}

/* ---- interning ----------------------------------------------------- */

/* part_store_intern within the part's shard (its lock held if shared). */
static part_id intern_in(part_store *ps, shard *sh, uint64_t h, uint8_t kind,
                         const void *data, uint32_t len, const uint32_t *pids,
                         uint32_t npids, int *is_new)
{
    *is_new = 0;
    /* Grow before probing so the index never fills: a failed grow is an
    ** allocation failure like any other. */
    size_t nids = atomic_load_explicit(&sh->nids, memory_order_relaxed);
    if (nids * 10 > sh->nslots * 7 && grow_index(ps, sh) != 0)
        return 0;
    move_slots(ps, sh, MOVES);
    size_t i = 0, unused;
    part_id found = sh->old_index != NULL
                        ? probe(ps, sh->old_index, sh->old_nslots, h, kind, data, len, &unused)
                        : 0;
    if (found == 0)
        found = probe(ps, sh->index, sh->nslots, h, kind, data, len, &i);
    if (found != 0)
        return found;
    arena *a = ps->concurrent ? &sh->arena : &ps->arena;
    uint8_t *copy = arena_alloc(ps, a, len ? len : 1);
    if (copy == NULL)
        return 0;
    if (len)
        memcpy(copy, data, len);
    uint32_t *pidcopy = NULL;
    uint32_t nuniq = 0;
    if (npids > 0) {
        pidcopy = arena_alloc(ps, a, (size_t)npids * sizeof *pidcopy);
        if (pidcopy == NULL)
            return 0;
        memcpy(pidcopy, pids, (size_t)npids * sizeof *pidcopy);
        qsort(pidcopy, npids, sizeof *pidcopy, cmp_u32);
        for (uint32_t k = 0; k < npids; k++)
            if (nuniq == 0 || pidcopy[nuniq - 1] != pidcopy[k])
                pidcopy[nuniq++] = pidcopy[k];
    }
    part_id id = claim_id(ps, sh);
    if (id == 0)
        return 0;
    size_t off;
    unsigned k = seg_of(id, &off);
    part *seg = atomic_load_explicit(&ps->seg[k], memory_order_acquire);
    seg[off] = (part){ .hash = h, .data = copy, .len = len,
                       .kind = kind, .npids = nuniq, .pids = pidcopy };
    atomic_store_explicit(&ready_bytes(seg, k)[off], 1, memory_order_release);
    slot_set(sh->index, i, entry_of(h, id));
    atomic_store_explicit(&sh->nids, nids + 1, memory_order_relaxed);
    *is_new = 1;
    return id;
}

part_id part_store_intern(part_store *ps, uint8_t kind, const void *data,
                          uint32_t len, const uint32_t *pids, uint32_t npids,
                          int *is_new)
{
    uint64_t h = part_hash(kind, data, len);
    shard *sh = shard_of(ps, h);
    if (!ps->concurrent)
        return intern_in(ps, sh, h, kind, data, len, pids, npids, is_new);
    /* Most interns find the part (hash-consing: a successor shares most of
    ** its parts with its parent), so first without the lock. */
    part_id found = lookup_lock_free(ps, sh, h, kind, data, len);
    if (found != 0) {
        *is_new = 0;
        return found;
    }
    /* pthread_mutex_lock of a default mutex fails only on misuse. */
    pthread_mutex_lock(&sh->lock);
    part_id id = intern_in(ps, sh, h, kind, data, len, pids, npids, is_new);
    pthread_mutex_unlock(&sh->lock);
    return id;
}

part_id part_store_intern_hinted(part_store *ps, part_id hint, uint8_t kind,
                                 const void *data, uint32_t len, int *is_new)
{
    const part *p = part_store_get(ps, hint);
    if (p != NULL && p->kind == kind && p->len == len &&
        (len == 0 || memcmp(p->data, data, len) == 0)) {
        *is_new = 0;
        return hint;
    }
    return part_store_intern(ps, kind, data, len, NULL, 0, is_new);
}

const part *part_store_get(const part_store *ps, part_id id)
{
    if (id == 0)
        return NULL;
    size_t off;
    unsigned k = seg_of(id, &off);
    part *seg = atomic_load_explicit((_Atomic(part *) *)&ps->seg[k], memory_order_acquire);
    if (!ps->concurrent)
        return id < stat_get(&ps->next_id) ? &seg[off] : NULL;
    /* An unclaimed id's segment may not exist; a claimed one's part may
    ** still be being written. */
    if (seg == NULL ||
        !atomic_load_explicit(&ready_bytes(seg, k)[off], memory_order_acquire))
        return NULL;
    return &seg[off];
}

/* ---- statistics ---------------------------------------------------- */

size_t part_store_count(const part_store *ps)
{
    if (!ps->concurrent)
        return stat_get(&ps->next_id) - 1;
    size_t n = 0;
    for (unsigned s = 0; s < NSHARDS; s++)
        n += atomic_load_explicit(&ps->shards[s].nids, memory_order_relaxed);
    return n;
}

size_t part_store_used_bytes(const part_store *ps)
{
    return sizeof *ps + stat_get(&ps->arena_used) + stat_get(&ps->next_id) * (sizeof(part) + 1) +
           stat_get(&ps->index_slots) * sizeof(slot_t);
}

size_t part_store_bytes(const part_store *ps)
{
    return sizeof *ps + stat_get(&ps->arena_bytes) + stat_get(&ps->seg_bytes) +
           stat_get(&ps->index_slots) * sizeof(slot_t);
}
