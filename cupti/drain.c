/* drain.c - reading and judging the check kernels' results (see drain.h). */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "../agent/report.h"
#include "../kernels/finite.h"
#include "../kernels/gpu_ring.h"
#include "defer.h"
#include "dirty.h"
#include "param_owners.h"
#include "grad_mode.h"
#include "drain.h"
#include "gpu.h"
#include "gpu_ctx.h"
#include "host_cost.h"
#include "inflight.h"
#include "kfunc.h"
#include "outmax.h"
#include "wide_inputs.h"
#include "write_queue.h"

struct np_gpu_counters np_gpu_cnt;
volatile int np_gpu_zoom;

static pthread_t thread;
static int running, stop_asked, tracker_ready;
static struct np_dirty tracker;
static uint64_t wide_lost;   /* judged without their inputs past the entry's */

/* tag -> the tag of the birth its non-finite value came from, and
 * whether that birth's first propagation was reported */
static struct lineage {
	uint64_t tag, birth;
	uint64_t last_sent_ns;     /* launch time of its last propagation sent */
	uint8_t sent;              /* propagation records sent for this birth */
	uint8_t nkernels;          /* kernels[] used */
	uint64_t kernels[NP_DRAIN_PROPAGATION_BURST]; /* the first kernels it was sent from,
						       * each with its module-call span */
} lineage[NP_DRAIN_LINEAGE];

/* reports per second: births, propagations */
static struct budget {
	uint64_t start_ns;
	uint32_t used, max;
} birth_budget = { .max = NP_DRAIN_BIRTHS_PER_SEC },
  prop_budget = { .max = NP_DRAIN_PROPAGATIONS_PER_SEC };

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct lineage *lineage_of(uint64_t tag)
{
	struct lineage *l = &lineage[tag % NP_DRAIN_LINEAGE];
	return l->tag == tag ? l : NULL;
}

/* A kernel's name, in pieces of 72 bytes, before its first report. */
static void send_name(struct np_kfunc *f)
{
	if (!f || f->reported)
		return;
	f->reported = 1;
	size_t n = strlen(f->name), piece = sizeof(((struct np_agent_rec *)0)->name.text);
	for (size_t off = 0, k = 0; off < n || k == 0; off += piece, k++) {
		struct np_agent_rec r;
		memset(&r, 0, sizeof(r));
		r.kind = NP_AREC_GPU_NAME;
		r.module = f->id;
		r.role = (uint8_t)k;
		size_t len = n - off < piece ? n - off : piece;
		memcpy(r.name.text, f->name + off, len);
		if (off + piece >= n)
			r.flags = NP_AF_LAST;
		np_report_send_gpu(&r);
	}
}

/* A kernel's output, or, for a module-level check's pseudo-function
 * (modules.c: its key, or a guard's key's low byte, is what it checked),
 * what the hook handed over. */
static uint8_t role_of(const struct np_kfunc *f)
{
	static const uint8_t roles[NP_GPU_WHAT_MAX] = {
		[NP_GPU_WHAT_OUTPUT] = NP_ROLE_OUTPUT, [NP_GPU_WHAT_GRAD] = NP_ROLE_GRAD,
		[NP_GPU_WHAT_PARAM_GRAD] = NP_ROLE_PARAM_GRAD, [NP_GPU_WHAT_PARAM] = NP_ROLE_PARAM,
		[NP_GPU_WHAT_ROOT] = NP_ROLE_ROOT,
	};
	uint64_t what = f ? (f->key & NP_KFUNC_PSEUDO ? f->key & 0xff : f->key) : 0;
	return what && what < NP_GPU_WHAT_MAX && roles[what] ? roles[what] : NP_ROLE_OUTPUT;
}

/* Devices whose contexts have their check resources (a model split over
 * several in one process), at most 255. */
static uint8_t devices_checked(void)
{
	int seen[NP_GPU_MAX_CTX], n = 0;
	for (int i = 0; i < np_gpu_ctx_count(); i++) {
		struct np_gpu_ctx *g = np_gpu_ctx_at(i);
		int k = 0;
		while (g && k < n && seen[k] != g->device)
			k++;
		if (g && k == n)
			seen[n++] = g->device;
	}
	return (uint8_t)n;
}

static void report(const struct np_gpu_rec *g, const struct np_inflight *e, uint64_t birth,
		   int propagated)
{
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_GPU_CHECK;
	r.role = role_of(np_kfunc_by_id(e->func));
	r.flags = (uint8_t)((propagated ? NP_AF_SOURCE_DIRTY : 0) |
			    (e->captured ? NP_AF_GRAPH : 0));
	r.dtype = (uint8_t)(g->dtype | (e->pairs ? NP_ADTYPE_PAIRS : 0));
	r.mode = e->mode;
	r.device = e->device;
	r.module = e->dl.stream;
	r.gpu.numel = g->numel;
	r.gpu.nan = g->nan;
	r.gpu.posinf = g->posinf;
	r.gpu.neginf = g->neginf;
	r.gpu.first_bad = g->first_bad;
	r.gpu.max_abs = np_magnitude((enum np_dtype)g->dtype, g->max_mag);
	r.gpu.launch_ns = e->launch_ns;
	r.gpu.launch_tid = e->tid;
	r.gpu.func = e->func;
	r.gpu.birth = birth;
	send_name(np_kfunc_by_id(e->func));
	np_report_send_gpu(&r);
	/* a birth in a parameter's memory (an optimizer's update): whose */
	uint64_t owner;
	char name[NP_PARAM_NAME];
	if (!propagated && np_param_owner_of(e->dl.out_ptr, &owner, name)) {
		memset(&r, 0, sizeof(r));
		r.kind = NP_AREC_GPU_PARAM;
		r.module = owner;
		r.gparam.birth = birth;
		memcpy(r.gparam.what, name, sizeof(r.gparam.what));
		np_report_send_gpu(&r);
	}
}

static int allowed(struct budget *b)
{
	uint64_t t = now_ns();
	if (t - b->start_ns > 1000000000ull) {
		b->start_ns = t;
		b->used = 0;
	}
	return b->used++ < b->max;
}

/* The first propagation of a birth into each of its first few kernels,
 * then one per gap of launch time: enough for nanprof to see the value
 * leave its module or phase, bounded for a value that spreads through
 * every kernel of every later step.  A kernel is counted once per span
 * of module calls (gpu.h): the add that carries the value out of its
 * module is reported though an add inside the module was already. */
static int propagation_due(struct lineage *b, uint64_t launch_ns, uint32_t func, uint32_t span)
{
	uint64_t key = (uint64_t)span << 32 | func;
	int new_kernel = b->nkernels < NP_DRAIN_PROPAGATION_BURST;
	for (int i = 0; new_kernel && i < b->nkernels; i++)
		new_kernel = b->kernels[i] != key;
	if (b->sent >= NP_DRAIN_PROPAGATIONS)
		return 0;
	if (b->sent && !new_kernel && launch_ns - b->last_sent_ns < NP_DRAIN_PROPAGATION_GAP_NS)
		return 0;
	if (!allowed(&prop_budget)) {
		np_gpu_cnt.reports_dropped++;
		return 0;
	}
	if (new_kernel)
		b->kernels[b->nkernels++] = key;
	b->sent++;
	b->last_sent_ns = launch_ns;
	return 1;
}

/* ---- writes no check saw (write_queue.h) ----
 *
 * A write is told to the tracker when the first result of a launch after
 * it on its stream is judged: results come back in launch order per
 * stream (held, below), so by then every earlier launch's result on that
 * stream has been judged, the copy's source included.  A write on a
 * stream with no checked launch after it (a side stream's copy, a batch
 * loaded on a copy stream) is told before the first later result that
 * reads what it wrote, with every write before it: a correctly
 * synchronised reader ran after the write, and the write after what it
 * copied, whose result is then in already.  Else it is told once
 * NP_DRAIN_WRITE_WAIT_NS old, at the next later result of any stream;
 * dirty.h's rules keep an earlier result arriving after it from undoing
 * it.  When full, the oldest is told at once. */
static struct np_wq_item pending[NP_DRAIN_WRITES];   /* in launch order */
static unsigned n_pending;

static void tell_write(const struct np_wq_item *w)
{
	uint64_t source;
	if (!w->src) {
		np_dirty_write(&tracker, w->lo, w->hi, w->order);
		return;
	}
	if (!np_dirty_copy(&tracker, w->lo, w->hi, w->src, w->whole, w->order, &source))
		return;   /* a clean source: told as a write */
	/* the copy holds its source's value: its readers propagate the
	 * source's birth */
	struct lineage *src = lineage_of(source);
	lineage[w->order % NP_DRAIN_LINEAGE] =
		(struct lineage){ .tag = w->order, .birth = src ? src->birth : source };
}

/* Takes what was posted; makes room by telling the oldest. */
static void take_writes(void)
{
	struct np_wq_item got[64];
	int n;
	while ((n = np_wq_take(got, 64)) > 0)
		for (int i = 0; i < n; i++) {
			if (n_pending == NP_DRAIN_WRITES) {
				tell_write(&pending[0]);
				memmove(pending, pending + 1, --n_pending * sizeof(pending[0]));
			}
			pending[n_pending++] = got[i];
		}
}

/* Does launch l read what w wrote: an input word in it, or an input's
 * extent (dirty.h's in_len) meeting it? */
static int reads_write(const struct np_dirty_launch *l, const struct np_wq_item *w)
{
	uint32_t kept = l->n_in < NP_DIRTY_MAX_INPUTS ? l->n_in : NP_DIRTY_MAX_INPUTS;
	for (uint32_t k = 0; k < kept; k++)
		if (l->in[k] < w->hi && (l->in[k] >= w->lo || l->in_len[k] > w->lo - l->in[k]))
			return 1;
	for (uint32_t k = 0; l->more_in && k < l->n_more; k++)
		if (l->more_in[k] >= w->lo && l->more_in[k] < w->hi)
			return 1;
	return 0;
}

/* Tells the writes due before the result of launch l is judged (NULL:
 * all of them, at stop). */
static void tell_writes_before(const struct np_dirty_launch *l)
{
	uint64_t order = l ? l->tag : UINT64_MAX;
	if (!n_pending || pending[0].order >= order)
		return;
	/* the latest write before l that l reads: it and all before it */
	unsigned read_upto = 0;   /* pending[0, read_upto) */
	for (unsigned i = 0; l && i < n_pending && pending[i].order < order; i++)
		if (reads_write(l, &pending[i]))
			read_upto = i + 1;
	uint64_t now = now_ns();
	unsigned kept = 0;
	for (unsigned i = 0; i < n_pending; i++) {
		const struct np_wq_item *w = &pending[i];
		if (w->order < order &&
		    (!l || w->stream == l->stream || i < read_upto ||
		     now - w->at_ns >= NP_DRAIN_WRITE_WAIT_NS))
			tell_write(w);
		else
			pending[kept++] = *w;
	}
	n_pending = kept;
}

static void judge(const struct np_gpu_rec *g)
{
	struct np_inflight e;
	if (np_inflight_get(g->tag, &e)) {
		__atomic_add_fetch(&np_gpu_cnt.lost, 1, __ATOMIC_RELAXED);
		return;
	}
	int dirty = g->nan || g->posinf || g->neginf;
	/* a module output's largest |x|, if a hook asked for it */
	if (!e.captured) {
		double m = np_magnitude((enum np_dtype)g->dtype, g->max_mag);
		np_outmax_result(g->tag, dirty || m > 3.4e38 ? INFINITY : (float)m);
	}
	/* inputs past the entry's (wide_inputs.h); not kept, or reused:
	 * judged on the entry's alone, and counted */
	static uint64_t more[NP_WIDE_MAX];
	if (e.wide_missing) {
		wide_lost++;
	} else if (e.wide) {
		int n = np_wide_get(e.wide, g->tag, more);
		if (n >= 0) {
			e.dl.more_in = more;
			e.dl.n_more = (uint32_t)n;
		} else {
			wide_lost++;
		}
	}
	tell_writes_before(&e.dl);
	/* where its first non-finite element lies: what a reader of the
	 * whole buffer must read to be its propagation (dirty.h) */
	e.dl.first_bad = g->first_bad >= 0 ? (uint64_t)g->first_bad *
						     np_dtype_size((enum np_dtype)g->dtype)
					   : NP_DIRTY_NO_BAD;
	struct np_dirty_why why;
	enum np_dirty_verdict v = np_dirty_result(&tracker, &e.dl, dirty, &why);
	if (v == NP_DIRTY_CLEAN)
		return;
	/* launches are named by their dirty-tracking number, dl.tag: what
	 * why.source_tag gives back, the tag itself but for captured checks
	 * (subscriber.c) */
	uint64_t me = e.dl.tag;
	struct lineage *mine = &lineage[me % NP_DRAIN_LINEAGE];
	if (v == NP_DIRTY_PROPAGATED) {
		/* a value that spreads, not a mask that is born and dies in
		 * place every step: sampling now checks every launch */
		np_gpu_zoom = 1;
		np_gpu_cnt.propagated++;
		struct lineage *src = lineage_of(why.source_tag);
		uint64_t birth = src ? src->birth : why.source_tag;
		*mine = (struct lineage){ .tag = me, .birth = birth };
		struct lineage *b = lineage_of(birth);
		if (b && propagation_due(b, e.launch_ns, e.func, e.span))
			report(g, &e, birth, 1);
		return;
	}
	np_gpu_cnt.births++;
	*mine = (struct lineage){ .tag = me, .birth = me };
	if (allowed(&birth_budget))
		report(g, &e, me, 0);
	else
		np_gpu_cnt.reports_dropped++;
}

static void send_counters(void)
{
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_STATUS;
	r.status = NP_AST_GPU_COUNTERS;
	r.cnt.checked = __atomic_load_n(&np_gpu_cnt.checks, __ATOMIC_RELAXED);
	r.cnt.bytes = __atomic_load_n(&np_gpu_cnt.bytes, __ATOMIC_RELAXED);
	r.cnt.skipped = __atomic_load_n(&np_gpu_cnt.undecoded, __ATOMIC_RELAXED);
	uint64_t ring_dropped = 0;
	for (int i = 0, n = np_gpu_ctx_count(); i < n; i++)
		if (np_gpu_ctx_at(i))
			ring_dropped += np_gpu_ctx_dropped(np_gpu_ctx_at(i));
	/* results that never came back; reports held back by the bounds go
	 * with the launch counters (over_budget) */
	r.cnt.dropped = __atomic_load_n(&np_gpu_cnt.lost, __ATOMIC_RELAXED) + ring_dropped;
	r.cnt.overflow = __atomic_load_n(&np_gpu_cnt.table_full, __ATOMIC_RELAXED) +
			 __atomic_load_n(&np_gpu_cnt.capture_skip, __ATOMIC_RELAXED) +
			 __atomic_load_n(&np_gpu_cnt.launch_failed, __ATOMIC_RELAXED);
	snprintf(r.cnt.what, sizeof(r.cnt.what), "launches %llu",
		 (unsigned long long)__atomic_load_n(&np_gpu_cnt.launches, __ATOMIC_RELAXED));
	np_report_send_gpu(&r);

	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_STATUS;
	r.status = NP_AST_GPU_LAUNCHES;
	r.launch.launches = __atomic_load_n(&np_gpu_cnt.launches, __ATOMIC_RELAXED);
	r.launch.sampled_out = __atomic_load_n(&np_gpu_cnt.sampled_out, __ATOMIC_RELAXED);
	r.launch.guard_checks = __atomic_load_n(&np_gpu_cnt.guard_checks, __ATOMIC_RELAXED);
	r.launch.guard_skips = __atomic_load_n(&np_gpu_cnt.guard_skips, __ATOMIC_RELAXED);
	r.launch.check_launches = __atomic_load_n(&np_gpu_cnt.check_launches, __ATOMIC_RELAXED);
	r.launch.generic_checks = __atomic_load_n(&np_gpu_cnt.generic_checks, __ATOMIC_RELAXED);
	r.launch.gemm_checks = __atomic_load_n(&np_gpu_cnt.gemm_checks, __ATOMIC_RELAXED);
	r.launch.triton_checks = __atomic_load_n(&np_gpu_cnt.triton_checks, __ATOMIC_RELAXED);
	r.launch.over_budget = np_gpu_cnt.reports_dropped;
	r.device = devices_checked();
	np_report_send_gpu(&r);

	struct np_hc_totals hc;
	np_hc_read(&hc);
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_STATUS;
	r.status = NP_AST_GPU_HOST_COST;
	r.host.launches = __atomic_load_n(&np_gpu_cnt.launches, __ATOMIC_RELAXED);
	r.host.timed = hc.callbacks.timed;
	r.host.timed_ns = hc.callbacks.ns;
	r.host.checks_timed = hc.checks.timed;
	r.host.check_ns = hc.checks.ns;
	r.host.every = NP_HC_EVERY;
	if (hc.callbacks.timed || hc.checks.timed)
		np_report_send_gpu(&r);

	if (np_defer_window()) {
		struct np_defer_counts dc;
		np_defer_counts(&dc);
		memset(&r, 0, sizeof(r));
		r.kind = NP_AREC_STATUS;
		r.status = NP_AST_GPU_DEFER;
		r.dfr.checks = dc.checks;
		r.dfr.launches = dc.launches;
		r.dfr.window = dc.flushes[NP_DEFER_WINDOW];
		r.dfr.full = dc.flushes[NP_DEFER_FULL];
		r.dfr.write = dc.flushes[NP_DEFER_WRITE];
		r.dfr.unknown = dc.flushes[NP_DEFER_UNKNOWN];
		r.dfr.memory = dc.flushes[NP_DEFER_MEMORY];
		r.dfr.order = dc.flushes[NP_DEFER_ORDER];
		r.dfr.now = dc.flushes[NP_DEFER_NOW];
		np_report_send_gpu(&r);
	}

	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_STATUS;
	r.status = NP_AST_GPU_TRACKER;
	r.trk.evicted = tracker.evicted;
	r.trk.forgotten = tracker.forgotten;
	r.trk.wide_lost = wide_lost;
	r.trk.writes = tracker.written;
	r.trk.copies = tracker.copied;
	r.trk.writes_lost = np_wq_lost();
	np_report_send_gpu(&r);

	/* coverage: the kernels whose outputs went unchecked most often */
	struct np_kfunc *top[NP_DRAIN_UNDECODED_TOP];
	int n = np_kfunc_top_undecoded(top, NP_DRAIN_UNDECODED_TOP);
	for (int i = 0; i < n; i++) {
		send_name(top[i]);
		memset(&r, 0, sizeof(r));
		r.kind = NP_AREC_STATUS;
		r.status = NP_AST_GPU_UNDECODED;
		r.undec.func = top[i]->id;
		r.undec.rank = (uint32_t)i;
		r.undec.launches = __atomic_load_n(&top[i]->undecoded, __ATOMIC_RELAXED);
		np_report_send_gpu(&r);
	}
}

/* The entries of one list launch (one launch's outputs; with checks
 * deferred, several launches', defer.h) push their results in any order,
 * and a consumer judged before its producer would look born.  So results
 * wait here, in launch order, until NP_DRAIN_HOLD_NS after they were
 * read, and are judged oldest launch first: a list's entries all finish
 * within one kernel.  (The fake driver runs a list's entries last first:
 * without the hold, clip_grad_norm_'s origin is lost.) */
static struct held {
	struct np_gpu_rec rec;
	uint64_t order;            /* its launch's place in launch order (dirty.h's
				    * dl.tag: a graph's check at capture, the generic
				    * tier's at the undecoded launch) */
	uint64_t at;               /* when it was read */
} held[NP_DRAIN_HOLD];
static unsigned n_held;

/* held[0..n) judged, the rest moved up. */
static void judge_held(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		judge(&held[i].rec);
	memmove(held, held + n, (n_held - n) * sizeof(held[0]));
	n_held -= n;
}

static void hold(const struct np_gpu_rec *r, uint64_t now)
{
	if (n_held == NP_DRAIN_HOLD)   /* full: the older half goes now, at once */
		judge_held(NP_DRAIN_HOLD / 2);
	struct np_inflight e;
	uint64_t order = np_inflight_get(r->tag, &e) ? r->tag : e.dl.tag;
	unsigned i = n_held++;
	for (; i && held[i - 1].order > order; i--)
		held[i] = held[i - 1];
	held[i] = (struct held){ *r, order, now };
}

/* Judges, in launch order, every held result up to the last one whose wait
 * is over (all of them if all): earlier launches' results go first. */
static void release(uint64_t now, int all)
{
	unsigned upto = 0;
	for (unsigned i = 0; i < n_held; i++)
		if (all || now - held[i].at >= NP_DRAIN_HOLD_NS)
			upto = i + 1;
	judge_held(upto);
}

/* One pass over every context's ring; how many results it took. */
static int drain_once(void)
{
	int took = 0, n = np_gpu_ctx_count();
	take_writes();   /* before the results: a write posted before a launch's
			  * result was read is in place when it is judged */
	uint64_t now = now_ns();
	for (int i = 0; i < n; i++) {
		struct np_gpu_ctx *g = np_gpu_ctx_at(i);
		if (!g)
			continue;
		struct np_gpu_rec rec;
		while (np_gpu_ring_pop(g->slots_host, g->ring.cap, (unsigned *)g->tail_host, &rec)) {
			g->ndrained++;
			took++;
			hold(&rec, now);
		}
	}
	if (n_held)
		release(now_ns(), 0);
	return took;
}

static void *drain_main(void *arg)
{
	uint64_t last_counters = now_ns();
	/* its driver calls (the ring's dropped count) are the agent's own:
	 * no flush of deferred checks from here (defer.h) */
	np_gpu_own(1);
	while (!__atomic_load_n(&stop_asked, __ATOMIC_ACQUIRE)) {
		np_grad_mode_resolve();   /* torch imported after CUDA started */
		if (!drain_once())
			usleep(NP_DRAIN_POLL_US);
		if (now_ns() - last_counters > NP_DRAIN_COUNTERS_MS * 1000000ull) {
			last_counters = now_ns();
			send_counters();
		}
	}
	return NULL;
}

int np_drain_start(void)
{
	if (running)
		return 0;
	if (!tracker_ready && np_dirty_init(&tracker, NP_DIRTY_DEFAULT_CAP))
		return -1;
	tracker_ready = 1;
	__atomic_store_n(&stop_asked, 0, __ATOMIC_RELEASE);
	if (pthread_create(&thread, NULL, drain_main, NULL))
		return -1;
	running = 1;
	return 0;
}

void np_drain_stop(int max_ms)
{
	if (!running)
		return;
	__atomic_store_n(&stop_asked, 1, __ATOMIC_RELEASE);
	pthread_join(thread, NULL);
	running = 0;
	/* what the GPU finishes meanwhile */
	for (int waited = 0; waited < max_ms; waited++) {
		if (!drain_once() && waited > 10)
			break;
		usleep(1000);
	}
	release(0, 1);
	take_writes();
	tell_writes_before(NULL);
	send_counters();
}
