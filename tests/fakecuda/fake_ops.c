/* fake_ops.c - CUDA "ops" on the fake driver, for a Python training job
 * (tests/integration/fake_gpu_job.py) that calls them from inside its
 * nn.Modules through ctypes.  With nanprof tracing the job, this is the
 * whole GPU pipeline without a GPU: module calls seen by BPF, the agent's
 * CUPTI callbacks and check kernels, its records through the BPF probe,
 * and nanprof placing each kernel in the module that launched it.
 *
 * Each op launches real torch kernels (names and layouts from
 * tests/unit/fixtures/torch_kernels.tsv) on the legacy stream:
 *   fo_attn()        mask = -inf (fill), sc = x + mask (add), sc = 0.5
 *                    (fill): a -inf mask that spreads inside the module
 *                    and is overwritten there, never seen outside it
 *   fo_gate(v)       y = v (fill), e = exp(y) (exp): +inf when v = 100
 *   fo_gate_opaque(v) the same, the exp in a kernel no decoder reads
 *   fo_head()        s = e + x (add): reads the gate's output
 * Returns 0, or -1 when the driver refused a call.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "fake.h"

#define N 4096

static const char add_f32[] =
	"_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EELb1EEEviT0_T1_";
static const char fill_f32[] =
	"_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_11FillFunctorIfEESt5arrayIPcLm1EELb1EEEviT0_T1_";
/* the fixture's log_kernel_cuda row with the name changed (as fake_job.c) */
static const char exp_f32[] =
	"_ZN2at6native29vectorized_elementwise_kernelILi8EZZZNS0_15exp_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE0_clEvENKUlvE0_clEvEUlfE_St5arrayIPcLm2EELb1EEEviT0_T1_";

/* a cuBLAS-like kernel: a C name and one opaque parameter struct, whose
 * output no decoder can find (counted as undecoded) */
static const char opaque_exp[] = "nvjet_fake_exp_64x64_1x1_opaque";

static CUfunction add, fill, exp_, opaque;
static float *x, *mask, *sc, *y, *e, *s;
static int failed;

static void check(CUresult r, const char *what)
{
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "fake_ops: %s failed (%d)\n", what, (int)r);
		failed = 1;
	}
}

static char **data(const void *a, uint32_t off)
{
	return (char **)((const char *)a + off);
}

static int numel(const void *a)
{
	int n;
	memcpy(&n, a, 4);
	return n;
}

static void k_add(const void *a, unsigned grid, unsigned block)
{
	float alpha;
	memcpy(&alpha, (const char *)a + 4, 4);
	char **d = data(a, 8);
	for (int i = 0; i < numel(a); i++)
		((float *)d[0])[i] = ((float *)d[1])[i] + alpha * ((float *)d[2])[i];
}

static void k_fill(const void *a, unsigned grid, unsigned block)
{
	float v;
	memcpy(&v, (const char *)a + 4, 4);
	char **d = data(a, 8);
	for (int i = 0; i < numel(a); i++)
		((float *)d[0])[i] = v;
}

static void k_exp(const void *a, unsigned grid, unsigned block)
{
	char **d = data(a, 8);
	for (int i = 0; i < numel(a); i++)
		((float *)d[0])[i] = expf(((float *)d[1])[i]);
}

struct opaque_args {
	float *out, *in;
	int n;
};

static void k_opaque(const void *a, unsigned grid, unsigned block)
{
	struct opaque_args o;
	memcpy(&o, a, sizeof(o));
	for (int i = 0; i < o.n; i++)
		o.out[i] = expf(o.in[i]);
}

static CUfunction reg(const char *name, int n, const uint32_t *off, const uint32_t *size,
		      fake_kernel_fn fn)
{
	return fake_cuda_register(name, n, off, size, fn, NULL);
}

static float *alloc(void)
{
	CUdeviceptr d = 0;
	check(cuMemAlloc_v2(&d, N * sizeof(float)), "cuMemAlloc");
	return (float *)d;
}

int fo_init(void)
{
	CUdevice dev;
	CUcontext ctx;
	check(cuInit(0), "cuInit");
	check(cuDeviceGet(&dev, 0), "cuDeviceGet");
	check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
	static const uint32_t off3[] = { 0, 4, 8 }, size_add[] = { 4, 4, 24 },
			      size_fill[] = { 4, 4, 8 }, size_exp[] = { 4, 1, 16 };
	add = reg(add_f32, 3, off3, size_add, k_add);
	fill = reg(fill_f32, 3, off3, size_fill, k_fill);
	exp_ = reg(exp_f32, 3, off3, size_exp, k_exp);
	static const uint32_t off1[] = { 0 }, size_opaque[] = { sizeof(struct opaque_args) };
	opaque = reg(opaque_exp, 1, off1, size_opaque, k_opaque);
	x = alloc(), mask = alloc(), sc = alloc(), y = alloc(), e = alloc(), s = alloc();
	if (!failed)
		for (int i = 0; i < N; i++)
			x[i] = (float)(i % 10) / 10.0f;   /* unified memory: a store */
	return failed ? -1 : 0;
}

/* Whether the agent has subscribed (the job waits for it), or, with
 * FAKE_CUPTI_TAKEN=1, been refused (it then checks at module level). */
int fo_subscribed(void)
{
	return fake_cuda_subscribed();
}

int fo_refused(void)
{
	return fake_cuda_refused();
}

/* The device address of buffer i (0 x, 1 sc, 2 e, 3 s: see above) and
 * their length, for a job that hands them to nanprof's hooks as CUDA
 * tensors (module-level checks). */
unsigned long long fo_buf(int i)
{
	float *b[] = { x, sc, e, s };
	return i >= 0 && i < 4 ? (unsigned long long)(uintptr_t)b[i] : 0;
}

int fo_numel(void)
{
	return N;
}

static void launch1(CUfunction f, float v, float *out)
{
	int n = N;
	char *d[1] = { (char *)out };
	void *p[] = { &n, &v, d };
	check(cuLaunchKernel(f, 8, 1, 1, 128, 1, 1, 0, NULL, p, NULL), "cuLaunchKernel");
}

static void launch_add(float *out, float *a, float *b)
{
	int n = N;
	float one = 1.0f;
	char *d[3] = { (char *)out, (char *)a, (char *)b };
	void *p[] = { &n, &one, d };
	check(cuLaunchKernel(add, 8, 1, 1, 128, 1, 1, 0, NULL, p, NULL), "cuLaunchKernel");
}

/* Buffer i (as fo_buf) = v, by the fill kernel: an optimizer's update. */
int fo_set(int i, float v)
{
	float *b[] = { x, sc, e, s };
	if (i < 0 || i >= 4)
		return -1;
	launch1(fill, v, b[i]);
	return failed ? -1 : 0;
}

int fo_attn(void)
{
	launch1(fill, -INFINITY, mask);
	launch_add(sc, x, mask);
	launch1(fill, 0.5f, sc);
	return failed ? -1 : 0;
}

int fo_gate(float v)
{
	launch1(fill, v, y);
	int n = N;
	char lambda = 0;
	char *d[2] = { (char *)e, (char *)y };
	void *p[] = { &n, &lambda, d };
	check(cuLaunchKernel(exp_, 8, 1, 1, 128, 1, 1, 0, NULL, p, NULL), "cuLaunchKernel");
	return failed ? -1 : 0;
}

/* fo_gate with the exp in an undecodable kernel (as a cuBLAS epilogue
 * would compute it): its output is never checked at launch. */
int fo_gate_opaque(float v)
{
	launch1(fill, v, y);
	struct opaque_args o = { e, y, N };
	void *p[] = { &o };
	check(cuLaunchKernel(opaque, 8, 1, 1, 128, 1, 1, 0, NULL, p, NULL), "cuLaunchKernel");
	return failed ? -1 : 0;
}

int fo_head(void)
{
	launch_add(s, e, x);
	check(cuCtxSynchronize(), "cuCtxSynchronize");
	return failed ? -1 : 0;
}
