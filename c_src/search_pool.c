/*
** search_pool.c: owns the breadth-first search's nodes, its queue and the
** count of workers expanding (see search_pool.h for the protocol).
**
** Invariants, under `lock`: nodes[0..nnodes) are the discovered states in
** the order they were added; queue[head..tail) the queued ones, oldest
** first; `busy` is the number of workers between a POOL_WORK take and
** their next take (expanding, or holding nodes they kept).  A node's
** fields never change once added (a path copies them), so the lock only
** guards the arrays' growth and the counters.  A node is its own parent
** when it starts a segment: the root, and in a distributed search a state
** whose parent is another participant's (search_pool_add_remote); a path
** runs from the start of its segment.  `hungry` (atomic) counts
** the workers whose last take was POOL_WAIT.
*/
#include "search_pool.h"
#include "segments.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct pool_node {
    part_id state;
    uint32_t parent;
    uint32_t depth;
    uint32_t nperm;
    uint8_t *label;
    size_t label_len;
    sym_pair *perm;
} pool_node;

/* The fully expanded states: one bit per part id, in segments that never
** move (segment k holds FULL_SEG0 << k bits), allocated by whoever needs
** one first. */
#define FULL_SEG_BITS 16
#define FULL_SEG0 ((uint64_t)1 << FULL_SEG_BITS)
#define FULL_NSEGS 17       /* up to 2^33 bits: every part id */

struct search_pool {
    _Atomic(atomic_uchar *) full[FULL_NSEGS];
    pthread_mutex_t lock;
    atomic_int refs;
    part_store *ps;
    pool_node *nodes;
    size_t nnodes, cap;
    uint32_t *queue;
    size_t head, tail, capqueue;
    uint32_t busy;
    atomic_size_t bytes;        /* nodes' array, labels and renamings */
    atomic_uint_fast64_t count; /* nnodes, readable without the lock */
    /* Read by every worker at every step: on cache lines of their own, so
    ** that adding nodes (the lock, the counters above) does not evict them
    ** from the other cores' caches. */
    alignas(64) atomic_int stopped;
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
    for (unsigned k = 0; k < FULL_NSEGS; k++)
        atomic_init(&p->full[k], NULL);
    atomic_init(&p->stopped, 0);
    atomic_init(&p->hungry, 0);
    atomic_init(&p->bytes, 0);
    atomic_init(&p->count, 0);
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
    for (size_t i = 0; i < p->nnodes; i++) {
        free(p->nodes[i].label);
        free(p->nodes[i].perm);
    }
    free(p->nodes);
    free(p->queue);
    for (unsigned k = 0; k < FULL_NSEGS; k++)
        free(atomic_load(&p->full[k]));
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

/* search_pool_add, and with `remote` a node that is its own parent at
** depth *depth (search_pool_add_remote). */
static int pool_add(search_pool *p, part_id state, uint32_t parent, uint8_t *label,
                    size_t label_len, sym_pair *perm, uint32_t nperm, int queue,
                    int remote, uint32_t *index, uint32_t *depth)
{
    pthread_mutex_lock(&p->lock);
    if (p->nnodes >= UINT32_MAX - 1 || (!remote && p->nnodes > 0 && parent >= p->nnodes) ||
        (queue && queue_reserve(p, 1) != 0)) {
        pthread_mutex_unlock(&p->lock);
        return -1;
    }
    if (p->nnodes == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 1024;
        pool_node *grown = realloc(p->nodes, cap * sizeof *grown);
        if (grown == NULL) {
            pthread_mutex_unlock(&p->lock);
            return -1;
        }
        atomic_fetch_add(&p->bytes, (cap - p->cap) * sizeof *grown);
        p->nodes = grown;
        p->cap = cap;
    }
    uint32_t i = (uint32_t)p->nnodes;
    uint32_t d = remote ? *depth : i == 0 ? 0 : p->nodes[parent].depth + 1;
    p->nodes[i] = (pool_node){ .state = state, .parent = i == 0 || remote ? i : parent,
                               .depth = d, .nperm = nperm, .label = label,
                               .label_len = label_len, .perm = perm };
    p->nnodes++;
    if (queue)
        p->queue[p->tail++] = i;
    atomic_store(&p->count, p->nnodes);
    pthread_mutex_unlock(&p->lock);
    atomic_fetch_add(&p->bytes, label_len + (size_t)nperm * sizeof *perm);
    *index = i;
    *depth = d;
    return 0;
}

int search_pool_add(search_pool *p, part_id state, uint32_t parent, uint8_t *label,
                    size_t label_len, sym_pair *perm, uint32_t nperm, int queue,
                    uint32_t *index, uint32_t *depth)
{
    return pool_add(p, state, parent, label, label_len, perm, nperm, queue, 0, index, depth);
}

int search_pool_add_remote(search_pool *p, part_id state, uint32_t depth, uint8_t *label,
                           size_t label_len, uint32_t *index)
{
    return pool_add(p, state, 0, label, label_len, NULL, 0, 1, 1, index, &depth);
}

/* The first node of node i's segment (under the lock). */
static uint32_t segment_start(const search_pool *p, uint32_t i)
{
    while (p->nodes[i].parent != i)
        i = p->nodes[i].parent;
    return i;
}

int search_pool_segment(search_pool *p, uint32_t i, uint32_t *start)
{
    pthread_mutex_lock(&p->lock);
    int r = i < p->nnodes ? 0 : -1;
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
    *state = p->nodes[i].state;
    *depth = p->nodes[i].depth;
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
        const pool_node *n = &p->nodes[p->queue[p->head]];
        *node = p->queue[p->head++];
        *state = n->state;
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

int search_pool_mark_full(search_pool *p, part_id state)
{
    uint64_t bit;
    unsigned k = full_seg(state, &bit);
    atomic_uchar *seg = atomic_load_explicit(&p->full[k], memory_order_acquire);
    if (seg == NULL) {
        size_t bytes = (size_t)((FULL_SEG0 << k) / 8);
        atomic_uchar *fresh = calloc(bytes, 1);
        if (fresh == NULL)
            return -1;
        atomic_uchar *expected = NULL;
        if (atomic_compare_exchange_strong(&p->full[k], &expected, fresh)) {
            atomic_fetch_add(&p->bytes, bytes);
            seg = fresh;
        } else {
            free(fresh);
            seg = expected;
        }
    }
    atomic_fetch_or_explicit(&seg[bit / 8], (unsigned char)(1u << (bit % 8)),
                             memory_order_relaxed);
    return 0;
}

int search_pool_is_full(const search_pool *p, part_id state)
{
    uint64_t bit;
    unsigned k = full_seg(state, &bit);
    atomic_uchar *seg = atomic_load_explicit(&((search_pool *)p)->full[k], memory_order_acquire);
    return seg != NULL &&
           (atomic_load_explicit(&seg[bit / 8], memory_order_relaxed) >> (bit % 8)) & 1;
}

void search_pool_stop(search_pool *p)
{
    atomic_store(&p->stopped, 1);
}

int search_pool_stopped(const search_pool *p)
{
    return atomic_load(&((search_pool *)p)->stopped);
}

uint64_t search_pool_count(const search_pool *p)
{
    return atomic_load(&((search_pool *)p)->count);
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
    if (i >= p->nnodes) {
        pthread_mutex_unlock(&p->lock);
        return -1;
    }
    size_t n = (size_t)(p->nodes[i].depth - p->nodes[segment_start(p, i)].depth) + 1;
    pool_step *path = calloc(n, sizeof *path);
    int failed = path == NULL;
    size_t d = n;
    for (uint32_t k = i; !failed && d > 0; k = p->nodes[k].parent) {
        const pool_node *node = &p->nodes[k];
        pool_step *step = &path[--d];
        step->state = node->state;
        if (node->label != NULL) {
            step->label = malloc(node->label_len ? node->label_len : 1);
            failed |= step->label == NULL;
            if (step->label != NULL) {
                memcpy(step->label, node->label, node->label_len);
                step->label_len = node->label_len;
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
