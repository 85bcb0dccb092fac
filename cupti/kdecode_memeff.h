/* kdecode_memeff.h - the outputs of PyTorch's memory-efficient attention
 * kernels (xformers' CUTLASS kernels, vendored as PyTorchMemEffAttention),
 * read from their by-value Params struct.
 *
 * scaled_dot_product_attention picks them where flash attention cannot
 * run: fp32 (every fp32 transformer's nn.MultiheadAttention with
 * need_weights=False, TransformerEncoderLayer), an attention mask, head
 * dims flash lacks.  Two kernel families, each one extern function per
 * configuration:
 *
 *   fmha_cutlassF_<t>_<aligned>_<Q>x<K>_<rf|gmem>_sm<N>(
 *       AttentionKernel<scalar_t, Arch, aligned, kQueriesPerBlock,
 *                       kKeysPerBlock, kMaxK, dropout, bias>::Params)
 *   on a grid (ceil(num_queries / Q), num_heads, num_batches) of
 *   (32, Q * K / 1024) threads; it writes O, (b, num_queries, h,
 *   head_dim_value) scalar_t, and the log-sum-exp, (b, h, lse_dim)
 *   floats, lse_dim num_queries rounded up to 32: the padding it fills
 *   with +inf on purpose.
 *
 *   fmha_cutlassB_<t>_..._sm<N>(AttentionBackwardKernel<Arch, scalar_t,
 *       aligned, dropout, preload, kBlockSizeI, kBlockSizeJ, kMaxK,
 *       kKeysQueriesAlignedToBlockSize>::Params)
 *   on a grid (num_splits_key, num_heads, num_batches) of I * J / 32
 *   threads; it writes grad_query (b, num_queries, h, head_dim), grad_key
 *   (b, num_keys, h, head_dim) and grad_value (b, num_keys, h,
 *   head_dim_value), their M stride gQKV_strideM_multiplier * h * dim:
 *   3 when PyTorch packs the three in one (b, M, 3, h, dim) tensor.
 *
 * Layouts (kernel_forward.h, kernel_backward.h; index_t int64_t):
 *
 *   forward, 272 bytes in torch 2.11 to 2.14:
 *     0 query, key, value, attn_bias   64 output_ptr, 80 logsumexp_ptr
 *    32 seqstart_q, seqstart_k         96 head_dim, head_dim_value,
 *   116 custom_mask_type (u8)             num_queries, num_keys (int)
 *   136 o_strideM (int)               192 num_batches, num_heads (int)
 *
 *   backward, 472 bytes in torch 2.14 (464 before: no q_heads_per_kv at
 *   164, custom_mask_type there, every field after it 8 bytes earlier):
 *    40 output_ptr                     64 cu_seqlens_q, cu_seqlens_k
 *    80 grad_query, grad_key,         144 head_dim, head_dim_value,
 *       grad_value                        num_queries, num_keys, num_heads
 *   168 custom_mask_type (u8)         224 gQKV_strideM_multiplier (i8)
 *   384 num_batches (int), 388 num_splits_key (i16)
 *   400 gQ_strideB, gK_strideB, gV_strideB   440 gQ_strideH, gK_strideH,
 *                                                gV_strideH (int64)
 *
 * A launch is believed only when all of it agrees: the grid and block
 * the name's blocks and the dimensions make, head dims within kMaxK, no
 * variable-length batch (seqstart/cu_seqlens null), a known mask type,
 * and for the backward a multiplier of 1 or 3, the query-heads-per-kv
 * ratio dividing num_heads, and the aligned kernels' num_queries and
 * num_keys multiples of the blocks.  Each output is read only when its
 * strides make one dense range (the packed gradients as one range of
 * 3 x); the log-sum-exp only when it has no padding (num_queries a
 * multiple of 32); grad_query not when a bottom-right causal mask leaves
 * queries that no key reaches (num_queries > num_keys), which the
 * kernel may never write.
 */
#ifndef NP_KDECODE_MEMEFF_H
#define NP_KDECODE_MEMEFF_H

#include <stdint.h>

#define NP_MEMEFF_FWD_SIZE 272
#define NP_MEMEFF_BWD_SIZE 472           /* torch 2.14 */
#define NP_MEMEFF_BWD_SIZE_OLD 464       /* torch 2.11 to 2.13 */

enum { NP_MEMEFF_NONE = 0, NP_MEMEFF_FWD, NP_MEMEFF_BWD };

/* What the kernel's name says (kdecode_attn.c). */
struct np_memeff_shape {
	uint8_t kind;            /* NP_MEMEFF_*; NONE: not read */
	uint8_t esize;           /* bytes of scalar_t: 4, or 2 (half, bfloat16) */
	uint8_t seq_aligned;     /* backward kKeysQueriesAlignedToBlockSize */
	uint16_t block_i;        /* forward kQueriesPerBlock, backward kBlockSizeI */
	uint16_t block_j;        /* forward kKeysPerBlock, backward kBlockSizeJ */
	uint32_t max_k;          /* kMaxK */
};

#define NP_MEMEFF_MAX_VIEW 3

/* What one launch writes: n ranges; lse[i] 1 for the forward's
 * log-sum-exp (floats), else elements of scalar_t. */
struct np_memeff_view {
	int n;
	uint64_t ptr[NP_MEMEFF_MAX_VIEW], numel[NP_MEMEFF_MAX_VIEW];
	uint8_t lse[NP_MEMEFF_MAX_VIEW];
};

/* Reads the Params p of size bytes for a launch of grid and block.
 * Fills *v and returns v->n (> 0) when every check above holds; 0
 * otherwise. */
int np_memeff_read(const unsigned char *p, uint32_t size, const struct np_memeff_shape *sh,
		   const uint32_t grid[3], const uint32_t block[3], struct np_memeff_view *v);

/* What the launch reads that came from elsewhere, for the generic tier
 * (np_kdecode_reads): the forward's query, key and value, each when
 * dense, or the three as one range when they are slices of one
 * projection's output (attn_layout.h); the backward's grad_output.  Into
 * ptr[] and numel[] (elements of scalar_t); returns how many, 0 when the
 * launch does not read as above. */
int np_memeff_reads(const unsigned char *p, uint32_t size, const struct np_memeff_shape *sh,
		    const uint32_t grid[3], const uint32_t block[3], uint64_t ptr[3],
		    uint64_t numel[3]);

#endif
