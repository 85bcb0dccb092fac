/* kdecode_mta.c - multi_tensor_apply launches (kdecode_priv.h): the
 * foreach ops and the fused optimizers; the tensor lists a launch writes
 * and reads, from its by-value metadata.
 */
#include <string.h>
#include "kdecode_priv.h"

/* ---- multi_tensor_apply ----
 *
 * PyTorch's foreach ops (_foreach_add_, ..., what torch.optim runs with
 * foreach=True, the default on CUDA) and fused optimizers launch
 *   multi_tensor_apply_kernel<Meta, Functor, Args...>(Meta, Functor, Args...)
 * on a 1-D grid of 512-thread blocks.  Meta, passed by value, is one of
 * three structs (torch 2.14.1, ATen/native/cuda/MultiTensorApply.cuh):
 *
 *   TensorListMetadata<n>:                 FusedOptimizerTensorListMetadata<n>:
 *     const void *addresses[n][T];           const void *addresses[n][T];
 *     int64_t numel_for_tensor[T];           int64_t numel_for_tensor[T];
 *     block_index_t block_to_tensor[B];      const void *state_steps_addresses[T];
 *     int32_t block_to_chunk[B];             block_index_t block_to_tensor[B];
 *     int32_t start_tensor_this_launch;      int32_t block_to_chunk[B];
 *                                            int32_t start_tensor_this_launch;
 *   TensorListScalarListMetadata<scalar_t, n>:
 *     addresses and numel_for_tensor as above, scalar_t scalar_vals[T];
 *     block_to_tensor, block_to_chunk; no start_tensor_this_launch.
 *
 * T (tensors per launch) and B (blocks per launch) come from tables indexed
 * by n - 1, chosen when torch is compiled:
 *   torch >= 2.13 built for CUDA >= 13:
 *                T {770, 448, 336, 252, 210}, scalar lists {672, 448, 336,
 *                252, 210} but complex<double> {504, 420} at n = 1, 2;
 *                B 2240; block_index_t uint16_t.
 *   otherwise (torch 2.11+cu130, the GPU test host's, among them):
 *                T {110, 64, 48, 36, 30}, scalar lists {96, 64, 48, 36, 30}
 *                ({72, 60}); B 320; block_index_t unsigned char.
 * The sizes computed from them match the parameter sizes of the
 * multi_tensor_apply kernels in torch 2.14.1+cu130's cubins (all 1,412;
 * 25,768 bytes for TensorListMetadata<1>, 25,208 for
 * FusedOptimizerTensorListMetadata<5>, ...) and in torch 2.11.0+cu130's
 * (3,368 and 3,288: tests/unit/fixtures/torch_kernels_2.11.tsv); the
 * launch's size picks the table, and a size that matches neither means
 * another struct: no outputs.
 *
 * Which lists a functor writes (ForeachFunctors.cuh, fused_adam_utils.cuh,
 * fused_adagrad_utils.cuh, FusedSgdKernel.cu, ForeachBinaryOpList.cu):
 *  - the foreach functors <T, depth, r_args_depth, res_arg_index> write
 *    list res_arg_index; in place (res_arg_index < r_args_depth) they read
 *    every list, out of place every list but the result;
 *  - ZeroFunctor writes zeros into list 0 and reads nothing;
 *  - CopyFunctor<T, src_t, 2, 1, 1> reads list 0 (src_t), writes list 1 (T);
 *  - FusedAdamMathFunctor<T, depth, mode, amsgrad> (Adam, AdamW; depth 5
 *    with amsgrad): params 0, exp_avg 2, exp_avg_sq 3, max_exp_avg_sq 4;
 *    the grads (1) only when grad_scale_ptr is not NULL (it stores them
 *    unscaled); FusedAdamMathFunctorMP the same, each list with its own
 *    type (template arguments 1..5);
 *  - FusedAdagradMathFunctor<T>: params 0, state_sum 2, grads 1 as above;
 *  - FusedSgdMathFunctor<T, depth>: params 0, momentum_buffer 2 (depth 3),
 *    grads 1 as above.
 * The fused optimizers read every list and the step count in
 * state_steps_addresses.  LpNormFunctor and LpMaxFunctor (_foreach_norm,
 * _foreach_max) write partial results to a pointer argument, no list:
 * they, and functors not listed here, give no outputs; they read list 0
 * (clip_grad_norm_'s gradients, for the generic tier).
 */
#define MTA_CHUNK 65536         /* kChunkSize: the elements one block works on */

enum mta_form {
	MTA_FOREACH = 1,        /* <T, depth, r_args_depth, res_arg_index> */
	MTA_ZERO,               /* the same arguments; reads nothing */
	MTA_COPY,               /* <T, src_t, depth, r_args_depth, res_arg_index> */
	MTA_ADAM,               /* <T, depth, mode, amsgrad> */
	MTA_ADAM_MP,            /* <opmath, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq,
				 *  depth, mode, amsgrad> */
	MTA_ADAGRAD,            /* <T>, depth 3 */
	MTA_SGD,                /* <T, depth> */
	MTA_NORM,               /* <T, norm_type, out_t, depth, ..>: writes no list
				 * (partials to a pointer argument), reads list 0 */
	MTA_MAX,                /* <T, depth, ..>: the same */
};

static const struct {
	const char *name;
	enum mta_form form;
} mta_functors[] = {
	{ "BinaryOpScalarFunctor", MTA_FOREACH },
	{ "BinaryOpScalarListFunctor", MTA_FOREACH },
	{ "BinaryOpListAlphaFunctor", MTA_FOREACH },
	{ "BinaryOpScalarTensorFunctor", MTA_FOREACH },
	{ "UnaryOpFunctor", MTA_FOREACH },
	{ "PointwiseOpScalarFunctor", MTA_FOREACH },
	{ "PointwiseOpScalarListFunctor", MTA_FOREACH },
	{ "PointwiseOpScalar0dTensorFunctor", MTA_FOREACH },
	{ "TernaryOpListFunctor", MTA_FOREACH },
	{ "TernaryOpScalarFunctor", MTA_FOREACH },
	{ "TernaryOpScalarListFunctor", MTA_FOREACH },
	{ "ZeroFunctor", MTA_ZERO },
	{ "CopyFunctor", MTA_COPY },
	{ "FusedAdamMathFunctor", MTA_ADAM },
	{ "FusedAdamMathFunctorMP", MTA_ADAM_MP },
	{ "FusedAdagradMathFunctor", MTA_ADAGRAD },
	{ "FusedSgdMathFunctor", MTA_SGD },
	{ "LpNormFunctor", MTA_NORM },
	{ "LpMaxFunctor", MTA_MAX },
};

/* Capacities, [0] CUDA >= 13, [1] older (see above). */
static const uint16_t mta_tensors[2][NP_KD_MTA_DEPTH] = {
	{ 770, 448, 336, 252, 210 }, { 110, 64, 48, 36, 30 } };
static const uint16_t mta_tensors_scalarlist[2][NP_KD_MTA_DEPTH] = {
	{ 672, 448, 336, 252, 210 }, { 96, 64, 48, 36, 30 } };
static const uint16_t mta_tensors_complex_double[2][2] = { { 504, 420 }, { 72, 60 } };
static const uint16_t mta_blocks[2] = { 2240, 320 };

/* Where the fields of one metadata struct lie. */
struct mta_geom {
	uint32_t max_tensors, max_blocks, index_size;
	uint32_t numel, extra, b2t, b2c;        /* offsets; extra: state steps */
	uint32_t size;
};

static uint32_t align_up(uint32_t v, uint32_t a)
{
	return (v + a - 1) / a * a;
}

/* The struct's layout under capacity table gen, as nvcc lays it out:
 * members in order, each at its alignment, the size a multiple of the
 * largest alignment. */
static void mta_geom(const struct np_kmta *m, int gen, struct mta_geom *g)
{
	uint32_t n = m->depth, off, align = 8;

	if (m->meta != NP_MTA_SCALARLIST)
		g->max_tensors = mta_tensors[gen][n - 1];
	else if (m->sval_size == 16 && n <= 2)  /* c10::complex<double> */
		g->max_tensors = mta_tensors_complex_double[gen][n - 1];
	else
		g->max_tensors = mta_tensors_scalarlist[gen][n - 1];
	g->max_blocks = mta_blocks[gen];
	g->index_size = gen ? 1 : 2;
	off = n * g->max_tensors * 8;                   /* addresses */
	g->numel = off;
	off += g->max_tensors * 8;
	g->extra = off;
	if (m->meta == NP_MTA_SCALARLIST) {             /* scalar_vals */
		off = align_up(off, m->sval_align) + g->max_tensors * m->sval_size;
		if (m->sval_align > align)
			align = m->sval_align;
	} else if (m->meta == NP_MTA_FUSED) {           /* state_steps_addresses */
		off += g->max_tensors * 8;
	}
	g->b2t = off;
	g->b2c = align_up(off + g->max_blocks * g->index_size, 4);
	off = g->b2c + g->max_blocks * 4;
	if (m->meta != NP_MTA_SCALARLIST)
		off += 4;                               /* start_tensor_this_launch */
	g->size = align_up(off, align);
}

/* sizeof and alignof a scalar list's scalar_t (at::opmath_type of the
 * tensors' type), or 0. */
static int sval_size(struct span t, int *align)
{
	static const struct {
		const char *name;
		uint8_t size, align;
	} s[] = {
		{ "bool", 1, 1 }, { "signed char", 1, 1 }, { "unsigned char", 1, 1 },
		{ "short", 2, 2 }, { "int", 4, 4 }, { "long", 8, 8 }, { "float", 4, 4 },
		{ "double", 8, 8 }, { "c10::Half", 2, 2 }, { "c10::BFloat16", 2, 2 },
		{ "c10::complex<float>", 8, 8 }, { "c10::complex<double>", 16, 16 },
	};
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		if (span_eq(strip_cv(t), s[i].name)) {
			*align = s[i].align;
			return s[i].size;
		}
	return 0;
}

/* The metadata struct from Meta<..>: kind, depth, scalar type. */
static int mta_meta(struct span meta, struct np_kmta *m)
{
	struct span name, targs, rest;
	int align = 0, depth;

	if (!split_name(meta, &name, &targs, &rest) || !targs.p || rest.n)
		return -1;
	if (span_eq(name, "TensorListMetadata")) {
		m->meta = NP_MTA_PLAIN;
	} else if (span_eq(name, "FusedOptimizerTensorListMetadata")) {
		m->meta = NP_MTA_FUSED;
	} else if (span_eq(name, "TensorListScalarListMetadata")) {
		m->meta = NP_MTA_SCALARLIST;
		m->sval_size = (uint8_t)sval_size(nth_item(targs, 0), &align);
		m->sval_align = (uint8_t)align;
		if (!m->sval_size)
			return -1;
	} else {
		return -1;
	}
	depth = targ_int(targs, m->meta == NP_MTA_SCALARLIST);
	if (depth < 1 || depth > NP_KD_MTA_DEPTH)
		return -1;
	m->depth = (uint8_t)depth;
	return 0;
}

/* Fills ki->mta from the metadata and functor template arguments; leaves
 * it NP_MTA_NONE when either is not one described above. */
void kd_mta_classify(struct np_kinfo *ki, struct span targs)
{
	struct np_kmta m = { 0 };
	struct span name, fargs, rest;
	enum mta_form form = 0;
	int depth, all, why = NP_KDT_UNKNOWN, first = -1;
	size_t i;

	if (mta_meta(nth_item(targs, 0), &m) ||
	    !split_name(nth_item(targs, 1), &name, &fargs, &rest) || !fargs.p)
		return;
	for (i = 0; i < sizeof(mta_functors) / sizeof(mta_functors[0]); i++)
		if (span_eq(name, mta_functors[i].name))
			form = mta_functors[i].form;
	all = (1 << m.depth) - 1;
	m.scale_param = -1;
	switch (form) {
	case MTA_FOREACH:
	case MTA_ZERO:
	case MTA_COPY: {
		int o = form == MTA_COPY, r_depth = targ_int(fargs, o + 2);
		int res = targ_int(fargs, o + 3);
		depth = targ_int(fargs, o + 1);
		if (r_depth < 1 || r_depth > m.depth || res < 0 || res >= m.depth)
			return;
		m.written = (uint8_t)(1 << res);
		m.read = (uint8_t)(res >= r_depth ? all & ~(1 << res) : all);
		if (form == MTA_ZERO)
			m.read = 0;
		break;
	}
	case MTA_ADAM:
	case MTA_ADAM_MP:
		depth = targ_int(fargs, form == MTA_ADAM ? 1 : 6);
		if (m.meta != NP_MTA_FUSED || (depth != 4 && depth != 5))
			return;
		m.written = (uint8_t)(all & ~2);
		m.scale_param = 9;
		break;
	case MTA_ADAGRAD:
		depth = 3;
		if (m.meta != NP_MTA_FUSED)
			return;
		m.written = 5;
		m.scale_param = 8;
		break;
	case MTA_SGD:
		depth = targ_int(fargs, 1);
		if (depth != 2 && depth != 3)
			return;
		m.written = (uint8_t)(all & ~2);
		m.scale_param = 10;
		break;
	case MTA_NORM:
	case MTA_MAX:   /* no output: a reader of the gradients it norms */
		depth = targ_int(fargs, form == MTA_NORM ? 3 : 1);
		m.read = 1;
		break;
	default:
		return;
	}
	if (depth != m.depth)
		return;
	if (m.scale_param >= 0) {
		/* (.., bool maximize, float const* grad_scale_ptr, float const* found_inf_ptr) */
		if (ki->nsig <= m.scale_param || ki->sig[m.scale_param].kind < NP_KP_IN_PTR)
			return;
		m.written_if_scale = 2;
		m.read = (uint8_t)all;
	}
	for (int d = 0; d < m.depth; d++) {
		/* the tensors' type: T, or per list for the mixed-precision Adam
		 * and the copy's source */
		int arg = form == MTA_ADAM_MP ? 1 + d : form == MTA_COPY && d == 0 ? 1 : 0;
		int w, dt = type_dtype(nth_item(fargs, arg), &w);
		m.dtype[d] = (int8_t)dt;
		if (first < 0 && (m.written >> d & 1)) {
			first = d;
			ki->dtype = dt;
			why = w;
		}
	}
	ki->dtype_why = ki->dtype >= 0 ? NP_KDT_KNOWN : why;
	for (int gen = 0; gen < 2; gen++) {
		struct mta_geom g;
		mta_geom(&m, gen, &g);
		m.size[gen] = g.size;
	}
	ki->mta = m;
}

/* Fields of the metadata bytes md (all offsets inside g->size). */
static uint64_t md_u64(const unsigned char *md, uint32_t at)
{
	uint64_t v;
	memcpy(&v, md + at, sizeof(v));
	return v;
}

static uint32_t md_tensor(const unsigned char *md, const struct mta_geom *g, uint32_t b)
{
	uint16_t v;
	if (g->index_size == 1)
		return md[g->b2t + b];
	memcpy(&v, md + g->b2t + 2 * b, sizeof(v));
	return v;
}

static int32_t md_chunk(const unsigned char *md, const struct mta_geom *g, uint32_t b)
{
	int32_t v;
	memcpy(&v, md + g->b2c + 4 * b, sizeof(v));
	return v;
}

static uint64_t md_address(const unsigned char *md, const struct mta_geom *g, int list,
			   uint32_t t)
{
	return md_u64(md, 8 * ((uint32_t)list * g->max_tensors + t));
}

/* What output (list r, slot t) reads, from element `from` on: the same
 * slot of every list the functor reads (in place, its own address too),
 * the fused optimizers' step count, and the pointer words of the
 * functor's arguments (lr_ptr, grad_scale_ptr, a scalar tensor, a
 * lambda's captures).  Lists of a type that is never checked cannot hold
 * a known-dirty range and are left out. */
static void mta_inputs(const struct np_kinfo *ki, const struct np_kparams *l, void *const *kp,
		       const struct mta_geom *g, uint32_t t, uint64_t from, struct np_kbuf *o)
{
	const struct np_kmta *m = &ki->mta;
	const unsigned char *md = kp[0];
	int k = 0;

	for (int d = 0; d < m->depth; d++) {
		uint64_t a = md_address(md, g, d, t);
		if ((m->read >> d & 1) && m->dtype[d] >= 0 && a && k < NP_KD_BUF_INPUTS)
			o->in[k++] = a + from * np_dtype_size((enum np_dtype)m->dtype[d]);
	}
	if (m->meta == NP_MTA_FUSED && md_u64(md, g->extra + 8 * t) && k < NP_KD_BUF_INPUTS)
		o->in[k++] = md_u64(md, g->extra + 8 * t);
	for (int i = 2; i < l->n; i++)
		param_words(l, kp, i, o->in, &k, NP_KD_BUF_INPUTS);
	o->n_in = k;
}

/* Which chunks of which slots one multi_tensor_apply launch works on:
 * slots 0..last, from chunk chunk0 of slot 0 to chunk chunk_last of slot
 * last, and which lists it writes.  0 when the metadata does not fit the
 * launch (a misread). */
struct mta_span {
	struct mta_geom g;
	uint32_t last;
	int32_t chunk0, chunk_last;
	uint8_t written;
};

static int mta_span_of(const struct np_kinfo *ki, const struct np_kparams *l, void *const *kp,
		       uint32_t nblocks, struct mta_span *sp)
{
	const struct np_kmta *m = &ki->mta;
	const unsigned char *md = kp[0];
	int64_t numel = 0, nchunks = 0;
	int gen;

	if (m->meta == NP_MTA_NONE || !nblocks || ki->nsig < 0 || l->n != ki->nsig ||
	    l->p[0].offset != 0)
		return 0;
	for (gen = 0; gen < 2 && l->p[0].size != m->size[gen]; gen++)
		;
	if (gen == 2)
		return 0;
	mta_geom(m, gen, &sp->g);
	if (nblocks > sp->g.max_blocks)
		return 0;
	sp->written = m->written;
	if (m->written_if_scale) {
		if (l->p[m->scale_param].size != 8)
			return 0;
		if (word_at(kp, m->scale_param, 0))
			sp->written |= m->written_if_scale;
	}
	/*
	 * Block b works on chunk block_to_chunk[b] of slot block_to_tensor[b]:
	 * slots 0, 1, .. in turn, each with its chunks in order; every slot
	 * but the first starts at chunk 0, every slot but the last ends with
	 * its tensor's last chunk.  Anything else is a misread.
	 */
	sp->last = 0;
	sp->chunk_last = 0;
	for (uint32_t b = 0; b < nblocks; b++) {
		uint32_t t = md_tensor(md, &sp->g, b);
		int32_t c = md_chunk(md, &sp->g, b);
		int fresh = b == 0 || t != sp->last;

		if (b == 0 ? t != 0 || c < 0 :
		    t == sp->last ? c != sp->chunk_last + 1 :
		    t != sp->last + 1 || c != 0 || sp->chunk_last != nchunks - 1)
			return 0;
		if (fresh) {
			if (t >= sp->g.max_tensors)
				return 0;
			memcpy(&numel, md + sp->g.numel + 8 * t, sizeof(numel));
			if (numel <= 0)         /* an empty tensor gets no block */
				return 0;
			nchunks = (numel + MTA_CHUNK - 1) / MTA_CHUNK;
		}
		if (c >= nchunks)
			return 0;
		sp->last = t;
		sp->chunk_last = c;
	}
	sp->chunk0 = md_chunk(md, &sp->g, 0);
	return 1;
}

/* The elements [*from, *to) of slot t that the launch of sp works on. */
static void mta_range(const unsigned char *md, const struct mta_span *sp, uint32_t t,
		      uint64_t *from, uint64_t *to)
{
	int64_t numel;
	memcpy(&numel, md + sp->g.numel + 8 * t, sizeof(numel));
	*from = t == 0 ? (uint64_t)sp->chunk0 * MTA_CHUNK : 0;
	*to = t == sp->last ? (uint64_t)(sp->chunk_last + 1) * MTA_CHUNK : (uint64_t)numel;
	if (*to > (uint64_t)numel)
		*to = (uint64_t)numel;
}

/* The list entries a multi_tensor_apply launch writes (see the layouts
 * above), list by list in list order (params first), slots in order.
 * Each is the run of chunks this launch's blocks write. */
int kd_mta_outputs(const struct np_kinfo *ki, const struct np_kparams *l, void *const *kp,
		       uint32_t nblocks, struct emit *e)
{
	const struct np_kmta *m = &ki->mta;
	const unsigned char *md = kp[0];
	struct mta_span sp;

	if (!mta_span_of(ki, l, kp, nblocks, &sp))
		return 0;
	for (int r = 0; r < m->depth; r++) {
		unsigned esz;
		if (!(sp.written >> r & 1) || m->dtype[r] < 0)
			continue;
		esz = np_dtype_size((enum np_dtype)m->dtype[r]);
		for (uint32_t t = 0; t <= sp.last; t++) {
			uint64_t base = md_address(md, &sp.g, r, t), from, to;
			struct np_kbuf *o;
			if (!base)
				return 0;
			mta_range(md, &sp, t, &from, &to);
			o = emit_next(e);
			if (!o)
				continue;
			o->ptr = base + from * esz;
			o->numel = to - from;
			o->dtype = (enum np_dtype)m->dtype[r];
			o->how = NP_KH_TENSOR_LIST;
			mta_inputs(ki, l, kp, &sp.g, t, from, o);
		}
	}
	return e->n;
}

/* The lists a multi_tensor_apply launch only reads (an optimizer's
 * gradients), slot by slot, from each tensor's start: the generic tier's
 * reads (np_kdecode_reads).  A tensor whose first chunks an earlier
 * launch took is left out: its start is not read here. */
int kd_mta_reads(const struct np_kinfo *ki, const struct np_kparams *l, void *const *kp,
		     uint32_t nblocks, struct np_kread *out, int max)
{
	const struct np_kmta *m = &ki->mta;
	const unsigned char *md = kp[0];
	struct mta_span sp;
	int n = 0;

	if (!mta_span_of(ki, l, kp, nblocks, &sp))
		return 0;
	for (int r = 0; r < m->depth; r++) {
		if (!(m->read >> r & 1) || (sp.written >> r & 1) || m->dtype[r] < 0)
			continue;
		for (uint32_t t = 0; t <= sp.last && n < max; t++) {
			uint64_t base = md_address(md, &sp.g, r, t), from, to;
			mta_range(md, &sp, t, &from, &to);
			if (base && from == 0 && to > 0)
				out[n++] = (struct np_kread){ .ptr = base, .numel = to,
							      .dtype = (enum np_dtype)m->dtype[r] };
		}
	}
	return n;
}
