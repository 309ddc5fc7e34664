/*
** nif_sym.c: rename_term(Bytes, Nodes, Creation, Pairs, Ets) ->
** {ok, Renamed} | error.  Bytes: a term's external format; Nodes: the
** simulated nodes' names (binaries, the order of their indices); Pairs:
** [{FromKey, ToKey}], pid keys as mce_pid numbers them, a bijection on
** those it moves; Ets: whether Bytes is an mce_ets table's data.  `error'
** when the renaming is refused (a moved key in a map whose order cannot be
** restored: symmetry.c pins such pids).  No search is involved: the term
** goes through symmetry_rename_term, the code symmetry_rename runs on
** every term of a state.
*/
#include "nif_sym.h"

#include <stdlib.h>
#include <string.h>

#include "nif_common.h"
#include "symmetry.h"

static int cmp_from(const void *a, const void *b)
{
    const sym_pair *x = a, *y = b;
    return x->from < y->from ? -1 : x->from > y->from;
}

ERL_NIF_TERM nif_rename_term(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    ErlNifBinary in, out;
    unsigned nnodes, npairs;
    unsigned creation;
    int ets;
    if (!enif_inspect_binary(env, argv[0], &in) ||
        !enif_get_list_length(env, argv[1], &nnodes) || nnodes == 0 ||
        nnodes > ETF_MAX_NODES || !enif_get_uint(env, argv[2], &creation) ||
        !enif_get_list_length(env, argv[3], &npairs) || npairs > 1u << 20 ||
        !get_bool(env, argv[4], &ets))
        return enif_make_badarg(env);
    etf_nodes nodes = { .n = nnodes };
    ErlNifBinary names[ETF_MAX_NODES];
    ERL_NIF_TERM l = argv[1], h;
    for (unsigned j = 0; enif_get_list_cell(env, l, &h, &l); j++) {
        if (!enif_inspect_binary(env, h, &names[j]))
            return enif_make_badarg(env);
        nodes.names[j] = (const char *)names[j].data;
        nodes.lens[j] = names[j].size;
    }
    sym_pair *pairs = malloc((npairs ? npairs : 1) * sizeof *pairs);
    if (pairs == NULL)
        return ERROR(env, "out of memory");
    l = argv[3];
    for (unsigned j = 0; enif_get_list_cell(env, l, &h, &l); j++) {
        const ERL_NIF_TERM *t;
        int arity;
        unsigned from, to;
        if (!enif_get_tuple(env, h, &arity, &t) || arity != 2 ||
            !enif_get_uint(env, t[0], &from) || !enif_get_uint(env, t[1], &to) ||
            from >= ETF_NUM_LIMIT * ETF_MAX_NODES || to >= ETF_NUM_LIMIT * ETF_MAX_NODES) {
            free(pairs);
            return enif_make_badarg(env);
        }
        pairs[j] = (sym_pair){ from, to };
    }
    if (npairs > 1)
        qsort(pairs, npairs, sizeof *pairs, cmp_from);
    if (!enif_alloc_binary(in.size, &out)) {
        free(pairs);
        return ERROR(env, "out of memory");
    }
    memcpy(out.data, in.data, in.size);
    int rc = symmetry_rename_term(&nodes, creation, out.data, out.size, ets, pairs,
                                  npairs);
    free(pairs);
    if (rc != 0) {
        enif_release_binary(&out);
        return ATOM(env, error);
    }
    return enif_make_tuple2(env, ATOM(env, ok), enif_make_binary(env, &out));
}
