/* test_gemm.c - cupti/gemm.c: what a cuBLAS call writes and reads, on the
 * calls torch makes (CUDABlas.cpp: a row-major torch matmul is the
 * column-major product of the transposes). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include "../../cupti/gemm.h"
#include "plan_inputs.h"

#define X 0x7f0000100000ull     /* activations (8, 32) */
#define W 0x7f0000200000ull     /* nn.Linear(32, 16).weight (16, 32) */
#define Y 0x7f0000300000ull     /* output (8, 16) */
#define BIAS 0x7f0000400000ull

enum { R32F = 0, R64F = 1, R16F = 2, R8I = 3, C32F = 4, C64F = 5, C16F = 6, R16BF = 14,
       E4M3 = 28, E5M2 = 29 };
enum { OP_N = 0, OP_T = 1 };

/* y = x @ W.T as torch asks cuBLAS: y^T (16 x 8) = op_T(W) (W stored 32 x 16
 * column-major) x x^T (32 x 8): gemm('t', 'n', m 16, n 8, k 32, W, lda 32,
 * x, ldb 32, y, ldc 16) */
static struct np_gemm_call linear(int dtype, int ldc)
{
	struct np_gemm_call c = {
		.a = np_gemm_operand(W, OP_T, 16, 32, 32, 0, 1, dtype),
		.b = np_gemm_operand(X, OP_N, 32, 8, 32, 0, 1, dtype),
		.d = np_gemm_operand(Y, OP_N, 16, 8, ldc, 0, 1, dtype),
		.beta = NP_GEMM_BETA_ZERO,
	};
	c.c = c.d;
	return c;
}

Test(gemm, a_linear_layer_writes_its_whole_output_and_reads_weight_and_input)
{
	struct np_gemm_call c = linear(R32F, 16);
	struct np_gemm_plan p;
	cr_assert_eq(np_gemm_plan(&c, &p), 0);
	cr_expect_eq(p.out.ptr, Y);
	cr_expect_eq(p.out.numel, 8 * 16);
	cr_expect_eq(p.out.dtype, NP_DT_F32);
	cr_expect_eq(p.out.how, NP_KH_GEMM);
	cr_expect_eq(p.out.n_in, 2);
	cr_expect(has_input(&p, W) && has_input(&p, X));
	cr_expect(!has_input(&p, Y), "beta 0: D is not read");
	cr_assert_eq(p.n_rd, 2);
	cr_expect_eq(p.rd[0].ptr, W);
	cr_expect_eq(p.rd[0].numel, 16 * 32, "the transposed A, stored 32 x 16");
	cr_expect_eq(p.rd[1].ptr, X);
	cr_expect_eq(p.rd[1].numel, 32 * 8);
	cr_expect_eq(p.rd[1].dtype, NP_DT_F32);
}

Test(gemm, in_place_accumulation_reads_d)
{
	/* addmm without cublasLt: the bias copied into y, then beta = 1 */
	struct np_gemm_call c = linear(R16BF, 16);
	c.beta = NP_GEMM_BETA_SET;
	struct np_gemm_plan p;
	cr_assert_eq(np_gemm_plan(&c, &p), 0);
	cr_expect_eq(p.out.dtype, NP_DT_BF16);
	cr_expect(has_input(&p, Y), "a non-finite value already in y is propagation");
	cr_expect_eq(p.out.n_in, 3);
}

Test(gemm, beta_in_device_memory_reads_a_separate_c_but_not_d_itself)
{
	struct np_gemm_call c = linear(R32F, 16);
	c.beta = NP_GEMM_BETA_UNKNOWN;
	struct np_gemm_plan p;
	cr_assert_eq(np_gemm_plan(&c, &p), 0);
	cr_expect(!has_input(&p, Y), "a reused block's old -inf must not hide a birth");
	c.c.ptr = BIAS;
	cr_assert_eq(np_gemm_plan(&c, &p), 0);
	cr_expect(has_input(&p, BIAS));
}

Test(gemm, the_epilogue_bias_is_read)
{
	struct np_gemm_call c = linear(R16F, 16);
	c.bias = BIAS;
	struct np_gemm_plan p;
	cr_assert_eq(np_gemm_plan(&c, &p), 0);
	cr_expect(has_input(&p, BIAS));
	cr_expect_eq(p.out.dtype, NP_DT_F16);
}

Test(gemm, an_output_view_with_gaps_is_not_checked)
{
	/* y[:, :16] of an (8, 32) tensor: ldc 32, the gaps another tensor's */
	struct np_gemm_call c = linear(R32F, 32);
	struct np_gemm_plan p;
	cr_expect_eq(np_gemm_plan(&c, &p), -1);
	/* one column needs no leading dimension: y (1, 16) of a matrix-vector product */
	c.d = np_gemm_operand(Y, OP_N, 16, 1, 64, 0, 1, R32F);
	cr_assert_eq(np_gemm_plan(&c, &p), 0);
	cr_expect_eq(p.out.numel, 16);
}

Test(gemm, an_input_with_gaps_is_an_input_but_no_read)
{
	struct np_gemm_call c = linear(R32F, 16);
	c.b.ld = 64;             /* x a slice of a wider tensor */
	struct np_gemm_plan p;
	cr_assert_eq(np_gemm_plan(&c, &p), 0);
	cr_expect(has_input(&p, X));
	cr_assert_eq(p.n_rd, 1);
	cr_expect_eq(p.rd[0].ptr, W);
}

Test(gemm, dtypes_no_check_reads_are_not_planned)
{
	struct np_gemm_plan p;
	struct np_gemm_call c = linear(R8I, 16);
	cr_expect_eq(np_gemm_plan(&c, &p), -1, "int8 output");
	cr_expect_eq(np_gemm_dtype(C32F), -1, "complex: not as it is");
	cr_expect_eq(np_gemm_dtype(R64F), NP_DT_F64);
	cr_expect_eq(np_gemm_dtype(E4M3), NP_DT_F8E4M3);
	cr_expect_eq(np_gemm_dtype(E5M2), NP_DT_F8E5M2);
	/* fp8 inputs to a bf16 output (torch._scaled_mm) */
	c = linear(R16BF, 16);
	c.a.cuda_dtype = c.b.cuda_dtype = E4M3;
	cr_assert_eq(np_gemm_plan(&c, &p), 0);
	cr_assert_eq(p.n_rd, 2);
	cr_expect_eq(p.rd[0].dtype, NP_DT_F8E4M3);
	cr_expect_eq(p.out.dtype, NP_DT_BF16);
}

Test(gemm, strided_batches_count_every_matrix_when_they_abut)
{
	/* bmm of (4, 8, 32) x (4, 32, 16): D 16 x 8 per batch, stride 128 */
	struct np_gemm_call c = {
		.a = np_gemm_operand(W, OP_N, 16, 32, 16, 16 * 32, 4, R32F),
		.b = np_gemm_operand(X, OP_N, 32, 8, 32, 32 * 8, 4, R32F),
		.d = np_gemm_operand(Y, OP_N, 16, 8, 16, 16 * 8, 4, R32F),
	};
	c.c = c.d;
	struct np_gemm_plan p;
	cr_assert_eq(np_gemm_plan(&c, &p), 0);
	cr_expect_eq(p.out.numel, 4 * 16 * 8);
	cr_expect_eq(p.rd[0].numel, 4 * 16 * 32);
	/* a weight broadcast over the batch (stride 0): one matrix read */
	c.a.stride = 0;
	cr_assert_eq(np_gemm_plan(&c, &p), 0);
	cr_expect_eq(p.rd[0].numel, 16 * 32);
	/* batches apart: gaps between them */
	c.d.stride = 256;
	cr_expect_eq(np_gemm_plan(&c, &p), -1);
	/* every batch writing one matrix is no output to check */
	c.d.stride = 0;
	cr_expect_eq(np_gemm_plan(&c, &p), -1);
}

Test(gemm, cublaslt_row_major_layouts)
{
	struct np_gemm_mat d = { .ptr = Y, .rows = 8, .cols = 16, .ld = 16, .row_major = 1,
				 .batch = 1, .cuda_dtype = R32F };
	cr_expect_eq(np_gemm_dense_numel(&d, 0), 128);
	d.ld = 8;                /* the column-major leading dimension: wrong here */
	cr_expect_eq(np_gemm_dense_numel(&d, 0), 0);
	d.rows = 1;              /* one row */
	cr_expect_eq(np_gemm_dense_numel(&d, 0), 16);
	d.rows = 0;
	cr_expect_eq(np_gemm_dense_numel(&d, 0), 0, "an empty matrix");
}

Test(gemm, absurd_sizes_are_refused_not_wrapped)
{
	struct np_gemm_mat d = { .ptr = Y, .rows = 1ull << 32, .cols = 1ull << 32,
				 .ld = 1ll << 32, .batch = 1, .cuda_dtype = R32F };
	cr_expect_eq(np_gemm_dense_numel(&d, 0), 0);
	d = (struct np_gemm_mat){ .ptr = Y, .rows = 1 << 20, .cols = 1 << 10, .ld = 1 << 20,
				  .batch = 1 << 20, .stride = 1ll << 30, .cuda_dtype = R32F };
	cr_expect_eq(np_gemm_dense_numel(&d, 0), 0);
	d.ld = -1;
	d.batch = 1;
	cr_expect_eq(np_gemm_dense_numel(&d, 0), 0);
}

/* torch's complex matmul (cublasCgemm_v2, cublasZgemm_v2: a spectral
 * layer's einsum): D checked as its real view, complex A and B kept as
 * its inputs but offered as no read */
Test(gemm, a_complex_product_is_planned_as_its_real_view)
{
	static const struct {
		int cuda;
		int parts;
	} t[] = { { C32F, NP_DT_F32 }, { C64F, NP_DT_F64 }, { C16F, NP_DT_F16 } };
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct np_gemm_call c = linear(t[i].cuda, 16);
		struct np_gemm_plan p;
		cr_expect_eq(np_gemm_complex_dtype(t[i].cuda), t[i].parts);
		cr_assert_eq(np_gemm_plan(&c, &p), 0, "cudaDataType %d", t[i].cuda);
		cr_expect_eq(p.out.ptr, Y);
		cr_expect_eq(p.out.numel, 2 * 8 * 16, "128 complex values, 256 parts");
		cr_expect_eq(p.out.dtype, t[i].parts);
		cr_expect_eq(p.out.pairs, 1);
		cr_expect(has_input(&p, W) && has_input(&p, X));
		/* A and B offered as reads of their real view: a 16 x 32
		 * weight and a 32 x 8 input, two parts per value */
		cr_assert_eq(p.n_rd, 2);
		cr_expect_eq(p.rd[0].ptr, W);
		cr_expect_eq(p.rd[0].numel, 2 * 16 * 32);
		cr_expect_eq(p.rd[1].ptr, X);
		cr_expect_eq(p.rd[1].numel, 2 * 32 * 8);
		for (int k = 0; k < 2; k++) {
			cr_expect_eq(p.rd[k].dtype, t[i].parts);
			cr_expect_eq(p.rd[k].pairs, 1);
		}
	}
	/* a view with gaps stays unplanned, complex or not */
	struct np_gemm_call c = linear(C32F, 32);
	struct np_gemm_plan p;
	cr_expect_eq(np_gemm_plan(&c, &p), -1);
	/* a real product's D is not a pair */
	c = linear(R32F, 16);
	cr_assert_eq(np_gemm_plan(&c, &p), 0);
	cr_expect_eq(p.out.pairs, 0);
	cr_expect_eq(np_gemm_complex_dtype(R32F), -1);
	cr_expect_eq(np_gemm_complex_dtype(R16BF), -1);
}

Test(gemm, complex_scalars_are_zero_only_when_both_parts_are)
{
	float c0[2] = { 0.0f, -0.0f }, c_im[2] = { 0.0f, 1.0f }, c_re[2] = { 2.0f, 0.0f };
	double z0[2] = { -0.0, 0.0 }, z_im[2] = { 0.0, 1e-300 };
	cr_expect(np_gemm_complex_zero(c0, 4));
	cr_expect(!np_gemm_complex_zero(c_im, 4), "beta = i still reads C");
	cr_expect(!np_gemm_complex_zero(c_re, 4));
	cr_expect(np_gemm_complex_zero(z0, 8));
	cr_expect(!np_gemm_complex_zero(z_im, 8));
	cr_expect(!np_gemm_complex_zero(NULL, 4));
}

Test(gemm, scalars_zero_of_every_width)
{
	float f0 = 0.0f, fn0 = -0.0f, fsub = 1e-45f, f1 = 1.0f;
	double d0 = -0.0, d1 = 0.5;
	uint16_t h0 = 0x8000, h1 = 0x3c00;
	int32_t i0 = 0, i1 = 3;
	cr_expect(np_gemm_scalar_zero(&f0, 4));
	cr_expect(np_gemm_scalar_zero(&fn0, 4));
	cr_expect(!np_gemm_scalar_zero(&fsub, 4), "a subnormal beta still reads C");
	cr_expect(!np_gemm_scalar_zero(&f1, 4));
	cr_expect(np_gemm_scalar_zero(&d0, 8));
	cr_expect(!np_gemm_scalar_zero(&d1, 8));
	cr_expect(np_gemm_scalar_zero(&h0, 2));
	cr_expect(!np_gemm_scalar_zero(&h1, 2));
	cr_expect(np_gemm_scalar_zero(&i0, 4));
	cr_expect(!np_gemm_scalar_zero(&i1, 4));
	cr_expect(!np_gemm_scalar_zero(NULL, 4));
	cr_expect(!np_gemm_scalar_zero(&f0, 3));
}

/* torch.mv(W, v) for W (16, 32) row-major: gemv('t', m 32, n 16, W, lda 32,
 * v, incx, y, incy) -- the transposed column-major (32 x 16) matrix */
Test(gemm, a_matrix_vector_product_writes_y_and_reads_the_matrix_and_x)
{
	struct np_gemm_call c = np_gemm_gemv(OP_T, 32, 16, W, 32, X, 1, Y, 1, R32F);
	struct np_gemm_plan p;
	cr_assert_eq(np_gemm_plan(&c, &p), 0);
	cr_expect_eq(p.out.ptr, Y);
	cr_expect_eq(p.out.numel, 16, "op(A) is 16 x 32: y has 16 elements");
	cr_expect(has_input(&p, W) && has_input(&p, X) && !has_input(&p, Y));
	cr_assert_eq(p.n_rd, 2);
	cr_expect_eq(p.rd[0].numel, 32 * 16);
	cr_expect_eq(p.rd[1].ptr, X);
	cr_expect_eq(p.rd[1].numel, 32, "x has op(A)'s 32 columns");
	/* not transposed: y has m elements, x n */
	c = np_gemm_gemv(OP_N, 32, 16, W, 32, X, 1, Y, 1, R64F);
	cr_assert_eq(np_gemm_plan(&c, &p), 0);
	cr_expect_eq(p.out.numel, 32);
	cr_expect_eq(p.out.dtype, NP_DT_F64);
	cr_expect_eq(p.rd[1].numel, 16);
	/* addmv: beta set reads y */
	c.beta = NP_GEMM_BETA_SET;
	cr_assert_eq(np_gemm_plan(&c, &p), 0);
	cr_expect(has_input(&p, Y));
}

Test(gemm, strided_vectors_are_never_taken_for_dense_ranges)
{
	struct np_gemm_plan p;
	/* y a column of a row-major matrix: incy 8, its gaps another's */
	struct np_gemm_call c = np_gemm_gemv(OP_N, 32, 16, W, 32, X, 1, Y, 8, R32F);
	cr_expect_eq(np_gemm_plan(&c, &p), -1);
	/* x strided, or walked backwards: an input, no read */
	c = np_gemm_gemv(OP_N, 32, 16, W, 32, X, 2, Y, 1, R32F);
	cr_assert_eq(np_gemm_plan(&c, &p), 0);
	cr_expect(has_input(&p, X));
	cr_expect_eq(p.n_rd, 1);
	c = np_gemm_gemv(OP_N, 32, 16, W, 32, X, -1, Y, -1, R32F);
	cr_expect_eq(np_gemm_plan(&c, &p), -1, "a negative incy walks y from its end");
	/* one element needs no increment */
	struct np_gemm_mat v = np_gemm_vector(Y, 1, 0, R32F);
	cr_expect_eq(np_gemm_dense_numel(&v, 0), 1);
	v = np_gemm_vector(Y, 5, 0, R32F);
	cr_expect_eq(np_gemm_dense_numel(&v, 0), 0);
	v = np_gemm_vector(Y, 0, 1, R32F);
	cr_expect_eq(np_gemm_dense_numel(&v, 0), 0, "an empty vector");
}

Test(gemm, a_dot_product_writes_one_element_of_its_result_type)
{
	/* torch.dot of two bf16 vectors: cublasDotEx, result bf16 */
	struct np_gemm_call c = np_gemm_dot(X, R16BF, 1, W, R16BF, 1, 64, Y, R16BF);
	struct np_gemm_plan p;
	cr_assert_eq(np_gemm_plan(&c, &p), 0);
	cr_expect_eq(p.out.ptr, Y);
	cr_expect_eq(p.out.numel, 1);
	cr_expect_eq(p.out.dtype, NP_DT_BF16);
	cr_expect(has_input(&p, X) && has_input(&p, W) && !has_input(&p, Y));
	cr_assert_eq(p.n_rd, 2);
	cr_expect_eq(p.rd[0].numel, 64);
	cr_expect_eq(p.rd[1].dtype, NP_DT_BF16);
	/* no result pointer (the host pointer mode's, which the wrapper never
	 * plans) is nothing to check */
	c = np_gemm_dot(X, R32F, 1, W, R32F, 1, 64, 0, R32F);
	cr_expect_eq(np_gemm_plan(&c, &p), -1);
}

Test(gemm, a_triangular_solve_writes_b_in_place_and_offers_no_read_of_a)
{
	/* solve_triangular(L (16, 16), B (16, 8)): B column-major 16 x 8 */
	struct np_gemm_call c = np_gemm_trsm(0, 16, 8, W, 16, Y, 16, R32F);
	struct np_gemm_plan p;
	cr_assert_eq(np_gemm_plan(&c, &p), 0);
	cr_expect_eq(p.out.ptr, Y);
	cr_expect_eq(p.out.numel, 16 * 8);
	cr_expect(has_input(&p, Y), "B is read: a non-finite value already there propagates");
	cr_expect(has_input(&p, W));
	cr_expect_eq(p.n_rd, 0, "only a triangle of A is read: its other may hold anything");
	/* side right: A is n x n */
	c = np_gemm_trsm(1, 16, 8, W, 8, Y, 16, R64F);
	cr_assert_eq(np_gemm_plan(&c, &p), 0);
	cr_expect_eq(c.a.rows, 8);
	cr_expect_eq(p.out.dtype, NP_DT_F64);
	/* B a view with gaps */
	c = np_gemm_trsm(0, 16, 8, W, 16, Y, 32, R32F);
	cr_expect_eq(np_gemm_plan(&c, &p), -1);
}
