/*
** search_cluster.h: one participant's share of a distributed breadth-first
** search (issue 20 item 2, option `cluster`; Stern and Dill, "Parallelizing
** the Murphi verifier", CAV 1997).  Each of n participants runs a search of
** its own, with its own store, over the states it owns: the owner of a
** state is the hash of its canonical bytes (state_wire.h) mod n.  A
** successor owned elsewhere is not interned here: its bytes wait in the
** outbox, with its parent (this participant's pool node), the label of
** the step into it and, under symmetry, the renaming that made it its
** orbit's representative (the bytes are the representative's, so an orbit
** has one owner), until the driver sends them to their owner, which
** imports them (a new one is queued as a node whose parent is remote).
**
** Invariants: every state this search stores as discovered (counted in
** `states`, a pool node) is one it owns, or the initial state's owner's
** root, or a state the search stops at (a violation, never expanded); each
** owned state is expanded by its owner only, once, whoever found it, so
** the participants' states and transitions add up to the sequential
** breadth-first search's (with the partial-order reduction off).  With it,
** a frame is cut only by a safe step to a state this participant owns and
** finds new, fully expanded or finished here: a routed successor counts no
** state and leaves no last successor, so the cycle proviso is decided
** locally (search_reduce.c; why that is enough: docs/ARCHITECTURE.md,
** "Distributed search").  An empty queue is not the end (REQ_IDLE, until
** the driver says so: termination is the drivers' business, over the
** batches they count), and a path is rebuilt segment by segment: each
** pool node that came from elsewhere starts a segment and remembers its
** parent (participant, node index).
**
** Called by the NIF under the search's lock, between requests; like the
** rest of the search, never from two threads at once.
*/
#ifndef MCE_SEARCH_CLUSTER_H
#define MCE_SEARCH_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include "search.h"
#include "search_pool.h"

/* A successor bound for another participant. */
typedef struct cluster_out {
    uint32_t owner;            /* the participant that owns it */
    uint32_t parent;           /* this participant's pool node it came from */
    uint32_t depth;            /* its depth on the whole path */
    uint8_t *wire;             /* state_wire bytes, in the transport form of
                                  the connection to the owner */
    size_t wire_len;
    uint8_t *label;            /* ETF of the step into it, encoded for the
                                  connection to the owner (label_dict.h) */
    size_t label_len;
    sym_pair *perm;            /* the renaming that made it its orbit's
                                  representative (symmetry.h), or NULL */
    uint32_t nperm;
} cluster_out;

/* The successors routed since the last take, in the order found; the
** caller copies them out, then calls search_cluster_taken. */
size_t search_cluster_outbox(search *s, const cluster_out **out);
void search_cluster_taken(search *s);

/* Imports a state that participant `from` found as a child of its pool
** node `from_index` at depth `depth`, by the step `label` (copied), both in
** the transport form of the connection from `from` (its states must come
** in the order they were routed), with the renaming `perm` the sender
** made it its orbit's representative by (taken by a new state's node,
** else freed; NULL when none).  1: new, queued; 0: seen before (or the
** search is over); -1 and *why: bytes that are no state of this check, or
** out of memory (perm freed). */
int search_cluster_import(search *s, const uint8_t *wire, size_t len, uint32_t from,
                          uint32_t from_index, uint32_t depth, const uint8_t *label,
                          size_t label_len, sym_pair *perm, uint32_t nperm, const char **why);

/* Where the segment of node i starts: 0 at the root; 1 at a node whose
** parent is node *from_index of participant *from.  -1: no node i. */
int search_cluster_origin(search *s, uint32_t i, uint32_t *from, uint32_t *from_index);
/* The steps of node i's segment, first first (search_pool_path): 0 and
** *path, freed with search_pool_path_free; -1: no node i or out of
** memory. */
int search_cluster_labels(search *s, uint32_t i, pool_step **path, size_t *len);
/* The pool node a stopped search's stack leads to (its last state), after
** a violation or a deadlock, and the label of the stack's first state (the
** step into it from another participant; NULL at the root). */
uint32_t search_cluster_stack_node(const search *s, const uint8_t **label, size_t *len);

typedef struct cluster_stats {
    uint64_t sent, sent_bytes;         /* states routed away, their bytes
                                          (state and label) */
    uint64_t received, received_new;   /* states imported, and new ones */
    uint64_t outbox_bytes;             /* held until taken */
    /* The guard of sending safe steps (por.h, rule 7 (g)): this
    ** participant took one; the first hazard it met (POR_VOID_*), or 0.
    ** The coordinator pairs them over the participants. */
    int por_sent, por_hazard;
} cluster_stats;
void search_cluster_stats(const search *s, cluster_stats *st);

/* search.c's hooks. */
/* Whether this participant owns state st: 1 yes, 0 no, -1 out of memory. */
int search_cluster_owns(search *s, const sys_state *st);
/* Routes successor st of the node being expanded: 0, it is this
** participant's (go on storing it); 1, it went to the outbox with the
** label (taken); -1, out of memory (nothing taken). */
int search_cluster_route(search *s, const sys_state *st, uint8_t *label, size_t label_len);
void search_cluster_free(search *s);
/* Bytes the cluster bookkeeping holds (the outbox, the remote parents). */
size_t search_cluster_bytes(const search *s);

#endif
