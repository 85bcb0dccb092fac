/* kdecode_cat.c - the output of torch.cat's kernel, read from its input
 * metadata (see kdecode_cat.h for the layout and the rules). */
#include <string.h>
#include "param_bytes.h"
#include "kdecode_cat.h"

#define SIZE_STRIDE_DIMS 4u      /* CAT_ARRAY_MAX_INPUT_DIMS */

static uint32_t align_to(uint32_t v, uint32_t a)
{
	return (v + a - 1) / a * a;
}

/* An IndexType value at byte at. */
static uint64_t index_at(const unsigned char *b, uint32_t at, uint32_t isz)
{
	return isz == 4 ? np_u32_at(b, at) : np_u64_at(b, at);
}

uint32_t np_cat_meta_size(const struct np_cat_shape *sh)
{
	uint32_t n = sh->batch, isz = sh->index_size;
	uint32_t flags_end = 8u * n + 3u * isz * n + n;
	uint32_t strides = align_to(flags_end, isz) + sh->stride_size * 2u * SIZE_STRIDE_DIMS * isz;
	return align_to(strides, 8);
}

/* The elements one step of dimension d spans: the sizes after it. */
static uint64_t inner_size(const unsigned char *os, int32_t d, const struct np_cat_shape *sh)
{
	uint64_t inner = 1;
	for (uint32_t e = (uint32_t)d + 1; e < sh->dims; e++)
		inner *= index_at(os, e * sh->index_size, sh->index_size);
	return inner;
}

/* Each input's part of the output is one dense range (kdecode_cat.h's
 * slabs): the dimensions before concat_dim are all 1, so input k holds
 * dimSize[k] steps of dim_stride elements from offset[k] on, and the
 * offsets of one launch follow each other. */
static int read_slabs(const unsigned char *meta, const unsigned char *os, int32_t concat_dim,
		      uint64_t dim_stride, const struct np_cat_shape *sh, struct np_cat_view *v)
{
	uint32_t n = sh->batch, isz = sh->index_size;

	if (concat_dim < 0 || (uint32_t)concat_dim >= sh->dims || !dim_stride ||
	    dim_stride > v->numel)
		return 0;
	for (int32_t d = 0; d < concat_dim; d++)
		if (index_at(os, (uint32_t)d * isz, isz) != 1)
			return 0;
	/* dimStride is the concat dimension's stride; the _vectorized
	 * trailingSize, in elements, divides the flattened rest */
	if (sh->per_vec == 1 ? dim_stride != inner_size(os, concat_dim, sh)
			     : v->numel % dim_stride != 0)
		return 0;
	for (int k = 0; k < v->ninputs; k++) {
		uint64_t offset = index_at(meta, 8u * n + (uint32_t)k * isz, isz);
		uint64_t steps = index_at(meta, 8u * n + isz * n + (uint32_t)k * isz, isz);
		uint64_t count = index_at(meta, 8u * n + 2u * isz * n + (uint32_t)k * isz, isz);

		if (steps > v->numel / dim_stride || count != steps * dim_stride ||
		    offset > v->numel / dim_stride ||
		    count > v->numel - offset * dim_stride)
			return 0;
		if (k && offset * dim_stride != v->start[k - 1] + v->count[k - 1])
			return 0;
		v->start[k] = offset * dim_stride;
		v->count[k] = count;
	}
	return 1;
}

int np_cat_read(uint64_t output, const unsigned char *meta, const unsigned char *os,
		int32_t concat_dim, uint64_t dim_stride, const struct np_cat_shape *sh,
		const uint32_t grid[3], struct np_cat_view *v)
{
	uint32_t n = sh->batch, isz = sh->index_size;
	uint64_t numel = 1, copied = 0, expect = 1;

	if (!output || !meta || !os || (isz != 4 && isz != 8) || sh->dims < 1 || !sh->per_vec ||
	    sh->dims > SIZE_STRIDE_DIMS || !n || grid[1] < 1 || grid[1] > n ||
	    grid[1] > NP_CAT_MAX_BATCH || grid[2] != 1)
		return 0;
	/* the output: sizes then strides, in elements; contiguous, row-major */
	for (int d = (int)sh->dims - 1; d >= 0; d--) {
		uint64_t size = index_at(os, (uint32_t)d * isz, isz);
		uint64_t stride = index_at(os, (SIZE_STRIDE_DIMS + (uint32_t)d) * isz, isz);
		if (!size || size > (1ull << 40))
			return 0;
		if (size > 1 && stride != expect)
			return 0;
		expect *= size;
		numel *= size;
	}
	numel *= sh->per_vec;
	v->output = output;
	v->numel = numel;
	v->ninputs = (int)grid[1];
	for (uint32_t k = 0; k < grid[1]; k++) {
		v->input[k] = np_u64_at(meta, 8u * k);
		if (!v->input[k])
			return 0;
		copied += index_at(meta, 8u * n + 2u * isz * n + k * isz, isz);   /* nElements[k] */
	}
	v->whole = copied == numel;
	v->slabs = read_slabs(meta, os, concat_dim, dim_stride, sh, v);
	return v->whole || v->slabs;
}
