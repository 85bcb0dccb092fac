/* fft.c - what one cuFFT transform writes and reads (fft.h). */
#include <pthread.h>
#include <string.h>
#include "fft.h"

/* cudaDataType values (library_types.h) of cuFFT's legacy types */
enum { R32F = 0, R64F = 1, C32F = 4, C64F = 5 };

int np_fft_type_sides(int cufft_type, int *in_dtype, int *out_dtype)
{
	switch (cufft_type) {
	case 0x2a: *in_dtype = R32F, *out_dtype = C32F; return 0;   /* R2C */
	case 0x2c: *in_dtype = C32F, *out_dtype = R32F; return 0;   /* C2R */
	case 0x29: *in_dtype = C32F, *out_dtype = C32F; return 0;   /* C2C */
	case 0x6a: *in_dtype = R64F, *out_dtype = C64F; return 0;   /* D2Z */
	case 0x6c: *in_dtype = C64F, *out_dtype = R64F; return 0;   /* Z2D */
	case 0x69: *in_dtype = C64F, *out_dtype = C64F; return 0;   /* Z2Z */
	}
	return -1;
}

/* more elements than any device holds: a misread plan */
#define TOO_MANY (1ull << 48)

uint64_t np_fft_side_numel(const struct np_fft_desc *d, const struct np_fft_side *s,
			   int halved)
{
	if (d->rank < 1 || d->rank > NP_FFT_MAX_RANK || d->batch < 1)
		return 0;
	int64_t dims[NP_FFT_MAX_RANK];
	uint64_t per = 1;
	for (int k = 0; k < d->rank; k++) {
		dims[k] = d->n[k];
		/* a real transform's complex side: Hermitian symmetry keeps
		 * n/2 + 1 values of the innermost dimension */
		if (halved && k == d->rank - 1)
			dims[k] = d->n[k] / 2 + 1;
		if (dims[k] < 1 || (per *= (uint64_t)dims[k]) >= TOO_MANY)
			return 0;
	}
	if ((uint64_t)d->batch >= TOO_MANY / per)
		return 0;
	if (s->embedded) {
		/* the advanced layout: element (b, x) at b * dist + stride *
		 * (x's offset in embed); the outermost embed is never used */
		if (s->stride != 1)
			return 0;
		for (int k = 1; k < d->rank; k++)
			if (s->embed[k] != dims[k])
				return 0;
		if (d->batch > 1 && s->dist != (int64_t)per)
			return 0;
	}
	return per * (uint64_t)d->batch;
}

/* a side's dtype for a check: real, or complex (*pairs set); -1 neither */
static int side_dtype(int cuda_dtype, int *pairs)
{
	int dt = np_gemm_dtype(cuda_dtype);
	*pairs = 0;
	if (dt < 0 && (dt = np_gemm_complex_dtype(cuda_dtype)) >= 0)
		*pairs = 1;
	return dt;
}

int np_fft_plan(const struct np_fft_desc *d, uint64_t in, uint64_t out,
		struct np_gemm_plan *p)
{
	memset(p, 0, sizeof(*p));
	int in_pairs, out_pairs;
	int in_dt = side_dtype(d->in.cuda_dtype, &in_pairs);
	int out_dt = side_dtype(d->out.cuda_dtype, &out_pairs);
	/* real to real is no transform cuFFT makes */
	if (!out || out_dt < 0 || in_dt < 0 || (!in_pairs && !out_pairs))
		return -1;
	uint64_t n = np_fft_side_numel(d, &d->out, !in_pairs);
	if (!n)
		return -1;
	p->out = (struct np_kbuf){ .ptr = out, .numel = n << out_pairs,
				   .dtype = (enum np_dtype)out_dt, .pairs = (uint8_t)out_pairs,
				   .how = NP_KH_GEMM };
	/* in place (in == out), the output's old values are the input:
	 * listed, as a kernel that reads its output must list it (dirty.h) */
	np_gemm_add_input(&p->out, in);
	uint64_t n_in = in ? np_fft_side_numel(d, &d->in, !out_pairs) : 0;
	if (n_in)
		p->rd[p->n_rd++] = (struct np_kread){ .ptr = in, .numel = n_in << in_pairs,
						      .dtype = (enum np_dtype)in_dt,
						      .pairs = (uint8_t)in_pairs };
	return 0;
}

void np_fft_plan_noted(uint64_t in, uint64_t out, struct np_gemm_plan *p)
{
	memset(p, 0, sizeof(*p));
	p->note_only = 1;
	p->out = (struct np_kbuf){ .ptr = out, .how = NP_KH_GEMM };
	np_gemm_add_input(&p->out, in);
}

int np_fft_writes_besides(const struct np_fft_desc *d, uint64_t in, uint64_t out,
			  uint64_t lo[2], uint64_t hi[2])
{
	int n = 0, in_pairs, out_pairs;
	if (d->work_area_set && d->work_area && (!d->work_size_known || d->work_size)) {
		if (!d->work_size_known)
			return -1;
		lo[n] = d->work_area;
		hi[n++] = d->work_area + d->work_size;
	}
	int in_dt = side_dtype(d->in.cuda_dtype, &in_pairs);
	int out_dt = side_dtype(d->out.cuda_dtype, &out_pairs);
	if (in != out && in_pairs && !out_pairs) {
		/* complex to real: the input is the halved side */
		uint64_t numel = in_dt < 0 ? 0 : np_fft_side_numel(d, &d->in, 1);
		if (!numel || out_dt < 0)
			return -1;
		lo[n] = in;
		hi[n++] = in + 2 * numel * np_dtype_size((enum np_dtype)in_dt);
	}
	return n;
}

/* ---- the plans made so far ---- */

static struct {
	pthread_mutex_t lock;
	struct {
		int handle;
		uint8_t used;
		struct np_fft_desc d;
	} slot[NP_FFT_PLANS];
	uint64_t forgotten;
} plans = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* cuFFT hands out handles counting up from 1: direct-mapped by value */
static unsigned slot_of(int handle)
{
	return (unsigned)handle % NP_FFT_PLANS;
}

int np_fft_plans_put(int handle, const struct np_fft_desc *d)
{
	unsigned k = slot_of(handle);
	pthread_mutex_lock(&plans.lock);
	int forgot = plans.slot[k].used && plans.slot[k].handle != handle;
	plans.forgotten += (uint64_t)forgot;
	plans.slot[k].handle = handle;
	plans.slot[k].used = 1;
	plans.slot[k].d = *d;
	pthread_mutex_unlock(&plans.lock);
	return forgot;
}

int np_fft_plans_get(int handle, struct np_fft_desc *d)
{
	unsigned k = slot_of(handle);
	int rc = -1;
	pthread_mutex_lock(&plans.lock);
	if (plans.slot[k].used && plans.slot[k].handle == handle) {
		*d = plans.slot[k].d;
		rc = 0;
	}
	pthread_mutex_unlock(&plans.lock);
	return rc;
}

void np_fft_plans_set_work_area(int handle, uint64_t area)
{
	unsigned k = slot_of(handle);
	pthread_mutex_lock(&plans.lock);
	if (plans.slot[k].used && plans.slot[k].handle == handle) {
		plans.slot[k].d.work_area = area;
		plans.slot[k].d.work_area_set = 1;
	}
	pthread_mutex_unlock(&plans.lock);
}

void np_fft_plans_drop(int handle)
{
	unsigned k = slot_of(handle);
	pthread_mutex_lock(&plans.lock);
	if (plans.slot[k].used && plans.slot[k].handle == handle)
		plans.slot[k].used = 0;
	pthread_mutex_unlock(&plans.lock);
}

uint64_t np_fft_plans_forgotten(void)
{
	pthread_mutex_lock(&plans.lock);
	uint64_t n = plans.forgotten;
	pthread_mutex_unlock(&plans.lock);
	return n;
}

void np_fft_plans_reset(void)
{
	pthread_mutex_lock(&plans.lock);
	memset(plans.slot, 0, sizeof(plans.slot));
	plans.forgotten = 0;
	pthread_mutex_unlock(&plans.lock);
}
