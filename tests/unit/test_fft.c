/* test_fft.c - cupti/fft.c: what a cuFFT transform writes and reads, from
 * its plan and its call; the table of plans by handle. */
#include <criterion/criterion.h>
#include "../../cupti/fft.h"

TestSuite(fft, .init = np_fft_plans_reset);

enum { R32F = 0, R64F = 1, R16F = 2, C32F = 4, C64F = 5, C16F = 6, R32I = 10 };

#define IN 0x7f0000100000ull
#define OUT 0x7f0000300000ull

/* a basic-layout plan: rank dims n[], batch, the sides' types */
static struct np_fft_desc basic(int rank, const int64_t *n, int64_t batch, int it, int ot)
{
	struct np_fft_desc d = { .rank = rank, .batch = batch,
				 .in = { .cuda_dtype = it }, .out = { .cuda_dtype = ot } };
	for (int k = 0; k < rank; k++)
		d.n[k] = n[k];
	return d;
}

/* torch.fft.irfft(x, n=64) over (4, 16, 33) complex64: C2R, 64 batches */
Test(fft, an_irfft_checks_its_real_output_and_reads_its_halved_spectrum)
{
	const int64_t n[] = { 64 };
	struct np_fft_desc d = basic(1, n, 64, C32F, R32F);
	struct np_gemm_plan p;
	cr_assert_eq(np_fft_plan(&d, IN, OUT, &p), 0);
	cr_expect_eq(p.out.ptr, OUT);
	cr_expect_eq(p.out.numel, 64 * 64, "64 real values per transform");
	cr_expect_eq(p.out.dtype, NP_DT_F32);
	cr_expect_eq(p.out.pairs, 0);
	cr_expect_eq(p.out.how, NP_KH_GEMM);
	cr_assert_eq(p.out.n_in, 1);
	cr_expect_eq(p.out.in[0], IN, "the spectrum: the judgement's read");
	cr_assert_eq(p.n_rd, 1);
	cr_expect_eq(p.rd[0].ptr, IN);
	cr_expect_eq(p.rd[0].numel, 2 * 64 * 33, "33 complex values per transform, as parts");
	cr_expect_eq(p.rd[0].dtype, NP_DT_F32);
	cr_expect_eq(p.rd[0].pairs, 1);
}

/* torch.fft.rfft: R2C, the output the complex side, its real view */
Test(fft, an_rfft_checks_its_spectrum_as_its_real_view)
{
	const int64_t n[] = { 8, 10 };
	struct np_fft_desc d = basic(2, n, 3, R64F, C64F);
	struct np_gemm_plan p;
	cr_assert_eq(np_fft_plan(&d, IN, OUT, &p), 0);
	cr_expect_eq(p.out.numel, 2 * 3 * 8 * 6, "8 x (10/2 + 1) complex values, three times");
	cr_expect_eq(p.out.dtype, NP_DT_F64);
	cr_expect_eq(p.out.pairs, 1);
	cr_assert_eq(p.n_rd, 1);
	cr_expect_eq(p.rd[0].numel, 3 * 8 * 10, "the real input whole");
	cr_expect_eq(p.rd[0].pairs, 0);
}

Test(fft, a_complex_transform_keeps_every_value_and_half_types_are_read)
{
	const int64_t n[] = { 4, 4, 4 };
	struct np_fft_desc d = basic(3, n, 2, C16F, C16F);
	struct np_gemm_plan p;
	cr_assert_eq(np_fft_plan(&d, IN, OUT, &p), 0);
	cr_expect_eq(p.out.numel, 2 * 2 * 64);
	cr_expect_eq(p.out.dtype, NP_DT_F16);
	cr_expect_eq(p.rd[0].numel, 2 * 2 * 64);
}

Test(fft, in_place_the_output_is_its_own_read)
{
	const int64_t n[] = { 16 };
	struct np_fft_desc d = basic(1, n, 1, C32F, C32F);
	struct np_gemm_plan p;
	cr_assert_eq(np_fft_plan(&d, OUT, OUT, &p), 0);
	cr_assert_eq(p.out.n_in, 1);
	cr_expect_eq(p.out.in[0], OUT, "old values in place are the input (dirty.h)");
}

Test(fft, the_advanced_layout_is_read_only_when_dense)
{
	const int64_t n[] = { 6, 8 };
	struct np_fft_desc d = basic(2, n, 4, R32F, C32F);
	struct np_gemm_plan p;
	/* the output (6 x 5 complex) described explicitly, densely: as torch
	 * passes embeds when its input is strided */
	d.out.embedded = 1;
	d.out.embed[0] = 6, d.out.embed[1] = 5;
	d.out.stride = 1, d.out.dist = 30;
	cr_assert_eq(np_fft_plan(&d, IN, OUT, &p), 0);
	cr_expect_eq(p.out.numel, 2 * 4 * 30);
	/* the outermost embed is never used by cuFFT */
	d.out.embed[0] = 99;
	cr_expect_eq(np_fft_plan(&d, IN, OUT, &p), 0);
	/* gaps between transforms, inside a row, or between elements: not checked */
	d.out.dist = 32;
	cr_expect_eq(np_fft_plan(&d, IN, OUT, &p), -1, "dist past the transform");
	d.out.dist = 30, d.out.embed[1] = 6;
	cr_expect_eq(np_fft_plan(&d, IN, OUT, &p), -1, "a padded row");
	d.out.embed[1] = 5, d.out.stride = 2;
	cr_expect_eq(np_fft_plan(&d, IN, OUT, &p), -1, "every second element");
	/* one transform: its dist is never used */
	d.out.stride = 1, d.out.dist = 0, d.batch = 1;
	cr_expect_eq(np_fft_plan(&d, IN, OUT, &p), 0);
	/* a strided input leaves the output checked, but offers no read */
	d.in.embedded = 1, d.in.stride = 3, d.in.embed[1] = 8;
	cr_assert_eq(np_fft_plan(&d, IN, OUT, &p), 0);
	cr_expect_eq(p.n_rd, 0);
	cr_expect_eq(p.out.in[0], IN, "still the judgement's read");
}

Test(fft, plans_no_check_can_read_are_refused)
{
	const int64_t n[] = { 16 }, zero[] = { 0 };
	struct np_gemm_plan p;
	struct np_fft_desc d = basic(1, n, 1, R32F, R32F);
	cr_expect_eq(np_fft_plan(&d, IN, OUT, &p), -1, "real to real");
	d = basic(1, n, 1, R32I, C32F);
	cr_expect_eq(np_fft_plan(&d, IN, OUT, &p), -1, "an integer side");
	d = basic(1, n, 1, C32F, R32F);
	cr_expect_eq(np_fft_plan(&d, IN, 0, &p), -1, "no output");
	d = basic(1, zero, 1, C32F, C32F);
	cr_expect_eq(np_fft_plan(&d, IN, OUT, &p), -1, "an empty transform");
	d = basic(1, n, 0, C32F, C32F);
	cr_expect_eq(np_fft_plan(&d, IN, OUT, &p), -1, "no batch");
	d = basic(1, n, 1, C32F, C32F);
	d.rank = 4;
	cr_expect_eq(np_fft_plan(&d, IN, OUT, &p), -1, "a rank cuFFT has not");
	const int64_t huge[] = { 1ll << 30, 1ll << 30 };
	d = basic(2, huge, 1ll << 20, C32F, C32F);
	cr_expect_eq(np_fft_plan(&d, IN, OUT, &p), -1, "more elements than a device holds");
}

Test(fft, the_legacy_types_name_their_sides)
{
	int it = -1, ot = -1;
	cr_assert_eq(np_fft_type_sides(0x2c, &it, &ot), 0);   /* CUFFT_C2R */
	cr_expect(it == C32F && ot == R32F);
	cr_assert_eq(np_fft_type_sides(0x6a, &it, &ot), 0);   /* CUFFT_D2Z */
	cr_expect(it == R64F && ot == C64F);
	cr_assert_eq(np_fft_type_sides(0x69, &it, &ot), 0);   /* CUFFT_Z2Z */
	cr_expect(it == C64F && ot == C64F);
	cr_expect_eq(np_fft_type_sides(0x2b, &it, &ot), -1);
}

Test(fft, plans_are_kept_by_handle_until_destroyed)
{
	const int64_t n[] = { 64 };
	struct np_fft_desc d = basic(1, n, 64, C32F, R32F), got;
	cr_expect_eq(np_fft_plans_put(1, &d), 0);
	cr_assert_eq(np_fft_plans_get(1, &got), 0);
	cr_expect_eq(got.batch, 64);
	cr_expect_eq(got.in.cuda_dtype, C32F);
	cr_expect_eq(np_fft_plans_get(2, &got), -1, "never made");
	np_fft_plans_drop(1);
	cr_expect_eq(np_fft_plans_get(1, &got), -1, "destroyed");
	/* cuFFT hands the handle out again: the new plan, nothing forgotten */
	d.batch = 8;
	np_fft_plans_put(1, &d);
	d.batch = 9;
	np_fft_plans_put(1, &d);
	cr_assert_eq(np_fft_plans_get(1, &got), 0);
	cr_expect_eq(got.batch, 9, "a handle made again: its latest plan");
	cr_expect_eq(np_fft_plans_forgotten(), 0);
}

Test(fft, the_table_is_bounded_and_counts_what_it_forgets)
{
	const int64_t n[] = { 64 };
	struct np_fft_desc d = basic(1, n, 1, C32F, R32F), got;
	int forgot = 0;
	for (int h = 1; h <= 2 * NP_FFT_PLANS; h++) {
		d.batch = h;
		forgot += np_fft_plans_put(h, &d);
	}
	cr_expect_eq(forgot, NP_FFT_PLANS);
	cr_expect_eq(np_fft_plans_forgotten(), NP_FFT_PLANS);
	cr_expect_eq(np_fft_plans_get(1, &got), -1, "displaced by a newer plan");
	cr_assert_eq(np_fft_plans_get(2 * NP_FFT_PLANS, &got), 0);
	cr_expect_eq(got.batch, 2 * NP_FFT_PLANS);
	/* a negative handle (never cuFFT's) lands in a slot too, not outside */
	np_fft_plans_put(-3, &d);
	cr_expect_eq(np_fft_plans_get(-3, &got), 0);
}

/* a transform whose plan is unknown: its addresses for the generic tier */
Test(fft, an_unknown_plan_notes_the_addresses_only)
{
	struct np_gemm_plan p;
	np_fft_plan_noted(IN, OUT, &p);
	cr_expect_eq(p.note_only, 1);
	cr_expect_eq(p.out.ptr, OUT);
	cr_expect_eq(p.out.numel, 0, "no extent: nothing to check");
	cr_assert_eq(p.out.n_in, 1);
	cr_expect_eq(p.out.in[0], IN);
	cr_expect_eq(p.n_rd, 0);
	const int64_t n[] = { 16 };
	struct np_fft_desc d = basic(1, n, 1, C32F, C32F);
	cr_assert_eq(np_fft_plan(&d, IN, OUT, &p), 0);
	cr_expect_eq(p.note_only, 0, "a known plan is checked");
}

/* for deferred checks: what a transform writes besides its output */
#define AREA 0x7f0000500000ull

Test(fft, a_work_area_torch_set_is_written_and_cufft_own_is_not)
{
	const int64_t n[] = { 64 };
	struct np_fft_desc d = basic(1, n, 4, C32F, C32F);
	uint64_t lo[2], hi[2];
	d.work_size = 4096;
	d.work_size_known = 1;
	cr_expect_eq(np_fft_writes_besides(&d, IN, OUT, lo, hi), 0,
		     "no area set: cuFFT's own memory, no tensor's");
	d.work_area_set = 1;
	d.work_area = AREA;
	cr_assert_eq(np_fft_writes_besides(&d, IN, OUT, lo, hi), 1);
	cr_expect_eq(lo[0], AREA);
	cr_expect_eq(hi[0], AREA + 4096);
	d.work_size = 0;
	cr_expect_eq(np_fft_writes_besides(&d, IN, OUT, lo, hi), 0, "an area of no bytes");
	d.work_size_known = 0;
	cr_expect_eq(np_fft_writes_besides(&d, IN, OUT, lo, hi), -1,
		     "an area of a size no cufftMake* call said: not known");
	d.work_area = 0;
	cr_expect_eq(np_fft_writes_besides(&d, IN, OUT, lo, hi), 0, "an area set to none");
}

Test(fft, an_irfft_out_of_place_may_overwrite_its_spectrum)
{
	const int64_t n[] = { 64 };
	struct np_fft_desc d = basic(1, n, 8, C32F, R32F);
	uint64_t lo[2], hi[2];
	cr_assert_eq(np_fft_writes_besides(&d, IN, OUT, lo, hi), 1);
	cr_expect_eq(lo[0], IN);
	cr_expect_eq(hi[0], IN + 8 * 33 * 8, "33 complex64 values per transform, 8 transforms");
	cr_expect_eq(np_fft_writes_besides(&d, IN, IN, lo, hi), 0, "in place: the output itself");
	d.work_area_set = 1;
	d.work_area = AREA;
	d.work_size = 256;
	d.work_size_known = 1;
	cr_assert_eq(np_fft_writes_besides(&d, IN, OUT, lo, hi), 2, "the area and the spectrum");
	cr_expect_eq(lo[0], AREA);
	cr_expect_eq(lo[1], IN);
	struct np_fft_desc z = basic(1, n, 8, C64F, R64F);
	cr_assert_eq(np_fft_writes_besides(&z, IN, OUT, lo, hi), 1);
	cr_expect_eq(hi[0], IN + 8 * 33 * 16, "complex128: 16 bytes a value");
	struct np_fft_desc r2c = basic(1, n, 8, R32F, C32F);
	cr_expect_eq(np_fft_writes_besides(&r2c, IN, OUT, lo, hi), 0, "a forward rfft keeps its input");
	d.in.embedded = 1;   /* an advanced layout with gaps: its extent is not known */
	d.in.stride = 2;
	cr_expect_eq(np_fft_writes_besides(&d, IN, OUT, lo, hi), -1);
}

Test(fft, a_work_area_is_kept_with_its_plan)
{
	const int64_t n[] = { 16 };
	struct np_fft_desc d = basic(1, n, 1, C32F, C32F), got;
	cr_assert_eq(np_fft_plans_put(7, &d), 0);
	np_fft_plans_set_work_area(7, AREA);
	np_fft_plans_set_work_area(8, AREA + 64);   /* no such plan: nothing */
	cr_assert_eq(np_fft_plans_get(7, &got), 0);
	cr_expect(got.work_area_set);
	cr_expect_eq(got.work_area, AREA);
	cr_expect_eq(np_fft_plans_get(8, &got), -1);
	cr_assert_eq(np_fft_plans_put(7, &d), 0, "made again");
	cr_assert_eq(np_fft_plans_get(7, &got), 0);
	cr_expect(!got.work_area_set, "a plan made again has no area until one is set");
}
