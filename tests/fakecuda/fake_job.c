/* fake_job.c - a "PyTorch job" on the fake CUDA driver (fake.h), for
 * tests/integration/test_gpu_fake.sh: real torch kernel names and
 * parameter layouts (tests/unit/fixtures/torch_kernels.tsv), arguments
 * passed as torch passes them (int numel, the functor by value,
 * std::array<char*, N> with data[0] the output), kernels run on the host.
 *
 * Launch order (the test checks the agent's verdicts on each):
 *   (a) add      float  y = x + w                 finite
 *   (d) fill     float  mask = -inf               a birth nobody reads
 *   (g) masked_fill lambda, float                 undecodable: skipped
 *   (h) masked softmax_warp_forward, float,       NaN in the row of 100 it
 *                       the attention-mask kind:  masks whole (sum 0: the
 *                       sized from batch_size x   kernel's NaN): a birth
 *                       element_count and the     nobody reads, all 10000
 *                       grid, launched as torch   elements checked
 *                       does (32 x 4 threads,
 *                       8 rows a block)
 *   (b) exp      float  e = exp(y)                +inf at 3 indices: a birth
 *   (c) add      float  s = e + y                 reads (b): propagation
 *   (e) add      half   h = hx + hy, stream 2     +inf at 2 indices, output
 *                       not 16-byte aligned, launched through a CUkernel
 *   (f) div      float  q = p / r, stream 2       a NaN at 1 index, arguments
 *                       packed in `extra`
 *   (i) div      float  gq = gp / gr, stream 2,   a NaN at index 5, in a CUDA
 *                       captured, replayed twice  graph: born in each replay
 *   (j) add      float  gt = gq + gp, stream 2    after the replays: propagation
 *                                                 from the graph's birth
 *   (k) fill     float  a 64-float buffer, but    a decoding mistake played:
 *                       its numel says 100000     the check would read past
 *                       (the kernel does nothing) the allocation, so it must
 *                                                 not be launched
 *  ((w) fill     float  the 21st param's first 64  finite, with FAKE_JOB_
 *                       floats = 1                IN_PLACE=1 only)
 *   (l) fused AdamW, lr = inf, 21 params          every param -inf: 21 births,
 *                       (one of 2 chunks):        exp_avg, exp_avg_sq clean;
 *                       multi_tensor_apply,       63 outputs, more than one
 *                       the metadata's unused     turn of the decoder; the
 *                       slots pointing at (b)'s   stale slots must not make
 *                       dirty output              the births propagations
 *   (m) div      float  v = v / v, in place, over  0/0 at index 700: a birth
 *                       1024 floats across two    nobody reads; checked
 *                       chunks mapped into one    whole (the chunks are one
 *                       reserved range (as        segment to the agent)
 *                       expandable segments)
 *   (n) fill     float  the second chunk          a decoding mistake played
 *                       unmapped, v's numel       again: the segment must
 *                       still says 1024 (the      have gone with the unmap,
 *                       kernel does nothing)      no check launched
 *   (o) add      float  o = gp + gp               finite        (these
 *   (p) div      float  o = o / o2, in place      +inf at 9: a  only with
 *                                                 birth, the    FAKE_JOB_
 *                                                 add clean     IN_PLACE=1)
 *   (q) cublasSgemm_v2, split-K, cuBLAS's own     finite (cuBLAS's first
 *                       workspace                 call: it sets up)
 *       fill     float  wk = 1, 2048 floats       finite: its check waits
 *   (r) cublasSgemm_v2, split-K, workspace wk     +inf in D's row 0 (A's
 *                       (as torch's, from its     +inf): a birth; its
 *                       allocator: (q)'s memory)  partial sums +inf in wk
 *   (s) add      float  t = gp + gp               finite
 *   (t) cublasSgemm_v2, split-K, workspace wk     finite: what waits need
 *                                                 not go before its kernels
 *   (u) add      float  am = gp + gp              finite: its check waits
 *   (v) cublasLtMatmul, its max |D| into am[0]    +inf in D's row 0: a
 *                       (an fp8 GEMM's amax)      birth; am[0] = +inf
 *   (x) add      float  xa = gp + gp, then a      finite: the copy writes
 *                       device copy gp -> xb      nothing that waits
 *   (y) add      float  yb = gp + gp (32), then   the copy's +inf at 9: the
 *                       a device copy o -> yb     add's check goes first
 *   (z) fill     float  wz = 1, 96 floats, then   finite: the fill's check
 *                       a cuDNN convolution (its  goes before the kernel
 *                       backend API) cz = 2 gp,   leaves NaN in wz
 *                       its workspace wz
 *  (z2) div      float  bq = gp / br, 8 floats    +inf at 0: a birth
 *       cuDNN batch norm of gp (2 channels),      finite; it writes its
 *                       its saved statistics      saved mean and inverse
 *                       into bq (as the caching   deviation over bq: the
 *                       allocator may hand out    div's check must go
 *                       a block whose check       first, or the birth is
 *                       waits)                    lost
 *  (z3) fill     float  wf = 1, 80 floats, then   finite: the fill's check
 *                       a cuFFT transform (c2c,   goes before the kernel
 *                       8 values of gp) into fo,  leaves NaN in wf
 *                       its work area wf (as
 *                       torch sets one)
 * (d) is launched before (b): the origin must be the birth that
 * propagated, not the first one.  It links libstdc++ as torch does: the
 * agent demangles kernel names with the process's __cxa_demangle.
 *
 * Then it forks a child that ends with exit(), as a worker process may.
 * Prints one line of the fake driver's statistics and exits 0, or 1 if
 * the driver refused anything, a kernel computed the wrong thing or the
 * child did not exit cleanly.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "fake.h"
#include "fake_conv_graph.h"
#include "fake_cublas.h"
#include "fake_cufft.h"
#include "fake_elementwise.h"
#include "../../agent/agent_report.h"

#define N 10000          /* float buffers: three check blocks */
#define NH 1000          /* the half buffer */

static const char add_f32[] = FAKE_ADD_F32;
static const char add_f16[] =
	"_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_15CUDAFunctor_addIN3c104HalfEEESt5arrayIPcLm3EELb1EEEviT0_T1_";
static const char fill_f32[] = FAKE_FILL_F32;
static const char div_f32[] =
	"_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_13BinaryFunctorIfffNS0_15binary_internal10DivFunctorIfEEEESt5arrayIPcLm3EELb1EEEviT0_T1_";
static const char masked_fill_f32[] =
	"_ZN2at6native29vectorized_elementwise_kernelILi8EZZZNS0_44_GLOBAL__N__b23ef953_11_Indexing_cu_89862edb18masked_fill_kernelERNS_14TensorIteratorERKN3c106ScalarEENKUlvE_clEvENKUlvE5_clEvEUlfbE_St5arrayIPcLm3EELb1EEEviT0_T1_";
static const char softmax_f32[] =
	"_ZN43_GLOBAL__N__f71e7945_10_SoftMax_cu_9f978f6320softmax_warp_forwardIfffLi7ELb0ELb1ELi32EEEvPT0_PKT_iiiPKbib";
/* The fixture has no exp kernel: this is its log_kernel_cuda row
 * (same lambda nesting, same layout) with the name changed, which is
 * what torch's exp_kernel_cuda instantiates the same way. */
static const char exp_f32[] =
	"_ZN2at6native29vectorized_elementwise_kernelILi8EZZZNS0_15exp_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE0_clEvENKUlvE0_clEvEUlfE_St5arrayIPcLm2EELb1EEEviT0_T1_";

static const char adamw_f32[] =
	"_ZN2at6native52_GLOBAL__N__1f580294_19_fused_adamw_impl_cu_8b44fa2325multi_tensor_apply_kernelINS1_32FusedOptimizerTensorListMetadataILi4EEENS1_20FusedAdamMathFunctorIfLi4ELNS0_9ADAM_MODEE1ELb0EEEJPKfdddddbS9_S9_EEEvT_T0_DpT1_";

/* FusedOptimizerTensorListMetadata<4> as torch 2.14 built with CUDA 13
 * lays it out (ATen/native/cuda/MultiTensorApply.cuh): 25,544 bytes */
#define MTA_TENSORS 252
#define MTA_BLOCKS 2240
#define MTA_CHUNK 65536
struct fused_meta4 {
	const void *addresses[4][MTA_TENSORS];
	int64_t numel_for_tensor[MTA_TENSORS];
	const void *state_steps_addresses[MTA_TENSORS];
	uint16_t block_to_tensor[MTA_BLOCKS];
	int32_t block_to_chunk[MTA_BLOCKS];
	int32_t start_tensor_this_launch;
};
_Static_assert(sizeof(struct fused_meta4) == 25544, "the cubin's parameter size");

static int failed;

#define CHECK(call)                                                                   \
	do {                                                                          \
		CUresult r_ = (call);                                                 \
		if (r_ != CUDA_SUCCESS) {                                             \
			const char *s_ = NULL;                                        \
			cuGetErrorName(r_, &s_);                                      \
			fprintf(stderr, "fake_job: %s: %s\n", #call, s_ ? s_ : "?"); \
			failed = 1;                                                   \
		}                                                                     \
	} while (0)

/* ---- the kernels, run by the fake driver on a stream's thread ---- */

static int numel_of(const void *a)
{
	int n;
	memcpy(&n, a, 4);
	return n;
}

static void data_of(const void *a, uint32_t off, char **data, int n)
{
	memcpy(data, (const char *)a + off, sizeof(char *) * (size_t)n);
}

static void k_add_f32(const void *a, unsigned grid, unsigned block)
{
	char *d[3];
	float alpha;
	memcpy(&alpha, (const char *)a + 4, 4);
	data_of(a, 8, d, 3);
	for (int i = 0; i < numel_of(a); i++)
		((float *)d[0])[i] = ((float *)d[1])[i] + alpha * ((float *)d[2])[i];
}

static void k_add_f16(const void *a, unsigned grid, unsigned block)
{
	char *d[3];
	float alpha;
	memcpy(&alpha, (const char *)a + 4, 4);
	data_of(a, 8, d, 3);
	for (int i = 0; i < numel_of(a); i++)
		((_Float16 *)d[0])[i] = (_Float16)((float)((_Float16 *)d[1])[i] +
						   alpha * (float)((_Float16 *)d[2])[i]);
}

static void k_fill_f32(const void *a, unsigned grid, unsigned block)
{
	char *d[1];
	float v;
	memcpy(&v, (const char *)a + 4, 4);
	data_of(a, 8, d, 1);
	for (int i = 0; i < numel_of(a); i++)
		((float *)d[0])[i] = v;
}

/* (k): a kernel whose numel lies; it writes nothing */
static void k_nothing(const void *a, unsigned grid, unsigned block)
{
	(void)a, (void)grid, (void)block;
}

static void k_exp_f32(const void *a, unsigned grid, unsigned block)
{
	char *d[2];
	data_of(a, 8, d, 2);
	for (int i = 0; i < numel_of(a); i++)
		((float *)d[0])[i] = expf(((float *)d[1])[i]);
}

static void k_div_f32(const void *a, unsigned grid, unsigned block)
{
	char *d[3];
	data_of(a, 8, d, 3);
	for (int i = 0; i < numel_of(a); i++)
		((float *)d[0])[i] = ((float *)d[1])[i] / ((float *)d[2])[i];
}

/* the lambda captures the fill value (first 4 of its 16 bytes) */
static void k_masked_fill_f32(const void *a, unsigned grid, unsigned block)
{
	char *d[3];
	float v;
	memcpy(&v, (const char *)a + 8, 4);
	data_of(a, 24, d, 3);
	for (int i = 0; i < numel_of(a); i++)
		((float *)d[0])[i] = ((_Bool *)d[2])[i] ? v : ((float *)d[1])[i];
}

/* FusedAdamMathFunctor<float, 4, ADAMW, false>: block b updates chunk
 * block_to_chunk[b] of slot block_to_tensor[b] (fused_adam_utils.cuh,
 * without the grad scaler and bias correction) */
static void k_adamw_f32(const void *a, unsigned grid, unsigned block)
{
	const struct fused_meta4 *m = a;
	double lr, beta1, beta2, wd, eps;
	memcpy(&lr, (const char *)a + 25560, 8);
	memcpy(&beta1, (const char *)a + 25568, 8);
	memcpy(&beta2, (const char *)a + 25576, 8);
	memcpy(&wd, (const char *)a + 25584, 8);
	memcpy(&eps, (const char *)a + 25592, 8);
	for (unsigned b = 0; b < grid; b++) {
		int t = m->block_to_tensor[b];
		int64_t from = (int64_t)m->block_to_chunk[b] * MTA_CHUNK, n = m->numel_for_tensor[t];
		float *p = (float *)m->addresses[0][t], *g = (float *)m->addresses[1][t];
		float *ea = (float *)m->addresses[2][t], *eas = (float *)m->addresses[3][t];
		for (int64_t i = from; i < n && i < from + MTA_CHUNK; i++) {
			float param = wd != 0 ? p[i] * (float)(1 - lr * wd) : p[i];
			ea[i] = (float)(beta1 * ea[i] + (1 - beta1) * g[i]);
			eas[i] = (float)(beta2 * eas[i] + (1 - beta2) * g[i] * g[i]);
			p[i] = param - (float)lr * ea[i] / (sqrtf(eas[i]) + (float)eps);
		}
	}
}

/* (float* dst, const float* src, int batch, int stride, int elements,
 *  const bool* mask, int head_chunk, bool is_transformer_mask): the
 *  masked instance, not a transformer mask.  As PersistentSoftmax.cuh:
 *  masked elements count as -inf, a row with nothing left is all NaN. */
static void k_softmax_f32(const void *a, unsigned grid, unsigned block)
{
	float *dst, *src;
	const _Bool *mask;
	int batch, stride, n;
	memcpy(&dst, a, 8);
	memcpy(&src, (const char *)a + 8, 8);
	memcpy(&batch, (const char *)a + 16, 4);
	memcpy(&stride, (const char *)a + 20, 4);
	memcpy(&n, (const char *)a + 24, 4);
	memcpy(&mask, (const char *)a + 32, 8);
	for (int b = 0; b < batch; b++) {
		const float *x = src + b * stride;
		const _Bool *m = mask + b * stride;
		float max = -INFINITY, sum = 0;
		for (int i = 0; i < n; i++)
			if (!m[i])
				max = fmaxf(max, x[i]);
		for (int i = 0; i < n; i++)
			sum += m[i] ? 0 : expf(x[i] - max);
		for (int i = 0; i < n; i++)
			dst[b * stride + i] = sum == 0 ? NAN : m[i] ? 0 : expf(x[i] - max) / sum;
	}
}

/* ---- setup ---- */

static CUfunction reg(const char *name, const char *layout, fake_kernel_fn fn, CUkernel *k)
{
	uint32_t off[16], size[16];
	int n = 0;
	for (const char *p = layout; *p && n < 16; n++) {
		char *end;
		off[n] = (uint32_t)strtoul(p, &end, 10);
		size[n] = (uint32_t)strtoul(end + 1, &end, 10);
		p = *end ? end + 1 : end;
	}
	return fake_cuda_register(name, n, off, size, fn, k);
}

static void *dev_alloc(size_t bytes)
{
	CUdeviceptr d = 0;
	CHECK(cuMemAlloc_v2(&d, bytes));
	return (void *)d;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Until the agent said whether GPU checks are on (its STATUS record in
 * NANPROF_AGENT_RECORDS), so that no launch races its start: as if
 * nanprof had made the job wait.  Without the file, until the CUPTI
 * subscription is there, then a little longer.  At most 5 s. */
static void wait_for_agent(void)
{
	const char *path = getenv("NANPROF_AGENT_RECORDS");
	double end = now_s() + 5;
	while (now_s() < end) {
		if (path && *path) {
			int fd = open(path, O_RDONLY);
			struct np_agent_rec r;
			while (fd >= 0 && read(fd, &r, sizeof(r)) == (ssize_t)sizeof(r)) {
				if (r.kind == NP_AREC_STATUS &&
				    (r.status == NP_AST_GPU_ON || r.status == NP_AST_GPU_OFF)) {
					close(fd);
					return;
				}
			}
			if (fd >= 0)
				close(fd);
		} else if (fake_cuda_subscribed()) {
			usleep(50000);
			return;
		}
		usleep(2000);
	}
	fprintf(stderr, "fake_job: the agent said nothing about GPU checks in 5 s\n");
}

int main(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUstream s2;
	CUkernel add_f16_kernel;

	wait_for_agent();
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CHECK(cuCtxSetCurrent(ctx));
	CHECK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
	if (failed)
		return 1;

	CUfunction add = reg(add_f32, "0:4,4:4,8:24", k_add_f32, NULL);
	CUfunction fill = reg(fill_f32, "0:4,4:4,8:8", k_fill_f32, NULL);
	CUfunction mfill = reg(masked_fill_f32, "0:4,8:16,24:24", k_masked_fill_f32, NULL);
	CUfunction exp_ = reg(exp_f32, "0:4,4:1,8:16", k_exp_f32, NULL);
	CUfunction div = reg(div_f32, "0:4,4:1,8:24", k_div_f32, NULL);
	CUfunction softmax = reg(softmax_f32, "0:8,8:8,16:4,20:4,24:4,32:8,40:4,44:1",
				 k_softmax_f32, NULL);
	reg(add_f16, "0:4,4:4,8:24", k_add_f16, &add_f16_kernel);
	CUfunction liar = reg(fill_f32, "0:4,4:4,8:8", k_nothing, NULL);
	CUfunction liar2 = reg(fill_f32, "0:4,4:4,8:8", k_nothing, NULL);
	CUfunction adamw = reg(adamw_f32, "0:25544,25544:1,25552:8,25560:8,25568:8,25576:8,"
			       "25584:8,25592:8,25600:1,25608:8,25616:8", k_adamw_f32, NULL);

	float *x = dev_alloc(N * 4), *w = dev_alloc(N * 4), *y = dev_alloc(N * 4);
	float *mask = dev_alloc(4096 * 4), *z = dev_alloc(N * 4), *e = dev_alloc(N * 4);
	float *s = dev_alloc(N * 4), *p = dev_alloc(64 * 4), *r = dev_alloc(64 * 4);
	float *q = dev_alloc(64 * 4), *sm = dev_alloc(N * 4);
	float *gp = dev_alloc(64 * 4), *gr = dev_alloc(64 * 4), *gq = dev_alloc(64 * 4);
	float *gt = dev_alloc(64 * 4);
	_Bool *bmask = dev_alloc(N), *smask = dev_alloc(N);
	_Float16 *hx = dev_alloc(NH * 2), *hy = dev_alloc(NH * 2), *hbuf = dev_alloc((NH + 8) * 2);
	_Float16 *h = hbuf + 1;   /* a slice: 2-byte, not 16-byte, aligned */
	if (failed)
		return 1;
	/* unified memory: the "host to device copies" are stores */
	for (int i = 0; i < N; i++) {
		x[i] = (float)(i % 100) / 10.0f;
		w[i] = 1.0f;
		bmask[i] = i % 7 == 0;
		smask[i] = i / 100 == 3 || i % 100 >= 90;   /* row 3 all, the rest padding */
	}
	x[1234] = x[5000] = x[9999] = 99.0f;   /* exp(100) overflows float */
	for (int i = 0; i < 64; i++) {
		p[i] = (float)i;
		r[i] = 2.0f;
	}
	p[42] = r[42] = 0.0f;                  /* 0/0 */
	for (int i = 0; i < 64; i++) {
		gp[i] = (float)i + 1;
		gr[i] = 4.0f;
	}
	gp[5] = gr[5] = 0.0f;
	for (int i = 0; i < NH; i++) {
		hx[i] = (_Float16)(i % 10);
		hy[i] = (_Float16)1.0f;
	}
	hx[7] = hx[500] = (_Float16)65000.0f;  /* finite: half's largest is 65504 */
	hy[7] = hy[500] = (_Float16)60000.0f;  /* the sum: +inf in half */

	int n = N, n_mask = 4096, n_h = NH, n_q = 64;
	float one = 1.0f, neginf = -INFINITY;
	struct { float value; char pad[12]; } mf = { 0.0f, { 0 } };
	unsigned grid = (N + 511) / 512;

	/* (a) y = x + w */
	char *a_data[3] = { (char *)y, (char *)x, (char *)w };
	void *a_params[] = { &n, &one, a_data };
	CHECK(cuLaunchKernel(add, grid, 1, 1, 128, 1, 1, 0, NULL, a_params, NULL));

	/* (d) mask = -inf: an attention mask, never read */
	char *d_data[1] = { (char *)mask };
	void *d_params[] = { &n_mask, &neginf, d_data };
	CHECK(cuLaunchKernel(fill, 8, 1, 1, 128, 1, 1, 0, NULL, d_params, NULL));

	/* (g) z = bmask ? 0 : x, the lambda kind the agent cannot decode */
	char *g_data[3] = { (char *)z, (char *)x, (char *)bmask };
	void *g_params[] = { &n, &mf, g_data };
	CHECK(cuLaunchKernel(mfill, grid, 1, 1, 128, 1, 1, 0, NULL, g_params, NULL));

	/* (h) sm = softmax(y) over rows of 100, masked by smask, launched as
	 * dispatch_softmax_forward does for 100 elements: log2_elements 7,
	 * 32 x 4 threads, 2 rows a warp, so 8 rows a block */
	int rows = N / 100, cols = 100, chunk = -1;
	_Bool tmask = 0;
	void *h_params[] = { &sm, &y, &rows, &cols, &cols, &smask, &chunk, &tmask };
	CHECK(cuLaunchKernel(softmax, (rows + 7) / 8, 1, 1, 32, 4, 1, 0, NULL, h_params, NULL));

	/* (b) e = exp(y): +inf where y = 100 */
	char lambda = 0;
	char *b_data[2] = { (char *)e, (char *)y };
	void *b_params[] = { &n, &lambda, b_data };
	CHECK(cuLaunchKernel(exp_, grid, 1, 1, 128, 1, 1, 0, NULL, b_params, NULL));

	/* (c) s = e + y: the +inf propagates */
	char *c_data[3] = { (char *)s, (char *)e, (char *)y };
	void *c_params[] = { &n, &one, c_data };
	CHECK(cuLaunchKernel(add, grid, 1, 1, 128, 1, 1, 0, NULL, c_params, NULL));

	/* (e) h = hx + hy in half, on stream 2, through the CUkernel */
	char *e_data[3] = { (char *)h, (char *)hx, (char *)hy };
	void *e_params[] = { &n_h, &one, e_data };
	CHECK(cuLaunchKernel((CUfunction)add_f16_kernel, 2, 1, 1, 128, 1, 1, 0, s2, e_params,
			     NULL));

	/* (f) q = p / r, arguments packed in one buffer */
	struct { int numel; char functor; char pad[3]; char *data[3]; } packed = {
		n_q, 0, { 0 }, { (char *)q, (char *)p, (char *)r }
	};
	size_t packed_size = sizeof(packed);
	void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE,
			  &packed_size, CU_LAUNCH_PARAM_END };
	CHECK(cuLaunchKernel(div, 1, 1, 1, 64, 1, 1, 0, s2, NULL, extra));

	/* (i) a CUDA graph on stream 2: gq = gp / gr, 0/0 at 5, captured
	 * with the agent's check, replayed twice */
	CUgraph graph;
	CUgraphExec exec;
	char functor = 0;
	char *i_data[3] = { (char *)gq, (char *)gp, (char *)gr };
	void *i_params[] = { &n_q, &functor, i_data };
	CHECK(cuStreamBeginCapture_v2(s2, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CHECK(cuLaunchKernel(div, 1, 1, 1, 64, 1, 1, 0, s2, i_params, NULL));
	CHECK(cuStreamEndCapture(s2, &graph));
	CHECK(cuGraphInstantiateWithFlags(&exec, graph, 0));
	CHECK(cuGraphLaunch(exec, s2));
	CHECK(cuGraphLaunch(exec, s2));

	/* (j) gt = gq + gp, launched after the replays: the graph's NaN
	 * propagates into an ordinary launch */
	char *j_data[3] = { (char *)gt, (char *)gq, (char *)gp };
	void *j_params[] = { &n_q, &one, j_data };
	CHECK(cuLaunchKernel(add, 1, 1, 1, 64, 1, 1, 0, s2, j_params, NULL));

	/* (k) numel 100000 on a 64-float buffer: no check may read past it */
	int n_lie = 100000;
	char *k_data[1] = { (char *)gt };
	void *k_params[] = { &n_lie, &one, k_data };
	CHECK(cuLaunchKernel(liar, 8, 1, 1, 128, 1, 1, 0, s2, k_params, NULL));

	/* (l) optimizer.step() of a fused AdamW with lr = inf: 20 params of
	 * 100 floats and one of 70000 (two chunks, two blocks), as torch's
	 * multi_tensor_apply_for_fused_optimizer fills the metadata; the
	 * slots past the 21st still hold pointers to e, dirty since (b) */
	enum { NP_ADAM = 21, ADAM_ELEMS = 20 * 100 + 70000 };
	static struct fused_meta4 meta;
	float *lists[4], *steps = dev_alloc(NP_ADAM * 4);
	unsigned nblocks = 0;
	for (int d = 0; d < 4; d++)
		lists[d] = dev_alloc(ADAM_ELEMS * 4);
	if (failed)
		return 1;
	for (int i = 0; i < ADAM_ELEMS; i++) {
		lists[0][i] = 1.0f;
		lists[1][i] = 0.5f;
		lists[2][i] = lists[3][i] = 0.0f;
	}
	for (int d = 0; d < 4; d++)
		for (int t = 0; t < MTA_TENSORS; t++)
			meta.addresses[d][t] = e;
	for (int t = 0, at = 0; t < NP_ADAM; t++) {
		int64_t numel = t == NP_ADAM - 1 ? 70000 : 100;
		for (int d = 0; d < 4; d++)
			meta.addresses[d][t] = lists[d] + at;
		meta.numel_for_tensor[t] = numel;
		steps[t] = 1.0f;
		meta.state_steps_addresses[t] = steps + t;
		for (int64_t c = 0; c * MTA_CHUNK < numel; c++) {
			meta.block_to_tensor[nblocks] = (uint16_t)t;
			meta.block_to_chunk[nblocks++] = (int32_t)c;
		}
		at += (int)numel;
	}
	char adam_functor = 0, maximize = 0;
	const float *lr_ptr = NULL, *grad_scale = NULL, *found_inf = NULL;
	double lr = INFINITY, beta1 = 0.9, beta2 = 0.999, wd = 0, eps = 1e-8;
	void *l_params[] = { &meta, &adam_functor, &lr_ptr, &lr, &beta1, &beta2, &wd, &eps,
			     &maximize, &grad_scale, &found_inf };
	/* (w), with FAKE_JOB_IN_PLACE=1 only: the last param's first 64
	 * floats filled with 1 (finite) just before the step; the step's
	 * outputs are decoded in turns of 16, that param's in the last: a
	 * check of the fill still waiting would read the step's -inf */
	if (getenv("FAKE_JOB_IN_PLACE")) {
		int n_w = 64;
		float w_v = 1.0f;
		char *w_data[1] = { (char *)(lists[0] + 20 * 100) };
		void *w_params[] = { &n_w, &w_v, w_data };
		CHECK(cuLaunchKernel(fill, 1, 1, 1, 64, 1, 1, 0, NULL, w_params, NULL));
	}
	CHECK(cuLaunchKernel(adamw, nblocks, 1, 1, 512, 1, 1, 0, NULL, l_params, NULL));

	/* (m) v = v / v over two chunks mapped one after the other into a
	 * reserved range, as PyTorch's expandable segments grow */
	enum { CHUNK = 64 << 10, NV = 1024 };
	CUdeviceptr range = 0;
	CHECK(cuMemAddressReserve(&range, 2 * CHUNK, 0, 0, 0));
	CHECK(cuMemMap(range, CHUNK, 0, 0, 0));
	CHECK(cuMemMap(range + CHUNK, CHUNK, 0, 0, 0));
	if (failed)
		return 1;
	float *v = (float *)(range + CHUNK) - NV / 2;   /* half in each chunk */
	for (int i = 0; i < NV; i++)
		v[i] = (float)(i + 1);
	v[700] = 0.0f;
	int n_v = NV;
	char *m_data[3] = { (char *)v, (char *)v, (char *)v };
	void *m_params[] = { &n_v, &functor, m_data };
	CHECK(cuLaunchKernel(div, 8, 1, 1, 128, 1, 1, 0, NULL, m_params, NULL));
	CHECK(cuCtxSynchronize());   /* torch empties its cache only when idle */
	float v0 = v[0];
	int v700_nan = isnan(v[700]);

	/* (n) the second chunk unmapped; a kernel whose numel still says all
	 * of v: its check would read unmapped memory */
	CHECK(cuMemUnmap(range + CHUNK, CHUNK));
	char *n_data[1] = { (char *)v };
	void *n_params[] = { &n_v, &one, n_data };
	CHECK(cuLaunchKernel(liar2, 8, 1, 1, 128, 1, 1, 0, NULL, n_params, NULL));

	/* (o), (p), with FAKE_JOB_IN_PLACE=1 only (the test of deferred
	 * checks): o = gp + gp, finite; then o = o / o2 in place, +inf at 9,
	 * a birth in the div.  A check of (o) still waiting when (p) runs
	 * would see the +inf and take the add for its birth. */
	float *o = NULL;
	if (getenv("FAKE_JOB_IN_PLACE")) {
		float *o2 = dev_alloc(64 * 4);
		o = dev_alloc(64 * 4);
		if (failed)
			return 1;
		for (int i = 0; i < 64; i++)
			o2[i] = i == 9 ? 0.0f : 2.0f;
		char *o_data[3] = { (char *)o, (char *)gp, (char *)gp };
		void *o_params[] = { &n_q, &one, o_data };
		CHECK(cuLaunchKernel(add, 1, 1, 1, 64, 1, 1, 0, NULL, o_params, NULL));
		char *p_data[3] = { (char *)o, (char *)o, (char *)o2 };
		void *p_params[] = { &n_q, &functor, p_data };
		CHECK(cuLaunchKernel(div, 1, 1, 1, 64, 1, 1, 0, NULL, p_params, NULL));
	}

	/* (q) to (t), with FAKE_JOB_IN_PLACE=1 too: a cuBLAS handle's
	 * workspace is memory a tensor held, whose check may still wait
	 * (torch's caching allocator hands both out).  (r)'s partial sums
	 * would be taken for (q)'s values if (q)'s check waited past
	 * (r)'s kernels; (t) writes nothing that waits. */
	float *wk = NULL, *ga = NULL, *gd = NULL, *gd2 = NULL, *am = NULL, *gd3 = NULL;
	float *xa = NULL, *xb = NULL, *yb = NULL;
	if (getenv("FAKE_JOB_IN_PLACE")) {
		enum { GM = 32, GN = 32, GK = 128 };   /* k >= FAKE_SPLITK_MIN */
		float one_f = 1.0f, zero_f = 0.0f, wk_v = 1.0f;
		int n_wk = 2 * GM * GN;
		cublasHandle_t blas = NULL;
		wk = dev_alloc(n_wk * 4);
		ga = dev_alloc(GM * GK * 4), gd = dev_alloc(GM * GN * 4), gd2 = dev_alloc(GM * GN * 4);
		float *gb = dev_alloc(GK * GN * 4), *t = dev_alloc(64 * 4);
		if (failed || cublasCreate_v2(&blas))
			return 1;
		for (int i = 0; i < GM * GK; i++)
			ga[i] = i == 0 ? INFINITY : 0.5f;
		for (int i = 0; i < GK * GN; i++)
			gb[i] = 1.0f;
		if (cublasSgemm_v2(blas, CUBLAS_OP_N, CUBLAS_OP_N, GM, GN, GK, &one_f, gb, GM, gb,
				   GK, &zero_f, gd2, GM))
			failed = 1;
		char *q_data[1] = { (char *)wk };
		void *q_params[] = { &n_wk, &wk_v, q_data };
		CHECK(cuLaunchKernel(fill, 16, 1, 1, 128, 1, 1, 0, NULL, q_params, NULL));
		if (cublasSetWorkspace_v2(blas, wk, (size_t)n_wk * 4) ||
		    cublasSgemm_v2(blas, CUBLAS_OP_N, CUBLAS_OP_N, GM, GN, GK, &one_f, ga, GM, gb,
				   GK, &zero_f, gd, GM))
			failed = 1;
		char *s_data[3] = { (char *)t, (char *)gp, (char *)gp };
		void *s_params[] = { &n_q, &one, s_data };
		CHECK(cuLaunchKernel(add, 1, 1, 1, 64, 1, 1, 0, NULL, s_params, NULL));
		if (cublasSgemm_v2(blas, CUBLAS_OP_N, CUBLAS_OP_N, GM, GN, GK, &one_f, gb, GM, gb,
				   GK, &zero_f, gd2, GM))
			failed = 1;
		/* (u), (v): cublasLt writes max |D| where the add's check
		 * still waits; the add would be taken for the +inf's birth */
		am = dev_alloc(64 * 4), gd3 = dev_alloc(GM * GN * 4);
		if (failed)
			return 1;
		char *u_data[3] = { (char *)am, (char *)gp, (char *)gp };
		void *u_params[] = { &n_q, &one, u_data };
		CHECK(cuLaunchKernel(add, 1, 1, 1, 64, 1, 1, 0, NULL, u_params, NULL));
		cublasLtHandle_t lt;
		cublasLtMatmulDesc_t desc;
		cublasLtMatrixLayout_t al, bl, dl;
		if (cublasLtCreate(&lt) || cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F,
								     FAKE_CUDA_R_32F) ||
		    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, &am,
						   sizeof(am)) ||
		    cublasLtMatrixLayoutCreate(&al, FAKE_CUDA_R_32F, GM, GK, GM) ||
		    cublasLtMatrixLayoutCreate(&bl, FAKE_CUDA_R_32F, GK, GN, GK) ||
		    cublasLtMatrixLayoutCreate(&dl, FAKE_CUDA_R_32F, GM, GN, GM) ||
		    cublasLtMatmul(lt, desc, &one_f, ga, al, gb, bl, &zero_f, gd3, dl, gd3, dl, NULL,
				   NULL, 0, NULL))
			failed = 1;
		/* (x), (y): device copies while checks wait, one writing
		 * elsewhere, one over a waiting range */
		xa = dev_alloc(64 * 4), xb = dev_alloc(64 * 4), yb = dev_alloc(32 * 4);
		if (failed)
			return 1;
		char *x_data[3] = { (char *)xa, (char *)gp, (char *)gp };
		void *x_params[] = { &n_q, &one, x_data };
		CHECK(cuLaunchKernel(add, 1, 1, 1, 64, 1, 1, 0, NULL, x_params, NULL));
		CHECK(cuMemcpyDtoDAsync_v2((CUdeviceptr)xb, (CUdeviceptr)gp, 64 * 4, NULL));
		int n_y = 32;
		char *y_data[3] = { (char *)yb, (char *)gp, (char *)gp };
		void *y_params[] = { &n_y, &one, y_data };
		CHECK(cuLaunchKernel(add, 1, 1, 1, 32, 1, 1, 0, NULL, y_params, NULL));
		CHECK(cuMemcpyDtoDAsync_v2((CUdeviceptr)yb, (CUdeviceptr)o, 32 * 4, NULL));
	}

	/* (z), with FAKE_JOB_IN_PLACE=1 too: a cuDNN convolution's
	 * workspace is memory a tensor held, whose check may still wait, as
	 * a cuBLAS call's is; its kernel leaves NaN there, which the fill's
	 * check would read if it waited past the execution */
	float *wz = NULL, *cz = NULL;
	if (getenv("FAKE_JOB_IN_PLACE")) {
		static const int64_t cd[4] = { 1, 1, 8, 8 };   /* gp's 64 floats */
		cudnnHandle_t dnn = NULL;
		wz = dev_alloc(FAKE_CUDNN_WS_FLOATS * 4), cz = dev_alloc(64 * 4);
		float *cw = dev_alloc(4);
		if (failed || cudnnCreate(&dnn))
			return 1;
		cw[0] = 2.0f;
		cudnnBackendDescriptor_t plan = fcg_conv_plan(dnn, cd);
		int n_wz = FAKE_CUDNN_WS_FLOATS;
		float wz_v = 1.0f;
		char *z_data[1] = { (char *)wz };
		void *z_params[] = { &n_wz, &wz_v, z_data };
		CHECK(cuLaunchKernel(fill, 1, 1, 1, 128, 1, 1, 0, NULL, z_params, NULL));
		if (!plan || fcg_conv_run_ws(dnn, plan, gp, cz, cw, wz))
			failed = 1;
		/* (z2) */
		float *bq = dev_alloc(8 * 4), *br = dev_alloc(8 * 4), *by = dev_alloc(64 * 4);
		float *bw = dev_alloc(2 * 4), *bb = dev_alloc(2 * 4);
		cudnnTensorDescriptor_t td, pd;
		int dims[] = { 2, 2, 16 }, strides[] = { 32, 16, 1 };
		int pdims[] = { 1, 2, 1 }, pstrides[] = { 2, 1, 1 };
		if (failed || cudnnCreateTensorDescriptor(&td) || cudnnCreateTensorDescriptor(&pd) ||
		    cudnnSetTensorNdDescriptor(td, CUDNN_DATA_FLOAT, 3, dims, strides) ||
		    cudnnSetTensorNdDescriptor(pd, CUDNN_DATA_FLOAT, 3, pdims, pstrides))
			return 1;
		for (int i = 0; i < 8; i++)
			br[i] = i == 0 ? 0.0f : 1.0f;
		bw[0] = bw[1] = 1.0f;
		bb[0] = bb[1] = 0.0f;
		int n_bq = 8;
		char *bq_data[3] = { (char *)bq, (char *)gp, (char *)br };
		void *bq_params[] = { &n_bq, &functor, bq_data };
		CHECK(cuLaunchKernel(div, 1, 1, 1, 32, 1, 1, 0, NULL, bq_params, NULL));
		float one_f = 1.0f, zero_f = 0.0f;
		if (cudnnBatchNormalizationForwardTrainingEx(
			    dnn, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN, &one_f, &zero_f, td,
			    gp, NULL, NULL, td, by, pd, bw, bb, 0.1, NULL, NULL, 1e-5, bq, bq + 2,
			    NULL, NULL, 0, NULL, 0))
			failed = 1;
	}

	/* (z3), with FAKE_JOB_IN_PLACE=1 too: a cuFFT transform's work area,
	 * which torch gives from its caching allocator before each one
	 * (cufftSetWorkArea); its kernel leaves NaN there */
	float *wf = NULL, *fo = NULL;
	if (getenv("FAKE_JOB_IN_PLACE")) {
		cufftHandle fh;
		long long fn = 8;
		size_t fws = 0;
		wf = dev_alloc(FAKE_FFT_WORK_FLOATS * 4), fo = dev_alloc(16 * 4);
		if (failed || cufftCreate(&fh) ||
		    cufftXtMakePlanMany(fh, 1, &fn, NULL, 1, 8, FAKE_FFT_C_32F, NULL, 1, 8,
					FAKE_FFT_C_32F, 1, &fws, FAKE_FFT_C_32F) ||
		    fws != FAKE_FFT_WORK_FLOATS * 4)
			return 1;
		int n_wf = FAKE_FFT_WORK_FLOATS;
		float wf_v = 1.0f;
		char *wf_data[1] = { (char *)wf };
		void *wf_params[] = { &n_wf, &wf_v, wf_data };
		CHECK(cuLaunchKernel(fill, 1, 1, 1, 128, 1, 1, 0, NULL, wf_params, NULL));
		if (cufftSetWorkArea(fh, wf) || cufftXtExec(fh, gp, fo, CUFFT_FORWARD))
			failed = 1;
	}

	CHECK(cuCtxSynchronize());

	/* the job's own results: the kernels really ran */
	float row = 0;
	for (int i = 0; i < 100; i++)
		row += sm[i];
	if (!isinf(e[1234]) || !isinf(s[9999]) || isinf(s[0]) || !isnan(q[42]) ||
	    !isinf((float)h[7]) || z[7] != 0.0f || mask[0] != -INFINITY ||
	    fabsf(row - 1) > 1e-3f || !isnan(sm[300]) || !isnan(sm[399]) || isnan(sm[400]) ||
	    !isnan(gt[5]) || gt[6] != 7.0f / 4 + 7 ||
	    lists[0][0] != -INFINITY || lists[0][ADAM_ELEMS - 1] != -INFINITY ||
	    !isfinite(lists[2][ADAM_ELEMS - 1]) || lists[3][0] <= 0 || v0 != 1.0f || !v700_nan ||
	    (o && (!isinf(o[9]) || o[8] != 9.0f)) ||
	    (gd && (!isinf(gd[0]) || !isinf(gd[32 * 31]) || gd[1] != 64.0f || gd2[5] != 128.0f ||
		    wk[0] != 64.0f ||   /* (t)'s partial sum: the workspace used */
		    !isinf(am[0]) || am[1] != 2 * gp[1] || !isinf(gd3[0]) || xa[3] != 8.0f ||
		    xb[3] != 4.0f || !isinf(yb[9]) || yb[8] != 9.0f)) ||
	    (cz && (cz[3] != 2 * gp[3] || !isnan(wz[0]))) ||
	    (fo && (fo[0] != gp[1] || fo[1] != gp[0] || !isnan(wf[0])))) {
		fprintf(stderr, "fake_job: a kernel computed the wrong thing\n");
		failed = 1;
	}
	CHECK(cuMemFree_v2((CUdeviceptr)z));

	struct fake_cuda_stats st;
	fake_cuda_stats(&st);
	printf("fake_job: launches=%llu check_launches=%llu checks=%llu check_blocks=%llu "
	       "callbacks=%llu allocs=%llu libraries=%llu faults=%llu\n",
	       (unsigned long long)st.launches, (unsigned long long)st.check_launches,
	       (unsigned long long)st.checks,
	       (unsigned long long)st.check_blocks, (unsigned long long)st.callbacks,
	       (unsigned long long)st.allocs, (unsigned long long)st.libraries,
	       (unsigned long long)st.faults);
	fflush(stdout);

	/* A forked child that ends with exit() (not _exit) runs the
	 * process's atexit handlers, the agent's among them: they must not
	 * touch the parent's CUDA state, gone from the child. */
	pid_t child = fork();
	if (child == 0)
		exit(0);
	int status = -1;
	for (int i = 0; i < 500 && waitpid(child, &status, WNOHANG) != child; i++)
		usleep(10000);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "fake_job: a forked child that called exit() %s %d\n",
			WIFSIGNALED(status) ? "died of signal" : "hung or failed:", WIFSIGNALED(status)
			? WTERMSIG(status) : status);
		kill(child, SIGKILL);
		failed = 1;
	}

	usleep(200000);   /* the agent's drain thread polls every 0.5 ms */
	return failed;
}
