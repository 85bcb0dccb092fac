/* test_kdecode_flash.c - flash attention's outputs, read from its
 * Flash_fwd_params and Flash_bwd_params (cupti/kdecode_flash.c through
 * np_kdecode_outputs).
 *
 * The kernel is torch 2.14.1's own (name and 472-byte parameter from
 * tests/unit/fixtures/torch_kernels.tsv: head dim 96, 64-row blocks, 4
 * warps, half), and torch 2.11.0's (torch_kernels_2.11.tsv).  The struct below is flash.h's, as PyTorch vendors it
 * (pytorch_flash): its size must be the cubin's, or the layout this test
 * and the decoder assume is not torch's.  Every launch is filled as
 * run_flash_fwd fills it; each test then breaks one thing. */
#include <stdbool.h>
#include <stddef.h>
#include "fixture.h"
#include "../../cupti/kdecode.h"

struct flash_fwd_params {
	void *q_ptr, *k_ptr, *v_ptr;
	int64_t q_batch_stride, k_batch_stride, v_batch_stride, q_row_stride, k_row_stride,
		v_row_stride, q_head_stride, k_head_stride, v_head_stride;
	int h, h_k, h_h_k_ratio;
	void *o_ptr, *oaccum_ptr;
	int64_t o_batch_stride, o_row_stride, o_head_stride;
	void *p_ptr, *softmax_lse_ptr, *softmax_lseaccum_ptr;
	int b, seqlen_q, seqlen_k, seqlen_knew, d, seqlen_q_rounded, seqlen_k_rounded, d_rounded,
		rotary_dim, total_q;
	float scale_softmax, scale_softmax_log2;
	int *cu_seqlens_q, *cu_seqlens_k, *leftpad_k, *seqused_k, *blockmask;
	void *knew_ptr, *vnew_ptr;
	int64_t knew_batch_stride, vnew_batch_stride, knew_row_stride, vnew_row_stride,
		knew_head_stride, vnew_head_stride;
	void *rotary_cos_ptr, *rotary_sin_ptr;
	int *cache_batch_idx, *block_table;
	int64_t block_table_batch_stride;
	int page_block_size;
	float p_dropout;
	uint8_t p_dropout_in_uint8_t;
	float rp_dropout, scale_softmax_rp_dropout;
	int window_size_left, window_size_right;
	float softcap;
	struct {                        /* at::PhiloxCudaState */
		uint64_t seed, offset;
		uint32_t offset_intragraph;
		bool captured;
	} philox_args;
	int64_t *extragraph_offset, *seed;
	bool is_bf16, is_causal, is_seqlens_k_cumulative, is_rotary_interleaved;
	int num_splits;
	void *alibi_slopes_ptr;
	int64_t alibi_slopes_batch_stride;
	bool unpadded_lse, seqlenq_ngroups_swapped;
};
_Static_assert(sizeof(struct flash_fwd_params) == NP_FLASH_PARAMS_SIZE, "flash.h's size");
_Static_assert(offsetof(struct flash_fwd_params, o_ptr) == 112 &&
	       offsetof(struct flash_fwd_params, softmax_lse_ptr) == 160 &&
	       offsetof(struct flash_fwd_params, b) == 176 &&
	       offsetof(struct flash_fwd_params, cu_seqlens_q) == 224 &&
	       offsetof(struct flash_fwd_params, is_bf16) == 440 &&
	       offsetof(struct flash_fwd_params, unpadded_lse) == 464,
	       "the offsets kdecode_flash.c reads");

#define Q 0x7f0000100000ull
#define O 0x7f0000800000ull
#define LSE 0x7f0000900000ull

static struct np_kinfo ki;
static struct np_kparams layout;
static struct flash_fwd_params prm;
static struct np_klaunch kl;

/* b 3, seqlen 200 (q and k), h 12 heads of d 96, half, causal: as
 * run_flash_fwd launches it, (ceil(200 / 64), 3, 12) blocks of 128. */
/* The forward's struct as run_flash_fwd and set_params_dgrad fill it:
 * q, k, v, O and the log-sum-exp at fixed addresses, h heads over as many
 * key heads, seqlen_q rounded up to 128; the rest garbage */
static void fill_fwd(struct flash_fwd_params *f, int b, int sq, int sk, int h, int d, bool bf16,
		     bool causal)
{
	memset(f, 0xa5, sizeof(*f));
	f->q_ptr = (void *)Q, f->k_ptr = (void *)(Q + 0x100000), f->v_ptr = (void *)(Q + 0x200000);
	f->h = h, f->h_k = h, f->h_h_k_ratio = 1;
	f->o_ptr = (void *)O, f->p_ptr = NULL, f->softmax_lse_ptr = (void *)LSE;
	f->b = b, f->seqlen_q = sq, f->seqlen_k = sk, f->d = d;
	f->seqlen_q_rounded = (sq + 127) / 128 * 128, f->seqlen_k_rounded = (sk + 127) / 128 * 128;
	f->d_rounded = d;
	f->cu_seqlens_q = f->cu_seqlens_k = NULL;
	f->is_bf16 = bf16, f->is_causal = causal;
	f->unpadded_lse = false;
}

static void fill(void)
{
	const struct kline *k = fixture_find("void pytorch_flash::flash_fwd_kernel<");
	cr_assert_eq(np_kdecode_classify(k->dem, &ki), NP_KF_FLASH, "%s", k->dem);
	cr_assert_eq(np_kdecode_layout_parse(k->layout, &layout), 1);
	cr_assert_eq(layout.p[0].size, sizeof(prm), "%s: the cubin's parameter size", fixture_path);
	int b = 3, s = 200, h = 12, d = 96;
	fill_fwd(&prm, b, s, s, h, d, false, true);
	prm.o_head_stride = d, prm.o_row_stride = (int64_t)h * d, prm.o_batch_stride = (int64_t)s * h * d;
	kl = (struct np_klaunch){ .threads = 4ull * 3 * 12 * 128, .blocks = 4 * 3 * 12,
				  .grid = { 4, 3, 12 }, .block = { 128, 1, 1 } };
}

static void setup(void)
{
	fixture_load();
	fill();
}

/* torch 2.11.0's (the GPU test host's) Flash_fwd_params is the same */
static void setup_2_11(void)
{
	fixture_load_2_11();
	fill();
}

static int decode(struct np_kbuf *out)
{
	void *kp[1] = { &prm };
	return np_kdecode_outputs(&ki, &layout, kp, &kl, out, NP_KD_MAX_OUTPUTS);
}

TestSuite(kdecode_flash, .init = setup, .fini = fixture_unload);

Test(kdecode_flash, the_name_gives_the_launch_shape_and_type)
{
	cr_expect_eq(ki.flash.head_dim, 96);
	cr_expect_eq(ki.flash.block_m, 64);
	cr_expect_eq(ki.flash.warps, 4);
	cr_expect_eq(ki.flash.bf16, 0);
	cr_expect_eq(ki.dtype, NP_DT_F16);
	struct np_kinfo other;
	np_kdecode_classify("void flash_fwd_kernel<Flash_fwd_kernel_traits<96, 64, 64, 4, false, "
			    "false, cutlass::half_t, Flash_kernel_traits<96, 64, 64, 4, "
			    "cutlass::half_t> >, true>(Flash_fwd_params)", &other);
	cr_expect_neq(other.family, NP_KF_FLASH, "flash_attn's own, not PyTorch's: not read");
	np_kdecode_classify("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, "
			    "128, 64, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<"
			    "128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, "
			    "true, true, false, false>(pytorch_flash::Flash_fwd_params)", &other);
	cr_expect_eq(other.family, NP_KF_FLASH);
	cr_expect_eq(other.flash.bf16, 1);
	cr_expect_eq(other.dtype, NP_DT_BF16);
}

static void o_and_the_log_sum_exp(void)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	cr_assert_eq(decode(out), 2);
	cr_expect_eq(out[0].ptr, O);
	cr_expect_eq(out[0].numel, 3ull * 200 * 12 * 96);
	cr_expect_eq(out[0].dtype, NP_DT_F16);
	cr_expect_eq(out[0].how, NP_KH_FLASH);
	cr_expect_eq(out[0].n_in, -1, "judged on the launch's words: q, k, v");
	cr_expect_eq(out[1].ptr, LSE);
	cr_expect_eq(out[1].numel, 3ull * 12 * 200);
	cr_expect_eq(out[1].dtype, NP_DT_F32);
}

Test(kdecode_flash, o_and_the_log_sum_exp)
{
	o_and_the_log_sum_exp();
}

TestSuite(kdecode_flash_torch_2_11, .init = setup_2_11, .fini = fixture_unload);

Test(kdecode_flash_torch_2_11, o_and_the_log_sum_exp)
{
	o_and_the_log_sum_exp();
}

Test(kdecode_flash, grouped_query_heads)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	prm.h_k = 4, prm.h_h_k_ratio = 3;
	cr_assert_eq(decode(out), 2);
	prm.h_h_k_ratio = 2;
	cr_expect_eq(decode(out), 0, "h / h_k is 3");
	prm.h_k = 5, prm.h_h_k_ratio = 2;
	cr_expect_eq(decode(out), 0, "12 heads are not a multiple of 5");
}

Test(kdecode_flash, a_launch_that_disagrees_with_the_params_yields_nothing)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	kl.grid[0] = 3;         /* 200 rows need 4 blocks of 64 */
	cr_expect_eq(decode(out), 0);
	kl.grid[0] = 4, kl.grid[1] = 2;
	cr_expect_eq(decode(out), 0, "grid.y is b");
	kl.grid[1] = 3, kl.grid[2] = 6;
	cr_expect_eq(decode(out), 0, "grid.z is h");
	kl.grid[2] = 12, kl.block[0] = 256;
	cr_expect_eq(decode(out), 0, "4 warps");
	kl.block[0] = 128;
	cr_expect_eq(np_kdecode_outputs(&ki, &layout, (void *[]){ &prm }, NULL, out, 4), 0,
		     "no launch known");
	cr_expect_eq(decode(out), 2);
}

Test(kdecode_flash, the_params_must_hold_together)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	prm.seqlen_q_rounded = 200;
	cr_expect_eq(decode(out), 0, "seqlen_q_rounded is a multiple of 128");
	prm.seqlen_q_rounded = 256, prm.d = 128;
	cr_expect_eq(decode(out), 0, "d above the kernel's 96");
	prm.d = 96, prm.is_bf16 = true;
	cr_expect_eq(decode(out), 0, "a bf16 launch of a half kernel");
	prm.is_bf16 = false, prm.cu_seqlens_q = (int *)0x7f0000a00000ull;
	prm.cu_seqlens_k = (int *)0x7f0000a10000ull;
	cr_expect_eq(decode(out), 0, "variable-length batches are not read");
	prm.cu_seqlens_q = prm.cu_seqlens_k = NULL, prm.b = 0;
	cr_expect_eq(decode(out), 0);
	prm.b = 3;
	layout.p[0].size = 440;
	cr_expect_eq(decode(out), 0, "another flash.h's size");
}

Test(kdecode_flash, each_output_only_when_its_layout_is_known)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	prm.o_row_stride = 3 * 12 * 96;         /* rows of a wider tensor: gaps */
	cr_assert_eq(decode(out), 1);
	cr_expect_eq(out[0].ptr, LSE, "the log-sum-exp alone");
	prm.o_row_stride = 12 * 96, prm.unpadded_lse = true;
	cr_assert_eq(decode(out), 1);
	cr_expect_eq(out[0].ptr, O, "O alone: an unpadded log-sum-exp is laid out otherwise");
	prm.o_row_stride = 3 * 12 * 96;
	cr_expect_eq(decode(out), 0, "neither");
}

/* The generic tier's question: what the launch reads, with its extent */
static int fwd_reads(struct np_kread *in)
{
	void *kp[1] = { &prm };
	return np_kdecode_reads(&ki, &layout, kp, &kl, in, 8);
}

Test(kdecode_flash, q_k_v_are_read_each_or_as_one_projection)
{
	struct np_kread in[8];
	/* three tensors, (b, s, h, d) each (setup's strides, copied) */
	prm.q_batch_stride = prm.k_batch_stride = prm.v_batch_stride = 200 * 12 * 96;
	prm.q_row_stride = prm.k_row_stride = prm.v_row_stride = 12 * 96;
	prm.q_head_stride = prm.k_head_stride = prm.v_head_stride = 96;
	cr_assert_eq(fwd_reads(in), 3);
	cr_expect_eq(in[1].ptr, Q + 0x100000);
	cr_expect_eq(in[2].numel, 3ull * 200 * 12 * 96);
	cr_expect_eq(in[2].dtype, NP_DT_F16);
	/* nanoGPT's q, k, v = c_attn(x).split(): slices of one (b, s, 3, h, d)
	 * tensor, none dense alone: one range, all of c_attn's output */
	prm.k_ptr = (void *)(Q + 12 * 96 * 2), prm.v_ptr = (void *)(Q + 2 * 12 * 96 * 2);
	prm.q_batch_stride = prm.k_batch_stride = prm.v_batch_stride = 200 * 3 * 12 * 96;
	prm.q_row_stride = prm.k_row_stride = prm.v_row_stride = 3 * 12 * 96;
	cr_assert_eq(fwd_reads(in), 1);
	cr_expect_eq(in[0].ptr, Q);
	cr_expect_eq(in[0].numel, 3ull * 3 * 200 * 12 * 96);
	/* one slice taken from elsewhere: no range is whole */
	prm.v_ptr = (void *)(Q + 0x200000);
	cr_expect_eq(fwd_reads(in), 0);
	/* a launch that does not decode reads nothing */
	kl.grid[0] = 3;
	prm.v_ptr = (void *)(Q + 2 * 12 * 96 * 2);
	cr_expect_eq(fwd_reads(in), 0);
}

/* ---- the backward: Flash_bwd_params, the forward's struct and then the
 * gradients' (flash.h as PyTorch vendors it); head dim 64, bf16, 128 x 128
 * blocks of 8 warps (torch's cubin, either version) ---- */

struct flash_bwd_params {
	struct flash_fwd_params fwd;
	void *do_ptr, *dq_ptr, *dk_ptr, *dv_ptr, *dq_accum_ptr, *dk_accum_ptr, *dv_accum_ptr;
	int64_t do_batch_stride, do_row_stride, do_head_stride, dq_batch_stride, dk_batch_stride,
		dv_batch_stride, dq_row_stride, dk_row_stride, dv_row_stride, dq_head_stride,
		dk_head_stride, dv_head_stride;
	void *dsoftmax_sum;
	bool deterministic;
	int64_t dq_accum_split_stride;
};
_Static_assert(sizeof(struct flash_bwd_params) == NP_FLASH_BWD_PARAMS_SIZE, "flash.h's size");
_Static_assert(offsetof(struct flash_bwd_params, dq_ptr) == 480 &&
	       offsetof(struct flash_bwd_params, dq_batch_stride) == 552 &&
	       offsetof(struct flash_bwd_params, dv_head_stride) == 616 &&
	       offsetof(struct flash_bwd_params, deterministic) == 632,
	       "the offsets kdecode_flash.c reads");

#define DQ 0x7f0001000000ull
#define DK 0x7f0002000000ull
#define DV 0x7f0003000000ull

static struct flash_bwd_params bp;
static struct np_kinfo dkdv, dq;
static struct np_kparams dkdv_layout, dq_layout;

/* b 2, seqlen_q 300, seqlen_k 200, h 8 heads of d 64 (h_k 8): as
 * run_flash_bwd_seqk_parallel launches it */
static void bwd_setup(void (*load)(void))
{
	load();
	const struct kline *k = fixture_find("flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd"
					     "_kernel_traits<64, 128, 128, 8, 4, 4, 4, false, false, "
					     "cutlass::bfloat16_t");
	cr_assert_eq(np_kdecode_classify(k->dem, &dkdv), NP_KF_FLASH, "%s", k->dem);
	cr_assert_eq(np_kdecode_layout_parse(k->layout, &dkdv_layout), 1);
	cr_assert_eq(dkdv_layout.p[0].size, sizeof(bp), "%s: the cubin's size", fixture_path);
	k = fixture_find("flash_bwd_convert_dq_kernel<Flash_bwd_kernel_traits<64, 128, 128, 8, 4, 4, "
			 "4, false, false, cutlass::bfloat16_t");
	cr_assert_eq(np_kdecode_classify(k->dem, &dq), NP_KF_FLASH, "%s", k->dem);
	cr_assert_eq(np_kdecode_layout_parse(k->layout, &dq_layout), 2, "(params, int nsplits)");
	cr_assert_eq(dq_layout.p[0].size, sizeof(bp));

	memset(&bp, 0xa5, sizeof(bp));
	int b = 2, sq = 300, sk = 200, h = 8, d = 64;
	fill_fwd(&bp.fwd, b, sq, sk, h, d, true, false);
	bp.dq_ptr = (void *)DQ, bp.dk_ptr = (void *)DK, bp.dv_ptr = (void *)DV;
	bp.dq_head_stride = bp.dk_head_stride = bp.dv_head_stride = d;
	bp.dq_row_stride = bp.dk_row_stride = bp.dv_row_stride = (int64_t)h * d;
	bp.dq_batch_stride = (int64_t)sq * h * d;
	bp.dk_batch_stride = bp.dv_batch_stride = (int64_t)sk * h * d;
	bp.deterministic = false;
}

static int bwd_decode(const struct np_kinfo *k, const struct np_kparams *l, uint32_t gx,
		      struct np_kbuf *out)
{
	int nsplits = 1;
	void *kp[2] = { &bp, &nsplits };
	struct np_klaunch g = { .threads = gx * 2ull * 8 * 256, .blocks = gx * 16,
				.grid = { gx, 2, 8 }, .block = { 256, 1, 1 } };
	return np_kdecode_outputs(k, l, kp, &g, out, NP_KD_MAX_OUTPUTS);
}

static void bwd_2_14(void)
{
	bwd_setup(fixture_load);
}

static void bwd_2_11(void)
{
	bwd_setup(fixture_load_2_11);
}

static void dk_dv_and_dq(void)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	cr_expect_eq(dkdv.flash.block_n, 128);
	cr_expect_eq(dkdv.dtype, NP_DT_BF16);
	/* dK, dV: ceil(200 / 128) key blocks */
	cr_assert_eq(bwd_decode(&dkdv, &dkdv_layout, 2, out), 2);
	cr_expect_eq(out[0].ptr, DK);
	cr_expect_eq(out[0].numel, 2ull * 200 * 8 * 64);
	cr_expect_eq(out[0].dtype, NP_DT_BF16);
	cr_expect_eq(out[1].ptr, DV);
	cr_expect_eq(out[1].numel, 2ull * 200 * 8 * 64);
	cr_expect_eq(out[1].how, NP_KH_FLASH);
	/* dQ: ceil(300 / 128) query blocks */
	cr_assert_eq(bwd_decode(&dq, &dq_layout, 3, out), 1);
	cr_expect_eq(out[0].ptr, DQ);
	cr_expect_eq(out[0].numel, 2ull * 300 * 8 * 64);
}

TestSuite(kdecode_flash_backward, .init = bwd_2_14, .fini = fixture_unload);
TestSuite(kdecode_flash_backward_torch_2_11, .init = bwd_2_11, .fini = fixture_unload);

Test(kdecode_flash_backward, dk_dv_and_dq)
{
	dk_dv_and_dq();
}

Test(kdecode_flash_backward_torch_2_11, dk_dv_and_dq)
{
	dk_dv_and_dq();
}

Test(kdecode_flash_backward, each_kernel_its_own_grid)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	cr_expect_eq(bwd_decode(&dkdv, &dkdv_layout, 3, out), 0, "200 keys: 2 blocks of 128");
	cr_expect_eq(bwd_decode(&dq, &dq_layout, 2, out), 0, "300 queries: 3 blocks of 128");
	bp.deterministic = true;
	cr_expect_eq(bwd_decode(&dkdv, &dkdv_layout, 7, out), 2,
		     "deterministic: blocks loop over the keys, any x");
	cr_expect_eq(bwd_decode(&dq, &dq_layout, 7, out), 0, "but not the dQ kernel's");
}

Test(kdecode_flash_backward, the_params_must_hold_together)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	bp.fwd.is_bf16 = false;
	cr_expect_eq(bwd_decode(&dkdv, &dkdv_layout, 2, out), 0, "a half launch of a bf16 kernel");
	bp.fwd.is_bf16 = true, bp.fwd.d = 96;
	cr_expect_eq(bwd_decode(&dq, &dq_layout, 3, out), 0, "d above the kernel's 64");
	bp.fwd.d = 64;
	cr_expect_eq(bwd_decode(&dkdv, &dkdv_layout, 2, out), 2);
	cr_expect_eq(np_kdecode_outputs(&dq, &dkdv_layout, (void *[]){ &bp }, NULL, out, 4), 0,
		     "the dQ kernel has two parameters");
	dkdv_layout.p[0].size = NP_FLASH_PARAMS_SIZE;
	cr_expect_eq(bwd_decode(&dkdv, &dkdv_layout, 2, out), 0, "the forward's size");
}

Test(kdecode_flash_backward, each_gradient_only_when_dense)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	bp.dk_row_stride = 3 * 8 * 64;          /* a slice of a packed dqkv: gaps */
	cr_assert_eq(bwd_decode(&dkdv, &dkdv_layout, 2, out), 1);
	cr_expect_eq(out[0].ptr, DV, "dV alone");
	bp.dv_batch_stride = 0;
	cr_expect_eq(bwd_decode(&dkdv, &dkdv_layout, 2, out), 0, "neither");
}

Test(kdecode_flash_backward, grouped_query_heads_write_every_query_head)
{
	/* h 8 over h_k 2: dK and dV are PyTorch's expanded (b, s_k, h, d)
	 * tensors, summed over each group afterwards */
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	bp.fwd.h_k = 2, bp.fwd.h_h_k_ratio = 4;
	cr_assert_eq(bwd_decode(&dkdv, &dkdv_layout, 2, out), 2);
	cr_expect_eq(out[0].numel, 2ull * 200 * 8 * 64);
}

Test(kdecode_flash_backward, the_dk_dv_kernel_reads_do)
{
	struct np_kread in[8];
	int nsplits = 1;
	void *kp[2] = { &bp, &nsplits };
	struct np_klaunch g = { .threads = 2 * 2 * 8 * 256, .blocks = 32, .grid = { 2, 2, 8 },
				.block = { 256, 1, 1 } };
	bp.do_ptr = (void *)0x7f0004000000ull;
	bp.do_head_stride = 64, bp.do_row_stride = 8 * 64, bp.do_batch_stride = 300 * 8 * 64;
	cr_assert_eq(np_kdecode_reads(&dkdv, &dkdv_layout, kp, &g, in, 8), 1);
	cr_expect_eq(in[0].ptr, 0x7f0004000000ull);
	cr_expect_eq(in[0].numel, 2ull * 300 * 8 * 64);
	cr_expect_eq(in[0].dtype, NP_DT_BF16);
	bp.do_row_stride = 16 * 64;
	cr_expect_eq(np_kdecode_reads(&dkdv, &dkdv_layout, kp, &g, in, 8), 0, "gaps");
	g.grid[0] = 3;
	cr_expect_eq(np_kdecode_reads(&dq, &dq_layout, kp, &g, in, 8), 0,
		     "the dQ kernel reads only its float accumulator");
}

