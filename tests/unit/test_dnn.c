/* test_dnn.c - cupti/dnn.c: a cuDNN batch normalisation's output and
 * reads from its tensor descriptors, as torch describes them
 * (aten/src/ATen/cudnn/Descriptors.cpp: sizes and strides as the
 * tensor's, NCHW or channels-last). */
#include <criterion/criterion.h>
#include "../../cupti/dnn.h"
#include "plan_inputs.h"

#define X 0x7f0000100000ull
#define Y 0x7f0000200000ull
#define W 0x7f0000300000ull
#define B 0x7f0000400000ull

enum { FLOAT = 0, DOUBLE = 1, HALF = 2, INT8 = 3, INT32 = 4, BF16 = 9 };

/* (8, 16, 12, 12) NCHW, or channels-last (strides 2304, 1, 192, 16) */
static struct np_dnn_bn bn(int channels_last)
{
	struct np_dnn_bn c = { .x = X, .y = Y, .nb = 4, .dims = { 8, 16, 12, 12 },
			       .x_dtype = FLOAT, .y_dtype = FLOAT, .params = { W, B } };
	int nchw[] = { 2304, 144, 12, 1 }, nhwc[] = { 2304, 1, 192, 16 };
	memcpy(c.x_strides, channels_last ? nhwc : nchw, sizeof(nchw));
	memcpy(c.y_strides, channels_last ? nhwc : nchw, sizeof(nchw));
	return c;
}

Test(dnn, batch_norm_writes_y_whole_and_reads_x_and_its_parameters)
{
	for (int cl = 0; cl <= 1; cl++) {
		struct np_dnn_bn c = bn(cl);
		struct np_gemm_plan p;
		cr_assert_eq(np_dnn_bn_plan(&c, &p), 0, "layout %d", cl);
		cr_expect_eq(p.out.ptr, Y);
		cr_expect_eq(p.out.numel, 8 * 16 * 12 * 12);
		cr_expect_eq(p.out.dtype, NP_DT_F32);
		cr_expect(has_input(&p, X) && has_input(&p, W) && has_input(&p, B));
		cr_expect(!has_input(&p, Y), "a new tensor: its old contents are nobody's input");
		cr_expect_eq(p.out.n_in, 3);
		cr_assert_eq(p.n_rd, 1);
		cr_expect_eq(p.rd[0].ptr, X);
		cr_expect_eq(p.rd[0].numel, 8 * 16 * 12 * 12);
	}
}

Test(dnn, half_data_with_float_parameters)
{
	struct np_dnn_bn c = bn(0);
	c.x_dtype = c.y_dtype = HALF;
	struct np_gemm_plan p;
	cr_assert_eq(np_dnn_bn_plan(&c, &p), 0);
	cr_expect_eq(p.out.dtype, NP_DT_F16);
	cr_expect_eq(p.rd[0].dtype, NP_DT_F16);
	c.y_dtype = INT8;
	cr_expect_eq(np_dnn_bn_plan(&c, &p), -1, "no check reads an int8 output");
}

Test(dnn, in_place_reads_its_own_old_values)
{
	struct np_dnn_bn c = bn(0);
	c.y = X;
	struct np_gemm_plan p;
	cr_assert_eq(np_dnn_bn_plan(&c, &p), 0);
	cr_expect(has_input(&p, X), "a non-finite value already there is propagation");
}

Test(dnn, dense_layouts_in_any_order_of_dimensions)
{
	int dims[] = { 8, 16, 12, 12 };
	int nchw[] = { 2304, 144, 12, 1 }, nhwc[] = { 2304, 1, 192, 16 };
	cr_expect_eq(np_dnn_dense_numel(4, dims, nchw), 18432);
	cr_expect_eq(np_dnn_dense_numel(4, dims, nhwc), 18432);
	/* a slice of a wider tensor: gaps */
	int wide[] = { 4608, 144, 12, 1 };
	cr_expect_eq(np_dnn_dense_numel(4, dims, wide), 0);
	/* a broadcast (stride 0) or overlapping dimension */
	int bcast[] = { 0, 144, 12, 1 }, overlap[] = { 2304, 144, 1, 1 };
	cr_expect_eq(np_dnn_dense_numel(4, dims, bcast), 0);
	cr_expect_eq(np_dnn_dense_numel(4, dims, overlap), 0);
	/* a dimension of one element may have any stride (torch's own are
	 * often the next one's) */
	int d1[] = { 1, 16, 1, 1 }, s1[] = { 16, 1, 999, 7 };
	cr_expect_eq(np_dnn_dense_numel(4, d1, s1), 16);
	/* out of range */
	cr_expect_eq(np_dnn_dense_numel(0, dims, nchw), 0);
	cr_expect_eq(np_dnn_dense_numel(NP_DNN_MAX_DIMS + 1, dims, nchw), 0);
	int neg[] = { 2304, 144, 12, -1 };
	cr_expect_eq(np_dnn_dense_numel(4, dims, neg), 0);
}

Test(dnn, a_strided_x_is_an_input_but_no_read)
{
	struct np_dnn_bn c = bn(0);
	int wide[] = { 4608, 144, 12, 1 };
	memcpy(c.x_strides, wide, sizeof(wide));
	struct np_gemm_plan p;
	cr_assert_eq(np_dnn_bn_plan(&c, &p), 0);
	cr_expect(has_input(&p, X));
	cr_expect_eq(p.n_rd, 0);
	memcpy(c.y_strides, wide, sizeof(wide));
	cr_expect_eq(np_dnn_bn_plan(&c, &p), -1, "y with gaps is not checked");
	cr_expect_eq(np_dnn_dtype(BF16), NP_DT_BF16);
	cr_expect_eq(np_dnn_dtype(DOUBLE), NP_DT_F64);
	cr_expect_eq(np_dnn_dtype(INT32), -1);
}

/* ---- legacy convolutions (torch's Conv_v7.cpp) ---- */

static struct np_dnn_operand tensor_op(uint64_t ptr, int n, int c, int hw)
{
	struct np_dnn_operand o = { .ptr = ptr, .nb = 4, .dims = { n, c, hw, hw },
				    .strides = { c * hw * hw, hw * hw, hw, 1 }, .dtype = FLOAT };
	return o;
}

/* a filter: dims only, packed by its format */
static struct np_dnn_operand filter_op(uint64_t ptr, int k, int c, int rs)
{
	struct np_dnn_operand o = { .ptr = ptr, .nb = 4, .dims = { k, c, rs, rs },
				    .dtype = FLOAT, .packed = 1 };
	return o;
}

Test(dnn, a_forward_convolution_writes_y_and_reads_x_and_the_filter)
{
	struct np_dnn_conv c = { .out = tensor_op(Y, 8, 32, 12),
				 .in = { tensor_op(X, 8, 16, 12), filter_op(W, 32, 16, 3) } };
	struct np_gemm_plan p;
	cr_assert_eq(np_dnn_conv_plan(&c, &p), 0);
	cr_expect_eq(p.out.ptr, Y);
	cr_expect_eq(p.out.numel, 8 * 32 * 12 * 12);
	cr_expect_eq(p.out.dtype, NP_DT_F32);
	cr_expect(has_input(&p, X) && has_input(&p, W) && !has_input(&p, Y));
	cr_assert_eq(p.n_rd, 2);
	cr_expect_eq(p.rd[0].ptr, X);
	cr_expect_eq(p.rd[0].numel, 8 * 16 * 12 * 12);
	cr_expect_eq(p.rd[1].ptr, W);
	cr_expect_eq(p.rd[1].numel, 32 * 16 * 3 * 3, "a filter's elements from its dims alone");
	c.beta_set = 1;
	cr_assert_eq(np_dnn_conv_plan(&c, &p), 0);
	cr_expect(has_input(&p, Y), "beta set: y's old values are read");
}

Test(dnn, a_filter_gradient_is_the_packed_output)
{
	struct np_dnn_conv c = { .out = filter_op(W, 32, 16, 3),
				 .in = { tensor_op(X, 8, 16, 12), tensor_op(Y, 8, 32, 12) } };
	struct np_gemm_plan p;
	cr_assert_eq(np_dnn_conv_plan(&c, &p), 0);
	cr_expect_eq(p.out.ptr, W);
	cr_expect_eq(p.out.numel, 32 * 16 * 3 * 3);
	cr_expect(has_input(&p, X) && has_input(&p, Y) && !has_input(&p, W));
}

Test(dnn, a_fused_convolution_judges_on_z_and_the_bias_too)
{
	struct np_dnn_conv c = { .out = tensor_op(Y, 8, 32, 12),
				 .in = { tensor_op(X, 8, 16, 12), filter_op(W, 32, 16, 3) },
				 .extra = { B, 0x7f0000500000ull } };
	struct np_gemm_plan p;
	cr_assert_eq(np_dnn_conv_plan(&c, &p), 0);
	cr_expect_eq(p.out.n_in, 4);
	cr_expect(has_input(&p, B) && has_input(&p, 0x7f0000500000ull));
	cr_expect_eq(p.n_rd, 2, "z and the bias are judged on, not offered as reads");
}

Test(dnn, a_convolution_output_that_cannot_be_checked_whole_is_not_planned)
{
	struct np_dnn_conv c = { .out = tensor_op(Y, 8, 32, 12),
				 .in = { tensor_op(X, 8, 16, 12), filter_op(W, 32, 16, 3) } };
	struct np_gemm_plan p;
	c.out.strides[0] = 32 * 12 * 12 * 2;   /* every other sample: a view with gaps */
	cr_expect_eq(np_dnn_conv_plan(&c, &p), -1);
	c = (struct np_dnn_conv){ .out = tensor_op(Y, 8, 32, 12),
				  .in = { tensor_op(X, 8, 16, 12), filter_op(W, 32, 16, 3) } };
	c.out.dtype = INT32;
	cr_expect_eq(np_dnn_conv_plan(&c, &p), -1);
	c.out.dtype = FLOAT;
	c.in[1].dtype = INT8;   /* an int8 filter: no read of it */
	cr_assert_eq(np_dnn_conv_plan(&c, &p), 0);
	cr_expect_eq(p.n_rd, 1);
	cr_expect(has_input(&p, W), "still an input of the judgement");
	c.in[1].dims[0] = 0;
	cr_expect_eq(np_dnn_operand_numel(&c.in[1]), 0, "an empty filter");
}
