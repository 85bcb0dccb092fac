/* cpu_check.c - finite checks of tensor memory, AVX2 where the CPU has it.
 *
 * The fast path looks only at magnitudes as integers: with the sign bit
 * cleared, an element is non-finite iff its magnitude is at least
 * np_nonfinite_min(), and finite magnitudes order like the values, so
 * max |x| is an unsigned integer maximum.  A vector with a non-finite
 * lane is classified in the vector too (tally_bad): a tensor that is all
 * NaN, as every tensor after the first NaN of a job can be, costs about
 * what a clean one does.  Nothing here may fault or allocate: it runs
 * inside the job.
 */
#include <errno.h>
#include <string.h>
#include "cpu_check.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define NP_HAVE_X86 1
#endif

/* Elements [from, to): counts, first bad index and the max finite
 * magnitude (as bits) folded into r / *max_mag. */
static void scalar_range(enum np_dtype t, const uint8_t *p, size_t from, size_t to,
			 struct np_check_result *r, uint64_t *max_mag)
{
	unsigned size = np_dtype_size(t);
	uint64_t sign = np_sign_bit(t);
	for (size_t i = from; i < to; i++) {
		uint64_t b = np_load_bits(t, p + i * size);
		switch (np_classify(t, b)) {
		case NP_FINITE:
			if ((b & (sign - 1)) > *max_mag)
				*max_mag = b & (sign - 1);
			continue;
		case NP_NAN: r->nan++; break;
		case NP_POSINF: r->posinf++; break;
		case NP_NEGINF: r->neginf++; break;
		}
		if (r->first_bad < 0)
			r->first_bad = (int64_t)i;
	}
}

static int start(enum np_dtype t, struct np_check_result *r)
{
	memset(r, 0, sizeof(*r));
	r->first_bad = -1;
	return (unsigned)t < NP_DT_MAX ? 0 : -EINVAL;
}

int np_cpu_check_scalar(enum np_dtype t, const void *p, size_t n, struct np_check_result *r)
{
	if (start(t, r))
		return -EINVAL;
	uint64_t max_mag = 0;
	scalar_range(t, p, 0, n, r, &max_mag);
	r->max_abs = np_magnitude(t, max_mag);
	return 0;
}

#ifdef NP_HAVE_X86
/* The non-finite lanes of one vector, as movemask bit sets (lane_bits
 * bits per lane): bad, of them the infinities, and the lanes whose sign
 * is set.  Counts them into r and notes the first index. */
static inline void tally_bad(uint32_t bad, uint32_t inf, uint32_t neg, unsigned lane_bits,
			     size_t base, struct np_check_result *r)
{
	r->nan += (uint64_t)__builtin_popcount(bad & ~inf) / lane_bits;
	r->posinf += (uint64_t)__builtin_popcount(inf & ~neg) / lane_bits;
	r->neginf += (uint64_t)__builtin_popcount(inf & neg) / lane_bits;
	if (r->first_bad < 0)
		r->first_bad = (int64_t)(base + (unsigned)__builtin_ctz(bad) / lane_bits);
}

/* 32-bit lanes (f32): 8 per vector. */
__attribute__((target("avx2")))
static size_t avx2_32(const uint8_t *p, size_t n, struct np_check_result *r, uint64_t *max_mag)
{
	const __m256i mask = _mm256_set1_epi32(0x7fffffff);
	const __m256i last_finite = _mm256_set1_epi32(0x7f7fffff);
	__m256i vmax = _mm256_setzero_si256();
	size_t i = 0;
	const __m256i inf = _mm256_set1_epi32(0x7f800000);
	for (; i + 8 <= n; i += 8) {
		__m256i raw = _mm256_loadu_si256((const __m256i *)(p + i * 4));
		__m256i m = _mm256_and_si256(raw, mask);
		__m256i bad = _mm256_cmpgt_epi32(m, last_finite);   /* magnitudes are >= 0 */
		if (!_mm256_testz_si256(bad, bad)) {
			tally_bad((uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(bad)),
				  (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(m, inf))),
				  (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(raw)), 1, i, r);
			m = _mm256_andnot_si256(bad, m);   /* finite lanes only in the max */
		}
		vmax = _mm256_max_epu32(vmax, m);
	}
	uint32_t lanes[8];
	_mm256_storeu_si256((__m256i *)lanes, vmax);
	for (int k = 0; k < 8; k++)
		if (lanes[k] > *max_mag)
			*max_mag = lanes[k];
	return i;
}

/* 16-bit lanes (f16, bf16): 16 per vector. */
__attribute__((target("avx2")))
static size_t avx2_16(enum np_dtype t, const uint8_t *p, size_t n, struct np_check_result *r,
		      uint64_t *max_mag)
{
	const __m256i mask = _mm256_set1_epi16(0x7fff);
	const __m256i last_finite = _mm256_set1_epi16((short)(np_nonfinite_min(t) - 1));
	__m256i vmax = _mm256_setzero_si256();
	size_t i = 0;
	const __m256i inf = _mm256_set1_epi16((short)np_nonfinite_min(t));
	const __m256i zero = _mm256_setzero_si256();
	for (; i + 16 <= n; i += 16) {
		__m256i raw = _mm256_loadu_si256((const __m256i *)(p + i * 2));
		__m256i m = _mm256_and_si256(raw, mask);
		__m256i bad = _mm256_cmpgt_epi16(m, last_finite);
		if (!_mm256_testz_si256(bad, bad)) {
			/* two mask bits per 16-bit lane */
			tally_bad((uint32_t)_mm256_movemask_epi8(bad),
				  (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi16(m, inf)),
				  (uint32_t)_mm256_movemask_epi8(_mm256_cmpgt_epi16(zero, raw)), 2, i, r);
			m = _mm256_andnot_si256(bad, m);
		}
		vmax = _mm256_max_epu16(vmax, m);
	}
	uint16_t lanes[16];
	_mm256_storeu_si256((__m256i *)lanes, vmax);
	for (int k = 0; k < 16; k++)
		if (lanes[k] > *max_mag)
			*max_mag = lanes[k];
	return i;
}

/* 8-bit lanes (fp8 E4M3, E5M2): 32 per vector. */
__attribute__((target("avx2")))
static size_t avx2_8(enum np_dtype t, const uint8_t *p, size_t n, struct np_check_result *r,
		     uint64_t *max_mag)
{
	const __m256i mask = _mm256_set1_epi8(0x7f);
	const __m256i last_finite = _mm256_set1_epi8((char)(np_nonfinite_min(t) - 1));
	__m256i vmax = _mm256_setzero_si256();
	size_t i = 0;
	/* E4M3 has no Inf: its one non-finite magnitude is NaN */
	const int has_inf = t != NP_DT_F8E4M3;
	const __m256i inf = _mm256_set1_epi8((char)np_nonfinite_min(t));
	for (; i + 32 <= n; i += 32) {
		__m256i raw = _mm256_loadu_si256((const __m256i *)(p + i));
		__m256i m = _mm256_and_si256(raw, mask);
		__m256i bad = _mm256_cmpgt_epi8(m, last_finite);
		if (!_mm256_testz_si256(bad, bad)) {
			tally_bad((uint32_t)_mm256_movemask_epi8(bad),
				  has_inf ? (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(m, inf)) : 0,
				  (uint32_t)_mm256_movemask_epi8(raw), 1, i, r);
			m = _mm256_andnot_si256(bad, m);
		}
		vmax = _mm256_max_epu8(vmax, m);
	}
	uint8_t lanes[32];
	_mm256_storeu_si256((__m256i *)lanes, vmax);
	for (int k = 0; k < 32; k++)
		if (lanes[k] > *max_mag)
			*max_mag = lanes[k];
	return i;
}

/* 64-bit lanes (f64): 4 per vector; AVX2 has no unsigned 64-bit max,
 * but magnitudes below 2^63 compare correctly as signed. */
__attribute__((target("avx2")))
static size_t avx2_64(const uint8_t *p, size_t n, struct np_check_result *r, uint64_t *max_mag)
{
	const __m256i mask = _mm256_set1_epi64x(0x7fffffffffffffffLL);
	const __m256i last_finite = _mm256_set1_epi64x(0x7fefffffffffffffLL);
	__m256i vmax = _mm256_setzero_si256();
	size_t i = 0;
	const __m256i inf = _mm256_set1_epi64x(0x7ff0000000000000LL);
	for (; i + 4 <= n; i += 4) {
		__m256i raw = _mm256_loadu_si256((const __m256i *)(p + i * 8));
		__m256i m = _mm256_and_si256(raw, mask);
		__m256i bad = _mm256_cmpgt_epi64(m, last_finite);
		if (!_mm256_testz_si256(bad, bad)) {
			tally_bad((uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(bad)),
				  (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(m, inf))),
				  (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(raw)), 1, i, r);
			m = _mm256_andnot_si256(bad, m);
		}
		vmax = _mm256_blendv_epi8(vmax, m, _mm256_cmpgt_epi64(m, vmax));
	}
	uint64_t lanes[4];
	_mm256_storeu_si256((__m256i *)lanes, vmax);
	for (int k = 0; k < 4; k++)
		if (lanes[k] > *max_mag)
			*max_mag = lanes[k];
	return i;
}

static int have_avx2(void)
{
	static int cached = -1;
	if (cached < 0) {
		__builtin_cpu_init();
		cached = __builtin_cpu_supports("avx2") ? 1 : 0;
	}
	return cached;
}
#endif

const char *np_cpu_check_impl(void)
{
#ifdef NP_HAVE_X86
	if (have_avx2())
		return "avx2";
#endif
	return "scalar";
}

int np_cpu_check(enum np_dtype t, const void *p, size_t n, struct np_check_result *r)
{
	if (start(t, r))
		return -EINVAL;
	uint64_t max_mag = 0;
	size_t done = 0;
#ifdef NP_HAVE_X86
	if (have_avx2()) {
		if (t == NP_DT_F32)
			done = avx2_32(p, n, r, &max_mag);
		else if (t == NP_DT_F16 || t == NP_DT_BF16)
			done = avx2_16(t, p, n, r, &max_mag);
		else if (t == NP_DT_F64)
			done = avx2_64(p, n, r, &max_mag);
		else
			done = avx2_8(t, p, n, r, &max_mag);
	}
#endif
	scalar_range(t, p, done, n, r, &max_mag);
	r->max_abs = np_magnitude(t, max_mag);
	return 0;
}

#ifdef NP_HAVE_X86
__attribute__((target("avx2,fma")))
static size_t avx2_sumsq_f32(const float *p, size_t n, double *acc)
{
	__m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 v = _mm256_loadu_ps(p + i);
		__m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
		__m256d hi = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
		a0 = _mm256_fmadd_pd(lo, lo, a0);
		a1 = _mm256_fmadd_pd(hi, hi, a1);
	}
	double lanes[4];
	_mm256_storeu_pd(lanes, _mm256_add_pd(a0, a1));
	*acc += lanes[0] + lanes[1] + lanes[2] + lanes[3];
	return i;
}
#endif

/* Converts one finite element to double (NaN for non-finite: callers
 * sum clean tensors only). */
static double value_of(enum np_dtype t, const uint8_t *p)
{
	uint64_t b = np_load_bits(t, p);
	if (t == NP_DT_F32) {
		float f;
		memcpy(&f, &b, 4);
		return f;
	}
	if (t == NP_DT_F64) {
		double d;
		memcpy(&d, &b, 8);
		return d;
	}
	uint64_t sign = np_sign_bit(t);
	double v = np_magnitude(t, b & (sign - 1));
	return b & sign ? -v : v;
}

double np_cpu_sumsq(enum np_dtype t, const void *p, size_t n)
{
	if ((unsigned)t >= NP_DT_MAX)
		return 0;
	double acc = 0;
	size_t i = 0;
#ifdef NP_HAVE_X86
	if (t == NP_DT_F32 && have_avx2())
		i = avx2_sumsq_f32(p, n, &acc);
#endif
	unsigned size = np_dtype_size(t);
	for (; i < n; i++) {
		double v = value_of(t, (const uint8_t *)p + i * size);
		acc += v * v;
	}
	return acc;
}
