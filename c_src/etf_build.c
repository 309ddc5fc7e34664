/*
** etf_build.c: writes external-format terms (see etf_build.h).
*/
#include "etf_build.h"

#include <stdlib.h>
#include <string.h>

#include "sys_state.h"

void ext_put(ext_buf *e, const void *p, size_t n)
{
    if (e->err)
        return;
    if (e->n + n > e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 128;
        while (cap < e->n + n)
            cap *= 2;
        uint8_t *grown = realloc(e->b, cap);
        if (grown == NULL) {
            e->err = 1;
            return;
        }
        e->b = grown;
        e->cap = cap;
    }
    memcpy(e->b + e->n, p, n);
    e->n += n;
}

void ext_u8(ext_buf *e, uint8_t v) { ext_put(e, &v, 1); }

void ext_u32(ext_buf *e, uint32_t v)
{
    uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8),
                     (uint8_t)v };
    ext_put(e, b, 4);
}

/* A stored term, without its version byte. */
void ext_part(const ext_names *x, ext_buf *e, part_id id)
{
    const part *p = part_store_get(x->ps, id);
    if (p == NULL || p->len < 1) {
        e->err = 1;
        return;
    }
    ext_put(e, p->data + 1, p->len - 1);
}

/* The node atom inside a pid or ref. */
static void ext_node(const ext_names *x, ext_buf *e, uint32_t node)
{
    if (node >= x->nodes.n) {
        e->err = 1;
        return;
    }
    ext_u8(e, 100);                     /* ATOM_EXT, as the VM writes it */
    ext_u8(e, 0);
    ext_u8(e, (uint8_t)x->nodes.lens[node]);
    ext_put(e, x->nodes.names[node], x->nodes.lens[node]);
}

/* A simulated pid and ref, byte for byte as mce_pid and mce_ref build
** them (and as the VM re-encodes them). */
void ext_pid(const ext_names *x, ext_buf *e, uint32_t pid)
{
    ext_u8(e, 88);                      /* NEW_PID_EXT */
    ext_node(x, e, KEY_NODE(pid));
    ext_u32(e, KEY_NUM(pid));
    ext_u32(e, 0);
    ext_u32(e, x->creation);
}

void ext_ref_marked(const ext_names *x, ext_buf *e, uint32_t ref, uint32_t mark)
{
    ext_u8(e, 90);                      /* NEWER_REFERENCE_EXT, 3 words */
    ext_u8(e, 0);
    ext_u8(e, 3);
    ext_node(x, e, KEY_NODE(ref));
    ext_u32(e, x->creation);
    ext_u32(e, KEY_NUM(ref) & (ETF_REF_COUNTER_LIMIT - 1));
    ext_u32(e, KEY_NUM(ref) >> ETF_REF_COUNTER_BITS);
    ext_u32(e, mark);
}

void ext_ref(const ext_names *x, ext_buf *e, uint32_t ref)
{
    ext_ref_marked(x, e, ref, 0);
}

/* An atom for a label (labels are only decoded, never compared). */
void ext_atom(ext_buf *e, const char *name)
{
    size_t n = strlen(name);
    ext_u8(e, 100);
    ext_u8(e, 0);
    ext_u8(e, (uint8_t)n);
    ext_put(e, name, n);
}

void ext_tuple(ext_buf *e, uint8_t arity)
{
    ext_u8(e, 104);
    ext_u8(e, arity);
}

/* A process key as a term: its pid, or {Name, Node} for a name key. */
void ext_target(const ext_names *x, ext_buf *e, uint32_t key, part_id name)
{
    if (KEY_NUM(key) == KEY_BY_NAME) {
        ext_tuple(e, 2);
        if (name != 0)
            ext_part(x, e, name);
        else
            ext_atom(e, "undefined");
        ext_part(x, e, x->node_atoms[KEY_NODE(key)]);
    } else {
        ext_pid(x, e, key);
    }
}

/* A node's name as an atom term (labels of faults). */
void ext_node_atom(const ext_names *x, ext_buf *e, uint32_t node)
{
    ext_part(x, e, x->node_atoms[node]);
}
