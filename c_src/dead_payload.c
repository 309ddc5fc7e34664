/*
** dead_payload.c: the dead-payload descriptors by continuation, and the
** rewriting of the message a waiting process takes next (see
** dead_payload.h for the invariants, src/mce_payload.erl for the analysis
** and the descriptor's bytes).
*/
#include "dead_payload.h"

#include <stdlib.h>
#include <string.h>

#include "etf_order.h"
#include "etf_tags.h"

enum { PAT_ANY = 0, PAT_DEAD, PAT_ENV, PAT_LIT, PAT_TUPLE, PAT_CONS, PAT_NIL, PAT_UNKNOWN };
enum { M_NO = 0, M_YES = 1, M_UNKNOWN = 2 };

/* At most this many dead parts are replaced in one message; a clause with
** more is left alone (sound: nothing is rewritten). */
#define MAX_DEAD 16
#define MAX_ENV 256
#define PATTERN_DEPTH 64

typedef struct span {
    const uint8_t *p, *end;
} span;

typedef struct matcher {
    span env[MAX_ENV];      /* the receive's free variables' terms */
    unsigned nenv;
    uint32_t creation;
    span dead[MAX_DEAD];    /* the clause's dead parts found */
    unsigned ndead;
    int too_many;
} matcher;

static const uint8_t DEAD_ATOM[] = { SMALL_ATOM_UTF8_EXT, 9, '$', 'm', 'c', 'e', '_', 'd', 'e', 'a', 'd' };

/*
** The table: open addressing on the continuation's part id.
*/

void payload_table_init(payload_table *t)
{
    memset(t, 0, sizeof *t);
}

void payload_table_free(payload_table *t)
{
    for (size_t i = 0; i < t->nslots; i++)
        if (t->keys[i] != 0)
            free(t->descs[i]);
    free(t->keys);
    free(t->descs);
    free(t->lens);
    free(t->scratch);
    memset(t, 0, sizeof *t);
}

size_t payload_table_bytes(const payload_table *t)
{
    return t->bytes + t->nslots * (sizeof *t->keys + sizeof *t->descs + sizeof *t->lens) +
           (t->scratch != NULL ? sizeof *t->scratch : 0);
}

static size_t slot_of(uint32_t key, size_t nslots)
{
    return (size_t)((key * 2654435761u) & (uint32_t)(nslots - 1));
}

static int grow(payload_table *t)
{
    size_t n = t->nslots ? 2 * t->nslots : 64;
    uint32_t *keys = calloc(n, sizeof *keys);
    uint8_t **descs = calloc(n, sizeof *descs);
    uint32_t *lens = calloc(n, sizeof *lens);
    if (keys == NULL || descs == NULL || lens == NULL) {
        free(keys);
        free(descs);
        free(lens);
        return -1;
    }
    for (size_t i = 0; i < t->nslots; i++) {
        if (t->keys[i] == 0)
            continue;
        size_t j = slot_of(t->keys[i], n);
        while (keys[j] != 0)
            j = (j + 1) & (n - 1);
        keys[j] = t->keys[i];
        descs[j] = t->descs[i];
        lens[j] = t->lens[i];
    }
    free(t->keys);
    free(t->descs);
    free(t->lens);
    t->keys = keys;
    t->descs = descs;
    t->lens = lens;
    t->nslots = n;
    return 0;
}

const uint8_t *payload_table_get(const payload_table *t, part_id cont, uint32_t *len)
{
    if (t->nslots == 0 || cont == 0)
        return NULL;
    for (size_t j = slot_of(cont, t->nslots); t->keys[j] != 0; j = (j + 1) & (t->nslots - 1))
        if (t->keys[j] == cont) {
            *len = t->lens[j];
            return t->descs[j];
        }
    return NULL;
}

int payload_table_put(payload_table *t, part_id cont, const uint8_t *desc, size_t len)
{
    uint32_t have;
    if (cont == 0 || len > UINT32_MAX || !payload_desc_valid(desc, len))
        return -1;
    if (payload_table_get(t, cont, &have) != NULL)
        return 0;
    if (2 * (t->n + 1) > t->nslots && grow(t) != 0)
        return -1;
    uint8_t *copy = malloc(len ? len : 1);
    if (copy == NULL)
        return -1;
    memcpy(copy, desc, len);
    size_t j = slot_of(cont, t->nslots);
    while (t->keys[j] != 0)
        j = (j + 1) & (t->nslots - 1);
    t->keys[j] = cont;
    t->descs[j] = copy;
    t->lens[j] = (uint32_t)len;
    t->n++;
    t->bytes += len;
    return 0;
}

/*
** Descriptors.
*/

/* Skips one pattern; 0, or -1 when malformed. */
static int skip_pattern(const uint8_t **d, const uint8_t *end, int depth)
{
    if (*d >= end || depth > PATTERN_DEPTH)
        return -1;
    uint8_t op = *(*d)++;
    switch (op) {
    case PAT_ANY: case PAT_DEAD: case PAT_NIL: case PAT_UNKNOWN:
        return 0;
    case PAT_ENV:
        if (*d >= end)
            return -1;
        (*d)++;
        return 0;
    case PAT_LIT: {
        if (end - *d < 4)
            return -1;
        uint32_t n = etf_be32(*d);
        *d += 4;
        if ((size_t)(end - *d) < n)
            return -1;
        *d += n;
        return 0;
    }
    case PAT_TUPLE: {
        if (*d >= end)
            return -1;
        uint8_t arity = *(*d)++;
        for (unsigned i = 0; i < arity; i++)
            if (skip_pattern(d, end, depth + 1) != 0)
                return -1;
        return 0;
    }
    case PAT_CONS:
        return skip_pattern(d, end, depth + 1) != 0 ? -1 : skip_pattern(d, end, depth + 1);
    default:
        return -1;
    }
}

int payload_desc_valid(const uint8_t *desc, size_t len)
{
    if (len < 1)
        return 0;
    const uint8_t *d = desc + 1, *end = desc + len;
    for (unsigned c = 0; c < desc[0]; c++) {
        if (d >= end || *d > 1)
            return 0;
        d++;
        if (skip_pattern(&d, end, 0) != 0)
            return 0;
    }
    return d == end;
}

/*
** Matching one clause's pattern against a message.
*/

/* The view matched: a term [p, end), or, in_list, the rest of a LIST_EXT
** from its element at p with `left' elements to go before the tail. */
typedef struct view {
    const uint8_t *p, *end;
    int in_list;
    uint32_t left;
} view;

static int combine(int a, int b)
{
    if (a == M_NO || b == M_NO)
        return M_NO;
    return a == M_UNKNOWN || b == M_UNKNOWN ? M_UNKNOWN : M_YES;
}

/* Compares a term with known bytes: equal bytes are the same term; bytes
** that differ are different terms only when term order says so (1 and 1.0
** are equal in order and different in matching: doubt). */
static int same_term(const matcher *m, const uint8_t *a, size_t alen, const uint8_t *b,
                     size_t blen)
{
    if (alen == blen && memcmp(a, b, alen) == 0)
        return M_YES;
    int order;
    if (etf_order_cmp(a, alen, b, blen, m->creation, &order) != 0 || order == 0)
        return M_UNKNOWN;
    return M_NO;
}

/* A list view's tail once no elements are left: a term of its own. */
static view tail_term(view v)
{
    const uint8_t *next;
    view t = { v.p, v.end, 0, 0 };
    if (etf_skip_term(v.p, v.end, &next) == 0)
        t.end = next;
    return t;
}

static int match(matcher *m, const uint8_t **d, const uint8_t *dend, view v, int depth);

/* One pattern against v; match() leaves the cursor past the pattern
** whatever this read of it, so a mismatch or a doubt may return at once. */
static int match_at(matcher *m, const uint8_t **d, const uint8_t *dend, view v, int depth)
{
    if (v.in_list && v.left == 0)
        v = tail_term(v);
    uint8_t op = *(*d)++;
    switch (op) {
    case PAT_ANY:
        return M_YES;
    case PAT_DEAD:
        if (!v.in_list) {
            if (m->ndead < MAX_DEAD)
                m->dead[m->ndead++] = (span){ v.p, v.end };
            else
                m->too_many = 1;
        }
        return M_YES;
    case PAT_UNKNOWN:
        return M_UNKNOWN;
    case PAT_ENV: {
        uint8_t i = *(*d)++;
        if (v.in_list || i >= m->nenv)
            return M_UNKNOWN;
        return same_term(m, v.p, (size_t)(v.end - v.p), m->env[i].p,
                         (size_t)(m->env[i].end - m->env[i].p));
    }
    case PAT_LIT: {
        uint32_t n = etf_be32(*d);
        *d += 4;
        const uint8_t *lit = *d;
        *d += n;
        if (v.in_list)
            return M_UNKNOWN;
        return same_term(m, v.p, (size_t)(v.end - v.p), lit, n);
    }
    case PAT_NIL:
        if (v.in_list)
            return M_NO;        /* elements are left */
        if (v.p[0] == NIL_EXT)
            return M_YES;
        return v.p[0] == STRING_EXT && v.end - v.p >= 3 && etf_be16(v.p + 1) == 0 ? M_YES : M_NO;
    case PAT_TUPLE: {
        uint8_t arity = *(*d)++;
        uint32_t have;
        const uint8_t *e = NULL;
        if (v.in_list)
            have = UINT32_MAX;
        else if (v.p[0] == SMALL_TUPLE_EXT && v.end - v.p >= 2) {
            have = v.p[1];
            e = v.p + 2;
        } else if (v.p[0] == LARGE_TUPLE_EXT && v.end - v.p >= 5) {
            have = etf_be32(v.p + 1);
            e = v.p + 5;
        } else {
            have = UINT32_MAX;
        }
        if (have != arity)
            return M_NO;
        int r = M_YES;
        for (unsigned i = 0; i < arity; i++) {
            const uint8_t *next;
            if (etf_skip_term(e, v.end, &next) != 0)
                return M_UNKNOWN;
            view sub = { e, next, 0, 0 };
            r = combine(r, match(m, d, dend, sub, depth + 1));
            e = next;
        }
        return r;
    }
    case PAT_CONS: {
        view head, tail;
        if (v.in_list) {
            const uint8_t *next;
            if (etf_skip_term(v.p, v.end, &next) != 0)
                return M_UNKNOWN;
            head = (view){ v.p, next, 0, 0 };
            tail = (view){ next, v.end, 1, v.left - 1 };
        } else if (v.p[0] == LIST_EXT && v.end - v.p >= 5 && etf_be32(v.p + 1) > 0) {
            const uint8_t *next;
            if (etf_skip_term(v.p + 5, v.end, &next) != 0)
                return M_UNKNOWN;
            head = (view){ v.p + 5, next, 0, 0 };
            tail = (view){ next, v.end, 1, etf_be32(v.p + 1) - 1 };
        } else {
            /* A string is a list of bytes: doubt; anything else is no list. */
            return v.p[0] == STRING_EXT ? M_UNKNOWN : M_NO;
        }
        int r = match(m, d, dend, head, depth + 1);
        return combine(r, match(m, d, dend, tail, depth + 1));
    }
    default:
        return M_UNKNOWN;
    }
}

static int match(matcher *m, const uint8_t **d, const uint8_t *dend, view v, int depth)
{
    const uint8_t *start = *d;
    int r = depth > PATTERN_DEPTH ? M_UNKNOWN : match_at(m, d, dend, v, depth);
    *d = start;
    return skip_pattern(d, dend, depth) == 0 ? r : M_UNKNOWN;
}

/* The receive's free variables: cont is {{Mod, Name, FreeVars, Timeout},
** Frames}.  0, or -1 when it is not of that shape. */
static int env_of(matcher *m, const uint8_t *p, const uint8_t *end)
{
    const uint8_t *next;
    if (p < end && p[0] == 131)
        p++;
    if (end - p < 4 || p[0] != SMALL_TUPLE_EXT || p[1] != 2 || p[2] != SMALL_TUPLE_EXT || p[3] != 4)
        return -1;
    p += 4;
    for (int i = 0; i < 2; i++) {       /* Mod, Name */
        if (etf_skip_term(p, end, &next) != 0)
            return -1;
        p = next;
    }
    m->nenv = 0;
    if (p < end && p[0] == NIL_EXT)
        return 0;
    if (end - p < 5 || p[0] != LIST_EXT)
        return -1;
    uint32_t n = etf_be32(p + 1);
    if (n > MAX_ENV)
        return -1;
    p += 5;
    for (uint32_t i = 0; i < n; i++) {
        if (etf_skip_term(p, end, &next) != 0)
            return -1;
        m->env[i] = (span){ p, next };
        p = next;
    }
    m->nenv = n;
    return 0;
}

/* The message with m's dead parts replaced; *changed 0 when it already
** was (nothing allocated).  NULL when out of memory. */
static uint8_t *replaced(const matcher *m, const uint8_t *msg, size_t len, size_t *outlen,
                         int *changed)
{
    size_t size = len;
    *changed = 0;
    for (unsigned i = 0; i < m->ndead; i++) {
        size_t n = (size_t)(m->dead[i].end - m->dead[i].p);
        if (n != sizeof DEAD_ATOM || memcmp(m->dead[i].p, DEAD_ATOM, n) != 0)
            *changed = 1;
        size = size - n + sizeof DEAD_ATOM;
    }
    if (!*changed)
        return NULL;
    uint8_t *out = malloc(size);
    if (out == NULL)
        return NULL;
    const uint8_t *from = msg;
    uint8_t *to = out;
    for (unsigned i = 0; i < m->ndead; i++) {   /* in order of position */
        memcpy(to, from, (size_t)(m->dead[i].p - from));
        to += m->dead[i].p - from;
        memcpy(to, DEAD_ATOM, sizeof DEAD_ATOM);
        to += sizeof DEAD_ATOM;
        from = m->dead[i].end;
    }
    memcpy(to, from, (size_t)(msg + len - from));
    *outlen = size;
    return out;
}

/* The taken message of process i, rewritten (m: the scratch record).  0,
** or -1 when out of memory. */
static int rewrite_proc(matcher *m, const uint8_t *desc, uint32_t desclen, trans_ctx *cx,
                        proc *pr, uint64_t *rewritten)
{
    const part *cont = part_store_get(cx->ps, pr->cont);
    uint32_t n = mailbox_length(cx->ps, pr->mailbox);
    if (cont == NULL || n == 0)
        return 0;
    m->creation = cx->names.creation;
    int result = 0;
    if (env_of(m, cont->data, cont->data + cont->len) != 0)
        goto done;
    for (uint32_t k = 0; k < n; k++) {
        const part *msg = part_store_get(cx->ps, mailbox_at(cx->ps, pr->mailbox, k));
        if (msg == NULL || msg->len < 2 || msg->data[0] != 131)
            goto done;
        view v = { msg->data + 1, msg->data + msg->len, 0, 0 };
        const uint8_t *d = desc + 1;
        int taken = 0;
        for (unsigned c = 0; c < desc[0] && !taken; c++) {
            int guarded = *d++;
            m->ndead = 0;
            m->too_many = 0;
            int r = match(m, &d, desc + desclen, v, 0);
            if (r == M_UNKNOWN || (r == M_YES && guarded))
                goto done;      /* doubt: the mailbox stays as it is */
            taken = r == M_YES;
        }
        if (!taken)
            continue;
        if (m->ndead == 0 || m->too_many)
            goto done;
        size_t outlen = 0;
        int changed;
        uint8_t *out = replaced(m, msg->data, msg->len, &outlen, &changed);
        if (!changed)
            goto done;
        if (out == NULL) {
            result = -1;
            goto done;
        }
        term_in t = { out, outlen, 0 };
        part_id id = transition_intern_term(cx, &t);
        free(out);
        part_id mb = id == 0 ? 0 : mailbox_replace(cx->ps, pr->mailbox, k, id);
        if (mb == 0) {
            result = -1;
            goto done;
        }
        pr->mailbox = mb;
        (*rewritten)++;
        goto done;
    }
done:
    return result;
}

int payload_rewrite(payload_table *t, trans_ctx *cx, sys_state *st,
                    uint64_t *rewritten)
{
    if (t->n == 0)
        return 0;
    if (t->scratch == NULL && (t->scratch = malloc(sizeof *t->scratch)) == NULL)
        return -1;
    for (uint32_t i = 0; i < st->nprocs; i++) {
        proc *pr = &st->procs[i];
        uint32_t len;
        const uint8_t *desc;
        if (pr->status != PROC_WAITING || pr->mailbox == cx->empty_mailbox ||
            (desc = payload_table_get(t, pr->cont, &len)) == NULL)
            continue;
        if (rewrite_proc(t->scratch, desc, len, cx, pr, rewritten) != 0)
            return -1;
    }
    return 0;
}
