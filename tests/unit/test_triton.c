/* test_triton.c - cupti/triton.c: a Triton kernel's outputs from its
 * Python call, taken only by the launch that writes them. */
#include <criterion/criterion.h>
#include "../../cupti/triton.h"

#define IN0 0x7f0000100000ull
#define IN1 0x7f0000200000ull
#define OUT0 0x7f0000300000ull
#define BUF 0x7f0000400000ull
#define CLONE 0x7f0000500000ull

static const char *const poi = "triton_poi_fused_add_exp_0";

/* triton_poi_fused_add_exp_0(in_ptr0, in_ptr1, out_ptr0, xnumel) */
static void plan_poi(void)
{
	struct np_triton_arg a[] = {
		{ IN0, 1024, NP_DT_F32, NP_TRITON_READ },
		{ IN1, 64, NP_DT_BF16, NP_TRITON_READ },
		{ OUT0, 1024, NP_DT_F32, NP_TRITON_WRITTEN },
	};
	np_triton_next(poi, a, 3);
}

Test(triton, the_launch_of_the_planned_kernel_takes_its_outputs_and_reads)
{
	plan_poi();
	cr_assert(np_triton_pending());
	uint64_t words[] = { IN0, IN1, OUT0 };
	struct np_kbuf outs[4];
	struct np_kread rd[4];
	int nr = -1;
	cr_assert_eq(np_triton_claim(poi, words, 3, outs, 4, rd, 4, &nr), 1);
	cr_expect_eq(outs[0].ptr, OUT0);
	cr_expect_eq(outs[0].numel, 1024);
	cr_expect_eq(outs[0].dtype, NP_DT_F32);
	cr_expect_eq(outs[0].how, NP_KH_TRITON);
	cr_expect_eq(outs[0].n_in, -1, "a plain output is judged on the launch's words");
	cr_assert_eq(nr, 2);
	cr_expect_eq(rd[0].ptr, IN0);
	cr_expect_eq(rd[1].ptr, IN1);
	cr_expect_eq(rd[1].numel, 64);
	cr_expect_eq(rd[1].dtype, NP_DT_BF16);
	cr_expect(!np_triton_pending(), "one plan serves one launch");
	cr_expect_eq(np_triton_claim(poi, words, 3, outs, 4, rd, 4, &nr), -1);
}

Test(triton, another_kernel_or_an_autotuning_copy_leaves_the_plan)
{
	plan_poi();
	uint64_t words[] = { IN0, IN1, OUT0 };
	struct np_kbuf outs[4];
	struct np_kread rd[4];
	int nr;
	cr_expect_eq(np_triton_claim("triton_poi_fused_mul_1", words, 3, outs, 4, rd, 4, &nr), -1);
	/* autotuning times a configuration on a copy of the output: a check
	 * of the real one would read what no kernel wrote yet */
	uint64_t bench[] = { IN0, IN1, CLONE };
	cr_expect_eq(np_triton_claim(poi, bench, 3, outs, 4, rd, 4, &nr), -1);
	cr_expect(np_triton_pending());
	cr_expect_eq(np_triton_claim(poi, words, 3, outs, 4, rd, 4, &nr), 1,
		     "the real launch after the timing ones");
	np_triton_done();
}

Test(triton, an_updated_output_reads_its_own_old_values)
{
	/* triton_red_fused_native_layer_norm_0(in_out_ptr0, in_ptr0, xnumel, r0_numel) */
	struct np_triton_arg a[] = {
		{ BUF, 32, NP_DT_F32, NP_TRITON_UPDATED },
		{ IN0, 4096, NP_DT_F32, NP_TRITON_READ },
	};
	np_triton_next("triton_red_fused_native_layer_norm_0", a, 2);
	uint64_t words[] = { BUF, IN0 };
	struct np_kbuf outs[2];
	struct np_kread rd[2];
	int nr;
	cr_assert_eq(np_triton_claim("triton_red_fused_native_layer_norm_0", words, 2, outs, 2, rd,
				     2, &nr), 1);
	cr_assert_eq(outs[0].n_in, 2);
	cr_expect_eq(outs[0].in[0], BUF, "a non-finite value already there is propagation");
	cr_expect_eq(outs[0].in[1], IN0);
	cr_expect_eq(nr, 1);
}

Test(triton, a_plan_without_outputs_or_for_the_wrong_thread_state_claims_nothing)
{
	struct np_triton_arg a[] = { { IN0, 16, NP_DT_F32, NP_TRITON_READ } };
	np_triton_next(poi, a, 1);
	uint64_t words[] = { IN0 };
	struct np_kbuf outs[2];
	struct np_kread rd[2];
	int nr;
	cr_expect_eq(np_triton_claim(poi, words, 1, outs, 2, rd, 2, &nr), -1,
		     "nothing to check: the generic tier's, as before");
	np_triton_done();
	cr_expect(!np_triton_pending());
	plan_poi();
	np_triton_done();
	uint64_t all[] = { IN0, IN1, OUT0 };
	cr_expect_eq(np_triton_claim(poi, all, 3, outs, 2, rd, 2, &nr), -1, "done forgets");
	/* more outputs than the caller holds: left to the generic tier */
	struct np_triton_arg many[] = {
		{ OUT0, 8, NP_DT_F32, NP_TRITON_WRITTEN },
		{ BUF, 8, NP_DT_F32, NP_TRITON_WRITTEN },
		{ IN0, 8, NP_DT_F32, NP_TRITON_WRITTEN },
	};
	np_triton_next(poi, many, 3);
	uint64_t w3[] = { OUT0, BUF, IN0 };
	cr_expect_eq(np_triton_claim(poi, w3, 3, outs, 2, rd, 2, &nr), -1);
	np_triton_done();
}

Test(triton, a_long_fused_name_matches_as_the_kernel_table_cuts_it)
{
	/* Inductor joins up to ten ops' names: longer than the table keeps */
	char name[NP_KFUNC_NAME + 40], kept[NP_KFUNC_NAME];
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	np_kfunc_short_name(name, kept, sizeof(kept));
	struct np_triton_arg a[] = { { OUT0, 8, NP_DT_F32, NP_TRITON_WRITTEN } };
	np_triton_next(name, a, 1);
	cr_assert(np_triton_pending());
	uint64_t words[] = { OUT0 };
	struct np_kbuf outs[1];
	struct np_kread rd[1];
	int nr;
	cr_expect_eq(np_triton_claim(kept, words, 1, outs, 1, rd, 1, &nr), 1);
}

Test(triton, pointer_types_a_check_reads)
{
	cr_expect_eq(np_triton_dtype("*fp32"), NP_DT_F32);
	cr_expect_eq(np_triton_dtype("*bf16"), NP_DT_BF16);
	cr_expect_eq(np_triton_dtype("*fp16"), NP_DT_F16);
	cr_expect_eq(np_triton_dtype("*fp64"), NP_DT_F64);
	cr_expect_eq(np_triton_dtype("*fp8e4nv"), NP_DT_F8E4M3);
	cr_expect_eq(np_triton_dtype("*fp8e5"), NP_DT_F8E5M2);
	cr_expect_eq(np_triton_dtype("*fp8e4b8"), -1, "a fnuz type: other NaN rules");
	cr_expect_eq(np_triton_dtype("*i64"), -1);
	cr_expect_eq(np_triton_dtype("*i1"), -1);
	cr_expect_eq(np_triton_dtype("fp32"), -1, "a scalar, not a pointer");
	cr_expect_eq(np_triton_dtype(NULL), -1);
}
