/* fake_cudnn.c - a fake cuDNN on the fake driver (fake_cudnn.h), built as
 * libcudnn.so.9: tensor descriptors and a batch normalisation whose one
 * kernel takes an opaque struct, as cuDNN's do. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "fake.h"
#include "fake_cudnn.h"

#define MAX_DIMS 8

struct fake_cudnn_handle {
	CUstream stream;
};

struct fake_cudnn_tensor {
	int dtype, nb;
	int dims[MAX_DIMS], strides[MAX_DIMS];
};

FAKE_EXPORT cudnnStatus_t cudnnCreate(cudnnHandle_t *h)
{
	*h = calloc(1, sizeof(**h));
	return *h ? 0 : CUDNN_STATUS_BAD_PARAM;
}

FAKE_EXPORT cudnnStatus_t cudnnSetStream(cudnnHandle_t h, CUstream s)
{
	h->stream = s;
	return 0;
}

FAKE_EXPORT cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *d)
{
	*d = calloc(1, sizeof(**d));
	return *d ? 0 : CUDNN_STATUS_BAD_PARAM;
}

FAKE_EXPORT cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d)
{
	free(d);
	return 0;
}

FAKE_EXPORT cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t d, int dtype, int nb,
						     const int *dims, const int *strides)
{
	if (nb < 1 || nb > MAX_DIMS)
		return CUDNN_STATUS_BAD_PARAM;
	d->dtype = dtype;
	d->nb = nb;
	memcpy(d->dims, dims, (size_t)nb * sizeof(int));
	memcpy(d->strides, strides, (size_t)nb * sizeof(int));
	return 0;
}

FAKE_EXPORT cudnnStatus_t cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t d,
						     int nb_requested, int *dtype, int *nb,
						     int *dims, int *strides)
{
	*dtype = d->dtype;
	*nb = d->nb;
	int n = d->nb < nb_requested ? d->nb : nb_requested;
	memcpy(dims, d->dims, (size_t)n * sizeof(int));
	memcpy(strides, d->strides, (size_t)n * sizeof(int));
	return 0;
}

/* the kernel's one argument, by value */
struct bn_args {
	const float *x, *scale, *bias;
	float *y, *save_mean, *save_invvar;
	int n, c, inner;        /* NCHW as (n, c, inner) */
	float eps;
};

static CUfunction k_bn;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void run_bn(const void *args, unsigned grid, unsigned block)
{
	(void)grid, (void)block;
	struct bn_args a;
	memcpy(&a, args, sizeof(a));
	long count = (long)a.n * a.inner;
	for (int ch = 0; ch < a.c; ch++) {
		double sum = 0, sq = 0;
		for (int i = 0; i < a.n; i++)
			for (int j = 0; j < a.inner; j++) {
				double v = a.x[((long)i * a.c + ch) * a.inner + j];
				sum += v;
				sq += v * v;
			}
		double mean = sum / (double)count;
		float invstd = (float)(1.0 / sqrt(sq / (double)count - mean * mean + a.eps));
		a.save_mean[ch] = (float)mean;
		a.save_invvar[ch] = invstd;
		for (int i = 0; i < a.n; i++)
			for (int j = 0; j < a.inner; j++) {
				long at = ((long)i * a.c + ch) * a.inner + j;
				a.y[at] = a.scale[ch] * ((a.x[at] - (float)mean) * invstd) + a.bias[ch];
			}
	}
}

static void init(void)
{
	static const uint32_t off[] = { 0 }, size[] = { sizeof(struct bn_args) };
	/* a cuDNN kernel's name, as CUPTI gives it demangled */
	k_bn = fake_cuda_register("bn_fw_tr_1C11_kernel_NCHW_fake<float, float, 512, true, 1>", 1,
				  off, size, run_bn, NULL);
}

FAKE_EXPORT cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(
	cudnnHandle_t h, int mode, int ops, const void *alpha, const void *beta,
	const cudnnTensorDescriptor_t xd, const void *x, const cudnnTensorDescriptor_t zd,
	const void *z, const cudnnTensorDescriptor_t yd, void *y,
	const cudnnTensorDescriptor_t pd, const void *scale, const void *bias, double factor,
	void *run_mean, void *run_var, double eps, void *save_mean, void *save_invvar,
	cudnnActivationDescriptor_t act, void *ws, size_t ws_size, void *reserve,
	size_t reserve_size)
{
	(void)alpha, (void)beta, (void)zd, (void)pd, (void)factor, (void)run_mean, (void)run_var;
	(void)act, (void)ws, (void)ws_size, (void)reserve, (void)reserve_size;
	pthread_once(&once, init);
	/* NCHW, float, no added z: what the fake job asks */
	if (!k_bn || mode != CUDNN_BATCHNORM_SPATIAL || ops != CUDNN_BATCHNORM_OPS_BN || z ||
	    xd->dtype != CUDNN_DATA_FLOAT || yd->dtype != CUDNN_DATA_FLOAT || xd->nb < 3)
		return CUDNN_STATUS_NOT_SUPPORTED;
	int inner = 1;
	for (int i = 2; i < xd->nb; i++)
		inner *= xd->dims[i];
	struct bn_args a = { x, scale, bias, y, save_mean, save_invvar, xd->dims[0], xd->dims[1],
			     inner, (float)eps };
	void *p[] = { &a };
	return cuLaunchKernel(k_bn, (unsigned)a.c, 1, 1, 512, 1, 1, 0, h->stream, p, NULL) ==
			       CUDA_SUCCESS ? 0 : CUDNN_STATUS_BAD_PARAM;
}
