/* gpu_findings.c - CUDA kernel records (see gpu_findings.h). */
#include <stdio.h>
#include <string.h>
#include "findings.h"
#include "gpu_findings.h"
#include "jsonw.h"

bool np_gpu_is_gpu_record(const struct np_agent_rec *r)
{
	return r->kind == NP_AREC_GPU_CHECK || r->kind == NP_AREC_GPU_NAME ||
	       r->kind == NP_AREC_GPU_PARAM ||
	       (r->kind == NP_AREC_STATUS &&
		(r->status == NP_AST_GPU_ON || r->status == NP_AST_GPU_OFF ||
		 r->status == NP_AST_GPU_COUNTERS || r->status == NP_AST_GPU_LAUNCHES ||
		 r->status == NP_AST_GPU_UNDECODED || r->status == NP_AST_GPU_TRACKER ||
		 r->status == NP_AST_GPU_HOST_COST || r->status == NP_AST_GPU_DEFER));
}

void np_gpu_context(struct np_proc_state *p, uint64_t ts, uint32_t tid, uint64_t step,
		    uint8_t phase, uint32_t module, uint32_t module_type)
{
	struct np_ctx_point pt = { .ts = ts, .step = step, .tid = tid, .module = module,
				   .module_type = module_type, .phase = phase };
	np_ctxhist_push(&p->gpu.ctx, &pt);
}

/* Pieces of a kernel's name arrive in order, on the drain thread. */
static void on_name(struct np_collector *c, struct np_proc_state *p, const struct np_agent_rec *r)
{
	struct np_gpu_state *g = &p->gpu;
	if (r->role == 0 || g->name_func != (uint32_t)r->module) {
		g->name_func = (uint32_t)r->module;
		g->name_len = 0;
	}
	size_t piece = sizeof(r->name.text);
	size_t n = strnlen(r->name.text, piece);
	if (g->name_len + n < sizeof(g->name_buf)) {
		memcpy(g->name_buf + g->name_len, r->name.text, n);
		g->name_len += (uint32_t)n;
	}
	if (!(r->flags & NP_AF_LAST))
		return;
	g->name_buf[g->name_len] = 0;
	if (!g->kernels.slots && np_map_init(&g->kernels, 1 << 14))
		return;
	np_map_put(&g->kernels, 0, g->name_func, np_intern(c, g->name_buf));
	g->name_len = 0;
}

static void finding_of(struct np_collector *c, struct np_proc_state *p,
		       const struct np_agent_rec *r, struct np_finding *f)
{
	memset(f, 0, sizeof(*f));
	struct np_ctx_point at;
	int rc = np_ctxhist_at(&p->gpu.ctx, r->gpu.launch_tid, r->gpu.launch_ns, &at);
	if (rc == 0) {
		f->step = at.step;
		f->phase = at.phase;
		f->module = at.module;
		f->module_type = at.module_type;
	} else {
		f->context_unknown = true;
		f->step = p->cur.step;
	}
	uint64_t name;
	if (p->gpu.kernels.slots && np_map_get(&p->gpu.kernels, 0, r->gpu.func, &name) == 0)
		f->op = (uint32_t)name;
	f->ts = r->gpu.launch_ns;
	f->tid = r->gpu.launch_tid;
	/* a kernel's output, or what a module-level check looked at */
	f->role = r->role ? r->role : NP_ROLE_OUTPUT;
	f->dtype = r->dtype;
	f->grad_mode = r->mode;   /* the launching thread's, when torch's was read */
	f->inputs_finite = !(r->flags & NP_AF_SOURCE_DIRTY);
	f->numel = r->gpu.numel;
	f->nan = r->gpu.nan;
	f->posinf = r->gpu.posinf;
	f->neginf = r->gpu.neginf;
	f->first_bad = r->gpu.first_bad;
	f->max_abs = r->gpu.max_abs;
	f->gpu = true;
	f->graph = r->flags & NP_AF_GRAPH;
	f->cuda_device = r->device;
	f->outside = !f->module_type && !f->context_unknown && f->phase == NP_PHASE_FORWARD;
}

/* "blocks.1" holds "blocks.1.gate"; "" (the outermost module) holds all */
static bool module_holds(const char *outer, const char *inner)
{
	size_t n = strlen(outer);
	return n == 0 || (strncmp(outer, inner, n) == 0 && (inner[n] == 0 || inner[n] == '.'));
}

static bool output_check(const struct np_collector *c, const struct np_finding *f)
{
	static const char name[] = NP_GPU_OUTPUT_CHECK_NAME;
	return f->op && f->module_type && f->phase == NP_PHASE_FORWARD &&
	       strncmp(np_name(c, f->op), name, sizeof(name) - 1) == 0;
}

/* Module-level checks (CUPTI held by another tool, or the guards) see a
 * module's output, not the kernels in between: a parent's output made
 * from its child's non-finite output by a kernel no check saw is a birth
 * of its own, and the child's birth never shows a propagation.  As the
 * CPU's forward rule has it, a module's non-finite output followed by
 * one of a module around it, in the same step's forward, is the value
 * leaving the inner module: the earliest such candidate is the origin. */
static void outer_output(struct np_collector *c, struct np_proc_state *p,
			 const struct np_finding *b)
{
	struct np_gpu_state *g = &p->gpu;
	if (!output_check(c, b))
		return;
	const char *outer = np_name(c, b->module);
	const struct np_finding *first = NULL;
	uint32_t kept = g->ncand < NP_GPU_CANDIDATES ? g->ncand : NP_GPU_CANDIDATES;
	for (uint32_t k = 0; k < kept; k++) {
		const struct np_finding *a = &g->cand[k].f;
		if (a == b || !output_check(c, a) || a->step != b->step || a->module == b->module ||
		    a->ts > b->ts || !module_holds(outer, np_name(c, a->module)))
			continue;
		if (!first || a->ts < first->ts)
			first = a;
	}
	if (first)
		np_findings_set_origin(c, p, first);
}

static void on_check(struct np_collector *c, struct np_proc_state *p, const struct np_agent_rec *r)
{
	struct np_gpu_state *g = &p->gpu;
	p->cur.nonfinite++;
	if (p->ag.found || p->ag.received) {
		p->ag.propagation++;
		return;
	}
	if (!(r->flags & NP_AF_SOURCE_DIRTY)) {   /* a birth: a candidate */
		g->births++;
		if (g->ncand >= NP_GPU_CANDIDATES)
			g->candidates_dropped++;
		uint32_t k = g->ncand++ % NP_GPU_CANDIDATES;
		g->cand[k].tag = r->gpu.birth;
		finding_of(c, p, r, &g->cand[k].f);
		/* the loss handed to backward, non-finite though what wrote it
		 * was not seen so (sampled out, undecoded): nothing later
		 * will say more, as on the CPU (a non-finite root) */
		if (r->role == NP_ROLE_ROOT)
			np_findings_set_origin(c, p, &g->cand[k].f);
		else
			outer_output(c, p, &g->cand[k].f);
		return;
	}
	/* a propagation of a birth: the origin once it is outside the
	 * birth's module, phase or step */
	uint32_t kept = g->ncand < NP_GPU_CANDIDATES ? g->ncand : NP_GPU_CANDIDATES;
	for (uint32_t k = 0; k < kept; k++) {
		if (g->cand[k].tag != r->gpu.birth)
			continue;
		struct np_finding at;
		finding_of(c, p, r, &at);
		if (np_gpu_left(c, &g->cand[k].f, &at))
			np_findings_set_origin(c, p, &g->cand[k].f);
		else
			g->inside++;
		return;
	}
	g->unknown_births++;
}


bool np_gpu_left(const struct np_collector *c, const struct np_finding *birth,
		 const struct np_finding *at)
{
	/* neither placed (launched before nanprof knew the thread's modules:
	 * a job that starts training as nanprof attaches): nothing shows the
	 * value leaving anything, a mask born and spread inside its module
	 * looks the same */
	if (birth->context_unknown && at->context_unknown)
		return false;
	/* the value reached the loss handed to backward: it left whatever
	 * made it, even when that was the loss's own code between module
	 * calls (log(0) in the training loop), which no later kernel reads */
	if (at->role == NP_ROLE_ROOT)
		return true;
	if (birth->context_unknown || at->context_unknown)
		return true;   /* nothing to hold it in: take the evidence */
	if (at->step != birth->step || at->phase != birth->phase)
		return true;
	/* module_type 0: outside every module (the outermost module's name
	 * is "" too, but it has a type) */
	bool b_in = birth->module_type != 0, a_in = at->module_type != 0;
	if (!b_in)
		return a_in;   /* made between module calls, used inside one */
	return !a_in || !module_holds(np_name(c, birth->module), np_name(c, at->module));
}

static void on_status(struct np_collector *c, struct np_proc_state *p,
		      const struct np_agent_rec *r)
{
	struct np_gpu_state *g = &p->gpu;
	if (r->status == NP_AST_GPU_UNDECODED) {
		if (r->undec.rank < NP_GPU_UNDECODED_TOP) {
			g->undec[r->undec.rank].func = r->undec.func;
			g->undec[r->undec.rank].launches = r->undec.launches;
			if (r->undec.rank >= g->nundec)
				g->nundec = r->undec.rank + 1;
		}
		return;
	}
	if (r->status == NP_AST_GPU_LAUNCHES) {
		g->sampled_out = r->launch.sampled_out;
		g->guard_checks = r->launch.guard_checks;
		g->guard_skips = r->launch.guard_skips;
		g->check_launches = r->launch.check_launches;
		g->generic_checks = r->launch.generic_checks;
		g->gemm_checks = r->launch.gemm_checks;
		g->triton_checks = r->launch.triton_checks;
		g->over_budget = r->launch.over_budget;
		g->devices = r->device;
		return;
	}
	if (r->status == NP_AST_GPU_HOST_COST) {
		g->host.launches = r->host.launches;
		g->host.timed = r->host.timed;
		g->host.timed_ns = r->host.timed_ns;
		g->host.checks_timed = r->host.checks_timed;
		g->host.check_ns = r->host.check_ns;
		g->host.every = r->host.every;
		return;
	}
	if (r->status == NP_AST_GPU_DEFER) {
		g->defer.checks = r->dfr.checks;
		g->defer.launches = r->dfr.launches;
		g->defer.early[0] = r->dfr.write;
		g->defer.early[1] = r->dfr.unknown;
		g->defer.early[2] = r->dfr.memory;
		g->defer.early[3] = r->dfr.order;
		g->defer.early[4] = r->dfr.now;
		g->defer.early[5] = r->dfr.full;
		g->defer.window = r->dfr.window;
		return;
	}
	if (r->status == NP_AST_GPU_TRACKER) {
		g->forgotten = r->trk.evicted + r->trk.forgotten;
		g->wide_lost = r->trk.wide_lost;
		g->writes = r->trk.writes;
		g->writes_carried = r->trk.copies;
		g->writes_lost = r->trk.writes_lost;
		return;
	}
	if (r->status == NP_AST_GPU_COUNTERS) {
		g->checks = r->cnt.checked;
		g->bytes = r->cnt.bytes;
		g->undecoded = r->cnt.skipped;
		g->dropped = r->cnt.dropped;
		g->overflow = r->cnt.overflow;
		snprintf(g->launches, sizeof(g->launches), "%.*s", (int)sizeof(g->launches) - 1,
			 r->cnt.what);
		return;
	}
	g->state = r->status == NP_AST_GPU_ON ? 1 : 2;
	snprintf(g->how, sizeof(g->how), "%.*s", (int)sizeof(g->how) - 1, r->cnt.what);
	if (g->state == 1 && !g->ctx.v)
		np_ctxhist_init(&g->ctx, NP_CTXHIST_DEFAULT);
	if (c->on_finding)
		c->on_finding(c, p, NP_FIND_CHECKS);
}

/* The birth just reported wrote a parameter's memory.  Launched outside
 * every module (an optimizer's update, a parameter edited in the loop),
 * it is named by the parameter's owner and the parameter, as the CPU's
 * checks after the step name it; a kernel inside a module keeps its
 * module. */
static void on_param(struct np_collector *c, struct np_proc_state *p,
		     const struct np_agent_rec *r)
{
	struct np_gpu_state *g = &p->gpu;
	uint32_t kept = g->ncand < NP_GPU_CANDIDATES ? g->ncand : NP_GPU_CANDIDATES;
	for (uint32_t k = 0; k < kept; k++) {
		struct np_finding *f = &g->cand[k].f;
		if (g->cand[k].tag != r->gparam.birth || f->module_type || f->context_unknown)
			continue;
		char what[sizeof(r->gparam.what) + 1];
		memcpy(what, r->gparam.what, sizeof(r->gparam.what));
		what[sizeof(r->gparam.what)] = 0;
		if (np_findings_module_names(c, p, r->module, &f->module, &f->module_type)) {
			f->param = np_intern(c, what);
			f->outside = false;
		}
	}
}

void np_gpu_record(struct np_collector *c, struct np_proc_state *p, const struct np_agent_rec *r)
{
	struct np_gpu_state *g = &p->gpu;
	g->records++;
	if (g->last_seq && r->seq > g->last_seq + 1)
		g->lost += r->seq - g->last_seq - 1;
	if (r->seq > g->last_seq)
		g->last_seq = r->seq;
	switch (r->kind) {
	case NP_AREC_GPU_NAME:
		on_name(c, p, r);
		break;
	case NP_AREC_GPU_CHECK:
		on_check(c, p, r);
		break;
	case NP_AREC_GPU_PARAM:
		on_param(c, p, r);
		break;
	case NP_AREC_STATUS:
		on_status(c, p, r);
		break;
	}
}

void np_gpu_free(struct np_proc_state *p)
{
	np_map_free(&p->gpu.kernels);
	np_ctxhist_free(&p->gpu.ctx);
}

const char *np_gpu_kernel_name(const struct np_collector *c, const struct np_gpu_state *g,
			       uint32_t func)
{
	uint64_t name;
	if (g->kernels.slots && np_map_get(&g->kernels, 0, func, &name) == 0)
		return np_name(c, (uint32_t)name);
	return "?";
}

void np_gpu_json_undecoded(struct np_jsonw *w, const struct np_collector *c,
			   const struct np_gpu_state *g)
{
	np_jsonw_start_array(w);
	for (uint32_t i = 0; i < g->nundec; i++) {
		np_jsonw_start_object(w);
		np_jsonw_string_field(w, "kernel", np_gpu_kernel_name(c, g, g->undec[i].func));
		np_jsonw_uint_field(w, "launches", g->undec[i].launches);
		np_jsonw_end_object(w);
	}
	np_jsonw_end_array(w);
}

uint64_t np_gpu_host_ns_per_launch(const struct np_gpu_state *g)
{
	if (!g->host.timed || !g->host.launches)
		return 0;
	/* each timed callback stands for `every` of them */
	return (uint64_t)((double)g->host.timed_ns * (double)g->host.every /
			  (double)g->host.launches + 0.5);
}

uint64_t np_gpu_check_launch_ns(const struct np_gpu_state *g)
{
	return g->host.checks_timed ? g->host.check_ns / g->host.checks_timed : 0;
}
