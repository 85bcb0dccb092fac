/* outmax.h - the largest |x| of each module's CUDA outputs, per step,
 * taken from the records of the finite checks that already read them:
 * the statistics, heatmap and activation-growth warnings CPU outputs
 * get, with no kernel, copy or synchronisation of their own.
 *
 * Every check's record carries the largest finite |x| of what it read
 * (check_abi.h).  A forward hook that sees a CUDA output knows which
 * check reads it: the guard it launches now, or the checked launch that
 * last wrote it (writers.h).  It says so (np_outmax_expect); the drain
 * thread hands over every record (np_outmax_result); whichever comes
 * second folds the value into that module's maximum for that step.  The
 * optimizer's pre-hook collects the steps whose expected records have all
 * come back (np_outmax_collect), and sends them as late statistics, as it
 * does the CUDA gradient norms (agent/gpu_norms.h); the last steps' go
 * at the job's exit (np_outmax_in_flight, np_outmax_give_up).
 *
 * A result stays in its slot after it is used: a module that returns the
 * same tensor in a later step, unwritten (a cached buffer), finds it.
 *
 * Bounded: a direct-mapped table of the NP_OUTMAX_JOIN latest check tags
 * (an expectation of an older tag finds it overwritten: counted, and
 * left out of its step); NP_OUTMAX_STEPS steps in flight, each with up
 * to NP_OUTMAX_MODULES / 2 modules (an open-addressed table kept half
 * empty), and NP_OUTMAX_PER_TAG modules waiting on
 * one tag (a module and the parents that return its output).  A step
 * that lost an expected record (overwritten before it came, a full
 * table), or is still incomplete when its slot is needed, is dropped
 * whole and counted: a partial maximum would understate the step.
 *
 * Thread-safe: one mutex (the hooks, under the GIL, and the drain).
 */
#ifndef NP_OUTMAX_H
#define NP_OUTMAX_H

#include <stdint.h>

#define NP_OUTMAX_JOIN 16384      /* check tags remembered (power of 2) */
#define NP_OUTMAX_STEPS 4         /* steps in flight */
#define NP_OUTMAX_MODULES 2048    /* table size per step (power of 2): half of it used */
#define NP_OUTMAX_PER_TAG 6       /* modules waiting on one check */

/* Forgets everything (a new attach, tests). */
void np_outmax_reset(void);

/* The record of check `tag` (ordinary, not captured) holds part of
 * module's output in step `step` (the agent's optimizer-step count). */
void np_outmax_expect(uint64_t tag, uint64_t module, uint32_t step);

/* The drain read check `tag`'s record: max_abs is its largest finite |x|,
 * or +inf when it held a non-finite value. */
void np_outmax_result(uint64_t tag, float max_abs);

/* A value known now (the largest |x| of a module's CPU outputs in a step
 * it also had CUDA outputs in): folded into the step's maximum, so that
 * the module has one value per step. */
void np_outmax_value(uint64_t module, uint32_t step, float max);

/* Calls fn(module, step, max, arg) for each module of every complete
 * step before `before`, oldest step first, and frees those steps.
 * Returns how many values it gave. */
typedef void (*np_outmax_fn)(uint64_t module, uint32_t step, float max, void *arg);
uint32_t np_outmax_collect(uint32_t before, np_outmax_fn fn, void *arg);

/* Steps before `before` not collected yet (their records still coming). */
uint32_t np_outmax_in_flight(uint32_t before);

/* Drops, and counts, every step before `before` not collected yet: the
 * job exits and their records did not come in time. */
void np_outmax_give_up(uint32_t before);

/* Steps dropped, and expectations that could not be met (their tag was
 * overwritten, or no room): for the agent's COUNTERS record. */
uint64_t np_outmax_dropped(void);

#endif
