/*
** dead_payload.h: storing the message a suspended receive will take with
** the parts no run can observe replaced by the atom '$mce_dead', so that
** states differing only there are one (issue 18).
**
** Which parts are dead is decided in Erlang (src/mce_payload.erl, which
** also defines the descriptor's bytes) when a step ends in a receive, per
** continuation; this file keeps the descriptors by continuation part and
** applies them.  A descriptor names, per clause of the receive, a pattern
** C can decide (tuples, lists, literals and the receive's free variables)
** and the variables of it that are dead.
**
** Invariants:
**   - a message is rewritten only when it is certainly the one the process
**     takes next: its receive has no `after', every earlier message
**     certainly matches no clause, and it certainly matches a clause
**     without a guard (any doubt, such as two encodings of equal numbers
**     or a clause C cannot decide, leaves the mailbox as it is);
**   - the atom replaces only what that clause binds to a dead variable, so
**     the same clause takes the rewritten message;
**   - rewriting is idempotent, so a stored state's mailboxes are fixed
**     points and equal modulo dead parts intern to one state.
*/
#ifndef MCE_DEAD_PAYLOAD_H
#define MCE_DEAD_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "part_store.h"
#include "sys_state.h"
#include "transition.h"

typedef struct payload_table {
    uint32_t *keys;         /* cont part id, 0: empty slot */
    uint8_t **descs;        /* malloc'd descriptor bytes */
    uint32_t *lens;
    size_t nslots, n, bytes;
    struct matcher *scratch;    /* payload_rewrite's working record, made
                                   at its first use */
} payload_table;

/* An empty table (all zero is one too). */
void payload_table_init(payload_table *t);
void payload_table_free(payload_table *t);
size_t payload_table_bytes(const payload_table *t);

/* Records the descriptor of continuation `cont' (copied).  0, or -1 when
** out of memory or when the bytes are no descriptor (the table is then
** unchanged). */
int payload_table_put(payload_table *t, part_id cont, const uint8_t *desc, size_t len);

/* The descriptor recorded for `cont', NULL if none. */
const uint8_t *payload_table_get(const payload_table *t, part_id cont, uint32_t *len);

/* Rewrites the taken message of each waiting process of st (flushed) that
** has a descriptor.  *rewritten counts the messages changed.  0, or -1
** when out of memory (st unchanged in the process being rewritten). */
int payload_rewrite(payload_table *t, trans_ctx *cx, sys_state *st,
                    uint64_t *rewritten);

/* Whether the bytes are a well-formed descriptor (for payload_table_put
** and the tests). */
int payload_desc_valid(const uint8_t *desc, size_t len);

#endif
