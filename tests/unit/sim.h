/* sim.h - the BPF side, simulated, for the collector's unit tests.
 *
 * Keeps the per-process step, batch and phase context and the per-thread
 * module stack the way bpf/tracer.bpf.c does, and stamps each synthetic
 * np_event with them.  Included by one test file each (static helpers);
 * the includer defines `sim` users through the globals below. */
#ifndef NP_TEST_SIM_H
#define NP_TEST_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "collector.h"

struct sim {
	struct np_collector *c;
	uint32_t pid, tid;
	uint64_t step;
	uint32_t batch;
	bool saw_backward;
	uint32_t bwd_depth, opt_depth;
	uint32_t depth;
	uint64_t stack[2 * NP_MAX_OPEN];   /* deeper than BPF goes, for one test */
};

static struct np_collector col;
static bool col_init __attribute__((unused));
static struct sim sim;

/* The findings tests' start: a collector with one process (PID, Python
 * 3.11, its checks on) whose findings go to on_finding, and sim speaking
 * for its thread TID.  Returns the process, NULL if it could not be made. */
static __attribute__((unused)) struct np_proc_state *
sim_checked_proc(void (*on_finding)(struct np_collector *, struct np_proc_state *, int))
{
	struct np_collector_opts o = { .window = 4, .max_records = 1000, .max_steps = 1000,
				       .max_procs = 4, .max_threads = 8 };
	if (np_collector_init(&col, &o))
		return NULL;
	col.on_finding = on_finding;
	struct np_proc_info info = { .pid = PID, .py_major = 3, .py_minor = 11 };
	struct np_proc_state *p = np_collector_add_proc(&col, &info, 0);
	if (p)
		p->checks = NP_CHECKS_ON;
	memset(&sim, 0, sizeof(sim));
	sim.c = &col;
	sim.pid = PID;
	sim.tid = TID;
	return p;
}

static uint16_t phase_of(const struct sim *s)
{
	if (s->opt_depth)
		return NP_PHASE_OPTIMIZER;
	if (s->bwd_depth)
		return NP_PHASE_BACKWARD;
	return s->depth ? NP_PHASE_FORWARD : NP_PHASE_NONE;
}

static struct np_event ev(const struct sim *s, uint32_t kind, uint64_t ts)
{
	struct np_event e;

	memset(&e, 0, sizeof(e));
	e.kind = kind;
	e.pid = s->pid;
	e.tid = s->tid;
	e.phase = phase_of(s);
	e.depth = (uint16_t)s->depth;
	e.ts_ns = ts;
	e.step = s->step;
	e.batch = s->batch;
	return e;
}

static void send(const struct np_event *e)
{
	np_collector_event(sim.c, e);
}

static void type_name(struct sim *s, uint64_t ts, uint64_t type, const char *name)
{
	struct np_event e = ev(s, NP_EV_TYPE_NAME, ts);
	size_t n = strlen(name);

	e.a = type;
	/* like bpf_probe_read_user_str: cut, and no NUL when it fills the field */
	memcpy(e.name, name, n < NP_TYPE_NAME_LEN ? n + 1 : NP_TYPE_NAME_LEN);
	send(&e);
}

/* lost: the BPF side pushes, but the event never reaches userspace (as
 * when it comes before the collector knows the process) */
static void mod_enter_maybe_lost(struct sim *s, uint64_t ts, uint64_t self, uint64_t type,
				 uint64_t seq, bool lost)
{
	if (s->depth == 0 && !s->bwd_depth && !s->opt_depth && s->saw_backward) {
		s->batch++;   /* first forward after a backward: next batch */
		s->saw_backward = false;
	}
	uint64_t parent = s->depth ? s->stack[s->depth - 1] : 0;
	s->stack[s->depth++] = self;
	struct np_event e = ev(s, NP_EV_MOD_ENTER, ts);
	e.a = self;
	e.b = type;
	e.c = parent;
	e.d = seq;
	if (!lost)
		send(&e);
}

static void mod_enter(struct sim *s, uint64_t ts, uint64_t self, uint64_t type, uint64_t seq)
{
	mod_enter_maybe_lost(s, ts, self, type, seq, false);
}

/* lost: the BPF side pops, but the event never reaches userspace */
static void mod_exit_maybe_lost(struct sim *s, uint64_t ts, uint64_t seq, bool lost)
{
	s->depth--;
	struct np_event e = ev(s, NP_EV_MOD_EXIT, ts);
	e.a = s->stack[s->depth];
	e.d = seq;
	if (!lost)
		send(&e);
}

static void mod_exit(struct sim *s, uint64_t ts, uint64_t seq)
{
	mod_exit_maybe_lost(s, ts, seq, false);
}

static void bwd_enter(struct sim *s, uint64_t ts)
{
	s->bwd_depth++;
	struct np_event e = ev(s, NP_EV_BWD_ENTER, ts);
	send(&e);
}

static void bwd_exit(struct sim *s, uint64_t ts)
{
	struct np_event e = ev(s, NP_EV_BWD_EXIT, ts);
	send(&e);
	if (s->bwd_depth)
		s->bwd_depth--;
	if (!s->bwd_depth)
		s->saw_backward = true;
}

static void node(struct sim *s, uint64_t ts, uint64_t seq)
{
	struct np_event e = ev(s, NP_EV_NODE_ENTER, ts);
	e.a = 0x900000 + ts;   /* the Node object */
	e.b = VT;
	e.d = seq;
	send(&e);
}

static void opt_enter(struct sim *s, uint64_t ts)
{
	s->opt_depth++;
	struct np_event e = ev(s, NP_EV_OPT_ENTER, ts);
	e.a = T_OPT;
	e.b = OPT;
	send(&e);
}

static void opt_exit(struct sim *s, uint64_t ts)
{
	s->opt_depth--;
	struct np_event e = ev(s, NP_EV_OPT_EXIT, ts);
	send(&e);
	s->step++;
	s->batch = 0;
	s->saw_backward = false;
}

#endif
