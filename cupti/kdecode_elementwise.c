/* kdecode_elementwise.c - PyTorch's elementwise kernels (kdecode_priv.h).
 *
 * vectorized_elementwise_kernel and unrolled_elementwise_kernel (a dense
 * output of N elements, data[0]) and the strided elementwise_kernel,
 * whose lambda's captures say where its output and inputs lie
 * (kdecode_lambda.h).  From the name: the functor's (or lambda's) result
 * and argument types, which lambda launched it, its arity.
 */
#include <stdlib.h>
#include <string.h>
#include "kdecode_priv.h"
#include "kdecode_lambda.h"

/* Ops whose elementwise lambda returns another type than it takes. */
static const char *const type_changing[] = {
	"::is", "logical_", "signbit", "copy_kernel", "compare", "Compare", "bitwise",
	"quantize", "frexp", "nonzero", "bucketize", "_to_",
};

/* ... but for the copy between tensors of one dtype (Copy.cu: copy_, a
 * strided tensor made contiguous, out[:, ::2] = x), whose lambda returns
 * what it takes: read, its strided output was the H200's false birth in
 * attention (a copy's input noted as its output).  The casting copies
 * (float16_copy_kernel_cuda, ...) stay unread. */
static const char direct_copy[] = "::direct_copy_kernel_cuda(";

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
 * -1 when f names no lambda, it takes none, or they differ.  With pairs,
 * that type may be complex (all of them, *pairs set); without, not. */
static int lambda_args_dtype(struct span f, int *pairs)
{
	struct span args, a;
	int d = -1, n = 0, w, pr = 0;

	if (lambda_params(f, &args))
		return -1;
	while (next_item(&args, &a)) {
		int p = 0, t = pairs ? type_dtype_pairs(a, &w, &p) : type_dtype(a, &w);
		if (t < 0 || (n && (t != d || p != pr)))
			return -1;
		d = t;
		pr = p;
		n++;
	}
	if (pairs)
		*pairs = pr;
	return d;
}

/* Ops that take a complex value to a real one (|z|, arg z, its parts):
 * a lambda of complex parameters with one of these in its name is not
 * taken to return a complex. */
static const char *const complex_to_real[] = {
	"abs", "angle", "real", "imag", "norm",
};

/* And ops that make one complex value of two real ones (torch.complex's
 * real and imaginary parts, torch.polar's magnitude and angle): a lambda
 * of real parameters in one of these returns a complex of their type,
 * twice the elements a real result would have. */
static const char *const real_to_complex[] = {
	"::complex_kernel_cuda(", "::polar_kernel_cuda(",
};

/* The output dtype of an elementwise lambda "...::{lambda(A, B)#1}": its
 * parameters' one type, unless the op is known to change it. */
static int lambda_dtype(struct span f, int *why, int *pairs)
{
	int d;

	*why = NP_KDT_UNKNOWN;
	for (size_t i = 0; i < sizeof(type_changing) / sizeof(type_changing[0]); i++)
		if (span_has(f, type_changing[i]) && !span_has(f, direct_copy))
			return -1;
	d = lambda_args_dtype(f, pairs);
	for (size_t i = 0; *pairs && i < sizeof(complex_to_real) / sizeof(complex_to_real[0]); i++)
		if (span_has(f, complex_to_real[i]))
			return *pairs = 0, -1;
	for (size_t i = 0; d >= 0 && i < sizeof(real_to_complex) / sizeof(real_to_complex[0]); i++)
		if (span_has(f, real_to_complex[i]))
			*pairs = 1;
	if (d >= 0)
		*why = NP_KDT_INFERRED;
	return d;
}

/* Functors whose single template argument is also their result type. */
static const char *const same_type_functors[] = {
	"FillFunctor", "CUDAFunctor_add", "CUDAFunctorOnSelf_add", "CUDAFunctorOnOther_add",
	"AbsFunctor", "CalcIgamma", "CalcIgammac",
};

/* The output dtype of an elementwise functor type (or lambda); *pairs
 * set when it is a complex of that dtype. */
static int functor_dtype(struct span f, int *why, int *pairs)
{
	struct span name, targs, rest;
	f = trim(f);
	*why = NP_KDT_UNKNOWN;
	*pairs = 0;
	if (span_ends(f, "}"))
		return lambda_dtype(f, why, pairs);
	if (!split_name(f, &name, &targs, &rest))
		return -1;
	if (span_eq(name, "BinaryFunctor") || span_eq(name, "AUnaryFunctor") ||
	    span_eq(name, "BUnaryFunctor"))
		return type_dtype_pairs(nth_item(targs, 2), why, pairs);
	if (span_eq(name, "AbsFunctor"))   /* |z| of a complex z is real */
		return type_dtype(nth_item(targs, 0), why);
	for (size_t i = 0; i < sizeof(same_type_functors) / sizeof(same_type_functors[0]); i++)
		if (span_eq(name, same_type_functors[i]))
			return type_dtype_pairs(nth_item(targs, 0), why, pairs);
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
 * elements the kernel reads, as this dtype (generic.h); a complex one
 * (*pairs set) as its parts' dtype, two per value: whatever the op makes
 * of them (abs of a complex tensor is real), the kernel reads them all. */
static int functor_in_dtype(struct span f, int *pairs)
{
	struct span name, targs, rest;
	int d, why, p2 = 0;

	*pairs = 0;
	f = trim(f);
	if (span_ends(f, "}"))
		return lambda_args_dtype(f, pairs);
	if (!split_name(f, &name, &targs, &rest))
		return -1;
	if (span_eq(name, "BinaryFunctor")) {
		d = type_dtype_pairs(nth_item(targs, 0), &why, pairs);
		return d == type_dtype_pairs(nth_item(targs, 1), &why, &p2) && *pairs == p2
			       ? d : (*pairs = 0, -1);
	}
	if (span_eq(name, "AUnaryFunctor"))
		return type_dtype_pairs(nth_item(targs, 1), &why, pairs);
	if (span_eq(name, "BUnaryFunctor"))
		return type_dtype_pairs(nth_item(targs, 0), &why, pairs);
	for (size_t i = 0; i < sizeof(same_type_functors) / sizeof(same_type_functors[0]); i++)
		if (span_eq(name, same_type_functors[i]))
			return type_dtype_pairs(nth_item(targs, 0), &why, pairs);
	return -1;
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

/* c10::ScalarType (a byte in StoreWithCast::dtypes) to np_dtype, or -1.
 * With pairs, a complex type gives its parts' dtype and sets *pairs;
 * without, it is -1. */
static int scalar_type_dtype(uint8_t st, int *pairs)
{
	int d = -1, p = 0;

	switch (st) {
	case 5: d = NP_DT_F16; break;           /* Half */
	case 6: d = NP_DT_F32; break;           /* Float */
	case 7: d = NP_DT_F64; break;           /* Double */
	case 8: d = NP_DT_F16; p = 1; break;    /* ComplexHalf */
	case 9: d = NP_DT_F32; p = 1; break;    /* ComplexFloat */
	case 10: d = NP_DT_F64; p = 1; break;   /* ComplexDouble */
	case 15: d = NP_DT_BF16; break;         /* BFloat16 */
	case 23: d = NP_DT_F8E5M2; break;       /* Float8_e5m2 */
	case 24: d = NP_DT_F8E4M3; break;       /* Float8_e4m3fn */
	default: return -1;                     /* ints, bool, fnuz, ... */
	}
	if (p && !pairs)
		return -1;
	if (pairs)
		*pairs = p;
	return d;
}

/* Input k's dtype in an unrolled kernel's LoadWithCast<N> (parameter 5:
 * ScalarType dtypes[N], then uint32 element_sizes[N] from a 4-byte
 * boundary), or -1: a cast on load (bf16 logits to float for the loss, in
 * autocast) reads its input as the type the launch names, which must
 * agree with the element size beside it.  A complex one gives its parts'
 * dtype, *pairs set. */
static int load_cast_dtype(const struct np_kinfo *ki, const struct np_kparams *l,
			   void *const *kp, int k, int *pairs)
{
	uint32_t nl = ki->load_cast, sizes = (nl + 3) & ~3u;
	int dt;

	*pairs = 0;
	if (!nl || k < 0 || (uint32_t)k >= nl || l->n != 7 || l->p[5].size != sizes + 4 * nl)
		return -1;
	dt = scalar_type_dtype(((const uint8_t *)kp[5])[k], pairs);
	return dt >= 0 && np_u32_at(kp[5], sizes + 4u * (uint32_t)k) ==
				  np_dtype_size((enum np_dtype)dt) << *pairs ? dt : -1;
}

/* (int N, functor, std::array<char*, K> data, ...): data[0] is the output. */
int kd_elementwise_outputs(const struct np_kinfo *ki, const struct np_kparams *l,
			       void *const *kp, uint64_t hint, struct emit *e)
{
	int want = ki->family == NP_KF_VEC_ELEMENTWISE ? 3 : 7, dtype = ki->dtype, pairs = ki->pairs;
	struct np_kbuf *out;
	int32_t n;
	uint64_t ptr;

	if (l->n != want || l->p[0].size != 4 || l->p[2].size < 8 ||
	    (ki->narrays && l->p[2].size != 8u * (unsigned)ki->narrays))
		return 0;
	if (ki->dtype_why == NP_KDT_RUNTIME) {
		if (l->p[6].size < 1)
			return 0;
		dtype = scalar_type_dtype(*(const uint8_t *)kp[6], &pairs);
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
	out->numel = (uint64_t)n << pairs;      /* a complex output: its real view's */
	out->dtype = (enum np_dtype)dtype;
	out->pairs = (uint8_t)pairs;
	out->how = ki->dtype_why == NP_KDT_INFERRED ? NP_KH_ELEMENTWISE_INFERRED : NP_KH_ELEMENTWISE;
	return e->n;
}

/* A strided elementwise kernel's lambda read (kdecode_lambda.h), with
 * its output's dtype: the functor's result (_nocast) or the output's own,
 * captured in the lambda (casting).  1, or 0 when it does not read. */
static int lambda_read_any(const struct np_kinfo *ki, const struct np_kparams *l,
			   void *const *kp, const struct np_klaunch *kl, struct np_lambda_view *v,
			   int *dtype, int *pairs)
{
	int kind = ki->lam.kind, era = __atomic_load_n(&lambda_era, __ATOMIC_RELAXED);
	struct np_lambda_shape sh;
	int32_t n;

	*dtype = ki->dtype;
	*pairs = ki->pairs;
	if (kind == NP_KL_IMPL_FIRST)   /* casting in torch 2.x, not before; unknown: neither */
		kind = era > 0 ? NP_KL_CASTING : era < 0 ? NP_KL_NOCAST : NP_KL_NONE;
	if (kind == NP_KL_NONE || l->n != 2 || l->p[0].size != 4 || !kl)
		return 0;
	sh = (struct np_lambda_shape){ kind == NP_KL_CASTING, ki->lam.arity, ki->lam.threads,
				       ki->lam.vt, 0, 0, ki->pairs };
	if (!sh.casting) {
		if (*dtype < 0 || (ki->dtype_why != NP_KDT_KNOWN && ki->dtype_why != NP_KDT_INFERRED))
			return 0;
		sh.esize = np_dtype_size((enum np_dtype)*dtype) << *pairs;
		sh.in_esize = ki->in_dtype >= 0
				      ? np_dtype_size((enum np_dtype)ki->in_dtype) << ki->in_pairs : 0;
	}
	memcpy(&n, kp[0], sizeof(n));
	int r = np_lambda_read(kp[1], l->p[1].size, n, &sh, kl->grid, kl->block, v);
	if (!r || (sh.casting && (*dtype = scalar_type_dtype((uint8_t)v->scalar_type, pairs)) < 0))
		return 0;
	return r;
}

/* ... and only one whose output is one dense range (1) */
static int lambda_view(const struct np_kinfo *ki, const struct np_kparams *l, void *const *kp,
		       const struct np_klaunch *kl, struct np_lambda_view *v, int *dtype,
		       int *pairs)
{
	return lambda_read_any(ki, l, kp, kl, v, dtype, pairs) == 1;
}

/* A strided elementwise launch's input pointers, whether or not its
 * output decodes: data[1..] but any that is the output too (in place). */
int kd_lambda_input_words(const struct np_kinfo *ki, const struct np_kparams *l,
			  void *const *kp, const struct np_klaunch *kl, uint64_t *out, int max)
{
	struct np_lambda_view v;
	int dtype, pairs, n = 0;
	if (ki->family != NP_KF_LAMBDA_ELEMENTWISE || !lambda_read_any(ki, l, kp, kl, &v, &dtype,
								       &pairs))
		return 0;
	for (int k = 1; k < v.ntensors && n < max; k++)
		if (v.data[k] && v.data[k] != v.data[0])
			out[n++] = v.data[k];
	return n;
}

/* A strided elementwise kernel's output, read from its lambda: N
 * elements of a dense output, read from the lambda's other data
 * pointers. */
int kd_lambda_outputs(const struct np_kinfo *ki, const struct np_kparams *l,
			  void *const *kp, const struct np_klaunch *kl, struct emit *e)
{
	struct np_lambda_view v;
	struct np_kbuf *out;
	int dtype, pairs;

	if (!lambda_view(ki, l, kp, kl, &v, &dtype, &pairs))
		return 0;
	out = emit_next(e);
	if (!out)
		return e->n;
	out->ptr = v.data[0];
	out->numel = v.numel << pairs;
	out->dtype = (enum np_dtype)dtype;
	out->pairs = (uint8_t)pairs;
	out->how = NP_KH_STRIDED;
	out->n_in = 0;
	for (int k = 1; k < v.ntensors && out->n_in < NP_KD_BUF_INPUTS; k++)
		out->in[out->n_in++] = v.data[k];
	return e->n;
}

void kd_elementwise_classify(struct np_kinfo *ki, struct span targs)
{
	static const char load_cast[] = "at::native::memory::LoadWithCast<";
	int why = NP_KDT_UNKNOWN, d = -1, pairs = 0, vec = ki->family == NP_KF_VEC_ELEMENTWISE;
	struct span arr;

	if (ki->family == NP_KF_LAMBDA_ELEMENTWISE) {
		ki->dtype = functor_dtype(unwrap_impl(nth_item(targs, 2)), &why, &pairs);
		ki->dtype_why = why;
		ki->pairs = (uint8_t)(ki->dtype >= 0 && pairs);
		ki->in_dtype = functor_in_dtype(unwrap_impl(nth_item(targs, 2)), &pairs);
		ki->in_pairs = (uint8_t)(ki->in_dtype >= 0 && pairs);
		lambda_classify(ki, targs);
		return;
	}
	/* the data pointers' std::array, and how an unrolled kernel loads
	 * and stores (a cast on either side) */
	arr = nth_item(targs, vec ? 2 : 1);
	if (span_starts(arr, "std::array<char*, "))
		ki->narrays = atoi(arr.p + 18);
	if (!vec && span_starts(nth_item(targs, 5), load_cast)) {
		int nl = atoi(nth_item(targs, 5).p + sizeof(load_cast) - 1);
		ki->load_cast = nl >= 1 && nl <= 8 ? (uint8_t)nl : 0;
	}
	if (!vec && span_starts(nth_item(targs, 6), "at::native::memory::StoreWithCast<")) {
		why = NP_KDT_RUNTIME;   /* the output's type is in the launch */
	} else {
		int in_pairs = 0;
		d = functor_dtype(nth_item(targs, vec), &why, &pairs);
		/* inputs loaded as they are, not cast: the functor's types */
		if (vec || span_starts(nth_item(targs, 5), "at::native::memory::LoadWithoutCast"))
			ki->in_dtype = functor_in_dtype(nth_item(targs, vec), &in_pairs);
		ki->in_pairs = (uint8_t)(ki->in_dtype >= 0 && in_pairs);
	}
	ki->dtype = d;
	ki->dtype_why = why;
	ki->pairs = (uint8_t)(d >= 0 && pairs);
}

int kd_elementwise_reads(const struct np_kinfo *ki, const struct np_kparams *l,
			 void *const *kp, const struct np_klaunch *kl, struct np_kread *out,
			 int max)
{
	struct np_kbuf o;
	struct emit e = { .out = &o, .max = 1 };
	int n = 0;

	if (ki->family == NP_KF_LAMBDA_ELEMENTWISE && ki->in_dtype >= 0) {
		struct np_lambda_view v;
		int dtype, pairs;
		if (!lambda_view(ki, l, kp, kl, &v, &dtype, &pairs))
			return 0;
		for (int k = 1; k < v.ntensors && n < max; k++)
			if (v.in_numel[k] && v.data[k])
				out[n++] = (struct np_kread){ v.data[k],
							      v.in_numel[k] << ki->in_pairs,
							      (enum np_dtype)ki->in_dtype,
							      ki->in_pairs };
		return n;
	}
	if ((ki->family != NP_KF_VEC_ELEMENTWISE && ki->family != NP_KF_UNROLLED_ELEMENTWISE) ||
	    (ki->in_dtype < 0 && !ki->load_cast) || ki->narrays < 2 ||
	    kd_elementwise_outputs(ki, l, kp, kl ? kl->threads : 0, &e) != 1)
		return 0;
	/* the output's checks passed the layout: data[] has narrays words,
	 * each input N elements of its dtype (a complex output's numel is
	 * twice N; so is a complex input's) */
	for (int k = 1; k < ki->narrays && n < max; k++) {
		uint64_t p = word_at(kp, 2, 8u * (unsigned)k);
		int pairs = ki->in_pairs;
		int dt = ki->in_dtype >= 0 ? ki->in_dtype : load_cast_dtype(ki, l, kp, k - 1, &pairs);
		if (p && dt >= 0)
			out[n++] = (struct np_kread){ p, (o.numel >> o.pairs) << pairs,
						      (enum np_dtype)dt, (uint8_t)pairs };
	}
	return n;
}
