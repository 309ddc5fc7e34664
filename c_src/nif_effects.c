/*
** nif_effects.c: decoding the effects list of ran/5 (what a step did, as
** the executor reports it: sends, spawns, exits, links, monitors, timers,
** ETS writes, ...) into the effect array of the search's run_result.
**
** An effects_buf owns every binary it encoded, and effects_release frees
** them and the arrays whatever parse_effects returned, so the caller calls
** it on every path.  A malformed effect refuses the whole list: nothing
** reaches the search until every effect decoded.
*/
#include <erl_nif.h>
#include <stdlib.h>

#include "nif_common.h"
#include "nif_effects.h"
#include "search.h"

void effects_release(effects_buf *eb)
{
    for (size_t i = 0; i < eb->n; i++) {
        enif_release_binary(&eb->bins[i]);
        if (eb->effects[i].term2.etf != NULL)
            enif_release_binary(&eb->bins2[i]);
        if (eb->effects[i].term3.etf != NULL)
            enif_release_binary(&eb->bins3[i]);
    }
    free(eb->effects);
    free(eb->bins);
    free(eb->bins2);
    free(eb->bins3);
}

int parse_effects(ErlNifEnv *env, ERL_NIF_TERM list, effects_buf *eb)
{
    unsigned len;
    eb->effects = NULL;
    eb->bins = eb->bins2 = eb->bins3 = NULL;
    eb->n = 0;
    if (!enif_get_list_length(env, list, &len))
        return 0;
    eb->effects = calloc(len ? len : 1, sizeof *eb->effects);
    eb->bins = calloc(len ? len : 1, sizeof *eb->bins);
    eb->bins2 = calloc(len ? len : 1, sizeof *eb->bins2);
    eb->bins3 = calloc(len ? len : 1, sizeof *eb->bins3);
    if (eb->effects == NULL || eb->bins == NULL || eb->bins2 == NULL || eb->bins3 == NULL)
        return 0;
    ERL_NIF_TERM head, tail = list;
    while (enif_get_list_cell(env, tail, &head, &tail)) {
        const ERL_NIF_TERM *el;
        int arity;
        unsigned pid = 0;
        effect *ef = &eb->effects[eb->n];
        ERL_NIF_TERM term = 0, term2 = 0, term3 = 0;
        int has_term = 1, has_term2 = 0, has_term3 = 0;
        if (!enif_get_tuple(env, head, &arity, &el) || arity < 2)
            return 0;
        if (arity == 3 && enif_is_identical(el[0], ATOM(env, send)) &&
            enif_get_uint(env, el[1], &pid)) {
            ef->kind = EFFECT_SEND;
            term = el[2];
        } else if (arity == 4 && enif_is_identical(el[0], ATOM(env, spawn)) &&
                   enif_get_uint(env, el[1], &pid) &&
                   get_bool(env, el[3], &ef->link)) {
            ef->kind = EFFECT_SPAWN;
            term = el[2];
        } else if (arity == 3 && enif_is_identical(el[0], ATOM(env, exit)) &&
                   enif_get_uint(env, el[1], &pid)) {
            ef->kind = EFFECT_EXIT;
            term = el[2];
        } else if (arity == 3 && enif_is_identical(el[0], ATOM(env, register)) &&
                   enif_get_uint(env, el[1], &pid) && enif_is_atom(env, el[2])) {
            ef->kind = EFFECT_REGISTER;
            term = el[2];
        } else if (arity == 2 && enif_is_identical(el[0], ATOM(env, unregister)) &&
                   enif_is_atom(env, el[1])) {
            ef->kind = EFFECT_UNREGISTER;
            term = el[1];
        } else if (arity == 2 && enif_is_identical(el[0], ATOM(env, link)) &&
                   enif_get_uint(env, el[1], &pid)) {
            ef->kind = EFFECT_LINK;
            has_term = 0;
        } else if (arity == 2 && enif_is_identical(el[0], ATOM(env, unlink)) &&
                   enif_get_uint(env, el[1], &pid)) {
            ef->kind = EFFECT_UNLINK;
            has_term = 0;
        } else if (arity == 2 && enif_is_identical(el[0], ATOM(env, trap_exit)) &&
                   get_bool(env, el[1], &ef->link)) {
            ef->kind = EFFECT_TRAP_EXIT;
            has_term = 0;
        } else if (((arity == 4 || arity == 5) && enif_is_identical(el[0], ATOM(env, monitor))) ||
                   (arity == 4 && enif_is_identical(el[0], ATOM(env, spawn_monitor)))) {
            if (!enif_get_uint(env, el[1], &pid) || !enif_get_uint(env, el[2], &ef->ref))
                return 0;
            ef->kind = EFFECT_MONITOR;
            ef->link = enif_is_identical(el[0], ATOM(env, spawn_monitor));
            term = el[3];
            has_term = !enif_is_identical(el[3], ATOM(env, none));
            if (arity == 5) {
                if (!enif_is_atom(env, el[4]))
                    return 0;
                term2 = el[4];
                has_term2 = 1;
            }
        } else if (arity == 4 && enif_is_identical(el[0], ATOM(env, send_name)) &&
                   enif_get_uint(env, el[1], &pid) && enif_is_atom(env, el[2])) {
            ef->kind = EFFECT_SEND_NAME;
            term = el[3];
            term2 = el[2];
            has_term2 = 1;
        } else if (arity == 3 && enif_is_identical(el[0], ATOM(env, alias)) &&
                   enif_get_uint(env, el[1], &ef->ref) && enif_get_int(env, el[2], &ef->link)) {
            ef->kind = EFFECT_ALIAS;
            has_term = 0;
        } else if (arity == 2 && enif_is_identical(el[0], ATOM(env, unalias)) &&
                   enif_get_uint(env, el[1], &ef->ref)) {
            ef->kind = EFFECT_UNALIAS;
            has_term = 0;
        } else if (arity == 3 && enif_is_identical(el[0], ATOM(env, send_alias)) &&
                   enif_get_uint(env, el[1], &ef->ref)) {
            ef->kind = EFFECT_SEND_ALIAS;
            term = el[2];
        } else if (arity == 6 && enif_is_identical(el[0], ATOM(env, timer)) &&
                   enif_get_uint(env, el[1], &ef->ref) && enif_get_uint(env, el[2], &pid) &&
                   enif_is_atom(env, el[3]) && enif_get_int(env, el[5], &ef->link) &&
                   ef->link >= 0) {
            ef->kind = EFFECT_TIMER;
            term = el[4];
            if (!enif_is_identical(el[3], ATOM(env, none))) {
                term2 = el[3];
                has_term2 = 1;
            }
        } else if (arity == 2 && enif_is_identical(el[0], ATOM(env, cancel_timer)) &&
                   enif_get_uint(env, el[1], &ef->ref)) {
            ef->kind = EFFECT_CANCEL_TIMER;
            has_term = 0;
        } else if (arity == 7 && enif_is_identical(el[0], ATOM(env, ets_put)) &&
                   enif_get_uint(env, el[1], &ef->ref) && enif_get_uint(env, el[2], &pid) &&
                   enif_get_int(env, el[3], &ef->link) && ef->link >= 0 &&
                   enif_is_atom(env, el[4])) {
            ef->kind = EFFECT_ETS_PUT;
            term = el[5];
            if (!enif_is_identical(el[4], ATOM(env, none))) {
                term2 = el[4];
                has_term2 = 1;
            }
            term3 = el[6];
            has_term3 = 1;
        } else if (arity == 2 && enif_is_identical(el[0], ATOM(env, app_env))) {
            ef->kind = EFFECT_APP_ENV;
            term = el[1];
        } else if (arity == 2 && enif_is_identical(el[0], ATOM(env, ets_delete)) &&
                   enif_get_uint(env, el[1], &ef->ref)) {
            ef->kind = EFFECT_ETS_DELETE;
            has_term = 0;
        } else if (arity == 2 && enif_is_identical(el[0], ATOM(env, keep_message)) &&
                   enif_is_identical(el[1], ATOM(env, true))) {
            ef->kind = EFFECT_KEEP_MESSAGE;
            has_term = 0;
        } else if (arity == 2 && enif_is_identical(el[0], ATOM(env, halt))) {
            /* el[1], the status, is for the trace only. */
            ef->kind = EFFECT_HALT;
            has_term = 0;
        } else if (arity == 4 && enif_is_identical(el[0], ATOM(env, group_leader)) &&
                   enif_get_uint(env, el[1], &pid) && enif_get_uint(env, el[2], &ef->ref)) {
            /* el[3], the leader's own key, is for the trace only. */
            ef->kind = EFFECT_GROUP_LEADER;
            has_term = 0;
        } else if (arity == 2 && enif_is_identical(el[0], ATOM(env, unique)) &&
                   enif_get_uint(env, el[1], &ef->ref)) {
            ef->kind = EFFECT_UNIQUE;
            has_term = 0;
        } else if (arity == 3 && enif_is_identical(el[0], ATOM(env, monitor_node)) &&
                   enif_get_uint(env, el[1], &pid) && get_bool(env, el[2], &ef->link)) {
            ef->kind = EFFECT_MONITOR_NODE;
            has_term = 0;
        } else if (arity == 3 && enif_is_identical(el[0], ATOM(env, demonitor)) &&
                   enif_get_uint(env, el[1], &ef->ref) && get_bool(env, el[2], &ef->link)) {
            ef->kind = EFFECT_DEMONITOR;
            has_term = 0;
        } else {
            return 0;
        }
        ef->pid = pid;
        if (has_term) {
            if (!encode(env, term, &eb->bins[eb->n], &ef->term))
                return 0;
        } else {
            /* An empty binary keeps effects_release uniform. */
            if (!enif_alloc_binary(0, &eb->bins[eb->n]))
                return 0;
            ef->term.etf = NULL;
            ef->term.len = 0;
        }
        eb->n++;
        if (has_term2 && !encode(env, term2, &eb->bins2[eb->n - 1], &ef->term2))
            return 0;
        if (has_term3 && !encode(env, term3, &eb->bins3[eb->n - 1], &ef->term3))
            return 0;
    }
    return 1;
}
