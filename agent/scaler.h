/* scaler.h - mixed precision's loss scaling (torch.amp.GradScaler), so that
 * its expected overflows are not taken for the birth of a NaN.
 *
 * A GradScaler multiplies the loss by a large scale before backward; when
 * the scaled gradients overflow it skips optimizer.step() and lowers the
 * scale.  The non-finite gradients of such an iteration are the scaler's
 * doing, by design, and several a run are normal (the first iterations,
 * and one each time the scale grows).  nanprof must tell them from a real
 * non-finite value: it holds back the non-finite gradients of a scaled
 * iteration until the scaler's verdict on it (docs/checks.md).
 *
 * The bootstrap wraps GradScaler.scale() and .update().  At scale() the
 * loss itself is checked (the tensor backward() is given is the scaled
 * one, non-finite whenever loss x scale overflows, harmlessly), and the
 * scaled part of the iteration begins.  At update(), before the scaler
 * forgets them, its found_inf flags say whether it skipped the step: on
 * the CPU at once, on the GPU copied to pinned memory after an event and
 * read when back (no sync), as gpu_norms.c does.  Each iteration's
 * verdict goes to nanprof as a STATUS record (np_agent_rec.scl) with the
 * iteration's scaled window, CLOCK_MONOTONIC like BPF's and CUPTI's
 * times.
 *
 * Called only from the hooks, under the GIL.
 */
#ifndef NP_SCALER_H
#define NP_SCALER_H

#include <stdint.h>
#include "pyapi.h"

#define NP_SCALER_PENDING 8   /* verdicts in flight; more: the oldest is dropped */

/* scaler.scale(loss) returned scaled (the hook checked loss itself):
 * the scaled part of an iteration begins, at its first scale() (gradient
 * accumulation scales several losses before one update()).  The scaled
 * tensor's own check is left out (np_scaler_is_scaled_loss). */
void np_scaler_scale(PyObject *scaled);

/* scaler.update() is about to run: the iteration's verdict. */
void np_scaler_update(PyObject *scaler);

/* backward(root): root is the tensor the last scale() returned (its
 * non-finite value is the scale's, not the job's).  Forgets it. */
int np_scaler_is_scaled_loss(PyObject *root);

/* Sends the verdicts that are back; how many are still out. */
uint32_t np_scaler_poll(void);

/* Drops, and counts, what is still out (the job exits). */
void np_scaler_give_up(void);

/* Forgets everything (the agent detaches). */
void np_scaler_reset(void);

/* Verdicts given up (not back in time, a Python error). */
extern uint64_t np_scaler_dropped;

#endif
