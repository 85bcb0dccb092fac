/* test_collector.c - unit tests for userspace/collector.c.
 *
 * A small simulator plays the BPF side (bpf/tracer.bpf.c): it keeps the
 * per-process step, batch and phase context and the per-thread module
 * stack the way the probes do, and stamps each synthetic np_event with
 * them.  The traced pid does not exist (pid_max is far below it), so
 * reading module names from its memory fails and modules get the
 * fallback names "<Class>", prefixed with the caller's name; autograd
 * nodes are "Node" because no libtorch symbols are loaded.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector.h"

#define PID  0x7ffffff0u   /* never a live process: pid_max <= 2^22 */
#define TID  (PID + 8)    /* not the main thread: phase records closed at the end say PID */
#define TID2 (PID + 9)

/* Python types and module objects of the synthetic model. */
#define T_NET  0x100ULL
#define T_LIN  0x200ULL
#define T_BLK  0x300ULL
#define T_RELU 0x400ULL
#define T_HEAD 0x500ULL
#define T_DROP 0x600ULL
#define T_OPT  0x700ULL
#define M_NET  0x10000ULL
#define M_LIN  0x20000ULL
#define M_BLK  0x30000ULL
#define M_RELU 0x40000ULL
#define M_HEAD 0x50000ULL
#define M_DROP 0x60000ULL
#define OPT    0x70000ULL
#define VT     0xabc0ULL   /* a vtable: named "Node" without libtorch */

#include "sim.h"

/* ---- the standard step ----
 *
 * Step k starts at T(k) and uses autograd sequence numbers from S(k):
 *
 *   +0     Net enters (seq S+10)
 *   +1000    Linear enters (seq S+10)
 *   +3000    Linear exits (seq S+13): it created nodes S+10..S+12
 *   +5000  Net exits (seq S+14): it created S+13 itself
 *   +10000 backward begins
 *   +11000   node S+13   -> ""          group "" begins
 *   +12000   node S+12   -> "<Linear>"  group "<Linear>" begins
 *   +13000   node 5      -> "<none>"    (older than every span)
 *   +14000   node S+11   -> "<Linear>"
 *   +15000   node ~0     -> "<none>"    (sequence unknown)
 *   +16000 backward ends
 *   +20000 optimizer.step() begins
 *   +30000 optimizer.step() returns: the step ends
 */
#define T(k) (1000000ULL + (uint64_t)(k) * 100000ULL)
#define S(k) (1000ULL + (uint64_t)(k) * 100ULL)
#define STD_RECS 12

static void names(struct sim *s, uint64_t ts)
{
	type_name(s, ts, T_NET, "Net");
	type_name(s, ts, T_LIN, "torch.nn.modules.linear.Linear");
	type_name(s, ts, T_BLK, "Block");
	type_name(s, ts, T_RELU, "torch.nn.modules.activation.ReLU");
	type_name(s, ts, T_HEAD, "Head");
	type_name(s, ts, T_DROP, "Dropout");
	type_name(s, ts, T_OPT, "torch.optim.sgd.SGD");
}

static void forward(struct sim *s, uint64_t t, uint64_t q)
{
	mod_enter(s, t, M_NET, T_NET, q + 10);
	mod_enter(s, t + 1000, M_LIN, T_LIN, q + 10);
	mod_exit(s, t + 3000, q + 13);
	mod_exit(s, t + 5000, q + 14);
}

static void backward(struct sim *s, uint64_t t, uint64_t q)
{
	bwd_enter(s, t + 10000);
	node(s, t + 11000, q + 13);
	node(s, t + 12000, q + 12);
	node(s, t + 13000, 5);
	node(s, t + 14000, q + 11);
	node(s, t + 15000, NP_SEQ_UNKNOWN);
	bwd_exit(s, t + 16000);
}

static void std_step(struct sim *s, unsigned k)
{
	forward(s, T(k), S(k));
	backward(s, T(k), S(k));
	opt_enter(s, T(k) + 20000);
	opt_exit(s, T(k) + 30000);
}

/* ---- fixtures ---- */

static struct np_proc_state *start(uint32_t window, uint32_t max_records, uint32_t max_steps,
				   uint32_t max_threads, bool attach)
{
	struct np_collector_opts o = { .window = window, .max_records = max_records,
				       .max_steps = max_steps, .max_procs = 4,
				       .max_threads = max_threads };
	cr_assert_eq(np_collector_init(&col, &o), 0);
	col_init = true;
	col.attach_mode = attach;
	struct np_proc_info info;
	memset(&info, 0, sizeof(info));
	info.pid = PID;
	info.py_major = 3;
	info.py_minor = 11;
	struct np_proc_state *p = np_collector_add_proc(&col, &info, -1);
	cr_assert_not_null(p);
	memset(&sim, 0, sizeof(sim));
	sim.c = &col;
	sim.pid = PID;
	sim.tid = TID;
	return p;
}

static struct np_proc_state *start_default(void)
{
	return start(8, 1000, 1000, 8, false);
}

static void teardown(void)
{
	if (col_init)
		np_collector_free(&col);
	col_init = false;
}

TestSuite(collector, .fini = teardown);

/* ---- record checks ---- */

struct want {
	int kind, phase, depth;
	uint32_t batch;
	const char *name, *type, *module_type;
	uint64_t t0, t1;   /* offsets from the step's T(k) */
	uint64_t seq;
};

static void expect_rec(const struct np_rec *r, const struct want *w, uint64_t base,
		       uint64_t step, unsigned i)
{
	cr_expect_eq(r->kind, w->kind, "rec %u: kind %d, want %d", i, r->kind, w->kind);
	cr_expect_eq(r->phase, w->phase, "rec %u: phase %d, want %d", i, r->phase, w->phase);
	cr_expect_eq(r->step, step, "rec %u: step %llu", i, (unsigned long long)r->step);
	cr_expect_eq(r->batch, w->batch, "rec %u: batch %u, want %u", i, r->batch, w->batch);
	cr_expect_eq(r->tid, TID, "rec %u: tid", i);
	cr_expect_eq(r->t0, base + w->t0, "rec %u: t0 %llu, want %llu", i,
		     (unsigned long long)r->t0, (unsigned long long)(base + w->t0));
	cr_expect_eq(r->t1, base + w->t1, "rec %u: t1 %llu, want %llu", i,
		     (unsigned long long)r->t1, (unsigned long long)(base + w->t1));
	if (w->kind == NP_REC_PHASE)
		return;
	cr_expect_str_eq(np_name(&col, r->name), w->name, "rec %u: name \"%s\", want \"%s\"", i,
			 np_name(&col, r->name), w->name);
	if (w->kind == NP_REC_MODULE) {
		cr_expect_eq(r->depth, w->depth, "rec %u: depth %u", i, r->depth);
		cr_expect_str_eq(np_name(&col, r->type), w->type, "rec %u: type \"%s\"", i,
				 np_name(&col, r->type));
	} else {
		cr_expect_str_eq(np_name(&col, r->module_type), w->module_type,
				 "rec %u: module_type \"%s\", want \"%s\"", i,
				 np_name(&col, r->module_type), w->module_type);
	}
	if (w->kind == NP_REC_NODE) {
		cr_expect_str_eq(np_name(&col, r->type), "Node", "rec %u: node type", i);
		cr_expect_eq(r->seq, w->seq, "rec %u: seq %llu", i, (unsigned long long)r->seq);
	}
}

/* The records of the standard step k, in the order they close. */
static void expect_std_bucket(const struct np_bucket *b, unsigned k)
{
	const uint64_t q = S(k);
	const struct want w[STD_RECS] = {
		{ NP_REC_MODULE, NP_PHASE_FORWARD, 1, 0, "<Linear>", "Linear", NULL, 1000, 3000, 0 },
		{ NP_REC_MODULE, NP_PHASE_FORWARD, 0, 0, "", "Net", NULL, 0, 5000, 0 },
		{ NP_REC_PHASE, NP_PHASE_FORWARD, 0, 0, NULL, NULL, NULL, 0, 5000, 0 },
		{ NP_REC_NODE, NP_PHASE_BACKWARD, 0, 0, "", NULL, "Net", 11000, 12000, q + 13 },
		{ NP_REC_MODULE_BWD, NP_PHASE_BACKWARD, 0, 0, "", NULL, "Net", 11000, 12000, 0 },
		{ NP_REC_NODE, NP_PHASE_BACKWARD, 0, 0, "<Linear>", NULL, "Linear", 12000, 13000, q + 12 },
		{ NP_REC_NODE, NP_PHASE_BACKWARD, 0, 0, "<none>", NULL, "", 13000, 14000, 5 },
		{ NP_REC_NODE, NP_PHASE_BACKWARD, 0, 0, "<Linear>", NULL, "Linear", 14000, 15000, q + 11 },
		{ NP_REC_NODE, NP_PHASE_BACKWARD, 0, 0, "<none>", NULL, "", 15000, 16000, NP_SEQ_UNKNOWN },
		/* the "<none>" nodes inside did not split it; it ends with the backward */
		{ NP_REC_MODULE_BWD, NP_PHASE_BACKWARD, 0, 0, "<Linear>", NULL, "Linear", 12000, 16000, 0 },
		{ NP_REC_PHASE, NP_PHASE_BACKWARD, 0, 0, NULL, NULL, NULL, 10000, 16000, 0 },
		{ NP_REC_PHASE, NP_PHASE_OPTIMIZER, 0, 0, NULL, NULL, NULL, 20000, 30000, 0 },
	};
	cr_assert_not_null(b);
	cr_expect_eq(b->step, k, "bucket step %llu, want %u", (unsigned long long)b->step, k);
	cr_assert_eq(b->len, STD_RECS, "bucket of step %u has %u records", k, b->len);
	for (unsigned i = 0; i < STD_RECS; i++)
		expect_rec(&b->recs[i], &w[i], T(k), k, i);
}

static void expect_std_stats(const struct np_step_stats *st, unsigned k)
{
	cr_expect_eq(st->step, k, "step %llu, want %u", (unsigned long long)st->step, k);
	cr_expect(st->complete, "step %u not complete", k);
	cr_expect_not(st->partial, "step %u partial", k);
	cr_expect_eq(st->batches, 1, "step %u: batches %u", k, st->batches);
	cr_expect_eq(st->module_calls, 2, "step %u: module_calls %u", k, st->module_calls);
	cr_expect_eq(st->nodes, 5, "step %u: nodes %u", k, st->nodes);
	cr_expect_eq(st->dropped, 0, "step %u: dropped %u", k, st->dropped);
	cr_expect_eq(st->fwd_ns, 5000, "step %u: fwd_ns %llu", k, (unsigned long long)st->fwd_ns);
	cr_expect_eq(st->bwd_ns, 6000, "step %u: bwd_ns %llu", k, (unsigned long long)st->bwd_ns);
	cr_expect_eq(st->opt_ns, 10000, "step %u: opt_ns %llu", k, (unsigned long long)st->opt_ns);
	/* step 0 begins with the first event; later ones where the last ended */
	uint64_t t0 = k ? T(k - 1) + 30000 : T(0);
	cr_expect_eq(st->t0, t0, "step %u: t0 %llu, want %llu", k, (unsigned long long)st->t0,
		     (unsigned long long)t0);
	cr_expect_eq(st->t1, T(k) + 30000, "step %u: t1 %llu", k, (unsigned long long)st->t1);
}

/* ---- training steps ---- */

Test(collector, three_training_steps)
{
	struct np_proc_state *p = start_default();

	names(&sim, T(0));
	for (unsigned k = 0; k < 3; k++)
		std_step(&sim, k);
	np_collector_finish(&col);

	cr_assert_eq(p->nsteps, 3, "nsteps %u", p->nsteps);
	for (unsigned k = 0; k < 3; k++)
		expect_std_stats(&p->steps[k], k);
	/* nothing happened after the last step: no empty fourth step */
	cr_assert_eq(p->wlen, 3, "window holds %u steps", p->wlen);
	for (unsigned k = 0; k < 3; k++)
		expect_std_bucket(np_bucket_at(&col, p, k), k);
	cr_expect_eq(p->module_calls, 6);
	cr_expect_eq(p->nodes, 15);
	cr_expect_eq(p->records_dropped, 0);
	cr_expect_eq(p->nthreads, 1);
	cr_expect_eq(p->first_ts, T(0));
	cr_expect_eq(p->last_ts, T(2) + 30000);
	cr_expect_eq(col.unknown_events, 0);
	/* 7 type names + 13 events a step */
	cr_expect_eq(col.events, 7 + 3 * 13, "events %llu", (unsigned long long)col.events);
}

Test(collector, gradient_accumulation_two_batches)
{
	struct np_proc_state *p = start_default();

	names(&sim, T(0));
	/* batch 0 at T(0), batch 1 at T(1), one optimizer step at the end */
	forward(&sim, T(0), S(0));
	backward(&sim, T(0), S(0));
	forward(&sim, T(1), S(1));
	cr_assert_eq(sim.batch, 1, "simulator did not start batch 1");
	backward(&sim, T(1), S(1));
	opt_enter(&sim, T(1) + 20000);
	opt_exit(&sim, T(1) + 30000);
	np_collector_finish(&col);

	cr_assert_eq(p->nsteps, 1);
	const struct np_step_stats *st = &p->steps[0];
	cr_expect_eq(st->batches, 2, "batches %u", st->batches);
	cr_expect_eq(st->module_calls, 4);
	cr_expect_eq(st->nodes, 10);
	cr_expect_eq(st->fwd_ns, 10000, "fwd_ns %llu", (unsigned long long)st->fwd_ns);
	cr_expect_eq(st->bwd_ns, 12000, "bwd_ns %llu", (unsigned long long)st->bwd_ns);
	cr_expect_eq(st->opt_ns, 10000);
	cr_expect(st->complete);

	cr_assert_eq(p->wlen, 1);
	const struct np_bucket *b = np_bucket_at(&col, p, 0);
	cr_assert_eq(b->len, 2 * (STD_RECS - 1) + 1, "records %u", b->len);
	/* the first 11 records are batch 0 at T(0), the next 11 batch 1 at T(1) */
	unsigned phases = 0;
	for (unsigned i = 0; i < b->len; i++) {
		const struct np_rec *r = &b->recs[i];
		uint32_t want = i < STD_RECS - 1 ? 0 : 1;
		cr_expect_eq(r->step, 0);
		cr_expect_eq(r->batch, want, "rec %u (kind %d): batch %u, want %u", i, r->kind,
			     r->batch, want);
		if (r->kind == NP_REC_PHASE) {
			static const int order[] = { NP_PHASE_FORWARD, NP_PHASE_BACKWARD,
						     NP_PHASE_FORWARD, NP_PHASE_BACKWARD,
						     NP_PHASE_OPTIMIZER };
			cr_assert_lt(phases, 5);
			cr_expect_eq(r->phase, order[phases], "phase rec %u: %d", phases, r->phase);
			phases++;
		}
	}
	cr_expect_eq(phases, 5);
	/* nodes of batch 1 are named after batch 1's spans */
	const struct np_rec *n = &b->recs[STD_RECS - 1 + 5];
	cr_expect_eq(n->kind, NP_REC_NODE);
	cr_expect_eq(n->seq, S(1) + 12);
	cr_expect_str_eq(np_name(&col, n->name), "<Linear>");
}

Test(collector, phase_batch_comes_from_the_event)
{
	struct np_proc_state *p = start_default();

	/* batch numbers that userspace cannot derive: only the events say */
	sim.batch = 7;
	forward(&sim, T(0), S(0));
	sim.batch = 8;
	bwd_enter(&sim, T(0) + 10000);   /* closes the forward: batch of this event */
	bwd_exit(&sim, T(0) + 16000);
	sim.batch = 9;
	opt_enter(&sim, T(0) + 20000);
	opt_exit(&sim, T(0) + 30000);

	const struct np_bucket *b = np_bucket_at(&col, p, 0);
	cr_assert_eq(b->len, 5);
	cr_expect_eq(b->recs[0].batch, 7, "module rec batch from its MOD_ENTER");
	cr_expect_eq(b->recs[1].batch, 7);
	cr_expect_eq(b->recs[2].kind, NP_REC_PHASE);
	cr_expect_eq(b->recs[2].batch, 8);
	cr_expect_eq(b->recs[3].phase, NP_PHASE_BACKWARD);
	cr_expect_eq(b->recs[3].batch, 8);
	cr_expect_eq(b->recs[4].phase, NP_PHASE_OPTIMIZER);
	cr_expect_eq(b->recs[4].batch, 9);
}

Test(collector, steps_numbered_from_the_first_event)
{
	struct np_proc_state *p = start_default();

	sim.step = 41;   /* e.g. BPF context older than this collector */
	for (unsigned k = 0; k < 2; k++)
		std_step(&sim, k);
	np_collector_finish(&col);   /* the last step ends once nothing follows */
	cr_assert_eq(p->nsteps, 2);
	cr_expect_eq(p->steps[0].step, 41);
	cr_expect_eq(p->steps[1].step, 42);
	cr_expect_eq(np_bucket_at(&col, p, 1)->step, 42);
	cr_expect_eq(np_bucket_at(&col, p, 1)->recs[0].step, 42);
}

/* ---- optimizer.step() calls back to back ---- */

/* Two optimizers stepped one after the other (Muon + AdamW, sparse +
 * dense): BPF counts two steps, the job one iteration.  The second call
 * joins the first's step, and later steps are numbered on from there. */
Test(collector, back_to_back_optimizers_make_one_step)
{
	struct np_proc_state *p = start_default();

	names(&sim, T(0));
	for (unsigned k = 0; k < 3; k++) {
		forward(&sim, T(k), S(k));
		backward(&sim, T(k), S(k));
		opt_enter(&sim, T(k) + 20000);
		opt_exit(&sim, T(k) + 30000);
		opt_enter(&sim, T(k) + 40000);
		opt_exit(&sim, T(k) + 45000);
	}
	cr_assert_eq(sim.step, 6, "the simulated BPF side counts every call");
	np_collector_finish(&col);

	cr_assert_eq(p->nsteps, 3, "nsteps %u", p->nsteps);
	for (unsigned k = 0; k < 3; k++) {
		const struct np_step_stats *st = &p->steps[k];
		cr_expect_eq(st->step, k, "step %llu, want %u", (unsigned long long)st->step, k);
		cr_expect_eq(st->opt_calls, 2, "step %u: %u optimizer calls", k, st->opt_calls);
		cr_expect_eq(st->opt_ns, 15000, "step %u: both calls' time", k);
		cr_expect_eq(st->module_calls, 2);
		cr_expect_eq(st->nodes, 5);
		cr_expect_eq(st->t1, T(k) + 45000, "step %u ends with the second call", k);
		cr_expect(st->complete);
		/* its records: the standard step's, then the second optimizer phase */
		const struct np_bucket *b = np_bucket_at(&col, p, k);
		cr_expect_eq(b->step, k);
		cr_assert_eq(b->len, STD_RECS + 1, "step %u: %u records", k, b->len);
		for (unsigned i = 0; i < b->len; i++)
			cr_expect_eq(b->recs[i].step, k, "step %u rec %u: step %llu", k, i,
				     (unsigned long long)b->recs[i].step);
		cr_expect_eq(b->recs[STD_RECS].phase, NP_PHASE_OPTIMIZER);
		cr_expect_eq(b->recs[STD_RECS].t0, T(k) + 40000);
	}
	cr_expect_eq(p->step_shift, 3);
}

/* step(closure) (LBFGS, Lightning): the forward and backward run inside
 * the call, so nothing runs between two calls, yet each is a step. */
Test(collector, closure_steps_stay_steps_of_their_own)
{
	struct np_proc_state *p = start_default();

	names(&sim, T(0));
	for (unsigned k = 0; k < 3; k++) {
		opt_enter(&sim, T(k));
		forward(&sim, T(k) + 100, S(k));
		backward(&sim, T(k) + 100, S(k));
		opt_exit(&sim, T(k) + 30000);
	}
	np_collector_finish(&col);

	cr_assert_eq(p->nsteps, 3, "nsteps %u", p->nsteps);
	for (unsigned k = 0; k < 3; k++) {
		cr_expect_eq(p->steps[k].step, k);
		cr_expect_eq(p->steps[k].opt_calls, 1, "step %u: %u calls", k,
			     p->steps[k].opt_calls);
		cr_expect_eq(p->steps[k].module_calls, 2, "step %u: %u module calls", k,
			     p->steps[k].module_calls);
		cr_expect_eq(p->steps[k].t1, T(k) + 30000);
	}
	cr_expect_eq(p->step_shift, 0);
}

/* A learner: the whole step runs inside one module call (its forward
 * calls the model, backward() and optimizer.step()).  The forward phase
 * ends where the backward begins, not at 0 ms. */
Test(collector, a_step_inside_a_module_call_has_its_forward_time)
{
	struct np_proc_state *p = start_default();

	names(&sim, T(0));
	mod_enter(&sim, T(0), M_BLK, T_BLK, S(0));        /* the learner */
	mod_enter(&sim, T(0) + 1000, M_NET, T_NET, S(0) + 10);
	mod_exit(&sim, T(0) + 5000, S(0) + 14);
	bwd_enter(&sim, T(0) + 10000);
	bwd_exit(&sim, T(0) + 16000);
	opt_enter(&sim, T(0) + 20000);
	opt_exit(&sim, T(0) + 30000);
	mod_exit(&sim, T(0) + 31000, S(0) + 20);
	np_collector_finish(&col);

	/* (the learner's own record, closed after the step, opens the next) */
	cr_assert_geq(p->nsteps, 1);
	const struct np_step_stats *st = &p->steps[0];
	cr_expect_eq(st->fwd_ns, 10000, "fwd_ns %llu", (unsigned long long)st->fwd_ns);
	cr_expect_eq(st->bwd_ns, 6000);
	cr_expect_eq(st->opt_ns, 10000);
}

/* ---- naming ---- */

Test(collector, fallback_module_names)
{
	struct np_proc_state *p = start_default();

	names(&sim, 10);
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 110, M_BLK, T_BLK, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 120, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
	mod_exit(&sim, 130, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 140, M_RELU, T_RELU, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 150, M_DROP, 0xdead, NP_SEQ_UNKNOWN);   /* type never named */
	mod_exit(&sim, 160, NP_SEQ_UNKNOWN);
	mod_exit(&sim, 170, NP_SEQ_UNKNOWN);
	mod_exit(&sim, 180, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 190, M_LIN, T_LIN, NP_SEQ_UNKNOWN);   /* same module from Net */
	mod_exit(&sim, 200, NP_SEQ_UNKNOWN);
	mod_exit(&sim, 210, NP_SEQ_UNKNOWN);

	const struct np_bucket *b = np_bucket_at(&col, p, 0);
	static const struct { const char *name, *type; int depth; uint64_t t0, t1; } w[] = {
		{ "<Block>.<Linear>", "Linear", 2, 120, 130 },
		{ "<Block>.<ReLU>.<?>", "?", 3, 150, 160 },
		{ "<Block>.<ReLU>", "ReLU", 2, 140, 170 },
		{ "<Block>", "Block", 1, 110, 180 },
		{ "<Linear>", "Linear", 1, 190, 200 },
		{ "", "Net", 0, 100, 210 },
	};
	cr_assert_eq(b->len, 6, "records %u", b->len);
	for (unsigned i = 0; i < 6; i++) {
		const struct np_rec *r = &b->recs[i];
		cr_expect_eq(r->kind, NP_REC_MODULE);
		cr_expect_str_eq(np_name(&col, r->name), w[i].name, "rec %u: \"%s\"", i,
				 np_name(&col, r->name));
		cr_expect_str_eq(np_name(&col, r->type), w[i].type, "rec %u: type \"%s\"", i,
				 np_name(&col, r->type));
		cr_expect_eq(r->depth, w[i].depth, "rec %u: depth %u", i, r->depth);
		cr_expect_eq(r->t0, w[i].t0);
		cr_expect_eq(r->t1, w[i].t1);
		cr_expect_eq(r->phase, NP_PHASE_FORWARD);
	}
	cr_expect_eq(p->cur.module_calls, 6);
}

/* A child whose caller's entry never reached the collector is not named
 * as if it were called from the frame below: its caller is unknown. */
Test(collector, lost_caller_entry_gives_an_unknown_caller)
{
	struct np_proc_state *p = start_default();

	names(&sim, 10);
	mod_enter(&sim, 100, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_enter_maybe_lost(&sim, 110, M_BLK, T_BLK, NP_SEQ_UNKNOWN, true);
	mod_enter(&sim, 120, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
	mod_exit(&sim, 130, NP_SEQ_UNKNOWN);
	mod_exit(&sim, 140, NP_SEQ_UNKNOWN);
	mod_exit(&sim, 150, NP_SEQ_UNKNOWN);
	/* the next call is whole: the same child gets its real caller */
	mod_enter(&sim, 200, M_NET, T_NET, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 210, M_BLK, T_BLK, NP_SEQ_UNKNOWN);
	mod_enter(&sim, 220, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
	mod_exit(&sim, 230, NP_SEQ_UNKNOWN);
	mod_exit(&sim, 240, NP_SEQ_UNKNOWN);
	mod_exit(&sim, 250, NP_SEQ_UNKNOWN);

	const struct np_bucket *b = np_bucket_at(&col, p, 0);
	/* the call whose entry was lost leaves no record */
	static const char *const want[] = { "?.<Linear>", "", "<Block>.<Linear>", "<Block>", "" };
	cr_assert_eq(b->len, 5, "records %u", b->len);
	for (unsigned i = 0; i < 5; i++)
		cr_expect_str_eq(np_name(&col, b->recs[i].name), want[i], "rec %u: \"%s\"", i,
				 np_name(&col, b->recs[i].name));
}

Test(collector, type_names_keep_the_last_dotted_part)
{
	start_default();

	type_name(&sim, 10, 1, "torch.nn.modules.linear.Linear");
	type_name(&sim, 10, 2, "Net");
	type_name(&sim, 10, 3, "a.b.");
	/* 64 bytes and no NUL: the whole field is the name */
	type_name(&sim, 10, 4, "pkg.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
	/* a type renamed later (LRU evicted in BPF, sent again): the new name wins */
	type_name(&sim, 10, 5, "Old");
	type_name(&sim, 10, 5, "x.New");

	const char *want[] = { NULL, "Linear", "Net", "",
			       "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "New" };
	for (uint64_t t = 1; t <= 5; t++) {
		uint64_t id;
		cr_assert_eq(np_map_get(&col.type_names, PID, t, &id), 0, "type %llu not stored",
			     (unsigned long long)t);
		cr_expect_str_eq(np_name(&col, (uint32_t)id), want[t], "type %llu: \"%s\"",
				 (unsigned long long)t, np_name(&col, (uint32_t)id));
	}
	cr_expect_eq(strlen(want[4]), NP_TYPE_NAME_LEN - 4);
	/* TYPE_NAME starts no thread and no step */
	cr_expect_eq(np_collector_proc(&col, PID)->nthreads, 0);
}

/* Nodes find the innermost module whose forward was running when they
 * were created: nested and sibling spans, gaps between children. */
Test(collector, nodes_named_by_sequence_span)
{
	struct np_proc_state *p = start_default();

	names(&sim, 10);
	mod_enter(&sim, 100, M_NET, T_NET, 100);        /* ""                 [100, 200) */
	mod_enter(&sim, 110, M_BLK, T_BLK, 100);        /*  "<Block>"         [100, 130) */
	mod_enter(&sim, 120, M_LIN, T_LIN, 100);        /*   ".<Linear>"      [100, 110) */
	mod_exit(&sim, 130, 110);
	mod_enter(&sim, 140, M_RELU, T_RELU, 110);      /*   ".<ReLU>"        [110, 125) */
	mod_exit(&sim, 150, 125);
	mod_exit(&sim, 160, 130);
	mod_enter(&sim, 170, M_HEAD, T_HEAD, 130);      /*  "<Head>"          [130, 190) */
	mod_enter(&sim, 180, M_DROP, T_DROP, 150);      /*   ".<Dropout>"     [150, 160) */
	mod_exit(&sim, 190, 160);
	mod_exit(&sim, 200, 190);
	mod_exit(&sim, 210, 200);

	static const struct { uint64_t seq; const char *name, *type; } w[] = {
		{ 105, "<Block>.<Linear>", "Linear" },
		{ 100, "<Block>.<Linear>", "Linear" },   /* lo is inclusive */
		{ 110, "<Block>.<ReLU>", "ReLU" },       /* hi is exclusive */
		{ 124, "<Block>.<ReLU>", "ReLU" },
		{ 127, "<Block>", "Block" },             /* after its last child */
		{ 135, "<Head>", "Head" },               /* before its child */
		{ 155, "<Head>.<Dropout>", "Dropout" },
		{ 165, "<Head>", "Head" },
		{ 195, "", "Net" },
		{ 200, "<none>", "" },                   /* after the outermost call */
		{ 99, "<none>", "" },                    /* before it */
		{ NP_SEQ_UNKNOWN, "<none>", "" },
	};
	const unsigned n = sizeof(w) / sizeof(w[0]);
	bwd_enter(&sim, 1000);
	for (unsigned i = 0; i < n; i++)
		node(&sim, 1010 + 10 * i, w[i].seq);
	bwd_exit(&sim, 2000);

	const struct np_bucket *b = np_bucket_at(&col, p, 0);
	unsigned k = 0;
	for (unsigned i = 0; i < b->len; i++) {
		const struct np_rec *r = &b->recs[i];
		if (r->kind != NP_REC_NODE)
			continue;
		cr_assert_lt(k, n);
		cr_expect_eq(r->seq, w[k].seq);
		cr_expect_str_eq(np_name(&col, r->name), w[k].name, "seq %llu: \"%s\", want \"%s\"",
				 (unsigned long long)w[k].seq, np_name(&col, r->name), w[k].name);
		cr_expect_str_eq(np_name(&col, r->module_type), w[k].type,
				 "seq %llu: type \"%s\"", (unsigned long long)w[k].seq,
				 np_name(&col, r->module_type));
		cr_expect_eq(r->t0, 1010 + 10 * k);
		cr_expect_eq(r->t1, k + 1 < n ? 1020 + 10 * k : 2000);
		k++;
	}
	cr_expect_eq(k, n, "%u node records", k);
}

/* A node of a step finds no span of an earlier step: spans are
 * forgotten when a step ends with no module call open. */
Test(collector, spans_do_not_outlive_their_step)
{
	struct np_proc_state *p = start_default();

	names(&sim, T(0));
	std_step(&sim, 0);
	bwd_enter(&sim, T(1));   /* work after optimizer.step(): step 0 ends */
	cr_expect_eq(p->nspans, 0);
	node(&sim, T(1) + 10, S(0) + 12);   /* a Linear node of step 0 */
	bwd_exit(&sim, T(1) + 20);
	const struct np_bucket *b = np_bucket_at(&col, p, 1);
	cr_assert_eq(b->len, 3);
	cr_expect_eq(b->recs[0].kind, NP_REC_NODE);
	cr_expect_str_eq(np_name(&col, b->recs[0].name), "<none>");
	cr_expect_eq(b->recs[1].kind, NP_REC_MODULE_BWD);
	cr_expect_str_eq(np_name(&col, b->recs[1].name), "<no module>");
}

Test(collector, backward_groups)
{
	struct np_proc_state *p = start_default();

	names(&sim, 10);
	/* two siblings under Net: A=<Block> [10,20), B=<Head> [20,30) */
	mod_enter(&sim, 100, M_NET, T_NET, 10);
	mod_enter(&sim, 110, M_BLK, T_BLK, 10);
	mod_exit(&sim, 120, 20);
	mod_enter(&sim, 130, M_HEAD, T_HEAD, 20);
	mod_exit(&sim, 140, 30);
	mod_exit(&sim, 150, 30);
	bwd_enter(&sim, 1000);
	node(&sim, 1000, 1);    /* <none> first: a "<no module>" group */
	node(&sim, 1010, 25);   /* Head: new group */
	node(&sim, 1020, 1);    /* <none>: stays in Head's group */
	node(&sim, 1030, 21);   /* Head */
	node(&sim, 1040, 15);   /* Block: new group */
	node(&sim, 1050, 25);   /* Head again: new group */
	bwd_exit(&sim, 1100);

	const struct np_bucket *b = np_bucket_at(&col, p, 0);
	static const struct { const char *name, *type; uint64_t t0, t1; } w[] = {
		{ "<no module>", "", 1000, 1010 },
		{ "<Head>", "Head", 1010, 1040 },
		{ "<Block>", "Block", 1040, 1050 },
		{ "<Head>", "Head", 1050, 1100 },
	};
	unsigned k = 0, nodes = 0;
	for (unsigned i = 0; i < b->len; i++) {
		const struct np_rec *r = &b->recs[i];
		nodes += r->kind == NP_REC_NODE;
		if (r->kind != NP_REC_MODULE_BWD)
			continue;
		cr_assert_lt(k, 4);
		cr_expect_str_eq(np_name(&col, r->name), w[k].name, "group %u: \"%s\"", k,
				 np_name(&col, r->name));
		cr_expect_str_eq(np_name(&col, r->module_type), w[k].type, "group %u: type", k);
		cr_expect_eq(r->t0, w[k].t0, "group %u: t0 %llu", k, (unsigned long long)r->t0);
		cr_expect_eq(r->t1, w[k].t1, "group %u: t1 %llu", k, (unsigned long long)r->t1);
		cr_expect_eq(r->phase, NP_PHASE_BACKWARD);
		k++;
	}
	cr_expect_eq(k, 4, "%u groups", k);
	cr_expect_eq(nodes, 6);
}

/* torch.autograd.grad inside a backward (a hook) is part of the outer one */
Test(collector, nested_backward_is_one_phase)
{
	struct np_proc_state *p = start_default();

	names(&sim, T(0));
	forward(&sim, T(0), S(0));
	bwd_enter(&sim, T(0) + 10000);
	node(&sim, T(0) + 11000, S(0) + 12);
	bwd_enter(&sim, T(0) + 12000);
	node(&sim, T(0) + 12500, S(0) + 11);
	bwd_exit(&sim, T(0) + 13000);
	bwd_exit(&sim, T(0) + 16000);
	opt_enter(&sim, T(0) + 20000);
	opt_exit(&sim, T(0) + 30000);

	np_collector_finish(&col);   /* the last step ends once nothing follows */
	cr_assert_eq(p->nsteps, 1);
	cr_expect_eq(p->steps[0].bwd_ns, 6000, "bwd_ns %llu",
		     (unsigned long long)p->steps[0].bwd_ns);
	cr_expect_eq(p->steps[0].nodes, 2);
	const struct np_bucket *b = np_bucket_at(&col, p, 0);
	unsigned n = 0;
	for (unsigned i = 0; i < b->len; i++) {
		const struct np_rec *r = &b->recs[i];
		if (r->kind != NP_REC_PHASE || r->phase != NP_PHASE_BACKWARD)
			continue;
		cr_expect_eq(r->t0, T(0) + 10000);
		cr_expect_eq(r->t1, T(0) + 16000);
		n++;
	}
	cr_expect_eq(n, 1, "%u backward phases", n);
}

/* ---- bounds ---- */

Test(collector, window_keeps_the_last_steps)
{
	struct np_proc_state *p = start(2, 1000, 1000, 8, false);

	names(&sim, T(0));
	for (unsigned k = 0; k < 5; k++)
		std_step(&sim, k);
	np_collector_finish(&col);

	cr_assert_eq(p->nsteps, 5, "every step keeps its counters");
	for (unsigned k = 0; k < 5; k++)
		expect_std_stats(&p->steps[k], k);
	cr_assert_eq(p->wlen, 2);
	expect_std_bucket(np_bucket_at(&col, p, 0), 3);
	expect_std_bucket(np_bucket_at(&col, p, 1), 4);
}

Test(collector, window_keeps_an_unfinished_last_step)
{
	struct np_proc_state *p = start(2, 1000, 1000, 8, false);

	names(&sim, T(0));
	for (unsigned k = 0; k < 3; k++)
		std_step(&sim, k);
	/* the job ends in the middle of step 3's forward */
	mod_enter(&sim, T(3), M_NET, T_NET, S(3) + 10);
	mod_enter(&sim, T(3) + 1000, M_LIN, T_LIN, S(3) + 10);
	mod_exit(&sim, T(3) + 3000, S(3) + 13);
	mod_exit(&sim, T(3) + 5000, S(3) + 14);
	np_collector_finish(&col);

	cr_assert_eq(p->nsteps, 4);
	const struct np_step_stats *st = &p->steps[3];
	cr_expect_eq(st->step, 3);
	cr_expect_not(st->complete);
	cr_expect_eq(st->t0, T(2) + 30000);
	cr_expect_eq(st->t1, T(3) + 5000, "ends with the last event");
	cr_expect_eq(st->module_calls, 2);
	cr_expect_eq(st->nodes, 0);
	cr_expect_eq(st->batches, 1, "the open forward counts");
	cr_expect_eq(st->fwd_ns, 5000);
	cr_expect(p->steps[2].complete);

	cr_assert_eq(p->wlen, 2);
	expect_std_bucket(np_bucket_at(&col, p, 0), 2);
	const struct np_bucket *b = np_bucket_at(&col, p, 1);
	cr_expect_eq(b->step, 3);
	cr_assert_eq(b->len, 3);
	cr_expect_eq(b->recs[0].kind, NP_REC_MODULE);
	cr_expect_str_eq(np_name(&col, b->recs[0].name), "<Linear>");
	cr_expect_eq(b->recs[1].kind, NP_REC_MODULE);
	cr_expect_str_eq(np_name(&col, b->recs[1].name), "");
	cr_expect_eq(b->recs[2].kind, NP_REC_PHASE);
	cr_expect_eq(b->recs[2].phase, NP_PHASE_FORWARD);
	cr_expect_eq(b->recs[2].tid, PID, "closed by the end: the pid as tid");
	cr_expect_eq(b->recs[2].t0, T(3));
	cr_expect_eq(b->recs[2].t1, T(3) + 5000);
}

Test(collector, open_calls_at_the_end_count_but_are_not_written)
{
	struct np_proc_state *p = start_default();

	names(&sim, T(0));
	std_step(&sim, 0);
	mod_enter(&sim, T(1), M_NET, T_NET, S(1));   /* never returns */
	np_collector_finish(&col);

	cr_assert_eq(p->nsteps, 2);
	cr_expect_not(p->steps[1].complete);
	cr_expect_eq(p->steps[1].module_calls, 1);
	cr_expect_eq(p->steps[1].t1, T(1));
	/* only the forward phase (empty: its call never returned) */
	const struct np_bucket *b = np_bucket_at(&col, p, 1);
	cr_assert_eq(b->len, 1);
	cr_expect_eq(b->recs[0].kind, NP_REC_PHASE);
	cr_expect_eq(b->recs[0].t0, T(1));
	cr_expect_eq(b->recs[0].t1, T(1));
}

Test(collector, max_records_drops_and_counts)
{
	struct np_proc_state *p = start(4, 16, 1000, 8, false);

	names(&sim, T(0));
	/* step 0: Net calling Linear 20 times: 21 module + 3 phase records */
	mod_enter(&sim, T(0), M_NET, T_NET, NP_SEQ_UNKNOWN);
	for (unsigned i = 0; i < 20; i++) {
		mod_enter(&sim, T(0) + 10 + 10 * i, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
		mod_exit(&sim, T(0) + 15 + 10 * i, NP_SEQ_UNKNOWN);
	}
	mod_exit(&sim, T(0) + 5000, NP_SEQ_UNKNOWN);
	bwd_enter(&sim, T(0) + 10000);
	bwd_exit(&sim, T(0) + 16000);
	opt_enter(&sim, T(0) + 20000);
	opt_exit(&sim, T(0) + 30000);
	/* step 1: the usual 12 records fit */
	std_step(&sim, 1);

	np_collector_finish(&col);   /* the last step ends once nothing follows */
	cr_assert_eq(p->nsteps, 2);
	const struct np_bucket *b = np_bucket_at(&col, p, 0);
	cr_expect_eq(b->len, 16);
	for (unsigned i = 0; i < 16; i++) {
		cr_expect_eq(b->recs[i].kind, NP_REC_MODULE, "rec %u", i);
		cr_expect_str_eq(np_name(&col, b->recs[i].name), "<Linear>", "rec %u", i);
		cr_expect_eq(b->recs[i].t0, T(0) + 10 + 10 * i);
	}
	cr_expect_eq(p->steps[0].dropped, 8, "dropped %u", p->steps[0].dropped);
	cr_expect_eq(p->steps[0].module_calls, 21, "counters do not drop");
	/* the phases' counters survive their records */
	cr_expect_eq(p->steps[0].fwd_ns, 5000);
	cr_expect_eq(p->steps[0].bwd_ns, 6000);
	cr_expect_eq(p->steps[0].opt_ns, 10000);
	cr_expect_eq(p->records_dropped, 8);
	cr_expect_eq(p->steps[1].dropped, 0);
	expect_std_bucket(np_bucket_at(&col, p, 1), 1);
}

Test(collector, max_steps_counts_dropped_step_counters)
{
	struct np_proc_state *p = start(8, 1000, 2, 8, false);

	names(&sim, T(0));
	for (unsigned k = 0; k < 3; k++)
		std_step(&sim, k);
	np_collector_finish(&col);   /* the last step ends once nothing follows */
	cr_expect_eq(p->nsteps, 2);
	cr_expect_eq(p->steps_dropped, 1);
	cr_expect_eq(p->steps[1].step, 1);
	/* the detail window is not limited by it */
	cr_expect_eq(p->wlen, 3);
	expect_std_bucket(np_bucket_at(&col, p, 2), 2);
}

Test(collector, attach_mode_first_step_partial)
{
	struct np_proc_state *p = start(8, 1000, 1000, 8, true);

	cr_expect(p->cur.partial);
	names(&sim, T(0));
	for (unsigned k = 0; k < 2; k++)
		std_step(&sim, k);
	np_collector_finish(&col);   /* the last step ends once nothing follows */
	cr_assert_eq(p->nsteps, 2);
	cr_expect(p->steps[0].partial);
	cr_expect(p->steps[0].complete);
	cr_expect_not(p->steps[1].partial);
	cr_expect(p->steps[1].complete);
}

/* The name of the first depth-1 module record of step k's bucket. */
static const char *child_name(const struct np_proc_state *p, uint32_t k)
{
	const struct np_bucket *b = np_bucket_at(&col, p, k);
	for (uint32_t i = 0; i < b->len; i++)
		if (b->recs[i].kind == NP_REC_MODULE && b->recs[i].depth == 1)
			return np_name(&col, b->recs[i].name);
	return NULL;
}

/* The simulated process cannot be read (no such pid), as a job that
 * freed its model or exited before nanprof got to its calls: the child
 * is "<Linear>" until its agent reports the path from its caller; from
 * then on it is named by that path. */
Test(collector, a_path_the_agent_reported_names_calls_the_process_cannot_tell)
{
	struct np_proc_state *p = start_default();

	names(&sim, T(0));
	std_step(&sim, 0);
	np_collector_agent_path(&col, p, M_NET, M_LIN, "encoder.fc");
	np_collector_agent_path(&col, p, M_LIN, M_NET, "elsewhere");   /* another pair */
	std_step(&sim, 1);
	np_collector_finish(&col);
	cr_assert_eq(p->wlen, 2);
	cr_expect_str_eq(child_name(p, 0), "<Linear>");
	cr_expect_str_eq(child_name(p, 1), "encoder.fc");
	cr_expect_eq(col.agent_paths_dropped, 0);
}

/* The libtorch probes go in after the Python one: a step begun in between
 * (before probes_ready_ns) saw its forward but not its backward. */
Test(collector, attach_mode_steps_begun_before_the_last_probes_are_partial)
{
	struct np_proc_state *p = start(8, 1000, 1000, 8, true);
	p->probes_ready_ns = T(1) + 50000;   /* step 1 begins at T(0) + 30000 */

	names(&sim, T(0));
	for (unsigned k = 0; k < 4; k++)
		std_step(&sim, k);
	np_collector_finish(&col);
	cr_assert_eq(p->nsteps, 4);
	cr_expect(p->steps[0].partial);
	cr_expect(p->steps[1].partial, "step 1 began before the probes were in");
	cr_expect(p->steps[2].partial, "step 2 began at T(1) + 30000, before them too");
	cr_expect_not(p->steps[3].partial);
}

Test(collector, run_mode_ignores_when_the_probes_went_in)
{
	struct np_proc_state *p = start_default();
	p->probes_ready_ns = T(2);

	names(&sim, T(0));
	for (unsigned k = 0; k < 2; k++)
		std_step(&sim, k);
	np_collector_finish(&col);
	cr_assert_eq(p->nsteps, 2);
	cr_expect_not(p->steps[0].partial);
	cr_expect_not(p->steps[1].partial);
}

Test(collector, run_mode_first_step_not_partial)
{
	struct np_proc_state *p = start_default();

	names(&sim, T(0));
	std_step(&sim, 0);
	np_collector_finish(&col);   /* the last step ends once nothing follows */
	cr_assert_eq(p->nsteps, 1);
	cr_expect_not(p->steps[0].partial);
}

static void thread_event(uint32_t tid, uint32_t kind, uint64_t ts)
{
	struct np_event e = ev(&sim, kind, ts);
	e.tid = tid;
	e.a = M_NET;
	e.b = T_NET;
	e.depth = kind == NP_EV_MOD_ENTER;
	send(&e);
}

Test(collector, events_of_threads_over_the_limit_are_dropped)
{
	struct np_proc_state *p = start(8, 1000, 1000, 1, false);

	thread_event(TID, NP_EV_MOD_ENTER, 100);
	thread_event(TID2, NP_EV_MOD_ENTER, 110);
	thread_event(TID2, NP_EV_MOD_EXIT, 120);
	thread_event(TID2, NP_EV_NODE_ENTER, 130);
	thread_event(TID, NP_EV_MOD_EXIT, 140);

	cr_expect_eq(p->nthreads, 1);
	cr_expect_eq(p->threads[0].tid, TID);
	cr_expect_eq(p->events_dropped, 3, "events_dropped %llu",
		     (unsigned long long)p->events_dropped);
	cr_expect_eq(p->cur.module_calls, 1);
	cr_expect_eq(p->cur.nodes, 0);
	const struct np_bucket *b = np_bucket_at(&col, p, 0);
	cr_assert_eq(b->len, 1);
	cr_expect_eq(b->recs[0].tid, TID);
	cr_expect_eq(col.events, 5);
	/* TYPE_NAME needs no thread: never dropped */
	struct np_event e = ev(&sim, NP_EV_TYPE_NAME, 150);
	e.tid = TID2;
	e.a = 0x42;
	strcpy(e.name, "Late");
	send(&e);
	cr_expect_eq(p->events_dropped, 3);
	uint64_t id;
	cr_expect_eq(np_map_get(&col.type_names, PID, 0x42, &id), 0);
}

/* docs/outputs.md: end.threads_dropped is "threads whose events were
 * ignored", the summary says "E events of T threads over the limit". */
Test(collector, threads_dropped_counts_threads_not_events)
{
	struct np_proc_state *p = start(8, 1000, 1000, 1, false);

	thread_event(TID, NP_EV_MOD_ENTER, 100);
	thread_event(TID2, NP_EV_MOD_ENTER, 110);
	thread_event(TID2, NP_EV_MOD_EXIT, 120);
	thread_event(TID2 + 1, NP_EV_MOD_ENTER, 130);
	cr_expect_eq(p->events_dropped, 3);
	cr_expect_eq(p->threads_dropped, 2, "threads_dropped %llu, want 2 (two threads)",
		     (unsigned long long)p->threads_dropped);
}

/* ---- losses and odd input ---- */

Test(collector, exit_without_entry_is_ignored)
{
	struct np_proc_state *p = start_default();

	names(&sim, T(0));
	/* an exit at depth 0 with nothing open (its entry was lost) */
	struct np_event e = ev(&sim, NP_EV_MOD_EXIT, T(0) - 100);
	e.a = M_LIN;
	e.depth = 0;
	send(&e);
	cr_expect_eq(p->nthreads, 1);
	cr_expect_eq(p->threads[0].depth, 0);
	cr_expect_eq(p->wlen, 0, "no record, no bucket");

	/* Net open at depth 1; an exit that says depth 1 after its pop
	 * (the entry of a child was lost) changes nothing */
	mod_enter(&sim, T(0), M_NET, T_NET, S(0) + 10);
	e = ev(&sim, NP_EV_MOD_EXIT, T(0) + 50);
	e.a = M_LIN;
	e.depth = 1;
	send(&e);
	e.depth = 5;   /* nor does a deeper one */
	send(&e);
	cr_expect_eq(p->threads[0].depth, 1);
	cr_expect_eq(p->wlen, 0);

	/* the step goes on as usual */
	mod_enter(&sim, T(0) + 1000, M_LIN, T_LIN, S(0) + 10);
	mod_exit(&sim, T(0) + 3000, S(0) + 13);
	mod_exit(&sim, T(0) + 5000, S(0) + 14);
	backward(&sim, T(0), S(0));
	opt_enter(&sim, T(0) + 20000);
	opt_exit(&sim, T(0) + 30000);
	np_collector_finish(&col);   /* the last step ends once nothing follows */
	cr_assert_eq(p->nsteps, 1);
	cr_expect_eq(p->steps[0].module_calls, 2);
	expect_std_bucket(np_bucket_at(&col, p, 0), 0);
}

Test(collector, lost_child_exit_resyncs_on_the_parent_exit)
{
	struct np_proc_state *p = start_default();

	names(&sim, T(0));
	mod_enter(&sim, T(0), M_NET, T_NET, S(0) + 10);
	mod_enter(&sim, T(0) + 1000, M_LIN, T_LIN, S(0) + 10);
	mod_exit_maybe_lost(&sim, T(0) + 3000, S(0) + 13, true);
	mod_exit(&sim, T(0) + 5000, S(0) + 14);
	cr_expect_eq(p->threads[0].depth, 0);
	const struct np_bucket *b = np_bucket_at(&col, p, 0);
	cr_assert_eq(b->len, 1, "only Net's record");
	cr_expect_str_eq(np_name(&col, b->recs[0].name), "");
	cr_expect_eq(b->recs[0].depth, 0);
	cr_expect_eq(b->recs[0].t0, T(0));
	cr_expect_eq(b->recs[0].t1, T(0) + 5000);
}

/* An outermost exit lost (ring buffer full) must not shift the next
 * step's calls: MOD_ENTER carries the BPF depth of the new frame, as
 * MOD_EXIT carries the depth after the pop. */
Test(collector, lost_outermost_exit_resyncs_on_the_next_entry)
{
	struct np_proc_state *p = start_default();

	names(&sim, T(0));
	mod_enter(&sim, T(0), M_NET, T_NET, S(0) + 10);
	mod_enter(&sim, T(0) + 1000, M_LIN, T_LIN, S(0) + 10);
	mod_exit(&sim, T(0) + 3000, S(0) + 13);
	mod_exit_maybe_lost(&sim, T(0) + 5000, S(0) + 14, true);
	backward(&sim, T(0), S(0));
	opt_enter(&sim, T(0) + 20000);
	opt_exit(&sim, T(0) + 30000);
	/* step 1 is whole */
	std_step(&sim, 1);

	np_collector_finish(&col);   /* the last step ends once nothing follows */
	cr_assert_eq(p->nsteps, 2);
	cr_expect_eq(p->steps[1].batches, 1, "step 1 batches %u", p->steps[1].batches);
	cr_expect_eq(p->steps[1].fwd_ns, 5000, "step 1 fwd_ns %llu",
		     (unsigned long long)p->steps[1].fwd_ns);
	expect_std_bucket(np_bucket_at(&col, p, 1), 1);
}

Test(collector, deep_nesting_past_the_open_stack)
{
	struct np_proc_state *p = start(8, 1000, 1000, 1, false);

	/* deeper than NP_MAX_OPEN: not from BPF (32 at most), but the
	 * collector must stay in bounds and come back when they return */
	const unsigned n = NP_MAX_OPEN + 8;
	names(&sim, 10);
	for (unsigned i = 0; i < n; i++)
		mod_enter(&sim, 100 + i, M_NET + 8 * i, T_NET, NP_SEQ_UNKNOWN);
	for (unsigned i = n; i-- > 0;)
		mod_exit(&sim, 1000 + i, NP_SEQ_UNKNOWN);
	cr_expect_eq(p->threads[0].depth, 0);
	/* one record per frame that fit on the stack */
	const struct np_bucket *b = np_bucket_at(&col, p, 0);
	cr_expect_eq(b->len, NP_MAX_OPEN, "records %u", b->len);
	cr_expect_eq(p->cur.module_calls, n);
	cr_expect_str_eq(np_name(&col, b->recs[b->len - 1].name), "");
	cr_expect_str_eq(np_name(&col, b->recs[b->len - 2].name), "<Net>");
}

Test(collector, unknown_pids_kinds_and_process_exit)
{
	struct np_proc_state *p = start_default();

	struct np_event e = ev(&sim, NP_EV_MOD_ENTER, 100);
	e.pid = PID + 5;   /* not added */
	send(&e);
	cr_expect_eq(col.events, 1);
	cr_expect_eq(p->first_ts, 0, "another pid's event touched this process");
	cr_expect_eq(col.first_ts, 0);

	e = ev(&sim, NP_EV_KIND_MAX + 3, 200);
	send(&e);
	cr_expect_eq(col.unknown_events, 1);
	cr_expect_eq(p->first_ts, 200);
	cr_expect_eq(col.first_ts, 200);

	cr_expect_not(p->exited);
	e = ev(&sim, NP_EV_PROC_EXIT, 300);
	send(&e);
	cr_expect(p->exited);
	cr_expect_eq(p->last_ts, 300);
	cr_expect_eq(col.events, 3);
	/* a process that only exited leaves no step behind */
	np_collector_finish(&col);
	cr_expect_eq(p->nsteps, 0);
}

Test(collector, processes_over_the_limit)
{
	struct np_collector_opts o = { .window = 2, .max_records = 16, .max_steps = 4,
				       .max_procs = 2, .max_threads = 2 };
	cr_assert_eq(np_collector_init(&col, &o), 0);
	col_init = true;
	struct np_proc_info info;
	memset(&info, 0, sizeof(info));
	info.py_major = 3;
	info.py_minor = 11;
	for (int i = 0; i < 3; i++) {
		info.pid = (pid_t)(PID + i);
		struct np_proc_state *p = np_collector_add_proc(&col, &info, i);
		if (i < 2) {
			cr_assert_not_null(p);
			cr_expect_eq(p->rank, i);
		} else {
			cr_expect_null(p);
		}
	}
	cr_expect_eq(col.nprocs, 2);
	cr_expect_eq(col.procs_dropped, 1);
	/* adding a known pid again refreshes its info, takes no slot */
	info.pid = PID;
	info.py_minor = 12;
	struct np_proc_state *p = np_collector_add_proc(&col, &info, 0);
	cr_assert_eq(p, np_collector_proc(&col, PID));
	cr_expect_eq(p->info.py_minor, 12);
	cr_expect_eq(col.nprocs, 2);
	cr_expect_eq(col.procs_dropped, 1);
}

Test(collector, intern_and_name)
{
	start_default();

	cr_expect_eq(np_intern(&col, ""), 0);
	uint32_t a = np_intern(&col, "encoder.layers.1");
	uint32_t b = np_intern(&col, "encoder.layers.2");
	cr_expect_neq(a, b);
	cr_expect_eq(np_intern(&col, "encoder.layers.1"), a);
	cr_expect_str_eq(np_name(&col, a), "encoder.layers.1");
	cr_expect_str_eq(np_name(&col, 0xfffffff), "");
}

/* ---- Python autograd.Function nodes ----
 *
 * Their objects are built in this process's own memory, and the process
 * state reads this pid (process_vm_readv of itself), as it would the
 * traced job's: a CPython 3.11 type is tp_name at +24, tp_base at +256,
 * an object's type at +8. */

struct fake_type {
	uint64_t head[3];
	const char *tp_name;
	uint64_t pad[28];
	const struct fake_type *tp_base;
};
struct fake_obj {
	uint64_t refcnt;
	const struct fake_type *type;
};
_Static_assert(__builtin_offsetof(struct fake_type, tp_base) == 256, "tp_base at +256");

#define VT_PYNODE 0xdef0ULL

static struct fake_type t_cfn = { .tp_name = "BackwardCFunction" };
static struct fake_type t_hand = { .tp_name = "HandSqrtBackward", .tp_base = &t_cfn };
static struct fake_obj o_hand = { 1, &t_hand };

static void pynode(struct sim *s, uint64_t ts, const uint64_t *node, const struct fake_type *cls)
{
	struct np_event e = ev(s, NP_EV_NODE_ENTER, ts);
	e.a = (uint64_t)(uintptr_t)node;
	e.b = VT_PYNODE;
	e.c = (uint64_t)(uintptr_t)cls;   /* what BPF sends once it knows the offset */
	e.d = NP_SEQ_UNKNOWN;
	send(&e);
}

static const char *node_type_at(const struct np_proc_state *p, unsigned nth)
{
	const struct np_bucket *b = np_bucket_at(&col, p, 0);
	for (unsigned i = 0, k = 0; i < b->len; i++)
		if (b->recs[i].kind == NP_REC_NODE && k++ == nth)
			return np_name(&col, b->recs[i].type);
	return "(none)";
}

Test(collector, python_function_nodes_named_by_their_class)
{
	struct np_proc_state *p = start_default();
	p->mem.ctx = (void *)(intptr_t)getpid();
	p->info.pynode_vtable = VT_PYNODE;
	/* torch 2.13's layout: the object at +112 of the node, after a
	 * pointer to an object of another class */
	static uint64_t pynode_obj[58];
	struct fake_type t_other = { .tp_name = "Other" };
	struct fake_obj o_other = { 1, &t_other };
	pynode_obj[0] = VT_PYNODE;
	pynode_obj[3] = (uint64_t)(uintptr_t)&o_other;
	pynode_obj[14] = (uint64_t)(uintptr_t)&o_hand;

	bwd_enter(&sim, 1000);
	pynode(&sim, 1010, pynode_obj, NULL);     /* BPF does not know where: searched */
	cr_expect_eq(p->info.pynode_obj, 112, "offset found: %u", p->info.pynode_obj);
	pynode(&sim, 1020, pynode_obj, NULL);     /* known here, not yet in BPF: read */
	pynode(&sim, 1030, pynode_obj, &t_hand);  /* BPF's */
	node(&sim, 1040, 5);                      /* a C++ node: its vtable's name */
	struct fake_type t_gone = { .tp_name = NULL };
	pynode(&sim, 1050, pynode_obj, &t_gone);  /* a class whose name cannot be read */
	bwd_exit(&sim, 2000);

	cr_expect_str_eq(node_type_at(p, 0), "HandSqrtBackward");
	cr_expect_str_eq(node_type_at(p, 1), "HandSqrtBackward");
	cr_expect_str_eq(node_type_at(p, 2), "HandSqrtBackward");
	cr_expect_str_eq(node_type_at(p, 3), "Node");
	cr_expect_str_eq(node_type_at(p, 4), "PyNode");
}

Test(collector, python_function_node_search_is_bounded)
{
	struct np_proc_state *p = start_default();
	p->mem.ctx = (void *)(intptr_t)getpid();
	p->info.pynode_vtable = VT_PYNODE;
	static uint64_t plain[128];   /* no Python object anywhere in it */
	plain[0] = VT_PYNODE;
	bwd_enter(&sim, 1000);
	for (unsigned i = 0; i < 100; i++)
		pynode(&sim, 1010 + i, plain, NULL);
	bwd_exit(&sim, 2000);
	cr_expect_eq(p->info.pynode_obj, 0);
	cr_expect_eq(p->pynode_tries, 64, "searched %u nodes", p->pynode_tries);
	cr_expect_str_eq(node_type_at(p, 99), "PyNode");
}

/* A submodule called with no module on the stack (reentrant checkpointing
 * recomputes a block inside backward; a loop calls model.encoder itself)
 * keeps the name it had under its parent; a module never seen inside
 * another stays the outermost "". */
Test(collector, submodule_called_from_outside_keeps_its_name)
{
	struct np_proc_state *p = start_default();
	names(&sim, 10);
	mod_enter(&sim, 100, M_NET, T_NET, 100);
	mod_enter(&sim, 110, M_LIN, T_LIN, 100);
	mod_exit(&sim, 120, 101);
	mod_exit(&sim, 130, 102);
	mod_enter(&sim, 200, M_LIN, T_LIN, 102);    /* Linear, no caller */
	mod_exit(&sim, 210, 103);
	mod_enter(&sim, 300, M_HEAD, T_HEAD, 103);  /* never seen inside Net */
	mod_exit(&sim, 310, 104);
	const struct np_bucket *b = np_bucket_at(&col, p, 0);
	const char *want[] = { "<Linear>", "", "<Linear>", "" };
	unsigned k = 0;
	for (unsigned i = 0; i < b->len; i++) {
		if (b->recs[i].kind != NP_REC_MODULE)
			continue;
		cr_assert_lt(k, 4);
		cr_expect_str_eq(np_name(&col, b->recs[i].name), want[k], "call %u: \"%s\"", k,
				 np_name(&col, b->recs[i].name));
		k++;
	}
	cr_expect_eq(k, 4);
}
