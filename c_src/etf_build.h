/*
** etf_build.h: writes external-format terms: the messages the runtime
** makes itself ('EXIT', 'DOWN', nodedown, 'ETS-TRANSFER') and the labels of
** the transitions computed in C (deliveries, timers, faults).
**
** Invariant: a simulated pid, ref or node atom is written byte for byte as
** src/mce_pid.erl and src/mce_ref.erl build it and as the VM re-encodes it,
** so a message built here interns to the same part as the one the program
** would have sent.  A failed allocation sets ext_buf.err and every later
** write is a no-op: the caller checks err once, at the end.
*/
#ifndef MCE_ETF_BUILD_H
#define MCE_ETF_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "etf_scan.h"
#include "part_store.h"

/* A growing buffer for building external-format terms. */
typedef struct ext_buf {
    uint8_t *b;
    size_t n, cap;
    int err;
} ext_buf;

/* What writing a simulated pid, ref or node needs: the store that stored
** terms are copied from, the nodes' names (inside pids and refs) and atoms
** (as stored terms), and the creation of simulated pids and refs. */
typedef struct ext_names {
    const part_store *ps;
    etf_nodes nodes;
    part_id node_atoms[ETF_MAX_NODES];
    uint32_t creation;
} ext_names;

void ext_put(ext_buf *e, const void *p, size_t n);
void ext_u8(ext_buf *e, uint8_t v);
void ext_u32(ext_buf *e, uint32_t v);
/* A stored term, without its version byte. */
void ext_part(const ext_names *x, ext_buf *e, part_id id);
/* A simulated pid and ref, byte for byte as mce_pid and mce_ref build
** them (and as the VM re-encodes them). */
void ext_pid(const ext_names *x, ext_buf *e, uint32_t pid);
void ext_ref_marked(const ext_names *x, ext_buf *e, uint32_t ref, uint32_t mark);
void ext_ref(const ext_names *x, ext_buf *e, uint32_t ref);
/* An atom for a label (labels are only decoded, never compared). */
void ext_atom(ext_buf *e, const char *name);
void ext_tuple(ext_buf *e, uint8_t arity);
/* A process key as a term: its pid, or {Name, Node} for a name key. */
void ext_target(const ext_names *x, ext_buf *e, uint32_t key, part_id name);
void ext_node_atom(const ext_names *x, ext_buf *e, uint32_t node);

#endif
