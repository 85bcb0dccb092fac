/* kfunc.h - what the agent knows about each CUDA function it saw
 * launched: its name, how to find its outputs (kdecode.h), its parameter
 * layout, and a launch counter for sampling.
 *
 * Worked out once per function, on its first launch, and then read
 * without a lock: entries are published with a release store of their
 * key and never change or move afterwards.  NP_KFUNC_MAX functions; the
 * rest are checked not at all and counted.
 */
#ifndef NP_KFUNC_H
#define NP_KFUNC_H

#include <stdint.h>
#include "kdecode.h"

#define NP_KFUNC_MAX 4096           /* distinct kernels per process */
/* Keys of the module-level checks' pseudo-functions (cupti/modules.c)
 * are below NP_GPU_WHAT_MAX, or have this bit: no CUfunction does. */
#define NP_KFUNC_PSEUDO (1ull << 63)
/* With NP_KFUNC_PSEUDO: the device-to-device copies' checks
 * (subscriber.c); a guard's keys have a kernel id >= 1 above the low byte. */
#define NP_KFUNC_COPY 0xffull
#define NP_KFUNC_NAME 288           /* bytes of name kept (short form): 4 records */

struct np_kfunc {
	uint64_t key;                /* the CUfunction (or CUkernel); 0: free */
	uint32_t id;                 /* 1.. : the kernel id in reports */
	uint8_t ours;                /* one of nanprof's check kernels */
	uint8_t reported;            /* its name was sent */
	uint64_t launches;           /* for sampling (relaxed atomic) */
	uint64_t undecoded;          /* launches whose outputs no decoder could size
				      * (relaxed atomic): the coverage report */
	uint8_t sized;               /* some launch's output was sized (relaxed
				      * atomic): until then a sampled-out launch is
				      * noted for the generic tier */
	struct np_kinfo info;
	struct np_kparams params;
	char name[NP_KFUNC_NAME];    /* demangled, argument list dropped */
};

/* How the function's parameter layout is read: in the agent, from the
 * driver; in tests, from a fixture. */
typedef int (*np_kfunc_layout_fn)(uint64_t key, struct np_kparams *out, void *arg);

/* The layout of a pseudo-function: no parameters. */
int np_kfunc_no_layout(uint64_t key, struct np_kparams *out, void *arg);

/* Allocates the table (about 7 MiB).  0 or -1. */
int np_kfunc_init(void);

/* The entry of function key, worked out on first sight from its mangled
 * symbol name (the launch callback's symbolName).  NULL when the table is
 * full. */
struct np_kfunc *np_kfunc_get(uint64_t key, const char *mangled, np_kfunc_layout_fn layout,
			      void *arg);

/* The entry with this id, or NULL. */
struct np_kfunc *np_kfunc_by_id(uint32_t id);

/* The functions with the most undecoded launches, most first (ties: the
 * first seen first), at most max of them, into out.  Returns how many
 * have any.  For the coverage report: which kernels nanprof could not
 * check at launch, and how often they ran. */
int np_kfunc_top_undecoded(struct np_kfunc **out, int max);

/* "at::native::vectorized_elementwise_kernel<4, ...>(int, ...)" ->
 * the same without the argument list, at most len - 1 bytes. */
void np_kfunc_short_name(const char *demangled, char *out, size_t len);

/* The demangler: __cxa_demangle when the process has it (set by the
 * agent), else the mangled name stays. */
extern char *(*np_kfunc_demangle)(const char *, char *, size_t *, int *);

#endif
