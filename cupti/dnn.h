/* dnn.h - what one cuDNN batch normalisation call writes and reads, from
 * the arguments of its call (cupti/dnn_calls.c intercepts the calls, as
 * blas.c does cuBLAS's).
 *
 * torch runs a CUDA BatchNorm through cuDNN by default (fp32, and fp16
 * with fp32 weights, in training and eval: _select_batch_norm_backend),
 * with cuDNN's legacy calls (cudnnBatchNormalizationForwardTrainingEx,
 * ...BackwardEx, ...ForwardInference).  Their kernels' parameters are
 * opaque, so a CNN's conv -> BN -> ReLU left both the convolution's and
 * the normalisation's outputs to the generic tier, which names the last
 * undecoded kernel handed an address: a convolution's overflow was
 * named at the batch norm that read it.  The call names everything: y
 * and x by their tensor descriptors (dims and strides), the per-channel
 * scale, bias and statistics.  y is checked after the call's last
 * kernel as a product's D (gemm.h's plan), x is a read of known extent.
 *
 * A tensor is taken only when its strides lay it out densely in some
 * order of its dimensions (NCHW, NHWC, ...), of a floating type.  Pure
 * logic: unit-tested (tests/unit/test_dnn.c).
 */
#ifndef NP_DNN_H
#define NP_DNN_H

#include <stdint.h>
#include "gemm.h"

#define NP_DNN_MAX_DIMS 8       /* CUDNN_DIM_MAX */

/* enum np_dtype of a cudnnDataType_t, or -1 (integers, the vectorised
 * int8 types, bool, fp8's compute placeholder). */
int np_dnn_dtype(int cudnn_dtype);

/* Elements of a tensor of n dims (dims[i] elements, strides[i] apart)
 * when they fill one dense range in some order of its dimensions, else 0
 * (a view with gaps, overlapping strides, n out of 1..NP_DNN_MAX_DIMS). */
uint64_t np_dnn_dense_numel(int n, const int *dims, const int *strides);
/* ... of the backend API's int64_t dims and strides (dnn_graph.h) */
uint64_t np_dnn_dense_numel64(int n, const int64_t *dims, const int64_t *strides);

/* A batch normalisation call: y from x (both described), per-channel
 * params (scale and bias; the statistics read: running or saved mean
 * and variance, 0 when not).  The plan: y checked whole, judged on x
 * and params, x a read; -1 when y or x is not one dense floating range. */
struct np_dnn_bn {
	uint64_t x, y;
	int nb;                         /* dims of x and y (the same shape) */
	int dims[NP_DNN_MAX_DIMS], x_strides[NP_DNN_MAX_DIMS], y_strides[NP_DNN_MAX_DIMS];
	int x_dtype, y_dtype;           /* cudnnDataType_t */
	uint64_t params[4];
};
int np_dnn_bn_plan(const struct np_dnn_bn *c, struct np_gemm_plan *p);

/* One operand of a legacy convolution call: a tensor (dims and strides
 * from its descriptor) or a filter (packed: its format, NCHW or NHWC,
 * lays it out densely; cudnnGetFilterNdDescriptor gives no strides). */
struct np_dnn_operand {
	uint64_t ptr;
	int nb;
	int dims[NP_DNN_MAX_DIMS], strides[NP_DNN_MAX_DIMS];
	int dtype;                      /* cudnnDataType_t */
	uint8_t packed;                 /* a filter */
};

/* Elements of an operand when it is one dense range, else 0. */
uint64_t np_dnn_operand_numel(const struct np_dnn_operand *o);

/* A convolution call of cuDNN's legacy API (torch's Conv_v7.cpp, the
 * default before torch 2.0 and with TORCH_CUDNN_V8_API_DISABLED=1):
 * out from in[0] and in[1] (y from x and w; dx from dy and w; dw from x
 * and dy); beta_set: beta other than 0 blends out's old values in;
 * extra: a fused call's added z and bias, inputs of the judgement.  The
 * plan: out checked whole, judged on the rest, the inputs reads; -1
 * when out is not one dense floating range. */
struct np_dnn_conv {
	struct np_dnn_operand out, in[2];
	int beta_set;
	uint64_t extra[2];
};
int np_dnn_conv_plan(const struct np_dnn_conv *c, struct np_gemm_plan *p);

#endif
