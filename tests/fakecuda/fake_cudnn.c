/* fake_cudnn.c - a fake cuDNN on the fake driver (fake_cudnn.h), built as
 * libcudnn.so.9: tensor descriptors and a batch normalisation whose one
 * kernel takes an opaque struct, as cuDNN's do. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include "fake.h"
#include "fake_cudnn.h"

/* The driver is opened by cudnnCreate, not linked: like the real cuDNN,
 * which reaches it only when a handle is made, this one can be loaded
 * (as torch loads cuDNN at its import) long before libcuda. */
static struct {
	CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
			   unsigned, unsigned, CUstream, void **, void **);
	CUfunction (*reg)(const char *, int, const uint32_t *, const uint32_t *,
			  fake_kernel_fn, CUkernel *);
} cu;
#define cuLaunchKernel cu.launch
#define fake_cuda_register cu.reg

static int open_cuda(void)
{
	if (__atomic_load_n(&cu.reg, __ATOMIC_ACQUIRE))
		return 0;
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);   /* this RUNPATH's */
	if (!lib)
		return -1;
	cu.launch = (__typeof__(cu.launch))dlsym(lib, "cuLaunchKernel");
	void *reg = dlsym(lib, "fake_cuda_register");
	if (!cu.launch || !reg)
		return -1;
	__atomic_store_n(&cu.reg, (__typeof__(cu.reg))reg, __ATOMIC_RELEASE);
	return 0;
}

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
	if (open_cuda())
		return CUDNN_STATUS_BAD_PARAM;
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

/* ---- the backend API: descriptors, one graph kind, its execution ---- */

#define MAX_ATTRS 16
#define ATTR_BYTES 128

struct fake_be_attr {
	int name, type;
	int64_t n;
	unsigned char v[ATTR_BYTES];
};

struct fake_be_desc {
	int type, n_attrs, finalized;
	struct fake_be_attr a[MAX_ATTRS];
	struct fake_be_desc *graph;     /* an engine config's, from heuristics */
	/* a finalized plan's convolution, as cuDNN keeps its own copy: the
	 * descriptors it was built from may be destroyed */
	int64_t uid_x, uid_w, uid_y, numel;
	int64_t ws_bytes;               /* its workspace size */
	/* or its attention (uid_x: q, uid_w: k): v, o and the statistics */
	int attention;
	int64_t uid_v, uid_o, uid_s, numel_s;
};

static size_t elem_size(int type)
{
	switch (type) {
	case CUDNN_TYPE_BOOLEAN: return 1;
	case CUDNN_TYPE_INT64: case CUDNN_TYPE_DOUBLE: case CUDNN_TYPE_VOID_PTR:
	case CUDNN_TYPE_BACKEND_DESCRIPTOR: case CUDNN_TYPE_HANDLE: return 8;
	}
	return 4;
}

static const struct fake_be_attr *attr_of(const struct fake_be_desc *d, int name)
{
	for (int i = 0; d && i < d->n_attrs; i++)
		if (d->a[i].name == name)
			return &d->a[i];
	return NULL;
}

/* the descriptor an attribute refers to, NULL when unset */
static struct fake_be_desc *ref_of(const struct fake_be_desc *d, int name)
{
	const struct fake_be_attr *a = attr_of(d, name);
	struct fake_be_desc *r = NULL;
	if (a && a->type == CUDNN_TYPE_BACKEND_DESCRIPTOR && a->n >= 1)
		memcpy(&r, a->v, sizeof(r));
	return r;
}

static int64_t int64_of(const struct fake_be_desc *d, int name, int at)
{
	const struct fake_be_attr *a = attr_of(d, name);
	int64_t v = -1;
	if (a && a->type == CUDNN_TYPE_INT64 && at < a->n)
		memcpy(&v, a->v + 8 * at, 8);
	return v;
}

FAKE_EXPORT cudnnStatus_t cudnnBackendCreateDescriptor(int type, cudnnBackendDescriptor_t *d)
{
	*d = calloc(1, sizeof(**d));
	if (!*d)
		return CUDNN_STATUS_BAD_PARAM;
	(*d)->type = type;
	return 0;
}

FAKE_EXPORT cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t d)
{
	free(d);
	return 0;
}

FAKE_EXPORT cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t d, int name, int type,
						   int64_t n, const void *v)
{
	if (!d || d->finalized || n < 0 || (size_t)n * elem_size(type) > ATTR_BYTES)
		return CUDNN_STATUS_BAD_PARAM;
	struct fake_be_attr *a = (struct fake_be_attr *)attr_of(d, name);
	if (!a) {
		if (d->n_attrs == MAX_ATTRS)
			return CUDNN_STATUS_BAD_PARAM;
		a = &d->a[d->n_attrs++];
	}
	a->name = name;
	a->type = type;
	a->n = n;
	memcpy(a->v, v, (size_t)n * elem_size(type));
	return 0;
}

/* the i-th descriptor an attribute refers to, NULL when none */
static struct fake_be_desc *ref_at(const struct fake_be_desc *d, int name, int i)
{
	const struct fake_be_attr *a = attr_of(d, name);
	struct fake_be_desc *r = NULL;
	if (a && a->type == CUDNN_TYPE_BACKEND_DESCRIPTOR && i < a->n)
		memcpy(&r, a->v + 8 * i, sizeof(r));
	return r;
}

static int64_t be_numel(const struct fake_be_desc *t)
{
	const struct fake_be_attr *dims = attr_of(t, CUDNN_ATTR_TENSOR_DIMENSIONS);
	int64_t n = 1;
	for (int i = 0; dims && i < dims->n; i++)
		n *= int64_of(t, CUDNN_ATTR_TENSOR_DIMENSIONS, i);
	return dims ? n : 0;
}

/* attention's graph as fake_conv_graph.h builds it: S = matmul(q, k)
 * (virtual), the statistics a pointwise of S, o = matmul(S, v); or one
 * SDPA operation (cuDNN >= 9.13) */
static cudnnStatus_t finalize_attention(struct fake_be_desc *plan, struct fake_be_desc *graph)
{
	struct fake_be_desc *mm1 = ref_at(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, 0);
	struct fake_be_desc *pw = ref_at(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, 1);
	struct fake_be_desc *mm2 = ref_at(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, 2);
	struct fake_be_desc *q, *k, *st, *v, *o;
	if (mm1->type == CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR) {
		q = ref_of(mm1, CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC);
		k = ref_of(mm1, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC);
		v = ref_of(mm1, CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC);
		o = ref_of(mm1, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC);
		st = ref_of(mm1, CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC);
	} else {
		if (!pw || !mm2 || pw->type != CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR ||
		    mm2->type != CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR)
			return CUDNN_STATUS_NOT_SUPPORTED;
		q = ref_of(mm1, CUDNN_ATTR_OPERATION_MATMUL_ADESC);
		k = ref_of(mm1, CUDNN_ATTR_OPERATION_MATMUL_BDESC);
		st = ref_of(pw, CUDNN_ATTR_OPERATION_POINTWISE_YDESC);
		v = ref_of(mm2, CUDNN_ATTR_OPERATION_MATMUL_BDESC);
		o = ref_of(mm2, CUDNN_ATTR_OPERATION_MATMUL_CDESC);
	}
	if (!q || !k || !st || !v || !o)
		return CUDNN_STATUS_NOT_SUPPORTED;
	plan->attention = 1;
	plan->numel = be_numel(q);
	plan->numel_s = be_numel(st);
	plan->uid_x = int64_of(q, CUDNN_ATTR_TENSOR_UNIQUE_ID, 0);
	plan->uid_w = int64_of(k, CUDNN_ATTR_TENSOR_UNIQUE_ID, 0);
	plan->uid_v = int64_of(v, CUDNN_ATTR_TENSOR_UNIQUE_ID, 0);
	plan->uid_o = int64_of(o, CUDNN_ATTR_TENSOR_UNIQUE_ID, 0);
	plan->uid_s = int64_of(st, CUDNN_ATTR_TENSOR_UNIQUE_ID, 0);
	return 0;
}

/* the plan's convolution, resolved while what it was built from lives */
static cudnnStatus_t finalize_plan(struct fake_be_desc *plan)
{
	struct fake_be_desc *cfg = ref_of(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG);
	struct fake_be_desc *graph = cfg ? cfg->graph : NULL;
	struct fake_be_desc *op = ref_of(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS);
	if (op && (op->type == CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR ||
		   op->type == CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR))
		return finalize_attention(plan, graph);
	if (!op || op->type != CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR)
		return CUDNN_STATUS_NOT_SUPPORTED;
	struct fake_be_desc *x = ref_of(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X);
	struct fake_be_desc *w = ref_of(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W);
	struct fake_be_desc *y = ref_of(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y);
	const struct fake_be_attr *dims = attr_of(x, CUDNN_ATTR_TENSOR_DIMENSIONS);
	if (!x || !w || !y || !dims || int64_of(w, CUDNN_ATTR_TENSOR_DIMENSIONS, 1) != 1)
		return CUDNN_STATUS_NOT_SUPPORTED;   /* one channel in: y = w[0] x */
	plan->numel = 1;
	for (int i = 0; i < dims->n; i++)
		plan->numel *= int64_of(x, CUDNN_ATTR_TENSOR_DIMENSIONS, i);
	plan->uid_x = int64_of(x, CUDNN_ATTR_TENSOR_UNIQUE_ID, 0);
	plan->uid_w = int64_of(w, CUDNN_ATTR_TENSOR_UNIQUE_ID, 0);
	plan->uid_y = int64_of(y, CUDNN_ATTR_TENSOR_UNIQUE_ID, 0);
	plan->ws_bytes = FAKE_CUDNN_WS_FLOATS * sizeof(float);
	return 0;
}

FAKE_EXPORT cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t d)
{
	if (!d || d->finalized)
		return CUDNN_STATUS_BAD_PARAM;
	if (d->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR) {
		cudnnStatus_t st = finalize_plan(d);
		if (st)
			return st;
	}
	d->finalized = 1;
	return 0;
}

FAKE_EXPORT cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const d, int name,
						   int type, int64_t requested, int64_t *n, void *v)
{
	if (d && d->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR && d->finalized &&
	    name == CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE && type == CUDNN_TYPE_INT64 && n) {
		*n = 1;
		if (requested >= 1)
			memcpy(v, &d->ws_bytes, sizeof(d->ws_bytes));
		return 0;
	}
	if (!d || d->type != CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR || !d->finalized ||
	    name != CUDNN_ATTR_ENGINEHEUR_RESULTS || type != CUDNN_TYPE_BACKEND_DESCRIPTOR || !n)
		return CUDNN_STATUS_NOT_SUPPORTED;
	*n = 1;
	if (requested >= 1) {
		struct fake_be_desc *cfg;
		memcpy(&cfg, v, sizeof(cfg));
		if (!cfg || cfg->type != CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)
			return CUDNN_STATUS_BAD_PARAM;
		cfg->graph = ref_of(d, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH);
		cfg->finalized = 1;
	}
	return 0;
}

/* the convolution kernel's one argument, by value: ws, when given, its
 * scratch (what a real kernel leaves in its workspace is anything: NaN
 * here, which a check of that memory still waiting would read) */
struct conv_args {
	const float *x, *w;
	float *y, *ws;
	int64_t n;
};

/* the attention kernel's: o = q k (an overflow there is o's alone), the
 * statistics k, v read */
struct attn_args {
	const float *q, *k, *v;
	float *o, *stats;
	int64_t n, n_stats;
};

/* FAKE_CUDNN_OPAQUE=1: the convolution kernel's argument hides its
 * pointers (each XOR'd with a mask, no word inside an allocation), as a
 * kernel whose tensors sit in an opaque parameter block at offsets no
 * scan of its words finds: only the variant pack names them */
#define OPAQUE_MASK 0x5a5a5a5a5a5a5a5aull
struct conv_args_masked {
	uint64_t x, w, y, ws;
	int64_t n;
};

static CUfunction k_conv, k_conv_opaque, k_attn;
static pthread_once_t conv_once = PTHREAD_ONCE_INIT;

static void run_attn(const void *args, unsigned grid, unsigned block)
{
	(void)grid, (void)block;
	struct attn_args a;
	memcpy(&a, args, sizeof(a));
	for (int64_t i = 0; i < a.n; i++)
		a.o[i] = a.q[i] * a.k[i] + 0.0f * a.v[i];
	for (int64_t i = 0; i < a.n_stats; i++)
		a.stats[i] = a.k[i];
}

static void run_conv(const void *args, unsigned grid, unsigned block)
{
	(void)grid, (void)block;
	struct conv_args a;
	memcpy(&a, args, sizeof(a));
	for (int64_t i = 0; i < a.n; i++)
		a.y[i] = a.w[0] * a.x[i];
	for (int i = 0; a.ws && i < FAKE_CUDNN_WS_FLOATS; i++)
		a.ws[i] = NAN;
}

static void run_conv_opaque(const void *args, unsigned grid, unsigned block)
{
	struct conv_args_masked m;
	memcpy(&m, args, sizeof(m));
	struct conv_args a = { (const float *)(uintptr_t)(m.x ^ OPAQUE_MASK),
			       (const float *)(uintptr_t)(m.w ^ OPAQUE_MASK),
			       (float *)(uintptr_t)(m.y ^ OPAQUE_MASK),
			       m.ws ? (float *)(uintptr_t)(m.ws ^ OPAQUE_MASK) : NULL, m.n };
	run_conv(&a, grid, block);
}

static void conv_init(void)
{
	static const uint32_t off[] = { 0 }, size[] = { sizeof(struct conv_args) };
	/* a cuDNN convolution kernel's name, as CUPTI gives it */
	k_conv = fake_cuda_register("sm90_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_"
				    "nchw_tilesize64x64x8_stage1_warpsize2x2x1_g1_fake_cudnn",
				    1, off, size, run_conv, NULL);
	static const uint32_t masked_size[] = { sizeof(struct conv_args_masked) };
	k_conv_opaque = fake_cuda_register("sm90_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_"
					   "nchw_tilesize64x64x8_stage1_warpsize2x2x1_g1_opaque_"
					   "fake_cudnn", 1, off, masked_size, run_conv_opaque, NULL);
	static const uint32_t attn_size[] = { sizeof(struct attn_args) };
	/* named as cuDNN's fused attention kernels are */
	k_attn = fake_cuda_register("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_"
				    "knob_3_64x64x64_4x1x1_kernel0_0_fake_cudnn",
				    1, off, attn_size, run_attn, NULL);
}

static cudnnStatus_t execute_attention(cudnnHandle_t h, const struct fake_be_desc *plan,
				       const struct fake_be_desc *pack);

/* the address the variant pack gives uid, NULL when none */
static void *pointer_of(const struct fake_be_desc *pack, int64_t uid)
{
	const struct fake_be_attr *u = attr_of(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS);
	const struct fake_be_attr *p = attr_of(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS);
	for (int64_t i = 0; u && p && i < u->n && i < p->n; i++)
		if (int64_of(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, (int)i) == uid) {
			void *ptr;
			memcpy(&ptr, p->v + 8 * i, sizeof(ptr));
			return ptr;
		}
	return NULL;
}

FAKE_EXPORT cudnnStatus_t cudnnBackendExecute(cudnnHandle_t h, cudnnBackendDescriptor_t plan,
					      cudnnBackendDescriptor_t pack)
{
	pthread_once(&conv_once, conv_init);
	if (!k_conv || !plan || !plan->finalized || !pack || !pack->finalized ||
	    plan->type != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)
		return CUDNN_STATUS_BAD_PARAM;
	if (plan->attention)
		return execute_attention(h, plan, pack);
	const struct fake_be_attr *wsa = attr_of(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE);
	float *ws = NULL;
	if (wsa && wsa->n == 1)
		memcpy(&ws, wsa->v, sizeof(ws));
	struct conv_args a = { pointer_of(pack, plan->uid_x), pointer_of(pack, plan->uid_w),
			       pointer_of(pack, plan->uid_y), ws, plan->numel };
	if (!a.x || !a.w || !a.y)
		return CUDNN_STATUS_BAD_PARAM;
	void *p[] = { &a };
	const char *opaque = getenv("FAKE_CUDNN_OPAQUE");
	struct conv_args_masked m = { (uintptr_t)a.x ^ OPAQUE_MASK, (uintptr_t)a.w ^ OPAQUE_MASK,
				      (uintptr_t)a.y ^ OPAQUE_MASK,
				      ws ? (uintptr_t)ws ^ OPAQUE_MASK : 0, a.n };
	void *pm[] = { &m };
	int masked = opaque && *opaque == '1';
	return cuLaunchKernel(masked ? k_conv_opaque : k_conv, (unsigned)((a.n + 255) / 256), 1, 1,
			      256, 1, 1, 0, h ? h->stream : NULL, masked ? pm : p,
			      NULL) == CUDA_SUCCESS
		       ? 0
		       : CUDNN_STATUS_BAD_PARAM;
}

static cudnnStatus_t execute_attention(cudnnHandle_t h, const struct fake_be_desc *plan,
				       const struct fake_be_desc *pack)
{
	struct attn_args a = { pointer_of(pack, plan->uid_x), pointer_of(pack, plan->uid_w),
			       pointer_of(pack, plan->uid_v), pointer_of(pack, plan->uid_o),
			       pointer_of(pack, plan->uid_s), plan->numel, plan->numel_s };
	if (!k_attn || !a.q || !a.k || !a.v || !a.o || !a.stats)
		return CUDNN_STATUS_BAD_PARAM;
	void *p[] = { &a };
	return cuLaunchKernel(k_attn, (unsigned)((a.n + 255) / 256), 1, 1, 256, 1, 1, 0,
			      h ? h->stream : NULL, p, NULL) == CUDA_SUCCESS
		       ? 0
		       : CUDNN_STATUS_BAD_PARAM;
}

/* ---- the legacy convolution ---- */

struct fake_cudnn_filter {
	int dtype, format, nb;
	int dims[MAX_DIMS];
};

FAKE_EXPORT cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *d)
{
	*d = calloc(1, sizeof(**d));
	return *d ? 0 : CUDNN_STATUS_BAD_PARAM;
}

FAKE_EXPORT cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t d, int dtype,
						     int format, int nb, const int *dims)
{
	if (nb < 1 || nb > MAX_DIMS)
		return CUDNN_STATUS_BAD_PARAM;
	d->dtype = dtype;
	d->format = format;
	d->nb = nb;
	memcpy(d->dims, dims, (size_t)nb * sizeof(int));
	return 0;
}

FAKE_EXPORT cudnnStatus_t cudnnGetFilterNdDescriptor(const cudnnFilterDescriptor_t d,
						     int nb_requested, int *dtype, int *format,
						     int *nb, int *dims)
{
	*dtype = d->dtype;
	*format = d->format;
	*nb = d->nb;
	memcpy(dims, d->dims, (size_t)(d->nb < nb_requested ? d->nb : nb_requested) * sizeof(int));
	return 0;
}

FAKE_EXPORT cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *d)
{
	*d = calloc(1, 16);
	return *d ? 0 : CUDNN_STATUS_BAD_PARAM;
}

static CUfunction k_conv_v7, k_dgrad, k_wgrad;
static pthread_once_t conv_v7_once = PTHREAD_ONCE_INIT;

/* dw[0] = sum of x dy: the kernel's struct is conv_args (x, w: dy, y: dw) */
static void run_wgrad(const void *args, unsigned grid, unsigned block)
{
	(void)grid, (void)block;
	struct conv_args a;
	memcpy(&a, args, sizeof(a));
	float sum = 0;
	for (int64_t i = 0; i < a.n; i++)
		sum += a.x[i] * a.w[i];
	a.y[0] = sum;
}

static void conv_v7_init(void)
{
	static const uint32_t off[] = { 0 }, size[] = { sizeof(struct conv_args) };
	/* the legacy API's kernels, by their names' first parts */
	k_conv_v7 = fake_cuda_register("implicit_convolve_sgemm_fake", 1, off, size, run_conv,
				       NULL);
	k_dgrad = fake_cuda_register("dgrad_engine_fake", 1, off, size, run_conv, NULL);
	k_wgrad = fake_cuda_register("wgrad_alg0_engine_fake", 1, off, size, run_wgrad, NULL);
}

static int64_t numel_of(const cudnnTensorDescriptor_t d)
{
	int64_t n = 1;
	for (int i = 0; i < d->nb; i++)
		n *= d->dims[i];
	return n;
}

static cudnnStatus_t launch_conv(CUfunction k, cudnnHandle_t h, const void *x, const void *w,
				 void *y, int64_t n)
{
	struct conv_args a = { x, w, y, NULL, n };
	void *p[] = { &a };
	return cuLaunchKernel(k, (unsigned)((n + 255) / 256), 1, 1, 256, 1, 1, 0, h->stream, p,
			      NULL) == CUDA_SUCCESS ? 0 : CUDNN_STATUS_BAD_PARAM;
}

/* one channel in, float: what the fake job asks */
static int one_channel(const cudnnTensorDescriptor_t t, const cudnnFilterDescriptor_t f)
{
	return t->dtype == CUDNN_DATA_FLOAT && f->dtype == CUDNN_DATA_FLOAT && f->nb >= 2 &&
	       f->dims[1] == 1;
}

FAKE_EXPORT cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void *alpha,
						  const cudnnTensorDescriptor_t xd, const void *x,
						  const cudnnFilterDescriptor_t wd, const void *w,
						  const cudnnConvolutionDescriptor_t conv, int algo,
						  void *ws, size_t ws_size, const void *beta,
						  const cudnnTensorDescriptor_t yd, void *y)
{
	(void)alpha, (void)conv, (void)algo, (void)ws, (void)ws_size, (void)beta;
	pthread_once(&conv_v7_once, conv_v7_init);
	if (!k_conv_v7 || !one_channel(xd, wd) || yd->nb != xd->nb)
		return CUDNN_STATUS_NOT_SUPPORTED;
	return launch_conv(k_conv_v7, h, x, w, y, numel_of(xd));
}

FAKE_EXPORT cudnnStatus_t cudnnConvolutionBackwardData(
	cudnnHandle_t h, const void *alpha, const cudnnFilterDescriptor_t wd, const void *w,
	const cudnnTensorDescriptor_t dyd, const void *dy, const cudnnConvolutionDescriptor_t conv,
	int algo, void *ws, size_t ws_size, const void *beta, const cudnnTensorDescriptor_t dxd,
	void *dx)
{
	(void)alpha, (void)conv, (void)algo, (void)ws, (void)ws_size, (void)beta;
	pthread_once(&conv_v7_once, conv_v7_init);
	if (!k_dgrad || !one_channel(dyd, wd) || dxd->nb != dyd->nb)
		return CUDNN_STATUS_NOT_SUPPORTED;
	return launch_conv(k_dgrad, h, dy, w, dx, numel_of(dyd));
}

FAKE_EXPORT cudnnStatus_t cudnnConvolutionBackwardFilter(
	cudnnHandle_t h, const void *alpha, const cudnnTensorDescriptor_t xd, const void *x,
	const cudnnTensorDescriptor_t dyd, const void *dy, const cudnnConvolutionDescriptor_t conv,
	int algo, void *ws, size_t ws_size, const void *beta, const cudnnFilterDescriptor_t dwd,
	void *dw)
{
	(void)alpha, (void)conv, (void)algo, (void)ws, (void)ws_size, (void)beta;
	pthread_once(&conv_v7_once, conv_v7_init);
	if (!k_wgrad || !one_channel(xd, dwd) || dyd->nb != xd->nb)
		return CUDNN_STATUS_NOT_SUPPORTED;
	return launch_conv(k_wgrad, h, x, dy, dw, numel_of(xd));
}
