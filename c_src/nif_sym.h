/*
** nif_sym.h: rename_term/5, symmetry reduction's renaming of one term
** (sym_rename.c, etf_order.c) on its own, for the exactness tests
** (mce_symmetry_maps_tests): its bytes must be the VM's for the renamed term.
*/
#ifndef MCE_NIF_SYM_H
#define MCE_NIF_SYM_H

#include <erl_nif.h>

ERL_NIF_TERM nif_rename_term(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);

#endif
