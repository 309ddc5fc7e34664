/*
** label_dict.h: the labels of the steps that cross one connection of a
** distributed search (search_cluster.c), each sent whole the first time
** and as its index in the connection's dictionary after.  A step's label
** (its effects, the messages it sent) recurs across the states it is
** taken in, so most crossings are five bytes.
**
** Invariant: the receiver's labels[0..n) are the labels the sender
** numbered 0..n-1, in order; batches are read in the order they were
** encoded (as the terms of state_wire.h's transport form), which keeps the
** two in step.  The sender knows a label by its XXH3-128 hash (a
** collision, 2^-128 per pair, would put the other label in a
** counterexample's trace, which replay would then refuse).
**
** Encoded: 0 then the label's bytes, or 1 then the index (4 bytes, little
** endian).
*/
#ifndef MCE_LABEL_DICT_H
#define MCE_LABEL_DICT_H

#include <stddef.h>
#include <stdint.h>

typedef struct label_sent {
    uint64_t *keys;            /* 2 words a slot: the hash; slots free when
                                  index is 0 */
    uint32_t *index;           /* 1 + the label's index */
    size_t slots, n;
} label_sent;

typedef struct label_read {
    uint8_t **labels;
    size_t *lens;
    size_t n, cap;
    size_t bytes;              /* the labels' */
} label_read;

/* The encoding of `label` on this connection (malloc'd, *out_len bytes),
** recording it; NULL when out of memory (nothing recorded). */
uint8_t *label_dict_send(label_sent *d, const uint8_t *label, size_t len, size_t *out_len);
/* Decodes an encoded label: 0 and *label (owned by d, valid until
** label_read_free), or -1 with *why for bytes that are no label of this
** connection or when out of memory. */
int label_dict_read(label_read *d, const uint8_t *in, size_t len, const uint8_t **label,
                    size_t *label_len, const char **why);
/* Bytes held. */
size_t label_sent_bytes(const label_sent *d);
size_t label_read_bytes(const label_read *d);
void label_sent_free(label_sent *d);
void label_read_free(label_read *d);

#endif
