#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "chrome_trace.h"
#include "findings_out.h"
#include "jsonw.h"
#include "on_nan.h"
#include "output.h"

#define NANPROF_VERSION "0.1.0"

static const char *const counter_names[NP_CNT_MAX] = {
	[NP_CNT_RINGBUF_FULL] = "ringbuf_full",
	[NP_CNT_STACK_OVERFLOW] = "stack_overflow",
	[NP_CNT_READ_FAIL] = "read_fail",
	[NP_CNT_PY_ENTRIES] = "python_frames_probed",
	[NP_CNT_CODE_MAP_FULL] = "code_cache_full",
};

const char *np_phase_name(unsigned phase)
{
	static const char *const names[] = { "none", "forward", "backward", "optimizer" };
	return phase < NP_PHASE_MAX ? names[phase] : "none";
}

static int rank_of(const struct np_proc_state *p)
{
	return p->rank;
}

static void common(struct np_jsonw *w, const struct np_proc_state *p)
{
	np_jsonw_uint_field(w, "pid", (uint64_t)p->pid);
	np_jsonw_int_field(w, "rank", rank_of(p));
}

static void write_session(struct np_jsonw *w, const struct np_collector *c,
			  const struct np_session_info *s)
{
	np_jsonw_start_object(w);
	np_jsonw_string_field(w, "type", "session");
	np_jsonw_string_field(w, "version", NANPROF_VERSION);
	np_jsonw_string_field(w, "mode", s->mode);
	np_jsonw_string_field(w, "command", s->command);
	np_jsonw_string_field(w, "probe_mode", s->probe_mode);
	np_jsonw_uint_field(w, "start_unix_ns", s->start_unix_ns);
	np_jsonw_uint_field(w, "start_ns", s->start_ns);
	np_jsonw_uint_field(w, "end_ns", s->end_ns);
	np_jsonw_uint_field(w, "window_steps", s->window);
	np_jsonw_uint_field(w, "processes", c->nprocs);
	const struct np_on_nan *a = s->on_nan;
	np_jsonw_string_field(w, "on_nan", a && a->signo ? np_signal_name(a->signo) : "report");
	np_jsonw_end_object(w);
	if (a && a->fired) {   /* what --on-nan did */
		np_jsonw_start_object(w);
		np_jsonw_string_field(w, "type", "on_nan_action");
		np_jsonw_string_field(w, "signal", np_signal_name(a->signo));
		np_jsonw_uint_field(w, "ts_ns", a->ts_ns);
		np_jsonw_uint_field(w, "processes_signalled", a->nsent);
		np_jsonw_uint_field(w, "processes_refused", a->nfailed);
		np_jsonw_uint_field(w, "processes_ignoring", a->nignoring);
		np_jsonw_name(w, "pids");
		np_jsonw_start_array(w);
		for (unsigned i = 0; i < a->nsent && i < NP_ON_NAN_PIDS; i++)
			np_jsonw_uint(w, (uint64_t)a->pids[i]);
		np_jsonw_end_array(w);
		np_jsonw_end_object(w);
	}
	for (uint32_t i = 0; i < c->nprocs; i++) {
		const struct np_proc_state *p = &c->procs[i];
		char py[16];
		snprintf(py, sizeof(py), "%d.%d", p->info.py_major, p->info.py_minor);
		np_jsonw_start_object(w);
		np_jsonw_string_field(w, "type", "process");
		common(w, p);
		np_jsonw_string_field(w, "python", py);
		np_jsonw_string_field(w, "python_binary", p->info.python);
		np_jsonw_bool_field(w, "python_offsets_verified", p->info.py_verified);
		np_jsonw_string_field(w, "torch", p->info.torch_version[0] ? p->info.torch_version : NULL);
		np_jsonw_string_field(w, "torch_library", p->info.torch_lib[0] ? p->info.torch_lib : NULL);
		np_jsonw_name(w, "probes");
		np_jsonw_start_array(w);
		char probes[sizeof(p->info.probes)];
		snprintf(probes, sizeof(probes), "%s", p->info.probes);
		for (char *save = NULL, *tok = strtok_r(probes, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save))
			np_jsonw_string(w, tok);
		np_jsonw_end_array(w);
		np_jsonw_bool_field(w, "exited", p->exited);
		np_jsonw_end_object(w);
	}
}

static void write_step(struct np_jsonw *w, const struct np_proc_state *p,
		       const struct np_step_stats *st)
{
	np_jsonw_start_object(w);
	np_jsonw_string_field(w, "type", "step");
	common(w, p);
	np_jsonw_uint_field(w, "step", st->step);
	np_jsonw_uint_field(w, "start_ns", st->t0);
	np_jsonw_uint_field(w, "end_ns", st->t1);
	np_jsonw_double_field(w, "dur_ms", (double)(st->t1 - st->t0) / 1e6);
	np_jsonw_double_field(w, "forward_ms", (double)st->fwd_ns / 1e6);
	np_jsonw_double_field(w, "backward_ms", (double)st->bwd_ns / 1e6);
	np_jsonw_double_field(w, "optimizer_ms", (double)st->opt_ns / 1e6);
	np_jsonw_uint_field(w, "batches", st->batches);
	np_jsonw_uint_field(w, "optimizer_calls", st->opt_calls);
	np_jsonw_uint_field(w, "module_calls", st->module_calls);
	np_jsonw_uint_field(w, "backward_nodes", st->nodes);
	np_jsonw_uint_field(w, "records_dropped", st->dropped);
	if (p->checks != NP_CHECKS_OFF) {
		np_jsonw_double_field(w, "grad_norm", st->grad_norm);   /* null: not measured */
		np_jsonw_double_field(w, "output_max_abs", st->out_max);
		np_jsonw_uint_field(w, "nonfinite_tensors", st->nonfinite);
	}
	np_jsonw_bool_field(w, "complete", st->complete);
	np_jsonw_bool_field(w, "partial", st->partial);
	np_jsonw_end_object(w);
}

static void write_rec(struct np_jsonw *w, const struct np_collector *c,
		      const struct np_proc_state *p, const struct np_rec *r)
{
	static const char *const kinds[] = { "", "module", "backward_node", "module_backward",
					     "phase" };
	np_jsonw_start_object(w);
	np_jsonw_string_field(w, "type", kinds[r->kind]);
	common(w, p);
	np_jsonw_uint_field(w, "tid", r->tid);
	np_jsonw_uint_field(w, "step", r->step);
	np_jsonw_uint_field(w, "batch", r->batch);
	np_jsonw_string_field(w, "phase", np_phase_name(r->phase));
	if (r->kind != NP_REC_PHASE) {
		np_jsonw_string_field(w, "module", np_name(c, r->name));
		np_jsonw_string_field(w, "module_type", np_name(c, r->kind == NP_REC_MODULE ? r->type
									       : r->module_type));
		if (r->kind == NP_REC_MODULE)
			np_jsonw_uint_field(w, "depth", r->depth);
		if (r->kind == NP_REC_NODE) {
			np_jsonw_string_field(w, "node", np_name(c, r->type));
			np_jsonw_uint_field(w, "sequence_nr", r->seq);
		}
	}
	np_jsonw_uint_field(w, "start_ns", r->t0);
	np_jsonw_uint_field(w, "dur_ns", r->t1 - r->t0);
	np_jsonw_end_object(w);
}

int np_write_events(const struct np_collector *c, const struct np_session_info *s,
		    const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	struct np_jsonw *w = np_jsonw_new(f, NP_JSONW_LINES);
	if (!w) {
		fclose(f);
		return -ENOMEM;
	}
	write_session(w, c, s);
	for (uint32_t i = 0; i < c->nprocs; i++) {
		const struct np_proc_state *p = &c->procs[i];
		for (uint32_t k = 0; k < p->nsteps; k++)
			write_step(w, p, &p->steps[k]);
	}
	for (uint32_t i = 0; i < c->nprocs; i++) {
		const struct np_proc_state *p = &c->procs[i];
		for (uint32_t b = 0; b < p->wlen; b++) {
			const struct np_bucket *bk = np_bucket_at(c, p, b);
			for (uint32_t k = 0; k < bk->len; k++)
				write_rec(w, c, p, &bk->recs[k]);
		}
	}
	for (uint32_t i = 0; i < c->nprocs; i++)
		np_json_findings(w, c, &c->procs[i]);
	np_json_verdict(w, c);
	/* the end record: what was lost, so that nothing is lost silently */
	np_jsonw_start_object(w);
	np_jsonw_string_field(w, "type", "end");
	np_jsonw_int_field(w, "exit_status", s->exit_status);
	np_jsonw_uint_field(w, "events", c->events);
	uint64_t steps_dropped = 0, recs_dropped = 0, threads_dropped = 0, events_dropped = 0;
	uint64_t spans_dropped = 0;
	for (uint32_t i = 0; i < c->nprocs; i++) {
		spans_dropped += c->procs[i].spans_dropped;
		steps_dropped += c->procs[i].steps_dropped;
		recs_dropped += c->procs[i].records_dropped;
		threads_dropped += c->procs[i].threads_dropped;
		events_dropped += c->procs[i].events_dropped;
	}
	np_jsonw_uint_field(w, "records_dropped", recs_dropped);
	np_jsonw_uint_field(w, "step_counters_dropped", steps_dropped);
	np_jsonw_uint_field(w, "processes_dropped", c->procs_dropped);
	np_jsonw_uint_field(w, "threads_dropped", threads_dropped);
	np_jsonw_uint_field(w, "thread_events_dropped", events_dropped);
	np_jsonw_uint_field(w, "module_spans_dropped", spans_dropped);
	np_jsonw_uint_field(w, "names_dropped", c->names.dropped);
	np_jsonw_uint_field(w, "module_paths_dropped", c->agent_paths_dropped);
	for (int k = 0; k < NP_CNT_MAX; k++)
		np_jsonw_uint_field(w, counter_names[k], s->counters[k]);
	np_jsonw_end_object(w);
	int err = np_jsonw_error(w);
	np_jsonw_free(w);
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

/* Synthetic track per process for steps and phases: slices of different
 * threads may not nest, and phases span threads. */
static uint32_t steps_tid(const struct np_proc_state *p)
{
	return 0x40000000u | (uint32_t)p->pid;
}

static double us(const struct np_session_info *s, uint64_t ns)
{
	return ns > s->start_ns ? (double)(ns - s->start_ns) / 1e3 : 0;
}

static void trace_proc(struct np_trace *t, const struct np_collector *c,
		       const struct np_session_info *s, const struct np_proc_state *p)
{
	char name[128];
	if (p->rank >= 0)
		snprintf(name, sizeof(name), "rank %d (pid %d)", p->rank, p->pid);
	else
		snprintf(name, sizeof(name), "pid %d", p->pid);
	np_trace_process_name(t, (uint32_t)p->pid, name);
	np_trace_process_sort_index(t, (uint32_t)p->pid, p->rank >= 0 ? p->rank : p->pid);
	np_trace_thread_name(t, (uint32_t)p->pid, steps_tid(p), "steps and phases");
	for (uint32_t k = 0; k < p->nthreads; k++)
		np_trace_thread_name(t, (uint32_t)p->pid, p->threads[k].tid,
				     p->threads[k].name[0] ? p->threads[k].name : "thread");
	/* counters for every step */
	for (uint32_t k = 0; k < p->nsteps; k++) {
		const struct np_step_stats *st = &p->steps[k];
		const char *series[] = { "step_ms", "forward_ms", "backward_ms", "optimizer_ms" };
		double v[] = { (double)(st->t1 - st->t0) / 1e6, (double)st->fwd_ns / 1e6,
			       (double)st->bwd_ns / 1e6, (double)st->opt_ns / 1e6 };
		np_trace_counter(t, (uint32_t)p->pid, "step time (ms)", us(s, st->t0), series, v, 4);
		const char *cs[] = { "module_calls", "backward_nodes" };
		double cv[] = { st->module_calls, st->nodes };
		np_trace_counter(t, (uint32_t)p->pid, "calls per step", us(s, st->t0), cs, cv, 2);
	}
	/* step slices for the steps in the window */
	uint64_t first_step = p->wlen ? np_bucket_at(c, p, 0)->step : 0;
	for (uint32_t k = 0; k < p->nsteps; k++) {
		const struct np_step_stats *st = &p->steps[k];
		if (st->step < first_step)
			continue;
		char sname[64];
		snprintf(sname, sizeof(sname), "step %llu", (unsigned long long)st->step);
		struct np_trace_arg a[] = {
			{ .key = "step", .kind = NP_ARG_UINT, .u = st->step },
			{ .key = "batches", .kind = NP_ARG_UINT, .u = st->batches },
			{ .key = "complete", .kind = NP_ARG_UINT, .u = st->complete },
		};
		np_trace_slice(t, (uint32_t)p->pid, steps_tid(p), sname, "step", us(s, st->t0),
			       (double)(st->t1 - st->t0) / 1e3, a, 3);
	}
}

static void trace_rec(struct np_trace *t, const struct np_collector *c,
		      const struct np_session_info *s, const struct np_proc_state *p,
		      const struct np_rec *r)
{
	char name[600];
	const char *mod = np_name(c, r->name);
	struct np_trace_arg a[6];
	int n = 0;
	a[n++] = (struct np_trace_arg){ .key = "step", .kind = NP_ARG_UINT, .u = r->step };
	a[n++] = (struct np_trace_arg){ .key = "batch", .kind = NP_ARG_UINT, .u = r->batch };
	uint32_t tid = r->tid;
	const char *cat;
	switch (r->kind) {
	case NP_REC_MODULE:
		snprintf(name, sizeof(name), "%s", *mod ? mod : np_name(c, r->type));
		a[n++] = (struct np_trace_arg){ .key = "module", .kind = NP_ARG_STR, .s = mod };
		a[n++] = (struct np_trace_arg){ .key = "module_type", .kind = NP_ARG_STR,
						.s = np_name(c, r->type) };
		a[n++] = (struct np_trace_arg){ .key = "phase", .kind = NP_ARG_STR,
						.s = np_phase_name(r->phase) };
		cat = "module";
		break;
	case NP_REC_MODULE_BWD:
		snprintf(name, sizeof(name), "%s (backward)", *mod ? mod : np_name(c, r->module_type));
		a[n++] = (struct np_trace_arg){ .key = "module", .kind = NP_ARG_STR, .s = mod };
		a[n++] = (struct np_trace_arg){ .key = "module_type", .kind = NP_ARG_STR,
						.s = np_name(c, r->module_type) };
		cat = "module_backward";
		break;
	case NP_REC_NODE:
		snprintf(name, sizeof(name), "%s", np_name(c, r->type));
		a[n++] = (struct np_trace_arg){ .key = "module", .kind = NP_ARG_STR, .s = mod };
		a[n++] = (struct np_trace_arg){ .key = "sequence_nr", .kind = NP_ARG_UINT, .u = r->seq };
		cat = "autograd";
		break;
	default:
		snprintf(name, sizeof(name), "%s", np_phase_name(r->phase));
		tid = steps_tid(p);
		cat = "phase";
	}
	np_trace_slice(t, (uint32_t)p->pid, tid, name, cat, us(s, r->t0),
		       (double)(r->t1 - r->t0) / 1e3, a, n);
}

int np_write_trace(const struct np_collector *c, const struct np_session_info *s,
		   const char *path)
{
	struct np_trace *t = np_trace_open(path);
	if (!t)
		return -errno;
	if (s->on_nan && s->on_nan->fired) {   /* a line across the whole trace */
		struct np_trace_arg a[] = {
			{ .key = "signal", .kind = NP_ARG_STR, .s = np_signal_name(s->on_nan->signo) },
			{ .key = "processes", .kind = NP_ARG_UINT, .u = s->on_nan->nsent },
		};
		np_trace_instant(t, c->nprocs ? (uint32_t)c->procs[0].pid : 0, 0, "on_nan_signal",
				 "nanprof", (double)(s->on_nan->ts_ns - s->start_ns) / 1e3, 'g', a, 2);
	}
	for (uint32_t i = 0; i < c->nprocs; i++) {
		const struct np_proc_state *p = &c->procs[i];
		trace_proc(t, c, s, p);
		np_trace_findings(t, c, p, s->start_ns, steps_tid(p));
		for (uint32_t b = 0; b < p->wlen; b++) {
			const struct np_bucket *bk = np_bucket_at(c, p, b);
			for (uint32_t k = 0; k < bk->len; k++)
				trace_rec(t, c, s, p, &bk->recs[k]);
		}
	}
	return np_trace_close(t);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* A Python process that did no work nanprof saw (a launcher, a compile
 * worker, a DataLoader worker: torch imported, nothing trained): one
 * line for all. */
static bool idle(const struct np_proc_state *p)
{
	return !np_proc_worked(p);
}

static void print_idle(const struct np_collector *c, FILE *f)
{
	uint32_t n = 0, listed = 0;
	for (uint32_t i = 0; i < c->nprocs; i++)
		n += idle(&c->procs[i]);
	if (!n || n == c->nprocs)
		return;   /* none, or all: each has its lines */
	fprintf(f, "  %u more python process%s without module, backward or optimizer work "
		"(launchers, data or compile workers: pid", n, n > 1 ? "es" : "");
	for (uint32_t i = 0; i < c->nprocs && listed < 8; i++)
		if (idle(&c->procs[i]))
			fprintf(f, "%s %d", listed++ ? "," : "", c->procs[i].pid);
	fprintf(f, "%s)\n", n > listed ? ", ..." : "");
}

void np_write_summary(const struct np_collector *c, const struct np_session_info *s, FILE *f)
{
	fprintf(f, "nanprof %s summary (%s: %s)\n", NANPROF_VERSION, s->mode, s->command);
	fprintf(f, "  traced for %.2f s with %s probes; %llu events\n",
		(double)(s->end_ns - s->start_ns) / 1e9, s->probe_mode,
		(unsigned long long)c->events);
	bool fold = false;   /* idle processes in one line, if any other did work */
	for (uint32_t i = 0; i < c->nprocs; i++)
		fold |= !idle(&c->procs[i]);
	for (uint32_t i = 0; i < c->nprocs; i++) {
		const struct np_proc_state *p = &c->procs[i];
		if (idle(p) && fold)
			continue;
		uint32_t complete = 0;
		uint64_t calls = 0;
		for (uint32_t k = 0; k < p->nsteps; k++)
			calls += p->steps[k].opt_calls;
		uint64_t *d = calloc(p->nsteps ? p->nsteps : 1, sizeof(*d));
		for (uint32_t k = 0; k < p->nsteps && d; k++)
			if (p->steps[k].complete && !p->steps[k].partial)
				d[complete++] = p->steps[k].t1 - p->steps[k].t0;
		if (d && complete)
			qsort(d, complete, sizeof(*d), cmp_u64);
		char rank[32] = "";
		if (p->rank >= 0)
			snprintf(rank, sizeof(rank), " rank %d", p->rank);
		fprintf(f, "  pid %d%s: python %d.%d, torch %s\n", p->pid, rank,
			p->info.py_major, p->info.py_minor,
			p->info.torch_version[0] ? p->info.torch_version : "not loaded");
		fprintf(f, "    steps: %u recorded (%u complete), module calls %llu, "
			"backward nodes %llu\n", p->nsteps, complete,
			(unsigned long long)p->module_calls, (unsigned long long)p->nodes);
		if (!p->turns_broken && p->turns >= 4)
			fprintf(f, "    two optimizers stepped in turn, each after its own backward "
				"(a GAN): a step is one optimizer's, an iteration two steps\n");
		if (calls > p->nsteps)
			fprintf(f, "    optimizer.step() calls: %llu; back-to-back calls with no "
				"module call or backward between them count as one step\n",
				(unsigned long long)calls);
		if (d && complete)
			fprintf(f, "    step time: median %.3f ms, p90 %.3f ms\n",
				(double)d[complete / 2] / 1e6,
				(double)d[(complete * 9) / 10 < complete ? (complete * 9) / 10 : complete - 1] / 1e6);
		free(d);
		np_print_checks(f, c, p);
		if (p->records_dropped || p->steps_dropped || p->events_dropped)
			fprintf(f, "    dropped: %llu detail records, %llu step counters, "
				"%llu events of %llu threads over the limit\n",
				(unsigned long long)p->records_dropped,
				(unsigned long long)p->steps_dropped,
				(unsigned long long)p->events_dropped,
				(unsigned long long)p->threads_dropped);
	}
	print_idle(c, f);
	np_print_verdict(f, c);
	if (s->on_nan && s->on_nan->fired)
		fprintf(f, "  --on-nan: sent %s to %u process%s at the first non-finite value\n",
			np_signal_name(s->on_nan->signo), s->on_nan->nsent,
			s->on_nan->nsent == 1 ? "" : "es");
	if (c->nprocs == 0)
		fprintf(f, "  warning: no python process was traced%s\n",
			strcmp(s->mode, "run") == 0 ? " (does the command run python?)" : "");
	uint64_t lost = s->counters[NP_CNT_RINGBUF_FULL];
	if (lost)
		fprintf(f, "  warning: %llu events lost (ring buffer full; try --ring-mb)\n",
			(unsigned long long)lost);
	if (s->counters[NP_CNT_STACK_OVERFLOW])
		fprintf(f, "  warning: %llu module calls nested deeper than %d were not traced\n",
			(unsigned long long)s->counters[NP_CNT_STACK_OVERFLOW], NP_MAX_STACK);
	if (c->procs_dropped)
		fprintf(f, "  warning: %llu processes not traced (over the limit)\n",
			(unsigned long long)c->procs_dropped);
}
