/* scaler.h - a GradScaler's skipped iterations are not the birth of a NaN.
 *
 * Mixed-precision training multiplies the loss by a scale before
 * backward; when the scaled gradients overflow, the GradScaler skips
 * optimizer.step() and lowers the scale.  Those non-finite gradients are
 * expected (the first iterations, and one each time the scale grows
 * again), so in a job that scales its loss (the agent says so:
 * NP_AST_SCALER_ON), a finding of the scaled part of an iteration (a
 * gradient a node produced, a .grad before the step) is held until the
 * scaler's verdict on that iteration (NP_AST_SCALER_VERDICT, with its
 * window of CLOCK_MONOTONIC time; agent/scaler.h):
 *
 *   skipped    a loss-scale overflow: counted, not an origin; the first
 *              non-finite gradient of a run of skipped iterations is
 *              kept, and becomes the origin once the run skips an
 *              iteration whose scale was 1 or less (the scaler halves
 *              it at each skip): gradients non-finite unscaled are no
 *              overflow;
 *   ran        the value did not stop the step: the origin, as without a
 *              scaler;
 *   not known  (or no verdict by the job's end) the origin.
 *
 * GPU records arrive late, possibly after their iteration's verdict: the
 * last NP_SCALER_WINDOWS verdicts are kept to place them.  Forward
 * findings are never held: the scale does not touch the forward.
 */
#ifndef NP_SCALER_H
#define NP_SCALER_H

#include "collector.h"

/* The finding f would be the origin: true if the scaler rules take it
 * (held, or a loss-scale overflow), false if it is the origin now. */
bool np_scaler_takes(struct np_collector *c, struct np_proc_state *p,
		     const struct np_finding *f);

/* A SCALER_ON or SCALER_VERDICT record. */
void np_scaler_record(struct np_collector *c, struct np_proc_state *p,
		      const struct np_agent_rec *r);

/* The process is done: a finding still held had no verdict: the origin. */
void np_scaler_finish(struct np_collector *c, struct np_proc_state *p);

/* Sets the origin, whatever the scaler (findings.c). */
void np_findings_origin_now(struct np_collector *c, struct np_proc_state *p,
			    const struct np_finding *f);

#endif
