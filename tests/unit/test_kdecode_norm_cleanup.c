/* test_kdecode_norm_cleanup.c - _foreach_norm's and _foreach_max's
 * per-tensor results (lpnorm_cleanup, lpmax_cleanup: cupti/kdecode.c,
 * "foreach_norm_cleanup"), through np_kdecode_outputs and
 * np_kdecode_reads.
 *
 * The names and layouts are torch 2.14.1's and torch 2.11.0's own
 * (tests/unit/fixtures/); each launch is filled as
 * ForeachReduceOp.cu's host code fills it: the partial sums of its
 * tensors, TensorListAddresses with one 0-dim result each, max_chunks,
 * on tensors x 512 threads. */
#include "fixture.h"
#include "../../cupti/kdecode.h"

#define PARTIALS 0x7f0000100000ull
#define RESULT(b) (0x7f0000200000ull + 512ull * (b))   /* each its own block */

static struct np_kinfo ki;
static struct np_kparams layout;
static unsigned char buf[32768];
static void *kp[NP_KD_MAX_PARAMS];
static struct np_klaunch kl;

/* The fixture's kernel whose name holds sub, launched for tensors
 * results of chunks partials each. */
static void launch(const char *sub, uint32_t tensors, int32_t chunks)
{
	const struct kline *k = fixture_find(sub);
	uint64_t partials = PARTIALS;

	cr_assert_eq(np_kdecode_classify(k->dem, &ki), NP_KF_NORM_CLEANUP, "%s", k->dem);
	cr_assert_eq(np_kdecode_layout_parse(k->layout, &layout), 3, "%s", k->layout);
	cr_assert_leq(layout.p[2].offset + 4, sizeof(buf));
	memset(buf, 0xa5, sizeof(buf));
	for (int i = 0; i < layout.n; i++)
		kp[i] = buf + layout.p[i].offset;
	memcpy(kp[0], &partials, 8);
	for (uint32_t b = 0; b < layout.p[1].size / 8; b++) {   /* stale ones past tensors */
		uint64_t r = RESULT(b);
		memcpy((unsigned char *)kp[1] + 8 * b, &r, 8);
	}
	memcpy(kp[2], &chunks, 4);
	kl = (struct np_klaunch){ .grid = { tensors, 1, 1 }, .block = { 512, 1, 1 },
				  .blocks = tensors, .threads = 512ull * tensors };
}

/* All outputs, in turns of NP_KD_MAX_OUTPUTS as the launch callback reads them. */
static int outputs(struct np_kbuf *all, int max)
{
	int n = 0, got;
	kl.first = 0;
	do {
		got = np_kdecode_outputs(&ki, &layout, kp, &kl, all + n,
					 max - n < NP_KD_MAX_OUTPUTS ? max - n : NP_KD_MAX_OUTPUTS);
		n += got;
		kl.first += (uint32_t)got;
	} while (kl.more && got > 0 && n < max);
	return n;
}

static void classified_in(const char *fixture, uint32_t capacity)
{
	int seen = 0;
	fixture_load_from(fixture);
	for (int i = 0; i < nlines; i++) {
		struct np_kinfo k;
		struct np_kparams l;
		if (!strstr(lines[i].dem, "lpnorm_cleanup<") && !strstr(lines[i].dem, "lpmax_cleanup<"))
			continue;
		cr_expect_eq(np_kdecode_classify(lines[i].dem, &k), NP_KF_NORM_CLEANUP, "%s",
			     lines[i].dem);
		cr_expect_geq(k.dtype, 0, "%s", lines[i].dem);
		cr_expect_geq(k.in_dtype, 0, "%s", lines[i].dem);
		cr_assert_eq(np_kdecode_layout_parse(lines[i].layout, &l), 3);
		cr_expect_eq(l.p[1].size, 8 * capacity, "MAX_TENSORS_PER_KERNEL: %s", lines[i].dem);
		seen++;
	}
	cr_expect_geq(seen, 3, "%s", fixture);
	fixture_unload();
}

Test(kdecode_norm_cleanup, both_torches_kernels_are_read_with_their_capacity)
{
	classified_in(FIXTURE, 3200);
	classified_in(FIXTURE_2_11, 400);
}

TestSuite(kdecode_norm_cleanup_2_14, .init = fixture_load, .fini = fixture_unload);

/* clip_grad_norm_ over 150 parameters: each norm one float, judged on
 * its own 3 partial sums. */
Test(kdecode_norm_cleanup_2_14, each_tensors_norm_is_checked_from_its_partials)
{
	static struct np_kbuf all[256];
	struct np_kread r[2];

	launch("lpnorm_cleanup<float, (at::native::NormType)1, float, true, float>", 150, 3);
	cr_expect_eq(ki.dtype, NP_DT_F32);
	cr_assert_eq(outputs(all, 256), 150);
	for (int b = 0; b < 150; b++) {
		cr_expect_eq(all[b].ptr, RESULT(b));
		cr_expect_eq(all[b].numel, 1);
		cr_expect_eq(all[b].dtype, NP_DT_F32);
		cr_expect_eq(all[b].how, NP_KH_NORM_RESULT);
		cr_assert_eq(all[b].n_in, 1);
		cr_expect_eq(all[b].in[0], PARTIALS + 3u * 4u * (uint64_t)b);
	}
	cr_assert_eq(np_kdecode_reads(&ki, &layout, kp, &kl, r, 2), 1);
	cr_expect_eq(r[0].ptr, PARTIALS);
	cr_expect_eq(r[0].numel, 450, "150 tensors x 3 partials");
	cr_expect_eq(r[0].dtype, NP_DT_F32);
}

/* bf16 parameters: bf16 norms from float partials (out_opmath_t). */
Test(kdecode_norm_cleanup_2_14, a_bf16_norm_is_summed_in_float)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	struct np_kread r[1];

	launch("lpnorm_cleanup<c10::BFloat16, (at::native::NormType)1, c10::BFloat16, true", 2, 5);
	cr_assert_eq(np_kdecode_outputs(&ki, &layout, kp, &kl, out, NP_KD_MAX_OUTPUTS), 2);
	cr_expect_eq(out[1].dtype, NP_DT_BF16);
	cr_expect_eq(out[1].in[0], PARTIALS + 5 * 4, "float partials");
	cr_assert_eq(np_kdecode_reads(&ki, &layout, kp, &kl, r, 1), 1);
	cr_expect_eq(r[0].dtype, NP_DT_F32);
	cr_expect_eq(r[0].numel, 10);
}

Test(kdecode_norm_cleanup_2_14, foreach_max_is_read_in_its_own_type)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];

	launch("lpmax_cleanup<float>(", 4, 1);
	cr_assert_eq(np_kdecode_outputs(&ki, &layout, kp, &kl, out, NP_KD_MAX_OUTPUTS), 4);
	cr_expect_eq(out[3].ptr, RESULT(3));
	cr_expect_eq(out[3].dtype, NP_DT_F32);
	cr_expect_eq(out[3].in[0], PARTIALS + 3 * 4);
}

/* What a misread would look like: nothing is checked. */
Test(kdecode_norm_cleanup_2_14, a_launch_that_is_not_the_cleanups_yields_nothing)
{
	const char *k = "lpnorm_cleanup<float, (at::native::NormType)1, float, true, float>";
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	struct np_kread r[1];

	launch(k, 4, 3);
	kl.block[0] = 256;                      /* the cleanup runs 512 threads */
	cr_expect_eq(np_kdecode_outputs(&ki, &layout, kp, &kl, out, NP_KD_MAX_OUTPUTS), 0);
	cr_expect_eq(np_kdecode_reads(&ki, &layout, kp, &kl, r, 1), 0);
	launch(k, 4, 3);
	kl.grid[1] = 2;
	cr_expect_eq(np_kdecode_outputs(&ki, &layout, kp, &kl, out, NP_KD_MAX_OUTPUTS), 0);
	launch(k, 4, 0);                        /* no partials */
	cr_expect_eq(np_kdecode_outputs(&ki, &layout, kp, &kl, out, NP_KD_MAX_OUTPUTS), 0);
	launch(k, 4, 3);
	memset((unsigned char *)kp[1] + 8 * 2, 0, 8);   /* a result's address missing */
	cr_expect_eq(np_kdecode_outputs(&ki, &layout, kp, &kl, out, NP_KD_MAX_OUTPUTS), 0);
	/* more tensors than addresses: the one past the last would be read
	 * from max_chunks and the bytes after it, here a pointer-like word */
	launch(k, 4, 0x00100000);
	uint32_t high = 0x7f00;
	memcpy((unsigned char *)kp[2] + 4, &high, 4);
	kl.grid[0] = layout.p[1].size / 8 + 1;
	cr_expect_eq(np_kdecode_outputs(&ki, &layout, kp, &kl, out, NP_KD_MAX_OUTPUTS), 0);
	kl.grid[0]--;
	cr_expect_eq(np_kdecode_outputs(&ki, &layout, kp, &kl, out, NP_KD_MAX_OUTPUTS),
		     NP_KD_MAX_OUTPUTS, "the control: every address");
	launch(k, 4, 3);
	cr_expect_eq(np_kdecode_outputs(&ki, &layout, kp, NULL, out, NP_KD_MAX_OUTPUTS), 0,
		     "the grid says how many tensors");
}
