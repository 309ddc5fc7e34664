/*
** ether.c: signals in transit (see ether.h for the invariant it keeps).
*/
#include "ether.h"

#include <string.h>

/* Signals from `from` to `to` travel through the ether: between nodes
** always, inside a node with delivery => ether; a process's signals to
** itself never do. */
int ether_routed(const trans_ctx *cx, uint32_t from, uint32_t to)
{
    return from != to &&
           (KEY_NODE(from) != KEY_NODE(to) || cx->delivery_ether);
}

/* Node b can be reached from node a: both are up and connected. */
int ether_reachable(const sys_state *st, uint32_t a, uint32_t b)
{
    if (a >= 64 || b >= 64 || (st->down >> a & 1) || (st->down >> b & 1))
        return 0;
    return a == b || !sys_state_disconnected(st, a, b);
}

int ether_enqueue(trans_ctx *cx, sys_state *st, uint32_t from, uint32_t to,
                  part_id name, uint32_t kind, uint32_t a, uint32_t b,
                  uint32_t c)
{
    part_id sig = signal_intern(cx->ps, kind, a, b, c);
    if (cx->node_pair && !(from & KEY_TIMER) && KEY_NODE(from) != KEY_NODE(to))
        return sys_state_enqueue(cx->ps, st, MAKE_KEY(KEY_NODE(from), KEY_NODE_CHAN),
                                 MAKE_KEY(KEY_NODE(to), KEY_NODE_CHAN), 0,
                                 envelope_intern(cx->ps, from, to, name, sig));
    return sys_state_enqueue(cx->ps, st, from, to, name, sig);
}

/* The head signal of a channel, with the ends it travels between: a
** node-pair channel's envelope gives them. */
static int channel_head(const part_store *ps, channel *c, uint32_t sig[4])
{
    part_id id = mailbox_at(ps, c->queue, 0);
    if (KEY_NUM(c->from) == KEY_NODE_CHAN && !(c->from & KEY_TIMER)) {
        uint32_t env[4];
        if (envelope_get(ps, id, env) != 0)
            return -1;
        c->from = env[0];
        c->to = env[1];
        c->name = env[2];
        id = env[3];
    }
    return signal_get(ps, id, sig);
}

int ether_timer_can_fire(const trans_ctx *cx, const sys_state *st, uint32_t ci)
{
    if (!cx->timers_bounded)
        return 1;
    channel c = st->chans[ci];
    uint32_t sig[4];
    if (channel_head(cx->ps, &c, sig) != 0)
        return 1;       /* not a timer's signal: the delivery reports it */
    return sig[2] == 0 || sig[2] < cx->timers_never_from;
}

/*
** Transitions computed here, without Erlang: delivering the oldest signal
** of an ether channel, and injecting a fault.  Each builds its own label
** ({'$mce_deliver', From, To, Signal} or {'$mce_fault', Fault}).
*/

/* Delivers the head signal of channel ci of st. */
int ether_deliver(trans_ctx *cx, sys_state *st, uint32_t ci, ext_buf *lb,
                  signal_queue *sq)
{
    channel c = st->chans[ci];
    uint32_t sig[4];
    if (channel_head(cx->ps, &c, sig) != 0 || sys_state_dequeue(cx->ps, st, ci) != 0)
        return -1;
    int q = KEY_NUM(c.to) == KEY_BY_NAME
                ? sys_state_find_name(st, c.name, KEY_NODE(c.to))
                : sys_state_find(st, c.to);
    uint32_t to = q >= 0 ? st->procs[q].pid : c.to;
    ext_tuple(lb, 4);
    if (c.from & KEY_TIMER) {
        ext_atom(lb, "$mce_timer");
        ext_ref(&cx->names, lb, c.from & ~KEY_TIMER);
    } else {
        ext_atom(lb, "$mce_deliver");
        ext_target(&cx->names, lb, c.from, KEY_NUM(c.from) == KEY_BY_NAME ? c.name : 0);
    }
    ext_target(&cx->names, lb, c.to, c.name);
    switch (sig[0]) {
    case SIG_ALIAS_MSG:
        ext_tuple(lb, 2);
        ext_atom(lb, "message");
        ext_part(&cx->names, lb, sig[1]);
        return q >= 0 ? deliver_via_alias(st, q, sig[2], sig[1]) : 0;
    case SIG_MSG:
        ext_tuple(lb, 2);
        ext_atom(lb, "message");
        ext_part(&cx->names, lb, sig[1]);
        if (q >= 0) {
            if (sys_state_append(st, (uint32_t)q, sig[1]) != 0)
                return -1;
        }
        return 0;
    case SIG_EXIT:
        ext_tuple(lb, 2);
        ext_atom(lb, (sig[2] & SIGF_LINK) ? "link_exit" : "exit");
        ext_part(&cx->names, lb, sig[1]);
        if (q < 0)
            return 0;
        if (sig[2] & SIGF_LINK) {
            if (!has_link(&st->procs[q], c.from))
                return 0;       /* unlinked meanwhile: ignored, as in OTP */
            proc_link_remove(&st->procs[q], c.from);
        }
        return signal_now(cx, st, sq, (exit_signal){ c.from, to, sig[1],
                                                    (sig[2] & SIGF_KILL) != 0 });
    case SIG_LINK:
        ext_atom(lb, "link");
        if (q >= 0)
            return proc_link_add(&st->procs[q], c.from);
        return ether_enqueue(cx, st, c.to, c.from, 0, SIG_EXIT,
                             cx->atoms[ATOM_NOPROC], SIGF_LINK, 0);
    case SIG_UNLINK:
        ext_atom(lb, "unlink");
        if (q >= 0)
            proc_link_remove(&st->procs[q], c.from);
        return 0;
    case SIG_MONITOR: {
        ext_tuple(lb, 2);
        ext_atom(lb, "monitor");
        ext_ref(&cx->names, lb, sig[1]);
        int h = sys_state_find(st, c.from);
        if (h < 0 || !holds_monitor(&st->procs[h], sig[1]))
            return 0;           /* demonitored, or the watcher died */
        if (q < 0)
            return ether_enqueue(cx, st, c.to, c.from, c.name, SIG_DOWN, sig[1],
                                 sig[2], cx->atoms[ATOM_NOPROC]);
        for (uint32_t k = 0; k < st->procs[h].mons.n; k++)
            if (st->procs[h].mons.m[k].ref == sig[1])
                st->procs[h].mons.m[k].pid = to;    /* a name is resolved */
        return monitor_add(&st->procs[q].monby, (monitor){ sig[1], c.from, sig[2] });
    }
    case SIG_DEMONITOR:
        ext_tuple(lb, 2);
        ext_atom(lb, "demonitor");
        ext_ref(&cx->names, lb, sig[1]);
        if (q >= 0)
            monitor_remove(&st->procs[q].monby, sig[1], NULL);
        return 0;
    case SIG_DOWN: {
        ext_tuple(lb, 3);
        ext_atom(lb, "down");
        ext_ref(&cx->names, lb, sig[1]);
        ext_part(&cx->names, lb, sig[3]);
        monitor held;
        if (q >= 0 && monitor_remove(&st->procs[q].mons, sig[1], &held))
            return deliver_down(cx, st, q, held, sig[3]);
        return 0;
    }
    }
    return -1;
}


/* The idx-th fault the options allow in st, in a fixed order; 0: none.
** Only the targets the options name: crash_nodes, disconnect_pairs, and
** for kill the processes marked PF_TARGET (or, with no targets named,
** any process but the entry). */
int ether_nth_fault(const trans_ctx *cx, const sys_state *st, uint32_t idx,
                    fault *out)
{
    uint32_t n = cx->names.nodes.n;
    if (st->crashes < cx->max_crashes)
        for (uint32_t a = 0; a < n; a++)
            if (!(st->down >> a & 1) && (cx->crash_nodes >> a & 1) && idx-- == 0) {
                *out = (fault){ FAULT_CRASH, a, 0 };
                return 1;
            }
    if (st->disconnects < cx->max_disconnects)
        for (uint32_t a = 0; a < n; a++)
            for (uint32_t b = a + 1; b < n; b++)
                if (ether_reachable(st, a, b) && (cx->disconnect_pairs[a] >> b & 1) &&
                    idx-- == 0) {
                    *out = (fault){ FAULT_DISCONNECT, a, b };
                    return 1;
                }
    for (uint32_t k = 0; k < st->ndisc; k++)
        if (idx-- == 0) {
            *out = (fault){ FAULT_RECONNECT, st->disc[k] >> 8, st->disc[k] & 0xff };
            return 1;
        }
    if (st->kills < cx->max_kills)
        for (uint32_t k = 0; k < st->nprocs; k++)
            if ((cx->kill_targeted ? (st->procs[k].flags & PF_TARGET) != 0
                                   : st->procs[k].pid != cx->entry_pid) &&
                idx-- == 0) {
                *out = (fault){ FAULT_KILL, st->procs[k].pid, 0 };
                return 1;
            }
    return 0;
}

/* Nodes x and y lose sight of each other when a node crashes (cut(n, n):
** n against every other node) or two nodes disconnect (cut(a, b)). */
static int cut(uint32_t a, uint32_t b, uint32_t x, uint32_t y)
{
    if (a == b)
        return x != y && (x == a || y == a);
    return (x == a && y == b) || (x == b && y == a);
}

/* What the surviving side sees when nodes a and b lose each other (or node
** a crashes, a == b): links across give noconnection exit signals,
** monitors across 'DOWN' with noconnection, node monitors {nodedown, N};
** signals in transit across are lost. */
static int sever(trans_ctx *cx, sys_state *st, uint32_t a, uint32_t b,
                 signal_queue *sq)
{
    for (uint32_t i = 0; i < st->nprocs; i++) {
        proc *p = &st->procs[i];
        uint32_t pn = KEY_NODE(p->pid);
        for (uint32_t k = p->nlinks; k-- > 0;) {
            uint32_t other = p->links[k];
            if (!cut(a, b, pn, KEY_NODE(other)))
                continue;
            proc_link_remove(p, other);
            if (queue_signal(sq, (exit_signal){ other, p->pid,
                                                cx->atoms[ATOM_NOCONNECTION], 0 }) != 0)
                return -1;
        }
        for (uint32_t k = p->monby.n; k-- > 0;)
            if (cut(a, b, pn, KEY_NODE(p->monby.m[k].pid)))
                monitor_remove(&p->monby, p->monby.m[k].ref, NULL);
        for (uint32_t k = p->mons.n; k-- > 0;) {
            monitor m = p->mons.m[k];
            if (!cut(a, b, pn, KEY_NODE(m.pid)))
                continue;
            monitor_remove(&p->mons, m.ref, NULL);
            if (deliver_down(cx, st, (int)i, m, cx->atoms[ATOM_NOCONNECTION]) != 0)
                return -1;
            p = &st->procs[i];
        }
    }
    for (uint32_t k = st->nnodemons; k-- > 0;) {
        node_monitor nm = st->nodemons[k];
        /* monitor_nodes subscriptions stay (nodes_event told them). */
        if ((nm.node & NODEMON_ALL) || !cut(a, b, KEY_NODE(nm.pid), nm.node))
            continue;
        int w = sys_state_find(st, nm.pid);
        for (uint32_t c = 0; w >= 0 && c < nm.count; c++)
            if (deliver_nodedown(cx, st, w, nm.node) != 0)
                return -1;
        memmove(&st->nodemons[k], &st->nodemons[k + 1],
                (st->nnodemons - k - 1) * sizeof *st->nodemons);
        st->nnodemons--;
    }
    for (uint32_t k = st->nchans; k-- > 0;)
        if (cut(a, b, KEY_NODE(st->chans[k].from), KEY_NODE(st->chans[k].to)))
            sys_state_remove_channel(st, k);
    return deliver_signals(cx, st, sq);
}

/* The net_kernel:monitor_nodes subscribers whose node sees another come
** or go: a == b, node a crashes (seen by the nodes that reached it);
** otherwise a and b lose each other (down, while they still reach each
** other) or reconnect (up, once they do).  Each subscription gets its
** message; the subscriptions stay.  Called before the state changes for
** a loss, after it for a reconnection. */
static int nodes_event(trans_ctx *cx, sys_state *st, uint32_t a, uint32_t b,
                       int up, part_id reason)
{
    if (a != b && !ether_reachable(st, a, b))
        return 0;
    for (uint32_t k = 0; k < st->nnodemons; k++) {
        node_monitor nm = st->nodemons[k];
        if (!(nm.node & NODEMON_ALL) || (nm.node & NODES_OPT_HIDDEN_ONLY))
            continue;
        uint32_t pn = KEY_NODE(nm.pid), other;
        if (a == b) {
            if (pn == a || !ether_reachable(st, pn, a))
                continue;
            other = a;
        } else if (pn == a) {
            other = b;
        } else if (pn == b) {
            other = a;
        } else {
            continue;
        }
        int w = sys_state_find(st, nm.pid);
        for (uint32_t c = 0; w >= 0 && c < nm.count; c++)
            if (deliver_nodes_event(cx, st, w, nm.node & NODES_OPT_MASK, up, other,
                                    reason) != 0)
                return -1;
    }
    return 0;
}

/* Node a stops (a crash, or halt/0 in its code): its processes, tables
** and channels vanish and the survivors see it go. */
int ether_node_down(trans_ctx *cx, sys_state *st, uint32_t a, signal_queue *sq)
{
    if (nodes_event(cx, st, a, a, 0, cx->atoms[ATOM_CONNECTION_CLOSED]) != 0)
        return -1;
    st->down |= (uint64_t)1 << a;
    for (uint32_t k = st->nchans; k-- > 0;)
        if (KEY_NODE(st->chans[k].from) == a || KEY_NODE(st->chans[k].to) == a)
            sys_state_remove_channel(st, k);
    for (uint32_t k = st->ntables; k-- > 0;)
        if (KEY_NODE(st->tables[k].tid) == a)
            sys_state_remove_table(st, k);
    for (uint32_t k = st->nprocs; k-- > 0;)
        if (KEY_NODE(st->procs[k].pid) == a) {
            if (st->procs[k].name != 0)
                trans_name_freed(cx, st, (int)k);
            sys_state_remove(st, k);
        }
    for (uint32_t k = st->nnodemons; k-- > 0;)
        if (KEY_NODE(st->nodemons[k].pid) == a) {
            memmove(&st->nodemons[k], &st->nodemons[k + 1],
                    (st->nnodemons - k - 1) * sizeof *st->nodemons);
            st->nnodemons--;
        }
    for (uint32_t k = st->ndisc; k-- > 0;)
        if (st->disc[k] >> 8 == a || (st->disc[k] & 0xff) == a)
            sys_state_set_disconnected(st, st->disc[k] >> 8, st->disc[k] & 0xff, 0);
    return sever(cx, st, a, a, sq);
}

int ether_apply_fault(trans_ctx *cx, sys_state *st, const fault *f,
                      ext_buf *lb, signal_queue *sq)
{
    ext_tuple(lb, 2);
    ext_atom(lb, "$mce_fault");
    switch (f->kind) {
    case FAULT_CRASH:
        ext_tuple(lb, 2);
        ext_atom(lb, "crash_node");
        ext_node_atom(&cx->names, lb, f->a);
        st->crashes++;
        return ether_node_down(cx, st, f->a, sq);
    case FAULT_DISCONNECT:
        ext_tuple(lb, 3);
        ext_atom(lb, "disconnect");
        ext_node_atom(&cx->names, lb, f->a);
        ext_node_atom(&cx->names, lb, f->b);
        st->disconnects++;
        if (nodes_event(cx, st, f->a, f->b, 0, cx->atoms[ATOM_NET_TICK_TIMEOUT]) != 0 ||
            sys_state_set_disconnected(st, f->a, f->b, 1) != 0)
            return -1;
        return sever(cx, st, f->a, f->b, sq);
    case FAULT_RECONNECT:
        ext_tuple(lb, 3);
        ext_atom(lb, "reconnect");
        ext_node_atom(&cx->names, lb, f->a);
        ext_node_atom(&cx->names, lb, f->b);
        if (sys_state_set_disconnected(st, f->a, f->b, 0) != 0)
            return -1;
        return nodes_event(cx, st, f->a, f->b, 1, 0);
    case FAULT_KILL:
        ext_tuple(lb, 2);
        ext_atom(lb, "kill");
        ext_pid(&cx->names, lb, f->a);
        st->kills++;
        if (signal_now(cx, st, sq, (exit_signal){ f->a, f->a, cx->atoms[ATOM_KILL], 1 }) != 0)
            return -1;
        /* The victim's death is the fault the user asked for, not a
        ** violation; those it takes along through links are judged. */
        if (cx->ndeaths > 0 && cx->deaths[0].pid == f->a)
            memmove(&cx->deaths[0], &cx->deaths[1], --cx->ndeaths * sizeof *cx->deaths);
        return 0;
    }
    return -1;
}
