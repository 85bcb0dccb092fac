/* test_scaler.c - userspace/scaler.c: a GradScaler's skipped iterations
 * are loss-scale overflows, not origins; gradients non-finite at every
 * scale are.  Driven by the simulated BPF side (sim.h) and synthetic
 * agent records: CHECKs, and the agent's SCALER_ON / SCALER_VERDICT. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <string.h>

#include "../../agent/agent_report.h"
#include "findings.h"
#include "scaler.h"

#define PID  0x7ffffff0u   /* never a live process */
#define TID  PID
#define VT   0xabc0ULL
#define T_OPT 0x700ULL
#define OPT  0x70000ULL
#include "sim.h"

#define T_NET 0x100ULL
#define M_NET 0x10000ULL

static int origins;
static double scale;   /* the loss scale of the next iteration */
static struct np_proc_state *proc;
static uint32_t seq;

static void on_finding(struct np_collector *c, struct np_proc_state *p, int kind)
{
	(void)c;
	(void)p;
	origins += kind == NP_FIND_ORIGIN;
}

static void setup(void)
{
	proc = sim_checked_proc(on_finding);
	cr_assert_not_null(proc);
	origins = 0;
	seq = 0;
	scale = 65536;
	type_name(&sim, 1, T_NET, "Net");
}

static void teardown(void)
{
	np_collector_free(&col);
}

TestSuite(scaler, .init = setup, .fini = teardown);

static void agent(uint64_t ts, struct np_agent_rec *r)
{
	r->seq = ++seq;
	struct np_event e = ev(&sim, NP_EV_AGENT, ts);
	memcpy(&e.a, r, sizeof(*r));
	send(&e);
}

static void status(uint64_t ts, uint16_t st, uint64_t iter, uint64_t t0, uint64_t t1,
		   uint32_t verdict, double scale)
{
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_STATUS;
	r.status = st;
	r.scl.iter = iter;
	r.scl.t_scale = t0;
	r.scl.t_update = t1;
	r.scl.verdict = verdict;
	r.scl.scale = scale;
	agent(ts, &r);
}

/* a node of the backward pass produced a non-finite gradient (from
 * finite ones unless dirty) */
static void grad(uint64_t ts, bool dirty)
{
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_CHECK;
	r.role = NP_ROLE_GRAD;
	r.phase = NP_APHASE_BACKWARD;
	r.flags = dirty ? NP_AF_SOURCE_DIRTY : 0;
	r.chk.numel = 16;
	r.chk.posinf = 2;
	agent(ts, &r);
}

/* One iteration at t (its scaled part t+40 .. t+90), whose backward
 * makes a non-finite gradient if bad; the scaler's verdict on it
 * (1 skipped, 0 ran) comes at its update(), or not at all if late; the
 * iteration used loss scale `scale`. */
static uint64_t iteration(uint64_t k, bool bad, int verdict, bool late)
{
	uint64_t t = 1000 + k * 1000;
	mod_enter(&sim, t, M_NET, T_NET, 50 + k * 10);
	mod_exit(&sim, t + 30, 55 + k * 10);
	bwd_enter(&sim, t + 50);
	node(&sim, t + 60, 54 + k * 10);
	if (bad) {
		grad(t + 65, false);
		grad(t + 66, true);   /* what it flowed into */
	}
	bwd_exit(&sim, t + 80);
	if (!late)
		status(t + 95, NP_AST_SCALER_VERDICT, k + 1, t + 40, t + 90, (uint32_t)verdict,
		       scale);
	if (verdict == 1)
		scale /= 2;   /* as the scaler backs off */
	if (verdict == 0) {
		opt_enter(&sim, t + 100);
		opt_exit(&sim, t + 150);
	}
	return t;
}

Test(scaler, a_skipped_iteration_is_an_overflow_not_an_origin)
{
	status(500, NP_AST_SCALER_ON, 0, 0, 0, 0, 0);
	iteration(0, false, 0, false);
	iteration(1, true, 1, false);   /* the scale overflowed: skipped */
	for (uint64_t k = 2; k < 6; k++)
		iteration(k, false, 0, false);
	cr_expect_eq(origins, 0);
	cr_expect(!proc->ag.found);
	const struct np_scaler_state *s = &proc->ag.scaler;
	cr_expect_eq(s->iterations, 6);
	cr_expect_eq(s->skipped, 1);
	cr_expect(s->first_has);
	cr_expect_eq(s->first.phase, NP_PHASE_BACKWARD);
	cr_expect_eq(s->first.ts, 2065, "the first one, not its propagation");
}

Test(scaler, without_a_scaler_the_same_gradient_is_the_origin)
{
	iteration(0, false, 0, true);
	iteration(1, true, 1, true);   /* no SCALER records at all */
	cr_expect_eq(origins, 1);
	cr_expect_eq(proc->ag.origin.ts, 2065);
}

Test(scaler, a_gradient_that_did_not_stop_the_step_is_the_origin)
{
	status(500, NP_AST_SCALER_ON, 0, 0, 0, 0, 0);
	iteration(0, true, 0, false);   /* non-finite, yet the step ran */
	cr_expect_eq(origins, 1);
	cr_expect_eq(proc->ag.origin.ts, 1065);
	cr_expect_eq(proc->ag.origin.scaler_run, 0);
}

Test(scaler, non_finite_down_to_a_scale_of_1_is_the_origin)
{
	status(500, NP_AST_SCALER_ON, 0, 0, 0, 0, 0);
	scale = 256;
	iteration(0, false, 0, false);
	for (uint64_t k = 1; k <= 8; k++)   /* scales 256 .. 2 */
		iteration(k, true, 1, false);
	cr_expect_eq(origins, 0, "skips down to a scale of 2 are still overflows");
	iteration(9, true, 1, false);        /* scale 1: non-finite unscaled */
	cr_assert_eq(origins, 1);
	cr_expect_eq(proc->ag.origin.ts, 2065, "the run's first gradient");
	cr_expect_eq(proc->ag.origin.step, 1);
	cr_expect_eq(proc->ag.origin.scaler_run, 9);
	iteration(10, true, 1, false);
	cr_expect_eq(origins, 1, "once");
}

/* The first iterations of fp16 training skip until the scale fits the
 * gradients: many in a row, at large scales, are no origin. */
Test(scaler, long_runs_at_large_scales_are_overflows)
{
	status(500, NP_AST_SCALER_ON, 0, 0, 0, 0, 0);
	uint64_t k = 0;
	for (int r = 0; r < 3; r++) {
		scale = 1 << 24;
		for (int i = 0; i < 20; i++)     /* 2^24 .. 2^5 */
			iteration(k++, true, 1, false);
		iteration(k++, false, 0, false);
	}
	cr_expect_eq(origins, 0);
	cr_expect_eq(proc->ag.scaler.skipped, 60);
}

/* A scale the agent could not read (0) never says "unscaled". */
Test(scaler, an_unknown_scale_is_no_evidence)
{
	status(500, NP_AST_SCALER_ON, 0, 0, 0, 0, 0);
	scale = 0;
	for (uint64_t k = 0; k < 40; k++)
		iteration(k, true, 1, false);
	cr_expect_eq(origins, 0);
}

/* GPU records come late, possibly after their iteration's verdict: a
 * gradient is placed by its launch time in the windows kept. */
Test(scaler, a_late_record_is_placed_by_its_launch_time)
{
	status(500, NP_AST_SCALER_ON, 0, 0, 0, 0, 0);
	iteration(0, false, 1, false);   /* skipped: window 1040..1090 */
	iteration(1, false, 0, false);   /* ran: window 2040..2090 */
	struct np_finding f = { .phase = NP_PHASE_BACKWARD, .role = NP_ROLE_GRAD, .ts = 1070,
				.gpu = true };
	cr_expect(np_scaler_takes(&col, proc, &f), "in the skipped iteration: an overflow");
	cr_expect_eq(proc->ag.scaler.overflow_reports, 1);
	f.ts = 2070;
	cr_expect(!np_scaler_takes(&col, proc, &f), "in the iteration that ran: the origin");
	f.ts = 2010;
	cr_expect(!np_scaler_takes(&col, proc, &f), "between scaled parts: the origin");
	f.ts = 1070;
	f.phase = NP_PHASE_FORWARD;
	cr_expect(!np_scaler_takes(&col, proc, &f), "forward: the scale plays no part");
}

/* A gradient whose verdict never comes (a scaler class nanprof did not
 * wrap, the job killed) is the origin when the process is done. */
Test(scaler, no_verdict_by_the_end_means_the_origin)
{
	status(500, NP_AST_SCALER_ON, 0, 0, 0, 0, 0);
	iteration(0, false, 0, false);
	iteration(1, true, 1, true);   /* its verdict never comes */
	cr_expect_eq(origins, 0, "held");
	np_collector_finish(&col);
	cr_expect_eq(origins, 1);
	cr_expect_eq(proc->ag.origin.ts, 2065);
}
