#include <stdio.h>
#include <string.h>
#include "../agent/agent_report.h"
#include "verdict.h"

/* forward < backward < a .grad before the update < a parameter after it */
static int phase_order(const struct np_rank_finding *f)
{
	if (f->role == NP_ROLE_PARAM_GRAD)
		return 2;
	if (f->role == NP_ROLE_PARAM && f->phase == 3)
		return 3;
	return f->phase == 2 ? 1 : 0;
}

static bool before(const struct np_rank_finding *a, const struct np_rank_finding *b)
{
	if (a->received != b->received)
		return !a->received;
	if (a->step != b->step)
		return a->step < b->step;
	if (phase_order(a) != phase_order(b))
		return phase_order(a) < phase_order(b);
	return a->ts < b->ts;
}

void np_verdict_compute(const struct np_rank_finding *f, size_t n, struct np_verdict *v)
{
	if (n > NP_VERDICT_MAX)
		n = NP_VERDICT_MAX;
	v->n = n;
	v->origin = -1;
	for (size_t i = 0; i < n; i++)
		if (!f[i].received && (v->origin < 0 || before(&f[i], &f[v->origin])))
			v->origin = (int)i;
	const struct np_rank_finding *o = v->origin >= 0 ? &f[v->origin] : NULL;
	for (size_t i = 0; i < n; i++) {
		char *b = v->via_buf[i];
		v->via[i] = b;
		if ((int)i == v->origin)
			snprintf(b, sizeof(v->via_buf[i]), "%s", "");
		else if (f[i].received)
			snprintf(b, sizeof(v->via_buf[i]), "%s", f[i].via ? f[i].via : "a collective");
		else if (o && f[i].role == NP_ROLE_PARAM_GRAD && f[i].step == o->step)
			snprintf(b, sizeof(v->via_buf[i]), "%s",
				 "the gradient all-reduce (not seen: DDP's, or another library's)");
		else
			snprintf(b, sizeof(v->via_buf[i]), "propagation (first seen at step %llu)",
				 (unsigned long long)f[i].step);
	}
}
