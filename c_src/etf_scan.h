/*
** etf_scan.h: reads the external term format just far enough to find the
** simulated pids a term references.
**
** The runtime allocates pids least-fresh ("smallest number not used in the
** state"), so it must know every pid a message or continuation still holds:
** reusing a number that some term still refers to would merge a dead
** process with a new one.
*/
#ifndef MCE_ETF_SCAN_H
#define MCE_ETF_SCAN_H

#include <stddef.h>
#include <stdint.h>

typedef struct etf_pid_sink {
    uint32_t *pids;
    uint32_t n, cap;
} etf_pid_sink;

/* Appends a key to the sink (which grows).  0, or -1 when out of memory. */
int etf_sink_push(etf_pid_sink *s, uint32_t key);

/* Refs are recorded in the same sink as pids, tagged with this bit. */
#define ETF_REF_TAG 0x80000000u

/* Scans `len` bytes starting with the version byte 131.  Pids whose node is
** `node` (an atom's UTF-8 text) and whose creation is `creation` are
** appended to sink (which grows; free sink->pids when done), and so are the
** first ID words of such refs, or'ed with ETF_REF_TAG.
**
** It also canonicalises in place: a fun's encoding names the process that
** created it, which differs between runs and executor processes although it
** has no meaning for the program, so that pid's number, serial and creation
** are zeroed.  Returns 0, or -1 for malformed input, an unsupported tag, or
** allocation failure. */
int etf_scan_pids(uint8_t *buf, size_t len, const char *node,
                  size_t nodelen, uint32_t creation, etf_pid_sink *sink);

/* A simulated ref's number is (creator << ETF_REF_COUNTER_BITS) | counter:
** refs are numbered least-fresh among those their creating process made, so
** the interleaving of other processes' ref making does not rename them (the
** states would differ only in those numbers).  In the term, ID word 0 holds
** the counter and word 1 the creator, so it prints as #Ref<0.0.Creator.N>.
** Creator 0 is the shared region (refs made outside a process, or by a
** process whose own region is full). */
#define ETF_REF_COUNTER_BITS 10
#define ETF_REF_COUNTER_LIMIT (1u << ETF_REF_COUNTER_BITS)
#define ETF_REF_CREATOR_LIMIT (1u << (24 - ETF_REF_COUNTER_BITS))

/* ID word 2 of a simulated ref that is an ETS tid (0 in any other): OTP
** tells a tid from other refs (ets:info/1 of a plain ref raises badarg, of
** a deleted table's tid gives undefined), so the model's tids must differ
** from the refs make_ref/0 gives.  Both share one numbering. */
#define ETF_REF_TID_MARK 1u

/* Simulated nodes: a pid or ref of node i (0 <= i < ETF_MAX_NODES) is
** recorded as the key (i << ETF_NODE_SHIFT) | number; numbers of
** ETF_NUM_LIMIT or more are not recorded (the runtime never makes them). */
#define ETF_MAX_NODES 64
#define ETF_NODE_SHIFT 24
#define ETF_NUM_LIMIT (1u << ETF_NODE_SHIFT)

typedef struct etf_nodes {
    uint32_t n;
    const char *names[ETF_MAX_NODES];   /* atom text (UTF-8) */
    size_t lens[ETF_MAX_NODES];
} etf_nodes;

/* As etf_scan_pids, for several simulated nodes. */
int etf_scan_keys(uint8_t *buf, size_t len, const etf_nodes *nodes,
                  uint32_t creation, etf_pid_sink *sink);

/* The walk under etf_scan_keys, for those that rewrite keys (symmetry.c,
** sym_rename.c): calls visit(ctx, key, word, where) for each simulated pid
** or ref, in order of occurrence, with the key as etf_scan_keys records it,
** `word' the four big-endian bytes that carry the pid's number or the
** ref's creator (ID word 1), which visit may rewrite in place, and `where'
** the ETF_IN_* bits saying whether it occurs inside a map, inside a key of
** a small map (the VM writes those in term order of the keys: a pid renamed
** there needs the pairs re-sorted, etf_order.h) or inside a key of a map of
** more than ETF_SMALL_MAP pairs (hash-ordered: not to be renamed), or
** (ETF_IN_NAMED_VALUE) inside a `{child, ...}' tuple (OTP supervisor's
** #child{} record) that is the value of a map whose key for it holds no
** pid or ref, the innermost map around it (`#{Id => #child{pid = P}}': a
** process the supervisor names by its child id, symmetry.c pins it).  A
** nonzero return stops the walk with -1.  Fun creator pids are zeroed as by
** etf_scan_keys. */
#define ETF_IN_MAP 1
#define ETF_IN_MAP_KEY 2
#define ETF_IN_BIG_MAP_KEY 4
#define ETF_IN_NAMED_VALUE 8
typedef int (*etf_key_visit)(void *ctx, uint32_t key, uint8_t *word, int where);
int etf_walk_keys(uint8_t *buf, size_t len, const etf_nodes *nodes,
                  uint32_t creation, etf_key_visit visit, void *ctx);

#endif
