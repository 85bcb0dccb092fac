/* cpu_check.h - is a CPU tensor finite?  The vectorised C check the agent
 * runs over tensor memory (never torch.isfinite(t).all().item(), about
 * 0.9 GB/s).  Classification rules are kernels/finite.h's. */
#ifndef NP_CPU_CHECK_H
#define NP_CPU_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "../kernels/finite.h"

/* One element's raw bits, zero-extended (any alignment). */
static inline uint64_t np_load_bits(enum np_dtype t, const uint8_t *p)
{
	switch (np_dtype_size(t)) {
	case 8: { uint64_t v; memcpy(&v, p, 8); return v; }
	case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
	case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
	default: return *p;
	}
}

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
