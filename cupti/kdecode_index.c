/* kdecode_index.c - index_select's output, read from its TensorInfo
 * parameters (see kdecode_index.h).
 *
 * Why it matters: an embedding's lookup is the first kernel of a language
 * model.  It makes no non-finite value itself, but it carries one from a
 * table the optimizer broke into every step's activations; unread, its
 * first decoded reader looked like the birth.
 */
#include "dense_range.h"
#include "kdecode_index.h"
#include "param_bytes.h"

#define MAX_DIMS 25u             /* MAX_TENSORINFO_DIMS */

uint32_t np_index_info_size(uint32_t index_size)
{
	if (index_size != 4 && index_size != 8)
		return 0;
	return (8u + 2u * MAX_DIMS * index_size + 4u + 7u) & ~7u;
}

static uint64_t index_at(const unsigned char *info, uint32_t isz, uint32_t at)
{
	return isz == 4 ? np_u32_at(info, at) : np_u64_at(info, at);
}

/* Elements of dst with its select dimension counted count times (the
 * host's reduceDim left it 1), when its strides then make it one dense
 * range (any order of its dimensions); 0 if not, or not a TensorInfo. */
static uint64_t dense_numel(const unsigned char *info, uint32_t isz, int32_t select_dim,
			    uint64_t count)
{
	uint32_t sizes = 8, strides = 8 + MAX_DIMS * isz, at_dims = 8 + 2 * MAX_DIMS * isz;
	int32_t dims = np_i32_at(info, at_dims);
	struct np_dense dn = { .n = 0 };
	uint64_t numel = 1;

	if (dims < 1 || (uint32_t)dims > MAX_DIMS || select_dim >= dims)
		return 0;
	for (int32_t d = 0; d < dims; d++) {
		uint64_t sz = index_at(info, isz, sizes + (uint32_t)d * isz);
		uint64_t st = index_at(info, isz, strides + (uint32_t)d * isz);
		if (d == select_dim) {
			if (sz != 1)
				return 0;       /* not what reduceDim leaves */
			sz = count;
		}
		if (sz == 0 || sz > (1ull << 40))
			return 0;
		numel *= sz;
		if (numel > (1ull << 40))
			return 0;
		np_dense_add(&dn, sz, st);
	}
	/* a dimension of stride 0 (a broadcast) covers less than its elements:
	 * no output a kernel writes whole */
	return np_dense_numel(&dn, 1) == numel ? numel : 0;
}

uint64_t np_tensorinfo_numel(const unsigned char *info, uint32_t index_size)
{
	if (!np_index_info_size(index_size) || !np_pointer_like(np_u64_at(info, 0)))
		return 0;
	return dense_numel(info, index_size, -1, 0);
}

int np_index_read(const unsigned char *dst, const unsigned char *indices, uint32_t index_size,
		  const struct np_index_launch *in, uint64_t *ptr, uint64_t *numel)
{
	uint64_t data = np_u64_at(dst, 0), count = 1, n, slice;
	int32_t idims;

	if (!np_index_info_size(index_size) || in->select_dim < 0 ||
	    (uint32_t)in->select_dim >= MAX_DIMS || !np_pointer_like(data))
		return 0;
	/* the indices: any layout, only their count */
	idims = np_i32_at(indices, 8 + 2 * MAX_DIMS * index_size);
	if (idims < 0 || (uint32_t)idims > MAX_DIMS)
		return 0;
	for (int32_t d = 0; d < idims; d++)
		count *= index_at(indices, index_size, 8 + (uint32_t)d * index_size);
	n = count ? dense_numel(dst, index_size, in->select_dim, count) : 0;
	if (!n)
		return 0;
	slice = n / count;
	/* the small kernel's innerSize is the slice; the large one's is the
	 * slice (index major) or the count, after the total */
	if (in->large ? in->total != n || in->inner != (in->index_major ? slice : count) :
			in->inner != slice)
		return 0;
	*ptr = data;
	*numel = n;
	return 1;
}
