/* kname.c - reading a demangled CUDA kernel name in place (kname.h).
 *
 * A kernel name is "void QUAL::NAME<TARGS>(PARAMS)", where QUAL may hold
 * "(anonymous namespace)" and TARGS may hold lambdas with their own
 * parentheses, so every scan skips balanced <> () {} [] groups.
 * Demangled kernel names contain no operator< or operator>, which is what
 * makes plain bracket counting safe here.
 */
#include <stdlib.h>
#include <string.h>
#include "kname.h"

struct span span_of(const char *p, const char *end)
{
	return (struct span){ p, (size_t)(end - p) };
}

struct span trim(struct span s)
{
	while (s.n && s.p[0] == ' ')
		s.p++, s.n--;
	while (s.n && s.p[s.n - 1] == ' ')
		s.n--;
	return s;
}

int span_eq(struct span s, const char *lit)
{
	size_t n = strlen(lit);
	return s.n == n && !memcmp(s.p, lit, n);
}

int spans_eq(struct span a, struct span b)
{
	return a.n == b.n && !memcmp(a.p, b.p, a.n);
}

int span_starts(struct span s, const char *lit)
{
	size_t n = strlen(lit);
	return s.n >= n && !memcmp(s.p, lit, n);
}

int span_ends(struct span s, const char *lit)
{
	size_t n = strlen(lit);
	return s.n >= n && !memcmp(s.p + s.n - n, lit, n);
}

/* Offset of the last occurrence of lit in s, or -1. */
long span_rfind(struct span s, const char *lit)
{
	size_t n = strlen(lit);
	for (size_t i = s.n; i >= n && n; i--)
		if (!memcmp(s.p + i - n, lit, n))
			return (long)(i - n);
	return -1;
}

int span_has(struct span s, const char *lit)
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
const char *group_end(const char *p, const char *end)
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
const char *group_start(const char *start, const char *close)
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
int next_item(struct span *list, struct span *item)
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
struct span nth_item(struct span list, int i)
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
int split_name(struct span s, struct span *name, struct span *targs, struct span *rest)
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

struct span strip_cv(struct span t)
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
int type_dtype(struct span t, int *why)
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

/* c10::complex<T> (a tensor's complex64, complex128, complex32): the
 * np_dtype of its parts T, or -1 when t is no complex of a checkable T. */
static int complex_parts(struct span t)
{
	struct span name, targs, rest;
	int why, d;

	t = strip_cv(t);
	if (!span_starts(t, "c10::complex<") || !split_name(t, &name, &targs, &rest) || rest.n)
		return -1;
	d = type_dtype(targs, &why);
	return d == NP_DT_F32 || d == NP_DT_F64 || d == NP_DT_F16 ? d : -1;
}

int type_dtype_pairs(struct span t, int *why, int *pairs)
{
	int d = complex_parts(t);

	*pairs = d >= 0;
	if (d < 0)
		return type_dtype(t, why);
	*why = NP_KDT_KNOWN;
	return d;
}

int in_list(struct span name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (span_eq(name, list[i]))
			return 1;
	return 0;
}


/* The i-th template argument as a non-negative int, or -1. */
int targ_int(struct span targs, int i)
{
	struct span t = nth_item(targs, i);
	return t.n && t.p[0] >= '0' && t.p[0] <= '9' ? atoi(t.p) : -1;
}

/* The i-th template argument as an unsigned long (kMaxK may be
 * UINT32_MAX), or 0. */
unsigned long targ_ulong(struct span targs, int i)
{
	struct span t = nth_item(targs, i);
	return t.n && t.p[0] >= '0' && t.p[0] <= '9' ? strtoul(t.p, NULL, 10) : 0;
}
