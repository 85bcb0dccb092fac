/* test_cpu_check.c - agent/cpu_check.c and kernels/finite.h on crafted
 * bit patterns: every NaN payload class, infinities, signed zeros,
 * subnormals and the largest finite values of each format, at every
 * position relative to the vector width, and against the scalar
 * reference on random data. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../../agent/cpu_check.h"

static void check(enum np_dtype t, const void *p, size_t n, uint64_t nan, uint64_t pinf,
		  uint64_t ninf, int64_t first, double max_abs)
{
	struct np_check_result r, s;
	cr_assert_eq(np_cpu_check(t, p, n, &r), 0);
	cr_assert_eq(np_cpu_check_scalar(t, p, n, &s), 0);
	cr_expect_eq(r.nan, nan, "dtype %d: nan %lu, want %lu", t, (unsigned long)r.nan,
		     (unsigned long)nan);
	cr_expect_eq(r.posinf, pinf, "dtype %d: +inf %lu", t, (unsigned long)r.posinf);
	cr_expect_eq(r.neginf, ninf, "dtype %d: -inf %lu", t, (unsigned long)r.neginf);
	cr_expect_eq(r.first_bad, first, "dtype %d: first_bad %ld, want %ld", t,
		     (long)r.first_bad, (long)first);
	cr_expect_eq(r.max_abs, max_abs, "dtype %d: max_abs %.17g, want %.17g", t, r.max_abs,
		     max_abs);
	cr_expect_eq(memcmp(&r, &s, sizeof(r)), 0, "vector and scalar paths disagree");
}

Test(cpu_check, f32_every_class)
{
	/* quiet and signalling NaNs, both signs, smallest and largest payloads */
	const uint32_t nans[] = { 0x7fc00000, 0x7f800001, 0xffc00000, 0xff800001, 0x7fffffff,
				  0xffffffff, 0x7fa00000 };
	for (size_t k = 0; k < sizeof(nans) / sizeof(nans[0]); k++) {
		uint32_t v[37] = { 0 };
		v[3] = 0x3f800000;           /* 1.0 */
		v[5] = 0x80000001;           /* -smallest subnormal */
		v[30] = nans[k];             /* in the fourth 8-lane vector */
		v[36] = nans[k];             /* in the tail */
		check(NP_DT_F32, v, 37, 2, 0, 0, 30, 1.0);
	}
	uint32_t v[19] = { 0 };
	v[0] = 0x80000000;                   /* -0 */
	v[1] = 0x7f7fffff;                   /* FLT_MAX */
	v[9] = 0x7f800000;                   /* +inf */
	v[17] = 0xff800000;                  /* -inf */
	check(NP_DT_F32, v, 19, 0, 1, 1, 9, 3.4028234663852886e38);
	uint32_t sub[8] = { 0x00000001 };    /* only a subnormal */
	check(NP_DT_F32, sub, 8, 0, 0, 0, -1, 1.401298464324817e-45);
	check(NP_DT_F32, sub, 0, 0, 0, 0, -1, 0.0);   /* empty */
}

Test(cpu_check, f32_unaligned_and_every_position)
{
	for (size_t pos = 0; pos < 40; pos++) {
		uint8_t raw[4 * 41 + 1];
		float *v = (float *)(raw + 1);       /* misaligned on purpose */
		for (size_t i = 0; i < 41; i++) {
			float x = (float)i - 20.0f;
			memcpy(raw + 1 + 4 * i, &x, 4);
		}
		uint32_t inf = 0xff800000;
		memcpy(raw + 1 + 4 * pos, &inf, 4);
		/* |-20| at 0 or 20 at 40: one of them is always left */
		check(NP_DT_F32, v, 41, 0, 0, 1, (int64_t)pos, 20.0);
	}
}

Test(cpu_check, f64_every_class)
{
	uint64_t v[11] = { 0 };
	v[1] = 0x7fefffffffffffffULL;        /* DBL_MAX */
	v[2] = 0x0000000000000001ULL;        /* smallest subnormal */
	v[6] = 0x7ff0000000000001ULL;        /* signalling NaN */
	v[7] = 0xfff8000000000000ULL;        /* negative quiet NaN */
	v[8] = 0x7ff0000000000000ULL;        /* +inf */
	v[10] = 0xfff0000000000000ULL;       /* -inf in the tail */
	check(NP_DT_F64, v, 11, 2, 1, 1, 6, 1.7976931348623157e308);
}

Test(cpu_check, f16_edges)
{
	uint16_t v[35] = { 0 };
	v[0] = 0x7bff;                       /* 65504, the largest finite */
	v[1] = 0x0001;                       /* smallest subnormal */
	v[2] = 0x8400;                       /* -2^-14 */
	check(NP_DT_F16, v, 35, 0, 0, 0, -1, 65504.0);
	v[20] = 0x7c00;                      /* +inf */
	v[21] = 0xfc00;                      /* -inf */
	v[22] = 0x7e00;                      /* quiet NaN */
	v[23] = 0x7c01;                      /* signalling NaN */
	v[34] = 0xfe00;                      /* negative NaN in the tail */
	check(NP_DT_F16, v, 35, 3, 1, 1, 20, 65504.0);
}

Test(cpu_check, bf16_edges)
{
	uint16_t v[17] = { 0 };
	v[4] = 0x7f7f;                       /* largest finite: 3.3895e38 */
	v[5] = 0x3f80;                       /* 1.0 */
	check(NP_DT_BF16, v, 17, 0, 0, 0, -1, 3.3895313892515355e38);
	v[16] = 0x7fc0;                      /* NaN in the tail */
	v[3] = 0xff80;                       /* -inf in the first vector */
	check(NP_DT_BF16, v, 17, 1, 0, 1, 3, 3.3895313892515355e38);
}

Test(cpu_check, fp8_formats)
{
	/* E4M3 (fn): no infinity; S.1111.111 is NaN; 0x7e is 448 */
	uint8_t a[6] = { 0x7e, 0x01, 0xfe, 0x7f, 0xff, 0x78 };
	check(NP_DT_F8E4M3, a, 6, 2, 0, 0, 3, 448.0);
	/* E5M2: 0x7b is 57344; 0x7c +inf, 0xfc -inf, 0x7d..0x7f NaN */
	uint8_t b[7] = { 0x7b, 0x01, 0x7c, 0xfc, 0x7d, 0xff, 0x00 };
	check(NP_DT_F8E5M2, b, 7, 2, 1, 1, 2, 57344.0);
	/* a long run through the 32-lane vectors, NaN in the second vector */
	uint8_t d[70];
	memset(d, 0x38, sizeof(d));         /* 1.0 in E4M3 */
	d[50] = 0x7e;
	d[40] = 0xff;
	check(NP_DT_F8E4M3, d, 70, 1, 0, 0, 40, 448.0);
	/* the smallest subnormals */
	uint8_t c[1] = { 0x01 };
	check(NP_DT_F8E4M3, c, 1, 0, 0, 0, -1, ldexp(1.0, -9));
	check(NP_DT_F8E5M2, c, 1, 0, 0, 0, -1, ldexp(1.0, -16));
}

Test(cpu_check, random_against_scalar)
{
	srand(7);
	for (int round = 0; round < 50; round++) {
		size_t n = (size_t)(rand() % 5000);
		enum np_dtype t = (enum np_dtype)(rand() % NP_DT_MAX);
		size_t bytes = n * np_dtype_size(t) + 8;
		uint8_t *buf = malloc(bytes);
		for (size_t i = 0; i < bytes; i++)
			buf[i] = (uint8_t)rand();
		/* mostly finite: clear the top exponent bit of most elements */
		unsigned sz = np_dtype_size(t);
		for (size_t i = 0; i < n; i++)
			if (rand() % 200)
				buf[1 + i * sz + sz - 1] &= 0x3f;
		struct np_check_result r, s;
		np_cpu_check(t, buf + 1, n, &r);
		np_cpu_check_scalar(t, buf + 1, n, &s);
		cr_assert_eq(memcmp(&r, &s, sizeof(r)), 0, "round %d dtype %d n %zu", round, t, n);
		free(buf);
	}
}

/* Mostly non-finite data (a job after its first NaN): every vector has
 * bad lanes, of every class, next to finite ones whose max must still
 * come out; the vector path classifies them itself. */
Test(cpu_check, mostly_nonfinite_against_scalar)
{
	srand(11);
	for (int round = 0; round < 60; round++) {
		size_t n = (size_t)(rand() % 3000);
		enum np_dtype t = (enum np_dtype)(round % NP_DT_MAX);
		unsigned sz = np_dtype_size(t);
		size_t bytes = n * sz + 8;
		uint8_t *buf = malloc(bytes);
		for (size_t i = 0; i < bytes; i++)
			buf[i] = (uint8_t)rand();
		uint64_t inf = np_nonfinite_min(t);
		for (size_t i = 0; i < n; i++) {
			uint8_t *e = buf + 1 + i * sz;
			uint64_t b = 0;
			memcpy(&b, e, sz);
			uint64_t sign = b & np_sign_bit(t);
			switch (rand() % 4) {
			case 0: b = sign | inf; break;                          /* +-Inf (E4M3: NaN) */
			case 1: b = sign | (np_sign_bit(t) - 1); break;         /* NaN, all ones */
			case 2: b = sign | inf | (1 + (uint64_t)rand() % 3);    /* NaN payloads */
				b &= np_sign_bit(t) | (np_sign_bit(t) - 1); break;
			default: e[sz - 1] &= 0x3f; continue;                   /* finite */
			}
			memcpy(e, &b, sz);
		}
		struct np_check_result r, s;
		np_cpu_check(t, buf + 1, n, &r);
		np_cpu_check_scalar(t, buf + 1, n, &s);
		cr_assert_eq(memcmp(&r, &s, sizeof(r)), 0,
			     "round %d dtype %d n %zu: nan %lu/%lu +inf %lu/%lu -inf %lu/%lu first %ld/%ld "
			     "max %g/%g", round, t, n, (unsigned long)r.nan, (unsigned long)s.nan,
			     (unsigned long)r.posinf, (unsigned long)s.posinf, (unsigned long)r.neginf,
			     (unsigned long)s.neginf, (long)r.first_bad, (long)s.first_bad, r.max_abs,
			     s.max_abs);
		cr_assert(n < 64 || s.nan + s.posinf + s.neginf > n / 2, "the data is mostly bad");
		free(buf);
	}
}

Test(cpu_check, uses_avx2_where_the_cpu_has_it)
{
	__builtin_cpu_init();
	cr_expect_str_eq(np_cpu_check_impl(), __builtin_cpu_supports("avx2") ? "avx2" : "scalar");
}

Test(cpu_check, unknown_dtype)
{
	struct np_check_result r;
	cr_expect_eq(np_cpu_check(NP_DT_MAX, "", 0, &r), -EINVAL);
}
