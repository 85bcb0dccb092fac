/* test_kdecode_mta.c - cupti/kdecode_mta.c on multi_tensor_apply launches:
 * foreach ops and fused optimizers (Adam, AdamW, SGD, Adagrad).
 *
 * The metadata a launch passes is built here as PyTorch builds it: C
 * mirrors of TensorListMetadata, TensorListScalarListMetadata and
 * FusedOptimizerTensorListMetadata (torch 2.14.1,
 * ATen/native/cuda/MultiTensorApply.cuh, CUDA >= 13 capacities), sized
 * against the real kernels' parameter sizes in
 * tests/unit/fixtures/torch_kernels.tsv, and filled by a transcription of
 * the header's host loop multi_tensor_apply(): slots reused without
 * clearing, launches when the blocks or the slots run out, a tensor split
 * over launches.  What each launch must yield is worked out from the
 * blocks the host loop made, not from the decoder's rules. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "../../cupti/kdecode.h"

#include "fixture.h"

#define CHUNK 65536   /* kChunkSize of MultiTensorApply.cuh */

struct kern {
	char dem[4096];
	struct np_kinfo ki;
	struct np_kparams l;
};

/* Fixture line l, classified, its layout parsed. */
static void kern_of(const struct kline *l, struct kern *k)
{
	cr_assert_lt(strlen(l->dem), sizeof(k->dem));
	strcpy(k->dem, l->dem);
	cr_assert_gt(np_kdecode_layout_parse(l->layout, &k->l), 0);
	np_kdecode_classify(k->dem, &k->ki);
}

/* The first fixture kernel whose demangled name contains sub. */
static void find(const char *sub, struct kern *k)
{
	kern_of(fixture_find(sub), k);
}

/* ---- PyTorch's metadata structs, CUDA >= 13 capacities ---- */

#define MAX_BLOCKS 2240

#define TENSOR_LIST(name, n, T)                                 \
	struct name {                                           \
		const void *addresses[n][T];                    \
		int64_t numel_for_tensor[T];                    \
		uint16_t block_to_tensor[MAX_BLOCKS];           \
		int32_t block_to_chunk[MAX_BLOCKS];             \
		int32_t start_tensor_this_launch;               \
	}
#define FUSED_LIST(name, n, T)                                  \
	struct name {                                           \
		const void *addresses[n][T];                    \
		int64_t numel_for_tensor[T];                    \
		const void *state_steps_addresses[T];           \
		uint16_t block_to_tensor[MAX_BLOCKS];           \
		int32_t block_to_chunk[MAX_BLOCKS];             \
		int32_t start_tensor_this_launch;               \
	}
#define SCALAR_LIST(name, n, T, scalar_t)                       \
	struct name {                                           \
		const void *addresses[n][T];                    \
		int64_t numel_for_tensor[T];                    \
		scalar_t scalar_vals[T];                        \
		uint16_t block_to_tensor[MAX_BLOCKS];           \
		int32_t block_to_chunk[MAX_BLOCKS];             \
	}

struct complex_double {
	_Alignas(16) double re;         /* c10::complex<double> is alignas(16) */
	double im;
};

TENSOR_LIST(tlm1, 1, 770);
TENSOR_LIST(tlm2, 2, 448);
TENSOR_LIST(tlm3, 3, 336);
TENSOR_LIST(tlm4, 4, 252);
FUSED_LIST(fused3, 3, 336);
FUSED_LIST(fused4, 4, 252);
FUSED_LIST(fused5, 5, 210);
SCALAR_LIST(sl_float1, 1, 672, float);
SCALAR_LIST(sl_float3, 3, 336, float);
SCALAR_LIST(sl_float4, 4, 252, float);
SCALAR_LIST(sl_double2, 2, 448, double);
SCALAR_LIST(sl_cdouble1, 1, 504, struct complex_double);

/* CUDA < 13: 320 blocks, unsigned char block index */
struct tlm2_old {
	const void *addresses[2][64];
	int64_t numel_for_tensor[64];
	unsigned char block_to_tensor[320];
	int32_t block_to_chunk[320];
	int32_t start_tensor_this_launch;
};

/* The sizes the cubins give these parameters (the fixture tests below
 * check each kernel's against sizeof its mirror). */
_Static_assert(sizeof(struct tlm1) == 25768, "TensorListMetadata<1>");
_Static_assert(sizeof(struct tlm2) == 24200, "TensorListMetadata<2>");
_Static_assert(sizeof(struct tlm3) == 24200, "TensorListMetadata<3>");
_Static_assert(sizeof(struct tlm4) == 23528, "TensorListMetadata<4>");
_Static_assert(sizeof(struct fused3) == 26888, "FusedOptimizerTensorListMetadata<3>");
_Static_assert(sizeof(struct fused4) == 25544, "FusedOptimizerTensorListMetadata<4>");
_Static_assert(sizeof(struct fused5) == 25208, "FusedOptimizerTensorListMetadata<5>");
_Static_assert(sizeof(struct sl_float1) == 26880, "TensorListScalarListMetadata<float, 1>");
_Static_assert(sizeof(struct sl_float3) == 25536, "TensorListScalarListMetadata<float, 3>");
_Static_assert(sizeof(struct sl_float4) == 24528, "TensorListScalarListMetadata<float, 4>");
_Static_assert(sizeof(struct sl_double2) == 27776, "TensorListScalarListMetadata<double, 2>");
_Static_assert(sizeof(struct sl_cdouble1) == 29568,
	       "TensorListScalarListMetadata<c10::complex<double>, 1>");
_Static_assert(sizeof(struct tlm2_old) == 3144, "TensorListMetadata<2>, CUDA < 13");

/* One struct seen through its fields, whatever its type. */
struct mview {
	void *base;
	size_t size;
	int depth, max_tensors, max_blocks;
	const void **addresses;         /* [depth][max_tensors] */
	int64_t *numel;
	const void **steps;             /* fused only */
	uint16_t *b2t16;
	unsigned char *b2t8;
	int32_t *b2c;
	int32_t *start;                 /* not in scalar lists */
};

#define VIEW(v, s, n, FUSED, START)                                             \
	do {                                                                    \
		memset(&(v), 0, sizeof(v));                                     \
		(v).base = &(s);                                                \
		(v).size = sizeof(s);                                           \
		(v).depth = (n);                                                \
		(v).max_tensors = sizeof((s).numel_for_tensor) / 8;             \
		(v).max_blocks = sizeof((s).block_to_chunk) / 4;                \
		(v).addresses = (const void **)(s).addresses;                   \
		(v).numel = (s).numel_for_tensor;                               \
		if (sizeof((s).block_to_tensor[0]) == 2)                        \
			(v).b2t16 = (uint16_t *)(void *)(s).block_to_tensor;    \
		else                                                            \
			(v).b2t8 = (unsigned char *)(void *)(s).block_to_tensor; \
		(v).b2c = (s).block_to_chunk;                                   \
		FUSED;                                                          \
		START;                                                          \
	} while (0)
#define NO_STEPS (void)0
#define STEPS(s) ((v).steps = (s).state_steps_addresses)
#define NO_START (void)0
#define START(s) ((v).start = &(s).start_tensor_this_launch)

/* Device addresses: list d, tensor g (whole tensors never overlap). */
#define ADDR(d, g) ((1ull << 44) + ((uint64_t)(d) << 43) + ((uint64_t)(g) << 32))
#define STEP(g) ((1ull << 46) + ((uint64_t)(g) << 12))

/* ---- the host loop ---- */

#define MAX_LAUNCHES 16

/* What one launch covered: per block, the tensor (index in the caller's
 * list) and chunk. */
struct launch_rec {
	uint32_t blocks;
	int32_t start;                  /* start_tensor_this_launch, -1 if none */
	int tensor[MAX_BLOCKS], chunk[MAX_BLOCKS];
};

typedef void (*launch_fn)(struct mview *v, const struct launch_rec *r, void *ctx);

/* multi_tensor_apply() / multi_tensor_apply_for_fused_optimizer(), as in
 * MultiTensorApply.cuh; tensors of numel 0 are left out as there. */
static int host_loop(struct mview *v, int n, const int64_t *numel, launch_fn fn, void *ctx)
{
	static struct launch_rec rec;
	int loc_block = 0, loc_tensor = 0, processed = 0, launches = 0;
	int slot_tensor[1024];

	if (v->start)
		*v->start = 0;
	for (int t = 0; t < n; t++) {
		if (numel[t] == 0)
			continue;
		processed++;
		v->numel[loc_tensor] = numel[t];
		for (int d = 0; d < v->depth; d++)
			v->addresses[d * v->max_tensors + loc_tensor] = (const void *)ADDR(d, t);
		if (v->steps)
			v->steps[loc_tensor] = (const void *)STEP(t);
		slot_tensor[loc_tensor] = t;
		loc_tensor++;
		int64_t chunks = numel[t] / CHUNK + (numel[t] % CHUNK != 0);
		for (int64_t chunk = 0; chunk < chunks; chunk++) {
			if (v->b2t16)
				v->b2t16[loc_block] = (uint16_t)(loc_tensor - 1);
			else
				v->b2t8[loc_block] = (unsigned char)(loc_tensor - 1);
			v->b2c[loc_block] = (int32_t)chunk;
			rec.tensor[loc_block] = slot_tensor[loc_tensor - 1];
			rec.chunk[loc_block] = (int)chunk;
			loc_block++;
			int tensors_full = loc_tensor == v->max_tensors && chunk == chunks - 1;
			int blocks_full = loc_block == v->max_blocks;
			if (tensors_full || blocks_full) {
				rec.blocks = (uint32_t)loc_block;
				rec.start = v->start ? *v->start : -1;
				fn(v, &rec, ctx);
				launches++;
				loc_block = 0;
				if (chunk == chunks - 1) {
					loc_tensor = 0;
					if (v->start)
						*v->start = processed;
				} else {
					v->numel[0] = v->numel[loc_tensor - 1];
					for (int d = 0; d < v->depth; d++)
						v->addresses[d * v->max_tensors] =
							v->addresses[d * v->max_tensors +
								     loc_tensor - 1];
					if (v->steps)
						v->steps[0] = v->steps[loc_tensor - 1];
					slot_tensor[0] = slot_tensor[loc_tensor - 1];
					loc_tensor = 1;
					if (v->start)
						*v->start = processed - 1;
				}
			}
		}
	}
	if (loc_block) {
		rec.blocks = (uint32_t)loc_block;
		rec.start = v->start ? *v->start : -1;
		fn(v, &rec, ctx);
		launches++;
	}
	return launches;
}

/* ---- one decoded launch against what it must yield ---- */

struct want {
	unsigned written;               /* lists written */
	unsigned read;                  /* lists read: their slices are inputs */
	int dtype[5];                   /* per list; -1: not checkable */
	int steps;                      /* the step count is an input */
	int nwords;                     /* pointer words of the functor's arguments */
	uint64_t words[4];
};

struct run {
	struct kern *k;
	const struct want *w;
	const int64_t *numel;
	int max;                        /* out[] size per turn */
	void *kp[NP_KD_MAX_PARAMS];
	int launches, outputs;
	uint64_t covered[5][64];        /* elements checked per list and tensor (< 64) */
};

static unsigned dsize(int dtype)
{
	return np_dtype_size((enum np_dtype)dtype);
}

/* The outputs the blocks of rec make, in the decoder's order (list by
 * list, tensors in launch order): a run of chunks per tensor. */
static int expected(const struct run *r, const struct launch_rec *rec, struct np_kbuf *e,
		    int cap)
{
	int n = 0;
	for (int d = 0; d < 5; d++) {
		if (!(r->w->written >> d & 1) || r->w->dtype[d] < 0)
			continue;
		for (uint32_t b = 0; b < rec->blocks;) {
			int t = rec->tensor[b], lo = rec->chunk[b], hi = lo;
			while (b < rec->blocks && rec->tensor[b] == t)
				hi = rec->chunk[b++];
			uint64_t from = (uint64_t)lo * CHUNK, to = (uint64_t)(hi + 1) * CHUNK;
			if (to > (uint64_t)r->numel[t])
				to = (uint64_t)r->numel[t];
			cr_assert_lt(n, cap);
			e[n].ptr = ADDR(d, t) + from * dsize(r->w->dtype[d]);
			e[n].numel = to - from;
			e[n].dtype = (enum np_dtype)r->w->dtype[d];
			e[n].how = NP_KH_TENSOR_LIST;
			/* inputs: the same tensor's slice in each list read,
			 * its step count, the argument words */
			int k = 0;
			for (int s = 0; s < 5; s++)
				if ((r->w->read >> s & 1) && r->w->dtype[s] >= 0)
					e[n].in[k++] = ADDR(s, t) + from * dsize(r->w->dtype[s]);
			if (r->w->steps)
				e[n].in[k++] = STEP(t);
			for (int i = 0; i < r->w->nwords; i++)
				e[n].in[k++] = r->w->words[i];
			e[n].n_in = k;
			n++;
		}
	}
	return n;
}

static void check_launch(struct mview *v, const struct launch_rec *rec, void *ctx)
{
	struct run *r = ctx;
	static struct np_kbuf want[4096], got[4096];
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	struct np_klaunch kl = { .threads = rec->blocks * 512ull, .blocks = rec->blocks };
	int nwant = expected(r, rec, want, 4096), ngot = 0, n;

	r->kp[0] = v->base;
	cr_assert_leq(r->max, NP_KD_MAX_OUTPUTS);
	/* read in turns of max, as the subscriber does */
	do {
		n = np_kdecode_outputs(&r->k->ki, &r->k->l, r->kp, &kl, out, r->max);
		cr_assert_geq(n, 0);
		cr_assert_leq(n, r->max);
		cr_assert_eq(kl.more, (uint32_t)(nwant - ngot - n),
			     "launch %d: %d outputs so far, %d now, %u more, want %d in all",
			     r->launches, ngot, n, kl.more, nwant);
		memcpy(got + ngot, out, sizeof(out[0]) * (size_t)n);
		ngot += n;
		kl.first += (uint32_t)n;
	} while (kl.more && n > 0);
	cr_assert_eq(ngot, nwant, "%s: launch %d (%u blocks): %d outputs, want %d", r->k->dem,
		     r->launches, rec->blocks, ngot, nwant);
	for (int i = 0; i < ngot; i++) {
		cr_assert_eq(got[i].ptr, want[i].ptr, "launch %d output %d: ptr %#llx, want %#llx",
			     r->launches, i, (unsigned long long)got[i].ptr,
			     (unsigned long long)want[i].ptr);
		cr_assert_eq(got[i].numel, want[i].numel, "launch %d output %d: numel %llu, want %llu",
			     r->launches, i, (unsigned long long)got[i].numel,
			     (unsigned long long)want[i].numel);
		cr_assert_eq(got[i].dtype, want[i].dtype, "output %d", i);
		cr_assert_eq(got[i].how, NP_KH_TENSOR_LIST);
		cr_assert_eq(got[i].n_in, want[i].n_in, "launch %d output %d: %d inputs, want %d",
			     r->launches, i, got[i].n_in, want[i].n_in);
		for (int k = 0; k < got[i].n_in; k++)
			cr_assert_eq(got[i].in[k], want[i].in[k], "output %d input %d: %#llx, want %#llx",
				     i, k, (unsigned long long)got[i].in[k],
				     (unsigned long long)want[i].in[k]);
		/* which list, which tensor: from the address */
		uint64_t off = got[i].ptr - (1ull << 44);
		int d = (int)(off >> 43), t = (int)((off >> 32) & 0x7ff);
		if (t < 64)
			r->covered[d][t] += got[i].numel;
	}
	/* one block more than launched: block_to_tensor there is an earlier
	 * launch's or garbage, never a continuation of this launch's run */
	if (rec->blocks < MAX_BLOCKS && rec->blocks < (uint32_t)v->max_blocks) {
		uint16_t keep16 = v->b2t16 ? v->b2t16[rec->blocks] : 0;
		int32_t keepc = v->b2c[rec->blocks];
		if (v->b2t16)
			v->b2t16[rec->blocks] = 0x3a5;
		v->b2c[rec->blocks] = 0x5a5a5a5;
		kl = (struct np_klaunch){ .blocks = rec->blocks + 1 };
		cr_expect_eq(np_kdecode_outputs(&r->k->ki, &r->k->l, r->kp, &kl, out, r->max), 0,
			     "a grid one block too big must not decode");
		if (v->b2t16)
			v->b2t16[rec->blocks] = keep16;
		v->b2c[rec->blocks] = keepc;
	}
	r->launches++;
	r->outputs += ngot;
}

/* Parameters 1.. (functor, scalars, pointers) in one buffer; pointer
 * parameter i holds words[i] (0: NULL). */
static void set_params(struct run *r, unsigned char *buf, size_t len, const uint64_t *ptrs)
{
	memset(buf, 0, len);
	for (int i = 1; i < r->k->l.n; i++) {
		cr_assert_leq(32u * (unsigned)i + r->k->l.p[i].size, len);
		r->kp[i] = buf + 32 * i;
		if (ptrs && r->k->l.p[i].size == 8)
			memcpy(r->kp[i], &ptrs[i], 8);
	}
}

/* Fills a struct with what a stack frame might hold before the host loop
 * writes it: stale pointers into another list's tensors. */
static void stale(struct mview *v)
{
	uint64_t *w = v->base;
	for (size_t i = 0; i < v->size / 8; i++)
		w[i] = ADDR(1, 100 + i % 50);
}

static void run_all(struct run *r, struct mview *v, int n, const int64_t *numel, int launches)
{
	stale(v);
	r->numel = numel;
	int got = host_loop(v, n, numel, check_launch, r);
	cr_assert_eq(got, launches, "%s: %d launches, want %d", r->k->dem, got, launches);
	/* every written tensor checked exactly once, element for element: a
	 * tensor split over launches in its runs, never twice, never an
	 * element another launch writes */
	for (int d = 0; d < 5; d++)
		for (int t = 0; t < n && t < 64; t++) {
			uint64_t want = (r->w->written >> d & 1) && r->w->dtype[d] >= 0 ?
						(uint64_t)numel[t] : 0;
			cr_expect_eq(r->covered[d][t], want, "list %d tensor %d: %llu of %llu", d, t,
				     (unsigned long long)r->covered[d][t],
				     (unsigned long long)want);
		}
}

TestSuite(kdecode_mta, .init = fixture_load, .fini = fixture_unload);

/* Every fixture kernel of the family: the metadata is understood and its
 * size under capacity table gen is the cubin's: torch 2.14's (CUDA 13)
 * tables, or for torch 2.11, built for CUDA 13 too, the older ones. */
static void every_fixture_metadata_size(int gen)
{
	static struct kern k;
	int n = 0;
	for (int i = 0; i < nlines; i++) {
		if (!strstr(lines[i].dem, "::multi_tensor_apply_kernel<"))
			continue;
		kern_of(&lines[i], &k);
		cr_assert_eq(k.ki.family, NP_KF_MULTI_TENSOR_APPLY);
		cr_expect_neq(k.ki.mta.meta, NP_MTA_NONE, "%s", k.dem);
		cr_expect_eq(k.ki.mta.size[gen], k.l.p[0].size, "%s: %u bytes, the cubin says %u",
			     k.dem, k.ki.mta.size[gen], k.l.p[0].size);
		n++;
	}
	cr_expect_geq(n, 30, "%d multi_tensor_apply kernels", n);
}

Test(kdecode_mta, every_fixture_metadata_size)
{
	every_fixture_metadata_size(0);
}

TestSuite(kdecode_mta_torch_2_11, .init = fixture_load_2_11, .fini = fixture_unload);

Test(kdecode_mta_torch_2_11, every_fixture_metadata_size)
{
	every_fixture_metadata_size(1);
}

static const struct {
	const char *sub;
	int meta, depth;
	unsigned written, if_scale, read;
	int dtype[5];
} named[] = {
	{ "BinaryOpListAlphaFunctor<float, 2, 2, 0>", NP_MTA_PLAIN, 2, 1, 0, 3,
	  { NP_DT_F32, NP_DT_F32 } },
	{ "BinaryOpListAlphaFunctor<float, 3, 2, 2>", NP_MTA_PLAIN, 3, 4, 0, 3,
	  { NP_DT_F32, NP_DT_F32, NP_DT_F32 } },
	{ "UnaryOpFunctor<float, 2, 1, 1>", NP_MTA_PLAIN, 2, 2, 0, 1, { NP_DT_F32, NP_DT_F32 } },
	{ "PointwiseOpScalar0dTensorFunctor<float, 4, 2, 3>", NP_MTA_PLAIN, 4, 8, 0, 7,
	  { NP_DT_F32, NP_DT_F32, NP_DT_F32, NP_DT_F32 } },
	{ "ZeroFunctor<float, 1, 1, 0>", NP_MTA_PLAIN, 1, 1, 0, 0, { NP_DT_F32 } },
	{ "CopyFunctor<float, c10::Half, 2, 1, 1>", NP_MTA_PLAIN, 2, 2, 0, 1,
	  { NP_DT_F16, NP_DT_F32 } },
	{ "BinaryOpScalarListFunctor<double, 2, 1, 1>", NP_MTA_SCALARLIST, 2, 2, 0, 1,
	  { NP_DT_F64, NP_DT_F64 } },
	{ "BinaryOpScalarListFunctor<c10::complex<double>, 1, 1, 0>", NP_MTA_SCALARLIST, 1, 1, 0, 1,
	  { -1 } },
	{ "FusedAdamMathFunctor<float, 5, (at::native::ADAM_MODE)0, true>", NP_MTA_FUSED, 5, 0x1d,
	  2, 0x1f, { NP_DT_F32, NP_DT_F32, NP_DT_F32, NP_DT_F32, NP_DT_F32 } },
	{ "FusedAdamMathFunctorMP<float, float, float, c10::BFloat16, c10::BFloat16, float, 4,",
	  NP_MTA_FUSED, 4, 0xd, 2, 0xf, { NP_DT_F32, NP_DT_F32, NP_DT_BF16, NP_DT_BF16 } },
	{ "FusedAdagradMathFunctor<float>", NP_MTA_FUSED, 3, 5, 2, 7,
	  { NP_DT_F32, NP_DT_F32, NP_DT_F32 } },
	{ "FusedSgdMathFunctor<c10::Half, 2>", NP_MTA_PLAIN, 2, 1, 2, 3, { NP_DT_F16, NP_DT_F16 } },
	{ "FusedSgdMathFunctor<float, 3>", NP_MTA_PLAIN, 3, 5, 2, 7,
	  { NP_DT_F32, NP_DT_F32, NP_DT_F32 } },
};

Test(kdecode_mta, functors_name_their_lists)
{
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		struct kern k;
		find(named[i].sub, &k);
		const struct np_kmta *m = &k.ki.mta;
		cr_expect_eq(m->meta, named[i].meta, "%s: meta %d", named[i].sub, m->meta);
		cr_expect_eq(m->depth, named[i].depth, "%s", named[i].sub);
		cr_expect_eq(m->written, named[i].written, "%s: written %#x", named[i].sub, m->written);
		cr_expect_eq(m->written_if_scale, named[i].if_scale, "%s", named[i].sub);
		cr_expect_eq(m->read, named[i].read, "%s: read %#x", named[i].sub, m->read);
		for (int d = 0; d < named[i].depth; d++)
			cr_expect_eq(m->dtype[d], named[i].dtype[d], "%s: list %d dtype %d",
				     named[i].sub, d, m->dtype[d]);
	}
	/* ki.dtype: the first list written */
	struct kern k;
	find("CopyFunctor<float, c10::Half, 2, 1, 1>", &k);
	cr_expect_eq(k.ki.dtype, NP_DT_F32, "the copy's destination, not its source");
	cr_expect_eq(k.ki.dtype_why, NP_KDT_KNOWN);
	find("BinaryOpScalarListFunctor<c10::complex<double>, 1, 1, 0>", &k);
	cr_expect_eq(k.ki.dtype_why, NP_KDT_UNCHECKABLE);
}

/* _foreach_add_(xs, ys) on CUDA 13: in place into list 0, reading both;
 * 70 tensors, some over one chunk, one empty (left out by the host). */
Test(kdecode_mta, foreach_add_list_in_place)
{
	static struct tlm2 s;
	static struct run r;
	static unsigned char buf[4096];
	struct mview v;
	int64_t numel[70];
	struct kern k;
	const struct want w = { .written = 1, .read = 3, .dtype = { NP_DT_F32, NP_DT_F32 } };

	find("BinaryOpListAlphaFunctor<float, 2, 2, 0>", &k);
	cr_assert_eq(k.l.p[0].size, sizeof(s));
	for (int t = 0; t < 70; t++)
		numel[t] = t == 7 ? 0 : 1000 + 40000 * t;   /* up to 43 chunks */
	r = (struct run){ .k = &k, .w = &w, .max = NP_KD_MAX_OUTPUTS };
	set_params(&r, buf, sizeof(buf), NULL);
	VIEW(v, s, 2, NO_STEPS, START(s));
	run_all(&r, &v, 70, numel, 1);
	cr_expect_eq(r.outputs, 69);
}

/* xs + ys out of place: list 2 is written and not read. */
Test(kdecode_mta, foreach_add_list_out_of_place)
{
	static struct tlm3 s;
	static struct run r;
	static unsigned char buf[4096];
	struct mview v;
	int64_t numel[5] = { 1, 65536, 65537, 3, 1 << 20 };
	struct kern k;
	const struct want w = { .written = 4, .read = 3,
				.dtype = { NP_DT_F32, NP_DT_F32, NP_DT_F32 } };

	find("BinaryOpListAlphaFunctor<float, 3, 2, 2>", &k);
	cr_assert_eq(k.l.p[0].size, sizeof(s));
	r = (struct run){ .k = &k, .w = &w, .max = 2 };
	set_params(&r, buf, sizeof(buf), NULL);
	VIEW(v, s, 3, NO_STEPS, START(s));
	run_all(&r, &v, 5, numel, 1);
}

/* More tensors than a launch has slots (448 at depth 2): three launches,
 * the later ones over slots an earlier launch filled; each launch's
 * outputs are more than out[] holds and come in turns. */
Test(kdecode_mta, more_tensors_than_slots)
{
	static struct tlm2 s;
	static struct run r;
	static unsigned char buf[4096];
	static int64_t numel[1000];
	struct mview v;
	struct kern k;
	const struct want w = { .written = 2, .read = 1, .dtype = { NP_DT_F16, NP_DT_F16 } };

	find("BinaryOpScalarFunctor<c10::Half, 2, 1, 1>", &k);
	for (int t = 0; t < 1000; t++)
		numel[t] = 100 + t;
	r = (struct run){ .k = &k, .w = &w, .max = NP_KD_MAX_OUTPUTS };
	set_params(&r, buf, sizeof(buf), NULL);
	VIEW(v, s, 2, NO_STEPS, START(s));
	run_all(&r, &v, 1000, numel, 3);
	cr_expect_eq(r.outputs, 1000);

	/* the first turn of a full launch says how many are left */
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	struct np_klaunch kl = { .blocks = 448 };
	stale(&v);
	for (int t = 0; t < 448; t++) {
		s.addresses[0][t] = (const void *)ADDR(0, t);
		s.addresses[1][t] = (const void *)ADDR(1, t);
		s.numel_for_tensor[t] = 10;
		s.block_to_tensor[t] = (uint16_t)t;
		s.block_to_chunk[t] = 0;
	}
	r.kp[0] = &s;
	cr_expect_eq(np_kdecode_outputs(&k.ki, &k.l, r.kp, &kl, out, NP_KD_MAX_OUTPUTS),
		     NP_KD_MAX_OUTPUTS);
	cr_expect_eq(kl.more, 448 - NP_KD_MAX_OUTPUTS);
	cr_expect_eq(out[0].ptr, ADDR(1, 0));
	/* the grid is needed: without it, nothing */
	kl = (struct np_klaunch){ .threads = 448 * 512 };
	cr_expect_eq(np_kdecode_outputs(&k.ki, &k.l, r.kp, &kl, out, NP_KD_MAX_OUTPUTS), 0);
	cr_expect_eq(np_kdecode_outputs(&k.ki, &k.l, r.kp, NULL, out, NP_KD_MAX_OUTPUTS), 0);
	/* a slot with a NULL address is not PyTorch's */
	s.addresses[1][300] = NULL;
	kl = (struct np_klaunch){ .blocks = 448 };
	cr_expect_eq(np_kdecode_outputs(&k.ki, &k.l, r.kp, &kl, out, NP_KD_MAX_OUTPUTS), 0);
	cr_expect_eq(kl.more, 0);
}

/* Big tensors: the blocks run out inside a tensor, and the next launch
 * starts mid-tensor (slot 0, block_to_chunk[0] > 0, start_tensor_this_launch
 * the tensor's index): each launch's output is the run of chunks it
 * writes, so an out-of-place result's unwritten chunks are never read. */
Test(kdecode_mta, tensor_split_over_launches)
{
	static struct tlm3 s;
	static struct run r;
	static unsigned char buf[4096];
	struct mview v;
	int64_t numel[4] = { 100ll * CHUNK, 2200ll * CHUNK - 3, 5000ll * CHUNK + 7, 10 };
	struct kern k;
	const struct want w = { .written = 4, .read = 3,
				.dtype = { NP_DT_F32, NP_DT_F32, NP_DT_F32 } };

	find("BinaryOpListAlphaFunctor<float, 3, 2, 2>", &k);
	r = (struct run){ .k = &k, .w = &w, .max = NP_KD_MAX_OUTPUTS };
	set_params(&r, buf, sizeof(buf), NULL);
	VIEW(v, s, 3, NO_STEPS, START(s));
	/* 100 + 2200 + 5001 + 1 blocks: 2240, 2240, 2240, 582 */
	run_all(&r, &v, 4, numel, 4);
	cr_expect_eq(r.outputs, 2 + 2 + 1 + 2);
}

Test(kdecode_mta, launch_starting_mid_tensor)
{
	static struct tlm1 s;
	static unsigned char buf[256];
	struct np_kbuf out[4];
	struct kern k;
	struct np_klaunch kl = { .blocks = 5 };
	void *kp[NP_KD_MAX_PARAMS] = { &s };

	find("BinaryOpScalarFunctor<float, 1, 1, 0>", &k);
	for (int i = 1; i < k.l.n; i++)
		kp[i] = buf + 16 * i;
	memset(&s, 0xa5, sizeof(s));
	/* chunks 2238, 2239 of tensor 41 (slot 0), then tensor 42 in 3 chunks */
	s.start_tensor_this_launch = 41;
	s.addresses[0][0] = (const void *)ADDR(0, 41);
	s.addresses[0][1] = (const void *)ADDR(0, 42);
	s.numel_for_tensor[0] = 2240ll * CHUNK - 1;
	s.numel_for_tensor[1] = 2 * CHUNK + 1;
	const int b2t[5] = { 0, 0, 1, 1, 1 }, b2c[5] = { 2238, 2239, 0, 1, 2 };
	for (int b = 0; b < 5; b++) {
		s.block_to_tensor[b] = (uint16_t)b2t[b];
		s.block_to_chunk[b] = b2c[b];
	}
	cr_assert_eq(np_kdecode_outputs(&k.ki, &k.l, kp, &kl, out, 4), 2);
	cr_expect_eq(out[0].ptr, ADDR(0, 41) + 2238ull * CHUNK * 4);
	cr_expect_eq(out[0].numel, 2 * CHUNK - 1);
	cr_expect_eq(out[0].n_in, 1, "in place: its own slice");
	cr_expect_eq(out[0].in[0], out[0].ptr);
	cr_expect_eq(out[1].ptr, ADDR(0, 42));
	cr_expect_eq(out[1].numel, 2 * CHUNK + 1);
	/* what is not PyTorch's block order decodes to nothing */
	s.block_to_chunk[1] = 2237;                     /* a chunk twice */
	cr_expect_eq(np_kdecode_outputs(&k.ki, &k.l, kp, &kl, out, 4), 0);
	s.block_to_chunk[1] = 2239;
	s.block_to_chunk[2] = 1;                        /* a new tensor not at chunk 0 */
	cr_expect_eq(np_kdecode_outputs(&k.ki, &k.l, kp, &kl, out, 4), 0);
	s.block_to_chunk[2] = 0;
	s.block_to_tensor[0] = 1;                       /* the first block not slot 0 */
	cr_expect_eq(np_kdecode_outputs(&k.ki, &k.l, kp, &kl, out, 4), 0);
	s.block_to_tensor[0] = 0;
	s.numel_for_tensor[0] = 2239ll * CHUNK;         /* a chunk past the tensor */
	cr_expect_eq(np_kdecode_outputs(&k.ki, &k.l, kp, &kl, out, 4), 0);
	s.numel_for_tensor[0] = 2241ll * CHUNK;         /* slot 0 left unfinished */
	cr_expect_eq(np_kdecode_outputs(&k.ki, &k.l, kp, &kl, out, 4), 0);
	s.numel_for_tensor[0] = 2240ll * CHUNK;
	cr_expect_eq(np_kdecode_outputs(&k.ki, &k.l, kp, &kl, out, 4), 2);
	s.numel_for_tensor[1] = 0;                      /* an empty tensor has no block */
	cr_expect_eq(np_kdecode_outputs(&k.ki, &k.l, kp, &kl, out, 4), 0);
}

/* The generic tier's reads (np_kdecode_reads): the lists a launch only
 * reads, each tensor from its start; a tensor an earlier launch began is
 * left out (its start is not read here), and so are written lists. */
Test(kdecode_mta, read_only_lists_are_reads_from_each_tensors_start)
{
	static struct tlm3 s;
	static unsigned char buf[256];
	struct np_kread in[8];
	struct kern k;
	struct np_klaunch kl = { .blocks = 5 };
	void *kp[NP_KD_MAX_PARAMS] = { &s };

	/* out = a + alpha * b: lists 0 and 1 read, list 2 written */
	find("BinaryOpListAlphaFunctor<float, 3, 2, 2>", &k);
	for (int i = 1; i < k.l.n; i++)
		kp[i] = buf + 16 * i;
	memset(&s, 0xa5, sizeof(s));
	s.start_tensor_this_launch = 0;
	for (int d = 0; d < 3; d++) {
		s.addresses[d][0] = (const void *)ADDR(d, 7);
		s.addresses[d][1] = (const void *)ADDR(d, 8);
	}
	s.numel_for_tensor[0] = 3ll * CHUNK;
	s.numel_for_tensor[1] = 2 * CHUNK + 1;
	const int b2t[5] = { 0, 0, 1, 1, 1 }, b2c[5] = { 1, 2, 0, 1, 2 };
	for (int b = 0; b < 5; b++) {
		s.block_to_tensor[b] = (uint16_t)b2t[b];
		s.block_to_chunk[b] = b2c[b];
	}
	/* slot 0 from chunk 1: its start was an earlier launch's */
	cr_assert_eq(np_kdecode_reads(&k.ki, &k.l, kp, &kl, in, 8), 2);
	cr_expect_eq(in[0].ptr, ADDR(0, 8));
	cr_expect_eq(in[0].numel, 2 * CHUNK + 1);
	cr_expect_eq(in[0].dtype, NP_DT_F32);
	cr_expect_eq(in[1].ptr, ADDR(1, 8));
	s.block_to_chunk[0] = 0, s.block_to_chunk[1] = 1;   /* now slot 0 whole, from 0 */
	s.block_to_tensor[2] = 0, s.block_to_chunk[2] = 2;
	s.block_to_tensor[3] = 1, s.block_to_chunk[3] = 0;
	s.block_to_tensor[4] = 1, s.block_to_chunk[4] = 1;  /* slot 1 left at chunk 1 */
	cr_assert_eq(np_kdecode_reads(&k.ki, &k.l, kp, &kl, in, 8), 4);
	cr_expect_eq(in[0].ptr, ADDR(0, 7));
	cr_expect_eq(in[0].numel, 3ull * CHUNK);
	cr_expect_eq(in[1].ptr, ADDR(0, 8));
	cr_expect_eq(in[1].numel, 2ull * CHUNK, "the part this launch reads");
	cr_expect_eq(in[2].ptr, ADDR(1, 7));
	cr_expect_eq(np_kdecode_reads(&k.ki, &k.l, kp, &kl, in, 3), 3, "max is honoured");
	cr_expect_eq(np_kdecode_reads(&k.ki, &k.l, kp, NULL, in, 8), 0, "no launch known");
	s.block_to_chunk[1] = 0;        /* not PyTorch's block order: nothing */
	cr_expect_eq(np_kdecode_reads(&k.ki, &k.l, kp, &kl, in, 8), 0);
}

/* Fused AdamW, depth 4: params, exp_avg, exp_avg_sq written; the grads
 * too when a GradScaler's grad_scale_ptr is passed. */
static void fused_adam(const char *sub, int depth, const int *dtype, unsigned written,
		       unsigned written_scaled)
{
	static struct fused4 s4;
	static struct fused5 s5;
	static struct run r;
	static unsigned char buf[4096];
	struct mview v;
	int64_t numel[9] = { 12, 70000, 1, 0, 300000, 5, 65536, 2, 9 };
	struct kern k;
	/* (meta, functor, lr_ptr, lr, beta1, beta2, wd, eps, maximize,
	 *  grad_scale_ptr, found_inf_ptr) */
	uint64_t ptrs[11] = { 0 };
	struct want w = { .read = (1u << depth) - 1, .steps = 1 };

	find(sub, &k);
	cr_assert_eq(k.l.n, 11, "%s", k.dem);
	for (int d = 0; d < depth; d++)
		w.dtype[d] = dtype[d];
	for (int scaled = 0; scaled < 2; scaled++) {
		r = (struct run){ .k = &k, .w = &w, .max = 5 };
		ptrs[2] = (1ull << 45) + 0x100;         /* lr as a tensor */
		ptrs[9] = scaled ? (1ull << 45) + 0x200 : 0;
		ptrs[10] = scaled ? (1ull << 45) + 0x300 : 0;
		w.written = scaled ? written_scaled : written;
		w.nwords = 0;
		for (int i = 2; i < 11; i++)
			if (ptrs[i])
				w.words[w.nwords++] = ptrs[i];
		set_params(&r, buf, sizeof(buf), ptrs);
		/* doubles that are not pointer-like words */
		for (int i = 3; i <= 7; i++)
			*(double *)r.kp[i] = 0.9 + i;
		if (depth == 4) {
			cr_assert_eq(k.l.p[0].size, sizeof(s4));
			VIEW(v, s4, 4, STEPS(s4), START(s4));
		} else {
			cr_assert_eq(k.l.p[0].size, sizeof(s5));
			VIEW(v, s5, 5, STEPS(s5), START(s5));
		}
		run_all(&r, &v, 9, numel, 1);
	}
}

Test(kdecode_mta, fused_adamw)
{
	const int f32[5] = { NP_DT_F32, NP_DT_F32, NP_DT_F32, NP_DT_F32, NP_DT_F32 };
	fused_adam("FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>", 4, f32,
		   0xd, 0xf);
}

Test(kdecode_mta, fused_adam_amsgrad)
{
	const int f32[5] = { NP_DT_F32, NP_DT_F32, NP_DT_F32, NP_DT_F32, NP_DT_F32 };
	fused_adam("FusedAdamMathFunctor<float, 5, (at::native::ADAM_MODE)0, true>", 5, f32,
		   0x1d, 0x1f);
}

Test(kdecode_mta, fused_adam_bf16_and_mixed_precision)
{
	const int bf16[5] = { NP_DT_BF16, NP_DT_BF16, NP_DT_BF16, NP_DT_BF16 };
	const int mp[5] = { NP_DT_F32, NP_DT_F32, NP_DT_BF16, NP_DT_BF16 };
	fused_adam("FusedAdamMathFunctor<c10::BFloat16, 4, (at::native::ADAM_MODE)0, false>", 4,
		   bf16, 0xd, 0xf);
	fused_adam("FusedAdamMathFunctorMP<float, float, float, c10::BFloat16, c10::BFloat16, "
		   "float, 4,", 4, mp, 0xd, 0xf);
}

/* Fused SGD: params; the momentum buffers at depth 3; grads when scaled.
 * (meta, functor, wd, momentum, lr_ptr, lr, dampening, nesterov,
 *  maximize, is_first_step, grad_scale_ptr, found_inf_ptr) */
static void fused_sgd(const char *sub, int depth, unsigned written, unsigned written_scaled)
{
	static struct tlm2 s2;
	static struct tlm3 s3;
	static struct run r;
	static unsigned char buf[4096];
	struct mview v;
	int64_t numel[6] = { 3, 65535, 65537, 1, 200000, 4 };
	struct kern k;
	uint64_t ptrs[12] = { 0 };
	struct want w = { .read = (1u << depth) - 1,
			  .dtype = { NP_DT_F32, NP_DT_F32, NP_DT_F32 } };

	find(sub, &k);
	cr_assert_eq(k.l.n, 12, "%s", k.dem);
	for (int scaled = 0; scaled < 2; scaled++) {
		r = (struct run){ .k = &k, .w = &w, .max = 3 };
		ptrs[10] = scaled ? (1ull << 45) + 0x200 : 0;
		w.written = scaled ? written_scaled : written;
		w.nwords = scaled;
		w.words[0] = ptrs[10];
		set_params(&r, buf, sizeof(buf), ptrs);
		if (depth == 2)
			VIEW(v, s2, 2, NO_STEPS, START(s2));
		else
			VIEW(v, s3, 3, NO_STEPS, START(s3));
		run_all(&r, &v, 6, numel, 1);
	}
}

Test(kdecode_mta, fused_sgd)
{
	fused_sgd("FusedSgdMathFunctor<float, 2>", 2, 1, 3);
	fused_sgd("FusedSgdMathFunctor<float, 3>", 3, 5, 7);
}

Test(kdecode_mta, fused_adagrad)
{
	static struct fused3 s;
	static struct run r;
	static unsigned char buf[4096];
	struct mview v;
	int64_t numel[3] = { 5, 100000, 7 };
	struct kern k;
	/* (meta, functor, lr_ptr, lr, lr_decay, wd, eps, maximize,
	 *  grad_scale_ptr, found_inf_ptr) */
	uint64_t ptrs[10] = { [8] = (1ull << 45) + 0x200 };
	const struct want w = { .written = 7, .read = 7, .steps = 1,
				.dtype = { NP_DT_F32, NP_DT_F32, NP_DT_F32 },
				.nwords = 1, .words = { (1ull << 45) + 0x200 } };

	find("FusedAdagradMathFunctor<float>", &k);
	cr_assert_eq(k.l.p[0].size, sizeof(s));
	r = (struct run){ .k = &k, .w = &w, .max = 4 };
	set_params(&r, buf, sizeof(buf), ptrs);
	VIEW(v, s, 3, STEPS(s), START(s));
	run_all(&r, &v, 3, numel, 1);
}

/* torch.optim.Adam(foreach=True)'s last step:
 * _foreach_addcdiv_(params, exp_avgs, denom, step_sizes), a scalar list. */
Test(kdecode_mta, foreach_addcdiv_scalar_list)
{
	static struct sl_float3 s;
	static struct run r;
	static unsigned char buf[4096];
	static int64_t numel[400];
	struct mview v;
	struct kern k;
	const struct want w = { .written = 1, .read = 7,
				.dtype = { NP_DT_F32, NP_DT_F32, NP_DT_F32 } };

	find("PointwiseOpScalarListFunctor<float, 3, 3, 0>", &k);
	cr_assert_eq(k.l.p[0].size, sizeof(s));
	for (int t = 0; t < 400; t++)
		numel[t] = 1 + t * 37;
	r = (struct run){ .k = &k, .w = &w, .max = NP_KD_MAX_OUTPUTS };
	set_params(&r, buf, sizeof(buf), NULL);
	VIEW(v, s, 3, NO_STEPS, NO_START);
	for (int t = 0; t < 336; t++)
		s.scalar_vals[t] = -1e-3f;
	run_all(&r, &v, 400, numel, 2);
}

Test(kdecode_mta, scalar_lists_of_other_widths)
{
	static struct sl_double2 sd;
	static struct sl_float4 sf;
	static struct sl_float1 s1;
	static struct sl_cdouble1 sc;
	static struct run r;
	static unsigned char buf[4096];
	int64_t numel[3] = { 4, 70000, 1 };
	struct mview v;
	struct kern k;
	const struct want wd = { .written = 2, .read = 1, .dtype = { NP_DT_F64, NP_DT_F64 } };
	const struct want wf = { .written = 8, .read = 7,
				 .dtype = { NP_DT_BF16, NP_DT_BF16, NP_DT_BF16, NP_DT_BF16 } };
	const struct want w1 = { .written = 1, .read = 1, .dtype = { NP_DT_F32 } };
	const struct want wc = { .written = 1, .read = 1, .dtype = { -1 } };

	find("BinaryOpScalarListFunctor<double, 2, 1, 1>", &k);
	cr_assert_eq(k.l.p[0].size, sizeof(sd));
	r = (struct run){ .k = &k, .w = &wd, .max = 2 };
	set_params(&r, buf, sizeof(buf), NULL);
	VIEW(v, sd, 2, NO_STEPS, NO_START);
	run_all(&r, &v, 3, numel, 1);

	find("PointwiseOpScalarListFunctor<c10::BFloat16, 4, 3, 3>", &k);
	cr_assert_eq(k.l.p[0].size, sizeof(sf));
	r = (struct run){ .k = &k, .w = &wf, .max = 2 };
	set_params(&r, buf, sizeof(buf), NULL);
	VIEW(v, sf, 4, NO_STEPS, NO_START);
	run_all(&r, &v, 3, numel, 1);

	find("BinaryOpScalarListFunctor<float, 1, 1, 0>, std::divides<float>", &k);
	cr_assert_eq(k.l.p[0].size, sizeof(s1));
	r = (struct run){ .k = &k, .w = &w1, .max = 2 };
	set_params(&r, buf, sizeof(buf), NULL);
	VIEW(v, s1, 1, NO_STEPS, NO_START);
	run_all(&r, &v, 3, numel, 1);

	/* complex tensors (its own capacities, 16-byte scalars): read, and
	 * written in a format there is no check for: no outputs */
	find("BinaryOpScalarListFunctor<c10::complex<double>, 1, 1, 0>", &k);
	cr_assert_eq(k.l.p[0].size, sizeof(sc));
	r = (struct run){ .k = &k, .w = &wc, .max = 2 };
	set_params(&r, buf, sizeof(buf), NULL);
	VIEW(v, sc, 1, NO_STEPS, NO_START);
	run_all(&r, &v, 3, numel, 1);
	cr_expect_eq(r.outputs, 0);
}

/* _foreach_copy_(self, src) with src Half: list 1 (float) written, list 0
 * (Half) read, its slice in Half elements. */
Test(kdecode_mta, foreach_copy_casts)
{
	static struct tlm2 s;
	static struct run r;
	static unsigned char buf[4096];
	int64_t numel[3] = { 200000, 3, 65536 };
	struct mview v;
	struct kern k;
	const struct want w = { .written = 2, .read = 1, .dtype = { NP_DT_F16, NP_DT_F32 } };

	find("CopyFunctor<float, c10::Half, 2, 1, 1>", &k);
	r = (struct run){ .k = &k, .w = &w, .max = 2 };
	set_params(&r, buf, sizeof(buf), NULL);
	VIEW(v, s, 2, NO_STEPS, START(s));
	run_all(&r, &v, 3, numel, 1);
}

/* zero_grad(set_to_none=False): zeros read nothing; the AMP unscale
 * reads its lambda's captured pointers; a scalar tensor is read. */
Test(kdecode_mta, zero_amp_unscale_scalar_tensor)
{
	static struct tlm1 s;
	static struct run r;
	static unsigned char buf[4096];
	int64_t numel[4] = { 10, 100000, 1, 7 };
	uint64_t ptrs[8] = { 0 };
	struct mview v;
	struct kern k;
	struct want w = { .written = 1, .read = 0, .dtype = { NP_DT_F32 } };

	find("ZeroFunctor<float, 1, 1, 0>", &k);
	r = (struct run){ .k = &k, .w = &w, .max = 3 };
	set_params(&r, buf, sizeof(buf), NULL);
	VIEW(v, s, 1, NO_STEPS, START(s));
	run_all(&r, &v, 4, numel, 1);

	find("_amp_foreach_non_finite_check_and_unscale_", &k);
	cr_assert_eq(k.l.p[2].size, 24, "the lambda: found_inf, inv_scale and more");
	r = (struct run){ .k = &k, .w = &w, .max = 3 };
	set_params(&r, buf, sizeof(buf), NULL);
	const uint64_t cap[3] = { (1ull << 45) + 0x10, (1ull << 45) + 0x20, 0 };
	memcpy(r.kp[2], cap, sizeof(cap));
	w.read = 1;
	w.nwords = 2;
	w.words[0] = cap[0];
	w.words[1] = cap[1];
	run_all(&r, &v, 4, numel, 1);

	find("BinaryOpScalarTensorFunctor<float, 1, 1, 0>", &k);
	ptrs[3] = (1ull << 45) + 0x40;
	r = (struct run){ .k = &k, .w = &w, .max = 3 };
	set_params(&r, buf, sizeof(buf), ptrs);
	w.nwords = 1;
	w.words[0] = ptrs[3];
	run_all(&r, &v, 4, numel, 1);
}

/* _foreach_norm writes per-tensor partial sums through a pointer, no
 * list: no output (lpnorm_cleanup reads the partials).  It reads its
 * list, clip_grad_norm_'s gradients: the generic tier's reads, each
 * tensor whole. */
Test(kdecode_mta, norm_has_no_list_output_and_reads_its_list)
{
	static struct tlm1 s;
	static unsigned char buf[256];
	struct np_kbuf out[4];
	struct np_kread in[4];
	struct kern k;
	struct np_klaunch kl = { .blocks = 2 };
	void *kp[NP_KD_MAX_PARAMS] = { &s };

	find("LpNormFunctor<float, (at::native::NormType)1, float, 1, 1, 0>", &k);
	cr_expect_eq(k.ki.mta.written, 0);
	cr_expect_eq(k.ki.mta.read, 1);
	for (int i = 1; i < k.l.n; i++)
		kp[i] = buf + 16 * i;
	memset(&s, 0, sizeof(s));
	s.addresses[0][0] = (const void *)ADDR(0, 0);
	s.addresses[0][1] = (const void *)ADDR(0, 1);
	s.numel_for_tensor[0] = 5;
	s.numel_for_tensor[1] = 7;
	s.block_to_tensor[1] = 1;               /* a block each, chunk 0 */
	cr_expect_eq(np_kdecode_outputs(&k.ki, &k.l, kp, &kl, out, 4), 0);
	cr_assert_eq(np_kdecode_reads(&k.ki, &k.l, kp, &kl, in, 4), 2);
	cr_expect_eq(in[0].ptr, ADDR(0, 0));
	cr_expect_eq(in[0].numel, 5);
	cr_expect_eq(in[0].dtype, NP_DT_F32);
	cr_expect_eq(in[1].ptr, ADDR(0, 1));
	cr_expect_eq(in[1].numel, 7);
}

/* A torch built with CUDA < 13: the 4 KB metadata with its own tables. */
Test(kdecode_mta, older_cuda_capacities)
{
	static struct tlm2_old s;
	static struct run r;
	static unsigned char buf[4096];
	static int64_t numel[100];
	struct mview v;
	struct kern k;
	const struct want w = { .written = 1, .read = 3, .dtype = { NP_DT_F32, NP_DT_F32 } };

	find("BinaryOpListAlphaFunctor<float, 2, 2, 0>", &k);
	cr_assert_eq(k.ki.mta.size[1], sizeof(s));
	k.l.p[0].size = sizeof(s);
	for (int p = 1; p < k.l.n; p++)
		k.l.p[p].offset = k.l.p[p].offset - 24200 + (uint32_t)sizeof(s);
	for (int t = 0; t < 100; t++)
		numel[t] = t == 3 ? 700ll * CHUNK : 5 + t;
	r = (struct run){ .k = &k, .w = &w, .max = NP_KD_MAX_OUTPUTS };
	set_params(&r, buf, sizeof(buf), NULL);
	VIEW(v, s, 2, NO_STEPS, START(s));
	/* 320 blocks: tensors 0-2 and chunks 0-316 of tensor 3, then its
	 * chunks 317-636, then 637-699 with tensors 4-66 (64 slots), then
	 * tensors 67-99 */
	run_all(&r, &v, 100, numel, 4);
}

/* A layout that is not the name's: nothing, and no byte past the
 * parameter is read (the metadata ends at an unmapped page). */
Test(kdecode_mta, layout_mismatch_reads_nothing_past_the_parameter)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t span = 10 * (size_t)page;
	unsigned char *map = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				  -1, 0);
	static unsigned char buf[4096];
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	struct kern k;
	void *kp[NP_KD_MAX_PARAMS];

	cr_assert_neq(map, MAP_FAILED);
	cr_assert_eq(mprotect(map + span - page, (size_t)page, PROT_NONE), 0);
	find("FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>", &k);
	for (int i = 1; i < k.l.n; i++)
		kp[i] = buf + 32 * i;
	/* all-ones bytes: block indices and chunks at their largest */
	for (uint32_t size = k.l.p[0].size - 64; size <= k.l.p[0].size + 64; size += 8) {
		struct np_kparams l = k.l;
		unsigned char *md = map + span - page - size;
		memset(md, 0xff, size);
		l.p[0].size = size;
		kp[0] = md;
		for (uint32_t blocks = 1; blocks <= 2241; blocks += 224) {
			struct np_klaunch kl = { .blocks = blocks };
			cr_expect_eq(np_kdecode_outputs(&k.ki, &l, kp, &kl, out, NP_KD_MAX_OUTPUTS), 0,
				     "size %u blocks %u", size, blocks);
		}
	}
	/* the right size, PyTorch's values, at the very end of the mapping */
	struct fused4 *s = (struct fused4 *)(void *)(map + span - page - sizeof(*s));
	struct np_klaunch kl = { .blocks = 3 };
	cr_assert_eq(k.l.p[0].size, sizeof(*s));
	memset(s, 0, sizeof(*s));
	for (int t = 0; t < 3; t++) {
		for (int d = 0; d < 4; d++)
			s->addresses[d][t] = (const void *)ADDR(d, t);
		s->numel_for_tensor[t] = 100;
		s->state_steps_addresses[t] = (const void *)STEP(t);
		s->block_to_tensor[t] = (uint16_t)t;
	}
	kp[0] = s;
	cr_expect_eq(np_kdecode_outputs(&k.ki, &k.l, kp, &kl, out, NP_KD_MAX_OUTPUTS), 9);
	kl.blocks = 2240;       /* blocks past the launch's: not PyTorch's order */
	cr_expect_eq(np_kdecode_outputs(&k.ki, &k.l, kp, &kl, out, NP_KD_MAX_OUTPUTS), 0);
	kl.blocks = 2241;       /* more than the struct has */
	cr_expect_eq(np_kdecode_outputs(&k.ki, &k.l, kp, &kl, out, NP_KD_MAX_OUTPUTS), 0);
	/* every block used, and a grid one bigger: the bound, not the bytes
	 * after block_to_chunk[2239] (the end of a scalar list struct) */
	struct kern ks;
	struct sl_float1 *sl = (struct sl_float1 *)(void *)(map + span - page - sizeof(*sl));
	find("BinaryOpScalarListFunctor<float, 1, 1, 0>, std::divides<float>", &ks);
	cr_assert_eq(ks.l.p[0].size, sizeof(*sl));
	memset(sl, 0, sizeof(*sl));
	sl->addresses[0][0] = (const void *)ADDR(0, 0);
	sl->numel_for_tensor[0] = 2241ll * CHUNK;
	for (int b = 0; b < 2240; b++)
		sl->block_to_chunk[b] = b;
	sl->block_to_chunk[0] = 0;
	kp[0] = sl;
	kl.blocks = 2240;
	cr_expect_eq(np_kdecode_outputs(&ks.ki, &ks.l, kp, &kl, out, NP_KD_MAX_OUTPUTS), 1);
	cr_expect_eq(out[0].numel, 2240ll * CHUNK);
	kl.blocks = 2241;
	cr_expect_eq(np_kdecode_outputs(&ks.ki, &ks.l, kp, &kl, out, NP_KD_MAX_OUTPUTS), 0);
	kp[0] = s;

	/* a parameter count that is not the name's */
	struct np_kparams l = k.l;
	l.n--;
	kl.blocks = 3;
	cr_expect_eq(np_kdecode_outputs(&k.ki, &l, kp, &kl, out, NP_KD_MAX_OUTPUTS), 0);
	/* grad_scale_ptr of another size: not the kernel we know */
	l = k.l;
	l.p[9].size = 4;
	cr_expect_eq(np_kdecode_outputs(&k.ki, &l, kp, &kl, out, NP_KD_MAX_OUTPUTS), 0);
	munmap(map, span);
}

/* Names we do not know give nothing, whatever the bytes. */
Test(kdecode_mta, unknown_functors_and_metadata)
{
	static const char *const names[] = {
		"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<"
		"at::native::(anonymous namespace)::TensorListMetadata<2>, "
		"at::native::(anonymous namespace)::NewFunctor<float, 2, 1, 1>>("
		"at::native::(anonymous namespace)::TensorListMetadata<2>, "
		"at::native::(anonymous namespace)::NewFunctor<float, 2, 1, 1>)",
		"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<"
		"at::native::(anonymous namespace)::TensorListMetadata<6>, "
		"at::native::(anonymous namespace)::UnaryOpFunctor<float, 6, 1, 1>>("
		"at::native::(anonymous namespace)::TensorListMetadata<6>, "
		"at::native::(anonymous namespace)::UnaryOpFunctor<float, 6, 1, 1>)",
		/* depth of the functor not the struct's */
		"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<"
		"at::native::(anonymous namespace)::TensorListMetadata<2>, "
		"at::native::(anonymous namespace)::UnaryOpFunctor<float, 3, 1, 2>>("
		"at::native::(anonymous namespace)::TensorListMetadata<2>, "
		"at::native::(anonymous namespace)::UnaryOpFunctor<float, 3, 1, 2>)",
		/* result list past the depth */
		"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<"
		"at::native::(anonymous namespace)::TensorListMetadata<2>, "
		"at::native::(anonymous namespace)::UnaryOpFunctor<float, 2, 1, 2>>("
		"at::native::(anonymous namespace)::TensorListMetadata<2>, "
		"at::native::(anonymous namespace)::UnaryOpFunctor<float, 2, 1, 2>)",
		/* a fused optimizer without its grad_scale_ptr parameter */
		"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<"
		"at::native::(anonymous namespace)::TensorListMetadata<2>, "
		"at::native::(anonymous namespace)::FusedSgdMathFunctor<float, 2>>("
		"at::native::(anonymous namespace)::TensorListMetadata<2>, "
		"at::native::(anonymous namespace)::FusedSgdMathFunctor<float, 2>)",
		"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<"
		"at::native::(anonymous namespace)::TensorListScalarListMetadata<my::T, 1>, "
		"at::native::(anonymous namespace)::UnaryOpFunctor<float, 1, 1, 0>>("
		"at::native::(anonymous namespace)::TensorListScalarListMetadata<my::T, 1>, "
		"at::native::(anonymous namespace)::UnaryOpFunctor<float, 1, 1, 0>)",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct np_kinfo ki;
		cr_expect_eq(np_kdecode_classify(names[i], &ki), NP_KF_MULTI_TENSOR_APPLY);
		cr_expect_eq(ki.mta.meta, NP_MTA_NONE, "%s", names[i]);
		cr_expect_eq(ki.dtype, -1);
	}
}
