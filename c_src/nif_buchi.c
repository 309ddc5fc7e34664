/*
** nif_buchi.c: the Büchi resource (buchi_new, buchi_start, buchi_answer,
** buchi_lasso, buchi_stats: the LTL product search of buchi.c driven from
** Erlang one request at a time, like the program search) and buchi_check/2
** (the same emptiness checks over an explicit graph, for the tests).
**
** A Büchi resource is touched only with its lock held; buchi_check owns
** nothing beyond the call.  Successor lists are handed to buchi.c as it
** wants them: enabled agents sorted and deduplicated.
*/
#include <erl_nif.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "buchi.h"
#include "nif_buchi.h"
#include "nif_common.h"

/* A Büchi product search (buchi.c) driven from Erlang, one request at a
** time, like the program search. */
typedef struct buchi_res {
    ErlNifMutex *lock;
    buchi *b;
    nif_priv *priv;
} buchi_res;

void buchi_res_dtor(ErlNifEnv *env, void *obj)
{
    (void)env;
    buchi_res *r = obj;
    if (r->b != NULL)
        atomic_fetch_sub(&r->priv->live, 1);
    buchi_free(r->b);
    r->b = NULL;
    if (r->lock)
        enif_mutex_destroy(r->lock);
}

/* ------------------------------------------------------------------ */
/* buchi_check/2: the Büchi emptiness checks of buchi.c over an explicit
** graph given as a term, so that EUnit can compare them with an oracle
** written in Erlang.  Kept apart from the search resource: it owns nothing
** beyond the call (a buchi searcher and two answer buffers, freed on every
** path).  It runs on a dirty CPU scheduler: the graph's size is the
** caller's choice. */
typedef struct bc_buf {
    uint32_t *en;
    buchi_succ *succ;
} bc_buf;

static int bc_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int bc_agent(ErlNifEnv *env, ERL_NIF_TERM t, uint32_t *out)
{
    ErlNifUInt64 u;
    if (!enif_get_uint64(env, t, &u) || u >= BUCHI_NO_AGENT)
        return 0;
    *out = (uint32_t)u;
    return 1;
}

/* Reads {Accepting, Enabled, Succs} into buf (enabled sorted and
** deduplicated, as buchi.c wants them).  1: done; 0: malformed (badarg);
** -2: out of memory. */
static int bc_parse(ErlNifEnv *env, ERL_NIF_TERM acc_t, ERL_NIF_TERM en_t,
                    ERL_NIF_TERM succ_t, bc_buf *buf, int *acc, size_t *nen,
                    size_t *nsucc)
{
    ERL_NIF_TERM head, tail;
    int arity;
    unsigned len;
    if (enif_is_identical(acc_t, ATOM(env, true)))
        *acc = 1;
    else if (enif_is_identical(acc_t, ATOM(env, false)))
        *acc = 0;
    else
        return 0;
    free(buf->en);
    free(buf->succ);
    buf->en = NULL;
    buf->succ = NULL;
    if (!enif_get_list_length(env, en_t, &len))
        return 0;
    if (len > 0 && (buf->en = malloc(len * sizeof *buf->en)) == NULL)
        return -2;
    tail = en_t;
    for (unsigned i = 0; i < len; i++)
        if (!enif_get_list_cell(env, tail, &head, &tail) ||
            !bc_agent(env, head, &buf->en[i]))
            return 0;
    if (len > 1)
        qsort(buf->en, len, sizeof *buf->en, bc_cmp_u32);
    size_t n = 0;
    for (unsigned i = 0; i < len; i++)
        if (n == 0 || buf->en[n - 1] != buf->en[i])
            buf->en[n++] = buf->en[i];
    *nen = n;
    if (!enif_get_list_length(env, succ_t, &len))
        return 0;
    if (len > 0 && (buf->succ = malloc(len * sizeof *buf->succ)) == NULL)
        return -2;
    tail = succ_t;
    for (unsigned i = 0; i < len; i++) {
        const ERL_NIF_TERM *e;
        ErlNifUInt64 to;
        if (!enif_get_list_cell(env, tail, &head, &tail) ||
            !enif_get_tuple(env, head, &arity, &e) || arity != 2 ||
            !enif_get_uint64(env, e[0], &to))
            return 0;
        buf->succ[i].key = to;
        if (enif_is_identical(e[1], ATOM(env, none)))
            buf->succ[i].agent = BUCHI_NO_AGENT;
        else if (!bc_agent(env, e[1], &buf->succ[i].agent))
            return 0;
    }
    *nsucc = len;
    return 1;
}

/* Reads state `key`'s entry {Accepting, Enabled, Succs}: as bc_parse, and
** -1 when there is no such state. */
static int bc_state(ErlNifEnv *env, ERL_NIF_TERM states, uint64_t key,
                    bc_buf *buf, int *acc, size_t *nen, size_t *nsucc)
{
    ERL_NIF_TERM v;
    const ERL_NIF_TERM *el;
    int arity;
    if (!enif_get_map_value(env, states, enif_make_uint64(env, key), &v))
        return -1;
    if (!enif_get_tuple(env, v, &arity, &el) || arity != 3)
        return 0;
    return bc_parse(env, el[0], el[1], el[2], buf, acc, nen, nsucc);
}

static ERL_NIF_TERM bc_steps(ErlNifEnv *env, const buchi_step *s, size_t n)
{
    ERL_NIF_TERM list = enif_make_list(env, 0);
    for (size_t i = n; i-- > 0;)
        list = enif_make_list_cell(env,
                                   enif_make_tuple2(env, enif_make_uint64(env, s[i].key),
                                                    enif_make_uint(env, s[i].succ)),
                                   list);
    return list;
}

static int bc_config(ErlNifEnv *env, ERL_NIF_TERM opts, buchi_config *cfg)
{
    ERL_NIF_TERM alg, fair;
    uint64_t max_states = 0, max_depth = 0;
    *cfg = (buchi_config){ .fairness = BUCHI_FAIR_NONE };
    if (!enif_is_map(env, opts) ||
        !enif_get_map_value(env, opts, ATOM(env, algorithm), &alg) ||
        map_u64(env, opts, ATOM(env, max_states), &max_states) < 0 ||
        map_u64(env, opts, ATOM(env, max_depth), &max_depth) < 0)
        return 0;
    if (enif_is_identical(alg, ATOM(env, ndfs)))
        cfg->algorithm = BUCHI_NDFS;
    else if (enif_is_identical(alg, ATOM(env, scc)))
        cfg->algorithm = BUCHI_SCC;
    else
        return 0;
    if (enif_get_map_value(env, opts, ATOM(env, fairness), &fair)) {
        if (enif_is_identical(fair, ATOM(env, weak)))
            cfg->fairness = BUCHI_FAIR_WEAK;
        else if (!enif_is_identical(fair, ATOM(env, none)))
            return 0;
    }
    cfg->max_states = max_states;
    cfg->max_depth = max_depth;
    return 1;
}

static int get_buchi(ErlNifEnv *env, ERL_NIF_TERM t, buchi_res **r)
{
    nif_priv *p = enif_priv_data(env);
    return enif_get_resource(env, t, p->buchi_type, (void **)r) && (*r)->b != NULL;
}

static ERL_NIF_TERM buchi_request_term(ErlNifEnv *env, const buchi_request *q)
{
    switch (q->kind) {
    case BUCHI_NEED_SUCCESSORS:
        return enif_make_tuple2(env, ATOM(env, need), enif_make_uint64(env, q->key));
    case BUCHI_EMPTY: return ATOM(env, empty);
    case BUCHI_FOUND: return ATOM(env, found);
    case BUCHI_INCOMPLETE: return ATOM(env, incomplete);
    case BUCHI_ERROR: break;
    }
    return enif_make_tuple2(env, ATOM(env, error),
                            enif_make_string(env, q->error ? q->error : "failed",
                                             ERL_NIF_LATIN1));
}

/* buchi_check(#{init := Key, states := #{Key => {Accepting, [Agent],
**                                              [{Target, Agent | none}]}}},
**             #{algorithm := ndfs | scc, fairness => none | weak,
**               max_states => N})
**   -> empty | incomplete | {lasso, Stem, Cycle} | {error, Reason}
** Stem and Cycle are [{Key, SuccIndex}]: each state and the 0-based index,
** in its successor list, of the transition taken to the next element; the
** last of Stem leads to the head of Cycle, the last of Cycle back to it.
** Reason: {unknown_state, Key} for a target missing from states, else a
** string from buchi.c. */
ERL_NIF_TERM nif_buchi_check(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    ERL_NIF_TERM it, states;
    ErlNifUInt64 init;
    buchi_config cfg;
    if (!enif_is_map(env, argv[0]) ||
        !enif_get_map_value(env, argv[0], ATOM(env, init), &it) ||
        !enif_get_uint64(env, it, &init) ||
        !enif_get_map_value(env, argv[0], ATOM(env, states), &states) ||
        !enif_is_map(env, states) || !bc_config(env, argv[1], &cfg))
        return enif_make_badarg(env);
    const char *why = "out of memory";
    buchi *b = buchi_new(&cfg, &why);
    if (b == NULL)
        return enif_make_tuple2(env, ATOM(env, error),
                                enif_make_string(env, why, ERL_NIF_LATIN1));
    bc_buf buf = { NULL, NULL };
    buchi_request req;
    ERL_NIF_TERM result;
    int r = 1;
    buchi_start(b, init, &req);
    while (req.kind == BUCHI_NEED_SUCCESSORS) {
        int acc = 0;
        size_t nen = 0, nsucc = 0;
        r = bc_state(env, states, req.key, &buf, &acc, &nen, &nsucc);
        if (r <= 0)
            break;
        buchi_answer(b, acc, buf.en, nen, buf.succ, nsucc, &req);
    }
    switch (req.kind) {
    case BUCHI_NEED_SUCCESSORS:
        /* the state asked for was refused by bc_state */
        if (r == 0)
            result = enif_make_badarg(env);
        else if (r == -1)
            result = enif_make_tuple2(env, ATOM(env, error),
                                      enif_make_tuple2(env, ATOM(env, unknown_state),
                                                       enif_make_uint64(env, req.key)));
        else
            result = enif_make_tuple2(env, ATOM(env, error),
                                      enif_make_string(env, "out of memory",
                                                       ERL_NIF_LATIN1));
        break;
    case BUCHI_EMPTY:
        result = ATOM(env, empty);
        break;
    case BUCHI_INCOMPLETE:
        result = ATOM(env, incomplete);
        break;
    case BUCHI_FOUND: {
        const buchi_step *stem, *cycle;
        size_t nstem, ncycle;
        if (buchi_lasso(b, &stem, &nstem, &cycle, &ncycle) != 0)
            result = enif_make_tuple2(env, ATOM(env, error),
                                      enif_make_string(env, "no lasso", ERL_NIF_LATIN1));
        else
            result = enif_make_tuple3(env, ATOM(env, lasso),
                                      bc_steps(env, stem, nstem),
                                      bc_steps(env, cycle, ncycle));
        break;
    }
    default:
        result = enif_make_tuple2(env, ATOM(env, error),
                                  enif_make_string(env, req.error ? req.error : "failed",
                                                   ERL_NIF_LATIN1));
        break;
    }
    free(buf.en);
    free(buf.succ);
    buchi_free(b);
    return result;
}

/* buchi_new(#{algorithm := ndfs | scc, fairness => none | weak,
**             max_states => N}) -> Resource | {error, Reason} */
ERL_NIF_TERM nif_buchi_new(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    buchi_config cfg;
    if (!bc_config(env, argv[0], &cfg))
        return enif_make_badarg(env);
    nif_priv *p = enif_priv_data(env);
    buchi_res *r = enif_alloc_resource(p->buchi_type, sizeof *r);
    if (r == NULL)
        return ERROR(env, "out of memory");
    r->priv = p;
    r->b = NULL;
    r->lock = enif_mutex_create("mce_buchi");
    const char *why = "out of memory";
    if (r->lock != NULL)
        r->b = buchi_new(&cfg, &why);
    if (r->b != NULL)
        atomic_fetch_add(&p->live, 1);
    ERL_NIF_TERM t = enif_make_resource(env, r);
    enif_release_resource(r);
    if (r->b == NULL)
        return enif_make_tuple2(env, ATOM(env, error),
                                enif_make_string(env, why, ERL_NIF_LATIN1));
    return t;
}

/* buchi_start(B, InitKey) -> {need, Key} | empty | found | incomplete
**                            | {error, Reason} */
ERL_NIF_TERM nif_buchi_start(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    buchi_res *r;
    ErlNifUInt64 init;
    if (!get_buchi(env, argv[0], &r) || !enif_get_uint64(env, argv[1], &init))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    buchi_request q;
    buchi_start(r->b, init, &q);
    enif_mutex_unlock(r->lock);
    return buchi_request_term(env, &q);
}

/* buchi_answer(B, Accepting, [Agent], [{Key, Agent | none}]) -> as start */
ERL_NIF_TERM nif_buchi_answer(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    buchi_res *r;
    if (!get_buchi(env, argv[0], &r))
        return enif_make_badarg(env);
    bc_buf buf = { NULL, NULL };
    int acc = 0;
    size_t nen = 0, nsucc = 0;
    int ok = bc_parse(env, argv[1], argv[2], argv[3], &buf, &acc, &nen, &nsucc);
    ERL_NIF_TERM t;
    if (ok == 0) {
        t = enif_make_badarg(env);
    } else if (ok < 0) {
        t = ERROR(env, "out of memory");
    } else {
        enif_mutex_lock(r->lock);
        buchi_request q;
        buchi_answer(r->b, acc, buf.en, nen, buf.succ, nsucc, &q);
        enif_mutex_unlock(r->lock);
        t = buchi_request_term(env, &q);
    }
    free(buf.en);
    free(buf.succ);
    return t;
}

/* buchi_lasso(B) -> {Stem, Cycle} | {error, Reason}: as buchi_check's */
ERL_NIF_TERM nif_buchi_lasso(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    buchi_res *r;
    if (!get_buchi(env, argv[0], &r))
        return enif_make_badarg(env);
    const buchi_step *stem, *cycle;
    size_t nstem, ncycle;
    enif_mutex_lock(r->lock);
    ERL_NIF_TERM t;
    if (buchi_lasso(r->b, &stem, &nstem, &cycle, &ncycle) != 0)
        t = enif_make_tuple2(env, ATOM(env, error),
                             enif_make_string(env, "no lasso", ERL_NIF_LATIN1));
    else
        t = enif_make_tuple2(env, bc_steps(env, stem, nstem), bc_steps(env, cycle, ncycle));
    enif_mutex_unlock(r->lock);
    return t;
}

/* buchi_stats(B) -> #{states, transitions, requests, max_depth, cut} */
ERL_NIF_TERM nif_buchi_stats(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    buchi_res *r;
    if (!get_buchi(env, argv[0], &r))
        return enif_make_badarg(env);
    buchi_stats st;
    enif_mutex_lock(r->lock);
    buchi_get_stats(r->b, &st);
    enif_mutex_unlock(r->lock);
    ERL_NIF_TERM keys[] = { ATOM(env, states), ATOM(env, transitions),
                            ATOM(env, requests), ATOM(env, max_depth), ATOM(env, cut) };
    ERL_NIF_TERM vals[] = { enif_make_uint64(env, st.states),
                            enif_make_uint64(env, st.transitions),
                            enif_make_uint64(env, st.requests),
                            enif_make_uint64(env, st.max_depth),
                            enif_make_uint64(env, st.cut) };
    ERL_NIF_TERM m;
    enif_make_map_from_arrays(env, keys, vals, 5, &m);
    return m;
}
