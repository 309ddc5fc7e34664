/*
** nif_common.c: the helpers of nif_common.h, shared by the nif_*.c files:
** the error term, the resource and argument checks, and the conversion of
** terms to and from the store's external format.
**
** None of them keeps state: what they make is a term of the caller's env or
** a binary the caller releases.
*/
#include <erl_nif.h>

#include "nif_common.h"

ERL_NIF_TERM nif_error(ErlNifEnv *env, const char *file, int line, const char *why)
{
    return enif_make_tuple3(env, ATOM(env, error),
                            enif_make_tuple2(env,
                                             enif_make_string(env, file,
                                                              ERL_NIF_LATIN1),
                                             enif_make_int(env, line)),
                            enif_make_string(env, why, ERL_NIF_LATIN1));
}

int get_res(ErlNifEnv *env, ERL_NIF_TERM t, search_res **r)
{
    nif_priv *p = enif_priv_data(env);
    return enif_get_resource(env, t, p->search_type, (void **)r) &&
           (*r)->s != NULL;
}

ERL_NIF_TERM tell_search(ErlNifEnv *env, ERL_NIF_TERM res, void (*tell)(search *))
{
    search_res *r;
    if (!get_res(env, res, &r))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    tell(r->s);
    enif_mutex_unlock(r->lock);
    return ATOM(env, ok);
}

int map_u64(ErlNifEnv *env, ERL_NIF_TERM map, ERL_NIF_TERM key, uint64_t *out)
{
    ERL_NIF_TERM v;
    ErlNifUInt64 u;
    if (!enif_get_map_value(env, map, key, &v))
        return 0;
    if (!enif_get_uint64(env, v, &u))
        return -1;
    *out = u;
    return 1;
}

int part_term(ErlNifEnv *env, const part_store *ps, part_id id, ERL_NIF_TERM *out)
{
    const part *p = part_store_get(ps, id);
    return p != NULL && p->kind == PART_TERM &&
           enif_binary_to_term(env, p->data, p->len, out, 0) == p->len;
}

int encode(ErlNifEnv *env, ERL_NIF_TERM t, ErlNifBinary *bin, term_in *out)
{
    if (!enif_term_to_binary(env, t, bin))
        return 0;
    out->etf = bin->data;
    out->len = bin->size;
    out->id = 0;
    return 1;
}

int get_bool(ErlNifEnv *env, ERL_NIF_TERM t, int *out)
{
    if (enif_is_identical(t, ATOM(env, true)))
        *out = 1;
    else if (enif_is_identical(t, ATOM(env, false)))
        *out = 0;
    else
        return 0;
    return 1;
}

ERL_NIF_TERM void_reason_term(ErlNifEnv *env, int why)
{
    return why == SYM_VOID_PID_ORDER ? ATOM(env, pid_order)
         : why == SYM_VOID_KEY_ORDER ? ATOM(env, key_order)
         : why == POR_VOID_EXIT ? ATOM(env, exit_signal)
         : why == POR_VOID_LINK ? ATOM(env, link)
         : why == POR_VOID_PROCESSES ? ATOM(env, processes)
         : why == POR_VOID_NUMBERS ? ATOM(env, pid_numbers)
         : why == POR_VOID_DEAD_TARGET ? ATOM(env, dead_target)
         : why == POR_VOID_MONITOR_RACE ? ATOM(env, monitor_race)
         : why == POR_VOID_NAME_FREED ? ATOM(env, name_freed)
         : why == SYM_VOID_FEW_RENAMED ? ATOM(env, few_renamed)
         : ATOM(env, reads_process_state);
}

ERL_NIF_TERM renaming_term(ErlNifEnv *env, const uint32_t *pairs, uint32_t npairs)
{
    ERL_NIF_TERM list = enif_make_list(env, 0);
    for (uint32_t k = npairs; k-- > 0;)
        list = enif_make_list_cell(env,
                                   enif_make_tuple2(env, enif_make_uint(env, pairs[2 * k]),
                                                    enif_make_uint(env, pairs[2 * k + 1])),
                                   list);
    return list;
}
