/* defer.h - deferring checks over a few launches, to launch them as one
 * list (NANPROF_GPU_DEFER=N, gpu.h).  Internal to cupti/.
 *
 * With N > 0 a launch's checks are not launched in its callback: they
 * wait (defer_set.h) until N more launches have come, or a list is full,
 * and go out as np_check_list_<dtype> launches on their streams: fewer
 * check launches, fewer kernels for the GPU to schedule.  A waiting check
 * must still read what its kernel wrote, so everything waiting is
 * launched first (np_defer_flush), before:
 *  - a kernel launch that writes a waiting range (its outputs decoded at
 *    the launch's entry; a cuBLAS call's kernels: D and the workspace,
 *    blas.h), or whose writes are not known (an undecoded kernel,
 *    cuDNN's, cuFFT's, a Triton kernel's);
 *  - a copy or memset into device memory that writes a waiting range;
 *  - any other driver call the agent sees but an allocation or mapping:
 *    frees and unmaps (a check must never read freed memory),
 *    synchronisation and copies to the host (results due), event records
 *    (another stream may then write), graph capture (a waiting check
 *    must not be captured) and replay;
 *  - a check launched at once (one captured into a graph; module-level
 *    checks, guards and copies' checks wait with the rest otherwise): its
 *    result must not come before those of earlier launches;
 *  - the agent's stop.
 * One set for the process, under a mutex: a block the allocator frees on
 * one thread may be written by another's next kernel, so every thread's
 * launch is tested against every waiting range.  Results of one list
 * come back in any order: the drain puts them back in launch order
 * (drain.c). */
#ifndef NP_DEFER_H
#define NP_DEFER_H

#include <cupti.h>
#include <stddef.h>
#include <stdint.h>
#include "check_launch.h"

#define NP_DEFER_MAX_WINDOW 64

/* Driver calls to subscribe to as well while deferring (subscriber.c). */
extern const CUpti_CallbackId np_defer_cbids[];
extern const size_t np_defer_ncbids;

/* Launches a check may wait for (0: none, checks launched at once). */
void np_defer_config(unsigned launches);
unsigned np_defer_window(void);

/* Whether any check waits: a load, for every launch's entry. */
extern volatile unsigned np_defer_waiting;
static inline int np_defer_pending(void)
{
	return __atomic_load_n(&np_defer_waiting, __ATOMIC_RELAXED) != 0;
}

/* Why what waits was launched (np_defer_counts): the window's N launches
 * went by; every list was open and none fitted a new check; a launch
 * writes a waiting range; a launch's writes are not known; a memory call
 * came (a copy, memset, allocation, free or mapping); another driver
 * call (a sync, an event record, a copy to the host, graph capture or
 * replay, a teardown); a check was launched at once, or the agent stops. */
enum np_defer_why {
	NP_DEFER_WINDOW = 0,
	NP_DEFER_FULL,
	NP_DEFER_WRITE,
	NP_DEFER_UNKNOWN,
	NP_DEFER_MEMORY,
	NP_DEFER_ORDER,
	NP_DEFER_NOW,
	NP_DEFER_WHYS
};

/* What deferring did so far: checks that waited, list launches they went
 * out in (one per context, stream, dtype and block class at each flush),
 * and flushes that launched anything, by why. */
struct np_defer_counts {
	uint64_t checks, launches;
	uint64_t flushes[NP_DEFER_WHYS];
};
void np_defer_counts(struct np_defer_counts *out);

/* c (prepared for g, stream) waits. */
void np_defer_add(struct np_gpu_ctx *g, CUstream stream, const struct np_check_ready *c);

/* Everything waiting launched, if any of [lo[i], hi[i]) (i < n: what a
 * launch writes) is read by any of it; one lock for all. */
void np_defer_before_writes(const uint64_t *lo, const uint64_t *hi, int n);

/* Everything waiting launched, for why (a no-op on a thread already
 * doing it). */
void np_defer_flush(enum np_defer_why why);

/* One more launch went by: everything launched once the first waiting
 * check has waited np_defer_window() launches. */
void np_defer_launch_done(void);

#endif
