/*
** match_memo.h: the answers Erlang gave to "does message M match receive
** continuation C?", so that each question is asked once per search.
**
** Invariant: parts are interned and never freed during a search, so the
** pair of part ids (C, M) names the question exactly, and an answer stored
** under it stays true for the whole search.  The table is open addressing
** at load at most 1/2; a key is (C << 32 | M) + 1, so 0 marks an empty slot.
*/
#ifndef MCE_MATCH_MEMO_H
#define MCE_MATCH_MEMO_H

#include <stddef.h>
#include <stdint.h>

#include "part_store.h"

typedef struct match_memo {
    uint64_t *keys;       /* (cont << 32 | msg) + 1, 0 = empty */
    uint8_t *vals;
    size_t nslots, n;
} match_memo;

/* An empty memo; 0, or -1 when out of memory (match_memo_free is then
** still safe to call). */
int match_memo_init(match_memo *m);
void match_memo_free(match_memo *m);

/* 1 matches, 0 does not, -1 not asked yet. */
int match_memo_get(const match_memo *m, part_id cont, part_id msg);

/* Records an answer; 0, or -1 when out of memory (the memo unchanged). */
int match_memo_put(match_memo *m, part_id cont, part_id msg, int matches);

/* The bytes the memo holds. */
size_t match_memo_bytes(const match_memo *m);

#endif
