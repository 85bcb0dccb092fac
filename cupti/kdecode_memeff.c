/* kdecode_memeff.c - memory-efficient attention's outputs, read from its
 * Params (see kdecode_memeff.h for the layouts and the checks).
 *
 * Why it matters: in fp32, or with a mask, SDPA runs these kernels.
 * Unread, a NaN the forward made (an overflowing score) was first seen
 * at out_proj's reader, and one the backward made in the gradients of
 * q, k and v was caught only at in_proj's weight gradient: the wrong
 * kernel, in the backward the wrong op.
 */
#include "kdecode_memeff.h"
#include "attn_layout.h"
#include "param_bytes.h"

/* forward Params offsets (kdecode_memeff.h) */
#define F_QUERY 0               /* then key, value */
#define F_Q_STRIDE_M 120        /* then k's, v's (int) */
#define F_Q_STRIDE_H 140        /* then k's, v's (int) */
#define F_Q_STRIDE_B 160        /* then k's, v's (int64) */
#define F_SEQSTART_Q 32
#define F_SEQSTART_K 40
#define F_OUTPUT 64
#define F_LSE 80
#define F_HEAD_DIM 96
#define F_HEAD_DIM_V 100
#define F_NUM_QUERIES 104
#define F_NUM_KEYS 108
#define F_MASK_TYPE 116
#define F_O_STRIDE_M 136
#define F_NUM_BATCHES 192
#define F_NUM_HEADS 196

/* backward Params offsets, torch 2.14's; after B_MASK_TYPE, 8 less in
 * the older 464-byte struct */
#define B_QUERY 0
#define B_GRAD_OUTPUT 48
#define B_GO_STRIDE_M 208
#define B_GO_STRIDE_B 392
#define B_GO_STRIDE_H 432
#define B_CU_SEQLENS_Q 64
#define B_CU_SEQLENS_K 72
#define B_GRAD_Q 80
#define B_GRAD_K 88
#define B_GRAD_V 96
#define B_HEAD_DIM 144
#define B_HEAD_DIM_V 148
#define B_NUM_QUERIES 152
#define B_NUM_KEYS 156
#define B_NUM_HEADS 160
#define B_Q_HEADS_PER_KV 164     /* torch 2.14 only */
#define B_MASK_TYPE 168         /* 164 in the older struct (a byte: less padding) */
#define B_MASK_TYPE_OLD 164
#define B_STRIDE_M_MULT 224
#define B_NUM_BATCHES 384
#define B_NUM_SPLITS_KEY 388
#define B_GQ_STRIDE_B 400
#define B_GK_STRIDE_B 408
#define B_GV_STRIDE_B 416
#define B_GQ_STRIDE_H 440
#define B_GK_STRIDE_H 448
#define B_GV_STRIDE_H 456

#define MAX_DIM (1 << 24)        /* any b, M, N, h or dim beyond is a misread */
#define LSE_ALIGN 32             /* kAlignLSE */
#define MASK_BOTTOM_RIGHT 2      /* CausalFromBottomRight; 0 none, 1 top-left */

static int dim_ok(int32_t v, uint32_t max)
{
	return v >= 1 && v <= MAX_DIM && (uint32_t)v <= max;
}

static uint32_t ceil_div(uint32_t a, uint32_t b)
{
	return (a + b - 1) / b;
}

static void view_add(struct np_memeff_view *v, uint64_t ptr, uint64_t numel, int lse)
{
	v->ptr[v->n] = ptr;
	v->numel[v->n] = numel;
	v->lse[v->n] = (uint8_t)lse;
	v->n++;
}

static int read_forward(const unsigned char *p, const struct np_memeff_shape *sh,
			const uint32_t grid[3], const uint32_t block[3], struct np_memeff_view *v)
{
	int32_t d = np_i32_at(p, F_HEAD_DIM), dv = np_i32_at(p, F_HEAD_DIM_V);
	int32_t m = np_i32_at(p, F_NUM_QUERIES), n = np_i32_at(p, F_NUM_KEYS);
	int32_t b = np_i32_at(p, F_NUM_BATCHES), h = np_i32_at(p, F_NUM_HEADS);

	if (!dim_ok(d, sh->max_k) || !dim_ok(dv, sh->max_k) || !dim_ok(m, MAX_DIM) ||
	    !dim_ok(n, MAX_DIM) || !dim_ok(b, MAX_DIM) || !dim_ok(h, MAX_DIM))
		return 0;
	/* getBlocksGrid, getThreadsGrid */
	if (grid[0] != ceil_div((uint32_t)m, sh->block_i) || grid[1] != (uint32_t)h ||
	    grid[2] != (uint32_t)b || block[0] != 32 ||
	    block[1] != (uint32_t)sh->block_i * sh->block_j / 1024 || block[2] != 1)
		return 0;
	if (np_u64_at(p, F_SEQSTART_Q) || np_u64_at(p, F_SEQSTART_K) ||
	    p[F_MASK_TYPE] > MASK_BOTTOM_RIGHT || !np_pointer_like(np_u64_at(p, F_QUERY)))
		return 0;

	uint64_t o = np_u64_at(p, F_OUTPUT), lse = np_u64_at(p, F_LSE);
	uint64_t rows = (uint64_t)b * (uint64_t)m;
	/* O is (b, M, h, Dv) with M stride o_strideM: dense when that is h * Dv */
	if (np_pointer_like(o) && (int64_t)np_i32_at(p, F_O_STRIDE_M) == (int64_t)h * dv)
		view_add(v, o, rows * (uint64_t)h * (uint64_t)dv, 0);
	if (np_pointer_like(lse) && m % LSE_ALIGN == 0)
		view_add(v, lse, rows * (uint64_t)h, 1);
	return v->n;
}

static int read_backward(const unsigned char *p, uint32_t size, const struct np_memeff_shape *sh,
			 const uint32_t grid[3], const uint32_t block[3],
			 struct np_memeff_view *v)
{
	uint32_t s = size == NP_MEMEFF_BWD_SIZE ? 0 : 8;  /* the older struct's shift */
	int32_t d = np_i32_at(p, B_HEAD_DIM), dv = np_i32_at(p, B_HEAD_DIM_V);
	int32_t m = np_i32_at(p, B_NUM_QUERIES), n = np_i32_at(p, B_NUM_KEYS);
	int32_t h = np_i32_at(p, B_NUM_HEADS), b = np_i32_at(p, B_NUM_BATCHES - s);
	int32_t per_kv = s ? 1 : np_i32_at(p, B_Q_HEADS_PER_KV);
	int16_t splits = (int16_t)(p[B_NUM_SPLITS_KEY - s] | p[B_NUM_SPLITS_KEY - s + 1] << 8);
	int mult = (int8_t)p[B_STRIDE_M_MULT - s], mask = p[s ? B_MASK_TYPE_OLD : B_MASK_TYPE];

	if (!dim_ok(d, sh->max_k) || !dim_ok(dv, sh->max_k) || !dim_ok(m, MAX_DIM) ||
	    !dim_ok(n, MAX_DIM) || !dim_ok(b, MAX_DIM) || !dim_ok(h, MAX_DIM) ||
	    per_kv < 1 || h % per_kv || (mult != 1 && mult != 3) || mask > MASK_BOTTOM_RIGHT)
		return 0;
	if (splits < 1 || grid[0] != (uint32_t)splits || grid[1] != (uint32_t)h ||
	    grid[2] != (uint32_t)b || block[0] != (uint32_t)sh->block_i * sh->block_j / 32 ||
	    block[1] != 1 || block[2] != 1)
		return 0;
	if (np_u64_at(p, B_CU_SEQLENS_Q) || np_u64_at(p, B_CU_SEQLENS_K) ||
	    !np_pointer_like(np_u64_at(p, B_QUERY)) ||
	    (sh->seq_aligned && (m % sh->block_i || n % sh->block_j)))
		return 0;

	/* grad_query, grad_key, grad_value: M stride mult * h * dim, or
	 * with mult 3 the slices of one (b, M, 3, h, d) tensor, one range */
	struct np_bshd t[3] = {
		{ np_u64_at(p, B_GRAD_Q), b, m, h, d, np_u64_at(p, B_GQ_STRIDE_B - s),
		  (uint64_t)mult * (uint64_t)h * (uint64_t)d, np_u64_at(p, B_GQ_STRIDE_H - s) },
		{ np_u64_at(p, B_GRAD_K), b, n, h, d, np_u64_at(p, B_GK_STRIDE_B - s),
		  (uint64_t)mult * (uint64_t)h * (uint64_t)d, np_u64_at(p, B_GK_STRIDE_H - s) },
		{ np_u64_at(p, B_GRAD_V), b, n, h, dv, np_u64_at(p, B_GV_STRIDE_B - s),
		  (uint64_t)mult * (uint64_t)h * (uint64_t)dv, np_u64_at(p, B_GV_STRIDE_H - s) },
	};
	uint64_t ptr[3], numel[3];
	int k = np_qkv_ranges(t, sh->esize, ptr, numel);

	/* queries no key reaches may stay unwritten: no range holding
	 * grad_query then (the packed one holds it too) */
	for (int i = 0; i < k; i++)
		if (!(mask == MASK_BOTTOM_RIGHT && m > n && ptr[i] == t[0].ptr))
			view_add(v, ptr[i], numel[i], 0);
	return v->n;
}

int np_memeff_read(const unsigned char *p, uint32_t size, const struct np_memeff_shape *sh,
		   const uint32_t grid[3], const uint32_t block[3], struct np_memeff_view *v)
{
	*v = (struct np_memeff_view){ 0 };
	if (!p || !sh->block_i || !sh->block_j || !sh->max_k || !sh->esize)
		return 0;
	if (sh->kind == NP_MEMEFF_FWD && size == NP_MEMEFF_FWD_SIZE)
		return read_forward(p, sh, grid, block, v);
	if (sh->kind == NP_MEMEFF_BWD &&
	    (size == NP_MEMEFF_BWD_SIZE || size == NP_MEMEFF_BWD_SIZE_OLD))
		return read_backward(p, size, sh, grid, block, v);
	return 0;
}

/* A stride the forward keeps as an int */
static uint64_t i32_stride(const unsigned char *p, uint32_t at)
{
	int32_t v = np_i32_at(p, at);
	return v > 0 ? (uint64_t)v : 0;
}

int np_memeff_reads(const unsigned char *p, uint32_t size, const struct np_memeff_shape *sh,
		    const uint32_t grid[3], const uint32_t block[3], uint64_t ptr[3],
		    uint64_t numel[3])
{
	struct np_memeff_view v;

	if (!np_memeff_read(p, size, sh, grid, block, &v))
		return 0;
	if (sh->kind == NP_MEMEFF_BWD) {        /* grad_output, (b, M, h, Dv) */
		uint32_t s = size == NP_MEMEFF_BWD_SIZE ? 0 : 8;
		struct np_bshd go = { np_u64_at(p, B_GRAD_OUTPUT), np_i32_at(p, B_NUM_BATCHES - s),
				      np_i32_at(p, B_NUM_QUERIES), np_i32_at(p, B_NUM_HEADS),
				      np_i32_at(p, B_HEAD_DIM_V), np_u64_at(p, B_GO_STRIDE_B - s),
				      np_u64_at(p, B_GO_STRIDE_M - s),
				      np_u64_at(p, B_GO_STRIDE_H - s) };
		numel[0] = np_bshd_numel(&go);
		ptr[0] = go.ptr;
		return numel[0] != 0;
	}
	/* query (b, M, h, D), key (b, N, h, D), value (b, N, h, Dv); a
	 * grouped-query launch's fewer key heads do not read as dense here */
	int32_t b = np_i32_at(p, F_NUM_BATCHES), h = np_i32_at(p, F_NUM_HEADS);
	int32_t rows[3] = { np_i32_at(p, F_NUM_QUERIES), np_i32_at(p, F_NUM_KEYS),
			    np_i32_at(p, F_NUM_KEYS) };
	int32_t dims[3] = { np_i32_at(p, F_HEAD_DIM), np_i32_at(p, F_HEAD_DIM),
			    np_i32_at(p, F_HEAD_DIM_V) };
	struct np_bshd t[3];
	for (int i = 0; i < 3; i++)
		t[i] = (struct np_bshd){ np_u64_at(p, F_QUERY + 8u * i), b, rows[i], h, dims[i],
					 np_u64_at(p, F_Q_STRIDE_B + 8u * i),
					 i32_stride(p, F_Q_STRIDE_M + 4u * i),
					 i32_stride(p, F_Q_STRIDE_H + 4u * i) };
	return np_qkv_ranges(t, sh->esize, ptr, numel);
}
