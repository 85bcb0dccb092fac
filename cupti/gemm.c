/* gemm.c - what one cuBLAS matrix multiply writes and reads (gemm.h). */
#include <string.h>
#include "gemm.h"

/* cudaDataType values (library_types.h) of the types a check reads */
enum {
	CUDA_R_32F_ = 0,
	CUDA_R_64F_ = 1,
	CUDA_R_16F_ = 2,
	CUDA_C_32F_ = 4,
	CUDA_C_64F_ = 5,
	CUDA_C_16F_ = 6,
	CUDA_R_16BF_ = 14,
	CUDA_R_8F_E4M3_ = 28,
	CUDA_R_8F_E5M2_ = 29,
};

int np_gemm_dtype(int cuda_dtype)
{
	switch (cuda_dtype) {
	case CUDA_R_32F_: return NP_DT_F32;
	case CUDA_R_64F_: return NP_DT_F64;
	case CUDA_R_16F_: return NP_DT_F16;
	case CUDA_R_16BF_: return NP_DT_BF16;
	case CUDA_R_8F_E4M3_: return NP_DT_F8E4M3;
	case CUDA_R_8F_E5M2_: return NP_DT_F8E5M2;
	}
	return -1;
}

int np_gemm_complex_dtype(int cuda_dtype)
{
	switch (cuda_dtype) {
	case CUDA_C_32F_: return NP_DT_F32;
	case CUDA_C_64F_: return NP_DT_F64;
	case CUDA_C_16F_: return NP_DT_F16;
	}
	return -1;
}

struct np_gemm_mat np_gemm_operand(uint64_t ptr, int trans, int rows, int cols, int ld,
				   int64_t stride, int batch, int cuda_dtype)
{
	/* op(X) is rows x cols; X itself is stored transposed when trans */
	int t = trans != 0;
	struct np_gemm_mat m = { .ptr = ptr, .ld = ld, .batch = batch, .stride = stride,
				 .cuda_dtype = cuda_dtype };
	m.rows = (uint64_t)(rows < 0 ? 0 : t ? cols : rows);
	m.cols = (uint64_t)(cols < 0 ? 0 : t ? rows : cols);
	return m;
}

struct np_gemm_mat np_gemm_vector(uint64_t ptr, int n, int inc, int cuda_dtype)
{
	return (struct np_gemm_mat){ .ptr = ptr, .rows = 1, .cols = (uint64_t)(n < 0 ? 0 : n),
				     .ld = n == 1 ? 1 : inc, .batch = 1, .cuda_dtype = cuda_dtype };
}

struct np_gemm_call np_gemm_gemv(int trans, int m, int n, uint64_t A, int lda, uint64_t x,
				 int incx, uint64_t y, int incy, int cuda_dtype)
{
	int t = trans != 0;
	struct np_gemm_call c = {
		.a = np_gemm_operand(A, 0, m, n, lda, 0, 1, cuda_dtype),
		.b = np_gemm_vector(x, t ? m : n, incx, cuda_dtype),
		.d = np_gemm_vector(y, t ? n : m, incy, cuda_dtype),
	};
	c.c = c.d;
	return c;
}

struct np_gemm_call np_gemm_dot(uint64_t x, int xt, int incx, uint64_t y, int yt, int incy,
				int n, uint64_t result, int rt)
{
	struct np_gemm_call c = {
		.a = np_gemm_vector(x, n, incx, xt),
		.b = np_gemm_vector(y, n, incy, yt),
		.d = np_gemm_vector(result, 1, 1, rt),
	};
	c.c = c.d;
	return c;
}

struct np_gemm_call np_gemm_trsm(int side, int m, int n, uint64_t A, int lda, uint64_t B,
				 int ldb, int cuda_dtype)
{
	int k = side == 0 ? m : n;
	struct np_gemm_call c = {
		.a = np_gemm_operand(A, 0, k, k, lda, 0, 1, cuda_dtype),
		.d = np_gemm_operand(B, 0, m, n, ldb, 0, 1, cuda_dtype),
		.beta = NP_GEMM_BETA_SET,
	};
	c.a.partial = 1;
	c.c = c.d;
	return c;
}

uint64_t np_gemm_dense_numel(const struct np_gemm_mat *m, int broadcast_ok)
{
	/* the dimension the leading one steps over, and the other */
	uint64_t inner = m->row_major ? m->cols : m->rows;
	uint64_t outer = m->row_major ? m->rows : m->cols;
	if (!m->ptr || !inner || !outer || m->batch < 1 || m->ld < 0)
		return 0;
	/* one column (row) needs no leading dimension; more must abut */
	if (outer > 1 && (uint64_t)m->ld != inner)
		return 0;
	if (inner > (1ull << 40) / outer)
		return 0;
	uint64_t one = inner * outer;
	if (m->batch == 1)
		return one;
	if (m->stride == 0)
		return broadcast_ok ? one : 0;
	if (m->stride < 0 || (uint64_t)m->stride != one || (uint64_t)m->batch > (1ull << 40) / one)
		return 0;
	return one * (uint64_t)m->batch;
}

int np_gemm_scalar_zero(const void *p, unsigned size)
{
	/* every bit but the sign clear: +0 or -0 (an int32's sign bit alone
	 * is INT_MIN, no zero: the caller asks ints for size 4 too, where
	 * that one value is taken for zero: harmless, beta is never it) */
	uint64_t v = 0;
	if (!p || (size != 2 && size != 4 && size != 8))
		return 0;
	memcpy(&v, p, size);
	uint64_t magnitude = size == 8 ? ~(1ull << 63) : size == 4 ? 0x7fffffffull : 0x7fffull;
	return (v & magnitude) == 0;
}

int np_gemm_complex_zero(const void *p, unsigned part)
{
	return p && np_gemm_scalar_zero(p, part) &&
	       np_gemm_scalar_zero((const unsigned char *)p + part, part);
}

/* An operand read whole: offered to the generic tier (a complex one as
 * its real view: what cuFFT wrote before a spectral layer's GEMM). */
static void read_of(const struct np_gemm_mat *m, struct np_gemm_plan *p)
{
	int pairs = 0, dt = np_gemm_dtype(m->cuda_dtype);
	uint64_t n = m->partial ? 0 : np_gemm_dense_numel(m, 1);
	if (dt < 0 && (dt = np_gemm_complex_dtype(m->cuda_dtype)) >= 0)
		pairs = 1;
	if (dt >= 0 && n)
		p->rd[p->n_rd++] = (struct np_kread){ .ptr = m->ptr, .numel = n << pairs,
						      .dtype = (enum np_dtype)dt,
						      .pairs = (uint8_t)pairs };
}

void np_gemm_add_input(struct np_kbuf *b, uint64_t ptr)
{
	for (int k = 0; k < b->n_in; k++)
		if (b->in[k] == ptr)
			return;
	if (ptr && b->n_in < NP_KD_BUF_INPUTS)
		b->in[b->n_in++] = ptr;
}

int np_gemm_plan(const struct np_gemm_call *c, struct np_gemm_plan *p)
{
	memset(p, 0, sizeof(*p));
	int pairs = 0, dt = np_gemm_dtype(c->d.cuda_dtype);
	uint64_t n = np_gemm_dense_numel(&c->d, 0);
	if (dt < 0 && (dt = np_gemm_complex_dtype(c->d.cuda_dtype)) >= 0)
		pairs = 1;      /* a complex D: its real view, twice the elements */
	if (dt < 0 || !n)
		return -1;
	p->out = (struct np_kbuf){ .ptr = c->d.ptr, .numel = n << pairs, .dtype = (enum np_dtype)dt,
				   .pairs = (uint8_t)pairs, .how = NP_KH_GEMM };
	np_gemm_add_input(&p->out, c->a.ptr);
	np_gemm_add_input(&p->out, c->b.ptr);
	/* C is read when beta is set: in place (torch's addmm copies the
	 * bias into D, then accumulates) a non-finite value already in D is
	 * propagation.  Beta unknown: a separate C is taken as read, but
	 * not D itself, whose old contents (a block the allocator reused)
	 * must not pass a new birth off as propagation. */
	if (c->beta == NP_GEMM_BETA_SET || (c->beta == NP_GEMM_BETA_UNKNOWN && c->c.ptr != c->d.ptr))
		np_gemm_add_input(&p->out, c->c.ptr);
	np_gemm_add_input(&p->out, c->bias);
	read_of(&c->a, p);
	read_of(&c->b, p);
	return 0;
}
