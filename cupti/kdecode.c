/* kdecode.c - which arguments of one CUDA kernel launch are its outputs.
 *
 * The name side works on spans of the demangled string (no copies, no
 * allocation): a kernel name is "void QUAL::NAME<TARGS>(PARAMS)", where
 * QUAL may hold "(anonymous namespace)" and TARGS may hold lambdas with
 * their own parentheses, so every scan skips balanced <> () {} [] groups.
 * Demangled kernel names contain no operator< or operator>, which is what
 * makes plain bracket counting safe here.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "kdecode.h"
#include "kdecode_index.h"
#include "kdecode_lambda.h"
#include "kdecode_memeff.h"
#include "kdecode_reduce.h"

struct span {
	const char *p;
	size_t n;
};

static struct span span_of(const char *p, const char *end)
{
	return (struct span){ p, (size_t)(end - p) };
}

static struct span trim(struct span s)
{
	while (s.n && s.p[0] == ' ')
		s.p++, s.n--;
	while (s.n && s.p[s.n - 1] == ' ')
		s.n--;
	return s;
}

static int span_eq(struct span s, const char *lit)
{
	size_t n = strlen(lit);
	return s.n == n && !memcmp(s.p, lit, n);
}

static int spans_eq(struct span a, struct span b)
{
	return a.n == b.n && !memcmp(a.p, b.p, a.n);
}

static int span_starts(struct span s, const char *lit)
{
	size_t n = strlen(lit);
	return s.n >= n && !memcmp(s.p, lit, n);
}

static int span_ends(struct span s, const char *lit)
{
	size_t n = strlen(lit);
	return s.n >= n && !memcmp(s.p + s.n - n, lit, n);
}

/* Offset of the last occurrence of lit in s, or -1. */
static long span_rfind(struct span s, const char *lit)
{
	size_t n = strlen(lit);
	for (size_t i = s.n; i >= n && n; i--)
		if (!memcmp(s.p + i - n, lit, n))
			return (long)(i - n);
	return -1;
}

static int span_has(struct span s, const char *lit)
{
	return span_rfind(s, lit) >= 0;
}

static int is_open(char c)
{
	return c == '<' || c == '(' || c == '{' || c == '[';
}

static int is_close(char c)
{
	return c == '>' || c == ')' || c == '}' || c == ']';
}

/* p at an opening bracket: the matching closer, or NULL. */
static const char *group_end(const char *p, const char *end)
{
	int depth = 0;
	for (; p < end; p++) {
		if (is_open(*p))
			depth++;
		else if (is_close(*p) && --depth == 0)
			return p;
	}
	return NULL;
}

/* close at a closing bracket: the matching opener, or NULL. */
static const char *group_start(const char *start, const char *close)
{
	int depth = 0;
	for (const char *p = close; p >= start; p--) {
		if (is_close(*p))
			depth++;
		else if (is_open(*p) && --depth == 0)
			return p;
	}
	return NULL;
}

/* Takes the next top-level comma-separated item of *list into *item.
 * Returns 0 when the list is used up. */
static int next_item(struct span *list, struct span *item)
{
	const char *p = list->p, *end = list->p + list->n;
	if (!list->p)
		return 0;
	while (p < end && *p != ',') {
		const char *e = is_open(*p) ? group_end(p, end) : NULL;
		p = e ? e + 1 : p + 1;
	}
	*item = trim(span_of(list->p, p));
	if (p < end) {
		list->p = p + 1;
		list->n = (size_t)(end - p - 1);
	} else {
		list->p = NULL;
		list->n = 0;
	}
	return 1;
}

/* The i-th top-level item of a list; empty span if there is none. */
static struct span nth_item(struct span list, int i)
{
	struct span it = { NULL, 0 };
	while (next_item(&list, &it))
		if (i-- == 0)
			return it;
	return (struct span){ NULL, 0 };
}

/* Splits "QUAL::NAME<TARGS>REST" into the unqualified NAME, the inside of
 * <TARGS> (empty if none) and what follows.  Returns 0 if there is no
 * name.  "(anonymous namespace)" counts as part of QUAL. */
static int split_name(struct span s, struct span *name, struct span *targs, struct span *rest)
{
	const char *p = s.p, *end = s.p + s.n, *last = s.p;
	static const char anon[] = "(anonymous namespace)";
	while (p < end) {
		if (*p == '(' && span_starts(span_of(p, end), anon)) {
			p += sizeof(anon) - 1;
			continue;
		}
		if (*p == '<' || *p == '(')
			break;
		if (*p == ':' && p + 1 < end && p[1] == ':') {
			p += 2;
			last = p;
			continue;
		}
		p++;
	}
	*name = trim(span_of(last, p));
	*targs = (struct span){ NULL, 0 };
	if (p < end && *p == '<') {
		const char *e = group_end(p, end);
		if (!e)
			return 0;
		*targs = span_of(p + 1, e);
		p = e + 1;
	}
	*rest = span_of(p, end);
	return name->n > 0;
}

struct tname {
	const char *name;
	int dtype;
};

/* Element types finite.h checks, as they appear in demangled names. */
static const struct tname floating[] = {
	{ "float", NP_DT_F32 }, { "double", NP_DT_F64 },
	{ "c10::Half", NP_DT_F16 }, { "at::Half", NP_DT_F16 }, { "__half", NP_DT_F16 },
	{ "half", NP_DT_F16 }, { "cutlass::half_t", NP_DT_F16 },
	{ "c10::BFloat16", NP_DT_BF16 }, { "at::BFloat16", NP_DT_BF16 },
	{ "__nv_bfloat16", NP_DT_BF16 }, { "cutlass::bfloat16_t", NP_DT_BF16 },
	{ "c10::Float8_e4m3fn", NP_DT_F8E4M3 }, { "__nv_fp8_e4m3", NP_DT_F8E4M3 },
	{ "cutlass::float_e4m3_t", NP_DT_F8E4M3 },
	{ "c10::Float8_e5m2", NP_DT_F8E5M2 }, { "__nv_fp8_e5m2", NP_DT_F8E5M2 },
	{ "cutlass::float_e5m2_t", NP_DT_F8E5M2 },
};

/* Element types we know and cannot check. */
static const char *const uncheckable[] = {
	"bool", "signed char", "unsigned char", "short", "unsigned short",
	"int", "unsigned int", "long", "unsigned long", "long long", "unsigned long long",
	"c10::qint8", "c10::quint8", "c10::qint32", "c10::quint4x2", "c10::quint2x4",
	"c10::Float8_e4m3fnuz", "c10::Float8_e5m2fnuz", "c10::Float8_e8m0fnu",
	"c10::Float4_e2m1fn_x2", "c10::bits1x8", "c10::bits2x4", "c10::bits4x2",
	"c10::bits8", "c10::bits16",
};

static struct span strip_cv(struct span t)
{
	for (;;) {
		t = trim(t);
		if (span_ends(t, " const"))
			t.n -= 6;
		else if (span_ends(t, " volatile"))
			t.n -= 9;
		else
			return t;
	}
}

static int type_dtype(struct span t, int *why);

/* std::conditional<B, X, Y>::type and at::AccumulateType<T, true>::type,
 * which layer and batch norm kernels spell their accumulator types with. */
static int alias_dtype(struct span t, int *why)
{
	struct span name, targs, rest;
	if (!span_ends(t, "::type") || !split_name(t, &name, &targs, &rest) ||
	    !span_eq(rest, "::type"))
		return -2;
	if (span_eq(name, "conditional")) {
		int yes = span_eq(nth_item(targs, 0), "true");
		return type_dtype(nth_item(targs, yes ? 1 : 2), why);
	}
	if (span_eq(name, "AccumulateType") && span_eq(nth_item(targs, 1), "true")) {
		int d = type_dtype(nth_item(targs, 0), why);
		if (d < 0)
			return -1;
		return d == NP_DT_F64 ? NP_DT_F64 : NP_DT_F32;
	}
	return -2;
}

/* The np_dtype a whole type names, or -1 with *why saying why not. */
static int type_dtype(struct span t, int *why)
{
	int d;
	t = strip_cv(t);
	*why = NP_KDT_UNKNOWN;
	if (!t.n)
		return -1;
	d = alias_dtype(t, why);
	if (d != -2)
		return d;
	for (size_t i = 0; i < sizeof(floating) / sizeof(floating[0]); i++)
		if (span_eq(t, floating[i].name)) {
			*why = NP_KDT_KNOWN;
			return floating[i].dtype;
		}
	for (size_t i = 0; i < sizeof(uncheckable) / sizeof(uncheckable[0]); i++)
		if (span_eq(t, uncheckable[i]))
			goto no;
	if (span_starts(t, "c10::complex<") || span_starts(t, "std::complex<"))
		goto no;
	return -1;
no:
	*why = NP_KDT_UNCHECKABLE;
	return -1;
}

/* Ops whose elementwise lambda returns another type than it takes. */
static const char *const type_changing[] = {
	"::is", "logical_", "signbit", "copy_kernel", "compare", "Compare", "bitwise",
	"quantize", "frexp", "nonzero", "bucketize", "_to_",
};

/* The output dtype of an elementwise lambda "...::{lambda(A, B)#1}". */
/* The parameter list of the last "{lambda(A, B)#N}" in f, in *args;
 * -1 when f names no lambda. */
static int lambda_params(struct span f, struct span *args)
{
	long at = span_rfind(f, "{lambda(");
	const char *close;

	if (at < 0 || !(close = group_end(f.p + at + 7, f.p + f.n)))
		return -1;
	*args = span_of(f.p + at + 8, close);
	return 0;
}

/* The one floating dtype all of the last lambda's parameters in f have;
 * -1 when f names no lambda, it takes none, or they differ. */
static int lambda_args_dtype(struct span f)
{
	struct span args, a;
	int d = -1, n = 0, w;

	if (lambda_params(f, &args))
		return -1;
	while (next_item(&args, &a)) {
		int t = type_dtype(a, &w);
		if (t < 0 || (n && t != d))
			return -1;
		d = t;
		n++;
	}
	return d;
}

static int lambda_dtype(struct span f, int *why)
{
	int d;

	*why = NP_KDT_UNKNOWN;
	for (size_t i = 0; i < sizeof(type_changing) / sizeof(type_changing[0]); i++)
		if (span_has(f, type_changing[i]))
			return -1;
	d = lambda_args_dtype(f);
	if (d >= 0)
		*why = NP_KDT_INFERRED;
	return d;
}

/* Functors whose single template argument is also their result type. */
static const char *const same_type_functors[] = {
	"FillFunctor", "CUDAFunctor_add", "CUDAFunctorOnSelf_add", "CUDAFunctorOnOther_add",
	"AbsFunctor", "CalcIgamma", "CalcIgammac",
};

/* The output dtype of an elementwise functor type (or lambda). */
static int functor_dtype(struct span f, int *why)
{
	struct span name, targs, rest;
	f = trim(f);
	*why = NP_KDT_UNKNOWN;
	if (span_ends(f, "}"))
		return lambda_dtype(f, why);
	if (!split_name(f, &name, &targs, &rest))
		return -1;
	if (span_eq(name, "BinaryFunctor") || span_eq(name, "AUnaryFunctor") ||
	    span_eq(name, "BUnaryFunctor"))
		return type_dtype(nth_item(targs, 2), why);
	for (size_t i = 0; i < sizeof(same_type_functors) / sizeof(same_type_functors[0]); i++)
		if (span_eq(name, same_type_functors[i]))
			return type_dtype(nth_item(targs, 0), why);
	if (span_eq(name, "CompareFunctor")) {      /* eq/ne/lt/..: bool out */
		*why = NP_KDT_UNCHECKABLE;
		return -1;
	}
	*why = NP_KDT_KNOWN;
	if (span_eq(name, "ConvertToFloat8E4M3fnOp"))
		return NP_DT_F8E4M3;
	if (span_eq(name, "ConvertFloatToFloat8E5M2Op"))
		return NP_DT_F8E5M2;
	*why = NP_KDT_UNKNOWN;
	return -1;
}

/* The one floating dtype every tensor input of an elementwise functor
 * has, or -1: a lambda's parameters, all of one type; a functor of one
 * type T (add, abs); BinaryFunctor<A, B, R, op> when A is B;
 * AUnaryFunctor<A, B, R, op> (A captured) reads a B, BUnaryFunctor's (B
 * captured) an A (Loops.cuh).  The generic tier checks an input over the
 * elements the kernel reads, as this dtype (generic.h). */
static int functor_in_dtype(struct span f)
{
	struct span name, targs, rest;
	int d, why;

	f = trim(f);
	if (span_ends(f, "}"))
		return lambda_args_dtype(f);
	if (!split_name(f, &name, &targs, &rest))
		return -1;
	if (span_eq(name, "BinaryFunctor")) {
		d = type_dtype(nth_item(targs, 0), &why);
		return d == type_dtype(nth_item(targs, 1), &why) ? d : -1;
	}
	if (span_eq(name, "AUnaryFunctor"))
		return type_dtype(nth_item(targs, 1), &why);
	if (span_eq(name, "BUnaryFunctor"))
		return type_dtype(nth_item(targs, 0), &why);
	for (size_t i = 0; i < sizeof(same_type_functors) / sizeof(same_type_functors[0]); i++)
		if (span_eq(name, same_type_functors[i]))
			return type_dtype(nth_item(targs, 0), &why);
	return -1;
}

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

static int in_list(struct span name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (span_eq(name, list[i]))
			return 1;
	return 0;
}

#define IN_LIST(name, list) in_list(name, list, sizeof(list) / sizeof(list[0]))

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

/* gpu_kernel_impl<F>(..)::{lambda(int)#1} -> F; anything else unchanged. */
static struct span unwrap_impl(struct span f)
{
	struct span name, targs, rest;
	if (split_name(trim(f), &name, &targs, &rest) && targs.p &&
	    (span_eq(name, "gpu_kernel_impl") || span_eq(name, "gpu_kernel_impl_nocast")))
		return nth_item(targs, 0);
	return f;
}

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

/* The i-th template argument as a non-negative int, or -1. */
static int targ_int(struct span targs, int i)
{
	struct span t = nth_item(targs, i);
	return t.n && t.p[0] >= '0' && t.p[0] <= '9' ? atoi(t.p) : -1;
}

/* The i-th template argument as an unsigned long (kMaxK may be
 * UINT32_MAX), or 0. */
static unsigned long targ_ulong(struct span targs, int i)
{
	struct span t = nth_item(targs, i);
	return t.n && t.p[0] >= '0' && t.p[0] <= '9' ? strtoul(t.p, NULL, 10) : 0;
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
static void mta_classify(struct np_kinfo *ki, struct span targs)
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

/* Functors whose arity the name does not show (a lambda's does). */
static const struct {
	const char *name;
	int arity;
} functor_arity[] = {
	{ "FillFunctor", 0 }, { "AbsFunctor", 1 }, { "AUnaryFunctor", 1 }, { "BUnaryFunctor", 1 },
	{ "CUDAFunctor_add", 2 }, { "CUDAFunctorOnSelf_add", 1 }, { "CUDAFunctorOnOther_add", 1 },
	{ "BinaryFunctor", 2 }, { "CalcIgamma", 2 }, { "CalcIgammac", 2 },
};

/* F's inputs: a lambda's parameters, a known functor's, else 0. */
static int arity_of(struct span f)
{
	struct span name, targs, rest, args, a;
	int n = 0;

	if (span_rfind(f, "{lambda(") >= 0) {
		if (lambda_params(f, &args))
			return 0;
		while (next_item(&args, &a))
			n++;
		return n;
	}
	if (!split_name(trim(f), &name, &targs, &rest))
		return 0;
	for (size_t i = 0; i < sizeof(functor_arity) / sizeof(functor_arity[0]); i++)
		if (span_eq(name, functor_arity[i].name))
			return functor_arity[i].arity;
	return 0;
}

/* Whether this process's torch splits gpu_kernel_impl_nocast off (2.x:
 * 1, its gpu_kernel_impl lambda casts), keeps both lambdas in
 * gpu_kernel_impl (older: -1, its #1 does not cast), or is not known yet
 * (0).  Written by classify on any thread: one int, relaxed. */
static int lambda_era;

/* elementwise_kernel<threads, vt, gpu_kernel_impl[_nocast]<F>(..)::{lambda(int)#N}>:
 * which launcher's lambda, F's arity, and the launch shape. */
static void lambda_classify(struct np_kinfo *ki, struct span targs)
{
	struct span lam = trim(nth_item(targs, 2)), name, sub, rest;
	int threads = targ_int(targs, 0), vt = targ_int(targs, 1), first;

	first = span_ends(lam, "::{lambda(int)#1}");
	if ((!first && !span_ends(lam, "::{lambda(int)#2}")) || threads < 1 || threads > 1024 ||
	    vt < 1 || vt > 16 || !split_name(lam, &name, &sub, &rest) || !sub.p)
		return;
	if (span_eq(name, "gpu_kernel_impl_nocast") && first) {
		ki->lam.kind = NP_KL_NOCAST;
		__atomic_store_n(&lambda_era, 1, __ATOMIC_RELAXED);
	} else if (span_eq(name, "gpu_kernel_impl")) {
		ki->lam.kind = first ? NP_KL_IMPL_FIRST : NP_KL_CASTING;
		if (!first)
			__atomic_store_n(&lambda_era, -1, __ATOMIC_RELAXED);
	} else {
		return;
	}
	ki->lam.arity = (uint8_t)arity_of(nth_item(sub, 0));
	ki->lam.threads = (uint16_t)threads;
	ki->lam.vt = (uint8_t)vt;
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

/* pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<kHeadDim, kBlockM,
 * kBlockN, kNWarps, Is_Q_in_regs, Share_Q_K_smem, elem_type, ..>, ..>,
 * and the backward's flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel and
 * flash_bwd_convert_dq_kernel<Flash_bwd_kernel_traits<kHeadDim, kBlockM,
 * kBlockN, kNWarps, AtomLayoutMSdP, AtomLayoutNdKV, AtomLayoutMdQ,
 * Is_V_in_regs, No_double_buffer, elem_type, ..>, ..>: the launch shape
 * and the element type (kdecode_flash.h).  Other flash kernels (split-KV,
 * the backward's scratch ones) stay as they are. */
static void flash_classify(struct np_kinfo *ki, struct span kernel, struct span targs)
{
	struct span name, sub, rest, elem;
	struct np_flash_shape sh = { 0 };
	int hd, bm, bn, w, bwd;

	if (span_eq(kernel, "flash_fwd_kernel"))
		sh.kind = NP_FLASH_FWD;
	else if (span_eq(kernel, "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel"))
		sh.kind = NP_FLASH_BWD_DKDV;
	else if (span_eq(kernel, "flash_bwd_convert_dq_kernel"))
		sh.kind = NP_FLASH_BWD_DQ;
	else
		return;
	bwd = sh.kind != NP_FLASH_FWD;
	if (!split_name(nth_item(targs, 0), &name, &sub, &rest) || !sub.p ||
	    !span_eq(name, bwd ? "Flash_bwd_kernel_traits" : "Flash_fwd_kernel_traits"))
		return;
	hd = targ_int(sub, 0), bm = targ_int(sub, 1), bn = targ_int(sub, 2), w = targ_int(sub, 3);
	elem = trim(nth_item(sub, bwd ? 9 : 6));
	if (hd < 1 || hd > 512 || bm < 1 || bm > 512 || bn < 1 || bn > 512 || w < 1 || w > 32)
		return;
	if (span_eq(elem, "cutlass::bfloat16_t"))
		sh.bf16 = 1;
	else if (!span_eq(elem, "cutlass::half_t"))
		return;
	sh.head_dim = (uint16_t)hd;
	sh.block_m = (uint16_t)bm;
	sh.block_n = (uint16_t)bn;
	sh.warps = (uint8_t)w;
	ki->flash = sh;
	ki->family = NP_KF_FLASH;
	ki->dtype = sh.bf16 ? NP_DT_BF16 : NP_DT_F16;
	ki->dtype_why = NP_KDT_KNOWN;
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

/* fmha_cutlass{F,B}_..(PyTorchMemEffAttention::AttentionKernel<scalar_t,
 * Arch, aligned, kQueriesPerBlock, kKeysPerBlock, kMaxK, ..>::Params) and
 * (..AttentionBackwardKernel<Arch, scalar_t, aligned, dropout, preload,
 * kBlockSizeI, kBlockSizeJ, kMaxK, kKeysQueriesAlignedToBlockSize>::Params):
 * the blocks, the head-dim bound and the type (kdecode_memeff.h). */
static void memeff_classify(struct np_kinfo *ki, struct span name, struct span rest)
{
	struct span param, tname, targs, after, elem;
	struct np_memeff_shape sh = { 0 };
	int fwd = span_starts(name, "fmha_cutlassF_"), o;
	unsigned long bi, bj, maxk;

	rest = trim(rest);
	if (rest.n < 2 || rest.p[0] != '(' || rest.p[rest.n - 1] != ')')
		return;
	param = trim(span_of(rest.p + 1, rest.p + rest.n - 1));
	if (!split_name(param, &tname, &targs, &after) || !targs.p || !span_eq(after, "::Params") ||
	    !span_eq(tname, fwd ? "AttentionKernel" : "AttentionBackwardKernel"))
		return;
	o = fwd ? 3 : 5;                        /* the first block size's position */
	elem = trim(nth_item(targs, fwd ? 0 : 1));
	bi = targ_ulong(targs, o), bj = targ_ulong(targs, o + 1), maxk = targ_ulong(targs, o + 2);
	if (bi < 16 || bi > 256 || bj < 16 || bj > 256 || bi * bj % 1024 || maxk < 1 ||
	    maxk > UINT32_MAX)
		return;
	if (span_eq(elem, "float"))
		ki->dtype = NP_DT_F32, sh.esize = 4;
	else if (span_eq(elem, "cutlass::half_t"))
		ki->dtype = NP_DT_F16, sh.esize = 2;
	else if (span_eq(elem, "cutlass::bfloat16_t"))
		ki->dtype = NP_DT_BF16, sh.esize = 2;
	else
		return;
	sh.kind = fwd ? NP_MEMEFF_FWD : NP_MEMEFF_BWD;
	sh.block_i = (uint16_t)bi;
	sh.block_j = (uint16_t)bj;
	sh.max_k = (uint32_t)maxk;
	sh.seq_aligned = !fwd && span_eq(trim(nth_item(targs, 8)), "true");
	ki->memeff = sh;
	ki->family = NP_KF_MEMEFF;
	ki->dtype_why = NP_KDT_KNOWN;
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
	int why = NP_KDT_UNKNOWN, d = -1;
	struct span name, sub, rest, arr;

	switch (ki->family) {
	case NP_KF_VEC_ELEMENTWISE:
	case NP_KF_UNROLLED_ELEMENTWISE:
		arr = nth_item(targs, ki->family == NP_KF_VEC_ELEMENTWISE ? 2 : 1);
		if (span_starts(arr, "std::array<char*, "))
			ki->narrays = atoi(arr.p + 18);
		static const char load_cast[] = "at::native::memory::LoadWithCast<";
		if (ki->family == NP_KF_UNROLLED_ELEMENTWISE &&
		    span_starts(nth_item(targs, 5), load_cast)) {
			int nl = atoi(nth_item(targs, 5).p + sizeof(load_cast) - 1);
			ki->load_cast = nl >= 1 && nl <= 8 ? (uint8_t)nl : 0;
		}
		if (ki->family == NP_KF_UNROLLED_ELEMENTWISE &&
		    span_starts(nth_item(targs, 6), "at::native::memory::StoreWithCast<")) {
			why = NP_KDT_RUNTIME;
			break;
		}
		d = functor_dtype(nth_item(targs, ki->family == NP_KF_VEC_ELEMENTWISE), &why);
		/* inputs loaded as they are, not cast: the functor's types */
		if (ki->family == NP_KF_VEC_ELEMENTWISE ||
		    span_starts(nth_item(targs, 5), "at::native::memory::LoadWithoutCast"))
			ki->in_dtype = functor_in_dtype(
				nth_item(targs, ki->family == NP_KF_VEC_ELEMENTWISE));
		break;
	case NP_KF_LAMBDA_ELEMENTWISE:
		d = functor_dtype(unwrap_impl(nth_item(targs, 2)), &why);
		ki->in_dtype = functor_in_dtype(unwrap_impl(nth_item(targs, 2)));
		lambda_classify(ki, targs);
		break;
	case NP_KF_REDUCE:      /* ReduceOp<scalar_t, ops_t, index_t, out_scalar_t, ..> */
		if (split_name(nth_item(targs, 2), &name, &sub, &rest) && span_eq(name, "ReduceOp")) {
			d = type_dtype(nth_item(sub, 3), &why);
			reduce_classify(ki, targs, sub);
		}
		break;
	case NP_KF_MULTI_TENSOR_APPLY:  /* sets ki->dtype itself */
		mta_classify(ki, targs);
		return;
	default:
		return;
	}
	ki->dtype = d;
	ki->dtype_why = why;
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

/* ---- row-sized outputs ----
 *
 * Layer norm, RMSNorm and softmax kernels give each block one row (or a
 * few) and write whole rows; the row length is a parameter, the rows come
 * from the grid.  Read from the sm_90 SASS of torch 2.14.1+cu130's
 * libtorch_cuda.so (cuobjdump -sass: which parameters and special
 * registers address each store) and from PyTorch's source, which it
 * matches (aten/src/ATen/native/cuda/layer_norm_kernel.cu,
 * PersistentSoftmax.cuh, SoftMax.cu).  rows = gridDim.x: no kernel here
 * reads blockIdx.y or loops over rows, so whatever grid the host chose,
 * the launch writes rows 0 .. gridDim.x - 1 exactly; launches with a 2-D
 * or 3-D grid are not PyTorch's and stay unsized.
 *
 *  layer_norm_kernel.cu, <T, T_ACC, bool rms_norm>; rms_norm = true is
 *  the RMSNorm instance, which computes no mean and leaves that pointer
 *  unwritten (it must not be checked: whatever is there is not its own):
 *   vectorized_layer_norm_kernel(int N, T_ACC eps, X, gamma, beta,
 *       T_ACC* mean, T_ACC* rstd, T* Y): Y + blockIdx.x * N, N / 4 vectors
 *       of 4 (vec_size 4 for every T, no tail: the host launches it only
 *       for N % 4 == 0, anything else would leave gaps); mean[blockIdx.x],
 *       rstd[blockIdx.x].  Y: rows x N, mean and rstd: rows.  For double
 *       the kernel only asserts (the host never launches it): unsized.
 *   LayerNormForwardCUDAKernel(int64_t, int64_t N, X, mean, rstd, gamma,
 *       beta, T* Y): Y[blockIdx.x * N + j], j < N.  rows x N.
 *   RowwiseMomentsCUDAKernel(int64_t, int64_t N, T_ACC eps, X, T_ACC* mean,
 *       T_ACC* rstd): mean and rstd [blockIdx.x].  rows each.
 *   (The first int64_t of these two is read by neither kernel.  Torch
 *   2.11's have none: (int64_t N, X, mean, rstd, gamma, beta, T* Y) and
 *   (int64_t N, T_ACC eps, X, mean, rstd), the same rows.)
 *   layer_norm_grad_input_kernel and _vectorized (dY, X, mean, rstd,
 *       gamma, T* dX, int N): dX + blockIdx.x * N, all N (the vectorized
 *       one has a tail loop).  rows x N.
 *
 *  group_norm_kernel.cu, one block per row (a group of a sample: rows =
 *  N x G, N = D x HxW; or a channel of a sample: rows = N x C):
 *   RowwiseMomentsCUDAKernel<T, T_ACC>(int64_t N, T eps, X, T* mean,
 *       T* rstd, T_ACC* mean_acc, T_ACC* rstd_acc): mean[blockIdx.x],
 *       rstd[blockIdx.x], and the _acc pair only when T_ACC is not T
 *       (an `if constexpr`: for float they are left as they are).  Torch
 *       2.11's <T> has no _acc pair.  X rows x N.
 *   ComputeInternalGradientsCUDAKernel<T>(int64_t HxW, dY, X, T_ACC* ds,
 *       T_ACC* db): ds and db [blockIdx.x]; dY and X rows x HxW.
 *  Both are what a convolution's output meets first in a diffusion UNet
 *  (conv, then GroupNorm): as decoded readers of X they let the generic
 *  tier name the convolution, not the statistics kernel.
 *
 *  SoftMax.cu, one block per row of `classes`, input and output advanced
 *  by blockIdx.x * classes:
 *   cunn_SoftMaxForward<ILP, ..>(out, in, int classes) and
 *   cunn_SoftMaxBackward<ILP, ..>(gradInput, output, gradOutput, int64_t
 *       classes): every element of the row, misaligned heads and tails
 *       included.  rows x classes.
 *   cunn_SoftMaxForwardSmem and cunn_SoftMaxBackwardSmem<ILP, ..>: ILP-wide
 *       vectors only (the host needs classes % ILP == 0).  rows x classes.
 *   cunn_SoftMaxForwardReg<in, acc, out, Epilogue, index_t, REG>: element
 *       threadIdx.x + k * blockDim.x, k < REG, if below classes: the row
 *       is whole only if blockDim.x * REG >= classes.  rows x classes.
 *
 *  PersistentSoftmax.cuh, softmax_warp_forward and softmax_warp_backward
 *  <in, out, acc, log2_elements, is_log_softmax, is_masked, WARP_SIZE_PARAM>
 *  (torch 2.11: no WARP_SIZE_PARAM, C10_WARP_SIZE, 32, in its place)
 *  (dst, src[, output], int batch_size, int stride, int element_count, ..):
 *  next = 1 << log2_elements, WARP_SIZE = min(next, WARP_SIZE_PARAM),
 *  WARP_BATCH = next <= 128 ? 2 : 1; warp (blockIdx.x, threadIdx.y) does
 *  rows first = (blockDim.y * blockIdx.x + threadIdx.y) * WARP_BATCH and
 *  the next, dst + first * stride + threadIdx.x, row i of the warp at
 *  + i * element_count, columns threadIdx.x + it * WARP_SIZE below
 *  element_count, it < next / WARP_SIZE, rows below batch_size.  Whole
 *  rows, back to back, only if stride == element_count (what the host
 *  passes), element_count <= next, blockDim.x == WARP_SIZE and the grid
 *  covers batch_size rows.  batch_size x element_count.
 *
 *  Normalization.cuh, batch norm's channels-last elementwise kernels
 *  (the tensor as reduction_size rows of `stride` channels):
 *   batch_norm_transform_input_channels_last_kernel<T, acc, layer, LOADS>
 *       (x, z, mean, inv_std, weight, shift, T* out, int reduction_size,
 *       int stride, bool fuse_relu) and
 *   batch_norm_backward_elemt_channels_last_kernel<LOADS, T, acc, layer>
 *       (dy, x, mean, inv_std, weight, sum_dy, sum_dy_xmu, [int const*
 *       numel,] T* grad_input, [acc norm_fct | int64_t world_size], int
 *       reduction_size, int stride): thread (c = blockIdx.x * blockDim.x
 *       + threadIdx.x, m = blockIdx.y * blockDim.y + threadIdx.y) writes
 *       [m * stride + c] and every blockDim.y * gridDim.y rows below it,
 *       for c < stride, m < reduction_size: whole only if gridDim.x *
 *       blockDim.x >= stride (the host's flexible_launch_configs makes
 *       it so).  reduction_size x stride.
 *  and its channels-last reductions, on the same grid:
 *   batch_norm_collect_statistics_channels_last_kernel<VarTransform, T,
 *       acc, LOADS>(x, acc* out_mean, acc* out_invstd, volatile acc*
 *       staging_data, int* semaphores, int reduction_size, int stride,
 *       acc epsilon) and
 *   batch_norm_backward_reduce_channels_last_kernel<LOADS, T, acc,
 *       layer>(x, dy, mean, inv_std, acc* sum_dy, acc* sum_dy_xmu, layer*
 *       grad_weight, layer* grad_bias, volatile acc* staging_data, int*
 *       semaphores, int reduction_size, int stride): each output's
 *       element c written by thread (c, threadIdx.y 0) of block row 0
 *       (gridDim.y 1) or of the column's last block to finish (the
 *       others leave partial results in staging_data, no output), for c
 *       < stride: whole when gridDim.x * blockDim.x >= stride, stride
 *       elements each (grad_weight and grad_bias NULL without an affine
 *       weight); x (and dy) reduction_size x stride.
 *
 *  layer_norm_kernel.cu, the weight and bias gradients (torch >= 2.7):
 *   GammaBetaBackwardCUDAKernelTemplate<T, T_ACC, block_dim_x,
 *       block_dim_y, rows_per_block_y, partial_reduction, aligned_grid,
 *       rms_norm>(int64_t M, int64_t N, dY, X, mean, rstd, T* dg, T* db):
 *       column thread_x = blockIdx.x * block_dim_x + threadIdx.x, below N
 *       (every column when aligned_grid, whose host makes N a multiple
 *       of block_dim_x), sums its M rows.  With partial_reduction (or a
 *       single thread row: blockDim.y and gridDim.y 1) each thread row
 *       thread_y = blockIdx.y * blockDim.y + threadIdx.y writes its own
 *       dg[thread_y * N + thread_x]: gridDim.y x blockDim.y rows of N
 *       (the host's dgamma_blocks, summed by a reduce_kernel after it, or
 *       dgamma itself when that is one row); else the block's rows are
 *       reduced and dg[column] written: N.  db likewise, except in the
 *       rms_norm instance (RMSNorm: no bias, db not written).  dg and db
 *       NULL when their gradient is not wanted.  Read whole only if the
 *       block is block_dim_x x block_dim_y and gridDim.x * block_dim_x
 *       covers N.  dY and X: M x N.
 *
 *  group_norm_kernel.cu, the weight and bias gradients, <T>(int64_t N,
 *  int64_t C, int64_t group, ..., T* dgamma, T* dbeta), each NULL when
 *  not wanted:
 *   GammaBetaBackwardCUDAKernel1 and GammaBeta1dBackwardCUDAKernel1:
 *       column c = blockIdx.x * blockDim.x + threadIdx.x, below C, sums
 *       its N rows: dgamma[c].
 *   GammaBetaBackwardCUDAKernel2 and GammaBeta1dBackwardCUDAKernel2
 *       (the host's block 32 x 16): a block reduces a tile of blockDim.x
 *       columns, written by threads (0, y) as columns blockIdx.x *
 *       blockDim.x + y and + blockDim.y: all of them only if blockDim.x
 *       is 2 * blockDim.y.
 *   C each when gridDim.x * blockDim.x covers C.  The 1d forms' dY and X
 *   (const T*, N x C) are reads; the others read ds and db, of the
 *   accumulate type the signature does not name.
 *
 * Group norm's other kernels, batch norm's other statistics kernels and
 * the spatial softmax stay unsized:
 * the launch checks do not see them, the guards do (writers.h).  Batch
 * norm's NCHW kernels take tensor accessors: "accessor outputs" below.
 */
static const struct {
	const char *name;
	uint8_t kind;
	int8_t nsig, count;
	uint8_t csize;          /* sizeof the count: 4, 8, 0 for either (index_t) */
	int8_t y, mean, rstd;
	uint8_t xin;            /* bit p: parameter p is an input of rows x N elements
				 * (X, dY, a softmax's input, output, gradient), read
				 * by the generic tier (np_kdecode_reads) */
	uint16_t outs;          /* BN_CL_CHAN and the weight gradients: bit p, a per-row output */
	uint16_t scratch;       /* a T* written that is no output (staging_data,
				 * semaphores) */
} row_kernels[] = {
	{ "vectorized_layer_norm_kernel", NP_KR_LN_VEC, 8, 0, 4, 7, 5, 6, 1 << 2, 0, 0 },
	{ "LayerNormForwardCUDAKernel", NP_KR_LN, 8, 1, 8, 7, -1, -1, 1 << 2, 0, 0 },
	{ "RowwiseMomentsCUDAKernel", NP_KR_LN, 6, 1, 8, -1, 4, 5, 1 << 3, 0, 0 },
	/* torch 2.11: without the unread leading int64_t */
	{ "LayerNormForwardCUDAKernel", NP_KR_LN, 7, 0, 8, 6, -1, -1, 1 << 1, 0, 0 },
	{ "RowwiseMomentsCUDAKernel", NP_KR_LN, 5, 0, 8, -1, 3, 4, 1 << 2, 0, 0 },
	{ "layer_norm_grad_input_kernel", NP_KR_LN, 7, 6, 4, 5, -1, -1, 1 << 0 | 1 << 1, 0, 0 },
	{ "layer_norm_grad_input_kernel_vectorized", NP_KR_LN, 7, 6, 4, 5, -1, -1, 1 << 0 | 1 << 1, 0, 0 },
	{ "cunn_SoftMaxForward", NP_KR_SM_BLOCK, 3, 2, 4, 0, -1, -1, 1 << 1, 0, 0 },
	{ "cunn_SoftMaxBackward", NP_KR_SM_BLOCK, 4, 3, 8, 0, -1, -1, 1 << 1 | 1 << 2, 0, 0 },
	{ "cunn_SoftMaxForwardSmem", NP_KR_SM_SMEM, 3, 2, 0, 0, -1, -1, 1 << 1, 0, 0 },
	{ "cunn_SoftMaxBackwardSmem", NP_KR_SM_SMEM, 4, 3, 8, 0, -1, -1, 1 << 1 | 1 << 2, 0, 0 },
	{ "cunn_SoftMaxForwardReg", NP_KR_SM_REG, 3, 2, 0, 0, -1, -1, 1 << 1, 0, 0 },
	{ "softmax_warp_forward", NP_KR_SM_WARP, 8, 2, 4, 0, -1, -1, 1 << 1, 0, 0 },
	{ "softmax_warp_backward", NP_KR_SM_WARP, 7, 3, 4, 0, -1, -1, 1 << 1 | 1 << 2, 0, 0 },
	/* x (and dy): reduction_size x stride, as the output */
	{ "batch_norm_transform_input_channels_last_kernel", NP_KR_BN_CL, 10, 7, 4, 6, -1, -1,
	  1 << 0, 0, 0 },
	{ "batch_norm_backward_elemt_channels_last_kernel", NP_KR_BN_CL, 11, 9, 4, 7, -1, -1,
	  1 << 0 | 1 << 1, 0, 0 },
	{ "batch_norm_backward_elemt_channels_last_kernel", NP_KR_BN_CL, 12, 10, 4, 8, -1, -1,
	  1 << 0 | 1 << 1, 0, 0 },
	/* stride outputs each; x (and dy) reduction_size x stride */
	{ "batch_norm_collect_statistics_channels_last_kernel", NP_KR_BN_CL_CHAN, 8, 5, 4, -1, -1,
	  -1, 1 << 0, 1 << 1 | 1 << 2, 1 << 3 | 1 << 4 },
	{ "batch_norm_backward_reduce_channels_last_kernel", NP_KR_BN_CL_CHAN, 12, 10, 4, -1, -1,
	  -1, 1 << 0 | 1 << 1, 1 << 4 | 1 << 5 | 1 << 6 | 1 << 7, 1 << 8 | 1 << 9 },
	/* dg and db (db in mean's place: the RMSNorm instance writes none);
	 * dY and X M x N */
	{ "GammaBetaBackwardCUDAKernelTemplate", NP_KR_GAMMA_BETA, 8, 1, 8, -1, 7, -1,
	  1 << 2 | 1 << 3, 1 << 6, 0 },
	/* group norm's: dgamma and dbeta, C each; the 1d forms' dY and X */
	{ "GammaBetaBackwardCUDAKernel1", NP_KR_GN_GAMMA_BETA, 9, 1, 8, -1, -1, -1, 0,
	  1 << 7 | 1 << 8, 0 },
	{ "GammaBetaBackwardCUDAKernel2", NP_KR_GN_GAMMA_BETA, 9, 1, 8, -1, -1, -1, 0,
	  1 << 7 | 1 << 8, 0 },
	{ "GammaBeta1dBackwardCUDAKernel1", NP_KR_GN_GAMMA_BETA, 9, 1, 8, -1, -1, -1,
	  1 << 3 | 1 << 4, 1 << 7 | 1 << 8, 0 },
	{ "GammaBeta1dBackwardCUDAKernel2", NP_KR_GN_GAMMA_BETA, 9, 1, 8, -1, -1, -1,
	  1 << 3 | 1 << 4, 1 << 7 | 1 << 8, 0 },
	/* group norm's statistics (torch 2.14: T's, and T_ACC's when they
	 * differ) and its backward's per-(n, c) sums ds, db; X (dY) rows x N */
	{ "RowwiseMomentsCUDAKernel", NP_KR_GN, 7, 0, 8, -1, 3, 4, 1 << 2, 1 << 5 | 1 << 6, 0 },
	/* torch 2.11's <T>: layer norm's 2.11 statistics kernel's shape, its
	 * mean and rstd of T */
	{ "RowwiseMomentsCUDAKernel", NP_KR_GN, 5, 0, 8, -1, 3, 4, 1 << 2, 0, 0 },
	{ "ComputeInternalGradientsCUDAKernel", NP_KR_GN, 5, 0, 8, -1, 3, 4, 1 << 1 | 1 << 2, 0,
	  0 },
};

/* *out from row_kernels[i] for this kernel: 0, or -1 when its template
 * or signature is not the one that row read. */
static int rows_from(size_t i, const struct np_kinfo *ki, struct span name, struct span targs,
		     struct np_krows *out)
{
	struct np_krows r = { 0 };
	int v, w;

	r.kind = row_kernels[i].kind;
	r.count = row_kernels[i].count;
	r.csize = row_kernels[i].csize;
	r.y = row_kernels[i].y;
	r.mean = row_kernels[i].mean;
	r.rstd = row_kernels[i].rstd;
	r.outs = row_kernels[i].outs;
	r.scratch = row_kernels[i].scratch;
	/* the outputs (and scratch) must be the T* the signature names,
	 * nothing else */
	for (int p = 0; p < ki->nsig; p++) {
		int out = p == r.y || p == r.mean || p == r.rstd || (r.outs >> p & 1) ||
			  (r.scratch >> p & 1);
		if (out != (ki->sig[p].kind == NP_KP_OUT_PTR) ||
		    (p == r.count && ki->sig[p].kind != NP_KP_SCALAR))
			return -1;
		/* and the inputs const floating T* */
		if ((row_kernels[i].xin >> p & 1) && ki->sig[p].kind == NP_KP_IN_PTR &&
		    ki->sig[p].dtype >= 0)
			r.xin |= (uint8_t)(1u << p);
	}
	switch (r.kind) {
	case NP_KR_LN_VEC:
	case NP_KR_LN:
		if (span_eq(nth_item(targs, 2), "true"))
			r.rms = 1;
		else if (!span_eq(nth_item(targs, 2), "false"))
			return -1;
		if (r.kind == NP_KR_LN_VEC && span_eq(nth_item(targs, 0), "double"))
			return -1;
		break;
	case NP_KR_SM_BLOCK:
	case NP_KR_BN_CL:
	case NP_KR_BN_CL_CHAN:
		break;
	case NP_KR_GN:                  /* <T, T_ACC> or <T> */
		if (nth_item(targs, 2).p)
			return -1;
		/* T_ACC's copies are written only when T_ACC is not T: else
		 * they are left as they are (not checked) */
		if (r.outs && spans_eq(nth_item(targs, 0), nth_item(targs, 1)))
			r.scratch |= r.outs, r.outs = 0;
		break;
	case NP_KR_GAMMA_BETA:  /* <T, T_ACC, bx, by, rows_per_block_y, partial, aligned, rms> */
		v = targ_int(targs, 2);
		w = targ_int(targs, 3);
		if (v < 1 || v > 64 || w < 1 || w > 64 || v * w > 1024 ||
		    !(span_eq(nth_item(targs, 5), "true") || span_eq(nth_item(targs, 5), "false")) ||
		    !(span_eq(nth_item(targs, 7), "true") || span_eq(nth_item(targs, 7), "false")))
			return -1;
		r.warp = (uint8_t)v;
		r.unit = (uint8_t)w;
		r.partial = span_eq(nth_item(targs, 5), "true");
		r.rms = span_eq(nth_item(targs, 7), "true");
		break;
	case NP_KR_GN_GAMMA_BETA:       /* <T>; Kernel2 writes a tile per block */
		if (nth_item(targs, 1).p)
			return -1;
		r.unit = name.p[name.n - 1] == '2' ? 2 : 1;
		break;
	case NP_KR_SM_SMEM:             /* <ILP, ..> */
	case NP_KR_SM_REG:              /* <.., index_t, REG> */
		v = targ_int(targs, r.kind == NP_KR_SM_SMEM ? 0 : 5);
		if (v < 1 || v > 64)
			return -1;
		r.unit = (uint8_t)v;
		break;
	case NP_KR_SM_WARP:             /* <.., log2_elements, .., .., WARP_SIZE_PARAM> */
		v = targ_int(targs, 3);
		w = nth_item(targs, 6).p ? targ_int(targs, 6) : 32;     /* torch 2.11 */
		if (v < 0 || v > 14 || w < 1 || w > 64 || (w & (w - 1)))
			return -1;
		r.unit = (uint8_t)v;
		r.warp = (uint8_t)w;
		break;
	}
	*out = r;
	return 0;
}

/* Fills ki->rows from the first row of the table above that reads this
 * kernel (its name and parameter count, then its template: two rows may
 * share both, group norm's and layer norm's statistics in torch 2.11);
 * leaves NP_KR_NONE (unsized) when none does. */
static void rows_classify(struct np_kinfo *ki, struct span name, struct span targs)
{
	if (!targs.p)
		return;
	for (size_t i = 0; i < sizeof(row_kernels) / sizeof(row_kernels[0]); i++)
		if (span_eq(name, row_kernels[i].name) && ki->nsig == row_kernels[i].nsig &&
		    rows_from(i, ki, name, targs, &ki->rows) == 0)
			return;
}

/* ---- accessor outputs ----
 *
 *  Normalization.cuh, <T input, stat, stat_acc, [bool train,] index_t>,
 *  tensors viewed as (N, C, rest), each output accessor 3-D:
 *   batch_norm_transform_input_kernel(input, output, mean, var_or_invstd,
 *       weight, bias, epsilon) and
 *   batch_norm_backward_elemt_kernel(input, grad_output, mean, invstd,
 *       weight, sum_dy, sum_dy_xmu, grad_input, norm_fct | (int const*
 *       numel, int world_size)): plane = blockIdx.x (returns past
 *       size(1)); batches from blockIdx.y * blockDim.y + threadIdx.y by
 *       blockDim.y * gridDim.y, features from threadIdx.x by blockDim.x:
 *       every element of the output's planes below gridDim.x.  Whole when
 *       gridDim.x >= size(1), and one contiguous range when the strides
 *       are (size(1) * size(2), size(2), 1) (the host's view of an NCHW
 *       output).  Parameter sizes checked against torch 2.14.1's layouts
 *       (8 + 6 * sizeof(index_t)).
 *  batch_norm_collect_statistics_kernel<VarTransform, input, stat,
 *      stat_acc, index_t>(input, epsilon, momentum, save_mean,
 *      save_transformed_var): plane = blockIdx.x, whose thread 0 writes
 *      save_mean[plane] and save_transformed_var[plane] (1-D accessors of
 *      stat_acc, a dummy when its data is NULL); the host launches one
 *      block per plane, input.size(1).  Whole when gridDim.x is their
 *      size and their stride 1.
 *  batch_norm_backward_kernel<input, stat, stat_acc, index_t>(input,
 *      grad_output, grad_input, grad_weight, grad_bias, weight,
 *      running_mean, running_var, save_mean, save_invstd, train, epsilon)
 *      (the fused backward batch_norm_backward_cuda runs for an NCHW
 *      input whose gradient is wanted): plane = blockIdx.x, one block per
 *      plane; its threads loop over every batch (threadIdx.y by
 *      blockDim.y) and feature (threadIdx.x by blockDim.x) of
 *      grad_input[.][plane][.] (a dummy when not wanted), and thread 0
 *      writes grad_weight[plane] and grad_bias[plane] (of stat, when
 *      their size is not 0).  Whole as the statistics kernel's.
 *  The input accessors these kernels read whole (transform's and the
 *  statistics' input, backward_elemt's input and grad_output) are reads
 *  for the generic tier: a convolution's output (cuDNN, undecodable) is
 *  first read by batch norm's statistics.
 *  batch_norm_backward_reduce_kernel<input, stat, stat_acc, index_t>
 *      (input, grad_output, mean, invstd, sum_dy, sum_dy_xmu, grad_weight,
 *      grad_bias) (SyncBatchNorm's backward, and batch norm's when the
 *      input's gradient is not wanted, or its types are mixed): plane =
 *      blockIdx.x, one block per plane, whose thread 0 writes each of
 *      sum_dy, sum_dy_xmu (stat_acc) and grad_weight, grad_bias (stat)
 *      whose size is not 0; mean and invstd, though not const, are only
 *      read.  Whole as the statistics kernel's; input and grad_output are
 *      reads.
 *  The gather of SyncBatchNorm's statistics stays unsized.
 */
static const struct {
	const char *name;
	int8_t nsig, param, index_targ;
	int8_t dtype_targ;      /* the 3-D output's type (with no 3-D output: the planes') */
	uint8_t planes;         /* bit p: a 1-D output of template argument plane_targ */
	int8_t plane_targ;
	uint8_t xin;            /* bit p: a 3-D input accessor of template argument in_targ */
	int8_t in_targ;
	uint8_t planes2;        /* bit p: a 1-D output of template argument plane2_targ */
	int8_t plane2_targ;
} acc_kernels[] = {
	{ "batch_norm_transform_input_kernel", 7, 1, 4, 0, 0, -1, 1 << 0, 0, 0, -1 },
	{ "batch_norm_backward_elemt_kernel", 9, 7, 3, 0, 0, -1, 1 << 0 | 1 << 1, 0, 0, -1 },
	{ "batch_norm_backward_elemt_kernel", 10, 7, 3, 0, 0, -1, 1 << 0 | 1 << 1, 0, 0, -1 },
	{ "batch_norm_collect_statistics_kernel", 5, -1, 4, 3, 1 << 3 | 1 << 4, 3, 1 << 0, 1,
	  0, -1 },
	{ "batch_norm_backward_kernel", 12, 2, 3, 0, 1 << 3 | 1 << 4, 1, 1 << 0 | 1 << 1, 0,
	  0, -1 },
	{ "batch_norm_backward_reduce_kernel", 8, -1, 3, 1, 1 << 6 | 1 << 7, 1, 1 << 0 | 1 << 1,
	  0, 1 << 4 | 1 << 5, 2 },
};

static void acc_classify(struct np_kinfo *ki, struct span name, struct span targs)
{
	int why = NP_KDT_UNKNOWN, in_why, d;
	size_t i;
	struct span it;

	for (i = 0; i < sizeof(acc_kernels) / sizeof(acc_kernels[0]); i++)
		if (span_eq(name, acc_kernels[i].name) && ki->nsig == acc_kernels[i].nsig)
			break;
	if (i == sizeof(acc_kernels) / sizeof(acc_kernels[0]) || !targs.p)
		return;
	it = trim(nth_item(targs, acc_kernels[i].index_targ));
	d = type_dtype(nth_item(targs, acc_kernels[i].dtype_targ), &why);
	if (d < 0 || !(span_eq(it, "int") || span_eq(it, "long")))
		return;
	ki->acc.param = acc_kernels[i].param;
	ki->acc.isz = span_eq(it, "int") ? 4 : 8;
	ki->acc.planes = acc_kernels[i].planes;
	ki->acc.plane_dtype = (int8_t)(acc_kernels[i].plane_targ < 0 ? -1 :
		type_dtype(nth_item(targs, acc_kernels[i].plane_targ), &in_why));
	if (ki->acc.plane_dtype < 0)
		ki->acc.planes = 0;
	ki->acc.planes2 = acc_kernels[i].planes2;
	ki->acc.plane2_dtype = (int8_t)(acc_kernels[i].plane2_targ < 0 ? -1 :
		type_dtype(nth_item(targs, acc_kernels[i].plane2_targ), &in_why));
	if (ki->acc.plane2_dtype < 0)
		ki->acc.planes2 = 0;
	ki->acc.xin = acc_kernels[i].xin;
	ki->in_dtype = type_dtype(nth_item(targs, acc_kernels[i].in_targ), &in_why);
	if (ki->in_dtype < 0)
		ki->acc.xin = 0;
	ki->dtype = d;
	ki->dtype_why = why;
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
		rows_classify(ki, name, targs);
	if (ki->family >= NP_KF_SOFTMAX && ki->family != NP_KF_MULTI_TENSOR_APPLY)
		signature_dtype(ki);
	scalar_classify(ki, name);
	counted_classify(ki, name);
	if (ki->family == NP_KF_BATCH_NORM)
		acc_classify(ki, name, targs);
	if (ki->family == NP_KF_CAT && targs.p)
		cat_classify(ki, name, targs);
	if (span_starts(name, "flash_") && span_starts(s, "pytorch_flash::") && targs.p)
		flash_classify(ki, name, targs);
	if ((span_eq(name, "indexSelectSmallIndex") || span_eq(name, "indexSelectLargeIndex")) &&
	    targs.p)
		index_classify(ki, name, targs);
	if ((span_starts(name, "fmha_cutlassF_") || span_starts(name, "fmha_cutlassB_")) &&
	    !targs.p)
		memeff_classify(ki, name, rest);
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

/* c10::ScalarType (a byte in StoreWithCast::dtypes) to np_dtype, or -1. */
static int scalar_type_dtype(uint8_t st)
{
	switch (st) {
	case 5: return NP_DT_F16;       /* Half */
	case 6: return NP_DT_F32;       /* Float */
	case 7: return NP_DT_F64;       /* Double */
	case 15: return NP_DT_BF16;     /* BFloat16 */
	case 23: return NP_DT_F8E5M2;   /* Float8_e5m2 */
	case 24: return NP_DT_F8E4M3;   /* Float8_e4m3fn */
	default: return -1;             /* ints, bool, complex, fnuz, ... */
	}
}

/* Input k's dtype in an unrolled kernel's LoadWithCast<N> (parameter 5:
 * ScalarType dtypes[N], then uint32 element_sizes[N] from a 4-byte
 * boundary), or -1: a cast on load (bf16 logits to float for the loss, in
 * autocast) reads its input as the type the launch names, which must
 * agree with the element size beside it. */
static int load_cast_dtype(const struct np_kinfo *ki, const struct np_kparams *l,
			   void *const *kp, int k)
{
	uint32_t nl = ki->load_cast, sizes = (nl + 3) & ~3u;
	int dt;

	if (!nl || k < 0 || (uint32_t)k >= nl || l->n != 7 || l->p[5].size != sizes + 4 * nl)
		return -1;
	dt = scalar_type_dtype(((const uint8_t *)kp[5])[k]);
	return dt >= 0 && np_u32_at(kp[5], sizes + 4u * (uint32_t)k) ==
				  np_dtype_size((enum np_dtype)dt) ? dt : -1;
}

/* Reads the first 8 bytes of parameter i (size checked by the caller). */
static uint64_t word_at(void *const *kp, int i, uint32_t at)
{
	uint64_t v;
	memcpy(&v, (const char *)kp[i] + at, sizeof(v));
	return v;
}

/* The candidate pointer words of parameter i, appended to out[*k..max). */
static void param_words(const struct np_kparams *l, void *const *kp, int i, uint64_t *out,
			int *k, int max)
{
	uint32_t off = l->p[i].offset, size = l->p[i].size;
	/* first 8-aligned offset in the parameter buffer, relative to the param */
	for (uint32_t at = (8 - off % 8) % 8; at + 8 <= size && *k < max; at += 8) {
		uint64_t w = word_at(kp, i, at);
		if (np_pointer_like(w))
			out[(*k)++] = w;
	}
}

/* Where the outputs of one launch go: the first `skip` found are passed
 * over, then out[] fills, then the rest are only counted. */
struct emit {
	struct np_kbuf *out;
	int max, n;
	uint32_t skip, more;
};

/* The slot for the next output found, or NULL if it is passed over. */
static struct np_kbuf *emit_next(struct emit *e)
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
	return b;
}

/* (int N, functor, std::array<char*, K> data, ...): data[0] is the output. */
static int elementwise_outputs(const struct np_kinfo *ki, const struct np_kparams *l,
			       void *const *kp, uint64_t hint, struct emit *e)
{
	int want = ki->family == NP_KF_VEC_ELEMENTWISE ? 3 : 7, dtype = ki->dtype;
	struct np_kbuf *out;
	int32_t n;
	uint64_t ptr;

	if (l->n != want || l->p[0].size != 4 || l->p[2].size < 8 ||
	    (ki->narrays && l->p[2].size != 8u * (unsigned)ki->narrays))
		return 0;
	if (ki->dtype_why == NP_KDT_RUNTIME) {
		if (l->p[6].size < 1)
			return 0;
		dtype = scalar_type_dtype(*(const uint8_t *)kp[6]);
	} else if (ki->dtype_why != NP_KDT_KNOWN && ki->dtype_why != NP_KDT_INFERRED) {
		return 0;
	}
	memcpy(&n, kp[0], sizeof(n));
	ptr = word_at(kp, 2, 0);
	if (dtype < 0 || n <= 0 || !ptr || (hint && (uint64_t)n > hint * 256))
		return 0;
	out = emit_next(e);
	if (!out)
		return e->n;
	out->ptr = ptr;
	out->numel = (uint64_t)n;
	out->dtype = (enum np_dtype)dtype;
	out->how = ki->dtype_why == NP_KDT_INFERRED ? NP_KH_ELEMENTWISE_INFERRED : NP_KH_ELEMENTWISE;
	return e->n;
}

/* Parameter i as a signed integer of its size (4 or 8 bytes); -1 for any
 * other size. */
static int64_t int_at(const struct np_kparams *l, void *const *kp, int i)
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

/* The rows and row length a row kernel's launch writes (see "row-sized
 * outputs"): *rows x *cols elements of output y and of the inputs read
 * whole, *each of every other output (mean and rstd: *rows).  All 0 when
 * the launch does not let us know (no grid, a grid or arguments the
 * kernel's host never gives it).  Returns -1 when the layout does not fit
 * the name. */
static int row_extent(const struct np_krows *r, const struct np_kparams *l, void *const *kp,
		      const struct np_klaunch *kl, uint64_t *rows, uint64_t *cols, uint64_t *each)
{
	const uint32_t *g = kl ? kl->grid : NULL, *b = kl ? kl->block : NULL;
	int64_t n, batch, stride;
	uint32_t next, ws, wb;

	*rows = *cols = *each = 0;
	if (r->csize ? l->p[r->count].size != r->csize :
		       l->p[r->count].size != 4 && l->p[r->count].size != 8)
		return -1;
	if (r->kind == NP_KR_SM_WARP &&
	    (l->p[r->count + 1].size != 4 || l->p[r->count + 2].size != 4))
		return -1;
	if (r->kind == NP_KR_BN_CL || r->kind == NP_KR_BN_CL_CHAN) {
		/* a 2-D grid: channels x, rows y */
		if (l->p[r->count + 1].size != 4)
			return -1;
		n = int_at(l, kp, r->count);
		stride = int_at(l, kp, r->count + 1);
		if (!g || !g[0] || !b[0] || n <= 0 || stride <= 0 ||
		    (uint64_t)g[0] * b[0] < (uint64_t)stride)
			return 0;
		/* the reductions' outputs are a row of channels */
		*rows = *each = (uint64_t)(r->kind == NP_KR_BN_CL ? n : stride);
		*cols = (uint64_t)(r->kind == NP_KR_BN_CL ? stride : n);
		return 0;
	}
	if (r->kind == NP_KR_GAMMA_BETA || r->kind == NP_KR_GN_GAMMA_BETA) {
		/* weight gradients, (int64_t M, int64_t N, ..): N columns on x,
		 * each summing M rows */
		if (l->p[0].size != 8)
			return -1;
		batch = int_at(l, kp, 0);
		n = int_at(l, kp, 1);
		if (!g || batch <= 0 || n <= 0 || !b[0] || b[2] != 1 || g[2] != 1 ||
		    (uint64_t)g[0] * b[0] < (uint64_t)n || (uint64_t)batch > UINT64_MAX / (uint64_t)n)
			return 0;
		if (r->kind == NP_KR_GN_GAMMA_BETA) {
			/* one block row; Kernel2's thread rows write its tile's columns */
			if (g[1] != 1 || (r->unit == 2 && b[0] != 2u * b[1]))
				return 0;
			*each = (uint64_t)n;
		} else {
			/* the template's block; a row of N per thread row when they
			 * are not reduced */
			if (b[0] != r->warp || b[1] != r->unit || !g[1] ||
			    (uint64_t)n * g[1] * b[1] > (1ull << 48))
				return 0;
			*each = r->partial || (b[1] == 1 && g[1] == 1) ?
					(uint64_t)n * g[1] * b[1] : (uint64_t)n;
		}
		*rows = (uint64_t)n;
		*cols = (uint64_t)batch;
		return 0;
	}
	if (!g || !g[0] || g[1] != 1 || g[2] != 1 || !b[0] || !b[1] || b[2] != 1)
		return 0;
	n = int_at(l, kp, r->count);
	if (n <= 0)
		return 0;
	switch (r->kind) {
	case NP_KR_LN_VEC:
		if (n % 4)
			return 0;
		break;
	case NP_KR_SM_SMEM:
		if (n % r->unit)
			return 0;
		break;
	case NP_KR_SM_REG:
		if (b[1] != 1 || (uint64_t)b[0] * r->unit < (uint64_t)n)
			return 0;
		break;
	case NP_KR_SM_WARP:
		batch = n;
		stride = int_at(l, kp, r->count + 1);
		n = int_at(l, kp, r->count + 2);
		next = 1u << r->unit;
		ws = next < r->warp ? next : r->warp;
		wb = next <= 128 ? 2 : 1;
		/* the kernel's offsets are int: past INT32_MAX it wraps */
		if (n <= 0 || n > next || stride != n || b[0] != ws ||
		    (uint64_t)g[0] * b[1] * wb < (uint64_t)batch ||
		    (uint64_t)batch * (uint64_t)n > INT32_MAX)
			return 0;
		*rows = *each = (uint64_t)batch;
		*cols = (uint64_t)n;
		return 0;
	}
	if ((uint64_t)n > UINT64_MAX / g[0])
		return 0;
	*rows = *each = g[0];
	*cols = (uint64_t)n;
	return 0;
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
	if (r->kind && row_extent(r, l, kp, kl, &rows, &cols, &each))
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

/* The output of an accessor kernel (see "accessor outputs"). */
#define ACC_MAX_DIM (1ll << 31)  /* a size beyond: left unsized (the products below fit) */

/* The index_t at b + at. */
static int64_t acc_index(const unsigned char *b, uint32_t isz, uint32_t at)
{
	return isz == 4 ? (int64_t)np_i32_at(b, at) : (int64_t)np_u64_at(b, at);
}

/* A 3-D accessor's data (*ptr, 0 for a dummy) and its elements when its
 * strides are a contiguous (N, C, rest) tensor's and the grid's x covers
 * its planes; 0 if not whole, -1 if nothing is written (a size 0). */
static int64_t acc3_numel(const unsigned char *b, uint32_t isz, const struct np_klaunch *kl,
			  uint64_t *ptr)
{
	int64_t size[3], stride[3];

	*ptr = np_u64_at(b, 0);
	for (int k = 0; k < 3; k++) {
		size[k] = acc_index(b, isz, 8 + isz * (uint32_t)k);
		stride[k] = acc_index(b, isz, 8 + isz * (uint32_t)(3 + k));
	}
	if (size[0] <= 0 || size[1] <= 0 || size[2] <= 0)
		return -1;
	if (size[0] > ACC_MAX_DIM || size[1] > ACC_MAX_DIM || size[2] > ACC_MAX_DIM)
		return 0;
	if ((stride[2] == 1 || size[2] == 1) && (stride[1] == size[2] || size[1] == 1) &&
	    (stride[0] == size[1] * size[2] || size[0] == 1) && kl && kl->grid[0] >= size[1] &&
	    size[0] <= INT64_MAX / size[1] / size[2])
		return size[0] * size[1] * size[2];
	return 0;
}

static int accessor_outputs(const struct np_kinfo *ki, const struct np_kparams *l,
			    void *const *kp, const struct np_klaunch *kl, struct emit *e)
{
	const struct np_kacc *a = &ki->acc;
	uint32_t acc1 = 8u + 2u * a->isz, acc3 = 8u + 6u * a->isz;
	struct np_kbuf *out;
	uint64_t ptr;

	if (ki->nsig < 0 || l->n != ki->nsig || (a->param < 0 && !a->planes && !a->planes2) ||
	    (a->param >= 0 && l->p[a->param].size != acc3))
		return 0;
	for (int p = 0; p < l->n; p++)
		if (((a->planes | a->planes2) >> p & 1) && l->p[p].size != acc1)
			return 0;
	if (a->param >= 0) {    /* the 3-D output */
		int64_t n = acc3_numel(kp[a->param], a->isz, kl, &ptr);
		if (ptr && n >= 0 && (out = emit_next(e))) {   /* not a dummy, something written */
			out->ptr = ptr;
			out->dtype = (enum np_dtype)ki->dtype;
			out->how = NP_KH_ACCESSOR;
			out->numel = (uint64_t)n;
		}
	}
	for (int p = 0; p < l->n; p++) {        /* the 1-D ones: an element a plane */
		const unsigned char *b = kp[p];
		int64_t size, stride;
		if (!((a->planes | a->planes2) >> p & 1))
			continue;
		size = acc_index(b, a->isz, 8);
		stride = acc_index(b, a->isz, 8 + a->isz);
		ptr = np_u64_at(b, 0);
		if (!ptr || size <= 0 || !(out = emit_next(e)))
			continue;       /* a dummy: nothing written there */
		out->ptr = ptr;
		out->dtype = (enum np_dtype)(a->planes >> p & 1 ? a->plane_dtype : a->plane2_dtype);
		out->how = NP_KH_ACCESSOR;
		out->numel = (stride == 1 || size == 1) && kl && kl->grid[0] == (uint64_t)size &&
					     kl->grid[1] == 1 && kl->grid[2] == 1 ?
				     (uint64_t)size : 0;
	}
	return e->n;
}

/* The 3-D input accessors a batch norm kernel reads whole (acc_kernels). */
static int accessor_reads(const struct np_kinfo *ki, const struct np_kparams *l, void *const *kp,
			  const struct np_klaunch *kl, struct np_kread *out, int max)
{
	const struct np_kacc *a = &ki->acc;
	int n = 0;

	if (ki->nsig < 0 || l->n != ki->nsig || ki->in_dtype < 0)
		return 0;
	for (int p = 0; p < l->n && n < max; p++) {
		uint64_t ptr;
		int64_t m;
		if (!(a->xin >> p & 1) || l->p[p].size != 8u + 6u * a->isz)
			continue;
		m = acc3_numel(kp[p], a->isz, kl, &ptr);
		if (ptr && m > 0)
			out[n++] = (struct np_kread){ ptr, (uint64_t)m, (enum np_dtype)ki->in_dtype };
	}
	return n;
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
			    np_dtype_size((enum np_dtype)ki->dtype), ki->red.ovs, kl->grid, kl->block,
			    &v))
		return 0;
	outputs = v.noutputs == 2 && ki->red.pair_values && v.dst[1] ? 2 : 1;
	for (int i = 0; i < outputs; i++) {
		struct np_kbuf *out = emit_next(e);
		if (!out)
			continue;
		out->ptr = v.dst[i];
		out->numel = v.num_outputs;
		out->dtype = (enum np_dtype)ki->dtype;
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

/* A strided elementwise kernel's lambda read (kdecode_lambda.h), with
 * its output's dtype: the functor's result (_nocast) or the output's own,
 * captured in the lambda (casting).  1, or 0 when it does not read. */
static int lambda_view(const struct np_kinfo *ki, const struct np_kparams *l, void *const *kp,
		       const struct np_klaunch *kl, struct np_lambda_view *v, int *dtype)
{
	int kind = ki->lam.kind, era = __atomic_load_n(&lambda_era, __ATOMIC_RELAXED);
	struct np_lambda_shape sh;
	int32_t n;

	*dtype = ki->dtype;
	if (kind == NP_KL_IMPL_FIRST)   /* casting in torch 2.x, not before; unknown: neither */
		kind = era > 0 ? NP_KL_CASTING : era < 0 ? NP_KL_NOCAST : NP_KL_NONE;
	if (kind == NP_KL_NONE || l->n != 2 || l->p[0].size != 4 || !kl)
		return 0;
	sh = (struct np_lambda_shape){ kind == NP_KL_CASTING, ki->lam.arity, ki->lam.threads,
				       ki->lam.vt, 0, 0 };
	if (!sh.casting) {
		if (*dtype < 0 || (ki->dtype_why != NP_KDT_KNOWN && ki->dtype_why != NP_KDT_INFERRED))
			return 0;
		sh.esize = np_dtype_size((enum np_dtype)*dtype);
		sh.in_esize = ki->in_dtype >= 0 ? np_dtype_size((enum np_dtype)ki->in_dtype) : 0;
	}
	memcpy(&n, kp[0], sizeof(n));
	if (!np_lambda_read(kp[1], l->p[1].size, n, &sh, kl->grid, kl->block, v))
		return 0;
	return !sh.casting || (*dtype = scalar_type_dtype((uint8_t)v->scalar_type)) >= 0;
}

/* A strided elementwise kernel's output, read from its lambda: N
 * elements of a dense output, read from the lambda's other data
 * pointers. */
static int lambda_outputs(const struct np_kinfo *ki, const struct np_kparams *l,
			  void *const *kp, const struct np_klaunch *kl, struct emit *e)
{
	struct np_lambda_view v;
	struct np_kbuf *out;
	int dtype;

	if (!lambda_view(ki, l, kp, kl, &v, &dtype))
		return 0;
	out = emit_next(e);
	if (!out)
		return e->n;
	out->ptr = v.data[0];
	out->numel = v.numel;
	out->dtype = (enum np_dtype)dtype;
	out->how = NP_KH_STRIDED;
	out->n_in = 0;
	for (int k = 1; k < v.ntensors && out->n_in < NP_KD_BUF_INPUTS; k++)
		out->in[out->n_in++] = v.data[k];
	return e->n;
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

static void flash_emit(struct emit *e, uint64_t ptr, uint64_t numel, enum np_dtype dtype)
{
	struct np_kbuf *out;
	if (ptr && (out = emit_next(e))) {
		out->ptr = ptr;
		out->numel = numel;
		out->dtype = dtype;
		out->how = NP_KH_FLASH;
	}
}

/* Flash attention's O and log-sum-exp, or the backward's dK and dV, or
 * dQ (kdecode_flash.h); all judged on the launch's pointer words (q, k,
 * v among them).  The dQ kernel's second parameter is its split count. */
static int flash_outputs(const struct np_kinfo *ki, const struct np_kparams *l,
			 void *const *kp, const struct np_klaunch *kl, struct emit *e)
{
	struct np_flash_view v;

	if (!kl || l->n != (ki->flash.kind == NP_FLASH_BWD_DQ ? 2 : 1) ||
	    !np_flash_read(kp[0], l->p[0].size, &ki->flash, kl->grid, kl->block, &v))
		return 0;
	flash_emit(e, v.o, v.o_numel, (enum np_dtype)ki->dtype);
	flash_emit(e, v.lse, v.lse_numel, NP_DT_F32);
	flash_emit(e, v.dv, v.dv_numel, (enum np_dtype)ki->dtype);
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

/* Memory-efficient attention's outputs (kdecode_memeff.h), judged, as
 * flash's, on the launch's pointer words. */
static int memeff_outputs(const struct np_kinfo *ki, const struct np_kparams *l,
			  void *const *kp, const struct np_klaunch *kl, struct emit *e)
{
	struct np_memeff_view v;
	struct np_kbuf *out;

	if (!kl || l->n != 1 ||
	    !np_memeff_read(kp[0], l->p[0].size, &ki->memeff, kl->grid, kl->block, &v))
		return 0;
	for (int i = 0; i < v.n && (out = emit_next(e)); i++) {
		out->ptr = v.ptr[i];
		out->numel = v.numel[i];
		out->dtype = v.lse[i] ? NP_DT_F32 : (enum np_dtype)ki->dtype;
		out->how = NP_KH_MEMEFF;
	}
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
 * (kdecode_cat.h), read from n of the launch's inputs from input[0]. */
static int cat_emit(const struct np_cat_shape *sh, const struct np_cat_view *v, uint64_t first,
		    uint64_t count, const uint64_t *input, int n, struct emit *e)
{
	struct np_kbuf *out = count ? emit_next(e) : NULL;   /* numel 0: unsized */
	if (!out)
		return 0;
	out->ptr = v->output + first * sh->esize;
	out->numel = count;
	out->dtype = NP_DT_MAX;
	out->esize = sh->esize;
	out->how = NP_KH_CAT;
	out->n_in = n;
	memcpy(out->in, input, (size_t)n * sizeof(*input));
	return 1;
}

/* torch.cat's output, what one launch of it writes (kdecode_cat.h): in
 * one check when it copies at most NP_KD_BUF_INPUTS inputs, else slab
 * by slab.  The dtype is left to the caller, who knows what wrote the
 * inputs. */
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
	if (v.ninputs <= NP_KD_BUF_INPUTS) {
		if (v.whole)
			cat_emit(sh, &v, 0, v.numel, v.input, v.ninputs, e);
		else
			cat_emit(sh, &v, v.start[0], v.start[last] + v.count[last] - v.start[0],
				 v.input, v.ninputs, e);
		return e->n;
	}
	if (v.slabs)
		for (int k = 0; k <= last; k++)
			if (v.count[k])
				cat_emit(sh, &v, v.start[k], v.count[k], &v.input[k], 1, e);
	return e->n;
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
static int mta_outputs(const struct np_kinfo *ki, const struct np_kparams *l, void *const *kp,
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
static int mta_reads(const struct np_kinfo *ki, const struct np_kparams *l, void *const *kp,
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
				out[n++] = (struct np_kread){ base, to, (enum np_dtype)m->dtype[r] };
		}
	}
	return n;
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
		n = elementwise_outputs(ki, layout, kernelParams, threads, &e);
		break;
	case NP_KF_BATCH_NORM:
		n = ki->acc.isz ? accessor_outputs(ki, layout, kernelParams, launch, &e)
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
		n = mta_outputs(ki, layout, kernelParams, launch ? launch->blocks : 0, &e);
		break;
	case NP_KF_REDUCE:
		n = reduce_outputs(ki, layout, kernelParams, launch, &e);
		break;
	case NP_KF_LAMBDA_ELEMENTWISE:
		n = lambda_outputs(ki, layout, kernelParams, launch, &e);
		break;
	case NP_KF_FLASH:
		n = flash_outputs(ki, layout, kernelParams, launch, &e);
		break;
	case NP_KF_INDEX:
		n = index_outputs(ki, layout, kernelParams, &e);
		break;
	case NP_KF_MEMEFF:
		n = memeff_outputs(ki, layout, kernelParams, launch, &e);
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

int np_kdecode_reads(const struct np_kinfo *ki, const struct np_kparams *layout,
		     void *const *kernelParams, const struct np_klaunch *launch,
		     struct np_kread *out, int max)
{
	struct np_kbuf o;
	struct emit e = { .out = &o, .max = 1 };
	int n = 0;

	if (ki->family == NP_KF_MULTI_TENSOR_APPLY)
		return kernelParams && launch ? mta_reads(ki, layout, kernelParams, launch->blocks,
							  out, max) : 0;
	if (ki->family == NP_KF_BATCH_NORM && ki->acc.isz && kernelParams)
		return accessor_reads(ki, layout, kernelParams, launch, out, max);
	if (ki->family == NP_KF_DROPOUT && kernelParams) {  /* its input, when dense */
		uint64_t b, a, an;
		if (!dropout_view(ki, layout, kernelParams, &b, &a, &an) || !an || max < 1)
			return 0;
		out[0] = (struct np_kread){ a, an, (enum np_dtype)ki->dtype };
		return 1;
	}
	if (ki->family == NP_KF_NORM_CLEANUP && kernelParams) {   /* the partials */
		uint64_t partials, chunks;
		uint32_t tensors;
		if (!cleanup_view(ki, layout, kernelParams, launch, &partials, &chunks, &tensors) ||
		    max < 1)
			return 0;
		out[0] = (struct np_kread){ partials, tensors * chunks, (enum np_dtype)ki->in_dtype };
		return 1;
	}
	if ((ki->family == NP_KF_FLASH || ki->family == NP_KF_MEMEFF) && kernelParams && launch &&
	    layout->n >= 1) {                   /* attention: q, k, v, or dO */
		uint64_t ptr[3], numel[3];
		int k = ki->family == NP_KF_FLASH ?
				np_flash_reads(kernelParams[0], layout->p[0].size, &ki->flash,
					       launch->grid, launch->block, ptr, numel) :
				np_memeff_reads(kernelParams[0], layout->p[0].size, &ki->memeff,
						launch->grid, launch->block, ptr, numel);
		for (int i = 0; i < k && n < max; i++)
			out[n++] = (struct np_kread){ ptr[i], numel[i], (enum np_dtype)ki->dtype };
		return n;
	}
	if (ki->rows.xin && kernelParams) {     /* a row kernel's rows x N inputs */
		uint64_t rows = 0, cols = 0, each;
		if (ki->nsig != layout->n ||
		    row_extent(&ki->rows, layout, kernelParams, launch, &rows, &cols, &each) ||
		    !rows || !cols)
			return 0;
		for (int i = 0; i < ki->nsig && n < max; i++) {
			uint64_t p = ki->rows.xin >> i & 1 && layout->p[i].size == 8 ?
					     word_at(kernelParams, i, 0) : 0;
			if (p)
				out[n++] = (struct np_kread){ p, rows * cols,
							      (enum np_dtype)ki->sig[i].dtype };
		}
		return n;
	}
	if (ki->family == NP_KF_LAMBDA_ELEMENTWISE && ki->in_dtype >= 0 && kernelParams) {
		struct np_lambda_view v;
		int dtype;
		if (!lambda_view(ki, layout, kernelParams, launch, &v, &dtype))
			return 0;
		for (int k = 1; k < v.ntensors && n < max; k++)
			if (v.in_numel[k] && v.data[k])
				out[n++] = (struct np_kread){ v.data[k], v.in_numel[k],
							      (enum np_dtype)ki->in_dtype };
		return n;
	}
	if ((ki->family != NP_KF_VEC_ELEMENTWISE && ki->family != NP_KF_UNROLLED_ELEMENTWISE) ||
	    (ki->in_dtype < 0 && !ki->load_cast) || !kernelParams || ki->narrays < 2 ||
	    elementwise_outputs(ki, layout, kernelParams, launch ? launch->threads : 0, &e) != 1)
		return 0;
	/* the output's checks passed the layout: data[] has narrays words */
	for (int k = 1; k < ki->narrays && n < max; k++) {
		uint64_t p = word_at(kernelParams, 2, 8u * (unsigned)k);
		int dt = ki->in_dtype >= 0 ? ki->in_dtype : load_cast_dtype(ki, layout, kernelParams,
									   k - 1);
		if (p && dt >= 0)
			out[n++] = (struct np_kread){ p, o.numel, (enum np_dtype)dt };
	}
	return n;
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
