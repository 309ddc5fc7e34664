/*
** nif_peek.c: the reads of the state being expanded that the runtime
** (mce_rt) makes during a step: fresh pids and refs, monitors, aliases,
** timers, a process's record, ETS tables, application environments, the
** unique-integer counter, liveness, group leaders, the registry, node status
** and a node's processes.
**
** A peek holds the resource's lock while it reads and copies what it shows
** into terms before unlocking.  Only fresh_pid and fresh_ref change the
** search: they take a number for the run that is outstanding.
*/
#include <erl_nif.h>
#include <stdlib.h>

#include "nif_common.h"
#include "nif_term_cache.h"
#include "nif_peek.h"
#include "search.h"

/* fresh_ref(Search, Node) -> pos_integer() */
ERL_NIF_TERM nif_fresh_ref(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
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
ERL_NIF_TERM nif_monitor_active(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
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
    return bool_term(env, active);
}

/* alias_active(Search, Pid, Ref) -> boolean() */
ERL_NIF_TERM nif_alias_active(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
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
    return bool_term(env, active);
}

/* timer(Search, Ref) -> Time | false */
ERL_NIF_TERM nif_timer(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    unsigned ref;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &ref))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    int64_t t = search_peek_timer(r->s, ref);
    enif_mutex_unlock(r->lock);
    return t < 0 ? ATOM(env, false) : enif_make_int64(env, t);
}

static ERL_NIF_TERM monitor_list(ErlNifEnv *env, const part_store *ps,
                                 const monitor_set *ms, int *ok)
{
    ERL_NIF_TERM list = enif_make_list(env, 0);
    for (uint32_t k = ms->n; k-- > 0;) {
        ERL_NIF_TERM item = ATOM(env, none);
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
ERL_NIF_TERM nif_process(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
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
    ERL_NIF_TERM t = ATOM(env, undefined);
    if (p != NULL) {
        int ok = 1;
        ERL_NIF_TERM msgs = enif_make_list(env, 0), links = enif_make_list(env, 0);
        for (uint32_t k = mailbox_length(ps, p->mailbox); k-- > 0;) {
            ERL_NIF_TERM m;
            if (k == skip)
                continue;
            if (!term_cache_get(r->terms, env, ps, mailbox_at(ps, p->mailbox, k), &m))
                ok = 0;
            else
                msgs = enif_make_list_cell(env, m, msgs);
        }
        for (uint32_t k = p->nlinks; k-- > 0;)
            links = enif_make_list_cell(env, enif_make_uint(env, p->links[k]), links);
        ERL_NIF_TERM name = ATOM(env, undefined), dict = enif_make_list(env, 0);
        if (p->name != 0 && !term_cache_get(r->terms, env, ps, p->name, &name))
            ok = 0;
        if (p->dict != 0 && !term_cache_get(r->terms, env, ps, p->dict, &dict))
            ok = 0;
        ERL_NIF_TERM parts[8] = {
            p->status == PROC_INIT ? ATOM(env, init) : ATOM(env, waiting), msgs, links,
            monitor_list(env, ps, &p->mons, &ok), monitor_list(env, ps, &p->monby, &ok),
            name, bool_term(env, p->flags & PF_TRAP_EXIT), dict };
        t = ok ? enif_make_tuple_from_array(env, parts, 8)
               : ERROR(env, "stored term does not decode");
    }
    enif_mutex_unlock(r->lock);
    return t;
}

/* ets_table(Search, Tid) -> undefined | {Owner, Heir, HeirData, Name, Data}
** (Heir 0: none; HeirData and Name: none when absent) */
ERL_NIF_TERM nif_ets_table(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    unsigned tid;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &tid))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    const ets_table *t = search_peek_table(r->s, tid);
    const part_store *ps = search_store(r->s);
    ERL_NIF_TERM res = ATOM(env, undefined);
    if (t != NULL) {
        ERL_NIF_TERM hd = ATOM(env, none), name = ATOM(env, none), data;
        if ((t->heir_data != 0 && !term_cache_get(r->terms, env, ps, t->heir_data, &hd)) ||
            (t->name != 0 && !term_cache_get(r->terms, env, ps, t->name, &name)) ||
            !term_cache_get(r->terms, env, ps, t->data, &data))
            res = ERROR(env, "stored term does not decode");
        else
            res = enif_make_tuple5(env, enif_make_uint(env, t->owner),
                                   enif_make_uint(env, t->heir), hd, name, data);
    }
    enif_mutex_unlock(r->lock);
    return res;
}

/* ets_named(Search, Node, Name) -> Tid | undefined */
ERL_NIF_TERM nif_ets_named(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
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
    return tid ? enif_make_uint(env, tid) : ATOM(env, undefined);
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
ERL_NIF_TERM nif_ets_tables(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    return peek_key_list(env, argv, search_peek_tables);
}

/* app_env(Search) -> Term | undefined */
ERL_NIF_TERM nif_app_env(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    if (!get_res(env, argv[0], &r))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    part_id id = search_peek_app_env(r->s);
    ERL_NIF_TERM t = ATOM(env, undefined);
    if (id != 0 && !term_cache_get(r->terms, env, search_store(r->s), id, &t))
        t = ERROR(env, "stored term does not decode");
    enif_mutex_unlock(r->lock);
    return t;
}

/* unique(Search) -> non_neg_integer(), the last unique integer given */
ERL_NIF_TERM nif_unique(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
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
ERL_NIF_TERM nif_fresh_pid(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
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

/* alive(Search, Pid) -> boolean(), in the state being expanded */
ERL_NIF_TERM nif_alive(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    unsigned pid;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &pid))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    int alive = search_peek_alive(r->s, pid);
    enif_mutex_unlock(r->lock);
    return bool_term(env, alive);
}

/* group_leader(Search, Pid) -> GL | undefined, in the state being expanded:
** GL as stored (sys_state.h, 0: the default).  io calls read it, so it
** does not decode the record's terms as process/2 does. */
ERL_NIF_TERM nif_group_leader(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    unsigned pid;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &pid))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    uint32_t gl;
    int alive = search_peek_group_leader(r->s, pid, &gl);
    enif_mutex_unlock(r->lock);
    return alive ? enif_make_uint(env, gl) : ATOM(env, undefined);
}

/* whereis(Search, Node, Name) -> Pid | undefined */
ERL_NIF_TERM nif_whereis(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
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
    return found ? enif_make_uint(env, pid) : ATOM(env, undefined);
}

/* node_status(Search, FromNode, Node) -> up | down | disconnected */
ERL_NIF_TERM nif_node_status(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
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
    return status == 0 ? ATOM(env, up) : status == 1 ? ATOM(env, down) : ATOM(env, disconnected);
}

/* registered(Search, Node) -> [Name] */
ERL_NIF_TERM nif_registered(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
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
ERL_NIF_TERM nif_processes(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    return peek_key_list(env, argv, search_peek_pids);
}

/* key_order(Search) -> ok: the running code iterated a map with pids in
** its keys (mce_rt_order:map_keys/1). */
ERL_NIF_TERM nif_key_order(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    return tell_search(env, argv[0], search_key_order);
}

/* ref_order(Search) -> ok: the running code observed the order of refs of
** one creator (mce_rt_order): a search reduced up to a renaming of ref
** counters is void (por.h). */
ERL_NIF_TERM nif_ref_order(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    return tell_search(env, argv[0], search_numbers_observed);
}

/* monby_read(Search) -> ok: the running process asked who monitors it
** (process_info(self(), monitored_by)), which a monitor or demonitor taken
** as safe changes (por.h, rules 10 and 11). */
ERL_NIF_TERM nif_monby_read(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    return tell_search(env, argv[0], search_monby_read);
}

/* pid_order(Search) -> ok: the running code observed the order of pids
** (mce_rt_order); a symmetric search is void. */
ERL_NIF_TERM nif_pid_order(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    return tell_search(env, argv[0], search_pid_order);
}
