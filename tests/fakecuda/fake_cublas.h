/* fake_cublas.h - the part of cuBLAS's API (cuBLAS 13's cublas_api.h and
 * cublasLt.h: the same names, signatures and values) that the fake
 * cuBLAS (fake_cublas.c, built as libcublas.so.13 and libcublasLt.so.13)
 * implements for the fake job (fake_ops.c): the matrix multiplies torch
 * calls, a matrix-vector product, a dot product and a triangular solve,
 * and what they need.  Float, and complex64 for cublasCgemm_v2;
 * cublasLt's layouts column- or row-major.
 *
 * Each multiply launches its kernels on the fake driver, with opaque
 * parameters as cuBLAS's own kernels have (an nvjet-like name and one
 * struct): the agent can learn D only from the call (cupti/blas.h).  A
 * multiply with k >= FAKE_SPLITK_MIN runs split-K, as cuBLAS picks for a
 * long k: two kernels write halves of the sum into a workspace, a third
 * reduces them into D, so D is final only after the call's last kernel.
 */
#ifndef NP_FAKE_CUBLAS_H
#define NP_FAKE_CUBLAS_H

#include <stddef.h>
#include <cuda.h>

#define FAKE_SPLITK_MIN 128

typedef int cublasStatus_t;
typedef struct fake_cublas_handle *cublasHandle_t;
typedef struct fake_lt_handle *cublasLtHandle_t;
typedef struct fake_lt_desc *cublasLtMatmulDesc_t;
typedef struct fake_lt_layout *cublasLtMatrixLayout_t;

enum { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_INVALID_VALUE = 7,
       CUBLAS_STATUS_NOT_SUPPORTED = 15 };
enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };
enum { CUBLAS_POINTER_MODE_HOST = 0, CUBLAS_POINTER_MODE_DEVICE = 1 };
enum { CUBLAS_SIDE_LEFT = 0, CUBLAS_SIDE_RIGHT = 1 };
enum { CUBLAS_FILL_MODE_LOWER = 0, CUBLAS_FILL_MODE_UPPER = 1 };
enum { CUBLAS_DIAG_NON_UNIT = 0, CUBLAS_DIAG_UNIT = 1 };
enum { CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_32F_FAST_TF32 = 77 };
enum { CUBLAS_GEMM_DEFAULT = -1 };
enum { FAKE_CUDA_R_32F = 0 };

/* cublasLtMatrixLayoutAttribute_t */
enum { CUBLASLT_MATRIX_LAYOUT_TYPE = 0, CUBLASLT_MATRIX_LAYOUT_ORDER = 1,
       CUBLASLT_MATRIX_LAYOUT_ROWS = 2, CUBLASLT_MATRIX_LAYOUT_COLS = 3,
       CUBLASLT_MATRIX_LAYOUT_LD = 4, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5,
       CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6 };
enum { CUBLASLT_ORDER_COL = 0, CUBLASLT_ORDER_ROW = 1 };
/* cublasLtMatmulDescAttributes_t */
enum { CUBLASLT_MATMUL_DESC_COMPUTE_TYPE = 0, CUBLASLT_MATMUL_DESC_SCALE_TYPE = 1,
       CUBLASLT_MATMUL_DESC_POINTER_MODE = 2, CUBLASLT_MATMUL_DESC_TRANSA = 3,
       CUBLASLT_MATMUL_DESC_TRANSB = 4, CUBLASLT_MATMUL_DESC_EPILOGUE = 7,
       CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER = 21 };
enum { CUBLASLT_EPILOGUE_DEFAULT = 1, CUBLASLT_EPILOGUE_BIAS = 4 };

cublasStatus_t cublasCreate_v2(cublasHandle_t *h);
cublasStatus_t cublasSetStream_v2(cublasHandle_t h, CUstream s);
cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t h, void *ws, size_t size);
cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t h, int *mode);
cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t h, int mode);
cublasStatus_t cublasSgemm_v2(cublasHandle_t h, int ta, int tb, int m, int n, int k,
			      const float *alpha, const float *A, int lda, const float *B, int ldb,
			      const float *beta, float *C, int ldc);
cublasStatus_t cublasSgemmEx(cublasHandle_t h, int ta, int tb, int m, int n, int k,
			     const float *alpha, const void *A, int at, int lda, const void *B, int bt,
			     int ldb, const float *beta, void *C, int ct, int ldc);
cublasStatus_t cublasGemmEx(cublasHandle_t h, int ta, int tb, int m, int n, int k,
			    const void *alpha, const void *A, int at, int lda, const void *B, int bt,
			    int ldb, const void *beta, void *C, int ct, int ldc, int compute,
			    int algo);
cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, int ta, int tb, int m, int n, int k,
					  const void *alpha, const void *A, int at, int lda,
					  long long sa, const void *B, int bt, int ldb,
					  long long sb, const void *beta, void *C, int ct, int ldc,
					  long long sc, int batch, int compute, int algo);
/* a matrix times a vector (incx = incy = 1); a dot product (device
 * pointer mode: the result in device memory, as torch asks); a
 * triangular solve (left, lower, not transposed; host pointer mode) */
cublasStatus_t cublasSgemv_v2(cublasHandle_t h, int trans, int m, int n, const float *alpha,
			      const float *A, int lda, const float *x, int incx, const float *beta,
			      float *y, int incy);
cublasStatus_t cublasSdot_v2(cublasHandle_t h, int n, const float *x, int incx, const float *y,
			     int incy, float *result);
/* complex64 (cuComplex: two floats) D = alpha A B, not transposed, beta 0 */
cublasStatus_t cublasCgemm_v2(cublasHandle_t h, int ta, int tb, int m, int n, int k,
			      const void *alpha, const void *A, int lda, const void *B, int ldb,
			      const void *beta, void *C, int ldc);
cublasStatus_t cublasStrsm_v2(cublasHandle_t h, int side, int uplo, int trans, int diag, int m,
			      int n, const float *alpha, const float *A, int lda, float *B,
			      int ldb);

cublasStatus_t cublasLtCreate(cublasLtHandle_t *h);
cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, int type, uint64_t rows,
					  uint64_t cols, int64_t ld);
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l);
cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l, int attr,
						const void *buf, size_t size);
cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t l, int attr, void *buf,
						size_t size, size_t *written);
cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, int compute, int scale);
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d);
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d, int attr, const void *buf,
					      size_t size);
cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t d, int attr, void *buf,
					      size_t size, size_t *written);
cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t d, const void *alpha,
			      const void *A, cublasLtMatrixLayout_t ad, const void *B,
			      cublasLtMatrixLayout_t bd, const void *beta, const void *C,
			      cublasLtMatrixLayout_t cd, void *D, cublasLtMatrixLayout_t dd,
			      const void *algo, void *ws, size_t ws_size, CUstream stream);

/* for the fake's own two libraries: one multiply, column-major, any
 * batch, launched on stream */
struct fake_gemm {
	const float *a, *b, *c;
	float *d;
	const float *bias;      /* added per row of D, or NULL */
	int m, n, k, lda, ldb, ldc, ldd, ta, tb, batch;
	long long sa, sb, sc, sd;
	float alpha, beta;
	float *ws;              /* the caller's workspace (cublasSetWorkspace_v2,
				 * cublasLtMatmul's), or NULL: the fake's own */
	size_t ws_size;         /* its bytes: split-K uses it when it holds
				 * both halves' sums, as cuBLAS picks */
	float *amax;            /* cublasLt's AMAX_D_POINTER (an fp8 GEMM's): max |D|
				 * written there, or NULL */
};
cublasStatus_t fake_cublas_run(const struct fake_gemm *g, CUstream stream);

#endif
