/*
** nif_effects.h: decoding a step's effects for ran/5 (nif_effects.c).
*/
#ifndef MCE_NIF_EFFECTS_H
#define MCE_NIF_EFFECTS_H

#include <erl_nif.h>
#include <stddef.h>

#include "search.h"

/* Everything the effects list owns while it is being converted. */
typedef struct effects_buf {
    effect *effects;
    ErlNifBinary *bins, *bins2, *bins3;
    size_t n;
} effects_buf;

/* 1: the list decoded into eb; 0: malformed, or out of memory (badarg).
** Either way eb must be released with effects_release. */
int parse_effects(ErlNifEnv *env, ERL_NIF_TERM list, effects_buf *eb);
void effects_release(effects_buf *eb);

#endif
