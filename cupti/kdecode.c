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
static int lambda_dtype(struct span f, int *why)
{
	long at = span_rfind(f, "{lambda(");
	const char *open, *close;
	struct span args, a;
	int d = -1, n = 0, w;

	*why = NP_KDT_UNKNOWN;
	if (at < 0)
		return -1;
	open = f.p + at + 7;
	close = group_end(open, f.p + f.n);
	if (!close)
		return -1;
	for (size_t i = 0; i < sizeof(type_changing) / sizeof(type_changing[0]); i++)
		if (span_has(f, type_changing[i]))
			return -1;
	args = span_of(open + 1, close);
	while (next_item(&args, &a)) {
		int t = type_dtype(a, &w);
		if (t < 0 || (n && t != d))
			return -1;
		d = t;
		n++;
	}
	if (n)
		*why = NP_KDT_INFERRED;
	return n ? d : -1;
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
	    span_starts(name, "GammaBetaBackward"))
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
		if (ki->family == NP_KF_UNROLLED_ELEMENTWISE &&
		    span_starts(nth_item(targs, 6), "at::native::memory::StoreWithCast<")) {
			why = NP_KDT_RUNTIME;
			break;
		}
		d = functor_dtype(nth_item(targs, ki->family == NP_KF_VEC_ELEMENTWISE), &why);
		break;
	case NP_KF_LAMBDA_ELEMENTWISE:
		d = functor_dtype(unwrap_impl(nth_item(targs, 2)), &why);
		break;
	case NP_KF_REDUCE:      /* ReduceOp<scalar_t, ops_t, index_t, out_scalar_t, ..> */
		if (split_name(nth_item(targs, 2), &name, &sub, &rest) && span_eq(name, "ReduceOp"))
			d = type_dtype(nth_item(sub, 3), &why);
		break;
	case NP_KF_MULTI_TENSOR_APPLY:  /* Functor<scalar_t, depth, ..>; Copy<src, dst> */
		if (split_name(nth_item(targs, 1), &name, &sub, &rest)) {
			d = type_dtype(nth_item(sub, span_eq(name, "CopyFunctor")), &why);
			if (d >= 0)
				why = NP_KDT_INFERRED;
		}
		break;
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

int np_kdecode_classify(const char *demangled, struct np_kinfo *ki)
{
	struct span s = { demangled, demangled ? strlen(demangled) : 0 }, name, targs, rest;
	const char *open;

	memset(ki, 0, sizeof(*ki));
	ki->dtype = -1;
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
	if (ki->family >= NP_KF_SOFTMAX && ki->family != NP_KF_MULTI_TENSOR_APPLY)
		signature_dtype(ki);
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

/* Reads the first 8 bytes of parameter i (size checked by the caller). */
static uint64_t word_at(void *const *kp, int i, uint32_t at)
{
	uint64_t v;
	memcpy(&v, (const char *)kp[i] + at, sizeof(v));
	return v;
}

/* (int N, functor, std::array<char*, K> data, ...): data[0] is the output. */
static int elementwise_outputs(const struct np_kinfo *ki, const struct np_kparams *l,
			       void *const *kp, uint64_t hint, struct np_kbuf *out)
{
	int want = ki->family == NP_KF_VEC_ELEMENTWISE ? 3 : 7, dtype = ki->dtype;
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
	out->ptr = ptr;
	out->numel = (uint64_t)n;
	out->dtype = (enum np_dtype)dtype;
	out->how = ki->dtype_why == NP_KDT_INFERRED ? NP_KH_ELEMENTWISE_INFERRED : NP_KH_ELEMENTWISE;
	return 1;
}

/* Every non-const T* with T floating, in signature order. */
static int signature_outputs(const struct np_kinfo *ki, const struct np_kparams *l,
			     void *const *kp, struct np_kbuf *out, int max)
{
	int k = 0;
	if (ki->nsig < 0 || l->n != ki->nsig)
		return 0;
	for (int i = 0; i < ki->nsig && k < max; i++) {
		const struct np_ksig *s = &ki->sig[i];
		uint64_t ptr;
		if (s->kind != NP_KP_OUT_PTR || s->dtype < 0 || l->p[i].size != 8)
			continue;
		ptr = word_at(kp, i, 0);
		if (!ptr)       /* an optional output left out */
			continue;
		out[k].ptr = ptr;
		out[k].numel = 0;
		out[k].dtype = (enum np_dtype)s->dtype;
		out[k++].how = NP_KH_SIGNATURE;
	}
	return k;
}

int np_kdecode_outputs(const struct np_kinfo *ki, const struct np_kparams *layout,
		       void *const *kernelParams, uint64_t grid_elems_hint, struct np_kbuf *out,
		       int max)
{
	if (max <= 0 || !kernelParams || layout->n < 0 || layout->n > NP_KD_MAX_PARAMS)
		return 0;
	switch (ki->family) {
	case NP_KF_VEC_ELEMENTWISE:
	case NP_KF_UNROLLED_ELEMENTWISE:
		return elementwise_outputs(ki, layout, kernelParams, grid_elems_hint, out);
	case NP_KF_SOFTMAX:
	case NP_KF_LAYER_NORM:
	case NP_KF_BATCH_NORM:
	case NP_KF_CAT:
	case NP_KF_EXPLICIT:
		return signature_outputs(ki, layout, kernelParams, out, max);
	default:        /* lambda captures, ReduceOp, TensorListMetadata: opaque */
		return 0;
	}
}

int np_kdecode_pointer_words(const struct np_kparams *layout, void *const *kernelParams,
			     uint64_t *out, int max)
{
	int k = 0, n = layout->n < NP_KD_MAX_PARAMS ? layout->n : NP_KD_MAX_PARAMS;
	if (!kernelParams)
		return 0;
	for (int i = 0; i < n && k < max; i++) {
		uint32_t off = layout->p[i].offset, size = layout->p[i].size;
		/* first 8-aligned offset in the parameter buffer, relative to the param */
		for (uint32_t at = (8 - off % 8) % 8; at + 8 <= size && k < max; at += 8) {
			uint64_t w = word_at(kernelParams, i, at);
			if (w >= NP_KD_PTR_MIN && w < NP_KD_PTR_MAX)
				out[k++] = w;
		}
	}
	return k;
}
