/* memeff_params.h - memory-efficient attention's forward Params
 * (AttentionKernel<..>::Params in kernel_forward.h, torch 2.11 to 2.14),
 * transcribed for the tests that fill one as attention.cu does: the
 * decoder's unit tests (test_kdecode_memeff.c) and the fake driver's
 * attention op (tests/fakecuda/fake_ops.c). */
#ifndef NP_TEST_MEMEFF_PARAMS_H
#define NP_TEST_MEMEFF_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../../cupti/kdecode_memeff.h"

struct philox {                         /* at::PhiloxCudaState */
	uint64_t seed, offset, offset_intragraph;
	bool captured;
};

struct fwd_params {                     /* AttentionKernel<..>::Params, 2.11 to 2.14 */
	const void *query, *key, *value, *attn_bias;
	const int32_t *seqstart_q, *seqstart_k, *seqlen_k;
	uint32_t causal_diagonal_offset;
	void *output, *output_accum;
	float *logsumexp;
	int32_t window_size;
	float scale;
	int32_t head_dim, head_dim_value, num_queries, num_keys, num_keys_absolute;
	uint8_t custom_mask_type;
	int32_t q_strideM, k_strideM, v_strideM, bias_strideM, o_strideM;
	int32_t q_strideH, k_strideH, v_strideH;
	int64_t bias_strideH, q_strideB, k_strideB, v_strideB, bias_strideB;
	int32_t num_batches, num_heads;
	int32_t q_heads_per_kv;         /* 2.14; 2.11 has use_dropout here, the size is the same */
	bool use_dropout;
	unsigned long long dropout_batch_head_rng_offset;
	float dropout_prob;
	struct philox rng_engine_inputs;
	int64_t *extragraph_offset, *seed;
};
_Static_assert(sizeof(struct fwd_params) == NP_MEMEFF_FWD_SIZE, "kernel_forward.h's size");
_Static_assert(offsetof(struct fwd_params, output) == 64 &&
	       offsetof(struct fwd_params, logsumexp) == 80 &&
	       offsetof(struct fwd_params, head_dim) == 96 &&
	       offsetof(struct fwd_params, custom_mask_type) == 116 &&
	       offsetof(struct fwd_params, o_strideM) == 136 &&
	       offsetof(struct fwd_params, num_batches) == 192,
	       "the offsets kdecode_memeff.c reads");

#endif
