/* test_gpu_findings.c - unit tests for userspace/gpu_findings.c and
 * userspace/ctxhist.c: CUDA kernel records placed in the module, step and
 * phase their launching thread was in, the birth/propagation rule, kernel
 * names in pieces, and the GPU records' own numbering.  Driven by the
 * simulated BPF side (sim.h) and synthetic agent records. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <errno.h>
#include <string.h>

#include "../../agent/agent_report.h"
#include "ctxhist.h"
#include "findings.h"
#include "findings_out.h"
#include "gpu_findings.h"

#define PID  0x7ffffff0u
#define TID  PID
#define VT   0xabc0ULL
#define T_OPT 0x700ULL
#define OPT  0x70000ULL
#include "sim.h"

#define T_NET 0x100ULL
#define T_LIN 0x300ULL
#define M_NET 0x10000ULL
#define M_LIN 0x30000ULL
#define KERNEL "at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::exp_kernel_cuda(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >"

static int origins;
static struct np_proc_state *proc;
static uint32_t cpu_seq, gpu_seq;

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
	cpu_seq = gpu_seq = 0;
	type_name(&sim, 1, T_NET, "Net");
	type_name(&sim, 3, T_LIN, "Linear");
}

static void teardown(void)
{
	np_collector_free(&col);
}

TestSuite(gpu_findings, .init = setup, .fini = teardown);

/* A record as the agent's drain thread sends it: on its own thread, in
 * its own numbering, long after the launch. */
static void send_rec(uint64_t ts, struct np_agent_rec *r, bool gpu)
{
	if (!r->seq)
		r->seq = gpu ? ++gpu_seq : ++cpu_seq;
	struct np_event e = ev(&sim, NP_EV_AGENT, ts);
	e.tid = TID + 1;
	memcpy(&e.a, r, sizeof(*r));
	send(&e);
}

static void gpu_status(uint64_t ts, enum np_arec_status st, const char *what)
{
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_STATUS;
	r.status = (uint16_t)st;
	strncpy(r.cnt.what, what, sizeof(r.cnt.what) - 1);
	send_rec(ts, &r, true);
}

/* The kernel's name in pieces of 72 bytes, as drain.c sends it. */
static void gpu_name(uint64_t ts, uint32_t func, const char *name)
{
	size_t n = strlen(name), piece = 72;
	for (size_t off = 0, k = 0; off < n; off += piece, k++) {
		struct np_agent_rec r;
		memset(&r, 0, sizeof(r));
		r.kind = NP_AREC_GPU_NAME;
		r.module = func;
		r.role = (uint8_t)k;
		memcpy(r.name.text, name + off, n - off < piece ? n - off : piece);
		r.flags = off + piece >= n ? NP_AF_LAST : 0;
		send_rec(ts, &r, true);
	}
}

static void gpu_check(uint64_t ts, uint64_t launch_ns, uint32_t func, uint64_t birth,
		      bool propagated, uint8_t extra_flags)
{
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_GPU_CHECK;
	r.role = NP_ROLE_OUTPUT;
	r.flags = (uint8_t)((propagated ? NP_AF_SOURCE_DIRTY : 0) | extra_flags);
	r.dtype = 2;   /* float16 */
	r.gpu.numel = 4096;
	r.gpu.posinf = 17;
	r.gpu.first_bad = 33;
	r.gpu.launch_ns = launch_ns;
	r.gpu.launch_tid = TID;
	r.gpu.func = func;
	r.gpu.birth = birth;
	send_rec(ts, &r, true);
}

/* step 3: Net(Linear) forward from 100 to 300; the GPU results come
 * back at 1000 and later, when the thread is long out of the modules */
static void forward_pass(void)
{
	sim.step = 3;
	gpu_status(50, NP_AST_GPU_ON, "every");
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 110, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
	mod_exit(&sim, 200, NP_SEQ_UNKNOWN);
	mod_exit(&sim, 300, NP_SEQ_UNKNOWN);
}

Test(gpu_findings, birth_is_origin_once_it_propagates_placed_at_its_launch)
{
	forward_pass();
	cr_assert_eq(proc->gpu.state, 1);
	gpu_name(1000, 7, KERNEL);
	gpu_check(1001, 150, 7, 42, false, 0);     /* launched inside Linear */
	cr_assert_eq(origins, 0, "a birth is a candidate until its value leaves the kernel");
	gpu_check(1002, 250, 9, 42, true, 0);      /* launched in Net, after Linear */
	cr_assert_eq(origins, 1);
	const struct np_finding *o = &proc->ag.origin;
	cr_assert(o->gpu);
	cr_assert_str_eq(np_name(&col, o->module_type), "Linear");
	cr_assert_neq(strstr(np_name(&col, o->module), "Linear"), NULL, "module %s",
		      np_name(&col, o->module));
	cr_assert_str_eq(np_name(&col, o->op), KERNEL, "the whole name, put together");
	cr_assert_eq(o->step, 3);
	cr_assert_eq(o->phase, NP_PHASE_FORWARD);
	cr_assert_eq(o->posinf, 17);
	cr_assert_eq(o->first_bad, 33);
	cr_assert_eq(o->dtype, 2);
	cr_assert_eq(o->tid, TID, "the launching thread, not the drain thread");
	cr_assert(o->inputs_finite);
	cr_assert(!o->graph);
	/* a float16 kernel's birth says what float16 holds: an overflow is
	 * the first thing to suspect of a half-precision GEMM */
	cr_assert(!strncmp(np_range_note(o), "float16 holds finite values up to 65504", 39),
		  "%s", np_range_note(o));
	gpu_check(1003, 260, 9, 42, true, 0);
	cr_assert_eq(origins, 1, "never a second origin");
	cr_assert_eq(proc->ag.propagation, 1);
	cr_assert_eq(proc->gpu.lost, 0);
}

Test(gpu_findings, birth_that_never_propagates_is_no_origin)
{
	forward_pass();
	gpu_check(1001, 150, 7, 42, false, 0);   /* a -inf mask, every step */
	gpu_check(1002, 160, 7, 43, false, 0);
	gpu_check(1003, 250, 9, 99, true, 0);    /* propagation of a birth never seen */
	cr_assert_eq(origins, 0);
	cr_assert_eq(proc->gpu.births, 2);
	cr_assert_eq(proc->gpu.unknown_births, 1);
	cr_assert_eq(proc->ag.propagation, 0, "propagation counts after an origin only");
}

Test(gpu_findings, the_propagating_birth_wins_not_the_first_one)
{
	forward_pass();
	gpu_check(1001, 120, 7, 42, false, 0);   /* contained (mask) in Linear */
	gpu_check(1002, 250, 8, 50, false, 0);   /* the real one, in Net */
	gpu_check(1003, 260, 9, 50, true, 0);    /* still inside Net: not yet */
	cr_assert_eq(origins, 0);
	gpu_check(1004, 350, 9, 50, true, 0);    /* the loss, after Net returned */
	cr_assert_eq(origins, 1);
	cr_assert_str_eq(np_name(&col, proc->ag.origin.module_type), "Net");
	cr_assert_eq(proc->gpu.inside, 1);
}

Test(gpu_findings, a_mask_that_spreads_inside_its_module_is_no_origin)
{
	forward_pass();
	/* the mask is made in Net's forward and added to scores in Linear:
	 * it spreads, but never out of Net, and dies in the softmax */
	gpu_check(1001, 105, 7, 60, false, 0);
	gpu_check(1002, 150, 8, 60, true, 0);
	gpu_check(1003, 190, 8, 60, true, 0);
	cr_assert_eq(origins, 0);
	cr_assert_eq(proc->gpu.inside, 2);
	/* the same in backward: a node's kernels spreading within its module */
	sim.step = 4;
	mod_enter(&sim, 400, M_NET, T_NET, 10);
	mod_enter(&sim, 410, M_LIN, T_LIN, 12);
	mod_exit(&sim, 420, 15);
	mod_exit(&sim, 430, 20);
	bwd_enter(&sim, 500);
	node(&sim, 510, 13);    /* Linear */
	node(&sim, 520, 14);    /* Linear again */
	gpu_check(2000, 512, 7, 61, false, 0);
	gpu_check(2001, 522, 8, 61, true, 0);
	cr_assert_eq(origins, 0, "still in Linear's backward");
	node(&sim, 530, 18);    /* Net */
	gpu_check(2002, 531, 8, 61, true, 0);
	cr_assert_eq(origins, 1);
	cr_assert_eq(proc->ag.origin.phase, NP_PHASE_BACKWARD);
	cr_assert_str_eq(np_name(&col, proc->ag.origin.module_type), "Linear");
}

/* Launches before nanprof knew the thread's modules (the job started
 * training as nanprof attached): a birth and a propagation both
 * unplaced show nothing leaving; a placed propagation of it is taken. */
Test(gpu_findings, two_unplaced_records_show_nothing_leaving)
{
	forward_pass();
	gpu_check(1001, 20, 7, 70, false, 0);    /* before any module call seen */
	gpu_check(1002, 30, 8, 70, true, 0);
	cr_assert_eq(origins, 0, "an unplaced mask spreading is no origin");
	cr_assert_eq(proc->gpu.inside, 1);
	gpu_check(1003, 150, 8, 70, true, 0);    /* inside Linear: placed */
	cr_assert_eq(origins, 1, "placed evidence of an unplaced birth is taken");
	cr_assert(proc->ag.origin.context_unknown);
}

Test(gpu_findings, backward_kernels_take_the_module_of_their_node)
{
	forward_pass();
	/* the forward spans carry sequence numbers 10..20 (Net), 12..15 (Linear) */
	sim.step = 4;
	mod_enter(&sim, 400, M_NET, T_NET, 10);
	mod_enter(&sim, 410, M_LIN, T_LIN, 12);
	mod_exit(&sim, 420, 15);
	mod_exit(&sim, 430, 20);
	bwd_enter(&sim, 500);
	node(&sim, 510, 13);    /* made in Linear's forward */
	node(&sim, 530, 18);    /* made in Net's */
	bwd_exit(&sim, 600);
	gpu_check(2000, 515, 7, 77, false, 0);
	gpu_check(2001, 535, 8, 77, true, 0);
	cr_assert_eq(origins, 1);
	cr_assert_eq(proc->ag.origin.phase, NP_PHASE_BACKWARD);
	cr_assert_eq(proc->ag.origin.step, 4);
	cr_assert_str_eq(np_name(&col, proc->ag.origin.module_type), "Linear");
}

Test(gpu_findings, optimizer_kernels_are_in_the_optimizer_phase)
{
	forward_pass();
	opt_enter(&sim, 700);
	opt_exit(&sim, 800);
	gpu_check(2000, 750, 7, 8, false, 0);   /* a fused Adam kernel, say */
	gpu_check(2001, 900, 8, 8, true, 0);    /* read by the next step */
	cr_assert_eq(origins, 1);
	cr_assert_eq(proc->ag.origin.phase, NP_PHASE_OPTIMIZER);
	cr_assert_eq(proc->ag.origin.step, 3);
	cr_assert_eq(proc->ag.origin.module, 0, "no module: the optimizer");
}

/* The agent's check of a CUDA root handed to backward (the loss). */
static void gpu_root(uint64_t ts, uint64_t launch_ns, uint64_t birth, bool propagated)
{
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_GPU_CHECK;
	r.role = NP_ROLE_ROOT;
	r.flags = propagated ? NP_AF_SOURCE_DIRTY : 0;
	r.gpu.numel = 1;
	r.gpu.neginf = 1;
	r.gpu.launch_ns = launch_ns;
	r.gpu.launch_tid = TID;
	r.gpu.func = 9;
	r.gpu.birth = birth;
	send_rec(ts, &r, true);
}

/* The drain's word that birth's memory is a parameter of owner's. */
static void gpu_param(uint64_t ts, uint64_t birth, uint64_t owner, const char *name)
{
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_GPU_PARAM;
	r.module = owner;
	r.gparam.birth = birth;
	strncpy(r.gparam.what, name, sizeof(r.gparam.what) - 1);
	send_rec(ts, &r, true);
}

/* The loss made in the training loop: log(0) = -inf outside every
 * module, added to the loss outside them too, read by no later kernel.
 * Only its check as the root handed to backward shows it leaving. */
Test(gpu_findings, a_loss_born_outside_modules_is_origin_once_it_reaches_backward)
{
	forward_pass();
	gpu_check(1001, 350, 7, 90, false, 0);   /* log, after Net returned */
	gpu_check(1002, 360, 8, 90, true, 0);    /* the add making the loss */
	cr_assert_eq(origins, 0, "spread between module calls only: no evidence yet");
	cr_assert_eq(proc->gpu.inside, 1);
	gpu_root(1003, 370, 90, true);
	cr_assert_eq(origins, 1);
	cr_assert_eq(proc->ag.origin.step, 3);
	cr_assert(proc->ag.origin.outside, "born between module calls");
	cr_assert_eq(proc->ag.origin.phase, NP_PHASE_FORWARD);
}

/* A root non-finite though its writer's check saw nothing (sampled out,
 * undecoded): the origin at once, as the CPU reports a non-finite root. */
Test(gpu_findings, a_loss_found_non_finite_at_its_own_check_is_origin_at_once)
{
	forward_pass();
	gpu_root(1001, 370, 91, false);
	cr_assert_eq(origins, 1);
	cr_assert(proc->ag.origin.outside);
}

/* Module-level checks see outputs only: Net's output made from Linear's
 * non-finite one by a kernel no check saw is a birth of its own.  The
 * value left Linear: Linear's output is the origin, as on the CPU. */
Test(gpu_findings, module_outputs_a_parent_non_finite_after_its_child_names_the_child)
{
	forward_pass();
	gpu_name(1000, 20, NP_GPU_OUTPUT_CHECK_NAME);
	gpu_check(1001, 199, 20, 93, false, 0);   /* Linear's output, in its hook */
	cr_assert_eq(origins, 0);
	gpu_check(1002, 299, 20, 94, false, 0);   /* Net's output: a birth too */
	cr_assert_eq(origins, 1);
	cr_assert_str_eq(np_name(&col, proc->ag.origin.module_type), "Linear");
}

Test(gpu_findings, kernel_births_in_a_child_then_its_parent_are_no_such_evidence)
{
	forward_pass();
	gpu_check(1001, 150, 7, 95, false, 0);   /* a mask's kernel in Linear */
	gpu_check(1002, 250, 8, 96, false, 0);   /* another kernel's, in Net */
	cr_assert_eq(origins, 0, "only module outputs say a value left a module");
}

/* An optimizer's foreach kernel runs outside every module: the agent
 * says whose parameter its birth wrote, and that names it. */
Test(gpu_findings, an_optimizer_birth_in_a_parameter_is_named_by_its_owner)
{
	forward_pass();
	opt_enter(&sim, 700);
	opt_exit(&sim, 800);
	gpu_check(2000, 750, 7, 97, false, 0);
	gpu_param(2001, 97, M_LIN, "weight");
	gpu_check(2002, 900, 8, 97, true, 0);    /* read by the next step */
	cr_assert_eq(origins, 1);
	cr_assert_eq(proc->ag.origin.phase, NP_PHASE_OPTIMIZER);
	cr_assert_str_eq(np_name(&col, proc->ag.origin.module_type), "Linear");
	cr_assert_str_eq(np_name(&col, proc->ag.origin.param), "weight");
}

Test(gpu_findings, a_birth_inside_a_module_keeps_it_whatever_memory_it_wrote)
{
	forward_pass();
	gpu_check(1001, 150, 7, 98, false, 0);   /* in Linear */
	gpu_param(1002, 98, M_NET, "scale");
	gpu_check(1003, 350, 8, 98, true, 0);
	cr_assert_eq(origins, 1);
	cr_assert_str_eq(np_name(&col, proc->ag.origin.module_type), "Linear");
	cr_assert_eq(proc->ag.origin.param, 0);
}

Test(gpu_findings, graph_replays_are_flagged)
{
	forward_pass();
	gpu_check(1001, 150, 7, 5, false, NP_AF_GRAPH);
	gpu_check(1002, 250, 8, 5, true, NP_AF_GRAPH);
	cr_assert_eq(origins, 1);
	cr_assert(proc->ag.origin.graph);
}

Test(gpu_findings, gpu_records_are_numbered_on_their_own)
{
	forward_pass();
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_STATUS;
	r.status = NP_AST_COUNTERS;
	send_rec(1000, &r, false);             /* CPU seq 1 */
	gpu_check(1001, 150, 7, 1, false, 0);  /* GPU seq 2 */
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_STATUS;
	r.status = NP_AST_COUNTERS;
	send_rec(1002, &r, false);             /* CPU seq 2 */
	cr_assert_eq(proc->ag.lost, 0, "interleaved numberings are not losses");
	cr_assert_eq(proc->gpu.lost, 0);
	gpu_seq += 3;                          /* three GPU records never arrive */
	gpu_check(1003, 150, 7, 2, false, 0);
	cr_assert_eq(proc->gpu.lost, 3);
	cr_assert_eq(proc->ag.lost, 0);
}

Test(gpu_findings, counters_and_off_reason)
{
	gpu_status(10, NP_AST_GPU_OFF, "cupti taken by another tool");
	cr_assert_eq(proc->gpu.state, 2);
	cr_assert_str_eq(proc->gpu.how, "cupti taken by another tool");
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_STATUS;
	r.status = NP_AST_GPU_COUNTERS;
	r.cnt.checked = 1234;
	r.cnt.bytes = 5678;
	r.cnt.skipped = 9;
	strcpy(r.cnt.what, "launches 2000");
	send_rec(20, &r, true);
	cr_assert_eq(proc->gpu.checks, 1234);
	cr_assert_eq(proc->gpu.bytes, 5678);
	cr_assert_eq(proc->gpu.undecoded, 9);
	cr_assert_str_eq(proc->gpu.launches, "launches 2000");
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_STATUS;
	r.status = NP_AST_GPU_LAUNCHES;
	r.launch.launches = 2000;
	r.launch.sampled_out = 1500;
	r.launch.guard_checks = 12;
	r.launch.guard_skips = 30;
	r.launch.check_launches = 700;
	send_rec(21, &r, true);
	cr_assert_eq(proc->gpu.sampled_out, 1500);
	cr_assert_eq(proc->gpu.guard_checks, 12);
	cr_assert_eq(proc->gpu.guard_skips, 30);
	cr_assert_eq(proc->gpu.check_launches, 700);
	cr_assert_eq(proc->gpu.checks, 1234, "the other counters stay");

	/* the kernels not checked at launch: GPU records, the agent's checks
	 * state untouched, each rank kept */
	uint8_t before = proc->checks;
	gpu_name(22, 9, "nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_TNN");
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_STATUS;
	r.status = NP_AST_GPU_UNDECODED;
	r.undec.func = 9;
	r.undec.rank = 1;
	r.undec.launches = 640;
	send_rec(23, &r, true);
	cr_assert_eq(proc->gpu.nundec, 2);
	cr_expect_eq(proc->gpu.undec[1].func, 9);
	cr_expect_eq(proc->gpu.undec[1].launches, 640);
	cr_expect_eq(proc->checks, before, "not the agent's install status");
	cr_expect_eq(proc->ag.lost, 0);
	cr_expect_eq(proc->gpu.lost, 0);
	r.undec.rank = NP_GPU_UNDECODED_TOP;   /* past the table: ignored */
	send_rec(24, &r, true);
	cr_expect_eq(proc->gpu.nundec, 2);
}

Test(gpu_findings, deferred_checks_and_why_their_lists_went_out_are_kept)
{
	gpu_status(10, NP_AST_GPU_ON, "every, deferred 8");
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_STATUS;
	r.status = NP_AST_GPU_DEFER;
	r.dfr.checks = 900;
	r.dfr.launches = 210;
	r.dfr.window = 40;
	r.dfr.full = 1;
	r.dfr.write = 20;
	r.dfr.unknown = 100;
	r.dfr.memory = 30;
	r.dfr.order = 7;
	r.dfr.now = 2;
	send_rec(11, &r, true);
	const struct np_gpu_state *g = &proc->gpu;
	cr_expect_eq(g->defer.checks, 900);
	cr_expect_eq(g->defer.launches, 210);
	cr_expect_eq(g->defer.window, 40);
	cr_expect_eq(g->defer.early[0], 20, "a launch wrote what waited");
	cr_expect_eq(g->defer.early[1], 100, "a launch's writes not known");
	cr_expect_eq(g->defer.early[2], 30, "a memory call");
	cr_expect_eq(g->defer.early[3], 7, "a sync, an event");
	cr_expect_eq(g->defer.early[4], 2, "a check at once, the stop");
	cr_expect_eq(g->defer.early[5], 1, "no list fitted");
	cr_expect_eq(proc->gpu.lost, 0);
}

Test(gpu_findings, host_cost_is_estimated_per_launch_from_the_sample)
{
	gpu_status(10, NP_AST_GPU_ON, "every");
	cr_expect_eq(np_gpu_host_ns_per_launch(&proc->gpu), 0, "nothing reported: no estimate");
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_STATUS;
	r.status = NP_AST_GPU_HOST_COST;
	/* 4000 launches, 8192 callbacks (two per launch and 192 others), one
	 * in 32 of them timed: 256 at 1.5 us each; 64 check launches timed at
	 * 3 us */
	r.host.launches = 4000;
	r.host.timed = 256;
	r.host.timed_ns = 256 * 1500;
	r.host.checks_timed = 64;
	r.host.check_ns = 64 * 3000;
	r.host.every = 32;
	send_rec(20, &r, true);
	cr_expect_eq(proc->gpu.state, 1, "not taken for the GPU's on/off status");
	cr_expect_eq(np_gpu_host_ns_per_launch(&proc->gpu), 3072, "1.5 us x 8192 / 4000");
	cr_expect_eq(np_gpu_check_launch_ns(&proc->gpu), 3000);
	cr_expect_eq(proc->ag.lost, 0);
}

/* ---- ctxhist on its own ---- */

Test(ctxhist, last_change_of_the_thread_at_or_before)
{
	struct np_ctxhist h;
	cr_assert_eq(np_ctxhist_init(&h, 8), 0);
	struct np_ctx_point p = { .ts = 10, .tid = 1, .module = 5, .step = 1, .phase = 1 };
	np_ctxhist_push(&h, &p);
	p = (struct np_ctx_point){ .ts = 20, .tid = 2, .module = 6 };
	np_ctxhist_push(&h, &p);
	p = (struct np_ctx_point){ .ts = 30, .tid = 1, .module = 7 };
	np_ctxhist_push(&h, &p);
	struct np_ctx_point out;
	cr_assert_eq(np_ctxhist_at(&h, 1, 25, &out), 0);
	cr_assert_eq(out.module, 5);
	cr_assert_eq(np_ctxhist_at(&h, 1, 30, &out), 0);
	cr_assert_eq(out.module, 7, "a change at exactly ts counts");
	cr_assert_eq(np_ctxhist_at(&h, 2, 25, &out), 0);
	cr_assert_eq(out.module, 6);
	cr_assert_eq(np_ctxhist_at(&h, 2, 15, &out), -ENOENT);
	cr_assert_eq(np_ctxhist_at(&h, 3, 100, &out), -ENOENT);
	np_ctxhist_free(&h);
}

Test(ctxhist, what_was_overwritten_is_unknown_not_guessed)
{
	struct np_ctxhist h;
	cr_assert_eq(np_ctxhist_init(&h, 4), 0);
	for (uint64_t t = 1; t <= 10; t++) {
		struct np_ctx_point p = { .ts = t * 10, .tid = 1, .module = (uint32_t)t };
		np_ctxhist_push(&h, &p);
	}
	struct np_ctx_point out;
	cr_assert_eq(np_ctxhist_at(&h, 1, 95, &out), 0);
	cr_assert_eq(out.module, 9);
	cr_assert_eq(np_ctxhist_at(&h, 1, 70, &out), 0);
	cr_assert_eq(out.module, 7, "the oldest kept");
	cr_assert_eq(np_ctxhist_at(&h, 1, 65, &out), -ERANGE);
	np_ctxhist_free(&h);
}
