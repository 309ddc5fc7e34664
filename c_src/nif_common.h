/*
** nif_common.h: what the files of the NIF boundary share: the library's
** private data, the search resource, and the helpers that check arguments
** and convert terms.
**
** Every argument is checked; a bad one gives badarg, a failure inside C
** gives {error, {File, Line}, Reason} (ERROR, with the file and line of the
** call that failed).  A NIF returns a valid term or raises: it never crashes
** the VM, whatever the arguments or the order of calls.  A search is used
** only with its resource's lock held, so a misbehaving caller cannot corrupt
** it, and there is no state but the resources and the library's private
** data, so several checks can run at once in one VM.
*/
#ifndef MCE_NIF_COMMON_H
#define MCE_NIF_COMMON_H

#include <erl_nif.h>
#include <stdatomic.h>
#include <stdint.h>

#include "nif_atoms.h"
#include "search.h"

/* The library's private data (enif_priv_data), made in load. */
typedef struct nif_priv {
    ErlNifResourceType *search_type;
    ErlNifResourceType *buchi_type;
    atomic_long live;      /* searches and Büchi searchers not yet freed
                              (live_searches/0) */
    nif_atoms atoms;       /* made in load, read-only after */
} nif_priv;

typedef struct search_res {
    ErlNifMutex *lock;
    search *s;
    struct term_cache *terms;  /* decoded parts (nif_term_cache.h), or NULL */
    nif_priv *priv;        /* whose `live` counts this search */
    int label_binaries;    /* {expanded, ...} labels as ETF binaries, undecoded */
} search_res;

static inline const nif_atoms *nif_atoms_of(ErlNifEnv *env)
{
    return &((const nif_priv *)enif_priv_data(env))->atoms;
}

/* The atom `name` (one of NIF_ATOMS), as a term. */
#define ATOM(env, name) (nif_atoms_of(env)->am_##name)

static inline ERL_NIF_TERM bool_term(ErlNifEnv *env, int b)
{
    return b ? ATOM(env, true) : ATOM(env, false);
}

ERL_NIF_TERM nif_error(ErlNifEnv *env, const char *file, int line, const char *why);

#define ERROR(env, why) nif_error((env), __FILE__, __LINE__, (why))

/* A live search resource (not one whose search failed to start). */
int get_res(ErlNifEnv *env, ERL_NIF_TERM t, search_res **r);

/* The body of a NIF `f(Search) -> ok' that only tells the search something
** (search_pid_order, search_stop_workers, ...): tell(search) under the
** resource's lock; badarg when res is not a live search. */
ERL_NIF_TERM tell_search(ErlNifEnv *env, ERL_NIF_TERM res, void (*tell)(search *));

/* 1: *out set from map's key; 0: no such key; -1: not a uint64. */
int map_u64(ErlNifEnv *env, ERL_NIF_TERM map, ERL_NIF_TERM key, uint64_t *out);

int get_bool(ErlNifEnv *env, ERL_NIF_TERM t, int *out);
/* A renaming of pid keys, npairs pairs of words (from, to), as the list
** [{From, To}] the driver composes (mce_symmetry). */
ERL_NIF_TERM renaming_term(ErlNifEnv *env, const uint32_t *pairs, uint32_t npairs);

/* Why a reduced search is void (search.h: enum por_void_why), as the
** driver names it: reads_process_state, exit_signal, link, processes,
** pid_order, key_order. */
ERL_NIF_TERM void_reason_term(ErlNifEnv *env, int why);

/* Decodes a stored PART_TERM; 0 if id is not one or does not decode. */
int part_term(ErlNifEnv *env, const part_store *ps, part_id id, ERL_NIF_TERM *out);

/* Encodes a term for the store.  The binary must be released. */
int encode(ErlNifEnv *env, ERL_NIF_TERM t, ErlNifBinary *bin, term_in *out);

#endif
