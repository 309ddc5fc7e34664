/*
** c_tests.c: unit tests of the C state store and search, without the BEAM.
**
** Covers part_store (hash-consing, index growth, pid lists, segments, and
** a race of threads interning into one shared store), etf_scan
** (hand-built external term format: pids collected by node and creation,
** fun creators zeroed in place, malformed and truncated input refused),
** sys_state (ordering, links, encode/decode, mailboxes), visited (the
** lossy tables: hash compaction's fingerprints, growth, the zero
** fingerprint, bitstate saturation) and search (the resumable DFS driven
** with synthetic Erlang answers, with each visited table).  Terms are tiny
** hand-built ETF: `131, 97, N` is the small integer N.
**
** Built by `make -C c_src test` with ASan and UBSan (leak checking on).
** Prints one summary line "N passed, M failed"; exits non-zero on failure.
*/
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ether.h"
#include "dead_payload.h"
#include "etf_order.h"
#include "etf_scan.h"
#include "huge_alloc.h"
#include "part_store.h"
#include "por.h"
#include "label_dict.h"
#include "search_cluster.h"
#include "search_pool.h"
#include "search.h"
#include "state_wire.h"
#include "stack_set.h"
#include "sys_state.h"
#include "step_cache.h"
#include "symmetry.h"
#include "transition.h"
#include "visited.h"

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

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "out of memory in the test itself\n");
        exit(2);
    }
    return p;
}

/* ------------------------------------------------------------------ */
/* ETF builder                                                        */

#define NODE "nonode@nohost"
#define CREATION 0x4d43u

typedef struct etfb {
    uint8_t b[8192];
    size_t n;
} etfb;

static void b8(etfb *e, unsigned v)
{
    if (e->n >= sizeof e->b) {
        fprintf(stderr, "etf builder overflow\n");
        exit(2);
    }
    e->b[e->n++] = (uint8_t)v;
}

static void b16(etfb *e, unsigned v)
{
    b8(e, (v >> 8) & 0xff);
    b8(e, v & 0xff);
}

static void b32(etfb *e, uint32_t v)
{
    b8(e, (v >> 24) & 0xff);
    b8(e, (v >> 16) & 0xff);
    b8(e, (v >> 8) & 0xff);
    b8(e, v & 0xff);
}

static void bbytes(etfb *e, const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        b8(e, ((const uint8_t *)p)[i]);
}

static void bstart(etfb *e)
{
    e->n = 0;
    b8(e, 131);
}

static void batom(etfb *e, const char *s)          /* ATOM_EXT */
{
    b8(e, 100);
    b16(e, (unsigned)strlen(s));
    bbytes(e, s, strlen(s));
}

static void bsatom_utf8(etfb *e, const char *s)    /* SMALL_ATOM_UTF8_EXT */
{
    b8(e, 119);
    b8(e, (unsigned)strlen(s));
    bbytes(e, s, strlen(s));
}

static void bint(etfb *e, uint8_t v) { b8(e, 97); b8(e, v); }

static void bpid(etfb *e, const char *node, uint32_t num, uint32_t serial,
                 uint32_t cr)                       /* NEW_PID_EXT */
{
    b8(e, 88);
    batom(e, node);
    b32(e, num);
    b32(e, serial);
    b32(e, cr);
}

/* Scans a private, exact-size heap copy so ASan sees any overread. */
static int scan_copy(const uint8_t *src, size_t len, const char *node,
                     uint32_t creation, etf_pid_sink *sink, uint8_t *out)
{
    uint8_t *buf = xmalloc(len);
    if (len)
        memcpy(buf, src, len);
    int rc = etf_scan_pids(buf, len, node, strlen(node), creation, sink);
    if (out != NULL && len)
        memcpy(out, buf, len);
    free(buf);
    return rc;
}

static int scan(const etfb *e, etf_pid_sink *sink)
{
    return scan_copy(e->b, e->n, NODE, CREATION, sink, NULL);
}

/* Every proper prefix of a well-formed term is malformed. */
static int all_prefixes_fail(const etfb *e)
{
    int ok = 1;
    for (size_t k = 0; k < e->n; k++) {
        etf_pid_sink sink = { NULL, 0, 0 };
        if (scan_copy(e->b, k, NODE, CREATION, &sink, NULL) != -1)
            ok = 0;
        free(sink.pids);
    }
    return ok;
}

/* ------------------------------------------------------------------ */
/* etf_order: Erlang term order on external format, map re-sorting    */

static void bref3(etfb *e, const char *node, uint32_t w0, uint32_t w1, uint32_t w2)
{
    b8(e, 90);
    b16(e, 3);
    batom(e, node);
    b32(e, CREATION);
    b32(e, w0);
    b32(e, w1);
    b32(e, w2);
}

static void bbig(etfb *e, int neg, const uint8_t *le, unsigned n)
{
    b8(e, 110);
    b8(e, n);
    b8(e, neg);
    bbytes(e, le, n);
}

/* Compares two built terms (version bytes skipped) on exact-size copies. */
static int order_of(const etfb *a, const etfb *b, int *order)
{
    uint8_t *x = xmalloc(a->n - 1), *y = xmalloc(b->n - 1);
    memcpy(x, a->b + 1, a->n - 1);
    memcpy(y, b->b + 1, b->n - 1);
    int rc = etf_order_cmp(x, a->n - 1, y, b->n - 1, CREATION, order);
    free(x);
    free(y);
    return rc;
}

/* dead_payload.c: descriptors are checked before they are kept, and kept
** by continuation part. */
static void test_dead_payload_table(void)
{
    /* One clause, no guard: {Env0, dead}; then a clause {'DOWN'...} as
    ** unknown. */
    static const uint8_t good[] = { 2, 0, 4, 2, 2, 0, 1, 1, 7 };
    static const uint8_t cut[] = { 2, 0, 4, 2, 2, 0, 1, 1 };
    static const uint8_t bad_op[] = { 1, 0, 9 };
    static const uint8_t bad_guard[] = { 1, 2, 0 };
    static const uint8_t long_lit[] = { 1, 0, 3, 0, 0, 0, 9, 100 };
    static const uint8_t trailing[] = { 1, 0, 0, 0 };
    CHECK(payload_desc_valid(good, sizeof good));
    CHECK(!payload_desc_valid(cut, sizeof cut));
    CHECK(!payload_desc_valid(bad_op, sizeof bad_op));
    CHECK(!payload_desc_valid(bad_guard, sizeof bad_guard));
    CHECK(!payload_desc_valid(long_lit, sizeof long_lit));
    CHECK(!payload_desc_valid(trailing, sizeof trailing));
    CHECK(!payload_desc_valid(good, 0));
    payload_table t;
    payload_table_init(&t);
    uint32_t len = 0;
    CHECK(payload_table_get(&t, 5, &len) == NULL);
    CHECK(payload_table_put(&t, 0, good, sizeof good) == -1);
    CHECK(payload_table_put(&t, 5, bad_op, sizeof bad_op) == -1);
    int ok = 1;
    for (uint32_t c = 1; c <= 1000; c++)
        ok &= payload_table_put(&t, c, good, sizeof good) == 0;
    CHECK(ok);
    CHECK(t.n == 1000);
    const uint8_t *d = payload_table_get(&t, 777, &len);
    CHECK(d != NULL && len == sizeof good && memcmp(d, good, len) == 0);
    CHECK(payload_table_get(&t, 1001, &len) == NULL);
    CHECK(payload_table_put(&t, 777, good, sizeof good) == 0 && t.n == 1000);
    CHECK(payload_table_bytes(&t) >= 1000 * sizeof good);
    payload_table_free(&t);
}

static void test_etf_order(void)
{
    static const uint8_t big70[9] = { 0, 0, 0, 0, 0, 0, 0, 0, 64 };
    static const uint8_t big40[6] = { 0, 0, 0, 0, 0, 1 };
    enum { N = 33 };
    etfb *t = xmalloc(N * sizeof *t);
    int n = 0;
    /* Ascending, as OTP 25's compare/2 orders them. */
    bstart(&t[n]); bbig(&t[n++], 1, big70, 9);                  /* -2^70 */
    bstart(&t[n]); b8(&t[n], 98); b32(&t[n++], (uint32_t)-300);  /* -300 */
    bstart(&t[n]); bint(&t[n++], 0);
    bstart(&t[n]); bint(&t[n++], 5);
    bstart(&t[n]); b8(&t[n], 98); b32(&t[n++], 300);
    bstart(&t[n]); bbig(&t[n++], 0, big40, 6);                  /* 2^40 */
    bstart(&t[n]); batom(&t[n++], "");
    bstart(&t[n]); batom(&t[n++], "a");
    bstart(&t[n]); bsatom_utf8(&t[n++], "ab");
    bstart(&t[n]); batom(&t[n++], "b");
    bstart(&t[n]); b8(&t[n], 100); b16(&t[n], 1); b8(&t[n++], 0xe9);   /* 'é', Latin-1 */
    bstart(&t[n]); b8(&t[n], 119); b8(&t[n], 2); b8(&t[n], 0xc3); b8(&t[n++], 0xb6); /* 'ö' */
    bstart(&t[n]); bref3(&t[n++], NODE, 0, 1, 0);
    bstart(&t[n]); bref3(&t[n++], NODE, 1, 1, 0);
    bstart(&t[n]); bref3(&t[n++], NODE, 0, 2, 0);
    bstart(&t[n]); bref3(&t[n++], NODE, 0, 1, 1);                /* a tid */
    bstart(&t[n]); bref3(&t[n++], "zz@h", 0, 0, 0);
    bstart(&t[n]); bpid(&t[n++], NODE, 1, 0, CREATION);
    bstart(&t[n]); bpid(&t[n++], "zz@h", 1, 0, CREATION);       /* number first */
    bstart(&t[n]); bpid(&t[n++], NODE, 2, 0, CREATION);
    bstart(&t[n]); b8(&t[n], 104); b8(&t[n++], 0);              /* {} */
    bstart(&t[n]); b8(&t[n], 104); b8(&t[n], 1); bint(&t[n++], 1);
    bstart(&t[n]); b8(&t[n], 104); b8(&t[n], 1); bint(&t[n++], 2);
    bstart(&t[n]); b8(&t[n], 104); b8(&t[n], 2); bint(&t[n], 1); bint(&t[n++], 1);
    bstart(&t[n]); b8(&t[n++], 106);                            /* [] */
    bstart(&t[n]); b8(&t[n], 107); b16(&t[n], 1); b8(&t[n++], 'a');    /* "a" */
    bstart(&t[n]); b8(&t[n], 108); b32(&t[n], 2); bint(&t[n], 'a');
    batom(&t[n], "x"); b8(&t[n++], 106);                        /* [$a, x] */
    bstart(&t[n]); b8(&t[n], 107); b16(&t[n], 1); b8(&t[n++], 'b');    /* "b" */
    bstart(&t[n]); b8(&t[n], 108); b32(&t[n], 1); bpid(&t[n], NODE, 1, 0, CREATION);
    b8(&t[n++], 106);                                           /* [Pid] */
    bstart(&t[n]); b8(&t[n], 109); b32(&t[n++], 0);             /* <<>> */
    bstart(&t[n]); b8(&t[n], 109); b32(&t[n], 1); b8(&t[n++], 1);
    bstart(&t[n]); b8(&t[n], 109); b32(&t[n], 2); b8(&t[n], 1); b8(&t[n++], 0);
    bstart(&t[n]); b8(&t[n], 109); b32(&t[n], 1); b8(&t[n++], 2);
    CHECK(n == N);
    int all = 1;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            int order = 2;
            if (order_of(&t[i], &t[j], &order) != 0 || order != (i < j ? -1 : i > j)) {
                fprintf(stderr, "etf_order: %d vs %d gave %d\n", i, j, order);
                all = 0;
            }
        }
    CHECK(all);
    /* "ab" as a string and as a list are one term. */
    etfb s, l;
    bstart(&s); b8(&s, 107); b16(&s, 2); b8(&s, 'a'); b8(&s, 'b');
    bstart(&l); b8(&l, 108); b32(&l, 2); bint(&l, 'a'); bint(&l, 'b'); b8(&l, 106);
    int order = 2;
    CHECK(order_of(&s, &l, &order) == 0 && order == 0);
    /* Unsupported: floats, maps, improper lists, pids of another creation. */
    etfb f, m, im, op;
    bstart(&f); b8(&f, 70); for (int i = 0; i < 8; i++) b8(&f, i == 0 ? 0x3f : 0);
    bstart(&m); b8(&m, 116); b32(&m, 0);
    bstart(&im); b8(&im, 108); b32(&im, 1); bint(&im, 1); bint(&im, 2);
    bstart(&op); bpid(&op, NODE, 1, 0, CREATION + 1);
    CHECK(order_of(&f, &f, &order) == -1);
    CHECK(order_of(&m, &t[0], &order) == -1);
    CHECK(order_of(&im, &im, &order) == -1);
    CHECK(order_of(&op, &t[17], &order) == -1);
    free(t);
}

/* Builds #{K1 => V1, ...} of n pairs of pids (keys: the numbers given,
** values: small integers). */
static void bpidmap(etfb *e, const uint32_t *nums, int n)
{
    b8(e, 116);
    b32(e, (uint32_t)n);
    for (int i = 0; i < n; i++) {
        bpid(e, NODE, nums[i], 0, CREATION);
        bint(e, (uint8_t)nums[i]);
    }
}

/* etf_equal_runs: in a masked term (every pid number 0), the pairs of a
** small map with pid keys that are byte for byte equal and adjacent. */
static void test_etf_equal_runs(void)
{
    /* {#{P => [], P => [], P => a}, #{x => [], y => []}, #{P => []}} */
    etfb e;
    bstart(&e); b8(&e, 104); b8(&e, 3);
    size_t first = 0, past = 0;
    b8(&e, 116); b32(&e, 3);
    first = e.n;
    for (int i = 0; i < 2; i++) {
        bpid(&e, NODE, 0, 0, CREATION);
        b8(&e, 106);
    }
    past = e.n;
    bpid(&e, NODE, 0, 0, CREATION); batom(&e, "a");
    b8(&e, 116); b32(&e, 2); batom(&e, "x"); b8(&e, 106); batom(&e, "y"); b8(&e, 106);
    b8(&e, 116); b32(&e, 1); bpid(&e, NODE, 0, 0, CREATION); b8(&e, 106);
    etf_run *runs = NULL;
    size_t n = 0;
    CHECK(etf_equal_runs(e.b, e.n, &runs, &n) == 0);
    CHECK(n == 1 && runs != NULL);
    if (n == 1 && runs != NULL)
        CHECK(runs[0].start == first && runs[0].end == past && runs[0].npairs == 2);
    free(runs);
    /* Malformed: an error, nothing allocated. */
    CHECK(etf_equal_runs(e.b, e.n - 1, &runs, &n) == -1 && runs == NULL && n == 0);
}

/* etf_ets_sort: an mce_ets table's data with its objects out of key order
** (pid keys renamed) back in order; a float key refuses. */
static void ets_data(etfb *e, const uint32_t *nums, int n, int float_key)
{
    bstart(e); b8(e, 104); b8(e, 5);
    batom(e, "set"); batom(e, "public"); bint(e, 1);
    b8(e, 108); b32(e, (uint32_t)(n + float_key));
    for (int i = 0; i < n; i++) {
        b8(e, 104); b8(e, 2);
        bpid(e, NODE, nums[i], 0, CREATION);
        b8(e, 108); b32(e, 1); b8(e, 104); b8(e, 2); bpid(e, NODE, nums[i], 0, CREATION);
        bint(e, (uint8_t)nums[i]); b8(e, 106);
    }
    if (float_key) {
        b8(e, 104); b8(e, 2);
        b8(e, 70); for (int i = 0; i < 8; i++) b8(e, i == 0 ? 0x3f : 0);
        b8(e, 106);
    }
    b8(e, 106);
    batom(e, "extra");
}

/* Random single-byte corruptions and truncations of a table's data and of
** a set map: etf_ets_sort and etf_equal_runs refuse or succeed, and never
** read or write out of bounds (the ASan build). */
static void test_etf_order_mutations(void)
{
    uint32_t nums[3] = { 3, 1, 2 };
    etfb seeds[2];
    ets_data(&seeds[0], nums, 3, 0);
    bstart(&seeds[1]); b8(&seeds[1], 104); b8(&seeds[1], 2); batom(&seeds[1], "set");
    b8(&seeds[1], 116); b32(&seeds[1], 3);
    for (int i = 0; i < 3; i++) {
        bpid(&seeds[1], NODE, 0, 0, CREATION);
        b8(&seeds[1], 106);
    }
    uint32_t rng = 4242;
    unsigned long refused = 0;
    for (int iter = 0; iter < 20000; iter++) {
        const etfb *src = &seeds[iter % 2];
        uint8_t *buf = xmalloc(src->n);
        memcpy(buf, src->b, src->n);
        rng = rng * 1103515245u + 12345u;
        buf[1 + (rng >> 8) % (src->n - 1)] = (uint8_t)(rng >> 16);
        rng = rng * 1103515245u + 12345u;
        size_t len = (rng >> 8) % 4 == 0 ? (rng >> 12) % src->n : src->n;
        etf_run *runs = NULL;
        size_t n = 0;
        refused += etf_equal_runs(buf, len, &runs, &n) != 0;
        free(runs);
        refused += etf_ets_sort(buf, len, CREATION, (int)(iter & 1)) != 0;
        free(buf);
    }
    CHECK(refused > 0);
}

static void test_etf_ets_sort(void)
{
    uint32_t unsorted[3] = { 3, 1, 2 }, sorted[3] = { 1, 2, 3 };
    etfb e, want;
    ets_data(&e, unsorted, 3, 0);
    ets_data(&want, sorted, 3, 0);
    uint8_t *buf = xmalloc(e.n);
    memcpy(buf, e.b, e.n);
    CHECK(etf_ets_sort(buf, e.n, CREATION, 1) == 0);
    CHECK(memcmp(buf, e.b, e.n) == 0);                  /* check_only */
    CHECK(etf_ets_sort(buf, e.n, CREATION, 0) == 0);
    CHECK(want.n == e.n && memcmp(buf, want.b, e.n) == 0);
    free(buf);
    ets_data(&e, unsorted, 3, 1);
    CHECK(etf_ets_sort(e.b, e.n, CREATION, 1) == -1);
    CHECK(etf_ets_sort(e.b, e.n - 1, CREATION, 0) == -1);
}

static int where_visit(void *ctx, uint32_t key, uint8_t *word, int where)
{
    (void)key;
    (void)word;
    etf_pid_sink *s = ctx;
    if (s->n < s->cap)
        s->pids[s->n++] = (uint32_t)where;
    return 0;
}

static void test_etf_sort_maps(void)
{
    /* {#{P3 => 3, P1 => 1, P2 => 2}, #{{P2} => P1}}: sorted, the first
    ** map's pairs in key order, the other as it was. */
    etfb e, want;
    uint32_t unsorted[3] = { 3, 1, 2 }, sorted[3] = { 1, 2, 3 };
    bstart(&e); b8(&e, 104); b8(&e, 2); bpidmap(&e, unsorted, 3);
    b8(&e, 116); b32(&e, 1); b8(&e, 104); b8(&e, 1); bpid(&e, NODE, 2, 0, CREATION);
    bpid(&e, NODE, 1, 0, CREATION);
    bstart(&want); b8(&want, 104); b8(&want, 2); bpidmap(&want, sorted, 3);
    bbytes(&want, e.b + want.n, e.n - want.n);
    uint8_t *buf = xmalloc(e.n);
    memcpy(buf, e.b, e.n);
    CHECK(etf_sort_maps(buf, e.n, CREATION, 1) == 0);
    CHECK(memcmp(buf, e.b, e.n) == 0);                  /* check_only */
    CHECK(etf_sort_maps(buf, e.n, CREATION, 0) == 0);
    CHECK(want.n == e.n && memcmp(buf, want.b, e.n) == 0);
    /* Where the walker says each pid is. */
    uint32_t wh[8];
    etf_pid_sink sink = { wh, 0, 8 };
    etf_nodes nodes = { .n = 1 };
    nodes.names[0] = NODE;
    nodes.lens[0] = strlen(NODE);
    CHECK(etf_walk_keys(buf, e.n, &nodes, CREATION, where_visit, &sink) == 0);
    CHECK(sink.n == 5);
    if (sink.n == 5) {
        CHECK(wh[0] == (ETF_IN_MAP | ETF_IN_MAP_KEY));
        CHECK(wh[2] == (ETF_IN_MAP | ETF_IN_MAP_KEY));
        CHECK(wh[3] == (ETF_IN_MAP | ETF_IN_MAP_KEY));  /* {P2}, a key */
        CHECK(wh[4] == ETF_IN_MAP);                      /* P1, a value */
    }
    free(buf);
    /* #{a => {P1}}: a pid held under a pid-free key, a slot of a server's
    ** state, renamed like any value; #{a => {child, P1}}: a supervisor's
    ** child record under its id (a named value). */
    bstart(&e); b8(&e, 116); b32(&e, 1); batom(&e, "a"); b8(&e, 104); b8(&e, 1);
    bpid(&e, NODE, 1, 0, CREATION);
    sink.n = 0;
    CHECK(etf_walk_keys(e.b, e.n, &nodes, CREATION, where_visit, &sink) == 0);
    CHECK(sink.n == 1 && wh[0] == ETF_IN_MAP);
    bstart(&e); b8(&e, 116); b32(&e, 1); batom(&e, "a"); b8(&e, 104); b8(&e, 2);
    batom(&e, "child"); bpid(&e, NODE, 1, 0, CREATION);
    sink.n = 0;
    CHECK(etf_walk_keys(e.b, e.n, &nodes, CREATION, where_visit, &sink) == 0);
    CHECK(sink.n == 1 && wh[0] == (ETF_IN_MAP | ETF_IN_NAMED_VALUE));
    /* A map of 33 pairs is hash-ordered: left alone; its keys reported. */
    uint32_t many[33];
    for (int i = 0; i < 33; i++)
        many[i] = (uint32_t)(33 - i);
    bstart(&e); bpidmap(&e, many, 33);
    buf = xmalloc(e.n);
    memcpy(buf, e.b, e.n);
    CHECK(etf_sort_maps(buf, e.n, CREATION, 0) == 0);
    CHECK(memcmp(buf, e.b, e.n) == 0);
    sink.n = 0;
    CHECK(etf_walk_keys(buf, e.n, &nodes, CREATION, where_visit, &sink) == 0);
    CHECK(sink.n == 8 && wh[0] == (ETF_IN_MAP | ETF_IN_BIG_MAP_KEY));
    free(buf);
    /* A float beside a pid among the keys: refused. */
    bstart(&e); b8(&e, 116); b32(&e, 2);
    bpid(&e, NODE, 1, 0, CREATION); bint(&e, 1);
    b8(&e, 70); for (int i = 0; i < 8; i++) b8(&e, i == 0 ? 0x3f : 0);
    bint(&e, 2);
    buf = xmalloc(e.n);
    memcpy(buf, e.b, e.n);
    CHECK(etf_sort_maps(buf, e.n, CREATION, 1) == -1);
    CHECK(etf_sort_maps(buf, e.n, CREATION, 0) == -1);
    free(buf);
    /* An ETS table's data: {set, public, 1, [{P2, [{P2, P3}]}, {P1, [{P1,
    ** P3}]}], none}: its keys are [P2, P1]. */
    etfb w2;
    bstart(&e); b8(&e, 104); b8(&e, 5); batom(&e, "set"); batom(&e, "public"); bint(&e, 1);
    b8(&e, 108); b32(&e, 2);
    for (uint32_t k = 2; k >= 1; k--) {
        b8(&e, 104); b8(&e, 2); bpid(&e, NODE, k, 0, CREATION);
        b8(&e, 108); b32(&e, 1); b8(&e, 104); b8(&e, 2); bpid(&e, NODE, k, 0, CREATION);
        bpid(&e, NODE, 3, 0, CREATION);
        b8(&e, 106);
    }
    b8(&e, 106); batom(&e, "none");
    bstart(&w2); b8(&w2, 108); b32(&w2, 2); bpid(&w2, NODE, 2, 0, CREATION);
    bpid(&w2, NODE, 1, 0, CREATION); b8(&w2, 106);
    buf = xmalloc(e.n);
    memcpy(buf, e.b, e.n);
    uint8_t *keys;
    size_t nkeys;
    CHECK(etf_ets_keys(buf, e.n, &keys, &nkeys) == 0);
    CHECK(nkeys == w2.n && memcmp(keys, w2.b, nkeys) == 0);
    free(keys);
    /* Every proper prefix is malformed, and refused without overreading. */
    int prefixes = 1;
    for (size_t k = 0; k < e.n; k++) {
        uint8_t *p = xmalloc(k ? k : 1);
        memcpy(p, e.b, k);
        prefixes &= etf_ets_keys(p, k, &keys, &nkeys) == -1 && keys == NULL &&
                    etf_sort_maps(p, k, CREATION, 0) == -1;
        free(p);
    }
    CHECK(prefixes);
    free(buf);
}

/* ------------------------------------------------------------------ */
/* part_store                                                         */

/* huge_alloc.c: small allocations are calloc's, big ones are aligned
** mappings; both zeroed, writable to their last byte, and freed whole. */
static void test_huge_alloc(void)
{
    size_t sizes[] = { 1, 4096, HUGE_MIN - 1, HUGE_MIN, HUGE_MIN + 1, 3 * HUGE_MIN + 17 };
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        unsigned char *p = huge_calloc(n);
        CHECK(p != NULL);
        if (p == NULL)
            continue;
        CHECK(p[0] == 0 && p[n / 2] == 0 && p[n - 1] == 0);
        if (n >= HUGE_MIN && HUGE_MAPPED)
            CHECK(((uintptr_t)p & (HUGE_MIN - 1)) == 0);
        p[n - 1] = 2;
        p[0] = 1;
        CHECK(p[0] == 1 && (n == 1 || p[n - 1] == 2));
        huge_free(p, n);
    }
    huge_free(NULL, HUGE_MIN);
    CHECK(huge_calloc(SIZE_MAX - 5) == NULL);
}

static void test_part_store(void)
{
    part_store *ps = part_store_new();
    CHECK(ps != NULL);
    if (ps == NULL)
        return;
    CHECK(part_store_count(ps) == 0);
    CHECK(part_store_get(ps, 0) == NULL);
    CHECK(part_store_get(ps, 1) == NULL);

    int is_new = -1;
    const uint8_t abc[] = { 'a', 'b', 'c' };
    part_id a = part_store_intern(ps, PART_TERM, abc, 3, NULL, 0, &is_new);
    CHECK(a == 1);
    CHECK(is_new == 1);
    part_id a2 = part_store_intern(ps, PART_TERM, abc, 3, NULL, 0, &is_new);
    CHECK(a2 == a);
    CHECK(is_new == 0);
    part_id am = part_store_intern(ps, PART_MAILBOX, abc, 3, NULL, 0, &is_new);
    CHECK(am != 0 && am != a);
    CHECK(is_new == 1);
    part_id ab = part_store_intern(ps, PART_TERM, abc, 2, NULL, 0, &is_new);
    CHECK(ab != 0 && ab != a && ab != am);
    CHECK(is_new == 1);
    part_id empty = part_store_intern(ps, PART_MAILBOX, "", 0, NULL, 0,
                                      &is_new);
    CHECK(empty != 0 && is_new == 1);
    CHECK(part_store_intern(ps, PART_MAILBOX, NULL, 0, NULL, 0, &is_new) ==
          empty);
    CHECK(is_new == 0);
    CHECK(part_store_count(ps) == 4);

    const part *p = part_store_get(ps, a);
    CHECK(p != NULL && p->kind == PART_TERM && p->len == 3 &&
          memcmp(p->data, abc, 3) == 0 && p->npids == 0);
    p = part_store_get(ps, empty);
    CHECK(p != NULL && p->kind == PART_MAILBOX && p->len == 0);
    CHECK(part_store_get(ps, (part_id)part_store_count(ps) + 1) == NULL);
    CHECK(part_store_get(ps, UINT32_MAX) == NULL);

    /* Pid lists are sorted and deduplicated; the caller's array is not
    ** touched. */
    uint32_t pids[] = { 5, 3, 5, 1, 3, 9, 1 };
    const uint32_t pids_orig[] = { 5, 3, 5, 1, 3, 9, 1 };
    part_id t = part_store_intern(ps, PART_TERM, "pids", 4, pids, 7, &is_new);
    CHECK(t != 0 && is_new == 1);
    CHECK(memcmp(pids, pids_orig, sizeof pids) == 0);
    p = part_store_get(ps, t);
    CHECK(p != NULL && p->npids == 4);
    if (p != NULL && p->npids == 4)
        CHECK(p->pids[0] == 1 && p->pids[1] == 3 && p->pids[2] == 5 &&
              p->pids[3] == 9);
    uint32_t one = 42;
    t = part_store_intern(ps, PART_TERM, "one", 3, &one, 1, &is_new);
    p = part_store_get(ps, t);
    CHECK(p != NULL && p->npids == 1 && p->pids[0] == 42);

    /* Many parts: the index and the parts array grow many times and the
    ** arena takes several chunks; every part is found again. */
    enum { MANY = 200000 };
    size_t bytes_before = part_store_bytes(ps);
    part_id *ids = xmalloc(MANY * sizeof *ids);
    int all_new = 1, distinct = 1;
    for (uint32_t i = 0; i < MANY; i++) {
        char buf[32];
        int n = snprintf(buf, sizeof buf, "part-%u", i);
        ids[i] = part_store_intern(ps, (uint8_t)(PART_TERM + i % 4), buf,
                                   (uint32_t)n, NULL, 0, &is_new);
        if (ids[i] == 0 || !is_new)
            all_new = 0;
        if (i > 0 && ids[i] != ids[i - 1] + 1)
            distinct = 0;
        /* Earlier parts are found while the index grows (ids moving from
        ** the old index a few at a time). */
        for (uint32_t back = i / 2; back < i; back += i / 3 + 1) {
            n = snprintf(buf, sizeof buf, "part-%u", back);
            if (part_store_intern(ps, (uint8_t)(PART_TERM + back % 4), buf, (uint32_t)n,
                                  NULL, 0, &is_new) != ids[back] || is_new)
                all_new = 0;
        }
    }
    CHECK(all_new);
    CHECK(distinct);
    CHECK(part_store_count(ps) == MANY + 6);
    CHECK(part_store_bytes(ps) > bytes_before);
    int same = 1, data_ok = 1;
    for (uint32_t i = 0; i < MANY; i++) {
        char buf[32];
        int n = snprintf(buf, sizeof buf, "part-%u", i);
        part_id id = part_store_intern(ps, (uint8_t)(PART_TERM + i % 4), buf,
                                       (uint32_t)n, NULL, 0, &is_new);
        if (id != ids[i] || is_new)
            same = 0;
        p = part_store_get(ps, ids[i]);
        if (p == NULL || p->len != (uint32_t)n || memcmp(p->data, buf, n) ||
            p->kind != (uint8_t)(PART_TERM + i % 4))
            data_ok = 0;
    }
    CHECK(same);
    CHECK(data_ok);
    CHECK(part_store_count(ps) == MANY + 6);
    /* The earliest parts survived all the growth. */
    CHECK(part_store_intern(ps, PART_TERM, abc, 3, NULL, 0, &is_new) == a &&
          is_new == 0);
    p = part_store_get(ps, a);
    CHECK(p != NULL && p->len == 3 && memcmp(p->data, abc, 3) == 0);
    /* A part larger than an arena chunk. */
    size_t big = (1u << 20) + 123;
    uint8_t *bigbuf = xmalloc(big);
    memset(bigbuf, 0x5a, big);
    part_id bid = part_store_intern(ps, PART_TERM, bigbuf, (uint32_t)big, NULL,
                                    0, &is_new);
    CHECK(bid != 0 && is_new == 1);
    CHECK(part_store_intern(ps, PART_TERM, bigbuf, (uint32_t)big, NULL, 0,
                            &is_new) == bid && is_new == 0);
    /* A small part after the big chunk still goes somewhere sane. */
    part_id after = part_store_intern(ps, PART_TERM, "after", 5, NULL, 0,
                                      &is_new);
    p = part_store_get(ps, after);
    CHECK(p != NULL && p->len == 5 && memcmp(p->data, "after", 5) == 0);
    free(bigbuf);
    free(ids);
    part_store_free(ps);
    part_store_free(NULL);
}

/* Ids across segment boundaries, hints, stable pointers, a tiny index, and
** a store shared after it already holds parts (then used by one thread:
** ids go on as before). */
static void test_part_store_segments(void)
{
    part_store *ps = part_store_new_sized(1);
    CHECK(ps != NULL);
    if (ps == NULL)
        return;
    int is_new = -1;
    enum { N = 5000 };      /* segments 0..2 hold ids up to 7167 */
    const part *first = NULL;
    int dense = 1;
    for (uint32_t i = 0; i < N; i++) {
        uint32_t w[2] = { i, i * 7u };
        part_id id = part_store_intern(ps, PART_PROC, w, sizeof w, NULL, 0, &is_new);
        if (id != i + 1 || !is_new)
            dense = 0;
        if (i == 0)
            first = part_store_get(ps, id);
    }
    CHECK(dense);
    CHECK(part_store_count(ps) == N);
    /* A part read before the store grew is where it was. */
    CHECK(first != NULL && first == part_store_get(ps, 1));
    /* The boundaries of segments 0 and 1 (ids 1023/1024, 3071/3072). */
    const part_id edges[] = { 1023, 1024, 1025, 3071, 3072, 3073, N };
    int edges_ok = 1;
    for (size_t e = 0; e < sizeof edges / sizeof edges[0]; e++) {
        const part *p = part_store_get(ps, edges[e]);
        uint32_t w[2] = { edges[e] - 1, (edges[e] - 1) * 7u };
        if (p == NULL || p->len != sizeof w || memcmp(p->data, w, sizeof w) != 0)
            edges_ok = 0;
    }
    CHECK(edges_ok);
    CHECK(part_store_get(ps, N + 1) == NULL);
    CHECK(part_store_get(ps, 1u << 20) == NULL);   /* its segment does not exist */

    /* Hints: right (no new part), stale, zero, out of range. */
    uint32_t w[2] = { 41, 41 * 7u };
    CHECK(part_store_intern_hinted(ps, 42, PART_PROC, w, sizeof w, &is_new) == 42 &&
          is_new == 0);
    CHECK(part_store_intern_hinted(ps, 7, PART_PROC, w, sizeof w, &is_new) == 42 &&
          is_new == 0);
    CHECK(part_store_intern_hinted(ps, 42, PART_WORLD, w, sizeof w, &is_new) == N + 1 &&
          is_new == 1);
    CHECK(part_store_intern_hinted(ps, 0, PART_WORLD, w, sizeof w, &is_new) == N + 1 &&
          is_new == 0);
    CHECK(part_store_intern_hinted(ps, UINT32_MAX, PART_PROC, w, sizeof w, &is_new) == 42 &&
          is_new == 0);
    CHECK(part_store_count(ps) == N + 1);
    CHECK(part_store_used_bytes(ps) <= part_store_bytes(ps));

    /* Shared now: one thread still sees the same store and dense ids. */
    CHECK(part_store_set_concurrent(ps) == 0);
    CHECK(part_store_set_concurrent(ps) == 0);
    CHECK(part_store_intern(ps, PART_PROC, w, sizeof w, NULL, 0, &is_new) == 42 &&
          is_new == 0);
    CHECK(part_store_get(ps, 1) == first);
    uint32_t pids[] = { 9, 2, 9 };
    part_id t = part_store_intern(ps, PART_TERM, "shared", 6, pids, 3, &is_new);
    CHECK(t == N + 2 && is_new == 1);
    const part *p = part_store_get(ps, t);
    CHECK(p != NULL && p->npids == 2 && p->pids[0] == 2 && p->pids[1] == 9);
    CHECK(part_store_intern_hinted(ps, t, PART_TERM, "shared", 6, &is_new) == t &&
          is_new == 0);
    CHECK(part_store_get(ps, N + 3) == NULL);
    CHECK(part_store_count(ps) == N + 2);
    CHECK(part_store_used_bytes(ps) <= part_store_bytes(ps));
    part_store_free(ps);

    /* A store shared from the start, freed with nothing in it. */
    ps = part_store_new();
    CHECK(ps != NULL && part_store_set_concurrent(ps) == 0);
    part_store_free(ps);
}

/* The store shared by threads interning overlapping random sets of parts
** at once, from a tiny index and one segment, so the shards' indexes and
** the segments grow during the race; a reader follows ids meanwhile. */
enum { RACE_THREADS = 6, RACE_CONTENTS = 40000, RACE_EACH = 30000 };

typedef struct race_arg {
    part_store *ps;
    unsigned seed;
    part_id *id;            /* per content: the id this thread got, or 0 */
    uint8_t *fresh;         /* per content: is_new as this thread saw it */
    int ok;                 /* every call answered sanely */
} race_arg;

/* Content c: 1 to 12 words, word 0 is c; the kind and pids follow c. */
static uint32_t race_content(uint32_t c, uint32_t *w, uint8_t *kind)
{
    uint32_t n = 1 + c % 12;
    for (uint32_t k = 0; k < n; k++)
        w[k] = k == 0 ? c : c * 2654435761u + k;
    *kind = (uint8_t)(PART_TERM + c % 5);
    return 4 * n;
}

/* A part as it must read, whatever thread wrote it. */
static int race_part_ok(const part *p)
{
    uint32_t w[12], c;
    uint8_t kind;
    if (p->len < 4)
        return 0;
    memcpy(&c, p->data, 4);
    uint32_t len = race_content(c, w, &kind);
    return c < RACE_CONTENTS && p->len == len && p->kind == kind &&
           memcmp(p->data, w, len) == 0 && p->npids == (kind == PART_TERM ? 2u : 0u);
}

static uint32_t race_rand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

static void *race_intern(void *v)
{
    race_arg *a = v;
    a->ok = 1;
    for (uint32_t j = 0; j < RACE_EACH; j++) {
        uint32_t c = race_rand(&a->seed) % RACE_CONTENTS;
        uint32_t w[12];
        uint8_t kind;
        uint32_t len = race_content(c, w, &kind);
        uint32_t pids[3] = { c % 7 + 1, 100, c % 7 + 1 };
        int is_new = -1;
        /* Terms carry pids, so they are never interned hinted (as in
        ** the search); other parts with their id, or a wrong one. */
        part_id id = kind == PART_TERM || (j & 3) == 0
                         ? part_store_intern(a->ps, kind, w, len, pids,
                                             kind == PART_TERM ? 3 : 0, &is_new)
                     : (j & 3) == 1 && a->id[c] != 0
                         ? part_store_intern_hinted(a->ps, a->id[c], kind, w, len, &is_new)
                         : part_store_intern_hinted(a->ps, (part_id)(c + 1), kind, w, len,
                                                    &is_new);
        if (id == 0 || (a->id[c] != 0 && (id != a->id[c] || is_new)))
            a->ok = 0;
        if (a->id[c] == 0) {
            a->id[c] = id;
            a->fresh[c] = (uint8_t)is_new;
        }
        const part *p = part_store_get(a->ps, id);
        if (p == NULL || !race_part_ok(p))
            a->ok = 0;
    }
    return NULL;
}

typedef struct race_reader {
    part_store *ps;
    volatile int *stop;     /* written once the interners are joined */
    int ok;
    unsigned long seen;
} race_reader;

static void *race_read(void *v)
{
    race_reader *r = v;
    unsigned seed = 99;
    size_t last = 0;
    r->ok = 1;
    while (!__atomic_load_n(r->stop, __ATOMIC_ACQUIRE)) {
        size_t n = part_store_count(r->ps);
        if (n < last || part_store_used_bytes(r->ps) == 0 || part_store_bytes(r->ps) == 0)
            r->ok = 0;
        last = n;
        /* Ids around and past the count: claimed but unwritten ones and
        ** ones in segments not yet made read as NULL, never half a part. */
        for (int k = 0; k < 64; k++) {
            part_id id = (part_id)(race_rand(&seed) % (n + 2048) + 1);
            const part *p = part_store_get(r->ps, id);
            if (p != NULL) {
                r->seen++;
                if (!race_part_ok(p))
                    r->ok = 0;
            }
        }
    }
    return NULL;
}

static void test_part_store_threads(void)
{
    part_store *ps = part_store_new_sized(1);
    CHECK(ps != NULL);
    if (ps == NULL)
        return;
    CHECK(part_store_set_concurrent(ps) == 0);
    race_arg args[RACE_THREADS];
    pthread_t th[RACE_THREADS], reader;
    volatile int stop = 0;
    race_reader rd = { .ps = ps, .stop = &stop };
    int started = pthread_create(&reader, NULL, race_read, &rd) == 0;
    CHECK(started);
    int all = 1;
    for (int t = 0; t < RACE_THREADS; t++) {
        args[t] = (race_arg){ .ps = ps, .seed = 17u + 1000u * (unsigned)t,
                              .id = calloc(RACE_CONTENTS, sizeof(part_id)),
                              .fresh = calloc(RACE_CONTENTS, 1) };
        if (args[t].id == NULL || args[t].fresh == NULL) {
            fprintf(stderr, "out of memory in the test itself\n");
            exit(2);
        }
    }
    for (int t = 0; t < RACE_THREADS; t++)
        if (pthread_create(&th[t], NULL, race_intern, &args[t]) != 0)
            all = 0, args[t].ok = 0, th[t] = 0;
    CHECK(all);
    for (int t = 0; t < RACE_THREADS; t++)
        if (all || th[t] != 0)
            pthread_join(th[t], NULL);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    if (started)
        pthread_join(reader, NULL);
    CHECK(rd.ok);
    CHECK(rd.seen > 0);

    /* Every content one id, exactly one is_new per content; the ids no
    ** content got are holes of the shards' blocks (64 shards of 64 ids). */
    int calls_ok = 1, one_id = 1, one_new = 1, data_ok = 1;
    size_t distinct = 0, max_id = RACE_CONTENTS + 64 * 64;
    uint8_t *id_used = calloc(max_id + 1, 1);
    if (id_used == NULL)
        exit(2);
    for (int t = 0; t < RACE_THREADS; t++)
        calls_ok &= args[t].ok;
    for (uint32_t c = 0; c < RACE_CONTENTS; c++) {
        part_id id = 0;
        int news = 0, seen = 0;
        for (int t = 0; t < RACE_THREADS; t++) {
            if (args[t].id[c] == 0)
                continue;
            seen = 1;
            if (id != 0 && args[t].id[c] != id)
                one_id = 0;
            id = args[t].id[c];
            news += args[t].fresh[c];
        }
        if (!seen)
            continue;
        distinct++;
        if (news != 1)
            one_new = 0;
        if (id > max_id || id_used[id]++)
            one_id = 0;
        const part *p = part_store_get(ps, id);
        uint32_t got = 0;
        if (p != NULL && p->len >= 4)
            memcpy(&got, p->data, 4);
        if (p == NULL || !race_part_ok(p) || got != c)
            data_ok = 0;
    }
    CHECK(calls_ok);
    CHECK(one_id);
    CHECK(one_new);
    CHECK(data_ok);
    CHECK(distinct > RACE_CONTENTS / 2);
    CHECK(part_store_count(ps) == distinct);
    int holes_empty = 1;
    for (size_t id = 1; id <= max_id; id++)
        holes_empty &= id_used[id] == 1 || part_store_get(ps, (part_id)id) == NULL;
    CHECK(holes_empty);
    CHECK(part_store_used_bytes(ps) <= part_store_bytes(ps));
    free(id_used);
    for (int t = 0; t < RACE_THREADS; t++) {
        free(args[t].id);
        free(args[t].fresh);
    }
    part_store_free(ps);
}

/* ------------------------------------------------------------------ */
/* etf_scan                                                           */

static void test_etf_simple(void)
{
    etf_pid_sink sink = { NULL, 0, 0 };
    etfb e;

    bstart(&e);
    bint(&e, 5);
    CHECK(scan(&e, &sink) == 0);
    CHECK(sink.n == 0);
    CHECK(all_prefixes_fail(&e));

    /* Wrong version byte, trailing garbage, empty buffer. */
    uint8_t badver[] = { 130, 97, 5 };
    CHECK(scan_copy(badver, 3, NODE, CREATION, &sink, NULL) == -1);
    uint8_t trailing[] = { 131, 97, 5, 0 };
    CHECK(scan_copy(trailing, 4, NODE, CREATION, &sink, NULL) == -1);
    uint8_t trailing2[] = { 131, 106, 106 };
    CHECK(scan_copy(trailing2, 3, NODE, CREATION, &sink, NULL) == -1);
    CHECK(scan_copy(trailing, 0, NODE, CREATION, &sink, NULL) == -1);
    CHECK(sink.n == 0);

    /* Unknown and refused tags: ports (89, 102, 120), old fun (117),
    ** atom cache ref (82), compressed (80), garbage tags. */
    const uint8_t refused[] = { 89, 102, 120, 117, 82, 80, 0, 1, 255, 121 };
    for (size_t i = 0; i < sizeof refused; i++) {
        bstart(&e);
        b8(&e, refused[i]);
        for (int k = 0; k < 40; k++)
            b8(&e, 0);
        CHECK(scan(&e, &sink) == -1);
    }
    /* A real NEW_PORT_EXT: node atom, 4-byte id, 4-byte creation. */
    bstart(&e);
    b8(&e, 104);
    b8(&e, 1);
    b8(&e, 89);
    batom(&e, NODE);
    b32(&e, 1);
    b32(&e, CREATION);
    CHECK(scan(&e, &sink) == -1);

    /* Length fields that claim more than the buffer holds. */
    uint8_t biglist[] = { 131, 108, 0xff, 0xff, 0xff, 0xff, 106 };
    CHECK(scan_copy(biglist, sizeof biglist, NODE, CREATION, &sink, NULL) == -1);
    uint8_t bigtuple[] = { 131, 105, 0xff, 0xff, 0xff, 0xff, 97, 1 };
    CHECK(scan_copy(bigtuple, sizeof bigtuple, NODE, CREATION, &sink, NULL) ==
          -1);
    uint8_t bigmap[] = { 131, 116, 0xff, 0xff, 0xff, 0xff, 97, 1, 97, 2 };
    CHECK(scan_copy(bigmap, sizeof bigmap, NODE, CREATION, &sink, NULL) == -1);
    uint8_t bigbin[] = { 131, 109, 0xff, 0xff, 0xff, 0xff, 1, 2, 3 };
    CHECK(scan_copy(bigbin, sizeof bigbin, NODE, CREATION, &sink, NULL) == -1);
    uint8_t bigbits[] = { 131, 77, 0xff, 0xff, 0xff, 0xff, 3, 1 };
    CHECK(scan_copy(bigbits, sizeof bigbits, NODE, CREATION, &sink, NULL) ==
          -1);
    uint8_t bigatom[] = { 131, 100, 0xff, 0xff, 'a' };
    CHECK(scan_copy(bigatom, sizeof bigatom, NODE, CREATION, &sink, NULL) == -1);
    uint8_t bigsatom[] = { 131, 119, 200, 'a' };
    CHECK(scan_copy(bigsatom, sizeof bigsatom, NODE, CREATION, &sink, NULL) ==
          -1);
    uint8_t bigstr[] = { 131, 107, 0x01, 0x00, 'a' };
    CHECK(scan_copy(bigstr, sizeof bigstr, NODE, CREATION, &sink, NULL) == -1);
    uint8_t bigbig[] = { 131, 111, 0xff, 0xff, 0xff, 0xff, 0, 1 };
    CHECK(scan_copy(bigbig, sizeof bigbig, NODE, CREATION, &sink, NULL) == -1);
    /* A pid whose node is not an atom. */
    uint8_t badpid[] = { 131, 88, 97, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0 };
    CHECK(scan_copy(badpid, sizeof badpid, NODE, CREATION, &sink, NULL) == -1);
    CHECK(sink.n == 0);
    free(sink.pids);
}

static void test_etf_pids(void)
{
    etf_pid_sink sink = { NULL, 0, 0 };
    etfb e;

    /* {Pid1, OtherNode, OtherCreation, [Pid3, Pid4 | []],
    **  #{Pid5 => <<1,2,3>>, ok => "ab"}, 'é', 300, 1.5, Pid3} */
    bstart(&e);
    b8(&e, 104);
    b8(&e, 9);
    bpid(&e, NODE, 1, 0, CREATION);
    bpid(&e, "other@host", 2, 0, CREATION);
    bpid(&e, NODE, 6, 0, CREATION + 1);
    b8(&e, 108);
    b32(&e, 2);
    bpid(&e, NODE, 3, 0, CREATION);
    bpid(&e, NODE, 4, 7, CREATION);
    b8(&e, 106);
    b8(&e, 116);
    b32(&e, 2);
    bpid(&e, NODE, 5, 0, CREATION);
    b8(&e, 109);
    b32(&e, 3);
    b8(&e, 1); b8(&e, 2); b8(&e, 3);
    bsatom_utf8(&e, "ok");
    b8(&e, 107);
    b16(&e, 2);
    b8(&e, 'a'); b8(&e, 'b');
    b8(&e, 119);
    b8(&e, 2);
    b8(&e, 0xc3); b8(&e, 0xa9);
    b8(&e, 98);
    b32(&e, 300);
    b8(&e, 70);
    for (int i = 0; i < 8; i++)
        b8(&e, i == 0 ? 0x3f : 0);
    bpid(&e, NODE, 3, 0, CREATION);
    etfb orig = e;
    CHECK(scan(&e, &sink) == 0);
    CHECK(sink.n == 5);
    if (sink.n == 5)
        CHECK(sink.pids[0] == 1 && sink.pids[1] == 3 && sink.pids[2] == 4 &&
              sink.pids[3] == 5 && sink.pids[4] == 3);
    CHECK(memcmp(orig.b, e.b, e.n) == 0);   /* no fun: nothing rewritten */
    CHECK(all_prefixes_fail(&e));

    /* Same term seen from another node name of the same length, and from a
    ** node name that is a prefix of the pids' node. */
    sink.n = 0;
    CHECK(scan_copy(e.b, e.n, "nonode@nohosx", CREATION, &sink, NULL) == 0);
    CHECK(sink.n == 0);
    CHECK(scan_copy(e.b, e.n, "nonode@", CREATION, &sink, NULL) == 0);
    CHECK(sink.n == 0);
    CHECK(scan_copy(e.b, e.n, "other@host", CREATION, &sink, NULL) == 0);
    CHECK(sink.n == 1 && sink.pids[0] == 2);
    sink.n = 0;

    /* Old PID_EXT: one byte of creation. */
    bstart(&e);
    b8(&e, 103);
    bsatom_utf8(&e, NODE);
    b32(&e, 77);
    b32(&e, 0);
    b8(&e, 3);
    CHECK(scan_copy(e.b, e.n, NODE, 3, &sink, NULL) == 0);
    CHECK(sink.n == 1 && sink.pids[0] == 77);
    sink.n = 0;
    CHECK(scan_copy(e.b, e.n, NODE, 4, &sink, NULL) == 0);
    CHECK(sink.n == 0);
    CHECK(all_prefixes_fail(&e));

    /* The sink grows: a list of 150 pids. */
    bstart(&e);
    b8(&e, 108);
    b32(&e, 150);
    for (uint32_t i = 0; i < 150; i++)
        bpid(&e, NODE, 1000 + i, 0, CREATION);
    b8(&e, 106);
    CHECK(scan(&e, &sink) == 0);
    CHECK(sink.n == 150 && sink.cap >= 150);
    int inorder = sink.n == 150;
    for (uint32_t i = 0; inorder && i < 150; i++)
        inorder = sink.pids[i] == 1000 + i;
    CHECK(inorder);
    sink.n = 0;

    /* Other skipped terms: improper list, large tuple, big integers, bit
    ** binary, old float, export, references.  Pids inside are still found. */
    bstart(&e);
    b8(&e, 105);
    b32(&e, 11);
    b8(&e, 108);                     /* [1 | Pid10] */
    b32(&e, 1);
    bint(&e, 1);
    bpid(&e, NODE, 10, 0, CREATION);
    b8(&e, 110);                     /* small big, 3 digits */
    b8(&e, 3); b8(&e, 0); b8(&e, 1); b8(&e, 2); b8(&e, 3);
    b8(&e, 111);                     /* large big, 2 digits */
    b32(&e, 2); b8(&e, 1); b8(&e, 9); b8(&e, 9);
    b8(&e, 77);                      /* <<1:3>> */
    b32(&e, 1); b8(&e, 3); b8(&e, 0x20);
    b8(&e, 99);                      /* FLOAT_EXT: 31 bytes */
    for (int i = 0; i < 31; i++)
        b8(&e, '0');
    b8(&e, 113);                     /* fun lists:map/2 */
    batom(&e, "lists"); batom(&e, "map"); bint(&e, 2);
    b8(&e, 90);                      /* NEWER_REFERENCE_EXT, 3 words */
    b16(&e, 3); batom(&e, NODE); b32(&e, CREATION);
    b32(&e, 1); b32(&e, 2); b32(&e, 0);   /* counter 1 of creator 2 */
    b8(&e, 90);                      /* not the runtime's: word 2 is set */
    b16(&e, 3); batom(&e, NODE); b32(&e, CREATION);
    b32(&e, 1); b32(&e, 2); b32(&e, 3);
    b8(&e, 90);                      /* an ETS tid: word 2 is the tid mark */
    b16(&e, 3); batom(&e, NODE); b32(&e, CREATION);
    b32(&e, 5); b32(&e, 2); b32(&e, ETF_REF_TID_MARK);
    b8(&e, 114);                     /* NEW_REFERENCE_EXT, 2 words */
    b16(&e, 2); bsatom_utf8(&e, NODE); b8(&e, 1); b32(&e, 1); b32(&e, 2);
    b8(&e, 115);                     /* SMALL_ATOM_EXT */
    b8(&e, 1); b8(&e, 'x');
    CHECK(scan(&e, &sink) == 0);
    /* The pid, then the simulated ref and the tid (tagged, one numbering);
    ** the foreign ref, the 2-word old-style ref and the other node's terms
    ** are not collected. */
    CHECK(sink.n == 3 && sink.pids[0] == 10 &&
          sink.pids[1] == ((2u << ETF_REF_COUNTER_BITS | 1u) | ETF_REF_TAG) &&
          sink.pids[2] == ((2u << ETF_REF_COUNTER_BITS | 5u) | ETF_REF_TAG));
    sink.n = 0;
    CHECK(all_prefixes_fail(&e));
    free(sink.pids);
}

/* Builds fun(...) with `numfree` free variables: a matching pid, another
** node's pid, an integer.  Returns the offset of the creator pid's number. */
static size_t build_fun(etfb *e, uint32_t creator, int free_pid)
{
    bstart(e);
    b8(e, 112);
    size_t size_at = e->n;
    b32(e, 0);                      /* size, patched below */
    b8(e, 1);                       /* arity */
    for (int i = 0; i < 16; i++)
        b8(e, 0xa0 + i);            /* uniq */
    b32(e, 4);                      /* index */
    b32(e, free_pid ? 3 : 0);       /* numfree */
    batom(e, "mod");
    bint(e, 4);                     /* old index */
    b8(e, 98);
    b32(e, 0x12345678);             /* old uniq */
    b8(e, 88);
    batom(e, NODE);
    size_t num_at = e->n;
    b32(e, creator);
    b32(e, 0xdead);
    b32(e, CREATION);
    if (free_pid) {
        bpid(e, NODE, 9, 0, CREATION);
        bpid(e, "x@y", 11, 0, CREATION);
        bint(e, 1);
    }
    uint32_t size = (uint32_t)(e->n - size_at);
    e->b[size_at] = (uint8_t)(size >> 24);
    e->b[size_at + 1] = (uint8_t)(size >> 16);
    e->b[size_at + 2] = (uint8_t)(size >> 8);
    e->b[size_at + 3] = (uint8_t)size;
    return num_at;
}

static void test_etf_fun(void)
{
    etf_pid_sink sink = { NULL, 0, 0 };
    etfb e;
    uint8_t out[sizeof e.b];

    size_t num_at = build_fun(&e, 7, 1);
    CHECK(scan_copy(e.b, e.n, NODE, CREATION, &sink, out) == 0);
    /* The creator pid 7 is not collected; the free variable pid 9 is. */
    CHECK(sink.n == 1 && sink.pids[0] == 9);
    /* Number, serial, creation zeroed; everything else untouched. */
    int zeroed = 1, rest_same = 1;
    for (size_t i = 0; i < e.n; i++) {
        if (i >= num_at && i < num_at + 12)
            zeroed &= out[i] == 0;
        else
            rest_same &= out[i] == e.b[i];
    }
    CHECK(zeroed);
    CHECK(rest_same);
    /* Two funs differing only in their creator canonicalise to the same
    ** bytes. */
    uint8_t out2[sizeof e.b];
    etfb e2;
    build_fun(&e2, 12345, 1);
    sink.n = 0;
    CHECK(scan_copy(e2.b, e2.n, NODE, CREATION, &sink, out2) == 0);
    CHECK(e2.n == e.n && memcmp(out, out2, e.n) == 0);
    /* Scanning the canonical form again is a fixed point. */
    sink.n = 0;
    CHECK(scan_copy(out, e.n, NODE, CREATION, &sink, out2) == 0);
    CHECK(memcmp(out, out2, e.n) == 0);
    CHECK(sink.n == 1);
    CHECK(all_prefixes_fail(&e));

    /* A fun with no free variables. */
    sink.n = 0;
    build_fun(&e, 7, 0);
    CHECK(scan(&e, &sink) == 0);
    CHECK(sink.n == 0);
    CHECK(all_prefixes_fail(&e));

    /* The creator must be a pid. */
    num_at = build_fun(&e, 7, 0);
    e.b[num_at - 1 - 2 - strlen(NODE) - 1] = 97;   /* pid tag -> small int */
    CHECK(scan(&e, &sink) == -1);
    /* The module must be an atom. */
    build_fun(&e, 7, 0);
    e.b[1 + 1 + 29] = 97;
    CHECK(scan(&e, &sink) == -1);
    /* The old index must be an integer. */
    build_fun(&e, 7, 0);
    e.b[1 + 1 + 29 + 3 + 3] = 106;
    CHECK(scan(&e, &sink) == -1);
    /* numfree larger than what follows. */
    build_fun(&e, 7, 1);
    e.b[1 + 1 + 25 + 3] = 200;
    CHECK(scan(&e, &sink) == -1);
    free(sink.pids);
}

/* Random single-byte corruptions and truncations of well-formed terms:
** whatever the result, nothing may be read or written out of bounds. */
static void test_etf_mutations(void)
{
    etfb seeds[3];
    build_fun(&seeds[0], 7, 1);
    bstart(&seeds[1]);
    b8(&seeds[1], 104);
    b8(&seeds[1], 3);
    bpid(&seeds[1], NODE, 1, 0, CREATION);
    b8(&seeds[1], 116);
    b32(&seeds[1], 1);
    bint(&seeds[1], 1);
    b8(&seeds[1], 108);
    b32(&seeds[1], 1);
    bpid(&seeds[1], NODE, 2, 0, CREATION);
    b8(&seeds[1], 106);
    b8(&seeds[1], 109);
    b32(&seeds[1], 2);
    b8(&seeds[1], 1);
    b8(&seeds[1], 2);
    bstart(&seeds[2]);
    b8(&seeds[2], 90);
    b16(&seeds[2], 3);
    batom(&seeds[2], NODE);
    b32(&seeds[2], 1);
    b32(&seeds[2], 1); b32(&seeds[2], 2); b32(&seeds[2], 3);

    uint32_t rng = 12345;
    unsigned long ok = 0, bad = 0;
    for (int iter = 0; iter < 30000; iter++) {
        const etfb *src = &seeds[iter % 3];
        uint8_t *buf = xmalloc(src->n);
        memcpy(buf, src->b, src->n);
        rng = rng * 1103515245u + 12345u;
        size_t at = 1 + (rng >> 8) % (src->n - 1);
        rng = rng * 1103515245u + 12345u;
        buf[at] = (uint8_t)(rng >> 16);
        rng = rng * 1103515245u + 12345u;
        size_t len = (rng >> 8) % 4 == 0 ? (rng >> 12) % src->n : src->n;
        etf_pid_sink sink = { NULL, 0, 0 };
        int rc = etf_scan_pids(buf, len, NODE, strlen(NODE), CREATION, &sink);
        if (rc == 0)
            ok++;
        else if (rc == -1)
            bad++;
        free(sink.pids);
        free(buf);
    }
    CHECK(ok + bad == 30000);
    CHECK(bad > 0);
}

/* ------------------------------------------------------------------ */
/* sys_state                                                          */

static proc mkproc(uint32_t pid, uint32_t status, part_id cont, part_id mb)
{
    proc p;
    memset(&p, 0, sizeof p);
    p.pid = pid;
    p.status = status;
    p.cont = cont;
    p.mailbox = mb;
    return p;
}

static int same_state(const sys_state *a, const sys_state *b)
{
    if (a->nprocs != b->nprocs)
        return 0;
    for (uint32_t i = 0; i < a->nprocs; i++) {
        const proc *x = &a->procs[i], *y = &b->procs[i];
        if (x->pid != y->pid || x->status != y->status || x->cont != y->cont ||
            x->mailbox != y->mailbox || x->flags != y->flags ||
            x->gl != y->gl || x->nlinks != y->nlinks)
            return 0;
        for (uint32_t k = 0; k < x->nlinks; k++)
            if (x->links[k] != y->links[k])
                return 0;
    }
    return 1;
}

static void test_sys_state(void)
{
    part_store *ps = part_store_new();
    CHECK(ps != NULL);
    if (ps == NULL)
        return;
    int fresh;
    part_id empty = part_store_intern(ps, PART_MAILBOX, "", 0, NULL, 0, &fresh);
    part_id c1 = part_store_intern(ps, PART_TERM, "\x83\x61\x01", 3, NULL, 0,
                                   &fresh);
    part_id c2 = part_store_intern(ps, PART_TERM, "\x83\x61\x02", 3, NULL, 0,
                                   &fresh);
    part_id c3 = part_store_intern(ps, PART_TERM, "\x83\x61\x03", 3, NULL, 0,
                                   &fresh);

    /* Mailboxes. */
    CHECK(mailbox_length(ps, empty) == 0);
    CHECK(mailbox_length(ps, 0) == 0);
    CHECK(mailbox_at(ps, empty, 0) == 0);
    part_id m1 = mailbox_append(ps, empty, c1);
    part_id m12 = mailbox_append(ps, m1, c2);
    part_id m123 = mailbox_append(ps, m12, c3);
    CHECK(m1 != 0 && m12 != 0 && m123 != 0);
    CHECK(m1 != empty && m12 != m1 && m123 != m12);
    CHECK(mailbox_length(ps, m123) == 3);
    CHECK(mailbox_at(ps, m123, 0) == c1 && mailbox_at(ps, m123, 1) == c2 &&
          mailbox_at(ps, m123, 2) == c3);
    CHECK(mailbox_at(ps, m123, 3) == 0);
    CHECK(mailbox_append(ps, m1, c2) == m12);           /* hash-consed */
    CHECK(mailbox_append(ps, 0, c1) == 0);
    part_id m13 = mailbox_remove(ps, m123, 1);
    CHECK(mailbox_length(ps, m13) == 2 && mailbox_at(ps, m13, 0) == c1 &&
          mailbox_at(ps, m13, 1) == c3);
    CHECK(mailbox_remove(ps, m123, 2) == m12);
    CHECK(mailbox_remove(ps, m1, 0) == empty);
    CHECK(mailbox_remove(ps, m1, 1) == 0);
    CHECK(mailbox_remove(ps, empty, 0) == 0);
    CHECK(mailbox_remove(ps, 0, 0) == 0);

    /* Insert keeps pid order; find and remove. */
    sys_state s = { 0 };
    CHECK(sys_state_find(&s, 1) == -1);
    const uint32_t order[] = { 5, 1, 9, 3, 7, 2, 8, 4, 6, 10 };
    for (size_t i = 0; i < 10; i++) {
        proc p = mkproc(order[i], PROC_INIT, c1, empty);
        CHECK(sys_state_insert(&s, &p) >= 0);
    }
    CHECK(s.nprocs == 10);
    int sorted = 1;
    for (uint32_t i = 0; i < s.nprocs; i++)
        sorted &= s.procs[i].pid == i + 1;
    CHECK(sorted);
    CHECK(sys_state_find(&s, 1) == 0);
    CHECK(sys_state_find(&s, 10) == 9);
    CHECK(sys_state_find(&s, 6) == 5);
    CHECK(sys_state_find(&s, 0) == -1);
    CHECK(sys_state_find(&s, 11) == -1);
    sys_state_remove(&s, 0);            /* pid 1 */
    sys_state_remove(&s, 8);            /* pid 10 */
    sys_state_remove(&s, 3);            /* pid 5 */
    CHECK(s.nprocs == 7);
    CHECK(sys_state_find(&s, 5) == -1 && sys_state_find(&s, 1) == -1 &&
          sys_state_find(&s, 10) == -1);
    CHECK(sys_state_find(&s, 2) == 0 && sys_state_find(&s, 6) == 3 &&
          sys_state_find(&s, 9) == 6);

    /* Links: sorted, unique. */
    proc *p = &s.procs[sys_state_find(&s, 4)];
    const uint32_t links[] = { 7, 2, 7, 5, 9, 1, 2, 3 };
    for (size_t i = 0; i < sizeof links / sizeof *links; i++)
        CHECK(proc_link_add(p, links[i]) == 0);
    CHECK(p->nlinks == 6);
    if (p->nlinks == 6)
        CHECK(p->links[0] == 1 && p->links[1] == 2 && p->links[2] == 3 &&
              p->links[3] == 5 && p->links[4] == 7 && p->links[5] == 9);
    proc_link_remove(p, 5);
    proc_link_remove(p, 42);            /* absent: no-op */
    proc_link_remove(p, 1);
    proc_link_remove(p, 9);
    CHECK(p->nlinks == 3 && p->links[0] == 2 && p->links[1] == 3 &&
          p->links[2] == 7);
    CHECK(proc_link_add(p, 4) == 0);
    CHECK(p->nlinks == 4 && p->links[2] == 4);
    s.procs[0].status = PROC_WAITING;
    s.procs[0].cont = c2;
    s.procs[0].mailbox = m13;
    s.procs[0].flags = PF_TIMEOUT;
    CHECK(proc_link_add(&s.procs[0], 4) == 0);

    /* Encode, decode: the same state; encoding again: the same root. */
    int is_new = -1;
    part_id root = sys_state_encode(ps, &s, &is_new);
    CHECK(root != 0 && is_new == 1);
    const part *rp = part_store_get(ps, root);
    CHECK(rp != NULL && rp->kind == PART_STATE && rp->len == 4 * (s.nprocs + 1));
    sys_state d;
    CHECK(sys_state_decode(ps, root, &d) == 0);
    CHECK(same_state(&s, &d));
    CHECK(sys_state_encode(ps, &d, &is_new) == root && is_new == 0);
    /* A copy is independent of its source. */
    sys_state c;
    CHECK(sys_state_copy(&c, &d) == 0);
    CHECK(same_state(&c, &d));
    CHECK(proc_link_add(&c.procs[2], 99) == 0);
    CHECK(!same_state(&c, &d));
    part_id root2 = sys_state_encode(ps, &c, &is_new);
    CHECK(root2 != 0 && root2 != root && is_new == 1);
    sys_state_clear(&c);
    CHECK(c.nprocs == 0 && c.procs == NULL);
    /* copy_into reuses a state's buffers: the same copy whatever it held
    ** before (more processes, fewer, none), and encoding with the decoded
    ** parts as hints (stale or wrong ones too) gives the same roots. */
    {
        sys_state e = { 0 }, k = { 0 };
        CHECK(sys_state_copy_into(&k, &d) == 0 && same_state(&k, &d));
        CHECK(sys_state_encode(ps, &k, &is_new) == root && is_new == 0);
        CHECK(proc_link_add(&k.procs[2], 99) == 0);
        CHECK(monitor_add(&k.procs[1].mons, (monitor){ 7, 1, 0 }) == 0);
        CHECK(sys_state_copy_into(&k, &d) == 0 && same_state(&k, &d));
        CHECK(proc_link_add(&k.procs[2], 99) == 0);
        CHECK(sys_state_encode(ps, &k, &is_new) == root2 && is_new == 0);
        k.procs[0].enc = k.procs[1].enc;
        k.world_enc = k.procs[1].enc;
        CHECK(sys_state_encode(ps, &k, &is_new) == root2 && is_new == 0);
        CHECK(sys_state_copy_into(&k, &e) == 0 && k.nprocs == 0);
        CHECK(sys_state_copy_into(&k, &d) == 0 && same_state(&k, &d));
        CHECK(sys_state_encode(ps, &k, &is_new) == root && is_new == 0);
        /* decode_into: the same, whatever the state held. */
        CHECK(proc_link_add(&k.procs[2], 99) == 0);
        CHECK(monitor_add(&k.procs[0].monby, (monitor){ 9, 2, 0 }) == 0);
        CHECK(sys_state_decode_into(ps, root, &k) == 0 && same_state(&k, &d));
        CHECK(sys_state_decode_into(ps, root2, &k) == 0 && k.procs[2].nlinks == d.procs[2].nlinks + 1);
        const uint8_t empty_root[4] = { 0 };
        CHECK(sys_state_decode_bytes_into(ps, empty_root, 4, &k) == 0 && k.nprocs == 0);
        CHECK(sys_state_decode_into(ps, root, &k) == 0 && same_state(&k, &d));
        CHECK(sys_state_decode_into(ps, 0, &k) == -1 && k.nprocs == 0 && k.procs == NULL);
        sys_state_clear(&k);
    }
    /* A group leader other than the default is one more word of the
    ** record, and survives decoding; the default is no word at all. */
    CHECK(sys_state_copy(&c, &d) == 0);
    c.procs[1].gl = 0x1234;
    part_id groot = sys_state_encode(ps, &c, &is_new);
    CHECK(groot != 0 && groot != root && is_new == 1);
    sys_state g;
    CHECK(sys_state_decode(ps, groot, &g) == 0 && same_state(&c, &g) &&
          g.procs[1].gl == 0x1234 && g.procs[0].gl == 0);
    sys_state_clear(&g);
    c.procs[1].gl = 0;
    CHECK(sys_state_encode(ps, &c, &is_new) == root && is_new == 0);
    sys_state_clear(&c);
    /* A stored 0 (the default as a word) would be a second encoding. */
    {
        const part *rootp = part_store_get(ps, root);
        part_id pid1;
        memcpy(&pid1, rootp->data + 4, 4);
        const part *pp = part_store_get(ps, pid1);
        uint32_t zrec[64] = { 0 };
        CHECK(pp != NULL && pp->len + 4 <= sizeof zrec);
        if (pp != NULL && pp->len + 4 <= sizeof zrec) {
            memcpy(zrec, pp->data, pp->len);
            part_id zp = part_store_intern(ps, PART_PROC, zrec, pp->len + 4, NULL, 0, &fresh);
            uint32_t zroot[2];
            memcpy(&zroot[0], rootp->data, 4);
            zroot[1] = zp;
            part_id zr = part_store_intern(ps, PART_STATE, zroot, sizeof zroot, NULL, 0, &fresh);
            CHECK(sys_state_decode(ps, zr, &g) == -1 && g.nprocs == 0);
        }
    }
    sys_state_clear(&d);

    /* The same state built in another order interns to the same root. */
    sys_state r = { 0 };
    for (int i = (int)s.nprocs - 1; i >= 0; i--) {
        const proc *src = &s.procs[i];
        proc q = mkproc(src->pid, src->status, src->cont, src->mailbox);
        q.flags = src->flags;
        for (uint32_t k = src->nlinks; k-- > 0;)
            CHECK(proc_link_add(&q, src->links[k]) == 0);
        CHECK(sys_state_insert(&r, &q) >= 0);
    }
    CHECK(same_state(&s, &r));
    CHECK(sys_state_encode(ps, &r, &is_new) == root && is_new == 0);
    sys_state_clear(&r);

    /* The empty state, and decoding things that are not states. */
    sys_state none = { 0 };
    part_id eroot = sys_state_encode(ps, &none, &is_new);
    CHECK(eroot != 0 && is_new == 1);
    CHECK(sys_state_decode(ps, eroot, &d) == 0 && d.nprocs == 0);
    sys_state_clear(&d);
    CHECK(sys_state_copy(&d, &none) == 0 && d.nprocs == 0);
    sys_state_clear(&d);
    CHECK(sys_state_decode(ps, 0, &d) == -1 && d.nprocs == 0);
    CHECK(sys_state_decode(ps, c1, &d) == -1 && d.nprocs == 0);
    CHECK(sys_state_decode(ps, UINT32_MAX, &d) == -1);
    /* A root that names a non-process part, and a truncated process. */
    uint32_t badroot[2] = { c1, c2 };
    part_id broot = part_store_intern(ps, PART_STATE, badroot, sizeof badroot,
                                      NULL, 0, &fresh);
    CHECK(sys_state_decode(ps, broot, &d) == -1 && d.nprocs == 0 &&
          d.procs == NULL);
    uint32_t shortproc[3] = { 1, 0, c1 };
    part_id sp = part_store_intern(ps, PART_PROC, shortproc, sizeof shortproc,
                                   NULL, 0, &fresh);
    uint32_t root3[2];
    memcpy(&root3[0], part_store_get(ps, root)->data, 4);
    root3[1] = sp;
    part_id broot2 = part_store_intern(ps, PART_STATE, root3, sizeof root3,
                                       NULL, 0, &fresh);
    CHECK(sys_state_decode(ps, broot2, &d) == -1 && d.nprocs == 0);
    /* A process whose link count disagrees with its length. */
    uint32_t liar[7] = { 1, 0, c1, empty, 0, 5, 2 };
    part_id lp = part_store_intern(ps, PART_PROC, liar, sizeof liar, NULL, 0,
                                   &fresh);
    part_id broot3 = part_store_intern(ps, PART_STATE, &lp, sizeof lp, NULL, 0,
                                       &fresh);
    CHECK(sys_state_decode(ps, broot3, &d) == -1 && d.nprocs == 0);
    /* A link count so large that 4 * (6 + nlinks) wraps to the record's
    ** real length in 32 bits: must be refused, not copied from. */
    uint32_t wrap[6] = { 1, 0, c1, empty, 0, 0x40000000u };
    part_id wp = part_store_intern(ps, PART_PROC, wrap, sizeof wrap, NULL, 0,
                                   &fresh);
    part_id broot4 = part_store_intern(ps, PART_STATE, &wp, sizeof wp, NULL, 0,
                                       &fresh);
    CHECK(sys_state_decode(ps, broot4, &d) == -1 && d.nprocs == 0);

    sys_state_clear(&s);
    sys_state_clear(&s);                /* idempotent */
    part_store_free(ps);
}

/* ------------------------------------------------------------------ */
/* search                                                             */

static search *new_search_cfg(uint64_t max_states, uint64_t max_depth,
                              int check_deadlock, size_t table_slots)
{
    search_config cfg = { .node = NODE, .nodelen = strlen(NODE),
                          .creation = CREATION, .max_states = max_states,
                          .max_depth = max_depth,
                          .check_deadlock = check_deadlock,
                          .table_slots = table_slots };
    search *s = search_new(&cfg);
    if (s == NULL) {
        fprintf(stderr, "search_new failed\n");
        exit(2);
    }
    return s;
}

static search *new_search(uint64_t max_states, uint64_t max_depth)
{
    return new_search_cfg(max_states, max_depth, 1, 0);
}

static void set_int(uint8_t buf[3], uint8_t n)
{
    buf[0] = 131;
    buf[1] = 97;
    buf[2] = n;
}

static uint8_t *mklabel(uint8_t n)
{
    uint8_t *l = xmalloc(3);
    set_int(l, n);
    return l;
}

/* The small integer a stored term encodes, or -1. */
static int term_int(search *s, part_id id)
{
    const part *p = part_store_get(search_store(s), id);
    if (p == NULL || p->kind != PART_TERM || p->len != 3 || p->data[0] != 131 ||
        p->data[1] != 97)
        return -1;
    return p->data[2];
}

static int label_int(search *s, size_t i)
{
    const uint8_t *l;
    size_t n;
    if (search_label(s, i, &l, &n) != 0 || l == NULL || n != 3)
        return -1;
    return l[2];
}

/* Effects own small writable term buffers. */
typedef struct effs {
    effect e[8];
    uint8_t t[8][3];
    size_t n;
} effs;

static void eff_spawn(effs *f, uint32_t child, int link, uint8_t init)
{
    set_int(f->t[f->n], init);
    f->e[f->n] = (effect){ .kind = EFFECT_SPAWN, .pid = child, .link = link,
                           .term = { f->t[f->n], 3 } };
    f->n++;
}

static void eff_send(effs *f, uint32_t to, uint8_t msg)
{
    set_int(f->t[f->n], msg);
    f->e[f->n] = (effect){ .kind = EFFECT_SEND, .pid = to,
                           .term = { f->t[f->n], 3 } };
    f->n++;
}

static int run_wait(search *s, uint8_t cont, int timeout, effs *f,
                    uint8_t label, int stop, request *q)
{
    uint8_t c[3];
    set_int(c, cont);
    run_result r = { .outcome = OUTCOME_WAIT, .has_timeout = timeout,
                     .cont = { c, 3 }, .effects = f ? f->e : NULL,
                     .neffects = f ? f->n : 0, .label = mklabel(label),
                     .label_len = 3, .stop = stop };
    return search_answer_run(s, &r, q);
}

static int run_exit(search *s, int normal, effs *f, uint8_t label, int stop,
                    request *q)
{
    run_result r = { .outcome = OUTCOME_EXIT, .normal = normal,
                     .effects = f ? f->e : NULL, .neffects = f ? f->n : 0,
                     .label = mklabel(label), .label_len = 3, .stop = stop };
    return search_answer_run(s, &r, q);
}

static int start(search *s, uint8_t init, request *q)
{
    uint8_t c[3];
    set_int(c, init);
    term_in t = { c, 3, 0 };
    return search_start(s, &t, 1, q);
}

static search_stats stats(const search *s)
{
    search_stats st;
    search_get_stats(s, &st);
    return st;
}

/* (a) One process that exits at once. */
static void test_search_single(void)
{
    search *s = new_search(0, 0);
    request q;
    CHECK(search_top_state(s) == NULL);
    CHECK(search_stack_depth(s) == 0);
    CHECK(search_fresh_pid(s, 0) == 0);
    CHECK(start(s, 1, &q) == 0);
    CHECK(q.kind == REQ_RUN && q.run == RUN_START && q.pid == 1);
    CHECK(term_int(s, q.cont) == 1);
    CHECK(search_stack_depth(s) == 1);
    const sys_state *top = search_top_state(s);
    CHECK(top != NULL && top->nprocs == 1 && top->procs[0].pid == 1 &&
          top->procs[0].status == PROC_INIT);
    /* A second start is refused without disturbing the search. */
    CHECK(start(s, 1, &q) == -1 && q.kind == REQ_ERROR && q.error != NULL);
    CHECK(run_exit(s, 1, NULL, 50, 0, &q) == 0);
    CHECK(q.kind == REQ_DONE);
    search_stats st = stats(s);
    CHECK(st.states == 2 && st.transitions == 1);
    CHECK(st.depth == 0 && st.max_depth_seen == 1 && !st.truncated);
    CHECK(st.parts > 0 && st.bytes > 0);
    /* Asking again keeps answering done; answers are refused. */
    CHECK(search_answer_match(s, 1, &q) == -1 && q.kind == REQ_ERROR);
    CHECK(run_exit(s, 1, NULL, 51, 0, &q) == -1 && q.kind == REQ_ERROR);
    CHECK(search_fresh_pid(s, 0) == 0);
    CHECK(search_top_state(s) == NULL);
    search_free(s);
    search_free(NULL);
}

/* (b) A parent spawns a child and waits forever; the child exits. */
static void test_search_deadlock(void)
{
    search *s = new_search(0, 0);
    request q;
    CHECK(start(s, 1, &q) == 0 && q.kind == REQ_RUN && q.pid == 1);
    CHECK(search_fresh_pid(s, 0) == 2);
    CHECK(search_fresh_pid(s, 0) == 3);    /* allocated during this run */
    effs f = { .n = 0 };
    eff_spawn(&f, 2, 0, 2);
    CHECK(run_wait(s, 10, 0, &f, 60, 0, &q) == 0);
    /* The parent has nothing to do; the child runs. */
    CHECK(q.kind == REQ_RUN && q.run == RUN_START && q.pid == 2);
    CHECK(term_int(s, q.cont) == 2);
    CHECK(search_fresh_pid(s, 0) == 3);    /* the allocation list was reset */
    CHECK(run_exit(s, 1, NULL, 61, 0, &q) == 0);
    CHECK(q.kind == REQ_DEADLOCK);
    search_stats st = stats(s);
    CHECK(st.states == 3 && st.transitions == 2 && st.depth == 3);
    CHECK(search_stack_depth(s) == 3);
    CHECK(label_int(s, 1) == 60 && label_int(s, 2) == 61);
    const uint8_t *l;
    size_t n;
    CHECK(search_label(s, 0, &l, &n) == -1);
    CHECK(search_label(s, 3, &l, &n) == -1);
    const sys_state *top = search_top_state(s);
    CHECK(top != NULL && top->nprocs == 1);
    if (top != NULL && top->nprocs == 1) {
        CHECK(top->procs[0].pid == 1 && top->procs[0].status == PROC_WAITING);
        CHECK(term_int(s, top->procs[0].cont) == 10);
        CHECK(top->procs[0].flags == 0 && top->procs[0].nlinks == 0);
        CHECK(mailbox_length(search_store(s), top->procs[0].mailbox) == 0);
    }
    /* Finished: further requests keep reporting the deadlock. */
    CHECK(search_answer_match(s, 0, &q) == -1 && q.kind == REQ_ERROR);
    CHECK(search_fresh_pid(s, 0) == 0);
    search_free(s);             /* with labels still on the stack */
}

/* idle (issue 19): a stuck state in which every process waits marked idle
** (PF_IDLE: an OTP server in its main loop) ends its path; one process
** waiting unmarked makes it a deadlock again. */
static void test_search_idle(void)
{
    for (int both_idle = 0; both_idle <= 1; both_idle++) {
        search *s = new_search(0, 0);
        request q;
        CHECK(start(s, 1, &q) == 0 && q.kind == REQ_RUN && q.pid == 1);
        CHECK(search_fresh_pid(s, 0) == 2);
        effs f = { .n = 0 };
        eff_spawn(&f, 2, 0, 2);
        uint8_t c[3];
        set_int(c, 10);
        run_result r = { .outcome = OUTCOME_WAIT, .idle = both_idle, .cont = { c, 3 },
                         .effects = f.e, .neffects = f.n, .label = mklabel(60),
                         .label_len = 3 };
        CHECK(search_answer_run(s, &r, &q) == 0);
        CHECK(q.kind == REQ_RUN && q.run == RUN_START && q.pid == 2);
        set_int(c, 11);
        run_result w = { .outcome = OUTCOME_WAIT, .idle = 1, .cont = { c, 3 },
                         .label = mklabel(61), .label_len = 3 };
        CHECK(search_answer_run(s, &w, &q) == 0);
        CHECK(q.kind == (both_idle ? REQ_DONE : REQ_DEADLOCK));
        const sys_state *top = search_top_state(s);
        if (!both_idle && top != NULL && top->nprocs == 2)
            CHECK(top->procs[0].flags == 0 && top->procs[1].flags == PF_IDLE);
        search_free(s);
    }
}

/* The LTL check's expand-only search with the reduction (issue 18 round
** 3): nothing is cut, each successor carries por_step_safe's verdict.  Two
** processes whose starts end in a wait without effects: both successors
** listed, both safe (rules 1-5); without the reduction, neither marked. */
static void test_expand_marks_safe(void)
{
    for (int reduction = 0; reduction <= 1; reduction++) {
        search_config cfg = { .node = NODE, .nodelen = strlen(NODE),
                              .creation = CREATION, .expand_only = 1,
                              .reduction = reduction };
        search *s = search_new(&cfg);
        CHECK(s != NULL);
        if (s == NULL)
            return;
        request q;
        CHECK(start(s, 1, &q) == 0 && q.kind == REQ_RUN && q.pid == 1);
        CHECK(search_fresh_pid(s, 0) == 2);
        CHECK(search_fresh_pid(s, 0) == 3);
        effs f = { .n = 0 };
        eff_spawn(&f, 2, 0, 2);
        eff_spawn(&f, 3, 0, 3);
        /* the entry's start spawns (rule 3): listed, not safe */
        CHECK(run_wait(s, 10, 0, &f, 60, 0, &q) == 0 && q.kind == REQ_EXPANDED);
        const expansion *e;
        int deadlock;
        CHECK(search_expansion(s, &e, &deadlock) == 1 && e[0].safe == POR_UNSAFE);
        part_id next = e[0].state;
        CHECK(search_expand(s, next, &q) == 0 && q.kind == REQ_RUN && q.pid == 2);
        CHECK(run_wait(s, 11, 0, NULL, 61, 0, &q) == 0 && q.kind == REQ_RUN && q.pid == 3);
        CHECK(run_wait(s, 12, 0, NULL, 62, 0, &q) == 0 && q.kind == REQ_EXPANDED);
        size_t n = search_expansion(s, &e, &deadlock);
        CHECK(n == 2);
        for (size_t i = 0; i < n && i < 2; i++)
            CHECK(e[i].safe == (reduction ? POR_SAFE_LOCAL : POR_UNSAFE));
        search_free(s);
    }
}

static void sym_ctx(trans_ctx *cx, part_store *ps);

/* Fault targets (issue 19): a blind kill spares the entry, an aimed one
** hits only PF_TARGET processes; crashes and disconnections only the
** nodes and pairs named. */
static void test_fault_targets(void)
{
    part_store *ps = part_store_new();
    CHECK(ps != NULL);
    if (ps == NULL)
        return;
    trans_ctx cx;
    sym_ctx(&cx, ps);
    cx.names.nodes.n = 3;
    cx.max_kills = 1;
    cx.entry_pid = MAKE_KEY(0, 1);
    cx.crash_nodes = ~(uint64_t)0;
    for (int a = 0; a < 64; a++)
        cx.disconnect_pairs[a] = ~(uint64_t)0;
    sys_state st;
    memset(&st, 0, sizeof st);
    proc p1 = { .pid = MAKE_KEY(0, 1), .status = PROC_WAITING };
    proc p2 = { .pid = MAKE_KEY(0, 2), .status = PROC_WAITING, .flags = PF_TARGET };
    proc p3 = { .pid = MAKE_KEY(1, 3), .status = PROC_WAITING };
    CHECK(sys_state_insert(&st, &p1) >= 0 && sys_state_insert(&st, &p2) >= 0 &&
          sys_state_insert(&st, &p3) >= 0);
    fault f;
    /* Blind: every process but the entry, in pid order. */
    CHECK(ether_nth_fault(&cx, &st, 0, &f) && f.kind == FAULT_KILL && f.a == MAKE_KEY(0, 2));
    CHECK(ether_nth_fault(&cx, &st, 1, &f) && f.kind == FAULT_KILL && f.a == MAKE_KEY(1, 3));
    CHECK(!ether_nth_fault(&cx, &st, 2, &f));
    /* Aimed: the marked process only. */
    cx.kill_targeted = 1;
    CHECK(ether_nth_fault(&cx, &st, 0, &f) && f.kind == FAULT_KILL && f.a == MAKE_KEY(0, 2));
    CHECK(!ether_nth_fault(&cx, &st, 1, &f));
    cx.max_kills = 0;
    /* Crashes of node 1 only; disconnections of the pair (0, 2) only. */
    cx.max_crashes = 1;
    cx.crash_nodes = (uint64_t)1 << 1;
    cx.max_disconnects = 1;
    for (int a = 0; a < 64; a++)
        cx.disconnect_pairs[a] = 0;
    cx.disconnect_pairs[0] = (uint64_t)1 << 2;
    CHECK(ether_nth_fault(&cx, &st, 0, &f) && f.kind == FAULT_CRASH && f.a == 1);
    CHECK(ether_nth_fault(&cx, &st, 1, &f) && f.kind == FAULT_DISCONNECT && f.a == 0 &&
          f.b == 2);
    CHECK(!ether_nth_fault(&cx, &st, 2, &f));
    sys_state_clear(&st);
    part_store_free(ps);
}

/* Least-fresh pids skip pids that terms in the state still reference. */
static void test_search_fresh_pids(void)
{
    search *s = new_search(0, 0);
    request q;
    CHECK(start(s, 1, &q) == 0 && q.kind == REQ_RUN);
    CHECK(search_fresh_pid(s, 0) == 2);
    /* The child's initial call mentions simulated pid 3 and pid 4 of
    ** another node and of another creation. */
    etfb e;
    bstart(&e);
    b8(&e, 104);
    b8(&e, 3);
    bpid(&e, NODE, 3, 0, CREATION);
    bpid(&e, "elsewhere@host", 4, 0, CREATION);
    bpid(&e, NODE, 4, 0, CREATION + 1);
    uint8_t *init = xmalloc(e.n);
    memcpy(init, e.b, e.n);
    effect sp = { .kind = EFFECT_SPAWN, .pid = 2, .link = 0,
                  .term = { init, e.n } };
    effs f = { .n = 0 };
    f.e[0] = sp;
    f.n = 1;
    CHECK(run_wait(s, 10, 0, &f, 1, 0, &q) == 0);
    free(init);
    CHECK(q.kind == REQ_RUN && q.pid == 2 && q.run == RUN_START);
    const part *ip = part_store_get(search_store(s), q.cont);
    CHECK(ip != NULL && ip->npids == 1 && ip->pids[0] == 3);
    CHECK(search_fresh_pid(s, 0) == 4);
    CHECK(search_fresh_pid(s, 0) == 5);
    /* The child sends pid 5's number nowhere; it spawns 4 and exits. */
    effs g = { .n = 0 };
    eff_spawn(&g, 4, 0, 4);
    CHECK(run_exit(s, 1, &g, 2, 0, &q) == 0);
    CHECK(q.kind == REQ_RUN && q.pid == 4);
    /* Pid 2 is free again: it has exited and nothing refers to it. */
    CHECK(search_fresh_pid(s, 0) == 2);
    CHECK(search_fresh_pid(s, 0) == 3);
    CHECK(search_fresh_pid(s, 0) == 5);
    CHECK(run_exit(s, 1, NULL, 3, 0, &q) == 0);
    CHECK(q.kind == REQ_DEADLOCK);
    search_free(s);
}

/* (c) A message to a waiting process: match questions, receive. */
static void prepare_mailbox(search *s, request *q, int two)
{
    CHECK(start(s, 1, q) == 0 && q->kind == REQ_RUN && q->pid == 1);
    uint32_t child = search_fresh_pid(s, 0);
    CHECK(child == 2);
    effs f = { .n = 0 };
    eff_spawn(&f, child, 0, 2);
    CHECK(run_wait(s, 10, 0, &f, 1, 0, q) == 0);
    CHECK(q->kind == REQ_RUN && q->pid == 2);
    effs g = { .n = 0 };
    eff_send(&g, 1, 30);
    if (two)
        eff_send(&g, 1, 31);
    eff_send(&g, 77, 32);       /* to a process that does not exist */
    CHECK(run_exit(s, 1, &g, 2, 0, q) == 0);
    CHECK(q->kind == REQ_MATCH && q->pid == 1);
    CHECK(term_int(s, q->cont) == 10 && term_int(s, q->msg) == 30);
}

static void test_search_match(void)
{
    request q;

    /* No match, no timeout: deadlock with the message still queued. */
    search *s = new_search(0, 0);
    prepare_mailbox(s, &q, 0);
    CHECK(search_fresh_pid(s, 0) == 0);    /* no run outstanding */
    CHECK(search_answer_match(s, 0, &q) == 0);
    CHECK(q.kind == REQ_DEADLOCK);
    const sys_state *top = search_top_state(s);
    CHECK(top != NULL && top->nprocs == 1);
    if (top != NULL && top->nprocs == 1) {
        part_id mb = top->procs[0].mailbox;
        CHECK(mailbox_length(search_store(s), mb) == 1);
        CHECK(term_int(s, mailbox_at(search_store(s), mb, 0)) == 30);
    }
    CHECK(stats(s).memo_entries == 1);
    search_free(s);

    /* A match: receive it, then exit. */
    s = new_search(0, 0);
    prepare_mailbox(s, &q, 0);
    CHECK(search_answer_match(s, 1, &q) == 0);
    CHECK(q.kind == REQ_RUN && q.run == RUN_RECEIVE && q.pid == 1);
    CHECK(term_int(s, q.cont) == 10 && term_int(s, q.msg) == 30);
    CHECK(run_exit(s, 1, NULL, 3, 0, &q) == 0);
    CHECK(q.kind == REQ_DONE);
    search_stats st = stats(s);
    CHECK(st.states == 4 && st.transitions == 3 && st.memo_entries == 1);
    search_free(s);

    /* Two messages: the first does not match, the second does; receiving
    ** takes the second out and leaves the first. */
    s = new_search(0, 0);
    prepare_mailbox(s, &q, 1);
    CHECK(search_answer_match(s, 0, &q) == 0);
    CHECK(q.kind == REQ_MATCH && term_int(s, q.msg) == 31);
    CHECK(search_answer_match(s, 1, &q) == 0);
    CHECK(q.kind == REQ_RUN && q.run == RUN_RECEIVE && q.pid == 1 &&
          term_int(s, q.msg) == 31);
    CHECK(run_wait(s, 12, 0, NULL, 3, 0, &q) == 0);
    CHECK(q.kind == REQ_MATCH && term_int(s, q.cont) == 12 &&
          term_int(s, q.msg) == 30);
    CHECK(search_answer_match(s, 0, &q) == 0);
    CHECK(q.kind == REQ_DEADLOCK);
    top = search_top_state(s);
    CHECK(top != NULL && top->nprocs == 1);
    if (top != NULL && top->nprocs == 1) {
        part_id mb = top->procs[0].mailbox;
        CHECK(mailbox_length(search_store(s), mb) == 1 &&
              term_int(s, mailbox_at(search_store(s), mb, 0)) == 30);
        CHECK(term_int(s, top->procs[0].cont) == 12);
    }
    CHECK(stats(s).memo_entries == 3);
    search_free(s);

    /* The abstract mode: the first message only may match.  It is
    ** received, and the scan goes on past it (the concretisations where it
    ** does not match); with nothing surely enabled, the state may be a
    ** deadlock. */
    s = new_search(0, 0);
    prepare_mailbox(s, &q, 1);
    CHECK(search_answer_match(s, MATCH_MAYBE, &q) == 0);
    CHECK(q.kind == REQ_RUN && q.run == RUN_RECEIVE && q.pid == 1 &&
          term_int(s, q.msg) == 30);
    CHECK(run_exit(s, 1, NULL, 3, 0, &q) == 0);
    CHECK(q.kind == REQ_MATCH && term_int(s, q.msg) == 31);
    CHECK(search_answer_match(s, 0, &q) == 0);
    CHECK(q.kind == REQ_DEADLOCK);
    top = search_top_state(s);
    CHECK(top != NULL && top->nprocs == 1);
    if (top != NULL && top->nprocs == 1)
        CHECK(mailbox_length(search_store(s), top->procs[0].mailbox) == 2);
    search_free(s);

    /* A sure match after a maybe: both are received; no deadlock. */
    s = new_search(0, 0);
    prepare_mailbox(s, &q, 1);
    CHECK(search_answer_match(s, MATCH_MAYBE, &q) == 0);
    CHECK(q.kind == REQ_RUN && term_int(s, q.msg) == 30);
    CHECK(run_exit(s, 1, NULL, 3, 0, &q) == 0);
    CHECK(q.kind == REQ_MATCH && term_int(s, q.msg) == 31);
    CHECK(search_answer_match(s, 1, &q) == 0);
    CHECK(q.kind == REQ_RUN && term_int(s, q.msg) == 31);
    CHECK(run_exit(s, 1, NULL, 4, 0, &q) == 0);
    CHECK(q.kind == REQ_DONE);
    search_free(s);
}

/* A finite `after`: the timeout transition, back to the same state. */
static void test_search_timeout(void)
{
    search *s = new_search(0, 0);
    request q;
    CHECK(start(s, 1, &q) == 0);
    CHECK(run_wait(s, 11, 1, NULL, 1, 0, &q) == 0);
    CHECK(q.kind == REQ_RUN && q.run == RUN_TIMEOUT && q.pid == 1 &&
          term_int(s, q.cont) == 11);
    const sys_state *top = search_top_state(s);
    CHECK(top != NULL && top->nprocs == 1 && top->procs[0].flags == PF_TIMEOUT);
    /* The timeout loops back to the same state: not a new state. */
    CHECK(run_wait(s, 11, 1, NULL, 2, 0, &q) == 0);
    CHECK(q.kind == REQ_DONE);
    search_stats st = stats(s);
    CHECK(st.states == 2 && st.transitions == 2);
    search_free(s);

    /* Stop on a revisited state: it is pushed anyway, for the trace. */
    s = new_search(0, 0);
    CHECK(start(s, 1, &q) == 0);
    CHECK(run_wait(s, 11, 1, NULL, 1, 0, &q) == 0 && q.run == RUN_TIMEOUT);
    CHECK(run_wait(s, 11, 1, NULL, 2, 1, &q) == 0);
    CHECK(q.kind == REQ_STOPPED);
    st = stats(s);
    CHECK(st.states == 2 && st.transitions == 2 && st.depth == 3);
    CHECK(label_int(s, 1) == 1 && label_int(s, 2) == 2);
    CHECK(run_exit(s, 1, NULL, 3, 0, &q) == -1 && q.kind == REQ_ERROR);
    search_free(s);
}

/* A small model, driven by a table instead of by hand:
**   1 (main):   spawn two children (init 20), wait in 10 (no timeout)
**   20 (child): send 30 to pid 1, exit normally
**   10 + msg:   exit normally;  match(10, 30) is true.
** States: S0 {1I}; S1 {1W,2I,3I}; S2 {1W[30],3I}; S2' {1W[30],2I};
** A {3I}; B {1W[30,30]}; C {2I}; E {}.  Transitions: 10. */
typedef struct drive_counts {
    unsigned matches, starts, receives, timeouts, errors;
} drive_counts;

static enum request_kind drive(search *s, request *q, drive_counts *dc)
{
    uint8_t label = 100;
    while (q->kind == REQ_MATCH || q->kind == REQ_RUN || q->kind == REQ_YIELD) {
        if (q->kind == REQ_YIELD) {
            if (search_resume(s, q) != 0)
                dc->errors++;
            continue;
        }
        if (q->kind == REQ_MATCH) {
            dc->matches++;
            int ok = term_int(s, q->cont) == 10 && term_int(s, q->msg) == 30;
            if (search_answer_match(s, ok, q) != 0)
                dc->errors++;
            continue;
        }
        int cont = term_int(s, q->cont);
        if (q->run == RUN_START && cont == 1) {
            dc->starts++;
            effs f = { .n = 0 };
            uint32_t a = search_fresh_pid(s, 0);
            uint32_t b = search_fresh_pid(s, 0);
            if (a != 2 || b != 3)
                dc->errors++;
            eff_spawn(&f, a, 0, 20);
            eff_spawn(&f, b, 0, 20);
            if (run_wait(s, 10, 0, &f, label++, 0, q) != 0)
                dc->errors++;
        } else if (q->run == RUN_START && cont == 20) {
            dc->starts++;
            effs f = { .n = 0 };
            eff_send(&f, 1, 30);
            if (run_exit(s, 1, &f, label++, 0, q) != 0)
                dc->errors++;
        } else if (q->run == RUN_RECEIVE && cont == 10 &&
                   term_int(s, q->msg) == 30) {
            dc->receives++;
            if (run_exit(s, 1, NULL, label++, 0, q) != 0)
                dc->errors++;
        } else {
            dc->errors++;
            return REQ_ERROR;
        }
    }
    return q->kind;
}

static void test_search_model(void)
{
    /* (e) The full space: revisits do not count as states, and the match
    ** memo asks each (cont, msg) question once. */
    search *s = new_search(0, 0);
    request q;
    drive_counts dc = { 0, 0, 0, 0, 0 };
    CHECK(start(s, 1, &q) == 0);
    CHECK(drive(s, &q, &dc) == REQ_DONE);
    CHECK(dc.errors == 0);
    CHECK(dc.matches == 1);
    search_stats st = stats(s);
    CHECK(st.states == 8);
    CHECK(st.transitions == 10);
    CHECK(dc.starts + dc.receives == 10);
    CHECK(st.depth == 0 && !st.truncated && st.memo_entries == 1);
    CHECK(st.max_depth_seen == 4);
    search_free(s);

    /* (d) max_states: stops as soon as the limit is reached. */
    s = new_search(3, 0);
    dc = (drive_counts){ 0, 0, 0, 0, 0 };
    CHECK(start(s, 1, &q) == 0);
    CHECK(drive(s, &q, &dc) == REQ_LIMIT_STATES);
    CHECK(dc.errors == 0);
    st = stats(s);
    CHECK(st.states == 3 && st.transitions == 2 && st.depth == 3);
    CHECK(search_answer_match(s, 1, &q) == -1 && q.kind == REQ_ERROR);
    CHECK(run_exit(s, 1, NULL, 1, 0, &q) == -1 && q.kind == REQ_ERROR);
    search_free(s);

    /* max_states = 1: the initial state alone reaches the limit. */
    s = new_search(1, 0);
    CHECK(start(s, 1, &q) == 0);
    CHECK(q.kind == REQ_LIMIT_STATES);
    st = stats(s);
    CHECK(st.states == 1 && st.transitions == 0 && st.depth == 1);
    CHECK(search_fresh_pid(s, 0) == 0);
    CHECK(run_exit(s, 1, NULL, 1, 0, &q) == -1 && q.kind == REQ_ERROR);
    search_free(s);

    /* (d) max_depth: states beyond it are stored but not expanded. */
    s = new_search(0, 2);
    dc = (drive_counts){ 0, 0, 0, 0, 0 };
    CHECK(start(s, 1, &q) == 0);
    CHECK(drive(s, &q, &dc) == REQ_DONE);
    CHECK(dc.errors == 0 && dc.matches == 0);
    st = stats(s);
    CHECK(st.states == 4 && st.transitions == 3 && st.truncated);
    CHECK(st.max_depth_seen == 2);
    search_free(s);

    s = new_search(0, 1);
    dc = (drive_counts){ 0, 0, 0, 0, 0 };
    CHECK(start(s, 1, &q) == 0);
    CHECK(drive(s, &q, &dc) == REQ_DONE);
    st = stats(s);
    CHECK(st.states == 2 && st.transitions == 1 && st.truncated);
    search_free(s);

    /* A depth limit that is never reached does not truncate. */
    s = new_search(0, 5);
    dc = (drive_counts){ 0, 0, 0, 0, 0 };
    CHECK(start(s, 1, &q) == 0);
    CHECK(drive(s, &q, &dc) == REQ_DONE);
    st = stats(s);
    CHECK(st.states == 8 && !st.truncated);
    search_free(s);
}

/* (f) Links: abnormal exits cascade, normal ones only unlink. */
static void test_search_links(void)
{
    request q;

    /* 1 spawn_links 2 and spawns 3, waits; 2 exits abnormally: 1 dies. */
    search *s = new_search(0, 0);
    CHECK(start(s, 1, &q) == 0);
    effs f = { .n = 0 };
    eff_spawn(&f, search_fresh_pid(s, 0), 1, 2);
    eff_spawn(&f, search_fresh_pid(s, 0), 0, 3);
    CHECK(f.e[0].pid == 2 && f.e[1].pid == 3);
    CHECK(run_wait(s, 10, 0, &f, 1, 0, &q) == 0);
    const sys_state *top = search_top_state(s);
    CHECK(top != NULL && top->nprocs == 3);
    if (top != NULL && top->nprocs == 3) {
        CHECK(top->procs[0].nlinks == 1 && top->procs[0].links[0] == 2);
        CHECK(top->procs[1].nlinks == 1 && top->procs[1].links[0] == 1);
        CHECK(top->procs[2].nlinks == 0);
    }
    CHECK(q.kind == REQ_RUN && q.pid == 2);
    CHECK(run_exit(s, 0, NULL, 2, 1, &q) == 0);
    CHECK(q.kind == REQ_STOPPED);
    top = search_top_state(s);
    CHECK(top != NULL && top->nprocs == 1);
    if (top != NULL && top->nprocs == 1)
        CHECK(top->procs[0].pid == 3 && top->procs[0].nlinks == 0);
    search_free(s);

    /* A chain 1 - 2 - 3 plus an unlinked 4: 3 crashes, 1 to 3 go. */
    s = new_search(0, 0);
    CHECK(start(s, 1, &q) == 0);
    f.n = 0;
    eff_spawn(&f, search_fresh_pid(s, 0), 1, 2);
    CHECK(run_wait(s, 10, 0, &f, 1, 0, &q) == 0);
    CHECK(q.kind == REQ_RUN && q.pid == 2);
    f.n = 0;
    eff_spawn(&f, search_fresh_pid(s, 0), 1, 3);
    eff_spawn(&f, search_fresh_pid(s, 0), 0, 4);
    CHECK(f.e[0].pid == 3 && f.e[1].pid == 4);
    CHECK(run_wait(s, 11, 0, &f, 2, 0, &q) == 0);
    top = search_top_state(s);
    CHECK(top != NULL && top->nprocs == 4);
    if (top != NULL && top->nprocs == 4)
        CHECK(top->procs[1].nlinks == 2 && top->procs[1].links[0] == 1 &&
              top->procs[1].links[1] == 3);
    CHECK(q.kind == REQ_RUN && q.pid == 3);
    CHECK(run_exit(s, 0, NULL, 3, 1, &q) == 0 && q.kind == REQ_STOPPED);
    top = search_top_state(s);
    CHECK(top != NULL && top->nprocs == 1);
    if (top != NULL && top->nprocs == 1)
        CHECK(top->procs[0].pid == 4);
    CHECK(label_int(s, 1) == 1 && label_int(s, 2) == 2 &&
          label_int(s, 3) == 3);
    search_free(s);

    /* A normal exit only removes the link: the parent then deadlocks. */
    s = new_search(0, 0);
    CHECK(start(s, 1, &q) == 0);
    f.n = 0;
    eff_spawn(&f, search_fresh_pid(s, 0), 1, 2);
    CHECK(run_wait(s, 10, 0, &f, 1, 0, &q) == 0);
    CHECK(q.kind == REQ_RUN && q.pid == 2);
    CHECK(run_exit(s, 1, NULL, 2, 0, &q) == 0);
    CHECK(q.kind == REQ_DEADLOCK);
    top = search_top_state(s);
    CHECK(top != NULL && top->nprocs == 1);
    if (top != NULL && top->nprocs == 1)
        CHECK(top->procs[0].pid == 1 && top->procs[0].nlinks == 0);
    search_free(s);

    /* The parent itself crashes right after spawn_link: both go. */
    s = new_search(0, 0);
    CHECK(start(s, 1, &q) == 0);
    f.n = 0;
    eff_spawn(&f, search_fresh_pid(s, 0), 1, 2);
    CHECK(run_exit(s, 0, &f, 1, 0, &q) == 0);
    CHECK(q.kind == REQ_DONE);
    CHECK(stats(s).states == 2);
    search_free(s);
}

/* (g) Protocol errors and malformed answers. */
static void test_search_errors(void)
{
    request q;
    search *s = new_search(0, 0);

    /* Before start. */
    CHECK(search_answer_match(s, 1, &q) == -1 && q.kind == REQ_ERROR &&
          q.error != NULL);
    CHECK(run_exit(s, 1, NULL, 1, 0, &q) == -1 && q.kind == REQ_ERROR);
    /* A malformed initial call; then a good one still starts. */
    uint8_t badinit[] = { 131, 97 };
    term_in bi = { badinit, sizeof badinit, 0 };
    CHECK(search_start(s, &bi, 1, &q) == -1 && q.kind == REQ_ERROR);
    uint8_t port[] = { 131, 102, 100, 0, 1, 'n', 0, 0, 0, 1, 0 };
    term_in pt = { port, sizeof port, 0 };
    CHECK(search_start(s, &pt, 1, &q) == -1 && q.kind == REQ_ERROR);
    CHECK(start(s, 1, &q) == 0 && q.kind == REQ_RUN);

    /* A match answer while a run is outstanding. */
    CHECK(search_answer_match(s, 1, &q) == -1 && q.kind == REQ_ERROR);

    /* A malformed continuation, with a spawn_link already applied. */
    uint32_t child = search_fresh_pid(s, 0);
    CHECK(child == 2);
    effs f = { .n = 0 };
    eff_spawn(&f, child, 1, 2);
    uint8_t badcont[] = { 131, 104, 2, 97, 1 };
    run_result r = { .outcome = OUTCOME_WAIT, .cont = { badcont, 5 },
                     .effects = f.e, .neffects = f.n, .label = mklabel(1),
                     .label_len = 3 };
    CHECK(search_answer_run(s, &r, &q) == -1 && q.kind == REQ_ERROR);
    CHECK(r.label == NULL);                     /* freed by the search */

    /* A malformed message after a good spawn_link and a good send. */
    f.n = 0;
    eff_spawn(&f, child, 1, 2);
    eff_send(&f, 2, 5);
    uint8_t trailing[] = { 131, 97, 1, 1 };
    f.e[f.n] = (effect){ .kind = EFFECT_SEND, .pid = 2,
                         .term = { trailing, sizeof trailing } };
    f.n++;
    CHECK(run_exit(s, 1, &f, 2, 0, &q) == -1 && q.kind == REQ_ERROR);

    /* Spawning a pid that is alive (the running process itself). */
    f.n = 0;
    eff_spawn(&f, 1, 0, 2);
    CHECK(run_exit(s, 1, &f, 3, 0, &q) == -1 && q.kind == REQ_ERROR);
    /* Spawning the same child twice in one run. */
    f.n = 0;
    eff_spawn(&f, 2, 1, 2);
    eff_spawn(&f, 2, 1, 2);
    CHECK(run_exit(s, 1, &f, 4, 0, &q) == -1 && q.kind == REQ_ERROR);
    /* None of the failed answers changed the search. */
    search_stats st = stats(s);
    CHECK(st.states == 1 && st.transitions == 0);

    /* The search survived all of that and still answers correctly. */
    f.n = 0;
    eff_spawn(&f, 2, 0, 2);
    CHECK(run_wait(s, 10, 0, &f, 5, 0, &q) == 0);
    CHECK(q.kind == REQ_RUN && q.pid == 2);
    CHECK(search_answer_match(s, 0, &q) == -1 && q.kind == REQ_ERROR);
    /* A NULL label of length zero is accepted. */
    run_result r2 = { .outcome = OUTCOME_EXIT, .normal = 1, .label = NULL,
                      .label_len = 0 };
    CHECK(search_answer_run(s, &r2, &q) == 0 && q.kind == REQ_DEADLOCK);
    CHECK(label_int(s, 1) == 5);
    const uint8_t *l = (const uint8_t *)"x";
    size_t n = 99;
    CHECK(search_label(s, 2, &l, &n) == 0 && l == NULL && n == 0);
    st = stats(s);
    CHECK(st.states == 3 && st.transitions == 2);
    search_free(s);

    /* A malformed message in a receive answer, then the right one. */
    s = new_search(0, 0);
    prepare_mailbox(s, &q, 0);
    CHECK(search_answer_match(s, 1, &q) == 0 && q.kind == REQ_RUN &&
          q.run == RUN_RECEIVE);
    f.n = 0;
    uint8_t unknown[] = { 131, 200 };
    f.e[0] = (effect){ .kind = EFFECT_SEND, .pid = 1,
                       .term = { unknown, sizeof unknown } };
    f.n = 1;
    CHECK(run_exit(s, 1, &f, 9, 0, &q) == -1 && q.kind == REQ_ERROR);
    CHECK(run_exit(s, 1, NULL, 9, 0, &q) == 0 && q.kind == REQ_DONE);
    search_free(s);
}

/* INTEGER_EXT terms, for more distinct terms than small integers give. */
static void set_int32(uint8_t buf[6], uint32_t n)
{
    buf[0] = 131;
    buf[1] = 98;
    buf[2] = (uint8_t)(n >> 24);
    buf[3] = (uint8_t)(n >> 16);
    buf[4] = (uint8_t)(n >> 8);
    buf[5] = (uint8_t)n;
}

static long term_int32(search *s, part_id id)
{
    const part *p = part_store_get(search_store(s), id);
    if (p == NULL || p->len != 6 || p->data[0] != 131 || p->data[1] != 98)
        return -1;
    return ((long)p->data[2] << 24) | ((long)p->data[3] << 16) |
           ((long)p->data[4] << 8) | (long)p->data[5];
}

/* Growth inside the search: a long mailbox whose messages never match
** (the match memo grows), and a chain of timeouts deeper than the initial
** stack. */
static void test_search_growth(void)
{
    enum { NMSG = 1500, CHAIN = 700 };
    request q;
    search *s = new_search(0, 0);
    CHECK(start(s, 1, &q) == 0);
    effs f = { .n = 0 };
    eff_spawn(&f, search_fresh_pid(s, 0), 0, 2);
    CHECK(run_wait(s, 10, 0, &f, 1, 0, &q) == 0 && q.pid == 2);
    effect *many = xmalloc(NMSG * sizeof *many);
    uint8_t (*bufs)[6] = xmalloc(NMSG * sizeof *bufs);
    for (uint32_t i = 0; i < NMSG; i++) {
        set_int32(bufs[i], 1000 + i);
        many[i] = (effect){ .kind = EFFECT_SEND, .pid = 1,
                            .term = { bufs[i], 6 } };
    }
    run_result r = { .outcome = OUTCOME_EXIT, .normal = 1, .effects = many,
                     .neffects = NMSG, .label = mklabel(2), .label_len = 3 };
    CHECK(search_answer_run(s, &r, &q) == 0);
    free(many);
    free(bufs);
    uint32_t asked = 0;
    int in_order = 1;
    while (q.kind == REQ_MATCH) {
        if (term_int32(s, q.msg) != 1000 + (long)asked)
            in_order = 0;
        asked++;
        if (search_answer_match(s, 0, &q) != 0)
            break;
    }
    CHECK(q.kind == REQ_DEADLOCK);
    CHECK(asked == NMSG && in_order);
    CHECK(stats(s).memo_entries == NMSG);
    const sys_state *top = search_top_state(s);
    CHECK(top != NULL && top->nprocs == 1 &&
          mailbox_length(search_store(s), top->procs[0].mailbox) == NMSG);
    search_free(s);

    /* start -> wait(0) -> timeout -> wait(1) -> ... -> wait(CHAIN) -> exit */
    s = new_search(0, 0);
    CHECK(start(s, 1, &q) == 0);
    uint32_t k = 0;
    uint8_t c[6];
    int chain_ok = 1;
    for (;;) {
        if (q.kind != REQ_RUN) {
            chain_ok = 0;
            break;
        }
        if (k > 0 && (q.run != RUN_TIMEOUT || term_int32(s, q.cont) != k - 1))
            chain_ok = 0;
        run_result w = { .outcome = k < CHAIN ? OUTCOME_WAIT : OUTCOME_EXIT,
                         .has_timeout = 1, .normal = 1,
                         .label = mklabel((uint8_t)k), .label_len = 3 };
        set_int32(c, k);
        w.cont = (term_in){ c, 6, 0 };
        if (search_answer_run(s, &w, &q) != 0) {
            chain_ok = 0;
            break;
        }
        k++;
        if (k == CHAIN)
            CHECK(search_stack_depth(s) == CHAIN + 1);
        if (k > CHAIN)
            break;
    }
    CHECK(chain_ok);
    /* Backtracking the chain is work done in C: it yields on the way. */
    unsigned yields = 0;
    while (q.kind == REQ_YIELD && search_resume(s, &q) == 0)
        yields++;
    CHECK(yields == (CHAIN + 1) / SEARCH_WORK_BUDGET);
    CHECK(q.kind == REQ_DONE);
    search_stats st = stats(s);
    CHECK(st.states == CHAIN + 2 && st.transitions == CHAIN + 1);
    CHECK(st.max_depth_seen == CHAIN + 1 && st.depth == 0);
    search_free(s);

    /* The same chain, stopped at its end: the trace holds every label. */
    s = new_search(0, 0);
    CHECK(start(s, 1, &q) == 0);
    int answers_ok = 1;
    for (k = 0; k < CHAIN && q.kind == REQ_RUN; k++) {
        set_int32(c, k);
        run_result w = { .outcome = OUTCOME_WAIT, .has_timeout = 1,
                         .cont = { c, 6 }, .label = mklabel((uint8_t)k),
                         .label_len = 3, .stop = k == CHAIN - 1 };
        answers_ok &= search_answer_run(s, &w, &q) == 0;
    }
    CHECK(answers_ok && k == CHAIN);
    CHECK(q.kind == REQ_STOPPED && search_stack_depth(s) == CHAIN + 1);
    int labels_ok = 1;
    for (size_t i = 1; i <= CHAIN; i++)
        labels_ok &= label_int(s, i) == (int)((i - 1) & 0xff);
    CHECK(labels_ok);
    search_free(s);
}

/* Options: deadlock checking off, the initial table size, and pids with
** huge numbers in terms. */
static void test_search_options(void)
{
    /* Without deadlock checking a stuck state just ends its path. */
    search *s = new_search_cfg(0, 0, 0, 0);
    request q;
    CHECK(start(s, 1, &q) == 0 && q.kind == REQ_RUN);
    CHECK(search_fresh_pid(s, 0) == 2);
    effs f = { .n = 0 };
    eff_spawn(&f, 2, 0, 2);
    CHECK(run_wait(s, 10, 0, &f, 60, 0, &q) == 0);
    CHECK(q.kind == REQ_RUN && q.pid == 2);
    CHECK(run_exit(s, 1, NULL, 61, 0, &q) == 0);
    CHECK(q.kind == REQ_DONE);
    search_stats st = stats(s);
    CHECK(st.states == 3 && st.transitions == 2 && st.depth == 0);
    search_free(s);

    /* The same model gives the same counts whatever the initial table. */
    size_t sizes[] = { 1, 16, 1000, (size_t)1 << 20 };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        s = new_search_cfg(0, 0, 1, sizes[i]);
        drive_counts dc = { 0, 0, 0, 0, 0 };
        CHECK(start(s, 1, &q) == 0);
        CHECK(drive(s, &q, &dc) == REQ_DONE);
        st = stats(s);
        CHECK(st.states == 8 && st.transitions == 10 && dc.errors == 0);
        CHECK(st.used_bytes > 0 && st.used_bytes <= st.bytes);
        search_free(s);
    }

    /* A tiny index grows and assigns the same ids as the default one. */
    part_store *small = part_store_new_sized(1);
    part_store *big = part_store_new();
    CHECK(small != NULL && big != NULL);
    int ok = 1;
    for (uint32_t k = 0; small && big && k < 50000; k++) {
        int n1, n2;
        part_id a = part_store_intern(small, PART_TERM, &k, sizeof k, NULL, 0, &n1);
        part_id b = part_store_intern(big, PART_TERM, &k, sizeof k, NULL, 0, &n2);
        ok &= a == b && a != 0 && n1 && n2;
    }
    CHECK(ok);
    part_store_free(small);
    part_store_free(big);

    /* A term naming pid 4000000000 does not size the free-pid bitmap. */
    s = new_search(0, 0);
    CHECK(start(s, 1, &q) == 0 && q.kind == REQ_RUN);
    etfb e;
    bstart(&e);
    bpid(&e, NODE, 4000000000u, 0, CREATION);
    uint8_t *msg = xmalloc(e.n);
    memcpy(msg, e.b, e.n);
    effs g = { .n = 0 };
    g.e[0] = (effect){ .kind = EFFECT_SEND, .pid = 1, .term = { msg, e.n } };
    g.n = 1;
    CHECK(run_wait(s, 10, 0, &g, 1, 0, &q) == 0);
    free(msg);
    CHECK(q.kind == REQ_MATCH);
    CHECK(search_answer_match(s, 1, &q) == 0 && q.kind == REQ_RUN);
    CHECK(search_fresh_pid(s, 0) == 2);
    search_free(s);
}

#define REF_OF(creator, n) ((uint32_t)(creator) << ETF_REF_COUNTER_BITS | (n))

/* Monitors: 'DOWN' on death, noproc for a dead target, demonitor with
** flush, and least-fresh refs. */
static void test_search_monitors(void)
{
    search *s = new_search(0, 0);
    request q;
    CHECK(start(s, 1, &q) == 0 && q.kind == REQ_RUN);
    CHECK(search_fresh_pid(s, 0) == 2);
    /* Pid 1's refs are numbered in its own region. */
    CHECK(search_fresh_ref(s, 0) == REF_OF(1, 1));
    CHECK(search_fresh_ref(s, 0) == REF_OF(1, 2));
    effs f = { .n = 0 };
    eff_spawn(&f, 2, 0, 2);
    /* Refs of pid 2's region, to see below that held ones are skipped. */
    f.e[f.n++] = (effect){ .kind = EFFECT_MONITOR, .pid = 2, .ref = REF_OF(2, 1) };
    f.e[f.n++] = (effect){ .kind = EFFECT_MONITOR, .pid = 9, .ref = REF_OF(2, 2) };  /* dead */
    CHECK(run_wait(s, 10, 0, &f, 1, 0, &q) == 0);
    /* Pid 1 has the noproc 'DOWN' for ref 2: a match question first. */
    CHECK(q.kind == REQ_MATCH && q.pid == 1);
    const part *down = part_store_get(search_store(s), q.msg);
    CHECK(down != NULL && down->len > 3 && down->data[1] == 104 && down->data[2] == 5);
    CHECK(down != NULL && down->npids == 2 && down->pids[0] == 9 &&
          down->pids[1] == (REF_OF(2, 2) | ETF_REF_TAG));
    const sys_state *top = search_top_state(s);
    CHECK(top != NULL && top->nprocs == 2);
    if (top != NULL && top->nprocs == 2) {
        CHECK(top->procs[0].mons.n == 1 && top->procs[0].mons.m[0].ref == REF_OF(2, 1) &&
              top->procs[0].mons.m[0].pid == 2);
        CHECK(top->procs[1].monby.n == 1 && top->procs[1].monby.m[0].pid == 1);
    }
    /* Refuse the match: pid 2 runs and dies; pid 1 gets its 'DOWN'. */
    CHECK(search_answer_match(s, 0, &q) == 0 && q.kind == REQ_RUN && q.pid == 2);
    /* Its ref 1 is held by the monitor and ref 2 by the message. */
    CHECK(search_fresh_ref(s, 0) == REF_OF(2, 3));
    CHECK(run_exit(s, 0, NULL, 2, 0, &q) == 0);
    top = search_top_state(s);
    CHECK(top != NULL && top->nprocs == 1);
    if (top != NULL && top->nprocs == 1) {
        CHECK(top->procs[0].mons.n == 0);
        CHECK(mailbox_length(search_store(s), top->procs[0].mailbox) == 2);
    }
    search_free(s);

    /* demonitor with flush removes the monitor and pending 'DOWN's. */
    s = new_search(0, 0);
    CHECK(start(s, 1, &q) == 0);
    effs g = { .n = 0 };
    g.e[g.n++] = (effect){ .kind = EFFECT_MONITOR, .pid = 5, .ref = 4 };  /* dead */
    g.e[g.n++] = (effect){ .kind = EFFECT_DEMONITOR, .ref = 4, .link = 1 };
    CHECK(run_wait(s, 10, 0, &g, 1, 0, &q) == 0);
    CHECK(q.kind == REQ_DEADLOCK);      /* nothing in the mailbox */
    search_free(s);
}

/* PF_MON_ARMED, the mark of rule 11's guard: set by a monitor of a live
** process (not by a spawn_monitor's), cleared by a send to the watched
** process when every monitor watches it, and when no monitor is left. */
static void test_search_arming(void)
{
    request q;
    const sys_state *top;
    /* Spawn 2, monitor it: armed; 2 ends: its 'DOWN' leaves no monitor. */
    search *s = new_search(0, 0);
    CHECK(start(s, 1, &q) == 0 && q.kind == REQ_RUN);
    effs f = { .n = 0 };
    eff_spawn(&f, 2, 0, 2);
    f.e[f.n++] = (effect){ .kind = EFFECT_MONITOR, .pid = 2, .ref = REF_OF(1, 1) };
    CHECK(run_wait(s, 10, 0, &f, 1, 0, &q) == 0 && q.kind == REQ_RUN && q.pid == 2);
    top = search_top_state(s);
    CHECK(top != NULL && top->nprocs == 2 && (top->procs[0].flags & PF_MON_ARMED));
    CHECK(run_exit(s, 0, NULL, 2, 0, &q) == 0);
    top = search_top_state(s);
    CHECK(top != NULL && top->nprocs == 1 && !(top->procs[0].flags & PF_MON_ARMED));
    search_free(s);

    /* Spawn 2 and 3, monitor both, send to 2: still armed (3 is watched
    ** too); monitor 2 only and send to it: disarmed. */
    for (int both = 1; both >= 0; both--) {
        s = new_search(0, 0);
        CHECK(start(s, 1, &q) == 0);
        effs g = { .n = 0 };
        eff_spawn(&g, 2, 0, 2);
        eff_spawn(&g, 3, 0, 2);
        g.e[g.n++] = (effect){ .kind = EFFECT_MONITOR, .pid = 2, .ref = REF_OF(1, 1) };
        if (both)
            g.e[g.n++] = (effect){ .kind = EFFECT_MONITOR, .pid = 3, .ref = REF_OF(1, 2) };
        set_int(g.t[g.n], 7);
        g.e[g.n] = (effect){ .kind = EFFECT_SEND, .pid = 2, .term = { g.t[g.n], 3 } };
        g.n++;
        CHECK(run_wait(s, 10, 0, &g, 1, 0, &q) == 0);
        top = search_top_state(s);
        CHECK(top != NULL && top->nprocs == 3 &&
              ((top->procs[0].flags & PF_MON_ARMED) != 0) == both);
        search_free(s);
    }

    /* spawn_monitor: the child cannot have died before; not armed. */
    s = new_search(0, 0);
    CHECK(start(s, 1, &q) == 0);
    CHECK(search_fresh_pid(s, 0) == 2);     /* this step's child */
    effs h = { .n = 0 };
    eff_spawn(&h, 2, 0, 2);
    h.e[h.n++] = (effect){ .kind = EFFECT_MONITOR, .pid = 2, .ref = REF_OF(1, 1), .link = 1 };
    CHECK(run_wait(s, 10, 0, &h, 1, 0, &q) == 0);
    top = search_top_state(s);
    CHECK(top != NULL && top->nprocs == 2 && top->procs[0].mons.n == 1 &&
          !(top->procs[0].flags & PF_MON_ARMED));
    search_free(s);
}

/* ------------------------------------------------------------------ */
/* visited: the lossy tables                                          */

static void test_visited_hash_compact(void)
{
    CHECK(visited_new(VISITED_EXACT, 0) == NULL);
    CHECK(visited_new((enum visited_mode)7, 0) == NULL);
    visited *v = visited_new(VISITED_HASH_COMPACT, 0);
    CHECK(v != NULL);
    if (v == NULL)
        return;
    CHECK(visited_get_mode(v) == VISITED_HASH_COMPACT);
    CHECK(visited_capacity(v) == 2048 && visited_count(v) == 0);
    CHECK(visited_omission_probability(v) == 0.0);
    /* Insert and look up. */
    CHECK(visited_contains_fingerprint(v, 5) == 0);
    CHECK(visited_insert_fingerprint(v, 5) == 1);
    CHECK(visited_insert_fingerprint(v, 5) == 0);
    CHECK(visited_contains_fingerprint(v, 5) == 1);
    CHECK(visited_contains_fingerprint(v, 6) == 0);
    /* Same slot (5 + 2048), different fingerprint: both kept. */
    CHECK(visited_insert_fingerprint(v, 5 + 2048) == 1);
    CHECK(visited_contains_fingerprint(v, 5) == 1 &&
          visited_contains_fingerprint(v, 5 + 2048) == 1);
    /* The zero fingerprint is stored as 1 (0 marks empty slots). */
    CHECK(visited_contains_fingerprint(v, 0) == 0);
    CHECK(visited_insert_fingerprint(v, 0) == 1);
    CHECK(visited_contains_fingerprint(v, 0) == 1);
    CHECK(visited_contains_fingerprint(v, 1) == 1);
    CHECK(visited_insert_fingerprint(v, 1) == 0);
    CHECK(visited_insert_fingerprint(v, 0) == 0);
    CHECK(visited_count(v) == 3);
    /* The bitstate calls are refused. */
    CHECK(visited_insert_hashes(v, 1, 2) == -1);
    CHECK(visited_contains_hashes(v, 1, 2) == -1);
    /* Whole root vectors: equal bytes are one state. */
    uint32_t a[3] = { 0, 7, 9 }, b[3] = { 0, 7, 10 };
    CHECK(visited_contains(v, a, sizeof a) == 0);
    CHECK(visited_insert(v, a, sizeof a) == 1);
    CHECK(visited_insert(v, b, sizeof b) == 1);
    CHECK(visited_insert(v, a, sizeof a) == 0);
    CHECK(visited_contains(v, b, sizeof b) == 1);
    CHECK(visited_count(v) == 5);
    double p5 = visited_omission_probability(v);
    CHECK(p5 > 0.0 && p5 < 1e-15);
    visited_free(v);
    visited_free(NULL);

    /* Growth: from 16 slots, by doubling, at load 1/2; every fingerprint
    ** stays found (many share their home slot: multiples of 16). */
    v = visited_new(VISITED_HASH_COMPACT, 1);
    CHECK(v != NULL && visited_capacity(v) == 16);
    if (v == NULL)
        return;
    size_t bytes0 = visited_bytes(v);
    int ok = 1, load_ok = 1;
    uint64_t cap = visited_capacity(v);
    for (uint64_t k = 1; k <= 5000; k++) {
        ok &= visited_insert_fingerprint(v, k * 16) == 1;
        load_ok &= visited_count(v) * 2 <= visited_capacity(v);
        uint64_t c = visited_capacity(v);
        load_ok &= c == cap || c == 2 * cap;
        cap = c;
    }
    CHECK(ok && load_ok);
    CHECK(visited_count(v) == 5000 && visited_capacity(v) == 16384);
    CHECK(visited_bytes(v) > bytes0);
    visited_free(v);

    /* Growth is incremental: one insertion starts it (the old table kept,
    ** counted in the bytes), the following ones each move a few slots, and
    ** it ends within capacity/16 insertions (8 old slots each), long
    ** before the next doubling.  Meanwhile every fingerprint inserted so
    ** far is found, in the old table or the new, and none other. */
    v = visited_new(VISITED_HASH_COMPACT, 1);
    CHECK(v != NULL && !visited_growing(v));
    if (v == NULL)
        return;
    int incr_ok = 1, found_ok = 1, growths = 0;
    uint64_t grow_started = 0, grow_cap = 0;
    for (uint64_t k = 1; k <= 20000; k++) {
        uint64_t before = visited_capacity(v);
        incr_ok &= visited_insert_fingerprint(v, k * 16) == 1;
        if (visited_capacity(v) != before) {
            growths++;
            incr_ok &= visited_growing(v) == 1 &&
                       visited_bytes(v) >= (before * 3) * sizeof(uint64_t);
            grow_started = k;
            grow_cap = before;
        } else if (!visited_growing(v) && grow_cap != 0) {
            /* Ended: the old table's slots moved 8 per insertion. */
            incr_ok &= k - grow_started <= grow_cap / 8 + 1;
            grow_cap = 0;
        }
        found_ok &= visited_contains_fingerprint(v, k * 16) == 1 &&
                    visited_contains_fingerprint(v, (k / 2 + 1) * 16) == 1 &&
                    visited_contains_fingerprint(v, k * 16 + 8) == 0 &&
                    visited_contains_fingerprint(v, (k + 1) * 16) == 0;
    }
    CHECK(incr_ok && found_ok && growths >= 10);
    for (uint64_t k = 1; k <= 20000 && found_ok; k++)
        found_ok &= visited_contains_fingerprint(v, k * 16) == 1;
    CHECK(found_ok && visited_insert_fingerprint(v, 16) == 0 && visited_count(v) == 20000);
    visited_free(v);
    v = visited_new(VISITED_HASH_COMPACT, 1);
    if (v == NULL)
        return;
    for (uint64_t k = 1; k <= 5000; k++)
        visited_insert_fingerprint(v, k * 16);
    ok = 1;
    for (uint64_t k = 1; k <= 5000; k++) {
        ok &= visited_contains_fingerprint(v, k * 16) == 1;
        ok &= visited_insert_fingerprint(v, k * 16) == 0;
        ok &= visited_contains_fingerprint(v, k * 16 + 1) == 0;
    }
    CHECK(ok);
    CHECK(visited_count(v) == 5000);
    /* n^2 / 2^65, capped at 1. */
    double p = visited_omission_probability(v);
    CHECK(p > 6.7e-13 && p < 6.8e-13);
    visited_free(v);
}

static void test_visited_bitstate(void)
{
    /* Sizes: rounded up to a power of two, at least 2^10. */
    visited *v = visited_new(VISITED_BITSTATE, 1);
    CHECK(v != NULL && visited_capacity(v) == 1024);
    visited_free(v);
    v = visited_new(VISITED_BITSTATE, 3000);
    CHECK(v != NULL && visited_capacity(v) == 4096);
    CHECK(v != NULL && visited_bytes(v) >= 4096 / 8);
    visited_free(v);

    v = visited_new(VISITED_BITSTATE, 1024);
    CHECK(v != NULL);
    if (v == NULL)
        return;
    CHECK(visited_get_mode(v) == VISITED_BITSTATE);
    CHECK(visited_insert_fingerprint(v, 1) == -1);
    CHECK(visited_contains_fingerprint(v, 1) == -1);
    size_t bytes = visited_bytes(v);
    /* (0, 2): h2 is made odd, so bits 0, 3, 6. */
    CHECK(visited_contains_hashes(v, 0, 2) == 0);
    CHECK(visited_insert_hashes(v, 0, 2) == 1);
    CHECK(visited_insert_hashes(v, 0, 2) == 0);
    CHECK(visited_contains_hashes(v, 0, 2) == 1);
    CHECK(visited_contains_hashes(v, 0, 3) == 1);       /* same bits */
    CHECK(visited_contains_hashes(v, 100, 2) == 0);     /* 100, 103, 106 */
    /* A state whose bits are all set by others is wrongly seen: 3 and 6
    ** are set, and 0 + 3 + 3 = 6. (3, 3): 3, 6, 9; (9, 0): 9, 10, 11. */
    CHECK(visited_insert_hashes(v, 3, 3) == 1);
    CHECK(visited_contains_hashes(v, 6, 0) == 0);       /* 6, 7, 8 */
    CHECK(visited_insert_hashes(v, 7, 0) == 1);         /* 7, 8, 9 */
    CHECK(visited_insert_hashes(v, 6, 0) == 0);         /* an omission */
    CHECK(visited_count(v) == 3);
    double p_early = visited_omission_probability(v);
    CHECK(p_early > 1e-6 && p_early < 1e-5);     /* 1 - e^{-3 (1 - e^{-9/1024})^3} */
    /* Lost so far: f/(1-f) with f = fill^3 at the stores, fills 0, 3/1024
    ** and 4/1024 (bit 6 was set already). */
    double lost_early = visited_lost_estimate(v);
    CHECK(lost_early > 8.4e-8 && lost_early < 8.6e-8);
    CHECK(visited_coverage_estimate(v) > 0.999999);
    /* Saturation: fill every bit; then every state is taken as seen and
    ** the table does not grow. */
    for (uint64_t h = 0; h < 1024; h++)
        CHECK(visited_insert_hashes(v, h, 0) >= 0);
    uint64_t n = visited_count(v);
    CHECK(n < 1024 + 3);
    int all_seen = 1;
    for (uint64_t h = 0; h < 5000; h++) {
        all_seen &= visited_contains_hashes(v, h * 0x9e3779b97f4a7c15ULL, h) == 1;
        all_seen &= visited_insert_hashes(v, h * 0x9e3779b97f4a7c15ULL, h) == 0;
    }
    uint32_t root[2] = { 0, 42 };
    CHECK(visited_insert(v, root, sizeof root) == 0);
    CHECK(all_seen);
    CHECK(visited_count(v) == n);
    CHECK(visited_bytes(v) == bytes && visited_capacity(v) == 1024);
    double p_full = visited_omission_probability(v);
    CHECK(p_full > 0.99 && p_full <= 1.0);
    /* Where the probability saturates the expected loss still grows with
    ** the fill. */
    CHECK(visited_lost_estimate(v) > 100.0);
    CHECK(visited_coverage_estimate(v) < 0.9);
    visited_free(v);

    /* Root vectors through the 128-bit hash: a large table keeps 1000
    ** distinct states apart (a false match among them would be a 1e-10
    ** event for this fixed seed: deterministic either way). */
    v = visited_new(VISITED_BITSTATE, (uint64_t)1 << 20);
    CHECK(v != NULL);
    if (v == NULL)
        return;
    int ok = 1;
    for (uint32_t k = 0; k < 1000; k++) {
        uint32_t r[2] = { 0, k };
        ok &= visited_insert(v, r, sizeof r) == 1;
    }
    for (uint32_t k = 0; k < 1000; k++) {
        uint32_t r[2] = { 0, k };
        ok &= visited_contains(v, r, sizeof r) == 1;
        ok &= visited_insert(v, r, sizeof r) == 0;
    }
    CHECK(ok && visited_count(v) == 1000);
    visited_free(v);
}

/* The search with each lossy table: the same counts on a small model,
** roots kept in frames (the deadlock path decodes from them), and the
** orders that need state ids refused. */
static search *new_search_table(int mode, uint64_t bits, int bfs, int expand_only)
{
    search_config cfg = { .node = NODE, .nodelen = strlen(NODE),
                          .creation = CREATION, .check_deadlock = 1,
                          .table_mode = mode, .bitstate_bits = bits,
                          .breadth_first = bfs, .expand_only = expand_only };
    return search_new(&cfg);
}

static void test_search_lossy(void)
{
    CHECK(new_search_table(VISITED_HASH_COMPACT, 0, 1, 0) == NULL);
    CHECK(new_search_table(VISITED_HASH_COMPACT, 0, 0, 1) == NULL);
    CHECK(new_search_table(VISITED_BITSTATE, 1 << 12, 1, 0) == NULL);
    CHECK(new_search_table(VISITED_BITSTATE, 1 << 12, 0, 1) == NULL);
    CHECK(new_search_table(3, 0, 0, 0) == NULL);
    int modes[] = { VISITED_EXACT, VISITED_HASH_COMPACT, VISITED_BITSTATE };
    search_stats exact = { 0 };
    for (int i = 0; i < 3; i++) {
        search *s = new_search_table(modes[i], 1 << 16, 0, 0);
        CHECK(s != NULL);
        if (s == NULL)
            continue;
        request q;
        drive_counts dc = { 0, 0, 0, 0, 0 };
        CHECK(start(s, 1, &q) == 0);
        CHECK(drive(s, &q, &dc) == REQ_DONE && dc.errors == 0);
        search_stats st = stats(s);
        CHECK(st.states == 8 && st.transitions == 10 && st.max_depth_seen == 4);
        CHECK(st.table_mode == modes[i] && st.table_bytes > 0);
        CHECK(st.used_bytes > st.table_bytes && st.used_bytes <= st.bytes);
        if (i == 0) {
            exact = st;
            CHECK(st.omission_probability == 0.0);
        } else {
            /* Fewer parts: the roots are not interned. */
            CHECK(st.parts == exact.parts - 8);
            CHECK(st.omission_probability > 0.0 && st.omission_probability < 1e-6);
        }
        search_free(s);

        /* A deadlock: the stack is the trace, the top state decodes. */
        s = new_search_table(modes[i], 1 << 16, 0, 0);
        CHECK(s != NULL);
        if (s == NULL)
            continue;
        CHECK(start(s, 1, &q) == 0 && q.kind == REQ_RUN && q.pid == 1);
        CHECK(search_fresh_pid(s, 0) == 2);
        effs f = { .n = 0 };
        eff_spawn(&f, 2, 0, 2);
        CHECK(run_wait(s, 10, 0, &f, 60, 0, &q) == 0);
        CHECK(q.kind == REQ_RUN && q.run == RUN_START && q.pid == 2);
        const sys_state *mid = search_top_state(s);
        CHECK(mid != NULL && mid->nprocs == 2);
        CHECK(run_exit(s, 1, NULL, 61, 0, &q) == 0);
        CHECK(q.kind == REQ_DEADLOCK);
        CHECK(search_stack_depth(s) == 3);
        CHECK(label_int(s, 1) == 60 && label_int(s, 2) == 61);
        const sys_state *top = search_top_state(s);
        CHECK(top != NULL && top->nprocs == 1);
        if (top != NULL && top->nprocs == 1)
            CHECK(top->procs[0].pid == 1 && top->procs[0].status == PROC_WAITING);
        search_free(s);
    }
}

/* Appends within a transition wait in the state and are interned once;
** the result equals appending one by one (same part ids: canonical). */
static void test_pending_appends(void)
{
    part_store *ps = part_store_new();
    CHECK(ps != NULL);
    if (ps == NULL)
        return;
    int fresh;
    part_id empty = part_store_intern(ps, PART_MAILBOX, "", 0, NULL, 0, &fresh);
    part_id c1 = part_store_intern(ps, PART_TERM, "\x83\x61\x01", 3, NULL, 0, &fresh);
    part_id c2 = part_store_intern(ps, PART_TERM, "\x83\x61\x02", 3, NULL, 0, &fresh);
    part_id m1 = mailbox_append(ps, empty, c1);
    part_id m12 = mailbox_append(ps, m1, c2);
    part_id m121 = mailbox_append(ps, m12, c1);
    sys_state s = { 0 };
    proc a = mkproc(1, PROC_WAITING, c1, m1), b = mkproc(2, PROC_WAITING, c1, empty),
         c = mkproc(3, PROC_WAITING, c1, empty);
    CHECK(sys_state_insert(&s, &a) >= 0 && sys_state_insert(&s, &b) >= 0 &&
          sys_state_insert(&s, &c) >= 0);
    size_t parts = part_store_count(ps);
    /* 1 gets c2 then c1 (after its c1); 2 gets c1; 3 gets c2 and dies. */
    CHECK(sys_state_append(&s, 0, c2) == 0 && sys_state_append(&s, 1, c1) == 0 &&
          sys_state_append(&s, 0, c1) == 0 && sys_state_append(&s, 2, c2) == 0);
    CHECK(sys_state_append(&s, 0, 0) == -1);
    CHECK(s.procs[0].mailbox == m1);              /* nothing interned yet */
    CHECK(part_store_count(ps) == parts);
    int is_new;
    CHECK(sys_state_encode(ps, &s, &is_new) == 0);      /* refused while pending */
    sys_state cp;
    CHECK(sys_state_copy(&cp, &s) == -1);
    sys_state_remove(&s, 2);
    CHECK(s.npend == 2);
    /* Channels: a signal enqueued now, another after, both in one vector. */
    part_id g1 = signal_intern(ps, SIG_MSG, c1, 0, 0), g2 = signal_intern(ps, SIG_MSG, c2, 0, 0);
    CHECK(sys_state_enqueue(ps, &s, 1, 2, 0, g1) == 0 && sys_state_enqueue(ps, &s, 1, 2, 0, g2) == 0);
    CHECK(s.nchans == 1 && mailbox_length(ps, s.chans[0].queue) == 0);
    parts = part_store_count(ps);
    CHECK(sys_state_flush(ps, &s) == 0 && s.npend == 0);
    CHECK(s.procs[0].mailbox == m121);            /* hash-consed: the same id */
    CHECK(mailbox_length(ps, s.procs[1].mailbox) == 1 &&
          mailbox_at(ps, s.procs[1].mailbox, 0) == c1);
    CHECK(mailbox_length(ps, s.chans[0].queue) == 2 &&
          mailbox_at(ps, s.chans[0].queue, 0) == g1 && mailbox_at(ps, s.chans[0].queue, 1) == g2);
    CHECK(part_store_count(ps) == parts + 1);     /* the queue; [c1] is m1 */
    /* Dequeue flushes first; a removed channel drops what was pending. */
    CHECK(sys_state_enqueue(ps, &s, 1, 2, 0, g1) == 0);
    CHECK(sys_state_dequeue(ps, &s, 0) == 0 && s.npend == 0);
    CHECK(mailbox_length(ps, s.chans[0].queue) == 2 &&
          mailbox_at(ps, s.chans[0].queue, 0) == g2);
    CHECK(sys_state_enqueue(ps, &s, 1, 2, 0, g2) == 0);
    sys_state_remove_channel(&s, 0);
    CHECK(s.npend == 0 && s.nchans == 0);
    /* Envelopes are not plain signals, and back. */
    part_id env = envelope_intern(ps, 1, 2, 0, g1);
    uint32_t w[4];
    CHECK(env != 0 && signal_get(ps, env, w) == -1 && envelope_get(ps, g1, w) == -1);
    CHECK(envelope_get(ps, env, w) == 0 && w[0] == 1 && w[1] == 2 && w[2] == 0 && w[3] == g1);
    CHECK(envelope_intern(ps, 1, 2, 0, 0) == 0);
    CHECK(sys_state_append(&s, 0, c2) == 0);
    sys_state_clear(&s);                          /* frees what is pending */
    part_store_free(ps);
}

/* Deliveries are computed in C without a request; a search whose
** deliveries alone outlast SEARCH_WORK_BUDGET yields (REQ_YIELD) instead
** of running them all in one call, and resumes where it stopped. */
static void test_search_yield(void)
{
    enum { NSENDS = 200 };
    search_config cfg = { .node = NODE, .nodelen = strlen(NODE),
                          .creation = CREATION, .check_deadlock = 0,
                          .delivery_ether = 1 };
    search *s = search_new(&cfg);
    CHECK(s != NULL);
    if (s == NULL)
        return;
    request q;
    CHECK(start(s, 1, &q) == 0 && q.kind == REQ_RUN && q.pid == 1);
    /* 1 spawns 2 and waits in 10 (matches nothing but 30). */
    effs f = { .n = 0 };
    eff_spawn(&f, 2, 0, 20);
    CHECK(run_wait(s, 10, 0, &f, 1, 0, &q) == 0);
    CHECK(q.kind == REQ_RUN && q.run == RUN_START && q.pid == 2);
    /* 2 sends 31 NSENDS times to 1 and exits: NSENDS deliveries follow,
    ** each a state of its own, with one match question (the memo answers
    ** the others). */
    effect *e = xmalloc(NSENDS * sizeof *e);
    uint8_t msg[NSENDS][3];
    for (int k = 0; k < NSENDS; k++) {
        set_int(msg[k], 31);
        e[k] = (effect){ .kind = EFFECT_SEND, .pid = 1, .term = { msg[k], 3 } };
    }
    run_result r = { .outcome = OUTCOME_EXIT, .normal = 1, .effects = e,
                     .neffects = NSENDS, .label = mklabel(2), .label_len = 3 };
    CHECK(search_answer_run(s, &r, &q) == 0);
    free(e);
    unsigned yields = 0, matches = 0, other = 0;
    while (q.kind == REQ_YIELD || q.kind == REQ_MATCH) {
        if (q.kind == REQ_YIELD) {
            yields++;
            CHECK(search_answer_match(s, 0, &q) == -1 && q.kind == REQ_ERROR);
            q.kind = REQ_YIELD;
            if (search_resume(s, &q) != 0)
                other++;
        } else {
            matches++;
            CHECK(search_resume(s, &q) == -1 && q.kind == REQ_ERROR);
            q.kind = REQ_MATCH;
            if (search_answer_match(s, 0, &q) != 0)
                other++;
        }
    }
    CHECK(other == 0 && matches == 1);
    CHECK(yields >= NSENDS / SEARCH_WORK_BUDGET && yields <= 2 * NSENDS / SEARCH_WORK_BUDGET + 2);
    CHECK(q.kind == REQ_DONE);
    search_stats st = stats(s);
    CHECK(st.states == 3 + NSENDS && st.transitions == 2 + NSENDS);
    search_free(s);
}

/* The step cache by itself: entries under keys, alternatives in order,
** eviction by count (CLOCK: a used entry survives one sweep) and by bytes,
** and everything freed (ASan). */
static void test_step_cache_store(void)
{
    step_cache *c = step_cache_new(4, (size_t)1 << 20);
    CHECK(c != NULL);
    if (c == NULL)
        return;
    uint8_t t[3], lbl[3];
    set_int(t, 7);
    set_int(lbl, 9);
    effect e = { .kind = EFFECT_SEND, .pid = 2, .term = { t, 3, 0 } };
    static const uint8_t desc[] = { 1, 0, 1 };
    run_result r = { .outcome = OUTCOME_WAIT, .cont = { t, 3, 5 }, .effects = &e,
                     .neffects = 1, .label = lbl, .label_len = 3, .payload = desc,
                     .payload_len = sizeof desc };
    step_log log;
    memset(&log, 0, sizeof log);
    step_read rd = { .kind = READ_WHEREIS, .a = 0, .ans = { 1, 3 } };
    step_log_add(&log, &rd, (const uint8_t *)"abc", 3);
    CHECK(log.n == 1 && log.r[0].name_len == 3 && !log.poisoned);
    step_key k[6];
    for (uint32_t i = 0; i < 6; i++)
        k[i] = (step_key){ .pid = i + 1, .run = RUN_START, .cont = 10 + i };
    CHECK(step_cache_find(c, &k[0]) == NULL);
    CHECK(step_cache_add(c, &k[0], &log, &r) == 0);
    step_entry *en = step_cache_find(c, &k[0]);
    CHECK(en != NULL && en->nalts == 1);
    if (en != NULL && en->alts != NULL) {
        step_alt *a = en->alts;
        CHECK(a->nreads == 1 && a->reads[0].ans[1] == 3 &&
              memcmp(a->names + a->reads[0].name_off, "abc", 3) == 0);
        CHECK(a->res.neffects == 1 && a->res.effects[0].term.etf != t &&
              a->res.effects[0].term.len == 3 && a->res.effects[0].term.etf[2] == 7);
        CHECK(a->res.cont.id == 5 && a->res.label != lbl && a->res.label[2] == 9);
        /* The dead-payload descriptor was borrowed for one call: a hit
        ** finds it by the continuation's part, never through the entry. */
        CHECK(a->res.payload == NULL && a->res.payload_len == 0);
    }
    /* A second alternative under the same key goes after the first. */
    rd.ans[0] = 0;
    step_log_reset(&log);
    step_log_add(&log, &rd, (const uint8_t *)"abc", 3);
    CHECK(step_cache_add(c, &k[0], &log, &r) == 0);
    en = step_cache_find(c, &k[0]);
    CHECK(en != NULL && en->nalts == 2 && en->alts->reads[0].ans[0] == 1 &&
          en->alts->next->reads[0].ans[0] == 0);
    /* Four entries fit; the fifth evicts one not used since the hand
    ** passed (k[0] was just found, so it is not the first to go). */
    for (int i = 1; i < 4; i++)
        CHECK(step_cache_add(c, &k[i], &log, &r) == 0);
    CHECK(c->n == 4);
    CHECK(step_cache_find(c, &k[0]) != NULL);
    CHECK(step_cache_add(c, &k[4], &log, &r) == 0);
    CHECK(c->n == 4 && c->evictions == 1);
    CHECK(step_cache_find(c, &k[4]) != NULL);
    int left = 0;
    for (int i = 0; i < 5; i++)
        left += step_cache_find(c, &k[i]) != NULL;
    CHECK(left == 4);
    size_t b = step_cache_bytes(c);
    CHECK(b > 0);
    /* An outcome over STEP_CACHE_MAX_ALT_BYTES is not kept (the length is
    ** only measured: nothing is copied). */
    run_result big = r;
    big.label_len = STEP_CACHE_MAX_ALT_BYTES + 1;
    step_key kb = { .pid = 99, .run = RUN_START, .cont = 99 };
    CHECK(step_cache_add(c, &kb, &log, &big) == 0 && step_cache_find(c, &kb) == NULL);
    CHECK(step_cache_bytes(c) == b);
    /* A byte cap below one entry keeps only the newest. */
    c->max_bytes = 1;
    CHECK(step_cache_add(c, &k[5], &log, &r) == 0);
    CHECK(c->n == 1 && step_cache_find(c, &k[5]) != NULL && step_cache_bytes(c) < b);
    step_log_free(&log);
    step_cache_free(c);
    step_cache_free(NULL);
}

static search *new_cached_search(int cache, size_t entries)
{
    search_config cfg = { .node = NODE, .nodelen = strlen(NODE), .creation = CREATION,
                          .check_deadlock = 0, .step_cache = cache,
                          .step_cache_entries = entries };
    search *s = search_new(&cfg);
    if (s == NULL) {
        fprintf(stderr, "search_new failed\n");
        exit(2);
    }
    return s;
}

/* A step met again is applied without a request when its reads answer the
** same, and asked of the caller when one answers differently: process 1
** spawns 2 and 3; 2 exits; 3 asks whether 2 is alive and waits in a
** continuation that says.  The search is the same with the cache off. */
static void cache_model(int cache, size_t entries, uint64_t *runs, search_stats *out)
{
    search *s = new_cached_search(cache, entries);
    request q;
    *runs = 0;
    CHECK(start(s, 1, &q) == 0);
    while (q.kind == REQ_RUN) {
        (*runs)++;
        int r;
        if (q.pid == 1) {
            CHECK(search_fresh_pid(s, 0) == 2 && search_fresh_pid(s, 0) == 3);
            effs f = { .n = 0 };
            eff_spawn(&f, 2, 0, 2);
            eff_spawn(&f, 3, 0, 3);
            r = run_wait(s, 10, 0, &f, 60, 0, &q);
        } else if (q.pid == 2) {
            r = run_exit(s, 1, NULL, 61, 0, &q);
        } else {
            int alive = search_peek_alive(s, 2);
            r = run_wait(s, alive ? 31 : 30, 0, NULL, alive ? 63 : 62, 0, &q);
        }
        CHECK(r == 0);
    }
    CHECK(q.kind == REQ_DONE);
    *out = stats(s);
    search_free(s);
}

static void test_step_cache_search(void)
{
    uint64_t runs_on, runs_off;
    search_stats on, off;
    cache_model(1, 0, &runs_on, &on);
    cache_model(0, 0, &runs_off, &off);
    CHECK(on.states == off.states && on.transitions == off.transitions);
    CHECK(on.states == 6 && on.transitions == 5);
    /* 3 starts again where 2 is alive: a miss; 2 starts again: a hit. */
    CHECK(runs_off == 5 && runs_on == 4);
    CHECK(on.step_cache && on.step_cache_hits == 1 && on.step_cache_misses == 4);
    CHECK(on.step_cache_entries == 3 && on.step_cache_bytes > 0);
    CHECK(!off.step_cache && off.step_cache_hits == 0);
    /* One entry: every step evicts the last, nothing is ever hit, and the
    ** search is the same. */
    uint64_t runs_one;
    search_stats one;
    cache_model(1, 1, &runs_one, &one);
    CHECK(one.states == off.states && one.transitions == off.transitions);
    CHECK(runs_one == runs_off && one.step_cache_hits == 0 && one.step_cache_entries == 1);
}

/* por.c: the safe-step rules, on term parts with hand-given pid lists. */
static void test_por_step_safe(void)
{
    part_store *ps = part_store_new();
    CHECK(ps != NULL);
    if (ps == NULL)
        return;
    int fresh;
    const uint32_t self = 3, p5 = 5, p7 = 7, p9 = 9;
    uint32_t five_seven[2] = { p7, p5 }, self_five[2] = { self, p5 };
    uint8_t t1[3] = { 131, 97, 1 }, t2[3] = { 131, 97, 2 }, t3[3] = { 131, 97, 3 },
            t4[3] = { 131, 97, 4 }, t5[3] = { 131, 97, 5 }, t6[3] = { 131, 97, 6 },
            t7[3] = { 131, 97, 7 };
    part_id cont5 = part_store_intern(ps, PART_TERM, t1, 3, &p5, 1, &fresh);
    part_id cont5b = part_store_intern(ps, PART_TERM, t2, 3, &p5, 1, &fresh);
    part_id msg7 = part_store_intern(ps, PART_TERM, t3, 3, &p7, 1, &fresh);
    part_id cont57 = part_store_intern(ps, PART_TERM, t4, 3, five_seven, 2, &fresh);
    part_id cont9 = part_store_intern(ps, PART_TERM, t5, 3, &p9, 1, &fresh);
    part_id contself5 = part_store_intern(ps, PART_TERM, t6, 3, self_five, 2, &fresh);
    part_id plain = part_store_intern(ps, PART_TERM, t7, 3, NULL, 0, &fresh);
    por_step base = { .run = RUN_RECEIVE, .pid = self, .msg = plain,
                      .old_cont = cont5, .new_cont = cont5b,
                      .outcome = OUTCOME_WAIT };
    por_step t = base;
    CHECK(por_step_safe(ps, &t));
    t.run = RUN_START; t.msg = 0;
    CHECK(por_step_safe(ps, &t));
    t = base; t.run = RUN_TIMEOUT;
    CHECK(!por_step_safe(ps, &t));                 /* rule 1 */
    t = base; t.run = RUN_CHOICE; t.msg = 0; t.choices = 2;
    CHECK(!por_step_safe(ps, &t));
    t.choices = 1;
    CHECK(por_step_safe(ps, &t));
    t = base; t.outcome = OUTCOME_EXIT;
    CHECK(!por_step_safe(ps, &t));                 /* rule 2 */
    t = base; t.outcome = OUTCOME_CHOICE;
    CHECK(por_step_safe(ps, &t));
    t = base; t.neffects = 1;
    CHECK(!por_step_safe(ps, &t));                 /* rule 3 */
    t = base; t.read_shared = 1;
    CHECK(!por_step_safe(ps, &t));                 /* rule 4 */
    t = base; t.stop = 1;
    CHECK(!por_step_safe(ps, &t));
    t = base; t.msg = msg7;                        /* rule 5: 7 freed */
    CHECK(!por_step_safe(ps, &t));
    t.new_cont = cont57;                           /* ... kept */
    CHECK(por_step_safe(ps, &t));
    t.new_cont = plain; t.new_dict = cont57;       /* ... in the dictionary */
    CHECK(por_step_safe(ps, &t));
    t = base; t.new_cont = cont9;                  /* 5 freed, 9 taken */
    CHECK(!por_step_safe(ps, &t));
    t = base; t.old_cont = cont5; t.new_cont = contself5;   /* its own pid */
    CHECK(por_step_safe(ps, &t));
    t = base; t.old_cont = contself5; t.new_cont = cont5;
    CHECK(por_step_safe(ps, &t));
    t = base; t.old_cont = 0xfffff;                /* not a part */
    CHECK(!por_step_safe(ps, &t));
    part_store_free(ps);
}

/* por.c up to a renaming of pid numbers and ref counters (rules 5', 7d', 8
** and 9): keys may be freed or taken; a fresh pid only with a spawn. */
/* Rule 10: demonitor(Ref, [flush]), and each of its conditions. */
static void test_por_demonitor(void)
{
    part_store *ps = part_store_new();
    match_memo memo;
    CHECK(ps != NULL && match_memo_init(&memo) == 0);
    if (ps == NULL)
        return;
    int fresh;
    const uint32_t pp = 3, ps_ = 5, pq = 7, ref = 9, ref_key = 9 | ETF_REF_TAG;
    uint8_t t1[3] = { 131, 97, 31 }, t2[3] = { 131, 97, 32 };
    part_id plain = part_store_intern(ps, PART_TERM, t1, 3, NULL, 0, &fresh);
    part_id holds_ref = part_store_intern(ps, PART_TERM, t2, 3, &ref_key, 1, &fresh);
    part_id empty = part_store_intern(ps, PART_MAILBOX, "", 0, NULL, 0, &fresh);
    monitor held = { ref, ps_, 0 }, on = { ref, pp, 0 }, alias = { ref, ALIAS_DEMONITOR, 0 };
    proc procs[3] = {
        { .pid = pp, .status = PROC_CHOICE, .cont = holds_ref, .mailbox = empty,
          .mons = { 1, 1, &held }, .aliases = { 1, 1, &alias } },
        { .pid = ps_, .status = PROC_WAITING, .cont = plain, .mailbox = empty,
          .monby = { 1, 1, &on } },
        { .pid = pq, .status = PROC_WAITING, .cont = plain, .mailbox = empty } };
    sys_state st = { .procs = procs, .nprocs = 3 };
    effect ef = { .kind = EFFECT_DEMONITOR, .ref = ref, .link = 1 };
    por_sends c = { .before = &st, .after = &st, .memo = &memo, .effects = &ef,
                    .instant = 1, .faults_left = 1, .entry = 1 };
    por_step t = { .run = RUN_RECEIVE, .pid = pp, .msg = holds_ref, .old_cont = holds_ref,
                   .new_cont = plain, .outcome = OUTCOME_CHOICE, .neffects = 1,
                   .renaming = 1, .sends = &c };
    /* A fault may come (a kill of P absorbs the step), P may be linked. */
    CHECK(por_step_safe(ps, &t) == (POR_SAFE_LOCAL | POR_RENAMED | POR_DEMONITOR));
    t.renaming = 0;                                 /* the freed ref */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    t.renaming = 1;
    ef.link = 0;                                    /* no flush */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    ef.link = 1;
    c.instant = 0;                                  /* delivery => ether */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    c.instant = 1;
    t.read_shared = 1;                              /* demonitor(R, [info]) */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    t.read_shared = 0;
    procs[2].cont = holds_ref;                      /* Q holds the alias */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    procs[0].aliases = (monitor_set){ 0, 0, NULL };  /* no alias: no race */
    CHECK(por_step_safe(ps, &t) == (POR_SAFE_LOCAL | POR_RENAMED | POR_DEMONITOR));
    procs[0].aliases = (monitor_set){ 1, 1, &alias };
    procs[2].cont = plain;
    held.pid = MAKE_KEY(1, 5);                      /* a target on another node */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    held.pid = ps_;
    held.item = plain;                              /* monitored by name */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    held.item = 0;
    effect two[2] = { ef, { .kind = EFFECT_SEND, .pid = pq, .term = { .id = plain } } };
    c.effects = two; t.neffects = 2;                /* and a send */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    c.effects = &ef; t.neffects = 1;
    t.outcome = OUTCOME_EXIT;                       /* the process ends */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    match_memo_free(&memo);
    part_store_free(ps);
}

/* Rule 11: a monitor of a live process by pid on P's node (with its
** alias), under instant delivery and with no fault left; guarded at run
** time (test_search_arming). */
static void test_por_monitor(void)
{
    part_store *ps = part_store_new();
    match_memo memo;
    CHECK(ps != NULL && match_memo_init(&memo) == 0);
    if (ps == NULL)
        return;
    int fresh;
    const uint32_t pp = 3, pq = 5, ref = 9;
    uint8_t t1[3] = { 131, 97, 41 };
    part_id plain = part_store_intern(ps, PART_TERM, t1, 3, NULL, 0, &fresh);
    part_id empty = part_store_intern(ps, PART_MAILBOX, "", 0, NULL, 0, &fresh);
    proc procs[2] = {
        { .pid = pp, .status = PROC_CHOICE, .cont = plain, .mailbox = empty },
        { .pid = pq, .status = PROC_WAITING, .cont = plain, .mailbox = empty } };
    sys_state st = { .procs = procs, .nprocs = 2 };
    effect two[2] = { { .kind = EFFECT_MONITOR, .pid = pq, .ref = ref },
                      { .kind = EFFECT_ALIAS, .ref = ref, .link = ALIAS_DEMONITOR } };
    por_sends c = { .before = &st, .after = &st, .memo = &memo, .effects = two,
                    .instant = 1, .faults_left = 0, .entry = 1 };
    por_step t = { .run = RUN_CHOICE, .choices = 1, .pid = pp, .old_cont = plain,
                   .new_cont = plain, .outcome = OUTCOME_WAIT, .neffects = 2,
                   .read_fresh_ref = 1, .renaming = 1, .monitor_rule = 1, .sends = &c };
    const int safe = POR_SAFE_LOCAL | POR_RENAMED | POR_MONITOR;
    CHECK(por_step_safe(ps, &t) == safe);
    t.monitor_rule = 0;                             /* turned off by its guard */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    t.monitor_rule = 1;
    t.neffects = 1;                                 /* without the alias */
    CHECK(por_step_safe(ps, &t) == safe);
    t.neffects = 2;
    t.renaming = 0;                                 /* the fresh ref */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    t.renaming = 1;
    c.instant = 0;                                  /* delivery => ether */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    c.instant = 1;
    c.faults_left = 1;                              /* a crash may kill Q unseen */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    c.faults_left = 0;
    two[1].ref = ref + 1;                           /* an alias of another ref */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    two[1].ref = ref;
    two[0].pid = 11;                                /* a dead target: noproc */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    two[0].pid = MAKE_KEY(1, 5);                    /* a target on another node */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    two[0].pid = MAKE_KEY(0, KEY_BY_NAME);          /* a monitor by name */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    two[0].pid = pp;                                /* of itself */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    two[0].pid = pq;
    two[0].link = 1;                                /* spawn_monitor's */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    two[0].link = 0;
    two[1] = (effect){ .kind = EFFECT_SEND, .pid = pq, .term = { .id = plain } };
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);     /* and a send */
    two[1] = (effect){ .kind = EFFECT_ALIAS, .ref = ref, .link = ALIAS_DEMONITOR };
    t.read_shared = 1;                              /* a read of the state */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    t.read_shared = 0;
    t.outcome = OUTCOME_EXIT;                       /* the process ends */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    match_memo_free(&memo);
    part_store_free(ps);
}

/* Rule 12: a step whose only reads found names registered to live
** processes is as safe as without them, with the renaming's guards; and
** which reads count as such (step_read_finds_name). */
static void test_por_named(void)
{
    part_store *ps = part_store_new();
    CHECK(ps != NULL);
    if (ps == NULL)
        return;
    int fresh;
    uint8_t t1[3] = { 131, 97, 51 };
    part_id plain = part_store_intern(ps, PART_TERM, t1, 3, NULL, 0, &fresh);
    por_step t = { .run = RUN_CHOICE, .choices = 1, .pid = 3, .old_cont = plain,
                   .new_cont = plain, .outcome = OUTCOME_WAIT, .read_names = 1,
                   .renaming = 1, .name_rule = 1 };
    CHECK(por_step_safe(ps, &t) == (POR_SAFE_LOCAL | POR_NAMED));
    t.name_rule = 0;                                /* turned off by its guard */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    t.name_rule = 1;
    t.renaming = 0;                                 /* no guards */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    t.renaming = 1;
    t.read_shared = 1;                              /* and another read */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    t.read_shared = 0;
    t.outcome = OUTCOME_CHOICE;
    t.read_names = 0;
    CHECK(por_step_safe(ps, &t) == POR_SAFE_LOCAL);
    part_store_free(ps);

    uint32_t named = 0;
    step_read found = { .kind = READ_WHEREIS, .ans = { 1, 9 } };
    step_read missing = { .kind = READ_WHEREIS, .ans = { 0 } };
    step_read alive9 = { .kind = READ_ALIVE, .a = 9, .ans = { 1 } };
    step_read alive8 = { .kind = READ_ALIVE, .a = 8, .ans = { 1 } };
    step_read dead9 = { .kind = READ_ALIVE, .a = 9, .ans = { 0 } };
    CHECK(!step_read_finds_name(&alive9, &named));  /* no lookup yet */
    CHECK(!step_read_finds_name(&missing, &named) && named == 0);
    CHECK(step_read_finds_name(&found, &named) && named == 9);
    CHECK(step_read_finds_name(&alive9, &named));   /* whereis's own check */
    CHECK(!step_read_finds_name(&alive8, &named));
    CHECK(!step_read_finds_name(&dead9, &named));
}

static void test_por_renamed(void)
{
    part_store *ps = part_store_new();
    match_memo memo;
    CHECK(ps != NULL && match_memo_init(&memo) == 0);
    if (ps == NULL)
        return;
    int fresh;
    const uint32_t pp = 3, pq = 5, p7 = 7, r7 = 7 | ETF_REF_TAG;
    uint8_t t1[3] = { 131, 97, 21 }, t2[3] = { 131, 97, 22 }, t3[3] = { 131, 97, 23 },
            t4[3] = { 131, 97, 24 };
    part_id plain = part_store_intern(ps, PART_TERM, t1, 3, NULL, 0, &fresh);
    part_id holds7 = part_store_intern(ps, PART_TERM, t2, 3, &p7, 1, &fresh);
    part_id holds_r7 = part_store_intern(ps, PART_TERM, t3, 3, &r7, 1, &fresh);
    part_id init = part_store_intern(ps, PART_TERM, t4, 3, &pq, 1, &fresh);
    part_id empty = part_store_intern(ps, PART_MAILBOX, "", 0, NULL, 0, &fresh);
    /* A local step that drops pid 7: exact rules no, renamed yes. */
    por_step t = { .run = RUN_CHOICE, .choices = 1, .pid = pp, .old_cont = holds7,
                   .new_cont = plain, .outcome = OUTCOME_WAIT };
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    t.renaming = 1;
    CHECK(por_step_safe(ps, &t) == (POR_SAFE_LOCAL | POR_RENAMED));
    t.old_cont = plain; t.new_cont = plain;         /* nothing dropped */
    CHECK(por_step_safe(ps, &t) == POR_SAFE_LOCAL);
    t.old_cont = holds_r7;                          /* a ref dropped */
    CHECK(por_step_safe(ps, &t) == (POR_SAFE_LOCAL | POR_RENAMED));
    t.renaming = 0;
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    t.renaming = 1;
    t.old_cont = plain; t.new_cont = holds_r7;      /* a fresh ref taken */
    t.read_fresh_ref = 1;
    CHECK(por_step_safe(ps, &t) == (POR_SAFE_LOCAL | POR_RENAMED));
    t.renaming = 0;
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    t.renaming = 1; t.read_fresh_ref = 0;
    t.new_cont = plain; t.read_fresh_pid = 1;       /* a fresh pid, no spawn */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    /* Rule 8: a plain spawn of Q by P, which keeps Q's pid. */
    proc procs[1] = { { .pid = pp, .status = PROC_CHOICE, .cont = plain, .mailbox = empty } };
    sys_state st = { .procs = procs, .nprocs = 1 };
    effect ef = { .kind = EFFECT_SPAWN, .pid = pq, .term = { .id = init } };
    por_sends c = { .before = &st, .after = &st, .memo = &memo, .effects = &ef,
                    .instant = 1 };
    t = (por_step){ .run = RUN_CHOICE, .choices = 1, .pid = pp, .old_cont = plain,
                    .new_cont = init, .outcome = OUTCOME_CHOICE, .neffects = 1,
                    .read_fresh_pid = 1, .sends = &c };
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);     /* exact: a fresh pid */
    t.renaming = 1;
    CHECK(por_step_safe(ps, &t) == (POR_SAFE_SENDS | POR_RENAMED));
    t.read_fresh_pid = 0;                           /* also from the cache */
    CHECK(por_step_safe(ps, &t) == (POR_SAFE_SENDS | POR_RENAMED));
    t.read_fresh_pid = 1;
    ef.link = 1;                                    /* spawn_link */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    ef.link = 0;
    ef.pid = MAKE_KEY(1, 5);                        /* on another node */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    ef.pid = pq;
    c.faults_left = 1;                              /* 7a: P may be killed */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    c.faults_left = 0;
    uint32_t link_q = pq;
    procs[0].nlinks = 1; procs[0].links = &link_q;
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    procs[0].nlinks = 0;
    t.read_shared = 1;                              /* another read */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    t.read_shared = 0;
    t.old_cont = holds_r7;                          /* a ref dropped */
    CHECK(por_step_safe(ps, &t) == (POR_SAFE_SENDS | POR_RENAMED));
    ef.term.id = holds_r7;                          /* ... given to the child */
    CHECK(por_step_safe(ps, &t) == (POR_SAFE_SENDS | POR_RENAMED));
    /* Rule 9: P's end, when nothing but its pid ties it to the others. */
    const uint32_t own_ref = ((KEY_NUM(pp) << ETF_REF_COUNTER_BITS) | 1) | ETF_REF_TAG;
    uint8_t t5[3] = { 131, 97, 25 };
    part_id holds_own = part_store_intern(ps, PART_TERM, t5, 3, &own_ref, 1, &fresh);
    proc eprocs[2] = {
        { .pid = pp, .status = PROC_CHOICE, .cont = plain, .mailbox = empty },
        { .pid = pq, .status = PROC_WAITING, .cont = holds7, .mailbox = empty } };
    sys_state est = { .procs = eprocs, .nprocs = 2 };
    por_sends ec = { .before = &est, .after = &est, .memo = &memo, .effects = &ef,
                     .instant = 1, .entry = 1 };
    t = (por_step){ .run = RUN_CHOICE, .choices = 1, .pid = pp, .old_cont = holds7,
                    .outcome = OUTCOME_EXIT, .sends = &ec };
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);     /* exact rules: rule 2 */
    t.renaming = 1;
    CHECK(por_step_safe(ps, &t) == (POR_SAFE_SENDS | POR_RENAMED | POR_EXIT));
    t.old_cont = holds_own;                         /* a ref P made goes */
    CHECK(por_step_safe(ps, &t) == (POR_SAFE_SENDS | POR_RENAMED | POR_EXIT));
    t.old_cont = holds_r7;                          /* another creator's */
    CHECK(por_step_safe(ps, &t) == (POR_SAFE_SENDS | POR_RENAMED | POR_EXIT));
    t.old_cont = plain;
    t.stop = 1;                                     /* judged abnormal */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    t.stop = 0; t.neffects = 1;                     /* with an effect */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    t.neffects = 0; t.read_shared = 1;
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    t.read_shared = 0;
    ec.entry = pp;                                  /* the entry */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    ec.entry = 1; ec.faults_left = 1;               /* may be killed */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    ec.faults_left = 0; ec.instant = 0;
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    ec.instant = 1;
    eprocs[0].nlinks = 1; eprocs[0].links = &link_q;
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    eprocs[0].nlinks = 0;
    monitor mq = { 6, pq, 0 };
    eprocs[0].monby = (monitor_set){ 1, 1, &mq };   /* Q monitors P */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    eprocs[0].monby = (monitor_set){ 0, 0, NULL };
    eprocs[0].name = plain;                         /* registered */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    eprocs[0].name = 0;
    eprocs[1].gl = 1;                               /* a group leader set */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    eprocs[1].gl = 0;
    ets_table tab = { .tid = 2, .owner = pp };      /* P's table */
    est.tables = &tab; est.ntables = 1;
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    est.ntables = 0;
    CHECK(por_step_safe(ps, &t) == (POR_SAFE_SENDS | POR_RENAMED | POR_EXIT));
    match_memo_free(&memo);
    part_store_free(ps);
}

/* por.c, rule 7: a step whose only effects are sends to a blocked process
** no one else can write to (docs/ARCHITECTURE.md, 7a-7d). */
static void test_por_sends(void)
{
    part_store *ps = part_store_new();
    match_memo memo;
    CHECK(ps != NULL && match_memo_init(&memo) == 0);
    if (ps == NULL)
        return;
    int fresh;
    const uint32_t pp = 3, pq = 5, px = 9, p7 = 7, aref = 4 | ETF_REF_TAG;
    uint32_t q_and_7[2] = { pq, p7 };
    uint8_t t1[3] = { 131, 97, 11 }, t2[3] = { 131, 97, 12 }, t3[3] = { 131, 97, 13 },
            t4[3] = { 131, 97, 14 }, t5[3] = { 131, 97, 15 }, t6[3] = { 131, 97, 16 },
            t7[3] = { 131, 97, 17 };
    part_id plain = part_store_intern(ps, PART_TERM, t1, 3, NULL, 0, &fresh);
    part_id plain2 = part_store_intern(ps, PART_TERM, t2, 3, NULL, 0, &fresh);
    part_id req = part_store_intern(ps, PART_TERM, t3, 3, &pq, 1, &fresh);
    part_id holds_q = part_store_intern(ps, PART_TERM, t4, 3, &pq, 1, &fresh);
    part_id req7 = part_store_intern(ps, PART_TERM, t5, 3, q_and_7, 2, &fresh);
    part_id holds_alias = part_store_intern(ps, PART_TERM, t6, 3, &aref, 1, &fresh);
    part_id other = part_store_intern(ps, PART_TERM, t7, 3, NULL, 0, &fresh);
    part_id empty = part_store_intern(ps, PART_MAILBOX, "", 0, NULL, 0, &fresh);
    uint8_t mb[4];
    memcpy(mb, &other, 4);                          /* words in host order */
    part_id one = part_store_intern(ps, PART_MAILBOX, mb, 4, NULL, 0, &fresh);
    CHECK(mailbox_length(ps, one) == 1 && mailbox_at(ps, one, 0) == other);
    proc base[3] = {
        { .pid = pp, .status = PROC_WAITING, .cont = plain, .mailbox = empty },
        { .pid = pq, .status = PROC_WAITING, .cont = plain, .mailbox = empty },
        { .pid = px, .status = PROC_WAITING, .cont = plain, .mailbox = empty } };
    proc procs[3];
    memcpy(procs, base, sizeof procs);
    sys_state st = { .procs = procs, .nprocs = 3 };
    effect ef = { .kind = EFFECT_SEND, .pid = pq, .term = { .id = plain2 } };
    por_sends c = { .before = &st, .after = &st, .memo = &memo, .effects = &ef,
                    .instant = 1 };
    por_step t = { .run = RUN_RECEIVE, .pid = pp, .msg = req, .old_cont = plain,
                   .new_cont = plain, .outcome = OUTCOME_WAIT, .neffects = 1,
                   .sends = &c };
    CHECK(por_step_safe(ps, &t) == POR_SAFE_SENDS);
    t.sends = NULL;
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    t.sends = &c;
    c.faults_left = 1;                              /* 7a */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    c.faults_left = 0; c.instant = 0;
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    c.instant = 1;
    uint32_t link_x = px, link_p = pp;
    procs[0].nlinks = 1; procs[0].links = &link_x;
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    procs[0].flags = PF_TRAP_EXIT;                  /* 'EXIT' is a message */
    CHECK(por_step_safe(ps, &t) == POR_SAFE_SENDS);
    memcpy(procs, base, sizeof procs);
    procs[1].flags = PF_TIMEOUT;                    /* 7b */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    c.timeouts_when_idle = 1;
    CHECK(por_step_safe(ps, &t) == POR_SAFE_SENDS);
    procs[1].flags = PF_TIMEOUT | PF_TIMEOUT_ZERO;
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    c.timeouts_when_idle = 0;
    memcpy(procs, base, sizeof procs);
    procs[1].mailbox = one;                         /* match unknown */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    CHECK(match_memo_put(&memo, plain, other, 0) == 0);
    CHECK(por_step_safe(ps, &t) == POR_SAFE_SENDS);
    procs[1].cont = plain2;
    CHECK(match_memo_put(&memo, plain2, other, 1) == 0);
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    memcpy(procs, base, sizeof procs);
    procs[1].name = plain2;                         /* registered */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    memcpy(procs, base, sizeof procs);
    procs[1].status = PROC_INIT;
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    memcpy(procs, base, sizeof procs);
    procs[2].cont = holds_q;                        /* 7c: X holds Q */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    memcpy(procs, base, sizeof procs);
    procs[2].mailbox = one;                         /* a message to X */
    CHECK(por_step_safe(ps, &t) == POR_SAFE_SENDS);
    procs[0].cont = holds_q;                        /* P may hold Q */
    CHECK(por_step_safe(ps, &t) == POR_SAFE_SENDS);
    memcpy(procs, base, sizeof procs);
    procs[1].nlinks = 1; procs[1].links = &link_x;
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    procs[1].links = &link_p;
    CHECK(por_step_safe(ps, &t) == POR_SAFE_SENDS);
    memcpy(procs, base, sizeof procs);
    monitor al = { 4, ALIAS_EXPLICIT, 0 };
    procs[1].aliases = (monitor_set){ 1, 1, &al };
    CHECK(por_step_safe(ps, &t) == POR_SAFE_SENDS);
    procs[2].dict = holds_alias;                    /* X holds Q's alias */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    memcpy(procs, base, sizeof procs);
    monitor mx = { 6, px, 0 };
    procs[1].monby = (monitor_set){ 1, 1, &mx };    /* X monitors Q */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    memcpy(procs, base, sizeof procs);
    ef.pid = pp;                                    /* to itself */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    ef.pid = 11;                                    /* to no process */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    ef.pid = pq; ef.kind = EFFECT_LINK;
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    ef.kind = EFFECT_SEND;
    t.msg = req7;                                   /* 7d: 7 freed */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    t.new_cont = req7;                              /* ... kept */
    CHECK(por_step_safe(ps, &t) == POR_SAFE_SENDS);
    t.msg = req; t.new_cont = plain; ef.term.id = req7;     /* 7 taken */
    CHECK(por_step_safe(ps, &t) == POR_UNSAFE);
    ef.term.id = holds_q;                           /* Q's pid sent on */
    CHECK(por_step_safe(ps, &t) == POR_SAFE_SENDS);
    match_memo_free(&memo);
    part_store_free(ps);
}

/* ------------------------------------------------------------------ */
/* symmetry (symmetry.c)                                              */

static void bref(etfb *e, uint32_t creator, uint32_t counter)   /* NEWER_REFERENCE_EXT */
{
    b8(e, 90);
    b16(e, 3);
    batom(e, NODE);
    b32(e, CREATION);
    b32(e, counter);
    b32(e, creator);
    b32(e, 0);
}

/* {Tag, Pid} or {Tag, Ref} interned with its keys. */
static part_id sym_term(trans_ctx *cx, const char *tag, uint32_t pid,
                        uint32_t ref_creator, uint32_t ref_counter)
{
    etfb e;
    bstart(&e);
    b8(&e, 104);
    b8(&e, 2);
    batom(&e, tag);
    if (pid != 0)
        bpid(&e, NODE, pid, 0, CREATION);
    else
        bref(&e, ref_creator, ref_counter);
    term_in t = { e.b, e.n, 0 };
    return transition_intern_term(cx, &t);
}

static part_id sym_mailbox(part_store *ps, const part_id *msgs, uint32_t n)
{
    int fresh;
    return part_store_intern(ps, PART_MAILBOX, msgs, 4 * n, NULL, 0, &fresh);
}

static void sym_ctx(trans_ctx *cx, part_store *ps)
{
    memset(cx, 0, sizeof *cx);
    cx->ps = ps;
    cx->names.ps = ps;
    cx->names.nodes.n = 1;
    cx->names.nodes.names[0] = NODE;
    cx->names.nodes.lens[0] = strlen(NODE);
    cx->names.creation = CREATION;
}

/* A server (pid 1) and two clients: one has asked (its request in the
** server's mailbox, waiting), the other not yet (init).  `asker' is the
** pid of the one that asked. */
static void sym_clients(trans_ctx *cx, sys_state *st, uint32_t asker)
{
    part_store *ps = cx->ps;
    uint32_t other = asker == 2 ? 3 : 2;
    part_id req = sym_term(cx, "req", asker, 0, 0);
    proc server = mkproc(1, PROC_WAITING, sym_term(cx, "server", 1, 0, 0),
                         sym_mailbox(ps, &req, 1));
    proc a = mkproc(asker, PROC_WAITING, sym_term(cx, "wait", 1, 0, 0),
                    sym_mailbox(ps, NULL, 0));
    proc b = mkproc(other, PROC_INIT, sym_term(cx, "client", 1, 0, 0),
                    sym_mailbox(ps, NULL, 0));
    memset(st, 0, sizeof *st);
    CHECK(sys_state_insert(st, &server) >= 0 && sys_state_insert(st, &a) >= 0 &&
          sys_state_insert(st, &b) >= 0);
}

static void test_symmetry(void)
{
    part_store *ps = part_store_new();
    symmetry *sy = symmetry_new(0);
    CHECK(ps != NULL && sy != NULL);
    if (ps == NULL || sy == NULL)
        return;
    trans_ctx cx;
    sym_ctx(&cx, ps);
    int fresh;

    /* Renaming: pids, ref creators, links, monitors, in every term. */
    part_id msgs[2] = { sym_term(&cx, "req", 3, 0, 0), sym_term(&cx, "ref", 0, 3, 1) };
    proc p1 = mkproc(1, PROC_WAITING, sym_term(&cx, "server", 1, 0, 0),
                     sym_mailbox(ps, msgs, 2));
    proc p2 = mkproc(2, PROC_WAITING, sym_term(&cx, "client", 1, 0, 0),
                     sym_mailbox(ps, NULL, 0));
    proc p3 = mkproc(3, PROC_WAITING, sym_term(&cx, "client", 1, 0, 0),
                     sym_mailbox(ps, NULL, 0));
    sys_state st;
    memset(&st, 0, sizeof st);
    CHECK(sys_state_insert(&st, &p1) >= 0 && sys_state_insert(&st, &p2) >= 0 &&
          sys_state_insert(&st, &p3) >= 0);
    CHECK(proc_link_add(&st.procs[1], 3) == 0 && proc_link_add(&st.procs[2], 2) == 0);
    CHECK(monitor_add(&st.procs[2].mons,
                      (monitor){ MAKE_KEY(0, 3u << ETF_REF_COUNTER_BITS | 2), 1, 0 }) == 0);
    CHECK(monitor_add(&st.procs[0].monby,
                      (monitor){ MAKE_KEY(0, 3u << ETF_REF_COUNTER_BITS | 2), 3, 0 }) == 0);
    part_id before = sys_state_encode(ps, &st, &fresh);
    sym_pair swap[2] = { { 2, 3 }, { 3, 2 } };
    CHECK(symmetry_rename(sy, &cx, &st, swap, 2) == 0);
    CHECK(st.nprocs == 3 && st.procs[0].pid == 1 && st.procs[1].pid == 2 &&
          st.procs[2].pid == 3);
    CHECK(mailbox_at(ps, st.procs[0].mailbox, 0) == sym_term(&cx, "req", 2, 0, 0));
    CHECK(mailbox_at(ps, st.procs[0].mailbox, 1) == sym_term(&cx, "ref", 0, 2, 1));
    /* The monitoring client (3) is now 2, its monitor's ref made by 2. */
    CHECK(st.procs[1].mons.n == 1 && st.procs[2].mons.n == 0 &&
          st.procs[1].mons.m[0].ref == MAKE_KEY(0, 2u << ETF_REF_COUNTER_BITS | 2) &&
          st.procs[1].mons.m[0].pid == 1);
    CHECK(st.procs[0].monby.n == 1 && st.procs[0].monby.m[0].pid == 2);
    CHECK(st.procs[1].nlinks == 1 && st.procs[1].links[0] == 3);
    part_id after = sys_state_encode(ps, &st, &fresh);
    CHECK(after != 0 && after != before);
    /* A swap is its own inverse. */
    CHECK(symmetry_rename(sy, &cx, &st, swap, 2) == 0);
    CHECK(sys_state_encode(ps, &st, &fresh) == before);
    sys_state_clear(&st);

    /* Canonical: the two states that differ only in which client asked
    ** get one representative, and it is its own. */
    sys_state a, b;
    sym_clients(&cx, &a, 2);
    sym_clients(&cx, &b, 3);
    part_id ida = sys_state_encode(ps, &a, &fresh), idb = sys_state_encode(ps, &b, &fresh);
    CHECK(ida != idb);
    sym_pair *pa, *pb;
    uint32_t na, nb;
    CHECK(symmetry_canon(sy, &cx, &a, &pa, &na) == 0);
    CHECK(symmetry_canon(sy, &cx, &b, &pb, &nb) == 0);
    CHECK(sys_state_encode(ps, &a, &fresh) == sys_state_encode(ps, &b, &fresh));
    CHECK(na != 0 || nb != 0);              /* they differ: one was renamed */
    free(pa);
    free(pb);
    CHECK(symmetry_canon(sy, &cx, &a, &pa, &na) == 0);
    CHECK(na == 0 && pa == NULL);
    CHECK(symmetry_max_group(sy) >= 1);
    sys_state_clear(&a);
    sys_state_clear(&b);

    /* Ghosts: dead clients named by the server's mailbox are renamed too,
    ** ordered by where they stand in it.  The server is pid 2 (pid 1, the
    ** entry process, keeps its number), live clients 3 and 6, the dead
    ** ones 4 and 5 named in either order: one representative. */
    part_id roots[2];
    for (int order = 0; order < 2; order++) {
        part_id done[2] = { sym_term(&cx, "done", order ? 5 : 4, 0, 0),
                            sym_term(&cx, "done", order ? 4 : 5, 0, 0) };
        proc s2 = mkproc(2, PROC_WAITING, sym_term(&cx, "server", 1, 0, 0),
                         sym_mailbox(ps, done, 2));
        proc s3 = mkproc(3, PROC_WAITING, sym_term(&cx, "client", 1, 0, 0),
                         sym_mailbox(ps, NULL, 0));
        proc s6 = mkproc(6, PROC_WAITING, sym_term(&cx, "client", 1, 0, 0),
                         sym_mailbox(ps, NULL, 0));
        memset(&st, 0, sizeof st);
        CHECK(sys_state_insert(&st, &s2) >= 0 && sys_state_insert(&st, &s3) >= 0 &&
              sys_state_insert(&st, &s6) >= 0);
        sym_pair *pg;
        uint32_t ng;
        CHECK(symmetry_canon(sy, &cx, &st, &pg, &ng) == 0);
        free(pg);
        /* The server is the process whose mailbox holds two messages. */
        int srv = -1;
        for (uint32_t i = 0; i < st.nprocs; i++)
            if (mailbox_length(ps, st.procs[i].mailbox) == 2)
                srv = (int)i;
        CHECK(srv >= 0);
        if (srv >= 0) {
            const part *f = part_store_get(ps, mailbox_at(ps, st.procs[srv].mailbox, 0));
            const part *g = part_store_get(ps, mailbox_at(ps, st.procs[srv].mailbox, 1));
            /* Whichever dead client came first now has the smaller number. */
            CHECK(f != NULL && g != NULL && f->npids == 1 && g->npids == 1 &&
                  f->pids[0] < g->pids[0]);
        }
        roots[order] = sys_state_encode(ps, &st, &fresh);
        sys_state_clear(&st);
    }
    CHECK(roots[0] != 0 && roots[0] == roots[1]);

    /* A set of clients (`#{C => []}', a simple_one_for_one supervisor's
    ** children, sets' version 2): the pairs are equal but for their pids,
    ** so the map's order is the pids' and tells nothing.  Clients 3 and 4,
    ** one waiting, one not started, in either arrangement: one
    ** representative (the walk used to rank them in map order, by pid). */
    for (int swap = 0; swap < 2; swap++) {
        etfb m;
        bstart(&m); b8(&m, 104); b8(&m, 2); batom(&m, "set");
        b8(&m, 116); b32(&m, 2);
        bpid(&m, NODE, 3, 0, CREATION); b8(&m, 106);
        bpid(&m, NODE, 4, 0, CREATION); b8(&m, 106);
        term_in t = { m.b, m.n, 0 };
        proc srv = mkproc(1, PROC_WAITING, transition_intern_term(&cx, &t),
                          sym_mailbox(ps, NULL, 0));
        proc c3 = mkproc(3, swap ? PROC_INIT : PROC_WAITING,
                         sym_term(&cx, swap ? "client" : "wait", 1, 0, 0), sym_mailbox(ps, NULL, 0));
        proc c4 = mkproc(4, swap ? PROC_WAITING : PROC_INIT,
                         sym_term(&cx, swap ? "wait" : "client", 1, 0, 0), sym_mailbox(ps, NULL, 0));
        memset(&st, 0, sizeof st);
        CHECK(sys_state_insert(&st, &srv) >= 0 && sys_state_insert(&st, &c3) >= 0 &&
              sys_state_insert(&st, &c4) >= 0);
        sym_pair *pg;
        uint32_t ng;
        CHECK(symmetry_canon(sy, &cx, &st, &pg, &ng) == 0);
        free(pg);
        roots[swap] = sys_state_encode(ps, &st, &fresh);
        sys_state_clear(&st);
    }
    CHECK(roots[0] != 0 && roots[0] == roots[1]);
    symmetry_free(sy);
    part_store_free(ps);
}

/* The stack set against a plain array over a long random push/pop run:
** membership and multiplicity survive growth and backward-shift deletion. */
static void test_stack_set(void)
{
    stack_set set = { 0 };
    enum { MAXD = 3000 };
    static part_id stack[MAXD];
    size_t depth = 0;
    uint32_t seed = 12345;
    int agree = 1;
    for (int step = 0; step < 200000; step++) {
        seed = seed * 1103515245u + 12345u;
        uint32_t r = seed >> 8;
        if (depth < MAXD && (depth == 0 || r % 3 != 0)) {
            /* Ids from a small range, so repeats and probe runs happen. */
            part_id id = 1 + r % 5000;
            if (stack_set_add(&set, id) != 0)
                agree = 0;
            stack[depth++] = id;
        } else {
            stack_set_remove(&set, stack[--depth]);
        }
        if (step % 97 == 0) {
            for (part_id id = 1; id <= 5000; id += 7) {
                int on = 0;
                for (size_t k = 0; k < depth && !on; k++)
                    on = stack[k] == id;
                if (on != stack_set_has(&set, id))
                    agree = 0;
            }
        }
    }
    CHECK(agree);
    CHECK(!stack_set_has(&set, 0));
    CHECK(stack_set_add(&set, 0) == 0 && !stack_set_has(&set, 0));
    while (depth > 0)
        stack_set_remove(&set, stack[--depth]);
    CHECK(set.n == 0);
    stack_set_remove(&set, 42);     /* not a member: nothing */
    CHECK(set.n == 0);
    stack_set_free(&set);
}

/* search_pool.c: the breadth-first queue, its termination rule, stop and
** paths, one worker and several. */
static uint8_t *label_copy(const char *text)
{
    uint8_t *l = malloc(strlen(text) + 1);
    if (l != NULL)
        memcpy(l, text, strlen(text) + 1);
    return l;
}

static void test_search_pool_single(void)
{
    search_pool *p = search_pool_new(part_store_new(), 0);
    CHECK(p != NULL);
    if (p == NULL)
        return;
    int busy = 0, other = 0, hb = 0, ho = 0;
    uint32_t node, depth, idx, d;
    part_id state;
    CHECK(search_pool_take(p, &busy, &hb, &node, &state, &depth) == POOL_DONE);
    CHECK(search_pool_add(p, NULL, 10, 0, NULL, 0, NULL, 0, 1, &idx, &d) == 0 && idx == 0 && d == 0);
    CHECK(search_pool_take(p, &busy, &hb, &node, &state, &depth) == POOL_WORK);
    CHECK(node == 0 && state == 10 && depth == 0 && busy == 1);
    /* while the root is expanded, another worker waits, hungry */
    CHECK(!search_pool_hungry(p));
    CHECK(search_pool_take(p, &other, &ho, &node, &state, &depth) == POOL_WAIT && other == 0);
    CHECK(search_pool_hungry(p) && ho == 1);
    /* a node kept by its finder is not queued until handed over */
    uint32_t kept;
    CHECK(search_pool_add(p, NULL, 20, 0, NULL, 0, NULL, 0, 0, &kept, &d) == 0 && kept == 1);
    CHECK(search_pool_take(p, &other, &ho, &node, &state, &depth) == POOL_WAIT);
    CHECK(search_pool_queue(p, &kept, 1) == 0);
    CHECK(search_pool_take(p, &other, &ho, &node, &state, &depth) == POOL_WORK && node == 1 &&
          state == 20);
    CHECK(!search_pool_hungry(p) && ho == 0);
    search_pool_node(p, 1, &state, &depth);
    CHECK(state == 20 && depth == 1);
    CHECK(search_pool_add(p, NULL, 11, 0, label_copy("a"), 2, NULL, 0, 1, &idx, &d) == 0 && idx == 2 && d == 1);
    sym_pair *perm = malloc(sizeof *perm);
    CHECK(perm != NULL);
    if (perm != NULL)
        *perm = (sym_pair){ .from = 3, .to = 2 };
    CHECK(search_pool_add(p, NULL, 12, 2, label_copy("b"), 2, perm, 1, 1, &idx, &d) == 0 && idx == 3 && d == 2);
    CHECK(search_pool_add(p, NULL, 13, 7, NULL, 0, NULL, 0, 1, &idx, &d) == -1);   /* no node 7 */
    CHECK(search_pool_count(p, NULL) == 4);
    CHECK(search_pool_take(p, &other, &ho, &node, &state, &depth) == POOL_WORK && node == 2);
    CHECK(search_pool_take(p, &busy, &hb, &node, &state, &depth) == POOL_WORK && node == 3 && depth == 2);
    CHECK(search_pool_take(p, &other, &ho, &node, &state, &depth) == POOL_WAIT);
    pool_step *path;
    size_t len;
    CHECK(search_pool_path(p, 3, &path, &len) == 0 && len == 3);
    if (len == 3) {
        CHECK(path[0].state == 10 && path[0].label == NULL);
        CHECK(path[1].state == 11 && path[1].label_len == 2 && strcmp((char *)path[1].label, "a") == 0);
        CHECK(path[2].state == 12 && path[2].nperm == 1 && path[2].perm[0].from == 3);
        search_pool_path_free(path, len);
    }
    CHECK(search_pool_path(p, 4, &path, &len) == -1);
    /* A node is finished once its expansion and its children's ended:
    ** 0 (state 10) has children 1 (20) and 2 (11), and 2 has 3 (12). */
    CHECK(!search_pool_is_finished(p, 10));
    CHECK(search_pool_expanded(p, 0) == 0 && !search_pool_is_finished(p, 10));
    CHECK(search_pool_expanded(p, 2) == 0 && !search_pool_is_finished(p, 11));
    CHECK(search_pool_expanded(p, 3) == 0 && search_pool_is_finished(p, 12) &&
          search_pool_is_finished(p, 11) && !search_pool_is_finished(p, 10));
    CHECK(search_pool_expanded(p, 1) == 0 && search_pool_is_finished(p, 20) &&
          search_pool_is_finished(p, 10));
    CHECK(!search_pool_is_full(p, 10));
    CHECK(search_pool_expanded(p, 4) == -1);    /* the failed add's hole */
    CHECK(search_pool_expanded(p, 9) == -1);
    CHECK(search_pool_take(p, &busy, &hb, &node, &state, &depth) == POOL_DONE && busy == 0);
    CHECK(search_pool_bytes(p) > 0);
    search_pool_stop(p);
    CHECK(search_pool_stopped(p));
    CHECK(search_pool_take(p, &other, &ho, &node, &state, &depth) == POOL_STOPPED);
    search_pool_retain(p);
    search_pool_release(p);
    search_pool_release(p);
}

/* A binary tree of states, expanded by several threads at once: every node
** is taken once, and every thread sees POOL_DONE only when all are. */
#define POOL_TREE_DEPTH 12
typedef struct pool_worker {
    search_pool *p;
    pool_cursor cursor;         /* node indices a block at a time */
    uint32_t taken, waits;
    int failed;
} pool_worker;

static void *pool_worker_run(void *arg)
{
    pool_worker *w = arg;
    int busy = 0, hungry = 0;
    for (;;) {
        uint32_t node, depth, idx, d;
        part_id state;
        enum pool_take r = search_pool_take(w->p, &busy, &hungry, &node, &state, &depth);
        if (r == POOL_WAIT) {
            w->waits++;
            sched_yield();
            continue;
        }
        if (r != POOL_WORK)
            return NULL;
        w->taken++;
        /* The path to it, through nodes other threads wrote without the
        ** pool's lock: state k + 1 at depth k. */
        pool_step *path;
        size_t len;
        if (search_pool_path(w->p, node, &path, &len) != 0 || len != (size_t)depth + 1) {
            w->failed = 1;
        } else {
            for (size_t k = 0; k < len; k++)
                if (path[k].state != (part_id)k + 1)
                    w->failed = 1;
            search_pool_path_free(path, len);
        }
        /* One child queued when added, the other kept, then handed over. */
        for (int c = 0; c < 2 && depth < POOL_TREE_DEPTH; c++)
            if (search_pool_add(w->p, &w->cursor, state + 1, node, NULL, 0, NULL, 0, c == 0,
                                &idx, &d) != 0 ||
                d != depth + 1 || (c == 1 && search_pool_queue(w->p, &idx, 1) != 0))
                w->failed = 1;
        if (search_pool_expanded(w->p, node) != 0)
            w->failed = 1;
    }
}

static void test_search_pool_threads(void)
{
    search_pool *p = search_pool_new(part_store_new(), 1);
    CHECK(p != NULL);
    if (p == NULL)
        return;
    uint32_t idx, d;
    CHECK(search_pool_add(p, NULL, 1, 0, NULL, 0, NULL, 0, 1, &idx, &d) == 0);
    pool_worker w[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (pool_worker){ .p = p };
        CHECK(pthread_create(&th[i], NULL, pool_worker_run, &w[i]) == 0);
    }
    uint32_t taken = 0, uncounted = 0;
    int failed = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        taken += w[i].taken;
        failed += w[i].failed;
        uncounted += w[i].cursor.uncounted;
        CHECK(w[i].cursor.uncounted < POOL_BLOCK);
    }
    uint32_t expected = (1u << (POOL_TREE_DEPTH + 1)) - 1;
    CHECK(failed == 0);
    CHECK(taken == expected);
    CHECK(search_pool_count(p, NULL) + uncounted == expected);
    CHECK(search_pool_count(p, &w[0].cursor) == search_pool_count(p, NULL) + w[0].cursor.uncounted);
    /* Every node expanded, in whatever order the threads ended them: the
    ** root (state 1) is finished. */
    CHECK(search_pool_is_finished(p, 1));
    int busy = 0, hb = 0;
    uint32_t node, depth;
    part_id state;
    CHECK(search_pool_take(p, &busy, &hb, &node, &state, &depth) == POOL_DONE);
    search_pool_release(p);
}

/* The guards across workers: two threads on a fresh shared pool each
** publish one half of a pair at once, and at least one of them must see
** both.  `half' is the thread's own half (search_pool_guard's bit),
** `seen' what its call answered. */
typedef struct guard_race {
    search_pool *p;
    atomic_int *ready;          /* both threads spin until it is 2 */
    uint32_t half;
    uint32_t seen;
} guard_race;

static void guard_start(atomic_int *ready)
{
    atomic_fetch_add(ready, 1);
    while (atomic_load(ready) < 2)
        ;
}

static void *half_adder(void *arg)
{
    guard_race *g = arg;
    guard_start(g->ready);
    g->seen = search_pool_guard(g->p, g->half);
    return NULL;
}

/* Races thread a (half ha) against thread b (half hb) 500 times, each on a
** fresh pool; the rounds in which `paired' says neither saw the other. */
static int race_guard(void *(*a)(void *), uint32_t ha, void *(*b)(void *), uint32_t hb,
                      int (*paired)(const guard_race *, const guard_race *))
{
    int missed = 0;
    for (int round = 0; round < 500; round++) {
        atomic_int ready = 0;
        search_pool *p = search_pool_new(part_store_new(), 1);
        if (p == NULL)
            return -1;
        guard_race ga = { p, &ready, ha, 0 }, gb = { p, &ready, hb, 0 };
        pthread_t ta, tb;
        CHECK(pthread_create(&ta, NULL, a, &ga) == 0);
        CHECK(pthread_create(&tb, NULL, b, &gb) == 0);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        missed += !paired(&ga, &gb);
        search_pool_release(p);
    }
    return missed;
}

static int either_saw_both(const guard_race *a, const guard_race *b)
{
    uint32_t both = a->half | b->half;
    return a->seen == both || b->seen == both;
}

/* The reductions' guards (search_pool_guard): a worker that adds a half
** gets every half added before, its own among them; of two workers adding
** the two halves of a pair at once, one sees both. */
static void test_search_pool_guard(void)
{
    search_pool *p = search_pool_new(part_store_new(), 0);
    CHECK(p != NULL);
    if (p == NULL)
        return;
    CHECK(search_pool_guard(p, 1) == 1);
    CHECK(search_pool_guard(p, 4) == 5);
    CHECK(search_pool_guard(p, 1) == 5);
    CHECK(search_pool_guard(p, 2) == 7);
    search_pool_release(p);
    CHECK(race_guard(half_adder, 1, half_adder, 2, either_saw_both) == 0);
}

/* Passed states with workers (search_pool_mark_passed, _pass_again): a
** passed state is new again only once finished, for one caller; then it
** is neither passed nor finished until marked again. */
static void *pass_claimer(void *arg)
{
    guard_race *g = arg;
    guard_start(g->ready);
    g->seen = (uint32_t)search_pool_pass_again(g->p, 10);
    return NULL;
}

static void test_search_pool_passed(void)
{
    search_pool *p = search_pool_new(part_store_new(), 0);
    CHECK(p != NULL);
    if (p == NULL)
        return;
    uint32_t idx, d;
    CHECK(search_pool_add(p, NULL, 10, 0, NULL, 0, NULL, 0, 1, &idx, &d) == 0 && idx == 0);
    CHECK(search_pool_pass_again(p, 10) == 0);          /* never passed */
    CHECK(search_pool_mark_passed(p, 10) == 0);
    CHECK(search_pool_pass_again(p, 10) == 0);          /* under way: visited */
    CHECK(search_pool_expanded(p, 0) == 0 && search_pool_is_finished(p, 10));
    CHECK(search_pool_pass_again(p, 11) == 0);
    CHECK(search_pool_pass_again(p, 10) == 1);
    CHECK(!search_pool_is_finished(p, 10));
    CHECK(search_pool_pass_again(p, 10) == 0);          /* claimed once */
    search_pool_release(p);
    /* Two workers meeting it at once: exactly one claims it. */
    int wrong = 0;
    for (int round = 0; round < 500; round++) {
        atomic_int ready = 0;
        p = search_pool_new(part_store_new(), 1);
        if (p == NULL || search_pool_add(p, NULL, 10, 0, NULL, 0, NULL, 0, 1, &idx, &d) != 0 ||
            search_pool_mark_passed(p, 10) != 0 || search_pool_expanded(p, 0) != 0) {
            wrong++;
            search_pool_release(p);
            break;
        }
        guard_race ga = { p, &ready, 0, 0 }, gb = { p, &ready, 0, 0 };
        pthread_t ta, tb;
        CHECK(pthread_create(&ta, NULL, pass_claimer, &ga) == 0);
        CHECK(pthread_create(&tb, NULL, pass_claimer, &gb) == 0);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        wrong += ga.seen + gb.seen != 1 || search_pool_is_finished(p, 10);
        search_pool_release(p);
    }
    CHECK(wrong == 0);
}


/* ------------------------------------------------------------------ */
/* the state on the wire (state_wire.c) and the distributed search     */
/* (search_cluster.c)                                                  */

/* Exports state `root` of store `from`, imports it into `to` (a context
** on another store), exports it from there: 1 when the bytes are the
** same both ways and a second import finds the state seen. */
static int wire_round_trip(const part_store *from, part_id root, trans_ctx *to)
{
    size_t n1, n2;
    uint8_t *b1 = state_wire_export_id(from, root, &n1);
    if (b1 == NULL)
        return 0;
    sys_state st;
    memset(&st, 0, sizeof st);
    const char *why = NULL;
    int ok = state_wire_import(to, b1, n1, &st, &why) == 0;
    int fresh = 0, again = 1;
    part_id r2 = ok ? sys_state_encode(to->ps, &st, &fresh) : 0;
    uint8_t *b2 = r2 ? state_wire_export_id(to->ps, r2, &n2) : NULL;
    ok = b2 != NULL && n1 == n2 && memcmp(b1, b2, n1) == 0;
    if (ok && state_wire_import(to, b2, n2, &st, &why) == 0)
        ok = sys_state_encode(to->ps, &st, &again) == r2 && !again;
    else
        ok = 0;
    sys_state_clear(&st);
    free(b1);
    free(b2);
    return ok;
}

/* Every state a search stored, exported and imported into a fresh store. */
static void wire_all_states(search *s, size_t *count)
{
    const part_store *ps = search_store(s);
    part_store *other = part_store_new();
    trans_ctx cx;
    sym_ctx(&cx, other);
    size_t n = part_store_count(ps), states = 0;
    for (part_id id = 1; id <= n; id++) {
        const part *p = part_store_get(ps, id);
        if (p == NULL || p->kind != PART_STATE)
            continue;
        states++;
        CHECK(wire_round_trip(ps, id, &cx));
    }
    *count = states;
    part_store_free(other);
}

/* A state that uses every field of sys_state.h: processes with links,
** monitors both ways, aliases, dictionaries, names and a group leader;
** a world with faults, node monitors, timers, the ether (by-name channels
** whose names `swap` interns in the other order, every signal kind, an
** envelope) and ETS tables. */
static void wire_rich_state(trans_ctx *cx, sys_state *st, int swap)
{
    part_store *ps = cx->ps;
    part_id na, nb;
    if (swap) {
        nb = sym_term(cx, "name_b", 1, 0, 0);
        na = sym_term(cx, "name_a", 1, 0, 0);
    } else {
        na = sym_term(cx, "name_a", 1, 0, 0);
        nb = sym_term(cx, "name_b", 1, 0, 0);
    }
    part_id m1 = sym_term(cx, "msg", 2, 0, 0), m2 = sym_term(cx, "other", 3, 0, 0);
    part_id msgs[3] = { m1, m2, m1 };
    proc a = mkproc(1, PROC_WAITING, sym_term(cx, "server", 1, 0, 0), sym_mailbox(ps, msgs, 3));
    a.flags = PF_TRAP_EXIT | PF_TIMEOUT | (5u << PF_TIMEOUT_SHIFT);
    a.dict = sym_term(cx, "dict", 2, 0, 0);
    a.name = na;
    proc b = mkproc(2, PROC_CHOICE, sym_term(cx, "choosing", 2, 0, 0), sym_mailbox(ps, NULL, 0));
    b.flags = 3u << PF_CHOICE_SHIFT;
    b.gl = 7;
    proc c = mkproc(3, PROC_INIT, sym_term(cx, "init", 3, 0, 0), sym_mailbox(ps, &m1, 1));
    memset(st, 0, sizeof *st);
    CHECK(sys_state_insert(st, &a) >= 0 && sys_state_insert(st, &b) >= 0 &&
          sys_state_insert(st, &c) >= 0);
    proc *pa = &st->procs[sys_state_find(st, 1)], *pb = &st->procs[sys_state_find(st, 2)];
    CHECK(proc_link_add(pa, 2) == 0 && proc_link_add(pa, 3) == 0 && proc_link_add(pb, 1) == 0);
    CHECK(monitor_add(&pa->mons, (monitor){ 5, 2, 0 }) == 0);
    CHECK(monitor_add(&pa->mons, (monitor){ 9, 3, m2 }) == 0);
    CHECK(monitor_add(&pb->monby, (monitor){ 5, 1, 0 }) == 0);
    CHECK(monitor_add(&pb->aliases, (monitor){ 11, ALIAS_REPLY, 0 }) == 0);
    st->down = 0;
    st->crashes = 1;
    st->kills = 2;
    st->uniq = 40;
    st->app_env = sym_term(cx, "env", 1, 0, 0);
    st->observer = sym_term(cx, "obs", 3, 0, 0);
    CHECK(sys_state_node_monitor(st, 1, 0, 1) == 0);
    CHECK(sys_state_node_monitor(st, 2, NODEMON_ALL | NODES_OPT_INFO, 1) == 0);
    uint32_t by_name = MAKE_KEY(0, KEY_BY_NAME);
    part_id sigs[8] = {
        signal_intern(ps, SIG_MSG, m1, 0, 0),
        signal_intern(ps, SIG_EXIT, m2, SIGF_LINK, 0),
        signal_intern(ps, SIG_LINK, 0, 0, 0),
        signal_intern(ps, SIG_MONITOR, 12, m2, 0),
        signal_intern(ps, SIG_DEMONITOR, 12, 0, 0),
        signal_intern(ps, SIG_DOWN, 13, 0, m1),
        signal_intern(ps, SIG_ALIAS_MSG, m2, 11, 0),
        0 };
    sigs[7] = envelope_intern(ps, 1, 3, 0, sigs[0]);
    for (int k = 0; k < 7; k++)
        CHECK(sys_state_enqueue(ps, st, 1, 2, 0, sigs[k]) == 0);
    CHECK(sys_state_enqueue(ps, st, 3, by_name, nb, sigs[0]) == 0);
    CHECK(sys_state_enqueue(ps, st, 3, by_name, na, sigs[6]) == 0);
    CHECK(sys_state_enqueue(ps, st, MAKE_KEY(0, KEY_NODE_CHAN), MAKE_KEY(0, KEY_NODE_CHAN), 0,
                            sigs[7]) == 0);
    CHECK(sys_state_enqueue(ps, st, KEY_TIMER | 14, 2, 0,
                            signal_intern(ps, SIG_MSG, m1, 1000, 0)) == 0);
    ets_table t = { .tid = 20, .owner = 1, .heir = 2, .heir_data = m2,
                    .name = sym_term(cx, "tab", 1, 0, 0), .data = sym_term(cx, "data", 3, 0, 0) };
    CHECK(sys_state_put_table(st, &t) == 0);
    CHECK(sys_state_flush(ps, st) == 0);
}

static void test_state_wire(void)
{
    /* The states of real searches: the model of test_search_model, and
    ** the same breadth-first. */
    search *s = new_search(0, 0);
    request q;
    drive_counts dc = { 0, 0, 0, 0, 0 };
    CHECK(start(s, 1, &q) == 0);
    CHECK(drive(s, &q, &dc) == REQ_DONE);
    size_t n = 0;
    wire_all_states(s, &n);
    CHECK(n == 8);
    search_free(s);

    /* The rich state, built in two stores that number its parts
    ** differently (the by-name channels' names in the other order). */
    part_store *pa = part_store_new(), *pb = part_store_new(), *pc = part_store_new();
    trans_ctx ca, cb, cc;
    sym_ctx(&ca, pa);
    sym_ctx(&cb, pb);
    sym_ctx(&cc, pc);
    sys_state sa, sb;
    wire_rich_state(&ca, &sa, 0);
    wire_rich_state(&cb, &sb, 1);
    int fresh;
    part_id ra = sys_state_encode(pa, &sa, &fresh), rb = sys_state_encode(pb, &sb, &fresh);
    CHECK(ra != 0 && rb != 0);
    size_t la = 0, lb = 0;
    uint8_t *wa = state_wire_export_id(pa, ra, &la), *wb = state_wire_export_id(pb, rb, &lb);
    CHECK(wa != NULL && wb != NULL && la == lb && memcmp(wa, wb, la) == 0);
    CHECK(state_wire_owner(wa, la, 2) == state_wire_owner(wb, lb, 2));
    CHECK(wire_round_trip(pa, ra, &cc) && wire_round_trip(pb, rb, &cc));
    /* A world without channels or tables (the unique-integer counter
    ** only): the importer sorts no channel array (UBSan: qsort of NULL). */
    sys_state plain;
    memset(&plain, 0, sizeof plain);
    proc lone = mkproc(1, PROC_INIT, sym_term(&ca, "lone", 1, 0, 0), sym_mailbox(pa, NULL, 0));
    CHECK(sys_state_insert(&plain, &lone) >= 0);
    plain.uniq = 3;
    part_id rp = sys_state_encode(pa, &plain, &fresh);
    CHECK(rp != 0 && wire_round_trip(pa, rp, &cc));
    sys_state_clear(&plain);
    /* The same state from the live struct. */
    size_t ls;
    uint8_t *ws = state_wire_export(pa, &sa, &ls);
    CHECK(ws != NULL && ls == la && memcmp(ws, wa, la) == 0);
    free(ws);
    /* Every term of the state is written once: {msg, Pid}, in two
    ** mailboxes and four signals, is inline once, back-referenced after. */
    int msgs = 0;
    for (size_t k = 0; k + 6 <= la; k++)
        msgs += memcmp(wa + k, "\x64\x00\x03msg", 6) == 0;
    CHECK(msgs == 1);

    /* Bad bytes: every truncation and every byte changed give a state or
    ** an error, never a crash (the sanitizers watch). */
    sys_state out;
    memset(&out, 0, sizeof out);
    const char *why;
    int imported = 0, refused = 0;
    for (size_t k = 0; k < la; k++) {
        why = NULL;
        if (state_wire_import(&cc, wa, k, &out, &why) == 0)
            imported++;
        else
            refused += why != NULL;
    }
    CHECK(imported == 0 && refused == (int)la);
    uint8_t *mut = xmalloc(la);
    static const uint8_t flips[] = { 0x01, 0x80, 0xff, 0x40, 0x7f };
    int decoded = 0;
    for (size_t k = 0; k < la; k++) {
        for (size_t f = 0; f < sizeof flips; f++) {
            memcpy(mut, wa, la);
            mut[k] ^= flips[f];
            why = NULL;
            if (state_wire_import(&cc, mut, la, &out, &why) == 0) {
                decoded++;
                CHECK(sys_state_encode(pc, &out, &fresh) != 0);
            } else {
                CHECK(why != NULL);
            }
        }
    }
    CHECK(decoded > 0);     /* some flips are still states (another pid) */
    free(mut);
    why = NULL;
    CHECK(state_wire_import(&cc, (const uint8_t *)"M", 1, &out, &why) == -1 && why != NULL);

    /* The transport form: a connection's dictionary sends each term once.
    ** The same state twice: the second time every term is a rank, and the
    ** receiver, reading them in order, gets the state both times. */
    wire_buf dict, t1, t2;
    memset(&dict, 0, sizeof dict);
    memset(&t1, 0, sizeof t1);
    memset(&t2, 0, sizeof t2);
    CHECK(state_wire_encode_for(pa, &sa, &dict, &t1) == 0);
    CHECK(state_wire_encode_for(pa, &sa, &dict, &t2) == 0);
    CHECK(t1.n == la && memcmp(t1.b, wa, la) == 0);   /* a fresh dictionary: canonical */
    CHECK(t2.n < la / 3);      /* 170 of 645 bytes: the structure alone */
    wire_dict rd = { NULL, 0, 0 };
    size_t lx;
    for (int k = 0; k < 2; k++) {
        wire_buf *t = k == 0 ? &t1 : &t2;
        why = NULL;
        CHECK(state_wire_decode_for(&cc, t->b, t->n, &rd, &out, &why) == 0);
        part_id r = sys_state_encode(pc, &out, &fresh);
        uint8_t *wx = r ? state_wire_export_id(pc, r, &lx) : NULL;
        CHECK(wx != NULL && lx == la && memcmp(wx, wa, la) == 0);
        free(wx);
    }
    /* Out of order (a fresh receiver): the ranks name no term. */
    wire_dict fresh_rd = { NULL, 0, 0 };
    why = NULL;
    CHECK(state_wire_decode_for(&cc, t2.b, t2.n, &fresh_rd, &out, &why) == -1 && why != NULL);
    for (size_t k = 0; k < t2.n; k++) {     /* truncated: an error */
        why = NULL;
        CHECK(state_wire_decode_for(&cc, t2.b, k, &rd, &out, &why) == -1);
    }
    state_wire_dict_free(&rd);
    state_wire_dict_free(&fresh_rd);
    state_wire_buf_free(&dict);
    state_wire_buf_free(&t1);
    state_wire_buf_free(&t2);
    sys_state_clear(&out);
    free(wa);
    free(wb);
    sys_state_clear(&sa);
    sys_state_clear(&sb);
    part_store_free(pa);
    part_store_free(pb);
    part_store_free(pc);
}

static search *new_cluster_search(uint32_t n, uint32_t me)
{
    search_config cfg = { .node = NODE, .nodelen = strlen(NODE), .creation = CREATION,
                          .check_deadlock = 1, .breadth_first = 1,
                          .cluster_n = n, .cluster_me = me };
    search *s = search_new(&cfg);
    if (s == NULL) {
        fprintf(stderr, "search_new failed\n");
        exit(2);
    }
    return s;
}

/* Moves every participant's outbox to the owners; the count moved. */
static size_t cluster_exchange(search **ss, uint32_t n)
{
    size_t moved = 0;
    for (uint32_t i = 0; i < n; i++) {
        const cluster_out *out;
        size_t k = search_cluster_outbox(ss[i], &out);
        for (size_t j = 0; j < k; j++) {
            const char *why = NULL;
            CHECK(out[j].owner != i && out[j].owner < n);
            CHECK(search_cluster_import(ss[out[j].owner], out[j].wire, out[j].wire_len, i,
                                        out[j].parent, out[j].depth, out[j].label,
                                        out[j].label_len, NULL, 0, &why) >= 0);
        }
        moved += k;
        search_cluster_taken(ss[i]);
    }
    return moved;
}

/* The model of test_search_model searched by n participants: the states
** and transitions add up to the sequential search's (8 and 10). */
static void cluster_model(uint32_t n)
{
    search *ss[4];
    request q[4];
    drive_counts dc = { 0, 0, 0, 0, 0 };
    for (uint32_t i = 0; i < n; i++) {
        ss[i] = new_cluster_search(n, i);
        CHECK(start(ss[i], 1, &q[i]) == 0);
    }
    int rounds = 0;
    for (;;) {
        for (uint32_t i = 0; i < n; i++) {
            if (q[i].kind == REQ_IDLE)
                CHECK(search_resume(ss[i], &q[i]) == 0);
            /* One participant is the plain breadth-first search. */
            CHECK(drive(ss[i], &q[i], &dc) == (n > 1 ? REQ_IDLE : REQ_DONE));
        }
        if (cluster_exchange(ss, n) == 0 || ++rounds > 100)
            break;
    }
    CHECK(dc.errors == 0);
    uint64_t states = 0, transitions = 0, sent = 0, received = 0;
    for (uint32_t i = 0; i < n; i++) {
        search_stats st = stats(ss[i]);
        cluster_stats cs;
        search_cluster_stats(ss[i], &cs);
        states += st.states;
        transitions += st.transitions;
        sent += cs.sent;
        received += cs.received;
        CHECK(cs.received_new <= cs.received);
    }
    CHECK(states == 8 && transitions == 10 && sent == received);
    if (n > 1)
        CHECK(sent > 0);
    for (uint32_t i = 0; i < n; i++)
        search_free(ss[i]);
}

/* Every node's path runs back through the other participant's segments
** to the root, each segment starting with the step from the other side:
** its labels number the node's depth (at most 4 in the model), and only
** the root has none. */
static void cluster_paths(void)
{
    search *ss[2];
    request q[2];
    drive_counts dc = { 0, 0, 0, 0, 0 };
    for (uint32_t i = 0; i < 2; i++) {
        ss[i] = new_cluster_search(2, i);
        CHECK(start(ss[i], 1, &q[i]) == 0);
    }
    for (int round = 0; round < 100; round++) {
        for (uint32_t i = 0; i < 2; i++) {
            if (q[i].kind == REQ_IDLE)
                CHECK(search_resume(ss[i], &q[i]) == 0);
            CHECK(drive(ss[i], &q[i], &dc) == REQ_IDLE);
        }
        if (cluster_exchange(ss, 2) == 0)
            break;
    }
    int roots = 0, hopped = 0;
    for (uint32_t i = 0; i < 2; i++) {
        search_stats st = stats(ss[i]);
        for (uint32_t node = 0; node < st.states; node++) {
            uint32_t at = i, index = node, steps = 0;
            int ended = 0;
            for (int hop = 0; hop < 16 && !ended; hop++) {
                pool_step *path;
                size_t len;
                uint32_t from = 0, from_index = 0;
                int o = search_cluster_origin(ss[at], index, &from, &from_index);
                if (o < 0 || search_cluster_labels(ss[at], index, &path, &len) != 0) {
                    CHECK(0);
                    break;
                }
                for (size_t k = 0; k < len; k++)
                    steps += path[k].label != NULL;
                CHECK((o == 1) == (path[0].label != NULL));
                search_pool_path_free(path, len);
                hopped += hop > 0;
                if (o == 0)
                    ended = 1;
                at = from;
                index = from_index;
            }
            CHECK(ended && steps <= 4);
            roots += steps == 0;
        }
    }
    CHECK(roots == 1 && hopped > 0);
    for (uint32_t i = 0; i < 2; i++)
        search_free(ss[i]);
}

/* A connection's labels: whole once, an index after, read back in order;
** an index or a tag of no label is an error. */
static void test_label_dict(void)
{
    label_sent snd;
    label_read rcv;
    memset(&snd, 0, sizeof snd);
    memset(&rcv, 0, sizeof rcv);
    const uint8_t a[] = { 131, 100, 0, 1, 'a' }, b[] = { 131, 97, 7 };
    const uint8_t *labels[] = { a, b, a, a, b, (const uint8_t *)"" };
    size_t lens[] = { sizeof a, sizeof b, sizeof a, sizeof a, sizeof b, 0 };
    size_t sizes[] = { sizeof a + 1, sizeof b + 1, 5, 5, 5, 1 };
    const char *why;
    for (int k = 0; k < 6; k++) {
        size_t n;
        uint8_t *enc = label_dict_send(&snd, labels[k], lens[k], &n);
        CHECK(enc != NULL && n == sizes[k]);
        const uint8_t *got;
        size_t gn;
        why = NULL;
        CHECK(enc != NULL && label_dict_read(&rcv, enc, n, &got, &gn, &why) == 0 &&
              gn == lens[k] && (gn == 0 || memcmp(got, labels[k], gn) == 0));
        free(enc);
    }
    CHECK(snd.n == 3 && rcv.n == 3);
    const uint8_t far[] = { 1, 3, 0, 0, 0 }, tag[] = { 2, 0 };
    const uint8_t *got;
    size_t gn;
    why = NULL;
    CHECK(label_dict_read(&rcv, far, sizeof far, &got, &gn, &why) == -1 && why != NULL);
    why = NULL;
    CHECK(label_dict_read(&rcv, tag, sizeof tag, &got, &gn, &why) == -1 && why != NULL);
    why = NULL;
    CHECK(label_dict_read(&rcv, tag, 0, &got, &gn, &why) == -1 && why != NULL);
    /* Many labels: the sender's table grows, every index stays right. */
    for (uint32_t k = 0; k < 2000; k++) {
        uint8_t l[4] = { (uint8_t)k, (uint8_t)(k >> 8), 7, 9 };
        size_t n;
        uint8_t *enc = label_dict_send(&snd, l, sizeof l, &n);
        CHECK(enc != NULL && label_dict_read(&rcv, enc, n, &got, &gn, &why) == 0 &&
              gn == 4 && memcmp(got, l, 4) == 0);
        free(enc);
    }
    for (uint32_t k = 0; k < 2000; k += 97) {
        uint8_t l[4] = { (uint8_t)k, (uint8_t)(k >> 8), 7, 9 };
        size_t n;
        uint8_t *enc = label_dict_send(&snd, l, sizeof l, &n);
        CHECK(enc != NULL && n == 5 && label_dict_read(&rcv, enc, n, &got, &gn, &why) == 0 &&
              gn == 4 && memcmp(got, l, 4) == 0);
        free(enc);
    }
    label_sent_free(&snd);
    label_read_free(&rcv);
}

static void test_search_cluster(void)
{
    test_label_dict();
    cluster_model(1);
    cluster_model(2);
    cluster_model(3);
    cluster_paths();
    /* The configurations a share of a distributed search refuses. */
    search_config cfg = { .node = NODE, .nodelen = strlen(NODE), .creation = CREATION,
                          .breadth_first = 0, .cluster_n = 2, .cluster_me = 0 };
    CHECK(search_new(&cfg) == NULL);
    cfg.breadth_first = 1;
    cfg.cluster_me = 2;
    CHECK(search_new(&cfg) == NULL);
    cfg.cluster_me = 1;
    cfg.expand_only = 1;
    CHECK(search_new(&cfg) == NULL);
    /* The partial-order reduction is taken (its proviso is decided
    ** locally: search_cluster.h). */
    cfg.expand_only = 0;
    cfg.reduction = 1;
    search *s = search_new(&cfg);
    CHECK(s != NULL);
    if (s != NULL)
        search_free(s);
}

int main(int argc, char **argv)
{
    test_huge_alloc();
    test_part_store();
    test_dead_payload_table();
    test_part_store_segments();
    test_part_store_threads();
    test_search_pool_single();
    test_search_pool_threads();
    test_search_pool_guard();
    test_search_pool_passed();
    /* `c_tests part_store`: the tests of what threads share, the store and
    ** the breadth-first pool, only (the ThreadSanitizer build, where the
    ** rest would only be slow). */
    if (argc > 1 && strcmp(argv[1], "part_store") == 0) {
        printf("%lu passed, %lu failed\n", g_passed, g_failed);
        return g_failed != 0;
    }
    test_etf_simple();
    test_etf_pids();
    test_etf_fun();
    test_etf_mutations();
    test_etf_order();
    test_etf_sort_maps();
    test_etf_equal_runs();
    test_etf_ets_sort();
    test_etf_order_mutations();
    test_sys_state();
    test_por_sends();
    test_search_single();
    test_search_deadlock();
    test_search_idle();
    test_expand_marks_safe();
    test_fault_targets();
    test_search_fresh_pids();
    test_search_match();
    test_search_timeout();
    test_search_model();
    test_search_links();
    test_search_errors();
    test_search_growth();
    test_search_options();
    test_search_monitors();
    test_visited_hash_compact();
    test_visited_bitstate();
    test_search_lossy();
    test_search_yield();
    test_pending_appends();
    test_step_cache_store();
    test_step_cache_search();
    test_por_step_safe();
    test_por_renamed();
    test_por_demonitor();
    test_por_monitor();
    test_por_named();
    test_search_arming();
    test_symmetry();
    test_stack_set();
    test_state_wire();
    test_search_cluster();
    printf("%lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed != 0;
}
