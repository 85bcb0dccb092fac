/* dense_range.h - whether a tensor's dimensions cover one dense range of
 * memory, in any order of its dimensions (a transposed view is one; a
 * slice with gaps is not), shared by the decoders that read sizes and
 * strides out of a by-value struct (kdecode_lambda.c, kdecode_index.c). */
#ifndef NP_DENSE_RANGE_H
#define NP_DENSE_RANGE_H

#include <stdint.h>

#define NP_DENSE_MAX_DIMS 25

struct np_dense {
	uint64_t size[NP_DENSE_MAX_DIMS], stride[NP_DENSE_MAX_DIMS];
	int n;
};

/* Adds one dimension; one of size 1 or stride 0 (a broadcast) covers no
 * more memory and is left out.  Kept in stride order: callers give the
 * dimensions in whatever order their struct holds them.  Returns 0, or
 * -1 past NP_DENSE_MAX_DIMS. */
static inline int np_dense_add(struct np_dense *d, uint64_t size, uint64_t stride)
{
	if (size == 1 || stride == 0)
		return 0;
	if (d->n == NP_DENSE_MAX_DIMS)
		return -1;
	int at = d->n++;
	while (at > 0 && d->stride[at - 1] > stride) {
		d->size[at] = d->size[at - 1];
		d->stride[at] = d->stride[at - 1];
		at--;
	}
	d->size[at] = size;
	d->stride[at] = stride;
	return 0;
}

/* The elements the dimensions added cover, when their strides (in units
 * of unit: bytes of one element, or 1 for element strides) are a
 * contiguous tensor's in stride order; 0 if not. */
static inline uint64_t np_dense_numel(const struct np_dense *d, uint64_t unit)
{
	uint64_t expect = unit;
	for (int i = 0; i < d->n; i++) {
		if (d->stride[i] != expect)
			return 0;
		expect *= d->size[i];
	}
	return expect / unit;
}

#endif
