/* plan_inputs.h - whether a library call's plan (cupti/gemm.h) judges its
 * output on ptr: shared by test_gemm.c and test_dnn.c. */
#ifndef NP_TEST_PLAN_INPUTS_H
#define NP_TEST_PLAN_INPUTS_H

#include "../../cupti/gemm.h"

static inline int has_input(const struct np_gemm_plan *p, uint64_t ptr)
{
	for (int k = 0; k < p->out.n_in; k++)
		if (p->out.in[k] == ptr)
			return 1;
	return 0;
}

#endif
