/* fake_cudnn.h - the part of cuDNN's API (cuDNN 9's cudnn_graph.h and
 * cudnn_ops.h: the same names, signatures and values) that the fake
 * cuDNN (fake_cudnn.c, built as libcudnn.so.9) implements for the fake
 * job (fake_ops.c): tensor descriptors and a batch normalisation's
 * forward training call, as torch's cudnn_batch_norm makes it.  Float
 * only.  Its kernel is opaque as cuDNN's are (a cuDNN-like name, one
 * struct): the agent can learn y only from the call (cupti/dnn.h).
 */
#ifndef NP_FAKE_CUDNN_H
#define NP_FAKE_CUDNN_H

#include <stddef.h>
#include <cuda.h>

typedef int cudnnStatus_t;
typedef struct fake_cudnn_handle *cudnnHandle_t;
typedef struct fake_cudnn_tensor *cudnnTensorDescriptor_t;
typedef void *cudnnActivationDescriptor_t;

enum { CUDNN_STATUS_SUCCESS = 0, CUDNN_STATUS_BAD_PARAM = 2000,
       CUDNN_STATUS_NOT_SUPPORTED = 3000 };
enum { CUDNN_DATA_FLOAT = 0 };
enum { CUDNN_BATCHNORM_SPATIAL = 1 };
enum { CUDNN_BATCHNORM_OPS_BN = 0 };

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

#endif
