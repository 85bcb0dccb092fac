/* fft_calls.c - cuFFT's calls seen at the call, through the same import
 * slots and call bookkeeping as cuBLAS's (blas.h): plans remembered as
 * they are made, transforms planned from them (fft.h).
 *
 * cuFFT's types are declared here as cuFFT 12's cufft.h and cufftXt.h
 * declare them: the toolkit need not carry cuFFT, and nothing links it.
 */
#include <stddef.h>
#include "../agent/alog.h"
#include "blas.h"
#include "defer.h"
#include "drain.h"
#include "fft.h"

typedef int fft_result;         /* cufftResult, 0: success */
typedef int fft_handle;         /* cufftHandle */

static struct {
	fft_result (*plan1d)(fft_handle *, int, int, int);
	fft_result (*plan2d)(fft_handle *, int, int, int);
	fft_result (*plan3d)(fft_handle *, int, int, int, int);
	fft_result (*plan_many)(fft_handle *, int, int *, int *, int, int, int *, int, int, int,
				int);
	fft_result (*make1d)(fft_handle, int, int, int, size_t *);
	fft_result (*make2d)(fft_handle, int, int, int, size_t *);
	fft_result (*make3d)(fft_handle, int, int, int, int, size_t *);
	fft_result (*make_many)(fft_handle, int, int *, int *, int, int, int *, int, int, int, int,
				size_t *);
	fft_result (*make_many64)(fft_handle, int, long long *, long long *, long long, long long,
				  long long *, long long, long long, int, long long, size_t *);
	fft_result (*xt_make_many)(fft_handle, int, long long *, long long *, long long,
				   long long, int, long long *, long long, long long, int,
				   long long, size_t *, int);
	fft_result (*set_work_area)(fft_handle, void *);
	fft_result (*destroy)(fft_handle);
	fft_result (*xt_exec)(fft_handle, void *, void *, int);
	fft_result (*c2c)(fft_handle, void *, void *, int);
	fft_result (*z2z)(fft_handle, void *, void *, int);
	fft_result (*r2c)(fft_handle, void *, void *);
	fft_result (*c2r)(fft_handle, void *, void *);
	fft_result (*d2z)(fft_handle, void *, void *);
	fft_result (*z2d)(fft_handle, void *, void *);
} real;

/* ---- plans, remembered whether or not checks are on: a plan made
 * while they were off is executed later ---- */

/* One side of a plan from the arguments of a *PlanMany call: the
 * advanced layout when embed is given (NULL: the basic one). */
static struct np_fft_side side_of(int rank, const long long *embed, long long stride,
				  long long dist, int cuda_dtype)
{
	struct np_fft_side s = { .cuda_dtype = cuda_dtype, .embedded = embed != NULL,
				 .stride = stride, .dist = dist };
	for (int k = 0; embed && k < rank; k++)
		s.embed[k] = embed[k];
	return s;
}

/* Remembers the plan made by a successful call (r 0); returns r. */
static fft_result made(fft_result r, fft_handle h, int rank, const long long *n,
		       const long long *inembed, long long istride, long long idist, int itype,
		       const long long *onembed, long long ostride, long long odist, int otype,
		       long long batch, const size_t *ws)
{
	if (r != 0 || rank < 1 || rank > NP_FFT_MAX_RANK || !n)
		return r;
	/* ws: the work area's size a cufftMake* call returns (a cufftPlan*
	 * call says none) */
	struct np_fft_desc d = { .rank = rank, .batch = batch,
				 .in = side_of(rank, inembed, istride, idist, itype),
				 .out = side_of(rank, onembed, ostride, odist, otype),
				 .work_size = ws ? *ws : 0, .work_size_known = ws != NULL };
	for (int k = 0; k < rank; k++)
		d.n[k] = n[k];
	if (np_fft_plans_put(h, &d))
		__atomic_add_fetch(&np_gpu_cnt.table_full, 1, __ATOMIC_RELAXED);
	return r;
}

/* made() for a legacy cufftType; int arrays as cufftPlanMany takes them */
static fft_result made_typed(fft_result r, fft_handle h, int rank, const int *n,
			     const int *inembed, int istride, int idist, const int *onembed,
			     int ostride, int odist, int type, int batch, const size_t *ws)
{
	int it, ot;
	long long n64[NP_FFT_MAX_RANK], ie[NP_FFT_MAX_RANK], oe[NP_FFT_MAX_RANK];
	if (r != 0 || rank < 1 || rank > NP_FFT_MAX_RANK || !n || np_fft_type_sides(type, &it, &ot))
		return r;
	for (int k = 0; k < rank; k++) {
		n64[k] = n[k];
		ie[k] = inembed ? inembed[k] : 0;
		oe[k] = onembed ? onembed[k] : 0;
	}
	return made(r, h, rank, n64, inembed ? ie : NULL, istride, idist, it,
		    onembed ? oe : NULL, ostride, odist, ot, batch, ws);
}

static fft_result w_plan1d(fft_handle *h, int nx, int type, int batch)
{
	fft_result r = real.plan1d(h, nx, type, batch);
	return h ? made_typed(r, *h, 1, &nx, NULL, 1, 1, NULL, 1, 1, type, batch, NULL) : r;
}

static fft_result w_plan2d(fft_handle *h, int nx, int ny, int type)
{
	int n[] = { nx, ny };
	fft_result r = real.plan2d(h, nx, ny, type);
	return h ? made_typed(r, *h, 2, n, NULL, 1, 1, NULL, 1, 1, type, 1, NULL) : r;
}

static fft_result w_plan3d(fft_handle *h, int nx, int ny, int nz, int type)
{
	int n[] = { nx, ny, nz };
	fft_result r = real.plan3d(h, nx, ny, nz, type);
	return h ? made_typed(r, *h, 3, n, NULL, 1, 1, NULL, 1, 1, type, 1, NULL) : r;
}

static fft_result w_plan_many(fft_handle *h, int rank, int *n, int *inembed, int istride,
			      int idist, int *onembed, int ostride, int odist, int type,
			      int batch)
{
	fft_result r = real.plan_many(h, rank, n, inembed, istride, idist, onembed, ostride,
				      odist, type, batch);
	return h ? made_typed(r, *h, rank, n, inembed, istride, idist, onembed, ostride, odist,
			      type, batch, NULL) : r;
}

static fft_result w_make1d(fft_handle h, int nx, int type, int batch, size_t *ws)
{
	return made_typed(real.make1d(h, nx, type, batch, ws), h, 1, &nx, NULL, 1, 1, NULL, 1, 1,
			  type, batch, ws);
}

static fft_result w_make2d(fft_handle h, int nx, int ny, int type, size_t *ws)
{
	int n[] = { nx, ny };
	return made_typed(real.make2d(h, nx, ny, type, ws), h, 2, n, NULL, 1, 1, NULL, 1, 1, type,
			  1, ws);
}

static fft_result w_make3d(fft_handle h, int nx, int ny, int nz, int type, size_t *ws)
{
	int n[] = { nx, ny, nz };
	return made_typed(real.make3d(h, nx, ny, nz, type, ws), h, 3, n, NULL, 1, 1, NULL, 1, 1,
			  type, 1, ws);
}

static fft_result w_make_many(fft_handle h, int rank, int *n, int *inembed, int istride,
			      int idist, int *onembed, int ostride, int odist, int type,
			      int batch, size_t *ws)
{
	fft_result r = real.make_many(h, rank, n, inembed, istride, idist, onembed, ostride,
				      odist, type, batch, ws);
	return made_typed(r, h, rank, n, inembed, istride, idist, onembed, ostride, odist, type,
			  batch, ws);
}

static fft_result w_make_many64(fft_handle h, int rank, long long *n, long long *inembed,
				long long istride, long long idist, long long *onembed,
				long long ostride, long long odist, int type, long long batch,
				size_t *ws)
{
	int it, ot;
	fft_result r = real.make_many64(h, rank, n, inembed, istride, idist, onembed, ostride,
					odist, type, batch, ws);
	if (np_fft_type_sides(type, &it, &ot))
		return r;
	return made(r, h, rank, n, inembed, istride, idist, it, onembed, ostride, odist, ot,
		    batch, ws);
}

/* torch's: every plan of its cuFFT plan cache */
static fft_result w_xt_make_many(fft_handle h, int rank, long long *n, long long *inembed,
				 long long istride, long long idist, int itype,
				 long long *onembed, long long ostride, long long odist, int otype,
				 long long batch, size_t *ws, int exec_type)
{
	fft_result r = real.xt_make_many(h, rank, n, inembed, istride, idist, itype, onembed,
					 ostride, odist, otype, batch, ws, exec_type);
	return made(r, h, rank, n, inembed, istride, idist, itype, onembed, ostride, odist, otype,
		    batch, ws);
}

static fft_result w_set_work_area(fft_handle h, void *area)
{
	fft_result r = real.set_work_area(h, area);
	if (r == 0)
		np_fft_plans_set_work_area(h, (uintptr_t)area);
	return r;
}

static fft_result w_destroy(fft_handle h)
{
	np_fft_plans_drop(h);   /* first: cuFFT may hand the handle out again at once */
	return real.destroy(h);
}

/* ---- transforms ---- */

/* says once (NANPROF_AGENT_DEBUG=1) that transforms are checked at the
 * call, and once that one was not: the GPU check reads it */
static void tell(int planned, int known, const struct np_gemm_plan *p)
{
	static int told[3];
	int kind = planned ? 0 : known ? 1 : 2;
	if (__atomic_load_n(&told[kind], __ATOMIC_RELAXED) ||
	    __atomic_exchange_n(&told[kind], 1, __ATOMIC_RELAXED))
		return;
	if (kind == 0)
		np_alog("cuFFT: a transform's output (%llu elements) checked at the call",
			(unsigned long long)p->out.numel);
	else if (kind == 1)
		np_alog("cuFFT: a transform's output and input noted for the generic tier: "
			"its output is not one dense range of a checkable type");
	else
		np_alog("cuFFT: a transform's output and input noted for the generic tier: "
			"its plan was made before the agent came");
}

/* the start of transform h from in to out: planned when its plan says
 * where it writes, else its addresses noted (fft.h) */
static void begin(fft_handle h, const void *in, const void *out)
{
	struct np_fft_desc d;
	struct np_gemm_plan p;
	int idle = np_blas_idle();
	int known = idle && np_fft_plans_get(h, &d) == 0;
	int planned = known && np_fft_plan(&d, (uintptr_t)in, (uintptr_t)out, &p) == 0;
	if (idle) {
		tell(planned, known, &p);
		if (!planned && out)
			np_fft_plan_noted((uintptr_t)in, (uintptr_t)out, &p);
	}
	if (np_blas_begin_plan(idle && out ? &p : NULL) && planned && np_defer_window()) {
		/* deferred checks: what it writes besides its output */
		uint64_t lo[2], hi[2];
		int n = np_fft_writes_besides(&d, (uintptr_t)in, (uintptr_t)out, lo, hi);
		if (n >= 0)
			np_blas_writes_besides(lo, hi, n);
	}
}

/* torch's: every transform */
static fft_result w_xt_exec(fft_handle h, void *in, void *out, int direction)
{
	begin(h, in, out);
	return np_blas_end(real.xt_exec(h, in, out, direction));
}

static fft_result w_c2c(fft_handle h, void *in, void *out, int direction)
{
	begin(h, in, out);
	return np_blas_end(real.c2c(h, in, out, direction));
}

static fft_result w_z2z(fft_handle h, void *in, void *out, int direction)
{
	begin(h, in, out);
	return np_blas_end(real.z2z(h, in, out, direction));
}

static fft_result w_r2c(fft_handle h, void *in, void *out)
{
	begin(h, in, out);
	return np_blas_end(real.r2c(h, in, out));
}

static fft_result w_c2r(fft_handle h, void *in, void *out)
{
	begin(h, in, out);
	return np_blas_end(real.c2r(h, in, out));
}

static fft_result w_d2z(fft_handle h, void *in, void *out)
{
	begin(h, in, out);
	return np_blas_end(real.d2z(h, in, out));
}

static fft_result w_z2d(fft_handle h, void *in, void *out)
{
	begin(h, in, out);
	return np_blas_end(real.z2d(h, in, out));
}

#define FFT(name, w, field) { "libcufft.so", name, (void *)w, (void **)&real.field }

const struct np_libcall np_fft_wrapped[NP_FFT_WRAPPED] = {
	FFT("cufftXtExec", w_xt_exec, xt_exec),
	FFT("cufftExecC2C", w_c2c, c2c),
	FFT("cufftExecZ2Z", w_z2z, z2z),
	FFT("cufftExecR2C", w_r2c, r2c),
	FFT("cufftExecC2R", w_c2r, c2r),
	FFT("cufftExecD2Z", w_d2z, d2z),
	FFT("cufftExecZ2D", w_z2d, z2d),
};

/* the plans' bookkeeping, wrapped from cuFFT's load on (blas.h) */
const struct np_libcall np_fft_trackers[NP_FFT_TRACKERS] = {
	FFT("cufftPlan1d", w_plan1d, plan1d),
	FFT("cufftPlan2d", w_plan2d, plan2d),
	FFT("cufftPlan3d", w_plan3d, plan3d),
	FFT("cufftPlanMany", w_plan_many, plan_many),
	FFT("cufftMakePlan1d", w_make1d, make1d),
	FFT("cufftMakePlan2d", w_make2d, make2d),
	FFT("cufftMakePlan3d", w_make3d, make3d),
	FFT("cufftMakePlanMany", w_make_many, make_many),
	FFT("cufftMakePlanMany64", w_make_many64, make_many64),
	FFT("cufftXtMakePlanMany", w_xt_make_many, xt_make_many),
	FFT("cufftSetWorkArea", w_set_work_area, set_work_area),
	FFT("cufftDestroy", w_destroy, destroy),
};
