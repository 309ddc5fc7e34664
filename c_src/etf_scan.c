/*
** etf_scan.c: an iterative walker over external term format bytes.
**
** It only needs to skip terms and look inside pids, so it keeps a count of
** terms still to read instead of recursing (messages can nest deeply).
** Tags follow erts/emulator/beam/external.h of OTP 25.
*/
#include "etf_scan.h"

#include <stdlib.h>

#include "etf_order.h"
#include "etf_tags.h"
#include <string.h>


typedef struct reader {
    uint8_t *p, *end;
} reader;

static int need(const reader *r, size_t n)
{
    return (size_t)(r->end - r->p) >= n;
}


/* Reads an atom, returning its text; -1 if the next term is not an atom. */
static int read_atom(reader *r, uint8_t **text, size_t *n)
{
    if (!need(r, 1))
        return -1;
    uint8_t tag = *r->p++;
    size_t len;
    if (tag == ATOM_EXT || tag == ATOM_UTF8_EXT) {
        if (!need(r, 2))
            return -1;
        len = etf_be16(r->p);
        r->p += 2;
    } else if (tag == SMALL_ATOM_EXT || tag == SMALL_ATOM_UTF8_EXT) {
        if (!need(r, 1))
            return -1;
        len = *r->p++;
    } else {
        return -1;
    }
    if (!need(r, len))
        return -1;
    *text = r->p;
    *n = len;
    r->p += len;
    return 0;
}

int etf_sink_push(etf_pid_sink *s, uint32_t pid)
{
    if (s->n == s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 8;
        uint32_t *grown = realloc(s->pids, cap * sizeof *grown);
        if (grown == NULL)
            return -1;
        s->pids = grown;
        s->cap = cap;
    }
    s->pids[s->n++] = pid;
    return 0;
}

/* Skips an integer term (the old index and old uniq of a fun). */
static int skip_integer(reader *r)
{
    if (!need(r, 1))
        return -1;
    uint8_t tag = *r->p++;
    size_t n = tag == SMALL_INTEGER_EXT ? 1 : tag == INTEGER_EXT ? 4 : 0;
    if (n == 0 || !need(r, n))
        return -1;
    r->p += n;
    return 0;
}

/* Index of the simulated node named text[0..n), or -1. */
static int node_index(const etf_nodes *nodes, const uint8_t *text, size_t n)
{
    for (uint32_t i = 0; i < nodes->n; i++)
        if (nodes->lens[i] == n && memcmp(nodes->names[i], text, n) == 0)
            return (int)i;
    return -1;
}

int etf_scan_pids(uint8_t *buf, size_t len, const char *node,
                  size_t nodelen, uint32_t creation, etf_pid_sink *sink)
{
    etf_nodes one = { .n = 1 };
    one.names[0] = node;
    one.lens[0] = nodelen;
    return etf_scan_keys(buf, len, &one, creation, sink);
}

static int sink_visit(void *ctx, uint32_t key, uint8_t *word, int where)
{
    (void)word;
    (void)where;
    return etf_sink_push(ctx, key);
}

int etf_scan_keys(uint8_t *buf, size_t len, const etf_nodes *nodes,
                  uint32_t creation, etf_pid_sink *sink)
{
    return etf_walk_keys(buf, len, nodes, creation, sink_visit, sink);
}

typedef struct open_map {
    uint64_t end, left;
    uint8_t big, in_key;
    uint8_t key_ids;    /* the current pair's key holds a pid or ref */
    uint8_t child_rec;  /* the current pair's value is a `{child, ...}' */
} open_map;

/* Whether the term at r is a tuple whose first element is the atom
** `child': OTP supervisor's #child{} record. */
static int is_child_record(reader r)
{
    uint8_t *text;
    size_t n;
    if (!need(&r, 2) || r.p[0] != SMALL_TUPLE_EXT || r.p[1] < 2)
        return 0;
    r.p += 2;
    return read_atom(&r, &text, &n) == 0 && n == 5 && memcmp(text, "child", 5) == 0;
}

/* A simulated pid or ref was met: the keys being read hold one. */
static void mark_keys(open_map *maps, size_t depth)
{
    for (size_t d = 0; d < depth; d++)
        if (maps[d].in_key)
            maps[d].key_ids = 1;
}

int etf_walk_keys(uint8_t *buf, size_t len, const etf_nodes *nodes,
                  uint32_t creation, etf_key_visit visit, void *ctx)
{
    reader r = { buf, buf + len };
    if (!need(&r, 1) || *r.p++ != 131)
        return -1;
    uint64_t pending = 1;   /* terms still to read */
    /* The maps open around the term being read (terms are read depth-first,
    ** in order): a map's terms end when `pending' is back to its `end', and
    ** its next pair's key or value starts when `pending' is end + left (the
    ** terms of the child before it all read).  nkey and nbig count the open
    ** maps whose key is being read, small and large. */
    open_map local[16], *maps = local;
    size_t depth = 0, cap = 16;
    uint32_t nkey = 0, nbig = 0;
    int rc = -1;
    while (pending > 0) {
        while (depth > 0 && pending == maps[depth - 1].end) {
            depth--;
            nkey -= maps[depth].in_key && !maps[depth].big;
            nbig -= maps[depth].in_key && maps[depth].big;
        }
        if (depth > 0 && pending == maps[depth - 1].end + maps[depth - 1].left) {
            open_map *m = &maps[depth - 1];
            nkey -= m->in_key && !m->big;
            nbig -= m->in_key && m->big;
            m->in_key = m->left % 2 == 0;
            if (m->in_key)
                m->key_ids = 0;
            else
                m->child_rec = (uint8_t)is_child_record(r);
            nkey += m->in_key && !m->big;
            nbig += m->in_key && m->big;
            m->left--;
        }
        int where = (depth > 0 ? ETF_IN_MAP : 0) | (nkey > 0 ? ETF_IN_MAP_KEY : 0) |
                    (nbig > 0 ? ETF_IN_BIG_MAP_KEY : 0) |
                    (depth > 0 && !maps[depth - 1].in_key && !maps[depth - 1].key_ids &&
                     maps[depth - 1].child_rec
                         ? ETF_IN_NAMED_VALUE : 0);
        pending--;
        if (!need(&r, 1))
            goto done;
        uint8_t tag = *r.p++;
        size_t skip = 0;
        int leaf = etf_leaf_size(tag, r.p, (size_t)(r.end - r.p), &skip);
        if (leaf < 0)
            goto done;
        if (leaf == 0) switch (tag) {     /* the terms with terms inside, and pids and refs */
        case SMALL_TUPLE_EXT:
            if (!need(&r, 1)) goto done;
            pending += *r.p++;
            break;
        case LARGE_TUPLE_EXT:
            if (!need(&r, 4)) goto done;
            pending += etf_be32(r.p);
            r.p += 4;
            break;
        case LIST_EXT:
            if (!need(&r, 4)) goto done;
            pending += (uint64_t)etf_be32(r.p) + 1;   /* elements and tail */
            r.p += 4;
            break;
        case MAP_EXT: {
            if (!need(&r, 4)) goto done;
            uint32_t n = etf_be32(r.p);
            if (depth == cap) {
                open_map *grown = malloc(2 * cap * sizeof *grown);
                if (grown == NULL) goto done;
                memcpy(grown, maps, depth * sizeof *maps);
                if (maps != local)
                    free(maps);
                maps = grown;
                cap *= 2;
            }
            maps[depth++] = (open_map){ pending, 2 * (uint64_t)n, n > ETF_SMALL_MAP, 0, 0, 0 };
            pending += 2 * (uint64_t)n;
            r.p += 4;
            break;
        }
        case PID_EXT: case NEW_PID_EXT: {
            uint8_t *text;
            size_t n;
            if (read_atom(&r, &text, &n) != 0) goto done;
            size_t tail = tag == NEW_PID_EXT ? 12 : 9;
            if (!need(&r, tail)) goto done;
            uint32_t num = etf_be32(r.p);
            uint32_t cr = tag == NEW_PID_EXT ? etf_be32(r.p + 8) : r.p[8];
            int ni = cr == creation && num < ETF_NUM_LIMIT
                         ? node_index(nodes, text, n) : -1;
            if (ni >= 0)
                mark_keys(maps, depth);
            if (ni >= 0 &&
                visit(ctx, (uint32_t)ni << ETF_NODE_SHIFT | num, r.p, where) != 0)
                goto done;
            skip = tail;
            break;
        }
        case NEW_REFERENCE_EXT: case NEWER_REFERENCE_EXT: {
            if (!need(&r, 2)) goto done;
            size_t words = etf_be16(r.p);
            r.p += 2;
            uint8_t *text;
            size_t n;
            if (read_atom(&r, &text, &n) != 0) goto done;
            size_t crlen = tag == NEWER_REFERENCE_EXT ? 4 : 1;
            skip = crlen + 4 * words;
            if (!need(&r, skip)) goto done;
            if (tag == NEWER_REFERENCE_EXT && words >= 2 && etf_be32(r.p) == creation) {
                uint32_t counter = etf_be32(r.p + 4), creator = etf_be32(r.p + 8);
                uint32_t id = creator << ETF_REF_COUNTER_BITS | counter;
                int ours = counter < ETF_REF_COUNTER_LIMIT && creator < ETF_REF_CREATOR_LIMIT;
                for (size_t w = 2; ours && w < words; w++)
                    ours = etf_be32(r.p + 4 + 4 * w) == 0 ||
                           (w == 2 && etf_be32(r.p + 4 + 4 * w) == ETF_REF_TID_MARK);
                int ni = ours ? node_index(nodes, text, n) : -1;
                if (ni >= 0)
                    mark_keys(maps, depth);
                if (ni >= 0 &&
                    visit(ctx, ((uint32_t)ni << ETF_NODE_SHIFT | id) | ETF_REF_TAG,
                          r.p + 8, where) != 0)
                    goto done;
            }
            break;
        }
        case EXPORT_EXT:
            pending += 3;
            break;
        case NEW_FUN_EXT: {
            /* Size, arity, uniq[16], index, numfree, then module, old index,
            ** old uniq, creator pid, and numfree free variables. */
            if (!need(&r, 29)) goto done;
            pending += etf_be32(r.p + 25);
            r.p += 29;
            uint8_t *text;
            size_t n;
            if (read_atom(&r, &text, &n) != 0 || skip_integer(&r) != 0 ||
                skip_integer(&r) != 0 || !need(&r, 1))
                goto done;
            uint8_t ptag = *r.p++;
            if ((ptag != NEW_PID_EXT && ptag != PID_EXT) ||
                read_atom(&r, &text, &n) != 0)
                goto done;
            skip = ptag == NEW_PID_EXT ? 12 : 9;
            if (!need(&r, skip)) goto done;
            memset(r.p, 0, skip);
            break;
        }
        default:
            /* Ports, old-style refs and funs cannot occur in a model. */
            goto done;
        }
        if (!need(&r, skip))
            goto done;
        r.p += skip;
    }
    rc = r.p == r.end ? 0 : -1;
done:
    if (maps != local)
        free(maps);
    return rc;
}
