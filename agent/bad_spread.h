/* bad_spread.h - where in a tensor its non-finite values lie.
 *
 * A count of NaNs says that a module went wrong; where they lie says
 * how.  One sample of the batch (a fully padded sequence, a corrupt
 * image) is a data problem; every sample of one channel is a weight;
 * everything at once is an overflow.  For a tensor that was just found
 * to hold a non-finite value born from finite inputs, the agent reads,
 * per dimension, how many indices along it hold one, and the first
 * non-finite element's index in the tensor's own (logical, row-major)
 * order, the one a user types: out[2, 0, 0].
 *
 * The tensor is one dense block in any dimension order (contiguous, or a
 * transpose or permute of such: what agent/tensor.c checks).  Pure C,
 * no Python: unit-tested (tests/unit/test_bad_spread.c).  It runs in the
 * job, only for births (a few per run), and is bounded: max_scan elements
 * of the block's non-finite stretches are looked at one by one, the
 * rest in vectors.
 */
#ifndef NP_BAD_SPREAD_H
#define NP_BAD_SPREAD_H

#include <stdint.h>
#include "../kernels/finite.h"
#include "agent_report.h"

/* An index along a dimension at or past this is not told apart from the
 * others (its count is then a lower bound: partial). */
#define NP_SPREAD_BITS (1u << 20)

struct np_spread_in {
	enum np_dtype dtype;
	const void *base;        /* the block's lowest address: data_ptr() */
	uint64_t numel;
	int ndim;
	int64_t shape[NP_SPREAD_DIMS];
	int64_t stride[NP_SPREAD_DIMS];   /* in elements */
	uint8_t skip_neginf;     /* count NaN and +Inf only (see no_neginf) */
};

struct np_spread {
	uint8_t ndim;
	uint8_t partial;         /* counts from part of the tensor: lower bounds */
	uint8_t no_neginf;       /* of its NaN and +Inf only: the tensor held NaN
				  * and -Inf, no +Inf (a masked row gone NaN
				  * among the -inf of the rest of the mask) */
	uint32_t size[NP_SPREAD_DIMS];    /* clamped to UINT32_MAX */
	uint32_t bad[NP_SPREAD_DIMS];     /* indices along it holding a non-finite value */
	uint32_t first[NP_SPREAD_DIMS];   /* the first non-finite element, logical order */
};

/* A complex tensor's in (shape and strides in complex elements, dtype
 * its parts') made that of its real view, as torch.view_as_real makes it:
 * strides doubled and a last dimension of 2 (real, imaginary) appended,
 * numel doubled.  0, or -1 when there is no room for the dimension. */
int np_spread_as_real(struct np_spread_in *in);

/* np_bad_spread() of a tensor that may be expanded (a broadcast:
 * dimensions of size > 1 and stride 0, whose every index holds the same
 * values): in->numel is what it stores, the other dimensions' product.
 * Along a broadcast dimension every index holds a non-finite value when
 * any does, and the first is at 0. */
int np_bad_spread_broadcast(const struct np_spread_in *in, uint64_t max_scan,
			    struct np_spread *out);

/* Fills out and returns 0 when `in` holds a non-finite value, else -1:
 * none found, more than NP_SPREAD_DIMS dimensions, no dimension at all,
 * not one dense block, or no memory for the counts.  At most max_scan
 * elements are looked at one by one; past that, out->partial. */
int np_bad_spread(const struct np_spread_in *in, uint64_t max_scan, struct np_spread *out);

#endif
