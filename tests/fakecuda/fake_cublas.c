/* fake_cublas.c - a fake cuBLAS on the fake driver (fake_cublas.h).
 * Built twice: with FAKE_LT as libcublasLt.so.13 (cublasLt's API and the
 * kernels every multiply runs, as in cuBLAS, whose GEMMs run in
 * cublasLt), and without as libcublas.so.13 (the cublas<t>gemm API, on
 * top of it). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "fake.h"
#include "fake_cublas.h"

#ifdef FAKE_LT

/* One kernel's arguments, passed by value as one opaque struct. */
struct kargs {
	struct fake_gemm g;
	float *ws;              /* split-K: the two halves' sums, */
	long half;              /* half floats apart */
	int part;               /* -1 the whole product; 0, 1 a half of k into ws;
				 * 2 the reduction of ws into D */
};

static CUfunction k_whole, k_half, k_reduce;
static float *workspace;
#define WS_FLOATS (1 << 16)     /* per half */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static float op_a(const struct fake_gemm *g, int b, int i, int l)
{
	const float *a = g->a + b * g->sa;
	return g->ta ? a[l + (long)i * g->lda] : a[i + (long)l * g->lda];
}

static float op_b(const struct fake_gemm *g, int b, int l, int j)
{
	const float *p = g->b + b * g->sb;
	return g->tb ? p[j + (long)l * g->ldb] : p[l + (long)j * g->ldb];
}

static void run_kernel(const void *args, unsigned grid, unsigned block)
{
	struct kargs a;
	memcpy(&a, args, sizeof(a));
	const struct fake_gemm *g = &a.g;
	long mn = (long)g->m * g->n;
	float amax = 0;
	for (int b = 0; b < g->batch; b++)
		for (int j = 0; j < g->n; j++)
			for (int i = 0; i < g->m; i++) {
				float sum = 0;
				long at = b * mn + i + (long)j * g->m;
				if (a.part == 2) {
					sum = a.ws[at] + a.ws[a.half + at];
				} else {
					int lo = a.part == 1 ? g->k / 2 : 0;
					int hi = a.part == 0 ? g->k / 2 : g->k;
					for (int l = lo; l < hi; l++)
						sum += op_a(g, b, i, l) * op_b(g, b, l, j);
					if (a.part >= 0) {
						a.ws[a.part * a.half + at] = sum;
						continue;
					}
				}
				float v = g->alpha * sum;
				if (g->beta != 0)
					v += g->beta * g->c[b * g->sc + i + (long)j * g->ldc];
				if (g->bias)
					v += g->bias[i];
				g->d[b * g->sd + i + (long)j * g->ldd] = v;
				amax = fabsf(v) > amax || isnan(v) ? fabsf(v) : amax;
			}
	if (g->amax && a.part != 0 && a.part != 1)   /* by the kernel that writes D */
		*g->amax = amax;
}

static void init(void)
{
	static const uint32_t off[] = { 0 }, size[] = { sizeof(struct kargs) };
	/* names as cuBLAS 13's own kernels (C names, no signature) */
	k_whole = fake_cuda_register("nvjet_sss_tst_64x32_64x4_2x1_v_bz_TNN", 1, off, size,
				     run_kernel, NULL);
	k_half = fake_cuda_register("nvjet_sss_tst_64x32_64x4_2x1_v_bz_splitK_TNN", 1, off, size,
				    run_kernel, NULL);
	k_reduce = fake_cuda_register("cublasLt_splitKreduce_kernel_fake", 1, off, size,
				      run_kernel, NULL);
	CUdeviceptr ws = 0;
	if (cuMemAlloc_v2(&ws, 2 * WS_FLOATS * sizeof(float)) == CUDA_SUCCESS)
		workspace = (float *)ws;
}

static CUresult launch(CUfunction f, struct kargs *a, CUstream stream)
{
	void *p[] = { a };
	unsigned gx = (unsigned)(a->g.m + 63) / 64, gy = (unsigned)(a->g.n + 31) / 32;
	return cuLaunchKernel(f, gx, gy, (unsigned)a->g.batch, 128, 1, 1, 0, stream, p, NULL);
}

FAKE_EXPORT cublasStatus_t fake_cublas_run(const struct fake_gemm *g, CUstream stream)
{
	pthread_once(&once, init);
	if (!k_whole || g->m <= 0 || g->n <= 0 || g->k <= 0 || g->batch <= 0)
		return CUBLAS_STATUS_INVALID_VALUE;
	long mnb = (long)g->m * g->n * g->batch;
	struct kargs a = { .g = *g, .ws = workspace, .half = WS_FLOATS, .part = -1 };
	if (g->ws && g->ws_size >= 2 * mnb * sizeof(float)) {   /* the caller's */
		a.ws = g->ws;
		a.half = mnb;
	}
	if (g->k < FAKE_SPLITK_MIN || !a.ws || mnb > a.half)
		return launch(k_whole, &a, stream) == CUDA_SUCCESS ? 0 : CUBLAS_STATUS_INVALID_VALUE;
	for (a.part = 0; a.part <= 2; a.part++)
		if (launch(a.part == 2 ? k_reduce : k_half, &a, stream) != CUDA_SUCCESS)
			return CUBLAS_STATUS_INVALID_VALUE;
	return CUBLAS_STATUS_SUCCESS;
}

/* ---- cublasLt ---- */

struct fake_lt_handle {
	int unused;
};

struct fake_lt_layout {
	int32_t type, order, batch;
	uint64_t rows, cols;
	int64_t ld, stride;
};

struct fake_lt_desc {
	int32_t compute, scale, pointer_mode, ta, tb;
	uint32_t epilogue;
	const void *bias;
	float *amax;            /* CUBLASLT_MATMUL_DESC_AMAX_D_POINTER: max |D| written */
};

FAKE_EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t *h)
{
	*h = calloc(1, sizeof(**h));
	return *h ? 0 : CUBLAS_STATUS_INVALID_VALUE;
}

FAKE_EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, int type,
						      uint64_t rows, uint64_t cols, int64_t ld)
{
	*l = calloc(1, sizeof(**l));
	if (!*l)
		return CUBLAS_STATUS_INVALID_VALUE;
	**l = (struct fake_lt_layout){ .type = type, .order = CUBLASLT_ORDER_COL, .batch = 1,
				       .rows = rows, .cols = cols, .ld = ld };
	return 0;
}

FAKE_EXPORT cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l)
{
	free(l);
	return 0;
}

/* where an attribute lives, and its size */
static void *layout_field(cublasLtMatrixLayout_t l, int attr, size_t *size)
{
	switch (attr) {
	case CUBLASLT_MATRIX_LAYOUT_TYPE: *size = 4; return &l->type;
	case CUBLASLT_MATRIX_LAYOUT_ORDER: *size = 4; return &l->order;
	case CUBLASLT_MATRIX_LAYOUT_ROWS: *size = 8; return &l->rows;
	case CUBLASLT_MATRIX_LAYOUT_COLS: *size = 8; return &l->cols;
	case CUBLASLT_MATRIX_LAYOUT_LD: *size = 8; return &l->ld;
	case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: *size = 4; return &l->batch;
	case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: *size = 8; return &l->stride;
	}
	return NULL;
}

static void *desc_field(cublasLtMatmulDesc_t d, int attr, size_t *size)
{
	switch (attr) {
	case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: *size = 4; return &d->compute;
	case CUBLASLT_MATMUL_DESC_SCALE_TYPE: *size = 4; return &d->scale;
	case CUBLASLT_MATMUL_DESC_POINTER_MODE: *size = 4; return &d->pointer_mode;
	case CUBLASLT_MATMUL_DESC_TRANSA: *size = 4; return &d->ta;
	case CUBLASLT_MATMUL_DESC_TRANSB: *size = 4; return &d->tb;
	case CUBLASLT_MATMUL_DESC_EPILOGUE: *size = 4; return &d->epilogue;
	case CUBLASLT_MATMUL_DESC_BIAS_POINTER: *size = 8; return &d->bias;
	case CUBLASLT_MATMUL_DESC_AMAX_D_POINTER: *size = 8; return &d->amax;
	}
	return NULL;
}

static cublasStatus_t set_field(void *field, size_t want, const void *buf, size_t size)
{
	if (!field || size != want)
		return CUBLAS_STATUS_INVALID_VALUE;
	memcpy(field, buf, size);
	return 0;
}

/* as cuBLAS: sizeWritten is the attribute's size, the buffer too small an error */
static cublasStatus_t get_field(const void *field, size_t have, void *buf, size_t size,
				size_t *written)
{
	if (!field)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (written)
		*written = have;
	if (size < have)
		return CUBLAS_STATUS_INVALID_VALUE;
	memcpy(buf, field, have);
	return 0;
}

FAKE_EXPORT cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l, int attr,
							    const void *buf, size_t size)
{
	size_t want = 0;
	void *f = layout_field(l, attr, &want);
	return set_field(f, want, buf, size);
}

FAKE_EXPORT cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t l, int attr,
							    void *buf, size_t size,
							    size_t *written)
{
	size_t have = 0;
	void *f = layout_field(l, attr, &have);
	return get_field(f, have, buf, size, written);
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, int compute,
						    int scale)
{
	*d = calloc(1, sizeof(**d));
	if (!*d)
		return CUBLAS_STATUS_INVALID_VALUE;
	**d = (struct fake_lt_desc){ .compute = compute, .scale = scale,
				     .epilogue = CUBLASLT_EPILOGUE_DEFAULT };
	return 0;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d)
{
	free(d);
	return 0;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d, int attr,
							  const void *buf, size_t size)
{
	size_t want = 0;
	void *f = desc_field(d, attr, &want);
	return set_field(f, want, buf, size);
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t d, int attr,
							  void *buf, size_t size, size_t *written)
{
	size_t have = 0;
	void *f = desc_field(d, attr, &have);
	return get_field(f, have, buf, size, written);
}

FAKE_EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t d,
					  const void *alpha, const void *A,
					  cublasLtMatrixLayout_t ad, const void *B,
					  cublasLtMatrixLayout_t bd, const void *beta, const void *C,
					  cublasLtMatrixLayout_t cd, void *D,
					  cublasLtMatrixLayout_t dd, const void *algo, void *ws,
					  size_t ws_size, CUstream stream)
{
	(void)h, (void)algo;
	const struct fake_lt_layout *l[] = { ad, bd, cd, dd };
	for (int i = 0; i < 4; i++)
		if (l[i]->type != FAKE_CUDA_R_32F || l[i]->order != CUBLASLT_ORDER_COL)
			return CUBLAS_STATUS_NOT_SUPPORTED;
	if (d->pointer_mode != CUBLAS_POINTER_MODE_HOST)
		return CUBLAS_STATUS_NOT_SUPPORTED;
	struct fake_gemm g = {
		.a = A, .b = B, .c = C, .d = D,
		.bias = d->epilogue & CUBLASLT_EPILOGUE_BIAS ? d->bias : NULL,
		.m = (int)dd->rows, .n = (int)dd->cols,
		.k = (int)(d->ta ? ad->rows : ad->cols),
		.lda = (int)ad->ld, .ldb = (int)bd->ld, .ldc = (int)cd->ld, .ldd = (int)dd->ld,
		.ta = d->ta, .tb = d->tb, .batch = dd->batch,
		.sa = ad->stride, .sb = bd->stride, .sc = cd->stride, .sd = dd->stride,
		.ws = ws, .ws_size = ws_size, .amax = d->amax,
	};
	memcpy(&g.alpha, alpha, 4);
	memcpy(&g.beta, beta, 4);
	return fake_cublas_run(&g, stream);
}

#else /* libcublas.so.13 */

struct fake_cublas_handle {
	CUstream stream;
	int pointer_mode;
	void *ws;               /* cublasSetWorkspace_v2's, or NULL */
	size_t ws_size;
};

FAKE_EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
	*h = calloc(1, sizeof(**h));
	return *h ? 0 : CUBLAS_STATUS_INVALID_VALUE;
}

FAKE_EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t h, CUstream s)
{
	h->stream = s;
	return 0;
}

FAKE_EXPORT cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t h, void *ws, size_t size)
{
	h->ws = ws;
	h->ws_size = size;
	return 0;
}

FAKE_EXPORT cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t h, int *mode)
{
	*mode = h->pointer_mode;
	return 0;
}

FAKE_EXPORT cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t h, int mode)
{
	h->pointer_mode = mode;
	return 0;
}

static cublasStatus_t strided(cublasHandle_t h, int ta, int tb, int m, int n, int k,
			      const float *alpha, const float *A, int lda, long long sa,
			      const float *B, int ldb, long long sb, const float *beta, float *C,
			      int ldc, long long sc, int batch)
{
	if (h->pointer_mode != CUBLAS_POINTER_MODE_HOST)
		return CUBLAS_STATUS_NOT_SUPPORTED;
	struct fake_gemm g = { .a = A, .b = B, .c = C, .d = C, .m = m, .n = n, .k = k,
			       .lda = lda, .ldb = ldb, .ldc = ldc, .ldd = ldc, .ta = ta, .tb = tb,
			       .batch = batch, .sa = sa, .sb = sb, .sc = sc, .sd = sc,
			       .alpha = *alpha, .beta = *beta, .ws = h->ws,
			       .ws_size = h->ws_size };
	return fake_cublas_run(&g, h->stream);
}

FAKE_EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t h, int ta, int tb, int m, int n, int k,
					  const float *alpha, const float *A, int lda,
					  const float *B, int ldb, const float *beta, float *C,
					  int ldc)
{
	return strided(h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}

static int fp32(int at, int bt, int ct, int compute)
{
	return at == FAKE_CUDA_R_32F && bt == FAKE_CUDA_R_32F && ct == FAKE_CUDA_R_32F &&
	       (compute == CUBLAS_COMPUTE_32F || compute == CUBLAS_COMPUTE_32F_FAST_TF32);
}

FAKE_EXPORT cublasStatus_t cublasSgemmEx(cublasHandle_t h, int ta, int tb, int m, int n, int k,
					 const float *alpha, const void *A, int at, int lda,
					 const void *B, int bt, int ldb, const float *beta, void *C,
					 int ct, int ldc)
{
	if (!fp32(at, bt, ct, CUBLAS_COMPUTE_32F))
		return CUBLAS_STATUS_NOT_SUPPORTED;
	return strided(h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}

FAKE_EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t h, int ta, int tb, int m, int n, int k,
					const void *alpha, const void *A, int at, int lda,
					const void *B, int bt, int ldb, const void *beta, void *C,
					int ct, int ldc, int compute, int algo)
{
	(void)algo;
	if (!fp32(at, bt, ct, compute))
		return CUBLAS_STATUS_NOT_SUPPORTED;
	return strided(h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}

FAKE_EXPORT cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, int ta, int tb, int m,
						      int n, int k, const void *alpha,
						      const void *A, int at, int lda,
						      long long sa, const void *B, int bt,
						      int ldb, long long sb, const void *beta,
						      void *C, int ct, int ldc, long long sc,
						      int batch, int compute, int algo)
{
	(void)algo;
	if (!fp32(at, bt, ct, compute))
		return CUBLAS_STATUS_NOT_SUPPORTED;
	return strided(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
}


FAKE_EXPORT cublasStatus_t cublasSgemv_v2(cublasHandle_t h, int trans, int m, int n,
					  const float *alpha, const float *A, int lda,
					  const float *x, int incx, const float *beta, float *y,
					  int incy)
{
	/* y (op(A)'s rows x 1) = op(A) x: a product with one column, on the
	 * same kernels (cuBLAS's gemv kernels are its own; both opaque) */
	int t = trans != CUBLAS_OP_N;
	if (incx != 1 || incy != 1)
		return CUBLAS_STATUS_NOT_SUPPORTED;
	return strided(h, trans, CUBLAS_OP_N, t ? n : m, 1, t ? m : n, alpha, A, lda, 0, x,
		       t ? m : n, 0, beta, y, t ? n : m, 0, 1);
}

/* ---- dot and trsm: kernels of their own, opaque as cuBLAS's ---- */

struct l1args {
	const float *a, *b;     /* dot: x, y (inc apart); trsm: A (lda), B (ldb) */
	float *out;             /* dot: the result; trsm: B */
	float *ws;              /* dot: the partial sums */
	int n, m, inca, incb, lda, ldb, unit_diag;
	float alpha;
};

static CUfunction k_dot, k_dot_reduce, k_trsm;
static float *dot_ws;
#define DOT_PARTS 4
static pthread_once_t l1_once = PTHREAD_ONCE_INIT;

/* dot_kernel: DOT_PARTS partial sums into the workspace */
static void run_dot(const void *args, unsigned grid, unsigned block)
{
	(void)grid, (void)block;
	struct l1args a;
	memcpy(&a, args, sizeof(a));
	for (int p = 0; p < DOT_PARTS; p++) {
		float sum = 0;
		for (int i = p; i < a.n; i += DOT_PARTS)
			sum += a.a[(long)i * a.inca] * a.b[(long)i * a.incb];
		a.ws[p] = sum;
	}
}

/* reduce_1Block_kernel: the partial sums into the result */
static void run_dot_reduce(const void *args, unsigned grid, unsigned block)
{
	(void)grid, (void)block;
	struct l1args a;
	memcpy(&a, args, sizeof(a));
	float sum = 0;
	for (int p = 0; p < DOT_PARTS; p++)
		sum += a.ws[p];
	*a.out = sum;
}

/* trsm, left, lower, not transposed: A X = alpha B by forward
 * substitution, X over B, column by column */
static void run_trsm(const void *args, unsigned grid, unsigned block)
{
	(void)grid, (void)block;
	struct l1args a;
	memcpy(&a, args, sizeof(a));
	for (int j = 0; j < a.n; j++) {
		float *b = a.out + (long)j * a.ldb;
		for (int i = 0; i < a.m; i++) {
			float v = a.alpha * b[i];
			for (int l = 0; l < i; l++)
				v -= a.a[i + (long)l * a.lda] * b[l];
			b[i] = a.unit_diag ? v : v / a.a[i + (long)i * a.lda];
		}
	}
}

static void l1_init(void)
{
	static const uint32_t off[] = { 0 }, size[] = { sizeof(struct l1args) };
	/* cuBLAS's own names, as CUPTI gives them demangled */
	k_dot = fake_cuda_register("dot_kernel_fake<float, 128, 0>", 1, off, size, run_dot,
				   NULL);
	k_dot_reduce = fake_cuda_register("reduce_1Block_kernel_fake<float, 128, 7>", 1, off,
					  size, run_dot_reduce, NULL);
	k_trsm = fake_cuda_register("trsm_left_kernel_fake<float, 256, 4>", 1, off, size,
				    run_trsm, NULL);
	CUdeviceptr ws = 0;
	if (cuMemAlloc_v2(&ws, DOT_PARTS * sizeof(float)) == CUDA_SUCCESS)
		dot_ws = (float *)ws;
}

static cublasStatus_t l1_launch(CUfunction f, struct l1args *a, CUstream stream)
{
	void *p[] = { a };
	return cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, stream, p, NULL) == CUDA_SUCCESS
		       ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

/* device pointer mode only (torch's): the result stays on the device */
FAKE_EXPORT cublasStatus_t cublasSdot_v2(cublasHandle_t h, int n, const float *x, int incx,
					 const float *y, int incy, float *result)
{
	pthread_once(&l1_once, l1_init);
	if (h->pointer_mode != CUBLAS_POINTER_MODE_DEVICE || !k_dot || !dot_ws || n <= 0)
		return CUBLAS_STATUS_NOT_SUPPORTED;
	struct l1args a = { .a = x, .b = y, .out = result, .ws = dot_ws, .n = n, .inca = incx,
			    .incb = incy };
	cublasStatus_t st = l1_launch(k_dot, &a, h->stream);
	return st ? st : l1_launch(k_dot_reduce, &a, h->stream);
}

/* left, lower, not transposed; host pointer mode */
FAKE_EXPORT cublasStatus_t cublasStrsm_v2(cublasHandle_t h, int side, int uplo, int trans,
					  int diag, int m, int n, const float *alpha,
					  const float *A, int lda, float *B, int ldb)
{
	pthread_once(&l1_once, l1_init);
	if (side != CUBLAS_SIDE_LEFT || uplo != CUBLAS_FILL_MODE_LOWER || trans != CUBLAS_OP_N ||
	    h->pointer_mode != CUBLAS_POINTER_MODE_HOST || !k_trsm || m <= 0 || n <= 0)
		return CUBLAS_STATUS_NOT_SUPPORTED;
	struct l1args a = { .a = A, .out = B, .m = m, .n = n, .lda = lda, .ldb = ldb,
			    .unit_diag = diag == CUBLAS_DIAG_UNIT, .alpha = *alpha };
	return l1_launch(k_trsm, &a, h->stream);
}

/* ---- complex64 products: a kernel of their own (cuBLAS's cgemm
 * kernels are not cublasLt's), opaque ---- */

struct cgemm_args {
	const float *a, *b;     /* m x k and k x n complex values, column-major */
	float *d;               /* m x n, ldd */
	int m, n, k, lda, ldb, ldd;
	float alpha[2];         /* beta 0 only */
};

static CUfunction k_cgemm;
static pthread_once_t c_once = PTHREAD_ONCE_INIT;

static void run_cgemm(const void *args, unsigned grid, unsigned block)
{
	(void)grid, (void)block;
	struct cgemm_args a;
	memcpy(&a, args, sizeof(a));
	for (int j = 0; j < a.n; j++)
		for (int i = 0; i < a.m; i++) {
			float re = 0, im = 0;
			for (int l = 0; l < a.k; l++) {
				const float *x = a.a + 2 * (i + (long)l * a.lda);
				const float *y = a.b + 2 * (l + (long)j * a.ldb);
				re += x[0] * y[0] - x[1] * y[1];
				im += x[0] * y[1] + x[1] * y[0];
			}
			float *out = a.d + 2 * (i + (long)j * a.ldd);
			out[0] = a.alpha[0] * re - a.alpha[1] * im;
			out[1] = a.alpha[0] * im + a.alpha[1] * re;
		}
}

static void c_init(void)
{
	static const uint32_t off[] = { 0 }, size[] = { sizeof(struct cgemm_args) };
	k_cgemm = fake_cuda_register("cutlass_80_tensorop_c1688gemm_fake_64x64_nn_align1", 1, off,
				     size, run_cgemm, NULL);
}

/* not transposed, beta 0, host pointer mode */
FAKE_EXPORT cublasStatus_t cublasCgemm_v2(cublasHandle_t h, int ta, int tb, int m, int n, int k,
					  const void *alpha, const void *A, int lda,
					  const void *B, int ldb, const void *beta, void *C,
					  int ldc)
{
	float b[2];
	pthread_once(&c_once, c_init);
	memcpy(b, beta, sizeof(b));
	if (ta != CUBLAS_OP_N || tb != CUBLAS_OP_N || b[0] != 0 || b[1] != 0 ||
	    h->pointer_mode != CUBLAS_POINTER_MODE_HOST || !k_cgemm || m <= 0 || n <= 0 || k <= 0)
		return CUBLAS_STATUS_NOT_SUPPORTED;
	struct cgemm_args a = { .a = A, .b = B, .d = C, .m = m, .n = n, .k = k, .lda = lda,
				.ldb = ldb, .ldd = ldc };
	memcpy(a.alpha, alpha, sizeof(a.alpha));
	void *p[] = { &a };
	return cuLaunchKernel(k_cgemm, (unsigned)(m + 63) / 64, (unsigned)(n + 63) / 64, 1, 128, 1,
			      1, 0, h->stream, p, NULL) == CUDA_SUCCESS
		       ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

#endif
