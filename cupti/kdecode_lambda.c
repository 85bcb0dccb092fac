/* kdecode_lambda.c - the output of torch's strided elementwise kernel, read
 * from its lambda (see kdecode_lambda.h for the layout and where it comes
 * from).
 *
 * Why it matters: broadcasting is everywhere (a bias, a mask, a scale per
 * channel), and any op with a broadcast or transposed operand takes this
 * path instead of the vectorized one.  Until this decoder such kernels
 * were opaque: a value they made non-finite was named at its first
 * decoded reader, or at the module output by the guards.
 */
#include <string.h>
#include "dense_range.h"
#include "param_bytes.h"
#include "kdecode_lambda.h"

#define MAX_DIMS 25u             /* OffsetCalculator's (CUDA; ROCm has 16) */
#define DIVIDER 12u              /* IntDivider<uint32_t>: divisor, m1, shift */
#define STRIDES (4u + MAX_DIMS * DIVIDER)
#define HOST_PTR 8u              /* the wrapper's trailing host pointer */
#define MAX_SCALAR_TYPE 44       /* c10::ScalarType values a dtype byte may hold */

static uint32_t align8(uint32_t v)
{
	return (v + 7u) & ~7u;
}

/* Where the data pointers of an nt-tensor lambda start, and where the
 * functor starts after them. */
static uint32_t data_at(int nt)
{
	return align8(STRIDES + MAX_DIMS * 4u * (uint32_t)nt);
}

/* Whether an IntDivider holds what its constructor makes of its divisor:
 * shift the least with 2^shift >= d, m1 = 2^32 (2^shift - d) / d + 1. */
static int divider_valid(const unsigned char *c, uint32_t at)
{
	uint32_t d = np_u32_at(c, at), m1 = np_u32_at(c, at + 4), shift = np_u32_at(c, at + 8), s = 0;
	if (d < 1 || d > 0x7fffffffu)
		return 0;
	while (s < 32 && (1u << s) < d)
		s++;
	return shift == s && m1 == (uint32_t)((((uint64_t)1 << 32) * (((uint64_t)1 << s) - d)) / d + 1);
}

/* The output's element size from its strides: the stride of its first
 * dimension of more than one element (TensorIterator orders dimensions by
 * the output's strides, smallest first).  0 if every size is 1. */
static uint32_t output_esize(const unsigned char *c, int32_t dims, int nt)
{
	for (int32_t d = 0; d < dims; d++)
		if (np_u32_at(c, 4u + (uint32_t)d * DIVIDER) > 1)
			return np_u32_at(c, STRIDES + (uint32_t)d * 4u * (uint32_t)nt);
	return 0;
}

/* Whether the output (stride column 0) is one dense range of esize-byte
 * elements: a contiguous tensor, or a permutation of one. */
static int output_dense(const unsigned char *c, int32_t dims, int nt, uint32_t esize)
{
	uint64_t expect = esize;
	for (int32_t d = 0; d < dims; d++) {
		uint32_t size = np_u32_at(c, 4u + (uint32_t)d * DIVIDER);
		if (size == 1)
			continue;
		if (np_u32_at(c, STRIDES + (uint32_t)d * 4u * (uint32_t)nt) != expect)
			return 0;
		expect *= size;
	}
	return 1;
}

/* Input k's elements, when what it reads is one dense range of
 * esize-byte elements: its dimensions of more than one element and a
 * non-zero stride, in stride order, are a contiguous tensor's.  0 if
 * not. */
static uint64_t input_numel(const unsigned char *c, int32_t dims, int nt, int k, uint32_t esize)
{
	struct np_dense d = { .n = 0 };
	for (int32_t i = 0; i < dims; i++)
		np_dense_add(&d, np_u32_at(c, 4u + (uint32_t)i * DIVIDER),
			     np_u32_at(c, STRIDES + ((uint32_t)i * (uint32_t)nt + (uint32_t)k) * 4u));
	return np_dense_numel(&d, esize);
}

/* The byte size of a floating c10::ScalarType, 0 for any other; with
 * complex, of a complex one instead.  Apart, so that a byte 8 or 16 (a
 * stride) is never taken for a complex type where a real one is meant. */
static uint32_t floating_size(unsigned st, int complex)
{
	if (complex)
		switch (st) {
		case 8: return 4;       /* ComplexHalf */
		case 9: return 8;       /* ComplexFloat */
		case 10: return 16;     /* ComplexDouble */
		default: return 0;
		}
	switch (st) {
	case 5: case 15: return 2;      /* Half, BFloat16 */
	case 6: return 4;               /* Float */
	case 7: return 8;               /* Double */
	case 23: case 24: case 25: case 26: return 1;   /* Float8 e5m2, e4m3fn, fnuz */
	default: return 0;
	}
}

/* The casting lambda's dtypes array, between the functor's start and the
 * host pointer: the one place where nt bytes are all ScalarTypes and the
 * first is floating (complex, with complex) of the output's element size
 * (any size if esize is 0).  The output's ScalarType, or -1 unless
 * exactly one place fits.
 * One echo is not a second place: when the last input has the output's
 * type ({ComplexFloat, Float, ComplexFloat}), that input's byte followed
 * by the zero padding after the array fits too.  A place that starts
 * inside the one before and reaches past it only into zeros is that. */
static int find_dtypes(const unsigned char *c, uint32_t from, uint32_t end, int nt, uint32_t esize,
		       int complex)
{
	int found = -1, places = 0;
	uint32_t last = 0;
	for (uint32_t p = from; p + (uint32_t)nt <= end; p++) {
		uint32_t sz = floating_size(c[p], complex);
		int ok = sz && (!esize || sz == esize);
		for (int k = 1; ok && k < nt; k++)
			ok = c[p + k] <= MAX_SCALAR_TYPE;
		if (!ok)
			continue;
		int echo = places && p < last + (uint32_t)nt;
		for (uint32_t q = last + (uint32_t)nt; echo && q < p + (uint32_t)nt; q++)
			echo = c[q] == 0;
		if (echo)
			continue;
		found = c[p];
		last = p;
		places++;
	}
	return places == 1 ? found : -1;
}

/* Whether nt tensors fit this lambda: pointers where data_at puts them, a
 * functor (at least a byte), the dtypes when casting, within size. */
static int tensors_fit(const unsigned char *c, uint32_t size, int nt, int casting)
{
	uint32_t at = data_at(nt), used = at + 8u * (uint32_t)nt + 1u + (casting ? (uint32_t)nt : 0);
	if (align8(used) + HOST_PTR > size)
		return 0;
	for (int k = 0; k < nt; k++) {
		uint64_t p = np_u64_at(c, at + 8u * (uint32_t)k);
		if (!np_pointer_like(p))
			return 0;       /* not a device (unified) address */
	}
	return 1;
}

int np_lambda_read(const unsigned char *c, uint32_t size, int32_t n,
		   const struct np_lambda_shape *sh, const uint32_t grid[3],
		   const uint32_t block[3], struct np_lambda_view *v)
{
	uint64_t product = 1, per_block;
	int32_t dims;
	int nt = 0, fits = 0;

	if (!c || n < 1 || sh->threads < 1 || sh->vt < 1 || size % 8 || size < data_at(1) + 16)
		return 0;
	per_block = (uint64_t)sh->threads * (uint64_t)sh->vt;
	if (block[0] != (uint32_t)sh->threads || block[1] != 1 || block[2] != 1 ||
	    grid[0] != ((uint64_t)n + per_block - 1) / per_block || grid[1] != 1 || grid[2] != 1)
		return 0;       /* not launch_legacy_kernel's launch of n elements */
	dims = (int32_t)np_u32_at(c, 0);
	if (dims < 0 || (uint32_t)dims > MAX_DIMS)
		return 0;
	for (int32_t d = 0; d < dims; d++) {
		if (!divider_valid(c, 4u + (uint32_t)d * DIVIDER))
			return 0;
		product *= np_u32_at(c, 4u + (uint32_t)d * DIVIDER);
		if (product > (uint64_t)n)
			return 0;
	}
	if (product != (uint64_t)n)
		return 0;
	/* how many tensors: the functor's arity + 1 if the name says, else
	 * the one count whose pointers and parts fit the parameter */
	for (int k = sh->arity ? sh->arity + 1 : 1;
	     k <= (sh->arity ? sh->arity + 1 : NP_LAMBDA_MAX_TENSORS); k++)
		if (tensors_fit(c, size, k, sh->casting)) {
			nt = k;
			fits++;
		}
	if (fits != 1)
		return 0;

	memset(v, 0, sizeof(*v));
	v->ntensors = nt;
	v->numel = (uint64_t)n;
	v->esize = output_esize(c, dims, nt);
	v->scalar_type = -1;
	if (sh->casting) {
		uint32_t from = data_at(nt) + 8u * (uint32_t)nt;
		v->scalar_type = find_dtypes(c, from, size - HOST_PTR, nt, v->esize, sh->complex);
		if (v->scalar_type < 0)
			return 0;
		if (!v->esize)
			v->esize = floating_size((unsigned)v->scalar_type, sh->complex);
	} else {
		if (!sh->esize)
			return 0;
		v->esize = sh->esize;   /* the density check below holds the strides to it */
	}
	for (int k = 0; k < nt; k++)
		v->data[k] = np_u64_at(c, data_at(nt) + 8u * (uint32_t)k);
	if (!output_dense(c, dims, nt, v->esize))
		return 2;   /* which pointer is which, still: the generic tier's */
	for (int k = 1; k < nt && !sh->casting && sh->in_esize; k++)
		v->in_numel[k] = input_numel(c, dims, nt, k, sh->in_esize);
	return 1;
}
