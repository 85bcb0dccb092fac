/* wide_inputs.h - the input words of a check past the NP_DIRTY_MAX_INPUTS
 * its launch entry keeps (inflight.h), for the launches that have more:
 * torch.cat of up to 128 inputs along an inner dimension, whose output is
 * one check (kdecode_cat.h), and kernels of more than 16 pointer words
 * (Inductor's fused kernels, up to 64 looked at).  Judged on its first
 * 16 inputs alone, such a launch would be a birth whenever the value
 * came through a later one; with all its inputs kept, dirty.h judges it
 * like any other launch.
 *
 * A ring of NP_WIDE_SLOTS entries, taken in turn by the launching
 * threads; the entry's slot (plus one) goes into the check's launch
 * entry.  A result that comes back after NP_WIDE_SLOTS newer wide checks
 * finds its entry reused (-ENOENT): the caller judges it on its first
 * inputs and counts it.  A check captured into a CUDA graph comes back
 * at every replay, so it takes one of NP_WIDE_CAPTURED entries that are
 * never reused (as inflight.h's captured entries); past them, none.
 * Writers and the one reader (the drainer) meet through a seqlock on the
 * tag, as inflight.c's entries do.
 */
#ifndef NP_WIDE_INPUTS_H
#define NP_WIDE_INPUTS_H

#include <stdint.h>

#define NP_WIDE_SLOTS 1024      /* wide checks in flight, at most; 1 KiB each */
#define NP_WIDE_CAPTURED 64     /* wide checks in CUDA graphs, for good */
#define NP_WIDE_MAX 128         /* words one entry holds: Shape.cu's batch, at most */

/* Keeps the n words at in (unaligned: a kernel's parameters) for the
 * check tagged tag, captured into a graph or not; at most NP_WIDE_MAX
 * are kept.  Returns the slot plus one, for np_wide_get; 0 when tag or n
 * is 0, or the captured entries are all taken. */
uint32_t np_wide_put(uint64_t tag, int captured, const void *in, uint32_t n);

/* Copies the words kept under slot1 (np_wide_put's) for tag into
 * out[NP_WIDE_MAX]: their count, or -ENOENT when the entry was reused. */
int np_wide_get(uint32_t slot1, uint64_t tag, uint64_t *out);

#endif
