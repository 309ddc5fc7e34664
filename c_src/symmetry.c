/*
** symmetry.c: the representative of a state's orbit under pid permutation
** (see symmetry.h for why a renaming is an automorphism and what the user
** asserts).  Owns the pid-free signatures of processes (memoised per term
** part) and the choice of the renaming; sym_rename.c applies it to the
** whole state (process records, every term, the ether, node monitors, ETS
** tables, timers).
**
** The representative, after Ip & Dill's scalarset normalisation in Murphi:
**  1. each live process gets a signature free of pid numbers: status,
**     flags, node, the hashes of its continuation, dictionary, mailbox and
**     name with every simulated pid and ref creator masked, and the counts
**     of its links, monitors and aliases;
**  2. colour refinement to a fixpoint: each round a signature is
**     combined with those of the processes its terms name, in order of
**     occurrence (links and monitors as multisets, their order being pid
**     order), until a round splits no class (refine);
**  3. the processes of each node are ordered by class (class_of), then
**     by their rank in a breadth-first walk of the terms from the
**     processes that take no part, which restarts at the least refined
**     signature when it runs dry (walk: so "the first client in the
**     server's mailbox" gets the smaller number whichever client it is),
**     the old pid deciding only ties of a restart;
**  4. the i-th process of a node takes the i-th smallest number no fixed
**     pid holds; the numbers not in use follow in order (node_pairs).
** The choice must be a function of the orbit, not of the member given:
** a tie broken by pid gives two renamings of one state two
** representatives, and the search then stores more states than it would
** without the reduction (spawn_chain(8): 1,677 instead of 1,024 with one
** round of refinement and the walk in pid order).
** Dead processes still named by terms (ghosts) are of the plain class; the
** entry process, pids of 2^14 and more, and processes whose pids or refs
** occur where a renaming would reorder what cannot be re-sorted keep their
** numbers (pin_all: ETS object keys, keys of large maps or of maps with a
** key type etf_order.c does not order, with symmetry 3 every map key), and
** so do processes a map names by a pid-free key (term_of: for cost).
*/
#include "symmetry.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "etf_order.h"
#include "etf_scan.h"
#include "symmetry_internal.h"

symmetry *symmetry_new(int pin_keys)
{
    symmetry *sy = calloc(1, sizeof(symmetry));
    if (sy != NULL)
        sy->pin_keys = pin_keys;
    return sy;
}

void symmetry_free(symmetry *sy)
{
    if (sy == NULL)
        return;
    free(sy->info);
    free(sy->keys);
    free(sy->mkeys);
    free(sy->buf);
    free(sy->buf2);
    free(sy->wh);
    free(sy->koff);
    free(sy->runs);
    free(sy->ids);
    free(sy);
}

size_t symmetry_bytes(const symmetry *sy)
{
    return sizeof *sy + sy->capinfo * sizeof *sy->info +
           (sy->capkeys + sy->capmkeys) * sizeof *sy->keys + sy->capbuf +
           sy->capbuf2 + sy->capwh + sy->capids * sizeof *sy->ids +
           sy->capkoff * sizeof *sy->koff + sy->capruns * sizeof *sy->runs;
}

uint64_t symmetry_renamed(const symmetry *sy)
{
    return sy->renamed;
}

uint32_t symmetry_max_group(const symmetry *sy)
{
    return sy->max_group;
}

/*
** Step 1: the pid-free hash of a term.
*/

static int mask_visit(void *ctx, uint32_t key, uint8_t *word, int where)
{
    symmetry *sy = ctx;
    size_t at = sy->nkeys - sy->kbase;
    if (sym_grow((void **)&sy->keys, &sy->capkeys, sy->nkeys + 1, sizeof *sy->keys) ||
        sym_grow((void **)&sy->wh, &sy->capwh, at + 1, 1))
        return -1;
    sy->keys[sy->nkeys++] = key;
    sy->wh[at] = (uint8_t)where;
    if (sy->walkbase != NULL) {
        if (sym_grow((void **)&sy->koff, &sy->capkoff, at + 1, sizeof *sy->koff))
            return -1;
        sy->koff[at] = (size_t)(word - sy->walkbase);
    }
    sym_put_be32(word, 0);
    return 0;
}

/* The runs of equal pairs of the masked, sorted term in buf[0..len), whose
** keys from sy->kbase on were walked with their offsets (sy->koff), as
** sym_runs from sy->runs[*roff] on: outermost runs only (a run nested in
** an equal pair moves with it), those whose pairs hold keys.  0, or -1 when
** out of memory or malformed. */
static int record_runs(symmetry *sy, const uint8_t *buf, size_t len, uint32_t *roff,
                       uint32_t *rn)
{
    etf_run *v;
    size_t n, nk = sy->nkeys - sy->kbase, j = 0, past = 0;
    *roff = (uint32_t)sy->nruns;
    *rn = 0;
    if (etf_equal_runs(buf, len, &v, &n) != 0)
        return -1;
    for (size_t r = 0; r < n; r++) {
        if (v[r].start < past)
            continue;
        past = v[r].end;
        while (j < nk && sy->koff[j] < v[r].start)
            j++;
        size_t first = j;
        while (j < nk && sy->koff[j] < v[r].end)
            j++;
        size_t count = j - first;
        if (count == 0 || count % v[r].npairs != 0)
            continue;
        if (sym_grow((void **)&sy->runs, &sy->capruns, sy->nruns + 1, sizeof *sy->runs)) {
            free(v);
            return -1;
        }
        sy->runs[sy->nruns++] = (sym_run){ (uint32_t)first, v[r].npairs,
                                           (uint32_t)(count / v[r].npairs) };
        (*rn)++;
    }
    free(v);
    return 0;
}

/* realloc leaves new memory uninitialised: the memo's `done' flags must
** be clear for ids never seen, so new slots are zeroed as the table grows. */
static int info_reserve(symmetry *sy, part_id id)
{
    size_t old = sy->capinfo;
    if (sym_grow((void **)&sy->info, &sy->capinfo, (size_t)id + 1, sizeof *sy->info))
        return -1;
    if (sy->capinfo > old)
        memset(sy->info + old, 0, (sy->capinfo - old) * sizeof *sy->info);
    return 0;
}

/* The memo entry of term part id (a static empty one for 0); NULL when out
** of memory or not a term.  Valid until the next call (sy->info grows). */
static const term_info *term_of(symmetry *sy, const trans_ctx *cx, part_id id)
{
    static const term_info none = { .done = 1 };
    if (id == 0)
        return &none;
    if (info_reserve(sy, id) != 0)
        return NULL;
    if (sy->info[id].done)
        return &sy->info[id];
    const part *p = part_store_get(cx->ps, id);
    if (p == NULL || p->kind != PART_TERM)
        return NULL;
    term_info ti = { .off = (uint32_t)sy->nkeys, .moff = (uint32_t)sy->nmkeys,
                     .roff = (uint32_t)sy->nruns, .done = 1 };
    if (p->npids == 0) {
        ti.hash = XXH3_64bits(p->data, p->len);
    } else {
        if (sym_grow((void **)&sy->buf, &sy->capbuf, p->len, 1))
            return NULL;
        memcpy(sy->buf, p->data, p->len);
        size_t before = sy->nkeys;
        sy->kbase = before;
        if (etf_walk_keys(sy->buf, p->len, &cx->names.nodes, cx->names.creation,
                          mask_visit, sy) != 0) {
            sy->nkeys = before;
            return NULL;
        }
        /* Pids in small maps' keys: their pairs move when they are renamed,
        ** so the pairs of the masked term are sorted again (the hash is then
        ** the orbit's) and the keys taken in that order, from a copy
        ** permuted alike; when the maps cannot be sorted, those pids keep
        ** their numbers. */
        int inkey = 0, sortable = 1;
        for (size_t j = 0; j < sy->nkeys - before; j++)
            inkey |= sy->wh[j] & ETF_IN_MAP_KEY;
        if (inkey && (sy->pin_keys || etf_sort_maps(sy->buf, p->len, cx->names.creation, 1) != 0))
            sortable = 0;
        if (inkey && sortable) {
            if (sym_grow((void **)&sy->buf2, &sy->capbuf2, p->len, 1))
                goto fail;
            memcpy(sy->buf2, p->data, p->len);
            if (etf_sort_maps_with(sy->buf, sy->buf2, p->len, cx->names.creation) != 0)
                goto fail;
            sy->nkeys = before;
            sy->walkbase = sy->buf2;
            int bad = etf_walk_keys(sy->buf2, p->len, &cx->names.nodes, cx->names.creation,
                                    mask_visit, sy) != 0;
            sy->walkbase = NULL;
            if (bad || record_runs(sy, sy->buf, p->len, &ti.roff, &ti.rn) != 0)
                goto fail;
        }
        /* Pinned: keys of large maps, of maps that cannot be sorted, and
        ** pids a map holds as the value of a pid-free key: a process the map
        ** names by a role (a one_for_one supervisor's children by id, as
        ** #child records) is told apart from its peers by that name, and
        ** renaming it merges nothing (the locker(aEx5,1): the same 644,684
        ** states, 843,634 of them renamed, 9 times the CPU; locker_buggy's
        ** violation found after 94,939 states instead of 85, the renamed
        ** states being explored in another order). */
        for (size_t j = 0; j < sy->nkeys - before; j++) {
            if (!(sy->wh[j] & (ETF_IN_BIG_MAP_KEY | ETF_IN_NAMED_VALUE)) &&
                (sortable || !(sy->wh[j] & ETF_IN_MAP_KEY)))
                continue;
            if (sym_grow((void **)&sy->mkeys, &sy->capmkeys, sy->nmkeys + 1,
                         sizeof *sy->mkeys))
                goto fail;
            sy->mkeys[sy->nmkeys++] = sy->keys[before + j];
        }
        ti.hash = XXH3_64bits(sy->buf, p->len);
        ti.n = (uint32_t)(sy->nkeys - before);
        ti.mn = (uint32_t)(sy->nmkeys - ti.moff);
        goto ok;
    fail:
        sy->nkeys = before;
        sy->nmkeys = ti.moff;
        sy->nruns = ti.roff;
        return NULL;
    }
ok:
    sy->info[id] = ti;
    return &sy->info[id];
}

/*
** Steps 1-3: signatures and the order.
*/

/* A pid that takes part: a live process (index < the state's nprocs) or a
** ghost, a dead process's pid still named by some term (its number is in
** use, so it may trade places with any other number in use: the set of
** numbers in use, all least-fresh numbering looks at, stays the same). */
typedef struct cand {
    uint32_t idx;       /* process index, or nprocs + ghost index;
                           UINT32_MAX: fixed */
    uint32_t node;
    uint64_t cls;       /* the class it may trade places within */
    uint64_t sig1, sig2;
    uint64_t col;       /* the colour others see it by (key_value) */
    uint32_t rank;      /* first occurrence in the walk, UINT32_MAX: none */
    uint32_t pid;
} cand;

typedef struct canon_ctx {
    symmetry *sy;
    const trans_ctx *cx;
    const sys_state *st;
    cand *c;            /* live processes by index, then the ghosts */
    uint32_t *ghosts;   /* the ghosts' keys, sorted */
    uint32_t nghosts;
    uint32_t self;      /* the process whose terms are being hashed */
    uint32_t *pinned;   /* pid keys that keep their numbers (pin_all) */
    size_t npinned, cappinned;
} canon_ctx;

/* Whether candidate i takes part. */
static int is_cand(const canon_ctx *k, int i)
{
    return i >= 0 && k->c[i].idx != UINT32_MAX;
}

/* The index of the first of v[0..n) (sorted) that is not below x. */
static size_t lower_bound(const uint32_t *v, size_t n, uint32_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The pid key a key belongs to: a pid's own, a ref's creator's (its
** number's high bits, see etf_scan.h; number 0 is the shared region). */
static uint32_t owner_key(uint32_t key)
{
    uint32_t pk = key & ~ETF_REF_TAG;
    if (key & ETF_REF_TAG)
        pk = MAKE_KEY(KEY_NODE(pk), KEY_NUM(pk) >> ETF_REF_COUNTER_BITS);
    return pk;
}

/* The candidate index of pid key pk, or -1. */
static int find(const canon_ctx *k, uint32_t pk)
{
    int i = sys_state_find(k->st, pk);
    if (i >= 0)
        return i;
    size_t lo = lower_bound(k->ghosts, k->nghosts, pk);
    return lo < k->nghosts && k->ghosts[lo] == pk ? (int)(k->st->nprocs + lo) : -1;
}

/* The refined value of a key process `self` names: a candidate by its
** signature (or as itself), any other key as it is. */
static uint64_t key_value(const canon_ctx *k, uint32_t key)
{
    int is_ref = (key & ETF_REF_TAG) != 0;
    uint32_t pk = owner_key(key);
    uint32_t counter = is_ref ? KEY_NUM(key) & (ETF_REF_COUNTER_LIMIT - 1) : 0;
    if (is_ref && KEY_NUM(pk) == 0)
        return sym_mix(4, key);
    int i = find(k, pk);
    if (!is_cand(k, i))
        return sym_mix(is_ref ? 4 : 2, key);
    uint64_t who = (uint32_t)i == k->self ? 1 : sym_mix(3, k->c[i].col);
    return sym_mix(sym_mix(who, is_ref), counter);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The run of ti that starts at its key j, *r (the runs before it) then
** past it; NULL when none starts there. */
static const sym_run *run_at(const symmetry *sy, const term_info *ti, uint32_t *r, uint32_t j)
{
    if (*r >= ti->rn || sy->runs[ti->roff + *r].first != j)
        return NULL;
    return &sy->runs[ti->roff + (*r)++];
}

/* The refined value of pair `pair' of run r of the term whose keys start
** at keys[off]: its keys' values in order. */
static uint64_t pair_value(const canon_ctx *k, uint32_t off, const sym_run *r, uint32_t pair)
{
    uint64_t h = r->width;
    uint32_t from = off + r->first + pair * r->width;
    for (uint32_t j = 0; j < r->width; j++)
        h = sym_mix(h, key_value(k, k->sy->keys[from + j]));
    return h;
}

static uint64_t term_refined(canon_ctx *k, part_id id, int *err)
{
    const term_info *ti = term_of(k->sy, k->cx, id);
    if (ti == NULL) {
        *err = 1;
        return 0;
    }
    uint64_t h = ti->hash, pv[ETF_SMALL_MAP];
    uint32_t r = 0;
    for (uint32_t j = 0; j < ti->n;) {
        const sym_run *run = run_at(k->sy, ti, &r, j);
        if (run != NULL) {
            /* Equal pairs: a multiset of their values. */
            for (uint32_t q = 0; q < run->npairs; q++)
                pv[q] = pair_value(k, ti->off, run, q);
            sym_sort(pv, run->npairs, sizeof *pv, cmp_u64);
            for (uint32_t q = 0; q < run->npairs; q++)
                h = sym_mix(h, pv[q]);
            j += run->npairs * run->width;
            continue;
        }
        h = sym_mix(h, key_value(k, k->sy->keys[ti->off + j]));
        j++;
    }
    return h;
}

/* The hash of a multiset of values (sorted first: links and monitors are
** kept in pid or ref order, which is no property of the process). */
static uint64_t multiset(uint64_t *v, uint32_t n)
{
    sym_sort(v, n, sizeof *v, cmp_u64);
    uint64_t h = n;
    for (uint32_t j = 0; j < n; j++)
        h = sym_mix(h, v[j]);
    return h;
}

static uint64_t monitors_refined(canon_ctx *k, const monitor_set *ms, int pids,
                                 uint64_t *tmp, int *err)
{
    for (uint32_t j = 0; j < ms->n; j++) {
        uint64_t h = key_value(k, ms->m[j].ref | ETF_REF_TAG);
        if (pids)
            h = sym_mix(h, key_value(k, ms->m[j].pid));
        else
            h = sym_mix(h, ms->m[j].pid);   /* alias mode */
        if (ms->m[j].item != 0 && pids)
            h = sym_mix(h, term_refined(k, ms->m[j].item, err));
        tmp[j] = h;
    }
    return multiset(tmp, ms->n);
}

static uint64_t sig1_of(canon_ctx *k, const proc *p, int *err)
{
    symmetry *sy = k->sy;
    const trans_ctx *cx = k->cx;
    uint64_t h = sym_mix(sym_mix(p->status, p->flags), KEY_NODE(p->pid));
    const term_info *t;
    part_id terms[3] = { p->cont, p->dict, p->name };
    for (int j = 0; j < 3; j++) {
        if ((t = term_of(sy, cx, terms[j])) == NULL) {
            *err = 1;
            return 0;
        }
        h = sym_mix(h, t->hash);
    }
    uint32_t n = mailbox_length(cx->ps, p->mailbox);
    h = sym_mix(h, n);
    for (uint32_t j = 0; j < n; j++) {
        if ((t = term_of(sy, cx, mailbox_at(cx->ps, p->mailbox, j))) == NULL) {
            *err = 1;
            return 0;
        }
        h = sym_mix(h, t->hash);
    }
    h = sym_mix(h, (uint64_t)p->nlinks << 32 | p->mons.n);
    h = sym_mix(h, (uint64_t)p->monby.n << 32 | p->aliases.n);
    return sym_mix(h, p->gl != 0);
}

/* Whether an initial call is proc_lib's ({'mce$proc_lib', init_p, _}, as
** the runtime spawns OTP processes): such a process writes
** '$initial_call' and '$ancestors' into its dictionary when it starts. */
static int by_proc_lib(const part_store *ps, part_id cont)
{
    static const char *const names[2] = { "mce$proc_lib", "proc_lib" };
    const part *c = part_store_get(ps, cont);
    if (c == NULL || c->len < 5 || c->data[1] != 104 || c->data[2] != 3)
        return 0;
    const uint8_t *a = c->data + 3;
    size_t len, at;
    if (a[0] == 100 || a[0] == 118) {
        len = (size_t)a[1] << 8 | a[2];
        at = 3;
    } else if (a[0] == 115 || a[0] == 119) {
        len = a[1];
        at = 2;
    } else {
        return 0;
    }
    if (3 + at + len > c->len)
        return 0;
    for (int j = 0; j < 2; j++)
        if (strlen(names[j]) == len && memcmp(a + at, names[j], len) == 0)
            return 1;
    return 0;
}

/* The class of a process: only processes of one class trade places.  A
** scalarset in Ip & Dill's sense is a set of processes spawned by the same
** code; the state does not keep how a process was spawned, so the class
** is what of it lasts in the process: its node, registered name and
** dictionary (proc_lib keeps '$initial_call' and '$ancestors' there),
** pid-free, and for a process proc_lib has spawned but that has not run
** yet, its initial call (the dictionary it is about to write).  Trading places between processes of different roles would be
** sound too, but a role's pid then depends on the path to the state (the
** refs a process leaves behind keep its number after it dies), so states
** that differ only in that would be stored apart. */
static uint64_t class_of(canon_ctx *k, const proc *p, int *err)
{
    const term_info *d = term_of(k->sy, k->cx, p->dict);
    if (d == NULL) {
        *err = 1;
        return 0;
    }
    uint64_t h = sym_mix(KEY_NODE(p->pid), d->hash);
    if (p->status == PROC_INIT && by_proc_lib(k->cx->ps, p->cont)) {
        const term_info *c = term_of(k->sy, k->cx, p->cont);
        if (c == NULL) {
            *err = 1;
            return 0;
        }
        h = sym_mix(h, c->hash);
    }
    const term_info *nm = term_of(k->sy, k->cx, p->name);
    if (nm == NULL) {
        *err = 1;
        return 0;
    }
    return sym_mix(h, nm->hash);
}

static uint64_t sig2_of(canon_ctx *k, uint32_t i, uint64_t *tmp, int *err)
{
    const proc *p = &k->st->procs[i];
    k->self = i;
    uint64_t h = k->c[i].col;
    h = sym_mix(h, term_refined(k, p->cont, err));
    h = sym_mix(h, term_refined(k, p->dict, err));
    uint32_t n = mailbox_length(k->cx->ps, p->mailbox);
    for (uint32_t j = 0; j < n; j++)
        h = sym_mix(h, term_refined(k, mailbox_at(k->cx->ps, p->mailbox, j), err));
    for (uint32_t j = 0; j < p->nlinks; j++)
        tmp[j] = key_value(k, p->links[j]);
    h = sym_mix(h, multiset(tmp, p->nlinks));
    h = sym_mix(h, monitors_refined(k, &p->mons, 1, tmp, err));
    h = sym_mix(h, monitors_refined(k, &p->monby, 1, tmp, err));
    h = sym_mix(h, monitors_refined(k, &p->aliases, 0, tmp, err));
    if (p->gl != 0)
        h = sym_mix(h, key_value(k, p->gl ^ DEFAULT_GL_KEY));
    return h;
}

static int cmp_sig1(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    if (x->sig1 != y->sig1)
        return x->sig1 < y->sig1 ? -1 : 1;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The walk order: by refined signature, then old pid. */
static int cmp_walk(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->sig2 != y->sig2)
        return x->sig2 < y->sig2 ? -1 : 1;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The final order: class, then rank (every candidate has its own).  Any
** order that is a function of the orbit merges as much as any other; the
** walk's follows who names whom, mostly the order in which the processes
** were spawned, so the representative keeps the program's own numbering
** where it can, and partial-order reduction, whose choices follow pid
** order, chooses on it as on the plain state (spawn_chain(4) with
** `granularity => small': 264 states plain, 277 ordered by signature
** first, 203 by rank). */
static int cmp_final(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    if (x->cls != y->cls)
        return x->cls < y->cls ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

typedef struct pair_at {
    uint64_t value;
    uint32_t pair;
} pair_at;

static int cmp_pair_at(const void *a, const void *b)
{
    const pair_at *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return x->pair < y->pair ? -1 : x->pair > y->pair;
}

static void rank_key(canon_ctx *k, uint32_t key, uint32_t *next)
{
    int q = find(k, owner_key(key));
    if (is_cand(k, q) && (uint32_t)q != k->self && k->c[q].rank == UINT32_MAX)
        k->c[q].rank = (*next)++;
}

/* Step 3's walk: ranks the candidates named by the terms of process i. */
static void rank_term(canon_ctx *k, part_id id, uint32_t *next, int *err)
{
    const term_info *ti = term_of(k->sy, k->cx, id);
    if (ti == NULL) {
        *err = 1;
        return;
    }
    uint32_t r = 0;
    for (uint32_t j = 0; j < ti->n;) {
        const sym_run *run = run_at(k->sy, ti, &r, j);
        if (run != NULL) {
            /* Equal pairs, by their values (then as they stand, by pid:
            ** values that tie are of processes refinement cannot tell
            ** apart). */
            pair_at order[ETF_SMALL_MAP];
            for (uint32_t q = 0; q < run->npairs; q++)
                order[q] = (pair_at){ pair_value(k, ti->off, run, q), q };
            sym_sort(order, run->npairs, sizeof *order, cmp_pair_at);
            for (uint32_t q = 0; q < run->npairs; q++)
                for (uint32_t w = 0; w < run->width; w++)
                    rank_key(k, k->sy->keys[ti->off + run->first + order[q].pair * run->width + w],
                             next);
            j += run->npairs * run->width;
            continue;
        }
        rank_key(k, k->sy->keys[ti->off + j], next);
        j++;
    }
}

static int cmp_pair(const void *a, const void *b)
{
    const sym_pair *x = a, *y = b;
    return x->from < y->from ? -1 : x->from > y->from;
}

/* Pins the pid key a key belongs to: its process (or ghost) takes no
** part, and node_pairs keeps its number (a ref's creator may be a free
** number, which would otherwise move with the free numbers). */
static int pin_key(canon_ctx *k, uint32_t key)
{
    uint32_t pk = owner_key(key);
    int q = find(k, pk);
    if (q >= 0)
        k->c[q].idx = UINT32_MAX;
    if (sym_grow((void **)&k->pinned, &k->cappinned, k->npinned + 1, sizeof *k->pinned))
        return -1;
    k->pinned[k->npinned++] = pk;
    return 0;
}

/* Pins the keys of term id that must keep their numbers: those in a key of
** a map whose order renaming would break beyond repair (term_of). */
static void pin_term(canon_ctx *k, part_id id, int *err)
{
    if (id == 0 || *err)
        return;
    const term_info *ti = term_of(k->sy, k->cx, id);
    if (ti == NULL) {
        *err = 1;
        return;
    }
    uint32_t moff = ti->moff, mn = ti->mn;   /* ti moves as the memo grows */
    for (uint32_t j = 0; j < mn && !*err; j++)
        *err = pin_key(k, k->sy->mkeys[moff + j]) != 0;
}

/* Pins the pids and refs in the keys of an ETS table's objects: mce_ets
** keeps the objects in key order, which first/next, tab2list, match and
** select show (etf_ets_keys); pids elsewhere in the objects are renamed
** (the order of the keys does not change). */
static void pin_ets_keys(canon_ctx *k, part_id data, int *err)
{
    const part *p = data && !*err ? part_store_get(k->cx->ps, data) : NULL;
    if (p == NULL || p->npids == 0)
        return;
    /* Renamed keys are sorted again (sym_rename.c), unless the search pins
    ** keys (an iteration in key order was seen: mce_rt_order) or a key is
    ** of a type etf_order.c does not order. */
    if (!k->sy->pin_keys &&
        etf_ets_sort((uint8_t *)p->data, p->len, k->cx->names.creation, 1) == 0)
        return;
    uint8_t *keys;
    size_t n;
    etf_pid_sink sink = { NULL, 0, 0 };
    if (etf_ets_keys(p->data, p->len, &keys, &n) != 0) {
        *err = 1;
        return;
    }
    if (etf_scan_keys(keys, n, &k->cx->names.nodes, k->cx->names.creation, &sink) != 0)
        *err = 1;
    for (uint32_t j = 0; j < sink.n && !*err; j++)
        *err = pin_key(k, sink.pids[j]) != 0;
    free(sink.pids);
    free(keys);
}

static void pin_monitors(canon_ctx *k, const monitor_set *ms, int *err)
{
    for (uint32_t j = 0; j < ms->n; j++)
        pin_term(k, ms->m[j].item, err);
}

/* Every term of the state sym_rename.c renames, for its pins. */
static void pin_all(canon_ctx *k, int *err)
{
    const sys_state *st = k->st;
    const part_store *ps = k->cx->ps;
    for (uint32_t i = 0; i < st->nprocs && !*err; i++) {
        const proc *p = &st->procs[i];
        pin_term(k, p->cont, err);
        pin_term(k, p->dict, err);
        pin_term(k, p->name, err);
        pin_monitors(k, &p->mons, err);
        pin_monitors(k, &p->monby, err);
        uint32_t m = mailbox_length(ps, p->mailbox);
        for (uint32_t j = 0; j < m && !*err; j++)
            pin_term(k, mailbox_at(ps, p->mailbox, j), err);
    }
    for (uint32_t i = 0; i < st->nchans && !*err; i++) {
        uint32_t m = mailbox_length(ps, st->chans[i].queue);
        for (uint32_t j = 0; j < m && !*err; j++) {
            uint32_t sig[4], env[4];
            part_id id = mailbox_at(ps, st->chans[i].queue, j);
            if (envelope_get(ps, id, env) == 0)
                id = env[3];
            if (signal_get(ps, id, sig) != 0)
                continue;
            if (sig[0] == SIG_MSG || sig[0] == SIG_EXIT || sig[0] == SIG_ALIAS_MSG)
                pin_term(k, sig[1], err);
            else if (sig[0] == SIG_MONITOR)
                pin_term(k, sig[2], err);
            else if (sig[0] == SIG_DOWN) {
                pin_term(k, sig[2], err);
                pin_term(k, sig[3], err);
            }
        }
    }
    for (uint32_t t = 0; t < st->ntables && !*err; t++) {
        pin_ets_keys(k, st->tables[t].data, err);
        pin_term(k, st->tables[t].data, err);
        pin_term(k, st->tables[t].heir_data, err);
    }
    pin_term(k, st->app_env, err);
    pin_term(k, st->observer, err);
}

/* Ghost gathering: every pid key term part id names that no live process
** has, with a number that may be renamed. */
static int gather_term(canon_ctx *k, part_id id, uint32_t **keys, size_t *n,
                       size_t *cap)
{
    const part *p = id ? part_store_get(k->cx->ps, id) : NULL;
    for (uint32_t j = 0; p != NULL && j < p->npids; j++) {
        uint32_t key = p->pids[j];
        uint32_t num = KEY_NUM(key);
        if ((key & ETF_REF_TAG) || num == 0 || num >= ETF_REF_CREATOR_LIMIT ||
            sys_state_find(k->st, key) >= 0)
            continue;
        if (sym_grow((void **)keys, cap, *n + 1, sizeof **keys))
            return -1;
        (*keys)[(*n)++] = key;
    }
    return 0;
}

static int gather_ghosts(canon_ctx *k)
{
    const sys_state *st = k->st;
    const part_store *ps = k->cx->ps;
    uint32_t *keys = NULL;
    size_t n = 0, cap = 0;
    int err = 0;
    for (uint32_t i = 0; i < st->nprocs && !err; i++) {
        const proc *p = &st->procs[i];
        err = gather_term(k, p->cont, &keys, &n, &cap) ||
              gather_term(k, p->dict, &keys, &n, &cap);
        uint32_t m = mailbox_length(ps, p->mailbox);
        for (uint32_t j = 0; j < m && !err; j++)
            err = gather_term(k, mailbox_at(ps, p->mailbox, j), &keys, &n, &cap);
    }
    for (uint32_t i = 0; i < st->nchans && !err; i++) {
        uint32_t m = mailbox_length(ps, st->chans[i].queue);
        for (uint32_t j = 0; j < m && !err; j++) {
            uint32_t sig[4], env[4];
            part_id id = mailbox_at(ps, st->chans[i].queue, j);
            if (envelope_get(ps, id, env) == 0)
                id = env[3];
            if (signal_get(ps, id, sig) != 0)
                continue;
            if (sig[0] == SIG_MSG || sig[0] == SIG_EXIT || sig[0] == SIG_ALIAS_MSG)
                err = gather_term(k, sig[1], &keys, &n, &cap);
            else if (sig[0] == SIG_DOWN)
                err = gather_term(k, sig[3], &keys, &n, &cap);
        }
    }
    if (!err)
        err = gather_term(k, st->app_env, &keys, &n, &cap);
    if (err) {
        free(keys);
        return -1;
    }
    k->ghosts = keys;
    k->nghosts = (uint32_t)sym_sort_unique_u32(keys, n);
    return 0;
}

static void rank_proc(canon_ctx *k, uint32_t i, uint32_t *next, int *err)
{
    const proc *p = &k->st->procs[i];
    k->self = i;
    rank_term(k, p->cont, next, err);
    rank_term(k, p->dict, next, err);
    uint32_t m = mailbox_length(k->cx->ps, p->mailbox);
    for (uint32_t j = 0; j < m && !*err; j++)
        rank_term(k, mailbox_at(k->cx->ps, p->mailbox, j), next, err);
}

/* The number of distinct colours among the candidates (v: scratch, total
** long). */
static uint32_t colours(const canon_ctx *k, uint32_t total, uint64_t *v)
{
    uint32_t m = 0;
    for (uint32_t i = 0; i < total; i++)
        if (is_cand(k, (int)i))
            v[m++] = sym_mix(k->c[i].cls, k->c[i].col);
    sym_sort(v, m, sizeof *v, cmp_u64);
    uint32_t d = 0;
    for (uint32_t j = 0; j < m; j++)
        d += j == 0 || v[j] != v[j - 1];
    return d;
}

/* Adds to nxt[q], for every candidate q that the terms of process i
** (continuation, dictionary, mailbox) name, the colour of i and the
** position of the occurrence, summed: a multiset, whatever order the
** namers come in.  Refinement by what a process names alone leaves two
** forks that wait alike, one named by each philosopher, tied; which one a
** walk met first then depended on their pids (dining(3): 964 states
** instead of 773). */
static void named_by(canon_ctx *k, uint32_t i, uint64_t *nxt, int *err)
{
    const proc *p = &k->st->procs[i];
    uint64_t who = is_cand(k, (int)i) ? sym_mix(3, k->c[i].col) : sym_mix(2, p->pid);
    uint32_t m = mailbox_length(k->cx->ps, p->mailbox), pos = 0;
    for (uint32_t t = 0; t < m + 2; t++) {
        part_id id = t == 0 ? p->cont : t == 1 ? p->dict
                                               : mailbox_at(k->cx->ps, p->mailbox, t - 2);
        const term_info *ti = term_of(k->sy, k->cx, id);
        if (ti == NULL) {
            *err = 1;
            return;
        }
        /* A key of a run of equal pairs is at its place in the run's
        ** first pair: the pairs' order is their pids'. */
        uint32_t r = 0, at = 0, run_end = 0, run_pos = 0, width = 1;
        for (uint32_t j = 0; j < ti->n; j++, pos++) {
            const sym_run *run = run_at(k->sy, ti, &r, j);
            if (run != NULL) {
                run_end = j + run->npairs * run->width;
                run_pos = pos;
                width = run->width;
                at = j;
            }
            uint32_t place = j < run_end ? run_pos + (j - at) % width : pos;
            uint32_t key = k->sy->keys[ti->off + j];
            int q = find(k, owner_key(key));
            if (is_cand(k, q) && (uint32_t)q != i)
                nxt[q] += sym_mix(sym_mix(who, place), (key & ETF_REF_TAG) != 0);
        }
    }
}

/* Step 2: colour refinement (the 1-dimensional Weisfeiler-Leman
** refinement used by canonical labelling, McKay's "Practical graph
** isomorphism"): each round a candidate's colour absorbs the colours of
** the keys its terms name, until a round splits no class.  One round
** alone left the processes of a chain (each waiting with its child's pid,
** spawn_chain) tied; a colour also absorbs those of the processes that
** name it (named_by), and a tie broken by pid is no function of the orbit:
** two renamings of one state got two representatives, and the search
** stored more states than without the reduction.  Each round refines the
** last (a colour starts from the previous one), so at most `total' rounds
** split anything.  The final colour is sig2. */
static int refine(canon_ctx *k, uint32_t total, uint64_t *tmp, uint64_t *nxt,
                  int *err)
{
    uint32_t n = k->st->nprocs;
    for (uint32_t i = 0; i < total; i++)
        k->c[i].col = k->c[i].sig1;
    uint32_t d = colours(k, total, nxt);
    for (uint32_t round = 0; round < total; round++) {
        for (uint32_t i = 0; i < total && !*err; i++)
            if (is_cand(k, (int)i))
                nxt[i] = i < n ? sig2_of(k, i, tmp, err) : k->c[i].col;
        for (uint32_t i = 0; i < n && !*err; i++)
            named_by(k, i, nxt, err);
        if (*err)
            return -1;
        for (uint32_t i = 0; i < total; i++)
            if (is_cand(k, (int)i))
                k->c[i].col = nxt[i];
        uint32_t d2 = colours(k, total, nxt);
        if (d2 == d)
            break;
        d = d2;
    }
    for (uint32_t i = 0; i < total; i++)
        k->c[i].sig2 = k->c[i].col;
    return 0;
}

/* Step 3: ranks every candidate by a breadth-first walk of the terms
** (continuation, dictionary, mailbox: in an order no renaming changes),
** from the processes that take no part (in pid order: their pids are
** fixed); the candidates are walked in rank order, and when the walk runs
** dry, the unranked candidate of least (sig2, pid) starts it again.  So
** the pid decides only between candidates of one final colour that no
** ranked one names first: "the first client in the server's mailbox" gets
** the smaller number whichever client it is.  O(total^2), total small. */
static void walk(canon_ctx *k, uint32_t total, uint8_t *walked, int *err)
{
    uint32_t n = k->st->nprocs, next = 0;
    for (uint32_t i = 0; i < n && !*err; i++)
        if (!is_cand(k, (int)i))
            rank_proc(k, i, &next, err);
    while (!*err) {
        int best = -1;
        for (uint32_t i = 0; i < total; i++) {
            if (!is_cand(k, (int)i) || walked[i] || k->c[i].rank == UINT32_MAX)
                continue;
            if (best < 0 || k->c[i].rank < k->c[best].rank)
                best = (int)i;
        }
        if (best < 0) {
            for (uint32_t i = 0; i < total; i++) {
                if (!is_cand(k, (int)i) || k->c[i].rank != UINT32_MAX)
                    continue;
                if (best < 0 || cmp_walk(&k->c[i], &k->c[best]) < 0)
                    best = (int)i;
            }
            if (best < 0)
                break;
            k->c[best].rank = next++;
        }
        walked[best] = 1;
        if ((uint32_t)best < n)
            rank_proc(k, (uint32_t)best, &next, err);
    }
}

/* Every pid key of the state with a number that could be renamed (1 to
** ETF_REF_CREATOR_LIMIT - 1), sorted, unique: the numbers in use. */
static int push_key(uint32_t **keys, size_t *n, size_t *cap, uint32_t key)
{
    uint32_t num = KEY_NUM(key);
    if ((key & ETF_REF_TAG) || num == 0 || num >= ETF_REF_CREATOR_LIMIT)
        return 0;
    if (sym_grow((void **)keys, cap, *n + 1, sizeof **keys))
        return -1;
    (*keys)[(*n)++] = key;
    return 0;
}

static int push_term_keys(const part_store *ps, part_id id, uint32_t **keys,
                          size_t *n, size_t *cap)
{
    const part *p = id ? part_store_get(ps, id) : NULL;
    for (uint32_t j = 0; p != NULL && j < p->npids; j++)
        if (push_key(keys, n, cap, p->pids[j]) != 0)
            return -1;
    return 0;
}

static int used_keys(const canon_ctx *k, uint32_t **out, size_t *nout)
{
    const sys_state *st = k->st;
    const part_store *ps = k->cx->ps;
    uint32_t *keys = NULL;
    size_t n = 0, cap = 0;
    int err = 0;
    for (uint32_t i = 0; i < st->nprocs && !err; i++) {
        const proc *p = &st->procs[i];
        err |= push_key(&keys, &n, &cap, p->pid);
        for (uint32_t j = 0; j < p->nlinks; j++)
            err |= push_key(&keys, &n, &cap, p->links[j]);
        for (uint32_t j = 0; j < p->mons.n; j++)
            err |= push_key(&keys, &n, &cap, p->mons.m[j].pid) |
                   push_term_keys(ps, p->mons.m[j].item, &keys, &n, &cap);
        for (uint32_t j = 0; j < p->monby.n; j++)
            err |= push_key(&keys, &n, &cap, p->monby.m[j].pid) |
                   push_term_keys(ps, p->monby.m[j].item, &keys, &n, &cap);
        if (p->gl != 0)
            err |= push_key(&keys, &n, &cap, p->gl ^ DEFAULT_GL_KEY);
        err |= push_term_keys(ps, p->cont, &keys, &n, &cap) |
               push_term_keys(ps, p->dict, &keys, &n, &cap) |
               push_term_keys(ps, p->name, &keys, &n, &cap);
        uint32_t m = mailbox_length(ps, p->mailbox);
        for (uint32_t j = 0; j < m; j++)
            err |= push_term_keys(ps, mailbox_at(ps, p->mailbox, j), &keys, &n, &cap);
    }
    for (uint32_t i = 0; i < st->nchans && !err; i++) {
        const channel *c = &st->chans[i];
        if (!(c->from & KEY_TIMER))
            err |= push_key(&keys, &n, &cap, c->from);
        err |= push_key(&keys, &n, &cap, c->to);
        uint32_t m = mailbox_length(ps, c->queue);
        for (uint32_t j = 0; j < m; j++) {
            uint32_t sig[4], env[4];
            part_id id = mailbox_at(ps, c->queue, j);
            if (envelope_get(ps, id, env) == 0) {
                err |= push_key(&keys, &n, &cap, env[0]) | push_key(&keys, &n, &cap, env[1]);
                id = env[3];
            }
            if (signal_get(ps, id, sig) != 0)
                continue;
            if (sig[0] == SIG_MSG || sig[0] == SIG_EXIT || sig[0] == SIG_ALIAS_MSG)
                err |= push_term_keys(ps, sig[1], &keys, &n, &cap);
            else if (sig[0] == SIG_MONITOR)
                err |= push_term_keys(ps, sig[2], &keys, &n, &cap);
            else if (sig[0] == SIG_DOWN)
                err |= push_term_keys(ps, sig[2], &keys, &n, &cap) |
                       push_term_keys(ps, sig[3], &keys, &n, &cap);
        }
    }
    for (uint32_t i = 0; i < st->nnodemons && !err; i++)
        err |= push_key(&keys, &n, &cap, st->nodemons[i].pid);
    for (uint32_t i = 0; i < st->ntables && !err; i++) {
        const ets_table *t = &st->tables[i];
        err |= push_key(&keys, &n, &cap, t->owner);
        if (t->heir != 0)
            err |= push_key(&keys, &n, &cap, t->heir);
        err |= push_term_keys(ps, t->data, &keys, &n, &cap) |
               push_term_keys(ps, t->heir_data, &keys, &n, &cap);
    }
    if (!err)
        err |= push_term_keys(ps, st->app_env, &keys, &n, &cap) |
               push_term_keys(ps, st->observer, &keys, &n, &cap);
    if (err) {
        free(keys);
        return -1;
    }
    *out = keys;
    *nout = sym_sort_unique_u32(keys, n);
    return 0;
}

static int in_sorted(const uint32_t *v, size_t n, uint32_t x)
{
    size_t lo = lower_bound(v, n, x);
    return lo < n && v[lo] == x;
}

static int add_pair(sym_pair **pairs, uint32_t *np, size_t *cap, uint32_t from,
                    uint32_t to)
{
    if (from == to)
        return 0;
    if (sym_grow((void **)pairs, cap, (size_t)*np + 1, sizeof **pairs))
        return -1;
    (*pairs)[(*np)++] = (sym_pair){ from, to };
    return 0;
}

static int cmp_node_cls(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return x->cls < y->cls ? -1 : x->cls > y->cls;
}

/* Whether two of the m candidates (sorted here by node and class, which
** is their final order when no two share one) are of one node and one
** class: only then can two processes be interchangeable and the
** signatures, refinement and walk tell them apart. */
static int classes_shared(cand *ord, uint32_t m)
{
    sym_sort(ord, m, sizeof *ord, cmp_node_cls);
    for (uint32_t j = 1; j < m; j++)
        if (ord[j].node == ord[j - 1].node && ord[j].cls == ord[j - 1].cls)
            return 1;
    return 0;
}

/* The renaming of one node's numbers: the candidates in `ord' (m of them,
** in their final order) take the smallest numbers no fixed key uses; the
** other numbers up to the largest involved that no fixed key uses (free,
** or used by nothing the search saw) map in order onto those left.  A
** bijection of [1, max], fixed keys kept, free numbers in order. */
static int node_pairs(const cand *ord, uint32_t m, const uint32_t *used,
                      size_t nused, const uint32_t *pinned, size_t npinned,
                      sym_pair **pairs, uint32_t *np, size_t *cap)
{
    uint32_t node = ord[0].node;
    uint32_t *u = malloc(m * sizeof *u), *t = malloc(m * sizeof *t);
    int err = u == NULL || t == NULL;
    uint32_t max = 0;
    for (uint32_t j = 0; j < m && !err; j++) {
        u[j] = KEY_NUM(ord[j].pid);
        max = u[j] > max ? u[j] : max;
    }
    if (!err)
        sym_sort(u, m, sizeof *u, sym_cmp_u32);
    /* fixed: used by a key of this node that is no candidate, or the
    ** entry's number even once the entry is dead: the fault model never
    ** kills the process holding it (ether.c), so no process may be moved
    ** onto it or off it (tprog_por:killed_server missed its violation). */
#define FIXED(x) (MAKE_KEY(node, (x)) == ENTRY_KEY || \
                  in_sorted(pinned, npinned, MAKE_KEY(node, (x))) || \
                  (in_sorted(used, nused, MAKE_KEY(node, (x))) && !in_sorted(u, m, (x))))
    uint32_t x = 1;
    for (uint32_t j = 0; j < m && !err; j++) {
        while (FIXED(x))
            x++;
        t[j] = x++;
        max = t[j] > max ? t[j] : max;
    }
    for (uint32_t j = 0; j < m && !err; j++)
        err = add_pair(pairs, np, cap, ord[j].pid, MAKE_KEY(node, t[j]));
    /* The rest of [1, max]: A (neither fixed nor a candidate's) onto B
    ** (neither fixed nor a target), in order.  t ascends. */
    uint32_t ai = 1, bi = 1;
    while (!err) {
        while (ai <= max && (FIXED(ai) || in_sorted(u, m, ai)))
            ai++;
        while (bi <= max && (FIXED(bi) || in_sorted(t, m, bi)))
            bi++;
        if (ai > max || bi > max)
            break;
        err = add_pair(pairs, np, cap, MAKE_KEY(node, ai), MAKE_KEY(node, bi));
        ai++;
        bi++;
    }
#undef FIXED
    free(u);
    free(t);
    return err ? -1 : 0;
}

int symmetry_canon(symmetry *sy, trans_ctx *cx, sys_state *st,
                   sym_pair **perm, uint32_t *nperm)
{
    *perm = NULL;
    *nperm = 0;
    uint32_t n = st->nprocs;
    if (n == 0)
        return 0;
    int err = 0;
    canon_ctx k = { sy, cx, st, NULL, NULL, 0, UINT32_MAX, NULL, 0, 0 };
    cand *c = NULL, *order = NULL;
    uint64_t *tmp = NULL;
    sym_pair *pairs = NULL;
    size_t cappairs = 0;
    uint32_t *nums = NULL, *used = NULL;
    uint64_t *nxt = NULL;
    uint8_t *walked = NULL;
    size_t nused = 0;
    if (gather_ghosts(&k) != 0) {
        err = 1;
        goto done;
    }
    uint32_t total = n + k.nghosts;
    c = malloc(total * sizeof *c);
    order = malloc(total * sizeof *order);
    uint32_t maxsets = 1;
    for (uint32_t i = 0; i < n; i++) {
        const proc *p = &st->procs[i];
        uint32_t m = p->nlinks;
        m = p->mons.n > m ? p->mons.n : m;
        m = p->monby.n > m ? p->monby.n : m;
        m = p->aliases.n > m ? p->aliases.n : m;
        maxsets = m > maxsets ? m : maxsets;
    }
    tmp = malloc(maxsets * sizeof *tmp);
    if (c == NULL || order == NULL || tmp == NULL) {
        err = 1;
        goto done;
    }
    k.c = c;
    for (uint32_t i = 0; i < total; i++) {
        uint32_t key = i < n ? st->procs[i].pid : k.ghosts[i - n];
        uint32_t num = KEY_NUM(key);
        /* The entry process (the first node's pid 1, mce_search starts it)
        ** is a role of its own, spawned by no code another process runs:
        ** letting it trade places with plain spawns would only make its
        ** number depend on the path (see class_of). */
        int fixed = num == 0 || num >= ETF_REF_CREATOR_LIMIT || key == ENTRY_KEY;
        c[i] = (cand){ .idx = fixed ? UINT32_MAX : i,
                       .node = KEY_NODE(key), .rank = UINT32_MAX, .pid = key };
    }
    pin_all(&k, &err);
    if (err)
        goto done;
    k.npinned = sym_sort_unique_u32(k.pinned, k.npinned);
    /* The classes first (a ghost's is unknown: that of a process with no
    ** name nor dictionary, the plain spawns whose pids programs pass
    ** around.  It trades places with the live ones of that class even when
    ** one is left: a ghost that kept its number there would freeze an
    ** arrangement an earlier renaming made, one no real run reaches
    ** (door(4) took 5 % more states than without the reduction, then as
    ** many)). */
    uint32_t nc = 0;
    for (uint32_t i = 0; i < total; i++) {
        if (!is_cand(&k, (int)i))
            continue;
        c[i].cls = i < n ? class_of(&k, &st->procs[i], &err) : sym_mix(sym_mix(c[i].node, 0), 0);
        if (err)
            goto done;
        order[nc++] = c[i];
    }
    if (nc < 2)
        goto done;
    /* All of distinct classes: the final order (cmp_final: node, class,
    ** then rank and pid) is the order of classes, whatever steps 1-3
    ** would find, so they are skipped (locker and sup_worker: about 2.5
    ** times the CPU of no symmetry before, for the same states). */
    if (!classes_shared(order, nc))
        goto lay_out;
    /* Step 1; the largest group of one signature is the stat. */
    for (uint32_t i = 0; i < total; i++) {
        if (!is_cand(&k, (int)i))
            continue;
        c[i].sig1 = i < n ? sig1_of(&k, &st->procs[i], &err)
                          : sym_mix(0x67686f7374ull, c[i].node);
        if (err)
            goto done;
    }
    nc = 0;
    for (uint32_t i = 0; i < total; i++)
        if (is_cand(&k, (int)i))
            order[nc++] = c[i];
    sym_sort(order, nc, sizeof *order, cmp_sig1);
    uint32_t group = 1, largest = 1;
    for (uint32_t j = 1; j < nc; j++) {
        int same = order[j].node == order[j - 1].node &&
                   order[j].sig1 == order[j - 1].sig1 && order[j].idx < n &&
                   order[j - 1].idx < n;
        group = same ? group + 1 : 1;
        largest = group > largest ? group : largest;
    }
    if (largest > sy->max_group)
        sy->max_group = largest;
    /* Step 2, to a fixpoint (a ghost has no terms of its own: its rank
    ** places it). */
    nxt = malloc(total * sizeof *nxt);
    walked = calloc(total, 1);
    if (nxt == NULL || walked == NULL) {
        err = 1;
        goto done;
    }
    if (refine(&k, total, tmp, nxt, &err) != 0 || err)
        goto done;
    /* Step 3: the walk. */
    walk(&k, total, walked, &err);
    if (err)
        goto done;
    nc = 0;
    for (uint32_t i = 0; i < total; i++)
        if (is_cand(&k, (int)i))
            order[nc++] = c[i];
    sym_sort(order, nc, sizeof *order, cmp_final);
lay_out:
    /* Step 4, per node: the i-th in order takes the i-th smallest number
    ** that no fixed pid holds (`order' is grouped by node).  The numbers
    ** change set, so the renaming is extended to the free numbers, in
    ** order (free_pairs): least-fresh numbering then gives the renamed
    ** state the renamed number, and refs left by dead processes in free
    ** regions move with them. */
    if (used_keys(&k, &used, &nused) != 0) {
        err = 1;
        goto done;
    }
    uint32_t np = 0;
    for (uint32_t a = 0, b; a < nc; a = b) {
        for (b = a + 1; b < nc && order[b].node == order[a].node; b++)
            ;
        if (node_pairs(order + a, b - a, used, nused, k.pinned, k.npinned, &pairs, &np,
                       &cappairs) != 0) {
            err = 1;
            goto done;
        }
    }
    if (np == 0)
        goto done;
    sym_sort(pairs, np, sizeof *pairs, cmp_pair);
    if (symmetry_rename(sy, cx, st, pairs, np) != 0) {
        err = 1;
        goto done;
    }
    sy->renamed++;
    *perm = pairs;
    *nperm = np;
    pairs = NULL;
done:
    free(used);
    free(k.pinned);
    free(k.ghosts);
    free(c);
    free(order);
    free(tmp);
    free(pairs);
    free(nums);
    free(nxt);
    free(walked);
    return err ? -1 : 0;
}
