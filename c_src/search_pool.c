/*
** search_pool.c: owns the breadth-first search's nodes, its queue and the
** count of workers expanding (see search_pool.h for the protocol).
**
** Invariants: the indices below `next` are taken; a worker takes them a
** block at a time (pool_cursor) and a node's index comes from its adder's
** block, so indices follow discovery only within one worker.  A node is
** written in a segment that never moves (segments.h), so adding a node,
** the step every new state takes, needs no lock: with two workers the one
** mutex of every add was their main point of contention (futex waits and
** wake-ups, about a tenth of their CPU on client_server(6,2)).  A node's
** parent was added before it.  A node is written by its
** adder before its index goes anywhere (kept by that worker, queued under
** the lock, or returned), so whoever follows an index sees it whole; its
** `state` is stored last, with release, and is never 0 once written (part
** ids start at 1), which is how a lookup by an index from outside tells a
** node from a hole.  A node's fields never change once added (a path
** copies them).  Under `lock`: queue[head..tail) the queued nodes, oldest
** first; `busy` the number of workers between a POOL_WORK take and their
** next take (expanding, or holding nodes they kept).  A node is its own parent
** when it starts a segment: the root, and in a distributed search a state
** whose parent is another participant's (search_pool_add_remote); a path
** runs from the start of its segment.  `hungry` (atomic) counts
** the workers whose last take was POOL_WAIT.
*/
#include "search_pool.h"
#include "huge_alloc.h"
#include "segments.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* A node's label is interned in the store (PART_LABEL): a step's label
** (its effects, the messages it sent) recurs across the states it is taken
** in, and a malloc'd copy per node was most of a breadth-first search's
** memory (client_server(6,2), 2 workers: 261 MB against 79 MB depth-first),
** and its first touches most of the page faults. */
typedef struct pool_node {
    _Atomic part_id state;      /* 0 until the node is written */
    uint32_t parent;
    uint32_t depth;
    uint32_t nperm;
    part_id label;              /* 0: none (the root) */
    /* What keeps the node from being finished: its own expansion, until
    ** search_pool_expanded, and each child not finished yet. */
    _Atomic uint32_t pending;
    sym_pair *perm;
} pool_node;

/* The fully expanded states, and the finished ones (their expansion and
** every child's ended, search_pool_expanded): one bit per part id each, in
** segments that never
** move (segment k holds FULL_SEG0 << k bits), allocated by whoever needs
** one first. */
#define FULL_SEG_BITS 16
#define FULL_SEG0 ((uint64_t)1 << FULL_SEG_BITS)
#define FULL_NSEGS 17       /* up to 2^33 bits: every part id */

/* The nodes: segment k holds NODE_SEG0 << k of them. */
#define NODE_SEG_BITS 10
#define NODE_SEG0 ((uint64_t)1 << NODE_SEG_BITS)
#define NODE_NSEGS 23       /* up to 2^33 nodes: every 32-bit index */

struct search_pool {
    _Atomic(atomic_uchar *) full[FULL_NSEGS];
    _Atomic(atomic_uchar *) done[FULL_NSEGS];
    _Atomic(atomic_uchar *) passed[FULL_NSEGS];
    pthread_mutex_t lock;
    atomic_int refs;
    _Atomic(pool_node *) nodes[NODE_NSEGS];
    part_store *ps;
    uint32_t *queue;
    size_t head, tail, capqueue;
    uint32_t busy;
    atomic_size_t bytes;        /* nodes' segments, labels and renamings */
    /* The nodes taken so far (the next index), written by every add: on a
    ** cache line of its own, as are the flags below that every worker
    ** reads at every step, so that adding nodes does not evict those. */
    alignas(64) atomic_uint_fast64_t next;
    /* The nodes added, as the cursors flushed them (search_pool_count). */
    alignas(64) atomic_uint_fast64_t counted;
    alignas(64) atomic_int stopped;
    /* The reductions' guards across workers (search_pool_guard): written
    ** once per half and worker at most, so beside `stopped`. */
    _Atomic uint32_t guard_halves;
    alignas(64) atomic_int hungry;
    char pad[64 - sizeof(atomic_int)];
};

search_pool *search_pool_new(part_store *ps, int concurrent)
{
    search_pool *p = aligned_alloc(alignof(search_pool), sizeof *p);
    if (p != NULL)
        memset(p, 0, sizeof *p);
    if (p == NULL || (concurrent && part_store_set_concurrent(ps) != 0) ||
        pthread_mutex_init(&p->lock, NULL) != 0) {
        free(p);
        part_store_free(ps);
        return NULL;
    }
    atomic_init(&p->refs, 1);
    atomic_init(&p->guard_halves, 0);
    for (unsigned k = 0; k < FULL_NSEGS; k++) {
        atomic_init(&p->full[k], NULL);
        atomic_init(&p->done[k], NULL);
        atomic_init(&p->passed[k], NULL);
    }
    atomic_init(&p->stopped, 0);
    atomic_init(&p->hungry, 0);
    atomic_init(&p->bytes, 0);
    atomic_init(&p->next, 0);
    atomic_init(&p->counted, 0);
    for (unsigned k = 0; k < NODE_NSEGS; k++)
        atomic_init(&p->nodes[k], NULL);
    p->ps = ps;
    return p;
}

void search_pool_retain(search_pool *p)
{
    atomic_fetch_add(&p->refs, 1);
}

void search_pool_release(search_pool *p)
{
    if (p == NULL || atomic_fetch_sub(&p->refs, 1) != 1)
        return;
    uint64_t n = atomic_load(&p->next);
    for (unsigned k = 0; k < NODE_NSEGS; k++) {
        pool_node *seg = atomic_load(&p->nodes[k]);
        uint64_t first = (NODE_SEG0 << k) - NODE_SEG0;
        for (uint64_t j = 0; seg != NULL && j < (NODE_SEG0 << k) && first + j < n; j++) {
            free(seg[j].perm);
        }
        huge_free(seg, (size_t)(NODE_SEG0 << k) * sizeof(pool_node));
    }
    free(p->queue);
    for (unsigned k = 0; k < FULL_NSEGS; k++) {
        free(atomic_load(&p->full[k]));
        free(atomic_load(&p->done[k]));
        free(atomic_load(&p->passed[k]));
    }
    part_store_free(p->ps);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

part_store *search_pool_store(const search_pool *p)
{
    return p->ps;
}

/* Room for n more queued nodes (under the lock): the queue's consumed
** head is reclaimed before it grows. */
static int queue_reserve(search_pool *p, size_t n)
{
    if (p->capqueue - p->tail >= n)
        return 0;
    if (p->head > 0) {
        memmove(p->queue, p->queue + p->head, (p->tail - p->head) * sizeof *p->queue);
        p->tail -= p->head;
        p->head = 0;
        if (p->capqueue - p->tail >= n)
            return 0;
    }
    size_t cap = p->capqueue ? p->capqueue : 1024;
    while (cap - p->tail < n)
        cap *= 2;
    uint32_t *grown = realloc(p->queue, cap * sizeof *grown);
    if (grown == NULL)
        return -1;
    atomic_fetch_add(&p->bytes, (cap - p->capqueue) * sizeof *grown);
    p->queue = grown;
    p->capqueue = cap;
    return 0;
}

/* Node i, in a segment that exists (i was taken by an add). */
static pool_node *node_at(const search_pool *p, uint64_t i)
{
    uint64_t off;
    unsigned k = segment_of(i, NODE_SEG_BITS, &off);
    pool_node *seg = atomic_load_explicit((_Atomic(pool_node *) *)&p->nodes[k],
                                          memory_order_acquire);
    return &seg[off];
}

/* Whether node i was added and written (for indices from outside).  An
** index below `next` may be in a worker's block before its segment exists. */
static int node_exists(const search_pool *p, uint64_t i)
{
    if (i >= atomic_load_explicit((atomic_uint_fast64_t *)&p->next, memory_order_acquire))
        return 0;
    uint64_t off;
    unsigned k = segment_of(i, NODE_SEG_BITS, &off);
    return atomic_load_explicit((_Atomic(pool_node *) *)&p->nodes[k], memory_order_acquire) !=
               NULL &&
           atomic_load_explicit(&node_at(p, i)->state, memory_order_acquire) != 0;
}

/* The segment of node i, allocated by whichever adder needs it first. */
static int node_segment(search_pool *p, uint64_t i)
{
    uint64_t off;
    unsigned k = segment_of(i, NODE_SEG_BITS, &off);
    if (atomic_load_explicit(&p->nodes[k], memory_order_acquire) != NULL)
        return 0;
    size_t count = (size_t)(NODE_SEG0 << k);
    if (count > SIZE_MAX / sizeof(pool_node))
        return -1;
    pool_node *fresh = huge_calloc(count * sizeof *fresh);
    if (fresh == NULL)
        return -1;
    pool_node *expected = NULL;
    if (atomic_compare_exchange_strong_explicit(&p->nodes[k], &expected, fresh,
                                                memory_order_acq_rel, memory_order_acquire))
        atomic_fetch_add(&p->bytes, count * sizeof *fresh);
    else
        huge_free(fresh, count * sizeof *fresh);
    return 0;
}

/* The next node index: from the worker's cursor (reserving a block when
** it is spent), or taken alone.  0 and *i, or -1 when the indices are
** spent. */
static int next_index(search_pool *p, pool_cursor *cursor, uint64_t *i)
{
    if (cursor != NULL && cursor->next < cursor->end) {
        *i = cursor->next++;
        return 0;
    }
    uint64_t n = cursor != NULL ? POOL_BLOCK : 1;
    uint64_t first = atomic_fetch_add_explicit(&p->next, n, memory_order_acq_rel);
    if (first >= UINT32_MAX - 1)
        return -1;
    if (cursor != NULL) {
        cursor->next = first + 1;
        cursor->end = first + n < UINT32_MAX - 1 ? first + n : UINT32_MAX - 1;
    }
    *i = first;
    return 0;
}

/* Counts an added node: in the cursor, flushed to the pool's count a block
** at a time. */
static void count_node(search_pool *p, pool_cursor *cursor)
{
    if (cursor == NULL) {
        atomic_fetch_add_explicit(&p->counted, 1, memory_order_relaxed);
    } else if (++cursor->uncounted == POOL_BLOCK) {
        atomic_fetch_add_explicit(&p->counted, POOL_BLOCK, memory_order_relaxed);
        cursor->uncounted = 0;
    }
}

/* search_pool_add, and with `remote` a node that is its own parent at
** depth *depth (search_pool_add_remote).  The node is written without the
** lock (see the invariants); queuing it takes the lock. */
static int pool_add(search_pool *p, pool_cursor *cursor, part_id state, uint32_t parent,
                    uint8_t *label, size_t label_len, sym_pair *perm, uint32_t nperm,
                    int queue, int remote, uint32_t *index, uint32_t *depth)
{
    if (state == 0 || label_len > UINT32_MAX)
        return -1;
    part_id label_id = 0;
    if (label != NULL) {
        int is_new;
        label_id = part_store_intern(p->ps, PART_LABEL, label, (uint32_t)label_len, NULL, 0,
                                     &is_new);
        if (label_id == 0)
            return -1;
    }
    uint64_t i;
    if (next_index(p, cursor, &i) != 0 || (!remote && i > 0 && !node_exists(p, parent)))
        return -1;
    /* On failure below the index stays taken: a hole (state 0) that no
    ** path or lookup accepts, holding nothing of the caller's. */
    if (node_segment(p, i) != 0)
        return -1;
    pool_node *n = node_at(p, i);
    uint32_t d = remote ? *depth : i == 0 ? 0 : node_at(p, parent)->depth + 1;
    n->parent = i == 0 || remote ? (uint32_t)i : parent;
    n->depth = d;
    if (queue) {
        pthread_mutex_lock(&p->lock);
        if (queue_reserve(p, 1) != 0) {
            pthread_mutex_unlock(&p->lock);
            return -1;
        }
    }
    n->nperm = nperm;
    n->label = label_id;
    n->perm = perm;
    /* The parent is being expanded (its own count is held), so it cannot
    ** finish before this child is counted. */
    atomic_store_explicit(&n->pending, 1, memory_order_relaxed);
    if (n->parent != i)
        atomic_fetch_add_explicit(&node_at(p, n->parent)->pending, 1, memory_order_relaxed);
    atomic_store_explicit(&n->state, state, memory_order_release);
    if (queue) {
        p->queue[p->tail++] = (uint32_t)i;
        pthread_mutex_unlock(&p->lock);
    }
    free(label);
    if (nperm > 0)
        atomic_fetch_add(&p->bytes, (size_t)nperm * sizeof *perm);
    count_node(p, cursor);
    *index = (uint32_t)i;
    *depth = d;
    return 0;
}

int search_pool_add(search_pool *p, pool_cursor *cursor, part_id state, uint32_t parent,
                    uint8_t *label, size_t label_len, sym_pair *perm, uint32_t nperm,
                    int queue, uint32_t *index, uint32_t *depth)
{
    return pool_add(p, cursor, state, parent, label, label_len, perm, nperm, queue, 0, index,
                    depth);
}

int search_pool_add_remote(search_pool *p, part_id state, uint32_t depth, uint8_t *label,
                           size_t label_len, sym_pair *perm, uint32_t nperm, uint32_t *index)
{
    return pool_add(p, NULL, state, 0, label, label_len, perm, nperm, 1, 1, index, &depth);
}

/* The first node of node i's segment (under the lock). */
static uint32_t segment_start(const search_pool *p, uint32_t i)
{
    while (node_at(p, i)->parent != i)
        i = node_at(p, i)->parent;
    return i;
}

int search_pool_segment(search_pool *p, uint32_t i, uint32_t *start)
{
    pthread_mutex_lock(&p->lock);
    int r = node_exists(p, i) ? 0 : -1;
    if (r == 0)
        *start = segment_start(p, i);
    pthread_mutex_unlock(&p->lock);
    return r;
}

int search_pool_queue(search_pool *p, const uint32_t *nodes, size_t n)
{
    pthread_mutex_lock(&p->lock);
    int r = queue_reserve(p, n);
    if (r == 0) {
        memcpy(p->queue + p->tail, nodes, n * sizeof *nodes);
        p->tail += n;
    }
    pthread_mutex_unlock(&p->lock);
    return r;
}

int search_pool_hungry(const search_pool *p)
{
    return atomic_load_explicit(&((search_pool *)p)->hungry, memory_order_relaxed) > 0;
}

void search_pool_node(search_pool *p, uint32_t i, part_id *state, uint32_t *depth)
{
    pthread_mutex_lock(&p->lock);
    const pool_node *n = node_at(p, i);
    *state = atomic_load_explicit(&n->state, memory_order_acquire);
    *depth = n->depth;
    pthread_mutex_unlock(&p->lock);
}

enum pool_take search_pool_take(search_pool *p, int *busy, int *hungry, uint32_t *node,
                                part_id *state, uint32_t *depth)
{
    pthread_mutex_lock(&p->lock);
    if (*busy) {
        *busy = 0;
        p->busy--;
    }
    enum pool_take r;
    if (atomic_load(&p->stopped)) {
        r = POOL_STOPPED;
    } else if (p->head < p->tail) {
        const pool_node *n = node_at(p, p->queue[p->head]);
        *node = p->queue[p->head++];
        *state = atomic_load_explicit(&n->state, memory_order_acquire);
        *depth = n->depth;
        *busy = 1;
        p->busy++;
        r = POOL_WORK;
    } else {
        r = p->busy == 0 ? POOL_DONE : POOL_WAIT;
    }
    pthread_mutex_unlock(&p->lock);
    if ((r == POOL_WAIT) != (*hungry != 0)) {
        *hungry = r == POOL_WAIT;
        atomic_fetch_add(&p->hungry, r == POOL_WAIT ? 1 : -1);
    }
    return r;
}

static unsigned full_seg(uint64_t id, uint64_t *bit)
{
    return segment_of(id, FULL_SEG_BITS, bit);
}

/* Sets a state's bit in one of the bitsets (full, done): 0, or -1 when
** out of memory. */
static int mark_bit(search_pool *p, _Atomic(atomic_uchar *) *bits, part_id state)
{
    uint64_t bit;
    unsigned k = full_seg(state, &bit);
    atomic_uchar *seg = atomic_load_explicit(&bits[k], memory_order_acquire);
    if (seg == NULL) {
        size_t bytes = (size_t)((FULL_SEG0 << k) / 8);
        atomic_uchar *fresh = calloc(bytes, 1);
        if (fresh == NULL)
            return -1;
        atomic_uchar *expected = NULL;
        if (atomic_compare_exchange_strong(&bits[k], &expected, fresh)) {
            atomic_fetch_add(&p->bytes, bytes);
            seg = fresh;
        } else {
            free(fresh);
            seg = expected;
        }
    }
    /* Release: whoever reads the bit set (acquire) sees what led to it. */
    atomic_fetch_or_explicit(&seg[bit / 8], (unsigned char)(1u << (bit % 8)),
                             memory_order_release);
    return 0;
}

static int has_bit(_Atomic(atomic_uchar *) const *bits, part_id state)
{
    uint64_t bit;
    unsigned k = full_seg(state, &bit);
    atomic_uchar *seg = atomic_load_explicit((_Atomic(atomic_uchar *) *)&bits[k],
                                             memory_order_acquire);
    return seg != NULL &&
           (atomic_load_explicit(&seg[bit / 8], memory_order_acquire) >> (bit % 8)) & 1;
}

/* Clears a state's bit; whether it was set (this caller cleared it). */
static int clear_bit(_Atomic(atomic_uchar *) *bits, part_id state)
{
    uint64_t bit;
    unsigned k = full_seg(state, &bit);
    atomic_uchar *seg = atomic_load_explicit(&bits[k], memory_order_acquire);
    unsigned char mask = (unsigned char)(1u << (bit % 8));
    return seg != NULL &&
           (atomic_fetch_and_explicit(&seg[bit / 8], (unsigned char)~mask,
                                      memory_order_acq_rel) & mask) != 0;
}

int search_pool_mark_full(search_pool *p, part_id state)
{
    return mark_bit(p, p->full, state);
}

int search_pool_is_full(const search_pool *p, part_id state)
{
    return has_bit(p->full, state);
}

int search_pool_expanded(search_pool *p, uint32_t i)
{
    if (!node_exists(p, i))
        return -1;
    int r = 0;
    for (;;) {
        pool_node *n = node_at(p, i);
        if (atomic_fetch_sub_explicit(&n->pending, 1, memory_order_acq_rel) != 1)
            break;
        /* Finished: so is the parent, if this was the last thing it waited
        ** for.  A state not marked for want of memory only stays
        ** unfinished, which cuts less. */
        if (mark_bit(p, p->done, atomic_load_explicit(&n->state, memory_order_acquire)) != 0)
            r = -1;
        if (n->parent == i)
            break;
        i = n->parent;
    }
    return r;
}

int search_pool_is_finished(const search_pool *p, part_id state)
{
    return has_bit(p->done, state);
}

int search_pool_mark_passed(search_pool *p, part_id state)
{
    return mark_bit(p, p->passed, state);
}

/* The done bit goes first: between the two clears another worker sees the
** state unfinished and not passed, a visited state whose expansion is under
** way, which only keeps it from a cut.  Of several workers meeting it at
** once, one clears the passed bit; the others see it as visited. */
int search_pool_pass_again(search_pool *p, part_id state)
{
    if (!has_bit(p->passed, state) || !has_bit(p->done, state))
        return 0;
    (void)clear_bit(p->done, state);
    return clear_bit(p->passed, state);
}

uint32_t search_pool_guard(search_pool *p, uint32_t half)
{
    return atomic_fetch_or(&p->guard_halves, half) | half;
}

void search_pool_stop(search_pool *p)
{
    atomic_store(&p->stopped, 1);
}

int search_pool_stopped(const search_pool *p)
{
    return atomic_load(&((search_pool *)p)->stopped);
}

uint64_t search_pool_count(const search_pool *p, const pool_cursor *cursor)
{
    return atomic_load_explicit(&((search_pool *)p)->counted, memory_order_relaxed) +
           (cursor != NULL ? cursor->uncounted : 0);
}

size_t search_pool_bytes(const search_pool *p)
{
    return atomic_load(&((search_pool *)p)->bytes);
}

void search_pool_path_free(pool_step *path, size_t len)
{
    for (size_t k = 0; k < len; k++) {
        free(path[k].label);
        free(path[k].perm);
    }
    free(path);
}

int search_pool_path(search_pool *p, uint32_t i, pool_step **out, size_t *len)
{
    pthread_mutex_lock(&p->lock);
    if (!node_exists(p, i)) {
        pthread_mutex_unlock(&p->lock);
        return -1;
    }
    size_t n = (size_t)(node_at(p, i)->depth - node_at(p, segment_start(p, i))->depth) + 1;
    pool_step *path = calloc(n, sizeof *path);
    int failed = path == NULL;
    size_t d = n;
    for (uint32_t k = i; !failed && d > 0; k = node_at(p, k)->parent) {
        const pool_node *node = node_at(p, k);
        pool_step *step = &path[--d];
        step->state = atomic_load_explicit(&node->state, memory_order_acquire);
        const part *label = node->label != 0 ? part_store_get(p->ps, node->label) : NULL;
        if (label != NULL) {
            step->label = malloc(label->len ? label->len : 1);
            failed |= step->label == NULL;
            if (step->label != NULL) {
                memcpy(step->label, label->data, label->len);
                step->label_len = label->len;
            }
        }
        if (node->perm != NULL) {
            step->perm = malloc((size_t)node->nperm * sizeof *node->perm);
            failed |= step->perm == NULL;
            if (step->perm != NULL) {
                memcpy(step->perm, node->perm, (size_t)node->nperm * sizeof *node->perm);
                step->nperm = node->nperm;
            }
        }
    }
    pthread_mutex_unlock(&p->lock);
    if (failed || d != 0) {
        if (path != NULL)
            search_pool_path_free(path, n);
        return -1;
    }
    *out = path;
    *len = n;
    return 0;
}
