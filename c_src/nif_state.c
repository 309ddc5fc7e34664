/*
** nif_state.c: the views of the state on top of the stack that are handed
** to Erlang to build results and counterexamples: the labels of the path
** that reached it (trace), its processes (top_state) and its ether.
**
** A view is read under the resource's lock and is whole or an ERROR: a
** stored term that does not decode never gives a shorter list.
*/
#include <erl_nif.h>

#include "nif_common.h"
#include "nif_state.h"
#include "search.h"

/* trace(Search) -> [Label], the transitions from the initial state to the
** state on top of the stack. */
ERL_NIF_TERM nif_trace(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
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

/* renamings(Search) -> [[{From, To}]], for each state of the path from the
** initial state to the top (the initial state first), the renaming of pid
** keys symmetry reduction applied to make it its representative ([] for
** none).  The driver composes them to map a counterexample back to the
** concrete pids of a real run (mce_search). */
ERL_NIF_TERM nif_renamings(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    if (!get_res(env, argv[0], &r))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    size_t depth = search_stack_depth(r->s);
    ERL_NIF_TERM list = enif_make_list(env, 0);
    for (size_t i = depth; i-- > 0;) {
        const uint32_t *pairs;
        uint32_t n;
        if (search_renaming(r->s, i, &pairs, &n) != 0) {
            enif_mutex_unlock(r->lock);
            return ERROR(env, "no such stack entry");
        }
        list = enif_make_list_cell(env, renaming_term(env, pairs, n), list);
    }
    enif_mutex_unlock(r->lock);
    return list;
}

/* top_state(Search) -> [{Pid, init | waiting, Cont, [Msg], [LinkedPid], Name}]
** Name is the registered name or undefined. */
ERL_NIF_TERM nif_top_state(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
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
        ERL_NIF_TERM name = ATOM(env, undefined);
        if (p->name != 0 && !part_term(env, ps, p->name, &name))
            goto bad;
        list = enif_make_list_cell(
            env,
            enif_make_tuple6(env, enif_make_uint(env, p->pid),
                             (p->status == PROC_INIT     ? ATOM(env, init)
                              : p->status == PROC_CHOICE ? ATOM(env, choosing)
                                                         : ATOM(env, waiting)),
                             cont, msgs, links, name),
            list);
    }
    enif_mutex_unlock(r->lock);
    return list;
bad:
    enif_mutex_unlock(r->lock);
    return ERROR(env, "stored term does not decode");
}

/* top_conts(Search) -> [ContId], the part ids of the processes'
** continuations in the top state, in pid order.  Parts are hash-consed and
** never freed during a search, so an id names one continuation for good:
** the LTL search judges props once per continuation (part_term/2). */
ERL_NIF_TERM nif_top_conts(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    if (!get_res(env, argv[0], &r))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    const sys_state *st = search_top_state(r->s);
    ERL_NIF_TERM list = enif_make_list(env, 0);
    for (uint32_t i = st ? st->nprocs : 0; i-- > 0;)
        list = enif_make_list_cell(env, enif_make_uint(env, st->procs[i].cont), list);
    enif_mutex_unlock(r->lock);
    return list;
}

/* part_term(Search, Id) -> Term, the term part `Id' (an id top_conts/1 gave). */
ERL_NIF_TERM nif_part_term(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    search_res *r;
    unsigned id;
    if (!get_res(env, argv[0], &r) || !enif_get_uint(env, argv[1], &id))
        return enif_make_badarg(env);
    enif_mutex_lock(r->lock);
    ERL_NIF_TERM t;
    if (!part_term(env, search_store(r->s), id, &t))
        t = ERROR(env, "no term part with that id");
    enif_mutex_unlock(r->lock);
    return t;
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
        *out = enif_make_tuple2(env, ATOM(env, message), a);
        return 1;
    case SIG_EXIT:
        if (!part_term(env, ps, sig[1], &a))
            return 0;
        *out = enif_make_tuple2(env, (sig[2] & SIGF_LINK) ? ATOM(env, link_exit) : ATOM(env, exit),
                                a);
        return 1;
    case SIG_LINK: *out = ATOM(env, link); return 1;
    case SIG_UNLINK: *out = ATOM(env, unlink); return 1;
    case SIG_MONITOR:
        *out = enif_make_tuple2(env, ATOM(env, monitor), enif_make_uint(env, sig[1]));
        return 1;
    case SIG_DEMONITOR:
        *out = enif_make_tuple2(env, ATOM(env, demonitor), enif_make_uint(env, sig[1]));
        return 1;
    case SIG_DOWN:
        if (!part_term(env, ps, sig[3], &a))
            return 0;
        *out = enif_make_tuple3(env, ATOM(env, down), enif_make_uint(env, sig[1]), a);
        return 1;
    default:
        return 0;
    }
}

static int name_term(ErlNifEnv *env, const part_store *ps, part_id name, ERL_NIF_TERM *out)
{
    *out = ATOM(env, undefined);
    return name == 0 || part_term(env, ps, name, out);
}

/* ether(Search) -> [{From, To, Name, [Signal]}], oldest signal first.  A
** node-pair channel shows as one entry per signal, in send order, naming
** the processes it travels between. */
ERL_NIF_TERM nif_ether(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
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
