/* findings.c - origin rules, propagation, statistics and explosion
 * warnings from the agent's records (see findings.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../agent/agent_report.h"
#include "findings.h"
#include "scaler.h"
#include "gpu_findings.h"

_Static_assert(NP_AGENT_BULK_BYTES == NP_AGENT_BULK_MAX, "agent and BPF agree on the bulk size");

#define WARN_RATIO 10.0        /* growth over the recent median that warns */
#define WARN_MIN_HISTORY 4     /* steps of history before any warning */
#define WARN_QUIET_STEPS 10    /* one warning per series per this many steps */
#define WARN_ABSOLUTE 1e20     /* a gradient norm this large warns by itself */

const char *np_role_name(unsigned role)
{
	switch (role) {
	case NP_ROLE_OUTPUT:
	case NP_ROLE_ROOT:   /* the loss: an output of the code between modules */
		return "output";
	case NP_ROLE_GRAD: return "grad";
	case NP_ROLE_PARAM: return "param";
	case NP_ROLE_PARAM_GRAD: return "param_grad";
	case NP_ROLE_COLLECTIVE: return "collective";
	default: return "input";
	}
}

/* ---- modules by address ---- */

void np_findings_module(struct np_collector *c, struct np_proc_state *p, uint64_t self,
			uint32_t name, uint32_t type)
{
	uint64_t v;
	uint64_t want = (uint64_t)name | (uint64_t)type << 32;
	if (np_map_get(&c->module_addrs, (uint64_t)p->pid, self, &v) || v != want)
		np_map_put(&c->module_addrs, (uint64_t)p->pid, self, want);
}

bool np_findings_module_names(struct np_collector *c, struct np_proc_state *p, uint64_t addr,
			      uint32_t *name, uint32_t *type)
{
	uint64_t v;
	if (!addr || np_map_get(&c->module_addrs, (uint64_t)p->pid, addr, &v))
		return false;
	*name = (uint32_t)v;
	*type = (uint32_t)(v >> 32);
	return true;
}

/* ---- origin ---- */

void np_findings_set_origin(struct np_collector *c, struct np_proc_state *p,
			    const struct np_finding *f)
{
	if (!np_scaler_takes(c, p, f))   /* a loss-scale overflow is none */
		np_findings_origin_now(c, p, f);
}

void np_findings_origin_now(struct np_collector *c, struct np_proc_state *p,
			    const struct np_finding *f)
{
	p->ag.found = true;
	p->ag.origin = *f;
	p->ag.candidate = false;
	if (c->on_finding)
		c->on_finding(c, p, NP_FIND_ORIGIN);
}

/* A report after a candidate: the value left the candidate's module. */
static bool confirm_candidate(struct np_collector *c, struct np_proc_state *p)
{
	if (!p->ag.candidate)
		return false;
	p->ag.cand.mask_used = p->ag.masked;   /* a mask the step made more of */
	p->ag.masked = false;
	np_findings_set_origin(c, p, &p->ag.cand);
	return true;
}

/* "NativeLayerNormBackward0" -> "native_layer_norm": the forward op
 * whose autograd node made a tensor ("CopySlices", an in-place write
 * into a slice: "copy_slices"). */
void np_forward_op_name(const char *node, char *buf, size_t len)
{
	const char *ns = strrchr(node, ':');   /* torch::autograd::CopySlices */
	if (ns && ns[1])
		node = ns + 1;
	size_t n = 0, end = strlen(node);
	const char *b = strstr(node, "Backward");
	if (b)
		end = (size_t)(b - node);
	for (size_t i = 0; i < end && n + 2 < len; i++) {
		char ch = node[i];
		if (ch >= 'A' && ch <= 'Z') {
			if (i && n + 3 < len)
				buf[n++] = '_';
			ch = (char)(ch - 'A' + 'a');
		}
		buf[n++] = ch;
	}
	buf[n] = 0;
}

static void finding_from(struct np_collector *c, struct np_proc_state *p,
			 struct np_thread_state *t, const struct np_event *e,
			 const struct np_agent_rec *r, struct np_finding *f)
{
	memset(f, 0, sizeof(*f));
	f->step = e->step;
	/* torch 1.x: the wrapped step() reports after the step was counted */
	if ((r->flags & NP_AF_AFTER_STEP) && e->phase != NP_PHASE_OPTIMIZER && f->step)
		f->step--;
	f->ts = e->ts_ns;
	f->tid = e->tid;
	f->batch = e->batch;
	f->phase = r->phase;
	f->role = r->role;
	f->dtype = r->dtype;
	f->grad_mode = r->mode;
	if (r->phase == NP_APHASE_FORWARD && t->depth)
		f->root_call = p->cur.root_calls;
	f->inputs_finite = !(r->flags & NP_AF_SOURCE_DIRTY);
	f->preexisting = r->flags & NP_AF_PREEXISTING;
	if (r->role == NP_ROLE_OUTPUT) {
		f->op_inside = r->flags & NP_AF_OP_INSIDE;
		f->op_read_finite = r->flags & NP_AF_OP_READ_FINITE;
		f->op_read_outside = !r->module && (r->flags & NP_AF_CONST_INPUT);
		f->divided_by_zero = r->flags & NP_AF_ZERO_DIVISOR;
		f->dead_rows = r->flags & NP_AF_DEAD_ROWS;
	}
	if (r->role == NP_ROLE_GRAD) {   /* the where trap, sqrt of 0 */
		f->divided_by_zero = r->flags & NP_AF_ZERO_DIVISOR;
		f->singular = r->flags & NP_AF_SINGULAR;
	}
	f->numel = r->chk.numel;
	f->nan = r->chk.nan;
	f->posinf = r->chk.posinf;
	f->neginf = r->chk.neginf;
	f->first_bad = r->chk.first_bad;
	f->max_abs = r->chk.max_abs;
	f->depth = e->depth ? e->depth - 1u : 0;
	/* the SPREAD record the agent sent just before this one */
	if (p->ag.spread_pending && p->ag.spread_tid == e->tid && p->ag.spread_seq + 1 == r->seq)
		f->spread = p->ag.spread;
	p->ag.spread_pending = false;
	/* the UPDATE record before it, with its SPREAD between */
	if (p->ag.update_pending && r->role == NP_ROLE_PARAM && p->ag.update_tid == e->tid &&
	    r->seq > p->ag.update_seq && r->seq - p->ag.update_seq <= 2)
		f->update = p->ag.update;
	p->ag.update_pending = false;
	char what[sizeof(r->chk.what) + 1];
	memcpy(what, r->chk.what, sizeof(r->chk.what));
	what[sizeof(r->chk.what)] = 0;
	if (r->role == NP_ROLE_COLLECTIVE) {
		f->op = np_intern(c, what);   /* the collective */
		f->phase = e->phase;          /* wherever the job called it */
	} else if (r->role == NP_ROLE_GRAD) {
		/* the node running on this thread now is the one that made it */
		if (t && t->in_node) {
			f->module = t->node_name;
			f->module_type = t->node_module_type;
			f->op = np_node_type_name(c, p, t->node_vt, t->node_pyclass);
		}
		/* a Python Function's node the probes could not name by its
		 * class: the agent's hook was bound to it (cut to 23 bytes) */
		if (what[0] && !(t && t->in_node && t->node_pyclass))
			f->op = np_intern(c, what);
	} else {
		np_findings_module_names(c, p, r->module, &f->module, &f->module_type);
		if (r->role == NP_ROLE_PARAM || r->role == NP_ROLE_PARAM_GRAD)
			f->param = np_intern(c, what);
		else if (what[0]) {
			char op[64];
			np_forward_op_name(what, op, sizeof(op));
			f->op = np_intern(c, op);
		}
		if (r->role == NP_ROLE_OUTPUT && !r->module)
			f->outside = true;
	}
}

/* The outermost call received non-finite values: the model got them
 * from outside.  The origin is its input, described by the INPUT record
 * the agent sent at the step's first non-finite sighting, on this
 * thread: the tensor as the module that first received it saw it (the
 * outermost call itself, or the first of its children that ran).
 * Without one (a CUDA input, an older agent), the output's counts stay,
 * named as the output's. */
static void from_outside(struct np_proc_state *p, struct np_finding *f)
{
	struct np_agent_state *a = &p->ag;
	f->op = 0;   /* the op that made the output says nothing here */
	f->op_inside = f->op_read_finite = false;
	if (!a->input_pending || a->input.step != f->step || a->input.tid != f->tid)
		return;
	a->input_pending = false;
	const struct np_finding *in = &a->input;
	f->role = 0;   /* "input" */
	f->dtype = in->dtype;
	f->numel = in->numel;
	f->nan = in->nan;
	f->posinf = in->posinf;
	f->neginf = in->neginf;
	f->first_bad = in->first_bad;
	f->max_abs = in->max_abs;
	f->spread = in->spread;
	/* in the step an attach landed in: made before the hooks, maybe */
	f->preexisting |= in->preexisting;
	if (in->module != f->module || in->module_type != f->module_type) {
		f->received_by = in->module;
		f->received_type = in->module_type;
	}
}

/* f, the step's first non-finite value after the forward pass, came from
 * an input held inside the model in that forward (agent_state.held): a
 * value from outside that a saturating op (tanh, sigmoid) hid from the
 * model's output, which the backward pass read again (an input saved by
 * the module that received it: its weight's gradient is Inf * 0).  That
 * input is the origin when it held a NaN or a +Inf, or when the backward
 * report is the receiving module's own.  A -Inf alone elsewhere is what
 * an additive attention mask holds every step: the backward report
 * stays. */
static bool held_input(struct np_collector *c, struct np_proc_state *p,
		       const struct np_finding *f)
{
	struct np_agent_state *a = &p->ag;
	if (!a->held || a->held_in.step != f->step)
		return false;
	a->held = false;
	const struct np_finding *in = &a->input;
	bool own = f->phase == NP_PHASE_BACKWARD && f->module == a->held_in.module;
	if (!a->input_pending || in->step != a->held_in.step || in->tid != a->held_in.tid ||
	    !(in->nan || in->posinf || own))
		return false;
	struct np_finding g = a->held_in;
	from_outside(p, &g);
	g.held = true;
	np_findings_set_origin(c, p, &g);
	return true;
}

/* f, a gradient born from finite gradients, by a node that read data it
 * saved in forward holding a NaN or a +Inf (agent: NP_AF_SAVED_DATA, and
 * the INPUT record just before, which describes that data): the data
 * came into the model from outside and a saturating op kept it from
 * every output (an LSTM's gates).  The origin is that input, in the
 * forward pass, received by the node's module. */
static bool saved_data(struct np_collector *c, struct np_proc_state *p,
		       const struct np_finding *f)
{
	const struct np_finding *in = &p->ag.input;
	if (!p->ag.input_pending || in->phase != NP_PHASE_BACKWARD || in->step != f->step ||
	    in->tid != f->tid)
		return false;
	struct np_finding g = *f;
	from_outside(p, &g);
	g.phase = NP_PHASE_FORWARD;
	g.received_by = g.received_type = 0;   /* the node's module received it */
	g.inputs_finite = false;
	g.held = true;
	np_findings_set_origin(c, p, &g);
	return true;
}

/* -Inf and nothing else: what a mask holds.  RL action masking returns
 * log-probabilities of -inf for invalid actions every step; a model may
 * return an additive attention mask.  Neither is a fault until it makes
 * a NaN or reaches the loss or a gradient. */
static bool neginf_only(const struct np_finding *f)
{
	return f->neginf && !f->nan && !f->posinf;
}

/* The candidate left the model holding only -Inf: held (agent_state
 * masked) until the step shows what became of it. */
static void hold_masked(struct np_proc_state *p)
{
	p->ag.masked = true;
}

/* Whether report f can have come from a held mask: a value that flowed
 * in non-finite, or a loss made outside modules, unless the loss's own
 * op made it from finite values or read it from outside the graph.  A
 * birth elsewhere (an optimizer's lr=inf, a gradient born in backward)
 * is its own origin: the mask is not what made it. */
static bool from_mask(const struct np_finding *f)
{
	if (f->op_read_outside)
		return false;
	if (f->outside)
		return !(f->op_inside && f->op_read_finite);
	return !f->inputs_finite;
}

/* Nothing non-finite came of the masked output: a mask, not a fault. */
static void drop_masked(struct np_proc_state *p)
{
	struct np_agent_state *a = &p->ag;
	if (!a->masked)
		return;
	a->masked = false;
	a->candidate = false;
	a->masked_outputs++;
}

static void on_check(struct np_collector *c, struct np_proc_state *p,
		     struct np_thread_state *t, const struct np_event *e,
		     const struct np_agent_rec *r)
{
	struct np_finding f;
	finding_from(c, p, t, e, r, &f);
	struct np_agent_state *a = &p->ag;
	if (r->role == NP_ROLE_INPUT) {   /* kept for from_outside(), not a report */
		a->input = f;
		a->input_pending = true;
		return;
	}
	p->cur.nonfinite++;
	if (a->found || a->received) {
		a->propagation++;
		return;
	}
	if (r->role == NP_ROLE_COLLECTIVE) {
		if (confirm_candidate(c, p)) {
			a->propagation++;
		} else if (f.inputs_finite) {
			/* finite in, non-finite out: another rank sent it */
			a->received = true;
			a->recv = f;
			if (c->on_finding)
				c->on_finding(c, p, NP_FIND_RECEIVED);
		} else {
			np_findings_set_origin(c, p, &f);   /* went in non-finite, unseen before */
		}
		return;
	}
	if (r->role == NP_ROLE_OUTPUT && !f.outside) {
		if (a->masked && !f.inputs_finite && neginf_only(&f))
			return;   /* the mask's values, passed on */
		if (a->masked && f.inputs_finite)
			drop_masked(p);   /* a birth of its own, in a later call */
		if (a->masked && a->input_pending && a->input.step == f.step &&
		    a->input.tid == f.tid && (a->input.nan || a->input.posinf))
			drop_masked(p);   /* it received a NaN or +Inf: not the mask's */
		if (!f.inputs_finite) {
			/* came in from outside this module: either its caller
			 * made it (the caller's report decides) or, at the
			 * outermost call, it came from outside the model */
			if (confirm_candidate(c, p)) {
				a->propagation++;
			} else if (f.depth == 0) {
				from_outside(p, &f);
				np_findings_set_origin(c, p, &f);
			} else if (!a->held || a->held_in.step != f.step) {
				a->held = true;   /* until a report says where it went */
				a->held_in = f;
			}
			return;
		}
		if (a->candidate) {   /* an enclosing module: the candidate's value left it */
			if (f.depth == 0 && neginf_only(&f) && neginf_only(&a->cand)) {
				hold_masked(p);
				return;
			}
			confirm_candidate(c, p);
			a->propagation++;
			return;
		}
		a->candidate = true;
		a->cand = f;
		if (f.depth == 0 && neginf_only(&f))
			hold_masked(p);
		else if (f.depth == 0)   /* the outermost output is non-finite: it left */
			confirm_candidate(c, p);
		return;
	}
	if (a->masked && !from_mask(&f))
		drop_masked(p);
	if (confirm_candidate(c, p)) {
		a->propagation++;
		return;
	}
	/* backward, optimizer, or a tensor computed outside any module */
	if (r->role == NP_ROLE_GRAD && (r->flags & NP_AF_SAVED_DATA) && saved_data(c, p, &f))
		return;
	if (held_input(c, p, &f))
		return;
	np_findings_set_origin(c, p, &f);
}

void np_findings_root_exit(struct np_collector *c, struct np_proc_state *p)
{
	(void)c;
	/* a held mask: what the rest of the step does with it decides (the
	 * loss may come after a critic's call), so it stays to the step's end */
	if (!p->ag.masked && p->ag.candidate && !p->ag.found) {
		/* the outermost call ended and nothing non-finite left it */
		p->ag.candidate = false;
		p->ag.contained++;
	}
}

/* ---- statistics and explosion warnings ---- */

static struct np_modstat *modstat(struct np_proc_state *p, uint64_t addr)
{
	struct np_agent_state *a = &p->ag;
	uint64_t idx;
	if (!a->mod_index.slots && np_map_init(&a->mod_index, NP_MAX_MODSTATS))
		return NULL;
	if (np_map_get(&a->mod_index, addr, 0, &idx) == 0)
		return &a->mods[idx];
	if (a->nmods >= NP_MAX_MODSTATS) {
		a->mods_dropped++;
		return NULL;
	}
	if (!a->mods && !(a->mods = calloc(NP_MAX_MODSTATS, sizeof(*a->mods))))
		return NULL;
	if (np_map_put(&a->mod_index, addr, 0, a->nmods)) {
		a->mods_dropped++;
		return NULL;
	}
	struct np_modstat *m = &a->mods[a->nmods++];
	memset(m, 0, sizeof(*m));
	m->addr = addr;
	m->step = UINT64_MAX;
	return m;
}

static void late_stats(struct np_collector *c, struct np_proc_state *p, uint64_t step,
		       const struct np_arec_stat *st);

void np_findings_stats(struct np_collector *c, struct np_proc_state *p,
		       const struct np_bulk_event *e)
{
	struct np_arec_stat st;
	for (uint32_t off = 0; off + sizeof(st) <= e->len && off + sizeof(st) <= NP_AGENT_BULK_MAX;
	     off += sizeof(st)) {
		memcpy(&st, e->data + off, sizeof(st));
		if (st.lag) {
			uint64_t step = np_collector_calls_ago(p, st.lag);
			if (step != e->step) {
				late_stats(c, p, step, &st);
				continue;
			}
			/* an earlier optimizer call of this very step (calls
			 * joined): on time after all */
			if (st.grad_sumsq < 0)
				st.grad_sumsq = 0;   /* no gradient part */
		}
		struct np_modstat *m = modstat(p, st.module);
		if (!m)
			continue;
		if (m->step == e->step) {
			/* a second optimizer of the same step (its calls joined):
			 * a module may have parameters in both (Muon's matrices,
			 * AdamW's biases) */
			if (isnan(m->out_max) || st.out_max > m->out_max)
				m->out_max = st.out_max;
			m->grad_sumsq += st.grad_sumsq;
		} else {
			m->step = e->step;
			m->out_max = st.out_max;
			m->grad_sumsq = st.grad_sumsq;
		}
		p->ag.step_sumsq += st.grad_sumsq;
		p->ag.step_has_stats = true;
		p->ag.step_has_grads |= st.grad_sumsq != 0;
		if (isfinite(st.out_max) && st.out_max > p->cur.out_max)
			p->cur.out_max = st.out_max;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Adds value x of one step to series s; returns the growth ratio when it
 * warrants a warning, else 0.  A warning needs a history, a value far
 * above the recent median, and growth two steps in a row: one spike in
 * stable training is not an explosion. */
double np_series_push(struct np_series *s, double x, uint64_t step, bool absolute)
{
	double ratio = 0;
	uint32_t have = s->n < NP_HIST ? s->n : NP_HIST;
	if (isfinite(x) && have >= WARN_MIN_HISTORY) {
		double sorted[NP_HIST];
		for (uint32_t i = 0; i < have; i++)
			sorted[i] = s->v[(s->n - 1 - i) % NP_HIST];
		double prev1 = sorted[0], prev2 = sorted[1];
		qsort(sorted, have, sizeof(double), cmp_double);
		double median = sorted[have / 2];
		double r = median > 0 ? x / median : 0;
		bool growing = x > prev1 && prev1 > prev2;
		bool far = r >= WARN_RATIO || (absolute && x >= WARN_ABSOLUTE);
		bool fresh = step >= s->quiet_until || x >= s->warned * WARN_RATIO;
		if (growing && far && fresh) {
			ratio = r;
			s->quiet_until = step + WARN_QUIET_STEPS;
			s->warned = x;
		}
	}
	if (isfinite(x)) {
		s->v[s->n % NP_HIST] = x;
		s->n++;
	}
	return ratio;
}

static void warn(struct np_collector *c, struct np_proc_state *p, uint64_t step,
		 uint32_t module, uint32_t type, uint8_t metric, double value, double ratio)
{
	struct np_agent_state *a = &p->ag;
	if (a->found || a->received)
		return;   /* past the origin, growth is propagation */
	if (a->nwarnings >= NP_MAX_WARNINGS) {
		a->warnings_dropped++;
		return;
	}
	a->warnings[a->nwarnings++] = (struct np_explosion_warning){
		.step = step, .module = module, .module_type = type, .metric = metric,
		.value = value, .ratio = ratio };
	if (c->on_finding)
		c->on_finding(c, p, NP_FIND_WARNING);
}

/* This step's column of the heatmap. */
static float (*heat_column(struct np_heat *h, uint64_t step, float (**grad)[NP_HEAT_MODS]))[NP_HEAT_MODS]
{
	uint32_t i;
	if (h->len < NP_HEAT_STEPS) {
		i = (h->start + h->len++) % NP_HEAT_STEPS;
	} else {
		i = h->start;   /* drop the oldest step */
		h->start = (h->start + 1) % NP_HEAT_STEPS;
	}
	h->step[i] = step;
	for (uint32_t k = 0; k < NP_HEAT_MODS; k++)
		h->out[i][k] = h->grad[i][k] = NAN;
	*grad = &h->grad[i];
	return &h->out[i];
}

static void heat_put(struct np_heat *h, float (*out)[NP_HEAT_MODS], float (*grad)[NP_HEAT_MODS],
		     const struct np_modstat *m, uint32_t name, uint32_t type)
{
	uint32_t k = 0;
	while (k < h->nmods && h->mod_addr[k] != m->addr)
		k++;
	if (k == h->nmods) {
		if (h->nmods == NP_HEAT_MODS) {
			h->mods_dropped++;
			return;
		}
		h->mod_addr[h->nmods] = m->addr;
		h->mod_type[h->nmods] = type;
		h->mod_name[h->nmods++] = name;
	}
	(*out)[k] = m->out_max;
	(*grad)[k] = !isfinite(m->grad_sumsq) ? INFINITY
		    : m->grad_sumsq > 0 ? (float)sqrt(m->grad_sumsq) : NAN;
}

/* The heatmap column of a step still kept, else NP_HEAT_STEPS. */
static uint32_t heat_column_of(const struct np_heat *h, uint64_t step)
{
	for (uint32_t i = 0; h && i < h->len; i++)
		if (h->step[(h->start + i) % NP_HEAT_STEPS] == step)
			return (h->start + i) % NP_HEAT_STEPS;
	return NP_HEAT_STEPS;
}

/* The late CUDA gradient statistics of one step (np_arec_stat.lag): sums
 * per module and in all until the step's last record, then into the
 * series, the warnings and the heatmap under the step they belong to. */
/* The whole model's gradient norm of one step into its series.  With late
 * CUDA statistics about, a step's CPU part waits for them (a model with
 * .grads on both sides has one norm, not two interleaved). */
static void total_push(struct np_collector *c, struct np_proc_state *p, uint64_t step,
		       double sumsq)
{
	double total = isfinite(sumsq) ? sqrt(sumsq) : INFINITY;
	double r = np_series_push(&p->ag.total, total, step, true);
	if (r > 0)
		warn(c, p, step, 0, 0, NP_METRIC_GRAD_NORM, total, r);
}

static void cpu_total_flush(struct np_collector *c, struct np_proc_state *p)
{
	if (p->ag.cpu_has)
		total_push(c, p, p->ag.cpu_step, p->ag.cpu_sumsq);
	p->ag.cpu_has = false;
}

/* The kept record of a past step, which its late CUDA part completes
 * (its grad_norm and output_max_abs); NULL if it was not kept (over
 * max_steps) or is still in progress. */
static struct np_step_stats *kept_step(struct np_proc_state *p, uint64_t step)
{
	for (uint32_t k = p->nsteps; k-- > 0;) {
		if (p->steps[k].step == step)
			return &p->steps[k];
		if (p->steps[k].step < step)
			break;
	}
	return NULL;
}

static void late_flush(struct np_collector *c, struct np_proc_state *p)
{
	struct np_agent_state *a = &p->ag;
	if (!a->late_has)
		return;
	uint64_t step = a->late_step;
	a->late_has = false;
	double sumsq = a->late_sumsq;
	a->late_sumsq = 0;
	if (a->cpu_has && a->cpu_step < step)
		cpu_total_flush(c, p);   /* a step that had no CUDA part */
	bool with_cpu = a->cpu_has && a->cpu_step == step;
	if (with_cpu) {
		sumsq += a->cpu_sumsq;
		a->cpu_has = false;
	}
	total_push(c, p, step, sumsq);
	struct np_step_stats *rec = kept_step(p, step);
	if (rec) {   /* its CPU part, if any went on its own, is in its record */
		double all = sumsq;
		if (!with_cpu && !isnan(rec->grad_norm))
			all += rec->grad_norm * rec->grad_norm;
		rec->grad_norm = isfinite(all) ? sqrt(all) : INFINITY;
	}
	double r;
	uint32_t col = heat_column_of(a->heat, step);
	for (uint32_t i = 0; i < a->nmods; i++) {
		struct np_modstat *m = &a->mods[i];
		if (m->late_step != step || !m->addr || m->late_sumsq == 0)
			continue;
		uint32_t name = 0, type = 0;
		np_findings_module_names(c, p, m->addr, &name, &type);
		double g = sqrt(m->late_sumsq);   /* inf or nan stays so */
		for (uint32_t k = 0; col < NP_HEAT_STEPS && k < a->heat->nmods; k++)
			if (a->heat->mod_addr[k] == m->addr)
				a->heat->grad[col][k] = isfinite(g) ? (float)g : INFINITY;
		if ((r = np_series_push(&m->s[NP_METRIC_GRAD_NORM], g, step, true)) > 0)
			warn(c, p, step, name, type, NP_METRIC_GRAD_NORM, g, r);
		m->late_sumsq = 0;
	}
}

/* A module's largest |x| of its CUDA outputs in a past step, one value
 * per module and step (cupti/outmax.h): straight into that step's
 * heatmap column and the module's series, whose warnings it may raise.
 * Its on-time statistics said NAN (not measured) for it. */
static void late_out(struct np_collector *c, struct np_proc_state *p, uint64_t step,
		     const struct np_arec_stat *st)
{
	struct np_agent_state *a = &p->ag;
	struct np_modstat *m = st->module ? modstat(p, st->module) : NULL;
	if (!m)
		return;
	uint32_t col = heat_column_of(a->heat, step);
	for (uint32_t k = 0; col < NP_HEAT_STEPS && k < a->heat->nmods; k++)
		if (a->heat->mod_addr[k] == m->addr)
			a->heat->out[col][k] = st->out_max;
	struct np_step_stats *rec = kept_step(p, step);
	if (rec && isfinite(st->out_max) && st->out_max > rec->out_max)
		rec->out_max = st->out_max;
	double r = np_series_push(&m->s[NP_METRIC_OUT_MAX], st->out_max, step, false);
	if (r > 0) {
		uint32_t name = 0, type = 0;
		np_findings_module_names(c, p, m->addr, &name, &type);
		warn(c, p, step, name, type, NP_METRIC_OUT_MAX, st->out_max, r);
	}
}

static void late_stats(struct np_collector *c, struct np_proc_state *p, uint64_t step,
		       const struct np_arec_stat *st)
{
	struct np_agent_state *a = &p->ag;
	if (!isnan(st->out_max))
		late_out(c, p, step, st);
	if (st->grad_sumsq < 0)
		return;   /* no gradient part (NaN is one: a non-finite norm) */
	if (a->late_has && a->late_step != step)
		late_flush(c, p);
	a->late_has = a->late_seen = true;
	a->late_step = step;
	a->late_sumsq += st->grad_sumsq;
	struct np_modstat *m = modstat(p, st->module);
	if (!m)
		return;
	if (m->late_step != step)
		m->late_sumsq = 0;
	m->late_step = step;
	m->late_sumsq += st->grad_sumsq;
}

void np_findings_step_end(struct np_collector *c, struct np_proc_state *p)
{
	struct np_agent_state *a = &p->ag;
	uint64_t step = p->cur.step;
	drop_masked(p);   /* the step ended with nothing non-finite after it */
	late_flush(c, p);   /* an earlier step's, sent in this one */
	cpu_total_flush(c, p);   /* no late part came for it */
	p->cur.grad_norm = NAN;
	if (!a->step_has_stats)
		return;
	double total = isfinite(a->step_sumsq) ? sqrt(a->step_sumsq) : INFINITY;
	/* a model whose .grads are all on the GPU sends them late: its 0
	 * here is no gradient norm */
	bool grads = a->step_has_grads;
	p->cur.grad_norm = grads ? total : NAN;
	if (grads && a->late_seen) {   /* waits for the step's CUDA part */
		a->cpu_has = true;
		a->cpu_step = step;
		a->cpu_sumsq = a->step_sumsq;
	} else if (grads) {
		total_push(c, p, step, a->step_sumsq);
	}
	a->step_sumsq = 0;
	a->step_has_stats = false;
	a->step_has_grads = false;
	double r;
	if (!a->heat)
		a->heat = calloc(1, sizeof(*a->heat));
	float (*hgrad)[NP_HEAT_MODS] = NULL;
	float (*hout)[NP_HEAT_MODS] = a->heat ? heat_column(a->heat, step, &hgrad) : NULL;
	for (uint32_t i = 0; i < a->nmods; i++) {
		struct np_modstat *m = &a->mods[i];
		if (m->step != step || !m->addr)
			continue;   /* addr 0: parameters of no module, in the total only */
		uint32_t name = 0, type = 0;
		np_findings_module_names(c, p, m->addr, &name, &type);
		if (hout)
			heat_put(a->heat, hout, hgrad, m, name, type);
		if (m->grad_sumsq > 0 || !isfinite(m->grad_sumsq)) {
			double g = sqrt(m->grad_sumsq);
			if ((r = np_series_push(&m->s[NP_METRIC_GRAD_NORM], g, step, true)) > 0)
				warn(c, p, step, name, type, NP_METRIC_GRAD_NORM, g, r);
		}
		if ((r = np_series_push(&m->s[NP_METRIC_OUT_MAX], m->out_max, step, false)) > 0)
			warn(c, p, step, name, type, NP_METRIC_OUT_MAX, m->out_max, r);
	}
}

void np_findings_finish(struct np_collector *c, struct np_proc_state *p)
{
	late_flush(c, p);   /* the last step's, sent at the job's exit */
	cpu_total_flush(c, p);
	np_scaler_finish(c, p);
}

/* ---- records ---- */

static void spread_record(struct np_agent_state *a, uint32_t tid, const struct np_agent_rec *r)
{
	struct np_spread *s = &a->spread;
	memset(s, 0, sizeof(*s));
	a->spread_pending = r->ndim >= 1 && r->ndim <= NP_SPREAD_DIMS;
	if (!a->spread_pending)
		return;
	a->spread_tid = tid;
	a->spread_seq = r->seq;
	s->ndim = r->ndim;
	s->partial = (r->flags & NP_AF_PARTIAL) != 0;
	s->no_neginf = (r->flags & NP_AF_NO_NEGINF) != 0;
	memcpy(s->size, r->spread.size, sizeof(s->size));
	memcpy(s->bad, r->spread.bad, sizeof(s->bad));
	memcpy(s->first, r->spread.first, sizeof(s->first));
}

static void update_record(struct np_collector *c, struct np_agent_state *a, uint32_t tid,
			  const struct np_agent_rec *r)
{
	struct np_update *u = &a->update;
	char optimizer[sizeof(r->upd.optimizer) + 1], state[sizeof(r->upd.state) + 1];
	memset(u, 0, sizeof(*u));
	a->update_pending = r->status == NP_UPD_ZERO_DENOM || r->status == NP_UPD_LR;
	if (!a->update_pending)
		return;
	a->update_tid = tid;
	a->update_seq = r->seq;
	snprintf(optimizer, sizeof(optimizer), "%.*s", (int)sizeof(r->upd.optimizer),
		 r->upd.optimizer);
	snprintf(state, sizeof(state), "%.*s", (int)sizeof(r->upd.state), r->upd.state);
	u->cause = (uint8_t)r->status;
	u->state_dtype = r->dtype;
	u->eps = r->upd.eps;
	u->lr = r->upd.lr;
	u->at_zero = r->upd.at_zero;
	u->optimizer = np_intern(c, optimizer);
	u->state = np_intern(c, state);
}

void np_findings_record(struct np_collector *c, struct np_proc_state *p,
			struct np_thread_state *t, const struct np_event *e)
{
	struct np_agent_rec r;
	memcpy(&r, &e->a, sizeof(r));
	if (np_gpu_is_gpu_record(&r)) {   /* numbered on their own */
		np_gpu_record(c, p, &r);
		return;
	}
	struct np_agent_state *a = &p->ag;
	a->records++;
	if (a->last_seq && r.seq > a->last_seq + 1)
		a->lost += r.seq - a->last_seq - 1;
	if (r.seq > a->last_seq)
		a->last_seq = r.seq;
	switch (r.kind) {
	case NP_AREC_CHECK:
		on_check(c, p, t, e, &r);
		break;
	case NP_AREC_SPREAD:
		spread_record(&p->ag, e->tid, &r);
		break;
	case NP_AREC_UPDATE:
		update_record(c, &p->ag, e->tid, &r);
		break;
	case NP_AREC_MODULE_PATH: {
		char path[sizeof(r.mp.path) + 1];
		snprintf(path, sizeof(path), "%.*s", (int)sizeof(r.mp.path), r.mp.path);
		np_collector_agent_path(c, p, r.module, r.mp.child, path);
		break;
	}
	case NP_AREC_STATUS:
		if (r.status == NP_AST_OPTIMIZER) {   /* the first of its step names it */
			if (!p->cur.optimizer)
				p->cur.optimizer = r.module;
			break;
		}
		if (r.status == NP_AST_SCALER_ON || r.status == NP_AST_SCALER_VERDICT) {
			np_scaler_record(c, p, &r);
			break;
		}
		if (r.status == NP_AST_COUNTERS || r.status == NP_AST_DETACHED) {
			if (r.status == NP_AST_DETACHED)
				p->checks = NP_CHECKS_DETACHED;
			if (r.cnt.checked || r.cnt.skipped) {
				a->checked = r.cnt.checked;
				a->bytes = r.cnt.bytes;
				a->skipped = r.cnt.skipped;
				a->dropped = r.cnt.dropped;
				a->overflow = r.cnt.overflow;
			}
			break;
		}
		snprintf(a->torch, sizeof(a->torch), "%.*s", (int)sizeof(a->torch) - 1, r.cnt.what);
		p->checks = r.status == NP_AST_INSTALLED ? NP_CHECKS_ON : NP_CHECKS_FAILED;
		if (c->on_finding)
			c->on_finding(c, p, NP_FIND_CHECKS);
		break;
	}
}

void np_findings_free(struct np_proc_state *p)
{
	np_gpu_free(p);
	np_map_free(&p->ag.mod_index);
	free(p->ag.mods);
	p->ag.mods = NULL;
	free(p->ag.heat);
	p->ag.heat = NULL;
}
