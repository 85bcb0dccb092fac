/* gpu_norms.h - gradient norms of CUDA parameters, for the statistics and
 * explosion warnings CPU parameters get (docs/checks.md), without a host
 * synchronisation.
 *
 * A CPU .grad's sum of squares is computed in the optimizer pre-hook and
 * sent with the step's statistics.  A CUDA .grad's cannot be read there
 * without waiting for the GPU.  So the pre-hook enqueues the norms of all
 * of a step's CUDA .grads on their device (torch._foreach_norm, one
 * launch per device and dtype), copies them to pinned host memory after
 * an event, and moves on; a later pre-hook sends those that have arrived
 * as statistics of the step they belong to (np_arec_stat.lag: how many
 * optimizer steps ago).  Nothing waits: a step whose norms are not back
 * after NP_GPU_NORMS_PENDING later steps is dropped and counted.  The
 * last steps' norms, which no later pre-hook sends, are polled for at the
 * job's exit (agent/hooks.c: send_last_late).
 *
 * Called only from the hooks, under the GIL.
 */
#ifndef NP_GPU_NORMS_H
#define NP_GPU_NORMS_H

#include <stdint.h>
#include "pyapi.h"

#define NP_GPU_NORMS_PARAMS 16384  /* CUDA .grads per step; more: not in the norms */
#define NP_GPU_NORMS_PENDING 4     /* steps whose norms may be in flight */

/* One CUDA .grad of the step in progress, of the parameter of module
 * (0: of no module). */
void np_gpu_norms_add(PyObject *grad, uint64_t module);

/* The step's .grads are all added: enqueue their norms (no sync). */
void np_gpu_norms_start(void);

/* Sends the norms of earlier steps that have come back, oldest first, as
 * np_arec_stat with lag > 0.  Call before np_gpu_norms_add of the next
 * step. */
void np_gpu_norms_poll(void);

/* Steps whose norms are still in flight. */
uint32_t np_gpu_norms_pending(void);

/* Drops, and counts, what is still in flight (the job exits). */
void np_gpu_norms_give_up(void);

/* Drops what is pending (the agent is detaching). */
void np_gpu_norms_reset(void);

/* Counters for the agent's COUNTERS record: steps dropped (not back in
 * time, or a Python error), .grads over NP_GPU_NORMS_PARAMS. */
extern uint64_t np_gpu_norms_dropped, np_gpu_norms_overflow;

#endif
