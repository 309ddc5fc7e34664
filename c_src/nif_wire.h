/*
** nif_wire.h: the NIF calls of a distributed search's participant
** (nif_wire.c).
*/
#ifndef MCE_NIF_WIRE_H
#define MCE_NIF_WIRE_H

#include <erl_nif.h>

ERL_NIF_TERM nif_cluster_outbox(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_cluster_import(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_cluster_path(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_cluster_stack(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_cluster_stats(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);

#endif
