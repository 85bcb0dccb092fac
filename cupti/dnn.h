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

#endif
