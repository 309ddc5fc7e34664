/*
** etf_order.h: Erlang term order on external-format bytes, and putting the
** pairs of a small map back into the order the VM writes them in, after
** symmetry reduction renamed pids inside their keys; the keys of an mce_ets
** table, whose pids are not renamed.
**
** Invariant kept for the callers (sym_rename.c): for a term the VM wrote,
** with simulated pids or ref creators renamed by a bijection, etf_sort_maps
** gives exactly the bytes
** term_to_binary(binary_to_term(Bytes)) gives, or fails, when a map whose
** keys hold a pid or ref has a key of a type this order does not know; such
** a term's pids must not be renamed (symmetry.c pins them).  The exactness
** test is mce_symmetry_maps_tests (the VM is the reference).
**
** The order is OTP 25's, established empirically (mce_symmetry_maps_tests'
** pid and ref order tests): number < atom < reference < fun < port < pid <
** tuple < map < [] < list < binary; integers by value; atoms by their UTF-8
** text; tuples by arity, then elementwise; proper lists elementwise, a
** prefix first; binaries bytewise, a prefix first; external pids by
** (serial, number, node name, creation); refs by (node name, creation, ID
** words from the last down).  A small map (at most ETF_SMALL_MAP pairs, a
** "flatmap") is written with its keys in this order; a larger one is
** hash-ordered, so renaming a pid in its keys cannot be repaired here.
**
** Supported key terms: integers, atoms, tuples, nil, proper lists (and
** strings), binaries, and pids and refs (NEWER_REFERENCE_EXT, three ID
** words) of the given creation, nested at most ETF_ORDER_DEPTH deep.
** Floats (1 and 1.0 are distinct keys ordered by a rule this file does not
** model), funs, maps, ports, bit strings and improper lists are not.
*/
#ifndef MCE_ETF_ORDER_H
#define MCE_ETF_ORDER_H

#include <stddef.h>
#include <stdint.h>

/* The most pairs of a map the VM writes in key order (MAP_SMALL_MAP_LIMIT
** of erts). */
#define ETF_SMALL_MAP 32
#define ETF_ORDER_DEPTH 64

/* Compares the terms a[0..alen) and b[0..blen) (no version byte): *order
** gets -1, 0 or 1.  0, or -1 when either is malformed or not supported. */
int etf_order_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                  uint32_t creation, int *order);

/* Skips the term at p (no version byte): *next gets its end.  0, or -1
** when malformed or past end. */
int etf_skip_term(const uint8_t *p, const uint8_t *end, const uint8_t **next);

/* Sorts the pairs of every map of at most ETF_SMALL_MAP pairs whose keys
** hold a pid or ref into term order of the keys, in place, in the term
** buf[0..len) (version byte first).  With check_only, sorts nothing and
** only tells whether it could.  0, or -1 when such a map has a key of an
** unsupported type, on malformed input or when out of memory. */
int etf_sort_maps(uint8_t *buf, size_t len, uint32_t creation, int check_only);

/* As etf_sort_maps (not check_only), and applies the same permutation of
** pairs to follow[0..len), a term of the same layout (buf with its pids
** masked, follow the original: symmetry.c's pid-free signatures), and
** orders pairs whose keys are equal by their bytes. */
int etf_sort_maps_with(uint8_t *buf, uint8_t *follow, size_t len,
                       uint32_t creation);

/* A run of equal pairs: pairs [first, first + npairs) of a small map whose
** keys hold a pid or ref, all with the same bytes, at buf[start .. end).
** In a term whose pids are masked and whose maps are sorted
** (etf_sort_maps_with), such pairs differ only in the pids and refs they
** hold: no order among them is a property of the term (symmetry.c). */
typedef struct etf_run {
    size_t start, end;
    uint32_t npairs;
} etf_run;

/* Every maximal run of at least two adjacent equal pairs in the small maps
** with pid or ref keys of buf[0..len) (version byte first), in *out
** (malloc'd, NULL when none; free it), by start offset.  0, or -1 when
** malformed or out of memory. */
int etf_equal_runs(const uint8_t *buf, size_t len, etf_run **out, size_t *nout);

/* Sorts the objects of an mce_ets table's data (etf_ets_keys below), in
** place, back into mce_ets's order: by key, in term order (keys that term
** order calls equal cannot both be there but 1 and 1.0, whose floats are
** not supported).  With check_only, only tells whether it could.  0, or
** -1 when a key is of a type etf_order_cmp does not order, on malformed
** input or when out of memory. */
int etf_ets_sort(uint8_t *buf, size_t len, uint32_t creation, int check_only);

/* The keys of an mce_ets table's data, {Type, Protection, KeyPos, [{Key,
** Objects}], Extra} (version byte first), as the term [Key, ...] in *out
** (malloc'd, version byte first; free it).  mce_ets keeps the objects in
** order of these keys, and first/next, tab2list, match and select go in
** that order, which a renamed pid in a key would change: symmetry.c keeps
** the numbers of the pids in them.  0, or -1 when malformed or out of
** memory. */
int etf_ets_keys(const uint8_t *buf, size_t len, uint8_t **out, size_t *outlen);

#endif
