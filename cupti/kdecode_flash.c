/* kdecode_flash.c - flash attention's forward outputs, read from its
 * Flash_fwd_params (see kdecode_flash.h for the layout and the checks).
 *
 * Why it matters: SDPA's flash kernel is where a transformer's attention
 * runs in fp16/bf16 training.  Unread, a value it made non-finite (an
 * overflowing score, a row of -inf) was first seen at out_proj's reader,
 * one kernel too late.
 */
#include "kdecode_flash.h"
#include "param_bytes.h"

/* Flash_fwd_params offsets (kdecode_flash.h) */
#define Q_PTR 0
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

#define MAX_DIM (1 << 24)        /* any b, seqlen, h or d beyond is a misread */

int np_flash_read(const unsigned char *p, uint32_t size, const struct np_flash_shape *sh,
		  const uint32_t grid[3], const uint32_t block[3], struct np_flash_view *v)
{
	int32_t b, sq, sk, h, hk, d;

	if (!p || size != NP_FLASH_PARAMS_SIZE || !sh->head_dim || !sh->block_m || !sh->warps)
		return 0;
	b = np_i32_at(p, B), sq = np_i32_at(p, SEQLEN_Q), sk = np_i32_at(p, SEQLEN_K);
	h = np_i32_at(p, H), hk = np_i32_at(p, H_K), d = np_i32_at(p, D);
	if (b < 1 || sq < 1 || sk < 1 || h < 1 || hk < 1 || d < 1 || b > MAX_DIM ||
	    sq > MAX_DIM || sk > MAX_DIM || h > MAX_DIM || d > sh->head_dim)
		return 0;
	if (h % hk || np_i32_at(p, H_RATIO) != h / hk ||
	    np_i32_at(p, SEQLEN_Q_ROUNDED) != (sq + 127) / 128 * 128)
		return 0;
	/* run_flash_fwd's launch: grid (m blocks, b, h), kNWarps warps */
	if (grid[0] != (uint32_t)((sq + sh->block_m - 1) / sh->block_m) || grid[1] != (uint32_t)b ||
	    grid[2] != (uint32_t)h || block[0] != 32u * sh->warps || block[1] != 1 || block[2] != 1)
		return 0;
	if (p[IS_BF16] != sh->bf16 || np_u64_at(p, CU_SEQLENS_Q) || np_u64_at(p, CU_SEQLENS_K) ||
	    !np_pointer_like(np_u64_at(p, Q_PTR)))
		return 0;

	*v = (struct np_flash_view){ 0 };
	uint64_t o = np_u64_at(p, O_PTR), lse = np_u64_at(p, LSE_PTR);
	/* O (b, seqlen_q, h, d), innermost stride 1: dense when each stride
	 * is the size of what it steps over */
	if (np_pointer_like(o) && np_u64_at(p, O_HEAD_STRIDE) == (uint64_t)d &&
	    np_u64_at(p, O_ROW_STRIDE) == (uint64_t)h * (uint64_t)d &&
	    np_u64_at(p, O_BATCH_STRIDE) == (uint64_t)sq * (uint64_t)h * (uint64_t)d) {
		v->o = o;
		v->o_numel = (uint64_t)b * (uint64_t)sq * (uint64_t)h * (uint64_t)d;
	}
	if (np_pointer_like(lse) && p[UNPADDED_LSE] == 0) {
		v->lse = lse;
		v->lse_numel = (uint64_t)b * (uint64_t)h * (uint64_t)sq;
	}
	return v->o || v->lse;
}
