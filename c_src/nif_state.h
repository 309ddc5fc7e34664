/*
** nif_state.h: the views of the top state handed to Erlang (nif_state.c).
*/
#ifndef MCE_NIF_STATE_H
#define MCE_NIF_STATE_H

#include <erl_nif.h>

ERL_NIF_TERM nif_trace(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_renamings(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_top_state(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_top_conts(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_part_term(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_ether(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);

#endif
