/* bench_launch.c - what the agent's CUPTI launch callback costs the thread
 * that launches, on the fake CUDA driver (tests/fakecuda/): the host work
 * per kernel launch, with and without the agent preloaded
 * (bench/bench_launch.sh runs both and prints the table).
 *
 * Launch patterns, each timed over `iters` iterations in the
 * launching thread's CPU time (the fake runs kernels, and the checks'
 * host emulation, on a worker thread per stream: the loop times the
 * launches, not the kernels, nor its waits for the worker's locks):
 *   decoded     y = a + b (torch's vectorized add, 256 floats): decoded,
 *               one check enqueued after it
 *   undecoded   a cuBLAS-like kernel (a C name, one 256-byte struct with
 *               three device pointers among ints): no decoder, its pointer
 *               words noted by the generic tier
 *   generic     the undecoded kernel writes p, then the add reads p: the
 *               generic tier checks p at the add (two checks)
 *   gemm        cublasSgemm_v2 (16 x 16 x 16, the fake cuBLAS) writes p,
 *               then the add reads p: the call's wrapper checks p after
 *               its kernel (cupti/blas.h), the add needs no generic check
 *   chain       y_i = a + b into 8 buffers in turn, as a chain of
 *               elementwise kernels writes a new output each: with
 *               NANPROF_GPU_DEFER=8 their checks share list launches
 *               (cupti/defer.h), while decoded's, which writes the same
 *               buffer each time, is launched before the next writes it
 *   layer       a Linear and what reads it, into new buffers each time
 *               (8 in turn, as a network's layers): cublasSgemm_v2
 *               writes one, an add reads it into the next; deferred,
 *               the call's kernel says what it writes (D and the
 *               workspace set on the handle, as torch sets it), so
 *               the checks of both share list launches
 *   conv        a convolution through cuDNN's backend API (the fake
 *               cuDNN; its plan built once, a variant pack built, set,
 *               executed and destroyed per call, as torch's Conv_v8.cpp
 *               does) writes p, then the add reads p: the descriptor
 *               wrappers and the execution's plan (cupti/dnn_graph.h)
 *   cnn         conv as layer is gemm: a convolution and what reads it,
 *               into new buffers each time, with a workspace (as torch
 *               gives one from its allocator); deferred, the execution's
 *               kernel says what it writes (its output, the workspace)
 * The fake's own launch path is not a real driver's: what differs between
 * the two runs is the agent's work, not what cuLaunchKernel costs on a
 * GPU (a few microseconds, which the check's own launch adds there too).
 *
 *   bench_launch ITERS     prints "pattern ns-per-iteration" lines, and
 *                          "launches-pattern N": its check launches
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "../tests/fakecuda/fake.h"
#include "../tests/fakecuda/fake_conv_graph.h"
#include "../tests/fakecuda/fake_cublas.h"
#include "../tests/fakecuda/fake_elementwise.h"

#define N 256

static const char add_f32[] = FAKE_ADD_F32;
static const char opaque_name[] = "nvjet_bench_opaque_128x64_1x1";

struct opaque_args {           /* 256 bytes, as a GEMM's argument struct */
	int32_t m, n, k, lda, ldb, ldc;
	float alpha, beta;
	float *a, *b, *c;
	int64_t strides[4];
	char rest[256 - 32 - 24 - 32];
};

static void k_nothing(const void *a, unsigned grid, unsigned block)
{
	(void)a, (void)grid, (void)block;
}

/* The launching thread's own CPU time: its work, not its waits on the
 * fake's worker thread (which runs the kernels and the checks' host
 * emulation, and on a GPU would not be the host's work at all). */
static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void must(CUresult r, const char *what)
{
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "bench_launch: %s failed (%d)\n", what, (int)r);
		exit(1);
	}
}

static float *dev_alloc(void)
{
	CUdeviceptr d = 0;
	must(cuMemAlloc_v2(&d, N * sizeof(float)), "cuMemAlloc");
	for (int i = 0; i < N; i++)
		((float *)d)[i] = 1.0f;       /* unified memory: a store */
	return (float *)d;
}

/* With the agent preloaded, its CUPTI subscription comes from its own
 * thread: wait for it, or the first launches go unseen. */
static void wait_for_agent(void)
{
	if (!getenv("LD_PRELOAD"))
		return;
	for (int i = 0; i < 2500 && !fake_cuda_subscribed(); i++)
		usleep(2000);
	if (!fake_cuda_subscribed()) {
		fprintf(stderr, "bench_launch: the agent never subscribed\n");
		exit(1);
	}
}

static CUfunction add, opaque;
static float *x, *y, *p, *q, *ws, *chain[8];

static void launch_add(float *out, float *a, float *b)
{
	int n = N;
	float one = 1.0f;
	char *d[3] = { (char *)out, (char *)a, (char *)b };
	void *params[] = { &n, &one, d };
	must(cuLaunchKernel(add, 1, 1, 1, 128, 1, 1, 0, NULL, params, NULL), "add");
}

static void launch_opaque(float *out)
{
	struct opaque_args o;
	memset(&o, 0, sizeof(o));
	o.m = 16, o.n = 16, o.k = 16, o.lda = o.ldb = o.ldc = 16;
	o.alpha = 1, o.beta = 0;
	o.a = x, o.b = y, o.c = out;
	void *params[] = { &o };
	must(cuLaunchKernel(opaque, 4, 1, 1, 128, 1, 1, 0, NULL, params, NULL), "opaque");
}

/* out = x y through cuBLAS, as the agent sees a matmul at its call; the
 * handle's workspace set first, as torch sets it each time it takes the
 * handle (cupti/blas_workspace.h) */
static void gemm(cublasHandle_t h, float *out)
{
	static float *ws;
	float one = 1.0f, zero = 0.0f;
	if (!ws)
		ws = dev_alloc();
	if (cublasSetWorkspace_v2(h, ws, N * sizeof(float)) != CUBLAS_STATUS_SUCCESS ||
	    cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16, &one, x, 16, y, 16, &zero, out,
			   16) != CUBLAS_STATUS_SUCCESS) {
		fprintf(stderr, "bench_launch: cublasSgemm_v2 failed\n");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 20000;
	CUdevice dev;
	CUcontext ctx;

	wait_for_agent();
	must(cuInit(0), "cuInit");
	must(cuDeviceGet(&dev, 0), "cuDeviceGet");
	must(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	must(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
	static const uint32_t off3[] = { 0, 4, 8 }, size3[] = { 4, 4, 24 };
	static const uint32_t off1[] = { 0 }, size1[] = { sizeof(struct opaque_args) };
	add = fake_cuda_register(add_f32, 3, off3, size3, k_nothing, NULL);
	opaque = fake_cuda_register(opaque_name, 1, off1, size1, k_nothing, NULL);
	x = dev_alloc(), y = dev_alloc(), p = dev_alloc(), q = dev_alloc(), ws = dev_alloc();
	for (int i = 0; i < 8; i++)
		chain[i] = dev_alloc();
	cublasHandle_t blas;
	if (cublasCreate_v2(&blas) != CUBLAS_STATUS_SUCCESS)
		return 1;
	static const int64_t dims[4] = { 1, 1, 16, 16 };   /* N elements, one channel */
	cudnnHandle_t dnn;
	cudnnBackendDescriptor_t plan;
	if (cudnnCreate(&dnn) || !(plan = fcg_conv_plan(dnn, dims)))
		return 1;

	for (int pattern = 0; pattern < 8; pattern++) {
		static const char *const names[] = { "decoded", "undecoded", "generic", "gemm",
						     "conv", "chain", "layer", "cnn" };
		/* a warm-up: first sights (names, layouts, the context's check
		 * kernels) are paid once, not per launch */
		for (int i = 0; i < 200; i++) {
			if (pattern == 0)
				launch_add(q, x, y);
			else if (pattern == 5)
				launch_add(chain[i % 8], x, y);
			else if (pattern == 3 || pattern == 6)
				gemm(blas, p);
			else if (pattern == 4 || pattern == 7)
				fcg_conv_run_ws(dnn, plan, x, p, y, pattern == 7 ? ws : NULL);
			else
				launch_opaque(p);
		}
		must(cuCtxSynchronize(), "cuCtxSynchronize");
		struct fake_cuda_stats before;
		fake_cuda_stats(&before);
		double t0 = cpu_now();
		for (long i = 0; i < iters; i++) {
			if (pattern == 0) {
				launch_add(q, x, y);
			} else if (pattern == 5) {
				launch_add(chain[i % 8], x, y);
			} else if (pattern == 6) {
				gemm(blas, chain[2 * i % 8]);
				launch_add(chain[(2 * i + 1) % 8], chain[2 * i % 8], y);
			} else if (pattern == 3) {
				gemm(blas, p);
				launch_add(q, p, y);
			} else if (pattern == 7) {
				if (fcg_conv_run_ws(dnn, plan, x, chain[2 * i % 8], y, ws))
					return 1;
				launch_add(chain[(2 * i + 1) % 8], chain[2 * i % 8], y);
			} else if (pattern == 4) {
				if (fcg_conv_run(dnn, plan, x, p, y))
					return 1;
				launch_add(q, p, y);
			} else {
				launch_opaque(p);
				if (pattern == 2)
					launch_add(q, p, y);
			}
		}
		double t1 = cpu_now();
		must(cuCtxSynchronize(), "cuCtxSynchronize");
		printf("%s %.0f\n", names[pattern], (t1 - t0) * 1e9 / (double)iters);
		struct fake_cuda_stats after;
		fake_cuda_stats(&after);
		printf("launches-%s %llu\n", names[pattern],
		       (unsigned long long)(after.check_launches - before.check_launches));
	}
	struct fake_cuda_stats st;
	fake_cuda_stats(&st);
	printf("checks %llu\n", (unsigned long long)st.check_launches);
	return 0;
}
