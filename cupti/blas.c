/* blas.c - cuBLAS calls seen at the call (blas.h).
 *
 * cuBLAS's types are declared here as its headers declare them (cuBLAS
 * 13's cublas_api.h and cublasLt.h): the CUDA toolkit the agent is built
 * with need not carry cuBLAS, and nothing links it.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "../agent/alog.h"
#include "blas.h"
#include "blas_workspace.h"
#include "defer.h"
#include "gotpatch.h"
#include "gpu.h"

typedef int blas_status;                   /* cublasStatus_t, 0: success */
typedef void *blas_handle;                 /* cublasHandle_t */
typedef void *lt_handle, *lt_desc, *lt_layout;
/* cublas{C,Z}gemm_v2 and their strided-batched forms: cuComplex and
 * cuDoubleComplex (two floats, two doubles) by address */
typedef blas_status (*complex_gemm_fn)(blas_handle, int, int, int, int, int, const void *,
				       const void *, int, const void *, int, const void *, void *,
				       int);
typedef blas_status (*complex_strided_fn)(blas_handle, int, int, int, int, int, const void *,
					  const void *, int, long long, const void *, int,
					  long long, const void *, void *, int, long long, int);
enum { POINTER_MODE_HOST = 0, POINTER_MODE_DEVICE = 1 };   /* cublasPointerMode_t */
/* cublasLtPointerMode_t beyond host (0) and device (1) */
enum { LT_POINTER_BETA_ZERO = 3, LT_POINTER_BETA_HOST = 4 };
/* cublasLtMatrixLayoutAttribute_t */
enum { LT_TYPE = 0, LT_ORDER = 1, LT_ROWS = 2, LT_COLS = 3, LT_LD = 4, LT_BATCH = 5,
       LT_STRIDE = 6 };
enum { LT_ORDER_COL = 0, LT_ORDER_ROW = 1 };
/* cublasLtMatmulDescAttributes_t */
enum { LT_SCALE_TYPE = 1, LT_POINTER_MODE = 2, LT_EPILOGUE = 7, LT_BIAS_POINTER = 8,
       LT_AMAX_D_POINTER = 21 };
/* cublasLtEpilogue_t bits: the bias added (read), or its gradient written;
 * an auxiliary output written (GELU's or ReLU's input, for the backward) */
enum { LT_EPI_BIAS = 4, LT_EPI_BGRAD = 16 | 256 | 512, LT_EPI_AUX = 128 };

static struct {
	blas_status (*sgemm)(blas_handle, int, int, int, int, int, const float *, const float *,
			     int, const float *, int, const float *, float *, int);
	blas_status (*dgemm)(blas_handle, int, int, int, int, int, const double *, const double *,
			     int, const double *, int, const double *, double *, int);
	blas_status (*sgemm_ex)(blas_handle, int, int, int, int, int, const float *, const void *,
				int, int, const void *, int, int, const float *, void *, int, int);
	blas_status (*gemm_ex)(blas_handle, int, int, int, int, int, const void *, const void *,
			       int, int, const void *, int, int, const void *, void *, int, int,
			       int, int);
	blas_status (*sgemm_strided)(blas_handle, int, int, int, int, int, const float *,
				     const float *, int, long long, const float *, int, long long,
				     const float *, float *, int, long long, int);
	blas_status (*dgemm_strided)(blas_handle, int, int, int, int, int, const double *,
				     const double *, int, long long, const double *, int,
				     long long, const double *, double *, int, long long, int);
	blas_status (*gemm_strided_ex)(blas_handle, int, int, int, int, int, const void *,
				       const void *, int, int, long long, const void *, int, int,
				       long long, const void *, void *, int, int, long long, int,
				       int, int);
	complex_gemm_fn cgemm, zgemm;
	complex_strided_fn cgemm_strided, zgemm_strided;
	blas_status (*sgemv)(blas_handle, int, int, int, const float *, const float *, int,
			     const float *, int, const float *, float *, int);
	blas_status (*dgemv)(blas_handle, int, int, int, const double *, const double *, int,
			     const double *, int, const double *, double *, int);
	blas_status (*sdot)(blas_handle, int, const float *, int, const float *, int, float *);
	blas_status (*ddot)(blas_handle, int, const double *, int, const double *, int, double *);
	blas_status (*dot_ex)(blas_handle, int, const void *, int, int, const void *, int, int,
			      void *, int, int);
	blas_status (*strsm)(blas_handle, int, int, int, int, int, int, const float *,
			     const float *, int, float *, int);
	blas_status (*dtrsm)(blas_handle, int, int, int, int, int, int, const double *,
			     const double *, int, double *, int);
	blas_status (*lt_matmul)(lt_handle, lt_desc, const void *, const void *, lt_layout,
				 const void *, lt_layout, const void *, const void *, lt_layout,
				 void *, lt_layout, const void *, void *, size_t, CUstream);
	/* what the wrappers ask */
	blas_status (*get_pointer_mode)(blas_handle, int *);
	blas_status (*lt_layout_get)(lt_layout, int, void *, size_t, size_t *);
	blas_status (*lt_desc_get)(lt_desc, int, void *, size_t, size_t *);
	blas_status (*set_workspace)(blas_handle, void *, size_t);
} real;

/* ---- the call in progress on this thread ---- */

static __thread struct {
	int depth;              /* wrapped calls nested (cuBLAS calling itself) */
	int planned;
	struct np_gemm_plan plan;
	struct np_kfunc *last;  /* its latest kernel launch */
	CUstream stream;
	CUcontext ctx;
	/* what its kernels may write (np_blas_call_writes): the plan's
	 * outputs, then the workspace and the like; nwrites -1: not all
	 * known */
	uint64_t lo[NP_CALL_WRITES], hi[NP_CALL_WRITES];
	int nwrites;
} cur;

static blas_status end(blas_status r)
{
	if (--cur.depth)
		return r;
	if (cur.planned && r == 0 && cur.last)
		np_gpu_gemm_done(&cur.plan, cur.last, cur.stream, cur.ctx);
	cur.planned = 0;
	cur.last = NULL;
	return r;
}

int np_blas_idle(void)
{
	return !cur.depth && np_gpu_launches();
}

int np_blas_begin_plan(const struct np_gemm_plan *p)
{
	if (cur.depth++ || !p || !np_gpu_launches())
		return 0;
	cur.plan = *p;
	cur.planned = 1;
	cur.last = NULL;
	cur.nwrites = -1;   /* cuDNN's, cuFFT's: not said (blas.h) */
	return 1;
}

/* The planned call's writes: each output of its plan, whole (cuBLAS's
 * D; a cuDNN graph's every output), and the n ranges [lo[i], hi[i])
 * besides (a workspace, a batch norm's statistics; empty ones left
 * out).  Known 0, or an output of unknown extent or more ranges than
 * kept: not all known. */
static void set_writes(int known, const uint64_t *lo, const uint64_t *hi, int n)
{
	int k = 0;
	cur.nwrites = -1;
	if (!known || cur.plan.note_only)
		return;
	for (int i = 0; i <= cur.plan.n_more; i++) {
		const struct np_kbuf *d = i ? &cur.plan.more[i - 1] : &cur.plan.out;
		if (!d->numel || d->dtype >= NP_DT_MAX)
			return;
		cur.lo[k] = d->ptr;
		cur.hi[k++] = d->ptr + np_kbuf_bytes(d);
	}
	for (int i = 0; i < n; i++) {
		if (lo[i] >= hi[i])
			continue;
		if (k == NP_CALL_WRITES)
			return;
		cur.lo[k] = lo[i];
		cur.hi[k++] = hi[i];
	}
	cur.nwrites = k;
}

void np_blas_writes_besides(const uint64_t *lo, const uint64_t *hi, int n)
{
	if (cur.depth == 1 && cur.planned)
		set_writes(1, lo, hi, n);
}

int np_blas_call_writes(uint64_t lo[NP_CALL_WRITES], uint64_t hi[NP_CALL_WRITES])
{
	if (!cur.depth)
		return 0;
	if (!cur.planned || cur.depth != 1 || cur.nwrites < 0)
		return -1;
	for (int i = 0; i < cur.nwrites; i++) {
		lo[i] = cur.lo[i];
		hi[i] = cur.hi[i];
	}
	return cur.nwrites;
}

int np_blas_end(int r)
{
	return end(r);
}

/* the start of a cuBLAS call, planned from its arguments when it can be;
 * what it writes besides D: the workspace [ws_lo, ws_hi), known or not
 * (set_writes) */
static int begin_ws(const struct np_gemm_call *c, int ws_known, uint64_t ws_lo, uint64_t ws_hi)
{
	struct np_gemm_plan p;
	if (!np_blas_begin_plan(np_blas_idle() && np_gemm_plan(c, &p) == 0 ? &p : NULL))
		return 0;
	set_writes(ws_known, &ws_lo, &ws_hi, 1);
	return 1;
}

/* the same for a call on handle h of the cublas<t> API: its workspace
 * is the handle's (blas_workspace.h) */
static int begin(const struct np_gemm_call *c, blas_handle h)
{
	uint64_t lo = 0, hi = 0;
	int known = np_defer_window() > 0 && np_blas_ws_get(h, &lo, &hi) >= 0;
	return begin_ws(c, known, lo, hi);
}

int np_blas_claim(struct np_kfunc *f, CUstream stream, CUcontext ctx)
{
	if (!cur.planned || cur.depth != 1)
		return 0;
	cur.last = f;
	cur.stream = stream;
	cur.ctx = ctx;
	return 1;
}

/* the handle's cublasPointerMode_t, -1 when it cannot be asked */
static int pointer_mode(blas_handle h)
{
	int mode = -1;
	if (!real.get_pointer_mode || real.get_pointer_mode(h, &mode) != 0)
		return -1;
	return mode;
}

/* beta of a cublas<t>gemm call: in host memory unless the handle's
 * pointer mode says device; complex: two parts of size bytes */
static enum np_gemm_beta beta_of(blas_handle h, const void *beta, unsigned size, int complex)
{
	if (!size || pointer_mode(h) != POINTER_MODE_HOST)
		return NP_GEMM_BETA_UNKNOWN;
	if (complex)
		return np_gemm_complex_zero(beta, size) ? NP_GEMM_BETA_ZERO : NP_GEMM_BETA_SET;
	return np_gemm_scalar_zero(beta, size) ? NP_GEMM_BETA_ZERO : NP_GEMM_BETA_SET;
}

/* alpha's and beta's size for a cublasComputeType_t (or the cudaDataType
 * older callers passed), 0 when not known */
static unsigned scalar_size(int compute)
{
	switch (compute) {
	case 64: case 65: case 2: return 2;                          /* 16F */
	case 68: case 69: case 74: case 75: case 77: case 78: case 0: /* 32F */
	case 72: case 73: return 4;                                  /* 32I */
	case 70: case 71: case 79: case 1: return 8;                 /* 64F */
	}
	return 0;
}

/* begin() for a cublas<t>gemm-style call: its beta read first (only
 * when the call will be planned: it asks the handle), of size bytes, or
 * two parts of size bytes when C is complex */
static void begin_v2(struct np_gemm_call *c, blas_handle h, const void *beta, unsigned size)
{
	if (np_blas_idle())
		c->beta = beta_of(h, beta, size, np_gemm_complex_dtype(c->d.cuda_dtype) >= 0);
	begin(c, h);
}

enum { R32F = 0, R64F = 1, C32F = 4, C64F = 5 };

static struct np_gemm_call call_of(int ta, int tb, int m, int n, int k, const void *A, int at,
				   int lda, long long sa, const void *B, int bt, int ldb,
				   long long sb, void *C, int ct, int ldc, long long sc, int batch)
{
	struct np_gemm_call c = {
		.a = np_gemm_operand((uintptr_t)A, ta, m, k, lda, sa, batch, at),
		.b = np_gemm_operand((uintptr_t)B, tb, k, n, ldb, sb, batch, bt),
		.d = np_gemm_operand((uintptr_t)C, 0, m, n, ldc, sc, batch, ct),
	};
	c.c = c.d;
	return c;
}

/* ---- the wrappers: the real function's signature each ---- */

static blas_status w_sgemm(blas_handle h, int ta, int tb, int m, int n, int k, const float *alpha,
			   const float *A, int lda, const float *B, int ldb, const float *beta,
			   float *C, int ldc)
{
	struct np_gemm_call c = call_of(ta, tb, m, n, k, A, R32F, lda, 0, B, R32F, ldb, 0, C, R32F,
					ldc, 0, 1);
	begin_v2(&c, h, beta, 4);
	return end(real.sgemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc));
}

static blas_status w_dgemm(blas_handle h, int ta, int tb, int m, int n, int k,
			   const double *alpha, const double *A, int lda, const double *B, int ldb,
			   const double *beta, double *C, int ldc)
{
	struct np_gemm_call c = call_of(ta, tb, m, n, k, A, R64F, lda, 0, B, R64F, ldb, 0, C, R64F,
					ldc, 0, 1);
	begin_v2(&c, h, beta, 8);
	return end(real.dgemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc));
}

/* fp16 or bf16 data, float scalars and accumulation (torch's half GEMM
 * on some paths) */
static blas_status w_sgemm_ex(blas_handle h, int ta, int tb, int m, int n, int k,
			      const float *alpha, const void *A, int at, int lda, const void *B,
			      int bt, int ldb, const float *beta, void *C, int ct, int ldc)
{
	struct np_gemm_call c = call_of(ta, tb, m, n, k, A, at, lda, 0, B, bt, ldb, 0, C, ct, ldc,
					0, 1);
	begin_v2(&c, h, beta, 4);
	return end(real.sgemm_ex(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct,
				 ldc));
}

static blas_status w_gemm_ex(blas_handle h, int ta, int tb, int m, int n, int k,
			     const void *alpha, const void *A, int at, int lda, const void *B,
			     int bt, int ldb, const void *beta, void *C, int ct, int ldc,
			     int compute, int algo)
{
	struct np_gemm_call c = call_of(ta, tb, m, n, k, A, at, lda, 0, B, bt, ldb, 0, C, ct, ldc,
					0, 1);
	begin_v2(&c, h, beta, scalar_size(compute));
	return end(real.gemm_ex(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct,
				ldc, compute, algo));
}

static blas_status w_sgemm_strided(blas_handle h, int ta, int tb, int m, int n, int k,
				   const float *alpha, const float *A, int lda, long long sa,
				   const float *B, int ldb, long long sb, const float *beta,
				   float *C, int ldc, long long sc, int batch)
{
	struct np_gemm_call c = call_of(ta, tb, m, n, k, A, R32F, lda, sa, B, R32F, ldb, sb, C,
					R32F, ldc, sc, batch);
	begin_v2(&c, h, beta, 4);
	return end(real.sgemm_strided(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C,
				      ldc, sc, batch));
}

static blas_status w_dgemm_strided(blas_handle h, int ta, int tb, int m, int n, int k,
				   const double *alpha, const double *A, int lda, long long sa,
				   const double *B, int ldb, long long sb, const double *beta,
				   double *C, int ldc, long long sc, int batch)
{
	struct np_gemm_call c = call_of(ta, tb, m, n, k, A, R64F, lda, sa, B, R64F, ldb, sb, C,
					R64F, ldc, sc, batch);
	begin_v2(&c, h, beta, 8);
	return end(real.dgemm_strided(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C,
				      ldc, sc, batch));
}

static blas_status w_gemm_strided_ex(blas_handle h, int ta, int tb, int m, int n, int k,
				     const void *alpha, const void *A, int at, int lda,
				     long long sa, const void *B, int bt, int ldb, long long sb,
				     const void *beta, void *C, int ct, int ldc, long long sc,
				     int batch, int compute, int algo)
{
	struct np_gemm_call c = call_of(ta, tb, m, n, k, A, at, lda, sa, B, bt, ldb, sb, C, ct,
					ldc, sc, batch);
	begin_v2(&c, h, beta, scalar_size(compute));
	return end(real.gemm_strided_ex(h, ta, tb, m, n, k, alpha, A, at, lda, sa, B, bt, ldb, sb,
					beta, C, ct, ldc, sc, batch, compute, algo));
}

/* complex products (torch's matmul, bmm and einsum of complex64 and
 * complex128 tensors: a spectral layer's weights times an FFT), of
 * cudaDataType type, each part of alpha and beta part bytes; batch 1
 * and strides 0 for the unbatched calls */
static blas_status complex_gemm(complex_gemm_fn fn, complex_strided_fn strided, int type,
				unsigned part, blas_handle h, int ta, int tb, int m, int n, int k,
				const void *alpha, const void *A, int lda, long long sa,
				const void *B, int ldb, long long sb, const void *beta, void *C,
				int ldc, long long sc, int batch)
{
	struct np_gemm_call c = call_of(ta, tb, m, n, k, A, type, lda, sa, B, type, ldb, sb, C,
					type, ldc, sc, batch);
	begin_v2(&c, h, beta, part);
	return end(fn ? fn(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc)
		      : strided(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc,
				sc, batch));
}

static blas_status w_cgemm(blas_handle h, int ta, int tb, int m, int n, int k, const void *alpha,
			   const void *A, int lda, const void *B, int ldb, const void *beta,
			   void *C, int ldc)
{
	return complex_gemm(real.cgemm, NULL, C32F, 4, h, ta, tb, m, n, k, alpha, A, lda, 0, B,
			    ldb, 0, beta, C, ldc, 0, 1);
}

static blas_status w_zgemm(blas_handle h, int ta, int tb, int m, int n, int k, const void *alpha,
			   const void *A, int lda, const void *B, int ldb, const void *beta,
			   void *C, int ldc)
{
	return complex_gemm(real.zgemm, NULL, C64F, 8, h, ta, tb, m, n, k, alpha, A, lda, 0, B,
			    ldb, 0, beta, C, ldc, 0, 1);
}

static blas_status w_cgemm_strided(blas_handle h, int ta, int tb, int m, int n, int k,
				   const void *alpha, const void *A, int lda, long long sa,
				   const void *B, int ldb, long long sb, const void *beta, void *C,
				   int ldc, long long sc, int batch)
{
	return complex_gemm(NULL, real.cgemm_strided, C32F, 4, h, ta, tb, m, n, k, alpha, A, lda,
			    sa, B, ldb, sb, beta, C, ldc, sc, batch);
}

static blas_status w_zgemm_strided(blas_handle h, int ta, int tb, int m, int n, int k,
				   const void *alpha, const void *A, int lda, long long sa,
				   const void *B, int ldb, long long sb, const void *beta, void *C,
				   int ldc, long long sc, int batch)
{
	return complex_gemm(NULL, real.zgemm_strided, C64F, 8, h, ta, tb, m, n, k, alpha, A, lda,
			    sa, B, ldb, sb, beta, C, ldc, sc, batch);
}

/* ---- the other calls torch makes with a floating result: a matrix
 * times a vector (torch.mv, addmv; a Linear of one unbatched sample),
 * a dot product (torch.dot), a triangular solve (triangular_solve, the
 * Cholesky and LU solves): each result is planned as a product's D ---- */

static blas_status w_sgemv(blas_handle h, int trans, int m, int n, const float *alpha,
			   const float *A, int lda, const float *x, int incx, const float *beta,
			   float *y, int incy)
{
	struct np_gemm_call c = np_gemm_gemv(trans, m, n, (uintptr_t)A, lda, (uintptr_t)x,
						  incx, (uintptr_t)y, incy, R32F);
	begin_v2(&c, h, beta, 4);
	return end(real.sgemv(h, trans, m, n, alpha, A, lda, x, incx, beta, y, incy));
}

static blas_status w_dgemv(blas_handle h, int trans, int m, int n, const double *alpha,
			   const double *A, int lda, const double *x, int incx,
			   const double *beta, double *y, int incy)
{
	struct np_gemm_call c = np_gemm_gemv(trans, m, n, (uintptr_t)A, lda, (uintptr_t)x,
						  incx, (uintptr_t)y, incy, R64F);
	begin_v2(&c, h, beta, 8);
	return end(real.dgemv(h, trans, m, n, alpha, A, lda, x, incx, beta, y, incy));
}

/* begin() for result = x . y.  Planned only in device pointer mode
 * (torch's dot), where result is one element of device memory; in host
 * mode cuBLAS copies the sum to the host and waits for it: nothing on
 * the device is left to check, and the call goes unplanned. */
static void begin_dot(blas_handle h, int n, const void *x, int xt, int incx, const void *y,
		      int yt, int incy, void *result, int rt)
{
	struct np_gemm_call c = { .beta = NP_GEMM_BETA_ZERO };   /* no d: unplanned */
	if (np_blas_idle() && pointer_mode(h) == POINTER_MODE_DEVICE)
		c = np_gemm_dot((uintptr_t)x, xt, incx, (uintptr_t)y, yt, incy, n,
				(uintptr_t)result, rt);
	begin(&c, h);
}

static blas_status w_sdot(blas_handle h, int n, const float *x, int incx, const float *y,
			  int incy, float *result)
{
	begin_dot(h, n, x, R32F, incx, y, R32F, incy, result, R32F);
	return end(real.sdot(h, n, x, incx, y, incy, result));
}

static blas_status w_ddot(blas_handle h, int n, const double *x, int incx, const double *y,
			  int incy, double *result)
{
	begin_dot(h, n, x, R64F, incx, y, R64F, incy, result, R64F);
	return end(real.ddot(h, n, x, incx, y, incy, result));
}

/* torch's half and bfloat16 dot */
static blas_status w_dot_ex(blas_handle h, int n, const void *x, int xt, int incx,
			    const void *y, int yt, int incy, void *result, int rt, int exec)
{
	begin_dot(h, n, x, xt, incx, y, yt, incy, result, rt);
	return end(real.dot_ex(h, n, x, xt, incx, y, yt, incy, result, rt, exec));
}

static blas_status w_strsm(blas_handle h, int side, int uplo, int trans, int diag, int m, int n,
			   const float *alpha, const float *A, int lda, float *B, int ldb)
{
	struct np_gemm_call c = np_gemm_trsm(side, m, n, (uintptr_t)A, lda, (uintptr_t)B,
						  ldb, R32F);
	begin(&c, h);
	return end(real.strsm(h, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb));
}

static blas_status w_dtrsm(blas_handle h, int side, int uplo, int trans, int diag, int m, int n,
			   const double *alpha, const double *A, int lda, double *B, int ldb)
{
	struct np_gemm_call c = np_gemm_trsm(side, m, n, (uintptr_t)A, lda, (uintptr_t)B,
						  ldb, R64F);
	begin(&c, h);
	return end(real.dtrsm(h, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb));
}

/* ---- cublasLt: the layouts and the descriptor are asked ---- */

static int lt_attr(lt_layout l, int attr, void *buf, size_t size)
{
	size_t got = 0;
	memset(buf, 0, size);
	return l && real.lt_layout_get(l, attr, buf, size, &got) == 0 && got == size ? 0 : -1;
}

/* An operand as its layout describes it (as stored: cublasLt applies the
 * transpose itself); -1 for the tiled orders, or an attribute refused. */
static int lt_mat(const void *ptr, lt_layout l, struct np_gemm_mat *m)
{
	uint32_t type;
	int32_t order, batch;
	uint64_t rows, cols;
	int64_t ld, stride;
	if (lt_attr(l, LT_TYPE, &type, 4) || lt_attr(l, LT_ORDER, &order, 4) ||
	    lt_attr(l, LT_ROWS, &rows, 8) || lt_attr(l, LT_COLS, &cols, 8) ||
	    lt_attr(l, LT_LD, &ld, 8) || lt_attr(l, LT_BATCH, &batch, 4) ||
	    lt_attr(l, LT_STRIDE, &stride, 8) || (order != LT_ORDER_COL && order != LT_ORDER_ROW))
		return -1;
	*m = (struct np_gemm_mat){ .ptr = (uintptr_t)ptr, .rows = rows, .cols = cols, .ld = ld,
				   .row_major = order == LT_ORDER_ROW,
				   .batch = batch < 1 ? 1 : batch, .stride = stride,
				   .cuda_dtype = (int)type };
	return 0;
}

static int lt_desc_attr(lt_desc d, int attr, void *buf, size_t size)
{
	size_t got = 0;
	memset(buf, 0, size);
	return real.lt_desc_get(d, attr, buf, size, &got) == 0 && got == size ? 0 : -1;
}

/* cudaDataType of the scale type: alpha's and beta's size */
static unsigned lt_scale_size(int32_t type)
{
	switch (type) {
	case 2: case 14: return 2;      /* R_16F, R_16BF */
	case 0: case 10: return 4;      /* R_32F, R_32I */
	case 1: return 8;               /* R_64F */
	}
	return 0;
}

/* The call's operands into c; *writes_more: whether it may write more
 * than D and its workspace (an epilogue's auxiliary output or bias
 * gradient, an fp8 GEMM's max |D|, or an attribute that says not read). */
static int lt_call(lt_desc desc, const void *A, lt_layout ad, const void *B, lt_layout bd,
		   const void *beta, const void *C, lt_layout cd, void *D, lt_layout dd,
		   struct np_gemm_call *c, int *writes_more)
{
	memset(c, 0, sizeof(*c));
	if (!real.lt_layout_get || !real.lt_desc_get || lt_mat(A, ad, &c->a) ||
	    lt_mat(B, bd, &c->b) || lt_mat(C, cd, &c->c) || lt_mat(D, dd, &c->d))
		return -1;
	int32_t mode = POINTER_MODE_HOST, scale = R32F;
	uint32_t epilogue = 0;
	void *bias = NULL;
	/* attributes never set read as their defaults: host, the compute's */
	lt_desc_attr(desc, LT_POINTER_MODE, &mode, 4);
	if (lt_desc_attr(desc, LT_SCALE_TYPE, &scale, 4))
		scale = R32F;
	c->beta = NP_GEMM_BETA_UNKNOWN;
	if (mode == LT_POINTER_BETA_ZERO)
		c->beta = NP_GEMM_BETA_ZERO;
	else if ((mode == POINTER_MODE_HOST || mode == LT_POINTER_BETA_HOST) && lt_scale_size(scale))
		c->beta = np_gemm_scalar_zero(beta, lt_scale_size(scale)) ? NP_GEMM_BETA_ZERO
									   : NP_GEMM_BETA_SET;
	int epi_read = lt_desc_attr(desc, LT_EPILOGUE, &epilogue, 4) == 0;
	if (epi_read && (epilogue & LT_EPI_BIAS) && !(epilogue & LT_EPI_BGRAD) &&
	    lt_desc_attr(desc, LT_BIAS_POINTER, &bias, 8) == 0)
		c->bias = (uintptr_t)bias;
	void *amax = NULL;
	*writes_more = !epi_read || (epilogue & (LT_EPI_BGRAD | LT_EPI_AUX)) ||
		       lt_desc_attr(desc, LT_AMAX_D_POINTER, &amax, 8) || amax;
	return 0;
}

static blas_status w_lt_matmul(lt_handle h, lt_desc desc, const void *alpha, const void *A,
			       lt_layout ad, const void *B, lt_layout bd, const void *beta,
			       const void *C, lt_layout cd, void *D, lt_layout dd, const void *algo,
			       void *ws, size_t ws_size, CUstream stream)
{
	struct np_gemm_call c;
	int more = 1;
	int known = np_blas_idle() &&
		    lt_call(desc, A, ad, B, bd, beta, C, cd, D, dd, &c, &more) == 0;
	/* cublasLt's workspace is the call's argument */
	uint64_t ws_lo = (uintptr_t)ws, ws_hi = ws_lo + (ws ? ws_size : 0);
	if (known)
		begin_ws(&c, !more && ws_lo <= ws_hi, ws_lo, ws_hi);
	else
		np_blas_begin_plan(NULL);   /* unplanned: its kernels go to the generic tier */
	return end(real.lt_matmul(h, desc, alpha, A, ad, B, bd, beta, C, cd, D, dd, algo, ws,
				  ws_size, stream));
}

/* torch sets a handle's workspace each time it takes the handle
 * (blas_workspace.h): kept while checks are deferred (the only reader:
 * np_blas_call_writes) */
static blas_status w_set_workspace(blas_handle h, void *ws, size_t size)
{
	static int told;
	blas_status r = real.set_workspace(h, ws, size);
	if (r == 0 && np_defer_window() > 0 && np_blas_ws_set(h, (uintptr_t)ws, size) &&
	    !__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
		np_alog("cuBLAS: workspaces of more than %d handles: the calls of the others "
			"launch every deferred check first", NP_BLAS_WS_HANDLES);
	return r;
}

/* ---- installing ---- */

static const struct np_libcall wrapped[] = {
	{ "libcublas.so", "cublasSgemm_v2", (void *)w_sgemm, (void **)&real.sgemm },
	{ "libcublas.so", "cublasDgemm_v2", (void *)w_dgemm, (void **)&real.dgemm },
	{ "libcublas.so", "cublasSgemmEx", (void *)w_sgemm_ex, (void **)&real.sgemm_ex },
	{ "libcublas.so", "cublasGemmEx", (void *)w_gemm_ex, (void **)&real.gemm_ex },
	{ "libcublas.so", "cublasSgemmStridedBatched", (void *)w_sgemm_strided,
	  (void **)&real.sgemm_strided },
	{ "libcublas.so", "cublasDgemmStridedBatched", (void *)w_dgemm_strided,
	  (void **)&real.dgemm_strided },
	{ "libcublas.so", "cublasGemmStridedBatchedEx", (void *)w_gemm_strided_ex,
	  (void **)&real.gemm_strided_ex },
	{ "libcublas.so", "cublasCgemm_v2", (void *)w_cgemm, (void **)&real.cgemm },
	{ "libcublas.so", "cublasZgemm_v2", (void *)w_zgemm, (void **)&real.zgemm },
	{ "libcublas.so", "cublasCgemmStridedBatched", (void *)w_cgemm_strided,
	  (void **)&real.cgemm_strided },
	{ "libcublas.so", "cublasZgemmStridedBatched", (void *)w_zgemm_strided,
	  (void **)&real.zgemm_strided },
	{ "libcublas.so", "cublasSgemv_v2", (void *)w_sgemv, (void **)&real.sgemv },
	{ "libcublas.so", "cublasDgemv_v2", (void *)w_dgemv, (void **)&real.dgemv },
	{ "libcublas.so", "cublasSdot_v2", (void *)w_sdot, (void **)&real.sdot },
	{ "libcublas.so", "cublasDdot_v2", (void *)w_ddot, (void **)&real.ddot },
	{ "libcublas.so", "cublasDotEx", (void *)w_dot_ex, (void **)&real.dot_ex },
	{ "libcublas.so", "cublasStrsm_v2", (void *)w_strsm, (void **)&real.strsm },
	{ "libcublas.so", "cublasDtrsm_v2", (void *)w_dtrsm, (void **)&real.dtrsm },
	{ "libcublasLt.so", "cublasLtMatmul", (void *)w_lt_matmul, (void **)&real.lt_matmul },
	{ "libcublas.so", "cublasSetWorkspace_v2", (void *)w_set_workspace,
	  (void **)&real.set_workspace },
};
#define N_WRAPPED (sizeof(wrapped) / sizeof(wrapped[0]))

/* cuBLAS, cuDNN and cuFFT calling themselves, and the agent, are left alone */
static const char *const not_patched[] = { "libcublas", "libcudnn", "libcufft", "libnanprof_agent",
					    NULL };

/* the real function of each wrapper of table t[0..n) that has a loaded
 * one, into hooks[*k]: the slots to point at the wrapper */
static void hooks_of(const struct np_libcall *t, size_t n, struct np_got_hook *hooks, int *k)
{
	for (size_t i = 0; i < n; i++) {
		if (!*t[i].real)
			__atomic_store_n(t[i].real, np_got_lookup(t[i].lib, t[i].name),
					 __ATOMIC_RELEASE);
		if (*t[i].real)
			hooks[(*k)++] = (struct np_got_hook){ t[i].name, t[i].wrapper };
	}
}

/* NANPROF_GPU_BLAS=0: no import is touched */
static int blas_off(void)
{
	static int off = -1;
	if (off < 0) {
		const char *s = getenv("NANPROF_GPU_BLAS");
		off = s && strcmp(s, "0") == 0;
	}
	return off;
}

/* One set of hooks kept on every object: the objects walked, and when. */
struct walker {
	struct np_got_seen seen;
	uint64_t loads_seen;    /* np_got_loads() at the last walk; 0: walk again */
	unsigned tries;         /* walks in a row that met an unsettled object */
};

/* Whether a walk is due: something was loaded since the last. */
static int due(struct walker *w)
{
	uint64_t loads = np_got_loads();
	if (blas_off() || loads == w->loads_seen)
		return 0;
	w->loads_seen = loads;
	return 1;
}

/* Walks the objects not seen yet with hooks[0..n).  An object still
 * being loaded (gotpatch.h) makes the next poll walk again though
 * nothing was loaded since; for 64 polls only (a few seconds at most):
 * an object whose RELRO something else made writable again would say
 * so for ever. */
static int walk(struct walker *w, const struct np_got_hook *hooks, int n)
{
	int written = np_got_patch(hooks, n, not_patched, &w->seen);
	if (!w->seen.unsettled)
		w->tries = 0;
	else if (++w->tries <= 64)
		w->loads_seen = 0;
	return written;
}

/* One library's trackers on every object, from that library's load on;
 * each its own walker: an object walked before cuDNN was loaded is
 * walked again for it. */
static int track(struct walker *w, const struct np_libcall *t, size_t nt, const char *what)
{
	if (!due(w))
		return 0;
	struct np_got_hook hooks[NP_FFT_TRACKERS > NP_DNN_TRACKERS ? NP_FFT_TRACKERS
								  : NP_DNN_TRACKERS];
	int n = 0;
	hooks_of(t, nt, hooks, &n);
	if (!n)
		return 0;   /* not loaded yet: nothing walked, nothing marked seen */
	int written = walk(w, hooks, n);
	if (written)
		np_alog("%s: %d import slots tracked", what, written);
	return written;
}

int np_blas_track(void)
{
	static struct walker dnn, fft;
	return track(&dnn, np_dnn_trackers, NP_DNN_TRACKERS, "cuDNN's descriptors") +
	       track(&fft, np_fft_trackers, NP_FFT_TRACKERS, "cuFFT's plans");
}

int np_blas_install(void)
{
	static struct walker w;
	if (!due(&w))
		return 0;
	/* the helpers first: a wrapper may run as soon as its slot is written */
	if (!real.get_pointer_mode)
		real.get_pointer_mode = np_got_lookup("libcublas.so", "cublasGetPointerMode_v2");
	if (!real.lt_layout_get)
		real.lt_layout_get = np_got_lookup("libcublasLt.so",
						   "cublasLtMatrixLayoutGetAttribute");
	if (!real.lt_desc_get)
		real.lt_desc_get = np_got_lookup("libcublasLt.so", "cublasLtMatmulDescGetAttribute");
	np_dnn_prepare();
	struct np_got_hook hooks[N_WRAPPED + NP_DNN_WRAPPED + NP_DNN_TRACKERS + NP_FFT_WRAPPED +
				NP_FFT_TRACKERS];
	int n = 0;
	hooks_of(wrapped, N_WRAPPED, hooks, &n);
	hooks_of(np_dnn_wrapped, NP_DNN_WRAPPED, hooks, &n);
	hooks_of(np_fft_wrapped, NP_FFT_WRAPPED, hooks, &n);
	/* the trackers too, for objects np_blas_track has not walked */
	hooks_of(np_dnn_trackers, NP_DNN_TRACKERS, hooks, &n);
	hooks_of(np_fft_trackers, NP_FFT_TRACKERS, hooks, &n);
	/* until cuBLAS, cuDNN or cuFFT is loaded no object can import them:
	 * nothing is walked (and nothing marked seen) */
	if (!n)
		return 0;
	int written = walk(&w, hooks, n);
	if (written)
		np_alog("cuBLAS, cuDNN, cuFFT: %d import slots point at the agent's wrappers",
			written);
	return written;
}
