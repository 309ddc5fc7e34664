/*
** transition.c: what one step of a process does to a state, with Erlang's
** signal semantics: its effects (sends, spawns, links, monitors, aliases,
** registered names, timers, ETS ownership, halt), its end (the process's
** death and the exit-signal cascade it starts) and its new continuation.
** See transition.h for the invariant it keeps.
*/
#include "transition.h"

#include <stdlib.h>
#include <string.h>

#include "ether.h"

/* Interns an encoded term, recording the simulated pids it references. */
part_id transition_intern_term(trans_ctx *cx, term_in *t)
{
    if (t->id != 0)
        return t->id;
    etf_pid_sink sink = { NULL, 0, 0 };
    if (etf_scan_keys(t->etf, t->len, &cx->names.nodes, cx->names.creation, &sink) != 0) {
        free(sink.pids);
        return 0;
    }
    int fresh;
    part_id id = part_store_intern(cx->ps, PART_TERM, t->etf, (uint32_t)t->len,
                                   sink.pids, sink.n, &fresh);
    free(sink.pids);
    t->id = id;
    return id;
}

/* Interns the built term and appends it to st->procs[to]'s mailbox. */
static int deliver_built(trans_ctx *cx, sys_state *st, int to, ext_buf *e)
{
    int err = e->err;
    part_id msg = 0;
    if (!err) {
        term_in t = { e->b, e->n, 0 };
        msg = transition_intern_term(cx, &t);
    }
    free(e->b);
    if (err || msg == 0)
        return -1;
    if (sys_state_append(st, (uint32_t)to, msg) != 0)
        return -1;
    return 0;
}

/* Appends {'EXIT', From, Reason} to the mailbox of st->procs[to]. */
static int deliver_exit_message(trans_ctx *cx, sys_state *st, int to,
                                uint32_t from, part_id reason)
{
    ext_buf e = { NULL, 0, 0, 0 };
    ext_u8(&e, 131);
    ext_u8(&e, 104);                    /* SMALL_TUPLE_EXT */
    ext_u8(&e, 3);
    ext_part(&cx->names, &e, cx->atoms[ATOM_EXIT]);
    ext_pid(&cx->names, &e, from);
    ext_part(&cx->names, &e, reason);
    return deliver_built(cx, st, to, &e);
}

/* An alias made with its monitor (alias demonitor) ends with it. */
static void drop_monitor_alias(proc *p, uint32_t ref)
{
    for (uint32_t k = 0; k < p->aliases.n; k++)
        if (p->aliases.m[k].ref == ref &&
            (p->aliases.m[k].pid == ALIAS_DEMONITOR ||
             p->aliases.m[k].pid == ALIAS_REPLY_DEMONITOR))
            monitor_remove(&p->aliases, ref, NULL);
}

/* PF_MON_ARMED (sys_state.h) lasts while the process has monitors: a
** process that holds none is not armed, whatever it did before. */
static void disarm_if_unwatching(proc *p)
{
    if (p->mons.n == 0)
        p->flags &= ~(uint32_t)PF_MON_ARMED;
}

/* The process sent a message or exit signal to process `to`: a death of
** `to` from now on may be its doing, so a process whose monitors all watch
** `to` is no longer armed.  One that also watches others stays armed (the
** guard only voids more often). */
static void disarm_toward(proc *p, uint32_t to)
{
    if (!(p->flags & PF_MON_ARMED))
        return;
    for (uint32_t k = 0; k < p->mons.n; k++)
        if (p->mons.m[k].pid != to)
            return;
    p->flags &= ~(uint32_t)PF_MON_ARMED;
}

/* The process a step's message or exit signal reaches at once (0: none,
** or not known before delivery). */
static uint32_t reached_by(const sys_state *st, const effect *ef, part_id name, uint32_t mynode)
{
    int r = -1;
    if (ef->kind == EFFECT_SEND || ef->kind == EFFECT_EXIT)
        return ef->pid;
    if (ef->kind == EFFECT_SEND_ALIAS)
        r = sys_state_find_alias(st, ef->ref);
    else if (ef->kind == EFFECT_SEND_NAME && name != 0 && KEY_NODE(ef->pid) == mynode)
        r = sys_state_find_name(st, name, mynode);
    return r >= 0 ? st->procs[r].pid : 0;
}

/* Appends {'DOWN', Ref, process, Item, Reason} to st->procs[to]'s mailbox;
** Item is the monitor's item term, or the pid when it has none. */
int deliver_down(trans_ctx *cx, sys_state *st, int to, monitor m,
                 part_id reason)
{
    drop_monitor_alias(&st->procs[to], m.ref);
    disarm_if_unwatching(&st->procs[to]);
    ext_buf e = { NULL, 0, 0, 0 };
    ext_u8(&e, 131);
    ext_u8(&e, 104);
    ext_u8(&e, 5);
    ext_part(&cx->names, &e, cx->atoms[ATOM_DOWN]);
    ext_ref(&cx->names, &e, m.ref);
    ext_part(&cx->names, &e, cx->atoms[ATOM_PROCESS]);
    if (m.item != 0)
        ext_part(&cx->names, &e, m.item);
    else
        ext_pid(&cx->names, &e, m.pid);
    ext_part(&cx->names, &e, reason);
    return deliver_built(cx, st, to, &e);
}

/* Removes {'DOWN', Ref, ...} messages from st->procs[at]'s mailbox
** (demonitor with flush). */
static int flush_down(trans_ctx *cx, sys_state *st, int at, uint32_t ref)
{
    ext_buf e = { NULL, 0, 0, 0 };
    ext_u8(&e, 131);
    ext_u8(&e, 104);
    ext_u8(&e, 5);
    ext_part(&cx->names, &e, cx->atoms[ATOM_DOWN]);
    ext_ref(&cx->names, &e, ref);
    if (e.err) {
        free(e.b);
        return -1;
    }
    if (sys_state_flush(cx->ps, st) != 0) {
        free(e.b);
        return -1;
    }
    uint32_t n = mailbox_length(cx->ps, st->procs[at].mailbox);
    for (uint32_t k = n; k-- > 0;) {
        const part *m = part_store_get(cx->ps, mailbox_at(cx->ps, st->procs[at].mailbox, k));
        if (m != NULL && m->len >= e.n && memcmp(m->data, e.b, e.n) == 0) {
            part_id mb = mailbox_remove(cx->ps, st->procs[at].mailbox, k);
            if (mb == 0) {
                free(e.b);
                return -1;
            }
            st->procs[at].mailbox = mb;
        }
    }
    free(e.b);
    return 0;
}

/* Appends {nodedown, Node} to st->procs[to]'s mailbox. */
int deliver_nodedown(trans_ctx *cx, sys_state *st, int to, uint32_t node)
{
    ext_buf e = { NULL, 0, 0, 0 };
    ext_u8(&e, 131);
    ext_tuple(&e, 2);
    ext_part(&cx->names, &e, cx->atoms[ATOM_NODEDOWN]);
    ext_part(&cx->names, &e, cx->names.node_atoms[node]);
    return deliver_built(cx, st, to, &e);
}

/* Appends the message of a monitor_nodes subscription with options `opts`
** (NODES_OPT_*) about `node` to st->procs[to]: {nodeup | nodedown, Node},
** or with options {nodeup | nodedown, Node, InfoList}, the list built as
** erts does (dist.c, send_nodes_mon_msg): [{nodedown_reason, Reason} |
** [{node_type, visible}]], each element present when asked for. */
int deliver_nodes_event(trans_ctx *cx, sys_state *st, int to, uint32_t opts,
                        int up, uint32_t node, part_id reason)
{
    ext_buf e = { NULL, 0, 0, 0 };
    part_id what = cx->atoms[up ? ATOM_NODEUP : ATOM_NODEDOWN];
    ext_u8(&e, 131);
    ext_tuple(&e, (opts & NODES_OPT_INFO) ? 3 : 2);
    ext_part(&cx->names, &e, what);
    ext_part(&cx->names, &e, cx->names.node_atoms[node]);
    if (opts & NODES_OPT_INFO) {
        int with_reason = !up && (opts & NODES_OPT_REASON);
        int with_type = (opts & NODES_OPT_TYPE) != 0;
        uint32_t n = (uint32_t)with_reason + (uint32_t)with_type;
        if (n > 0) {
            ext_u8(&e, 108);                /* LIST_EXT */
            ext_u32(&e, n);
            if (with_reason) {
                ext_tuple(&e, 2);
                ext_part(&cx->names, &e, cx->atoms[ATOM_NODEDOWN_REASON]);
                ext_part(&cx->names, &e, reason);
            }
            if (with_type) {
                ext_tuple(&e, 2);
                ext_part(&cx->names, &e, cx->atoms[ATOM_NODE_TYPE]);
                ext_part(&cx->names, &e, cx->atoms[ATOM_VISIBLE]);
            }
        }
        ext_u8(&e, 106);                    /* NIL_EXT */
    }
    return deliver_built(cx, st, to, &e);
}

/* Removes process `pid`, which ends with `reason`: its linked processes
** get exit signals, its watchers 'DOWN' messages (through the ether when
** they are routed there), the monitors it held are dropped, and so are
** its node monitors. */
static int process_dies(trans_ctx *cx, sys_state *st, uint32_t pid,
                        part_id reason, signal_queue *sq)
{
    int i = sys_state_find(st, pid);
    if (i < 0)
        return 0;
    proc gone = st->procs[i];
    if (gone.name != 0)
        trans_name_freed(cx, st, i);
    st->procs[i].links = NULL;          /* ownership moves to `gone` */
    st->procs[i].mons.m = st->procs[i].monby.m = st->procs[i].aliases.m = NULL;
    sys_state_remove(st, (uint32_t)i);
    int err = 0;
    for (uint32_t k = 0; k < gone.nlinks && !err; k++) {
        uint32_t other = gone.links[k];
        int j = sys_state_find(st, other);
        if (j < 0)
            continue;
        if (ether_routed(cx, pid, other)) {
            if (ether_reachable(st, KEY_NODE(pid), KEY_NODE(other)))
                err = ether_enqueue(cx, st, pid, other, 0, SIG_EXIT, reason, SIGF_LINK, 0);
            continue;
        }
        proc_link_remove(&st->procs[j], pid);
        err = queue_signal(sq, (exit_signal){ pid, other, reason, 0 });
    }
    for (uint32_t k = 0; k < gone.mons.n && !err; k++) {
        int j = sys_state_find(st, gone.mons.m[k].pid);
        if (j >= 0)
            monitor_remove(&st->procs[j].monby, gone.mons.m[k].ref, NULL);
    }
    for (uint32_t k = 0; k < gone.monby.n && !err; k++) {
        monitor m = gone.monby.m[k];
        int j = sys_state_find(st, m.pid);
        if (j < 0)
            continue;
        /* The guard of monitors taken as safe (por.h, rule 11). */
        if (st->procs[j].flags & PF_MON_ARMED)
            cx->monitor_race = 1;
        if (ether_routed(cx, pid, m.pid)) {
            if (ether_reachable(st, KEY_NODE(pid), KEY_NODE(m.pid)))
                err = ether_enqueue(cx, st, pid, m.pid, 0, SIG_DOWN, m.ref, m.item, reason);
            continue;
        }
        monitor held;
        if (monitor_remove(&st->procs[j].mons, m.ref, &held))
            err = deliver_down(cx, st, j, held, reason);
    }
    for (uint32_t k = st->nnodemons; k-- > 0;)
        if (st->nodemons[k].pid == pid) {
            memmove(&st->nodemons[k], &st->nodemons[k + 1],
                    (st->nnodemons - k - 1) * sizeof *st->nodemons);
            st->nnodemons--;
        }
    /* Its tables go to their heir ({'ETS-TRANSFER', Tab, Pid, HeirData})
    ** or are deleted. */
    for (uint32_t k = st->ntables; k-- > 0 && !err;) {
        ets_table *t = &st->tables[k];
        if (t->owner != pid)
            continue;
        int h = t->heir != 0 && t->heir != pid ? sys_state_find(st, t->heir) : -1;
        if (h < 0) {
            sys_state_remove_table(st, k);
            continue;
        }
        ext_buf e = { NULL, 0, 0, 0 };
        ext_u8(&e, 131);
        ext_tuple(&e, 4);
        ext_part(&cx->names, &e, cx->atoms[ATOM_ETS_TRANSFER]);
        if (t->name != 0)
            ext_part(&cx->names, &e, t->name);
        else
            ext_ref_marked(&cx->names, &e, t->tid, ETF_REF_TID_MARK);
        ext_pid(&cx->names, &e, pid);
        if (t->heir_data != 0)
            ext_part(&cx->names, &e, t->heir_data);
        else
            ext_atom(&e, "undefined");
        /* OTP keeps the heir (and its data): a table given away again
        ** comes back to it when the new owner dies. */
        t->owner = t->heir;
        err = deliver_built(cx, st, h, &e);
    }
    /* Timers aimed at a pid are cancelled when it dies. */
    for (uint32_t k = st->nchans; k-- > 0;)
        if ((st->chans[k].from & KEY_TIMER) && st->chans[k].to == pid)
            sys_state_remove_channel(st, k);
    proc_free(&gone);
    return err;
}

/* Remembers a death by exit signal for the driver to judge: the policy
** of which reasons are normal (treat_as_normal, funs included) lives in
** Erlang. */
static int record_death(trans_ctx *cx, uint32_t pid, part_id reason)
{
    if (cx->ndeaths == cx->capdeaths) {
        size_t cap = cx->capdeaths ? 2 * cx->capdeaths : 4;
        death *grown = realloc(cx->deaths, cap * sizeof *grown);
        if (grown == NULL)
            return -1;
        cx->deaths = grown;
        cx->capdeaths = cap;
    }
    cx->deaths[cx->ndeaths++] = (death){ pid, reason };
    return 0;
}

/* Delivers the queued exit signals, and those they cause, as OTP does: an
** untrappable kill kills with reason killed; a trapping process gets an
** 'EXIT' message; normal is otherwise ignored; any other reason kills. */
int deliver_signals(trans_ctx *cx, sys_state *st, signal_queue *sq)
{
    for (size_t k = 0; k < sq->n; k++) {
        exit_signal sig = sq->q[k];
        int q = sys_state_find(st, sig.to);
        if (q < 0)
            continue;
        int err = 0;
        part_id dies = 0;
        if (sig.untrappable)
            dies = cx->atoms[ATOM_KILLED];
        else if (st->procs[q].flags & PF_TRAP_EXIT)
            err = deliver_exit_message(cx, st, q, sig.from, sig.reason);
        else if (sig.reason == cx->atoms[ATOM_NORMAL])
            err = 0;
        else
            dies = sig.reason;
        if (dies != 0)
            err = record_death(cx, sig.to, dies) != 0 ||
                  process_dies(cx, st, sig.to, dies, sq) != 0;
        if (err)
            return -1;
    }
    sq->n = 0;
    return 0;
}

/* An exit signal that acts at once on `to` (a local link exit, or
** noconnection raised by the receiver's own node). */
int signal_now(trans_ctx *cx, sys_state *st, signal_queue *sq,
               exit_signal sig)
{
    return queue_signal(sq, sig) != 0 || deliver_signals(cx, st, sq) != 0 ? -1 : 0;
}

/* A message sent to alias ref arrives at st->procs[q], if the alias is
** still active there; a reply alias is then used up. */
int deliver_via_alias(sys_state *st, int q, uint32_t ref, part_id msg)
{
    proc *p = &st->procs[q];
    for (uint32_t k = 0; k < p->aliases.n; k++) {
        if (p->aliases.m[k].ref != ref)
            continue;
        uint32_t mode = p->aliases.m[k].pid;
        if (mode == ALIAS_REPLY || mode == ALIAS_REPLY_DEMONITOR)
            monitor_remove(&p->aliases, ref, NULL);
        if (mode == ALIAS_REPLY_DEMONITOR) {
            monitor held;
            if (monitor_remove(&p->mons, ref, &held)) {
                int t = sys_state_find(st, held.pid);
                if (t >= 0)
                    monitor_remove(&st->procs[t].monby, ref, NULL);
                disarm_if_unwatching(p);
            }
        }
        if (sys_state_append(st, (uint32_t)q, msg) != 0)
            return -1;
        return 0;
    }
    return 0;
}

/* timeouts_when_idle: a receive timeout fired after `elapsed` ms of an
** idle system, so every other pending receive timeout has that much less
** time left (the one that fired has started anew, or ended). */
static void pass_time(sys_state *st, uint32_t fired, uint32_t elapsed)
{
    for (size_t k = 0; k < st->nprocs; k++) {
        proc *q = &st->procs[k];
        if (q->pid == fired || q->status != PROC_WAITING || !(q->flags & PF_TIMEOUT) ||
            (q->flags & PF_TIMEOUT_ZERO))
            continue;
        uint32_t left = q->flags >> PF_TIMEOUT_SHIFT;
        left = left > elapsed ? left - elapsed : 0;
        q->flags = (q->flags & ((1u << PF_TIMEOUT_SHIFT) - 1)) | (left << PF_TIMEOUT_SHIFT);
    }
}

/* Was `pid` spawned by the step being applied?  A spawn_monitor's monitor
** of it travels with the spawn request (one atomic operation in OTP), so
** it is set up at once; a monitor made after a plain spawn is a signal of
** its own, which may arrive after the new process has ended (noproc). */
static int spawned_now(const trans_ctx *cx, uint32_t pid)
{
    for (size_t k = 0; k < cx->nallocated; k++)
        if (cx->allocated[k] == pid)
            return 1;
    return 0;
}

static int apply_effects(trans_ctx *cx, sys_state *st, uint32_t me,
                         run_result *res, signal_queue *sq)
{
    uint32_t mynode = KEY_NODE(me);
    for (size_t e = 0; e < res->neffects; e++) {
        effect *ef = &res->effects[e];
        int self = sys_state_find(st, me);
        if (self < 0)
            return 0;       /* killed by its own earlier effects */
        part_id term = 0, term2 = 0;
        if (ef->term.etf != NULL && (term = transition_intern_term(cx, &ef->term)) == 0)
            return -1;
        if (ef->term2.etf != NULL && (term2 = transition_intern_term(cx, &ef->term2)) == 0)
            return -1;
        part_id term3 = 0;
        if (ef->term3.etf != NULL && (term3 = transition_intern_term(cx, &ef->term3)) == 0)
            return -1;
        uint32_t target = ef->pid, tnode = KEY_NODE(target);
        if (st->procs[self].flags & PF_MON_ARMED) {
            uint32_t reached = reached_by(st, ef, term2, mynode);
            if (reached != 0)
                disarm_toward(&st->procs[self], reached);
        }
        int q = sys_state_find(st, target);
        int reach = ether_reachable(st, mynode, tnode);
        if ((ef->kind == EFFECT_SEND || ef->kind == EFFECT_SEND_NAME ||
             ef->kind == EFFECT_ETS_PUT ||
             ef->kind == EFFECT_SPAWN || ef->kind == EFFECT_LINK ||
             ef->kind == EFFECT_UNLINK || ef->kind == EFFECT_EXIT ||
             ef->kind == EFFECT_REGISTER || ef->kind == EFFECT_MONITOR ||
             ef->kind == EFFECT_TIMER) && tnode >= cx->names.nodes.n)
            return -1;
        switch (ef->kind) {
        case EFFECT_SPAWN: {
            if (q >= 0 || term == 0 || KEY_NUM(target) == KEY_BY_NAME)
                return -1;
            if (!reach) {       /* the node is down: no process */
                if (ef->link &&
                    signal_now(cx, st, sq, (exit_signal){ target, me,
                                                         cx->atoms[ATOM_NOCONNECTION], 0 }) != 0)
                    return -1;
                break;
            }
            /* erlang(3): a spawned process, remote too, gets its parent's
            ** group leader. */
            proc child = { .pid = target, .status = PROC_INIT, .cont = term,
                           .mailbox = cx->empty_mailbox, .gl = st->procs[self].gl };
            if (ef->link && proc_link_add(&child, me) != 0)
                return -1;
            if (sys_state_insert(st, &child) < 0) {
                free(child.links);
                return -1;
            }
            self = sys_state_find(st, me);
            if (ef->link && proc_link_add(&st->procs[self], target) != 0)
                return -1;
            break;
        }
        case EFFECT_SEND: {
            if (term == 0)
                return -1;
            if (q < 0 || !reach)
                break;              /* to a dead process: a no-op */
            if (ether_routed(cx, me, target)) {
                if (ether_enqueue(cx, st, me, target, 0, SIG_MSG, term, 0, 0) != 0)
                    return -1;
                break;
            }
            if (sys_state_append(st, (uint32_t)q, term) != 0)
                return -1;
            break;
        }
        case EFFECT_SEND_NAME: {
            if (term == 0 || term2 == 0 || KEY_NUM(target) != KEY_BY_NAME)
                return -1;
            if (!reach)
                break;
            if (tnode != mynode || cx->delivery_ether) {
                if (ether_enqueue(cx, st, me, target, term2, SIG_MSG, term, 0, 0) != 0)
                    return -1;
                break;
            }
            int r = sys_state_find_name(st, term2, tnode);
            if (r >= 0) {
                if (sys_state_append(st, (uint32_t)r, term) != 0)
                    return -1;
            }
            break;
        }
        case EFFECT_LINK:
            if (target == me)
                break;
            if (!reach) {
                if (signal_now(cx, st, sq, (exit_signal){ target, me,
                                                         cx->atoms[ATOM_NOCONNECTION], 0 }) != 0)
                    return -1;
                break;
            }
            if (ether_routed(cx, me, target)) {
                if (!has_link(&st->procs[self], target) &&
                    (proc_link_add(&st->procs[self], target) != 0 ||
                     ether_enqueue(cx, st, me, target, 0, SIG_LINK, 0, 0, 0) != 0))
                    return -1;
                break;
            }
            if (q >= 0 &&
                (proc_link_add(&st->procs[q], me) != 0 ||
                 proc_link_add(&st->procs[self], target) != 0))
                return -1;
            break;
        case EFFECT_UNLINK:
            if (!has_link(&st->procs[self], target))
                break;
            proc_link_remove(&st->procs[self], target);
            if (ether_routed(cx, me, target)) {
                if (q >= 0 && reach &&
                    ether_enqueue(cx, st, me, target, 0, SIG_UNLINK, 0, 0, 0) != 0)
                    return -1;
            } else if (q >= 0) {
                proc_link_remove(&st->procs[q], me);
            }
            break;
        case EFFECT_EXIT:
            if (term == 0)
                return -1;
            if (ether_routed(cx, me, target)) {
                if (q >= 0 && reach &&
                    ether_enqueue(cx, st, me, target, 0, SIG_EXIT, term,
                                  term == cx->atoms[ATOM_KILL] ? SIGF_KILL : 0, 0) != 0)
                    return -1;
                break;
            }
            if (signal_now(cx, st, sq, (exit_signal){ me, target, term,
                                                     term == cx->atoms[ATOM_KILL] }) != 0)
                return -1;
            break;
        case EFFECT_REGISTER:
            if (term == 0)
                return -1;
            if (q >= 0 && tnode == mynode && sys_state_find_name(st, term, mynode) < 0)
                st->procs[q].name = term;
            break;
        case EFFECT_UNREGISTER: {
            int r = term ? sys_state_find_name(st, term, mynode) : -1;
            if (r >= 0) {
                st->procs[r].name = 0;
                trans_name_freed(cx, st, r);
            }
            break;
        }
        case EFFECT_MONITOR: {
            monitor held = { ef->ref, target, term };
            if (!reach) {
                if (deliver_down(cx, st, self, held, cx->atoms[ATOM_NOCONNECTION]) != 0)
                    return -1;
                break;
            }
            if (KEY_NUM(target) == KEY_BY_NAME) {
                if (term2 == 0 || monitor_add(&st->procs[self].mons, held) != 0 ||
                    ether_enqueue(cx, st, me, target, term2, SIG_MONITOR, ef->ref, term, 0) != 0)
                    return -1;
                break;
            }
            if (ether_routed(cx, me, target) && !(ef->link && spawned_now(cx, target))) {
                if (monitor_add(&st->procs[self].mons, held) != 0 ||
                    ether_enqueue(cx, st, me, target, 0, SIG_MONITOR, ef->ref, term, 0) != 0)
                    return -1;
                break;
            }
            if (q < 0) {
                if (deliver_down(cx, st, self, held, cx->atoms[ATOM_NOPROC]) != 0)
                    return -1;
            } else if (target != me) {
                if (monitor_add(&st->procs[self].mons, held) != 0)
                    return -1;
                /* A spawn_monitor's target cannot have died before it. */
                if (!(ef->link && spawned_now(cx, target)))
                    st->procs[self].flags |= PF_MON_ARMED;
                q = sys_state_find(st, target);
                monitor on = { ef->ref, me, term };
                if (monitor_add(&st->procs[q].monby, on) != 0)
                    return -1;
            }
            break;
        }
        case EFFECT_DEMONITOR: {
            monitor held;
            if (monitor_remove(&st->procs[self].mons, ef->ref, &held)) {
                int t = sys_state_find(st, held.pid);
                if (t >= 0 && ether_routed(cx, me, held.pid)) {
                    if (ether_reachable(st, mynode, KEY_NODE(held.pid)) &&
                        ether_enqueue(cx, st, me, held.pid, 0, SIG_DEMONITOR, ef->ref, 0, 0) != 0)
                        return -1;
                } else if (t >= 0) {
                    monitor_remove(&st->procs[t].monby, ef->ref, NULL);
                }
            }
            drop_monitor_alias(&st->procs[self], ef->ref);
            /* Without the flush, a 'DOWN' noproc that a death before the
            ** monitor would have left stays in the mailbox: the guard. */
            if (!ef->link && (st->procs[self].flags & PF_MON_ARMED))
                cx->monitor_race = 1;
            disarm_if_unwatching(&st->procs[self]);
            if (ef->link && flush_down(cx, st, self, ef->ref) != 0)
                return -1;
            break;
        }
        case EFFECT_ALIAS:
            if (ef->link < ALIAS_EXPLICIT || ef->link > ALIAS_REPLY ||
                monitor_add(&st->procs[self].aliases,
                            (monitor){ ef->ref, (uint32_t)ef->link, 0 }) != 0)
                return -1;
            break;
        case EFFECT_UNALIAS:
            monitor_remove(&st->procs[self].aliases, ef->ref, NULL);
            break;
        case EFFECT_SEND_ALIAS: {
            if (term == 0)
                return -1;
            int owner = sys_state_find_alias(st, ef->ref);
            if (owner < 0 || !ether_reachable(st, mynode, KEY_NODE(st->procs[owner].pid)))
                break;          /* not an active alias: dropped, as in OTP */
            uint32_t to = st->procs[owner].pid;
            if (ether_routed(cx, me, to)) {
                if (ether_enqueue(cx, st, me, to, 0, SIG_ALIAS_MSG, term, ef->ref, 0) != 0)
                    return -1;
            } else if (deliver_via_alias(st, owner, ef->ref, term) != 0) {
                return -1;
            }
            break;
        }
        case EFFECT_TIMER: {
            if (term == 0 || KEY_NODE(ef->ref) != mynode ||
                (KEY_NUM(target) == KEY_BY_NAME && term2 == 0))
                return -1;
            if (KEY_NUM(target) != KEY_BY_NAME && q < 0)
                break;          /* aimed at a dead process: cancelled */
            if (ether_enqueue(cx, st, ef->ref | KEY_TIMER, target, term2, SIG_MSG,
                              term, (uint32_t)ef->link, 0) != 0)
                return -1;
            break;
        }
        case EFFECT_CANCEL_TIMER:
            for (uint32_t k = 0; k < st->nchans; k++)
                if (st->chans[k].from == (ef->ref | KEY_TIMER)) {
                    sys_state_remove_channel(st, k);
                    break;
                }
            break;
        case EFFECT_KEEP_MESSAGE:
            break;
        case EFFECT_UNIQUE:
            if (ef->ref > st->uniq)
                st->uniq = ef->ref;
            break;
        case EFFECT_ETS_PUT: {
            if (term == 0 || KEY_NODE(ef->ref) != mynode || ef->link < 0)
                return -1;
            ets_table t = { ef->ref, target, (uint32_t)ef->link, term3, term2, term };
            if (sys_state_find(st, target) < 0)
                break;          /* the owner is gone: so is the table */
            if (sys_state_put_table(st, &t) != 0)
                return -1;
            break;
        }
        case EFFECT_HALT:
            /* The running process goes with its node: the effects after
            ** this one are dropped by the check at the loop's head. */
            if (ether_node_down(cx, st, mynode, sq) != 0)
                return -1;
            break;
        case EFFECT_APP_ENV:
            if (term == 0)
                return -1;
            st->app_env = term;
            break;
        case EFFECT_ETS_DELETE: {
            int t = sys_state_find_table(st, ef->ref);
            if (t >= 0)
                sys_state_remove_table(st, (uint32_t)t);
            break;
        }
        case EFFECT_MONITOR_NODE:
            if (target & NODEMON_ALL) {
                /* net_kernel:monitor_nodes(Flag, Options): one more (or one
                ** less) subscription with these options. */
                if ((target & ~(NODEMON_ALL | NODES_OPT_MASK)) != 0 ||
                    sys_state_node_monitor(st, me, target, ef->link ? 1 : -1) != 0)
                    return -1;
                break;
            }
            if (target >= cx->names.nodes.n)
                return -1;
            if (!ef->link) {
                if (sys_state_node_monitor(st, me, target, -1) != 0)
                    return -1;
            } else if (!ether_reachable(st, mynode, target)) {
                if (deliver_nodedown(cx, st, self, target) != 0)
                    return -1;
            } else if (target != mynode &&
                       sys_state_node_monitor(st, me, target, 1) != 0) {
                return -1;
            }
            break;
        case EFFECT_GROUP_LEADER:
            /* The runtime refused a dead target (badarg, as the VM). */
            if (q >= 0)
                st->procs[q].gl = ef->ref;
            break;
        case EFFECT_TRAP_EXIT:
            if (ef->link)
                st->procs[self].flags |= PF_TRAP_EXIT;
            else
                st->procs[self].flags &= ~(uint32_t)PF_TRAP_EXIT;
            break;
        default:
            return -1;
        }
    }
    return 0;
}

/* The body of a REQ_RUN's answer, without the search: removes the message
** received (unless the step kept it), applies the effects, then records
** the process's new continuation or its death. */
int transition_run(trans_ctx *cx, sys_state *st, uint32_t pid,
                   enum run_kind run, uint32_t msg_index, uint32_t elapsed,
                   run_result *res, const char **why)
{
    *why = "out of memory";
    int self = sys_state_find(st, pid);
    if (self < 0) {
        *why = "running process vanished";
        return -1;
    }
    int keep = 0;
    for (size_t k = 0; k < res->neffects; k++)
        keep |= res->effects[k].kind == EFFECT_KEEP_MESSAGE;
    if (run == RUN_RECEIVE && !keep) {
        part_id mb = mailbox_remove(cx->ps, st->procs[self].mailbox, msg_index);
        if (mb == 0)
            return -1;
        st->procs[self].mailbox = mb;
    }
    signal_queue sq = { NULL, 0, 0 };
    if (apply_effects(cx, st, pid, res, &sq) != 0) {
        free(sq.q);
        *why = "malformed effects (bad term or pid)";
        return -1;
    }
    self = sys_state_find(st, pid);
    if (self < 0) {
        /* Killed by its own effects (exit/2 to a linked process that
        ** propagated back): nothing more to record. */
    } else if (res->outcome == OUTCOME_WAIT || res->outcome == OUTCOME_CHOICE) {
        part_id cont = transition_intern_term(cx, &res->cont);
        part_id dict = res->dict.etf ? transition_intern_term(cx, &res->dict) : 0;
        if (cont == 0 || (res->dict.etf && dict == 0)) {
            free(sq.q);
            *why = "continuation is not an encodable term";
            return -1;
        }
        uint32_t keep = (st->procs[self].flags & (PF_TRAP_EXIT | PF_TARGET | PF_GUARD_MARKS)) |
                        (res->target ? PF_TARGET : 0);
        if (res->outcome == OUTCOME_CHOICE) {
            if (res->alternatives == 0 || res->alternatives > 0xffff) {
                free(sq.q);
                *why = "a choice needs 1 to 65535 alternatives";
                return -1;
            }
            st->procs[self].status = PROC_CHOICE;
            st->procs[self].flags = keep | (res->alternatives << PF_CHOICE_SHIFT);
        } else {
            st->procs[self].status = PROC_WAITING;
            st->procs[self].flags = keep | (res->has_timeout ? PF_TIMEOUT : 0) |
                                    (res->has_timeout >= 2 ? PF_TIMEOUT_ZERO : 0) |
                                    (res->has_timeout == 3 ? PF_POLL : 0) |
                                    (res->idle ? PF_IDLE : 0) |
                                    (cx->timeouts_when_idle && res->has_timeout == 1
                                     ? res->timeout_ms << PF_TIMEOUT_SHIFT : 0);
        }
        st->procs[self].cont = cont;
        st->procs[self].dict = dict;
    } else {
        part_id reason = res->reason.etf ? transition_intern_term(cx, &res->reason)
                         : cx->atoms[res->normal ? ATOM_NORMAL : ATOM_KILLED];
        if (reason == 0 || process_dies(cx, st, pid, reason, &sq) != 0 ||
            deliver_signals(cx, st, &sq) != 0) {
            free(sq.q);
            return -1;
        }
    }
    free(sq.q);
    if (elapsed > 0)
        pass_time(st, pid, elapsed);
    return 0;
}
