/*
** nif_search.c: the search resource and the calls that drive it: new/1,
** start, expand, focus, resume, the answers to its requests (match,
** observed, deaths_judged, ran) and stats.  Each call gives the search's
** next request as a term (request_term).
**
** A request points into the search's memory, so a call holds the
** resource's lock from the search call until the request is a term.  The
** calls that run transitions (start, expand, resume, match, observed, ran)
** report the time they took to the scheduler (charge).
*/
#include <erl_nif.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "nif_common.h"
#include "nif_term_cache.h"
#include "nif_effects.h"
#include "nif_search.h"
#include "dead_payload.h"
#include "search.h"
#include "visited.h"

void search_res_dtor(ErlNifEnv *env, void *obj)
{
    (void)env;
    search_res *r = obj;
    if (r->s != NULL)
        atomic_fetch_sub(&r->priv->live, 1);
    search_free(r->s);
    r->s = NULL;
    term_cache_free(r->terms);
    r->terms = NULL;
    if (r->lock)
        enif_mutex_destroy(r->lock);
}

/* The marks of a wait or choice outcome (see nif_ran). */
static int get_marks(ErlNifEnv *env, ERL_NIF_TERM list, run_result *res)
{
    ERL_NIF_TERM head;
    const ERL_NIF_TERM *pair;
    int arity;
    ErlNifBinary bin;
    while (enif_get_list_cell(env, list, &head, &list)) {
        if (enif_is_identical(head, ATOM(env, idle)))
            res->idle = 1;
        else if (enif_is_identical(head, ATOM(env, target)))
            res->target = 1;
        else if (enif_get_tuple(env, head, &arity, &pair) && arity == 2 &&
                 enif_is_identical(pair[0], ATOM(env, payload)) &&
                 enif_inspect_binary(env, pair[1], &bin) && payload_desc_valid(bin.data, bin.size)) {
            res->payload = bin.data;
            res->payload_len = bin.size;
        } else
            return 0;
    }
    return enif_is_empty_list(env, list);
}

/* new(#{node := atom() | nodes := [atom()], creation := integer(),
**       max_states => N, max_depth => N, table_size => Slots,
**       check_deadlock => 0 | 1, timeouts_when_idle => 0 | 1,
**       timers_never_from => Ms (absent: every timer may fire),
**       kill_targeted => 0 | 1, crash_nodes => Mask,
**       disconnect_pairs => [A * 64 + B] (with crash_nodes),
**       delivery_ether => 0 | 1, max_crashes => N, max_disconnects => N,
**       max_kills => N, breadth_first => 0 | 1, observe => 0 | 1,
**       expand_only => 0 | 1 | 2 (2: an expansion goes on past a
**       successor that stops the search: sessions), table_mode => 0 | 1 | 2 (exact,
**       hash_compact, bitstate: visited.h), bitstate_bits => N,
**       step_cache => 0 | 1, step_cache_entries => N, step_cache_bytes => N,
**       reduction => 0 | 1 | 2 (2: also up to a renaming of pids and refs, por.h),
**       pass_cut => 0 | 1 (depth-first with the reduction: cut states are
**           passed, not kept),
**       monitor_rule => 0 | 1, name_rule => 0 | 1 (rules 11 and 12 of por.h,
**           on unless a guard of theirs turned them off; default 1),
**       small_steps => 0 | 1 (granularity small: a start runs to the first
**           effect; only an order of the reduction, search_safe_first),
**       symmetry => 0 | 1 | 2 | 3 (2: without the pid order guard; 3:
**           with it, map keys' pids pinned),
**       cluster_n => N, cluster_me => I (a distributed search's participant
**       I of N: breadth_first, one worker)})
**   -> Resource
** A lossy table_mode with breadth_first or expand_only is a badarg. */
ERL_NIF_TERM nif_new(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
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
    uint64_t crashes = 0, disconnects = 0, kills = 0, step_cache = 0;
    uint64_t timers_never_from = 0;
    uint64_t kill_targeted = 0, crash_nodes = 0;
    int nodes_targeted = 0;
    ERL_NIF_TERM pairs;
    int timers_bounded = 0;
    uint64_t cache_entries = 0, cache_bytes = 0, reduction = 0, symmetry = 0, workers = 1;
    uint64_t dead_payload = 0, pass_cut = 0, small_steps = 0, monitor_rule = 1, name_rule = 1;
    uint64_t cluster_n = 0, cluster_me = 0;
    unsigned nnodes = 0;
    if (enif_get_map_value(env, argv[0], ATOM(env, nodes), &nodes)) {
        if (!enif_get_list_length(env, nodes, &nnodes) || nnodes == 0 ||
            nnodes > SEARCH_MAX_NODES)
            return enif_make_badarg(env);
    } else if (enif_get_map_value(env, argv[0], ATOM(env, node), &head)) {
        nnodes = 1;
        nodes = enif_make_list1(env, head);
    } else {
        return enif_make_badarg(env);
    }
    if (map_u64(env, argv[0], ATOM(env, creation), &creation) != 1 ||
        creation > UINT32_MAX ||
        map_u64(env, argv[0], ATOM(env, max_states), &max_states) < 0 ||
        map_u64(env, argv[0], ATOM(env, max_depth), &max_depth) < 0 ||
        map_u64(env, argv[0], ATOM(env, table_size), &table_slots) < 0 ||
        table_slots > ((uint64_t)1 << 40) ||
        map_u64(env, argv[0], ATOM(env, check_deadlock), &check_deadlock) < 0 ||
        check_deadlock > 1 ||
        map_u64(env, argv[0], ATOM(env, timeouts_when_idle), &when_idle) < 0 || when_idle > 1 ||
        map_u64(env, argv[0], ATOM(env, kill_targeted), &kill_targeted) < 0 ||
        kill_targeted > 1 ||
        (nodes_targeted = map_u64(env, argv[0], ATOM(env, crash_nodes), &crash_nodes)) < 0 ||
        (timers_bounded = map_u64(env, argv[0], ATOM(env, timers_never_from),
                                  &timers_never_from)) < 0 ||
        map_u64(env, argv[0], ATOM(env, delivery_ether), &ether) < 0 || ether > 1 ||
        map_u64(env, argv[0], ATOM(env, node_pair), &node_pair) < 0 || node_pair > 1 ||
        map_u64(env, argv[0], ATOM(env, breadth_first), &bfs) < 0 || bfs > 1 ||
        map_u64(env, argv[0], ATOM(env, observe), &observe) < 0 || observe > 1 ||
        map_u64(env, argv[0], ATOM(env, judge_deaths), &judge_deaths) < 0 || judge_deaths > 1 ||
        map_u64(env, argv[0], ATOM(env, expand_only), &expand_only) < 0 || expand_only > 2 ||
        map_u64(env, argv[0], ATOM(env, table_mode), &table_mode) < 0 ||
        table_mode > VISITED_BITSTATE ||
        (table_mode != VISITED_EXACT && (bfs || expand_only)) ||
        map_u64(env, argv[0], ATOM(env, bitstate_bits), &bitstate_bits) < 0 ||
        bitstate_bits > VISITED_MAX_BITS ||
        map_u64(env, argv[0], ATOM(env, max_crashes), &crashes) < 0 || crashes > UINT32_MAX ||
        map_u64(env, argv[0], ATOM(env, max_disconnects), &disconnects) < 0 ||
        disconnects > UINT32_MAX ||
        map_u64(env, argv[0], ATOM(env, max_kills), &kills) < 0 || kills > UINT32_MAX ||
        map_u64(env, argv[0], ATOM(env, step_cache), &step_cache) < 0 || step_cache > 1 ||
        map_u64(env, argv[0], ATOM(env, step_cache_entries), &cache_entries) < 0 ||
        cache_entries > ((uint64_t)1 << 24) ||
        map_u64(env, argv[0], ATOM(env, step_cache_bytes), &cache_bytes) < 0 ||
        cache_bytes > ((uint64_t)1 << 40) ||
        map_u64(env, argv[0], ATOM(env, reduction), &reduction) < 0 || reduction > 2 ||
        map_u64(env, argv[0], ATOM(env, pass_cut), &pass_cut) < 0 || pass_cut > 1 ||
        map_u64(env, argv[0], ATOM(env, small_steps), &small_steps) < 0 || small_steps > 1 ||
        map_u64(env, argv[0], ATOM(env, monitor_rule), &monitor_rule) < 0 || monitor_rule > 1 ||
        map_u64(env, argv[0], ATOM(env, name_rule), &name_rule) < 0 || name_rule > 1 ||
        map_u64(env, argv[0], ATOM(env, dead_payload), &dead_payload) < 0 || dead_payload > 1 ||
        (dead_payload && (expand_only || observe || cluster_n > 1)) ||
        map_u64(env, argv[0], ATOM(env, symmetry), &symmetry) < 0 || symmetry > 3 ||
        map_u64(env, argv[0], ATOM(env, workers), &workers) < 0 || workers == 0 ||
        workers > 1024 || (workers > 1 && (!bfs || expand_only)) ||
        map_u64(env, argv[0], ATOM(env, cluster_n), &cluster_n) < 0 || cluster_n > 1024 ||
        map_u64(env, argv[0], ATOM(env, cluster_me), &cluster_me) < 0 ||
        (cluster_n > 1 && (cluster_me >= cluster_n || !bfs || expand_only || workers > 1)))
        return enif_make_badarg(env);
    search_config cfg = { .creation = (uint32_t)creation,
                          .max_states = max_states, .max_depth = max_depth,
                          .check_deadlock = (int)check_deadlock,
                          .timeouts_when_idle = (int)when_idle,
                          .timers_bounded = timers_bounded,
                          .kill_targeted = (int)kill_targeted,
                          .nodes_targeted = nodes_targeted,
                          .crash_nodes = crash_nodes,
                          .timers_never_from = timers_never_from,
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
                          .step_cache = (int)step_cache,
                          .step_cache_entries = (size_t)cache_entries,
                          .step_cache_bytes = (size_t)cache_bytes,
                          .reduction = (int)reduction,
                          .pass_cut = (int)pass_cut,
                          .small_steps = (int)small_steps,
                          .monitor_rule = (int)monitor_rule,
                          .name_rule = (int)name_rule,
                          .dead_payload = (int)dead_payload,
                          .symmetry = (int)symmetry,
                          .workers = (uint32_t)workers,
                          .cluster_n = (uint32_t)cluster_n,
                          .cluster_me = (uint32_t)cluster_me,
                          .nnodes = nnodes };
    /* crash_nodes => Mask comes with disconnect_pairs => [A * 64 + B]
    ** (A < B node indexes): the nodes and pairs faults may hit. */
    if (nodes_targeted) {
        ERL_NIF_TERM ph;
        unsigned ab;
        if (!enif_get_map_value(env, argv[0], ATOM(env, disconnect_pairs), &pairs))
            return enif_make_badarg(env);
        while (enif_get_list_cell(env, pairs, &ph, &pairs)) {
            if (!enif_get_uint(env, ph, &ab) || ab >= 64 * 64 || ab / 64 >= ab % 64)
                return enif_make_badarg(env);
            cfg.disconnect_pairs[ab / 64] |= (uint64_t)1 << (ab % 64);
        }
        if (!enif_is_empty_list(env, pairs))
            return enif_make_badarg(env);
    }
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
    const ERL_NIF_TERM *search_atoms = nif_atoms_of(env)->search;
    ErlNifBinary atom_bins[N_ATOMS];
    int natoms = 0;
    for (; natoms < N_ATOMS; natoms++) {
        if (!enif_term_to_binary(env, search_atoms[natoms], &atom_bins[natoms]))
            break;
        cfg.atom_etf[natoms] = atom_bins[natoms].data;
        cfg.atom_etf_len[natoms] = atom_bins[natoms].size;
    }
    nif_priv *p = enif_priv_data(env);
    search_res *r = natoms == N_ATOMS ? enif_alloc_resource(p->search_type, sizeof *r)
                                      : NULL;
    if (r != NULL) {
        r->priv = p;
        r->label_binaries = 0;
        r->terms = term_cache_new();
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

static ERL_NIF_TERM agent_term(ErlNifEnv *env, const agent *a)
{
    switch (a->kind) {
    case AGENT_PROC:
        return enif_make_uint(env, a->a);
    case AGENT_CHAN:
        return enif_make_tuple4(env, ATOM(env, chan), enif_make_uint(env, a->a),
                                enif_make_uint(env, a->b), enif_make_uint(env, a->name));
    case AGENT_NONE:
        break;
    }
    return ATOM(env, none);
}

/* {expanded, StateId, [{SuccId, Agent, Label, Stop}], Deadlock}
** Agent: a pid key, {chan, FromKey, ToKey, NameId} or none (a fault).
** With `binaries` a Label is its ETF binary, for a reader that decodes
** few of them (the LTL search looks for probes).  With the reduction on
** (only the LTL check's expand-only search has it) a fifth element lists
** the successors that come from a safe step, [{Index, 1 | 2}] (1: rules
** 1-5, 2: rule 7 of por.h), for the product to choose from. */
static ERL_NIF_TERM expanded_term(ErlNifEnv *env, search *s, int binaries)
{
    const expansion *e;
    int deadlock;
    size_t n = search_expansion(s, &e, &deadlock);
    ERL_NIF_TERM list = enif_make_list(env, 0), safe = enif_make_list(env, 0);
    for (size_t i = n; i-- > 0;) {
        if (e[i].safe)
            safe = enif_make_list_cell(env, enif_make_tuple2(env, enif_make_uint64(env, i),
                                                             enif_make_uint(env, (unsigned)e[i].safe)),
                                       safe);
        ERL_NIF_TERM label = ATOM(env, none);
        if (e[i].label != NULL && binaries) {
            unsigned char *bytes = enif_make_new_binary(env, e[i].label_len, &label);
            if (bytes == NULL)
                return ERROR(env, "out of memory");
            memcpy(bytes, e[i].label, e[i].label_len);
        } else if (e[i].label != NULL &&
                   enif_binary_to_term(env, e[i].label, e[i].label_len, &label, 0) !=
                       e[i].label_len) {
            return ERROR(env, "stored label does not decode");
        }
        list = enif_make_list_cell(
            env,
            enif_make_tuple4(env, enif_make_uint(env, e[i].state), agent_term(env, &e[i].who),
                             label, bool_term(env, e[i].stop)),
            list);
    }
    search_stats st;
    search_get_stats(s, &st);
    if (st.reduction)   /* the LTL product's expansions: which steps are safe */
        return enif_make_tuple5(env, ATOM(env, expanded),
                                enif_make_uint(env, search_expanding(s)), list,
                                bool_term(env, deadlock), safe);
    return enif_make_tuple4(env, ATOM(env, expanded),
                            enif_make_uint(env, search_expanding(s)), list,
                            bool_term(env, deadlock));
}

static ERL_NIF_TERM request_term(ErlNifEnv *env, const search_res *r, const request *q)
{
    search *s = r->s;
    /* Every answer passes here: a search that ends other than exhausted
    ** ends its fellow workers' too. */
    search_settled(s, q);
    const part_store *ps = search_store(s);
    ERL_NIF_TERM cont, msg;
    switch (q->kind) {
    case REQ_MATCH:
        if (!term_cache_get(r->terms, env, ps, q->cont, &cont) ||
            !term_cache_get(r->terms, env, ps, q->msg, &msg))
            return ERROR(env, "stored term does not decode");
        return enif_make_tuple3(env, ATOM(env, match), cont, msg);
    case REQ_RUN: {
        ERL_NIF_TERM pid = enif_make_uint(env, q->pid), how;
        if (!term_cache_get(r->terms, env, ps, q->cont, &cont))
            return ERROR(env, "stored term does not decode");
        if (q->run == RUN_START) {
            how = ATOM(env, start);
        } else if (q->run == RUN_TIMEOUT) {
            how = ATOM(env, timeout);
        } else if (q->run == RUN_CHOICE) {
            how = enif_make_tuple2(env, ATOM(env, choice), enif_make_uint(env, q->choice));
        } else {
            if (!term_cache_get(r->terms, env, ps, q->msg, &msg))
                return ERROR(env, "stored term does not decode");
            how = enif_make_tuple2(env, ATOM(env, receive), msg);
        }
        ERL_NIF_TERM dict = enif_make_list(env, 0);
        if (q->dict != 0 && !term_cache_get(r->terms, env, ps, q->dict, &dict))
            return ERROR(env, "stored term does not decode");
        return enif_make_tuple6(env, ATOM(env, run), pid, how, cont, dict,
                                bool_term(env, q->flags & PF_TRAP_EXIT));
    }
    case REQ_DONE: return ATOM(env, done);
    case REQ_LIMIT_STATES: return ATOM(env, max_states);
    case REQ_DEADLOCK: return ATOM(env, deadlock);
    case REQ_STOPPED: return ATOM(env, stopped);
    case REQ_OBSERVE: {
        ERL_NIF_TERM obs = ATOM(env, none), label = ATOM(env, none);
        size_t len = 0;
        const uint8_t *lb = search_observed_label(s, &len);
        if ((q->observer != 0 && !term_cache_get(r->terms, env, ps, q->observer, &obs)) ||
            (lb != NULL && enif_binary_to_term(env, lb, len, &label, 0) != len))
            return ERROR(env, "stored term does not decode");
        return enif_make_tuple3(env, ATOM(env, observe), obs, label);
    }
    case REQ_EXPANDED: return expanded_term(env, s, r->label_binaries);
    case REQ_DEATHS: {
        const death *d;
        size_t n = search_deaths(s, &d);
        ERL_NIF_TERM list = enif_make_list(env, 0), reason;
        for (size_t i = n; i-- > 0;) {
            if (!term_cache_get(r->terms, env, ps, d[i].reason, &reason))
                return ERROR(env, "stored term does not decode");
            list = enif_make_list_cell(
                env, enif_make_tuple2(env, enif_make_uint(env, d[i].pid), reason), list);
        }
        return enif_make_tuple2(env, ATOM(env, deaths), list);
    }
    case REQ_YIELD: return ATOM(env, yield);
    case REQ_IDLE: return ATOM(env, idle);
    case REQ_ABANDONED: return ATOM(env, abandoned);
    case REQ_REDUCTION_VOID: {
        return enif_make_tuple2(env, ATOM(env, reduction_void), void_reason_term(env, q->why));
    }
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

/* start(Search, InitialCall, Pid) -> Request */
ERL_NIF_TERM nif_start(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
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
    ERL_NIF_TERM t = request_term(env, r, &q);
    enif_mutex_unlock(r->lock);
    charge(env, t0);
    enif_release_binary(&bin);
    return t;
}

/* join(Search) -> Resource: a new worker of a breadth-first search made
** with workers => N (N > 1), sharing its states and queue.  The first
** request comes from work/2. */
ERL_NIF_TERM nif_join(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *first;
    if (!get_res(env, argv[0], &first))
        return enif_make_badarg(env);
    nif_priv *p = enif_priv_data(env);
    search_res *r = enif_alloc_resource(p->search_type, sizeof *r);
    if (r == NULL)
        return ERROR(env, "out of memory");
    r->priv = p;
    r->label_binaries = 0;
    r->terms = term_cache_new();
    r->lock = enif_mutex_create("mce_search");
    enif_mutex_lock(first->lock);
    r->s = r->lock ? search_join(first->s) : NULL;
    enif_mutex_unlock(first->lock);
    if (r->s != NULL)
        atomic_fetch_add(&p->live, 1);
    ERL_NIF_TERM t = enif_make_resource(env, r);
    enif_release_resource(r);
    if (r->s == NULL)
        return enif_make_badarg(env);     /* not a search made for workers */
    return t;
}

/* work(Search, EntryPid) -> Request: a joined worker's first request. */
ERL_NIF_TERM nif_work(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    unsigned pid;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &pid))
        return enif_make_badarg(env);
    ErlNifTime t0 = enif_monotonic_time(ERL_NIF_USEC);
    enif_mutex_lock(r->lock);
    request q;
    search_start_worker(r->s, pid, &q);
    ERL_NIF_TERM t = request_term(env, r, &q);
    enif_mutex_unlock(r->lock);
    charge(env, t0);
    return t;
}

/* stop_workers(Search) -> ok: every worker sharing the search's states
** ends at its next request (abandoned). */
ERL_NIF_TERM nif_stop_workers(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    return tell_search(env, argv[0], search_stop_workers);
}

/* expand(Search, StateId) -> Request: lists the successors of a state an
** earlier expansion returned (expand_only searches). */
ERL_NIF_TERM nif_expand(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
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
    ERL_NIF_TERM t = request_term(env, r, &q);
    enif_mutex_unlock(r->lock);
    charge(env, t0);
    return t;
}

/* focus(Search, StateId) -> ok: top_state/1, ether/1 and the other peeks
** show that state (expand_only searches, between expansions). */
ERL_NIF_TERM nif_focus(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    unsigned id;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &id))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    int rc = search_focus(r->s, id);
    enif_mutex_unlock(r->lock);
    return rc == 0 ? ATOM(env, ok) : enif_make_badarg(env);
}

/* label_binaries(Search) -> ok: from now on the labels of {expanded, ...}
** come as ETF binaries (the LTL search decodes only those with probes). */
ERL_NIF_TERM nif_label_binaries(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    if (!get_res(env, argv[0], &r))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    r->label_binaries = 1;
    enif_mutex_unlock(r->lock);
    return ATOM(env, ok);
}

/* resume(Search) -> Request: goes on after a `yield'. */
ERL_NIF_TERM nif_resume(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    if (!get_res(env, argv[0], &r))
        return enif_make_badarg(env);
    ErlNifTime t0 = enif_monotonic_time(ERL_NIF_USEC);
    enif_mutex_lock(r->lock);
    request q;
    search_resume(r->s, &q);
    ERL_NIF_TERM t = request_term(env, r, &q);
    enif_mutex_unlock(r->lock);
    charge(env, t0);
    return t;
}

/* match(Search, boolean() | maybe) -> Request.  `maybe' comes from the
** abstract interpreter (src/mce_abs_eval.erl): the message may or may not
** match under abstraction, so the search takes it and also looks past it. */
ERL_NIF_TERM nif_match(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    int matches;
    if (!get_res(env, argv[0], &r))
        return enif_make_badarg(env);
    if (enif_is_identical(argv[1], ATOM(env, true)))
        matches = 1;
    else if (enif_is_identical(argv[1], ATOM(env, false)))
        matches = 0;
    else if (enif_is_identical(argv[1], ATOM(env, maybe)))
        matches = MATCH_MAYBE;
    else
        return enif_make_badarg(env);
    ErlNifTime t0 = enif_monotonic_time(ERL_NIF_USEC);
    enif_mutex_lock(r->lock);
    request q;
    search_answer_match(r->s, matches, &q);
    ERL_NIF_TERM t = request_term(env, r, &q);
    enif_mutex_unlock(r->lock);
    charge(env, t0);
    return t;
}

/* observed(Search, ok, MonitorsState) | observed(Search, skip | violation, _)
**   -> Request: the verdict on the successor of a REQ_OBSERVE. */
ERL_NIF_TERM nif_observed(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    int verdict;
    if (!get_res(env, argv[0], &r))
        return enif_make_badarg(env);
    if (enif_is_identical(argv[1], ATOM(env, ok)))
        verdict = OBSERVE_OK;
    else if (enif_is_identical(argv[1], ATOM(env, skip)))
        verdict = OBSERVE_SKIP;
    else if (enif_is_identical(argv[1], ATOM(env, violation)))
        verdict = OBSERVE_VIOLATION;
    else
        return enif_make_badarg(env);
    ErlNifBinary bin;
    term_in obs = { NULL, 0, 0 };
    if (verdict == OBSERVE_OK && !encode(env, argv[2], &bin, &obs))
        return enif_make_badarg(env);
    ErlNifTime t0 = enif_monotonic_time(ERL_NIF_USEC);
    enif_mutex_lock(r->lock);
    request q;
    search_answer_observe(r->s, verdict, verdict == OBSERVE_OK ? &obs : NULL, &q);
    ERL_NIF_TERM t = request_term(env, r, &q);
    enif_mutex_unlock(r->lock);
    charge(env, t0);
    if (verdict == OBSERVE_OK)
        enif_release_binary(&bin);
    return t;
}

/* deaths_judged(Search, boolean()) -> Request: whether one of the deaths
** of a REQ_DEATHS is a violation. */
ERL_NIF_TERM nif_deaths_judged(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    int violation;
    if (!get_res(env, argv[0], &r) || !get_bool(env, argv[1], &violation))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    request q;
    search_answer_deaths(r->s, violation, &q);
    ERL_NIF_TERM t = request_term(env, r, &q);
    enif_mutex_unlock(r->lock);
    return t;
}

/* ran(Search, Outcome, Effects, Label, Stop) -> Request
**   Outcome = {wait, HasTimeout, Cont, Dict} | {choice, N, Cont, Dict}
**           | {exit, Reason} */
ERL_NIF_TERM nif_ran(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
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
    ** true (a finite after), zero (after 0), poll (the after 0 of a receive
    ** without clauses), or the finite after's time. */
    unsigned timeout_ms = 0;
    /* {wait | choice, _, Cont, Dict, Marks}: Marks a list of idle (an idle
    ** loop: PF_IDLE) and target (a kill target: PF_TARGET). */
    int marked = arity == 5 && get_marks(env, oc[4], &res);
    if (marked)
        arity = 4;
    int is_wait = arity == 4 && enif_is_identical(oc[0], ATOM(env, wait)) &&
                  (get_bool(env, oc[1], &res.has_timeout) ||
                   (enif_is_identical(oc[1], ATOM(env, zero)) && (res.has_timeout = 2)) ||
                   (enif_is_identical(oc[1], ATOM(env, poll)) && (res.has_timeout = 3)) ||
                   (enif_get_uint(env, oc[1], &timeout_ms) && timeout_ms > 0 &&
                    (res.has_timeout = 1)));
    res.timeout_ms = timeout_ms > PF_TIMEOUT_MAX ? PF_TIMEOUT_MAX : timeout_ms;
    int is_choice = arity == 4 && enif_is_identical(oc[0], ATOM(env, choice)) &&
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
    } else if (arity == 2 && enif_is_identical(oc[0], ATOM(env, exit))) {
        res.outcome = OUTCOME_EXIT;
        res.normal = enif_is_identical(oc[1], ATOM(env, normal));
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
        t = request_term(env, r, &q);
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

ERL_NIF_TERM nif_stats(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    if (!get_res(env, argv[0], &r))
        return enif_make_badarg(env);
    search_stats st;
    enif_mutex_lock(r->lock);
    search_get_stats(r->s, &st);
    size_t decoded = term_cache_bytes(r->terms);
    enif_mutex_unlock(r->lock);
    st.bytes += decoded;
    st.used_bytes += decoded;
    ERL_NIF_TERM keys[] = {
        ATOM(env, states), ATOM(env, transitions), ATOM(env, max_depth),
        ATOM(env, stack_depth), ATOM(env, parts), ATOM(env, memory),
        ATOM(env, match_memo), ATOM(env, truncated),
        ATOM(env, memory_used), ATOM(env, table), ATOM(env, table_bytes),
        ATOM(env, omission_probability), ATOM(env, states_lost_estimate),
        ATOM(env, coverage_estimate) };
    ERL_NIF_TERM vals[] = {
        enif_make_uint64(env, st.states), enif_make_uint64(env, st.transitions),
        enif_make_uint64(env, st.max_depth_seen),
        enif_make_uint64(env, st.depth), enif_make_uint64(env, st.parts),
        enif_make_uint64(env, st.bytes), enif_make_uint64(env, st.memo_entries),
        bool_term(env, st.truncated),
        enif_make_uint64(env, st.used_bytes),
        st.table_mode == VISITED_HASH_COMPACT ? ATOM(env, hash_compact)
        : st.table_mode == VISITED_BITSTATE   ? ATOM(env, bitstate)
                                              : ATOM(env, exact),
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
    /* The step cache's counts, zero when it is off. */
    if (!enif_make_map_put(env, map, ATOM(env, step_cache_hits),
                           enif_make_uint64(env, st.step_cache_hits), &map) ||
        !enif_make_map_put(env, map, ATOM(env, step_cache_misses),
                           enif_make_uint64(env, st.step_cache_misses), &map) ||
        !enif_make_map_put(env, map, ATOM(env, step_cache_entries),
                           enif_make_uint64(env, st.step_cache_entries), &map) ||
        !enif_make_map_put(env, map, ATOM(env, step_cache_bytes),
                           enif_make_uint64(env, st.step_cache_bytes), &map) ||
        !enif_make_map_put(env, map, ATOM(env, decoded_terms_bytes),
                           enif_make_uint64(env, decoded), &map) ||
        !enif_make_map_put(env, map, ATOM(env, reduced_states),
                           enif_make_uint64(env, st.reduced_states), &map) ||
        !enif_make_map_put(env, map, ATOM(env, renamed_states),
                           enif_make_uint64(env, st.renamed_states), &map) ||
        !enif_make_map_put(env, map, ATOM(env, passed_states),
                           enif_make_uint64(env, st.passed_states), &map) ||
        !enif_make_map_put(env, map, ATOM(env, dead_payloads),
                           enif_make_uint64(env, st.dead_payloads), &map))
        return ERROR(env, "stats map");
    /* Symmetry reduction's counts, zero when it is off. */
    if (!enif_make_map_put(env, map, ATOM(env, symmetric_states),
                           enif_make_uint64(env, st.symmetric_states), &map) ||
        !enif_make_map_put(env, map, ATOM(env, symmetry_groups),
                           enif_make_uint64(env, st.symmetry_groups), &map) ||
        !enif_make_map_put(env, map, ATOM(env, pid_order),
                           enif_make_uint64(env, (uint64_t)st.pid_order), &map) ||
        !enif_make_map_put(env, map, ATOM(env, symmetry_stopped),
                           enif_make_uint64(env, st.symmetry_stopped), &map) ||
        !enif_make_map_put(env, map, ATOM(env, shared_memory),
                           enif_make_uint64(env, st.shared_bytes), &map))
        return ERROR(env, "stats map");
    if (st.pool_states != 0 &&
        !enif_make_map_put(env, map, ATOM(env, pool_states),
                           enif_make_uint64(env, st.pool_states), &map))
        return ERROR(env, "stats map");
    return map;
}
