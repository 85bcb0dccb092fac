/* update_cause.h - why an optimizer's update made a parameter non-finite
 * when the parameter and its gradient were finite.
 *
 * The parameter checks say which parameter went bad in which update, not
 * why: the step's arithmetic is the optimizer's.  Two causes are common
 * and can be read off the optimizer afterwards, without redoing it:
 *
 * - a denominator of 0.  Adam and its kin divide each update by
 *   sqrt(exp_avg_sq) + eps (RMSprop: square_avg, Adagrad: sum, Adamax:
 *   exp_inf).  Where every gradient so far was 0 (an embedding row never
 *   looked up, a dead unit) the state is 0, and with an eps that is 0 in
 *   the state's dtype the update there is 0 / 0 = NaN, or x / 0 = inf
 *   where the state's square underflowed.  eps = 0 does it in float32;
 *   the default 1e-8 does it in float16, which rounds it to 0: the
 *   classic "Adam goes NaN in pure float16".  Said when the state held 0
 *   at the parameter's non-finite elements (counted: at_zero).
 * - a learning rate that is not finite (a schedule that divided by 0).
 *
 * Called from the optimizer's post-hook for the first parameter of an
 * update that went bad with nothing non-finite seen before it in the step
 * (the candidate origin), on the CPU only (a CUDA tensor would be read
 * with a sync), at most NP_UPDATE_CAUSES a process.  Reads the
 * optimizer's state, never changes it; every error is no answer.
 */
#ifndef NP_UPDATE_CAUSE_H
#define NP_UPDATE_CAUSE_H

#include "pyapi.h"

#define NP_UPDATE_CAUSES 16          /* analyses per process */
#define NP_UPDATE_CHUNK (1u << 22)   /* elements compared at a time */

/* optimizer stepped and made param (a CPU tensor) non-finite: when it can
 * tell why, sends an UPDATE record (agent_report.h), to be followed by
 * the parameter's CHECK.  Never leaves a Python error. */
void np_update_cause(PyObject *optimizer, PyObject *param);

#endif
