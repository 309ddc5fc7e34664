/*
** nif_term_cache.h: the terms of stored parts, decoded once per search.
**
** A step the step cache misses is run in Erlang on its process's
** continuation, dictionary and message, stored as external-format parts.
** Decoding them (enif_binary_to_term) looks every atom up in the VM's atom
** table, under its lock: a fifth of a check whose steps all run in Erlang
** (the locker under `step_cache => false').  The same continuations recur
** across states, so a search keeps the terms it decoded, by part id, in an
** environment of its own, and hands out copies (enif_make_copy walks the
** term without the atom table).  Parts never change, so a kept term is
** never stale; the cache is emptied whole when it holds TERM_CACHE_BYTES (4 MB) of
** external format or its table is full.  One per search resource, used under
** the resource's lock.
*/
#ifndef MCE_NIF_TERM_CACHE_H
#define MCE_NIF_TERM_CACHE_H

#include <erl_nif.h>

#include "part_store.h"

typedef struct term_cache term_cache;

/* NULL when out of memory (the caller then decodes every time). */
term_cache *term_cache_new(void);
void term_cache_free(term_cache *c);

/* Part `id` of `ps`, a PART_TERM, as a term of `env`: 1, or 0 when it is no
** such part or does not decode.  With c NULL, decodes it directly. */
int term_cache_get(term_cache *c, ErlNifEnv *env, const part_store *ps, part_id id,
                   ERL_NIF_TERM *out);

/* What the cache holds, in bytes: its table and the external format of the
** terms it keeps (their decoded size is of that order); counted in the
** search's `memory_used', which the memory cap reads. */
size_t term_cache_bytes(const term_cache *c);

#endif
