/* test_kdecode_memeff.c - memory-efficient attention's outputs, read from
 * its Params (cupti/kdecode_memeff.c through np_kdecode_outputs).
 *
 * The kernels are torch's own (names and parameter sizes from
 * tests/unit/fixtures/torch_kernels.tsv, torch 2.14.1, and
 * torch_kernels_2.11.tsv, torch 2.11.0).  The structs below transcribe
 * kernel_forward.h's and kernel_backward.h's Params as those versions
 * declare them: their sizes must be the cubins', or the layout this test
 * and the decoder assume is not torch's.  Each launch is filled as
 * attention.cu and attention_backward.cu fill it; each test then breaks
 * one thing. */
#include <stdbool.h>
#include <stddef.h>
#include "fixture.h"
#include "memeff_params.h"
#include "../../cupti/kdecode.h"

/* AttentionBackwardKernel<..>::Params: torch 2.14's has q_heads_per_kv */
#define BWD_PARAMS(name, q_heads_per_kv_field)                                         \
	struct name {                                                                  \
		const void *query, *key, *value, *bias;                                \
		const float *logsumexp;                                                \
		const void *output, *grad_output;                                      \
		float *delta;                                                          \
		const int32_t *cu_seqlens_q, *cu_seqlens_k;                            \
		void *grad_query, *grad_key, *grad_value, *grad_bias;                  \
		float *workspace, *workspace_gv;                                       \
		void *workspace_gq;                                                    \
		int32_t window_size;                                                   \
		float scale;                                                           \
		int32_t head_dim, head_dim_value, num_queries, num_keys, num_heads;    \
		q_heads_per_kv_field                                                   \
		uint8_t custom_mask_type;                                              \
		int64_t q_strideM, k_strideM, v_strideM, bias_strideM, gO_strideM,     \
			gB_strideM;                                                    \
		int8_t gQKV_strideM_multiplier;                                        \
		struct philox rng_engine_inputs;                                       \
		unsigned long long dropout_batch_head_rng_offset;                      \
		float dropout_prob;                                                    \
		int64_t o_strideH;                                                     \
		int32_t q_strideH, k_strideH, v_strideH;                               \
		int64_t bias_strideH, o_strideB, q_strideB, k_strideB, v_strideB,      \
			bias_strideB, lse_strideB, lse_strideH, delta_strideB,         \
			delta_strideH;                                                 \
		int32_t num_batches;                                                   \
		int16_t num_splits_key;                                                \
		int64_t gO_strideB, gQ_strideB, gK_strideB, gV_strideB, gB_strideB,    \
			gO_strideH, gQ_strideH, gK_strideH, gV_strideH, gB_strideH;    \
	}
BWD_PARAMS(bwd_params, int32_t q_heads_per_kv;);
BWD_PARAMS(bwd_params_2_11, );
_Static_assert(sizeof(struct bwd_params) == NP_MEMEFF_BWD_SIZE, "torch 2.14's size");
_Static_assert(sizeof(struct bwd_params_2_11) == NP_MEMEFF_BWD_SIZE_OLD, "torch 2.11's size");
_Static_assert(offsetof(struct bwd_params, grad_query) == 80 &&
	       offsetof(struct bwd_params, head_dim) == 144 &&
	       offsetof(struct bwd_params, q_heads_per_kv) == 164 &&
	       offsetof(struct bwd_params, custom_mask_type) == 168 &&
	       offsetof(struct bwd_params, gQKV_strideM_multiplier) == 224 &&
	       offsetof(struct bwd_params, num_batches) == 384 &&
	       offsetof(struct bwd_params, num_splits_key) == 388 &&
	       offsetof(struct bwd_params, gQ_strideB) == 400 &&
	       offsetof(struct bwd_params, gQ_strideH) == 440 &&
	       offsetof(struct bwd_params_2_11, num_batches) == 376 &&
	       offsetof(struct bwd_params_2_11, gV_strideH) == 448,
	       "the offsets kdecode_memeff.c reads");

#define Q 0x7f0000100000ull
#define O 0x7f0000800000ull
#define LSE 0x7f0000900000ull
#define GQ 0x7f0001000000ull

static struct np_kinfo ki;
static struct np_kparams layout;
static struct np_klaunch kl;

static void kernel(const char *sub, unsigned size)
{
	const struct kline *k = fixture_find(sub);
	cr_assert_eq(np_kdecode_classify(k->dem, &ki), NP_KF_MEMEFF, "%s", k->dem);
	cr_assert_eq(np_kdecode_layout_parse(k->layout, &layout), 1);
	cr_assert_eq(layout.p[0].size, size, "%s: the cubin's parameter size", fixture_path);
}

static void launch(uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by)
{
	kl = (struct np_klaunch){ .threads = (uint64_t)gx * gy * gz * bx * by,
				  .blocks = gx * gy * gz, .grid = { gx, gy, gz },
				  .block = { bx, by, 1 } };
}

static int decode(void *prm, struct np_kbuf *out)
{
	void *kp[1] = { prm };
	return np_kdecode_outputs(&ki, &layout, kp, &kl, out, NP_KD_MAX_OUTPUTS);
}

/* ---- forward: b 2, M = N = 128, 8 heads of 64, fp32, 64x64 blocks ---- */

static struct fwd_params fp;

static void fwd_fill(void)
{
	memset(&fp, 0xa5, sizeof(fp));          /* fields left unset hold garbage */
	int b = 2, m = 128, h = 8, d = 64;
	fp.query = (void *)Q, fp.key = (void *)(Q + 0x100000), fp.value = (void *)(Q + 0x200000);
	fp.attn_bias = NULL, fp.seqstart_q = fp.seqstart_k = fp.seqlen_k = NULL;
	fp.output = (void *)O, fp.output_accum = NULL, fp.logsumexp = (float *)LSE;
	fp.head_dim = fp.head_dim_value = d, fp.num_queries = fp.num_keys = m;
	fp.custom_mask_type = 0;
	fp.o_strideM = h * d;
	fp.num_batches = b, fp.num_heads = h;
	launch(2, 8, 2, 32, 4);                 /* (ceil(128 / 64), h, b), 64 * 64 / 1024 warps */
}

static void forward_setup(void)
{
	fixture_load();
	kernel("fmha_cutlassF_f32_aligned_64x64_rf_sm80(", NP_MEMEFF_FWD_SIZE);
	fwd_fill();
}

TestSuite(memeff_forward, .init = forward_setup, .fini = fixture_unload);

Test(memeff_forward, the_name_gives_the_blocks_and_type)
{
	cr_expect_eq(ki.memeff.kind, NP_MEMEFF_FWD);
	cr_expect_eq(ki.memeff.block_i, 64);
	cr_expect_eq(ki.memeff.block_j, 64);
	cr_expect_eq(ki.memeff.max_k, 64);
	cr_expect_eq(ki.memeff.esize, 4);
	cr_expect_eq(ki.dtype, NP_DT_F32);
	struct np_kinfo other;
	np_kdecode_classify(fixture_find("fmha_cutlassF_f32_aligned_32x128_gmem_sm80(")->dem, &other);
	cr_expect_eq(other.memeff.block_i, 32);
	cr_expect_eq(other.memeff.block_j, 128);
	cr_expect_eq(other.memeff.max_k, 65536);
	np_kdecode_classify(fixture_find("fmha_cutlassF_bf16_aligned_64x128_rf_sm80(")->dem, &other);
	cr_expect_eq(other.dtype, NP_DT_BF16);
	cr_expect_eq(other.memeff.esize, 2);
	np_kdecode_classify("fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::"
			    "AttentionKernel<double, cutlass::arch::Sm80, true, 64, 64, 64, true, "
			    "true>::Params)", &other);
	cr_expect_neq(other.family, NP_KF_MEMEFF, "no such type: not read");
}

Test(memeff_forward, o_and_the_log_sum_exp)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	cr_assert_eq(decode(&fp, out), 2);
	cr_expect_eq(out[0].ptr, O);
	cr_expect_eq(out[0].numel, 2ull * 128 * 8 * 64);
	cr_expect_eq(out[0].dtype, NP_DT_F32);
	cr_expect_eq(out[0].how, NP_KH_MEMEFF);
	cr_expect_eq(out[0].n_in, -1, "judged on the launch's words: q, k, v");
	cr_expect_eq(out[1].ptr, LSE);
	cr_expect_eq(out[1].numel, 2ull * 8 * 128);
	cr_expect_eq(out[1].dtype, NP_DT_F32);
}

Test(memeff_forward, a_padded_log_sum_exp_is_not_read)
{
	/* 100 queries: each row of 128 ends in 28 +inf the kernel writes */
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	fp.num_queries = 100;
	cr_assert_eq(decode(&fp, out), 1);
	cr_expect_eq(out[0].ptr, O);
	cr_expect_eq(out[0].numel, 2ull * 100 * 8 * 64);
}

Test(memeff_forward, a_launch_that_disagrees_with_the_params_yields_nothing)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	launch(1, 8, 2, 32, 4);
	cr_expect_eq(decode(&fp, out), 0, "128 queries need 2 blocks of 64");
	launch(2, 4, 2, 32, 4);
	cr_expect_eq(decode(&fp, out), 0, "grid.y is h");
	launch(2, 8, 1, 32, 4);
	cr_expect_eq(decode(&fp, out), 0, "grid.z is b");
	launch(2, 8, 2, 128, 1);
	cr_expect_eq(decode(&fp, out), 0, "(32, warps) threads");
	cr_expect_eq(np_kdecode_outputs(&ki, &layout, (void *[]){ &fp }, NULL, out, 4), 0,
		     "no launch known");
	launch(2, 8, 2, 32, 4);
	cr_expect_eq(decode(&fp, out), 2);
}

Test(memeff_forward, the_params_must_hold_together)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	fp.head_dim_value = 96;
	cr_expect_eq(decode(&fp, out), 0, "a head dim above the kernel's kMaxK 64");
	fp.head_dim_value = 64, fp.seqstart_q = (int32_t *)0x7f0000a00000ull;
	cr_expect_eq(decode(&fp, out), 0, "variable-length batches are not read");
	fp.seqstart_q = NULL, fp.custom_mask_type = 7;
	cr_expect_eq(decode(&fp, out), 0, "no such mask type");
	fp.custom_mask_type = 1, fp.num_batches = 0;
	cr_expect_eq(decode(&fp, out), 0);
	fp.num_batches = 2;
	cr_expect_eq(decode(&fp, out), 2, "causal: the same outputs");
	layout.p[0].size = 264;
	cr_expect_eq(decode(&fp, out), 0, "another kernel_forward.h's size");
}

Test(memeff_forward, o_only_when_dense)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	fp.o_strideM = 3 * 8 * 64;              /* rows of a wider tensor: gaps */
	cr_assert_eq(decode(&fp, out), 1);
	cr_expect_eq(out[0].ptr, LSE, "the log-sum-exp alone");
	fp.logsumexp = NULL;
	cr_expect_eq(decode(&fp, out), 0, "neither");
}

Test(memeff_forward, query_key_value_are_read_each_or_as_one_projection)
{
	struct np_kread in[8];
	void *kp[1] = { &fp };
	/* three (b, M, h, d) tensors */
	fp.q_strideB = fp.k_strideB = fp.v_strideB = 128 * 8 * 64;
	fp.q_strideM = fp.k_strideM = fp.v_strideM = 8 * 64;
	fp.q_strideH = fp.k_strideH = fp.v_strideH = 64;
	cr_assert_eq(np_kdecode_reads(&ki, &layout, kp, &kl, in, 8), 3);
	cr_expect_eq(in[2].ptr, Q + 0x200000);
	cr_expect_eq(in[2].numel, 2ull * 128 * 8 * 64);
	cr_expect_eq(in[2].dtype, NP_DT_F32);
	/* slices of one (b, M, 3, h, d) projection: one range */
	fp.key = (void *)(Q + 8 * 64 * 4), fp.value = (void *)(Q + 2 * 8 * 64 * 4);
	fp.q_strideB = fp.k_strideB = fp.v_strideB = 128 * 3 * 8 * 64;
	fp.q_strideM = fp.k_strideM = fp.v_strideM = 3 * 8 * 64;
	cr_assert_eq(np_kdecode_reads(&ki, &layout, kp, &kl, in, 8), 1);
	cr_expect_eq(in[0].ptr, Q);
	cr_expect_eq(in[0].numel, 3ull * 2 * 128 * 8 * 64);
}

/* ---- backward: b 2, M = N = 128, 8 heads of 64, fp32, 64x64 blocks ---- */

static struct bwd_params bp;
static const uint64_t HD = 8 * 64;      /* one row of one gradient */

/* Fills either layout as attention_backward.cu does: packed, one
 * (b, M, 3, h, d) tensor for the three gradients, else three (b, M, h, d) */
#define BWD_FILL(p, packed)                                                           \
	do {                                                                          \
		int b_ = 2, m_ = 128, h_ = 8, d_ = 64;                                \
		memset(p, 0xa5, sizeof(*p));                                          \
		p->query = (void *)Q, p->key = (void *)(Q + 0x100000);                \
		p->value = (void *)(Q + 0x200000);                                    \
		p->bias = NULL, p->cu_seqlens_q = p->cu_seqlens_k = NULL;             \
		p->head_dim = p->head_dim_value = d_, p->num_queries = m_;            \
		p->num_keys = m_, p->num_heads = h_;                                  \
		p->custom_mask_type = 0;                                              \
		p->gQKV_strideM_multiplier = (packed) ? 3 : 1;                        \
		p->num_batches = b_, p->num_splits_key = 2;                           \
		p->grad_bias = NULL;                                                  \
		p->grad_query = (void *)GQ;                                           \
		p->grad_key = (void *)(GQ + ((packed) ? HD * 4 : 0x1000000));         \
		p->grad_value = (void *)(GQ + ((packed) ? 2 * HD * 4 : 0x2000000));   \
		p->gQ_strideB = p->gK_strideB = p->gV_strideB =                       \
			(int64_t)m_ * ((packed) ? 3 : 1) * h_ * d_;                   \
		p->gQ_strideH = p->gK_strideH = p->gV_strideH = d_;                   \
	} while (0)

static void bwd_fill(struct bwd_params *p, int packed)
{
	BWD_FILL(p, packed);
	p->q_heads_per_kv = 1;
}

static void backward_setup(void)
{
	fixture_load();
	kernel("fmha_cutlassB_f32_aligned_64x64_k64_sm80(", NP_MEMEFF_BWD_SIZE);
	bwd_fill(&bp, 0);
	launch(2, 8, 2, 128, 1);                /* (num_splits_key, h, b), 64 * 64 / 32 threads */
}

TestSuite(memeff_backward, .init = backward_setup, .fini = fixture_unload);

Test(memeff_backward, the_name_gives_the_blocks_and_type)
{
	cr_expect_eq(ki.memeff.kind, NP_MEMEFF_BWD);
	cr_expect_eq(ki.memeff.block_i, 64);
	cr_expect_eq(ki.memeff.block_j, 64);
	cr_expect_eq(ki.memeff.max_k, 64);
	cr_expect_eq(ki.memeff.seq_aligned, 0);
	cr_expect_eq(ki.dtype, NP_DT_F32);
	struct np_kinfo other;
	np_kdecode_classify(
		fixture_find("fmha_cutlassB_f32_aligned_128x64_k65536_dropout_sm80(")->dem, &other);
	cr_expect_eq(other.memeff.block_i, 128);
	cr_expect_eq(other.memeff.max_k, 65536);
	np_kdecode_classify(fixture_find("fmha_cutlassB_bf16_aligned_64x64_k64_sm80(")->dem, &other);
	cr_expect_eq(other.dtype, NP_DT_BF16);
}

Test(memeff_backward, the_three_gradients)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	cr_assert_eq(decode(&bp, out), 3);
	uint64_t want[3] = { GQ, GQ + 0x1000000, GQ + 0x2000000 };
	for (int i = 0; i < 3; i++) {
		cr_expect_eq(out[i].ptr, want[i], "gradient %d", i);
		cr_expect_eq(out[i].numel, 2 * 128 * HD);
		cr_expect_eq(out[i].dtype, NP_DT_F32);
		cr_expect_eq(out[i].how, NP_KH_MEMEFF);
	}
}

Test(memeff_backward, packed_gradients_are_one_range)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	bwd_fill(&bp, 1);
	cr_assert_eq(decode(&bp, out), 1);
	cr_expect_eq(out[0].ptr, GQ);
	cr_expect_eq(out[0].numel, 3 * 2 * 128 * HD);
	bp.grad_value = (void *)(GQ + 0x2000000);
	cr_expect_eq(decode(&bp, out), 0, "not the third slice: not read");
	bwd_fill(&bp, 1);
	bp.gQKV_strideM_multiplier = 2;
	cr_expect_eq(decode(&bp, out), 0, "a multiplier of 1 or 3");
}

Test(memeff_backward, a_bottom_right_causal_mask_leaves_queries_unwritten)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	bp.custom_mask_type = 2, bp.num_keys = 64;
	bp.gK_strideB = bp.gV_strideB = 64 * HD; /* key.sizes(): 64 rows a batch */
	cr_assert_eq(decode(&bp, out), 2, "queries 0..63 see no key: grad_query not read");
	cr_expect_eq(out[0].ptr, GQ + 0x1000000);
	cr_expect_eq(out[0].numel, 2 * 64 * HD);
	bp.custom_mask_type = 1;
	cr_expect_eq(decode(&bp, out), 3, "top-left: every query sees key 0");
	bwd_fill(&bp, 1);
	bp.custom_mask_type = 2, bp.num_keys = 64;
	cr_expect_eq(decode(&bp, out), 0, "packed needs M == N");
}

Test(memeff_backward, a_launch_that_disagrees_with_the_params_yields_nothing)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	launch(3, 8, 2, 128, 1);
	cr_expect_eq(decode(&bp, out), 0, "grid.x is num_splits_key");
	launch(2, 8, 2, 256, 1);
	cr_expect_eq(decode(&bp, out), 0, "64 x 64 blocks run 128 threads");
	launch(2, 8, 2, 128, 1);
	bp.q_heads_per_kv = 3;
	cr_expect_eq(decode(&bp, out), 0, "8 heads are not a multiple of 3");
	bp.q_heads_per_kv = 2;
	cr_expect_eq(decode(&bp, out), 3, "grouped-query attention");
	bp.cu_seqlens_q = (int32_t *)0x7f0000a00000ull;
	cr_expect_eq(decode(&bp, out), 0, "variable-length batches are not read");
	bp.cu_seqlens_q = NULL, bp.head_dim = 128;
	cr_expect_eq(decode(&bp, out), 0, "a head dim above kMaxK");
}

Test(memeff_backward, the_aligned_kernels_need_whole_blocks)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	np_kdecode_classify("fmha_cutlassB_f32_aligned_64x64_k64_seqaligned_sm80(PyTorchMemEffAttention"
			    "::AttentionBackwardKernel<cutlass::arch::Sm80, float, true, false, false, "
			    "64, 64, 64, true>::Params)", &ki);
	cr_assert_eq(ki.memeff.seq_aligned, 1);
	cr_expect_eq(decode(&bp, out), 3);
	bp.num_queries = 100;
	cr_expect_eq(decode(&bp, out), 0, "100 queries are not whole blocks of 64");
}

Test(memeff_backward, grad_output_is_read)
{
	struct np_kread in[8];
	void *kp[1] = { &bp };
	bp.grad_output = (void *)0x7f0005000000ull;
	bp.gO_strideB = 128 * HD, bp.gO_strideM = HD, bp.gO_strideH = 64;
	cr_assert_eq(np_kdecode_reads(&ki, &layout, kp, &kl, in, 8), 1);
	cr_expect_eq(in[0].ptr, 0x7f0005000000ull);
	cr_expect_eq(in[0].numel, 2 * 128 * HD);
	bp.gO_strideM = 2 * HD;
	cr_expect_eq(np_kdecode_reads(&ki, &layout, kp, &kl, in, 8), 0, "gaps");
}

Test(memeff_backward, a_gradient_with_gaps_is_not_read)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	bp.gK_strideB = 2 * 128 * HD;           /* every other batch of a larger tensor */
	cr_assert_eq(decode(&bp, out), 2);
	cr_expect_eq(out[0].ptr, GQ);
	cr_expect_eq(out[1].ptr, GQ + 0x2000000);
}

/* ---- torch 2.11 (the GPU test host's): no q_heads_per_kv, 464 bytes ---- */

static void torch_2_11_setup(void)
{
	fixture_load_2_11();
}

TestSuite(memeff_torch_2_11, .init = torch_2_11_setup, .fini = fixture_unload);

Test(memeff_torch_2_11, backward_of_the_older_layout)
{
	static struct bwd_params_2_11 old;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	kernel("fmha_cutlassB_f32_aligned_64x64_k64_sm80(", NP_MEMEFF_BWD_SIZE_OLD);
	struct bwd_params_2_11 *p = &old;
	BWD_FILL(p, 0);                         /* the same launch, laid out as 2.11 does */
	launch(2, 8, 2, 128, 1);
	cr_assert_eq(decode(&old, out), 3);
	cr_expect_eq(out[2].ptr, GQ + 0x2000000);
	cr_expect_eq(out[2].numel, 2 * 128 * HD);
	layout.p[0].size = NP_MEMEFF_BWD_SIZE;
	cr_expect_eq(decode(&old, out), 0, "read as 2.14's, num_batches is garbage");
	layout.p[0].size = NP_MEMEFF_BWD_SIZE_OLD;
	old.custom_mask_type = 2, old.num_keys = 64;
	old.gK_strideB = old.gV_strideB = 64 * HD;
	cr_assert_eq(decode(&old, out), 2, "its mask type is read where 2.11 keeps it");
	cr_expect_eq(out[0].ptr, GQ + 0x1000000);
}

Test(memeff_torch_2_11, forward_is_laid_out_the_same)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	kernel("fmha_cutlassF_f32_aligned_64x64_rf_sm80(", NP_MEMEFF_FWD_SIZE);
	fwd_fill();
	cr_expect_eq(decode(&fp, out), 2);
}
