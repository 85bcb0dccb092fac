/* finite.h - what a non-finite value is, per dtype, from its raw bits.
 *
 * The one definition shared by the CPU checks (agent/cpu_check.c) and,
 * later, the CUDA finite-check kernels (issue #4): plain C, every
 * function static inline and marked NP_HD so nvcc can compile it for the
 * device too.  Bits in, no floating-point arithmetic, so signalling NaNs
 * and subnormals are classified without ever being loaded as floats.
 *
 * Formats: IEEE binary32/64/16, bfloat16, and the OCP 8-bit formats
 * E4M3 ("fn": no infinities, S.1111.111 is NaN, max 448) and E5M2
 * (IEEE-like: exponent 11111 is Inf or NaN, max 57344).
 */
#ifndef NP_FINITE_H
#define NP_FINITE_H

#include <stdint.h>

#ifdef __CUDACC__
#define NP_HD __host__ __device__
#else
#define NP_HD
#endif

enum np_dtype {
	NP_DT_F32 = 0,
	NP_DT_F64,
	NP_DT_F16,
	NP_DT_BF16,
	NP_DT_F8E4M3,
	NP_DT_F8E5M2,
	NP_DT_MAX,
};

enum np_fclass { NP_FINITE = 0, NP_NAN, NP_POSINF, NP_NEGINF };

/* Bytes per element. */
NP_HD static inline unsigned np_dtype_size(enum np_dtype t)
{
	return t == NP_DT_F64 ? 8 : t == NP_DT_F32 ? 4 : t <= NP_DT_BF16 ? 2 : 1;
}

/* Sign bit and magnitude mask per dtype, in the element's own width. */
NP_HD static inline uint64_t np_sign_bit(enum np_dtype t)
{
	return 1ULL << (np_dtype_size(t) * 8 - 1);
}

/* The smallest magnitude (bits with the sign cleared) that is not finite:
 * for IEEE-like formats, every magnitude at or above it is Inf or NaN, and
 * finite magnitudes order as integers, which is what makes max |x| a
 * plain integer maximum. */
NP_HD static inline uint64_t np_nonfinite_min(enum np_dtype t)
{
	switch (t) {
	case NP_DT_F32: return 0x7f800000u;
	case NP_DT_F64: return 0x7ff0000000000000ull;
	case NP_DT_F16: return 0x7c00u;
	case NP_DT_BF16: return 0x7f80u;
	case NP_DT_F8E4M3: return 0x7fu;    /* the only NaN magnitude, no Inf */
	case NP_DT_F8E5M2: return 0x7cu;
	default: return 0;
	}
}

/* Classifies one element given as its raw bits (zero-extended). */
NP_HD static inline enum np_fclass np_classify(enum np_dtype t, uint64_t bits)
{
	uint64_t sign = np_sign_bit(t), mag = bits & (sign - 1), inf = np_nonfinite_min(t);
	if (mag < inf)
		return NP_FINITE;
	if (t == NP_DT_F8E4M3 || mag > inf)
		return NP_NAN;
	return (bits & sign) ? NP_NEGINF : NP_POSINF;
}

/* The value of a finite magnitude (sign cleared), as a double. */
NP_HD static inline double np_magnitude(enum np_dtype t, uint64_t mag)
{
	int exp_bits, man_bits;
	switch (t) {
	case NP_DT_F32: exp_bits = 8; man_bits = 23; break;
	case NP_DT_F64: exp_bits = 11; man_bits = 52; break;
	case NP_DT_F16: exp_bits = 5; man_bits = 10; break;
	case NP_DT_BF16: exp_bits = 8; man_bits = 7; break;
	case NP_DT_F8E4M3: exp_bits = 4; man_bits = 3; break;
	case NP_DT_F8E5M2: exp_bits = 5; man_bits = 2; break;
	default: return 0;
	}
	int bias = (1 << (exp_bits - 1)) - 1;
	uint64_t e = mag >> man_bits, m = mag & ((1ULL << man_bits) - 1);
	/* subnormal: m * 2^(1 - bias - man_bits); normal: (1 + m/2^man) * 2^(e - bias) */
	double frac = (double)m;
	int exp2 = e ? (int)e - bias - man_bits : 1 - bias - man_bits;
	if (e)
		frac += (double)(1ULL << man_bits);
	double v = frac;
	for (; exp2 > 0; exp2--)
		v *= 2.0;
	for (; exp2 < 0; exp2++)
		v *= 0.5;
	return v;
}

#endif
