/*
** ether.h: signals in transit between processes, and the faults that
** break their way (crashing a node, disconnecting and reconnecting two,
** killing a process).  A signal from A to B is routed through the ether
** when A and B are on different nodes (or delivery => ether); it waits in
** the channel of (A, B) (of their two nodes, with node_pair ordering) and
** a transition of its own delivers the channel's oldest signal.  Pending
** timers (erlang:send_after, start_timer) are channels too, keyed by their
** ref: firing one is that channel's delivery, so they live here rather
** than with the receive timeouts of transition.c.
**
** Invariant: a channel delivers its signals in the order they were sent
** and is never empty (sys_state.h).  A signal is enqueued only between
** nodes that can reach each other (senders check ether_reachable; a timer
** is set on its setter's own node), and a fault drops every signal in
** transit across the cut it makes, so a crashed node's signals vanish
** with it.
*/
#ifndef MCE_ETHER_H
#define MCE_ETHER_H

#include <stdint.h>

#include "etf_build.h"
#include "sys_state.h"
#include "transition.h"

/* Signals from `from` to `to` travel through the ether: between nodes
** always, inside a node with delivery => ether; a process's signals to
** itself never do. */
int ether_routed(const trans_ctx *cx, uint32_t from, uint32_t to);
/* Node b can be reached from node a: both are up and connected. */
int ether_reachable(const sys_state *st, uint32_t a, uint32_t b);
/* Appends signal (kind, a, b, c) to the channel from `from` to `to`. */
int ether_enqueue(trans_ctx *cx, sys_state *st, uint32_t from, uint32_t to,
                  part_id name, uint32_t kind, uint32_t a, uint32_t b,
                  uint32_t c);
/* Timer channel ci of st may fire: under timeouts => {infinite_above, Ms}
** a timer of at least Ms ms (more than 0) never does.  A function of the
** state, so the bound splits no state. */
int ether_timer_can_fire(const trans_ctx *cx, const sys_state *st, uint32_t ci);
/* Delivers the head signal of channel ci of st; writes the transition's
** label ({'$mce_deliver', From, To, Signal} or {'$mce_timer', ...}) to lb. */
int ether_deliver(trans_ctx *cx, sys_state *st, uint32_t ci, ext_buf *lb,
                  signal_queue *sq);

enum fault_kind { FAULT_CRASH = 1, FAULT_DISCONNECT, FAULT_RECONNECT, FAULT_KILL };

typedef struct fault {
    enum fault_kind kind;
    uint32_t a, b;          /* nodes, or a: the pid to kill */
} fault;

/* The idx-th fault the options allow in st, in a fixed order; 0: none. */
int ether_nth_fault(const trans_ctx *cx, const sys_state *st, uint32_t idx,
                    fault *out);
/* Injects fault f into st; writes the label ({'$mce_fault', Fault}). */
int ether_apply_fault(trans_ctx *cx, sys_state *st, const fault *f,
                      ext_buf *lb, signal_queue *sq);
/* Node a stops (a crash, or halt/0 in its code). */
int ether_node_down(trans_ctx *cx, sys_state *st, uint32_t a,
                    signal_queue *sq);

#endif
