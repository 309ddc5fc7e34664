/*
** mce_nif.c: the NIF boundary.  Owns the search resource type and the
** conversion between Erlang terms and the C search's inputs and requests.
**
** Every argument is checked; a bad one gives badarg, a failure inside the
** search gives {error, {File, Line}, Reason}.  A search resource is guarded
** by its own mutex, so a misbehaving caller cannot corrupt it, and several
** searches can run at once in one VM (there is no other state).  Each call
** does the work of one transition, well under a millisecond, so the calls
** run on normal schedulers.
*/
#include <erl_nif.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "buchi.h"
#include "search.h"
#include "visited.h"

typedef struct nif_priv {
    ErlNifResourceType *search_type;
    ErlNifResourceType *buchi_type;
    atomic_long live;      /* searches and Büchi searchers not yet freed
                              (live_searches/0) */
} nif_priv;

typedef struct search_res {
    ErlNifMutex *lock;
    search *s;
    nif_priv *priv;        /* whose `live` counts this search */
} search_res;

static ERL_NIF_TERM atom(ErlNifEnv *env, const char *name)
{
    return enif_make_atom(env, name);
}

static ERL_NIF_TERM error3(ErlNifEnv *env, int line, const char *why)
{
    return enif_make_tuple3(env, atom(env, "error"),
                            enif_make_tuple2(env,
                                             enif_make_string(env, __FILE__,
                                                              ERL_NIF_LATIN1),
                                             enif_make_int(env, line)),
                            enif_make_string(env, why, ERL_NIF_LATIN1));
}

#define ERROR(env, why) error3((env), __LINE__, (why))

static void search_res_dtor(ErlNifEnv *env, void *obj)
{
    (void)env;
    search_res *r = obj;
    if (r->s != NULL)
        atomic_fetch_sub(&r->priv->live, 1);
    search_free(r->s);
    r->s = NULL;
    if (r->lock)
        enif_mutex_destroy(r->lock);
}

/* A Büchi product search (buchi.c) driven from Erlang, one request at a
** time, like the program search. */
typedef struct buchi_res {
    ErlNifMutex *lock;
    buchi *b;
    nif_priv *priv;
} buchi_res;

static void buchi_res_dtor(ErlNifEnv *env, void *obj)
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

static int load(ErlNifEnv *env, void **priv, ERL_NIF_TERM info)
{
    (void)info;
    nif_priv *p = enif_alloc(sizeof *p);
    if (p == NULL)
        return 1;
    atomic_init(&p->live, 0);
    p->search_type = enif_open_resource_type(env, NULL, "mce_search",
                                             search_res_dtor,
                                             ERL_NIF_RT_CREATE, NULL);
    p->buchi_type = enif_open_resource_type(env, NULL, "mce_buchi",
                                            buchi_res_dtor,
                                            ERL_NIF_RT_CREATE, NULL);
    if (p->search_type == NULL || p->buchi_type == NULL) {
        enif_free(p);
        return 1;
    }
    *priv = p;
    return 0;
}

static void unload(ErlNifEnv *env, void *priv)
{
    (void)env;
    enif_free(priv);
}

static int upgrade(ErlNifEnv *env, void **priv, void **old, ERL_NIF_TERM info)
{
    (void)old;
    return load(env, priv, info);
}

/* live_searches() -> non_neg_integer(): searches whose memory is not yet
** freed (tests check that an interrupted check frees its search). */
static ERL_NIF_TERM nif_live_searches(ErlNifEnv *env, int argc,
                                      const ERL_NIF_TERM argv[])
{
    (void)argc;
    (void)argv;
    nif_priv *p = enif_priv_data(env);
    return enif_make_long(env, atomic_load(&p->live));
}

static int get_res(ErlNifEnv *env, ERL_NIF_TERM t, search_res **r)
{
    nif_priv *p = enif_priv_data(env);
    return enif_get_resource(env, t, p->search_type, (void **)r) &&
           (*r)->s != NULL;
}

static int map_u64(ErlNifEnv *env, ERL_NIF_TERM map, const char *key,
                   uint64_t *out)
{
    ERL_NIF_TERM v;
    ErlNifUInt64 u;
    if (!enif_get_map_value(env, map, atom(env, key), &v))
        return 0;
    if (!enif_get_uint64(env, v, &u))
        return -1;
    *out = u;
    return 1;
}

/* new(#{node := atom() | nodes := [atom()], creation := integer(),
**       max_states => N, max_depth => N, table_size => Slots,
**       check_deadlock => 0 | 1, timeouts_when_idle => 0 | 1,
**       delivery_ether => 0 | 1, max_crashes => N, max_disconnects => N,
**       max_kills => N, breadth_first => 0 | 1, observe => 0 | 1,
**       expand_only => 0 | 1, table_mode => 0 | 1 | 2 (exact,
**       hash_compact, bitstate: visited.h), bitstate_bits => N})
**   -> Resource
** A lossy table_mode with breadth_first or expand_only is a badarg. */
static ERL_NIF_TERM nif_new(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    if (!enif_is_map(env, argv[0]))
        return enif_make_badarg(env);
    ERL_NIF_TERM nodes, head;
    char (*namebuf)[256] = NULL;
    uint64_t creation = 0, max_states = 0, max_depth = 0, table_slots = 0;
    uint64_t check_deadlock = 1, when_idle = 0, ether = 0, bfs = 0, observe = 0, node_pair = 0;
    uint64_t judge_deaths = 0;
    uint64_t expand_only = 0, table_mode = VISITED_EXACT, bitstate_bits = 0;
    uint64_t crashes = 0, disconnects = 0, kills = 0;
    unsigned nnodes = 0;
    if (enif_get_map_value(env, argv[0], atom(env, "nodes"), &nodes)) {
        if (!enif_get_list_length(env, nodes, &nnodes) || nnodes == 0 ||
            nnodes > SEARCH_MAX_NODES)
            return enif_make_badarg(env);
    } else if (enif_get_map_value(env, argv[0], atom(env, "node"), &head)) {
        nnodes = 1;
        nodes = enif_make_list1(env, head);
    } else {
        return enif_make_badarg(env);
    }
    if (map_u64(env, argv[0], "creation", &creation) != 1 ||
        creation > UINT32_MAX ||
        map_u64(env, argv[0], "max_states", &max_states) < 0 ||
        map_u64(env, argv[0], "max_depth", &max_depth) < 0 ||
        map_u64(env, argv[0], "table_size", &table_slots) < 0 ||
        table_slots > ((uint64_t)1 << 40) ||
        map_u64(env, argv[0], "check_deadlock", &check_deadlock) < 0 ||
        check_deadlock > 1 ||
        map_u64(env, argv[0], "timeouts_when_idle", &when_idle) < 0 || when_idle > 1 ||
        map_u64(env, argv[0], "delivery_ether", &ether) < 0 || ether > 1 ||
        map_u64(env, argv[0], "node_pair", &node_pair) < 0 || node_pair > 1 ||
        map_u64(env, argv[0], "breadth_first", &bfs) < 0 || bfs > 1 ||
        map_u64(env, argv[0], "observe", &observe) < 0 || observe > 1 ||
        map_u64(env, argv[0], "judge_deaths", &judge_deaths) < 0 || judge_deaths > 1 ||
        map_u64(env, argv[0], "expand_only", &expand_only) < 0 || expand_only > 1 ||
        map_u64(env, argv[0], "table_mode", &table_mode) < 0 ||
        table_mode > VISITED_BITSTATE ||
        (table_mode != VISITED_EXACT && (bfs || expand_only)) ||
        map_u64(env, argv[0], "bitstate_bits", &bitstate_bits) < 0 ||
        bitstate_bits > VISITED_MAX_BITS ||
        map_u64(env, argv[0], "max_crashes", &crashes) < 0 || crashes > UINT32_MAX ||
        map_u64(env, argv[0], "max_disconnects", &disconnects) < 0 ||
        disconnects > UINT32_MAX ||
        map_u64(env, argv[0], "max_kills", &kills) < 0 || kills > UINT32_MAX)
        return enif_make_badarg(env);
    search_config cfg = { .creation = (uint32_t)creation,
                          .max_states = max_states, .max_depth = max_depth,
                          .check_deadlock = (int)check_deadlock,
                          .timeouts_when_idle = (int)when_idle,
                          .breadth_first = (int)bfs,
                          .observe = (int)observe,
                          .judge_deaths = (int)judge_deaths,
                          .expand_only = (int)expand_only,
                          .table_slots = (size_t)table_slots,
                          .table_mode = (int)table_mode,
                          .bitstate_bits = bitstate_bits,
                          .delivery_ether = (int)ether,
                          .node_pair = (int)node_pair,
                          .max_crashes = (uint32_t)crashes,
                          .max_disconnects = (uint32_t)disconnects,
                          .max_kills = (uint32_t)kills,
                          .nnodes = nnodes };
    namebuf = malloc(SEARCH_MAX_NODES * sizeof *namebuf);
    ErlNifBinary node_bins[SEARCH_MAX_NODES];
    unsigned nbins = 0;
    int bad = namebuf == NULL;
    ERL_NIF_TERM tail = nodes;
    for (unsigned i = 0; !bad && i < nnodes; i++) {
        if (!enif_get_list_cell(env, tail, &head, &tail) ||
            enif_get_atom(env, head, namebuf[i], 256, ERL_NIF_LATIN1) <= 0 ||
            !enif_term_to_binary(env, head, &node_bins[i])) {
            bad = 1;
            break;
        }
        nbins++;
        cfg.node_names[i] = namebuf[i];
        cfg.node_lens[i] = strlen(namebuf[i]);
        cfg.node_atom_etf[i] = node_bins[i].data;
        cfg.node_atom_etf_len[i] = node_bins[i].size;
    }
    if (bad) {
        for (unsigned i = 0; i < nbins; i++)
            enif_release_binary(&node_bins[i]);
        free(namebuf);
        return enif_make_badarg(env);
    }
    static const char *const atom_names[N_ATOMS] = SEARCH_ATOM_NAMES;
    ErlNifBinary atom_bins[N_ATOMS];
    int natoms = 0;
    for (; natoms < N_ATOMS; natoms++) {
        if (!enif_term_to_binary(env, atom(env, atom_names[natoms]),
                                 &atom_bins[natoms]))
            break;
        cfg.atom_etf[natoms] = atom_bins[natoms].data;
        cfg.atom_etf_len[natoms] = atom_bins[natoms].size;
    }
    nif_priv *p = enif_priv_data(env);
    search_res *r = natoms == N_ATOMS ? enif_alloc_resource(p->search_type, sizeof *r)
                                      : NULL;
    if (r != NULL) {
        r->priv = p;
        r->lock = enif_mutex_create("mce_search");
        r->s = r->lock ? search_new(&cfg) : NULL;
        if (r->s != NULL)
            atomic_fetch_add(&p->live, 1);
    }
    for (int a = 0; a < natoms; a++)
        enif_release_binary(&atom_bins[a]);
    for (unsigned i = 0; i < nbins; i++)
        enif_release_binary(&node_bins[i]);
    free(namebuf);
    if (r == NULL)
        return ERROR(env, "out of memory");
    ERL_NIF_TERM t = enif_make_resource(env, r);
    enif_release_resource(r);      /* the term now holds the only reference */
    if (r->s == NULL)
        return ERROR(env, "out of memory");
    return t;
}

static int part_term(ErlNifEnv *env, const part_store *ps, part_id id,
                     ERL_NIF_TERM *out)
{
    const part *p = part_store_get(ps, id);
    return p != NULL && p->kind == PART_TERM &&
           enif_binary_to_term(env, p->data, p->len, out, 0) == p->len;
}

static ERL_NIF_TERM agent_term(ErlNifEnv *env, const agent *a)
{
    switch (a->kind) {
    case AGENT_PROC:
        return enif_make_uint(env, a->a);
    case AGENT_CHAN:
        return enif_make_tuple4(env, atom(env, "chan"), enif_make_uint(env, a->a),
                                enif_make_uint(env, a->b), enif_make_uint(env, a->name));
    case AGENT_NONE:
        break;
    }
    return atom(env, "none");
}

/* {expanded, StateId, [{SuccId, Agent, Label, Stop}], Deadlock}
** Agent: a pid key, {chan, FromKey, ToKey, NameId} or none (a fault). */
static ERL_NIF_TERM expanded_term(ErlNifEnv *env, search *s)
{
    const expansion *e;
    int deadlock;
    size_t n = search_expansion(s, &e, &deadlock);
    ERL_NIF_TERM list = enif_make_list(env, 0);
    for (size_t i = n; i-- > 0;) {
        ERL_NIF_TERM label = atom(env, "none");
        if (e[i].label != NULL &&
            enif_binary_to_term(env, e[i].label, e[i].label_len, &label, 0) != e[i].label_len)
            return ERROR(env, "stored label does not decode");
        list = enif_make_list_cell(
            env,
            enif_make_tuple4(env, enif_make_uint(env, e[i].state), agent_term(env, &e[i].who),
                             label, atom(env, e[i].stop ? "true" : "false")),
            list);
    }
    return enif_make_tuple4(env, atom(env, "expanded"),
                            enif_make_uint(env, search_expanding(s)), list,
                            atom(env, deadlock ? "true" : "false"));
}

static ERL_NIF_TERM request_term(ErlNifEnv *env, search *s, const request *q)
{
    const part_store *ps = search_store(s);
    ERL_NIF_TERM cont, msg;
    switch (q->kind) {
    case REQ_MATCH:
        if (!part_term(env, ps, q->cont, &cont) ||
            !part_term(env, ps, q->msg, &msg))
            return ERROR(env, "stored term does not decode");
        return enif_make_tuple3(env, atom(env, "match"), cont, msg);
    case REQ_RUN: {
        ERL_NIF_TERM pid = enif_make_uint(env, q->pid), how;
        if (!part_term(env, ps, q->cont, &cont))
            return ERROR(env, "stored term does not decode");
        if (q->run == RUN_START) {
            how = atom(env, "start");
        } else if (q->run == RUN_TIMEOUT) {
            how = atom(env, "timeout");
        } else if (q->run == RUN_CHOICE) {
            how = enif_make_tuple2(env, atom(env, "choice"), enif_make_uint(env, q->choice));
        } else {
            if (!part_term(env, ps, q->msg, &msg))
                return ERROR(env, "stored term does not decode");
            how = enif_make_tuple2(env, atom(env, "receive"), msg);
        }
        ERL_NIF_TERM dict = enif_make_list(env, 0);
        if (q->dict != 0 && !part_term(env, ps, q->dict, &dict))
            return ERROR(env, "stored term does not decode");
        return enif_make_tuple6(env, atom(env, "run"), pid, how, cont, dict,
                                atom(env, (q->flags & PF_TRAP_EXIT) ? "true"
                                                                    : "false"));
    }
    case REQ_DONE: return atom(env, "done");
    case REQ_LIMIT_STATES: return atom(env, "max_states");
    case REQ_DEADLOCK: return atom(env, "deadlock");
    case REQ_STOPPED: return atom(env, "stopped");
    case REQ_OBSERVE: {
        ERL_NIF_TERM obs = atom(env, "none"), label = atom(env, "none");
        size_t len = 0;
        const uint8_t *lb = search_observed_label(s, &len);
        if ((q->observer != 0 && !part_term(env, ps, q->observer, &obs)) ||
            (lb != NULL && enif_binary_to_term(env, lb, len, &label, 0) != len))
            return ERROR(env, "stored term does not decode");
        return enif_make_tuple3(env, atom(env, "observe"), obs, label);
    }
    case REQ_EXPANDED: return expanded_term(env, s);
    case REQ_DEATHS: {
        const death *d;
        size_t n = search_deaths(s, &d);
        ERL_NIF_TERM list = enif_make_list(env, 0), reason;
        for (size_t i = n; i-- > 0;) {
            if (!part_term(env, ps, d[i].reason, &reason))
                return ERROR(env, "stored term does not decode");
            list = enif_make_list_cell(
                env, enif_make_tuple2(env, enif_make_uint(env, d[i].pid), reason), list);
        }
        return enif_make_tuple2(env, atom(env, "deaths"), list);
    }
    case REQ_YIELD: return atom(env, "yield");
    case REQ_ERROR: return ERROR(env, q->error ? q->error : "search failed");
    }
    return ERROR(env, "unknown request");
}

/* Tells the scheduler how much of a timeslice (about 1 ms) a call that
** drove the search used: NIF calls count few reductions, so without this
** the check worker ran tens of milliseconds of them in one slice. */
static void charge(ErlNifEnv *env, ErlNifTime t0)
{
    ErlNifTime us = enif_monotonic_time(ERL_NIF_USEC) - t0;
    enif_consume_timeslice(env, us >= 1000 ? 100 : (int)(us / 10) + 1);
}

/* Encodes a term for the store.  The binary must be released. */
static int encode(ErlNifEnv *env, ERL_NIF_TERM t, ErlNifBinary *bin,
                  term_in *out)
{
    if (!enif_term_to_binary(env, t, bin))
        return 0;
    out->etf = bin->data;
    out->len = bin->size;
    return 1;
}

/* start(Search, InitialCall, Pid) -> Request */
static ERL_NIF_TERM nif_start(ErlNifEnv *env, int argc,
                              const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    unsigned pid;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[2], &pid))
        return enif_make_badarg(env);
    ErlNifBinary bin;
    term_in init;
    if (!encode(env, argv[1], &bin, &init))
        return enif_make_badarg(env);
    ErlNifTime t0 = enif_monotonic_time(ERL_NIF_USEC);
    enif_mutex_lock(r->lock);
    request q;
    search_start(r->s, &init, pid, &q);
    ERL_NIF_TERM t = request_term(env, r->s, &q);
    enif_mutex_unlock(r->lock);
    charge(env, t0);
    enif_release_binary(&bin);
    return t;
}

/* expand(Search, StateId) -> Request: lists the successors of a state an
** earlier expansion returned (expand_only searches). */
static ERL_NIF_TERM nif_expand(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    unsigned id;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &id))
        return enif_make_badarg(env);
    ErlNifTime t0 = enif_monotonic_time(ERL_NIF_USEC);
    enif_mutex_lock(r->lock);
    request q;
    search_expand(r->s, id, &q);
    ERL_NIF_TERM t = request_term(env, r->s, &q);
    enif_mutex_unlock(r->lock);
    charge(env, t0);
    return t;
}

/* focus(Search, StateId) -> ok: top_state/1, ether/1 and the other peeks
** show that state (expand_only searches, between expansions). */
static ERL_NIF_TERM nif_focus(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    unsigned id;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &id))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    int rc = search_focus(r->s, id);
    enif_mutex_unlock(r->lock);
    return rc == 0 ? atom(env, "ok") : enif_make_badarg(env);
}

/* resume(Search) -> Request: goes on after a `yield'. */
static ERL_NIF_TERM nif_resume(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    if (!get_res(env, argv[0], &r))
        return enif_make_badarg(env);
    ErlNifTime t0 = enif_monotonic_time(ERL_NIF_USEC);
    enif_mutex_lock(r->lock);
    request q;
    search_resume(r->s, &q);
    ERL_NIF_TERM t = request_term(env, r->s, &q);
    enif_mutex_unlock(r->lock);
    charge(env, t0);
    return t;
}

/* match(Search, boolean()) -> Request */
static ERL_NIF_TERM nif_match(ErlNifEnv *env, int argc,
                              const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    int matches;
    if (!get_res(env, argv[0], &r))
        return enif_make_badarg(env);
    if (enif_is_identical(argv[1], atom(env, "true")))
        matches = 1;
    else if (enif_is_identical(argv[1], atom(env, "false")))
        matches = 0;
    else
        return enif_make_badarg(env);
    ErlNifTime t0 = enif_monotonic_time(ERL_NIF_USEC);
    enif_mutex_lock(r->lock);
    request q;
    search_answer_match(r->s, matches, &q);
    ERL_NIF_TERM t = request_term(env, r->s, &q);
    enif_mutex_unlock(r->lock);
    charge(env, t0);
    return t;
}

/* observed(Search, ok, MonitorsState) | observed(Search, skip | violation, _)
**   -> Request: the verdict on the successor of a REQ_OBSERVE. */
static ERL_NIF_TERM nif_observed(ErlNifEnv *env, int argc,
                                 const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    int verdict;
    if (!get_res(env, argv[0], &r))
        return enif_make_badarg(env);
    if (enif_is_identical(argv[1], atom(env, "ok")))
        verdict = OBSERVE_OK;
    else if (enif_is_identical(argv[1], atom(env, "skip")))
        verdict = OBSERVE_SKIP;
    else if (enif_is_identical(argv[1], atom(env, "violation")))
        verdict = OBSERVE_VIOLATION;
    else
        return enif_make_badarg(env);
    ErlNifBinary bin;
    term_in obs = { NULL, 0 };
    if (verdict == OBSERVE_OK && !encode(env, argv[2], &bin, &obs))
        return enif_make_badarg(env);
    ErlNifTime t0 = enif_monotonic_time(ERL_NIF_USEC);
    enif_mutex_lock(r->lock);
    request q;
    search_answer_observe(r->s, verdict, verdict == OBSERVE_OK ? &obs : NULL, &q);
    ERL_NIF_TERM t = request_term(env, r->s, &q);
    enif_mutex_unlock(r->lock);
    charge(env, t0);
    if (verdict == OBSERVE_OK)
        enif_release_binary(&bin);
    return t;
}

static int get_bool(ErlNifEnv *env, ERL_NIF_TERM t, int *out)
{
    if (enif_is_identical(t, atom(env, "true")))
        *out = 1;
    else if (enif_is_identical(t, atom(env, "false")))
        *out = 0;
    else
        return 0;
    return 1;
}

/* deaths_judged(Search, boolean()) -> Request: whether one of the deaths
** of a REQ_DEATHS is a violation. */
static ERL_NIF_TERM nif_deaths_judged(ErlNifEnv *env, int argc,
                                      const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    int violation;
    if (!get_res(env, argv[0], &r) || !get_bool(env, argv[1], &violation))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    request q;
    search_answer_deaths(r->s, violation, &q);
    ERL_NIF_TERM t = request_term(env, r->s, &q);
    enif_mutex_unlock(r->lock);
    return t;
}

/* Everything the effects list owns while it is being converted. */
typedef struct effects_buf {
    effect *effects;
    ErlNifBinary *bins, *bins2, *bins3;
    size_t n;
} effects_buf;

static void effects_release(effects_buf *eb)
{
    for (size_t i = 0; i < eb->n; i++) {
        enif_release_binary(&eb->bins[i]);
        if (eb->effects[i].term2.etf != NULL)
            enif_release_binary(&eb->bins2[i]);
        if (eb->effects[i].term3.etf != NULL)
            enif_release_binary(&eb->bins3[i]);
    }
    free(eb->effects);
    free(eb->bins);
    free(eb->bins2);
    free(eb->bins3);
}

static int parse_effects(ErlNifEnv *env, ERL_NIF_TERM list, effects_buf *eb)
{
    unsigned len;
    eb->effects = NULL;
    eb->bins = eb->bins2 = eb->bins3 = NULL;
    eb->n = 0;
    if (!enif_get_list_length(env, list, &len))
        return 0;
    eb->effects = calloc(len ? len : 1, sizeof *eb->effects);
    eb->bins = calloc(len ? len : 1, sizeof *eb->bins);
    eb->bins2 = calloc(len ? len : 1, sizeof *eb->bins2);
    eb->bins3 = calloc(len ? len : 1, sizeof *eb->bins3);
    if (eb->effects == NULL || eb->bins == NULL || eb->bins2 == NULL || eb->bins3 == NULL)
        return 0;
    ERL_NIF_TERM head, tail = list;
    while (enif_get_list_cell(env, tail, &head, &tail)) {
        const ERL_NIF_TERM *el;
        int arity;
        unsigned pid = 0;
        effect *ef = &eb->effects[eb->n];
        ERL_NIF_TERM term = 0, term2 = 0, term3 = 0;
        int has_term = 1, has_term2 = 0, has_term3 = 0;
        if (!enif_get_tuple(env, head, &arity, &el) || arity < 2)
            return 0;
        if (arity == 3 && enif_is_identical(el[0], atom(env, "send")) &&
            enif_get_uint(env, el[1], &pid)) {
            ef->kind = EFFECT_SEND;
            term = el[2];
        } else if (arity == 4 && enif_is_identical(el[0], atom(env, "spawn")) &&
                   enif_get_uint(env, el[1], &pid) &&
                   get_bool(env, el[3], &ef->link)) {
            ef->kind = EFFECT_SPAWN;
            term = el[2];
        } else if (arity == 3 && enif_is_identical(el[0], atom(env, "exit")) &&
                   enif_get_uint(env, el[1], &pid)) {
            ef->kind = EFFECT_EXIT;
            term = el[2];
        } else if (arity == 3 && enif_is_identical(el[0], atom(env, "register")) &&
                   enif_get_uint(env, el[1], &pid) && enif_is_atom(env, el[2])) {
            ef->kind = EFFECT_REGISTER;
            term = el[2];
        } else if (arity == 2 && enif_is_identical(el[0], atom(env, "unregister")) &&
                   enif_is_atom(env, el[1])) {
            ef->kind = EFFECT_UNREGISTER;
            term = el[1];
        } else if (arity == 2 && enif_is_identical(el[0], atom(env, "link")) &&
                   enif_get_uint(env, el[1], &pid)) {
            ef->kind = EFFECT_LINK;
            has_term = 0;
        } else if (arity == 2 && enif_is_identical(el[0], atom(env, "unlink")) &&
                   enif_get_uint(env, el[1], &pid)) {
            ef->kind = EFFECT_UNLINK;
            has_term = 0;
        } else if (arity == 2 && enif_is_identical(el[0], atom(env, "trap_exit")) &&
                   get_bool(env, el[1], &ef->link)) {
            ef->kind = EFFECT_TRAP_EXIT;
            has_term = 0;
        } else if (((arity == 4 || arity == 5) && enif_is_identical(el[0], atom(env, "monitor"))) ||
                   (arity == 4 && enif_is_identical(el[0], atom(env, "spawn_monitor")))) {
            if (!enif_get_uint(env, el[1], &pid) || !enif_get_uint(env, el[2], &ef->ref))
                return 0;
            ef->kind = EFFECT_MONITOR;
            ef->link = enif_is_identical(el[0], atom(env, "spawn_monitor"));
            term = el[3];
            has_term = !enif_is_identical(el[3], atom(env, "none"));
            if (arity == 5) {
                if (!enif_is_atom(env, el[4]))
                    return 0;
                term2 = el[4];
                has_term2 = 1;
            }
        } else if (arity == 4 && enif_is_identical(el[0], atom(env, "send_name")) &&
                   enif_get_uint(env, el[1], &pid) && enif_is_atom(env, el[2])) {
            ef->kind = EFFECT_SEND_NAME;
            term = el[3];
            term2 = el[2];
            has_term2 = 1;
        } else if (arity == 3 && enif_is_identical(el[0], atom(env, "alias")) &&
                   enif_get_uint(env, el[1], &ef->ref) && enif_get_int(env, el[2], &ef->link)) {
            ef->kind = EFFECT_ALIAS;
            has_term = 0;
        } else if (arity == 2 && enif_is_identical(el[0], atom(env, "unalias")) &&
                   enif_get_uint(env, el[1], &ef->ref)) {
            ef->kind = EFFECT_UNALIAS;
            has_term = 0;
        } else if (arity == 3 && enif_is_identical(el[0], atom(env, "send_alias")) &&
                   enif_get_uint(env, el[1], &ef->ref)) {
            ef->kind = EFFECT_SEND_ALIAS;
            term = el[2];
        } else if (arity == 6 && enif_is_identical(el[0], atom(env, "timer")) &&
                   enif_get_uint(env, el[1], &ef->ref) && enif_get_uint(env, el[2], &pid) &&
                   enif_is_atom(env, el[3]) && enif_get_int(env, el[5], &ef->link) &&
                   ef->link >= 0) {
            ef->kind = EFFECT_TIMER;
            term = el[4];
            if (!enif_is_identical(el[3], atom(env, "none"))) {
                term2 = el[3];
                has_term2 = 1;
            }
        } else if (arity == 2 && enif_is_identical(el[0], atom(env, "cancel_timer")) &&
                   enif_get_uint(env, el[1], &ef->ref)) {
            ef->kind = EFFECT_CANCEL_TIMER;
            has_term = 0;
        } else if (arity == 7 && enif_is_identical(el[0], atom(env, "ets_put")) &&
                   enif_get_uint(env, el[1], &ef->ref) && enif_get_uint(env, el[2], &pid) &&
                   enif_get_int(env, el[3], &ef->link) && ef->link >= 0 &&
                   enif_is_atom(env, el[4])) {
            ef->kind = EFFECT_ETS_PUT;
            term = el[5];
            if (!enif_is_identical(el[4], atom(env, "none"))) {
                term2 = el[4];
                has_term2 = 1;
            }
            term3 = el[6];
            has_term3 = 1;
        } else if (arity == 2 && enif_is_identical(el[0], atom(env, "app_env"))) {
            ef->kind = EFFECT_APP_ENV;
            term = el[1];
        } else if (arity == 2 && enif_is_identical(el[0], atom(env, "ets_delete")) &&
                   enif_get_uint(env, el[1], &ef->ref)) {
            ef->kind = EFFECT_ETS_DELETE;
            has_term = 0;
        } else if (arity == 2 && enif_is_identical(el[0], atom(env, "keep_message")) &&
                   enif_is_identical(el[1], atom(env, "true"))) {
            ef->kind = EFFECT_KEEP_MESSAGE;
            has_term = 0;
        } else if (arity == 2 && enif_is_identical(el[0], atom(env, "halt"))) {
            /* el[1], the status, is for the trace only. */
            ef->kind = EFFECT_HALT;
            has_term = 0;
        } else if (arity == 4 && enif_is_identical(el[0], atom(env, "group_leader")) &&
                   enif_get_uint(env, el[1], &pid) && enif_get_uint(env, el[2], &ef->ref)) {
            /* el[3], the leader's own key, is for the trace only. */
            ef->kind = EFFECT_GROUP_LEADER;
            has_term = 0;
        } else if (arity == 2 && enif_is_identical(el[0], atom(env, "unique")) &&
                   enif_get_uint(env, el[1], &ef->ref)) {
            ef->kind = EFFECT_UNIQUE;
            has_term = 0;
        } else if (arity == 3 && enif_is_identical(el[0], atom(env, "monitor_node")) &&
                   enif_get_uint(env, el[1], &pid) && get_bool(env, el[2], &ef->link)) {
            ef->kind = EFFECT_MONITOR_NODE;
            has_term = 0;
        } else if (arity == 3 && enif_is_identical(el[0], atom(env, "demonitor")) &&
                   enif_get_uint(env, el[1], &ef->ref) && get_bool(env, el[2], &ef->link)) {
            ef->kind = EFFECT_DEMONITOR;
            has_term = 0;
        } else {
            return 0;
        }
        ef->pid = pid;
        if (has_term) {
            if (!encode(env, term, &eb->bins[eb->n], &ef->term))
                return 0;
        } else {
            /* An empty binary keeps effects_release uniform. */
            if (!enif_alloc_binary(0, &eb->bins[eb->n]))
                return 0;
            ef->term.etf = NULL;
            ef->term.len = 0;
        }
        eb->n++;
        if (has_term2 && !encode(env, term2, &eb->bins2[eb->n - 1], &ef->term2))
            return 0;
        if (has_term3 && !encode(env, term3, &eb->bins3[eb->n - 1], &ef->term3))
            return 0;
    }
    return 1;
}

/* ran(Search, Outcome, Effects, Label, Stop) -> Request
**   Outcome = {wait, HasTimeout, Cont, Dict} | {choice, N, Cont, Dict}
**           | {exit, Reason} */
static ERL_NIF_TERM nif_ran(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    const ERL_NIF_TERM *oc;
    int arity;
    run_result res;
    memset(&res, 0, sizeof res);
    if (!get_res(env, argv[0], &r) ||
        !enif_get_tuple(env, argv[1], &arity, &oc) ||
        !get_bool(env, argv[4], &res.stop))
        return enif_make_badarg(env);
    ErlNifBinary contbin, dictbin, labelbin;
    int have_cont = 0, have_dict = 0;
    unsigned alternatives = 0;
    /* {wait, Timeout, Cont, Dict}: Timeout false (after infinity or none),
    ** true (a finite after), zero (after 0), or the finite after's time. */
    unsigned timeout_ms = 0;
    int is_wait = arity == 4 && enif_is_identical(oc[0], atom(env, "wait")) &&
                  (get_bool(env, oc[1], &res.has_timeout) ||
                   (enif_is_identical(oc[1], atom(env, "zero")) && (res.has_timeout = 2)) ||
                   (enif_get_uint(env, oc[1], &timeout_ms) && timeout_ms > 0 &&
                    (res.has_timeout = 1)));
    res.timeout_ms = timeout_ms > PF_TIMEOUT_MAX ? PF_TIMEOUT_MAX : timeout_ms;
    int is_choice = arity == 4 && enif_is_identical(oc[0], atom(env, "choice")) &&
                    enif_get_uint(env, oc[1], &alternatives);
    if ((is_wait || is_choice) && enif_is_list(env, oc[3])) {
        res.outcome = is_wait ? OUTCOME_WAIT : OUTCOME_CHOICE;
        res.alternatives = alternatives;
        if (!encode(env, oc[2], &contbin, &res.cont))
            return enif_make_badarg(env);
        have_cont = 1;
        if (!enif_is_empty_list(env, oc[3])) {
            if (!encode(env, oc[3], &dictbin, &res.dict)) {
                enif_release_binary(&contbin);
                return enif_make_badarg(env);
            }
            have_dict = 1;
        }
    } else if (arity == 2 && enif_is_identical(oc[0], atom(env, "exit"))) {
        res.outcome = OUTCOME_EXIT;
        res.normal = enif_is_identical(oc[1], atom(env, "normal"));
        if (!encode(env, oc[1], &contbin, &res.reason))
            return enif_make_badarg(env);
        have_cont = 1;
    } else {
        return enif_make_badarg(env);
    }
    effects_buf eb;
    int ok = parse_effects(env, argv[2], &eb) &&
             enif_term_to_binary(env, argv[3], &labelbin);
    if (ok) {
        res.label = malloc(labelbin.size ? labelbin.size : 1);
        if (res.label != NULL) {
            memcpy(res.label, labelbin.data, labelbin.size);
            res.label_len = labelbin.size;
        }
        enif_release_binary(&labelbin);
        ok = res.label != NULL;
    }
    ERL_NIF_TERM t;
    if (!ok) {
        free(res.label);
        t = enif_make_badarg(env);
    } else {
        res.effects = eb.effects;
        res.neffects = eb.n;
        ErlNifTime t0 = enif_monotonic_time(ERL_NIF_USEC);
        enif_mutex_lock(r->lock);
        request q;
        search_answer_run(r->s, &res, &q);
        t = request_term(env, r->s, &q);
        enif_mutex_unlock(r->lock);
        charge(env, t0);
    }
    effects_release(&eb);
    if (have_cont)
        enif_release_binary(&contbin);
    if (have_dict)
        enif_release_binary(&dictbin);
    return t;
}

/* fresh_ref(Search, Node) -> pos_integer() */
static ERL_NIF_TERM nif_fresh_ref(ErlNifEnv *env, int argc,
                                  const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    unsigned node;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &node))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    uint32_t ref = search_fresh_ref(r->s, node);
    enif_mutex_unlock(r->lock);
    if (ref == 0)
        return ERROR(env, "no run is outstanding, or out of memory");
    return enif_make_uint(env, ref);
}

/* monitor_active(Search, Pid, Ref) -> boolean() */
static ERL_NIF_TERM nif_monitor_active(ErlNifEnv *env, int argc,
                                       const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    unsigned pid, ref;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &pid) ||
        !enif_get_uint(env, argv[2], &ref))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    int active = search_peek_monitor(r->s, pid, ref);
    enif_mutex_unlock(r->lock);
    return atom(env, active ? "true" : "false");
}

/* alias_active(Search, Pid, Ref) -> boolean() */
static ERL_NIF_TERM nif_alias_active(ErlNifEnv *env, int argc,
                                     const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    unsigned pid, ref;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &pid) ||
        !enif_get_uint(env, argv[2], &ref))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    int active = search_peek_alias(r->s, pid, ref);
    enif_mutex_unlock(r->lock);
    return atom(env, active ? "true" : "false");
}

/* timer(Search, Ref) -> Time | false */
static ERL_NIF_TERM nif_timer(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    unsigned ref;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &ref))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    int64_t t = search_peek_timer(r->s, ref);
    enif_mutex_unlock(r->lock);
    return t < 0 ? atom(env, "false") : enif_make_int64(env, t);
}

static ERL_NIF_TERM monitor_list(ErlNifEnv *env, const part_store *ps,
                                 const monitor_set *ms, int *ok)
{
    ERL_NIF_TERM list = enif_make_list(env, 0);
    for (uint32_t k = ms->n; k-- > 0;) {
        ERL_NIF_TERM item = atom(env, "none");
        if (ms->m[k].item != 0 && !part_term(env, ps, ms->m[k].item, &item))
            *ok = 0;
        list = enif_make_list_cell(env,
                                   enif_make_tuple3(env, enif_make_uint(env, ms->m[k].ref),
                                                    enif_make_uint(env, ms->m[k].pid), item),
                                   list);
    }
    return list;
}

/* process(Search, Pid) -> undefined
**   | {Status, [Msg], [LinkedPid], Monitors, MonitoredBy, Name, TrapExit, Dict}
** in the state being expanded; Monitors and MonitoredBy are [{Ref, Pid, Item}]. */
static ERL_NIF_TERM nif_process(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    unsigned pid;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &pid))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    uint32_t skip;
    const proc *p = search_peek_proc(r->s, pid, &skip);
    const part_store *ps = search_store(r->s);
    ERL_NIF_TERM t = atom(env, "undefined");
    if (p != NULL) {
        int ok = 1;
        ERL_NIF_TERM msgs = enif_make_list(env, 0), links = enif_make_list(env, 0);
        for (uint32_t k = mailbox_length(ps, p->mailbox); k-- > 0;) {
            ERL_NIF_TERM m;
            if (k == skip)
                continue;
            if (!part_term(env, ps, mailbox_at(ps, p->mailbox, k), &m))
                ok = 0;
            else
                msgs = enif_make_list_cell(env, m, msgs);
        }
        for (uint32_t k = p->nlinks; k-- > 0;)
            links = enif_make_list_cell(env, enif_make_uint(env, p->links[k]), links);
        ERL_NIF_TERM name = atom(env, "undefined"), dict = enif_make_list(env, 0);
        if (p->name != 0 && !part_term(env, ps, p->name, &name))
            ok = 0;
        if (p->dict != 0 && !part_term(env, ps, p->dict, &dict))
            ok = 0;
        ERL_NIF_TERM parts[8] = {
            atom(env, p->status == PROC_INIT ? "init" : "waiting"), msgs, links,
            monitor_list(env, ps, &p->mons, &ok), monitor_list(env, ps, &p->monby, &ok),
            name, atom(env, (p->flags & PF_TRAP_EXIT) ? "true" : "false"), dict };
        t = ok ? enif_make_tuple_from_array(env, parts, 8)
               : ERROR(env, "stored term does not decode");
    }
    enif_mutex_unlock(r->lock);
    return t;
}

/* ets_table(Search, Tid) -> undefined | {Owner, Heir, HeirData, Name, Data}
** (Heir 0: none; HeirData and Name: none when absent) */
static ERL_NIF_TERM nif_ets_table(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    unsigned tid;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &tid))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    const ets_table *t = search_peek_table(r->s, tid);
    const part_store *ps = search_store(r->s);
    ERL_NIF_TERM res = atom(env, "undefined");
    if (t != NULL) {
        ERL_NIF_TERM hd = atom(env, "none"), name = atom(env, "none"), data;
        if ((t->heir_data != 0 && !part_term(env, ps, t->heir_data, &hd)) ||
            (t->name != 0 && !part_term(env, ps, t->name, &name)) ||
            !part_term(env, ps, t->data, &data))
            res = ERROR(env, "stored term does not decode");
        else
            res = enif_make_tuple5(env, enif_make_uint(env, t->owner),
                                   enif_make_uint(env, t->heir), hd, name, data);
    }
    enif_mutex_unlock(r->lock);
    return res;
}

/* ets_named(Search, Node, Name) -> Tid | undefined */
static ERL_NIF_TERM nif_ets_named(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    unsigned node;
    ErlNifBinary bin;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &node) ||
        !enif_is_atom(env, argv[2]) || !enif_term_to_binary(env, argv[2], &bin))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    uint32_t tid = search_peek_table_named(r->s, node, bin.data, bin.size);
    enif_mutex_unlock(r->lock);
    enif_release_binary(&bin);
    return tid ? enif_make_uint(env, tid) : atom(env, "undefined");
}

/* A list of the keys a peek call gives for (Search, Node), in its order:
** the call is asked for the count first, then for the keys. */
typedef size_t (*key_peek)(search *s, uint32_t node, uint32_t *out, size_t max);

static ERL_NIF_TERM peek_key_list(ErlNifEnv *env, const ERL_NIF_TERM argv[], key_peek peek)
{
    search_res *r;
    unsigned node;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &node))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    size_t n = peek(r->s, node, NULL, 0);
    uint32_t *keys = malloc((n ? n : 1) * sizeof *keys);
    ERL_NIF_TERM list = enif_make_list(env, 0);
    if (keys != NULL) {
        n = peek(r->s, node, keys, n);
        for (size_t i = n; i-- > 0;)
            list = enif_make_list_cell(env, enif_make_uint(env, keys[i]), list);
        free(keys);
    }
    enif_mutex_unlock(r->lock);
    return keys ? list : ERROR(env, "out of memory");
}

/* ets_tables(Search, Node) -> [Tid] */
static ERL_NIF_TERM nif_ets_tables(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    return peek_key_list(env, argv, search_peek_tables);
}

/* app_env(Search) -> Term | undefined */
static ERL_NIF_TERM nif_app_env(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    if (!get_res(env, argv[0], &r))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    part_id id = search_peek_app_env(r->s);
    ERL_NIF_TERM t = atom(env, "undefined");
    if (id != 0 && !part_term(env, search_store(r->s), id, &t))
        t = ERROR(env, "stored term does not decode");
    enif_mutex_unlock(r->lock);
    return t;
}

/* unique(Search) -> non_neg_integer(), the last unique integer given */
static ERL_NIF_TERM nif_unique(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    if (!get_res(env, argv[0], &r))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    uint32_t u = search_peek_unique(r->s);
    enif_mutex_unlock(r->lock);
    return enif_make_uint(env, u);
}

/* fresh_pid(Search, Node) -> pos_integer() */
static ERL_NIF_TERM nif_fresh_pid(ErlNifEnv *env, int argc,
                                  const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    unsigned node;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &node))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    uint32_t pid = search_fresh_pid(r->s, node);
    enif_mutex_unlock(r->lock);
    if (pid == 0)
        return ERROR(env, "no run is outstanding, or out of memory");
    return enif_make_uint(env, pid);
}

static ERL_NIF_TERM nif_stats(ErlNifEnv *env, int argc,
                              const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    if (!get_res(env, argv[0], &r))
        return enif_make_badarg(env);
    search_stats st;
    enif_mutex_lock(r->lock);
    search_get_stats(r->s, &st);
    enif_mutex_unlock(r->lock);
    ERL_NIF_TERM keys[] = {
        atom(env, "states"), atom(env, "transitions"), atom(env, "max_depth"),
        atom(env, "stack_depth"), atom(env, "parts"), atom(env, "memory"),
        atom(env, "match_memo"), atom(env, "truncated"),
        atom(env, "memory_used"), atom(env, "table"), atom(env, "table_bytes"),
        atom(env, "omission_probability"), atom(env, "states_lost_estimate"),
        atom(env, "coverage_estimate") };
    ERL_NIF_TERM vals[] = {
        enif_make_uint64(env, st.states), enif_make_uint64(env, st.transitions),
        enif_make_uint64(env, st.max_depth_seen),
        enif_make_uint64(env, st.depth), enif_make_uint64(env, st.parts),
        enif_make_uint64(env, st.bytes), enif_make_uint64(env, st.memo_entries),
        atom(env, st.truncated ? "true" : "false"),
        enif_make_uint64(env, st.used_bytes),
        atom(env, st.table_mode == VISITED_HASH_COMPACT ? "hash_compact"
                  : st.table_mode == VISITED_BITSTATE ? "bitstate" : "exact"),
        enif_make_uint64(env, st.table_bytes),
        enif_make_double(env, st.omission_probability),
        enif_make_double(env, st.lost_estimate),
        enif_make_double(env, st.coverage_estimate) };
    /* The estimates only for the lossy tables (they are last). */
    size_t nkeys = sizeof keys / sizeof *keys -
                   (st.table_mode == VISITED_EXACT ? 3 : 0);
    ERL_NIF_TERM map;
    if (!enif_make_map_from_arrays(env, keys, vals, nkeys, &map))
        return ERROR(env, "stats map");
    return map;
}

/* trace(Search) -> [Label], the transitions from the initial state to the
** state on top of the stack. */
static ERL_NIF_TERM nif_trace(ErlNifEnv *env, int argc,
                              const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    if (!get_res(env, argv[0], &r))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    size_t depth = search_stack_depth(r->s);
    ERL_NIF_TERM list = enif_make_list(env, 0);
    for (size_t i = depth; i-- > 1;) {
        const uint8_t *label;
        size_t len;
        ERL_NIF_TERM t;
        if (search_label(r->s, i, &label, &len) != 0 ||
            enif_binary_to_term(env, label, len, &t, 0) != len) {
            enif_mutex_unlock(r->lock);
            return ERROR(env, "stored label does not decode");
        }
        list = enif_make_list_cell(env, t, list);
    }
    enif_mutex_unlock(r->lock);
    return list;
}

/* top_state(Search) -> [{Pid, init | waiting, Cont, [Msg], [LinkedPid], Name}]
** Name is the registered name or undefined. */
static ERL_NIF_TERM nif_top_state(ErlNifEnv *env, int argc,
                                  const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    if (!get_res(env, argv[0], &r))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    const sys_state *st = search_top_state(r->s);
    const part_store *ps = search_store(r->s);
    ERL_NIF_TERM list = enif_make_list(env, 0);
    for (uint32_t i = st ? st->nprocs : 0; i-- > 0;) {
        const proc *p = &st->procs[i];
        ERL_NIF_TERM cont, msgs = enif_make_list(env, 0);
        ERL_NIF_TERM links = enif_make_list(env, 0);
        if (!part_term(env, ps, p->cont, &cont))
            goto bad;
        for (uint32_t k = mailbox_length(ps, p->mailbox); k-- > 0;) {
            ERL_NIF_TERM m;
            if (!part_term(env, ps, mailbox_at(ps, p->mailbox, k), &m))
                goto bad;
            msgs = enif_make_list_cell(env, m, msgs);
        }
        for (uint32_t k = p->nlinks; k-- > 0;)
            links = enif_make_list_cell(env, enif_make_uint(env, p->links[k]),
                                        links);
        ERL_NIF_TERM name = atom(env, "undefined");
        if (p->name != 0 && !part_term(env, ps, p->name, &name))
            goto bad;
        list = enif_make_list_cell(
            env,
            enif_make_tuple6(env, enif_make_uint(env, p->pid),
                             atom(env, p->status == PROC_INIT ? "init"
                                       : p->status == PROC_CHOICE ? "choosing"
                                                                  : "waiting"),
                             cont, msgs, links, name),
            list);
    }
    enif_mutex_unlock(r->lock);
    return list;
bad:
    enif_mutex_unlock(r->lock);
    return ERROR(env, "stored term does not decode");
}

/* alive(Search, Pid) -> boolean(), in the state being expanded */
static ERL_NIF_TERM nif_alive(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    unsigned pid;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &pid))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    int alive = search_peek_alive(r->s, pid);
    enif_mutex_unlock(r->lock);
    return atom(env, alive ? "true" : "false");
}

/* group_leader(Search, Pid) -> GL | undefined, in the state being expanded:
** GL as stored (sys_state.h, 0: the default).  io calls read it, so it
** does not decode the record's terms as process/2 does. */
static ERL_NIF_TERM nif_group_leader(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    unsigned pid;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &pid))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    uint32_t skip;
    const proc *p = search_peek_proc(r->s, pid, &skip);
    ERL_NIF_TERM t = p != NULL ? enif_make_uint(env, p->gl) : atom(env, "undefined");
    enif_mutex_unlock(r->lock);
    return t;
}

/* whereis(Search, Node, Name) -> Pid | undefined */
static ERL_NIF_TERM nif_whereis(ErlNifEnv *env, int argc,
                                const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    ErlNifBinary bin;
    unsigned node;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &node) ||
        !enif_is_atom(env, argv[2]) || !enif_term_to_binary(env, argv[2], &bin))
        return enif_make_badarg(env);
    uint32_t pid = 0;
    enif_mutex_lock(r->lock);
    int found = search_peek_whereis(r->s, node, bin.data, bin.size, &pid);
    enif_mutex_unlock(r->lock);
    enif_release_binary(&bin);
    return found ? enif_make_uint(env, pid) : atom(env, "undefined");
}

/* node_status(Search, FromNode, Node) -> up | down | disconnected */
static ERL_NIF_TERM nif_node_status(ErlNifEnv *env, int argc,
                                    const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    unsigned a, b;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &a) ||
        !enif_get_uint(env, argv[2], &b))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    int status = search_peek_node(r->s, a, b);
    enif_mutex_unlock(r->lock);
    return atom(env, status == 0 ? "up" : status == 1 ? "down" : "disconnected");
}

/* ether(Search) -> [{From, To, Name | undefined, [Signal]}] for the state on
** top of the stack; Signal = {message, M} | {exit, R} | {link_exit, R} | link
** | unlink | {monitor, RefNum} | {demonitor, RefNum} | {down, RefNum, R}. */
/* A signal in the ether as ether/1 shows it; 0 if it does not decode. */
static int signal_term(ErlNifEnv *env, const part_store *ps, part_id id, ERL_NIF_TERM *out)
{
    uint32_t sig[4];
    ERL_NIF_TERM a;
    if (signal_get(ps, id, sig) != 0)
        return 0;
    switch (sig[0]) {
    case SIG_MSG:
        if (!part_term(env, ps, sig[1], &a))
            return 0;
        *out = enif_make_tuple2(env, atom(env, "message"), a);
        return 1;
    case SIG_EXIT:
        if (!part_term(env, ps, sig[1], &a))
            return 0;
        *out = enif_make_tuple2(env, atom(env, (sig[2] & SIGF_LINK) ? "link_exit" : "exit"), a);
        return 1;
    case SIG_LINK: *out = atom(env, "link"); return 1;
    case SIG_UNLINK: *out = atom(env, "unlink"); return 1;
    case SIG_MONITOR:
        *out = enif_make_tuple2(env, atom(env, "monitor"), enif_make_uint(env, sig[1]));
        return 1;
    case SIG_DEMONITOR:
        *out = enif_make_tuple2(env, atom(env, "demonitor"), enif_make_uint(env, sig[1]));
        return 1;
    case SIG_DOWN:
        if (!part_term(env, ps, sig[3], &a))
            return 0;
        *out = enif_make_tuple3(env, atom(env, "down"), enif_make_uint(env, sig[1]), a);
        return 1;
    default:
        return 0;
    }
}

static int name_term(ErlNifEnv *env, const part_store *ps, part_id name, ERL_NIF_TERM *out)
{
    *out = atom(env, "undefined");
    return name == 0 || part_term(env, ps, name, out);
}

/* ether(Search) -> [{From, To, Name, [Signal]}], oldest signal first.  A
** node-pair channel shows as one entry per signal, in send order, naming
** the processes it travels between. */
static ERL_NIF_TERM nif_ether(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    if (!get_res(env, argv[0], &r))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    const sys_state *st = search_top_state(r->s);
    const part_store *ps = search_store(r->s);
    ERL_NIF_TERM list = enif_make_list(env, 0);
    for (uint32_t i = st ? st->nchans : 0; i-- > 0;) {
        const channel *c = &st->chans[i];
        ERL_NIF_TERM sigs = enif_make_list(env, 0), name, t;
        int node_chan = KEY_NUM(c->from) == KEY_NODE_CHAN && !(c->from & KEY_TIMER);
        for (uint32_t k = mailbox_length(ps, c->queue); k-- > 0;) {
            part_id id = mailbox_at(ps, c->queue, k);
            uint32_t env4[4];
            if (node_chan) {
                if (envelope_get(ps, id, env4) != 0 || !signal_term(env, ps, env4[3], &t) ||
                    !name_term(env, ps, env4[2], &name))
                    goto bad;
                list = enif_make_list_cell(
                    env, enif_make_tuple4(env, enif_make_uint(env, env4[0]),
                                          enif_make_uint(env, env4[1]), name,
                                          enif_make_list1(env, t)),
                    list);
                continue;
            }
            if (!signal_term(env, ps, id, &t))
                goto bad;
            sigs = enif_make_list_cell(env, t, sigs);
        }
        if (node_chan)
            continue;
        if (!name_term(env, ps, c->name, &name))
            goto bad;
        list = enif_make_list_cell(env,
                                   enif_make_tuple4(env, enif_make_uint(env, c->from),
                                                    enif_make_uint(env, c->to), name, sigs),
                                   list);
    }
    enif_mutex_unlock(r->lock);
    return list;
bad:
    enif_mutex_unlock(r->lock);
    return ERROR(env, "stored ether does not decode");
}

/* registered(Search, Node) -> [Name] */
static ERL_NIF_TERM nif_registered(ErlNifEnv *env, int argc,
                                   const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    unsigned node;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &node))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    size_t n = search_peek_names(r->s, node, NULL, 0);
    part_id *ids = malloc((n ? n : 1) * sizeof *ids);
    ERL_NIF_TERM list = enif_make_list(env, 0);
    if (ids != NULL) {
        n = search_peek_names(r->s, node, ids, n);
        for (size_t i = n; i-- > 0;) {
            ERL_NIF_TERM name;
            if (part_term(env, search_store(r->s), ids[i], &name))
                list = enif_make_list_cell(env, name, list);
        }
        free(ids);
    }
    enif_mutex_unlock(r->lock);
    return ids ? list : ERROR(env, "out of memory");
}

/* processes(Search, Node) -> [Pid] in pid order */
static ERL_NIF_TERM nif_processes(ErlNifEnv *env, int argc,
                                  const ERL_NIF_TERM argv[])
{
    (void)argc;
    return peek_key_list(env, argv, search_peek_pids);
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
    if (enif_is_identical(acc_t, atom(env, "true")))
        *acc = 1;
    else if (enif_is_identical(acc_t, atom(env, "false")))
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
        if (enif_is_identical(e[1], atom(env, "none")))
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
    uint64_t max_states = 0;
    *cfg = (buchi_config){ .fairness = BUCHI_FAIR_NONE };
    if (!enif_is_map(env, opts) ||
        !enif_get_map_value(env, opts, atom(env, "algorithm"), &alg) ||
        map_u64(env, opts, "max_states", &max_states) < 0)
        return 0;
    if (enif_is_identical(alg, atom(env, "ndfs")))
        cfg->algorithm = BUCHI_NDFS;
    else if (enif_is_identical(alg, atom(env, "scc")))
        cfg->algorithm = BUCHI_SCC;
    else
        return 0;
    if (enif_get_map_value(env, opts, atom(env, "fairness"), &fair)) {
        if (enif_is_identical(fair, atom(env, "weak")))
            cfg->fairness = BUCHI_FAIR_WEAK;
        else if (!enif_is_identical(fair, atom(env, "none")))
            return 0;
    }
    cfg->max_states = max_states;
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
        return enif_make_tuple2(env, atom(env, "need"), enif_make_uint64(env, q->key));
    case BUCHI_EMPTY: return atom(env, "empty");
    case BUCHI_FOUND: return atom(env, "found");
    case BUCHI_INCOMPLETE: return atom(env, "incomplete");
    case BUCHI_ERROR: break;
    }
    return enif_make_tuple2(env, atom(env, "error"),
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
static ERL_NIF_TERM nif_buchi_check(ErlNifEnv *env, int argc,
                                    const ERL_NIF_TERM argv[])
{
    (void)argc;
    ERL_NIF_TERM it, states;
    ErlNifUInt64 init;
    buchi_config cfg;
    if (!enif_is_map(env, argv[0]) ||
        !enif_get_map_value(env, argv[0], atom(env, "init"), &it) ||
        !enif_get_uint64(env, it, &init) ||
        !enif_get_map_value(env, argv[0], atom(env, "states"), &states) ||
        !enif_is_map(env, states) || !bc_config(env, argv[1], &cfg))
        return enif_make_badarg(env);
    const char *why = "out of memory";
    buchi *b = buchi_new(&cfg, &why);
    if (b == NULL)
        return enif_make_tuple2(env, atom(env, "error"),
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
            result = enif_make_tuple2(env, atom(env, "error"),
                                      enif_make_tuple2(env, atom(env, "unknown_state"),
                                                       enif_make_uint64(env, req.key)));
        else
            result = enif_make_tuple2(env, atom(env, "error"),
                                      enif_make_string(env, "out of memory",
                                                       ERL_NIF_LATIN1));
        break;
    case BUCHI_EMPTY:
        result = atom(env, "empty");
        break;
    case BUCHI_INCOMPLETE:
        result = atom(env, "incomplete");
        break;
    case BUCHI_FOUND: {
        const buchi_step *stem, *cycle;
        size_t nstem, ncycle;
        if (buchi_lasso(b, &stem, &nstem, &cycle, &ncycle) != 0)
            result = enif_make_tuple2(env, atom(env, "error"),
                                      enif_make_string(env, "no lasso", ERL_NIF_LATIN1));
        else
            result = enif_make_tuple3(env, atom(env, "lasso"),
                                      bc_steps(env, stem, nstem),
                                      bc_steps(env, cycle, ncycle));
        break;
    }
    default:
        result = enif_make_tuple2(env, atom(env, "error"),
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
static ERL_NIF_TERM nif_buchi_new(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
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
        return enif_make_tuple2(env, atom(env, "error"),
                                enif_make_string(env, why, ERL_NIF_LATIN1));
    return t;
}

/* buchi_start(B, InitKey) -> {need, Key} | empty | found | incomplete
**                            | {error, Reason} */
static ERL_NIF_TERM nif_buchi_start(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
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
static ERL_NIF_TERM nif_buchi_answer(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
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
static ERL_NIF_TERM nif_buchi_lasso(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
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
        t = enif_make_tuple2(env, atom(env, "error"),
                             enif_make_string(env, "no lasso", ERL_NIF_LATIN1));
    else
        t = enif_make_tuple2(env, bc_steps(env, stem, nstem), bc_steps(env, cycle, ncycle));
    enif_mutex_unlock(r->lock);
    return t;
}

/* buchi_stats(B) -> #{states, transitions, requests, max_depth} */
static ERL_NIF_TERM nif_buchi_stats(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    buchi_res *r;
    if (!get_buchi(env, argv[0], &r))
        return enif_make_badarg(env);
    buchi_stats st;
    enif_mutex_lock(r->lock);
    buchi_get_stats(r->b, &st);
    enif_mutex_unlock(r->lock);
    ERL_NIF_TERM keys[] = { atom(env, "states"), atom(env, "transitions"),
                            atom(env, "requests"), atom(env, "max_depth") };
    ERL_NIF_TERM vals[] = { enif_make_uint64(env, st.states),
                            enif_make_uint64(env, st.transitions),
                            enif_make_uint64(env, st.requests),
                            enif_make_uint64(env, st.max_depth) };
    ERL_NIF_TERM m;
    enif_make_map_from_arrays(env, keys, vals, 4, &m);
    return m;
}

static ErlNifFunc nif_funcs[] = {
    {"new", 1, nif_new, 0},
    {"start", 3, nif_start, 0},
    {"match", 2, nif_match, 0},
    {"resume", 1, nif_resume, 0},
    {"ran", 5, nif_ran, 0},
    {"fresh_pid", 2, nif_fresh_pid, 0},
    {"fresh_ref", 2, nif_fresh_ref, 0},
    {"node_status", 3, nif_node_status, 0},
    {"alias_active", 3, nif_alias_active, 0},
    {"timer", 2, nif_timer, 0},
    {"unique", 1, nif_unique, 0},
    {"live_searches", 0, nif_live_searches, 0},
    {"observed", 3, nif_observed, 0},
    {"deaths_judged", 2, nif_deaths_judged, 0},
    {"process", 2, nif_process, 0},
    {"app_env", 1, nif_app_env, 0},
    {"ets_table", 2, nif_ets_table, 0},
    {"ets_named", 3, nif_ets_named, 0},
    {"ets_tables", 2, nif_ets_tables, 0},
    {"ether", 1, nif_ether, 0},
    {"monitor_active", 3, nif_monitor_active, 0},
    {"stats", 1, nif_stats, 0},
    {"trace", 1, nif_trace, 0},
    {"top_state", 1, nif_top_state, 0},
    {"alive", 2, nif_alive, 0},
    {"group_leader", 2, nif_group_leader, 0},
    {"whereis", 3, nif_whereis, 0},
    {"registered", 2, nif_registered, 0},
    {"processes", 2, nif_processes, 0},
    {"buchi_check", 2, nif_buchi_check, ERL_NIF_DIRTY_JOB_CPU_BOUND},
    {"expand", 2, nif_expand, 0},
    {"focus", 2, nif_focus, 0},
    {"buchi_new", 1, nif_buchi_new, 0},
    {"buchi_start", 2, nif_buchi_start, 0},
    {"buchi_answer", 4, nif_buchi_answer, 0},
    {"buchi_lasso", 1, nif_buchi_lasso, 0},
    {"buchi_stats", 1, nif_buchi_stats, 0},
};

ERL_NIF_INIT(mce_nif, nif_funcs, load, NULL, upgrade, unload)
