/* gemm.h - what one cuBLAS matrix multiply writes and reads, from the
 * arguments of its call (cupti/blas.c intercepts the calls).
 *
 * A cuBLAS kernel's parameters are opaque (an nvjet or cutlass struct
 * of its own), so its launch alone says nothing of its output: the
 * generic tier could only check it at its first decoded reader, and
 * named the wrong kernel when another GEMM read it first.  The call
 * that launched it says everything: D's address, shape, leading
 * dimension and type, A's and B's, and whether C is read (beta).  From
 * those the agent checks D after the call's last kernel, as it checks
 * a decoded kernel's output, and A and B are reads of known extent, so
 * that what an undecoded kernel wrote into them is checked first.
 *
 * Only what cuBLAS documents is used: column-major operands (the
 * cublas<t>gemm and cublasGemmEx families), or cublasLt's layouts
 * (CUBLASLT_ORDER_COL or _ROW; the tiled orders are not read).  D is
 * checked only when it is one dense range: a D that is a view with
 * gaps (ld > rows) would take the gaps' values, another tensor's, for
 * its own.  The same plan serves cuBLAS's other calls with a floating
 * result (blas.c): a matrix-vector product's y and a dot product's
 * result (vectors: 1 x n operands, np_gemm_vector), a triangular
 * solve's B (D, read too).  Pure logic: unit-tested
 * (tests/unit/test_gemm.c).
 */
#ifndef NP_GEMM_H
#define NP_GEMM_H

#include <stdint.h>
#include "kdecode.h"

/* One operand as the call gives it: rows x cols, column-major (or
 * row-major) with leading dimension ld; batch matrices stride elements
 * apart (stride 0: one matrix for every batch, an input broadcast). */
struct np_gemm_mat {
	uint64_t ptr;
	uint64_t rows, cols;
	int64_t ld;
	uint8_t row_major;      /* cublasLt's CUBLASLT_ORDER_ROW */
	int64_t batch;          /* >= 1 */
	int64_t stride;         /* elements between batch matrices */
	int cuda_dtype;         /* cudaDataType (library_types.h) */
	uint8_t partial;        /* only part of it is read (a triangular solve's
				 * triangle): no read of the whole is offered */
};

/* Whether beta says C is read. */
enum np_gemm_beta {
	NP_GEMM_BETA_ZERO = 0,  /* C is not read */
	NP_GEMM_BETA_SET,       /* it is */
	NP_GEMM_BETA_UNKNOWN,   /* beta in device memory: not read from the host */
};

struct np_gemm_call {
	struct np_gemm_mat a, b, c, d;  /* D = alpha op(A) op(B) + beta C; c.ptr may be d.ptr */
	enum np_gemm_beta beta;
	uint64_t bias;                  /* a vector the epilogue adds (read), 0: none */
};

#define NP_GEMM_MORE_OUTS 5       /* a cuDNN graph's outputs besides the first */

/* What the call writes and reads. */
struct np_gemm_plan {
	struct np_kbuf out;             /* D, whole; out.in[0..n_in) what its birth
					 * judgement reads: A, B, C when beta may be
					 * set, the bias */
	struct np_kbuf more[NP_GEMM_MORE_OUTS];  /* a cuDNN graph's other outputs
					 * (attention's statistics; the backward's dK,
					 * dV), each whole, judged on the same reads */
	int n_more;
	struct np_kread rd[2];          /* A and B, when each is one dense range of a
					 * checkable dtype: reads for the generic tier */
	int n_rd;
	uint8_t note_only;              /* out's extent unknown (a cuFFT plan made
					 * before the agent came): nothing checked,
					 * out.ptr noted for the generic tier as the
					 * call's last kernel's output, out.in[] as
					 * what it read */
	uint16_t note_written;          /* note_only: bit k, out.in[k] may have been
					 * written too (a cuDNN plan made before the
					 * agent came: which of its variant pack's
					 * addresses are outputs is not known) */
};

/* enum np_dtype of a cudaDataType, or -1 (integers, complex, the fp4 and
 * fp6 types: nothing a finite check reads as it is). */
int np_gemm_dtype(int cuda_dtype);

/* The parts' enum np_dtype of a complex cudaDataType (CUDA_C_32F: float32),
 * or -1.  A complex D is planned as its real view (np_kbuf.pairs: twice
 * the elements); complex A and B are not offered as reads. */
int np_gemm_complex_dtype(int cuda_dtype);

/* An operand of the column-major APIs: A is m x k (k x m transposed), B
 * k x n (n x k), C and D m x n.  trans: cublasOperation_t (0: N). */
struct np_gemm_mat np_gemm_operand(uint64_t ptr, int trans, int rows, int cols, int ld,
				   int64_t stride, int batch, int cuda_dtype);

/* A vector of n elements inc apart (cuBLAS's level-1 and level-2
 * vectors), as a 1 x n column-major operand whose leading dimension is
 * inc: one dense range only when inc is 1 (or n is 1); a negative inc,
 * which cuBLAS walks from the end, never is. */
struct np_gemm_mat np_gemm_vector(uint64_t ptr, int n, int inc, int cuda_dtype);

/* cublas<t>gemv: y = alpha op(A) x + beta y, A m x n as stored whatever
 * trans (cublasOperation_t); beta is left NP_GEMM_BETA_ZERO for the
 * caller to set. */
struct np_gemm_call np_gemm_gemv(int trans, int m, int n, uint64_t A, int lda, uint64_t x,
				 int incx, uint64_t y, int incy, int cuda_dtype);

/* cublas<t>dot and cublasDotEx: result (one element, device memory) =
 * x . y, n elements each. */
struct np_gemm_call np_gemm_dot(uint64_t x, int xt, int incx, uint64_t y, int yt, int incy,
				int n, uint64_t result, int rt);

/* cublas<t>trsm: op(A) X = alpha B (side 0, left) or X op(A) = alpha B,
 * X written over B (m x n): B is read and written (beta set), A (square)
 * read only in one triangle, so never offered whole as a read: its
 * other triangle may hold anything. */
struct np_gemm_call np_gemm_trsm(int side, int m, int n, uint64_t A, int lda, uint64_t B,
				 int ldb, int cuda_dtype);

/* Elements of m when it is one dense range (every batch's matrix
 * included, the batches next to each other), else 0.  A broadcast
 * (stride 0) counts one matrix when broadcast_ok. */
uint64_t np_gemm_dense_numel(const struct np_gemm_mat *m, int broadcast_ok);

/* Whether a scalar alpha or beta is zero: size 2 (half), 4 (float or
 * int32), 8 (double); p a host pointer.  A negative zero is zero. */
int np_gemm_scalar_zero(const void *p, unsigned size);

/* Whether a complex alpha or beta is zero: both parts, each part bytes
 * (4: cuComplex, 8: cuDoubleComplex). */
int np_gemm_complex_zero(const void *p, unsigned part);

/* Adds ptr (0: none) to an output's judgement inputs, once, while there
 * is room (NP_KD_BUF_INPUTS): for every library call's plan. */
void np_gemm_add_input(struct np_kbuf *b, uint64_t ptr);

/* The plan of call c: 0 when D can be checked, -1 when not (a view with
 * gaps, a dtype no check reads, an empty or batch-broadcast D). */
int np_gemm_plan(const struct np_gemm_call *c, struct np_gemm_plan *p);

#endif
