/*
** state_wire.h: a system state on the wire, for the distributed search
** (issue 20 item 2): the bytes one search's state travels in to another
** search, on another VM, with a store of its own.
**
** Invariant: the bytes are canonical.  The same state (the same processes,
** terms, mailboxes, ether, world) gives the same bytes whatever store it
** is exported from, so the bytes can be hashed to pick the state's owner
** and an import of them interns exactly the state the exporter held.
** Part ids never appear: every term is written inline, as its external
** format, the first time the state names it, and as a back-reference (its
** rank among the state's distinct terms, in order of first appearance)
** after that.  The one order the store's ids decide, channels to the same
** two ends by registered name (sorted by the name's part id), is written
** by the name's bytes instead, and an import sorts them back by its own
** ids.
**
** Format (version 1): the bytes 'M' 1, then unsigned LEB128 varints:
**   world?  (0: every world field is zero or empty, as encode_world omits)
**   [down, crashes, disconnects, kills, uniq, T app_env, T observer,
**    ndisc, disc..., nnodemons, (pid node count)..., nchans,
**    (from to T name nsig SIG...)..., ntables,
**    (tid owner heir T heir_data T name T data)...]
**   nprocs, (pid status T cont nmsg T msg... flags T dict T name gl
**            nlinks link... 3 x (n (ref pid T item)...))...
** T is a term slot: 0 none, 2k+1 the k-th distinct term of the state (of
** the connection, in the transport form below), 2(len)+2 a new term of len
** bytes that follow.  SIG is the kind and its
** three words, the term words (sys_state.h's signal_kind) as T slots; an
** envelope is SIG_ENVELOPE, from, to, T name, then its inner SIG.
**
** Pids and refs inside terms are the simulated ones, whose node names and
** creation every participant of a check shares (the check's options).
*/
#ifndef MCE_STATE_WIRE_H
#define MCE_STATE_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "sys_state.h"
#include "transition.h"

/* An exporter's buffers, kept between exports so that exporting every
** successor of a search allocates nothing once they have grown (zeroed:
** empty; state_wire_buf_free releases them). */
typedef struct wire_buf {
    uint8_t *b;
    size_t n, cap;
    uint32_t *ids, *ranks;     /* part id -> rank, open addressing (0 free) */
    size_t slots, nterms;
} wire_buf;
void state_wire_buf_free(wire_buf *w);
/* Exports st into w (w->b[0..w->n)); 0, or -1 as state_wire_export. */
int state_wire_export_into(const part_store *ps, const sys_state *st, wire_buf *w);

/* The bytes of state `st` (no appends pending), read from store ps:
** malloc'd, *len bytes; NULL when out of memory or st names a part that
** is not what its field holds. */
uint8_t *state_wire_export(const part_store *ps, const sys_state *st, size_t *len);
/* The same for a stored state (a PART_STATE id). */
uint8_t *state_wire_export_id(const part_store *ps, part_id root, size_t *len);

/* Decodes bytes into `out` (emptied first, its buffers reused), interning
** its terms (with their pids, as transition_intern_term), mailboxes and
** signals into cx's store; `out` is then ready for sys_state_encode.
** 0, or -1 with *why for bytes that are not a state of this check (never
** a crash, whatever the bytes) or when out of memory; `out` is then
** cleared.  Parts interned before a failure stay in the store, unused. */
int state_wire_import(trans_ctx *cx, const uint8_t *buf, size_t len, sys_state *out,
                      const char **why);

/* The transport form (search_cluster.c): the same format, but the ranks
** of term slots are those of a dictionary that lives as long as the
** connection from one participant to another, so a term (a continuation,
** a message) crosses once per connection rather than once per state.  The
** sender's dictionary is a wire_buf's rank table, never cleared; the
** receiver's the ids of the terms it read, in order.  Batches are
** imported in the order they were encoded (Erlang distribution keeps a
** pair's messages in order), which keeps the two in step.  These bytes
** are not canonical: the owner is the hash of the canonical ones. */
typedef struct wire_dict {
    part_id *ids;
    size_t n, cap;
} wire_dict;
void state_wire_dict_free(wire_dict *d);
/* st in transport form into out (emptied first), ranks from and into
** `dict`; 0, or -1 as state_wire_export (dict may then hold terms the
** receiver will never see: the connection is unusable). */
int state_wire_encode_for(const part_store *ps, const sys_state *st, wire_buf *dict,
                          wire_buf *out);
/* state_wire_import of the transport form, ranks from and into `dict`. */
int state_wire_decode_for(trans_ctx *cx, const uint8_t *buf, size_t len, wire_dict *dict,
                          sys_state *out, const char **why);

/* Which of n participants owns the state of these bytes. */
uint32_t state_wire_owner(const uint8_t *buf, size_t len, uint32_t n);

#endif
