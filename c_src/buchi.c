/*
** buchi.c: nested DFS and Couvreur's SCC check over a caller-driven graph.
** See buchi.h for the protocol and the algorithms.
**
** Owns, all allocated through the configured allocator and freed by
** buchi_free (or at once on the failure paths of buchi_new):
**   - the state table: keys[] and flags[] by dense number (discovery
**     order, which is also the Tarjan index) and a hash index key -> number;
**   - the DFS stack (frames) and the arena holding the successor lists of
**     the states on it, used as a stack: a frame's list sits above its
**     parent's, so popping a frame frees its list;
**   - SCC: the active stack (states whose SCC is not finished) and the
**     root stack, with an arena of agent marks under weak fairness;
**   - the cycle builder's copy of the lasso SCC: local numbering, cached
**     answers, BFS arrays;
**   - the stem and cycle of a lasso found.
** Nothing is global; the caller's arrays are copied, never kept.
*/
#include "buchi.h"

#include <stdlib.h>
#include <string.h>

enum {
    F_ACC = 1,          /* the state accepts */
    F_CYAN = 2,         /* NDFS: on the blue stack */
    F_RED = 4,          /* NDFS: entered by a red search */
    F_DEAD = 8          /* SCC: its SCC is finished (no accepting cycle) */
};

/* What the pending request waits for. */
enum want { WANT_NOTHING = 0, WANT_FRAME, WANT_CYCLE };
enum phase { PH_NEW = 0, PH_SEARCH, PH_CYCLE, PH_OVER };

typedef struct frame {
    uint32_t state;     /* dense number */
    uint32_t n;         /* its successors, at arena[off .. off + n) */
    uint32_t next;      /* next successor to examine; next - 1 is the edge
                           to the frame above */
    uint32_t red;       /* NDFS: a frame of the red search */
    size_t off;
} frame;

/* Under weak fairness, one agent enabled in every state of a partial SCC,
** and whether a transition of it inside the SCC was seen. */
typedef struct agent_mark {
    uint32_t agent;
    uint32_t taken;
} agent_mark;

typedef struct root {
    uint32_t state;     /* the root; its partial SCC is the active states
                           numbered from it on */
    uint32_t entry;     /* agent of the tree edge into the root: it becomes
                           an internal edge when this root is merged */
    size_t frame;       /* the root's position on the DFS stack */
    size_t apos;        /* the root's position on the active stack */
    size_t agoff;       /* agent marks at marks[agoff .. agoff + nag) */
    uint32_t nag;
    uint32_t pending;   /* marks not taken: fair iff 0 */
    uint8_t acc;        /* some state accepts */
    uint8_t cyclic;     /* holds a cycle (merged, or a self-loop) */
} root;

/* Open addressing, linear probing, over keys held elsewhere: slot values
** are number + 1, 0 is empty. */
typedef struct hindex {
    uint32_t *slot;
    size_t mask;        /* slots - 1 (a power of two minus 1) */
    size_t count;
} hindex;

/* The cycle builder: a walk inside the SCC of the root that closed an
** accepting (fair) cycle, from the root through what the cycle still
** needs, then back to the root.  Local numbers index the arrays below. */
typedef struct cycle_builder {
    size_t m;                   /* states in the SCC */
    uint64_t *keys;             /* by local number */
    uint32_t *dense;            /* their dense numbers */
    hindex index;               /* key -> local number */
    /* cached answers, local number -> offsets into the arenas (the
    ** walk may pass a state several times; each is asked at most once) */
    uint8_t *have;
    size_t *soff, *eoff;
    uint32_t *sn, *en;
    buchi_succ *succs;
    size_t nsuccs, capsuccs;
    uint32_t *enabled;
    size_t nenabled, capenabled;
    /* BFS */
    uint32_t *parent, *pedge, *seen, *queue;
    uint32_t epoch;
    size_t qhead, qtail;
    uint32_t start;             /* local number the BFS started from */
    int bfs;                    /* a BFS is under way */
    /* walk state */
    uint32_t cur;               /* local number of the walk's end */
    int need_acc;               /* no accepting state on the walk yet */
    int p_set;                  /* P has been initialised */
    uint32_t *p;                /* P: agents enabled in every state of the
                                   walk and not yet taken on it (sorted) */
    size_t np;
} cycle_builder;

struct buchi {
    buchi_config cfg;
    enum phase phase;
    enum want want;
    buchi_request result;       /* the final request, once over */

    /* states */
    uint64_t *keys;
    uint8_t *flags;
    size_t nstates, capstates, capflags;
    hindex index;

    /* DFS stack */
    frame *frames;
    size_t depth, capframes;
    buchi_succ *arena;
    size_t atop, caparena;
    size_t red_base;            /* NDFS: position of the red seed frame */
    uint32_t entry_agent;       /* SCC: agent of the edge to the frame
                                   awaiting its answer */

    /* SCC */
    uint32_t *active;
    size_t nactive, capactive;
    root *roots;
    size_t nroots, caproots;
    agent_mark *marks;
    size_t nmarks, capmarks;

    cycle_builder cb;

    /* the lasso */
    buchi_step *stem, *cycle;
    size_t nstem, ncycle, capcycle;

    buchi_stats st;
};

/* ------------------------------------------------------------------ */
/* Allocation                                                         */

static void *std_realloc(void *ctx, void *p, size_t n)
{
    (void)ctx;
    return realloc(p, n);
}

static void std_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static void xfree(buchi *b, void *p)
{
    if (p != NULL)
        b->cfg.free_fn(b->cfg.alloc_ctx, p);
}

/* Makes room for `need` elements of `size` bytes in *arr (capacity *cap),
** doubling so that pushes cost amortised O(1).  0 on success, -1 when out
** of memory or the size overflows; *arr is then unchanged. */
static int reserve(buchi *b, void **arr, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return -1;
        ncap *= 2;
    }
    if (ncap > SIZE_MAX / size)
        return -1;
    void *p = b->cfg.realloc_fn(b->cfg.alloc_ctx, *arr, ncap * size);
    if (p == NULL)
        return -1;
    *arr = p;
    *cap = ncap;
    return 0;
}

#define RESERVE(b, arr, cap, need) \
    reserve((b), (void **)&(arr), &(cap), (need), sizeof *(arr))

/* ------------------------------------------------------------------ */
/* Hash index                                                         */

/* splitmix64's finaliser: callers' keys are often small or structured
** (id << k | automaton state), so they must be mixed before masking. */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

static int hx_find(const hindex *h, const uint64_t *keys, uint64_t key,
                   uint32_t *num)
{
    if (h->slot == NULL)
        return 0;
    for (size_t i = mix(key) & h->mask;; i = (i + 1) & h->mask) {
        uint32_t v = h->slot[i];
        if (v == 0)
            return 0;
        if (keys[v - 1] == key) {
            *num = v - 1;
            return 1;
        }
    }
}

static void hx_put(hindex *h, const uint64_t *keys, uint32_t num)
{
    size_t i = mix(keys[num]) & h->mask;
    while (h->slot[i] != 0)
        i = (i + 1) & h->mask;
    h->slot[i] = num + 1;
}

/* Records that keys[num] is new; grows the index past half full so probes
** stay short.  -1 when out of memory (the index is then unchanged). */
static int hx_insert(buchi *b, hindex *h, const uint64_t *keys, uint32_t num)
{
    if (h->slot == NULL || (h->count + 1) * 2 > h->mask + 1) {
        size_t n = h->slot ? (h->mask + 1) * 2 : 64;
        if (n > SIZE_MAX / sizeof(uint32_t))
            return -1;
        uint32_t *slot = b->cfg.realloc_fn(b->cfg.alloc_ctx, NULL,
                                           n * sizeof *slot);
        if (slot == NULL)
            return -1;
        memset(slot, 0, n * sizeof *slot);
        uint32_t *old = h->slot;
        size_t oldn = old ? h->mask + 1 : 0;
        h->slot = slot;
        h->mask = n - 1;
        for (size_t i = 0; i < oldn; i++)
            if (old[i] != 0)
                hx_put(h, keys, old[i] - 1);
        xfree(b, old);
    }
    hx_put(h, keys, num);
    h->count++;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Results                                                            */

static int finish(buchi *b, buchi_request *req, enum buchi_request_kind k)
{
    b->phase = PH_OVER;
    b->want = WANT_NOTHING;
    b->result.kind = k;
    b->result.key = 0;
    b->result.error = NULL;
    *req = b->result;
    return 0;
}

static int fail(buchi *b, buchi_request *req, const char *why)
{
    b->phase = PH_OVER;
    b->want = WANT_NOTHING;
    b->result.kind = BUCHI_ERROR;
    b->result.key = 0;
    b->result.error = why;
    *req = b->result;
    return -1;
}

/* A call out of turn: refused without touching the search, so that a
** result already reached (a lasso) stays readable. */
static int refuse(buchi_request *req, const char *why)
{
    req->kind = BUCHI_ERROR;
    req->key = 0;
    req->error = why;
    return -1;
}

static int ask(buchi *b, buchi_request *req, enum want w, uint64_t key)
{
    b->want = w;
    req->kind = BUCHI_NEED_SUCCESSORS;
    req->key = key;
    req->error = NULL;
    return 0;
}

/* ------------------------------------------------------------------ */
/* States and frames                                                  */

/* A new state: its dense number in *num.  1 on success, 0 when max_states
** is reached, -1 when out of memory. */
static int add_state(buchi *b, uint64_t key, uint32_t *num)
{
    if ((b->cfg.max_states != 0 && b->nstates >= b->cfg.max_states) ||
        b->nstates >= UINT32_MAX - 1)
        return 0;
    if (RESERVE(b, b->keys, b->capstates, b->nstates + 1) != 0 ||
        RESERVE(b, b->flags, b->capflags, b->nstates + 1) != 0)
        return -1;
    b->keys[b->nstates] = key;
    if (hx_insert(b, &b->index, b->keys, (uint32_t)b->nstates) != 0)
        return -1;
    b->flags[b->nstates] = 0;
    *num = (uint32_t)b->nstates++;
    b->st.states = b->nstates;
    return 1;
}

/* Whether a new state would stand beyond max_depth: its edge is cut. */
static int cut_here(buchi *b)
{
    if (b->cfg.max_depth == 0 || b->depth + 1 <= b->cfg.max_depth)
        return 0;
    b->st.cut++;
    return 1;
}

static int push_frame(buchi *b, uint32_t state, uint32_t red)
{
    if (RESERVE(b, b->frames, b->capframes, b->depth + 1) != 0)
        return -1;
    b->frames[b->depth++] = (frame){ .state = state, .red = red,
                                     .off = b->atop };
    if (b->depth > b->st.max_depth)
        b->st.max_depth = b->depth;
    return 0;
}

static void pop_frame(buchi *b)
{
    b->depth--;
    b->atop = b->depth ? b->frames[b->depth - 1].off + b->frames[b->depth - 1].n
                       : 0;
}

/* A step of the lasso from a frame: its state and the edge it took. */
static buchi_step frame_step(const buchi *b, const frame *f)
{
    return (buchi_step){ .key = b->keys[f->state], .succ = f->next - 1 };
}

/* stem = frames [0, pos) */
static int set_stem(buchi *b, size_t pos)
{
    size_t cap = 0;
    if (pos > 0 && RESERVE(b, b->stem, cap, pos) != 0)
        return -1;
    for (size_t i = 0; i < pos; i++)
        b->stem[i] = frame_step(b, &b->frames[i]);
    b->nstem = pos;
    return 0;
}

static int cycle_push(buchi *b, buchi_step s)
{
    if (RESERVE(b, b->cycle, b->capcycle, b->ncycle + 1) != 0)
        return -1;
    b->cycle[b->ncycle++] = s;
    return 0;
}

/* Checks an answer's arrays; NULL when they are well formed. */
static const char *check_answer(const uint32_t *enabled, size_t n_enabled,
                                const buchi_succ *succs, size_t n_succs)
{
    if ((enabled == NULL && n_enabled > 0) || (succs == NULL && n_succs > 0))
        return "answer array is NULL";
    if (n_succs >= UINT32_MAX || n_enabled >= UINT32_MAX)
        return "too many successors or agents";
    for (size_t i = 0; i < n_enabled; i++)
        if (enabled[i] == BUCHI_NO_AGENT || (i > 0 && enabled[i - 1] >= enabled[i]))
            return "enabled agents are not strictly increasing agent ids";
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Nested DFS                                                         */

/* A cycle closed by an edge from the top frame into the cyan state w. */
static int ndfs_lasso(buchi *b, uint32_t w, int from_red, buchi_request *req)
{
    size_t pw = 0;
    while (pw < b->depth && (b->frames[pw].red || b->frames[pw].state != w))
        pw++;
    if (pw == b->depth)
        return fail(b, req, "internal error: cyan state not on the stack");
    if (set_stem(b, pw) != 0)
        return fail(b, req, "out of memory");
    /* blue frames from w up to the seed (whose blue frame's edge is stale:
    ** the red seed frame stands for it), then the red frames */
    size_t blue_end = from_red ? b->red_base - 1 : b->depth;
    for (size_t i = pw; i < blue_end; i++)
        if (cycle_push(b, frame_step(b, &b->frames[i])) != 0)
            return fail(b, req, "out of memory");
    if (from_red)
        for (size_t i = b->red_base; i < b->depth; i++)
            if (cycle_push(b, frame_step(b, &b->frames[i])) != 0)
                return fail(b, req, "out of memory");
    return finish(b, req, BUCHI_FOUND);
}

static int ndfs_run(buchi *b, buchi_request *req)
{
    for (;;) {
        frame *f = &b->frames[b->depth - 1];
        if (f->next < f->n) {
            buchi_succ s = b->arena[f->off + f->next++];
            b->st.transitions++;
            uint32_t w;
            int known = hx_find(&b->index, b->keys, s.key, &w);
            if (!f->red) {
                if (!known) {
                    if (cut_here(b))
                        continue;
                    int r = add_state(b, s.key, &w);
                    if (r == 0)
                        return finish(b, req, BUCHI_INCOMPLETE);
                    if (r < 0 || push_frame(b, w, 0) != 0)
                        return fail(b, req, "out of memory");
                    b->flags[w] |= F_CYAN;
                    return ask(b, req, WANT_FRAME, s.key);
                }
                /* an edge into the blue stack closes a cycle through both
                ** ends: accepting if either end is */
                if ((b->flags[w] & F_CYAN) &&
                    ((b->flags[f->state] | b->flags[w]) & F_ACC))
                    return ndfs_lasso(b, w, 0, req);
                continue;
            }
            if (!known && b->cfg.max_depth != 0)
                continue;       /* an edge the blue search cut */
            if (!known)
                return fail(b, req, "red search met a state the blue search "
                                    "never saw: inconsistent answers");
            /* any cyan state reaches the seed along the blue stack */
            if (b->flags[w] & F_CYAN)
                return ndfs_lasso(b, w, 1, req);
            if (!(b->flags[w] & F_RED)) {
                b->flags[w] |= F_RED;
                if (push_frame(b, w, 1) != 0)
                    return fail(b, req, "out of memory");
                return ask(b, req, WANT_FRAME, s.key);
            }
            continue;
        }
        if (!f->red && (b->flags[f->state] & F_ACC)) {
            /* post-order of an accepting state: the red search, reusing
            ** the seed's successor list from its blue frame */
            frame seed = *f;
            if (push_frame(b, seed.state, 1) != 0)
                return fail(b, req, "out of memory");
            frame *rf = &b->frames[b->depth - 1];
            rf->off = seed.off;
            rf->n = seed.n;
            b->red_base = b->depth - 1;
            b->flags[seed.state] |= F_RED;
            continue;
        }
        int seed_done = f->red && b->depth - 1 == b->red_base;
        if (!f->red || seed_done) {
            if (seed_done)
                pop_frame(b);           /* the red seed frame */
            /* the blue frame is done */
            b->flags[b->frames[b->depth - 1].state] &= (uint8_t)~F_CYAN;
        }
        pop_frame(b);
        if (b->depth == 0)
            return finish(b, req, BUCHI_EMPTY);
    }
}

/* ------------------------------------------------------------------ */
/* Couvreur's SCC algorithm                                           */

static int root_fair_accepting(const buchi *b, const root *r)
{
    return r->acc && r->cyclic &&
           (b->cfg.fairness == BUCHI_FAIR_NONE || r->pending == 0);
}

/* Merges the top root into the one below: their partial SCCs are one.
** The agents enabled throughout are those of both; an agent counts as
** taken if it was in either part or is the agent of the tree edge that
** entered the upper part, now internal. */
static void merge_top(buchi *b)
{
    root *u = &b->roots[b->nroots - 1], *l = u - 1;
    l->acc |= u->acc;
    l->cyclic = 1;
    if (b->cfg.fairness == BUCHI_FAIR_WEAK) {
        agent_mark *lm = &b->marks[l->agoff], *um = &b->marks[u->agoff];
        uint32_t i = 0, j = 0, k = 0, pending = 0;
        /* in place: k <= i, so the write never overtakes the read */
        while (i < l->nag && j < u->nag) {
            if (lm[i].agent < um[j].agent) {
                i++;
            } else if (lm[i].agent > um[j].agent) {
                j++;
            } else {
                uint32_t t = lm[i].taken | um[j].taken |
                             (lm[i].agent == u->entry);
                lm[k].agent = lm[i].agent;
                lm[k].taken = t;
                pending += !t;
                i++, j++, k++;
            }
        }
        l->nag = k;
        l->pending = pending;
        b->nmarks = l->agoff + k;
    }
    b->nroots--;
}

/* An internal edge of the top root's partial SCC moved `agent`. */
static void take_agent(buchi *b, uint32_t agent)
{
    if (b->cfg.fairness != BUCHI_FAIR_WEAK || agent == BUCHI_NO_AGENT)
        return;
    root *r = &b->roots[b->nroots - 1];
    agent_mark *m = &b->marks[r->agoff];
    uint32_t lo = 0, hi = r->nag;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m[mid].agent < agent)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < r->nag && m[lo].agent == agent && !m[lo].taken) {
        m[lo].taken = 1;
        r->pending--;
    }
}

static int cycle_start(buchi *b, buchi_request *req);

static int scc_run(buchi *b, buchi_request *req)
{
    for (;;) {
        frame *f = &b->frames[b->depth - 1];
        if (f->next < f->n) {
            buchi_succ s = b->arena[f->off + f->next++];
            b->st.transitions++;
            uint32_t w;
            if (!hx_find(&b->index, b->keys, s.key, &w)) {
                if (cut_here(b))
                    continue;
                int r = add_state(b, s.key, &w);
                if (r == 0)
                    return finish(b, req, BUCHI_INCOMPLETE);
                if (r < 0 || push_frame(b, w, 0) != 0)
                    return fail(b, req, "out of memory");
                b->entry_agent = s.agent;
                return ask(b, req, WANT_FRAME, s.key);
            }
            if (b->flags[w] & F_DEAD)
                continue;       /* into a finished SCC: not internal */
            /* w is active: every root above w's is in one SCC with it
            ** and with this state */
            while (b->roots[b->nroots - 1].state > w)
                merge_top(b);
            b->roots[b->nroots - 1].cyclic = 1;
            take_agent(b, s.agent);
            if (root_fair_accepting(b, &b->roots[b->nroots - 1]))
                return cycle_start(b, req);
            continue;
        }
        root *r = &b->roots[b->nroots - 1];
        if (r->state == f->state) {
            /* the SCC of f is complete and was rejected: retire it */
            for (size_t i = r->apos; i < b->nactive; i++)
                b->flags[b->active[i]] |= F_DEAD;
            b->nactive = r->apos;
            b->nmarks = r->agoff;
            b->nroots--;
        }
        pop_frame(b);
        if (b->depth == 0)
            return finish(b, req, BUCHI_EMPTY);
    }
}

/* The answer for a new state of the SCC search: it is a root of its own. */
static int scc_new_root(buchi *b, uint32_t state, const uint32_t *enabled,
                        size_t n_enabled)
{
    if (RESERVE(b, b->active, b->capactive, b->nactive + 1) != 0 ||
        RESERVE(b, b->roots, b->caproots, b->nroots + 1) != 0)
        return -1;
    root r = { .state = state, .entry = b->entry_agent,
               .frame = b->depth - 1, .apos = b->nactive,
               .agoff = b->nmarks, .acc = (b->flags[state] & F_ACC) != 0 };
    if (b->cfg.fairness == BUCHI_FAIR_WEAK) {
        if (RESERVE(b, b->marks, b->capmarks, b->nmarks + n_enabled) != 0)
            return -1;
        for (size_t i = 0; i < n_enabled; i++)
            b->marks[b->nmarks + i] = (agent_mark){ enabled[i], 0 };
        b->nmarks += n_enabled;
        r.nag = r.pending = (uint32_t)n_enabled;
    }
    b->active[b->nactive++] = state;
    b->roots[b->nroots++] = r;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Building the cycle (SCC)                                           */
/*
** The top root's partial SCC holds an accepting (fair) cycle.  The stem is
** the DFS stack up to the root.  The cycle is a walk from the root inside
** the SCC: repeatedly, a BFS to the nearest state or edge that settles an
** open need (an accepting state; for each agent in P, a state where it is
** disabled or a transition of it), then a BFS back to the root.  P only
** shrinks, each leg settles at least one need, and every need can be
** settled inside the SCC (an agent enabled in all its states moves inside
** it, since the SCC passed the fairness test; any other is disabled in
** one of its states), so the walk ends, and it is fair by construction:
** no agent is enabled in all of its states without moving on it.
** Successors are asked again: the DFS kept only the stack's lists.
*/

static void cb_free(buchi *b)
{
    cycle_builder *c = &b->cb;
    xfree(b, c->keys);
    xfree(b, c->dense);
    xfree(b, c->index.slot);
    xfree(b, c->have);
    xfree(b, c->soff);
    xfree(b, c->eoff);
    xfree(b, c->sn);
    xfree(b, c->en);
    xfree(b, c->succs);
    xfree(b, c->enabled);
    xfree(b, c->parent);
    xfree(b, c->pedge);
    xfree(b, c->seen);
    xfree(b, c->queue);
    xfree(b, c->p);
    memset(c, 0, sizeof *c);
}

static void *cb_array(buchi *b, size_t m, size_t size)
{
    void *p = b->cfg.realloc_fn(b->cfg.alloc_ctx, NULL, m * size);
    if (p != NULL)
        memset(p, 0, m * size);
    return p;
}

static int cycle_walk(buchi *b, buchi_request *req);

static int cycle_start(buchi *b, buchi_request *req)
{
    const root *r = &b->roots[b->nroots - 1];
    cycle_builder *c = &b->cb;
    if (set_stem(b, r->frame) != 0)
        return fail(b, req, "out of memory");
    size_t m = b->nactive - r->apos;
    c->m = m;
    if (m >= UINT32_MAX ||
        (c->keys = cb_array(b, m, sizeof *c->keys)) == NULL ||
        (c->dense = cb_array(b, m, sizeof *c->dense)) == NULL ||
        (c->have = cb_array(b, m, sizeof *c->have)) == NULL ||
        (c->soff = cb_array(b, m, sizeof *c->soff)) == NULL ||
        (c->eoff = cb_array(b, m, sizeof *c->eoff)) == NULL ||
        (c->sn = cb_array(b, m, sizeof *c->sn)) == NULL ||
        (c->en = cb_array(b, m, sizeof *c->en)) == NULL ||
        (c->parent = cb_array(b, m, sizeof *c->parent)) == NULL ||
        (c->pedge = cb_array(b, m, sizeof *c->pedge)) == NULL ||
        (c->seen = cb_array(b, m, sizeof *c->seen)) == NULL ||
        (c->queue = cb_array(b, m, sizeof *c->queue)) == NULL)
        return fail(b, req, "out of memory");
    /* local 0 is the root: it is first on the active suffix */
    for (size_t i = 0; i < m; i++) {
        c->dense[i] = b->active[r->apos + i];
        c->keys[i] = b->keys[c->dense[i]];
        if (hx_insert(b, &c->index, c->keys, (uint32_t)i) != 0)
            return fail(b, req, "out of memory");
    }
    c->cur = 0;
    c->need_acc = 1;
    c->p_set = b->cfg.fairness != BUCHI_FAIR_WEAK;  /* P stays empty */
    b->phase = PH_CYCLE;
    return cycle_walk(b, req);
}

static int p_has(const cycle_builder *c, uint32_t agent)
{
    size_t lo = 0, hi = c->np;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->p[mid] < agent)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->np && c->p[lo] == agent;
}

static void p_remove(cycle_builder *c, uint32_t agent)
{
    for (size_t i = 0; i < c->np; i++)
        if (c->p[i] == agent) {
            memmove(&c->p[i], &c->p[i + 1], (c->np - i - 1) * sizeof *c->p);
            c->np--;
            return;
        }
}

/* Does P hold an agent the state l does not enable? */
static int p_not_within(const cycle_builder *c, uint32_t l)
{
    const uint32_t *e = &c->enabled[c->eoff[l]];
    size_t i = 0, j = 0, n = c->en[l];
    while (i < c->np) {
        while (j < n && e[j] < c->p[i])
            j++;
        if (j == n || e[j] != c->p[i])
            return 1;
        i++;
    }
    return 0;
}

/* The walk passed state l (whose answer is cached). */
static void visit(buchi *b, uint32_t l)
{
    cycle_builder *c = &b->cb;
    if (b->flags[c->dense[l]] & F_ACC)
        c->need_acc = 0;
    const uint32_t *e = &c->enabled[c->eoff[l]];
    size_t n = c->en[l], j = 0, k = 0;
    for (size_t i = 0; i < c->np; i++) {
        while (j < n && e[j] < c->p[i])
            j++;
        if (j < n && e[j] == c->p[i])
            c->p[k++] = c->p[i];
    }
    c->np = k;
}

static int cycle_walk(buchi *b, buchi_request *req)
{
    cycle_builder *c = &b->cb;
    for (;;) {
        if (!c->bfs) {
            /* arrived at cur */
            if (!c->have[c->cur])
                return ask(b, req, WANT_CYCLE, c->keys[c->cur]);
            if (!c->p_set) {
                uint32_t n = c->en[c->cur];
                if (n > 0) {
                    if ((c->p = cb_array(b, n, sizeof *c->p)) == NULL)
                        return fail(b, req, "out of memory");
                    memcpy(c->p, &c->enabled[c->eoff[c->cur]], n * sizeof *c->p);
                }
                c->np = n;
                c->p_set = 1;
            }
            visit(b, c->cur);
            if (!c->need_acc && c->np == 0 && c->cur == 0 && b->ncycle > 0)
                return finish(b, req, BUCHI_FOUND);
            if (c->epoch == UINT32_MAX)
                return fail(b, req, "internal error: cycle walk too long");
            c->epoch++;
            c->start = c->cur;
            c->qhead = 0;
            c->qtail = 1;
            c->queue[0] = c->cur;
            c->seen[c->cur] = c->epoch;
            c->bfs = 1;
        }
        int back = !c->need_acc && c->np == 0;  /* only the root is left */
        uint32_t end = 0, y = 0, edge = 0;
        int found = 0;          /* 1: state target y, 2: edge (y, edge) */
        while (!found && c->qhead < c->qtail) {
            y = c->queue[c->qhead];
            if (!c->have[y])
                return ask(b, req, WANT_CYCLE, c->keys[y]);
            c->qhead++;
            if (!back && y != c->start &&
                ((c->need_acc && (b->flags[c->dense[y]] & F_ACC)) ||
                 p_not_within(c, y))) {
                found = 1;
                end = y;
                break;
            }
            const buchi_succ *s = &c->succs[c->soff[y]];
            for (uint32_t i = 0; i < c->sn[y]; i++) {
                uint32_t x;
                b->st.transitions++;
                if (!hx_find(&c->index, c->keys, s[i].key, &x))
                    continue;   /* leaves the SCC */
                if (back ? x == 0
                         : (s[i].agent != BUCHI_NO_AGENT && p_has(c, s[i].agent))) {
                    found = 2;
                    edge = i;
                    end = x;
                    break;
                }
                if (c->seen[x] != c->epoch) {
                    c->seen[x] = c->epoch;
                    c->parent[x] = y;
                    c->pedge[x] = i;
                    c->queue[c->qtail++] = x;
                }
            }
        }
        if (!found)
            return fail(b, req, "cycle not found again in its SCC: "
                                "inconsistent answers");
        c->bfs = 0;
        /* the path start .. y by parents, then the edge if any */
        size_t len = 0;
        for (uint32_t z = y; z != c->start; z = c->parent[z])
            len++;
        size_t base = b->ncycle, total = len + (found == 2);
        if (RESERVE(b, b->cycle, b->capcycle, base + total) != 0)
            return fail(b, req, "out of memory");
        if (found == 2)
            b->cycle[base + len] = (buchi_step){ c->keys[y], edge };
        size_t at = base + len;
        for (uint32_t z = y; z != c->start; z = c->parent[z]) {
            uint32_t from = c->parent[z];
            b->cycle[--at] = (buchi_step){ c->keys[from], c->pedge[z] };
            visit(b, z);
            p_remove(c, c->succs[c->soff[from] + c->pedge[z]].agent);
        }
        if (found == 2)
            p_remove(c, c->succs[c->soff[y] + edge].agent);
        b->ncycle = base + total;
        c->cur = end;
    }
}

static int cycle_answer(buchi *b, int accepting, const uint32_t *enabled,
                        size_t n_enabled, const buchi_succ *succs,
                        size_t n_succs, buchi_request *req)
{
    cycle_builder *c = &b->cb;
    uint32_t l = c->bfs ? c->queue[c->qhead] : c->cur;
    if (!accepting != !(b->flags[c->dense[l]] & F_ACC))
        return fail(b, req, "accepting flag differs from the first answer");
    if (RESERVE(b, c->succs, c->capsuccs, c->nsuccs + n_succs) != 0 ||
        RESERVE(b, c->enabled, c->capenabled, c->nenabled + n_enabled) != 0)
        return fail(b, req, "out of memory");
    if (n_succs)
        memcpy(&c->succs[c->nsuccs], succs, n_succs * sizeof *succs);
    if (n_enabled)
        memcpy(&c->enabled[c->nenabled], enabled, n_enabled * sizeof *enabled);
    c->soff[l] = c->nsuccs;
    c->sn[l] = (uint32_t)n_succs;
    c->eoff[l] = c->nenabled;
    c->en[l] = (uint32_t)n_enabled;
    c->nsuccs += n_succs;
    c->nenabled += n_enabled;
    c->have[l] = 1;
    return cycle_walk(b, req);
}

/* ------------------------------------------------------------------ */
/* Public API                                                         */

buchi *buchi_new(const buchi_config *cfg, const char **why)
{
    const char *w = NULL;
    if (cfg == NULL)
        w = "no configuration";
    else if (cfg->algorithm != BUCHI_NDFS && cfg->algorithm != BUCHI_SCC)
        w = "unknown algorithm";
    else if (cfg->fairness != BUCHI_FAIR_NONE && cfg->fairness != BUCHI_FAIR_WEAK)
        w = "unknown fairness";
    else if (cfg->fairness == BUCHI_FAIR_WEAK && cfg->algorithm != BUCHI_SCC)
        w = "weak fairness needs the SCC algorithm";
    else if ((cfg->realloc_fn == NULL) != (cfg->free_fn == NULL))
        w = "realloc_fn and free_fn go together";
    if (w != NULL) {
        if (why)
            *why = w;
        return NULL;
    }
    buchi_config c = *cfg;
    if (c.realloc_fn == NULL) {
        c.realloc_fn = std_realloc;
        c.free_fn = std_free;
    }
    buchi *b = c.realloc_fn(c.alloc_ctx, NULL, sizeof *b);
    if (b == NULL) {
        if (why)
            *why = "out of memory";
        return NULL;
    }
    memset(b, 0, sizeof *b);
    b->cfg = c;
    return b;
}

void buchi_free(buchi *b)
{
    if (b == NULL)
        return;
    xfree(b, b->keys);
    xfree(b, b->flags);
    xfree(b, b->index.slot);
    xfree(b, b->frames);
    xfree(b, b->arena);
    xfree(b, b->active);
    xfree(b, b->roots);
    xfree(b, b->marks);
    cb_free(b);
    xfree(b, b->stem);
    xfree(b, b->cycle);
    void (*f)(void *, void *) = b->cfg.free_fn;
    void *ctx = b->cfg.alloc_ctx;
    f(ctx, b);
}

int buchi_start(buchi *b, uint64_t init, buchi_request *req)
{
    if (b->phase != PH_NEW)
        return refuse(req, "search already started");
    b->phase = PH_SEARCH;
    uint32_t s;
    int r = add_state(b, init, &s);
    if (r == 0)
        return finish(b, req, BUCHI_INCOMPLETE);
    if (r < 0 || push_frame(b, s, 0) != 0)
        return fail(b, req, "out of memory");
    if (b->cfg.algorithm == BUCHI_NDFS)
        b->flags[s] |= F_CYAN;
    b->entry_agent = BUCHI_NO_AGENT;
    return ask(b, req, WANT_FRAME, init);
}

int buchi_answer(buchi *b, int accepting, const uint32_t *enabled,
                 size_t n_enabled, const buchi_succ *succs, size_t n_succs,
                 buchi_request *req)
{
    if (b->phase == PH_OVER)
        return refuse(req, "the search is over");
    if (b->want == WANT_NOTHING)
        return refuse(req, "no request is outstanding");
    const char *bad = check_answer(enabled, n_enabled, succs, n_succs);
    if (bad != NULL)
        return fail(b, req, bad);
    b->st.requests++;
    if (b->want == WANT_CYCLE)
        return cycle_answer(b, accepting, enabled, n_enabled, succs, n_succs, req);
    b->want = WANT_NOTHING;
    frame *f = &b->frames[b->depth - 1];
    if (f->red) {
        if (!accepting != !(b->flags[f->state] & F_ACC))
            return fail(b, req, "accepting flag differs from the first answer");
    } else if (accepting) {
        b->flags[f->state] |= F_ACC;
    }
    if (RESERVE(b, b->arena, b->caparena, b->atop + n_succs) != 0)
        return fail(b, req, "out of memory");
    if (n_succs)
        memcpy(&b->arena[b->atop], succs, n_succs * sizeof *succs);
    f->off = b->atop;
    f->n = (uint32_t)n_succs;
    b->atop += n_succs;
    if (b->cfg.algorithm == BUCHI_NDFS)
        return ndfs_run(b, req);
    if (scc_new_root(b, f->state, enabled, n_enabled) != 0)
        return fail(b, req, "out of memory");
    return scc_run(b, req);
}

int buchi_lasso(const buchi *b, const buchi_step **stem, size_t *n_stem,
                const buchi_step **cycle, size_t *n_cycle)
{
    if (b->phase != PH_OVER || b->result.kind != BUCHI_FOUND)
        return -1;
    *stem = b->stem;
    *n_stem = b->nstem;
    *cycle = b->cycle;
    *n_cycle = b->ncycle;
    return 0;
}

void buchi_get_stats(const buchi *b, buchi_stats *st)
{
    *st = b->st;
}
