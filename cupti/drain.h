/* drain.h - the host thread that reads the check kernels' results from
 * each context's ring, judges them (dirty.h: birth or propagation) and
 * reports the non-finite ones to nanprof.
 *
 * What is reported, per process (bounded, the rest counted):
 *  - every birth (a launch whose output became non-finite from finite
 *    inputs), up to NP_DRAIN_BIRTHS_PER_SEC, with the kernel's name the
 *    first time that kernel is reported;
 *  - propagations of each birth: the first into each of its first
 *    NP_DRAIN_PROPAGATION_BURST kernels (a value spreads inside its
 *    module, a copy of it, then leaves within microseconds: the kernel it
 *    leaves through must not wait out the gap), then at most one per
 *    NP_DRAIN_PROPAGATION_GAP_NS of launch time, NP_DRAIN_PROPAGATIONS
 *    in all, within NP_DRAIN_PROPAGATIONS_PER_SEC: nanprof places each in
 *    its module, step and phase, and a birth becomes the origin once its
 *    value is seen outside the module (or the phase) it was born in.  A
 *    -inf written as an attention mask propagates into the scores inside
 *    the model and dies in the softmax: never an origin;
 *  - counters every NP_DRAIN_COUNTERS_MS.
 */
#ifndef NP_DRAIN_H
#define NP_DRAIN_H

#include <stdint.h>

#define NP_DRAIN_POLL_US 500
#define NP_DRAIN_BIRTHS_PER_SEC 64
#define NP_DRAIN_COUNTERS_MS 1000
#define NP_DRAIN_LINEAGE 16384    /* dirty launches remembered: tag -> birth */
#define NP_DRAIN_PROPAGATIONS 16  /* propagation records per birth */
#define NP_DRAIN_PROPAGATION_GAP_NS 1000000ull
#define NP_DRAIN_PROPAGATION_BURST 4  /* distinct kernels reported without the gap */
#define NP_DRAIN_PROPAGATIONS_PER_SEC 256
#define NP_DRAIN_HOLD 1024        /* results held to be judged in launch order */
#define NP_DRAIN_HOLD_NS 2000000ull
#define NP_DRAIN_UNDECODED_TOP 8  /* undecoded kernels reported with the counters */
#define NP_DRAIN_WRITES 256       /* unchecked writes waiting for their place (write_queue.h) */
#define NP_DRAIN_WRITE_WAIT_NS 50000000ull  /* ... when no later result was of its stream or read it */

/* Starts the thread (idempotent).  0 or -1. */
int np_drain_start(void);

/* Drains what is there for up to max_ms, sends the last counters, and
 * stops the thread. */
void np_drain_stop(int max_ms);

/* Counters the launch side adds to (relaxed atomics). */
struct np_gpu_counters {
	uint64_t launches;      /* kernel launches seen */
	uint64_t checks;        /* buffers checks were launched for */
	uint64_t check_launches; /* check kernel launches (a list launch checks several) */
	uint64_t bytes;         /* bytes those checks cover */
	uint64_t undecoded;     /* launches with no output we could name */
	uint64_t sampled_out;   /* launches skipped by sampling */
	uint64_t guard_checks;  /* CUDA tensors checked at module level as guards */
	uint64_t guard_skips;   /* ... and not: their last writer was checked */
	uint64_t generic_checks; /* undecoded kernels' outputs checked at a reader */
	uint64_t gemm_checks;   /* cuBLAS calls' outputs checked at the call */
	uint64_t triton_checks; /* Triton launches whose outputs their Python call named */
	uint64_t capture_skip;  /* launches in a capture we could not check */
	uint64_t table_full;    /* functions or captured checks over a table */
	uint64_t launch_failed; /* check launches the driver refused */
	uint64_t lost;          /* results whose launch entry was reused */
	uint64_t births, propagated;
	uint64_t reports_dropped;   /* births and propagations over the per-second
				     * bounds: judged, not reported */
};
extern struct np_gpu_counters np_gpu_cnt;

/* Set by the drainer once a non-finite value propagated (not merely was
 * born: a -inf mask is born every step): sampling then checks every
 * launch. */
extern volatile int np_gpu_zoom;

#endif
