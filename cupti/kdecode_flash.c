/* kdecode_flash.c - flash attention's outputs, read from its
 * Flash_fwd_params and Flash_bwd_params (see kdecode_flash.h for the
 * layouts and the checks).
 *
 * Why it matters: SDPA's flash kernel is where a transformer's attention
 * runs in fp16/bf16 training.  Unread, a value it made non-finite (an
 * overflowing score, a row of -inf) was first seen at out_proj's reader,
 * one kernel too late; one its backward made, at in_proj's weight
 * gradient, in another op.
 */
#include "kdecode_flash.h"
#include "attn_layout.h"
#include "param_bytes.h"

/* Flash_fwd_params offsets (kdecode_flash.h) */
#define Q_PTR 0                 /* then k_ptr, v_ptr */
#define Q_BATCH_STRIDE 24       /* then k's, v's; the row strides, the head strides */
#define Q_ROW_STRIDE 48
#define Q_HEAD_STRIDE 72
#define H 96
#define H_K 100
#define H_RATIO 104
#define O_PTR 112
#define O_BATCH_STRIDE 128
#define O_ROW_STRIDE 136
#define O_HEAD_STRIDE 144
#define LSE_PTR 160
#define B 176
#define SEQLEN_Q 180
#define SEQLEN_K 184
#define D 192
#define SEQLEN_Q_ROUNDED 196
#define CU_SEQLENS_Q 224
#define CU_SEQLENS_K 232
#define IS_BF16 440
#define UNPADDED_LSE 464
/* Flash_bwd_params: Flash_fwd_params, then */
#define DO_PTR 472
#define DO_BATCH_STRIDE 528
#define DO_ROW_STRIDE 536
#define DO_HEAD_STRIDE 544
#define DQ_PTR 480
#define DK_PTR 488
#define DV_PTR 496
#define DQ_BATCH_STRIDE 552
#define DK_BATCH_STRIDE 560
#define DV_BATCH_STRIDE 568
#define DQ_ROW_STRIDE 576
#define DK_ROW_STRIDE 584
#define DV_ROW_STRIDE 592
#define DQ_HEAD_STRIDE 600
#define DK_HEAD_STRIDE 608
#define DV_HEAD_STRIDE 616
#define DETERMINISTIC 632

#define MAX_DIM (1 << 24)        /* any b, seqlen, h or d beyond is a misread */

/* The (b, rows, h, d) tensor at the pointer at ptr_at, with the element
 * strides at the three offsets. */
static struct np_bshd bshd_at(const unsigned char *p, uint32_t ptr_at, uint32_t batch_at,
			      uint32_t row_at, uint32_t head_at, int32_t b, int32_t rows, int32_t h,
			      int32_t d)
{
	return (struct np_bshd){ np_u64_at(p, ptr_at), b, rows, h, d, np_u64_at(p, batch_at),
				 np_u64_at(p, row_at), np_u64_at(p, head_at) };
}

static uint64_t bshd_numel(const unsigned char *p, uint32_t ptr_at, uint32_t batch_at,
			   uint32_t row_at, uint32_t head_at, int32_t b, int32_t rows, int32_t h,
			   int32_t d)
{
	struct np_bshd t = bshd_at(p, ptr_at, batch_at, row_at, head_at, b, rows, h, d);
	return np_bshd_numel(&t);
}

static uint32_t blocks(int32_t n, uint16_t per)
{
	return (uint32_t)((n + per - 1) / per);
}

int np_flash_read(const unsigned char *p, uint32_t size, const struct np_flash_shape *sh,
		  const uint32_t grid[3], const uint32_t block[3], struct np_flash_view *v)
{
	int32_t b, sq, sk, h, hk, d;
	int fwd = sh->kind == NP_FLASH_FWD;

	if (!p || size != (fwd ? NP_FLASH_PARAMS_SIZE : NP_FLASH_BWD_PARAMS_SIZE) ||
	    !sh->head_dim || !sh->block_m || !sh->warps || (!fwd && !sh->block_n))
		return 0;
	b = np_i32_at(p, B), sq = np_i32_at(p, SEQLEN_Q), sk = np_i32_at(p, SEQLEN_K);
	h = np_i32_at(p, H), hk = np_i32_at(p, H_K), d = np_i32_at(p, D);
	if (b < 1 || sq < 1 || sk < 1 || h < 1 || hk < 1 || d < 1 || b > MAX_DIM ||
	    sq > MAX_DIM || sk > MAX_DIM || h > MAX_DIM || d > sh->head_dim)
		return 0;
	if (h % hk || np_i32_at(p, H_RATIO) != h / hk ||
	    np_i32_at(p, SEQLEN_Q_ROUNDED) != (sq + 127) / 128 * 128)
		return 0;
	/* run_flash_fwd's and run_flash_bwd_seqk_parallel's launches: grid
	 * (row blocks, b, h), kNWarps warps; the dK, dV kernel's x is its
	 * key blocks, or whatever the deterministic mode chose */
	uint32_t x = sh->kind == NP_FLASH_BWD_DKDV ? blocks(sk, sh->block_n) : blocks(sq, sh->block_m);
	int any_x = sh->kind == NP_FLASH_BWD_DKDV && p[DETERMINISTIC];
	if ((any_x ? grid[0] < 1 : grid[0] != x) || grid[1] != (uint32_t)b ||
	    grid[2] != (uint32_t)h || block[0] != 32u * sh->warps || block[1] != 1 || block[2] != 1)
		return 0;
	if (p[IS_BF16] != sh->bf16 || np_u64_at(p, CU_SEQLENS_Q) || np_u64_at(p, CU_SEQLENS_K) ||
	    !np_pointer_like(np_u64_at(p, Q_PTR)))
		return 0;

	*v = (struct np_flash_view){ 0 };
	if (sh->kind == NP_FLASH_BWD_DQ) {
		v->o_numel = bshd_numel(p, DQ_PTR, DQ_BATCH_STRIDE, DQ_ROW_STRIDE, DQ_HEAD_STRIDE, b,
					sq, h, d);
		v->o = v->o_numel ? np_u64_at(p, DQ_PTR) : 0;
		return v->o != 0;
	}
	if (sh->kind == NP_FLASH_BWD_DKDV) {
		v->o_numel = bshd_numel(p, DK_PTR, DK_BATCH_STRIDE, DK_ROW_STRIDE, DK_HEAD_STRIDE, b,
					sk, h, d);
		v->o = v->o_numel ? np_u64_at(p, DK_PTR) : 0;
		v->dv_numel = bshd_numel(p, DV_PTR, DV_BATCH_STRIDE, DV_ROW_STRIDE, DV_HEAD_STRIDE, b,
					 sk, h, d);
		v->dv = v->dv_numel ? np_u64_at(p, DV_PTR) : 0;
		return v->o || v->dv;
	}
	/* O (b, seqlen_q, h, d) */
	v->o_numel = bshd_numel(p, O_PTR, O_BATCH_STRIDE, O_ROW_STRIDE, O_HEAD_STRIDE, b, sq, h,
				d);
	v->o = v->o_numel ? np_u64_at(p, O_PTR) : 0;
	uint64_t lse = np_u64_at(p, LSE_PTR);
	if (np_pointer_like(lse) && p[UNPADDED_LSE] == 0) {
		v->lse = lse;
		v->lse_numel = (uint64_t)b * (uint64_t)h * (uint64_t)sq;
	}
	return v->o || v->lse;
}

int np_flash_reads(const unsigned char *p, uint32_t size, const struct np_flash_shape *sh,
		   const uint32_t grid[3], const uint32_t block[3], uint64_t ptr[3],
		   uint64_t numel[3])
{
	struct np_flash_view v;
	int32_t b, sq, sk, h, hk, d;

	if (!np_flash_read(p, size, sh, grid, block, &v))
		return 0;
	b = np_i32_at(p, B), sq = np_i32_at(p, SEQLEN_Q), sk = np_i32_at(p, SEQLEN_K);
	h = np_i32_at(p, H), hk = np_i32_at(p, H_K), d = np_i32_at(p, D);
	if (sh->kind == NP_FLASH_BWD_DKDV) {     /* dO, (b, seqlen_q, h, d) */
		numel[0] = bshd_numel(p, DO_PTR, DO_BATCH_STRIDE, DO_ROW_STRIDE, DO_HEAD_STRIDE, b,
				      sq, h, d);
		ptr[0] = np_u64_at(p, DO_PTR);
		return numel[0] != 0;
	}
	if (sh->kind != NP_FLASH_FWD)
		return 0;
	struct np_bshd t[3];
	for (int i = 0; i < 3; i++)     /* q, k, v: pointers and each stride kind 8 apart */
		t[i] = bshd_at(p, Q_PTR + 8u * i, Q_BATCH_STRIDE + 8u * i, Q_ROW_STRIDE + 8u * i,
			       Q_HEAD_STRIDE + 8u * i, b, i ? sk : sq, i ? hk : h, d);
	return np_qkv_ranges(t, 2, ptr, numel);
}
