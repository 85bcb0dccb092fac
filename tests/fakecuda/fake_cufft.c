/* fake_cufft.c - a fake cuFFT on the fake driver (fake_cufft.h). */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include "fake.h"
#include "fake_cufft.h"

#define PLANS 64

static struct plan {
	int used, made;
	int type;               /* CUFFT_R2C, C2R, C2C */
	long long n, batch;
	CUstream stream;
	void *work;             /* cufftSetWorkArea's */
} plans[PLANS];                 /* handle h is plans[h - 1] */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* One transform's arguments, by value.  Its addresses are kept
 * complemented, so that no word of them looks like a device pointer: as
 * opaque as cuFFT's own parameters are to the agent's generic tier. */
struct kargs {
	uint64_t in_not, out_not, work_not;
	uint32_t type, n, batch;
};

static CUfunction k_c2r, k_r2c, k_c2c;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Not a Fourier transform: a map that carries each input value into
 * the output (a non-finite one stays non-finite). */
static void run(const void *args, unsigned grid, unsigned block)
{
	(void)grid, (void)block;
	struct kargs a;
	memcpy(&a, args, sizeof(a));
	const float *in = (const float *)(uintptr_t)~a.in_not;
	float *out = (float *)(uintptr_t)~a.out_not;
	float *work = a.work_not ? (float *)(uintptr_t)~a.work_not : NULL;
	uint32_t n = a.n, half = n / 2 + 1;
	for (int i = 0; work && i < FAKE_FFT_WORK_FLOATS; i++)
		work[i] = NAN;
	for (uint32_t b = 0; b < a.batch; b++)
		for (uint32_t j = 0; j < (a.type == CUFFT_R2C ? half : n); j++) {
			if (a.type == CUFFT_C2R) {           /* half complex in, n real out */
				const float *v = in + 2 * ((size_t)b * half + j % half);
				out[(size_t)b * n + j] = v[0] - 0.5f * v[1];
			} else if (a.type == CUFFT_R2C) {    /* n real in, half complex out */
				const float *v = in + (size_t)b * n;
				float *w = out + 2 * ((size_t)b * half + j);
				w[0] = v[j % n], w[1] = v[(n - 1 - j) % n];
			} else {                             /* n complex, parts swapped */
				const float *v = in + 2 * ((size_t)b * n + j);
				float *w = out + 2 * ((size_t)b * n + j);
				float re = v[0], im = v[1];
				w[0] = im, w[1] = re;
			}
		}
}

static void init(void)
{
	static const uint32_t off[] = { 0 }, size[] = { sizeof(struct kargs) };
	/* names as cuFFT's kernels, their one parameter opaque */
	k_c2r = fake_cuda_register("_Z14vector_fft_c2rPv", 1, off, size, run, NULL);
	k_r2c = fake_cuda_register("_Z14vector_fft_r2cPv", 1, off, size, run, NULL);
	k_c2c = fake_cuda_register("_Z11regular_fftPv", 1, off, size, run, NULL);
}

static struct plan *plan_of(cufftHandle h)
{
	return h >= 1 && h <= PLANS && plans[h - 1].used ? &plans[h - 1] : NULL;
}

FAKE_EXPORT cufftResult cufftCreate(cufftHandle *h)
{
	pthread_mutex_lock(&lock);
	*h = 0;
	for (int k = 0; k < PLANS && !*h; k++)
		if (!plans[k].used) {
			memset(&plans[k], 0, sizeof(plans[k]));
			plans[k].used = 1;
			*h = k + 1;
		}
	pthread_mutex_unlock(&lock);
	return *h ? CUFFT_SUCCESS : CUFFT_INVALID_VALUE;
}

FAKE_EXPORT cufftResult cufftDestroy(cufftHandle h)
{
	struct plan *p = plan_of(h);
	if (!p)
		return CUFFT_INVALID_PLAN;
	p->used = 0;
	return CUFFT_SUCCESS;
}

FAKE_EXPORT cufftResult cufftSetStream(cufftHandle h, CUstream s)
{
	struct plan *p = plan_of(h);
	if (!p)
		return CUFFT_INVALID_PLAN;
	p->stream = s;
	return CUFFT_SUCCESS;
}

static cufftResult make(struct plan *p, int type, long long n, long long batch)
{
	if (!p || n < 2 || batch < 1)
		return p ? CUFFT_INVALID_VALUE : CUFFT_INVALID_PLAN;
	p->type = type, p->n = n, p->batch = batch, p->made = 1;
	return CUFFT_SUCCESS;
}

FAKE_EXPORT cufftResult cufftPlan1d(cufftHandle *h, int nx, int type, int batch)
{
	cufftResult r = cufftCreate(h);
	return r ? r : make(plan_of(*h), type, nx, batch);
}

/* rank 1, the basic layout, float32 and complex64 only */
FAKE_EXPORT cufftResult cufftXtMakePlanMany(cufftHandle h, int rank, long long *n,
					    long long *inembed, long long istride,
					    long long idist, int itype, long long *onembed,
					    long long ostride, long long odist, int otype,
					    long long batch, size_t *ws, int etype)
{
	(void)istride, (void)idist, (void)ostride, (void)odist, (void)etype;
	if (rank != 1 || inembed || onembed)
		return CUFFT_NOT_SUPPORTED;
	int type = itype == FAKE_FFT_R_32F && otype == FAKE_FFT_C_32F ? CUFFT_R2C
		 : itype == FAKE_FFT_C_32F && otype == FAKE_FFT_R_32F ? CUFFT_C2R
		 : itype == FAKE_FFT_C_32F && otype == FAKE_FFT_C_32F ? CUFFT_C2C : 0;
	if (!type)
		return CUFFT_NOT_SUPPORTED;
	if (ws)
		*ws = FAKE_FFT_WORK_FLOATS * sizeof(float);
	return make(plan_of(h), type, n[0], batch);
}

/* rank 1, a legacy type; embeds only as the basic layout has them
 * (stride 1, dist the transform's size on each side) */
FAKE_EXPORT cufftResult cufftMakePlanMany64(cufftHandle h, int rank, long long *n,
					    long long *inembed, long long istride,
					    long long idist, long long *onembed, long long ostride,
					    long long odist, int type, long long batch, size_t *ws)
{
	if (rank != 1 || !n)
		return CUFFT_NOT_SUPPORTED;
	long long half = n[0] / 2 + 1;
	long long in_n = type == CUFFT_C2R ? half : n[0], out_n = type == CUFFT_R2C ? half : n[0];
	if ((inembed && (istride != 1 || (batch > 1 && idist != in_n))) ||
	    (onembed && (ostride != 1 || (batch > 1 && odist != out_n))))
		return CUFFT_NOT_SUPPORTED;
	if (ws)
		*ws = FAKE_FFT_WORK_FLOATS * sizeof(float);
	return make(plan_of(h), type, n[0], batch);
}

FAKE_EXPORT cufftResult cufftSetWorkArea(cufftHandle h, void *area)
{
	struct plan *p = plan_of(h);
	if (!p)
		return CUFFT_INVALID_PLAN;
	p->work = area;
	return CUFFT_SUCCESS;
}

static cufftResult exec(cufftHandle h, int type, void *in, void *out)
{
	pthread_once(&once, init);
	struct plan *p = plan_of(h);
	if (!p || !p->made)
		return CUFFT_INVALID_PLAN;
	if ((type && type != p->type) || !in || !out)
		return CUFFT_INVALID_VALUE;
	struct kargs a = { .in_not = ~(uint64_t)(uintptr_t)in, .out_not = ~(uint64_t)(uintptr_t)out,
			   .work_not = p->work ? ~(uint64_t)(uintptr_t)p->work : 0,
			   .type = (uint32_t)p->type, .n = (uint32_t)p->n,
			   .batch = (uint32_t)p->batch };
	CUfunction f = p->type == CUFFT_C2R ? k_c2r : p->type == CUFFT_R2C ? k_r2c : k_c2c;
	void *params[] = { &a };
	return cuLaunchKernel(f, (unsigned)p->batch, 1, 1, 64, 1, 1, 0, p->stream, params, NULL) ==
		       CUDA_SUCCESS ? CUFFT_SUCCESS : CUFFT_EXEC_FAILED;
}

FAKE_EXPORT cufftResult cufftXtExec(cufftHandle h, void *in, void *out, int direction)
{
	(void)direction;
	return exec(h, 0, in, out);
}

FAKE_EXPORT cufftResult cufftExecC2R(cufftHandle h, void *in, void *out)
{
	return exec(h, CUFFT_C2R, in, out);
}

FAKE_EXPORT cufftResult cufftExecR2C(cufftHandle h, void *in, void *out)
{
	return exec(h, CUFFT_R2C, in, out);
}

FAKE_EXPORT cufftResult cufftExecC2C(cufftHandle h, void *in, void *out, int direction)
{
	(void)direction;
	return exec(h, CUFFT_C2C, in, out);
}
