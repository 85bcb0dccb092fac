/* test_check_kernels.c - the GPU finite checks' logic, run on the CPU.
 *
 * kernels/check_accum.h and kernels/gpu_ring.h are the kernels'
 * code except the warp/block reduction, written to compile with gcc as
 * well as nvcc.  Here: the accumulator on crafted bit patterns of every
 * dtype (against the CPU check, agent/cpu_check.c), the lane tricks of
 * the vector path, the buffer split, a host emulation of a whole launch
 * (tests/check_emu.h: blocks, threads and shuffles as the kernel does
 * them; here blocks arrive in any order, or run on real threads), and
 * the result ring's protocol,
 * down to 32-bit wraparound and four producers racing one consumer.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* another producer, run by np_gpu_ring_push between reading head and
 * taking it (see ring.lost_race_retries) */
struct np_gpu_ring;
static void ring_race_hook(const struct np_gpu_ring *r);
#define NP_RING_RACE_HOOK(r) ring_race_hook(r)

#include "../../agent/cpu_check.h"
#include "../../kernels/check_accum.h"
#include "../../kernels/gpu_ring.h"
#include "../check_emu.h"

/* The layout finite_check.cu asserts for nvcc, asserted for gcc. */
Test(abi, sizes)
{
	cr_expect_eq(sizeof(struct np_check_args), 80);
	cr_expect_eq(sizeof(struct np_check_slot), 64);
	cr_expect_eq(sizeof(struct np_gpu_rec), 64);
	cr_expect_eq(offsetof(struct np_gpu_rec, seq), 60);
	cr_expect_eq(offsetof(struct np_check_args, ring), 32);
	cr_expect_eq(offsetof(struct np_check_args, report_all), 72);
}

/* --- the accumulator ------------------------------------------------- */

static void expect_acc_eq(const struct np_acc *a, const struct np_acc *b, const char *what)
{
	cr_expect_eq(a->nan, b->nan, "%s: nan %llu vs %llu", what, a->nan, b->nan);
	cr_expect_eq(a->posinf, b->posinf, "%s: +inf %llu vs %llu", what, a->posinf, b->posinf);
	cr_expect_eq(a->neginf, b->neginf, "%s: -inf %llu vs %llu", what, a->neginf, b->neginf);
	cr_expect_eq(a->max_mag, b->max_mag, "%s: max_mag %#llx vs %#llx", what, a->max_mag,
		     b->max_mag);
	cr_expect_eq(a->bad_key, b->bad_key, "%s: first_bad %lld vs %lld", what,
		     np_bad_index(a->bad_key), np_bad_index(b->bad_key));
}

/* The CPU check's verdict on the same elements. */
static void expect_cpu_agrees(enum np_dtype t, const void *p, size_t n, const struct np_acc *a)
{
	struct np_check_result r;

	cr_assert_eq(np_cpu_check_scalar(t, p, n, &r), 0);
	cr_expect_eq(r.nan, a->nan, "dtype %d: cpu nan %lu, acc %llu", t, (unsigned long)r.nan,
		     a->nan);
	cr_expect_eq(r.posinf, a->posinf, "dtype %d: +inf", t);
	cr_expect_eq(r.neginf, a->neginf, "dtype %d: -inf", t);
	cr_expect_eq(r.first_bad, np_bad_index(a->bad_key), "dtype %d: first_bad %ld vs %lld", t,
		     (long)r.first_bad, np_bad_index(a->bad_key));
	cr_expect_eq(r.max_abs, np_magnitude(t, a->max_mag), "dtype %d: max %.17g vs %.17g", t,
		     r.max_abs, np_magnitude(t, a->max_mag));
}

/* Element by element through np_acc_add. */
static void acc_elems(struct np_acc *a, enum np_dtype t, const void *p, size_t n)
{
	unsigned esz = np_dtype_size(t);

	np_acc_init(a);
	for (size_t i = 0; i < n; i++)
		np_acc_add(a, t, np_load_elem((const unsigned char *)p + i * esz, esz, 1), i);
}

/*
 * Checks n elements of dtype t at p: np_acc_add one by one must give the
 * expected findings and agree with the CPU check; one thread's
 * np_scan_thread (lone elements and 16-byte vectors) must give the same
 * at every alignment of a copy, and byte by byte when misaligned.
 */
static void check(enum np_dtype t, const void *p, size_t n, uint64_t nan, uint64_t pinf,
		  uint64_t ninf, int64_t first, uint64_t max_mag)
{
	unsigned esz = np_dtype_size(t);
	struct np_acc a, b;

	acc_elems(&a, t, p, n);
	cr_expect_eq(a.nan, nan, "dtype %d: nan %llu, want %lu", t, a.nan, (unsigned long)nan);
	cr_expect_eq(a.posinf, pinf, "dtype %d: +inf %llu", t, a.posinf);
	cr_expect_eq(a.neginf, ninf, "dtype %d: -inf %llu", t, a.neginf);
	cr_expect_eq(np_bad_index(a.bad_key), first, "dtype %d: first_bad %lld, want %ld", t,
		     np_bad_index(a.bad_key), (long)first);
	cr_expect_eq(a.max_mag, max_mag, "dtype %d: max_mag %#llx, want %#lx", t, a.max_mag,
		     (unsigned long)max_mag);
	expect_cpu_agrees(t, p, n, &a);

	unsigned char *raw = aligned_alloc(16, n * esz + 32);
	for (unsigned off = 0; off < 17; off++) {
		memcpy(raw + off, p, n * esz);
		struct np_split s = np_split_of((uintptr_t)(raw + off), n, esz);
		cr_assert_eq(s.aligned, off % esz == 0);
		np_acc_init(&b);
		np_scan_thread(&b, t, raw + off, &s, 0, 1);
		char what[64];
		snprintf(what, sizeof(what), "dtype %d scan at offset %u", t, off);
		expect_acc_eq(&b, &a, what);
	}
	free(raw);
}

Test(check_accum, f32_every_class)
{
	/* quiet and signalling NaNs, both signs, smallest and largest payloads */
	const uint32_t nans[] = { 0x7fc00000, 0x7f800001, 0xffc00000, 0xff800001, 0x7fffffff,
				  0xffffffff, 0x7fa00000, 0x7fbfffff, 0xffbfffff };
	for (size_t k = 0; k < sizeof(nans) / sizeof(nans[0]); k++) {
		uint32_t v[37] = { 0 };
		v[3] = 0x3f800000;           /* 1.0 */
		v[5] = 0x80000001;           /* -smallest subnormal */
		v[30] = nans[k];
		v[36] = nans[k];             /* in the tail of every split */
		check(NP_DT_F32, v, 37, 2, 0, 0, 30, 0x3f800000);
	}
	uint32_t v[19] = { 0 };
	v[0] = 0x80000000;                   /* -0 */
	v[1] = 0x7f7fffff;                   /* FLT_MAX */
	v[2] = 0xff7fffff;                   /* -FLT_MAX */
	v[9] = 0x7f800000;                   /* +inf */
	v[17] = 0xff800000;                  /* -inf */
	check(NP_DT_F32, v, 19, 0, 1, 1, 9, 0x7f7fffff);
	uint32_t sub[8] = { 0x00000001, 0x80000000 };   /* only a subnormal, -0 */
	check(NP_DT_F32, sub, 8, 0, 0, 0, -1, 1);
	uint32_t zeros[9] = { 0x80000000, 0, 0x80000000 };
	check(NP_DT_F32, zeros, 9, 0, 0, 0, -1, 0);
	check(NP_DT_F32, zeros, 0, 0, 0, 0, -1, 0);     /* empty */
	uint32_t big[5] = { 0x007fffff, 0x00800000 };   /* largest subnormal, smallest normal */
	check(NP_DT_F32, big, 5, 0, 0, 0, -1, 0x00800000);
}

Test(check_accum, f64_every_class)
{
	const uint64_t nans[] = { 0x7ff8000000000000ULL, 0x7ff0000000000001ULL,
				  0xfff8000000000000ULL, 0xfff0000000000001ULL,
				  0x7fffffffffffffffULL, 0xffffffffffffffffULL,
				  0x7ff7ffffffffffffULL };
	for (size_t k = 0; k < sizeof(nans) / sizeof(nans[0]); k++) {
		uint64_t v[11] = { 0 };
		v[1] = 0x7fefffffffffffffULL;        /* DBL_MAX */
		v[2] = 0x0000000000000001ULL;        /* smallest subnormal */
		v[3] = 0x8000000000000000ULL;        /* -0 */
		v[6] = nans[k];
		v[8] = 0x7ff0000000000000ULL;        /* +inf */
		v[10] = 0xfff0000000000000ULL;       /* -inf, last */
		check(NP_DT_F64, v, 11, 1, 1, 1, 6, 0x7fefffffffffffffULL);
	}
	uint64_t w[4] = { 0x800fffffffffffffULL, 0x0000000000000001ULL };   /* subnormals */
	check(NP_DT_F64, w, 4, 0, 0, 0, -1, 0x000fffffffffffffULL);
}

Test(check_accum, f16_edges)
{
	uint16_t v[35] = { 0 };
	v[0] = 0x7bff;                       /* 65504, the largest finite */
	v[1] = 0x0001;                       /* smallest subnormal */
	v[2] = 0x8400;                       /* -2^-14 */
	v[3] = 0x8000;                       /* -0 */
	check(NP_DT_F16, v, 35, 0, 0, 0, -1, 0x7bff);
	v[20] = 0x7c00;                      /* +inf */
	v[21] = 0xfc00;                      /* -inf */
	v[22] = 0x7e00;                      /* quiet NaN */
	v[23] = 0x7c01;                      /* signalling NaN, smallest payload */
	v[24] = 0xffff;                      /* negative NaN, largest payload */
	v[25] = 0xfc01;
	v[34] = 0xfe00;                      /* negative NaN, last */
	check(NP_DT_F16, v, 35, 5, 1, 1, 20, 0x7bff);
	uint16_t s[9] = { 0x03ff, 0x8001 };  /* largest subnormal */
	check(NP_DT_F16, s, 9, 0, 0, 0, -1, 0x03ff);
}

Test(check_accum, bf16_edges)
{
	uint16_t v[17] = { 0 };
	v[4] = 0x7f7f;                       /* largest finite: 3.3895e38 */
	v[5] = 0x3f80;                       /* 1.0 */
	v[6] = 0x0001;                       /* smallest subnormal */
	v[7] = 0x8000;                       /* -0 */
	check(NP_DT_BF16, v, 17, 0, 0, 0, -1, 0x7f7f);
	v[16] = 0x7fc0;                      /* NaN, last */
	v[3] = 0xff80;                       /* -inf */
	v[9] = 0x7f81;                       /* signalling NaN */
	v[10] = 0xffff;
	v[11] = 0x7f80;                      /* +inf */
	check(NP_DT_BF16, v, 17, 3, 1, 1, 3, 0x7f7f);
}

Test(check_accum, fp8_e4m3)
{
	/* no infinity: S.1111.111 is the only NaN, 0x7e is 448, and
	 * 0x78..0x7e (exponent all ones) are ordinary finite values */
	uint8_t a[8] = { 0x7e, 0x01, 0xfe, 0x7f, 0xff, 0x78, 0x80, 0x7d };
	check(NP_DT_F8E4M3, a, 8, 2, 0, 0, 3, 0x7e);
	uint8_t d[70];
	memset(d, 0x38, sizeof(d));          /* 1.0 */
	d[50] = 0x7e;
	d[40] = 0xff;
	d[69] = 0x7f;
	check(NP_DT_F8E4M3, d, 70, 2, 0, 0, 40, 0x7e);
	uint8_t c[3] = { 0x01, 0x81, 0x00 };  /* smallest subnormals */
	check(NP_DT_F8E4M3, c, 3, 0, 0, 0, -1, 0x01);
}

Test(check_accum, fp8_e5m2)
{
	/* 0x7b is 57344; 0x7c +inf, 0xfc -inf, 0x7d..0x7f and 0xfd..0xff NaN */
	uint8_t b[9] = { 0x7b, 0x01, 0x7c, 0xfc, 0x7d, 0xff, 0x00, 0xfb, 0x80 };
	check(NP_DT_F8E5M2, b, 9, 2, 1, 1, 2, 0x7b);
	uint8_t d[47];
	memset(d, 0x3c, sizeof(d));          /* 1.0 */
	d[17] = 0x7e;
	d[33] = 0xfc;
	d[46] = 0x7c;
	check(NP_DT_F8E5M2, d, 47, 1, 1, 1, 17, 0x3c);
}

/* Every 8- and 16-bit pattern, alone and in every lane of a vector of
 * finite neighbours: np_acc_add against the CPU check, the vector path
 * against np_acc_add. */
Test(check_accum, every_narrow_pattern)
{
	const enum np_dtype ts[] = { NP_DT_F16, NP_DT_BF16, NP_DT_F8E4M3, NP_DT_F8E5M2 };
	for (size_t k = 0; k < sizeof(ts) / sizeof(ts[0]); k++) {
		enum np_dtype t = ts[k];
		unsigned esz = np_dtype_size(t), vlen = 16 / esz;
		uint64_t fill = esz == 1 ? 0x22 : 0x1234;   /* finite, small */
		for (uint64_t bits = 0; bits < (1ull << (8 * esz)); bits++) {
			struct np_check_result r;
			struct np_acc a;
			np_cpu_check_scalar(t, &bits, 1, &r);   /* little-endian */
			acc_elems(&a, t, &bits, 1);
			if (r.nan != a.nan || r.posinf != a.posinf || r.neginf != a.neginf ||
			    r.first_bad != np_bad_index(a.bad_key) ||
			    r.max_abs != np_magnitude(t, a.max_mag))
				cr_assert_fail("dtype %d bits %#llx: acc and cpu disagree", t,
					       (unsigned long long)bits);
			for (unsigned pos = 0; pos < vlen; pos++) {
				unsigned char v[16] __attribute__((aligned(16)));
				for (unsigned j = 0; j < vlen; j++)
					memcpy(v + j * esz, j == pos ? &bits : &fill, esz);
				uint64_t w[2], lanes = 0;
				struct np_acc b;
				np_load16(v, w);
				np_acc_init(&b);
				np_acc_vec(&b, t, w, 100, &lanes);
				np_acc_lanes(&b, esz, lanes);
				acc_elems(&a, t, v, vlen);
				a.bad_key = a.bad_key ? ~(~a.bad_key + 100) : 0;   /* i0 = 100 */
				if (memcmp(&a, &b, sizeof(a)))
					cr_assert_fail("dtype %d bits %#llx lane %u: vector path "
						       "disagrees", t, (unsigned long long)bits, pos);
			}
		}
	}
}

/* --- lanes ----------------------------------------------------------- */

static uint64_t rnd64(void)
{
	return (uint64_t)rand() << 62 ^ (uint64_t)rand() << 31 ^ (uint64_t)rand();
}

Test(lanes, max_is_lanewise)
{
	srand(11);
	for (unsigned esz = 1; esz <= 8; esz *= 2) {
		uint64_t mask = ~np_lanes_rep(esz, 1ull << (8 * esz - 1));
		for (int round = 0; round < 200000; round++) {
			uint64_t a = rnd64() & mask, b = rnd64() & mask;
			if (round % 4 == 0)   /* equal lanes, and lanes that differ by one */
				b = (a ^ np_lanes_rep(esz, round & 8 ? 1 : 0)) & mask;
			uint64_t m = np_lanes_max(esz, a, b);
			for (unsigned j = 0; j < 8 / esz; j++) {
				uint64_t x = np_lane(a, esz, j), y = np_lane(b, esz, j);
				if (np_lane(m, esz, j) != (x > y ? x : y))
					cr_assert_fail("esz %u: max(%#llx, %#llx) = %#llx", esz,
						       (unsigned long long)a, (unsigned long long)b,
						       (unsigned long long)m);
			}
		}
	}
	/* every pair of 7-bit lanes, next to random neighbours */
	for (unsigned x = 0; x < 128; x++)
		for (unsigned y = 0; y < 128; y++) {
			unsigned j = (x + y) % 8;
			uint64_t a = (rnd64() & 0x7f7f7f7f7f7f7f7full & ~(0xffull << 8 * j)) |
				     (uint64_t)x << 8 * j;
			uint64_t b = (rnd64() & 0x7f7f7f7f7f7f7f7full & ~(0xffull << 8 * j)) |
				     (uint64_t)y << 8 * j;
			cr_assert_eq(np_lane(np_lanes_max(1, a, b), 1, j), x > y ? x : y);
		}
}

Test(lanes, nonfinite_threshold)
{
	for (enum np_dtype t = 0; t < NP_DT_MAX; t++) {
		unsigned esz = np_dtype_size(t);
		uint64_t lim = np_nonfinite_min(t), top = np_sign_bit(t) - 1;
		for (unsigned j = 0; j < 8 / esz; j++) {
			unsigned sh = 8 * esz * j;
			uint64_t below = np_lanes_rep(esz, lim - 1);   /* every lane finite */
			uint64_t keep = esz == 8 ? 0 : ~(((1ull << 8 * esz) - 1) << sh);
			cr_expect_not(np_lanes_nonfinite(t, below), "dtype %d", t);
			cr_expect(np_lanes_nonfinite(t, (below & keep) | lim << sh), "dtype %d lane %u", t, j);
			cr_expect(np_lanes_nonfinite(t, (below & keep) | top << sh), "dtype %d lane %u", t, j);
			cr_expect_not(np_lanes_nonfinite(t, (uint64_t)(lim - 1) << sh), "dtype %d", t);
		}
		cr_expect_not(np_lanes_nonfinite(t, 0), "dtype %d", t);
	}
}

/* --- the split ------------------------------------------------------- */

Test(split, covers_each_element_once)
{
	for (unsigned esz = 1; esz <= 8; esz *= 2)
		for (unsigned long long addr = 0x1000; addr < 0x1000 + 32; addr++)
			for (unsigned long long n = 0; n < 70; n++) {
				struct np_split s = np_split_of(addr, n, esz);
				unsigned seen[70] = { 0 };
				cr_assert_eq(s.aligned, addr % esz == 0);
				cr_assert_eq(s.vlen, 16 / esz);
				if (!s.aligned)
					cr_assert_eq(s.nvec, 0);
				for (unsigned long long k = 0; k < s.nscalar; k++) {
					unsigned long long i = np_split_scalar(&s, k);
					cr_assert_lt(i, n, "esz %u addr %#llx n %llu", esz, addr, n);
					seen[i]++;
				}
				for (unsigned long long v = 0; v < s.nvec; v++) {
					unsigned long long i0 = s.head + v * s.vlen;
					cr_assert_eq((addr + i0 * esz) % 16, 0, "vector misaligned");
					cr_assert_leq(i0 + s.vlen, n, "vector past numel");
					for (unsigned j = 0; j < s.vlen; j++)
						seen[i0 + j]++;
				}
				for (unsigned long long i = 0; i < n; i++)
					cr_assert_eq(seen[i], 1, "esz %u addr %#llx n %llu: element "
						     "%llu seen %u times", esz, addr, n, i, seen[i]);
				/* the lone elements are only the edges */
				if (s.aligned)
					cr_assert_lt(s.nscalar, 2 * s.vlen);
			}
}

/* --- a whole launch, emulated ---------------------------------------- */

#define RING_CAP 16

struct emu {
	struct np_check_slot slot;
	struct np_gpu_rec ring_slots[RING_CAP];
	unsigned int head, dropped, tail;
	struct np_check_args args;
};

static void emu_init(struct emu *e, const void *buf, uint64_t numel, unsigned report_all)
{
	memset(e, 0, sizeof(*e));
	e->args.buf = buf;
	e->args.numel = numel;
	e->args.tag = 1;
	e->args.slot = &e->slot;
	e->args.ring.slots = e->ring_slots;
	e->args.ring.head = &e->head;
	e->args.ring.dropped = &e->dropped;
	e->args.ring.tail = &e->tail;
	e->args.ring.cap = RING_CAP;
	e->args.report_all = report_all;
}

/* Blocks, threads and shuffles as finite_check.cu runs them are
 * np_emu_block() (tests/check_emu.h), shared with the fake CUDA driver
 * of the integration tests. */

/* The launch, blocks arriving in a random order; only the last may
 * publish. */
static void emu_launch(struct emu *e, enum np_dtype t, unsigned nblocks, unsigned nthreads)
{
	unsigned order[NP_CHECK_MAX_BLOCKS];

	for (unsigned b = 0; b < nblocks; b++)
		order[b] = b;
	for (unsigned b = nblocks; b > 1; b--) {
		unsigned k = (unsigned)rand() % b, x = order[b - 1];
		order[b - 1] = order[k];
		order[k] = x;
	}
	for (unsigned b = 0; b < nblocks; b++) {
		int rc = np_emu_block(&e->args, t, order[b], nblocks, nthreads);
		if (b + 1 < nblocks)
			cr_assert_eq(rc, 0, "block %u of %u published", b, nblocks);
	}
}

static int slot_is_zero(const struct np_check_slot *s)
{
	static const struct np_check_slot zero;
	return !memcmp(s, &zero, sizeof(zero));
}

/* Launches a check of n elements at p and compares its record with the
 * CPU check's findings. */
static void expect_launch(enum np_dtype t, const void *p, size_t n, unsigned nblocks,
			  unsigned nthreads, unsigned report_all)
{
	struct emu e;
	struct np_acc ref;
	struct np_gpu_rec rec = { 0 };

	emu_init(&e, p, n, report_all);
	e.args.tag = 0x5eed0000 + n;
	emu_launch(&e, t, nblocks, nthreads);
	cr_assert(slot_is_zero(&e.slot), "slot not reset");
	acc_elems(&ref, t, p, n);
	expect_cpu_agrees(t, p, n, &ref);
	if (!np_acc_bad(&ref) && !report_all) {
		cr_assert_eq(e.head, 0, "a record for a clean buffer");
		return;
	}
	struct np_gpu_rec extra;
	cr_assert_eq(np_gpu_ring_pop(e.ring_slots, RING_CAP, &e.tail, &rec), 1, "no record");
	cr_assert_eq(np_gpu_ring_pop(e.ring_slots, RING_CAP, &e.tail, &extra), 0, "two records");
	cr_expect_eq(rec.tag, 0x5eed0000 + n);
	cr_expect_eq(rec.numel, n);
	cr_expect_eq(rec.dtype, (unsigned)t);
	cr_expect_eq(rec.seq, 1);
	cr_expect_eq(rec.nan, ref.nan, "dtype %d <<<%u,%u>>> n %zu: nan %llu, want %llu", t,
		     nblocks, nthreads, n, rec.nan, ref.nan);
	cr_expect_eq(rec.posinf, ref.posinf);
	cr_expect_eq(rec.neginf, ref.neginf);
	cr_expect_eq(rec.max_mag, ref.max_mag, "dtype %d: max_mag %#llx, want %#llx", t,
		     rec.max_mag, ref.max_mag);
	cr_expect_eq(rec.first_bad, np_bad_index(ref.bad_key),
		     "dtype %d <<<%u,%u>>> n %zu: first_bad %lld, want %lld", t, nblocks, nthreads,
		     n, rec.first_bad, np_bad_index(ref.bad_key));
}

/* Which block's threads scan element i. */
static unsigned owner(unsigned long long addr, unsigned long long n, unsigned esz,
		      unsigned long long i, unsigned nblocks, unsigned nthreads)
{
	struct np_split s = np_split_of(addr, n, esz);
	unsigned long long g;

	if (i < s.head)
		g = i;
	else if (i >= s.head + s.nvec * s.vlen)
		g = i - s.nvec * s.vlen;
	else
		g = (i - s.head) / s.vlen;
	return (unsigned)(g % np_grid_stride(nblocks, nthreads) / nthreads);
}

Test(launch, smallest_first_bad_wins)
{
	enum { N = 100003 };
	static float buf[N];
	const unsigned nblocks = 7, nthreads = 64;
	/* 801 is in vector 200, scanned by thread 200 of 448: block 3 */
	const unsigned long long bad[] = { 30000, 801, 802, 77777, 100002, 9000 };
	unsigned blocks_hit = 0;

	srand(3);
	for (size_t i = 0; i < N; i++)
		buf[i] = (float)(i % 1000) - 500.0f;
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		memcpy(&buf[bad[k]], &(uint32_t){ k % 2 ? 0x7fc00000u : 0xff800000u }, 4);
		blocks_hit |= 1u << owner((uintptr_t)buf, N, 4, bad[k], nblocks, nthreads);
	}
	/* the point: bad values in several blocks, the smallest not in block 0 */
	cr_assert_geq(__builtin_popcount(blocks_hit), 3, "bad values in too few blocks");
	cr_assert_neq(owner((uintptr_t)buf, N, 4, 801, nblocks, nthreads), 0);
	for (int round = 0; round < 20; round++)   /* many arrival orders */
		expect_launch(NP_DT_F32, buf, N, nblocks, nthreads, 0);

	struct emu e;
	struct np_gpu_rec rec = { 0 };
	emu_init(&e, buf, N, 0);
	emu_launch(&e, NP_DT_F32, nblocks, nthreads);
	cr_assert_eq(np_gpu_ring_pop(e.ring_slots, RING_CAP, &e.tail, &rec), 1);
	cr_expect_eq(rec.first_bad, 801);
	cr_expect_eq(rec.nan, 3);
	cr_expect_eq(rec.neginf, 3);
	cr_expect_eq(rec.max_mag, 0x43fa0000);   /* |-500.0| */
}

Test(launch, random_buffers_every_dtype)
{
	const unsigned threads[] = { 32, 64, 96, 256 };
	srand(7);
	for (int round = 0; round < 300; round++) {
		enum np_dtype t = (enum np_dtype)(rand() % NP_DT_MAX);
		unsigned sz = np_dtype_size(t);
		size_t n = (size_t)(rand() % (round % 10 ? 3000 : 40000));
		unsigned nblocks = 1 + (unsigned)rand() % (round % 3 ? 9 : 40);
		unsigned nthreads = threads[rand() % 4];
		unsigned off = (unsigned)rand() % 17;
		unsigned char *raw = aligned_alloc(16, n * sz + 32);
		for (size_t i = 0; i < n * sz + 32; i++)
			raw[i] = (unsigned char)rand();
		/* mostly finite: clear the top exponent bit of most elements */
		for (size_t i = 0; i < n; i++)
			if (rand() % (round % 2 ? 2000 : 50))
				raw[off + i * sz + sz - 1] &= 0x3f;
		expect_launch(t, raw + off, n, nblocks, nthreads, (unsigned)round % 5 == 0);
		free(raw);
	}
}

/* Every element non-finite: the count is exact only if the grid covers
 * each element once. */
Test(launch, every_element_counted_once)
{
	const uint64_t nan_of[NP_DT_MAX] = { 0x7fc00000, 0x7ff8000000000000ULL, 0x7e00, 0x7fc0,
					     0x7f, 0x7e };
	unsigned char raw[16 * 301 + 32] __attribute__((aligned(16)));
	for (enum np_dtype t = 0; t < NP_DT_MAX; t++) {
		unsigned sz = np_dtype_size(t);
		for (unsigned off = 0; off < 16; off += 3)
			for (size_t n = 0; n < 301; n += 37) {
				for (size_t i = 0; i < n; i++)
					memcpy(raw + off + i * sz, &nan_of[t], sz);
				expect_launch(t, raw + off, n, 3, 32, 0);
				expect_launch(t, raw + off, n, 1, 256, 0);
			}
	}
}

Test(launch, clean_buffer_and_statistics)
{
	uint16_t v[1000];
	struct emu e;
	struct np_gpu_rec rec = { 0 };

	for (int i = 0; i < 1000; i++)
		v[i] = (uint16_t)(0x3c00 + i);          /* f16, finite; largest at 999 */
	emu_init(&e, v, 1000, 0);
	emu_launch(&e, NP_DT_F16, 4, 64);
	cr_expect(slot_is_zero(&e.slot));
	cr_expect_eq(e.head, 0, "no record for a clean buffer");
	cr_expect_eq(np_gpu_ring_pop(e.ring_slots, RING_CAP, &e.tail, &rec), 0);

	e.args.report_all = 1;                       /* statistics are due */
	e.args.tag = 42;
	emu_launch(&e, NP_DT_F16, 4, 64);
	cr_assert_eq(np_gpu_ring_pop(e.ring_slots, RING_CAP, &e.tail, &rec), 1);
	cr_expect_eq(rec.tag, 42);
	cr_expect_eq(rec.first_bad, -1);
	cr_expect_eq(rec.nan + rec.posinf + rec.neginf, 0);
	cr_expect_eq(rec.max_mag, 0x3c00 + 999);
	cr_expect_eq(rec.dtype, NP_DT_F16);
	cr_expect(slot_is_zero(&e.slot));
}

/* One slot, one ring, check after check, as the host reuses them; a
 * full ring drops and says so. */
Test(launch, slot_reuse_and_full_ring)
{
	double v[500];
	struct emu e;
	struct np_gpu_rec rec = { 0 };

	for (int i = 0; i < 500; i++)
		v[i] = i;
	emu_init(&e, v, 500, 0);
	for (unsigned k = 0; k < RING_CAP + 3; k++) {
		memcpy(&v[k * 20], &(uint64_t){ 0xfff0000000000000ULL }, 8);   /* -inf */
		e.args.tag = 100 + k;
		e.args.numel = 500 - k;
		if (k < RING_CAP) {
			emu_launch(&e, NP_DT_F64, 5, 32);
		} else {
			/* the ring is full: the last block says so, and nothing is lost
			 * silently */
			for (unsigned b = 0; b < 4; b++)
				cr_assert_eq(np_emu_block(&e.args, NP_DT_F64, b, 5, 32), 0);
			cr_assert_eq(np_emu_block(&e.args, NP_DT_F64, 4, 5, 32), -1);
		}
		cr_assert(slot_is_zero(&e.slot), "check %u left the slot dirty", k);
		memcpy(&v[k * 20], &(double){ 0.5 }, 8);
	}
	cr_expect_eq(e.dropped, 3);
	cr_expect_eq(e.head, RING_CAP);
	for (unsigned k = 0; k < RING_CAP; k++) {
		cr_assert_eq(np_gpu_ring_pop(e.ring_slots, RING_CAP, &e.tail, &rec), 1);
		cr_expect_eq(rec.tag, 100 + k);
		cr_expect_eq(rec.numel, 500 - k);
		cr_expect_eq(rec.neginf, 1, "check %u: each sees only its own -inf", k);
		cr_expect_eq(rec.first_bad, (long long)k * 20);
		double top = 499.0 - k;        /* the last element, never the -inf */
		uint64_t top_bits;
		memcpy(&top_bits, &top, 8);
		cr_expect_eq(rec.max_mag, top_bits, "check %u: max_mag %#llx", k, rec.max_mag);
	}
	cr_expect_eq(np_gpu_ring_pop(e.ring_slots, RING_CAP, &e.tail, &rec), 0);
}

/* Blocks on real threads, all at once, as on the GPU. */
struct block_job {
	const struct np_check_args *args;
	pthread_barrier_t *go;
	unsigned blk, nblocks;
	int rc;
};

static void *block_thread(void *p)
{
	struct block_job *j = p;
	pthread_barrier_wait(j->go);
	j->rc = np_emu_block(j->args, NP_DT_BF16, j->blk, j->nblocks, 32);
	return NULL;
}

Test(launch, blocks_race)
{
	enum { NB = 6, N = 3000 };
	uint16_t v[N];
	struct emu e;
	struct np_acc ref;

	srand(5);
	emu_init(&e, v, N, 0);
	for (int round = 0; round < 200; round++) {
		for (int i = 0; i < N; i++)
			v[i] = (uint16_t)(rand() % 0x7f00);
		for (int k = 0; k < 3; k++)
			v[rand() % N] = rand() % 2 ? 0x7fc1 : 0xff80;
		acc_elems(&ref, NP_DT_BF16, v, N);
		e.args.tag = (unsigned long long)round;

		pthread_barrier_t go;
		pthread_t th[NB];
		struct block_job jobs[NB];
		pthread_barrier_init(&go, NULL, NB);
		for (unsigned b = 0; b < NB; b++) {
			jobs[b] = (struct block_job){ &e.args, &go, b, NB, 0 };
			pthread_create(&th[b], NULL, block_thread, &jobs[b]);
		}
		int published = 0;
		for (unsigned b = 0; b < NB; b++) {
			pthread_join(th[b], NULL);
			published += jobs[b].rc == 1;
			cr_assert(jobs[b].rc == 0 || jobs[b].rc == 1);
		}
		pthread_barrier_destroy(&go);
		cr_assert_eq(published, 1, "round %d: %d blocks published", round, published);
		cr_assert(slot_is_zero(&e.slot));

		struct np_gpu_rec rec = { 0 };
		cr_assert_eq(np_gpu_ring_pop(e.ring_slots, RING_CAP, &e.tail, &rec), 1);
		cr_assert_eq(rec.tag, (unsigned long long)round);
		cr_assert_eq(rec.nan, ref.nan);
		cr_assert_eq(rec.neginf, ref.neginf);
		cr_assert_eq(rec.max_mag, ref.max_mag);
		cr_assert_eq(rec.first_bad, np_bad_index(ref.bad_key));
	}
}

/* Buffers that end (or start) at an inaccessible page: a load past
 * numel, or before the start, would crash the test. */
Test(launch, never_reads_outside)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *m = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0);
	cr_assert_neq(m, MAP_FAILED);
	cr_assert_eq(mprotect(m, pg, PROT_NONE), 0);
	cr_assert_eq(mprotect(m + 2 * pg, pg, PROT_NONE), 0);
	unsigned char *lo = m + pg, *hi = m + 2 * pg;
	memset(lo, 0x11, pg);

	for (enum np_dtype t = 0; t < NP_DT_MAX; t++) {
		unsigned sz = np_dtype_size(t);
		for (size_t n = 0; n < 67; n++) {
			unsigned char *at_end = hi - n * sz;
			if (n)
				memset(at_end + (n - 1) * sz + sz - 1, 0xff, 1);   /* last: NaN */
			expect_launch(t, at_end, n, 2, 32, 1);
			expect_launch(t, lo, n, 3, 32, 1);
			if (sz > 1 && n * sz + 1 <= (size_t)pg)
				expect_launch(t, hi - n * sz - 1, n, 2, 64, 1);   /* misaligned */
			memset(lo, 0x11, pg);
		}
	}
	munmap(m, 3 * pg);
}

/* --- the ring -------------------------------------------------------- */

struct ring {
	struct np_gpu_rec *slots;
	unsigned int head, dropped, tail;
	struct np_gpu_ring r;
};

static void ring_init(struct ring *g, unsigned cap, unsigned start)
{
	g->slots = calloc(cap, sizeof(*g->slots));
	g->head = g->tail = start;
	g->dropped = 0;
	g->r = (struct np_gpu_ring){ .slots = g->slots, .head = &g->head, .dropped = &g->dropped,
				     .tail = &g->tail, .cap = cap };
	if (start)
		np_gpu_ring_reset(g->slots, cap, start);
}

static struct np_gpu_rec rec_for(unsigned long long tag)
{
	struct np_gpu_rec r = {
		.tag = tag, .numel = tag * 3 + 1, .nan = tag ^ 0x5555, .posinf = tag >> 3,
		.neginf = ~tag, .max_mag = tag * 0x9e3779b97f4a7c15ULL,
		.first_bad = (long long)(tag % 1000) - 1, .dtype = (unsigned)(tag % NP_DT_MAX),
		.seq = 0xdeadbeef,   /* the producer must write its own */
	};
	return r;
}

static int rec_intact(const struct np_gpu_rec *r)
{
	struct np_gpu_rec want = rec_for(r->tag);
	want.seq = r->seq;
	return !memcmp(r, &want, sizeof(want));
}

static void pop_expect(struct ring *g, unsigned cap, unsigned long long tag)
{
	struct np_gpu_rec out = { 0 };
	unsigned t = g->tail;
	cr_assert_eq(np_gpu_ring_pop(g->slots, cap, &g->tail, &out), 1, "nothing for tag %llu", tag);
	cr_assert_eq(out.tag, tag, "tag %llu, want %llu", out.tag, tag);
	cr_assert(rec_intact(&out), "record %llu damaged", tag);
	cr_assert_eq(out.seq, t + 1);
	cr_assert_eq(g->tail, t + 1);
}

Test(ring, order)
{
	struct ring g;
	struct np_gpu_rec out = { 0 };

	ring_init(&g, 8, 0);
	cr_assert_eq(np_gpu_ring_pop(g.slots, 8, &g.tail, &out), 0, "empty ring popped");
	for (unsigned k = 0; k < 5; k++) {
		struct np_gpu_rec r = rec_for(10 + k);
		cr_assert_eq(np_gpu_ring_push(&g.r, &r), 1);
	}
	for (unsigned k = 0; k < 5; k++)
		pop_expect(&g, 8, 10 + k);
	cr_assert_eq(np_gpu_ring_pop(g.slots, 8, &g.tail, &out), 0);
	/* many laps, interleaved */
	for (unsigned k = 0; k < 100; k++) {
		struct np_gpu_rec r = rec_for(1000 + k);
		cr_assert_eq(np_gpu_ring_push(&g.r, &r), 1);
		if (k % 3 == 2)
			for (unsigned j = k - 2; j <= k; j++)
				pop_expect(&g, 8, 1000 + j);
	}
	pop_expect(&g, 8, 1099);
	cr_assert_eq(g.dropped, 0);
	free(g.slots);
}

/* A full ring gives out no index: the consumer never waits on a hole. */
Test(ring, full_drops_without_hole)
{
	struct ring g;
	struct np_gpu_rec out = { 0 };

	ring_init(&g, 4, 0);
	for (unsigned k = 0; k < 7; k++) {
		struct np_gpu_rec r = rec_for(k);
		cr_assert_eq(np_gpu_ring_push(&g.r, &r), k < 4);
	}
	cr_assert_eq(g.dropped, 3);
	cr_assert_eq(g.head, 4);
	pop_expect(&g, 4, 0);
	struct np_gpu_rec r = rec_for(7);
	cr_assert_eq(np_gpu_ring_push(&g.r, &r), 1, "a freed slot is usable again");
	for (unsigned k = 1; k < 4; k++)
		pop_expect(&g, 4, k);
	pop_expect(&g, 4, 7);
	cr_assert_eq(np_gpu_ring_pop(g.slots, 4, &g.tail, &out), 0);
	cr_assert_eq(g.dropped, 3);

	/* a taken index whose record is not written yet: the consumer waits */
	g.head++;
	cr_assert_eq(np_gpu_ring_pop(g.slots, 4, &g.tail, &out), 0);
	free(g.slots);
}

static int race_pending;
static unsigned long long race_tag;

static void ring_race_hook(const struct np_gpu_ring *r)
{
	if (!race_pending)
		return;
	race_pending--;
	struct np_gpu_rec rec = rec_for(race_tag);
	np_gpu_ring_push(r, &rec);
}

/* Another producer takes the index first: the CAS fails, and the push
 * retries from the new head, fullness included. */
Test(ring, lost_race_retries)
{
	struct ring g;
	struct np_gpu_rec out = { 0 }, a = rec_for(1);

	ring_init(&g, 8, 0);
	race_pending = 1;
	race_tag = 2;
	cr_assert_eq(np_gpu_ring_push(&g.r, &a), 1);
	cr_assert_eq(race_pending, 0, "the hook did not run");
	cr_assert_eq(g.head, 2);
	pop_expect(&g, 8, 2);   /* the racer won index 0 */
	pop_expect(&g, 8, 1);
	cr_assert_eq(np_gpu_ring_pop(g.slots, 8, &g.tail, &out), 0);
	free(g.slots);

	/* the racer takes the last free slot: the retry finds the ring full */
	ring_init(&g, 2, 0);
	cr_assert_eq(np_gpu_ring_push(&g.r, &a), 1);
	race_pending = 1;
	race_tag = 3;
	struct np_gpu_rec b = rec_for(4);
	cr_assert_eq(np_gpu_ring_push(&g.r, &b), 0);
	cr_assert_eq(g.dropped, 1);
	cr_assert_eq(g.head, 2);
	pop_expect(&g, 2, 1);
	pop_expect(&g, 2, 3);
	cr_assert_eq(np_gpu_ring_pop(g.slots, 2, &g.tail, &out), 0);
	free(g.slots);
}

/* The counters wrap through 2^32: slots, fullness and seq all follow. */
Test(ring, wraps_at_32_bits)
{
	for (unsigned start = UINT32_MAX - 9; start != 6; start++) {
		struct ring g;
		struct np_gpu_rec out = { 0 };

		ring_init(&g, 4, start);
		/* fresh slots are not ready for any index the consumer waits on */
		for (unsigned k = 0; k < 4; k++)
			cr_assert_neq(g.slots[(start + k) & 3].seq, start + k + 1);
		cr_assert_eq(np_gpu_ring_pop(g.slots, 4, &g.tail, &out), 0, "start %u", start);
		unsigned long long next = 0, want = 0;
		for (int step = 0; step < 12; step++) {
			for (int k = 0; k < 3; k++) {   /* push 3, one of them too many */
				struct np_gpu_rec r = rec_for(next);
				int full = g.head - g.tail == 4;
				cr_assert_eq(np_gpu_ring_push(&g.r, &r), !full, "start %u head %u tail %u",
					     start, g.head, g.tail);
				if (!full)
					next++;
			}
			for (int k = 0; k < 2; k++)
				pop_expect(&g, 4, want++);
		}
		/* 3 + 3 taken, then 2 taken and 1 dropped a step */
		cr_assert_eq(next, 26);
		cr_assert_eq(g.tail, start + 24);
		cr_assert_eq(g.head, start + 26);
		cr_assert_eq(g.dropped, 10);
		free(g.slots);
	}
}

/* Four producers, one consumer: every record arrives once, intact, in
 * its producer's order, or was refused and counted as dropped. */
enum { PRODUCERS = 4, PER_PRODUCER = 50000, MT_CAP = 64 };

struct producer {
	struct np_gpu_ring *r;
	unsigned long long id;
	unsigned *finished;
	unsigned char pushed[PER_PRODUCER];
	unsigned refused;
};

static void *producer_main(void *p)
{
	struct producer *pr = p;
	for (unsigned k = 0; k < PER_PRODUCER; k++) {
		struct np_gpu_rec r = rec_for(pr->id << 32 | k);
		pr->pushed[k] = (unsigned char)np_gpu_ring_push(pr->r, &r);
		pr->refused += !pr->pushed[k];
		if (k % 97 == 0)
			sched_yield();
	}
	__atomic_fetch_add(pr->finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

Test(ring, producers_race_one_consumer, .timeout = 120)
{
	static struct producer prs[PRODUCERS];
	static unsigned char got[PRODUCERS][PER_PRODUCER];
	struct ring g;
	long long last[PRODUCERS];
	pthread_t th[PRODUCERS];
	unsigned finished = 0;
	unsigned long long received = 0, dropped = 0;

	ring_init(&g, MT_CAP, UINT32_MAX - 50000);   /* wraps on the way */
	for (unsigned p = 0; p < PRODUCERS; p++) {
		prs[p] = (struct producer){ .r = &g.r, .id = p, .finished = &finished };
		last[p] = -1;
		pthread_create(&th[p], NULL, producer_main, &prs[p]);
	}
	for (;;) {
		struct np_gpu_rec out = { 0 };
		if (!np_gpu_ring_pop(g.slots, MT_CAP, &g.tail, &out)) {
			/* once every producer is done, every index taken is written */
			if (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) == PRODUCERS &&
			    __atomic_load_n(&g.head, __ATOMIC_RELAXED) == g.tail)
				break;
			continue;
		}
		unsigned p = (unsigned)(out.tag >> 32), k = (unsigned)out.tag;
		cr_assert_lt(p, PRODUCERS, "tag %#llx", out.tag);
		cr_assert_lt(k, PER_PRODUCER);
		cr_assert(rec_intact(&out), "record %#llx damaged", out.tag);
		cr_assert_eq(got[p][k], 0, "record %#llx twice", out.tag);
		cr_assert_gt((long long)k, last[p], "producer %u out of order", p);
		got[p][k] = 1;
		last[p] = k;
		if (++received % 2048 == 0)
			usleep(300);   /* fall behind now and then: drops must happen */
	}
	for (unsigned p = 0; p < PRODUCERS; p++) {
		pthread_join(th[p], NULL);
		for (unsigned k = 0; k < PER_PRODUCER; k++)
			cr_assert_eq(got[p][k], prs[p].pushed[k],
				     "producer %u record %u: pushed %d, received %d", p, k,
				     prs[p].pushed[k], got[p][k]);
		dropped += prs[p].refused;
	}
	cr_expect_eq(g.dropped, dropped, "dropped %u, refused %llu", g.dropped, dropped);
	cr_expect_eq(received + dropped, (unsigned long long)PRODUCERS * PER_PRODUCER);
	cr_expect_gt(dropped, 0, "the ring never filled: the test proves less");
	cr_expect_gt(received, (unsigned long long)MT_CAP, "too little got through");
	cr_expect_eq(g.tail, (unsigned)(UINT32_MAX - 50000) + (unsigned)received);
	free(g.slots);
}
