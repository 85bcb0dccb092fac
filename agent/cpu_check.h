/* cpu_check.h - is a CPU tensor finite?  The vectorised C check the agent
 * runs over tensor memory (never torch.isfinite(t).all().item(), about
 * 0.9 GB/s).  Classification rules are kernels/finite.h's. */
#ifndef NP_CPU_CHECK_H
#define NP_CPU_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include "../kernels/finite.h"

struct np_check_result {
	uint64_t nan, posinf, neginf;   /* counts */
	int64_t first_bad;              /* index of the first non-finite element, -1 if none */
	double max_abs;                 /* largest finite |x|, 0 for none */
};

/* Checks n contiguous elements of dtype t at p (any alignment).  Reads
 * only; never faults on well-formed input.  Returns 0, or -EINVAL for an
 * unknown dtype. */
int np_cpu_check(enum np_dtype t, const void *p, size_t n, struct np_check_result *r);

/* The same with the portable scalar code only (the reference the vector
 * code is tested against). */
int np_cpu_check_scalar(enum np_dtype t, const void *p, size_t n, struct np_check_result *r);

/* Sum of squares of n elements, in double (for gradient norms). */
double np_cpu_sumsq(enum np_dtype t, const void *p, size_t n);

/* "avx2" or "scalar": what np_cpu_check uses on this CPU. */
const char *np_cpu_check_impl(void);

#endif
