/* fft.h - what one cuFFT transform writes and reads, from the plan it
 * was made with and the addresses of its call (cupti/fft_calls.c
 * intercepts both).
 *
 * cuFFT's kernels (vector_fft_c2r, regular_fft, ...) take opaque
 * parameters: their launches do not name the buffers they read and
 * write, so a transform's output looked like nothing any kernel wrote,
 * and the first decoded kernel reading it (irfft's normalisation, a
 * multiply) like the birth of what the transform only carried: a
 * spectral layer's overflowing complex product was never named (the
 * H200's run-spectral).  The call says where: cufftXtExec(plan, in,
 * out, direction) and the cufftExec* family.  What it says about
 * extents is in the plan: rank, sizes, batch, the input's and output's
 * types and their layouts (cufftXtMakePlanMany, cufftMakePlanMany[64],
 * cufftPlanMany, cufftPlan1d/2d/3d, cufftMakePlan1d/2d/3d), so plans
 * are remembered by handle as they are made (np_fft_plans_*) and the
 * agent checks the output after the call's last kernel, as it checks a
 * cuBLAS call's D, with the input as its judgement's read.
 *
 * Only cuFFT's documented layouts are read: the basic one (no embed
 * arrays: every transform dense, one after another) and the advanced
 * one when it is dense (stride 1, the embed of every dimension but the
 * outermost equal to the transform's, dist the transform's size).  An
 * output with gaps is not checked (the gaps hold another tensor's
 * values), nor a transform of a plan made before the agent came (torch
 * caches its plans): for those the call's addresses, which its kernels'
 * parameters hide, are handed to the generic tier instead, the output
 * as written and the input as read (np_fft_plan_noted): the output's
 * first decoded reader checks it (one that writes it in place, before
 * it runs).
 * A complex side is checked as its real view, as a complex GEMM's D.
 * A C2R transform may overwrite its input (cuFFT says so); the read
 * offered for the generic tier is checked after the call, and a
 * non-finite input stays non-finite through a transform's arithmetic.
 * Pure logic: unit-tested (tests/unit/test_fft.c).
 */
#ifndef NP_FFT_H
#define NP_FFT_H

#include <stdint.h>
#include "gemm.h"

#define NP_FFT_MAX_RANK 3

/* One side (input or output) of a plan's transforms. */
struct np_fft_side {
	int cuda_dtype;                 /* cudaDataType: CUDA_R_32F, CUDA_C_32F, ... */
	uint8_t embedded;               /* the advanced layout: embed, stride, dist */
	int64_t embed[NP_FFT_MAX_RANK];
	int64_t stride, dist;
};

/* A plan as it was made. */
struct np_fft_desc {
	int rank;                       /* 1..NP_FFT_MAX_RANK */
	int64_t n[NP_FFT_MAX_RANK];     /* n[rank - 1] the innermost */
	int64_t batch;
	struct np_fft_side in, out;
	/* its work area: the size a cufftMake* call said (known: one
	 * said it), the address cufftSetWorkArea gave (set: one did; torch
	 * gives one from its caching allocator before each transform, else
	 * the area is cuFFT's own memory) */
	uint64_t work_size, work_area;
	uint8_t work_size_known, work_area_set;
};

/* The sides of a legacy cufftType (CUFFT_R2C 0x2a, C2R 0x2c, C2C 0x29,
 * D2Z 0x6a, Z2D 0x6c, Z2Z 0x69) as cudaDataTypes; -1 for another type. */
int np_fft_type_sides(int cufft_type, int *in_dtype, int *out_dtype);

/* Elements of one side when its transforms are one dense range (complex
 * values count once), else 0.  real_to_complex: of a plan whose input is
 * real and output complex, or the reverse; the complex side then holds
 * n/2 + 1 values in the innermost dimension. */
uint64_t np_fft_side_numel(const struct np_fft_desc *d, const struct np_fft_side *s,
			   int halved);

/* The plan of one execution of d from in to out (in == out: in place):
 * 0 when the output can be checked, -1 when not (a layout with gaps, a
 * type no check reads). */
int np_fft_plan(const struct np_fft_desc *d, uint64_t in, uint64_t out,
		struct np_gemm_plan *p);

/* The plan of a transform whose own plan is not known (made before the
 * agent came) or not dense: note_only, out written, in read; its first
 * decoded reader checks it (generic.h). */
void np_fft_plan_noted(uint64_t in, uint64_t out, struct np_gemm_plan *p);

/* What one execution of d from in to out writes besides its output,
 * for deferred checks (blas.h: np_blas_writes_besides): the work area set
 * on the plan (none set: cuFFT's own memory, no tensor's), and the input
 * of an out-of-place complex-to-real transform, which cuFFT may
 * overwrite.  The count of ranges [lo[i], hi[i]) (at most 2), or -1
 * when they are not known (an area of unknown size, an input of unknown
 * extent). */
int np_fft_writes_besides(const struct np_fft_desc *d, uint64_t in, uint64_t out,
			  uint64_t lo[2], uint64_t hi[2]);

/* ---- the plans made so far, by cufftHandle ---- */

#define NP_FFT_PLANS 256   /* remembered at once; torch keeps few per shape */

/* Remembers d as plan handle's (a handle made again replaces it); when
 * its slot holds another live plan, that one is forgotten (counted):
 * returns 1 then, else 0. */
int np_fft_plans_put(int handle, const struct np_fft_desc *d);
/* handle's plan into *d: 0, or -1 when it was never seen or forgotten. */
int np_fft_plans_get(int handle, struct np_fft_desc *d);
/* cufftSetWorkArea: handle's transforms use area from now on. */
void np_fft_plans_set_work_area(int handle, uint64_t area);
/* cufftDestroy: handle's plan is gone (cuFFT reuses handles). */
void np_fft_plans_drop(int handle);
/* Plans forgotten for want of a slot. */
uint64_t np_fft_plans_forgotten(void);
/* Forgets every plan (for tests). */
void np_fft_plans_reset(void);

#endif
