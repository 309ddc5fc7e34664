/*
** search_pool.h: the breadth-first search's shared work: every discovered
** state's node (its parent, depth, the label of the step into it and the
** renaming symmetry applied to it), the queue of states still to expand,
** and the part store, which with the exact table is the visited set.
**
** One pool serves one search order, breadth-first, for one worker (the
** `breadth_first` search of search.h) or for several at once (`workers`,
** issue 20: each worker a search of its own, its stack, step cache and
** match memo private, on its own scheduler thread).  A worker claims a
** state by interning its root vector and finding it new (part_store.h:
** exactly one interner of a part sees is_new); it then adds the node here,
** and whoever takes it next expands it.
**
** The queue holds the nodes waiting to be expanded, oldest first.  With
** one worker every node goes through it, so the order is exactly
** breadth-first and the first violation found is one nearest the initial
** state.  With several, a worker keeps the states it discovers on a stack
** of its own (search.c: bfs_keep) and expands the newest first, whose
** parts are still in its cache, as a depth-first search would; it puts
** them in the queue instead while another worker is hungry (found the
** queue empty), and hands over the older half of its stack when one is.
** A counterexample is still a path of the program (its nodes' parents).
**
** Termination (the classic shared-queue rule): the search is over when the
** queue is empty and no worker is expanding a node, since only an
** expanding worker adds nodes.  A worker whose search ends any other way (a
** violation, a limit, an error) stops the pool, and the others end at
** their next request.
**
** Concurrency: every function may be called from any thread.  Adding a
** node takes no lock (an atomic index, segments that never move, the
** label interned in the store); the queue is under one mutex, held for a
** few instructions at a time.  search_pool_stop and search_pool_stopped
** are lock-free.  The
** pool is reference counted: each worker's search holds one reference;
** the last release frees it with its store.
*/
#ifndef MCE_SEARCH_POOL_H
#define MCE_SEARCH_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "part_store.h"
#include "symmetry.h"

typedef struct search_pool search_pool;

/* A new pool owning `ps` (its store: freed with the pool, also when this
** fails).  `concurrent`: several workers will share it, so the store is
** made safe for them (part_store_set_concurrent).  NULL when out of memory. */
search_pool *search_pool_new(part_store *ps, int concurrent);
void search_pool_retain(search_pool *p);
void search_pool_release(search_pool *p);

part_store *search_pool_store(const search_pool *p);

/* Adds a node for `state`, a child of node `parent` (the first node added
** is the root and its own parent), taking the label and the renaming on
** success, and queues it if `queue`; else the caller keeps it to expand
** itself (or to queue later: search_pool_queue).  0 and the node's index
** and depth, or -1 when out of memory (nothing taken). */
/* A worker's own reservation of node indices, taken POOL_BLOCK at a time,
** and the nodes it added that the pool's count does not hold yet: adding a
** node then writes no cache line that another worker writes (one shared
** counter bumped at every add cost two workers a tenth of their CPU).  The
** indices a worker reserved but never used are holes, like a failed add's.
** Private to one worker; all zero before its first add. */
#define POOL_BLOCK 64

typedef struct pool_cursor {
    uint64_t next, end;
    uint32_t uncounted;
} pool_cursor;

int search_pool_add(search_pool *p, pool_cursor *cursor, part_id state, uint32_t parent,
                    uint8_t *label, size_t label_len, sym_pair *perm, uint32_t nperm,
                    int queue, uint32_t *index, uint32_t *depth);
/* Distributed search (search_cluster.c): adds and queues a node whose
** parent is on another participant, at depth `depth` of the whole path; it
** starts a segment (it is its own parent), and the caller remembers where
** its parent is.  0 and *index, or -1 when out of memory. */
int search_pool_add_remote(search_pool *p, part_id state, uint32_t depth, uint8_t *label,
                           size_t label_len, sym_pair *perm, uint32_t nperm, uint32_t *index);
/* The node starting node i's segment (the root, or a remote node's): 0
** and *start, or -1 when i is no node. */
int search_pool_segment(search_pool *p, uint32_t i, uint32_t *start);
/* Queues nodes a worker kept (their indices, oldest first).  0, or -1
** when out of memory (nothing queued). */
int search_pool_queue(search_pool *p, const uint32_t *nodes, size_t n);
/* Whether a worker found the queue empty and waits for work (cheap: one
** atomic read). */
int search_pool_hungry(const search_pool *p);
/* A node's state and depth (it must exist). */
void search_pool_node(search_pool *p, uint32_t i, part_id *state, uint32_t *depth);

enum pool_take {
    POOL_WORK = 0,  /* *node, *state, *depth: expand it */
    POOL_WAIT,      /* nothing queued, but other workers are expanding */
    POOL_DONE,      /* nothing queued and nobody expanding: exhausted */
    POOL_STOPPED    /* a worker stopped the pool */
};
/* The next node to expand, from the queue.  *busy is the caller's flag:
** set while it expands a node it took or holds nodes it kept (it must
** start at 0); taking again means it has neither.  *hungry is its other
** flag: set while its last take found nothing (POOL_WAIT). */
enum pool_take search_pool_take(search_pool *p, int *busy, int *hungry, uint32_t *node,
                                part_id *state, uint32_t *depth);

/* The states whose expansion ended with every transition taken (no
** partial-order cut): the breadth-first cycle proviso may cut a step
** toward one (search.c, apply_run).  Marking is 0, or -1 when out of
** memory (the state is then only not known as fully expanded). */
int search_pool_mark_full(search_pool *p, part_id state);
int search_pool_is_full(const search_pool *p, part_id state);

/* Node i's expansion ended (every transition it took, or a partial-order
** cut, or none at all past a depth bound): once its children are finished
** too, it is *finished*, and so, in turn, may be its parent.  A state
** finished before the one being expanded: the breadth-first cycle proviso
** may cut a step toward it (search.c, apply_run; the argument is in
** docs/ARCHITECTURE.md, "Partial-order reduction").  Call it once per
** node taken or kept for expansion.  0, or -1 when i is no node or a
** finished state could not be marked for want of memory (it then only
** counts as unfinished). */
int search_pool_expanded(search_pool *p, uint32_t i);
int search_pool_is_finished(const search_pool *p, part_id state);

/* Cut states passed through with workers (search.c, search_pass_cut; the
** argument is in docs/ARCHITECTURE.md, "Cut states are passed").  A state
** whose expansion was cut is marked passed (0, or -1 when out of memory:
** it then stays kept).  Met again once finished, it is new again:
** search_pool_pass_again clears both marks and answers 1 to exactly one
** caller, which claims it as a new node; met while its expansion (or a
** child's) is under way, it is a visited state, as a passed state still on
** the depth-first stack is (0). */
int search_pool_mark_passed(search_pool *p, part_id state);
int search_pool_pass_again(search_pool *p, part_id state);

/* The reductions' guards (search_reduce.c, guard_half: rule 7's and the
** renaming's) over all the workers: a worker met a half (a bit) for the
** first time; the halves
** the workers had met before it, its own among them.  The bits are one
** atomic word: of two workers adding bits, the later one's
** read-modify-write returns the earlier one's bit. */
uint32_t search_pool_guard(search_pool *p, uint32_t half);

/* Stops the search: every worker's next take answers POOL_STOPPED. */
void search_pool_stop(search_pool *p);
int search_pool_stopped(const search_pool *p);

/* The nodes added so far (the states the search has discovered), less
** those the workers' cursors have not counted yet (fewer than POOL_BLOCK
** each); with `cursor`, that worker's are counted too. */
uint64_t search_pool_count(const search_pool *p, const pool_cursor *cursor);
/* Memory held for the nodes and their labels and renamings, in bytes (not
** the store's). */
size_t search_pool_bytes(const search_pool *p);

/* The path from the start of node i's segment (the root, unless the
** search is distributed) to node i, first first: out[k] is a malloc'd copy
** of the k-th node's state, label and renaming (the root has neither).
** 0 and *len, or -1 when out of memory or i is no node (nothing left
** allocated).  The first step has a label only when it starts a remote
** segment. */
typedef struct pool_step {
    part_id state;
    uint8_t *label;
    size_t label_len;
    sym_pair *perm;
    uint32_t nperm;
} pool_step;
int search_pool_path(search_pool *p, uint32_t i, pool_step **out, size_t *len);
/* Frees a path search_pool_path made (its labels and renamings too). */
void search_pool_path_free(pool_step *path, size_t len);

#endif
