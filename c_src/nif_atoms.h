/*
** nif_atoms.h: every atom the NIF makes or compares, made once in load and
** kept in the library's private data (nif_priv).
**
** Making an atom from its name is a lookup in the VM's atom table; done on
** every request tag, effect tag and boolean it took 13% of the search's
** CPU, and made once a check takes 11-13% less (counter_server(3,3),
** client_server(5,2)).  An atom is the same term in every env and is never
** collected, so terms made once serve every call and every check of the
** library.  Atoms are compared as terms (enif_is_identical), never by name.
** Upgrade makes them again for the new library's data; nothing else writes
** them.
*/
#ifndef MCE_NIF_ATOMS_H
#define MCE_NIF_ATOMS_H

#include <erl_nif.h>

#include "search.h"

/* The atoms by name: ATOM(env, name) in nif_common.h is the term. */
#define NIF_ATOMS(X) \
    X(algorithm) X(alias) X(app_env) X(bitstate) X(bitstate_bits) \
    X(breadth_first) X(cancel_timer) X(chan) X(check_deadlock) X(choice) \
    X(choosing) X(coverage_estimate) X(creation) X(cut) X(deadlock) X(deaths) \
    X(delivery_ether) X(demonitor) X(disconnected) X(done) X(down) X(empty) \
    X(error) X(ets_delete) X(ets_put) X(exact) X(exit) X(expand_only) \
    X(expanded) X(fairness) X(false) X(found) X(group_leader) X(halt) \
    X(hash_compact) X(incomplete) X(init) X(judge_deaths) X(keep_message) \
    X(lasso) X(link) X(link_exit) X(match) X(match_memo) X(max_crashes) \
    X(max_depth) X(max_disconnects) X(max_kills) X(max_states) X(maybe) X(memory) \
    X(memory_used) X(message) X(monitor) X(monitor_node) X(ndfs) X(need) \
    X(node) X(node_pair) X(nodes) X(none) X(normal) X(observe) X(ok) \
    X(omission_probability) X(parts) X(receive) X(register) X(requests) \
    X(run) X(scc) X(send) X(send_alias) X(send_name) X(skip) X(spawn) \
    X(spawn_monitor) X(stack_depth) X(start) X(states) X(step_cache) \
    X(step_cache_bytes) X(decoded_terms_bytes) X(step_cache_entries) X(step_cache_hits) \
    X(step_cache_misses) \
    X(reduced_states) X(renamed_states) X(passed_states) X(pass_cut) X(small_steps) X(monitor_rule) X(name_rule) X(pid_numbers) X(dead_target) X(monitor_race) X(name_freed) X(dead_payload) X(dead_payloads) X(payload) X(reduction) X(reduction_void) X(exit_signal) X(processes) X(pid_order) X(key_order) X(few_renamed) \
    X(reads_process_state) \
    X(states_lost_estimate) X(stopped) X(symmetric_states) X(symmetry) X(symmetry_stopped) \
    X(symmetry_groups) X(table) X(table_bytes) X(table_mode) \
    X(table_size) X(timeout) X(timeouts_when_idle) X(timer) X(timers_never_from) X(transitions) \
    X(trap_exit) X(true) X(truncated) X(unalias) X(undefined) X(unique) \
    X(unknown_state) X(unlink) X(unregister) X(up) X(violation) X(wait) \
    X(waiting) X(weak) X(yield) X(zero) X(poll) \
    X(idle) X(target) X(kill_targeted) X(crash_nodes) X(disconnect_pairs) \
    X(abandoned) X(workers) X(shared_memory) X(pool_states) \
    X(cluster_n) X(cluster_me) X(sent) X(sent_bytes) X(received) X(received_new) \
    X(por_sent) X(por_hazard)

typedef struct nif_atoms {
#define NIF_ATOM_FIELD(name) ERL_NIF_TERM am_##name;
    NIF_ATOMS(NIF_ATOM_FIELD)
#undef NIF_ATOM_FIELD
    ERL_NIF_TERM search[N_ATOMS];   /* SEARCH_ATOM_NAMES, for search_config */
} nif_atoms;

void nif_atoms_init(ErlNifEnv *env, nif_atoms *a);

#endif
