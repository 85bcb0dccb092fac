/* kname.h - reading a demangled CUDA kernel name in place.
 *
 * The decoders (kdecode*.c) learn a kernel's family, template arguments
 * and parameter types from its demangled name, "void QUAL::NAME<TARGS>
 * (PARAMS)".  These helpers work on spans of that string: no copies, no
 * allocation, safe on any input (a launch callback runs them on names
 * nvcc made).
 */
#ifndef NP_KNAME_H
#define NP_KNAME_H

#include <stddef.h>
#include "kdecode.h"

/* A piece of the name; p NULL (n 0) for none. */
struct span {
	const char *p;
	size_t n;
};

struct span span_of(const char *p, const char *end);
struct span trim(struct span s);                 /* without outer spaces */
int span_eq(struct span s, const char *lit);
int spans_eq(struct span a, struct span b);
int span_starts(struct span s, const char *lit);
int span_ends(struct span s, const char *lit);
long span_rfind(struct span s, const char *lit); /* last occurrence's offset, or -1 */
int span_has(struct span s, const char *lit);

/* Bracket groups (<> () {} [] alike): the closer matching the opener at p,
 * or the opener matching the closer at close; NULL if unbalanced. */
const char *group_end(const char *p, const char *end);
const char *group_start(const char *start, const char *close);

/* Top-level comma-separated items of a list, brackets skipped. */
int next_item(struct span *list, struct span *item);
struct span nth_item(struct span list, int i);

/* "QUAL::NAME<TARGS>REST" into NAME, the inside of <TARGS> and REST. */
int split_name(struct span s, struct span *name, struct span *targs, struct span *rest);

/* The i-th template argument as a non-negative int (-1 if not one), or
 * as an unsigned long (0 if not one). */
int targ_int(struct span targs, int i);
unsigned long targ_ulong(struct span targs, int i);

/* A type without its trailing const/volatile. */
struct span strip_cv(struct span t);
/* The np_dtype a whole type names, or -1 with *why (np_kdtype_why)
 * saying why not: unknown, or known and not checkable (ints, complex). */
int type_dtype(struct span t, int *why);
/* The same, but a c10::complex<T> of a floating T gives T's dtype with
 * *pairs set (its elements are checked as T's, two each, as
 * torch.view_as_real shows them); *pairs 0 otherwise.  For outputs
 * only: an input read as pairs would need its count doubled too. */
int type_dtype_pairs(struct span t, int *why, int *pairs);

int in_list(struct span name, const char *const *list, size_t n);
#define IN_LIST(name, list) in_list(name, list, sizeof(list) / sizeof(list[0]))

#endif
