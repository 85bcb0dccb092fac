/* test_bad_spread.c - agent/bad_spread.c: per-dimension counts and the
 * first non-finite element in logical order, on contiguous tensors and
 * on permuted views of them (memory order is not logical order), across
 * chunk boundaries, for every dtype, and its refusals and bounds. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../../agent/bad_spread.h"

static struct np_spread_in tensor(enum np_dtype t, const void *base, int ndim,
				  const int64_t *shape, const int64_t *stride)
{
	struct np_spread_in in = { .dtype = t, .base = base, .ndim = ndim, .numel = 1 };
	for (int d = 0; d < ndim; d++) {
		in.shape[d] = shape[d];
		in.stride[d] = stride[d];
		in.numel *= (uint64_t)shape[d];
	}
	return in;
}

static void expect_dims(const struct np_spread *s, int ndim, const uint32_t *bad,
			const uint32_t *first)
{
	cr_assert_eq(s->ndim, ndim);
	for (int d = 0; d < ndim; d++) {
		cr_expect_eq(s->bad[d], bad[d], "dim %d: %u indices hold one, want %u", d,
			     s->bad[d], bad[d]);
		cr_expect_eq(s->first[d], first[d], "dim %d: first at %u, want %u", d,
			     s->first[d], first[d]);
	}
}

/* A batch of 4 sequences of 6 tokens of 32 features; sample 2 is all NaN
 * (a fully padded sequence through attention). */
Test(bad_spread, one_sample_of_a_contiguous_batch)
{
	static float x[4][6][32];
	for (int t = 0; t < 6; t++)
		for (int e = 0; e < 32; e++)
			x[2][t][e] = NAN;
	const int64_t shape[] = { 4, 6, 32 }, stride[] = { 192, 32, 1 };
	struct np_spread_in in = tensor(NP_DT_F32, x, 3, shape, stride);
	struct np_spread s;
	cr_assert_eq(np_bad_spread(&in, UINT64_MAX, &s), 0);
	expect_dims(&s, 3, (uint32_t[]){ 1, 6, 32 }, (uint32_t[]){ 2, 0, 0 });
	cr_expect_eq(s.size[0], 4);
	cr_expect_eq(s.size[1], 6);
	cr_expect_eq(s.size[2], 32);
	cr_expect_eq(s.partial, 0);
}

/* The same batch as nn.MultiheadAttention holds it without batch_first
 * and returns it with it: memory (seq, batch, feature), the view
 * (batch, seq, feature).  An Inf at view [1, 5, 7] lies after sample 2's
 * first NaN in memory but before it in the view's order. */
Test(bad_spread, permuted_view_counts_and_orders_logically)
{
	static float mem[6][4][32];   /* [seq][batch][feature] */
	for (int t = 0; t < 6; t++)
		for (int e = 0; e < 32; e++)
			mem[t][2][e] = NAN;
	mem[5][1][7] = INFINITY;
	const int64_t shape[] = { 4, 6, 32 }, stride[] = { 32, 128, 1 };
	struct np_spread_in in = tensor(NP_DT_F32, mem, 3, shape, stride);
	struct np_spread s;
	cr_assert_eq(np_bad_spread(&in, UINT64_MAX, &s), 0);
	expect_dims(&s, 3, (uint32_t[]){ 2, 6, 32 }, (uint32_t[]){ 1, 5, 7 });
}

/* A complex64 [3, 4] tensor, as its real view [3, 4, 2]: a NaN in the
 * imaginary part of element [1, 2] and an Inf in the real part of [2, 0];
 * then its transpose [4, 3], whose real view walks memory out of order. */
Test(bad_spread, complex_tensor_as_its_real_view)
{
	static float z[3][4][2];   /* [row][col][real, imaginary] */
	z[1][2][1] = NAN;
	z[2][0][0] = INFINITY;
	const int64_t shape[] = { 3, 4 }, stride[] = { 4, 1 };
	struct np_spread_in in = tensor(NP_DT_F32, z, 2, shape, stride);
	cr_assert_eq(np_spread_as_real(&in), 0);
	cr_assert_eq(in.ndim, 3);
	cr_expect_eq(in.numel, 24);
	cr_expect_eq(in.stride[0], 8);
	cr_expect_eq(in.stride[1], 2);
	cr_expect_eq(in.stride[2], 1);
	struct np_spread s;
	cr_assert_eq(np_bad_spread(&in, UINT64_MAX, &s), 0);
	expect_dims(&s, 3, (uint32_t[]){ 2, 2, 2 }, (uint32_t[]){ 1, 2, 1 });
	cr_expect_eq(s.size[2], 2);

	const int64_t tshape[] = { 4, 3 }, tstride[] = { 1, 4 };   /* z.T */
	in = tensor(NP_DT_F32, z, 2, tshape, tstride);
	cr_assert_eq(np_spread_as_real(&in), 0);
	cr_assert_eq(np_bad_spread(&in, UINT64_MAX, &s), 0);
	/* view [0, 2] real part (Inf) comes before [2, 1] imaginary (NaN) */
	expect_dims(&s, 3, (uint32_t[]){ 2, 2, 2 }, (uint32_t[]){ 0, 2, 0 });

	struct np_spread_in full = { .ndim = NP_SPREAD_DIMS };
	cr_expect_eq(np_spread_as_real(&full), -1, "no room for the parts' dimension");
}

/* An expanded tensor (broadcast: stride 0): a [3, 4] block seen as
 * [5, 3, 4], with a NaN at [1, 2] of the block; the broadcast dimension
 * in the middle too; one value broadcast everywhere. */
Test(bad_spread, broadcast_dimensions_hold_it_at_every_index)
{
	static float b[3][4];
	b[1][2] = NAN;
	const int64_t shape[] = { 5, 3, 4 }, stride[] = { 0, 4, 1 };
	struct np_spread_in in = tensor(NP_DT_F32, b, 3, shape, stride);
	in.numel = 12;   /* what it stores */
	struct np_spread s;
	cr_assert_eq(np_bad_spread_broadcast(&in, UINT64_MAX, &s), 0);
	expect_dims(&s, 3, (uint32_t[]){ 5, 1, 1 }, (uint32_t[]){ 0, 1, 2 });
	cr_expect_eq(s.size[0], 5);
	cr_expect_eq(s.size[1], 3);

	const int64_t mshape[] = { 3, 7, 4 }, mstride[] = { 4, 0, 1 };
	in = tensor(NP_DT_F32, b, 3, mshape, mstride);
	in.numel = 12;
	cr_assert_eq(np_bad_spread_broadcast(&in, UINT64_MAX, &s), 0);
	expect_dims(&s, 3, (uint32_t[]){ 1, 7, 1 }, (uint32_t[]){ 1, 0, 2 });

	static double one = INFINITY;
	const int64_t oshape[] = { 2, 3 }, ostride[] = { 0, 0 };
	in = tensor(NP_DT_F64, &one, 2, oshape, ostride);
	in.numel = 1;
	cr_assert_eq(np_bad_spread_broadcast(&in, UINT64_MAX, &s), 0);
	expect_dims(&s, 2, (uint32_t[]){ 2, 3 }, (uint32_t[]){ 0, 0 });

	static float clean[3][4];   /* nothing non-finite: no spread */
	in = tensor(NP_DT_F32, clean, 3, shape, stride);
	in.numel = 12;
	cr_expect_eq(np_bad_spread_broadcast(&in, UINT64_MAX, &s), -1);
	/* no broadcast dimension: as np_bad_spread */
	in = tensor(NP_DT_F32, b, 2, (const int64_t[]){ 3, 4 }, (const int64_t[]){ 4, 1 });
	cr_assert_eq(np_bad_spread_broadcast(&in, UINT64_MAX, &s), 0);
	expect_dims(&s, 2, (uint32_t[]){ 1, 1 }, (uint32_t[]){ 1, 2 });
}

/* A transpose of a matrix: the columns of the view are memory's rows. */
Test(bad_spread, transposed_matrix)
{
	static double m[5][7];     /* memory [5][7]; the view is 7 x 5 */
	m[3][0] = -INFINITY;       /* view [0, 3] */
	m[1][6] = NAN;             /* view [6, 1] */
	const int64_t shape[] = { 7, 5 }, stride[] = { 1, 7 };
	struct np_spread_in in = tensor(NP_DT_F64, m, 2, shape, stride);
	struct np_spread s;
	cr_assert_eq(np_bad_spread(&in, UINT64_MAX, &s), 0);
	expect_dims(&s, 2, (uint32_t[]){ 2, 2 }, (uint32_t[]){ 0, 3 });
}

Test(bad_spread, dimensions_of_size_one)
{
	static float x[1][3][1][5];
	x[0][2][0][4] = NAN;
	const int64_t shape[] = { 1, 3, 1, 5 }, stride[] = { 15, 5, 5, 1 };
	struct np_spread_in in = tensor(NP_DT_F32, x, 4, shape, stride);
	struct np_spread s;
	cr_assert_eq(np_bad_spread(&in, UINT64_MAX, &s), 0);
	expect_dims(&s, 4, (uint32_t[]){ 1, 1, 1, 1 }, (uint32_t[]){ 0, 2, 0, 4 });
}

/* Rows longer than a chunk: non-finite values on both sides of chunk
 * boundaries, in 16-bit, 8-bit and 64-bit formats. */
Test(bad_spread, across_chunks_every_dtype)
{
	const struct { enum np_dtype t; uint64_t nan; } kinds[] = {
		{ NP_DT_F32, 0x7fc00000 }, { NP_DT_F64, 0x7ff8000000000000ull },
		{ NP_DT_F16, 0x7e00 }, { NP_DT_BF16, 0xffc0 },
		{ NP_DT_F8E4M3, 0x7f }, { NP_DT_F8E5M2, 0xfe },
	};
	const int64_t rows = 3, cols = 5000;
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		unsigned sz = np_dtype_size(kinds[k].t);
		uint8_t *buf = calloc((size_t)(rows * cols), sz);
		const int64_t at[][2] = { { 2, 4999 }, { 0, 4095 }, { 0, 4096 }, { 1, 3 } };
		for (size_t i = 0; i < 4; i++)
			memcpy(buf + (size_t)(at[i][0] * cols + at[i][1]) * sz, &kinds[k].nan, sz);
		const int64_t shape[] = { rows, cols }, stride[] = { cols, 1 };
		struct np_spread_in in = tensor(kinds[k].t, buf, 2, shape, stride);
		struct np_spread s;
		cr_assert_eq(np_bad_spread(&in, UINT64_MAX, &s), 0, "dtype %d", kinds[k].t);
		expect_dims(&s, 2, (uint32_t[]){ 3, 4 }, (uint32_t[]){ 0, 4095 });
		free(buf);
	}
}

Test(bad_spread, refuses_what_it_cannot_read)
{
	static float x[2][3][4];
	x[1][1][1] = NAN;
	struct np_spread s;
	const int64_t shape[] = { 2, 3, 4 }, stride[] = { 12, 4, 1 };
	struct np_spread_in in = tensor(NP_DT_F32, x, 3, shape, stride);
	cr_assert_eq(np_bad_spread(&in, UINT64_MAX, &s), 0);

	struct np_spread_in gap = in;   /* every other row: not one block */
	gap.stride[0] = 24;
	cr_expect_eq(np_bad_spread(&gap, UINT64_MAX, &s), -1);

	struct np_spread_in expanded = in;   /* stride 0: one row seen twice */
	expanded.stride[0] = 0;
	cr_expect_eq(np_bad_spread(&expanded, UINT64_MAX, &s), -1);

	struct np_spread_in scalar = in;
	scalar.ndim = 0;
	cr_expect_eq(np_bad_spread(&scalar, UINT64_MAX, &s), -1);

	struct np_spread_in seven = in;   /* more dimensions than a record holds */
	seven.ndim = NP_SPREAD_DIMS + 1;
	cr_expect_eq(np_bad_spread(&seven, UINT64_MAX, &s), -1);

	x[1][1][1] = 1.0f;   /* nothing non-finite */
	cr_expect_eq(np_bad_spread(&in, UINT64_MAX, &s), -1);
}

/* The bound: past max_scan elements the counts are lower bounds, said
 * so; in a contiguous tensor the first is still the first. */
Test(bad_spread, bounded_scan_says_partial)
{
	const int64_t rows = 64, cols = 4096;   /* a chunk per row */
	float *x = calloc((size_t)(rows * cols), sizeof(float));
	for (int64_t r = 5; r < rows; r++)
		x[r * cols + r] = NAN;
	const int64_t shape[] = { rows, cols }, stride[] = { cols, 1 };
	struct np_spread_in in = tensor(NP_DT_F32, x, 2, shape, stride);
	struct np_spread s;
	cr_assert_eq(np_bad_spread(&in, 4 * 4096, &s), 0);
	cr_expect_eq(s.partial, 1);
	expect_dims(&s, 2, (uint32_t[]){ 4, 4 }, (uint32_t[]){ 5, 5 });
	cr_assert_eq(np_bad_spread(&in, UINT64_MAX, &s), 0);
	cr_expect_eq(s.partial, 0);
	expect_dims(&s, 2, (uint32_t[]){ 59, 59 }, (uint32_t[]){ 5, 5 });
	free(x);
}

/* A dimension longer than the bitmap: its index past it still counts as
 * at least one, and the count is marked a lower bound. */
Test(bad_spread, index_past_the_bitmap)
{
	const int64_t n = (int64_t)NP_SPREAD_BITS + 10;
	float *x = calloc((size_t)n, sizeof(float));
	x[n - 1] = INFINITY;
	x[7] = NAN;
	const int64_t shape[] = { n }, stride[] = { 1 };
	struct np_spread_in in = tensor(NP_DT_F32, x, 1, shape, stride);
	struct np_spread s;
	cr_assert_eq(np_bad_spread(&in, UINT64_MAX, &s), 0);
	cr_expect_eq(s.bad[0], 2);
	cr_expect_eq(s.first[0], 7);
	cr_expect_eq(s.partial, 1);
	cr_expect_eq(s.size[0], (uint32_t)n);
	free(x);
}

/* Log-probabilities of 4 samples over 5 actions, invalid actions -inf
 * (a mask, in every row), and sample 2 with no valid action left: its
 * row all NaN.  With skip_neginf the spread is the NaN's: sample 2. */
Test(bad_spread, skip_neginf_counts_the_nan_among_a_mask)
{
	float x[4][5] = { { 0 } };
	x[0][1] = x[1][3] = x[3][0] = x[3][4] = -INFINITY;
	for (int a = 0; a < 5; a++)
		x[2][a] = NAN;
	const int64_t shape[] = { 4, 5 }, stride[] = { 5, 1 };
	struct np_spread_in in = tensor(NP_DT_F32, x, 2, shape, stride);
	struct np_spread s;
	cr_assert_eq(np_bad_spread(&in, UINT64_MAX, &s), 0);
	expect_dims(&s, 2, (uint32_t[]){ 4, 5 }, (uint32_t[]){ 0, 1 });
	cr_expect_eq(s.no_neginf, 0);
	in.skip_neginf = 1;
	cr_assert_eq(np_bad_spread(&in, UINT64_MAX, &s), 0);
	expect_dims(&s, 2, (uint32_t[]){ 1, 5 }, (uint32_t[]){ 2, 0 });
	cr_expect_eq(s.no_neginf, 1);
	/* a mask alone, skipped: nothing to say */
	for (int a = 0; a < 5; a++)
		x[2][a] = 0;
	cr_expect_eq(np_bad_spread(&in, UINT64_MAX, &s), -1);
}
