/* triton.h - what a torch.compile'd (Inductor) Triton kernel writes,
 * told by the Python call that launches it.
 *
 * A Triton kernel's parameters are bare pointers and integers: its
 * launch names no output, so every Triton kernel fell to the generic
 * tier, whose notes map an address to the latest undecoded launch that
 * was handed it.  In a compiled graph nearly every kernel is Triton, so a
 * value born in one kernel and read by the next was named at the reader.
 * Inductor knows better, and says it in Python: each kernel's
 * CachingAutotuner holds its signature (argument names: in_ptr0,
 * out_ptr0, in_out_ptr0, xnumel; pointer types: *fp32, *bf16, ...) and
 * the arguments it mutates, and its run() gets the tensors.  The agent
 * wraps run() (agent/bootstrap.h); before the launch the wrapper hands
 * over each dense CUDA tensor argument of a floating pointer type with
 * its role (np_triton_next), and clears it after (np_triton_done).
 *
 * The launch callback, on the same thread, then takes that plan for
 * the launch's outputs (np_triton_claim), but only for a kernel of the
 * plan's name whose parameter words hold the plan's output addresses:
 * run() may first launch the kernel's configurations on copies of its
 * outputs to time them (autotuning), and a check of the real tensor
 * after such a launch would read values no kernel wrote yet.  One plan
 * serves one launch.
 *
 * An output is a tensor the kernel writes whole: named out_ptr* or
 * in_out_ptr* (or mutated), and of exactly xnumel elements, the number
 * of output elements a pointwise or reduction kernel computes; a
 * tensor of another size (a slice of a cat written through strides, a
 * scatter's target) is left to the generic tier, as a partly written
 * buffer's unwritten rest could hold anything.  An in_out_ptr's or a
 * mutated argument's old values are an input of its own judgement
 * (dirty.h): a non-finite value already there is propagation.  Other
 * tensors are reads of known extent and dtype, offered to the generic
 * tier (generic.h).  A user's own @triton.jit kernels hand over plans
 * the same way, what they write read from their source
 * (agent/triton_jit.py).  Pure logic: unit-tested
 * (tests/unit/test_triton.c).
 */
#ifndef NP_TRITON_H
#define NP_TRITON_H

#include <stdint.h>
#include "kdecode.h"
#include "kfunc.h"

#define NP_TRITON_ARGS 32       /* tensor arguments kept per launch */
/* a kernel name is kept as the kernel table keeps it: cut to fit, so
 * that a long fused name (Inductor joins up to ten ops') still matches */
#define NP_TRITON_NAME NP_KFUNC_NAME

enum np_triton_role {
	NP_TRITON_READ = 0,     /* an input */
	NP_TRITON_WRITTEN = 1,  /* an output, written whole */
	NP_TRITON_UPDATED = 2,  /* an output written whole over its own old values */
};

struct np_triton_arg {
	uint64_t ptr;
	uint64_t numel;
	enum np_dtype dtype;
	enum np_triton_role role;
};

/* The dtype of a Triton pointer type ("*fp32", "*bf16", ...: Triton's
 * names; "*fp8e4nv" is torch's float8_e4m3fn, "*fp8e5" its float8_e5m2),
 * or -1 (integers, bool, the fnuz fp8 types: nothing a check reads). */
int np_triton_dtype(const char *type);

/* The plan of the next launch of kernel name (its first NP_TRITON_NAME -
 * 1 bytes) on this thread: args as the wrapper saw them (those beyond
 * NP_TRITON_ARGS are dropped).  Replaces any plan this thread has. */
void np_triton_next(const char *name, const struct np_triton_arg *args, int n);

/* Forgets this thread's plan (after the call, whether or not a launch
 * took it). */
void np_triton_done(void);

/* Whether this thread has a plan (cheap: a thread-local test). */
int np_triton_pending(void);

/* For a launch of kernel name whose pointer parameters are words[0..nw):
 * when this thread's plan is for that name, names at least one output,
 * and every output it names is among the words: its outputs into
 * outs[0..max_out) (n_in -1, the launch's words their inputs; an updated
 * output's own address first among its own in[]), its reads among the
 * words into rd[0..max_rd) (*nr), the plan used up, and the number of
 * outputs returned.  -1 and nothing used up otherwise. */
int np_triton_claim(const char *name, const uint64_t *words, int nw, struct np_kbuf *outs,
		    int max_out, struct np_kread *rd, int max_rd, int *nr);

#endif
