/* test_outmax.c - cupti/outmax.c: module maxima of CUDA outputs, joined
 * from the hooks' expectations and the drain's check records in either
 * order, and given only for steps whose records have all come. */
#include <criterion/criterion.h>
#include <math.h>
#include "../../cupti/outmax.h"

TestSuite(outmax, .init = np_outmax_reset);

#define M1 0x7f0001000010ull
#define M2 0x7f0001000020ull
#define PARENT 0x7f0001000030ull

struct got {
	uint32_t n;
	uint64_t module[16];
	uint32_t step[16];
	float max[16];
};

static void take(uint64_t module, uint32_t step, float max, void *arg)
{
	struct got *g = arg;
	if (g->n < 16) {
		g->module[g->n] = module;
		g->step[g->n] = step;
		g->max[g->n++] = max;
	}
}

static float max_of(const struct got *g, uint64_t module, uint32_t step)
{
	for (uint32_t i = 0; i < g->n; i++)
		if (g->module[i] == module && g->step[i] == step)
			return g->max[i];
	return NAN;
}

Test(outmax, hook_first_or_record_first_give_the_same_maxima)
{
	uint64_t base = 1000;
	/* step 5: the hook expects before the GPU is done (the usual order) */
	np_outmax_expect(base + 1, M1, 5);
	np_outmax_expect(base + 2, M2, 5);
	np_outmax_result(base + 1, 3.5f);
	/* M2's record has not come: step 5 is not given yet */
	struct got g = { 0 };
	cr_expect_eq(np_outmax_collect(6, take, &g), 0);
	np_outmax_result(base + 2, 7.0f);
	/* step 6: the records come first (a GPU that keeps up) */
	np_outmax_result(base + 3, 2.0f);
	np_outmax_result(base + 4, 9.0f);
	np_outmax_expect(base + 3, M1, 6);
	np_outmax_expect(base + 4, M1, 6);   /* M1 called twice: the larger */
	cr_expect_eq(np_outmax_collect(7, take, &g), 3);
	cr_expect_float_eq(max_of(&g, M1, 5), 3.5f, 0);
	cr_expect_float_eq(max_of(&g, M2, 5), 7.0f, 0);
	cr_expect_float_eq(max_of(&g, M1, 6), 9.0f, 0);
	cr_expect_eq(g.step[0], 5, "oldest step first");
	/* given once */
	cr_expect_eq(np_outmax_collect(7, take, &g), 0);
	cr_expect_eq(np_outmax_dropped(), 0);
}

Test(outmax, the_step_in_progress_is_not_given)
{
	np_outmax_expect(10, M1, 3);
	np_outmax_result(10, 1.0f);
	struct got g = { 0 };
	cr_expect_eq(np_outmax_collect(3, take, &g), 0, "step 3 may still add outputs");
	cr_expect_eq(np_outmax_collect(4, take, &g), 1);
}

Test(outmax, a_parent_returning_its_childs_output_shares_the_record)
{
	np_outmax_expect(20, M1, 1);
	np_outmax_expect(20, PARENT, 1);
	np_outmax_result(20, 4.0f);
	/* and a cached tensor returned again a step later, unwritten */
	np_outmax_expect(20, PARENT, 2);
	struct got g = { 0 };
	cr_expect_eq(np_outmax_collect(3, take, &g), 3);
	cr_expect_float_eq(max_of(&g, M1, 1), 4.0f, 0);
	cr_expect_float_eq(max_of(&g, PARENT, 1), 4.0f, 0);
	cr_expect_float_eq(max_of(&g, PARENT, 2), 4.0f, 0);
}

Test(outmax, a_non_finite_output_is_infinite)
{
	np_outmax_expect(30, M1, 1);
	np_outmax_result(30, 2.0f);
	np_outmax_expect(31, M1, 1);
	np_outmax_result(31, INFINITY);
	struct got g = { 0 };
	np_outmax_collect(2, take, &g);
	cr_expect(isinf(max_of(&g, M1, 1)));
}

Test(outmax, a_step_that_lost_a_record_is_dropped_whole)
{
	/* step 1's second record never comes: its tag's slot is taken by a
	 * tag NP_OUTMAX_JOIN later */
	np_outmax_expect(40, M1, 1);
	np_outmax_expect(41, M2, 1);
	np_outmax_result(40, 1.0f);
	np_outmax_result(41 + NP_OUTMAX_JOIN, 1.0f);
	/* step 2 is complete, but comes after step 1 */
	np_outmax_expect(42, M1, 2);
	np_outmax_result(42, 5.0f);
	struct got g = { 0 };
	cr_expect_eq(np_outmax_collect(3, take, &g), 1, "step 1 dropped, step 2 given");
	cr_expect_float_eq(max_of(&g, M1, 2), 5.0f, 0);
	cr_expect(isnan(max_of(&g, M1, 1)), "no understated maximum for step 1");
	cr_expect_geq(np_outmax_dropped(), 2);
}

Test(outmax, an_expectation_of_an_overwritten_tag_spoils_its_step)
{
	np_outmax_result(50 + NP_OUTMAX_JOIN, 1.0f);
	np_outmax_expect(50, M1, 1);   /* its record was overwritten */
	np_outmax_expect(51, M2, 1);
	np_outmax_result(51, 1.0f);
	struct got g = { 0 };
	cr_expect_eq(np_outmax_collect(2, take, &g), 0);
	cr_expect_eq(np_outmax_dropped(), 2, "the expectation and its step");
}

Test(outmax, an_incomplete_step_waits_then_is_given_up)
{
	np_outmax_expect(60, M1, 1);   /* never comes back */
	np_outmax_expect(61, M1, 2);
	np_outmax_result(61, 2.0f);
	struct got g = { 0 };
	cr_expect_eq(np_outmax_collect(3, take, &g), 0, "step 2 waits behind step 1");
	/* NP_OUTMAX_STEPS steps later, step 1 is given up; step 2 follows */
	cr_expect_eq(np_outmax_collect(2 + NP_OUTMAX_STEPS, take, &g), 1);
	cr_expect_float_eq(max_of(&g, M1, 2), 2.0f, 0);
	cr_expect_eq(np_outmax_dropped(), 1);
}

Test(outmax, a_step_slot_taken_by_a_later_step_drops_the_old_one)
{
	np_outmax_expect(70, M1, 1);   /* never comes */
	np_outmax_expect(71, M1, 1 + NP_OUTMAX_STEPS);
	np_outmax_result(71, 3.0f);
	/* the old step's record arriving now has no step to go to */
	np_outmax_result(70, 1.0f);
	struct got g = { 0 };
	cr_expect_eq(np_outmax_collect(2 + NP_OUTMAX_STEPS, take, &g), 1);
	cr_expect_float_eq(max_of(&g, M1, 1 + NP_OUTMAX_STEPS), 3.0f, 0);
	cr_expect_eq(np_outmax_dropped(), 1);
}

Test(outmax, a_module_with_cpu_and_cuda_outputs_has_one_value_a_step)
{
	np_outmax_expect(80, M1, 1);
	np_outmax_value(M1, 1, 6.0f);      /* its CPU outputs', at the step's end */
	np_outmax_result(80, 2.0f);
	np_outmax_expect(81, M1, 2);
	np_outmax_value(M1, 2, 1.0f);
	np_outmax_result(81, 8.0f);
	struct got g = { 0 };
	cr_expect_eq(np_outmax_collect(3, take, &g), 2);
	cr_expect_float_eq(max_of(&g, M1, 1), 6.0f, 0);
	cr_expect_float_eq(max_of(&g, M1, 2), 8.0f, 0);
}

Test(outmax, a_step_with_more_modules_than_its_table_is_dropped_and_counted)
{
	for (uint64_t i = 0; i < NP_OUTMAX_MODULES / 2 + 1; i++)
		np_outmax_value(0x7f0002000000ull + 64 * i, 1, 1.0f);
	np_outmax_value(M1, 2, 1.0f);
	struct got g = { 0 };
	cr_expect_eq(np_outmax_collect(3, take, &g), 1, "step 1 dropped, step 2 given");
	cr_expect_float_eq(max_of(&g, M1, 2), 1.0f, 0);
	cr_expect_eq(np_outmax_dropped(), 2, "the module left out, and its step");
}

Test(outmax, at_exit_steps_still_out_are_seen_and_given_up_counted)
{
	uint64_t dropped = np_outmax_dropped();
	np_outmax_expect(3000, M1, 7);   /* the last step: its record is late */
	np_outmax_expect(3001, M1, 8);   /* the step in progress at exit */
	cr_expect_eq(np_outmax_in_flight(8), 1, "step 7 only");
	struct got g = { 0 };
	cr_expect_eq(np_outmax_collect(8, take, &g), 0);
	np_outmax_give_up(8);
	cr_expect_eq(np_outmax_in_flight(8), 0);
	cr_expect_eq(np_outmax_dropped(), dropped + 1, "step 7 counted");
	np_outmax_result(3000, 4.0f);   /* too late: nothing to give */
	cr_expect_eq(np_outmax_collect(8, take, &g), 0);
	cr_expect_eq(np_outmax_in_flight(9), 1, "step 8 left alone");
}
