/* fake_cudnn.h - the part of cuDNN's API (cuDNN 9's cudnn_graph.h and
 * cudnn_ops.h: the same names, signatures and values) that the fake
 * cuDNN (fake_cudnn.c, built as libcudnn.so.9) implements for the fake
 * job (fake_ops.c): tensor descriptors and a batch normalisation's
 * forward training call, as torch's cudnn_batch_norm makes it; and the
 * backend API's descriptors and execution, as torch's Conv_v8.cpp uses
 * them through cudnn_frontend, for one graph: a forward 1x1 convolution
 * of one channel (y = w[0] x).  Float only.  The kernels are opaque as
 * cuDNN's are (a cuDNN-like name, one struct): the agent can learn y
 * only from the call (cupti/dnn.h, cupti/dnn_graph.h).
 */
#ifndef NP_FAKE_CUDNN_H
#define NP_FAKE_CUDNN_H

#include <stddef.h>
#include <stdint.h>
#include <cuda.h>

typedef int cudnnStatus_t;
typedef struct fake_cudnn_handle *cudnnHandle_t;
typedef struct fake_cudnn_tensor *cudnnTensorDescriptor_t;
typedef void *cudnnActivationDescriptor_t;
typedef struct fake_be_desc *cudnnBackendDescriptor_t;
typedef struct fake_cudnn_filter *cudnnFilterDescriptor_t;
typedef void *cudnnConvolutionDescriptor_t;

enum { CUDNN_STATUS_SUCCESS = 0, CUDNN_STATUS_BAD_PARAM = 2000,
       CUDNN_STATUS_NOT_SUPPORTED = 3000 };
enum { CUDNN_DATA_FLOAT = 0 };
enum { CUDNN_BATCHNORM_SPATIAL = 1 };
enum { CUDNN_BATCHNORM_OPS_BN = 0 };
enum { CUDNN_TENSOR_NCHW = 0 };

/* the backend API's values that the fake reads or the job sets */
enum {  /* cudnnBackendDescriptorType_t */
	CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR = 1, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR = 3,
	CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR = 4, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR = 5,
	CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR = 10,
	CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR = 15, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR = 16,
	CUDNN_BACKEND_TENSOR_DESCRIPTOR = 17, CUDNN_BACKEND_POINTWISE_DESCRIPTOR = 0,
	CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR = 13,
	CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR = 19,
	CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR = 41,
};
enum {  /* cudnnBackendAttributeName_t */
	CUDNN_ATTR_CONVOLUTION_COMP_TYPE = 100, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS = 106,
	CUDNN_ATTR_ENGINEHEUR_MODE = 200, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH = 201,
	CUDNN_ATTR_ENGINEHEUR_RESULTS = 202,
	CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG = 401,
	CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE = 402,
	CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA = 700,
	CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA = 701,
	CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC = 702,
	CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W = 703,
	CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X = 704,
	CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y = 705,
	CUDNN_ATTR_OPERATIONGRAPH_HANDLE = 800, CUDNN_ATTR_OPERATIONGRAPH_OPS = 801,
	CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT = 900, CUDNN_ATTR_TENSOR_DATA_TYPE = 901,
	CUDNN_ATTR_TENSOR_DIMENSIONS = 902, CUDNN_ATTR_TENSOR_STRIDES = 903,
	CUDNN_ATTR_TENSOR_UNIQUE_ID = 906,
	CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS = 1000, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS = 1001,
	CUDNN_ATTR_VARIANT_PACK_WORKSPACE = 1003,
	CUDNN_ATTR_OPERATION_POINTWISE_XDESC = 751, CUDNN_ATTR_OPERATION_POINTWISE_YDESC = 753,
	CUDNN_ATTR_TENSOR_IS_VIRTUAL = 907,
	CUDNN_ATTR_OPERATION_MATMUL_ADESC = 1520, CUDNN_ATTR_OPERATION_MATMUL_BDESC = 1521,
	CUDNN_ATTR_OPERATION_MATMUL_CDESC = 1522,
	CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC = 2800, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC = 2801,
	CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC = 2802, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC = 2803,
	CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC = 2804,
};
enum {  /* cudnnBackendAttributeType_t */
	CUDNN_TYPE_HANDLE = 0, CUDNN_TYPE_DATA_TYPE = 1, CUDNN_TYPE_BOOLEAN = 2,
	CUDNN_TYPE_INT64 = 3, CUDNN_TYPE_FLOAT = 4, CUDNN_TYPE_DOUBLE = 5, CUDNN_TYPE_VOID_PTR = 6,
	CUDNN_TYPE_HEUR_MODE = 8, CUDNN_TYPE_BACKEND_DESCRIPTOR = 15,
};
enum { CUDNN_HEUR_MODE_INSTANT = 0 };

cudnnStatus_t cudnnCreate(cudnnHandle_t *h);
cudnnStatus_t cudnnSetStream(cudnnHandle_t h, CUstream s);
cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *d);
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d);
cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t d, int dtype, int nb,
					 const int *dims, const int *strides);
cudnnStatus_t cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t d, int nb_requested,
					 int *dtype, int *nb, int *dims, int *strides);
/* y[n, c, ...] = scale[c] * (x - mean_c) / sqrt(var_c + eps) + bias[c],
 * mean and variance over each channel's elements; the saved mean and
 * inverse deviation written, the running statistics left alone */
cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(
	cudnnHandle_t h, int mode, int ops, const void *alpha, const void *beta,
	const cudnnTensorDescriptor_t xd, const void *x, const cudnnTensorDescriptor_t zd,
	const void *z, const cudnnTensorDescriptor_t yd, void *y,
	const cudnnTensorDescriptor_t pd, const void *scale, const void *bias, double factor,
	void *run_mean, void *run_var, double eps, void *save_mean, void *save_invvar,
	cudnnActivationDescriptor_t act, void *ws, size_t ws_size, void *reserve,
	size_t reserve_size);

/* the legacy convolution, one channel in: y = w[0] x (as the graph's) */
cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *d);
cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t d, int dtype, int format,
					 int nb, const int *dims);
cudnnStatus_t cudnnGetFilterNdDescriptor(const cudnnFilterDescriptor_t d, int nb_requested,
					 int *dtype, int *format, int *nb, int *dims);
cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *d);
cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void *alpha,
				      const cudnnTensorDescriptor_t xd, const void *x,
				      const cudnnFilterDescriptor_t wd, const void *w,
				      const cudnnConvolutionDescriptor_t conv, int algo, void *ws,
				      size_t ws_size, const void *beta,
				      const cudnnTensorDescriptor_t yd, void *y);
/* dx = w[0] dy */
cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t h, const void *alpha,
					   const cudnnFilterDescriptor_t wd, const void *w,
					   const cudnnTensorDescriptor_t dyd, const void *dy,
					   const cudnnConvolutionDescriptor_t conv, int algo,
					   void *ws, size_t ws_size, const void *beta,
					   const cudnnTensorDescriptor_t dxd, void *dx);
/* dw[0] = sum of x dy */
cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t h, const void *alpha,
					     const cudnnTensorDescriptor_t xd, const void *x,
					     const cudnnTensorDescriptor_t dyd, const void *dy,
					     const cudnnConvolutionDescriptor_t conv, int algo,
					     void *ws, size_t ws_size, const void *beta,
					     const cudnnFilterDescriptor_t dwd, void *dw);

cudnnStatus_t cudnnBackendCreateDescriptor(int type, cudnnBackendDescriptor_t *d);
cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t d);
cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t d);
cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t d, int name, int type,
				       int64_t n, const void *v);
#define FAKE_CUDNN_WS_FLOATS 96
/* only heuristics' results (one engine config) and a plan's workspace
 * size (a convolution's: FAKE_CUDNN_WS_FLOATS floats, which its kernel
 * writes when the variant pack gives a workspace; a pack without one is
 * accepted all the same) */
cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const d, int name, int type,
				       int64_t requested, int64_t *n, void *v);
cudnnStatus_t cudnnBackendExecute(cudnnHandle_t h, cudnnBackendDescriptor_t plan,
				  cudnnBackendDescriptor_t pack);

#endif
