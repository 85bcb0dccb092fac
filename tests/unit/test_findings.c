/* test_findings.c - unit tests for userspace/findings.c: the origin
 * rules, propagation, statistics and explosion warnings, driven by the
 * simulated BPF side (sim.h) and synthetic agent records. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../agent/agent_report.h"
#include "findings.h"
#include "findings_out.h"

#define PID  0x7ffffff0u   /* never a live process */
#define TID  PID
#define VT   0xabc0ULL
#define T_OPT 0x700ULL
#define OPT  0x70000ULL
#include "sim.h"

#define T_NET 0x100ULL
#define T_BLK 0x200ULL
#define T_LIN 0x300ULL
#define M_NET 0x10000ULL
#define M_BLK 0x20000ULL
#define M_LIN 0x30000ULL

static int origins, warnings;

static void on_finding(struct np_collector *c, struct np_proc_state *p, int kind)
{
	(void)c;
	(void)p;
	origins += kind == NP_FIND_ORIGIN;
	warnings += kind == NP_FIND_WARNING;
}

static struct np_proc_state *proc;
static uint32_t seq;

static void setup(void)
{
	proc = sim_checked_proc(on_finding);
	cr_assert_not_null(proc);
	origins = warnings = 0;
	seq = 0;
	type_name(&sim, 1, T_NET, "Net");
	type_name(&sim, 2, T_BLK, "Block");
	type_name(&sim, 3, T_LIN, "Linear");
}

static void teardown(void)
{
	np_collector_free(&col);
}

TestSuite(findings, .init = setup, .fini = teardown);

/* An agent record, numbered like the agent numbers them. */
static void agent(uint64_t ts, struct np_agent_rec *r)
{
	if (!r->seq)
		r->seq = ++seq;
	struct np_event e = ev(&sim, NP_EV_AGENT, ts);
	memcpy(&e.a, r, sizeof(*r));
	send(&e);
}

/* A CHECK record to fill in further and send with agent(). */
static struct np_agent_rec check_rec(uint8_t role, uint8_t phase, uint64_t module,
				     uint64_t numel)
{
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_CHECK;
	r.role = role;
	r.phase = phase;
	r.module = module;
	r.chk.numel = numel;
	return r;
}

/* A CHECK record of numel elements, posinf of them +Inf and nan NaN. */
static void check_counts(uint64_t ts, uint8_t role, uint8_t phase, uint64_t module,
			 uint8_t flags, const char *what, uint64_t numel, uint64_t posinf,
			 uint64_t nan, int64_t first_bad)
{
	struct np_agent_rec r = check_rec(role, phase, module, numel);
	r.flags = flags;
	r.chk.posinf = posinf;
	r.chk.nan = nan;
	r.chk.first_bad = first_bad;
	if (what)
		strncpy(r.chk.what, what, sizeof(r.chk.what) - 1);
	agent(ts, &r);
}

static void check_flags(uint64_t ts, uint8_t role, uint8_t phase, uint64_t module,
			uint8_t flags, const char *what)
{
	check_counts(ts, role, phase, module, flags, what, 16, 3, 1, 5);
}

static void check(uint64_t ts, uint8_t role, uint8_t phase, uint64_t module, bool src_dirty,
		  const char *what)
{
	check_flags(ts, role, phase, module, src_dirty ? NP_AF_SOURCE_DIRTY : 0, what);
}

static const char *origin_module(void)
{
	return np_name(&col, proc->ag.origin.module);
}

Test(findings, forward_origin_is_the_innermost_module_with_finite_inputs)
{
	sim.step = 7;
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 110, M_BLK, T_BLK, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 120, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
	check(125, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_LIN, false, "AddmmBackward0");
	mod_exit(&sim, 130, NP_SEQ_UNKNOWN);
	cr_assert_eq(origins, 0, "a candidate until its value is seen to leave");
	check(135, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_BLK, true, "AddBackward0");
	cr_assert_eq(origins, 1);
	cr_assert_str_eq(origin_module(), "<Block>.<Linear>");
	cr_assert_str_eq(np_name(&col, proc->ag.origin.module_type), "Linear");
	cr_assert_str_eq(np_name(&col, proc->ag.origin.op), "addmm");
	cr_assert_eq(proc->ag.origin.step, 7);
	cr_assert_eq(proc->ag.origin.phase, NP_PHASE_FORWARD);
	cr_assert_eq(proc->ag.origin.posinf, 3);
	cr_assert_eq(proc->ag.origin.first_bad, 5);
	cr_assert(proc->ag.origin.inputs_finite);
	mod_exit(&sim, 140, NP_SEQ_UNKNOWN);
	check(145, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_NET, true, NULL);
	mod_exit(&sim, 150, NP_SEQ_UNKNOWN);
	cr_assert_eq(origins, 1, "never a second origin");
	cr_assert_eq(proc->ag.propagation, 2);
	cr_assert_eq(proc->cur.nonfinite, 3);
}

Test(findings, value_that_stays_inside_a_module_is_no_origin)
{
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 110, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
	check(115, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_LIN, false, "MaskedFillBackward0");
	mod_exit(&sim, 120, NP_SEQ_UNKNOWN);
	mod_exit(&sim, 130, NP_SEQ_UNKNOWN);   /* Net's output was finite */
	cr_assert_eq(origins, 0);
	cr_assert_not(proc->ag.found);
	cr_assert_eq(proc->ag.contained, 1);
}

Test(findings, nonfinite_inputs_pass_the_question_to_the_caller)
{
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 110, M_BLK, T_BLK, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 120, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
	/* Block made it (between its children) and handed it to Linear */
	check(125, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_LIN, true, NULL);
	mod_exit(&sim, 130, NP_SEQ_UNKNOWN);
	cr_assert_eq(origins, 0);
	check(135, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_BLK, false, "MulBackward0");
	mod_exit(&sim, 140, NP_SEQ_UNKNOWN);
	check(145, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_NET, true, NULL);
	cr_assert_eq(origins, 1);
	cr_assert_str_eq(origin_module(), "<Block>");
	cr_assert_str_eq(np_name(&col, proc->ag.origin.op), "mul");
}

/* Without the INPUT record (a CUDA input, an older agent) the origin
 * keeps the output's counts, and is named as what they are: its output. */
Test(findings, nonfinite_model_input_comes_from_outside)
{
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 110, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
	check(115, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_LIN, true, NULL);
	mod_exit(&sim, 120, NP_SEQ_UNKNOWN);
	check(125, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_NET, true, "SqueezeBackward0");
	cr_assert_eq(origins, 1);
	cr_assert_str_eq(np_role_name(proc->ag.origin.role), "output");
	cr_assert_eq(proc->ag.origin.numel, 16, "the output's counts");
	cr_assert_str_eq(origin_module(), "");
	cr_assert_eq(proc->ag.origin.op, 0, "the op that made the output says nothing here");
	cr_assert_not(proc->ag.origin.inputs_finite);
}

Test(findings, outermost_module_output_is_confirmed_at_once)
{
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	check(105, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_NET, false, "ExpBackward0");
	cr_assert_eq(origins, 1);
	cr_assert_str_eq(origin_module(), "");
	cr_assert_str_eq(np_name(&col, proc->ag.origin.op), "exp");
}

Test(findings, backward_origin_is_the_running_node_and_its_module)
{
	sim.step = 3;
	mod_enter(&sim, 100, M_NET, T_NET, 50);
	mod_enter(&sim, 110, M_LIN, T_LIN, 50);
	mod_exit(&sim, 120, 53);
	mod_exit(&sim, 130, 55);
	bwd_enter(&sim, 200);
	node(&sim, 210, 54);   /* Net's own node */
	check(215, NP_ROLE_GRAD, NP_APHASE_BACKWARD, 0, false, NULL);
	cr_assert_eq(origins, 1);
	node(&sim, 220, 52);   /* Linear's: propagation */
	check(225, NP_ROLE_GRAD, NP_APHASE_BACKWARD, 0, true, NULL);
	bwd_exit(&sim, 300);
	cr_assert_eq(origins, 1);
	cr_assert_eq(proc->ag.origin.phase, NP_PHASE_BACKWARD);
	cr_assert_eq(proc->ag.origin.step, 3);
	cr_assert_str_eq(origin_module(), "");
	cr_assert_str_eq(np_name(&col, proc->ag.origin.op), "Node");
	cr_assert_eq(proc->ag.propagation, 1);
}

Test(findings, backward_node_of_a_child_module_names_the_child)
{
	mod_enter(&sim, 100, M_NET, T_NET, 50);
	mod_enter(&sim, 110, M_LIN, T_LIN, 50);
	mod_exit(&sim, 120, 53);
	mod_exit(&sim, 130, 55);
	bwd_enter(&sim, 200);
	node(&sim, 210, 54);
	node(&sim, 220, 51);
	check(225, NP_ROLE_GRAD, NP_APHASE_BACKWARD, 0, false, NULL);
	cr_assert_str_eq(origin_module(), "<Linear>");
	cr_assert_str_eq(np_name(&col, proc->ag.origin.module_type), "Linear");
}

Test(findings, forward_candidate_confirmed_by_backward)
{
	mod_enter(&sim, 100, M_NET, T_NET, 50);
	mod_enter(&sim, 110, M_LIN, T_LIN, 50);
	check(115, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_LIN, false, NULL);
	mod_exit(&sim, 120, 53);
	/* Net's output finite, but a saved tensor carries it into backward */
	bwd_enter(&sim, 200);
	node(&sim, 210, 51);
	check(215, NP_ROLE_GRAD, NP_APHASE_BACKWARD, 0, true, NULL);
	cr_assert_eq(origins, 1);
	cr_assert_eq(proc->ag.origin.phase, NP_PHASE_FORWARD);
	cr_assert_str_eq(origin_module(), "<Linear>");
}

Test(findings, optimizer_origin_after_a_wrapped_step_keeps_its_step)
{
	sim.step = 9;
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 110, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
	mod_exit(&sim, 120, NP_SEQ_UNKNOWN);
	mod_exit(&sim, 130, NP_SEQ_UNKNOWN);
	opt_enter(&sim, 200);
	opt_exit(&sim, 300);
	/* torch 1.x: the wrapper reports after step() returned */
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_CHECK;
	r.role = NP_ROLE_PARAM;
	r.phase = NP_APHASE_OPTIMIZER;
	r.flags = NP_AF_AFTER_STEP;
	r.module = M_LIN;
	strcpy(r.chk.what, "weight");
	agent(310, &r);
	cr_assert_eq(origins, 1);
	cr_assert_eq(proc->ag.origin.step, 9);
	cr_assert_eq(proc->ag.origin.phase, NP_PHASE_OPTIMIZER);
	cr_assert_str_eq(np_name(&col, proc->ag.origin.param), "weight");
	cr_assert_str_eq(origin_module(), "<Linear>");
	cr_assert_str_eq(np_role_name(proc->ag.origin.role), "param");
}

Test(findings, tensor_outside_modules)
{
	check(105, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, 0, false, "LogBackward0");
	cr_assert_eq(origins, 1);
	cr_assert(proc->ag.origin.outside);
	cr_assert_str_eq(np_name(&col, proc->ag.origin.op), "log");
}

Test(findings, gaps_in_record_numbers_count_as_lost)
{
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_STATUS;
	r.status = NP_AST_INSTALLED;
	strcpy(r.cnt.what, "2.13.0");
	r.seq = 1;
	agent(10, &r);
	cr_assert_eq(proc->checks, NP_CHECKS_ON);
	cr_assert_str_eq(proc->ag.torch, "2.13.0");
	r.status = NP_AST_COUNTERS;
	r.cnt.checked = 40;
	r.seq = 5;
	agent(20, &r);
	cr_assert_eq(proc->ag.lost, 3);
	cr_assert_eq(proc->ag.checked, 40);
}

/* One module's statistics, as the agent's bulk report carries them; lag
 * > 0: CUDA .grads of the step lag steps ago (agent/gpu_norms.c). */
static void stats_lag(uint64_t ts, uint64_t module, float out_max, double sumsq, uint32_t lag)
{
	static struct np_bulk_event b;
	struct np_event e = ev(&sim, NP_EV_AGENT_BULK, ts);
	memset(&b, 0, sizeof(b));
	memcpy(&b, &e, offsetof(struct np_bulk_event, len));
	struct np_arec_stat st = { .module = module, .out_max = out_max, .lag = lag,
				   .grad_sumsq = sumsq };
	memcpy(b.data, &st, sizeof(st));
	b.len = sizeof(st);
	send((const struct np_event *)&b);
}

static void stats(uint64_t ts, uint64_t module, float out_max, double sumsq)
{
	stats_lag(ts, module, out_max, sumsq, 0);
}

/* Step k's forward (Net calls Linear), up to its optimizer step; its
 * start time. */
static uint64_t forward_to_step(uint64_t k)
{
	uint64_t t = 1000 + k * 1000;
	mod_enter(&sim, t, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_enter(&sim, t + 10, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
	mod_exit(&sim, t + 20, NP_SEQ_UNKNOWN);
	mod_exit(&sim, t + 30, NP_SEQ_UNKNOWN);
	opt_enter(&sim, t + 100);
	return t;
}

static void stat_step(uint64_t k, double norm)
{
	uint64_t t = forward_to_step(k);
	stats(t + 110, M_LIN, 1.5f, norm * norm * 0.64);
	stats(t + 120, 0, 0, norm * norm * 0.36);   /* parameters of no module */
	opt_exit(&sim, t + 200);
}

Test(findings, step_gradient_norm_is_the_norm_over_all_parameters)
{
	stat_step(0, 5.0);
	np_collector_finish(&col);   /* the step ends once nothing follows it */
	cr_assert_eq(proc->nsteps, 1);
	cr_assert_float_eq(proc->steps[0].grad_norm, 5.0, 1e-9);
	cr_assert_float_eq(proc->steps[0].out_max, 1.5, 1e-9);
}

/* Two optimizers stepped back to back (Muon + AdamW) make one step: its
 * norm is over both's parameters, a module with parameters in both (a
 * matrix in one, its bias in the other) has one norm over all of them,
 * and its largest output, sent with the first, is kept. */
Test(findings, back_to_back_optimizers_give_one_norm)
{
	for (uint64_t k = 0; k < 2; k++) {
		uint64_t t = forward_to_step(k);
		stats(t + 110, M_LIN, 1.5f, 9.0);    /* the first: Linear's weight */
		opt_exit(&sim, t + 200);
		opt_enter(&sim, t + 300);
		stats(t + 310, M_LIN, NAN, 16.0);    /* the second: its bias */
		stats(t + 320, 0, NAN, 11.0);        /* and parameters of no module */
		opt_exit(&sim, t + 400);
	}
	np_collector_finish(&col);
	cr_assert_eq(proc->nsteps, 2, "%u steps", proc->nsteps);
	for (unsigned k = 0; k < 2; k++) {
		cr_expect_float_eq(proc->steps[k].grad_norm, 6.0, 1e-9, "step %u: %g", k,
				   proc->steps[k].grad_norm);
		cr_expect_float_eq(proc->steps[k].out_max, 1.5, 1e-9);
	}
	const struct np_heat *h = proc->ag.heat;
	cr_assert_not_null(h);
	cr_assert_eq(h->len, 2);
	cr_assert_eq(h->nmods, 1);
	for (uint32_t i = 0; i < h->len; i++) {
		uint32_t c = (h->start + i) % NP_HEAT_STEPS;
		cr_expect_float_eq(h->grad[c][0], 5.0f, 1e-6, "step %llu: Linear's norm %g",
				   (unsigned long long)h->step[c], h->grad[c][0]);
		cr_expect_float_eq(h->out[c][0], 1.5f, 1e-6);
	}
}

/* The same on the GPU: the first optimizer's CUDA .grad norms are back
 * by the second's call and sent then, one optimizer call late (the agent
 * counts calls).  One call ago is this very step, not the one before. */
Test(findings, late_norms_of_a_joined_step_go_to_that_step)
{
	proc->checks = NP_CHECKS_ON;
	for (uint64_t k = 0; k < 4; k++) {
		uint64_t t = forward_to_step(k);
		stats(t + 110, M_LIN, 1.5f, 0);            /* CUDA .grads: no part yet */
		opt_exit(&sim, t + 200);
		opt_enter(&sim, t + 300);
		stats_lag(t + 310, M_LIN, NAN, 9.0 * (double)(k + 1) * (double)(k + 1), 1);
		opt_exit(&sim, t + 400);
	}
	np_collector_finish(&col);
	cr_assert_eq(proc->nsteps, 4, "%u steps", proc->nsteps);
	for (unsigned k = 0; k < 4; k++)
		cr_expect_float_eq(proc->steps[k].grad_norm, 3.0 * (k + 1), 1e-9, "step %u: %g", k,
				   proc->steps[k].grad_norm);
}

Test(findings, stable_training_never_warns)
{
	/* noisy but stable, with one spike */
	double v[] = { 3.0, 2.5, 2.8, 3.3, 2.9, 2.2, 40.0, 3.1, 2.7, 3.0, 2.6, 3.4 };
	for (unsigned k = 0; k < sizeof(v) / sizeof(v[0]); k++)
		stat_step(k, v[k]);
	cr_assert_eq(warnings, 0);
	cr_assert_eq(proc->ag.nwarnings, 0);
}

Test(findings, growing_gradients_warn_before_the_first_nonfinite)
{
	double x = 2.0;
	for (unsigned k = 0; k < 20; k++, x *= k >= 8 ? 4.0 : 1.0)
		stat_step(k, x);
	cr_assert_gt(warnings, 0);
	const struct np_explosion_warning *w = &proc->ag.warnings[0];
	cr_assert_eq(w->metric, NP_METRIC_GRAD_NORM);
	cr_assert_str_eq(np_name(&col, w->module), "", "the whole model first");
	cr_assert_geq(w->ratio, 10.0);
	cr_assert_lt(w->step, 12, "warned at step %llu", (unsigned long long)w->step);
	/* one per series per 10 steps unless it grew 10x more */
	uint32_t whole = 0;
	for (uint32_t i = 0; i < proc->ag.nwarnings; i++)
		whole += proc->ag.warnings[i].module == 0 &&
			 proc->ag.warnings[i].metric == NP_METRIC_GRAD_NORM;
	cr_assert_leq(whole, 8);
}

/* The outermost module is named "" as the whole model's total is: its
 * own parameters' growing norm must say which it is, by its class. */
Test(findings, an_outermost_modules_warning_carries_its_class)
{
	double x = 2.0;
	for (unsigned k = 0; k < 20; k++, x *= k >= 8 ? 4.0 : 1.0) {
		uint64_t t = forward_to_step(k);
		stats(t + 110, M_LIN, 1.5f, 4.0);          /* stable */
		stats(t + 115, M_NET, 1.5f, x * x);        /* Net's own parameters grow */
		opt_exit(&sim, t + 200);
	}
	uint32_t net = 0, whole = 0;
	for (uint32_t i = 0; i < proc->ag.nwarnings; i++) {
		const struct np_explosion_warning *w = &proc->ag.warnings[i];
		cr_assert_str_eq(np_name(&col, w->module), "", "only Net and the total grow");
		const char *type = np_name(&col, w->module_type);
		net += strcmp(type, "Net") == 0;
		whole += type[0] == 0;
	}
	cr_assert_gt(net, 0, "Net's warning names its class");
	cr_assert_gt(whole, 0, "the total's warning has none");
}

/* The warning's ratio in words a person reads: whole up to a million,
 * then three digits and an exponent (a diverging run reaches 1e19). */
static char *warning_line(double value, double ratio)
{
	struct np_explosion_warning w = { .step = 24, .metric = NP_METRIC_GRAD_NORM,
					  .value = value, .ratio = ratio };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	np_print_warning(f, &col, proc, &w);
	fclose(f);
	return buf;
}

Test(findings, a_warnings_ratio_is_short)
{
	char *a = warning_line(430.0, 712.4), *b = warning_line(5.65e19, 9.2606983e19);
	cr_expect(strstr(a, "gradient norm of the whole model is 430, 712x its recent median"),
		  "%s", a);
	cr_expect(strstr(b, "is 5.65e+19, 9.26e+19x its recent median"), "%s", b);
	free(a);
	free(b);
}

/* A model on the GPU: its .grads' norms come a step late (lag 1), its
 * step's own statistics with none.  The warnings must be those of the
 * same norms sent in their own step: same steps, modules and values. */
static void cuda_step(uint64_t k, double prev)
{
	uint64_t t = forward_to_step(k);
	if (k) {   /* the last step's, back from the GPU */
		stats_lag(t + 105, M_LIN, NAN, prev * prev * 0.4, 1);
		stats_lag(t + 106, M_LIN, NAN, prev * prev * 0.24, 1);   /* its bias */
		stats_lag(t + 107, 0, NAN, prev * prev * 0.36, 1);
	}
	stats(t + 110, M_LIN, 1.5f, 0);
	opt_exit(&sim, t + 200);
}

/* A second process, the GPU twin of the first, with its checks on. */
static struct np_proc_state *twin_proc(void)
{
	struct np_proc_info info = { .pid = PID + 1, .py_major = 3, .py_minor = 11 };
	struct np_proc_state *p = np_collector_add_proc(&col, &info, 0);
	cr_assert_not_null(p);
	p->checks = NP_CHECKS_ON;
	return p;
}

/* sim and the checks now speak for p (the twin), from step 0 */
static void speak_for(struct np_proc_state *p)
{
	proc = p;
	sim.pid = p->pid;
	memset(sim.stack, 0, sizeof(sim.stack));
	sim.depth = 0;
	sim.step = 0;
	type_name(&sim, 1, T_NET, "Net");
	type_name(&sim, 3, T_LIN, "Linear");
}

/* The twin warned at the same steps, modules, metrics and values. */
static void expect_same_warnings(const struct np_proc_state *gpu, const struct np_proc_state *cpu)
{
	cr_assert_eq(gpu->ag.nwarnings, cpu->ag.nwarnings, "%u warnings, want %u",
		     gpu->ag.nwarnings, cpu->ag.nwarnings);
	for (uint32_t i = 0; i < cpu->ag.nwarnings; i++) {
		const struct np_explosion_warning *w = &gpu->ag.warnings[i], *v = &cpu->ag.warnings[i];
		cr_expect_eq(w->step, v->step, "warning %u: step %llu, want %llu", i,
			     (unsigned long long)w->step, (unsigned long long)v->step);
		cr_expect_str_eq(np_name(&col, w->module), np_name(&col, v->module));
		cr_expect_eq(w->metric, v->metric);
		cr_expect_float_eq(w->value, v->value, 1e-6 * v->value);
	}
}

Test(findings, late_cuda_gradient_norms_warn_as_if_on_time)
{
	struct np_proc_state *gpu = twin_proc();
	double x[21];
	for (unsigned k = 0; k < 21; k++)
		x[k] = 2.0 * pow(4.0, k > 8 ? k - 8 : 0);
	for (unsigned k = 0; k < 20; k++)
		stat_step(k, x[k]);
	speak_for(gpu);
	for (unsigned k = 0; k < 21; k++)
		cuda_step(k, k ? x[k - 1] : 0);
	np_collector_finish(&col);   /* both twins' last steps end */
	struct np_proc_state *cpu = &col.procs[0];
	cr_assert_gt(cpu->ag.nwarnings, 0);
	expect_same_warnings(gpu, cpu);
	/* a step's own statistics carried no .grad; its late ones complete
	 * its record: the norms the CPU twin's records hold */
	for (unsigned k = 0; k < 20; k++)
		cr_expect_float_eq(gpu->steps[k].grad_norm, cpu->steps[k].grad_norm,
				   1e-9 * cpu->steps[k].grad_norm, "step %u: %g, want %g", k,
				   gpu->steps[k].grad_norm, cpu->steps[k].grad_norm);
	cr_expect(isnan(gpu->steps[20].grad_norm), "step 20's part never came: %g",
		  gpu->steps[20].grad_norm);
}

/* The last step's late part comes at the job's exit, after that step
 * ended and in no step: the end puts it into the step's record and the
 * whole-model series.  A step with a CPU part and a CUDA part has one
 * norm over both. */
Test(findings, last_steps_late_part_sent_at_exit_completes_its_record)
{
	for (unsigned k = 0; k < 4; k++) {
		uint64_t t = forward_to_step(k);
		if (k)   /* the last step's CUDA .grads (sum of squares 9) */
			stats_lag(t + 105, M_LIN, NAN, 9.0, 1);
		stats(t + 110, 0, 0, 16.0);   /* CPU .grads of no module */
		opt_exit(&sim, t + 200);
	}
	/* step 3 ends when something follows its optimizer.step(): here the
	 * late part itself */
	cr_assert_eq(proc->nsteps, 3);
	uint32_t norms = proc->ag.total.n;
	stats_lag(6000, M_LIN, NAN, 9.0, 1);   /* at exit: step 3's */
	cr_assert_eq(proc->nsteps, 4);
	/* step 2's late part, sent in step 3, went in as step 3 ended */
	cr_expect_float_eq(proc->steps[2].grad_norm, 5.0, 1e-9, "step 2: %g",
			   proc->steps[2].grad_norm);
	cr_expect_float_eq(proc->steps[3].grad_norm, 4.0, 1e-9, "CPU part only, yet");
	np_collector_finish(&col);
	cr_expect_float_eq(proc->steps[3].grad_norm, 5.0, 1e-9, "step 3: %g",
			   proc->steps[3].grad_norm);
	/* step 2's norm goes into the series as step 3 ends, step 3's at the end */
	cr_assert_eq(proc->ag.total.n, norms + 2, "step 3's norm into the series");
	cr_expect_float_eq(proc->ag.total.v[(norms) % NP_HIST], 5.0, 1e-9);
	cr_expect_float_eq(proc->ag.total.v[(norms + 1) % NP_HIST], 5.0, 1e-9);
}

/* The largest |x| of a module's outputs, growing 4x a step from step 9:
 * on the CPU with the step's statistics; on the GPU a step late
 * (cupti/outmax.h: lag 1, no gradient part), the step's own saying NAN. */
static double act_max(unsigned k)
{
	return 1.5 * pow(4.0, k > 8 ? k - 8 : 0);
}

static void cpu_act_step(uint64_t k)
{
	uint64_t t = forward_to_step(k);
	stats(t + 110, M_LIN, (float)act_max((unsigned)k), 4.0);
	opt_exit(&sim, t + 200);
}

static void cuda_act_step(uint64_t k)
{
	uint64_t t = forward_to_step(k);
	if (k)
		stats_lag(t + 105, M_LIN, (float)act_max((unsigned)k - 1), -1, 1);
	stats(t + 110, M_LIN, NAN, 4.0);
	opt_exit(&sim, t + 200);
}

Test(findings, late_cuda_output_maxima_warn_as_if_on_time)
{
	struct np_proc_state *gpu = twin_proc();
	for (unsigned k = 0; k < 20; k++)
		cpu_act_step(k);
	speak_for(gpu);
	for (unsigned k = 0; k < 21; k++)
		cuda_act_step(k);
	np_collector_finish(&col);   /* both twins' last steps end */
	struct np_proc_state *cpu = &col.procs[0];
	uint32_t outs = 0;
	for (uint32_t i = 0; i < cpu->ag.nwarnings; i++)
		outs += cpu->ag.warnings[i].metric == NP_METRIC_OUT_MAX;
	cr_assert_gt(outs, 0, "the CPU twin must warn on its outputs");
	expect_same_warnings(gpu, cpu);
	/* the heatmap cell of step 12 holds the late value; no late gradient
	 * part became a whole-model norm */
	const struct np_heat *h = gpu->ag.heat;
	cr_assert_not_null(h);
	uint32_t col12 = NP_HEAT_STEPS;
	for (uint32_t i = 0; i < h->len; i++)
		if (h->step[(h->start + i) % NP_HEAT_STEPS] == 12)
			col12 = (h->start + i) % NP_HEAT_STEPS;
	cr_assert_lt(col12, NP_HEAT_STEPS);
	cr_expect_float_eq(h->out[col12][0], (float)act_max(12), 1e-3);
	cr_expect_float_eq(gpu->steps[12].grad_norm, 2.0, 1e-9, "the on-time norm only");
	/* the step records' largest |x|: the CPU twin's */
	for (unsigned k = 0; k < 20; k++)
		cr_expect_float_eq(gpu->steps[k].out_max, cpu->steps[k].out_max,
				   1e-6 * cpu->steps[k].out_max, "step %u: %g, want %g", k,
				   gpu->steps[k].out_max, cpu->steps[k].out_max);
	/* the whole-model norm series: one value a step (the GPU process ran
	 * one step more, for its last late maximum), the same as the CPU's */
	cr_assert_eq(gpu->ag.total.n, cpu->ag.total.n + 1, "%u norms, want %u", gpu->ag.total.n,
		     cpu->ag.total.n + 1);
	for (uint32_t k = gpu->ag.total.n > NP_HIST ? gpu->ag.total.n - NP_HIST : 0;
	     k < cpu->ag.total.n; k++)
		cr_expect_float_eq(gpu->ag.total.v[k % NP_HIST], cpu->ag.total.v[k % NP_HIST], 1e-9,
				   "norm %u", k);
}

Test(findings, series_needs_history_and_two_rises)
{
	struct np_series s;
	memset(&s, 0, sizeof(s));
	cr_assert_eq(np_series_push(&s, 1.0, 0, true), 0);
	cr_assert_eq(np_series_push(&s, 1e6, 1, true), 0, "no history yet");
	memset(&s, 0, sizeof(s));
	for (int i = 0; i < 6; i++)
		np_series_push(&s, 1.0, (uint64_t)i, true);
	cr_assert_eq(np_series_push(&s, 0.5, 6, true), 0);
	cr_assert_eq(np_series_push(&s, 50.0, 7, true), 0, "one rise after a fall: a spike");
	cr_assert_gt(np_series_push(&s, 80.0, 8, true), 10.0);
	cr_assert_eq(np_series_push(&s, 90.0, 9, true), 0, "quiet for a while");
	cr_assert_gt(np_series_push(&s, 1e4, 10, true), 0, "unless it grew 10x again");
	cr_assert_eq(np_series_push(&s, NAN, 11, true), 0, "non-finite is the origin's business");
}

Test(findings, forward_op_names)
{
	char b[64];
	np_forward_op_name("NativeLayerNormBackward0", b, sizeof(b));
	cr_assert_str_eq(b, "native_layer_norm");
	np_forward_op_name("AddmmBackward0", b, sizeof(b));
	cr_assert_str_eq(b, "addmm");
	np_forward_op_name("SqrtBackward0", b, sizeof(b));
	cr_assert_str_eq(b, "sqrt");
	np_forward_op_name("CppFunction", b, sizeof(b));
	cr_assert_str_eq(b, "cpp_function");
	np_forward_op_name("torch::autograd::CopySlices", b, sizeof(b));
	cr_assert_str_eq(b, "copy_slices", "the class, not its namespace");
	np_forward_op_name("CopySlices", b, sizeof(b));
	cr_assert_str_eq(b, "copy_slices");
	np_forward_op_name("NativeLayerNormBackward0", b, 6);
	cr_assert_str_eq(b, "nati");
}

Test(findings, collective_output_is_received_not_an_origin)
{
	sim.step = 4;
	bwd_enter(&sim, 100);
	bwd_exit(&sim, 200);
	check(210, NP_ROLE_COLLECTIVE, NP_APHASE_BACKWARD, 0, false, "all_reduce");
	cr_assert_eq(origins, 0);
	cr_assert(proc->ag.received);
	cr_assert_not(proc->ag.found);
	cr_assert_str_eq(np_name(&col, proc->ag.recv.op), "all_reduce");
	cr_assert_eq(proc->ag.recv.step, 4);
	check(220, NP_ROLE_PARAM, NP_APHASE_OPTIMIZER, M_LIN, false, "weight");
	cr_assert_eq(origins, 0, "what follows a received value is propagation");
	cr_assert_eq(proc->ag.propagation, 1);
}

/* The agent's SPREAD record, sent just before the CHECK record it is about. */
static void spread(uint64_t ts, uint8_t ndim, const uint32_t *size, const uint32_t *bad,
		   const uint32_t *first, bool partial)
{
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_SPREAD;
	r.ndim = ndim;
	r.flags = partial ? NP_AF_PARTIAL : 0;
	memcpy(r.spread.size, size, ndim * sizeof(uint32_t));
	memcpy(r.spread.bad, bad, ndim * sizeof(uint32_t));
	memcpy(r.spread.first, first, ndim * sizeof(uint32_t));
	agent(ts, &r);
}

Test(findings, the_origin_says_where_in_its_tensor)
{
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 110, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
	spread(114, 3, (uint32_t[]){ 8, 12, 32 }, (uint32_t[]){ 1, 12, 31 },
	       (uint32_t[]){ 5, 0, 0 }, false);
	check(115, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_LIN, false, "AddBackward0");
	mod_exit(&sim, 120, NP_SEQ_UNKNOWN);
	check(125, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_NET, true, NULL);
	cr_assert_eq(origins, 1);
	const struct np_spread *s = &proc->ag.origin.spread;
	cr_assert_eq(s->ndim, 3);
	cr_assert_eq(s->size[0], 8);
	cr_assert_eq(s->bad[0], 1);
	cr_assert_eq(s->first[0], 5);
	char text[256];
	np_spread_text(text, sizeof(text), s);
	cr_assert_str_eq(text, "1 of 8 along dim 0 (only index 5), all 12 along dim 1, "
			       "31 of 32 along dim 2");
	struct np_spread one = { .ndim = 2, .partial = 1, .size = { 1, 100 }, .bad = { 1, 7 } };
	np_spread_text(text, sizeof(text), &one);
	cr_assert_str_eq(text, "7 of 100 along dim 1 (at least: counted over part of the tensor)",
			 "a dimension of size 1 says nothing");
}

/* A SPREAD record is about the CHECK record numbered right after it: with
 * a record lost between them, or another record first, it is dropped. */
Test(findings, a_spread_is_only_for_the_record_right_after_it)
{
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 110, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
	spread(114, 1, (uint32_t[]){ 16 }, (uint32_t[]){ 4 }, (uint32_t[]){ 5 }, false);
	seq++;   /* the CHECK it was for is lost */
	check(115, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_LIN, false, "AddBackward0");
	mod_exit(&sim, 120, NP_SEQ_UNKNOWN);
	spread(121, 1, (uint32_t[]){ 16 }, (uint32_t[]){ 4 }, (uint32_t[]){ 5 }, false);
	check(125, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_NET, true, NULL);
	cr_assert_eq(origins, 1);
	cr_assert_eq(proc->ag.origin.spread.ndim, 0, "the origin's record had no spread of its own");
}

/* The agent's search for the op inside a module (agent/birth_op.h) says
 * in the record's flags what it found; the paragraph on stderr and the
 * origin carry it, and a module's output op keeps no note without it. */
/* What one of findings_out.h's printers writes, in a string to free().
 * Not inlined: gcc then takes a pointer into the string for one to
 * printed()'s own `buf` (-Wdangling-pointer). */
__attribute__((noinline)) static char *printed(void (*print)(FILE *, const struct np_collector *,
				   const struct np_proc_state *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	print(f, &col, proc);
	fclose(f);
	return buf;
}

/* The origin paragraph (stderr); the summary's checks lines (summary.txt),
 * origin line included. */
static char *origin_paragraph(void)
{
	return printed(np_print_origin);
}

static char *checks_line(void)
{
	return printed(np_print_checks);
}

/* A complex tensor is checked as its real view (agent/tensor.c): its
 * record's dtype is its parts' with NP_ADTYPE_PAIRS, its spread has the
 * parts' dimension last.  The paragraph says so. */
Test(findings, a_complex_origin_is_described_as_its_real_view)
{
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 110, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
	spread(114, 3, (uint32_t[]){ 8, 9, 2 }, (uint32_t[]){ 8, 1, 2 },
	       (uint32_t[]){ 0, 4, 0 }, false);
	struct np_agent_rec r = check_rec(NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_LIN, 144);
	r.dtype = NP_DT_F32 | NP_ADTYPE_PAIRS;
	r.chk.nan = 16;
	r.chk.first_bad = 8;
	agent(115, &r);
	mod_exit(&sim, 120, NP_SEQ_UNKNOWN);
	check(125, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_NET, true, NULL);
	cr_assert_eq(origins, 1);
	char *p = origin_paragraph();
	cr_expect(strstr(p, "complex64 viewed as real [8, 9, 2], 144 elements: 16 nan"), "%s", p);
	cr_expect(strstr(p, "1 of 9 along dim 1 (only index 4), all 2 along dim 2"), "%s", p);
	free(p);
	cr_expect_str_eq(np_dtype_name(NP_DT_F64 | NP_ADTYPE_PAIRS), "complex128");
	cr_expect_str_eq(np_dtype_name(NP_DT_F16 | NP_ADTYPE_PAIRS), "complex32");
	cr_expect_str_eq(np_dtype_name(NP_DT_BF16 | NP_ADTYPE_PAIRS), "?", "no such complex type");
	cr_expect_str_eq(np_dtype_name(NP_DT_BF16), "bfloat16");
}

/* A value born from finite ones in float16 or fp8: the paragraph says
 * what that type holds (an overflow is the first thing to suspect); not
 * for float32, nor for a value that flowed in or was there before. */
static char *range_of(uint8_t dtype, bool source_dirty)
{
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 110, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
	struct np_agent_rec r = check_rec(NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_LIN, 64);
	r.dtype = dtype;
	r.flags = source_dirty ? NP_AF_SOURCE_DIRTY : 0;
	r.chk.nan = 8;
	agent(115, &r);
	mod_exit(&sim, 120, NP_SEQ_UNKNOWN);
	check(125, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_NET, true, NULL);
	cr_assert_eq(origins, 1);
	char *p = origin_paragraph();
	const char *range = strstr(p, "  range:  ");
	char *words = range ? strndup(range + 10, strcspn(range + 10, "\n")) : strdup("");
	free(p);
	return words;
}

Test(findings, a_float16_birth_says_what_float16_holds)
{
	char *w = range_of(NP_DT_F16, false);
	cr_expect(strncmp(w, "float16 holds finite values up to 65504 only", 44) == 0, "%s", w);
	cr_expect_str_eq(np_range_note(&proc->ag.origin), "float16 holds finite values up to "
			 "65504 only: a result past it is inf, and inf - inf, 0 * inf or a "
			 "softmax over inf is NaN (bfloat16 and float32 reach 3.4e38)");
	free(w);
}

Test(findings, an_fp8_birth_says_e4m3_has_no_inf)
{
	char *w = range_of(NP_DT_F8E4M3, false);
	cr_expect(strstr(w, "float8_e4m3fn holds finite values up to 448 only and has no inf"),
		  "%s", w);
	free(w);
}

Test(findings, a_float32_birth_has_no_range_line)
{
	char *w = range_of(NP_DT_F32, false);
	cr_expect_str_eq(w, "");
	free(w);
}

Test(findings, a_float16_value_that_flowed_in_has_no_range_line)
{
	char *w = range_of(NP_DT_F16, true);
	cr_expect_str_eq(w, "", "not born here: its range is not the question");
	free(w);
}

/* The grad mode a forward record was made in: an evaluation pass under
 * no_grad or inference_mode says so on the origin's first line; a
 * training forward, a backward record or a mode not read say nothing. */
static char *paragraph_with_mode(uint8_t phase, uint8_t mode)
{
	np_collector_free(&col);
	setup();
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	struct np_agent_rec r = check_rec(phase == NP_APHASE_FORWARD ? NP_ROLE_OUTPUT : NP_ROLE_GRAD,
					  phase, phase == NP_APHASE_FORWARD ? M_NET : 0, 4);
	r.mode = mode;
	r.chk.nan = 1;
	agent(105, &r);
	mod_exit(&sim, 110, NP_SEQ_UNKNOWN);
	cr_assert_eq(origins, 1);
	return origin_paragraph();
}

Test(findings, an_evaluation_pass_says_its_grad_mode)
{
	static const struct {
		uint8_t phase, mode;
		const char *want;
	} cases[] = {
		{ NP_APHASE_FORWARD, NP_AMODE_KNOWN | NP_AMODE_NO_GRAD,
		  "forward pass under no_grad, outermost module call 1 of the step, rank 0 (pid" },
		{ NP_APHASE_FORWARD, NP_AMODE_KNOWN | NP_AMODE_NO_GRAD | NP_AMODE_INFERENCE,
		  "forward pass under inference_mode, outermost module call 1 of the step, rank 0 "
		  "(pid" },
		{ NP_APHASE_FORWARD, NP_AMODE_KNOWN, "forward pass, rank 0 (pid" },
		{ NP_APHASE_FORWARD, 0, "forward pass, rank 0 (pid" },
		{ NP_APHASE_BACKWARD, NP_AMODE_KNOWN | NP_AMODE_NO_GRAD, "backward pass, rank 0 (pid" },
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *p = paragraph_with_mode(cases[i].phase, cases[i].mode);
		cr_expect(strstr(p, cases[i].want), "case %u: %s", i, p);
		/* its own line says what the mode means */
		const char *mode_line = strstr(p, "\n  mode:   no backward runs through this pass: ");
		cr_expect(i < 2 ? mode_line != NULL : mode_line == NULL, "case %u: %s", i, p);
		if (i == 0)
			cr_expect(strstr(p, "an evaluation, inference or teacher-model pass\n"), "%s", p);
		free(p);
	}
	cr_expect_eq(proc->ag.origin.grad_mode, NP_AMODE_KNOWN | NP_AMODE_NO_GRAD);
}

/* An inference-only job never steps: which call of the model it was is
 * what says when.  The third outermost call (batch 2) of step 0. */
Test(findings, an_inference_pass_says_which_outermost_call)
{
	for (uint64_t k = 0; k < 3; k++) {
		mod_enter(&sim, 100 + 100 * k, M_NET, T_NET, NP_SEQ_UNKNOWN);
		mod_enter(&sim, 110 + 100 * k, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
		mod_exit(&sim, 120 + 100 * k, NP_SEQ_UNKNOWN);
		if (k == 2) {
			struct np_agent_rec r = check_rec(NP_ROLE_OUTPUT, NP_APHASE_FORWARD,
							  M_NET, 4);
			r.mode = NP_AMODE_KNOWN | NP_AMODE_NO_GRAD | NP_AMODE_INFERENCE;
			r.chk.nan = 4;
			agent(125 + 100 * k, &r);
		}
		mod_exit(&sim, 130 + 100 * k, NP_SEQ_UNKNOWN);
	}
	cr_assert_eq(origins, 1);
	cr_expect_eq(proc->ag.origin.root_call, 3);
	char *p = origin_paragraph();
	cr_expect(strstr(p, "step 0, forward pass under inference_mode, outermost module call 3 "
			    "of the step"), "%s", p);
	cr_expect(strstr(p, "\n  mode:   no backward runs through this pass: an inference pass\n"),
		  "%s", p);
	free(p);
}

static void op_check(uint8_t flags, const char *what)
{
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	check_flags(105, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_NET, flags, what);
	mod_exit(&sim, 110, NP_SEQ_UNKNOWN);
}

Test(findings, an_op_found_inside_the_module_says_so)
{
	op_check(NP_AF_OP_INSIDE | NP_AF_OP_READ_FINITE, "LogBackward0");
	cr_assert_eq(origins, 1);
	cr_assert_str_eq(np_name(&col, proc->ag.origin.op), "log");
	cr_assert(proc->ag.origin.op_inside);
	cr_assert(proc->ag.origin.op_read_finite);
	char *text = origin_paragraph();
	cr_assert(strstr(text, "  op:     log (inside the module; it read only finite values)\n"),
		  "%s", text);
	free(text);
	/* summary.txt's line says it too */
	text = checks_line();
	cr_assert(strstr(text, ", op log (inside the module; it read only finite values), "
			       "the module's output;"), "%s", text);
	free(text);
}

Test(findings, an_op_inside_whose_inputs_were_not_seen_is_the_first_seen)
{
	op_check(NP_AF_OP_INSIDE, "ExpBackward0");
	cr_assert(proc->ag.origin.op_inside);
	cr_assert_not(proc->ag.origin.op_read_finite);
	char *text = origin_paragraph();
	cr_assert(strstr(text, "  op:     exp (inside the module: the first op seen non-finite; "
			       "not all it read was seen)\n"), "%s", text);
	free(text);
}

Test(findings, the_output_op_without_a_search_has_no_note)
{
	op_check(0, "MulBackward0");
	cr_assert_not(proc->ag.origin.op_inside);
	char *text = origin_paragraph();
	cr_assert(strstr(text, "  op:     mul\n"), "%s", text);
	free(text);
}

Test(findings, op_flags_mean_nothing_on_a_gradient)
{
	/* the flags' bits belong to forward outputs: a gradient's record
	 * never sets them, and a stray bit must not make a note */
	sim.step = 2;
	bwd_enter(&sim, 100);
	check_flags(150, NP_ROLE_GRAD, NP_APHASE_BACKWARD, 0,
		    NP_AF_OP_INSIDE | NP_AF_OP_READ_FINITE, NULL);
	bwd_exit(&sim, 200);
	cr_assert_eq(origins, 1);
	cr_assert_not(proc->ag.origin.op_inside);
	cr_assert_not(proc->ag.origin.op_read_finite);
}

/* ---- an input from outside the model ---- */

/* The agent's INPUT record: the step's first non-finite tensor, as
 * `module` received it (agent/hooks.c fwd_hook), after its spread. */
static void input_record(uint64_t ts, uint64_t module, uint64_t numel, uint64_t posinf,
			 int64_t first_bad)
{
	spread(ts, 2, (uint32_t[]){ 32, 96 }, (uint32_t[]){ 1, 1 }, (uint32_t[]){ 5, 26 }, false);
	check_counts(ts + 1, NP_ROLE_INPUT, NP_APHASE_FORWARD, module, 0, NULL, numel, posinf, 0,
		     first_bad);
}

/* Step k: Linear (inside Net, sequence numbers 50..52) receives a
 * non-finite input (posinf +Inf, neginf -Inf of 32) and passes it on;
 * Net's output is finite (a tanh after Linear saturated it): nothing
 * non-finite left the model.  Then backward: a node of `node_seq`
 * reports a gradient born from finite inputs. */
static void held_step(uint64_t k, uint64_t posinf, uint64_t neginf, uint64_t node_seq)
{
	uint64_t t = 1000 * k;
	sim.step = k;
	mod_enter(&sim, t + 100, M_NET, T_NET, 50);
	mod_enter(&sim, t + 110, M_LIN, T_LIN, 50);
	spread(t + 112, 2, (uint32_t[]){ 4, 8 }, (uint32_t[]){ 1, 1 }, (uint32_t[]){ 0, 0 }, false);
	check_counts(t + 113, NP_ROLE_INPUT, NP_APHASE_FORWARD, M_LIN, 0, NULL, 32, posinf, 0, 0);
	struct np_agent_rec r = check_rec(NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_LIN, 32);
	r.flags = NP_AF_SOURCE_DIRTY;
	r.chk.posinf = 4;
	r.chk.neginf = 4 + neginf;
	agent(t + 115, &r);
	mod_exit(&sim, t + 120, 53);
	mod_exit(&sim, t + 130, 55);
	cr_assert_eq(origins, 0, "held inside: no origin yet");
	bwd_enter(&sim, t + 200);
	node(&sim, t + 210, node_seq);
	check(t + 215, NP_ROLE_GRAD, NP_APHASE_BACKWARD, 0, false, NULL);
}

/* A +Inf from outside that a tanh kept from the model's output, read
 * again by backward: the input is the origin, in the forward pass, with
 * its own counts and place. */
Test(findings, an_input_held_inside_in_forward_is_the_origin_of_its_backward)
{
	held_step(3, 1, 0, 54);   /* Net's own backward node reports */
	cr_assert_eq(origins, 1);
	const struct np_finding *o = &proc->ag.origin;
	cr_assert_eq(o->phase, NP_PHASE_FORWARD);
	cr_assert_eq(o->step, 3);
	cr_assert_str_eq(np_role_name(o->role), "input");
	cr_assert_str_eq(origin_module(), "<Linear>", "the module that received it: %s", origin_module());
	cr_assert_eq(o->posinf, 1, "the input's counts");
	cr_assert_eq(o->spread.ndim, 2);
	cr_assert(o->held);
	char *p = origin_paragraph();
	cr_expect(strstr(p, "the model's output stayed finite"), "%s", p);
	free(p);
}

/* -Inf only (an additive attention mask's): the origin only when the
 * gradient is the receiving module's own; else the backward report. */
Test(findings, a_held_neginf_input_is_the_origin_only_of_its_own_modules_backward)
{
	held_step(3, 0, 1, 52);   /* Linear's node: its weight's gradient */
	cr_assert_eq(origins, 1);
	cr_assert_eq(proc->ag.origin.phase, NP_PHASE_FORWARD);
	cr_assert_str_eq(np_role_name(proc->ag.origin.role), "input");

	np_collector_free(&col);
	setup();
	held_step(3, 0, 1, 54);   /* Net's node: not Linear's */
	cr_assert_eq(origins, 1);
	cr_assert_eq(proc->ag.origin.phase, NP_PHASE_BACKWARD);
	cr_assert_str_eq(np_role_name(proc->ag.origin.role), "grad");
	cr_assert_not(proc->ag.origin.held);
}

/* An LSTM's gates saturate: no forward report at all.  Its backward
 * node read the input it saved, holding +Inf (the agent's INPUT record
 * in backward, then the gradient with NP_AF_SAVED_DATA): that input is
 * the origin, in the forward pass, received by the node's module.
 * Without the flag, or with the data described in another step, the
 * gradient stays the origin. */
static void saved_data_step(uint64_t k, uint8_t flags, uint64_t input_step)
{
	sim.step = k;
	mod_enter(&sim, 100, M_NET, T_NET, 50);
	mod_enter(&sim, 110, M_LIN, T_LIN, 50);
	mod_exit(&sim, 120, 53);
	mod_exit(&sim, 130, 55);
	bwd_enter(&sim, 200);
	node(&sim, 210, 52);   /* Linear's node */
	sim.step = input_step;
	check_counts(212, NP_ROLE_INPUT, NP_APHASE_BACKWARD, 0, 0, NULL, 160, 5, 0, 11);
	sim.step = k;
	check_flags(215, NP_ROLE_GRAD, NP_APHASE_BACKWARD, 0, flags, NULL);
}

Test(findings, data_a_backward_node_saved_is_the_origin_of_its_gradient)
{
	saved_data_step(4, NP_AF_SAVED_DATA, 4);
	cr_assert_eq(origins, 1);
	const struct np_finding *o = &proc->ag.origin;
	cr_assert_eq(o->phase, NP_PHASE_FORWARD);
	cr_assert_eq(o->step, 4);
	cr_assert_str_eq(np_role_name(o->role), "input");
	cr_assert_str_eq(origin_module(), "<Linear>");
	cr_assert_eq(o->numel, 160);
	cr_assert_eq(o->posinf, 5);
	cr_assert_eq(o->received_by, 0);
	cr_assert(o->held);
	cr_assert_not(o->inputs_finite);

	np_collector_free(&col);
	setup();
	saved_data_step(4, 0, 4);
	cr_assert_eq(proc->ag.origin.phase, NP_PHASE_BACKWARD, "no flag: the gradient");

	np_collector_free(&col);
	setup();
	saved_data_step(4, NP_AF_SAVED_DATA, 3);
	cr_assert_eq(proc->ag.origin.phase, NP_PHASE_BACKWARD, "another step's data");
}

/* Held in step 3, a backward birth in step 4: unrelated. */
Test(findings, a_held_input_is_only_its_own_steps_origin)
{
	uint64_t t = 3000;
	sim.step = 3;
	mod_enter(&sim, t + 100, M_NET, T_NET, 50);
	mod_enter(&sim, t + 110, M_LIN, T_LIN, 50);
	check_counts(t + 113, NP_ROLE_INPUT, NP_APHASE_FORWARD, M_LIN, 0, NULL, 32, 1, 0, 0);
	check(t + 115, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_LIN, true, "AddmmBackward0");
	mod_exit(&sim, t + 120, 53);
	mod_exit(&sim, t + 130, 55);
	sim.step = 4;
	mod_enter(&sim, t + 1100, M_NET, T_NET, 150);
	mod_exit(&sim, t + 1130, 155);
	bwd_enter(&sim, t + 1200);
	node(&sim, t + 1210, 154);
	check(t + 1215, NP_ROLE_GRAD, NP_APHASE_BACKWARD, 0, false, NULL);
	cr_assert_eq(origins, 1);
	cr_assert_eq(proc->ag.origin.phase, NP_PHASE_BACKWARD);
	cr_assert_eq(proc->ag.origin.step, 4);
}

/* Linear got it first, inside Net; Net received it too: the origin is
 * Net's input, with the counts and the place of the tensor Linear saw
 * (which sample of the batch), not Net's output's. */
Test(findings, an_input_from_outside_is_described_as_first_received)
{
	sim.step = 20;
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 110, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
	input_record(114, M_LIN, 3072, 1, 506);
	cr_assert_eq(proc->cur.nonfinite, 0, "a description, not a report");
	check(116, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_LIN, true, "AddmmBackward0");
	mod_exit(&sim, 120, NP_SEQ_UNKNOWN);
	check(125, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_NET, true, "AddmmBackward0");
	cr_assert_eq(origins, 1);
	const struct np_finding *o = &proc->ag.origin;
	cr_assert_str_eq(np_role_name(o->role), "input");
	cr_assert_eq(o->numel, 3072);
	cr_assert_eq(o->posinf, 1);
	cr_assert_eq(o->nan, 0);
	cr_assert_eq(o->first_bad, 506);
	cr_assert_eq(o->spread.ndim, 2);
	cr_assert_eq(o->spread.first[0], 5);
	cr_assert_str_eq(np_name(&col, o->received_by), "<Linear>");
	cr_assert_eq(o->op, 0);
	cr_assert_eq(proc->cur.nonfinite, 2);
	char *text = origin_paragraph();
	cr_assert(strstr(text, "  tensor: its input, as <Linear> (Linear) received it, float32 [32, 96], "
			       "3072 elements: 0 nan, 1 +inf, 0 -inf; first at [5, 26]\n"), "%s", text);
	cr_assert(strstr(text, "  spread: 1 of 32 along dim 0 (only index 5), 1 of 96 along dim 1 "
			       "(only index 26)\n"), "%s", text);
	cr_assert(strstr(text, "came into the model from outside"), "%s", text);
	free(text);
	text = checks_line();   /* summary.txt says who received it too */
	cr_assert(strstr(text, ", its input, as <Linear> (Linear) received it; "), "%s", text);
	free(text);
}

Test(findings, an_input_the_outermost_module_got_first_names_no_other)
{
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	input_record(104, M_NET, 64, 2, 7);
	check(106, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_NET, true, "MulBackward0");
	cr_assert_eq(origins, 1);
	cr_assert_str_eq(np_role_name(proc->ag.origin.role), "input");
	cr_assert_eq(proc->ag.origin.numel, 64);
	cr_assert_eq(proc->ag.origin.received_by, 0);
	char *text = origin_paragraph();
	cr_assert(strstr(text, "  tensor: its input, float32 [32, 96], 64 elements"), "%s", text);
	free(text);
}

/* An input made inside the model (between the children of Net, from
 * finite inputs) is Net's own birth: the INPUT record describes nothing. */
Test(findings, an_input_made_inside_the_model_is_a_birth_there)
{
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 110, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
	input_record(114, M_LIN, 3072, 1, 506);
	check(116, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_LIN, true, NULL);
	mod_exit(&sim, 120, NP_SEQ_UNKNOWN);
	check(125, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_NET, false, "AddBackward0");
	cr_assert_eq(origins, 1);
	cr_assert_str_eq(np_role_name(proc->ag.origin.role), "output");
	cr_assert_eq(proc->ag.origin.numel, 16);
	cr_assert(proc->ag.origin.inputs_finite);
}

/* An INPUT record describes only its own step's outermost call. */
Test(findings, an_input_record_of_another_step_describes_nothing)
{
	sim.step = 3;
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 110, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
	input_record(114, M_LIN, 3072, 1, 506);
	mod_exit(&sim, 120, NP_SEQ_UNKNOWN);   /* Linear masked it: finite out */
	mod_exit(&sim, 130, NP_SEQ_UNKNOWN);
	sim.step = 4;
	mod_enter(&sim, 200, M_NET, T_NET, NP_SEQ_UNKNOWN);
	check(206, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_NET, true, NULL);
	cr_assert_eq(origins, 1);
	cr_assert_str_eq(np_role_name(proc->ag.origin.role), "output");
	cr_assert_eq(proc->ag.origin.numel, 16);
}

/* ---- a parameter written outside the optimizer ---- */

/* A module's birth from finite inputs, and one of its parameters is
 * non-finite: every parameter is checked after each optimizer.step(), so
 * code outside the optimizer wrote it (agent/hooks.c bad_param()). */
Test(findings, a_parameter_written_outside_the_optimizer_is_named_as_read)
{
	sim.step = 6;
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 110, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
	check(115, NP_ROLE_PARAM, NP_APHASE_FORWARD, M_LIN, false, "weight");
	check(116, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_LIN, true, "AddmmBackward0");
	mod_exit(&sim, 120, NP_SEQ_UNKNOWN);
	cr_assert_eq(origins, 1);
	const struct np_finding *o = &proc->ag.origin;
	cr_assert_str_eq(np_role_name(o->role), "param");
	cr_assert_str_eq(np_name(&col, o->param), "weight");
	cr_assert_str_eq(origin_module(), "<Linear>");
	cr_assert_eq(o->phase, NP_PHASE_FORWARD);
	char *text = origin_paragraph();
	cr_assert(strstr(text, "  tensor: a parameter of the module, as it ran, float32, 16 "
			       "elements"), "%s", text);
	cr_assert(strstr(text, "code outside the optimizer wrote it"), "%s", text);
	cr_assert_null(strstr(text, "born here"), "%s", text);
	free(text);
	text = checks_line();
	cr_assert(strstr(text, ", a parameter of the module, as it ran (weight); "), "%s", text);
	free(text);
}

/* A .grad non-finite as optimizer.step() begins, after a backward pass
 * whose every checked gradient was finite: the paragraph does not say
 * "born here" (rank 0 of a DDP job gets rank 1's NaN so), it says what
 * writes a .grad after the backward pass. */
Test(findings, a_grad_bad_before_the_update_says_what_writes_grads)
{
	sim.step = 5;
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 110, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
	mod_exit(&sim, 120, NP_SEQ_UNKNOWN);
	mod_exit(&sim, 130, NP_SEQ_UNKNOWN);
	bwd_enter(&sim, 140);
	bwd_exit(&sim, 150);
	opt_enter(&sim, 200);
	check(210, NP_ROLE_PARAM_GRAD, NP_APHASE_OPTIMIZER, M_LIN, false, "weight");
	cr_assert_eq(origins, 1);
	cr_assert_str_eq(np_role_name(proc->ag.origin.role), "param_grad");
	char *text = origin_paragraph();
	cr_expect(strstr(text, "a parameter's .grad before the update"), "%s", text);
	cr_expect(strstr(text, "every gradient the backward pass made was finite where checked: "
			       "the .grad became non-finite after it"), "%s", text);
	cr_expect(strstr(text, "received from another rank in the gradient all-reduce"), "%s",
		  text);
	cr_expect_null(strstr(text, "born here"), "%s", text);
	free(text);
}

/* The same record at first sight (index_params: PREEXISTING) is a
 * parameter born before the attach, not one written between steps. */
Test(findings, a_parameter_bad_at_first_sight_was_born_before_the_attach)
{
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	check_flags(105, NP_ROLE_PARAM, NP_APHASE_FORWARD, M_NET,
		    NP_AF_SOURCE_DIRTY | NP_AF_PREEXISTING, "weight");
	cr_assert_eq(origins, 1);
	char *text = origin_paragraph();
	cr_assert(strstr(text, "a parameter of the module, when nanprof first saw it"), "%s", text);
	cr_assert(strstr(text, "born before nanprof attached"), "%s", text);
	cr_assert_null(strstr(text, "code outside the optimizer"), "%s", text);
	free(text);
}

/* A loss computed outside modules whose op search found an earlier op
 * (agent/hooks.c check_root): the record is that op's output, and the
 * words say so, not "made by" the loss's last op. */
Test(findings, an_op_found_in_a_loss_outside_modules_is_named_with_its_output)
{
	check_flags(105, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, 0,
		    NP_AF_OP_INSIDE | NP_AF_OP_READ_FINITE, "LogBackward0");
	cr_assert_eq(origins, 1);
	const struct np_finding *o = &proc->ag.origin;
	cr_assert(o->outside);
	cr_assert(o->op_inside);
	cr_assert_str_eq(np_name(&col, o->op), "log");
	char *text = origin_paragraph();
	cr_assert(strstr(text, "  where:  outside any module: an op of the code that computed the "
			       "tensor given to backward()"), "%s", text);
	cr_assert(strstr(text, "  op:     log (in the code that computed it; it read only finite "
			       "values)\n"), "%s", text);
	cr_assert(strstr(text, "  tensor: the op's output, float32, 16 elements"), "%s", text);
	cr_assert_null(strstr(text, "made by"), "%s", text);
	free(text);
	text = checks_line();
	cr_assert(strstr(text, "in code outside any module, op log (in the code that computed it; "
			       "it read only finite values), the op's output;"), "%s", text);
	free(text);
}

/* Without the search (torch 1.13) the loss itself, made by its last op;
 * its why does not claim what the loop's code read. */
Test(findings, a_loss_outside_modules_is_made_by_its_last_op)
{
	check(105, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, 0, false, "MeanBackward0");
	char *text = origin_paragraph();
	cr_assert(strstr(text, "  where:  outside any module: the tensor given to backward(), "
			       "made by mean\n"), "%s", text);
	cr_assert(strstr(text, "  tensor: its output, float32, 16 elements"), "%s", text);
	cr_assert_null(strstr(text, "  op:"), "%s", text);
	cr_assert(strstr(text, "no module's output was non-finite: the training loop's own code "
			       "made it"), "%s", text);
	cr_assert_null(strstr(text, "born here"), "%s", text);
	free(text);
}

/* ---- -Inf only: masks the model returns ---- */

/* A forward output record of numel elements, neginf of them -Inf and
 * nan NaN (no +Inf). */
static void check_neginf(uint64_t ts, uint64_t module, bool src_dirty, uint64_t neginf,
			 uint64_t nan)
{
	struct np_agent_rec r = check_rec(NP_ROLE_OUTPUT, NP_APHASE_FORWARD, module, 80);
	r.flags = src_dirty ? NP_AF_SOURCE_DIRTY : 0;
	r.chk.neginf = neginf;
	r.chk.nan = nan;
	strcpy(r.chk.what, "LogSoftmaxBackward0");
	agent(ts, &r);
}

/* The policy's outermost call at t, returning a mask (17 of -Inf). */
static void mask_call(uint64_t t)
{
	mod_enter(&sim, t, M_NET, T_NET, NP_SEQ_UNKNOWN);
	check_neginf(t + 5, M_NET, false, 17, 0);
	mod_exit(&sim, t + 10, NP_SEQ_UNKNOWN);
}

/* One step of a policy whose output masks invalid actions with -inf:
 * its outermost call at t, the optimizer after. */
static void masked_step(uint64_t t, uint64_t nan)
{
	mod_enter(&sim, t, M_NET, T_NET, NP_SEQ_UNKNOWN);
	check_neginf(t + 5, M_NET, false, 17, nan);
	mod_exit(&sim, t + 10, NP_SEQ_UNKNOWN);
	opt_enter(&sim, t + 100);
	opt_exit(&sim, t + 200);
}

Test(findings, a_model_output_of_neginf_only_with_nothing_after_it_is_a_mask)
{
	for (uint64_t k = 0; k < 3; k++)
		masked_step(1000 + k * 1000, 0);
	np_collector_finish(&col);
	cr_assert_eq(origins, 0, "log-probabilities of masked actions are no fault");
	cr_assert_eq(proc->ag.masked_outputs, 3);
	char *text = checks_line();
	cr_assert(strstr(text, "-inf only (masks) left the model 3 times"), "%s", text);
	free(text);
}

Test(findings, a_nan_beside_the_mask_is_the_origin_in_its_step)
{
	masked_step(1000, 0);
	masked_step(2000, 0);
	masked_step(3000, 5);   /* a row with every action masked: NaN */
	cr_assert_eq(origins, 1);
	cr_assert_eq(proc->ag.origin.step, 2);
	cr_assert_eq(proc->ag.origin.nan, 5);
	cr_assert_eq(proc->ag.masked_outputs, 2);
	cr_assert_not(proc->ag.origin.mask_used, "a NaN of its own, not a mask");
}

/* What the step did with the mask decides: made a NaN (the next call,
 * a loss module, received it), reached a gradient, or nothing. */
Test(findings, a_mask_that_makes_a_nan_later_in_its_step_is_the_origin)
{
	masked_step(1000, 0);
	mask_call(2000);
	cr_assert_eq(origins, 0, "held until the step shows what became of it");
	mod_enter(&sim, 2020, M_BLK, T_BLK, NP_SEQ_UNKNOWN);   /* the loss module */
	check_neginf(2025, M_BLK, true, 0, 1);
	cr_assert_eq(origins, 1);
	cr_assert_eq(proc->ag.origin.step, 1);
	cr_assert_str_eq(np_name(&col, proc->ag.origin.module_type), "Net",
			 "the policy's output, not the loss module");
	cr_assert_eq(proc->ag.origin.neginf, 17);
	cr_assert(proc->ag.origin.mask_used);
	char *text = origin_paragraph();
	cr_assert(strstr(text, "-inf and nothing else, as a mask holds, but what came next in "
			       "the step made a NaN or an Inf of it"), "%s", text);
	free(text);
}

Test(findings, a_mask_passed_on_as_is_stays_a_mask)
{
	mask_call(1000);
	mod_enter(&sim, 1020, M_BLK, T_BLK, NP_SEQ_UNKNOWN);   /* gathers, still -inf */
	check_neginf(1025, M_BLK, true, 3, 0);
	mod_exit(&sim, 1030, NP_SEQ_UNKNOWN);
	opt_enter(&sim, 1100);
	opt_exit(&sim, 1200);
	np_collector_finish(&col);
	cr_assert_eq(origins, 0);
	cr_assert_eq(proc->ag.masked_outputs, 1);
}

Test(findings, a_mask_the_gradient_turns_nonfinite_is_the_origin)
{
	mod_enter(&sim, 1000, M_NET, T_NET, 50);
	check_neginf(1005, M_NET, false, 17, 0);
	mod_exit(&sim, 1010, 53);
	bwd_enter(&sim, 1100);
	node(&sim, 1110, 51);
	check(1115, NP_ROLE_GRAD, NP_APHASE_BACKWARD, 0, true, NULL);
	cr_assert_eq(origins, 1);
	cr_assert_eq(proc->ag.origin.phase, NP_PHASE_FORWARD);
	cr_assert_eq(proc->ag.origin.neginf, 17);
}

/* A child that makes the mask, returned as is by the model: a mask too.
 * A birth of its own in a later call of the step is the origin then. */
Test(findings, a_childs_mask_returned_by_the_model_is_held_and_a_later_birth_wins)
{
	mod_enter(&sim, 1000, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 1001, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
	check_neginf(1005, M_LIN, false, 17, 0);
	mod_exit(&sim, 1008, NP_SEQ_UNKNOWN);
	check_neginf(1009, M_NET, false, 17, 0);
	mod_exit(&sim, 1010, NP_SEQ_UNKNOWN);
	cr_assert_eq(origins, 0);
	mod_enter(&sim, 1020, M_BLK, T_BLK, NP_SEQ_UNKNOWN);
	check(1025, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_BLK, false, "ExpBackward0");
	cr_assert_eq(origins, 1);
	cr_assert_str_eq(np_name(&col, proc->ag.origin.module_type), "Block");
	cr_assert_eq(proc->ag.masked_outputs, 1);
}

/* A model's output of -Inf only that nothing uses keeps counting as a
 * mask; the loss made -Inf from it is the origin (the loss, reported
 * outside modules, is of another kind). */
Test(findings, a_neginf_loss_from_a_mask_names_the_mask)
{
	mask_call(1000);
	check(1020, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, 0, false, "MeanBackward0");
	cr_assert_eq(origins, 1);
	cr_assert_str_eq(np_name(&col, proc->ag.origin.module_type), "Net");
	cr_assert_not(proc->ag.origin.outside);
}

/* A SPREAD of the NaN only (the tensor held a mask's -Inf too): the
 * record's flag reaches the finding, and the words say what was left
 * out. */
Test(findings, a_spread_without_the_masks_neginf_says_so)
{
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_SPREAD;
	r.ndim = 2;
	r.flags = NP_AF_NO_NEGINF;
	memcpy(r.spread.size, (uint32_t[]){ 16, 5 }, 2 * sizeof(uint32_t));
	memcpy(r.spread.bad, (uint32_t[]){ 1, 5 }, 2 * sizeof(uint32_t));
	memcpy(r.spread.first, (uint32_t[]){ 3, 0 }, 2 * sizeof(uint32_t));
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	agent(104, &r);
	check_neginf(105, M_NET, false, 17, 5);
	cr_assert_eq(origins, 1);
	cr_assert(proc->ag.origin.spread.no_neginf);
	char *text = origin_paragraph();
	cr_assert(strstr(text, "  spread: 1 of 16 along dim 0 (only index 3), all 5 along dim 1 "
			       "(of its NaN; its -inf, as a mask holds, left out)\n"), "%s", text);
	free(text);
}

/* Gradient accumulation: a birth in the step's third forward pass says
 * which batch of the step it was; the first batch's says nothing. */
Test(findings, a_birth_in_a_later_batch_of_the_step_says_which)
{
	for (uint64_t b = 0; b < 3; b++) {
		uint64_t t = 1000 + b * 1000;
		mod_enter(&sim, t, M_NET, T_NET, NP_SEQ_UNKNOWN);
		if (b == 2)
			check(t + 5, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_NET, false, "ExpBackward0");
		mod_exit(&sim, t + 10, NP_SEQ_UNKNOWN);
		bwd_enter(&sim, t + 100);
		bwd_exit(&sim, t + 200);
	}
	cr_assert_eq(origins, 1);
	cr_assert_eq(proc->ag.origin.batch, 2);
	char *text = origin_paragraph();
	cr_assert(strstr(text, "first non-finite value: step 0, batch 2 of the step, forward pass"),
		  "%s", text);
	free(text);
	text = checks_line();
	cr_assert(strstr(text, "first non-finite: step 0, batch 2 of the step, forward, "), "%s",
		  text);
	free(text);
}

Test(findings, a_birth_in_the_first_batch_names_no_batch)
{
	mod_enter(&sim, 1000, M_NET, T_NET, NP_SEQ_UNKNOWN);
	check(1005, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_NET, false, "ExpBackward0");
	char *text = origin_paragraph();
	cr_assert(strstr(text, "first non-finite value: step 0, forward pass"), "%s", text);
	cr_assert_null(strstr(text, "batch"), "%s", text);
	free(text);
}

/* The loss's op read a non-finite tensor autograd does not track (an
 * advantage normalised by the std of one element): that tensor is the
 * origin, described as what the op read, from outside. */
Test(findings, a_loss_op_that_read_an_untracked_nan_names_that_tensor)
{
	check_flags(105, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, 0,
		    NP_AF_OP_INSIDE | NP_AF_SOURCE_DIRTY | NP_AF_CONST_INPUT, "MulBackward0");
	cr_assert_eq(origins, 1);
	const struct np_finding *o = &proc->ag.origin;
	cr_assert(o->op_read_outside);
	cr_assert_not(o->inputs_finite);
	char *text = origin_paragraph();
	cr_assert(strstr(text, "  op:     mul (in the code that computed it; it read the "
			       "non-finite tensor below)\n"), "%s", text);
	cr_assert(strstr(text, "  tensor: what the op read, which autograd does not track"), "%s",
		  text);
	cr_assert(strstr(text, "it was already non-finite when the loss's code read it"), "%s",
		  text);
	free(text);
}

/* The same tensor NaN everywhere (the std of one value: advantages
 * normalised over a batch of one sample) says so among its makers. */
Test(findings, an_untracked_tensor_nan_everywhere_names_the_std_of_one_value)
{
	check_counts(105, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, 0,
		     NP_AF_OP_INSIDE | NP_AF_SOURCE_DIRTY | NP_AF_CONST_INPUT, "MulBackward0",
		     1, 0, 1, 0);
	cr_assert_eq(origins, 1);
	char *text = origin_paragraph();
	cr_assert(strstr(text, "it was already NaN everywhere when the loss's code read it: made "
			       "without gradient (data, a statistic of the batch such as the std "
			       "of a single value"), "%s", text);
	free(text);
}

/* A birth elsewhere in a step that also returned a mask is its own
 * origin: an update with lr=inf (no SOURCE_DIRTY: the agent does not
 * count masks as what flowed in). */
Test(findings, an_optimizer_birth_in_a_masked_step_is_not_put_on_the_mask)
{
	mask_call(1000);
	opt_enter(&sim, 1100);
	check_flags(1150, NP_ROLE_PARAM, NP_APHASE_OPTIMIZER, M_LIN, NP_AF_AFTER_STEP, "weight");
	cr_assert_eq(origins, 1);
	cr_assert_eq(proc->ag.origin.phase, NP_PHASE_OPTIMIZER);
	cr_assert_str_eq(np_role_name(proc->ag.origin.role), "param");
	cr_assert_not(proc->ag.origin.mask_used);
	cr_assert_eq(proc->ag.masked_outputs, 1);
}

/* A later call of the step that received a NaN (its INPUT record says
 * so) got it from outside, not from the mask of -Inf only. */
Test(findings, a_nan_input_in_a_masked_step_comes_from_outside_not_the_mask)
{
	mask_call(1000);
	mod_enter(&sim, 1020, M_BLK, T_BLK, NP_SEQ_UNKNOWN);   /* a critic, given bad states */
	struct np_agent_rec in = check_rec(NP_ROLE_INPUT, NP_APHASE_FORWARD, M_BLK, 128);
	in.chk.nan = 8;
	agent(1024, &in);
	check(1025, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_BLK, true, "AddmmBackward0");
	cr_assert_eq(origins, 1);
	cr_assert_str_eq(np_role_name(proc->ag.origin.role), "input");
	cr_assert_eq(proc->ag.origin.nan, 8);
	cr_assert_str_eq(np_name(&col, proc->ag.origin.module_type), "Block");
	cr_assert_eq(proc->ag.masked_outputs, 1);
}

/* A loss whose op read an untracked NaN is that NaN's, not the mask's. */
Test(findings, a_loss_reading_an_untracked_nan_in_a_masked_step_is_its_own_origin)
{
	mask_call(1000);
	check_flags(1020, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, 0,
		    NP_AF_OP_INSIDE | NP_AF_SOURCE_DIRTY | NP_AF_CONST_INPUT, "MulBackward0");
	cr_assert_eq(origins, 1);
	cr_assert(proc->ag.origin.op_read_outside);
	cr_assert_eq(proc->ag.masked_outputs, 1);
}

/* ---- two optimizers in turn (a GAN) ---- */

/* Step k of a job whose optimizer `opt` steps after its own forward and
 * backward; the agent says which optimizer stepped. */
static void turn_step(uint64_t k, uint64_t opt)
{
	uint64_t t = 1000 + k * 1000;
	mod_enter(&sim, t, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_exit(&sim, t + 10, NP_SEQ_UNKNOWN);
	bwd_enter(&sim, t + 100);
	bwd_exit(&sim, t + 200);
	opt_enter(&sim, t + 300);
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_STATUS;
	r.status = NP_AST_OPTIMIZER;
	r.module = opt;
	agent(t + 350, &r);
	opt_exit(&sim, t + 400);
}

static void birth_at(uint64_t t)
{
	mod_enter(&sim, t, M_NET, T_NET, NP_SEQ_UNKNOWN);
	check(t + 5, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_NET, false, "ExpBackward0");
}

Test(findings, two_optimizers_in_turn_name_the_iteration)
{
	for (uint64_t k = 0; k < 5; k++)
		turn_step(k, k % 2 ? 0xd00 : 0xa00);
	birth_at(7000);   /* step 5: the 2nd optimizer's half of iteration 2 */
	cr_assert_eq(origins, 1);
	cr_assert_eq(proc->ag.origin.step, 5);
	char *text = origin_paragraph();
	cr_assert(strstr(text, "step 5 (iteration 2, the 2nd of two optimizers stepped in turn), "
			       "forward pass"), "%s", text);
	free(text);
	uint64_t it;
	cr_assert(np_iteration_of(proc, 5, &it));
	cr_assert_eq(it, 2);
}

/* One optimizer, or two back to back (one step each iteration), or a
 * turn broken: steps are iterations, nothing to say. */
Test(findings, one_optimizer_or_a_broken_turn_names_no_iteration)
{
	for (uint64_t k = 0; k < 5; k++)
		turn_step(k, 0xa00);
	birth_at(7000);
	char *text = origin_paragraph();
	cr_assert_null(strstr(text, "iteration"), "%s", text);
	free(text);
	uint64_t it;
	cr_assert_not(np_iteration_of(proc, 5, &it));
}

Test(findings, a_turn_kept_only_two_steps_names_no_iteration)
{
	turn_step(0, 0xa00);
	turn_step(1, 0xd00);
	turn_step(2, 0xd00);   /* the same one twice: no turns */
	turn_step(3, 0xa00);
	turn_step(4, 0xd00);
	birth_at(7000);
	uint64_t it;
	cr_assert_not(np_iteration_of(proc, 5, &it));
}

/* A division by a tensor that held 0 made the value (ZERO_DIVISOR): in
 * a module, the paragraph adds a divisor line; outside modules, where
 * the loss's own op (add) is named, the why says the loop's code made it
 * by that division; without the flag neither appears. */
Test(findings, a_division_by_zero_in_a_module_says_so)
{
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 110, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
	check_flags(115, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_LIN, NP_AF_ZERO_DIVISOR,
		    "DivBackward0");
	mod_exit(&sim, 120, NP_SEQ_UNKNOWN);
	check(125, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_NET, true, NULL);
	cr_assert_eq(origins, 1);
	cr_assert(proc->ag.origin.divided_by_zero);
	char *text = origin_paragraph();
	cr_expect(strstr(text, "  op:     div\n  tensor: "), "%s", text);
	cr_expect(strstr(text, "  divisor: a division by a tensor that held 0 made it (0 / 0 is "
			       "NaN, x / 0 is inf)"), "%s", text);
	cr_expect(strstr(text, "it was born here"), "%s", text);
	free(text);
}

/* The std of one value (agent/birth_op.c: _too_few) sets the same flag:
 * its divisor line says what n - 1 = 0 takes, not a tensor holding 0. */
Test(findings, the_std_of_one_value_says_what_it_divided_by)
{
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	check_flags(115, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_NET,
		    NP_AF_ZERO_DIVISOR | NP_AF_OP_INSIDE | NP_AF_OP_READ_FINITE, "StdBackward0");
	cr_assert_eq(origins, 1);
	char *text = origin_paragraph();
	cr_expect(strstr(text, "  op:     std (inside the module; it read only finite values)\n"),
		  "%s", text);
	cr_expect(strstr(text, "  divisor: a std or var over no more values than its correction "
			       "(1 by default: Bessel's) divides by n - correction = 0: the std "
			       "of a single value is NaN (a batch of one sample"), "%s", text);
	cr_expect_null(strstr(text, "a tensor that held 0"), "%s", text);
	free(text);
}

/* CTC's loss born +inf says what that takes: by its op (ctc_loss, with
 * the op search) or by its module's class (CTCLoss, without); not when
 * it is NaN, nor when what flowed in was non-finite. */
#define T_CTC 0x800ULL
#define M_CTC 0x80000ULL
static char *ctc_birth(const char *what, uint64_t posinf, uint64_t nan, bool src_dirty)
{
	type_name(&sim, 1, T_CTC, "CTCLoss");
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 110, M_CTC, T_CTC, NP_SEQ_UNKNOWN);
	check_counts(115, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_CTC,
		     src_dirty ? NP_AF_SOURCE_DIRTY : NP_AF_OP_INSIDE | NP_AF_OP_READ_FINITE, what,
		     1, posinf, nan, 0);
	mod_exit(&sim, 120, NP_SEQ_UNKNOWN);
	check(125, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_NET, true, NULL);
	cr_assert_eq(origins, 1);
	return origin_paragraph();
}

Test(findings, ctc_loss_born_inf_says_no_alignment_fits)
{
	char *text = ctc_birth("CtcLossBackward0", 1, 0, false);
	cr_expect(strstr(text, "  ctc:    CTC's loss is +inf for a sample whose target no "
			       "alignment fits: more labels than its input_lengths has frames"),
		  "%s", text);
	free(text);
}

Test(findings, a_ctc_module_born_inf_says_so_by_its_class)
{
	char *text = ctc_birth("MeanBackward0", 1, 0, false);   /* no op search: torch 1.13 */
	cr_expect(strstr(text, "  op:     mean"), "%s", text);
	cr_expect(strstr(text, "  ctc:    CTC's loss is +inf"), "%s", text);
	free(text);
}

Test(findings, a_ctc_loss_of_nan_or_of_bad_inputs_says_nothing_of_alignments)
{
	char *text = ctc_birth("CtcLossBackward0", 0, 1, false);
	cr_expect_null(strstr(text, "ctc:"), "%s", text);
	free(text);
}

Test(findings, a_ctc_loss_that_read_bad_inputs_says_nothing_of_alignments)
{
	char *text = ctc_birth("CtcLossBackward0", 1, 0, true);
	cr_expect_null(strstr(text, "ctc:"), "%s", text);
	free(text);
}

Test(findings, a_loss_divided_by_zero_in_the_loop_says_so)
{
	check_flags(105, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, 0, NP_AF_ZERO_DIVISOR, "AddBackward0");
	cr_assert_eq(origins, 1);
	char *text = origin_paragraph();
	cr_expect(strstr(text, "the tensor given to backward(), made by add\n"), "%s", text);
	cr_expect(strstr(text, "  divisor: a division by a tensor that held 0 made it"), "%s",
		  text);
	cr_expect(strstr(text, "the training loop's own code made it, by that division."), "%s",
		  text);
	free(text);
	text = checks_line();   /* summary.txt says it too */
	cr_expect(strstr(text, "\n      a division by a tensor that held 0 made it"), "%s", text);
	free(text);
}

Test(findings, a_loss_without_the_flag_says_nothing_of_divisions)
{
	check_flags(105, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, 0, 0, "DivBackward0");
	cr_assert_eq(origins, 1);
	char *text = origin_paragraph();
	cr_expect_null(strstr(text, "divisor"), "%s", text);
	cr_expect(strstr(text, "from the model's finite outputs or from a tensor autograd does "
			       "not track"), "%s", text);
	free(text);
}

/* A backward birth in step 2: a node of no module whose gradient is
 * non-finite from finite ones, its CHECK GRAD with flags; the origin
 * paragraph, to free(). */
static char *backward_birth(uint8_t flags, const char *what)
{
	sim.step = 2;
	mod_enter(&sim, 100, M_NET, T_NET, 1);
	mod_exit(&sim, 130, 4);
	bwd_enter(&sim, 140);
	node(&sim, 150, 2);
	check_flags(155, NP_ROLE_GRAD, NP_APHASE_BACKWARD, 0, flags, what);
	cr_assert_eq(origins, 1);
	return origin_paragraph();
}

/* The where trap: a division's backward whose divisor held 0 (ZERO_DIVISOR
 * on its CHECK GRAD) makes NaN gradients though the forward was finite:
 * the paragraph says why, and how to divide safely. */
Test(findings, the_where_trap_says_the_divisor_held_0)
{
	char *text = backward_birth(NP_AF_ZERO_DIVISOR, "DivBackward0");
	cr_assert_eq(proc->ag.origin.phase, NP_PHASE_BACKWARD);
	cr_assert(proc->ag.origin.divided_by_zero);
	cr_expect(strstr(text, "  divisor: the division's divisor held 0: the gradient of s / n "
			       "is inf or NaN where n = 0, even where a torch.where"), "%s", text);
	free(text);
}

/* A backward birth at a point where its op's derivative is infinite
 * (SINGULAR on its CHECK GRAD): sqrt of 0 says so and what to do; the
 * same record without the flag says nothing of it. */
Test(findings, sqrt_of_0_in_backward_says_its_derivative_is_infinite)
{
	char *text = backward_birth(NP_AF_SINGULAR, "SqrtBackward0");
	cr_expect(strstr(text, "  derivative: sqrt's derivative is infinite at 0, and it read a 0 "
			       "there: a norm or distance of exactly 0"), "%s", text);
	free(text);
	text = checks_line();
	cr_expect(strstr(text, "\n      sqrt's derivative is infinite at 0"), "%s", text);
	free(text);
}

Test(findings, a_backward_birth_without_the_flag_says_nothing_of_derivatives)
{
	char *text = backward_birth(0, "SqrtBackward0");
	cr_expect_null(strstr(text, "derivative"), "%s", text);
	free(text);
}

/* A softmax that made NaN of whole rows (DEAD_ROWS on its module's CHECK
 * OUTPUT): the paragraph and the summary say what that takes. */
Test(findings, a_softmax_with_whole_nan_rows_says_they_were_masked_or_overflowed)
{
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 110, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
	check_flags(115, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_LIN,
		    NP_AF_DEAD_ROWS | NP_AF_OP_INSIDE, "SoftmaxBackward0");
	mod_exit(&sim, 120, NP_SEQ_UNKNOWN);
	check(125, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_NET, true, NULL);
	cr_assert_eq(origins, 1);
	cr_assert(proc->ag.origin.dead_rows);
	char *text = origin_paragraph();
	cr_expect(strstr(text, "  rows:   it made NaN of whole rows: an input row of -inf "
			       "everywhere, every entry masked"), "%s", text);
	cr_expect(strstr(text, "or a row holding +inf (an overflow before it)\n"), "%s", text);
	free(text);
	text = checks_line();
	cr_expect(strstr(text, "\n      it made NaN of whole rows"), "%s", text);
	free(text);
}

/* Why an update made a parameter non-finite (agent/update_cause.h): the
 * agent's UPDATE record comes before the parameter's CHECK record, with
 * its SPREAD between, and the origin paragraph, the summary and
 * events.jsonl say what the optimizer did. */
static void update_rec(uint64_t ts, uint16_t cause, const char *optimizer, const char *state,
		       uint8_t dtype, double eps, double lr, uint64_t at_zero)
{
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_UPDATE;
	r.status = cause;
	r.dtype = dtype;
	r.upd.eps = eps;
	r.upd.lr = lr;
	r.upd.at_zero = at_zero;
	strncpy(r.upd.optimizer, optimizer, sizeof(r.upd.optimizer) - 1);
	strncpy(r.upd.state, state, sizeof(r.upd.state) - 1);
	agent(ts, &r);
}

/* The param's update: UPDATE, SPREAD, then CHECK (3 +inf, 1 nan). */
static void bad_update(uint16_t cause, const char *optimizer, const char *state, uint8_t dtype,
		       double eps, double lr, uint8_t flags)
{
	sim.step = 3;
	update_rec(214, cause, optimizer, state, dtype, eps, lr, 4);
	spread(215, 1, (uint32_t[]){ 16 }, (uint32_t[]){ 4 }, (uint32_t[]){ 5 }, false);
	check_flags(216, NP_ROLE_PARAM, NP_APHASE_OPTIMIZER, M_LIN, flags, "weight");
}

static char *origin_json(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct np_jsonw *w = np_jsonw_new(f, NP_JSONW_LINES);
	np_json_findings(w, &col, proc);
	np_jsonw_free(w);
	fclose(f);
	return buf;
}

Test(findings, an_update_that_divided_by_a_zero_state_says_eps_is_0)
{
	bad_update(NP_UPD_ZERO_DENOM, "Adam", "exp_avg_sq", NP_DT_F32, 0.0, 1e-3, 0);
	cr_assert_eq(origins, 1);
	cr_assert_eq(proc->ag.origin.update.cause, NP_UPD_ZERO_DENOM);
	char *text = origin_paragraph();
	cr_expect(strstr(text, "  update: Adam divides each update by sqrt(exp_avg_sq) plus eps, "
			       "and eps = 0: 4 of the 4 non-finite values are where exp_avg_sq "
			       "held 0, so the update was 0 / 0 (NaN) or x / 0 (inf) there; every "
			       "gradient there so far was 0"), "%s", text);
	free(text);
	text = checks_line();
	cr_expect(strstr(text, "\n      Adam divides each update by sqrt(exp_avg_sq)"), "%s", text);
	free(text);
	text = origin_json();
	cr_expect(strstr(text, "\"update_cause\":\"zero_denominator\",\"optimizer\":\"Adam\","
			       "\"optimizer_state\":\"exp_avg_sq\",\"optimizer_state_dtype\":"
			       "\"float32\",\"eps\":0,\"nonfinite_where_state_zero\":4,"
			       "\"update_note\":\"Adam divides"), "%s", text);
	free(text);
}

Test(findings, an_eps_that_float16_rounds_to_0_is_named_with_its_dtype)
{
	bad_update(NP_UPD_ZERO_DENOM, "RMSprop", "square_avg", NP_DT_F16, 1e-8, 1e-3, 0);
	char *text = origin_paragraph();
	cr_expect(strstr(text, "  update: RMSprop divides each update by sqrt(square_avg) plus eps, "
			       "and eps = 1e-08 is 0 in float16: 4 of the 4 non-finite values"),
		  "%s", text);
	cr_expect(strstr(text, "or one too small for its square to show in float16: use an eps "
			       "float16 holds (1e-4 or more in float16), or keep the optimizer's "
			       "state in float32\n"), "%s", text);
	free(text);
}

Test(findings, adamax_divides_by_its_running_max)
{
	bad_update(NP_UPD_ZERO_DENOM, "Adamax", "exp_inf", NP_DT_F32, 0.0, 1e-3, 0);
	char *text = origin_paragraph();
	cr_expect(strstr(text, "  update: Adamax divides each update by exp_inf (the largest "
			       "|gradient| so far, or eps), and eps = 0"), "%s", text);
	free(text);
}

Test(findings, adadelta_adds_eps_under_the_root)
{
	bad_update(NP_UPD_ZERO_DENOM, "Adadelta", "square_avg", NP_DT_F32, 0.0, 1.0, 0);
	char *text = origin_paragraph();
	cr_expect(strstr(text, "  update: Adadelta divides each update by sqrt(square_avg + eps), "
			       "and eps = 0"), "%s", text);
	free(text);
}

Test(findings, a_learning_rate_that_is_nan_is_named)
{
	bad_update(NP_UPD_LR, "SGD", "", NP_DT_F32, 0.0, NAN, 0);
	char *text = origin_paragraph();
	cr_expect(strstr(text, "  update: SGD's learning rate is nan: every update it scales is "
			       "non-finite"), "%s", text);
	free(text);
	text = origin_json();
	cr_expect(strstr(text, "\"update_cause\":\"learning_rate\",\"optimizer\":\"SGD\","
			       "\"lr\":\"nan\",\"update_note\":\"SGD's learning rate is nan"),
		  "%s", text);
	free(text);
}

/* The UPDATE record is the next parameter's only: not a later record's
 * (another thread's, a gradient's), and no origin of propagation says it. */
Test(findings, an_update_cause_belongs_to_the_check_right_after_it)
{
	sim.step = 3;
	update_rec(214, NP_UPD_ZERO_DENOM, "Adam", "exp_avg_sq", NP_DT_F32, 0.0, 1e-3, 4);
	check_flags(216, NP_ROLE_PARAM_GRAD, NP_APHASE_OPTIMIZER, M_LIN, 0, "weight");
	cr_assert_eq(origins, 1);
	cr_expect_eq(proc->ag.origin.update.cause, 0);
	char *text = origin_paragraph();
	cr_expect_null(strstr(text, "update:"), "%s", text);
	free(text);
}

Test(findings, a_parameter_that_read_bad_values_gets_no_update_line)
{
	bad_update(NP_UPD_ZERO_DENOM, "Adam", "exp_avg_sq", NP_DT_F32, 0.0, 1e-3,
		   NP_AF_SOURCE_DIRTY | NP_AF_PREEXISTING);
	char *text = origin_paragraph();
	cr_expect_null(strstr(text, "update:"), "%s", text);
	free(text);
	text = origin_json();
	cr_expect_null(strstr(text, "update_cause"), "%s", text);
	free(text);
}

/* An op that read finite values outside its domain (a square root of a
 * negative value, a log of 0) says what that takes; by the op search's
 * flags (torch 2) and the kind of value it made. */
static char *domain_birth(const char *node, uint8_t flags, uint64_t posinf, uint64_t nan,
			  uint64_t neginf)
{
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 110, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
	struct np_agent_rec r = check_rec(NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_LIN, 16);
	r.flags = flags;
	r.chk.posinf = posinf;
	r.chk.nan = nan;
	r.chk.neginf = neginf;
	r.chk.first_bad = 2;
	strncpy(r.chk.what, node, sizeof(r.chk.what) - 1);
	agent(115, &r);
	mod_exit(&sim, 120, NP_SEQ_UNKNOWN);
	check(125, NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_NET, true, NULL);
	cr_assert_eq(origins, 1);
	return origin_paragraph();
}

/* The paragraph of that birth holds `want` (expect_line) or no line
 * labelled `label` (expect_no_line); each in a fresh collector, so that
 * a test may try several. */
static void expect_line(const char *want, const char *node, uint8_t flags, uint64_t posinf,
			uint64_t nan, uint64_t neginf)
{
	np_collector_free(&col);
	setup();
	char *text = domain_birth(node, flags, posinf, nan, neginf);
	cr_expect(strstr(text, want), "%s after %s", text, node);
	free(text);
}

static void expect_no_line(const char *label, const char *node, uint8_t flags,
			   uint64_t posinf, uint64_t nan, uint64_t neginf)
{
	np_collector_free(&col);
	setup();
	char *text = domain_birth(node, flags, posinf, nan, neginf);
	cr_expect_null(strstr(text, label), "%s after %s", text, node);
	free(text);
}

Test(findings, a_log_of_zero_and_a_log_of_a_negative_value_say_so)
{
	expect_line("  domain: a log of exactly 0 is -inf: a probability, count or norm of 0",
		    "LogBackward0", NP_AF_OP_READ_FINITE, 0, 0, 4);
	expect_line("  domain: a log of a negative value is NaN", "LogBackward0",
		    NP_AF_OP_INSIDE | NP_AF_OP_READ_FINITE, 0, 2, 0);
}

/* sqrt keeps only its result: what it read is seldom seen, and the line
 * says a NaN it read would do the same */
Test(findings, a_sqrt_whose_input_was_not_seen_hedges)
{
	expect_line("  domain: a square root of a negative value is NaN (what it read was kept "
		    "nowhere: it may have read a NaN instead): a variance written as "
		    "E[x^2] - E[x]^2", "SqrtBackward0", NP_AF_OP_INSIDE, 0, 16, 0);
}

Test(findings, an_acos_past_one_and_a_fractional_power_of_a_negative_base)
{
	expect_line("  domain: acos and asin of a value past +-1 are NaN", "AcosBackward0",
		    NP_AF_OP_INSIDE | NP_AF_OP_READ_FINITE, 0, 1, 0);
	expect_line("  domain: a negative base to a fractional power is NaN", "PowBackward0",
		    NP_AF_OP_READ_FINITE, 0, 1, 0);
}

/* Not without the op search (torch 1.13 names the output's op, which may
 * have read a NaN made before it), not for a log that read something
 * unseen, not for a pow's overflow (+inf) */
Test(findings, no_domain_line_without_the_op_search_or_for_an_overflow)
{
	expect_no_line("domain:", "LogBackward0", 0, 0, 2, 0);
	expect_no_line("domain:", "LogBackward0", NP_AF_OP_INSIDE, 0, 2, 0);
	expect_no_line("domain:", "PowBackward0", NP_AF_OP_READ_FINITE, 3, 0, 0);
}

/* An exp named so that made an Inf overflowed its dtype: the line says
 * past which value, per dtype, and hedges when what it read was unseen
 * (exp keeps its result only). */
Test(findings, an_exp_that_overflowed_says_past_which_value)
{
	expect_line("  exp:    exp of a value above 88.72 is +inf in float32 (what it read was "
		    "kept nowhere: it may have read an inf instead): a logit", "ExpBackward0",
		    NP_AF_OP_INSIDE, 3, 0, 2);
}

Test(findings, an_exp_in_float16_overflows_above_11)
{
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	struct np_agent_rec r = check_rec(NP_ROLE_OUTPUT, NP_APHASE_FORWARD, M_NET, 16);
	r.flags = NP_AF_OP_INSIDE | NP_AF_OP_READ_FINITE;
	r.dtype = NP_DT_F16;
	r.chk.posinf = 1;
	strncpy(r.chk.what, "ExpBackward0", sizeof(r.chk.what) - 1);
	agent(115, &r);
	cr_assert_eq(origins, 1);
	char *text = origin_paragraph();
	cr_expect(strstr(text, "  exp:    exp of a value above 11.09 is +inf in float16: a logit"),
		  "%s", text);
	free(text);
}

Test(findings, no_exp_line_without_the_op_search_or_for_another_op)
{
	expect_no_line("exp:", "ExpBackward0", 0, 3, 0, 0);
	expect_no_line("exp:", "MulBackward0", NP_AF_OP_INSIDE, 3, 0, 0);
}

/* nll_loss (cross-entropy) that made NaN from finite values divided by a
 * total target weight of 0: every target ignored.  Not said when what it
 * read was not seen finite. */
Test(findings, an_nll_loss_over_no_target_says_its_mean_divided_by_0)
{
	expect_line("  divisor: nll_loss's mean divides by the total weight of its targets, 0 "
		    "here: every target was ignore_index", "NllLossBackward0",
		    NP_AF_OP_INSIDE | NP_AF_OP_READ_FINITE, 0, 1, 0);
	expect_no_line("divisor:", "NllLossBackward0", NP_AF_OP_INSIDE, 0, 1, 0);
}

/* A CUDA birth's op is its kernel: torch's exp kernel that made an Inf
 * gets the line too, hedged (the writer of its input may be unchecked);
 * another kernel does not. */
Test(findings, a_cuda_exp_kernel_that_overflowed_says_so)
{
	struct np_finding o = { .role = NP_ROLE_OUTPUT, .phase = NP_PHASE_FORWARD, .gpu = true,
				.inputs_finite = true, .dtype = NP_DT_F32, .posinf = 4096 };
	char buf[NP_EXP_NOTE_MAX];
	const char *exp = "void at::native::vectorized_elementwise_kernel<8, "
			  "at::native::exp_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}>";
	cr_expect_str_eq(np_exp_note(&o, exp, buf, sizeof(buf)),
			 "exp of a value above 88.72 is +inf in float32 (unless what it read held "
			 "an inf: the writer of its input may not have been checked): a logit, "
			 "log-variance or score that grew (clamp it before the exp, subtract the "
			 "row's max first, or stay in log space: logsumexp, log_softmax, softplus)");
	cr_expect_str_eq(np_exp_note(&o, "void at::native::reduce_kernel<512, 1>", buf,
				     sizeof(buf)), "");
	o.inputs_finite = false;
	cr_expect_str_eq(np_exp_note(&o, exp, buf, sizeof(buf)), "");
}
