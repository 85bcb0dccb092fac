/* test_verdict.c - unit tests for userspace/verdict.c: which rank a
 * non-finite value was born on, and how the others got it. */
#include <criterion/criterion.h>
#include <string.h>

#include "../../agent/agent_report.h"
#include "verdict.h"

static struct np_verdict v;

static struct np_rank_finding fnd(int rank, bool received, uint64_t step, uint8_t phase,
				  uint8_t role, uint64_t ts, const char *via)
{
	return (struct np_rank_finding){ .rank = rank, .pid = 100 + (uint64_t)rank,
					 .received = received, .step = step, .phase = phase,
					 .role = role, .ts = ts, .module = "m", .op = "",
					 .tensor = "grad", .via = via };
}

Test(verdict, collective_receivers_are_never_the_origin)
{
	/* rank 0 saw it first in time, but through all_reduce */
	struct np_rank_finding f[] = {
		fnd(0, true, 6, 2, NP_ROLE_COLLECTIVE, 10, "all_reduce"),
		fnd(1, false, 6, 2, NP_ROLE_GRAD, 20, NULL),
		fnd(2, true, 6, 2, NP_ROLE_COLLECTIVE, 15, "all_reduce"),
	};
	np_verdict_compute(f, 3, &v);
	cr_assert_eq(v.origin, 1);
	cr_assert_str_eq(v.via[0], "all_reduce");
	cr_assert_str_eq(v.via[1], "");
	cr_assert_str_eq(v.via[2], "all_reduce");
}

Test(verdict, a_grad_before_the_update_in_the_same_step_came_through_ddp)
{
	struct np_rank_finding f[] = {
		fnd(0, false, 6, 3, NP_ROLE_PARAM_GRAD, 5, NULL),   /* earlier in time */
		fnd(1, false, 6, 1, NP_ROLE_OUTPUT, 50, NULL),      /* forward, same step */
	};
	np_verdict_compute(f, 2, &v);
	cr_assert_eq(v.origin, 1);
	cr_assert(strstr(v.via[0], "gradient all-reduce"), "%s", v.via[0]);
}

Test(verdict, earliest_step_then_phase_then_time)
{
	struct np_rank_finding f[] = {
		fnd(0, false, 7, 1, NP_ROLE_OUTPUT, 1, NULL),
		fnd(1, false, 6, 2, NP_ROLE_GRAD, 9, NULL),
		fnd(2, false, 6, 2, NP_ROLE_GRAD, 8, NULL),
		fnd(3, false, 6, 3, NP_ROLE_PARAM, 2, NULL),
	};
	np_verdict_compute(f, 4, &v);
	cr_assert_eq(v.origin, 2);
	cr_assert(strstr(v.via[0], "propagation (first seen at step 7)"), "%s", v.via[0]);
	cr_assert(strstr(v.via[1], "propagation"), "%s", v.via[1]);
}

Test(verdict, only_receivers_means_the_origin_was_not_traced)
{
	struct np_rank_finding f[] = {
		fnd(0, true, 6, 2, NP_ROLE_COLLECTIVE, 10, "broadcast"),
	};
	np_verdict_compute(f, 1, &v);
	cr_assert_eq(v.origin, -1);
	cr_assert_str_eq(v.via[0], "broadcast");
}
