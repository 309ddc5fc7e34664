/*
** nif_buchi.h: the Büchi resource's destructor and its calls (nif_buchi.c).
*/
#ifndef MCE_NIF_BUCHI_H
#define MCE_NIF_BUCHI_H

#include <erl_nif.h>

void buchi_res_dtor(ErlNifEnv *env, void *obj);
ERL_NIF_TERM nif_buchi_check(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_buchi_new(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_buchi_start(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_buchi_answer(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_buchi_lasso(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_buchi_stats(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);

#endif
