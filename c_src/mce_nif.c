/*
** mce_nif.c: the NIF library: load, upgrade and unload, live_searches/0 and
** the function table.  The calls live by concern in the nif_*.c files:
** nif_search.c (the search resource and the calls that drive it),
** nif_effects.c (a step's effects, for ran/5), nif_peek.c (the reads the
** runtime makes during a step), nif_state.c (views of the top state),
** nif_sym.c (symmetry reduction's renaming of one term, for the tests),
** nif_buchi.c (the Büchi resource), nif_atoms.c (every atom, made once
** here in load), nif_common.c (shared helpers).
**
** The library keeps no global mutable state: what it shares between calls is
** its private data (nif_priv, made in load, freed in unload) and the
** resources, so several checks can run at once in one VM.  Each call does
** the work of one transition, well under a millisecond, so the calls run on
** normal schedulers (buchi_check/2, whose graph is the caller's choice, on a
** dirty one).
*/
#include <erl_nif.h>
#include <stdatomic.h>

#include "nif_buchi.h"
#include "nif_common.h"
#include "nif_peek.h"
#include "nif_search.h"
#include "nif_state.h"
#include "nif_sym.h"
#include "nif_wire.h"

static int load(ErlNifEnv *env, void **priv, ERL_NIF_TERM info)
{
    (void)info;
    nif_priv *p = enif_alloc(sizeof *p);
    if (p == NULL)
        return 1;
    atomic_init(&p->live, 0);
    nif_atoms_init(env, &p->atoms);
    p->search_type = enif_open_resource_type(env, NULL, "mce_search",
                                             search_res_dtor,
                                             ERL_NIF_RT_CREATE, NULL);
    p->buchi_type = enif_open_resource_type(env, NULL, "mce_buchi",
                                            buchi_res_dtor,
                                            ERL_NIF_RT_CREATE, NULL);
    if (p->search_type == NULL || p->buchi_type == NULL) {
        enif_free(p);
        return 1;
    }
    *priv = p;
    return 0;
}

static void unload(ErlNifEnv *env, void *priv)
{
    (void)env;
    enif_free(priv);
}

static int upgrade(ErlNifEnv *env, void **priv, void **old, ERL_NIF_TERM info)
{
    (void)old;
    return load(env, priv, info);
}

/* live_searches() -> non_neg_integer(): searches whose memory is not yet
** freed (tests check that an interrupted check frees its search). */
static ERL_NIF_TERM nif_live_searches(ErlNifEnv *env, int argc,
                                      const ERL_NIF_TERM argv[])
{
    (void)argc;
    (void)argv;
    nif_priv *p = enif_priv_data(env);
    return enif_make_long(env, atomic_load(&p->live));
}

static ErlNifFunc nif_funcs[] = {
    {"new", 1, nif_new, 0},
    {"start", 3, nif_start, 0},
    {"join", 1, nif_join, 0},
    {"work", 2, nif_work, 0},
    {"stop_workers", 1, nif_stop_workers, 0},
    {"cluster_outbox", 1, nif_cluster_outbox, 0},
    {"cluster_import", 3, nif_cluster_import, 0},
    {"cluster_path", 2, nif_cluster_path, 0},
    {"cluster_stack", 1, nif_cluster_stack, 0},
    {"cluster_stats", 1, nif_cluster_stats, 0},
    {"match", 2, nif_match, 0},
    {"resume", 1, nif_resume, 0},
    {"ran", 5, nif_ran, 0},
    {"fresh_pid", 2, nif_fresh_pid, 0},
    {"fresh_ref", 2, nif_fresh_ref, 0},
    {"node_status", 3, nif_node_status, 0},
    {"alias_active", 3, nif_alias_active, 0},
    {"timer", 2, nif_timer, 0},
    {"unique", 1, nif_unique, 0},
    {"live_searches", 0, nif_live_searches, 0},
    {"observed", 3, nif_observed, 0},
    {"deaths_judged", 2, nif_deaths_judged, 0},
    {"process", 2, nif_process, 0},
    {"app_env", 1, nif_app_env, 0},
    {"ets_table", 2, nif_ets_table, 0},
    {"ets_named", 3, nif_ets_named, 0},
    {"ets_tables", 2, nif_ets_tables, 0},
    {"ether", 1, nif_ether, 0},
    {"monitor_active", 3, nif_monitor_active, 0},
    {"stats", 1, nif_stats, 0},
    {"trace", 1, nif_trace, 0},
    {"renamings", 1, nif_renamings, 0},
    {"top_state", 1, nif_top_state, 0},
    {"top_conts", 1, nif_top_conts, 0},
    {"part_term", 2, nif_part_term, 0},
    {"alive", 2, nif_alive, 0},
    {"group_leader", 2, nif_group_leader, 0},
    {"whereis", 3, nif_whereis, 0},
    {"registered", 2, nif_registered, 0},
    {"processes", 2, nif_processes, 0},
    {"pid_order", 1, nif_pid_order, 0},
    {"monby_read", 1, nif_monby_read, 0},
    {"key_order", 1, nif_key_order, 0},
    {"ref_order", 1, nif_ref_order, 0},
    {"rename_term", 5, nif_rename_term, 0},
    {"buchi_check", 2, nif_buchi_check, ERL_NIF_DIRTY_JOB_CPU_BOUND},
    {"expand", 2, nif_expand, 0},
    {"focus", 2, nif_focus, 0},
    {"label_binaries", 1, nif_label_binaries, 0},
    {"buchi_new", 1, nif_buchi_new, 0},
    {"buchi_start", 2, nif_buchi_start, 0},
    {"buchi_answer", 4, nif_buchi_answer, 0},
    {"buchi_lasso", 1, nif_buchi_lasso, 0},
    {"buchi_stats", 1, nif_buchi_stats, 0},
};

ERL_NIF_INIT(mce_nif, nif_funcs, load, NULL, upgrade, unload)
