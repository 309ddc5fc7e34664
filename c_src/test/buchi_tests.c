/*
** buchi_tests.c: tests of the Büchi emptiness checks (buchi.c), without
** the BEAM.
**
** Graphs are explicit (struct tgraph) and a driver answers the searcher's
** requests from them.  Covers hand-made graphs (accepting and
** non-accepting cycles, an accepting state off every cycle, self-loops,
** weak fairness won and lost, nested SCCs, a partial SCC that is unfair
** while the whole SCC is fair), the protocol (calls out of turn, malformed
** and inconsistent answers, max_states), how often states are asked,
** allocation failures at every allocation, a long ring (no recursion), and
** random graphs where NDFS and SCC (fairness none and weak) must agree
** with a brute-force checker written here from the definitions
** (reachability closure, SCCs as mutual reachability).  Every lasso
** returned is checked: real edges, from the initial state, an accepting
** cycle, fair under weak fairness.
**
** Built by `make -C c_src buchi-test` with ASan and UBSan (leak checking
** on).  Prints "N passed, M failed"; exits non-zero on failure.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buchi.h"

static unsigned long g_passed, g_failed;

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (cond) {                                                        \
            g_passed++;                                                    \
        } else {                                                           \
            g_failed++;                                                    \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__,         \
                    __LINE__, #cond);                                      \
        }                                                                  \
    } while (0)

#define NA BUCHI_NO_AGENT
#define MAXN 16
#define MAXS 8
#define MAXA 32

/* ------------------------------------------------------------------ */
/* Explicit graphs and the driver                                     */

typedef struct tstate {
    uint64_t key;
    int acc;
    uint32_t en[MAXA];
    size_t nen;
    buchi_succ succ[MAXS];
    size_t nsucc;
} tstate;

typedef struct tgraph {
    tstate st[MAXN];
    size_t n;
    uint64_t init;
} tgraph;

/* Keys are i * K + 7: not dense, so that nothing relies on small keys. */
#define KEY(i) ((uint64_t)(i) * 0x9e3779b97f4a7c15ULL + 7)

static void g_init(tgraph *g, size_t n)
{
    memset(g, 0, sizeof *g);
    g->n = n;
    for (size_t i = 0; i < n; i++)
        g->st[i].key = KEY(i);
    g->init = KEY(0);
}

static void g_edge(tgraph *g, size_t from, size_t to, uint32_t agent)
{
    tstate *s = &g->st[from];
    s->succ[s->nsucc++] = (buchi_succ){ KEY(to), agent };
}

/* enabled agents, ascending, terminated by NA */
static void g_enable(tgraph *g, size_t i, const uint32_t *agents)
{
    tstate *s = &g->st[i];
    s->nen = 0;
    for (; *agents != NA; agents++)
        s->en[s->nen++] = *agents;
}

static int g_find(const tgraph *g, uint64_t key)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->st[i].key == key)
            return (int)i;
    return -1;
}

typedef struct run_out {
    enum buchi_request_kind kind;
    const char *error;
    buchi_step *stem, *cycle;
    size_t nstem, ncycle;
    buchi_stats stats;
    unsigned asks[MAXN];
} run_out;

static void out_free(run_out *o)
{
    free(o->stem);
    free(o->cycle);
    o->stem = o->cycle = NULL;
}

static buchi_step *copy_steps(const buchi_step *s, size_t n)
{
    buchi_step *c = malloc((n ? n : 1) * sizeof *c);
    if (c == NULL) {
        fprintf(stderr, "out of memory in the test itself\n");
        exit(2);
    }
    if (n)
        memcpy(c, s, n * sizeof *c);
    return c;
}

/* Runs one search over g with the given configuration.  0 if it ran (the
** outcome is in *o), -1 if buchi_new refused. */
static int run_cfg(const tgraph *g, const buchi_config *cfg, run_out *o)
{
    memset(o, 0, sizeof *o);
    buchi *b = buchi_new(cfg, NULL);
    if (b == NULL)
        return -1;
    buchi_request req;
    buchi_start(b, g->init, &req);
    while (req.kind == BUCHI_NEED_SUCCESSORS) {
        int i = g_find(g, req.key);
        if (i < 0) {
            fprintf(stderr, "searcher asked for an unknown key\n");
            exit(2);
        }
        o->asks[i]++;
        const tstate *s = &g->st[i];
        buchi_answer(b, s->acc, s->en, s->nen, s->succ, s->nsucc, &req);
    }
    o->kind = req.kind;
    o->error = req.error;
    if (req.kind == BUCHI_FOUND) {
        const buchi_step *st, *cy;
        size_t ns, nc;
        if (buchi_lasso(b, &st, &ns, &cy, &nc) == 0) {
            o->stem = copy_steps(st, ns);
            o->cycle = copy_steps(cy, nc);
            o->nstem = ns;
            o->ncycle = nc;
        }
    }
    buchi_get_stats(b, &o->stats);
    buchi_free(b);
    return 0;
}

static void run(const tgraph *g, enum buchi_algorithm alg,
                enum buchi_fairness fair, run_out *o)
{
    buchi_config cfg = { .algorithm = alg, .fairness = fair };
    if (run_cfg(g, &cfg, o) != 0) {
        fprintf(stderr, "buchi_new failed\n");
        exit(2);
    }
}

/* ------------------------------------------------------------------ */
/* Lasso validation and the brute-force oracle                        */

static int enables(const tstate *s, uint32_t a)
{
    for (size_t i = 0; i < s->nen; i++)
        if (s->en[i] == a)
            return 1;
    return 0;
}

/* 1 if stem + cycle is a real lasso of g from its initial state whose
** cycle accepts and, when weak, is weakly fair: every agent enabled in all
** states of the cycle takes one of the cycle's transitions. */
static int lasso_valid(const tgraph *g, const run_out *o, int weak)
{
    if (o->ncycle == 0 || o->cycle == NULL)
        return 0;
    uint64_t expect = g->init;
    for (size_t i = 0; i < o->nstem + o->ncycle; i++) {
        const buchi_step *s = i < o->nstem ? &o->stem[i] : &o->cycle[i - o->nstem];
        if (s->key != expect)
            return 0;
        int k = g_find(g, s->key);
        if (k < 0 || s->succ >= g->st[k].nsucc)
            return 0;
        expect = g->st[k].succ[s->succ].key;
    }
    if (expect != o->cycle[0].key)
        return 0;
    int acc = 0;
    for (size_t i = 0; i < o->ncycle; i++)
        acc |= g->st[g_find(g, o->cycle[i].key)].acc;
    if (!acc)
        return 0;
    if (!weak)
        return 1;
    for (uint32_t a = 0; a < MAXA; a++) {
        int always = 1, taken = 0;
        for (size_t i = 0; i < o->ncycle; i++) {
            const tstate *s = &g->st[g_find(g, o->cycle[i].key)];
            always &= enables(s, a);
            taken |= s->succ[o->cycle[i].succ].agent == a;
        }
        if (always && !taken)
            return 0;
    }
    return 1;
}

/* From the definitions: R[i] = states reachable from i in one or more
** steps (closure by iteration); the SCC of a state s on a cycle is
** {t : t = s or (s ->+ t and t ->+ s)}.  Without fairness: some reachable
** accepting s has s ->+ s.  With weak fairness: some reachable SCC with a
** cycle holds an accepting state, and each agent enabled in all of its
** states labels an edge between two of its states. */
static int oracle(const tgraph *g, int weak)
{
    uint32_t R[MAXN] = { 0 };
    for (size_t i = 0; i < g->n; i++)
        for (size_t j = 0; j < g->st[i].nsucc; j++)
            R[i] |= 1u << g_find(g, g->st[i].succ[j].key);
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 0; i < g->n; i++)
            for (size_t j = 0; j < g->n; j++)
                if ((R[i] >> j & 1) && (R[i] | R[j]) != R[i]) {
                    R[i] |= R[j];
                    changed = 1;
                }
    }
    int init = g_find(g, g->init);
    uint32_t reach = R[init] | 1u << init;
    for (size_t s = 0; s < g->n; s++) {
        if (!(reach >> s & 1) || !(R[s] >> s & 1))
            continue;
        if (!weak) {
            if (g->st[s].acc)
                return 1;
            continue;
        }
        uint32_t C = 1u << s;
        for (size_t t = 0; t < g->n; t++)
            if ((R[s] >> t & 1) && (R[t] >> s & 1))
                C |= 1u << t;
        int acc = 0;
        for (size_t t = 0; t < g->n; t++)
            if (C >> t & 1)
                acc |= g->st[t].acc;
        if (!acc)
            continue;
        int fair = 1;
        for (uint32_t a = 0; a < MAXA && fair; a++) {
            int always = 1, moves = 0;
            for (size_t t = 0; t < g->n; t++) {
                if (!(C >> t & 1))
                    continue;
                always &= enables(&g->st[t], a);
                for (size_t j = 0; j < g->st[t].nsucc; j++)
                    if (g->st[t].succ[j].agent == a &&
                        (C >> g_find(g, g->st[t].succ[j].key) & 1))
                        moves = 1;
            }
            if (always && !moves)
                fair = 0;
        }
        if (fair)
            return 1;
    }
    return 0;
}

/* Runs the three modes; checks them against the oracle and their
** lassos.  Returns a bitmask: 1 ndfs found, 2 scc found, 4 scc weak. */
static int check_all_modes(const tgraph *g, int expect_none, int expect_weak)
{
    static const struct { enum buchi_algorithm a; enum buchi_fairness f; } modes[] = {
        { BUCHI_NDFS, BUCHI_FAIR_NONE },
        { BUCHI_SCC, BUCHI_FAIR_NONE },
        { BUCHI_SCC, BUCHI_FAIR_WEAK },
    };
    int mask = 0;
    for (int m = 0; m < 3; m++) {
        run_out o;
        run(g, modes[m].a, modes[m].f, &o);
        int weak = modes[m].f == BUCHI_FAIR_WEAK;
        int expect = weak ? expect_weak : expect_none;
        CHECK(o.kind == (expect ? BUCHI_FOUND : BUCHI_EMPTY));
        if (o.kind == BUCHI_FOUND) {
            CHECK(lasso_valid(g, &o, weak));
            mask |= 1 << m;
        }
        /* SCC asks each state once while searching; NDFS at most twice */
        for (size_t i = 0; i < g->n; i++)
            if (modes[m].a == BUCHI_NDFS)
                CHECK(o.asks[i] <= 2);
            else if (o.kind == BUCHI_EMPTY)
                CHECK(o.asks[i] <= 1);
            else
                CHECK(o.asks[i] <= 2);
        out_free(&o);
    }
    return mask;
}

/* ------------------------------------------------------------------ */
/* Hand-made graphs                                                   */

static const uint32_t EN_NONE[] = { NA };
static const uint32_t EN_A[] = { 0, NA };
static const uint32_t EN_AB[] = { 0, 1, NA };
static const uint32_t EN_ABC[] = { 0, 1, 2, NA };

static void test_simple_cycles(void)
{
    tgraph g;
    /* 0 -> 1 -> 2 -> 0, 1 accepts */
    g_init(&g, 3);
    g_edge(&g, 0, 1, 0);
    g_edge(&g, 1, 2, 0);
    g_edge(&g, 2, 0, 0);
    g.st[1].acc = 1;
    for (int i = 0; i < 3; i++)
        g_enable(&g, (size_t)i, EN_A);
    CHECK(oracle(&g, 0) && oracle(&g, 1));
    CHECK(check_all_modes(&g, 1, 1) == 7);

    /* a non-accepting cycle, and an accepting state beside it */
    g_init(&g, 3);
    g_edge(&g, 0, 1, NA);
    g_edge(&g, 1, 0, NA);
    g_edge(&g, 1, 2, NA);
    g.st[2].acc = 1;
    CHECK(!oracle(&g, 0));
    check_all_modes(&g, 0, 0);

    /* an accepting state on no cycle, before a cycle */
    g_init(&g, 3);
    g.st[0].acc = 1;
    g_edge(&g, 0, 1, NA);
    g_edge(&g, 1, 2, NA);
    g_edge(&g, 2, 1, NA);
    CHECK(!oracle(&g, 0));
    check_all_modes(&g, 0, 0);

    /* a single accepting state without a self-loop: a trivial SCC */
    g_init(&g, 1);
    g.st[0].acc = 1;
    check_all_modes(&g, 0, 0);

    /* self-loop: stem [0], cycle [1] */
    g_init(&g, 2);
    g_edge(&g, 0, 1, NA);
    g_edge(&g, 1, 1, NA);
    g.st[1].acc = 1;
    check_all_modes(&g, 1, 1);
    for (int alg = BUCHI_NDFS; alg <= BUCHI_SCC; alg++) {
        run_out o;
        run(&g, (enum buchi_algorithm)alg, BUCHI_FAIR_NONE, &o);
        CHECK(o.kind == BUCHI_FOUND && o.nstem == 1 && o.ncycle == 1);
        CHECK(o.nstem == 1 && o.stem[0].key == KEY(0) && o.stem[0].succ == 0);
        CHECK(o.ncycle == 1 && o.cycle[0].key == KEY(1) && o.cycle[0].succ == 0);
        out_free(&o);
    }

    /* the initial state on the cycle: empty stem */
    g_init(&g, 2);
    g_edge(&g, 0, 1, NA);
    g_edge(&g, 1, 0, NA);
    g.st[0].acc = 1;
    for (int alg = BUCHI_NDFS; alg <= BUCHI_SCC; alg++) {
        run_out o;
        run(&g, (enum buchi_algorithm)alg, BUCHI_FAIR_NONE, &o);
        CHECK(o.kind == BUCHI_FOUND && o.nstem == 0 && o.ncycle == 2);
        CHECK(lasso_valid(&g, &o, 0));
        out_free(&o);
    }
}

static void test_fairness(void)
{
    tgraph g;
    /* 0 <-a-> 1, 0 accepts; b is enabled in both and its only transition
    ** leaves for 2 (a non-accepting sink with a stutter loop): the cycle
    ** is unfair to b */
    g_init(&g, 3);
    g.st[0].acc = 1;
    g_edge(&g, 0, 1, 0);
    g_edge(&g, 0, 2, 1);
    g_edge(&g, 1, 0, 0);
    g_edge(&g, 1, 2, 1);
    g_edge(&g, 2, 2, NA);
    g_enable(&g, 0, EN_AB);
    g_enable(&g, 1, EN_AB);
    CHECK(oracle(&g, 0) && !oracle(&g, 1));
    CHECK(check_all_modes(&g, 1, 0) == 3);

    /* the same, but b is disabled in 1: fair */
    g_enable(&g, 1, EN_A);
    g.st[1].nsucc = 1;
    CHECK(oracle(&g, 1));
    CHECK(check_all_modes(&g, 1, 1) == 7);

    /* b moves inside the SCC (0 -b-> 1): fair, and the cycle must take b
    ** although the DFS closes the cycle through a first */
    g_init(&g, 2);
    g.st[0].acc = 1;
    g_edge(&g, 0, 1, 0);
    g_edge(&g, 0, 1, 1);
    g_edge(&g, 1, 0, 0);
    g_enable(&g, 0, EN_AB);
    g_enable(&g, 1, EN_AB);
    CHECK(check_all_modes(&g, 1, 1) == 7);
    {
        run_out o;
        run(&g, BUCHI_SCC, BUCHI_FAIR_WEAK, &o);
        int took_b = 0;
        for (size_t i = 0; i < o.ncycle; i++)
            took_b |= o.cycle[i].key == KEY(0) && o.cycle[i].succ == 1;
        CHECK(took_b);
        out_free(&o);
    }

    /* transitions without an agent (faults, stutter) never make a cycle
    ** fair: 0 -NA-> 0 with a enabled and never taken */
    g_init(&g, 1);
    g.st[0].acc = 1;
    g_edge(&g, 0, 0, NA);
    g_enable(&g, 0, EN_A);
    CHECK(check_all_modes(&g, 1, 0) == 3);
    /* a terminal state's stutter loop with nothing enabled is fair */
    g_enable(&g, 0, EN_NONE);
    CHECK(check_all_modes(&g, 1, 1) == 7);
}

static void test_nested_sccs(void)
{
    tgraph g;
    /* Inner cycle 0 <-a-> 1 (0 accepts) is unfair to b, enabled in 0, 1
    ** and 2; the whole SCC {0, 1, 2} is fair: 1 -b-> 2 -c-> 0.  The DFS
    ** meets the inner cycle first, so the partial SCC fails the test and
    ** the search must go on until 2 joins it. */
    g_init(&g, 3);
    g.st[0].acc = 1;
    g_edge(&g, 0, 1, 0);
    g_edge(&g, 1, 0, 0);
    g_edge(&g, 1, 2, 1);
    g_edge(&g, 2, 0, 2);
    g_enable(&g, 0, EN_AB);
    g_enable(&g, 1, EN_AB);
    g_enable(&g, 2, EN_ABC);
    CHECK(oracle(&g, 1));
    CHECK(check_all_modes(&g, 1, 1) == 7);

    /* Two SCCs in a row: the first ({1, 2}) accepts but is unfair, the
    ** second ({3, 4}) is fair and accepting; an SCC off to the side
    ** ({5}) accepts with a self-loop but is unfair too. */
    g_init(&g, 6);
    g_edge(&g, 0, 5, NA);
    g_edge(&g, 0, 1, NA);
    g_edge(&g, 5, 5, 0);
    g_enable(&g, 5, EN_AB);
    g.st[5].acc = 1;
    g_edge(&g, 1, 2, 0);
    g_edge(&g, 2, 1, 0);
    g_edge(&g, 2, 3, 1);
    g_enable(&g, 1, EN_AB);
    g_enable(&g, 2, EN_AB);
    g.st[1].acc = 1;
    g_edge(&g, 3, 4, 0);
    g_edge(&g, 4, 3, 1);
    g_enable(&g, 3, EN_AB);
    g_enable(&g, 4, EN_AB);
    g.st[4].acc = 1;
    CHECK(oracle(&g, 1));
    {
        run_out o;
        run(&g, BUCHI_SCC, BUCHI_FAIR_WEAK, &o);
        CHECK(o.kind == BUCHI_FOUND && lasso_valid(&g, &o, 1));
        CHECK(o.ncycle > 0 && (o.cycle[0].key == KEY(3) || o.cycle[0].key == KEY(4)));
        out_free(&o);
    }
    check_all_modes(&g, 1, 1);

    /* NDFS: red searches from several seeds share red marks; the cycle
    ** 3 -> 4 -> 3 is reached only through earlier red-visited states */
    g_init(&g, 6);
    g_edge(&g, 0, 1, NA);
    g_edge(&g, 0, 3, NA);
    g_edge(&g, 1, 2, NA);
    g_edge(&g, 2, 5, NA);
    g.st[1].acc = 1;
    g.st[2].acc = 1;
    g_edge(&g, 3, 4, NA);
    g_edge(&g, 4, 3, NA);
    g_edge(&g, 4, 5, NA);
    g.st[4].acc = 1;
    CHECK(check_all_modes(&g, 1, 1) == 7);
}

/* A big ring: depth 100,000 without recursion. */
static void test_long_ring(void)
{
    const uint32_t n = 100000;
    for (int m = 0; m < 3; m++) {
        buchi_config cfg = { .algorithm = m == 0 ? BUCHI_NDFS : BUCHI_SCC,
                             .fairness = m == 2 ? BUCHI_FAIR_WEAK : BUCHI_FAIR_NONE };
        buchi *b = buchi_new(&cfg, NULL);
        CHECK(b != NULL);
        if (b == NULL)
            return;
        buchi_request req;
        buchi_start(b, 0, &req);
        uint32_t en = 7;
        while (req.kind == BUCHI_NEED_SUCCESSORS) {
            uint64_t k = req.key;
            buchi_succ s = { (k + 1) % n, 7 };
            buchi_answer(b, k == n / 2, &en, 1, &s, 1, &req);
        }
        CHECK(req.kind == BUCHI_FOUND);
        const buchi_step *st, *cy;
        size_t ns, nc;
        CHECK(buchi_lasso(b, &st, &ns, &cy, &nc) == 0 && ns + nc >= n);
        buchi_stats stats;
        buchi_get_stats(b, &stats);
        CHECK(stats.states == n && stats.max_depth >= n);
        buchi_free(b);
    }
}

/* ------------------------------------------------------------------ */
/* Protocol                                                           */

static void test_protocol(void)
{
    const char *why = NULL;
    buchi_config bad = { .algorithm = BUCHI_NDFS, .fairness = BUCHI_FAIR_WEAK };
    CHECK(buchi_new(&bad, &why) == NULL && why != NULL);
    bad.algorithm = 9;
    CHECK(buchi_new(&bad, NULL) == NULL);
    CHECK(buchi_new(NULL, &why) == NULL);

    buchi_config cfg = { .algorithm = BUCHI_SCC, .fairness = BUCHI_FAIR_WEAK };
    buchi_request req;
    buchi_succ loop = { 1, 0 };
    uint32_t en[2] = { 3, 2 };

    /* an answer before start, then a normal run */
    buchi *b = buchi_new(&cfg, NULL);
    CHECK(buchi_answer(b, 0, NULL, 0, NULL, 0, &req) == -1 &&
          req.kind == BUCHI_ERROR);
    CHECK(buchi_start(b, 1, &req) == 0 && req.kind == BUCHI_NEED_SUCCESSORS &&
          req.key == 1);
    CHECK(buchi_start(b, 1, &req) == -1 && req.kind == BUCHI_ERROR);
    /* the cycle is closed; the cycle builder asks for the root again */
    CHECK(buchi_answer(b, 1, NULL, 0, &loop, 1, &req) == 0 &&
          req.kind == BUCHI_NEED_SUCCESSORS && req.key == 1);
    CHECK(buchi_answer(b, 1, NULL, 0, &loop, 1, &req) == 0 &&
          req.kind == BUCHI_FOUND);
    /* after the result: refused, but the lasso stays */
    CHECK(buchi_answer(b, 1, NULL, 0, &loop, 1, &req) == -1);
    const buchi_step *st, *cy;
    size_t ns, nc;
    CHECK(buchi_lasso(b, &st, &ns, &cy, &nc) == 0 && ns == 0 && nc == 1 &&
          cy[0].key == 1 && cy[0].succ == 0);
    buchi_free(b);

    /* malformed answers */
    b = buchi_new(&cfg, NULL);
    buchi_start(b, 1, &req);
    CHECK(buchi_answer(b, 0, en, 2, NULL, 0, &req) == -1 &&
          req.kind == BUCHI_ERROR && req.error != NULL);
    CHECK(buchi_lasso(b, &st, &ns, &cy, &nc) == -1);
    buchi_free(b);
    b = buchi_new(&cfg, NULL);
    buchi_start(b, 1, &req);
    CHECK(buchi_answer(b, 0, NULL, 1, NULL, 0, &req) == -1);
    buchi_free(b);
    b = buchi_new(&cfg, NULL);
    buchi_start(b, 1, &req);
    uint32_t na = NA;
    CHECK(buchi_answer(b, 0, &na, 1, NULL, 0, &req) == -1);
    buchi_free(b);

    /* an inconsistent accepting flag in the red search */
    cfg.algorithm = BUCHI_NDFS;
    cfg.fairness = BUCHI_FAIR_NONE;
    b = buchi_new(&cfg, NULL);
    buchi_start(b, 1, &req);
    buchi_succ to2 = { 2, NA }, to1 = { 1, NA };
    buchi_answer(b, 1, NULL, 0, &to2, 1, &req);        /* 1 accepts -> 2 */
    CHECK(req.kind == BUCHI_NEED_SUCCESSORS && req.key == 2);
    buchi_answer(b, 0, NULL, 0, NULL, 0, &req);        /* 2: stuck */
    CHECK(req.kind == BUCHI_NEED_SUCCESSORS && req.key == 2);   /* red */
    CHECK(buchi_answer(b, 1, NULL, 0, NULL, 0, &req) == -1 &&
          req.kind == BUCHI_ERROR);
    buchi_free(b);

    /* a red search meeting a state the blue one never saw */
    b = buchi_new(&cfg, NULL);
    buchi_start(b, 1, &req);
    buchi_answer(b, 1, NULL, 0, &to2, 1, &req);
    buchi_answer(b, 0, NULL, 0, NULL, 0, &req);
    buchi_succ to3 = { 3, NA };
    CHECK(buchi_answer(b, 0, NULL, 0, &to3, 1, &req) == -1);
    buchi_free(b);

    /* the SCC cycle builder sees different successors the second time */
    cfg.algorithm = BUCHI_SCC;
    b = buchi_new(&cfg, NULL);
    buchi_start(b, 1, &req);
    buchi_answer(b, 1, NULL, 0, &to2, 1, &req);
    buchi_answer(b, 0, NULL, 0, &to1, 1, &req);        /* cycle 1 -> 2 -> 1 */
    int guard = 0;
    while (req.kind == BUCHI_NEED_SUCCESSORS && guard++ < 10)
        buchi_answer(b, req.key == 1, NULL, 0, &to3, 1, &req);
    CHECK(req.kind == BUCHI_ERROR);
    buchi_free(b);

    /* max_states */
    for (int alg = BUCHI_NDFS; alg <= BUCHI_SCC; alg++) {
        cfg.algorithm = (enum buchi_algorithm)alg;
        cfg.max_states = 3;
        b = buchi_new(&cfg, NULL);
        buchi_start(b, 0, &req);
        while (req.kind == BUCHI_NEED_SUCCESSORS) {
            buchi_succ s = { req.key + 1, NA };
            buchi_answer(b, 0, NULL, 0, &s, 1, &req);
        }
        CHECK(req.kind == BUCHI_INCOMPLETE);
        buchi_stats stats;
        buchi_get_stats(b, &stats);
        CHECK(stats.states == 3);
        buchi_free(b);
    }
    cfg.max_states = 0;

    /* max_depth: a chain 0 -> 1 -> ... whose state 5 accepts on a self
    ** loop; a stack of at most 5 frames never enters state 5 (the edge
    ** is cut and counted), 6 frames find the lasso; the red search of
    ** NDFS skips the edges the blue search cut */
    for (int alg = BUCHI_NDFS; alg <= BUCHI_SCC; alg++) {
        for (uint64_t depth = 5; depth <= 6; depth++) {
            cfg.algorithm = (enum buchi_algorithm)alg;
            cfg.max_depth = depth;
            b = buchi_new(&cfg, NULL);
            buchi_start(b, 0, &req);
            while (req.kind == BUCHI_NEED_SUCCESSORS) {
                /* 4 accepts too and has an edge back to 0, but 0 -> 4
                ** only through the chain */
                buchi_succ s[2] = { { req.key == 5 ? 5 : req.key + 1, NA }, { 0, NA } };
                buchi_answer(b, req.key == 5, NULL, 0, s, req.key == 3 ? 2 : 1, &req);
            }
            buchi_stats stats;
            buchi_get_stats(b, &stats);
            if (depth == 5) {
                CHECK(req.kind == BUCHI_EMPTY);
                CHECK(stats.cut == 1);
                CHECK(stats.states == 5);
            } else {
                CHECK(req.kind == BUCHI_FOUND);
                CHECK(stats.cut == 0);
            }
            buchi_free(b);
        }
    }
    cfg.max_depth = 0;

    buchi_free(NULL);
}

/* ------------------------------------------------------------------ */
/* Allocation failures                                                */

typedef struct failing {
    long left;          /* allocations still allowed; < 0: no limit */
    long live;          /* blocks not freed */
} failing;

static void *f_realloc(void *ctx, void *p, size_t n)
{
    failing *f = ctx;
    if (f->left == 0)
        return NULL;
    if (f->left > 0)
        f->left--;
    void *q = realloc(p, n);
    if (q != NULL && p == NULL)
        f->live++;
    return q;
}

static void f_free(void *ctx, void *p)
{
    failing *f = ctx;
    f->live--;
    free(p);
}

/* Every allocation fails in turn: the searcher reports an error (never
** crashes) and frees everything it allocated. */
static void test_alloc_failures(void)
{
    tgraph gs[2];
    /* a graph that needs the cycle builder under weak fairness, and whose
    ** NDFS cycle closes in the blue search */
    tgraph *g = &gs[0];
    g_init(g, 5);
    g_edge(g, 0, 1, 0);
    g_edge(g, 1, 2, 0);
    g_edge(g, 2, 3, 1);
    g_edge(g, 3, 1, 2);
    g_edge(g, 3, 4, 0);
    g_edge(g, 4, 2, 0);
    for (size_t i = 0; i < 5; i++)
        g_enable(g, i, EN_ABC);
    g->st[4].acc = 1;
    /* one whose NDFS cycle closes in a red search, after a finished SCC */
    g = &gs[1];
    g_init(g, 4);
    g_edge(g, 0, 3, NA);
    g_edge(g, 0, 1, NA);
    g_edge(g, 1, 2, NA);
    g_edge(g, 2, 0, NA);
    g_edge(g, 3, 3, NA);
    g->st[1].acc = 1;
    for (int i = 0; i < 6; i++) {
        g = &gs[i / 3];
        int m = i % 3, succeeded = 0;
        for (long k = 0; k < 10000 && !succeeded; k++) {
            failing f = { k, 0 };
            buchi_config cfg = { .algorithm = m == 0 ? BUCHI_NDFS : BUCHI_SCC,
                                 .fairness = m == 2 ? BUCHI_FAIR_WEAK : BUCHI_FAIR_NONE,
                                 .realloc_fn = f_realloc, .free_fn = f_free,
                                 .alloc_ctx = &f };
            run_out o;
            if (run_cfg(g, &cfg, &o) != 0) {
                CHECK(f.live == 0);
                continue;
            }
            if (o.kind == BUCHI_FOUND) {
                succeeded = 1;
                CHECK(lasso_valid(g, &o, m == 2));
            } else {
                CHECK(o.kind == BUCHI_ERROR && o.error != NULL &&
                      strcmp(o.error, "out of memory") == 0);
            }
            CHECK(f.live == 0);
            out_free(&o);
        }
        CHECK(succeeded);
    }
}

/* ------------------------------------------------------------------ */
/* Random graphs against the oracle                                   */

static uint64_t rng_state = 0x2545F4914F6CDD1DULL;

static uint64_t rnd(void)
{
    /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1DULL;
}

static void random_graph(tgraph *g)
{
    size_t n = 1 + rnd() % 12;
    uint32_t nagents = 1 + (uint32_t)(rnd() % 4);
    memset(g, 0, sizeof *g);
    g->n = n;
    for (size_t i = 0; i < n; i++) {
        uint64_t k;
        do
            k = rnd();
        while (g_find(g, k) >= 0);
        g->st[i].key = k;
    }
    g->init = g->st[rnd() % n].key;
    for (size_t i = 0; i < n; i++) {
        tstate *s = &g->st[i];
        s->acc = rnd() % 4 == 0;
        for (uint32_t a = 0; a < nagents; a++)
            if (rnd() % 3 != 0)
                s->en[s->nen++] = a;
        s->nsucc = rnd() % 4;
        for (size_t j = 0; j < s->nsucc; j++) {
            uint32_t agent;
            uint64_t r = rnd() % 10;
            if (r < 7 && s->nen > 0)
                agent = s->en[rnd() % s->nen];     /* enabled, as usual */
            else if (r < 9)
                agent = (uint32_t)(rnd() % nagents);
            else
                agent = NA;
            s->succ[j] = (buchi_succ){ g->st[rnd() % n].key, agent };
        }
    }
}

static void test_random(unsigned ngraphs)
{
    unsigned found_none = 0, found_weak = 0, unfair_only = 0;
    unsigned long failed_before = g_failed;
    for (unsigned t = 0; t < ngraphs; t++) {
        tgraph g;
        random_graph(&g);
        int none = oracle(&g, 0), weak = oracle(&g, 1);
        CHECK(!weak || none);
        found_none += none;
        found_weak += weak;
        unfair_only += none && !weak;
        check_all_modes(&g, none, weak);
        if (g_failed != failed_before) {
            fprintf(stderr, "random graph %u disagrees (n=%zu)\n", t, g.n);
            failed_before = g_failed;
        }
    }
    printf("random: %u graphs, accepting cycle in %u, fair one in %u, "
           "only unfair ones in %u\n", ngraphs, found_none, found_weak,
           unfair_only);
}

int main(int argc, char **argv)
{
    unsigned ngraphs = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 5000;
    test_simple_cycles();
    test_fairness();
    test_nested_sccs();
    test_protocol();
    test_alloc_failures();
    test_long_ring();
    test_random(ngraphs);
    printf("%lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
