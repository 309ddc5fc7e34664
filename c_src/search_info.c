/*
** search_info.c: what the NIF reads of a search between requests: its
** statistics and memory, the state on top of the stack, the labels of the
** path to it, an expand-only search's expansion, the deaths waiting for a
** verdict and the step a safety monitor judges.
**
** Invariant: read-only.  Nothing here moves the search or changes what the
** next request will be (search_top_state may decode the top frame into the
** search's working copy, which the search would decode anyway).
*/
#include "search.h"

#include "match_memo.h"
#include "search_cluster.h"
#include "search_internal.h"
#include "step_cache.h"
#include "visited.h"

size_t search_deaths(const search *s, const death **out)
{
    *out = s->tx.deaths;
    return s->deaths_pending ? s->tx.ndeaths : 0;
}

void search_get_stats(const search *s, search_stats *st)
{
    *st = s->st;
    st->depth = s->depth;
    st->parts = part_store_count(s->ps);
    st->memo_entries = s->memo.n;
    size_t fixed = s->cap * sizeof *s->stack + match_memo_bytes(&s->memo) +
                   payload_table_bytes(&s->payloads) +
                   stack_set_bytes(&s->on_stack) + stack_set_bytes(&s->passed) +
                   stack_set_bytes(&s->branched) + por_hint_bytes(&s->hint) +
                   search_cluster_bytes(s);
    /* Breadth-first: the nodes (parents and labels of every state). */
    size_t nodes = s->pool != NULL ? search_pool_bytes(s->pool) : 0;
    st->bytes = part_store_bytes(s->ps) + nodes + fixed;
    st->used_bytes = part_store_used_bytes(s->ps) + nodes + fixed;
    st->shared_bytes = s->cfg.workers > 1 ? part_store_bytes(s->ps) + nodes : 0;
    st->pool_states = s->cfg.workers > 1 ? search_pool_count(s->pool, &s->pool_cursor) : 0;
    st->table_mode = s->cfg.table_mode;
    st->reduction = s->cfg.reduction;
    if (s->cache != NULL) {
        size_t cb = step_cache_bytes(s->cache) + s->log.cap * sizeof *s->log.r +
                    s->log.capbytes;
        st->step_cache = 1;
        st->step_cache_hits = s->cache->hits;
        st->step_cache_misses = s->cache->misses;
        st->step_cache_entries = s->cache->n;
        st->step_cache_bytes = cb;
        st->bytes += cb;
        st->used_bytes += cb;
    }
    if (s->sym != NULL) {
        size_t sb = symmetry_bytes(s->sym);
        st->symmetry = 1;
        st->symmetric_states = symmetry_renamed(s->sym);
        st->symmetry_groups = symmetry_max_group(s->sym);
        st->pid_order = s->sym_void;
        st->bytes += sb;
        st->used_bytes += sb;
    }
    if (s->vis != NULL) {
        /* The table and the root vectors kept in the frames count too, so
        ** the `memory` cap sees them. */
        size_t lossy = visited_bytes(s->vis) + s->root_bytes;
        st->table_bytes = visited_bytes(s->vis);
        st->omission_probability = visited_omission_probability(s->vis);
        st->lost_estimate = visited_lost_estimate(s->vis);
        st->coverage_estimate = visited_coverage_estimate(s->vis);
        st->bytes += lossy;
        st->used_bytes += lossy;
    } else {
        st->table_bytes = part_store_used_bytes(s->ps);
        st->omission_probability = 0.0;
        st->lost_estimate = 0.0;
        st->coverage_estimate = 1.0;
    }
}

const part_store *search_store(const search *s)
{
    return s->ps;
}

const sys_state *search_top_state(search *s)
{
    if (s->obs_pending)
        return &s->obs_st;
    if (s->depth == 0 || search_decode_top(s) != 0)
        return NULL;
    return &s->cur;
}

part_id search_expanding(const search *s)
{
    return s->depth > 0 ? s->stack[0].state : 0;
}

size_t search_expansion(const search *s, const expansion **out, int *deadlock)
{
    *out = s->exp;
    *deadlock = s->exp_deadlock;
    return s->nexp;
}

size_t search_stack_depth(const search *s)
{
    return s->depth;
}

int search_label(const search *s, size_t i, const uint8_t **label,
                 size_t *len)
{
    if (i == 0 || i >= s->depth)
        return -1;
    *label = s->stack[i].label;
    *len = s->stack[i].label_len;
    return 0;
}

int search_renaming(const search *s, size_t i, const uint32_t **pairs,
                    uint32_t *npairs)
{
    if (i >= s->depth)
        return -1;
    _Static_assert(sizeof(sym_pair) == 2 * sizeof(uint32_t), "pairs of words");
    *pairs = (const uint32_t *)s->stack[i].perm;
    *npairs = s->stack[i].nperm;
    return 0;
}

const uint8_t *search_observed_label(const search *s, size_t *len)
{
    if (!s->obs_pending)
        return NULL;
    *len = s->obs_label_len;
    return s->obs_label;
}
