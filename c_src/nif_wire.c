/*
** nif_wire.c: the NIF calls of a distributed search's participant
** (search_cluster.h): the successors bound for other participants, the
** import of the batches they send, the segments of a counterexample's
** path, and the participant's counts.
**
** Every call holds the search's lock; a batch from another node is
** checked field by field (badarg), its states by the importer, which
** answers an error tuple for bytes that are no state of this check.
*/
#include <erl_nif.h>
#include <stdlib.h>
#include <string.h>

#include "nif_common.h"
#include "nif_wire.h"
#include "search_cluster.h"

static int make_bin(ErlNifEnv *env, const uint8_t *b, size_t n, ERL_NIF_TERM *out)
{
    unsigned char *dst = enif_make_new_binary(env, n, out);
    if (dst == NULL)
        return 0;
    if (n)
        memcpy(dst, b, n);
    return 1;
}

/* A renaming as a list of {From, To} pid keys (symmetry.h). */
static ERL_NIF_TERM perm_term(ErlNifEnv *env, const sym_pair *perm, uint32_t nperm)
{
    _Static_assert(sizeof(sym_pair) == 2 * sizeof(uint32_t), "pairs of words");
    return renaming_term(env, (const uint32_t *)perm, nperm);
}

/* A renaming back from perm_term's list: 1 and *perm (malloc'd, NULL when
** empty) and *nperm, or 0 when it is no such list (or out of memory, when
** *perm is left NULL with *nperm 1). */
static int get_perm(ErlNifEnv *env, ERL_NIF_TERM list, sym_pair **perm, uint32_t *nperm)
{
    unsigned n;
    *perm = NULL;
    *nperm = 0;
    if (!enif_get_list_length(env, list, &n) || n > (1u << 24))
        return 0;
    if (n == 0)
        return 1;
    sym_pair *p = malloc(n * sizeof *p);
    if (p == NULL) {
        *nperm = 1;
        return 0;
    }
    ERL_NIF_TERM head;
    for (unsigned k = 0; enif_get_list_cell(env, list, &head, &list); k++) {
        const ERL_NIF_TERM *el;
        int arity;
        unsigned from, to;
        if (!enif_get_tuple(env, head, &arity, &el) || arity != 2 ||
            !enif_get_uint(env, el[0], &from) || !enif_get_uint(env, el[1], &to)) {
            free(p);
            return 0;
        }
        p[k] = (sym_pair){ .from = from, .to = to };
    }
    *perm = p;
    *nperm = n;
    return 1;
}

/* cluster_outbox(Search) -> [{Owner, Parent, Depth, Wire, Label, Perm}],
** the successors routed to other participants since the last call, oldest
** first (Perm: the renaming to the representative, [] when none); they are
** the caller's now. */
ERL_NIF_TERM nif_cluster_outbox(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    if (!get_res(env, argv[0], &r))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    const cluster_out *out;
    size_t n = search_cluster_outbox(r->s, &out);
    ERL_NIF_TERM list = enif_make_list(env, 0);
    for (size_t k = n; k-- > 0;) {
        ERL_NIF_TERM wire, label;
        if (!make_bin(env, out[k].wire, out[k].wire_len, &wire) ||
            !make_bin(env, out[k].label, out[k].label_len, &label)) {
            enif_mutex_unlock(r->lock);
            return ERROR(env, "out of memory");
        }
        ERL_NIF_TERM el[6] = { enif_make_uint(env, out[k].owner),
                               enif_make_uint(env, out[k].parent),
                               enif_make_uint(env, out[k].depth), wire, label,
                               perm_term(env, out[k].perm, out[k].nperm) };
        list = enif_make_list_cell(env, enif_make_tuple_from_array(env, el, 6), list);
    }
    search_cluster_taken(r->s);
    enif_mutex_unlock(r->lock);
    return list;
}

/* cluster_import(Search, From, [{FromIndex, Depth, Wire, Label, Perm}])
** -> {ok, New}: the states participant From sent, each a child of its node
** FromIndex, with its renaming; New of them were new here and are queued. */
ERL_NIF_TERM nif_cluster_import(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    unsigned from;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &from) ||
        !enif_is_list(env, argv[2]))
        return enif_make_badarg(env);
    /* Every element is checked before any is imported. */
    ERL_NIF_TERM list = argv[2], head;
    while (enif_get_list_cell(env, list, &head, &list)) {
        const ERL_NIF_TERM *el;
        int arity;
        unsigned u;
        ErlNifBinary b;
        unsigned n;
        if (!enif_get_tuple(env, head, &arity, &el) || arity != 5 ||
            !enif_get_uint(env, el[0], &u) || !enif_get_uint(env, el[1], &u) ||
            !enif_inspect_binary(env, el[2], &b) || !enif_inspect_binary(env, el[3], &b) ||
            !enif_get_list_length(env, el[4], &n))
            return enif_make_badarg(env);
    }
    if (!enif_is_empty_list(env, list))
        return enif_make_badarg(env);
    unsigned fresh = 0;
    const char *why = NULL;
    enif_mutex_lock(r->lock);
    list = argv[2];
    while (why == NULL && enif_get_list_cell(env, list, &head, &list)) {
        const ERL_NIF_TERM *el;
        int arity;
        unsigned index, depth;
        ErlNifBinary wire, label;
        enif_get_tuple(env, head, &arity, &el);
        enif_get_uint(env, el[0], &index);
        enif_get_uint(env, el[1], &depth);
        enif_inspect_binary(env, el[2], &wire);
        enif_inspect_binary(env, el[3], &label);
        sym_pair *perm;
        uint32_t nperm;
        if (!get_perm(env, el[4], &perm, &nperm)) {
            why = nperm == 1 ? "out of memory" : "a renaming that is no list of {From, To}";
            break;
        }
        int n = search_cluster_import(r->s, wire.data, wire.size, from, index, depth,
                                      label.data, label.size, perm, nperm, &why);
        if (n > 0)
            fresh++;
    }
    enif_mutex_unlock(r->lock);
    if (why != NULL)
        return ERROR(env, why);
    return enif_make_tuple2(env, ATOM(env, ok), enif_make_uint(env, fresh));
}

static ERL_NIF_TERM origin_term(ErlNifEnv *env, int r, uint32_t from, uint32_t index)
{
    return r == 1 ? enif_make_tuple2(env, enif_make_uint(env, from), enif_make_uint(env, index))
                  : ATOM(env, none);
}

/* cluster_path(Search, Index) -> {[{Label | none, Perm}], Origin}: the
** nodes of the path from the start of node Index's segment to it: the
** label (ETF) of the step into each (none at the root: the step into the
** start when it came from another participant is there) and the renaming
** that made it its orbit's representative ([] when none); Origin is that
** participant's {From, FromIndex}, or none at the root. */
ERL_NIF_TERM nif_cluster_path(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    unsigned index;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &index))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    uint32_t from = 0, from_index = 0;
    int o = search_cluster_origin(r->s, index, &from, &from_index);
    pool_step *path = NULL;
    size_t len = 0;
    if (o < 0 || search_cluster_labels(r->s, index, &path, &len) != 0) {
        enif_mutex_unlock(r->lock);
        return ERROR(env, o < 0 ? "no such node" : "out of memory");
    }
    enif_mutex_unlock(r->lock);
    ERL_NIF_TERM list = enif_make_list(env, 0);
    int ok = 1;
    for (size_t k = len; ok && k-- > 0;) {
        ERL_NIF_TERM label = ATOM(env, none);
        if (path[k].label != NULL && !make_bin(env, path[k].label, path[k].label_len, &label))
            ok = 0;
        else
            list = enif_make_list_cell(
                env, enif_make_tuple2(env, label, perm_term(env, path[k].perm, path[k].nperm)),
                list);
    }
    search_pool_path_free(path, len);
    if (!ok)
        return ERROR(env, "out of memory");
    return enif_make_tuple2(env, list, origin_term(env, o, from, from_index));
}

/* cluster_stack(Search) -> {Label | none, Origin}: after the search
** stopped (a violation, a deadlock), the step into the first state of the
** path on the stack and where that state's segment starts (as in
** cluster_path/2). */
ERL_NIF_TERM nif_cluster_stack(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    if (!get_res(env, argv[0], &r))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    const uint8_t *lb;
    size_t n;
    uint32_t node = search_cluster_stack_node(r->s, &lb, &n), from = 0, index = 0;
    int o = search_cluster_origin(r->s, node, &from, &index);
    ERL_NIF_TERM label = ATOM(env, none);
    int ok = o >= 0 && (lb == NULL || make_bin(env, lb, n, &label));
    enif_mutex_unlock(r->lock);
    if (!ok)
        return ERROR(env, "no path on the stack");
    return enif_make_tuple2(env, label, origin_term(env, o, from, index));
}

/* cluster_stats(Search) -> #{sent, sent_bytes, received, received_new,
** por_sent => boolean(), por_hazard => none | Why} */
ERL_NIF_TERM nif_cluster_stats(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    if (!get_res(env, argv[0], &r))
        return enif_make_badarg(env);
    cluster_stats st;
    enif_mutex_lock(r->lock);
    search_cluster_stats(r->s, &st);
    enif_mutex_unlock(r->lock);
    ERL_NIF_TERM keys[] = { ATOM(env, sent), ATOM(env, sent_bytes), ATOM(env, received),
                            ATOM(env, received_new), ATOM(env, por_sent), ATOM(env, por_hazard) };
    ERL_NIF_TERM vals[] = { enif_make_uint64(env, st.sent), enif_make_uint64(env, st.sent_bytes),
                            enif_make_uint64(env, st.received),
                            enif_make_uint64(env, st.received_new), bool_term(env, st.por_sent),
                            st.por_hazard != 0 ? void_reason_term(env, st.por_hazard)
                                               : ATOM(env, none) };
    ERL_NIF_TERM map;
    if (!enif_make_map_from_arrays(env, keys, vals, 6, &map))
        return ERROR(env, "stats map");
    return map;
}
