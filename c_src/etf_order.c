/*
** etf_order.c: Erlang term order on external-format bytes (OTP 25), the
** re-sorting of small maps' pairs by key, and the keys of an mce_ets
** table's data (see etf_order.h for the order and what is supported).
**
** Invariant: etf_order_cmp of two supported terms is the VM's compare/2 on
** them (the tests: c_tests.c's etf_order cases, and mce_symmetry_maps_tests
** against the VM itself); the sorts only permute whole spans of bytes, so
** a term keeps its length and every pid keeps its bytes.
**
** Comparing recurses over nesting (keys are small, and supported() bounds
** the depth); skipping over values does not (messages nest deeply).
*/
#include "etf_order.h"
#include "etf_tags.h"

#include <stdlib.h>
#include <string.h>



/*
** Skipping a term without recursion.
*/

/* Skips the atom at *p (any of the four atom tags); -1 if there is none. */
static int skip_atom(const uint8_t **p, const uint8_t *end)
{
    const uint8_t *q = *p;
    if (end - q < 2)
        return -1;
    size_t n;
    if (q[0] == ATOM_EXT || q[0] == ATOM_UTF8_EXT) {
        if (end - q < 3)
            return -1;
        n = 3 + (size_t)etf_be16(q + 1);
    } else if (q[0] == SMALL_ATOM_EXT || q[0] == SMALL_ATOM_UTF8_EXT) {
        n = 2 + (size_t)q[1];
    } else {
        return -1;
    }
    if ((size_t)(end - q) < n)
        return -1;
    *p = q + n;
    return 0;
}

/* Skips one term at p; *next gets its end, *pidref is set when it holds a
** pid or ref (of any node).  `maps', when given, gets the offsets (from
** base) of every map met, in order of position.  0, or -1 when malformed
** or out of memory. */
typedef struct offsets {
    size_t *v;
    size_t n, cap;
} offsets;

static int push_offset(offsets *o, size_t off)
{
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 16;
        size_t *grown = realloc(o->v, cap * sizeof *grown);
        if (grown == NULL)
            return -1;
        o->v = grown;
        o->cap = cap;
    }
    o->v[o->n++] = off;
    return 0;
}

static int skip_term(const uint8_t *p, const uint8_t *end, const uint8_t **next,
                     int *pidref, offsets *maps, const uint8_t *base)
{
    uint64_t pending = 1;
    while (pending > 0) {
        pending--;
        if (p >= end)
            return -1;
        const uint8_t *at = p;
        uint8_t tag = *p++;
        size_t avail = (size_t)(end - p), skip = 0;
        int leaf = etf_leaf_size(tag, p, avail, &skip);
        if (leaf < 0)
            return -1;
        if (leaf == 0) switch (tag) {     /* the terms with terms inside, and pids and refs */
        case SMALL_TUPLE_EXT:
            if (avail < 1) return -1;
            pending += *p++;
            break;
        case LARGE_TUPLE_EXT:
            if (avail < 4) return -1;
            pending += etf_be32(p);
            p += 4;
            break;
        case LIST_EXT:
            if (avail < 4) return -1;
            pending += (uint64_t)etf_be32(p) + 1;
            p += 4;
            break;
        case MAP_EXT:
            if (avail < 4) return -1;
            if (maps != NULL && push_offset(maps, (size_t)(at - base)) != 0)
                return -1;
            pending += 2 * (uint64_t)etf_be32(p);
            p += 4;
            break;
        case PID_EXT: case NEW_PID_EXT:
            *pidref = 1;
            if (skip_atom(&p, end) != 0) return -1;
            skip = tag == NEW_PID_EXT ? 12 : 9;
            break;
        case NEW_PORT_EXT: case PORT_EXT: case V4_PORT_EXT:
            if (skip_atom(&p, end) != 0) return -1;
            skip = tag == PORT_EXT ? 5 : tag == NEW_PORT_EXT ? 8 : 12;
            break;
        case NEW_REFERENCE_EXT: case NEWER_REFERENCE_EXT: {
            *pidref = 1;
            if (avail < 2) return -1;
            size_t words = etf_be16(p);
            p += 2;
            if (skip_atom(&p, end) != 0) return -1;
            skip = (tag == NEWER_REFERENCE_EXT ? 4 : 1) + 4 * words;
            break;
        }
        case EXPORT_EXT:
            pending += 3;
            break;
        case NEW_FUN_EXT:
            /* Size, arity, uniq[16], index, numfree; then module, old
            ** index, old uniq, creator pid and the free variables: five
            ** terms and numfree more. */
            if (avail < 29) return -1;
            pending += 4 + (uint64_t)etf_be32(p + 25);
            p += 29;
            break;
        default:
            return -1;
        }
        if ((size_t)(end - p) < skip)
            return -1;
        p += skip;
    }
    *next = p;
    return 0;
}

int etf_skip_term(const uint8_t *p, const uint8_t *end, const uint8_t **next)
{
    int pidref = 0;
    return skip_term(p, end, next, &pidref, NULL, p);
}

/*
** The order.
*/

enum { RANK_NUMBER, RANK_ATOM, RANK_REF, RANK_FUN, RANK_PORT, RANK_PID,
       RANK_TUPLE, RANK_MAP, RANK_NIL, RANK_LIST, RANK_BINARY, RANK_NONE };

static int rank_of(uint8_t tag)
{
    switch (tag) {
    case SMALL_INTEGER_EXT: case INTEGER_EXT: case SMALL_BIG_EXT:
    case LARGE_BIG_EXT: case FLOAT_EXT: case NEW_FLOAT_EXT:
        return RANK_NUMBER;
    case ATOM_EXT: case ATOM_UTF8_EXT: case SMALL_ATOM_EXT:
    case SMALL_ATOM_UTF8_EXT:
        return RANK_ATOM;
    case NEW_REFERENCE_EXT: case NEWER_REFERENCE_EXT: case REFERENCE_EXT:
        return RANK_REF;
    case NEW_FUN_EXT: case EXPORT_EXT:
        return RANK_FUN;
    case PORT_EXT: case NEW_PORT_EXT: case V4_PORT_EXT:
        return RANK_PORT;
    case PID_EXT: case NEW_PID_EXT:
        return RANK_PID;
    case SMALL_TUPLE_EXT: case LARGE_TUPLE_EXT:
        return RANK_TUPLE;
    case MAP_EXT:
        return RANK_MAP;
    case NIL_EXT:
        return RANK_NIL;
    case LIST_EXT: case STRING_EXT:
        return RANK_LIST;
    case BINARY_EXT: case BIT_BINARY_EXT:
        return RANK_BINARY;
    default:
        return RANK_NONE;
    }
}

/* A decoded atom: its text, UTF-8 or (ATOM_EXT, SMALL_ATOM_EXT) Latin-1,
** which OTP 25 writes for atoms it can. */
typedef struct text {
    const uint8_t *s;
    size_t n;
    int latin1;
} text;

static int read_atom(const uint8_t **p, const uint8_t *end, text *t)
{
    const uint8_t *q = *p;
    if (skip_atom(p, end) != 0)
        return -1;
    int wide = q[0] == ATOM_EXT || q[0] == ATOM_UTF8_EXT;
    t->s = q + (wide ? 3 : 2);
    t->n = (size_t)(*p - t->s);
    t->latin1 = q[0] == ATOM_EXT || q[0] == SMALL_ATOM_EXT;
    return 0;
}

/* The next character of an atom's text as a code point (UTF-8 of a code
** point compares as the code point: the VM compares atoms' UTF-8 bytes). */
static uint32_t next_char(const text *t, size_t *i)
{
    uint8_t c = t->s[(*i)++];
    if (t->latin1 || c < 0x80)
        return c;
    int more = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
    uint32_t cp = c & (0x3fu >> more);
    for (int j = 0; j < more && *i < t->n; j++)
        cp = cp << 6 | (t->s[(*i)++] & 0x3fu);
    return cp;
}

static int cmp_atoms(const text *a, const text *b)
{
    size_t i = 0, j = 0;
    while (i < a->n && j < b->n) {
        uint32_t x = next_char(a, &i), y = next_char(b, &j);
        if (x != y)
            return x < y ? -1 : 1;
    }
    return i < a->n ? 1 : j < b->n ? -1 : 0;
}

static int cmp_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int c = n ? memcmp(a, b, n) : 0;
    if (c != 0)
        return c < 0 ? -1 : 1;
    return an < bn ? -1 : an > bn;
}

static int cmp_u32(uint32_t a, uint32_t b)
{
    return a < b ? -1 : a > b;
}

/* An integer as sign and magnitude (little-endian bytes, no high zeros). */
typedef struct integer {
    int neg;
    uint8_t small[4];
    const uint8_t *mag;
    size_t n;
} integer;

static int read_integer(const uint8_t **p, const uint8_t *end, integer *v)
{
    const uint8_t *q = *p;
    size_t avail = (size_t)(end - q);
    if (avail < 2)
        return -1;
    if (q[0] == SMALL_INTEGER_EXT || q[0] == INTEGER_EXT) {
        uint32_t m;
        v->neg = 0;
        if (q[0] == SMALL_INTEGER_EXT) {
            m = q[1];
            *p = q + 2;
        } else {
            if (avail < 5)
                return -1;
            int32_t x = (int32_t)etf_be32(q + 1);
            v->neg = x < 0;
            m = x < 0 ? (uint32_t)0 - (uint32_t)x : (uint32_t)x;
            *p = q + 5;
        }
        for (int j = 0; j < 4; j++)
            v->small[j] = (uint8_t)(m >> (8 * j));
        v->mag = v->small;
        v->n = 4;
    } else if (q[0] == SMALL_BIG_EXT || q[0] == LARGE_BIG_EXT) {
        size_t head = q[0] == SMALL_BIG_EXT ? 3 : 6;
        if (avail < head)
            return -1;
        size_t n = q[0] == SMALL_BIG_EXT ? q[1] : etf_be32(q + 1);
        if (avail - head < n)
            return -1;
        v->neg = q[head - 1] != 0;
        v->mag = q + head;
        v->n = n;
        *p = q + head + n;
    } else {
        return -1;
    }
    while (v->n > 0 && v->mag[v->n - 1] == 0)
        v->n--;
    if (v->n == 0)
        v->neg = 0;
    return 0;
}

static int cmp_integer(const integer *a, const integer *b)
{
    if (a->neg != b->neg)
        return a->neg ? -1 : 1;
    int c = 0;
    if (a->n != b->n) {
        c = a->n < b->n ? -1 : 1;
    } else {
        for (size_t j = a->n; j-- > 0 && c == 0;)
            c = cmp_u32(a->mag[j], b->mag[j]);
    }
    return a->neg ? -c : c;
}

/* A pid of NEW_PID_EXT or a ref of NEWER_REFERENCE_EXT with three ID words,
** of the simulated creation. */
typedef struct ident {
    text node;
    uint32_t w[3];  /* pid: number, serial; ref: the ID words */
} ident;

static int read_pid(const uint8_t **p, const uint8_t *end, uint32_t creation,
                    ident *v)
{
    const uint8_t *q = *p + 1;
    if (**p != NEW_PID_EXT || read_atom(&q, end, &v->node) != 0 || end - q < 12 ||
        etf_be32(q + 8) != creation)
        return -1;
    v->w[0] = etf_be32(q);
    v->w[1] = etf_be32(q + 4);
    *p = q + 12;
    return 0;
}

static int read_ref(const uint8_t **p, const uint8_t *end, uint32_t creation,
                    ident *v)
{
    const uint8_t *q = *p;
    if (q[0] != NEWER_REFERENCE_EXT || end - q < 3 || etf_be16(q + 1) != 3)
        return -1;
    q += 3;
    if (read_atom(&q, end, &v->node) != 0 || end - q < 16 || etf_be32(q) != creation)
        return -1;
    for (int j = 0; j < 3; j++)
        v->w[j] = etf_be32(q + 4 + 4 * j);
    *p = q + 16;
    return 0;
}

/* The list at *p as a sequence of elements: a STRING_EXT's bytes, or a
** proper LIST_EXT's terms. */
typedef struct cursor {
    const uint8_t *p;   /* the next element (LIST_EXT), or byte (STRING) */
    uint32_t left;
    int string;
} cursor;

static int open_list(const uint8_t **p, const uint8_t *end, cursor *c)
{
    const uint8_t *q = *p;
    size_t avail = (size_t)(end - q);
    if (q[0] == STRING_EXT) {
        if (avail < 3 || avail - 3 < etf_be16(q + 1))
            return -1;
        c->left = etf_be16(q + 1);
        c->string = 1;
        c->p = q + 3;
    } else if (q[0] == LIST_EXT) {
        if (avail < 5)
            return -1;
        c->left = etf_be32(q + 1);
        c->string = 0;
        c->p = q + 5;
    } else {
        return -1;
    }
    return 0;
}

static int cmp_term(const uint8_t **pa, const uint8_t *ea, const uint8_t **pb,
                    const uint8_t *eb, uint32_t creation, int depth, int *order);

/* Compares the next elements of two lists; advances both when equal. */
static int cmp_element(cursor *a, const uint8_t *ea, cursor *b,
                       const uint8_t *eb, uint32_t creation, int depth, int *order)
{
    uint8_t sa[2] = { SMALL_INTEGER_EXT, 0 }, sb[2] = { SMALL_INTEGER_EXT, 0 };
    const uint8_t *xa = a->p, *xb = b->p, *enda = ea, *endb = eb;
    if (a->string) {
        sa[1] = *a->p;
        xa = sa;
        enda = sa + 2;
    }
    if (b->string) {
        sb[1] = *b->p;
        xb = sb;
        endb = sb + 2;
    }
    if (cmp_term(&xa, enda, &xb, endb, creation, depth, order) != 0)
        return -1;
    a->p = a->string ? a->p + 1 : xa;
    b->p = b->string ? b->p + 1 : xb;
    a->left--;
    b->left--;
    return 0;
}

static int cmp_list(const uint8_t **pa, const uint8_t *ea, const uint8_t **pb,
                    const uint8_t *eb, uint32_t creation, int depth, int *order)
{
    cursor a, b;
    if (open_list(pa, ea, &a) != 0 || open_list(pb, eb, &b) != 0)
        return -1;
    *order = 0;
    while (a.left > 0 && b.left > 0) {
        if (cmp_element(&a, ea, &b, eb, creation, depth, order) != 0)
            return -1;
        if (*order != 0)
            return 0;
    }
    /* A proper list's tail is [] (improper ones are not supported). */
    if ((!a.string && a.left == 0 && (a.p >= ea || *a.p != NIL_EXT)) ||
        (!b.string && b.left == 0 && (b.p >= eb || *b.p != NIL_EXT)))
        return -1;
    *order = a.left > 0 ? 1 : b.left > 0 ? -1 : 0;
    if (*order == 0) {
        *pa = a.string ? a.p : a.p + 1;
        *pb = b.string ? b.p : b.p + 1;
    }
    return 0;
}

static int cmp_term(const uint8_t **pa, const uint8_t *ea, const uint8_t **pb,
                    const uint8_t *eb, uint32_t creation, int depth, int *order)
{
    if (depth > ETF_ORDER_DEPTH || *pa >= ea || *pb >= eb)
        return -1;
    const uint8_t *a = *pa, *b = *pb;
    int ra = rank_of(a[0]), rb = rank_of(b[0]);
    if (ra == RANK_NONE || rb == RANK_NONE)
        return -1;
    if (ra != rb) {
        /* Only supported terms are ordered: an unsupported one on either
        ** side (a float, a fun...) fails even when the ranks differ, so
        ** that whether a comparison fails does not depend on the values. */
        if ((ra == RANK_NUMBER && (a[0] == FLOAT_EXT || a[0] == NEW_FLOAT_EXT)) ||
            (rb == RANK_NUMBER && (b[0] == FLOAT_EXT || b[0] == NEW_FLOAT_EXT)) ||
            ra == RANK_FUN || rb == RANK_FUN || ra == RANK_PORT || rb == RANK_PORT ||
            ra == RANK_MAP || rb == RANK_MAP || a[0] == BIT_BINARY_EXT ||
            b[0] == BIT_BINARY_EXT)
            return -1;
        *order = ra < rb ? -1 : 1;
        return 0;
    }
    switch (ra) {
    case RANK_NUMBER: {
        integer x, y;
        if (read_integer(pa, ea, &x) != 0 || read_integer(pb, eb, &y) != 0)
            return -1;
        *order = cmp_integer(&x, &y);
        return 0;
    }
    case RANK_ATOM: {
        text x, y;
        if (read_atom(pa, ea, &x) != 0 || read_atom(pb, eb, &y) != 0)
            return -1;
        *order = cmp_atoms(&x, &y);
        return 0;
    }
    case RANK_PID: {
        ident x, y;
        if (read_pid(pa, ea, creation, &x) != 0 || read_pid(pb, eb, creation, &y) != 0)
            return -1;
        /* OTP 25: serial, number, node, creation (equal here). */
        *order = cmp_u32(x.w[1], y.w[1]);
        if (*order == 0)
            *order = cmp_u32(x.w[0], y.w[0]);
        if (*order == 0)
            *order = cmp_atoms(&x.node, &y.node);
        return 0;
    }
    case RANK_REF: {
        ident x, y;
        if (read_ref(pa, ea, creation, &x) != 0 || read_ref(pb, eb, creation, &y) != 0)
            return -1;
        /* OTP 25: node, creation (equal here), the ID words from the last. */
        *order = cmp_atoms(&x.node, &y.node);
        for (int j = 2; j >= 0 && *order == 0; j--)
            *order = cmp_u32(x.w[j], y.w[j]);
        return 0;
    }
    case RANK_TUPLE: {
        uint32_t na, nb;
        size_t ha = a[0] == SMALL_TUPLE_EXT ? 2 : 5, hb = b[0] == SMALL_TUPLE_EXT ? 2 : 5;
        if ((size_t)(ea - a) < ha || (size_t)(eb - b) < hb)
            return -1;
        na = ha == 2 ? a[1] : etf_be32(a + 1);
        nb = hb == 2 ? b[1] : etf_be32(b + 1);
        *order = cmp_u32(na, nb);
        if (*order != 0)
            return 0;
        *pa = a + ha;
        *pb = b + hb;
        for (uint32_t j = 0; j < na; j++)
            if (cmp_term(pa, ea, pb, eb, creation, depth + 1, order) != 0 || *order != 0)
                return *order != 0 ? 0 : -1;
        return 0;
    }
    case RANK_NIL:
        *pa = a + 1;
        *pb = b + 1;
        *order = 0;
        return 0;
    case RANK_LIST:
        return cmp_list(pa, ea, pb, eb, creation, depth + 1, order);
    case RANK_BINARY: {
        if (a[0] != BINARY_EXT || b[0] != BINARY_EXT || ea - a < 5 || eb - b < 5)
            return -1;
        size_t na = etf_be32(a + 1), nb = etf_be32(b + 1);
        if ((size_t)(ea - a) - 5 < na || (size_t)(eb - b) - 5 < nb)
            return -1;
        *order = cmp_bytes(a + 5, na, b + 5, nb);
        *pa = a + 5 + na;
        *pb = b + 5 + nb;
        return 0;
    }
    default:
        return -1;
    }
}

int etf_order_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                  uint32_t creation, int *order)
{
    const uint8_t *pa = a, *pb = b;
    return cmp_term(&pa, a + alen, &pb, b + blen, creation, 0, order);
}

/* Whether the term a[0..n) is supported: compared with itself, every part
** of it is compared, so any unsupported part fails. */
static int supported(const uint8_t *a, size_t n, uint32_t creation)
{
    int order;
    return etf_order_cmp(a, n, a, n, creation, &order) == 0 && order == 0;
}

/*
** Sorting spans.
*/

typedef struct span {
    const uint8_t *key;     /* the key's bytes */
    size_t keylen;
    size_t off, len;        /* the whole pair's or element's bytes */
} span;

/* The order of two spans: by key, then (equal keys: only in a term whose
** pids are masked) by their bytes. */
static int cmp_span(const span *x, const span *y, const uint8_t *src,
                    uint32_t creation, int *order)
{
    if (etf_order_cmp(x->key, x->keylen, y->key, y->keylen, creation, order) != 0)
        return -1;
    if (*order == 0)
        *order = cmp_bytes(src + x->off, x->len, src + y->off, y->len);
    return 0;
}

/* Writes the spans s[0..n) of src, in that order, over dst[0..total). */
static int permute(const span *s, size_t n, uint8_t *dst, const uint8_t *src,
                   size_t total)
{
    uint8_t *tmp = malloc(total ? total : 1);
    if (tmp == NULL)
        return -1;
    size_t at = 0;
    for (size_t j = 0; j < n; j++) {
        memcpy(tmp + at, src + s[j].off, s[j].len);
        at += s[j].len;
    }
    memcpy(dst, tmp, total);
    free(tmp);
    return 0;
}

/* Sorts s[0..n) by key (insertion sort: n is small, or the input nearly
** sorted) and, unless check_only, writes the spans in that order over
** dst[0..total) (and the same spans of follow, when given, over
** follow[0..total): a term of the same layout).  0, or -1 when a key is
** unsupported or out of memory. */
static int sort_spans(span *s, size_t n, uint8_t *dst, const uint8_t *src,
                      uint8_t *follow, size_t total, uint32_t creation,
                      int check_only)
{
    int any = 0;
    for (size_t j = 0; j < n; j++) {
        if (!supported(s[j].key, s[j].keylen, creation))
            return -1;
    }
    if (check_only)
        return 0;
    for (size_t j = 1; j < n; j++) {
        span x = s[j];
        size_t i = j;
        while (i > 0) {
            int order;
            if (cmp_span(&s[i - 1], &x, src, creation, &order) != 0)
                return -1;
            if (order <= 0)
                break;
            s[i] = s[i - 1];
            i--;
            any = 1;
        }
        s[i] = x;
    }
    if (!any)
        return 0;
    if (follow != NULL && permute(s, n, follow, follow, total) != 0)
        return -1;
    return permute(s, n, dst, src, total);
}

/* The map at buf + off: its pairs sorted when a key holds a pid or ref
** and the map is small. */
static int sort_map(uint8_t *buf, uint8_t *follow, size_t len, size_t off,
                    uint32_t creation, int check_only)
{
    const uint8_t *end = buf + len;
    if (len - off < 5)
        return -1;
    uint32_t n = etf_be32(buf + off + 1);
    if (n > ETF_SMALL_MAP || n < 2)
        return 0;
    span s[ETF_SMALL_MAP];
    const uint8_t *p = buf + off + 5, *start = p;
    int pidref = 0;
    for (uint32_t j = 0; j < n; j++) {
        const uint8_t *k = p, *v;
        if (skip_term(k, end, &v, &pidref, NULL, buf) != 0 ||
            skip_term(v, end, &p, &(int){ 0 }, NULL, buf) != 0)
            return -1;
        s[j] = (span){ k, (size_t)(v - k), (size_t)(k - start), (size_t)(p - k) };
    }
    if (!pidref)
        return 0;
    return sort_spans(s, n, buf + off + 5, start, follow ? follow + off + 5 : NULL,
                      (size_t)(p - start), creation, check_only);
}

static int sort_maps(uint8_t *buf, uint8_t *follow, size_t len, uint32_t creation,
                     int check_only)
{
    if (len < 1 || buf[0] != 131)
        return -1;
    offsets maps = { NULL, 0, 0 };
    const uint8_t *next;
    int pidref = 0, err = skip_term(buf + 1, buf + len, &next, &pidref, &maps, buf) != 0 ||
                          next != buf + len;
    /* Inner maps first: a map nested in another starts after it. */
    for (size_t j = maps.n; j-- > 0 && !err;)
        err = sort_map(buf, follow, len, maps.v[j], creation, check_only) != 0;
    free(maps.v);
    return err ? -1 : 0;
}

int etf_sort_maps(uint8_t *buf, size_t len, uint32_t creation, int check_only)
{
    return sort_maps(buf, NULL, len, creation, check_only);
}

int etf_sort_maps_with(uint8_t *buf, uint8_t *follow, size_t len,
                       uint32_t creation)
{
    return sort_maps(buf, follow, len, creation, 0);
}

static int push_run(etf_run **v, size_t *n, size_t *cap, etf_run r)
{
    if (*n == *cap) {
        size_t ncap = *cap ? 2 * *cap : 8;
        etf_run *grown = realloc(*v, ncap * sizeof *grown);
        if (grown == NULL)
            return -1;
        *v = grown;
        *cap = ncap;
    }
    (*v)[(*n)++] = r;
    return 0;
}

static int cmp_run(const void *a, const void *b)
{
    const etf_run *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

int etf_equal_runs(const uint8_t *buf, size_t len, etf_run **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    if (len < 1 || buf[0] != 131)
        return -1;
    const uint8_t *end = buf + len, *next;
    offsets maps = { NULL, 0, 0 };
    int pidref = 0;
    if (skip_term(buf + 1, end, &next, &pidref, &maps, buf) != 0 || next != end) {
        free(maps.v);
        return -1;
    }
    etf_run *v = NULL;
    size_t n = 0, cap = 0;
    int err = 0;
    for (size_t m = 0; m < maps.n && !err; m++) {
        size_t off = maps.v[m];
        if (len - off < 5) {
            err = 1;
            break;
        }
        uint32_t npairs = etf_be32(buf + off + 1);
        if (npairs > ETF_SMALL_MAP || npairs < 2)
            continue;
        const uint8_t *p = buf + off + 5;
        const uint8_t *at[ETF_SMALL_MAP + 1];
        int keyref = 0;
        for (uint32_t j = 0; j < npairs && !err; j++) {
            const uint8_t *v2;
            at[j] = p;
            err = skip_term(p, end, &v2, &keyref, NULL, buf) != 0 ||
                  skip_term(v2, end, &p, &(int){ 0 }, NULL, buf) != 0;
        }
        at[npairs] = p;
        if (err || !keyref)
            continue;
        for (uint32_t j = 0; j < npairs;) {
            uint32_t k = j + 1;
            size_t l = (size_t)(at[j + 1] - at[j]);
            while (k < npairs && (size_t)(at[k + 1] - at[k]) == l &&
                   memcmp(at[k], at[j], l) == 0)
                k++;
            if (k - j >= 2)
                err = push_run(&v, &n, &cap, (etf_run){ (size_t)(at[j] - buf),
                                                        (size_t)(at[k] - buf), k - j });
            j = k;
        }
    }
    free(maps.v);
    if (err) {
        free(v);
        return -1;
    }
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_run);
    *out = v;
    *nout = n;
    return 0;
}

/* The start of the objects list of an mce_ets table's data buf[0..len)
** (after Type, Protection and KeyPos), or NULL when malformed. */
static const uint8_t *ets_objects(const uint8_t *buf, size_t len)
{
    const uint8_t *end = buf + len, *p = buf + 3;
    if (len < 4 || buf[0] != 131 || buf[1] != SMALL_TUPLE_EXT || buf[2] < 4)
        return NULL;
    int pidref = 0;
    for (int j = 0; j < 3; j++)
        if (skip_term(p, end, &p, &pidref, NULL, buf) != 0)
            return NULL;
    return p < end ? p : NULL;
}

int etf_ets_sort(uint8_t *buf, size_t len, uint32_t creation, int check_only)
{
    const uint8_t *end = buf + len, *p = ets_objects(buf, len);
    if (p != NULL && *p == NIL_EXT)
        return 0;
    if (p == NULL || *p != LIST_EXT || end - p < 5)
        return -1;
    uint32_t n = etf_be32(p + 1);
    p += 5;
    if (n > (size_t)(end - p) / 3)
        return -1;
    span *s = malloc((n ? n : 1) * sizeof *s);
    if (s == NULL)
        return -1;
    uint8_t *start = buf + (p - buf);
    int err = 0, pidref = 0;
    for (uint32_t j = 0; j < n && !err; j++) {
        const uint8_t *k = p + 2, *v, *next;
        err = end - p < 2 || p[0] != SMALL_TUPLE_EXT || p[1] != 2 ||
              skip_term(k, end, &v, &pidref, NULL, buf) != 0 ||
              skip_term(v, end, &next, &pidref, NULL, buf) != 0;
        if (!err) {
            s[j] = (span){ k, (size_t)(v - k), (size_t)(p - start), (size_t)(next - p) };
            p = next;
        }
    }
    err = err || p >= end || *p != NIL_EXT ||
          sort_spans(s, n, start, start, NULL, (size_t)(p - start), creation, check_only) != 0;
    free(s);
    return err ? -1 : 0;
}

int etf_ets_keys(const uint8_t *buf, size_t len, uint8_t **out, size_t *outlen)
{
    const uint8_t *end = buf + len, *p = ets_objects(buf, len);
    *out = NULL;
    *outlen = 0;
    if (p == NULL)
        return -1;
    int pidref = 0;
    uint32_t n = 0;
    if (*p == LIST_EXT && end - p >= 5)
        n = etf_be32(p + 1);
    else if (*p != NIL_EXT)
        return -1;
    /* At most the data's length: the keys are parts of it. */
    uint8_t *keys = malloc(len + 7);
    if (keys == NULL)
        return -1;
    size_t at = 6;
    keys[0] = 131;
    keys[1] = LIST_EXT;
    keys[2] = (uint8_t)(n >> 24);
    keys[3] = (uint8_t)(n >> 16);
    keys[4] = (uint8_t)(n >> 8);
    keys[5] = (uint8_t)n;
    p += n ? 5 : 1;
    int err = 0;
    for (uint32_t j = 0; j < n && !err; j++) {
        const uint8_t *k = p + 2, *v;
        err = end - p < 2 || p[0] != SMALL_TUPLE_EXT || p[1] != 2 ||
              skip_term(k, end, &v, &pidref, NULL, buf) != 0 ||
              skip_term(v, end, &p, &pidref, NULL, buf) != 0;
        if (!err) {
            memcpy(keys + at, k, (size_t)(v - k));
            at += (size_t)(v - k);
        }
    }
    if (n) {
        err = err || p >= end || *p != NIL_EXT;
        p++;
    }
    for (int j = 4; j < buf[2] && !err; j++)
        err = skip_term(p, end, &p, &pidref, NULL, buf) != 0;
    if (err || p != end) {
        free(keys);
        return -1;
    }
    if (n == 0) {
        keys[1] = NIL_EXT;
        at = 2;
    } else {
        keys[at++] = NIL_EXT;
    }
    *out = keys;
    *outlen = at;
    return 0;
}
