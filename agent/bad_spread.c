/* bad_spread.c - where in a tensor its non-finite values lie (bad_spread.h).
 *
 * The block is walked in memory order, CHUNK elements at a time; the
 * vector check (cpu_check.c) passes over clean chunks, and only a chunk
 * holding a non-finite value is walked element by element, with the
 * element's index kept as an odometer over the dimensions in memory
 * order (innermost stride first), so no element costs a division.
 */
#include <stdlib.h>
#include <string.h>
#include "bad_spread.h"
#include "cpu_check.h"

#define CHUNK 4096

struct walk {
	int n;                         /* dimensions of size > 1, in memory order */
	int dim[NP_SPREAD_DIMS];       /* their logical dimension */
	uint64_t size[NP_SPREAD_DIMS];
	uint64_t stride[NP_SPREAD_DIMS];   /* their stride: the product of those before */
	uint64_t rowmajor[NP_SPREAD_DIMS]; /* logical dimension -> row-major stride */
	uint64_t *bits[NP_SPREAD_DIMS];    /* per memory-order dimension */
	uint64_t nbits[NP_SPREAD_DIMS];
};

/* The dimensions of size > 1 in memory order; -1 unless their strides
 * tile numel elements exactly (each the product of the sizes inside it). */
static int order_dims(const struct np_spread_in *in, struct walk *w)
{
	w->n = 0;
	for (int d = 0; d < in->ndim; d++) {
		if (in->shape[d] < 1 || in->stride[d] < 0)
			return -1;
		if (in->shape[d] == 1)
			continue;
		int k = w->n++;   /* insertion by stride */
		while (k > 0 && w->stride[k - 1] > (uint64_t)in->stride[d]) {
			w->dim[k] = w->dim[k - 1];
			w->size[k] = w->size[k - 1];
			w->stride[k] = w->stride[k - 1];
			k--;
		}
		w->dim[k] = d;
		w->size[k] = (uint64_t)in->shape[d];
		w->stride[k] = (uint64_t)in->stride[d];
	}
	uint64_t expect = 1;
	for (int k = 0; k < w->n; k++) {
		if (w->stride[k] != expect)
			return -1;
		expect *= w->size[k];
	}
	if (expect != in->numel)
		return -1;
	uint64_t rm = 1;
	for (int d = in->ndim - 1; d >= 0; d--) {
		w->rowmajor[d] = rm;
		rm *= (uint64_t)in->shape[d];
	}
	return 0;
}

static void free_bits(struct walk *w)
{
	for (int k = 0; k < w->n; k++)
		free(w->bits[k]);
}

static int alloc_bits(struct walk *w)
{
	memset(w->bits, 0, sizeof(w->bits));
	for (int k = 0; k < w->n; k++) {
		w->nbits[k] = w->size[k] < NP_SPREAD_BITS ? w->size[k] : NP_SPREAD_BITS;
		if (!(w->bits[k] = calloc((w->nbits[k] + 63) / 64, sizeof(uint64_t)))) {
			free_bits(w);
			return -1;
		}
	}
	return 0;
}

/* the odometer to the next element in memory */
static inline void advance(const struct walk *w, uint64_t *idx)
{
	for (int k = 0; k < w->n && ++idx[k] == w->size[k]; k++)
		idx[k] = 0;
}

static uint32_t clamp32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

int np_spread_as_real(struct np_spread_in *in)
{
	if (in->ndim < 0 || in->ndim >= NP_SPREAD_DIMS)
		return -1;
	for (int d = 0; d < in->ndim; d++)
		in->stride[d] *= 2;
	in->shape[in->ndim] = 2;
	in->stride[in->ndim++] = 1;
	in->numel *= 2;
	return 0;
}

int np_bad_spread_broadcast(const struct np_spread_in *in, uint64_t max_scan,
			    struct np_spread *out)
{
	if (in->ndim < 1 || in->ndim > NP_SPREAD_DIMS)
		return -1;
	struct np_spread_in r = *in;   /* the stored block's own dimensions */
	int map[NP_SPREAD_DIMS];       /* each dimension's in r, or -1: broadcast */
	r.ndim = 0;
	for (int d = 0; d < in->ndim; d++) {
		if (in->shape[d] > 1 && in->stride[d] == 0) {
			map[d] = -1;
			continue;
		}
		map[d] = r.ndim;
		r.shape[r.ndim] = in->shape[d];
		r.stride[r.ndim++] = in->stride[d];
	}
	if (r.ndim == in->ndim)
		return np_bad_spread(in, max_scan, out);
	if (!r.ndim) {   /* one value, broadcast everywhere */
		r.ndim = 1;
		r.shape[0] = r.stride[0] = 1;
	}
	struct np_spread s;
	if (np_bad_spread(&r, max_scan, &s))
		return -1;
	memset(out, 0, sizeof(*out));
	out->ndim = (uint8_t)in->ndim;
	out->partial = s.partial;
	out->no_neginf = s.no_neginf;
	for (int d = 0; d < in->ndim; d++) {
		if (map[d] >= 0) {
			out->size[d] = s.size[map[d]];
			out->bad[d] = s.bad[map[d]];
			out->first[d] = s.first[map[d]];
		} else {
			out->size[d] = out->bad[d] = in->shape[d] > UINT32_MAX ? UINT32_MAX
						    : (uint32_t)in->shape[d];
		}
	}
	return 0;
}

int np_bad_spread(const struct np_spread_in *in, uint64_t max_scan, struct np_spread *out)
{
	struct walk w;
	memset(out, 0, sizeof(*out));
	if (in->ndim < 1 || in->ndim > NP_SPREAD_DIMS || !in->base || !in->numel ||
	    (unsigned)in->dtype >= NP_DT_MAX || order_dims(in, &w) || alloc_bits(&w))
		return -1;
	const unsigned esize = np_dtype_size(in->dtype);
	const uint8_t *base = in->base;
	uint64_t first = UINT64_MAX, scanned = 0, found = 0;
	uint64_t idx[NP_SPREAD_DIMS];     /* memory-order odometer */
	uint64_t at[NP_SPREAD_DIMS] = { 0 };  /* logical index of the first */
	uint8_t over[NP_SPREAD_DIMS] = { 0 };   /* an index past its bitmap */
	for (uint64_t o0 = 0; o0 < in->numel; o0 += CHUNK) {
		uint64_t len = in->numel - o0 < CHUNK ? in->numel - o0 : CHUNK;
		struct np_check_result r;
		np_cpu_check(in->dtype, base + o0 * esize, len, &r);
		if (!r.nan && !r.posinf && (!r.neginf || in->skip_neginf))
			continue;
		if (scanned >= max_scan) {
			out->partial = 1;
			break;
		}
		scanned += len;
		uint64_t o = o0 + (uint64_t)r.first_bad;   /* nothing before it */
		for (int k = 0; k < w.n; k++)
			idx[k] = o / w.stride[k] % w.size[k];
		for (; o < o0 + len; o++, advance(&w, idx)) {
			enum np_fclass cls = np_classify(in->dtype, np_load_bits(in->dtype,
										   base + o * esize));
			if (cls == NP_FINITE || (cls == NP_NEGINF && in->skip_neginf))
				continue;
			found++;
			uint64_t lin = 0;
			for (int k = 0; k < w.n; k++) {
				if (idx[k] < w.nbits[k])
					w.bits[k][idx[k] / 64] |= 1ull << (idx[k] % 64);
				else
					over[k] = 1;
				lin += idx[k] * w.rowmajor[w.dim[k]];
			}
			if (lin < first) {
				first = lin;
				for (int k = 0; k < w.n; k++)
					at[w.dim[k]] = idx[k];
			}
		}
	}
	if (!found) {
		free_bits(&w);
		return -1;
	}
	out->ndim = (uint8_t)in->ndim;
	out->no_neginf = in->skip_neginf;
	for (int d = 0; d < in->ndim; d++) {
		out->size[d] = clamp32((uint64_t)in->shape[d]);
		out->bad[d] = 1;      /* a dimension of size 1 */
		out->first[d] = clamp32(at[d]);
	}
	for (int k = 0; k < w.n; k++) {
		uint64_t n = 0;
		for (uint64_t i = 0; i < (w.nbits[k] + 63) / 64; i++)
			n += (uint64_t)__builtin_popcountll(w.bits[k][i]);
		/* past the bitmap: at least one more, and no longer exact */
		out->bad[w.dim[k]] = clamp32(n + over[k]);
		out->partial |= over[k];
	}
	free_bits(&w);
	return 0;
}
