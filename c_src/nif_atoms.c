/*
** nif_atoms.c: makes the atoms of nif_atoms.h, once per load.
**
** Called before the library's private data is published, so no call sees
** it half made.
*/
#include <erl_nif.h>

#include "nif_atoms.h"
#include "search.h"

void nif_atoms_init(ErlNifEnv *env, nif_atoms *a)
{
#define NIF_ATOM_MAKE(name) a->am_##name = enif_make_atom(env, #name);
    NIF_ATOMS(NIF_ATOM_MAKE)
#undef NIF_ATOM_MAKE
    static const char *const search_names[N_ATOMS] = SEARCH_ATOM_NAMES;
    for (int i = 0; i < N_ATOMS; i++)
        a->search[i] = enif_make_atom(env, search_names[i]);
}
