/* kdecode_flash.h - the outputs of PyTorch's flash attention forward
 * kernel, read from its by-value parameter struct.
 *
 * scaled_dot_product_attention on fp16/bf16 picks FlashAttention-2, which
 * PyTorch vendors as namespace pytorch_flash:
 *
 *   flash_fwd_kernel<Flash_fwd_kernel_traits<kHeadDim, kBlockM, kBlockN,
 *       kNWarps, .., elem_type, ..>, Is_dropout, Is_causal, ..>
 *       (pytorch_flash::Flash_fwd_params)
 *
 * launched on a grid (ceil(seqlen_q / kBlockM), b, h) of kNWarps x 32
 * threads.  It writes O, (b, seqlen_q, h, d) elements of elem_type with
 * element strides o_batch_stride, o_row_stride, o_head_stride, and the
 * softmax's log-sum-exp, (b, h, seqlen_q) floats.  The struct (flash.h:
 * Qkv_params, then Flash_fwd_params; index_t int64_t) is 472 bytes, as
 * torch 2.14.1's cubin says its parameter is:
 *
 *     0 q_ptr, k_ptr, v_ptr          96 h, h_k, h_h_k_ratio (int)
 *   112 o_ptr, oaccum_ptr           128 o_batch_stride, o_row_stride,
 *   152 p_ptr, softmax_lse_ptr,         o_head_stride (int64_t)
 *       softmax_lseaccum_ptr        176 b, seqlen_q, seqlen_k, seqlen_knew, d,
 *   224 cu_seqlens_q, cu_seqlens_k      seqlen_q_rounded, .. (int)
 *   440 is_bf16                     464 unpadded_lse
 *
 * The launch is believed only when all of it agrees: the grid and block
 * the traits and the dimensions make, h a multiple of h_k with
 * h_h_k_ratio their quotient, seqlen_q_rounded seqlen_q rounded up to
 * 128, d at most kHeadDim, is_bf16 the traits' type, and no variable
 * length batch (cu_seqlens_q, cu_seqlens_k null).  O is checked when its
 * strides make it one dense range, the log-sum-exp when it is laid out
 * padded (unpadded_lse false).
 *
 * The backward (run_flash_bwd_seqk_parallel) launches three kernels with
 * Flash_bwd_params, the same struct followed by the gradients' (648
 * bytes):
 *
 *   472 do_ptr, dq_ptr, dk_ptr, dv_ptr, dq_accum_ptr, dk_accum_ptr,
 *       dv_accum_ptr
 *   528 do_batch_stride, do_row_stride, do_head_stride, dq_batch_stride,
 *       dk_batch_stride, dv_batch_stride, dq_row_stride, dk_row_stride,
 *       dv_row_stride, dq_head_stride, dk_head_stride, dv_head_stride
 *   624 dsoftmax_sum  632 deterministic  640 dq_accum_split_stride
 *
 *   flash_bwd_dot_do_o_kernel: dsoftmax_sum and a zeroed dq_accum, float
 *       scratch: not read;
 *   flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<
 *       kHeadDim, kBlockM, kBlockN, kNWarps, .., elem_type, ..>, ..> on
 *       (ceil(seqlen_k / kBlockN), b, h) blocks (any x when deterministic:
 *       each block then loops) of kNWarps x 32: dK and dV, (b, seqlen_k,
 *       h, d) each (h query heads: PyTorch sums grouped heads afterwards),
 *       zeros for keys no query sees; dQ only accumulated, in dq_accum;
 *   flash_bwd_convert_dq_kernel<traits>(params, int) on (ceil(seqlen_q /
 *       kBlockM), b, h): dQ, (b, seqlen_q, h, d), from dq_accum.
 *
 * The forward's checks hold for these too, with their own grids.  The
 * split-KV kernels are not read.
 */
#ifndef NP_KDECODE_FLASH_H
#define NP_KDECODE_FLASH_H

#include <stdint.h>

#define NP_FLASH_PARAMS_SIZE 472
#define NP_FLASH_BWD_PARAMS_SIZE 648

enum { NP_FLASH_FWD = 0, NP_FLASH_BWD_DKDV, NP_FLASH_BWD_DQ };

/* What the kernel's name says (kdecode_attn.c). */
struct np_flash_shape {
	uint16_t head_dim;       /* kHeadDim; 0: not a flash kernel read */
	uint16_t block_m;        /* kBlockM */
	uint16_t block_n;        /* kBlockN (the backward's dK, dV grid) */
	uint8_t warps;           /* kNWarps */
	uint8_t bf16;            /* elem_type cutlass::bfloat16_t (else half_t) */
	uint8_t kind;            /* NP_FLASH_*: which kernel */
};

/* What one launch writes: the forward O and the log-sum-exp; the
 * backward's dK, dV kernel dK and dV; its dQ kernel dQ. */
struct np_flash_view {
	uint64_t o, o_numel;     /* O, dK or dQ; 0, 0: not one dense range */
	uint64_t lse, lse_numel; /* forward: floats, 0, 0: not read */
	uint64_t dv, dv_numel;   /* dK, dV kernel: dV; 0, 0: not one dense range */
};

/* Reads the parameter struct p of size bytes for a launch of grid and
 * block.  Fills *v and returns 1 when every check above holds and some
 * output is readable; 0 otherwise. */
int np_flash_read(const unsigned char *p, uint32_t size, const struct np_flash_shape *sh,
		  const uint32_t grid[3], const uint32_t block[3], struct np_flash_view *v);

/* What the launch reads that came from elsewhere, for the generic tier
 * (np_kdecode_reads): the forward's q, k and v, each when dense, or the
 * three as one range when they are slices of one projection's output
 * (attn_layout.h); the dK/dV kernel's dO.  Into ptr[] and numel[]
 * (elements of the kernel's type); returns how many, 0 when the launch
 * does not read as above. */
int np_flash_reads(const unsigned char *p, uint32_t size, const struct np_flash_shape *sh,
		   const uint32_t grid[3], const uint32_t block[3], uint64_t ptr[3],
		   uint64_t numel[3]);

#endif
