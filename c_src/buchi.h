/*
** buchi.h: emptiness checks for Büchi products, as resumable state machines.
**
** The checker will search the product of the program's state graph and a
** Büchi automaton for an accepting cycle.  The successors of a product
** state can only be computed by running processes on the BEAM, so, like
** search.h, these searches cannot run to completion in C: they stop with a
** request whenever they need the successors of a state and resume when the
** caller answers.  Both algorithms therefore keep explicit stacks; nothing
** here recurses.
**
** States are opaque 64-bit keys chosen by the caller (later: a state-store
** id and an automaton state).  The module never interprets them.
**
** Algorithms
**   BUCHI_NDFS  nested DFS (Holzmann, Peled, Yannakakis 1996): a blue DFS;
**               in post-order of each accepting state a red DFS looks for a
**               state on the blue stack ("cyan"), which closes a cycle
**               through the seed.  Red marks are global.  The blue search
**               also reports an edge into a cyan state when either end
**               accepts (Schwoon and Esparza 2005).  No fairness.
**   BUCHI_SCC   Couvreur's on-the-fly SCC algorithm (1999): a Tarjan DFS
**               whose root stack carries, for the partial SCC of each root,
**               whether it accepts, whether it holds a cycle, and for weak
**               fairness the agents enabled in all of its states and which
**               of those move inside it.  It reports as soon as a partial
**               SCC holds an accepting (fair) cycle.
**
** Weak fairness (BUCHI_SCC only) is exact: an SCC holds a weakly fair
** accepting cycle iff it holds a cycle (two states, or a self-loop), an
** accepting state, and every agent enabled in *all* of its states takes a
** transition inside it.  (If such a cycle exists, it stays in the SCC, so
** an agent enabled throughout the SCC is enabled throughout the cycle and
** must move on it; conversely a cycle through every state and internal edge
** of the SCC is fair.)  So an SCC failing the test is rejected whole: no
** sub-SCC can do better, since every cycle inside it has an agent that is
** continuously enabled and never taken.
**
** Protocol
**   buchi_start(b, init, &req) and then, while req.kind is
**   BUCHI_NEED_SUCCESSORS, buchi_answer(b, <data of req.key>, &req).
**   The answer gives whether the state accepts, its enabled agents (strictly
**   increasing, never BUCHI_NO_AGENT) and its successors, each a target key
**   and the agent that moves (BUCHI_NO_AGENT for transitions exempt from
**   fairness: fault injection, the stutter loop of a terminal state).  The
**   arrays are copied; they need only live during the call.
**
**   The module does NOT cache successor lists beyond the states on its DFS
**   stacks, so memory follows the number of states, not transitions.  It
**   therefore asks for the same key again, and the caller must answer the
**   same way each time (same accepting flag, same successors in the same
**   order: the lasso names successors by index).  Re-asks happen:
**     - NDFS: once more per state the red search enters (each state at most
**       once, red marks are global; the seed reuses its blue list);
**     - both: after a cycle is found, for states of the SCC that holds it
**       while the cycle is built (each at most once: these answers are kept
**       until buchi_free).
**
** Results: BUCHI_EMPTY (no accepting, fair when asked, cycle is reachable),
** BUCHI_FOUND (buchi_lasso gives one), BUCHI_INCOMPLETE (max_states reached
** before either was known), BUCHI_ERROR (req.error says why: out of memory,
** a malformed or inconsistent answer, a call out of turn).  After a result
** the searcher only answers further calls with BUCHI_ERROR.
**
** Memory: a hash index key -> dense number and, per state, its key and a
** flag byte; the DFS stack with the successor lists of the states on it;
** for SCC the active (Tarjan) stack and the root stack, whose entries hold
** the always-enabled agents under weak fairness.  No O(n^2) structure.
*/
#ifndef MCE_BUCHI_H
#define MCE_BUCHI_H

#include <stddef.h>
#include <stdint.h>

typedef struct buchi buchi;

/* The agent of a transition not subject to fairness. */
#define BUCHI_NO_AGENT UINT32_MAX

enum buchi_algorithm { BUCHI_NDFS = 1, BUCHI_SCC = 2 };
enum buchi_fairness { BUCHI_FAIR_NONE = 0, BUCHI_FAIR_WEAK = 1 };

typedef struct buchi_config {
    enum buchi_algorithm algorithm;
    enum buchi_fairness fairness;   /* WEAK needs BUCHI_SCC */
    uint64_t max_states;            /* 0: unlimited (bounded by 2^32-2) */
    /* 0: unlimited.  Otherwise a state first met where the DFS stack
    ** would grow beyond max_depth frames is not entered (the edge is cut
    ** and counted in buchi_stats.cut); it may still be entered later by a
    ** shorter path.  A lasso found is real; EMPTY with cut > 0 means none
    ** within the bound. */
    uint64_t max_depth;
    /* Allocator (all NULL: realloc/free).  realloc_fn(ctx, NULL, n)
    ** allocates; it may fail and return NULL.  The tests inject failures
    ** through it to check that every failure path frees. */
    void *(*realloc_fn)(void *ctx, void *p, size_t n);
    void (*free_fn)(void *ctx, void *p);
    void *alloc_ctx;
} buchi_config;

typedef struct buchi_succ {
    uint64_t key;                   /* target state */
    uint32_t agent;                 /* who moves, or BUCHI_NO_AGENT */
} buchi_succ;

enum buchi_request_kind {
    BUCHI_NEED_SUCCESSORS = 1,      /* answer with the data of req.key */
    BUCHI_EMPTY,                    /* no accepting (fair) cycle */
    BUCHI_FOUND,                    /* a lasso: see buchi_lasso */
    BUCHI_INCOMPLETE,               /* stopped at max_states, none found */
    BUCHI_ERROR                     /* req.error: a static string */
};

typedef struct buchi_request {
    enum buchi_request_kind kind;
    uint64_t key;                   /* NEED_SUCCESSORS */
    const char *error;              /* ERROR */
} buchi_request;

/* One step of a lasso: a state and the index, in that state's successor
** list as answered, of the transition taken to the next step's state. */
typedef struct buchi_step {
    uint64_t key;
    uint32_t succ;
} buchi_step;

typedef struct buchi_stats {
    uint64_t states;        /* distinct states visited */
    uint64_t transitions;   /* successor edges examined (all phases) */
    uint64_t requests;      /* NEED_SUCCESSORS requests answered */
    uint64_t max_depth;     /* deepest DFS stack (blue + red for NDFS) */
    uint64_t cut;           /* edges not followed for config.max_depth */
} buchi_stats;

/* NULL when out of memory or the configuration is invalid; *why (if not
** NULL) then says which. */
buchi *buchi_new(const buchi_config *cfg, const char **why);
void buchi_free(buchi *b);

/* Both return 0 when *req is NEED_SUCCESSORS, EMPTY, FOUND or INCOMPLETE,
** -1 when it is ERROR. */
int buchi_start(buchi *b, uint64_t init, buchi_request *req);
int buchi_answer(buchi *b, int accepting, const uint32_t *enabled,
                 size_t n_enabled, const buchi_succ *succs, size_t n_succs,
                 buchi_request *req);

/* After FOUND: the stem (from the initial state up to, not including, the
** cycle's entry; empty when the entry is the initial state) and the cycle
** (from the entry, its last step leading back to the entry; never empty).
** The cycle passes through an accepting state and, under weak fairness,
** takes a transition of every agent enabled in all of its states.  Valid
** until buchi_free.  Returns 0, or -1 when there is no lasso. */
int buchi_lasso(const buchi *b, const buchi_step **stem, size_t *n_stem,
                const buchi_step **cycle, size_t *n_cycle);

void buchi_get_stats(const buchi *b, buchi_stats *st);

#endif
