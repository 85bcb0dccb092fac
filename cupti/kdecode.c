/* kdecode.c - which arguments of one CUDA kernel launch are its outputs.
 *
 * A kernel is classified once, by its demangled name (read in place:
 * kname.h): its family, its parameters' types, and what its family's
 * reader needs from the template arguments.  Each launch is then read by
 * its family's reader, here or in the family's own file
 * (kdecode_priv.h lists them).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "kdecode.h"
#include "kdecode_priv.h"
#include "kdecode_index.h"
#include "kdecode_reduce.h"

/* Whether a pointee's trailing qualifiers include const. */
static int const_qualified(struct span t)
{
	for (;;) {
		t = trim(t);
		if (span_ends(t, " const"))
			return 1;
		if (!span_ends(t, " volatile"))
			return 0;
		t.n -= 9;
	}
}

/* One signature parameter: scalar, aggregate or pointer, and the pointee. */
static void classify_param(struct span t, struct np_ksig *sig)
{
	int why, d;
	t = strip_cv(t);
	sig->dtype = -1;
	sig->why = NP_KDT_UNKNOWN;
	if (!t.n || span_ends(t, "&")) {
		sig->kind = NP_KP_UNPARSED;
		return;
	}
	if (!span_ends(t, "*")) {
		d = type_dtype(t, &why);
		sig->kind = (d >= 0 || why == NP_KDT_UNCHECKABLE) ? NP_KP_SCALAR : NP_KP_AGGREGATE;
		return;
	}
	t.n--;                          /* the pointee, with its qualifiers */
	t = trim(t);
	if (span_ends(t, "*") || span_eq(strip_cv(t), "void")) {
		sig->kind = NP_KP_OTHER_PTR;
		return;
	}
	sig->kind = const_qualified(t) ? NP_KP_IN_PTR : NP_KP_OUT_PTR;
	sig->dtype = (int8_t)type_dtype(t, &why);
	sig->why = (uint8_t)why;
}

/* Fills ki->sig from the parameter list; nsig -1 if there is none. */
static void parse_signature(struct span params, struct np_kinfo *ki)
{
	struct span it;
	ki->nsig = 0;
	if (!trim(params).n)
		return;                 /* f(): no parameters */
	while (next_item(&params, &it)) {
		if (ki->nsig == NP_KD_MAX_PARAMS) {
			ki->nsig = -1;  /* too many to match any layout */
			return;
		}
		classify_param(it, &ki->sig[ki->nsig++]);
	}
}

static const char *const layer_norm_names[] = {
	"vectorized_layer_norm_kernel", "LayerNormForwardCUDAKernel", "RowwiseMomentsCUDAKernel",
	"ComputeInternalGradientsCUDAKernel", "ComputeGradientFusedParamsCUDAKernel",
	"LayerNormBackwardCUDAKernel",
};

static const char *const lambda_kernels[] = {
	"elementwise_kernel", "index_elementwise_kernel", "_scatter_gather_elementwise_kernel",
	"distribution_elementwise_grid_stride_kernel",
};

static enum np_kfamily family_of(struct span name, const struct np_kinfo *ki)
{
	if (span_eq(name, "vectorized_elementwise_kernel"))
		return NP_KF_VEC_ELEMENTWISE;
	if (span_eq(name, "unrolled_elementwise_kernel"))
		return NP_KF_UNROLLED_ELEMENTWISE;
	if (IN_LIST(name, lambda_kernels))
		return NP_KF_LAMBDA_ELEMENTWISE;
	if (span_eq(name, "reduce_kernel"))
		return NP_KF_REDUCE;
	if (span_has(name, "SoftMax") || span_starts(name, "softmax_warp_"))
		return NP_KF_SOFTMAX;
	if (IN_LIST(name, layer_norm_names) || span_starts(name, "layer_norm_grad_input_kernel") ||
	    span_starts(name, "GammaBetaBackward") || span_starts(name, "GammaBeta1dBackward"))
		return NP_KF_LAYER_NORM;
	if (span_starts(name, "batch_norm_"))
		return NP_KF_BATCH_NORM;
	if (span_starts(name, "CatArrayBatchedCopy"))
		return NP_KF_CAT;
	if (span_eq(name, "multi_tensor_apply_kernel"))
		return NP_KF_MULTI_TENSOR_APPLY;
	for (int i = 0; i < ki->nsig; i++)
		if (ki->sig[i].kind >= NP_KP_IN_PTR)
			return NP_KF_EXPLICIT;
	return NP_KF_UNKNOWN;
}

/* What reading a reduce_kernel's ReduceOp needs from the name: the
 * output_vec_size, the index type, and whether a second output holds
 * values (ops_t projecting a pair of them) rather than indices. */
static void reduce_classify(struct np_kinfo *ki, struct span targs, struct span reduce_op)
{
	struct span index = trim(nth_item(reduce_op, 2)), ops = trim(nth_item(reduce_op, 1));
	int ovs = targ_int(targs, 1);

	if (ovs < 1 || ovs > 8)
		return;
	ki->red.ovs = (uint8_t)ovs;
	ki->red.index_size = span_eq(index, "unsigned int") ? 4 :
			     span_eq(index, "unsigned long") ? 8 : 0;
	ki->red.pair_values = span_starts(ops, "at::native::WelfordOps<") ||
			      span_starts(ops, "at::native::MinMaxOps<");
}

/* CatArrayBatchedCopy[_contig|_alignedK_contig|_vectorized]<OpaqueType<N>,
 * IndexType, Dims, batch_size, stride_size, ..>: the metadata's shape, and
 * for _vectorized<.., alignment, elems_per_vec> the vector (kdecode_cat.h). */
static void cat_classify(struct np_kinfo *ki, struct span name, struct span targs)
{
	struct span t = trim(nth_item(targs, 0)), index = trim(nth_item(targs, 1));
	struct np_cat_shape sh = { 0 };
	long at = span_rfind(t, "OpaqueType<");
	int dims = targ_int(targs, 2), batch = targ_int(targs, 3), stride = targ_int(targs, 4);
	int per_vec = span_eq(name, "CatArrayBatchedCopy_vectorized") ? targ_int(targs, 6) : 1;

	if (!(span_eq(name, "CatArrayBatchedCopy") || span_eq(name, "CatArrayBatchedCopy_contig") ||
	      span_eq(name, "CatArrayBatchedCopy_alignedK_contig") ||
	      span_eq(name, "CatArrayBatchedCopy_vectorized")) ||
	    at < 0 || dims < 1 || dims > 4 || batch < 1 || batch > 1024 || stride < 1 ||
	    stride > 1024 || per_vec < 1 || per_vec > 16)
		return;
	sh.esize = (uint32_t)atoi(t.p + at + 11);
	sh.index_size = span_eq(index, "unsigned int") ? 4 : span_eq(index, "unsigned long") ? 8 : 0;
	if (!sh.index_size || (sh.esize != 1 && sh.esize != 2 && sh.esize != 4 && sh.esize != 8))
		return;
	sh.dims = (uint32_t)dims;
	sh.batch = (uint32_t)batch;
	sh.stride_size = (uint32_t)stride;
	sh.per_vec = (uint32_t)per_vec;
	ki->cat = sh;
}

/* ---- dropout ----
 *
 * nn.Dropout's forward on CUDA (native_dropout, Dropout.cu):
 *   fused_dropout_kernel_vec<scalar_t, accscalar_t, IndexType, ADims, VEC,
 *       mask_t> and fused_dropout_kernel<.., ADims, BDims, mask_t>
 *   (TensorInfo<const scalar_t, IndexType> a, TensorInfo<scalar_t,
 *    IndexType> b, TensorInfo<mask_t, IndexType> c, IndexType
 *    totalElements, accscalar_t p, PhiloxCudaState)
 * b = a * mask / p for all totalElements, grid-stride: whatever the grid,
 * all of b is written.  b is read when its TensorInfo is one dense range
 * of totalElements (kdecode_index.h), a (the input) likewise for the
 * generic tier; the mask c (bool or uint8) is not checkable.  Its input
 * is often a GEMM's output (an MLP's c_proj), whose first reader it is. */
static void dropout_classify(struct np_kinfo *ki, struct span targs)
{
	int why, d = type_dtype(nth_item(targs, 0), &why);
	struct span index = trim(nth_item(targs, 2));

	ki->index.index_size = span_eq(index, "unsigned int") ? 4 : span_eq(index, "unsigned long") ? 8 : 0;
	if (!ki->index.index_size)
		return;
	ki->family = NP_KF_DROPOUT;
	ki->dtype = d;
	ki->dtype_why = d >= 0 ? NP_KDT_KNOWN : (enum np_kdtype_why)why;
}

/* ---- _foreach_norm's and _foreach_max's per-tensor results ----
 *
 * torch._foreach_norm (clip_grad_norm_'s per-parameter norms, before
 * torch.stack gathers them) runs a multi_tensor_apply LpNormFunctor that
 * leaves max_chunks_per_tensor partial sums a tensor in output_per_tensor
 * (undecoded: no list is written), then
 *   lpnorm_cleanup<T, norm_type, out_t, apply_root, out_opmath_t>
 *       <<<tensors, 512>>>(const out_opmath_t *output_per_tensor,
 *                          TensorListAddresses addr_struct, int max_chunks_per_tensor)
 * whose block b reduces partials [b * max_chunks, (b + 1) * max_chunks)
 * into the 0-dim out_t at addr_struct.addresses[b]; _foreach_max's
 * lpmax_cleanup<T> the same, all in T.  TensorListAddresses is
 * MAX_TENSORS_PER_KERNEL pointers by value: 400 in torch 2.11 (3,200
 * bytes), 3,200 in 2.14.1 (25,600); ForeachReduceOp.cu.  Each result is
 * checked, one element, judged on its own partials; the partials are a
 * read for the generic tier (LpNormFunctor's output). */
static void cleanup_classify(struct np_kinfo *ki, struct span name, struct span targs)
{
	int why, out = type_dtype(nth_item(targs, span_eq(name, "lpmax_cleanup") ? 0 : 2), &why);

	if (ki->nsig != 3 || ki->sig[0].kind != NP_KP_IN_PTR || ki->sig[2].kind != NP_KP_SCALAR)
		return;
	ki->family = NP_KF_NORM_CLEANUP;
	ki->dtype = out;
	ki->dtype_why = out >= 0 ? NP_KDT_KNOWN : (enum np_kdtype_why)why;
	ki->in_dtype = ki->sig[0].dtype;    /* the partials' out_opmath_t */
}

/* b's and a's elements, and b's and a's addresses; 0 when the launch is
 * not read as above. */
static uint64_t dropout_view(const struct np_kinfo *ki, const struct np_kparams *l,
			     void *const *kp, uint64_t *b, uint64_t *a, uint64_t *a_numel)
{
	uint32_t isz = ki->index.index_size, info = np_index_info_size(isz);
	uint64_t total, n;

	if (ki->dtype < 0 || l->n != 6 || !info || l->p[0].size != info || l->p[1].size != info ||
	    l->p[2].size != info || l->p[3].size != isz)
		return 0;
	total = isz == 4 ? np_u32_at(kp[3], 0) : np_u64_at(kp[3], 0);
	n = np_tensorinfo_numel(kp[1], isz);
	if (!total || n != total)
		return 0;
	*b = np_u64_at(kp[1], 0);
	*a = np_u64_at(kp[0], 0);
	*a_numel = np_tensorinfo_numel(kp[0], isz) == total ? total : 0;
	return total;
}

/* indexSelect{Small,Large}Index<T, IndicesType, IndexType, DstDim, SrcDim,
 * IdxDim[, IndexIsMajor]>: T and IndexType (kdecode_index.h). */
static void index_classify(struct np_kinfo *ki, struct span name, struct span targs)
{
	struct span index = trim(nth_item(targs, 2)), major = trim(nth_item(targs, 6));
	int why, d = type_dtype(nth_item(targs, 0), &why);
	int large = span_eq(name, "indexSelectLargeIndex");

	if (d < 0 || (large && !span_eq(major, "true") && !span_eq(major, "false")))
		return;
	ki->index.index_size = span_eq(index, "unsigned int") ? 4 : span_eq(index, "unsigned long") ? 8 : 0;
	if (!ki->index.index_size)
		return;
	ki->index.large = (uint8_t)large;
	ki->index.index_major = large && span_eq(major, "true");
	ki->family = NP_KF_INDEX;
	ki->dtype = d;
	ki->dtype_why = NP_KDT_KNOWN;
}

/* Output dtype of the families that name it in their template arguments. */
static void template_dtype(struct np_kinfo *ki, struct span targs)
{
	int why = NP_KDT_UNKNOWN;
	struct span name, sub, rest;

	switch (ki->family) {
	case NP_KF_VEC_ELEMENTWISE:
	case NP_KF_UNROLLED_ELEMENTWISE:
	case NP_KF_LAMBDA_ELEMENTWISE:
		kd_elementwise_classify(ki, targs);
		return;
	case NP_KF_REDUCE:      /* ReduceOp<scalar_t, ops_t, index_t, out_scalar_t, ..> */
		if (split_name(nth_item(targs, 2), &name, &sub, &rest) && span_eq(name, "ReduceOp")) {
			/* a complex result (a spectrum's sum): its real view */
			int pairs = 0;
			ki->dtype = type_dtype_pairs(nth_item(sub, 3), &why, &pairs);
			ki->pairs = (uint8_t)(ki->dtype >= 0 && pairs);
			/* and its input, scalar_t: what it reads (np_kdecode_reads) */
			int in_why;
			int in_pairs = 0;
			ki->in_dtype = type_dtype_pairs(nth_item(sub, 0), &in_why, &in_pairs);
			ki->in_pairs = (uint8_t)(ki->in_dtype >= 0 && in_pairs);
			reduce_classify(ki, targs, sub);
		}
		ki->dtype_why = why;
		return;
	case NP_KF_MULTI_TENSOR_APPLY:  /* sets ki->dtype itself */
		kd_mta_classify(ki, targs);
		return;
	default:
		return;
	}
}

/* Output dtype of the families whose signature names their pointers. */
static void signature_dtype(struct np_kinfo *ki)
{
	for (int i = 0; i < ki->nsig; i++)
		if (ki->sig[i].kind == NP_KP_OUT_PTR) {
			ki->dtype = ki->sig[i].dtype;
			ki->dtype_why = ki->sig[i].why;
			return;
		}
}

/* Scalar outputs.  nll_loss (cross_entropy's second half) reduced to a
 * mean or sum writes two scalars, the loss and the total weight of the
 * targets it counted, in one block (LossNLL.cu):
 *   nll_loss_forward_reduce_cuda_kernel_2d<scalar_t, accscalar_t, index_t>
 *       (scalar_t* output, scalar_t* total_weight, scalar_t const* input,
 *        index_t const* target, scalar_t const* weights, bool size_average,
 *        nframe, ndim, n_classes, ignore_index)
 * and the _1d kernel for a single sample; newer torch moves total_weight
 * after weights.  Either way its non-const floating pointers are exactly
 * those two scalars.  A batch whose every target is ignore_index makes
 * the mean 0 / 0 = NaN here: a classic NaN loss.  Older torch (1.x)
 * declares its inputs non-const too: with more than two such pointers
 * the kernel is left unsized. */
static const char *const scalar_output_kernels[] = {
	"nll_loss_forward_reduce_cuda_kernel_2d",
	"nll_loss_forward_reduce_cuda_kernel_1d",
};

static void scalar_classify(struct np_kinfo *ki, struct span name)
{
	int outs = 0;
	if (ki->family != NP_KF_EXPLICIT || !IN_LIST(name, scalar_output_kernels))
		return;
	for (int i = 0; i < ki->nsig; i++)
		outs += ki->sig[i].kind == NP_KP_OUT_PTR && ki->sig[i].dtype >= 0;
	ki->scalar_outputs = outs == 2;
}

/* Counted outputs.  Pooling kernels borrowed from Caffe loop
 *   CUDA_KERNEL_LOOP(index, nthreads) { ... top_data[index] = ...; }
 * over their first parameter, grid-stride: whatever the grid, they write
 * all of [0, nthreads) of their one floating output, which the host
 * allocates dense (AveragePool2d.cu, DilatedMaxPool2d.cu):
 *   avg_pool2d_out_cuda_frame[_nhwc]<T, acc>(int count = output.numel(),
 *       T const* input, .., T* output, ..)
 *   avg_pool2d_backward_out_cuda_frame[_nhwc]<T, acc, index_t>(index_t
 *       count = grad_input.numel(), T const* grad_output, .., T* grad_input, ..)
 *   max_pool_forward_nchw<T, index_t>(index_t count = output.numel(),
 *       T const* input, .., T* output, int64_t* indices)
 * (parameter counts and the output's place from torch 2.14.1's parameter
 * lists).  Their inputs' sizes are not read: the parameters between
 * changed across versions. */
static const struct {
	const char *name;
	int8_t nsig, out;
} counted_kernels[] = {
	{ "avg_pool2d_out_cuda_frame", 17, 13 },
	{ "avg_pool2d_out_cuda_frame_nhwc", 17, 13 },
	{ "avg_pool2d_backward_out_cuda_frame", 17, 13 },
	{ "avg_pool2d_backward_out_cuda_frame_nhwc", 17, 13 },
	{ "max_pool_forward_nchw", 17, 15 },
};

static void counted_classify(struct np_kinfo *ki, struct span name)
{
	size_t i;
	int outs = 0;

	for (i = 0; i < sizeof(counted_kernels) / sizeof(counted_kernels[0]); i++)
		if (span_eq(name, counted_kernels[i].name) && ki->nsig == counted_kernels[i].nsig)
			break;
	if (i == sizeof(counted_kernels) / sizeof(counted_kernels[0]) ||
	    ki->family != NP_KF_EXPLICIT || ki->sig[0].kind != NP_KP_SCALAR)
		return;
	for (int p = 0; p < ki->nsig; p++)
		outs += ki->sig[p].kind == NP_KP_OUT_PTR && ki->sig[p].dtype >= 0;
	if (outs != 1 || ki->sig[counted_kernels[i].out].kind != NP_KP_OUT_PTR ||
	    ki->sig[counted_kernels[i].out].dtype < 0)
		return;
	ki->counted = 1;
}

int np_kdecode_classify(const char *demangled, struct np_kinfo *ki)
{
	struct span s = { demangled, demangled ? strlen(demangled) : 0 }, name, targs, rest;
	const char *open;

	memset(ki, 0, sizeof(*ki));
	ki->dtype = -1;
	ki->in_dtype = -1;
	ki->nsig = -1;
	s = trim(s);
	if (span_starts(s, "void "))
		s = span_of(s.p + 5, s.p + s.n);
	if (!split_name(s, &name, &targs, &rest))
		return ki->family;
	rest = trim(rest);
	if (rest.n && rest.p[0] == '(' && rest.p[rest.n - 1] == ')' &&
	    (open = group_start(rest.p, rest.p + rest.n - 1)) == rest.p)
		parse_signature(span_of(rest.p + 1, rest.p + rest.n - 1), ki);
	ki->family = family_of(name, ki);
	template_dtype(ki, targs);
	if (ki->family == NP_KF_SOFTMAX || ki->family == NP_KF_LAYER_NORM ||
	    ki->family == NP_KF_BATCH_NORM)
		kd_rows_classify(ki, name, targs);
	if (ki->family >= NP_KF_SOFTMAX && ki->family != NP_KF_MULTI_TENSOR_APPLY)
		signature_dtype(ki);
	scalar_classify(ki, name);
	counted_classify(ki, name);
	if (ki->family == NP_KF_BATCH_NORM)
		kd_acc_classify(ki, name, targs);
	if (ki->family == NP_KF_CAT && targs.p)
		cat_classify(ki, name, targs);
	if (span_starts(name, "flash_") && span_starts(s, "pytorch_flash::") && targs.p)
		kd_flash_classify(ki, name, targs);
	if ((span_eq(name, "indexSelectSmallIndex") || span_eq(name, "indexSelectLargeIndex")) &&
	    targs.p)
		index_classify(ki, name, targs);
	if ((span_starts(name, "fmha_cutlassF_") || span_starts(name, "fmha_cutlassB_")) &&
	    !targs.p)
		kd_memeff_classify(ki, name, rest);
	if ((span_eq(name, "fused_dropout_kernel_vec") || span_eq(name, "fused_dropout_kernel")) &&
	    targs.p)
		dropout_classify(ki, targs);
	if ((span_eq(name, "lpnorm_cleanup") || span_eq(name, "lpmax_cleanup")) && targs.p)
		cleanup_classify(ki, name, targs);
	return ki->family;
}

const char *np_kfamily_name(enum np_kfamily f)
{
	static const char *const names[NP_KF_MAX] = {
		[NP_KF_UNKNOWN] = "unknown",
		[NP_KF_VEC_ELEMENTWISE] = "vectorized_elementwise",
		[NP_KF_UNROLLED_ELEMENTWISE] = "unrolled_elementwise",
		[NP_KF_LAMBDA_ELEMENTWISE] = "lambda_elementwise",
		[NP_KF_REDUCE] = "reduce",
		[NP_KF_SOFTMAX] = "softmax",
		[NP_KF_LAYER_NORM] = "layer_norm",
		[NP_KF_BATCH_NORM] = "batch_norm",
		[NP_KF_CAT] = "cat",
		[NP_KF_MULTI_TENSOR_APPLY] = "multi_tensor_apply",
		[NP_KF_EXPLICIT] = "explicit",
		[NP_KF_FLASH] = "flash_attention",
		[NP_KF_INDEX] = "index_select",
		[NP_KF_MEMEFF] = "memeff_attention",
		[NP_KF_DROPOUT] = "dropout",
		[NP_KF_NORM_CLEANUP] = "foreach_norm_cleanup",
	};
	return (unsigned)f < NP_KF_MAX ? names[f] : "?";
}

int np_kdecode_layout_parse(const char *s, struct np_kparams *layout)
{
	char *end;
	layout->n = 0;
	if (!*s)
		return 0;
	for (;;) {
		unsigned long off, size;
		if (layout->n == NP_KD_MAX_PARAMS || *s < '0' || *s > '9')
			return -1;
		off = strtoul(s, &end, 10);
		if (*end != ':' || end[1] < '0' || end[1] > '9')
			return -1;
		size = strtoul(end + 1, &end, 10);
		if (off > UINT32_MAX || size > UINT32_MAX)
			return -1;
		layout->p[layout->n].offset = (uint32_t)off;
		layout->p[layout->n++].size = (uint32_t)size;
		if (*end == '\0')
			return layout->n;
		if (*end != ',')
			return -1;
		s = end + 1;
	}
}

/* Reads the first 8 bytes of parameter i (size checked by the caller). */
uint64_t word_at(void *const *kp, int i, uint32_t at)
{
	uint64_t v;
	memcpy(&v, (const char *)kp[i] + at, sizeof(v));
	return v;
}

/* The candidate pointer words of parameter i, appended to out[*k..max). */
void param_words(const struct np_kparams *l, void *const *kp, int i, uint64_t *out, int *k,
		 int max)
{
	uint32_t off = l->p[i].offset, size = l->p[i].size;
	/* first 8-aligned offset in the parameter buffer, relative to the param */
	for (uint32_t at = (8 - off % 8) % 8; at + 8 <= size && *k < max; at += 8) {
		uint64_t w = word_at(kp, i, at);
		if (np_pointer_like(w))
			out[(*k)++] = w;
	}
}

/* The slot for the next output found, or NULL if it is passed over. */
struct np_kbuf *emit_next(struct emit *e)
{
	struct np_kbuf *b;
	if (e->skip) {
		e->skip--;
		return NULL;
	}
	if (e->n == e->max) {
		e->more++;
		return NULL;
	}
	b = &e->out[e->n++];
	b->n_in = -1;
	b->esize = 0;
	b->pairs = 0;
	b->more_in = NULL;
	b->n_more = 0;
	return b;
}

/* Parameter i as a signed integer of its size (4 or 8 bytes); -1 for any
 * other size. */
int64_t int_at(const struct np_kparams *l, void *const *kp, int i)
{
	int32_t v32;
	int64_t v64;

	if (l->p[i].size == 4) {
		memcpy(&v32, kp[i], sizeof(v32));
		return v32;
	}
	if (l->p[i].size == 8) {
		memcpy(&v64, kp[i], sizeof(v64));
		return v64;
	}
	return -1;
}

/* Every non-const T* with T floating, in signature order; row kernels'
 * sized (an RMSNorm's unwritten mean left out), scalar ones too. */
static int signature_outputs(const struct np_kinfo *ki, const struct np_kparams *l,
			     void *const *kp, const struct np_klaunch *kl, struct emit *e)
{
	const struct np_krows *r = &ki->rows;
	uint64_t rows = 0, cols = 0, each = 0;

	int64_t count = 0;

	if (ki->nsig < 0 || l->n != ki->nsig)
		return 0;
	if (r->kind && kd_row_extent(r, l, kp, kl, &rows, &cols, &each))
		return 0;
	if (ki->counted && (count = int_at(l, kp, 0)) <= 0)
		count = 0;      /* not as the host launches it: unsized */
	for (int i = 0; i < ki->nsig; i++) {
		const struct np_ksig *s = &ki->sig[i];
		struct np_kbuf *out;
		uint64_t ptr;
		if (s->kind != NP_KP_OUT_PTR || s->dtype < 0 || l->p[i].size != 8)
			continue;
		if (r->kind && ((r->rms && i == r->mean) || (r->scratch >> i & 1)))
			continue;
		ptr = word_at(kp, i, 0);
		if (!ptr)       /* an optional output left out */
			continue;
		out = emit_next(e);
		if (!out)
			continue;
		out->ptr = ptr;
		out->numel = ki->scalar_outputs ? 1 : ki->counted ? (uint64_t)count :
			     !r->kind ? 0 : i == r->y ? rows * cols : each;
		out->dtype = (enum np_dtype)s->dtype;
		out->how = NP_KH_SIGNATURE;
	}
	return e->n;
}

/* A reduction's outputs, read from its ReduceOp (kdecode_reduce.h).  Each
 * reads the input, and, when it accumulates, what the output or the
 * accumulation buffer already holds. */
static int reduce_outputs(const struct np_kinfo *ki, const struct np_kparams *l,
			  void *const *kp, const struct np_klaunch *kl, struct emit *e)
{
	struct np_reduce_view v;
	int outputs;

	if (ki->dtype_why != NP_KDT_KNOWN || ki->dtype < 0 || !ki->red.ovs || l->n != 1 || !kl ||
	    !np_reduce_read(kp[0], l->p[0].size, ki->red.index_size,
			    np_dtype_size((enum np_dtype)ki->dtype) << ki->pairs, ki->red.ovs, kl->grid,
			    kl->block, &v))
		return 0;
	outputs = v.noutputs == 2 && ki->red.pair_values && v.dst[1] ? 2 : 1;
	for (int i = 0; i < outputs; i++) {
		struct np_kbuf *out = emit_next(e);
		if (!out)
			continue;
		out->ptr = v.dst[i];
		out->numel = (uint64_t)v.num_outputs << ki->pairs;
		out->dtype = (enum np_dtype)ki->dtype;
		out->pairs = ki->pairs;
		out->how = NP_KH_REDUCE;
		out->n_in = 0;
		out->in[out->n_in++] = v.src;
		if (v.accumulate) {
			out->in[out->n_in++] = v.dst[i];
			if (v.acc_buf)
				out->in[out->n_in++] = v.acc_buf;
		}
	}
	return e->n;
}

/* A reduction's input, when it lies densely (np_reduce_input): a loss's
 * sum or mean handed the start of a buffer reads all of it. */
static int reduce_reads(const struct np_kinfo *ki, const struct np_kparams *l, void *const *kp,
			const struct np_klaunch *kl, struct np_kread *out, int max)
{
	uint64_t src, n;

	if (ki->in_dtype < 0 || !ki->red.ovs || l->n != 1 || !kl || max < 1 ||
	    !np_reduce_input(kp[0], l->p[0].size, ki->red.index_size,
			     np_dtype_size((enum np_dtype)ki->in_dtype) << ki->in_pairs, ki->red.ovs,
			     kl->grid, kl->block, &src, &n))
		return 0;
	out[0] = (struct np_kread){ .ptr = src, .numel = n << ki->in_pairs,
				    .dtype = (enum np_dtype)ki->in_dtype, .pairs = ki->in_pairs };
	return 1;
}

/* index_select's output (kdecode_index.h): (dst, src, indices,
 * dstSelectDim, srcSelectDim, [totalSize,] innerSize, srcSelectDimSize). */
static int index_outputs(const struct np_kinfo *ki, const struct np_kparams *l,
			 void *const *kp, struct emit *e)
{
	uint32_t isz = ki->index.index_size, info = np_index_info_size(isz);
	int n = ki->index.large ? 8 : 7;
	struct np_index_launch in = { .large = ki->index.large,
				      .index_major = ki->index.index_major };
	struct np_kbuf *out;
	uint64_t ptr, numel;

	if (!info || l->n != n || l->p[0].size != info || l->p[1].size != info ||
	    l->p[2].size != info || l->p[3].size != 4 || l->p[5].size != isz ||
	    l->p[n - 2].size != isz || l->p[n - 1].size != 8)
		return 0;
	memcpy(&in.select_dim, kp[3], 4);
	memcpy(&in.inner, kp[n - 2], isz);      /* an unsigned IndexType, little-endian */
	if (in.large)
		memcpy(&in.total, kp[5], isz);
	if (!np_index_read(kp[0], kp[2], isz, &in, &ptr, &numel) || !(out = emit_next(e)))
		return e->n;
	out->ptr = ptr;
	out->numel = numel;
	out->dtype = (enum np_dtype)ki->dtype;
	out->how = NP_KH_INDEX;
	return e->n;
}

/* Dropout's output ("dropout" above); judged on the launch's pointer
 * words (its input among them). */
static int dropout_outputs(const struct np_kinfo *ki, const struct np_kparams *l,
			   void *const *kp, struct emit *e)
{
	uint64_t b, a, an, total = dropout_view(ki, l, kp, &b, &a, &an);
	struct np_kbuf *out;

	if (!total || !(out = emit_next(e)))
		return 0;
	out->ptr = b;
	out->numel = total;
	out->dtype = (enum np_dtype)ki->dtype;
	out->how = NP_KH_DROPOUT;
	return e->n;
}

/* The partials, their count a tensor, and the tensors of one cleanup
 * launch; 0 when the launch is not read as above. */
static int cleanup_view(const struct np_kinfo *ki, const struct np_kparams *l, void *const *kp,
			const struct np_klaunch *kl, uint64_t *partials, uint64_t *chunks,
			uint32_t *tensors)
{
	int32_t c;

	if (ki->dtype < 0 || ki->in_dtype < 0 || !kl || l->n != 3 || l->p[0].size != 8 ||
	    l->p[1].size % 8 || l->p[2].size != 4 || kl->block[0] != 512 || kl->block[1] != 1 ||
	    kl->block[2] != 1 || !kl->grid[0] || kl->grid[0] > l->p[1].size / 8 ||
	    kl->grid[1] != 1 || kl->grid[2] != 1)
		return 0;
	memcpy(&c, kp[2], sizeof(c));
	*partials = word_at(kp, 0, 0);
	if (c < 1 || !np_pointer_like(*partials))
		return 0;
	for (uint32_t b = 0; b < kl->grid[0]; b++)
		if (!np_pointer_like(word_at(kp, 1, 8 * b)))
			return 0;
	*chunks = (uint64_t)c;
	*tensors = kl->grid[0];
	return 1;
}

static int cleanup_outputs(const struct np_kinfo *ki, const struct np_kparams *l,
			   void *const *kp, const struct np_klaunch *kl, struct emit *e)
{
	uint64_t partials, chunks;
	uint32_t tensors;
	struct np_kbuf *out;

	if (!cleanup_view(ki, l, kp, kl, &partials, &chunks, &tensors))
		return 0;
	for (uint32_t b = 0; b < tensors; b++) {
		if (!(out = emit_next(e)))
			continue;
		out->ptr = word_at(kp, 1, 8 * b);
		out->numel = 1;
		out->dtype = (enum np_dtype)ki->dtype;
		out->how = NP_KH_NORM_RESULT;
		out->n_in = 1;
		out->in[0] = partials + b * chunks * np_dtype_size((enum np_dtype)ki->in_dtype);
	}
	return e->n;
}

/* One check of a cat's output: elements [first, first + count) of it
 * (kdecode_cat.h), read from n of the launch's inputs from input[0]; of
 * more than in[] holds, the rest are at more (the metadata's words). */
static int cat_emit(const struct np_cat_shape *sh, const struct np_cat_view *v, uint64_t first,
		    uint64_t count, const uint64_t *input, int n, const unsigned char *more,
		    struct emit *e)
{
	struct np_kbuf *out = count ? emit_next(e) : NULL;   /* numel 0: unsized */
	if (!out)
		return 0;
	out->ptr = v->output + first * sh->esize;
	out->numel = count;
	out->dtype = NP_DT_MAX;
	out->esize = sh->esize;
	out->how = NP_KH_CAT;
	out->n_in = n > NP_KD_BUF_INPUTS ? NP_KD_BUF_INPUTS : n;
	memcpy(out->in, input, (size_t)out->n_in * sizeof(*input));
	if (n > NP_KD_BUF_INPUTS) {
		out->more_in = more;
		out->n_more = (uint32_t)(n - NP_KD_BUF_INPUTS);
	}
	return 1;
}

/* torch.cat's output, what one launch of it writes (kdecode_cat.h): in
 * one check when it copies at most NP_KD_BUF_INPUTS inputs, else slab
 * by slab.  Along an inner dimension (no slabs) a launch of more inputs
 * is one check too, its inputs past in[] handed on in more_in.  The
 * dtype is left to the caller, who knows what wrote the inputs. */
static int cat_outputs(const struct np_kinfo *ki, const struct np_kparams *l, void *const *kp,
		       const struct np_klaunch *kl, struct emit *e)
{
	const struct np_cat_shape *sh = &ki->cat;
	struct np_cat_view v;
	int32_t concat_dim;
	int last;

	if (!sh->esize || !kl || l->n != 5 || l->p[0].size != 8 ||
	    l->p[1].size != np_cat_meta_size(sh) || l->p[2].size != 8u * sh->index_size ||
	    l->p[3].size != 4 || l->p[4].size != sh->index_size)
		return 0;
	memcpy(&concat_dim, kp[3], sizeof(concat_dim));
	if (!np_cat_read(word_at(kp, 0, 0), kp[1], kp[2], concat_dim,
			 sh->index_size == 4 ? np_u32_at(kp[4], 0) : np_u64_at(kp[4], 0), sh,
			 kl->grid, &v))
		return 0;
	last = v.ninputs - 1;
	if (v.ninputs > NP_KD_BUF_INPUTS && v.slabs) {
		for (int k = 0; k <= last; k++)
			if (v.count[k])
				cat_emit(sh, &v, v.start[k], v.count[k], &v.input[k], 1, NULL, e);
	} else if (v.whole) {
		cat_emit(sh, &v, 0, v.numel, v.input, v.ninputs,
			 (const unsigned char *)kp[1] + 8u * NP_KD_BUF_INPUTS, e);
	} else {   /* slabs of at most NP_KD_BUF_INPUTS inputs */
		cat_emit(sh, &v, v.start[0], v.start[last] + v.count[last] - v.start[0],
			 v.input, v.ninputs, NULL, e);
	}
	return e->n;
}

int np_kdecode_outputs(const struct np_kinfo *ki, const struct np_kparams *layout,
		       void *const *kernelParams, struct np_klaunch *launch, struct np_kbuf *out,
		       int max)
{
	struct emit e = { out, max, 0, launch ? launch->first : 0, 0 };
	uint64_t threads = launch ? launch->threads : 0;
	int n;

	if (launch)
		launch->more = 0;
	if (max <= 0 || !kernelParams || layout->n < 0 || layout->n > NP_KD_MAX_PARAMS)
		return 0;
	switch (ki->family) {
	case NP_KF_VEC_ELEMENTWISE:
	case NP_KF_UNROLLED_ELEMENTWISE:
		n = kd_elementwise_outputs(ki, layout, kernelParams, threads, &e);
		break;
	case NP_KF_BATCH_NORM:
		n = ki->acc.isz ? kd_acc_outputs(ki, layout, kernelParams, launch, &e)
				: signature_outputs(ki, layout, kernelParams, launch, &e);
		break;
	case NP_KF_SOFTMAX:
	case NP_KF_LAYER_NORM:
	case NP_KF_EXPLICIT:
		n = signature_outputs(ki, layout, kernelParams, launch, &e);
		break;
	case NP_KF_CAT:
		n = cat_outputs(ki, layout, kernelParams, launch, &e);
		break;
	case NP_KF_MULTI_TENSOR_APPLY:
		n = kd_mta_outputs(ki, layout, kernelParams, launch ? launch->blocks : 0, &e);
		break;
	case NP_KF_REDUCE:
		n = reduce_outputs(ki, layout, kernelParams, launch, &e);
		break;
	case NP_KF_LAMBDA_ELEMENTWISE:
		n = kd_lambda_outputs(ki, layout, kernelParams, launch, &e);
		break;
	case NP_KF_FLASH:
		n = kd_flash_outputs(ki, layout, kernelParams, launch, &e);
		break;
	case NP_KF_INDEX:
		n = index_outputs(ki, layout, kernelParams, &e);
		break;
	case NP_KF_MEMEFF:
		n = kd_memeff_outputs(ki, layout, kernelParams, launch, &e);
		break;
	case NP_KF_DROPOUT:
		n = dropout_outputs(ki, layout, kernelParams, &e);
		break;
	case NP_KF_NORM_CLEANUP:
		n = cleanup_outputs(ki, layout, kernelParams, launch, &e);
		break;
	default:
		return 0;
	}
	if (n > 0 && launch)
		launch->more = e.more;
	return n;
}

int np_kdecode_input_words(const struct np_kinfo *ki, const struct np_kparams *layout,
			   void *const *kernelParams, const struct np_klaunch *launch,
			   uint64_t *out, int max)
{
	if (!kernelParams || !launch)
		return 0;
	return kd_lambda_input_words(ki, layout, kernelParams, launch, out, max);
}

int np_kdecode_reads(const struct np_kinfo *ki, const struct np_kparams *layout,
		     void *const *kernelParams, const struct np_klaunch *launch,
		     struct np_kread *out, int max)
{
	if (ki->family == NP_KF_MULTI_TENSOR_APPLY)
		return kernelParams && launch ? kd_mta_reads(ki, layout, kernelParams, launch->blocks,
							     out, max) : 0;
	if (ki->family == NP_KF_BATCH_NORM && ki->acc.isz && kernelParams)
		return kd_acc_reads(ki, layout, kernelParams, launch, out, max);
	if (ki->family == NP_KF_DROPOUT && kernelParams) {  /* its input, when dense */
		uint64_t b, a, an;
		if (!dropout_view(ki, layout, kernelParams, &b, &a, &an) || !an || max < 1)
			return 0;
		out[0] = (struct np_kread){ .ptr = a, .numel = an,
					    .dtype = (enum np_dtype)ki->dtype };
		return 1;
	}
	if (ki->family == NP_KF_NORM_CLEANUP && kernelParams) {   /* the partials */
		uint64_t partials, chunks;
		uint32_t tensors;
		if (!cleanup_view(ki, layout, kernelParams, launch, &partials, &chunks, &tensors) ||
		    max < 1)
			return 0;
		out[0] = (struct np_kread){ .ptr = partials, .numel = tensors * chunks,
					    .dtype = (enum np_dtype)ki->in_dtype };
		return 1;
	}
	if ((ki->family == NP_KF_FLASH || ki->family == NP_KF_MEMEFF) && kernelParams)
		return kd_attn_reads(ki, layout, kernelParams, launch, out, max);
	if (ki->family == NP_KF_REDUCE && kernelParams)   /* its input, when dense */
		return reduce_reads(ki, layout, kernelParams, launch, out, max);
	if (ki->rows.xin && kernelParams)       /* a row kernel's rows x N inputs */
		return kd_rows_reads(ki, layout, kernelParams, launch, out, max);
	if (kernelParams)
		return kd_elementwise_reads(ki, layout, kernelParams, launch, out, max);
	return 0;
}

int np_kdecode_pointer_words(const struct np_kparams *layout, void *const *kernelParams,
			     uint64_t *out, int max)
{
	int k = 0, n = layout->n < NP_KD_MAX_PARAMS ? layout->n : NP_KD_MAX_PARAMS;
	if (!kernelParams)
		return 0;
	for (int pointers = 1; pointers >= 0; pointers--)
		for (int i = 0; i < n && k < max; i++)
			if ((layout->p[i].size == 8) == pointers)
				param_words(layout, kernelParams, i, out, &k, max);
	return k;
}
