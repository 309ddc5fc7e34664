/*
** search_cluster.c: one participant's share of a distributed search: the
** outbox of successors owned elsewhere, the import of states from the
** other participants, and where each segment of a path starts (the
** protocol is in search_cluster.h).
**
** Invariants: links[0..nlinks) are the pool nodes that start a remote
** segment, in increasing node order (nodes are added in order and there
** is one worker), each with its parent's participant and node index, so
** a segment's origin is a binary search away.  sent_terms[k] holds the
** terms this participant sent to participant k, in the order k reads them
** into its read_terms[this one] (state_wire.h's transport form), and
** sent_labels[k] / read_labels likewise the steps' labels (label_dict.h).
*/
#include "search_cluster.h"

#include <stdlib.h>
#include <string.h>

#include "label_dict.h"
#include "search_internal.h"
#include "state_wire.h"

struct remote_link {
    uint32_t node, from, from_index;
};

struct search_cluster {
    cluster_out *out;
    size_t nout, capout;
    struct remote_link *links;
    size_t nlinks, caplinks;
    sys_state tmp;             /* an imported state, buffers reused */
    wire_buf wb;               /* every successor's bytes, buffers reused */
    /* The connections' dictionaries (state_wire.h, transport form): what
    ** this participant sent to each, what it read from each; n each. */
    wire_buf *sent_terms;
    wire_dict *read_terms;
    label_sent *sent_labels;   /* and the labels of the steps (label_dict.h) */
    label_read *read_labels;
    wire_buf tb;               /* a successor in transport form */
    cluster_stats st;
};

static struct search_cluster *cl_of(search *s)
{
    if (s->cl != NULL || s->cfg.cluster_n <= 1)
        return s->cl;
    struct search_cluster *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->sent_terms = calloc(s->cfg.cluster_n, sizeof *c->sent_terms);
    c->read_terms = calloc(s->cfg.cluster_n, sizeof *c->read_terms);
    c->sent_labels = calloc(s->cfg.cluster_n, sizeof *c->sent_labels);
    c->read_labels = calloc(s->cfg.cluster_n, sizeof *c->read_labels);
    if (c->sent_terms == NULL || c->read_terms == NULL || c->sent_labels == NULL ||
        c->read_labels == NULL) {
        free(c->sent_terms);
        free(c->read_terms);
        free(c->sent_labels);
        free(c->read_labels);
        free(c);
        return NULL;
    }
    return s->cl = c;
}

size_t search_cluster_outbox(search *s, const cluster_out **out)
{
    *out = s->cl != NULL ? s->cl->out : NULL;
    return s->cl != NULL ? s->cl->nout : 0;
}

void search_cluster_taken(search *s)
{
    struct search_cluster *c = s->cl;
    if (c == NULL)
        return;
    for (size_t k = 0; k < c->nout; k++) {
        free(c->out[k].wire);
        free(c->out[k].label);
        free(c->out[k].perm);
    }
    c->nout = 0;
    c->st.outbox_bytes = 0;
}

int search_cluster_owns(search *s, const sys_state *st)
{
    if (s->cfg.cluster_n <= 1)
        return 1;
    size_t len;
    uint8_t *wire = state_wire_export(s->ps, st, &len);
    if (wire == NULL)
        return -1;
    uint32_t owner = state_wire_owner(wire, len, s->cfg.cluster_n);
    free(wire);
    return owner == s->cfg.cluster_me;
}

int search_cluster_route(search *s, const sys_state *st, uint8_t *label, size_t label_len)
{
    struct search_cluster *c = cl_of(s);
    if (c == NULL)
        return s->cfg.cluster_n > 1 ? -1 : 0;
    /* Every successor is exported to find its owner, most of them to stay
    ** here: into the reused buffer, copied only when it leaves. */
    if (state_wire_export_into(s->ps, st, &c->wb) != 0)
        return -1;
    size_t len = c->wb.n;
    uint32_t owner = state_wire_owner(c->wb.b, len, s->cfg.cluster_n);
    if (owner == s->cfg.cluster_me)
        return 0;
    if (c->nout == c->capout) {
        size_t cap = c->capout ? 2 * c->capout : 64;
        cluster_out *grown = realloc(c->out, cap * sizeof *grown);
        if (grown == NULL)
            return -1;
        c->out = grown;
        c->capout = cap;
    }
    /* What crosses is the transport form: terms the owner was sent before
    ** go as their rank in this connection's dictionary. */
    if (state_wire_encode_for(s->ps, st, &c->sent_terms[owner], &c->tb) != 0)
        return -1;
    len = c->tb.n;
    uint8_t *wire = malloc(len);
    if (wire == NULL)
        return -1;
    memcpy(wire, c->tb.b, len);
    /* The label too crosses through the connection's dictionary; the
    ** search's copy is freed once the encoded one is in the outbox. */
    size_t sent_len;
    uint8_t *sent_label = label_dict_send(&c->sent_labels[owner], label, label_len, &sent_len);
    if (sent_label == NULL) {
        free(wire);
        return -1;
    }
    part_id state;
    uint32_t depth;
    search_pool_node(s->pool, s->expanding, &state, &depth);
    free(label);
    /* The renaming goes with the state: the owner's node keeps it for the
    ** counterexample's way back to concrete pids. */
    c->out[c->nout++] = (cluster_out){ .owner = owner, .parent = s->expanding,
                                       .depth = depth + 1, .wire = wire, .wire_len = len,
                                       .label = sent_label, .label_len = sent_len,
                                       .perm = s->sym_perm, .nperm = s->sym_nperm };
    s->sym_perm = NULL;
    s->sym_nperm = 0;
    size_t perm_bytes = (size_t)c->out[c->nout - 1].nperm * sizeof(sym_pair);
    c->st.sent++;
    c->st.sent_bytes += len + sent_len + perm_bytes;
    c->st.outbox_bytes += len + sent_len + perm_bytes;
    if (depth + 1 > s->st.max_depth_seen)
        s->st.max_depth_seen = depth + 1;
    return 1;
}

static int import(search *s, const uint8_t *wire, size_t len, uint32_t from,
                  uint32_t from_index, uint32_t depth, const uint8_t *label,
                  size_t label_len, sym_pair *perm, uint32_t nperm, const char **why);

int search_cluster_import(search *s, const uint8_t *wire, size_t len, uint32_t from,
                          uint32_t from_index, uint32_t depth, const uint8_t *label,
                          size_t label_len, sym_pair *perm, uint32_t nperm, const char **why)
{
    int r = import(s, wire, len, from, from_index, depth, label, label_len, perm, nperm, why);
    if (r != 1)
        free(perm);
    return r;
}

/* search_cluster_import, perm taken only by a new state's node (1). */
static int import(search *s, const uint8_t *wire, size_t len, uint32_t from,
                  uint32_t from_index, uint32_t depth, const uint8_t *label,
                  size_t label_len, sym_pair *perm, uint32_t nperm, const char **why)
{
    struct search_cluster *c = cl_of(s);
    if (c == NULL || s->pool == NULL) {
        *why = s->cfg.cluster_n > 1 ? "out of memory" : "not a distributed search";
        return -1;
    }
    if (from >= s->cfg.cluster_n || from == s->cfg.cluster_me) {
        *why = "no such participant";
        return -1;
    }
    c->st.received++;
    if (s->finished)
        return 0;
    /* Both dictionaries read every state, new here or not: they follow
    ** the sender's. */
    const uint8_t *lb;
    size_t lbn;
    if (label_dict_read(&c->read_labels[from], label, label_len, &lb, &lbn, why) != 0 ||
        state_wire_decode_for(&s->tx, wire, len, &c->read_terms[from], &c->tmp, why) != 0)
        return -1;
    label = lb;
    label_len = lbn;
    int is_new;
    part_id root = sys_state_encode(s->ps, &c->tmp, &is_new);
    if (root == 0) {
        *why = "out of memory";
        return -1;
    }
    if (!is_new)
        return 0;
    if (c->nlinks == c->caplinks) {
        size_t cap = c->caplinks ? 2 * c->caplinks : 256;
        struct remote_link *grown = realloc(c->links, cap * sizeof *grown);
        if (grown == NULL) {
            *why = "out of memory";
            return -1;
        }
        c->links = grown;
        c->caplinks = cap;
    }
    uint8_t *copy = malloc(label_len ? label_len : 1);
    uint32_t index;
    if (copy == NULL) {
        *why = "out of memory";
        return -1;
    }
    if (label_len > 0)          /* an empty binary's data may be NULL */
        memcpy(copy, label, label_len);
    if (search_pool_add_remote(s->pool, root, depth, copy, label_len, perm, nperm, &index) != 0) {
        free(copy);
        *why = "out of memory";
        return -1;
    }
    c->links[c->nlinks++] = (struct remote_link){ index, from, from_index };
    c->st.received_new++;
    s->st.states++;
    if (depth > s->st.max_depth_seen)
        s->st.max_depth_seen = depth;
    return 1;
}

int search_cluster_origin(search *s, uint32_t i, uint32_t *from, uint32_t *from_index)
{
    uint32_t start;
    if (s->cfg.cluster_n <= 1 || s->pool == NULL || search_pool_segment(s->pool, i, &start) != 0)
        return -1;
    struct search_cluster *c = s->cl;
    size_t lo = 0, hi = c != NULL ? c->nlinks : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->links[mid].node < start)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (c == NULL || lo == c->nlinks || c->links[lo].node != start)
        return 0;       /* the root's segment */
    *from = c->links[lo].from;
    *from_index = c->links[lo].from_index;
    return 1;
}

int search_cluster_labels(search *s, uint32_t i, pool_step **path, size_t *len)
{
    return s->cfg.cluster_n > 1 && s->pool != NULL ? search_pool_path(s->pool, i, path, len) : -1;
}

uint32_t search_cluster_stack_node(const search *s, const uint8_t **label, size_t *len)
{
    *label = s->depth > 0 ? s->stack[0].label : NULL;
    *len = s->depth > 0 ? s->stack[0].label_len : 0;
    return s->path_node;
}

void search_cluster_stats(const search *s, cluster_stats *st)
{
    if (s->cl != NULL)
        *st = s->cl->st;
    else
        memset(st, 0, sizeof *st);
    st->por_sent = s->por_sent;
    st->por_hazard = s->por_hazard;
}

size_t search_cluster_bytes(const search *s)
{
    const struct search_cluster *c = s->cl;
    if (c == NULL)
        return 0;
    size_t dicts = 0;
    for (uint32_t k = 0; k < s->cfg.cluster_n; k++)
        dicts += 2 * c->sent_terms[k].slots * sizeof *c->sent_terms[k].ids +
                 c->read_terms[k].cap * sizeof *c->read_terms[k].ids +
                 label_sent_bytes(&c->sent_labels[k]) + label_read_bytes(&c->read_labels[k]);
    return sizeof *c + c->capout * sizeof *c->out + c->caplinks * sizeof *c->links +
           c->st.outbox_bytes + c->wb.cap + 2 * c->wb.slots * sizeof *c->wb.ids +
           c->tb.cap + dicts;
}

void search_cluster_free(search *s)
{
    struct search_cluster *c = s->cl;
    if (c == NULL)
        return;
    search_cluster_taken(s);
    free(c->out);
    free(c->links);
    sys_state_clear(&c->tmp);
    state_wire_buf_free(&c->wb);
    state_wire_buf_free(&c->tb);
    for (uint32_t k = 0; k < s->cfg.cluster_n; k++) {
        state_wire_buf_free(&c->sent_terms[k]);
        state_wire_dict_free(&c->read_terms[k]);
        label_sent_free(&c->sent_labels[k]);
        label_read_free(&c->read_labels[k]);
    }
    free(c->sent_terms);
    free(c->read_terms);
    free(c->sent_labels);
    free(c->read_labels);
    free(c);
    s->cl = NULL;
}
