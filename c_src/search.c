/*
** search.c: in which order transitions are explored, and the request
** protocol with Erlang.  Owns the DFS stack (or the BFS node list), the
** visited set's use, the state being expanded and the
** outstanding request; what a transition does to a state is transition.c's
** and ether.c's, through the context `tx` (search_internal.h).  With a
** lossy visited table (visited.h) each stack frame owns its state's root
** vector.
**
** Invariant: a frame's cursor (next_proc, msg_idx, fault_idx, phase) names
** the next transition of its state in one fixed order (processes in pid
** order, with the reduction a rotation of it that starts at the process
** search_safe_first picks, then ether channels, then faults; with
** timeouts_when_idle the timeouts in a second phase), and every request
** leaves it past the transition it asked about, so resuming after any answer continues where
** the search stopped and each transition is taken once.  The enumeration
** of a state's transitions stays here, beside that cursor, because it is
** resumable across the match questions it asks Erlang.  With the
** reduction (por.h) a frame whose safe step led to a new state is
** `reduced`: its cursor stops there, and depth-first (`pass_cut`) its
** state is then passed through rather than kept: out of the counted
** states, new again when met again off the stack (with workers,
** `pool_pass`: once finished, search_pool.h).  What is safe and which
** successor stands for its orbit are search_reduce.c's decisions.
*/
#include "search.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "canon.h"
#include "ether.h"
#include "match_memo.h"
#include "por.h"
#include "search_cluster.h"
#include "search_internal.h"
#include "transition.h"

/* A new search; `first`: a breadth-first search made for workers whose
** pool (store, nodes, queue) this one shares, and whose interned node
** names and atoms it takes (the VM's encodings, which only the first was
** given). */
static search *search_create(const search_config *cfg, search *first)
{
    /* A distributed search's share: breadth-first, one worker
    ** (search_cluster.h). */
    if (cfg->cluster_n > 1 &&
        (!cfg->breadth_first || cfg->expand_only || cfg->workers > 1 ||
         cfg->cluster_me >= cfg->cluster_n))
        return NULL;
    /* Workers share a breadth-first search's pool (search_pool.h). */
    if (cfg->workers > 1 && (!cfg->breadth_first || cfg->expand_only))
        return NULL;
    search *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->cfg = *cfg;
    /* Monitors and invariants judge every state: a reduced expansion
    ** would hide states they read.  An expand-only search is never cut:
    ** with the reduction it only marks which successors come from a safe
    ** step (expansion.safe), and its caller (the LTL product) chooses. */
    if (cfg->observe)
        s->cfg.reduction = 0;
    /* Safe steps up to a renaming of pids: the guards that void them are
    ** this search's and, with workers, the pool's (search_pool_guard), not
    ** shared across a cluster; and a kill fault that spares the entry by
    ** its pid number would tell a renaming apart. */
    if (s->cfg.reduction == 2 &&
        (cfg->cluster_n > 1 || cfg->expand_only ||
         (cfg->max_kills > 0 && !cfg->kill_targeted)))
        s->cfg.reduction = 1;
    s->stack_proviso = s->cfg.reduction && !cfg->expand_only && !cfg->breadth_first;
    s->pass_cut = s->stack_proviso && cfg->pass_cut;
    s->pool_pass = cfg->reduction && cfg->pass_cut && cfg->breadth_first && cfg->workers > 1 &&
                   !cfg->expand_only && cfg->cluster_n <= 1;
    if (s->cfg.reduction && !cfg->expand_only && por_hint_init(&s->hint) != 0) {
        free(s);
        return NULL;
    }
    if (cfg->nnodes == 0) {
        s->cfg.nnodes = 1;
        s->cfg.node_names[0] = cfg->node;
        s->cfg.node_lens[0] = cfg->nodelen;
        s->cfg.node_atom_etf[0] = NULL;
    }
    if (s->cfg.nnodes > SEARCH_MAX_NODES) {
        free(s);
        return NULL;
    }
    size_t total = 0;
    for (uint32_t i = 0; i < s->cfg.nnodes; i++) {
        if (s->cfg.node_lens[i] > 255) {
            free(s);
            return NULL;
        }
        total += s->cfg.node_lens[i] + 1;
    }
    if (cfg->table_mode != VISITED_EXACT &&
        (cfg->breadth_first || cfg->expand_only)) {
        free(s);
        return NULL;
    }
    s->names = malloc(total);
    if (first != NULL) {
        s->pool = first->pool;
        search_pool_retain(s->pool);
        s->ps = search_pool_store(s->pool);
    } else {
        part_store *ps = cfg->table_slots ? part_store_new_sized(cfg->table_slots)
                                          : part_store_new();
        if (ps != NULL && cfg->breadth_first)
            s->pool = search_pool_new(ps, cfg->workers > 1);   /* takes ps */
        s->ps = ps == NULL || !cfg->breadth_first ? ps
                : s->pool != NULL ? search_pool_store(s->pool) : NULL;
    }
    s->used_at_yield = s->ps != NULL ? part_store_used_bytes(s->ps) : 0;
    s->tx.ps = s->ps;
    s->tx.names.ps = s->ps;
    s->tx.names.creation = cfg->creation;
    s->tx.delivery_ether = cfg->delivery_ether;
    s->tx.node_pair = cfg->node_pair;
    s->tx.timeouts_when_idle = cfg->timeouts_when_idle;
    s->tx.max_crashes = cfg->max_crashes;
    s->tx.max_disconnects = cfg->max_disconnects;
    s->tx.max_kills = cfg->max_kills;
    s->tx.timers_bounded = cfg->timers_bounded;
    s->tx.kill_targeted = cfg->kill_targeted;
    s->tx.crash_nodes = cfg->nodes_targeted ? cfg->crash_nodes : ~(uint64_t)0;
    for (int a = 0; a < 64; a++)
        s->tx.disconnect_pairs[a] = cfg->nodes_targeted ? cfg->disconnect_pairs[a]
                                                        : ~(uint64_t)0;
    s->tx.timers_never_from = cfg->timers_never_from;
    if (cfg->table_mode != VISITED_EXACT)
        s->vis = visited_new((enum visited_mode)cfg->table_mode,
                             cfg->table_mode == VISITED_BITSTATE
                                 ? cfg->bitstate_bits : cfg->table_slots);
    if (cfg->step_cache &&
        (s->cache = step_cache_new(cfg->step_cache_entries ? cfg->step_cache_entries
                                                           : STEP_CACHE_ENTRIES,
                                   cfg->step_cache_bytes ? cfg->step_cache_bytes
                                                         : STEP_CACHE_BYTES)) == NULL) {
        search_free(s);
        return NULL;
    }
    if (cfg->symmetry && !cfg->expand_only && !cfg->observe &&
        (s->sym = symmetry_new(cfg->symmetry == 3)) == NULL) {
        search_free(s);
        return NULL;
    }
    int memo_failed = match_memo_init(&s->memo);
    if (s->names == NULL || s->ps == NULL || memo_failed ||
        (cfg->table_mode != VISITED_EXACT && s->vis == NULL)) {
        search_free(s);
        return NULL;
    }
    int fresh;
    char *at = s->names;
    s->tx.names.nodes.n = s->cfg.nnodes;
    for (uint32_t i = 0; i < s->cfg.nnodes; i++) {
        size_t n = s->cfg.node_lens[i];
        memcpy(at, s->cfg.node_names[i], n);
        at[n] = '\0';
        s->cfg.node_names[i] = s->tx.names.nodes.names[i] = at;
        s->tx.names.nodes.lens[i] = n;
        uint8_t buf[4 + 255];
        const uint8_t *etf = s->cfg.node_atom_etf[i];
        size_t len = s->cfg.node_atom_etf_len[i];
        if (etf == NULL) {
            buf[0] = 131;
            buf[1] = 100;
            buf[2] = 0;
            buf[3] = (uint8_t)n;
            memcpy(buf + 4, at, n);
            etf = buf;
            len = 4 + n;
        }
        s->cfg.node_atom_etf[i] = NULL;     /* not kept: the caller's memory */
        s->tx.names.node_atoms[i] =
            first != NULL ? first->tx.names.node_atoms[i]
                          : part_store_intern(s->ps, PART_TERM, etf, (uint32_t)len,
                                              NULL, 0, &fresh);
        if (s->tx.names.node_atoms[i] == 0) {
            search_free(s);
            return NULL;
        }
        at += n + 1;
    }
    s->cfg.node = s->cfg.node_names[0];
    s->cfg.nodelen = s->cfg.node_lens[0];
    s->tx.empty_mailbox = part_store_intern(s->ps, PART_MAILBOX, "", 0, NULL,
                                            0, &fresh);
    static const char *const names[N_ATOMS] = SEARCH_ATOM_NAMES;
    for (int a = 0; a < N_ATOMS && s->tx.empty_mailbox != 0; a++) {
        uint8_t buf[64];
        const uint8_t *etf = cfg->atom_etf[a];
        size_t len = cfg->atom_etf_len[a];
        if (etf == NULL) {      /* ATOM_EXT, as the VM writes latin-1 atoms */
            size_t n = strlen(names[a]);
            buf[0] = 131;
            buf[1] = 100;
            buf[2] = 0;
            buf[3] = (uint8_t)n;
            memcpy(buf + 4, names[a], n);
            etf = buf;
            len = 4 + n;
        }
        s->tx.atoms[a] = first != NULL ? first->tx.atoms[a]
                                       : part_store_intern(s->ps, PART_TERM, etf,
                                                           (uint32_t)len, NULL, 0, &fresh);
        if (s->tx.atoms[a] == 0)
            s->tx.empty_mailbox = 0;
    }
    if (s->tx.empty_mailbox == 0) {
        search_free(s);
        return NULL;
    }
    for (int a = 0; a < N_ATOMS; a++)       /* the caller's memory, not kept */
        s->cfg.atom_etf[a] = NULL;
    return s;
}

search *search_new(const search_config *cfg)
{
    return search_create(cfg, NULL);
}

search *search_join(search *first)
{
    if (first->pool == NULL || first->cfg.workers < 2)
        return NULL;
    search *s = search_create(&first->cfg, first);
    if (s != NULL)
        s->tx.entry_pid = first->tx.entry_pid;
    return s;
}

void search_stop_workers(search *s)
{
    if (s->pool != NULL)
        search_pool_stop(s->pool);
}

void search_settled(search *s, const request *req)
{
    switch (req->kind) {
    case REQ_MATCH: case REQ_RUN: case REQ_OBSERVE: case REQ_EXPANDED:
    case REQ_DEATHS: case REQ_YIELD: case REQ_IDLE: case REQ_DONE:
    case REQ_ABANDONED:
        return;
    default:
        search_stop_workers(s);
    }
}

void search_free(search *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->depth; i++) {
        free(s->stack[i].label);
        free(s->stack[i].root);
        free(s->stack[i].perm);
    }
    free(s->stack);
    sys_state_clear(&s->cur);
    sys_state_clear(&s->spare);
    free(s->kept);
    search_cluster_free(s);
    if (s->pool != NULL)
        search_pool_release(s->pool);      /* with the store, if the last */
    else
        part_store_free(s->ps);
    visited_free(s->vis);
    match_memo_free(&s->memo);
    payload_table_free(&s->payloads);
    free(s->tx.allocated);
    free(s->tx.allocated_refs);
    sys_state_clear(&s->obs_st);
    free(s->obs_label);
    free(s->tx.deaths);
    symmetry_free(s->sym);
    free(s->sym_perm);
    for (size_t i = 0; i < s->nexp; i++)
        free(s->exp[i].label);
    free(s->exp);
    free(s->names);
    step_cache_free(s->cache);
    step_log_free(&s->log);
    stack_set_free(&s->on_stack);
    stack_set_free(&s->passed);
    stack_set_free(&s->branched);
    por_hint_free(&s->hint);
    free(s);
}


/* Nothing can move and every process waits in an idle loop (PF_IDLE: an
** OTP server in its main loop, or a process the `idle` option names):
** normal termination, not a deadlock.  A process blocked anywhere else
** (a server inside handle_call waiting for a reply) makes it one. */
static int all_idle(const sys_state *st)
{
    for (uint32_t i = 0; i < st->nprocs; i++)
        if (!(st->procs[i].flags & PF_IDLE))
            return 0;
    return 1;
}

/* The stack proviso's key of a state: its part id, or with a lossy table
** (state 0) a hash of its root vector (never 0). */
static uint64_t stack_key(part_id state, const uint8_t *root, uint32_t len)
{
    if (state != 0)
        return state;
    uint64_t h = XXH3_64bits(root, len);
    return h != 0 ? h : 1;
}

static int push(search *s, part_id state, uint8_t *label, size_t label_len)
{
    if (s->depth == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        frame *grown = realloc(s->stack, cap * sizeof *grown);
        if (grown == NULL)
            return -1;
        s->stack = grown;
        s->cap = cap;
    }
    if (s->stack_proviso && state != 0 && stack_set_add(&s->on_stack, state) != 0)
        return -1;
    frame *f = &s->stack[s->depth];
    *f = (frame){ .state = state, .label = label, .label_len = label_len,
                  .expand = 1, .perm = s->sym_perm, .nperm = s->sym_nperm };
    s->sym_perm = NULL;
    s->sym_nperm = 0;
    if (s->cfg.max_depth != 0 && s->depth >= s->cfg.max_depth) {
        f->expand = 0;
        s->st.truncated = 1;
    }
    s->depth++;
    if (s->depth - 1 > s->st.max_depth_seen)
        s->st.max_depth_seen = s->depth - 1;
    return 0;
}

static void pop(search *s)
{
    s->depth--;
    const frame *f = &s->stack[s->depth];
    if (s->stack_proviso && (f->state != 0 || f->root != NULL))
        stack_set_remove(&s->on_stack, stack_key(f->state, f->root, f->root_len));
    free(s->stack[s->depth].label);
    free(s->stack[s->depth].root);
    free(s->stack[s->depth].perm);
    s->root_bytes -= s->stack[s->depth].root_len;
}

/* Lossy tables: pushes the state whose root vector is root[0..len)
** (taking it and the label on success). */
static int push_root(search *s, uint8_t *root, uint32_t len, uint8_t *label,
                     size_t label_len)
{
    if (s->stack_proviso && stack_set_add(&s->on_stack, stack_key(0, root, len)) != 0)
        return -1;
    if (push(s, 0, label, label_len) != 0) {
        if (s->stack_proviso)
            stack_set_remove(&s->on_stack, stack_key(0, root, len));
        return -1;
    }
    frame *f = &s->stack[s->depth - 1];
    f->root = root;
    f->root_len = len;
    f->serial = ++s->serial;
    s->root_bytes += len;
    return 0;
}

/* Breadth-first: records a new state as a child of the node being
** expanded (the label's ownership passes on success); *index: its node.
** With workers, a node found while expanding one is kept to be expanded
** by this worker, newest first (its parts are still in this core's cache),
** unless another worker is hungry; a node the search stops at is never
** expanded. */
static int bfs_add(search *s, part_id state, uint8_t *label, size_t label_len,
                   int stop, uint32_t *index)
{
    uint32_t depth;
    int keep = s->cfg.workers > 1 && s->pool_busy &&
               (stop || !search_pool_hungry(s->pool));
    if (keep && s->nkept == s->capkept) {
        size_t cap = s->capkept ? 2 * s->capkept : 256;
        struct kept_node *grown = realloc(s->kept, cap * sizeof *grown);
        if (grown == NULL)
            return -1;
        s->kept = grown;
        s->capkept = cap;
    }
    /* One worker takes the indices one by one, so they number the nodes in
    ** discovery order (a distributed search's origins name them so); so do
    ** workers under max_states, whose count must then be exact (a cursor's
    ** nodes are counted a block at a time, which other workers would not
    ** see: up to 63 states each past the limit). */
    pool_cursor *cursor =
        s->cfg.workers > 1 && s->cfg.max_states == 0 ? &s->pool_cursor : NULL;
    if (search_pool_add(s->pool, cursor, state, s->expanding, label, label_len, s->sym_perm,
                        s->sym_nperm, !keep, index, &depth) != 0)
        return -1;
    s->sym_perm = NULL;
    s->sym_nperm = 0;
    if (keep && !stop)
        s->kept[s->nkept++] = (struct kept_node){ *index, depth, state };
    if (depth > s->st.max_depth_seen)
        s->st.max_depth_seen = depth;
    return 0;
}

/* Workers: the older half of the kept nodes go to the queue for a hungry
** worker (when that fails for want of memory, this one keeps them). */
static void bfs_share(search *s)
{
    size_t half = s->nkept / 2;
    uint32_t *nodes = malloc(half * sizeof *nodes);
    if (nodes == NULL)
        return;
    for (size_t k = 0; k < half; k++)
        nodes[k] = s->kept[k].node;
    if (search_pool_queue(s->pool, nodes, half) == 0) {
        memmove(s->kept, s->kept + half, (s->nkept - half) * sizeof *s->kept);
        s->nkept -= half;
    }
    free(nodes);
}

/* Breadth-first: the single frame becomes the next node to expand, kept
** or queued (a fresh iteration over its transitions).  POOL_WORK: it is
** on the stack; otherwise there is nothing to expand now (POOL_WAIT), ever
** (POOL_DONE), or any more (POOL_STOPPED). */
static enum pool_take bfs_next(search *s)
{
    uint32_t node, depth;
    part_id state;
    s->depth = 0;
    enum pool_take r = POOL_WORK;
    if (s->nkept > 0) {
        if (s->nkept > 1 && search_pool_hungry(s->pool))
            bfs_share(s);
        const struct kept_node *k = &s->kept[--s->nkept];
        node = k->node;
        depth = k->depth;
        state = k->state;
    } else {
        r = search_pool_take(s->pool, &s->pool_busy, &s->pool_hungry, &node, &state, &depth);
    }
    if (r != POOL_WORK)
        return r;
    s->expanding = node;
    s->expanding_depth = depth;
    s->stack[0] = (frame){ .state = state, .expand = 1 };
    if (s->cfg.max_depth != 0 && depth >= s->cfg.max_depth) {
        s->stack[0].expand = 0;
        s->st.truncated = 1;
    }
    s->depth = 1;
    return r;
}

/* Breadth-first: makes the stack the path from the root to node i, so the
** trace and final state of a counterexample read as in depth-first order. */
static int bfs_path_to_stack(search *s, uint32_t i)
{
    pool_step *path;
    size_t len;
    if (search_pool_path(s->pool, i, &path, &len) != 0)
        return -1;
    s->path_node = i;
    if (len > s->cap) {
        frame *grown = realloc(s->stack, len * sizeof *grown);
        if (grown == NULL) {
            search_pool_path_free(path, len);
            return -1;
        }
        s->stack = grown;
        s->cap = len;
    }
    for (size_t k = 0; k < s->depth; k++) {     /* the frame being expanded */
        free(s->stack[k].label);
        free(s->stack[k].perm);
    }
    for (size_t k = 0; k < len; k++)
        s->stack[k] = (frame){ .state = path[k].state, .label = path[k].label,
                               .label_len = path[k].label_len, .perm = path[k].perm,
                               .nperm = path[k].nperm };
    free(path);
    s->depth = len;
    return 0;
}

/* A new successor of the state being expanded: pushed (depth-first) or
** queued (breadth-first).  With `stop' the search ends at it, so
** breadth-first rebuilds the path to it. */
static int discover(search *s, part_id state, uint8_t *label, size_t label_len, int stop)
{
    if (!s->cfg.breadth_first)
        return push(s, state, label, label_len);
    uint32_t node;
    if (bfs_add(s, state, label, label_len, stop, &node) != 0)
        return -1;
    return stop ? bfs_path_to_stack(s, node) : 0;
}

int search_decode_top(search *s)
{
    frame *f = &s->stack[s->depth - 1];
    if (f->root != NULL) {
        if (s->cur_serial == f->serial)
            return 0;
        s->cur_serial = 0;
        if (sys_state_decode_bytes_into(s->ps, f->root, f->root_len, &s->cur) != 0)
            return -1;
        s->cur_serial = f->serial;
        return 0;
    }
    if (s->cur_id == f->state)
        return 0;
    s->cur_id = 0;
    if (sys_state_decode_into(s->ps, f->state, &s->cur) != 0)
        return -1;
    s->cur_id = f->state;
    return 0;
}

static int fail(request *req, const char *why)
{
    req->kind = REQ_ERROR;
    req->error = why;
    return -1;
}

static int c_transition(search *s, uint32_t ci, const fault *f, request *req);
static int cached_run(search *s, request *req);

/* Breadth-first, between two expansions: 1, the next node is on the
** stack; 0, *req says why there is none (REQ_IDLE: ask again later;
** REQ_ABANDONED: another worker ended the search); 2, the search is
** exhausted. */
static int bfs_continue(search *s, request *req)
{
    switch (bfs_next(s)) {
    case POOL_WORK:
        return 1;
    case POOL_WAIT:
        s->pending = req->kind = REQ_IDLE;
        return 0;
    case POOL_STOPPED:
        s->finished = 1;
        s->pending = req->kind = REQ_ABANDONED;
        return 0;
    case POOL_DONE:
        if (s->cfg.cluster_n > 1) {
            /* Other participants may still send states: only the
            ** drivers' count of batches tells the end. */
            s->pending = req->kind = REQ_IDLE;
            return 0;
        }
        break;
    }
    return 2;
}

/* A new run, or a cached one about to be applied: what it read is not
** known yet (the reduction's inputs, por.h). */
static void forget_run_reads(search *s)
{
    s->run_reads = 0;
    s->run_name_reads = 0;
    s->run_named_pid = 0;
    s->run_fresh_pid = 0;
    s->run_fresh_ref = 0;
}

/* Whether a guard voided the reduced search (search_reduce.c); *req then
** says so.  Asked before every transition the loop below takes, since a
** step from the cache or a delivery taken here may void it, and the
** search may end before another request would have asked. */
static int reduction_void(search *s, request *req)
{
    if (!s->por_void && !s->sym_void)
        return 0;
    s->finished = 1;
    s->pending = req->kind = REQ_REDUCTION_VOID;
    req->why = s->sym_void == 1 ? SYM_VOID_PID_ORDER
             : s->sym_void == 2 ? SYM_VOID_KEY_ORDER
             : s->sym_void == 3 ? SYM_VOID_FEW_RENAMED : s->por_void;
    return 1;
}

/* Finds the next transition of the top state, or a match question.
** Deliveries and faults are taken here, without a request. */
static int next_request(search *s, request *req)
{
    memset(req, 0, sizeof *req);
    if (s->finished) {
        req->kind = s->pending;
        return 0;
    }
    s->work = 0;
    int hit = 0;
    if (reduction_void(s, req))
        return 0;
    if (s->cfg.breadth_first && s->depth == 0) {
        /* a joined worker's first request, or after REQ_IDLE */
        int r = bfs_continue(s, req);
        if (r == 0)
            return 0;
    }
    while (s->depth > 0) {
        if (reduction_void(s, req))
            return 0;
        if (s->pool != NULL && search_pool_stopped(s->pool)) {
            s->finished = 1;
            s->pending = req->kind = REQ_ABANDONED;
            return 0;
        }
        /* The store's byte count at every unit, with workers every 8 (it
        ** is a cache line every new part of every worker writes; counted
        ** across calls, since a call may do fewer). */
        if (!s->cfg.expand_only &&
            (s->work++ >= SEARCH_WORK_BUDGET ||
             ((s->cfg.workers < 2 || (++s->bytes_tick & 7) == 0) &&
              part_store_used_bytes(s->ps) - s->used_at_yield >= SEARCH_BYTES_BUDGET))) {
            s->used_at_yield = part_store_used_bytes(s->ps);
            s->pending = req->kind = REQ_YIELD;
            return 0;
        }
        if (search_decode_top(s) != 0)
            return fail(req, "out of memory decoding a state");
        frame *f = &s->stack[s->depth - 1];
        /* A reduced frame explores nothing more; it had an enabled
        ** transition, so it is no deadlock (the checks below see
        ** enabled > 0). */
        int open = f->expand && !f->reduced;
        if (open && s->cfg.reduction && !s->cfg.expand_only && !f->rotated) {
            f->rotated = 1;
            f->first = search_safe_first(s);
        }
        while (open && f->next_proc < s->cur.nprocs) {
            const proc *p = &s->cur.procs[(f->next_proc + f->first) % s->cur.nprocs];
            if (p->status == PROC_INIT) {
                req->kind = REQ_RUN;
                req->run = RUN_START;
                goto issue;
            }
            if (p->status == PROC_CHOICE) {
                if (f->msg_idx < (p->flags >> PF_CHOICE_SHIFT)) {
                    req->kind = REQ_RUN;
                    req->run = RUN_CHOICE;
                    req->choice = f->msg_idx++;
                    f->enabled++;
                    req->pid = p->pid;
                    req->cont = p->cont;
                    goto remember;
                }
                f->next_proc++;
                f->msg_idx = 0;
                continue;
            }
            uint32_t n = mailbox_length(s->ps, p->mailbox);
            while (f->msg_idx < n) {
                part_id msg = mailbox_at(s->ps, p->mailbox, f->msg_idx);
                int m = match_memo_get(&s->memo, p->cont, msg);
                if (m < 0) {
                    req->kind = REQ_MATCH;
                    req->pid = p->pid;
                    req->cont = p->cont;
                    req->msg = msg;
                    s->pending = REQ_MATCH;
                    s->run_cont = p->cont;
                    s->run_msg = msg;
                    return 0;
                }
                if (m == 1) {
                    req->kind = REQ_RUN;
                    req->run = RUN_RECEIVE;
                    req->msg = msg;
                    s->run_msg_index = f->msg_idx;
                    goto issue;
                }
                if (m == MATCH_MAYBE) {
                    /* Abstract mode: the message may match.  Receiving it is
                    ** one transition; the scan then goes on past it, for the
                    ** concretisations in which it does not match (and the
                    ** timeout, if none of the later messages surely does). */
                    req->kind = REQ_RUN;
                    req->run = RUN_RECEIVE;
                    req->msg = msg;
                    s->run_msg_index = f->msg_idx++;
                    f->enabled++;
                    f->maybe_enabled++;
                    req->pid = p->pid;
                    req->cont = p->cont;
                    goto remember;
                }
                f->msg_idx++;
            }
            f->next_proc++;
            f->msg_idx = 0;
            uint32_t left = p->flags >> PF_TIMEOUT_SHIFT;
            if ((p->flags & PF_TIMEOUT) && !(p->flags & PF_TIMEOUT_ZERO) &&
                s->cfg.timeouts_when_idle && f->phase == 0) {
                f->saw_timeout = 1;       /* only if nothing else can move */
                if (f->idle_min == 0 || left + 1 < f->idle_min)
                    f->idle_min = left + 1;
            } else if ((p->flags & PF_TIMEOUT) &&
                       (!s->cfg.timeouts_when_idle || f->phase == 0 ||
                        left + 1 == f->idle_min)) {
                req->kind = REQ_RUN;
                req->run = RUN_TIMEOUT;
                f->enabled++;
                req->pid = p->pid;
                req->cont = p->cont;
                goto remember;
            }
            continue;
        issue:
            f->next_proc++;
            f->msg_idx = 0;
            f->enabled++;
            req->pid = p->pid;
            req->cont = p->cont;
        remember:
            req->dict = p->dict;
            req->flags = p->flags;
            s->pending = REQ_RUN;
            s->run = req->run;
            s->run_pid = req->pid;
            s->run_cont = req->cont;
            s->run_msg = req->msg;
            s->run_elapsed = req->run == RUN_TIMEOUT && s->cfg.timeouts_when_idle
                             ? req->flags >> PF_TIMEOUT_SHIFT : 0;
            s->run_choice = req->choice;
            s->run_dict = req->dict;
            s->run_flags = req->flags & ~PF_GUARD_MARKS;
            s->tx.nallocated = 0;
            s->tx.nallocated_refs = 0;
            forget_run_reads(s);
            if (s->cache == NULL)
                return 0;
            /* A step met before is applied here, and the search goes on
            ** (the hit counts as a unit of work, so the budget holds). */
            int c = cached_run(s, req);
            if (c == 0 || c == 2)
                return 0;
            if (c < 0)
                return -1;
            hit = 1;
            break;
        }
        if (hit) {
            hit = 0;
            memset(req, 0, sizeof *req);    /* the next request starts clean */
            continue;
        }
        /* The ether: deliver the oldest signal of each channel.  Timers
        ** are timeouts: with when_idle they fire only in the second phase. */
        if (open && f->next_proc < s->cur.nprocs + s->cur.nchans) {
            uint32_t ci = f->next_proc - s->cur.nprocs;
            f->next_proc++;
            int is_timer = (s->cur.chans[ci].from & KEY_TIMER) != 0;
            if (is_timer && !ether_timer_can_fire(&s->tx, &s->cur, ci))
                continue;       /* {infinite_above, Ms}: never fires */
            if (s->cfg.timeouts_when_idle ? is_timer != (f->phase == 1)
                                          : f->phase == 1) {
                if (is_timer)
                    f->saw_timeout = 1;
                continue;
            }
            f->enabled++;
            int r = c_transition(s, ci, NULL, req);
            if (r != 0)
                return r < 0 ? -1 : 0;
            continue;
        }
        /* Faults do not count as enabled: a state that only a fault can
        ** leave is still a deadlock. */
        if (open && f->phase == 0) {
            fault flt;
            if (ether_nth_fault(&s->tx, &s->cur, f->fault_idx, &flt)) {
                f->fault_idx++;
                int r = c_transition(s, 0, &flt, req);
                if (r != 0)
                    return r < 0 ? -1 : 0;
                continue;
            }
        }
        if (open && f->phase == 0 && f->enabled == 0 && f->saw_timeout) {
            /* when_idle: nothing else was enabled, so the timeouts are. */
            f->phase = 1;
            f->next_proc = 0;
            f->msg_idx = 0;
            continue;
        }
        if (s->cfg.expand_only) {
            s->exp_deadlock = f->enabled == f->maybe_enabled && s->cur.nprocs > 0 &&
                              !all_idle(&s->cur);
            s->pending = req->kind = REQ_EXPANDED;
            return 0;
        }
        /* With messages that only may match (abstract mode), the
        ** concretisations in which none does have no transition. */
        if (s->cfg.check_deadlock && f->expand && f->enabled == f->maybe_enabled &&
            s->cur.nprocs > 0 && !all_idle(&s->cur)) {
            if (s->cfg.breadth_first && bfs_path_to_stack(s, s->expanding) != 0)
                return fail(req, "out of memory");
            s->finished = 1;
            s->pending = req->kind = REQ_DEADLOCK;
            return 0;
        }
        /* Breadth-first with the reduction: a state left with every
        ** transition taken lets later steps toward it be cut (apply_run). */
        if (s->cfg.breadth_first && s->cfg.reduction && f->expand && !f->reduced &&
            f->state != 0)
            (void)search_pool_mark_full(s->pool, f->state);
        if (s->cfg.breadth_first && s->cfg.reduction)
            (void)search_pool_expanded(s->pool, s->expanding);
        if (s->cfg.breadth_first) {
            int r = bfs_continue(s, req);
            if (r == 1)
                continue;
            if (r == 0)
                return 0;
            break;
        }
        pop(s);
    }
    if (reduction_void(s, req))
        return 0;
    s->finished = 1;
    s->pending = req->kind = REQ_DONE;
    return 0;
}

int search_start(search *s, term_in *init, uint32_t pid, request *req)
{
    if (s->depth != 0 || s->finished || s->st.states != 0)
        return fail(req, "search already started");
    part_id cont = transition_intern_term(&s->tx, init);
    if (cont == 0)
        return fail(req, "initial call is not an encodable term");
    sys_state st;
    memset(&st, 0, sizeof st);
    proc p = { .pid = pid, .status = PROC_INIT, .cont = cont,
               .mailbox = s->tx.empty_mailbox };
    s->tx.entry_pid = pid;
    if (sys_state_insert(&st, &p) < 0)
        return fail(req, "out of memory");
    if (s->vis != NULL) {
        uint32_t len;
        uint8_t *bytes = sys_state_encode_root(s->ps, &st, &len);
        sys_state_clear(&st);
        if (bytes == NULL || visited_insert(s->vis, bytes, len) < 0 ||
            push_root(s, bytes, len, NULL, 0) != 0) {
            free(bytes);
            return fail(req, "out of memory");
        }
    } else {
        int fresh;
        part_id root = sys_state_encode(s->ps, &st, &fresh);
        sys_state_clear(&st);
        if (root == 0 || push(s, root, NULL, 0) != 0)
            return fail(req, "out of memory");
    }
    int mine = 1;
    if (s->cfg.breadth_first && s->cfg.cluster_n > 1) {
        /* Every participant makes the initial state; its owner alone
        ** stores it as discovered. */
        sys_state init;
        if (sys_state_decode(s->ps, s->stack[0].state, &init) != 0)
            return fail(req, "out of memory");
        mine = search_cluster_owns(s, &init);
        sys_state_clear(&init);
        if (mine < 0)
            return fail(req, "out of memory");
        if (!mine)
            s->depth = 0;
    }
    if (s->cfg.breadth_first && mine) {
        uint32_t root;
        if (bfs_add(s, s->stack[0].state, NULL, 0, 0, &root) != 0 || bfs_next(s) != POOL_WORK)
            return fail(req, "out of memory");
    }
    s->st.states = mine ? 1 : 0;
    /* The initial state counts: max_states = 1 stores nothing more. */
    if (!s->cfg.expand_only && s->cfg.max_states != 0 &&
        s->st.states >= s->cfg.max_states) {
        memset(req, 0, sizeof *req);
        s->finished = 1;
        s->pending = req->kind = REQ_LIMIT_STATES;
        return 0;
    }
    return next_request(s, req);
}

int search_start_worker(search *s, uint32_t pid, request *req)
{
    if (s->stack != NULL || s->finished || s->pool == NULL || s->cfg.workers < 2)
        return fail(req, "not a worker's search, or already started");
    s->tx.entry_pid = pid;
    if ((s->stack = malloc(256 * sizeof *s->stack)) == NULL)
        return fail(req, "out of memory");
    s->cap = 256;
    return next_request(s, req);
}

int search_resume(search *s, request *req)
{
    if ((s->pending != REQ_YIELD && s->pending != REQ_IDLE) || s->finished)
        return fail(req, "the search has not yielded");
    s->pending = 0;
    return next_request(s, req);
}

int search_answer_match(search *s, int matches, request *req)
{
    if (s->pending != REQ_MATCH || s->finished)
        return fail(req, "no match question is outstanding");
    int val = matches == MATCH_MAYBE ? MATCH_MAYBE : matches ? 1 : 0;
    if (match_memo_put(&s->memo, s->run_cont, s->run_msg, val) != 0)
        return fail(req, "out of memory");
    return next_request(s, req);
}

static void free_result(run_result *res)
{
    free(res->label);
    res->label = NULL;
}

static int record_successor(search *s, part_id state, uint8_t *label,
                            size_t label_len, int stop, request *req);

/* pass_cut: a successor the visited set knows is new again if its frame
** was cut when it was met (search_pass_cut): it was passed through, not
** kept.  It leaves `passed` until a cut of its new frame puts it back.
** One still on the stack is not: the step into it is a back edge, as
** to a kept state there, and the proviso keeps its frame from a cut. */
static int passed_again(search *s, uint64_t key)
{
    if (!stack_set_has(&s->passed, key) || stack_set_has(&s->on_stack, key))
        return 0;
    stack_set_remove(&s->passed, key);
    return 1;
}

/* A frame that took other transitions before its safe step (a "branching"
** one) is passed at most PASS_BRANCHING times per state; after that its
** state is kept.  Met again, a passed state usually takes its safe step
** first (the hint, por_hint.h, says it was safe), which makes passed states
** chains, walked once per edge into them; but a tree of states each taking
** two transitions at every visit would be walked exponentially often.
** With the bound, a state's other transitions are taken at most
** PASS_BRANCHING + 1 times (then it is kept, as without pass_cut).
** Measured: 1 keeps 60 of client_server(4,2)'s small states instead of 36,
** 3 keeps 38, with as many transitions as no bound at all. */
#define PASS_BRANCHING 3
void search_pass_cut(search *s, size_t fi)
{
    const frame *f = &s->stack[fi];
    if (s->pool_pass) {
        /* Workers: a branching frame's state is kept (no count of its
        ** passes is shared), and so is the root, as depth-first. */
        if (f->enabled <= 1 && s->expanding_depth > 0 &&
            search_pool_mark_passed(s->pool, f->state) == 0)
            s->st.passed_states++;
        return;
    }
    if (!s->pass_cut || fi == 0 || (f->state == 0 && f->root == NULL))
        return;
    uint64_t key = stack_key(f->state, f->root, f->root_len);
    if (f->enabled > 1) {
        if (stack_set_count(&s->branched, key) >= PASS_BRANCHING ||
            stack_set_add(&s->branched, key) != 0)
            return;
    }
    if (stack_set_add(&s->passed, key) != 0)
        return;     /* out of memory: the state stays kept, as without pass_cut */
    s->st.states--;
    s->st.passed_states++;
}

static int commit_lossy(search *s, sys_state *st, uint8_t *label,
                        size_t label_len, int stop, request *req);

/* The end of a committed successor, whatever the table: the search stops
** at it, or at max_states.  0: go on; 1: *req is final. */
static int after_commit(search *s, int stop, request *req)
{
    memset(req, 0, sizeof *req);
    if (stop) {
        s->finished = 1;
        s->pending = req->kind = REQ_STOPPED;
        return 1;
    }
    /* With workers the count is a cache line they all write: read only
    ** when there is a limit.  States passed through (pass_cut) count: the
    ** limit bounds the work, and a program whose every step is safe
    ** would otherwise store nothing and never meet it. */
    if (s->cfg.max_states != 0 &&
        (s->cfg.workers > 1 ? search_pool_count(s->pool, &s->pool_cursor)
                            : s->st.states + s->st.passed_states) >= s->cfg.max_states) {
        s->finished = 1;
        s->pending = req->kind = REQ_LIMIT_STATES;
        return 1;
    }
    return 0;
}

/* Stores a successor of the state being expanded: counts the transition,
** pushes or queues the state if new (or if the search stops at it), and
** applies the limits.  Takes st (cleared) and the label (kept or freed).
** 0: go on; 1: *req is final. */
static int commit_successor(search *s, sys_state *st, uint8_t *label,
                            size_t label_len, int stop, request *req)
{
    if (s->vis != NULL)
        return commit_lossy(s, st, label, label_len, stop, req);
    /* With symmetry the representative is what is owned and stored: made
    ** before routing, once (a second canonical() would drop the renaming). */
    int canon = search_canonical(s, st, stop);
    if (s->cfg.cluster_n > 1 && !stop && !s->cfg.expand_only && canon == 0) {
        /* Another participant's state goes to its owner, unstored, with
        ** its renaming. */
        int r = search_cluster_route(s, st, label, label_len);
        if (r != 0) {
            sys_state_move(&s->spare, st);
            if (r < 0) {
                free(label);
                return fail(req, "out of memory");
            }
            s->st.transitions++;
            return after_commit(s, 0, req);
        }
    }
    int is_new;
    part_id root = canon == 0 ? sys_state_encode(s->ps, st, &is_new) : 0;
    sys_state_move(&s->spare, st);
    if (root == 0) {
        free(label);
        return fail(req, "out of memory");
    }
    s->st.transitions++;
    s->last_successor = root;
    if (!is_new && ((s->pass_cut && passed_again(s, root)) ||
                    (s->pool_pass && search_pool_pass_again(s->pool, root))))
        is_new = 1;
    if (is_new)
        s->st.states++;
    search_sym_judge(s, is_new);
    if (s->cfg.expand_only)
        return record_successor(s, root, label, label_len, stop, req);
    if (is_new || stop) {
        if (discover(s, root, label, label_len, stop) != 0) {
            free(label);
            return fail(req, "out of memory");
        }
    } else {
        free(label);
    }
    return after_commit(s, stop, req);
}

/* commit_successor with a lossy table: the root vector is not interned,
** only recorded in the table; a new state's frame keeps it.  Depth-first
** only (search_new refuses the other orders). */
static int commit_lossy(search *s, sys_state *st, uint8_t *label,
                        size_t label_len, int stop, request *req)
{
    uint32_t len;
    uint8_t *root = search_canonical(s, st, stop) == 0 ? sys_state_encode_root(s->ps, st, &len)
                                                : NULL;
    sys_state_move(&s->spare, st);
    int is_new = root != NULL ? visited_insert(s->vis, root, len) : -1;
    if (is_new < 0) {
        free(root);
        free(label);
        return fail(req, "out of memory");
    }
    if (s->stack_proviso)
        s->last_successor = stack_key(0, root, len);
    s->st.transitions++;
    if (is_new == 0 && s->pass_cut && passed_again(s, stack_key(0, root, len)))
        is_new = 1;
    if (is_new)
        s->st.states++;
    search_sym_judge(s, is_new);
    if (is_new || stop) {
        if (push_root(s, root, len, label, label_len) != 0) {
            free(root);
            free(label);
            return fail(req, "out of memory");
        }
    } else {
        free(root);
        free(label);
    }
    return after_commit(s, stop, req);
}

/* expand_only: lists a successor (taking the label).  A stop ends the
** expansion at it (the LTL product reports it at once), except with
** expand_only 2 (sessions): replay must find a later process's step from a
** state where an earlier one's is a violation.  0: go on; 1: *req is
** final. */
static int record_successor(search *s, part_id state, uint8_t *label,
                            size_t label_len, int stop, request *req)
{
    if (s->nexp == s->capexp) {
        size_t cap = s->capexp ? 2 * s->capexp : 16;
        expansion *grown = realloc(s->exp, cap * sizeof *grown);
        if (grown == NULL) {
            free(label);
            return fail(req, "out of memory");
        }
        s->exp = grown;
        s->capexp = cap;
    }
    s->exp[s->nexp++] = (expansion){ state, s->mover, label, label_len, stop,
                                     stop ? POR_UNSAFE : s->exp_safe };
    s->exp_safe = POR_UNSAFE;
    if (!stop || s->cfg.expand_only == 2)
        return 0;
    memset(req, 0, sizeof *req);
    s->exp_deadlock = 0;
    s->pending = req->kind = REQ_EXPANDED;
    return 1;
}

/* A successor: with safety monitors it waits for their verdict (the state
** and label move into the search; *req becomes REQ_OBSERVE), else it is
** committed at once.  0: go on; 1: *req is final or a request. */
int search_successor(search *s, sys_state *st, uint8_t *label, size_t label_len,
                     int stop, request *req)
{
    if (sys_state_flush(s->ps, st) != 0) {
        sys_state_clear(st);
        free(label);
        return fail(req, "out of memory");
    }
    int judge = s->cfg.judge_deaths && s->tx.ndeaths > 0 && !stop;
    if (!s->cfg.observe && !judge)
        return commit_successor(s, st, label, label_len, stop, req);
    sys_state_clear(&s->obs_st);
    s->obs_st = *st;
    memset(st, 0, sizeof *st);
    s->obs_label = label;
    s->obs_label_len = label_len;
    s->obs_stop = stop;
    s->obs_pending = 1;
    s->deaths_pending = judge;
    memset(req, 0, sizeof *req);
    req->kind = s->pending = judge ? REQ_DEATHS : REQ_OBSERVE;
    req->observer = s->obs_st.observer;
    return 1;
}

int search_answer_deaths(search *s, int violation, request *req)
{
    if (s->pending != REQ_DEATHS || !s->deaths_pending || s->finished)
        return fail(req, "no deaths are waiting for a verdict");
    s->deaths_pending = 0;
    if (!violation && s->cfg.observe) {
        memset(req, 0, sizeof *req);
        req->kind = s->pending = REQ_OBSERVE;
        req->observer = s->obs_st.observer;
        return 0;
    }
    s->obs_pending = 0;
    s->pending = 0;
    uint8_t *label = s->obs_label;
    s->obs_label = NULL;
    int r = commit_successor(s, &s->obs_st, label, s->obs_label_len,
                             s->obs_stop || violation, req);
    if (r != 0)
        return r < 0 ? -1 : 0;
    return next_request(s, req);
}

int search_answer_observe(search *s, int verdict, term_in *observer, request *req)
{
    if (s->pending != REQ_OBSERVE || !s->obs_pending || s->finished)
        return fail(req, "no observation is outstanding");
    s->obs_pending = 0;
    s->pending = 0;
    uint8_t *label = s->obs_label;
    s->obs_label = NULL;
    int r;
    if (verdict == OBSERVE_SKIP) {
        /* The monitor prunes the successor: the path ends before it. */
        sys_state_clear(&s->obs_st);
        free(label);
        s->st.transitions++;
        r = 0;
    } else {
        if (verdict == OBSERVE_OK) {
            part_id obs = observer != NULL && observer->etf ? transition_intern_term(&s->tx, observer) : 0;
            if (obs == 0) {
                sys_state_clear(&s->obs_st);
                free(label);
                return fail(req, "the monitors' state is not an encodable term");
            }
            s->obs_st.observer = obs;
        }
        r = commit_successor(s, &s->obs_st, label, s->obs_label_len,
                             s->obs_stop || verdict == OBSERVE_VIOLATION, req);
    }
    if (r != 0)
        return r < 0 ? -1 : 0;
    return next_request(s, req);
}

/* Builds the successor of the top state by a delivery (f == NULL: channel
** ci) or a fault, and pushes it if new.  0: go on; 1: *req is final
** (a limit); -1: failure (*req says why). */
static int c_transition(search *s, uint32_t ci, const fault *f, request *req)
{
    if (f == NULL) {
        const channel *c = &s->cur.chans[ci];
        s->mover = (agent){ AGENT_CHAN, c->from, c->to, c->name };
    } else {
        s->mover = (agent){ AGENT_NONE, 0, 0, 0 };
    }
    trans_ctx_begin(&s->tx);
    sys_state st = { 0 };
    sys_state_move(&st, &s->spare);     /* its buffers, reused */
    if (sys_state_copy_into(&st, &s->cur) != 0)
        return fail(req, "out of memory");
    ext_buf lb = { NULL, 0, 0, 0 };
    ext_u8(&lb, 131);
    signal_queue sq = { NULL, 0, 0 };
    int err = f == NULL ? ether_deliver(&s->tx, &st, ci, &lb, &sq)
                        : ether_apply_fault(&s->tx, &st, f, &lb, &sq);
    free(sq.q);
    if (err || lb.err) {
        sys_state_clear(&st);
        free(lb.b);
        return fail(req, "out of memory, or a malformed ether");
    }
    search_transition_guards(s);
    return search_successor(s, &st, lb.b, lb.n, 0, req);
}

/* Applies the outcome res of the outstanding run to the state being
** expanded and hands the successor on (taking the label).  With `record`
** the step's outcome and reads go into the step cache first.  As
** successor: 0 go on, 1 *req is final or a request, -1 failure. */
static int apply_run(search *s, run_result *res, uint8_t *label, size_t label_len,
                     int record, request *req)
{
    trans_ctx_begin(&s->tx);
    sys_state st = { 0 };
    sys_state_move(&st, &s->spare);     /* its buffers, reused */
    if (sys_state_copy_into(&st, &s->cur) != 0) {
        free(label);
        return fail(req, "out of memory");
    }
    const char *why;
    if (transition_run(&s->tx, &st, s->run_pid, s->run, s->run_msg_index,
                       s->run_elapsed, res, &why) != 0) {
        sys_state_clear(&st);
        free(label);
        return fail(req, why);
    }
    search_transition_guards(s);
    /* The mark of rule 12's guard: this process found a name. */
    if (s->cfg.reduction == 2 && s->cfg.name_rule && s->run_name_reads) {
        int i = sys_state_find(&st, s->run_pid);
        if (i >= 0)
            st.procs[i].flags |= PF_NAME_ARMED;
    }
    /* A descriptor is a function of the continuation: kept by its part
    ** for every state it is met in (from the step cache too).  Out of
    ** memory only loses it. */
    if (s->cfg.dead_payload && res->payload != NULL && res->outcome == OUTCOME_WAIT)
        (void)payload_table_put(&s->payloads, res->cont.id, res->payload, res->payload_len);
    /* A step that stops the search is reported by the driver, so it is
    ** never applied from the cache; out of memory only loses the entry. */
    if (record && s->cache != NULL && !res->stop && !s->log.poisoned) {
        step_key k = search_run_key(s);
        res->label = label;
        (void)step_cache_add(s->cache, &k, &s->log, res);
        res->label = NULL;
    }
    s->pending = 0;
    s->mover = (agent){ AGENT_PROC, s->run_pid, 0, 0 };
    if (s->cfg.reduction && s->cfg.expand_only)
        return search_expand_flagged(s, res, &st, label, label_len, req);
    if (!s->cfg.reduction)
        return search_successor(s, &st, label, label_len, res->stop, req);
    return search_reduced_successor(s, res, &st, label, label_len, req);
}

/* The outstanding run, from the step cache if an alternative stored under
** its key gets the same answers to its reads asked again, in order,
** against the state being expanded (fresh numbers are taken again as the
** step took them).  0: a miss, the run goes to Erlang (with nothing of the
** re-asking left); 1: applied, the search goes on; 2: applied and *req is
** final or a request; -1: failure. */
static int cached_run(search *s, request *req)
{
    step_key k = search_run_key(s);
    step_entry *e = step_cache_find(s->cache, &k);
    for (step_alt *a = e != NULL ? e->alts : NULL; a != NULL; a = a->next) {
        s->tx.nallocated = 0;
        s->tx.nallocated_refs = 0;
        size_t i = 0;
        for (; i < a->nreads; i++) {
            uint32_t ans[STEP_READ_WORDS];
            if (search_reask(s, &a->reads[i], a->names, ans) != 0 ||
                memcmp(ans, a->reads[i].ans, sizeof ans) != 0)
                break;
        }
        if (i < a->nreads)
            continue;
        uint8_t *label = malloc(a->res.label_len ? a->res.label_len : 1);
        if (label == NULL)
            return fail(req, "out of memory");
        memcpy(label, a->res.label, a->res.label_len);
        run_result res = a->res;       /* the effects stay the entry's */
        res.label = NULL;
        s->cache->hits++;
        forget_run_reads(s);
        for (size_t j = 0; j < a->nreads; j++) {
            if (a->reads[j].kind == READ_FRESH_PID)
                s->run_fresh_pid = 1;
            else if (a->reads[j].kind == READ_FRESH_REF)
                s->run_fresh_ref = 1;
            else if (step_read_finds_name(&a->reads[j], &s->run_named_pid))
                s->run_name_reads = 1;
            else
                s->run_reads = 1;
        }
        int r = apply_run(s, &res, label, a->res.label_len, 0, req);
        return r < 0 ? -1 : r == 0 ? 1 : 2;
    }
    s->tx.nallocated = 0;
    s->tx.nallocated_refs = 0;
    step_log_reset(&s->log);
    s->cache->misses++;
    return 0;
}

int search_answer_run(search *s, run_result *res, request *req)
{
    if (s->pending != REQ_RUN || s->finished) {
        free_result(res);
        return fail(req, "no run is outstanding");
    }
    uint8_t *label = res->label;
    res->label = NULL;
    int r = apply_run(s, res, label, res->label_len, 1, req);
    if (r != 0)
        return r < 0 ? -1 : 0;
    return next_request(s, req);
}

/* A fresh pid or ref for the running step (see canon.h). */
uint32_t search_fresh_number(search *s, uint32_t node, int refs)
{
    if (s->pending != REQ_RUN || s->depth == 0 || search_decode_top(s) != 0 ||
        node >= s->tx.names.nodes.n)
        return 0;
    return canon_fresh_key(&s->tx, &s->cur, s->run_pid, node, refs);
}

/* ... logged as a read of the step for the step cache. */
static uint32_t fresh_logged(search *s, uint32_t node, int refs)
{
    uint32_t key = search_fresh_number(s, node, refs);
    if (s->pending == REQ_RUN) {
        if (key == 0)
            s->run_reads = 1;
        else if (refs)
            s->run_fresh_ref = 1;
        else
            s->run_fresh_pid = 1;
    }
    /* A process numbered past the refs' creator regions makes its refs in
    ** the shared region (canon.h), so its number shows in how its refs
    ** are ordered: a renaming could tell. */
    if (!refs && KEY_NUM(key) >= ETF_REF_CREATOR_LIMIT)
        search_numbers_observed(s);
    if (s->cache != NULL && s->pending == REQ_RUN) {
        if (key == 0) {
            s->log.poisoned = 1;
        } else {
            step_read r;
            memset(&r, 0, sizeof r);
            r.kind = refs ? READ_FRESH_REF : READ_FRESH_PID;
            r.a = node;
            r.ans[0] = key;
            step_log_add(&s->log, &r, NULL, 0);
        }
    }
    return key;
}

uint32_t search_fresh_ref(search *s, uint32_t node)
{
    return fresh_logged(s, node, 1);
}

uint32_t search_fresh_pid(search *s, uint32_t node)
{
    return fresh_logged(s, node, 0);
}

/* Makes the stack the single frame of `state`, freeing what was there. */
static int reset_to(search *s, part_id state)
{
    const part *p = part_store_get(s->ps, state);
    if (p == NULL || p->kind != PART_STATE)
        return -1;
    while (s->depth > 0)
        pop(s);
    return push(s, state, NULL, 0);
}

int search_expand(search *s, part_id state, request *req)
{
    if (!s->cfg.expand_only || s->pending != REQ_EXPANDED || s->finished)
        return fail(req, "no expansion can start now");
    for (size_t i = 0; i < s->nexp; i++)
        free(s->exp[i].label);
    s->nexp = 0;
    s->exp_deadlock = 0;
    s->exp_safe = POR_UNSAFE;
    if (reset_to(s, state) != 0)
        return fail(req, "not a state id, or out of memory");
    s->pending = 0;
    return next_request(s, req);
}

int search_focus(search *s, part_id state)
{
    if (!s->cfg.expand_only || s->pending != REQ_EXPANDED || s->finished)
        return -1;
    return reset_to(s, state);
}

