/* scaler.c - loss-scale overflows of a GradScaler are no origin (scaler.h). */
#include "../agent/agent_report.h"
#include "scaler.h"

/* What loss scaling can make non-finite: gradients, in backward, and the
 * .grads the optimizer's pre-hook reads (a fused optimizer that skips
 * by itself still runs its step). */
static bool scaled_kind(const struct np_finding *f)
{
	return f->phase == NP_PHASE_BACKWARD ||
	       (f->phase == NP_PHASE_OPTIMIZER && f->role == NP_ROLE_PARAM_GRAD);
}

static const struct np_scaler_window *window_of(const struct np_scaler_state *s, uint64_t ts)
{
	uint32_t n = s->nwin < NP_SCALER_WINDOWS ? s->nwin : NP_SCALER_WINDOWS;
	for (uint32_t i = 0; i < n; i++)
		if (s->win[i].t0 <= ts && ts <= s->win[i].t1)
			return &s->win[i];
	return NULL;
}

/* A run of skipped iterations that reached a loss scale of 1 or less:
 * the gradients are non-finite unscaled, so its first non-finite
 * gradient was no overflow. */
static void promote_run(struct np_collector *c, struct np_proc_state *p)
{
	struct np_scaler_state *s = &p->ag.scaler;
	if (s->run_unscaled && s->run_has && !p->ag.found && !p->ag.received) {
		struct np_finding f = s->run_f;
		f.scaler_run = s->run;
		np_findings_origin_now(c, p, &f);
	}
}

/* f came in iteration w, which the scaler skipped. */
static void overflow(struct np_collector *c, struct np_proc_state *p, const struct np_finding *f,
		     uint64_t iter)
{
	struct np_scaler_state *s = &p->ag.scaler;
	s->overflow_reports++;
	if (!s->first_has) {
		s->first = *f;
		s->first_has = true;
	}
	if (s->run && iter >= s->run_iter && !s->run_has) {   /* in the run going on */
		s->run_f = *f;
		s->run_has = true;
	}
	promote_run(c, p);
}

bool np_scaler_takes(struct np_collector *c, struct np_proc_state *p, const struct np_finding *f)
{
	struct np_scaler_state *s = &p->ag.scaler;
	if (!s->on || !scaled_kind(f))
		return false;
	const struct np_scaler_window *w = window_of(s, f->ts);
	if (w) {   /* its verdict came first (a GPU record) */
		if (w->verdict != 1)
			return false;   /* the step ran (or not known): the origin */
		overflow(c, p, f, w->iter);
		return true;
	}
	if (f->ts <= s->last_t1)
		return false;   /* in no scaled part, or older than the windows kept */
	/* its verdict is still to come: the earliest such finding waits for
	 * it (a later one in the same iteration is its propagation) */
	if (!s->held || f->ts < s->held_f.ts)
		s->held_f = *f;
	s->held = true;
	return true;
}

void np_scaler_record(struct np_collector *c, struct np_proc_state *p,
		      const struct np_agent_rec *r)
{
	struct np_scaler_state *s = &p->ag.scaler;
	s->on = true;
	if (r->status != NP_AST_SCALER_VERDICT)
		return;
	struct np_scaler_window w = { .iter = r->scl.iter, .t0 = r->scl.t_scale,
				      .t1 = r->scl.t_update, .scale = r->scl.scale,
				      .verdict = r->scl.verdict > 2 ? 2 : (uint8_t)r->scl.verdict };
	s->win[s->nwin++ % NP_SCALER_WINDOWS] = w;
	if (w.t1 > s->last_t1)
		s->last_t1 = w.t1;
	s->iterations++;
	if (w.verdict == 1) {
		s->skipped++;
		if (!s->run++)
			s->run_iter = w.iter;
		s->run_unscaled |= w.scale > 0 && w.scale <= 1.0;
	} else {
		s->not_known += w.verdict == 2;
		s->run = 0;
		s->run_has = false;
		s->run_unscaled = false;
	}
	if (s->held && s->held_f.ts <= w.t1) {
		struct np_finding f = s->held_f;
		s->held = false;
		if (f.ts >= w.t0 && w.verdict == 1)
			overflow(c, p, &f, w.iter);
		else if (!p->ag.found && !p->ag.received)
			np_findings_origin_now(c, p, &f);   /* the step ran, or outside it */
	}
	promote_run(c, p);
}

void np_scaler_finish(struct np_collector *c, struct np_proc_state *p)
{
	struct np_scaler_state *s = &p->ag.scaler;
	if (s->held && !p->ag.found && !p->ag.received)
		np_findings_origin_now(c, p, &s->held_f);   /* no verdict came */
	s->held = false;
}
