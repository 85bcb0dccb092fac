/* host_cost.h - what nanprof's CUPTI callbacks cost the job's threads on
 * the host, measured as they run.
 *
 * The H200's first run put a small transformer at 1.98x its step time
 * checking every launch, 1.30x sampled, and could not say where that
 * went: the callbacks and their decoding, the check launches' own host
 * time, or the GPU's time running the checks.  The benchmark's
 * configurations take the GPU side apart (tests/gpu/bench_gpu.py:
 * agent-calls, agent-empty); this measures the host side in the same
 * run, in every job, at a cost that does not disturb what it measures.
 *
 * Reading the clock twice in every callback would add some 50 ns to
 * each of a launch's two callbacks.  So each thread times one callback
 * in NP_HC_EVERY (and one check launch in NP_HC_EVERY of its own),
 * NP_HC_EVERY odd and prime: a launch makes two callbacks, its entry's
 * (cheap) and its exit's (the decoding and the checks), and an even
 * period would time only one kind (the first version timed one in 32,
 * every one an exit, and overestimated by half on the fake driver);
 * keeps its counts in thread-local memory and adds them to the shared
 * totals only when it times one: no shared cache line is written on
 * the callbacks between.  The estimate of the whole is the timed time
 * times NP_HC_EVERY; up to NP_HC_EVERY - 1 callbacks per thread are not
 * yet counted at any moment.
 *
 * A callback's time includes the check launches made inside it; CUPTI's
 * own dispatch before and after our callback is not in it (the
 * benchmark's agent-calls minus this is CUPTI's).  Thread-safe; nothing
 * allocates.  Pure logic, unit-tested (tests/unit/test_host_cost.c),
 * with the clock passed in. */
#ifndef NP_HOST_COST_H
#define NP_HOST_COST_H

#include <stdint.h>

#define NP_HC_EVERY 31u   /* one timed in this many, per thread (prime: no
			   * aliasing with the callbacks' own periods) */

/* What the threads have timed so far, of one kind of call: each timed
 * call stands for NP_HC_EVERY, so the estimate of the kind's whole time
 * is ns * NP_HC_EVERY. */
struct np_hc_sample {
	uint64_t timed;           /* calls timed */
	uint64_t ns;              /* their time */
};

struct np_hc_totals {
	struct np_hc_sample callbacks;  /* inside the CUPTI callback */
	struct np_hc_sample checks;     /* inside the driver's launch of a check */
};

/* Whether the calling thread times this callback (one in NP_HC_EVERY). */
int np_hc_callback_timed(void);

/* A timed callback took ns. */
void np_hc_callback_took(uint64_t ns);

/* The same for one check launch (the driver's cuLaunchKernel of one of
 * our check kernels, a list or a single check). */
int np_hc_check_timed(void);
void np_hc_check_took(uint64_t ns);

void np_hc_read(struct np_hc_totals *out);

/* Nanoseconds per call the sample estimates, 0 when nothing was timed. */
uint64_t np_hc_mean_ns(const struct np_hc_sample *s);

/* For tests: the totals to zero (threads' own counts stay). */
void np_hc_reset(void);

#endif
