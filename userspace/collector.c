#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collector.h"
#include "elfsym.h"
#include "findings.h"
#include "gpu_findings.h"
#include "log.h"
#include "proc.h"

/* ---- names ---- */

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;   /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

uint32_t np_intern(struct np_collector *c, const char *s)
{
	struct np_strtab *t = &c->names;
	uint64_t h = hash_str(s), id;
	size_t len = strlen(s);
	if (np_map_get(&t->index, h, len, &id) == 0 && strcmp(t->s[id], s) == 0)
		return (uint32_t)id;
	if (t->len >= t->max) {
		t->dropped++;
		return 0;
	}
	if (t->len == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 256;
		char **grown = realloc(t->s, cap * sizeof(*grown));
		if (!grown) {
			t->dropped++;
			return 0;
		}
		t->s = grown;
		t->cap = cap;
	}
	char *copy = strdup(s);
	if (!copy) {
		t->dropped++;
		return 0;
	}
	t->s[t->len] = copy;
	np_map_put(&t->index, h, len, t->len);
	return t->len++;
}

const char *np_name(const struct np_collector *c, uint32_t id)
{
	return id < c->names.len ? c->names.s[id] : "";
}

int np_collector_init(struct np_collector *c, const struct np_collector_opts *o)
{
	memset(c, 0, sizeof(*c));
	c->o = *o;
	c->names.max = 1 << 20;
	if (np_map_init(&c->names.index, c->names.max) ||
	    np_map_init(&c->module_names, 1 << 20) ||
	    np_map_init(&c->type_names, 1 << 18) || np_map_init(&c->node_types, 1 << 16) ||
	    np_map_init(&c->dropped_threads, 1 << 16) || np_map_init(&c->module_addrs, 1 << 20) ||
	    np_map_init(&c->agent_paths, 1 << 18))
		return -ENOMEM;
	c->procs = calloc(o->max_procs, sizeof(*c->procs));
	if (!c->procs)
		return -ENOMEM;
	np_intern(c, "");   /* id 0 */
	return 0;
}

void np_collector_free(struct np_collector *c)
{
	for (uint32_t i = 0; i < c->nprocs; i++) {
		struct np_proc_state *p = &c->procs[i];
		for (uint32_t b = 0; p->window && b < c->o.window; b++)
			free(p->window[b].recs);
		free(p->window);
		free(p->steps);
		free(p->threads);
		free(p->spans);
		np_findings_free(p);
	}
	free(c->procs);
	for (uint32_t i = 0; i < c->names.len; i++)
		free(c->names.s[i]);
	free(c->names.s);
	np_map_free(&c->names.index);
	np_map_free(&c->module_names);
	np_map_free(&c->type_names);
	np_map_free(&c->node_types);
	np_map_free(&c->dropped_threads);
	np_map_free(&c->module_addrs);
	np_map_free(&c->agent_paths);
}

/* ---- processes and threads ---- */

bool np_proc_worked(const struct np_proc_state *p)
{
	return p->nsteps || p->module_calls || p->nodes || p->ag.checked || p->gpu.checks ||
	       p->ag.found || p->ag.received || p->ag.nwarnings || p->records_dropped ||
	       p->steps_dropped || p->events_dropped;
}

struct np_proc_state *np_collector_proc(struct np_collector *c, pid_t pid)
{
	for (uint32_t i = 0; i < c->nprocs; i++)
		if (c->procs[i].pid == pid)
			return &c->procs[i];
	return NULL;
}

struct np_proc_state *np_collector_add_proc(struct np_collector *c,
					    const struct np_proc_info *info, int rank)
{
	struct np_proc_state *p = np_collector_proc(c, info->pid);
	if (p) {
		p->info = *info;
		return p;
	}
	if (c->nprocs >= c->o.max_procs) {
		c->procs_dropped++;
		return NULL;
	}
	p = &c->procs[c->nprocs];
	memset(p, 0, sizeof(*p));
	p->window = calloc(c->o.window, sizeof(*p->window));
	p->threads = calloc(c->o.max_threads, sizeof(*p->threads));
	p->spans = malloc(NP_MAX_SPANS * sizeof(*p->spans));
	if (!p->window || !p->threads || !p->spans) {
		free(p->window);
		free(p->threads);
		free(p->spans);
		c->procs_dropped++;
		return NULL;
	}
	c->nprocs++;
	p->pid = info->pid;
	p->rank = rank;
	p->info = *info;
	p->mem.read = np_pymem_read_pid;
	p->mem.ctx = (void *)(intptr_t)info->pid;
	p->mem.v = np_pyver_find(info->py_major, info->py_minor);
	p->cur.partial = c->attach_mode;
	return p;
}

static struct np_thread_state *thread_of(struct np_collector *c, struct np_proc_state *p,
					 uint32_t tid)
{
	for (uint32_t i = 0; i < p->nthreads; i++)
		if (p->threads[i].tid == tid)
			return &p->threads[i];
	if (p->nthreads >= c->o.max_threads) {
		/* count each thread once; its events are counted as dropped */
		uint64_t seen;
		if (np_map_get(&c->dropped_threads, (uint64_t)p->pid, tid, &seen)) {
			p->threads_dropped++;
			np_map_put(&c->dropped_threads, (uint64_t)p->pid, tid, 1);
		}
		return NULL;
	}
	struct np_thread_state *t = &p->threads[p->nthreads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	/* name it now: the thread may be gone when the trace is written */
	np_proc_thread_name(p->pid, (pid_t)tid, t->name, sizeof(t->name));
	return t;
}

const struct np_bucket *np_bucket_at(const struct np_collector *c,
				     const struct np_proc_state *p, uint32_t i)
{
	return &p->window[(p->wstart + i) % c->o.window];
}

/* The bucket of the step in progress, opened at its first record, so that
 * a step that never starts does not push a finished one out. */
static struct np_bucket *cur_bucket(struct np_collector *c, struct np_proc_state *p)
{
	if (!p->bucket_open) {
		if (p->wlen == c->o.window) {
			p->wstart = (p->wstart + 1) % c->o.window;   /* drop the oldest step */
		} else {
			p->wlen++;
		}
		struct np_bucket *b = &p->window[(p->wstart + p->wlen - 1) % c->o.window];
		b->len = 0;
		b->step = p->cur.step;
		p->bucket_open = true;
	}
	return &p->window[(p->wstart + p->wlen - 1) % c->o.window];
}

static void add_rec(struct np_collector *c, struct np_proc_state *p, const struct np_rec *r)
{
	struct np_bucket *b = cur_bucket(c, p);
	if (b->len >= c->o.max_records) {
		p->cur.dropped++;
		p->records_dropped++;
		return;
	}
	if (b->len == b->cap) {
		uint32_t cap = b->cap ? b->cap * 2 : 1024;
		if (cap > c->o.max_records)
			cap = c->o.max_records;
		struct np_rec *grown = realloc(b->recs, cap * sizeof(*grown));
		if (!grown) {
			p->cur.dropped++;
			p->records_dropped++;
			return;
		}
		b->recs = grown;
		b->cap = cap;
	}
	b->step = p->cur.step;
	b->recs[b->len++] = *r;
}

/* Steps that keep to two optimizers in turn (findings_out.c: iterations). */
static void track_turns(struct np_proc_state *p)
{
	uint64_t o = p->cur.optimizer;
	if (!o || p->turns_broken)
		return;   /* a step without an optimizer call (the last) says nothing */
	uint64_t k = p->turns;
	if (k < 2 && (k == 0 || o != p->turn[0]))
		p->turn[k] = o;
	else if (o != p->turn[k % 2])
		p->turns_broken = true;
	if (!p->turns_broken)
		p->turns++;
}

/* The step in progress is over (optimizer.step() returned, or the end). */
static void close_step(struct np_collector *c, struct np_proc_state *p, uint64_t ts,
		       bool complete)
{
	track_turns(p);
	p->cur.t1 = ts;
	p->cur.complete = complete;
	np_findings_step_end(c, p);
	if (p->nsteps >= c->o.max_steps) {
		p->steps_dropped++;
	} else {
		if (p->nsteps == p->steps_cap) {
			uint32_t cap = p->steps_cap ? p->steps_cap * 2 : 256;
			struct np_step_stats *grown = realloc(p->steps, cap * sizeof(*grown));
			if (grown) {
				p->steps = grown;
				p->steps_cap = cap;
			}
		}
		if (p->nsteps < p->steps_cap)
			p->steps[p->nsteps++] = p->cur;
		else
			p->steps_dropped++;
	}
	/* the step's backward is over: its forward spans are not needed any
	 * more, unless a module call is still open (then keep them all) */
	bool open = false;
	for (uint32_t k = 0; k < p->nthreads; k++)
		open |= p->threads[k].depth > 0;
	if (!open)
		p->nspans = 0;
	uint64_t next = p->cur.step + 1;
	memset(&p->cur, 0, sizeof(p->cur));
	p->cur.step = next;
	p->cur.t0 = ts;
	/* attached while a step ran: the next may also have begun before the
	 * backward probes went in, its backward unseen */
	p->cur.partial = c->attach_mode && ts < p->probes_ready_ns;
	p->bucket_open = false;   /* the next step's bucket opens with its first record */
}

static void phase_rec(struct np_collector *c, struct np_proc_state *p, uint32_t tid,
		      uint8_t phase, uint64_t t0, uint64_t t1)
{
	struct np_rec r = { .kind = NP_REC_PHASE, .phase = phase, .tid = tid,
			    .batch = p->batch, .step = p->cur.step, .t0 = t0, .t1 = t1 };
	add_rec(c, p, &r);
	if (phase == NP_PHASE_FORWARD)
		p->cur.fwd_ns += t1 - t0;
	else if (phase == NP_PHASE_BACKWARD)
		p->cur.bwd_ns += t1 - t0;
	else
		p->cur.opt_ns += t1 - t0;
}

/* The forward phase ends at the backward or the optimizer step after
 * it (now).  It ran until its outermost call returned, or, when that call
 * is still open (a learner whose forward runs the whole step), until now.
 * It ends a batch unless the backward is autograd.grad's (a gradient
 * penalty's, inside the batch: grads_only). */
static void close_forward(struct np_collector *c, struct np_proc_state *p, uint32_t tid,
			  uint64_t now, bool grads_only)
{
	if (!p->fwd_open)
		return;
	p->fwd_open = false;
	for (uint32_t k = 0; k < p->nthreads; k++)
		if (p->threads[k].tid == tid && p->threads[k].depth && now > p->fwd_t1)
			p->fwd_t1 = now;
	phase_rec(c, p, tid, NP_PHASE_FORWARD, p->fwd_t0, p->fwd_t1);
	if (!grads_only)
		p->cur.batches++;
}

static void close_group(struct np_collector *c, struct np_proc_state *p,
			struct np_thread_state *t)
{
	if (!t->group_open)
		return;
	t->group_open = false;
	struct np_rec r = { .kind = NP_REC_MODULE_BWD, .phase = NP_PHASE_BACKWARD, .tid = t->tid,
			    .batch = p->batch, .name = t->group_name, .module_type = t->group_type,
			    .step = p->cur.step, .t0 = t->group_t0, .t1 = t->group_t1 };
	add_rec(c, p, &r);
}

/* ---- naming ---- */

static uint32_t type_name(struct np_collector *c, pid_t pid, uint64_t type)
{
	uint64_t id;
	if (np_map_get(&c->type_names, (uint64_t)pid, type, &id) == 0)
		return (uint32_t)id;
	return np_intern(c, "?");
}

/* torch.compile(model) wraps the model in an OptimizedModule whose one
 * child is `_orig_mod`, the model: the model's own names (named_modules()
 * of what the user built) have no such part. */
static void drop_compile_wrapper(char *name)
{
	static const char part[] = "_orig_mod";
	const size_t n = sizeof(part) - 1;
	char *at = name;
	while ((at = strstr(at, part))) {
		bool starts = at == name || at[-1] == '.';
		if (!starts || (at[n] != '.' && at[n] != 0)) {
			at += n;
			continue;
		}
		if (at[n] != '.') {   /* the last part: the dot before it goes too */
			*(at == name ? at : at - 1) = 0;
			return;
		}
		memmove(at, at + n + 1, strlen(at + n + 1) + 1);
	}
}

/* The qualified name of `self` called from the module on top of the
 * thread's stack, as named_modules() of the outermost module names it. */
static uint32_t module_name(struct np_collector *c, struct np_proc_state *p,
			    struct np_thread_state *t, uint64_t parent, uint64_t self,
			    uint32_t type)
{
	uint64_t id;
	/* The outermost module is "", unless this module was seen called
	 * inside another under a name of its own: then it is a submodule
	 * called from outside its parent's forward, e.g. recomputed by
	 * reentrant checkpointing in backward, or called by the loop itself */
	if (!parent)
		return np_map_get(&c->module_addrs, (uint64_t)p->pid, self, &id) == 0 &&
		       (uint32_t)(id >> 32) == type ? (uint32_t)id : 0;
	uint64_t key2 = parent * 31 + self;
	if (np_map_get(&c->module_names, ((uint64_t)p->pid << 32) ^ parent, key2, &id) == 0)
		return (uint32_t)id;
	/* The caller's name is the thread's top frame only when that frame is
	 * the parent the probe saw.  It is not when nanprof attached inside
	 * the parent's call, or lost its entry: then say the caller is unknown
	 * and keep the name out of the cache, or a child named in the first
	 * partial step would keep that wrong prefix for the whole run. */
	bool caller_known = t->depth && t->depth <= NP_MAX_OPEN &&
			    t->stack[t->depth - 1].self == parent;
	const char *pname = caller_known ? np_name(c, t->stack[t->depth - 1].name) : "?";
	char path[384], full[512];
	int err = p->mem.v ? np_py_module_path(&p->mem, parent, self, 3, path, sizeof(path))
			   : -ENOTSUP;
	/* the process gone, or its model freed, before this event came: the
	 * path its agent reported at the parent's first return */
	if (err && np_map_get(&c->agent_paths, ((uint64_t)p->pid << 32) ^ parent, key2, &id) == 0) {
		snprintf(path, sizeof(path), "%s", np_name(c, (uint32_t)id));
		err = 0;
	}
	if (err) /* called but not registered under its caller: say so */
		snprintf(path, sizeof(path), "<%s>", np_name(c, type));
	snprintf(full, sizeof(full), "%s%s%s", pname, *pname ? "." : "", path);
	drop_compile_wrapper(full);
	id = np_intern(c, full);
	/* Nor in the attach's first, partial step: a caller whose own caller's
	 * entry came before the attach was named as an outermost call (""),
	 * and its children's names would keep the wrong prefix for good.
	 * Unregistered ones are retried later too: the dict may fill in. */
	if (!err && caller_known && !p->cur.partial)
		np_map_put(&c->module_names, ((uint64_t)p->pid << 32) ^ parent, key2, id);
	return (uint32_t)id;
}

void np_collector_agent_path(struct np_collector *c, const struct np_proc_state *p,
			     uint64_t parent, uint64_t child, const char *path)
{
	uint32_t id = np_intern(c, path);
	if (!id || np_map_put(&c->agent_paths, ((uint64_t)p->pid << 32) ^ parent,
			      parent * 31 + child, id))
		c->agent_paths_dropped++;
}

/* autograd node class from its vtable, e.g. "AddmmBackward0"; a Python
 * Function's from its Python class, e.g. "FlashAttnFuncBackward" */
uint32_t np_node_type_name(struct np_collector *c, struct np_proc_state *p, uint64_t vtable,
			   uint64_t pyclass)
{
	uint64_t id;
	if (pyclass) {   /* type objects and vtables never share an address */
		char text[128];
		if (np_map_get(&c->node_types, (uint64_t)p->pid, pyclass, &id) == 0)
			return (uint32_t)id;
		if (p->mem.v && np_py_type_name(&p->mem, pyclass, text, sizeof(text)) == 0) {
			id = np_intern(c, text);
			np_map_put(&c->node_types, (uint64_t)p->pid, pyclass, id);
			return (uint32_t)id;
		}
	}
	if (np_map_get(&c->node_types, (uint64_t)p->pid, vtable, &id) == 0)
		return (uint32_t)id;
	/* the probes' index of libtorch's symbols: building one here, in the
	 * middle of draining, would let short ranks exit unnamed */
	char name[128] = "Node";
	if (vtable && vtable == p->info.pynode_vtable)   /* libtorch_python's */
		snprintf(name, sizeof(name), "PyNode");
	const char *sym = p->info.torch_elf && vtable > p->info.torch_base
		? np_elf_sym_at(p->info.torch_elf, vtable - p->info.torch_base, "_ZTV") : NULL;
	if (sym) {
		/* _ZTVN5torch8autograd9generated14AddmmBackward0E: last component */
		const char *s = sym + 4;
		if (*s == 'N')
			s++;
		while (*s >= '0' && *s <= '9') {
			char *end;
			long n = strtol(s, &end, 10);
			if (n <= 0 || (size_t)n >= strlen(end) + 1)
				break;
			snprintf(name, sizeof(name), "%.*s", (int)n, end);
			s = end + n;
		}
	}
	id = np_intern(c, name);
	np_map_put(&c->node_types, (uint64_t)p->pid, vtable, id);
	return (uint32_t)id;
}

/* ---- events ---- */

static void on_mod_enter(struct np_collector *c, struct np_proc_state *p,
			 struct np_thread_state *t, const struct np_event *e)
{
	/* BPF depth of the new frame tells where we are: resync after lost exits */
	if (e->depth && e->depth - 1u < t->depth)
		t->depth = e->depth - 1u;
	uint32_t type = type_name(c, p->pid, e->b);
	uint32_t name = module_name(c, p, t, e->c, e->a, type);
	if (e->phase == NP_PHASE_FORWARD && t->depth == 0 && !p->fwd_open) {
		p->fwd_open = true;
		p->fwd_t0 = p->fwd_t1 = e->ts_ns;
	}
	uint32_t span = NP_NO_SPAN;
	if (e->d != NP_SEQ_UNKNOWN && p->nspans < NP_MAX_SPANS) {
		span = p->nspans++;
		p->spans[span] = (struct np_seq_span){
			.lo = e->d, .hi = NP_SEQ_UNKNOWN, .name = name, .type = type,
			.parent = t->depth && t->depth <= NP_MAX_OPEN ? t->stack[t->depth - 1].span
								      : NP_NO_SPAN };
	} else if (e->d != NP_SEQ_UNKNOWN) {
		p->spans_dropped++;
	}
	if (t->depth == 0)
		p->cur.root_calls++;
	if (t->depth < NP_MAX_OPEN)
		t->stack[t->depth] = (struct np_open_frame){ e->a, e->ts_ns, name, type,
							     e->step, e->batch, (uint8_t)e->phase,
							     span };
	t->depth++;
	np_gpu_context(p, e->ts_ns, t->tid, e->step, (uint8_t)e->phase, name, type);
	np_findings_module(c, p, e->a, name, type);
	p->module_calls++;
	p->cur.module_calls++;
}

static void on_mod_exit(struct np_collector *c, struct np_proc_state *p,
			struct np_thread_state *t, const struct np_event *e)
{
	/* BPF depth after the pop tells where we are; resync on a loss */
	uint32_t d = e->depth;
	if (t->depth <= d)
		return;   /* its entry was lost */
	t->depth = d;
	if (d >= NP_MAX_OPEN)
		return;
	struct np_open_frame *f = &t->stack[d];
	/* back in the caller's module (or in none) */
	np_gpu_context(p, e->ts_ns, t->tid, f->step, f->phase, d ? t->stack[d - 1].name : 0,
		       d ? t->stack[d - 1].type : 0);
	if (f->span != NP_NO_SPAN && f->span < p->nspans)
		p->spans[f->span].hi = e->d;
	struct np_rec r = { .kind = NP_REC_MODULE, .phase = f->phase, .depth = (uint16_t)d,
			    .tid = t->tid, .batch = f->batch, .name = f->name, .type = f->type,
			    .step = f->step, .t0 = f->t0, .t1 = e->ts_ns };
	add_rec(c, p, &r);
	if (d == 0 && f->phase == NP_PHASE_FORWARD)
		p->fwd_t1 = e->ts_ns;
	if (d == 0)
		np_findings_root_exit(c, p);
}

/* ---- backward: nodes and the forward modules that created them ---- */

/* The innermost module whose forward created the node with sequence
 * number seq: the last span begun at or before seq, or the first of its
 * ancestors still open at seq (spans nest, so one of them holds it). */
static int module_of_seq(const struct np_proc_state *p, uint64_t seq, uint32_t *name,
			 uint32_t *type)
{
	if (seq == NP_SEQ_UNKNOWN || p->nspans == 0)
		return -ENOENT;
	uint32_t lo = 0, hi = p->nspans;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (p->spans[mid].lo <= seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (uint32_t k = lo; k-- > 0;) {
		const struct np_seq_span *sp = &p->spans[k];
		if (seq < sp->hi) {
			*name = sp->name;
			*type = sp->type;
			return 0;
		}
		if (sp->parent == NP_NO_SPAN)
			break;
		k = sp->parent + 1;   /* the loop's k-- lands on the parent */
	}
	return -ENOENT;
}

/* How many Python Function nodes are searched for their Python object
 * before giving up (each may be gone by the time its event is read) */
#define PYNODE_TRIES 64

/* A Python Function's node: its class.  BPF reads it at the node's entry
 * once it knows where PyNode keeps its object; until then that place is
 * searched for here, on a node that may still be alive, and handed to
 * BPF (np_session_tick). */
static uint64_t pynode_class(struct np_proc_state *p, const struct np_event *e)
{
	if (!p->info.pynode_vtable || e->b != p->info.pynode_vtable)
		return 0;
	if (e->c || !p->mem.v)
		return e->c;
	uint32_t off;
	uint64_t pyclass, obj;
	if (p->info.pynode_obj)   /* BPF did not know yet, or could not read it */
		return p->mem.read(p->mem.ctx, e->a + p->info.pynode_obj, &obj, sizeof(obj)) == 0
			? np_py_function_class(&p->mem, obj) : 0;
	if (p->pynode_tries >= PYNODE_TRIES)
		return 0;
	p->pynode_tries++;
	if (np_py_find_function_obj(&p->mem, e->a, 1024, &off, &pyclass))
		return 0;
	p->info.pynode_obj = off;
	return pyclass;
}

/* A node ends where the next one on its thread begins, or at the end of
 * the backward pass: the probe sees node entries only. */
static void close_node(struct np_collector *c, struct np_proc_state *p,
		       struct np_thread_state *t, uint64_t ts)
{
	if (!t->in_node)
		return;
	t->in_node = false;
	t->group_t1 = ts;
	struct np_rec r = { .kind = NP_REC_NODE, .phase = NP_PHASE_BACKWARD, .tid = t->tid,
			    .batch = p->batch, .name = t->node_name,
			    .type = np_node_type_name(c, p, t->node_vt, t->node_pyclass),
			    .module_type = t->node_module_type,
			    .step = p->cur.step,
			    .t0 = t->node_t0, .t1 = ts, .seq = t->node_seq };
	add_rec(c, p, &r);
	p->nodes++;
	p->cur.nodes++;
}

static void on_node(struct np_collector *c, struct np_proc_state *p,
		    struct np_thread_state *t, const struct np_event *e)
{
	close_node(c, p, t, e->ts_ns);
	uint32_t name, type = 0;
	bool known = module_of_seq(p, e->d, &name, &type) == 0;
	/* nodes of no forward module (AccumulateGrad of a parameter) do
	 * not split the group of the module around them */
	if (!t->group_open || (known && t->group_name != name)) {
		close_group(c, p, t);
		t->group_open = true;
		t->group_t0 = e->ts_ns;
		t->group_name = known ? name : np_intern(c, "<no module>");
		t->group_type = known ? type : 0;
	}
	t->in_node = true;
	t->node_t0 = e->ts_ns;
	t->node_name = known ? name : np_intern(c, "<none>");
	t->node_module_type = known ? type : 0;
	t->node_seq = e->d;
	t->node_vt = e->b;
	t->node_pyclass = pynode_class(p, e);
	np_gpu_context(p, e->ts_ns, t->tid, e->step, NP_PHASE_BACKWARD, t->node_name,
		       t->node_module_type);
}

/* optimizer.step() returning ends a step once work follows (a module
 * call, a backward pass).  Another optimizer.step() before any joins the
 * step: jobs that step two optimizers back to back (Muon + AdamW, sparse +
 * dense) train one iteration per step, as they count.  A step(closure)
 * runs its work inside, so a call that joined is split off again when work
 * starts in it.  BPF counts every call: events after a join are shifted. */
static void settle_step(struct np_collector *c, struct np_proc_state *p,
			const struct np_event *e)
{
	if (!p->end_pending)
		return;
	bool work = e->kind == NP_EV_MOD_ENTER || e->kind == NP_EV_BWD_ENTER;
	uint64_t step = e->step >= p->step_shift ? e->step - p->step_shift : 0;
	if (e->kind == NP_EV_OPT_ENTER && !p->joining && step == p->cur.step + 1) {
		p->joining = true;
		p->step_shift++;
		return;
	}
	if (!work && step <= p->cur.step)
		return;
	if (p->joining) {
		p->joining = false;
		p->step_shift--;
	}
	p->end_pending = false;
	close_step(c, p, p->end_ts, true);
}

/* e with its step shifted by the optimizer calls joined so far (in *copy;
 * a bulk event's records are copied only as far as they go). */
static const struct np_event *shifted(const struct np_proc_state *p, const struct np_event *e,
				      struct np_bulk_event *copy)
{
	if (!p->step_shift)
		return e;
	size_t n = sizeof(struct np_event);
	if (e->kind == NP_EV_AGENT_BULK) {
		const struct np_bulk_event *b = (const struct np_bulk_event *)e;
		n = offsetof(struct np_bulk_event, data) +
		    (b->len < NP_AGENT_BULK_MAX ? b->len : NP_AGENT_BULK_MAX);
	}
	memcpy(copy, e, n);
	copy->step = e->step >= p->step_shift ? e->step - p->step_shift : 0;
	return (const struct np_event *)copy;
}

static void dispatch(struct np_collector *c, struct np_proc_state *p,
		     struct np_thread_state *t, const struct np_event *e);

uint64_t np_collector_calls_ago(const struct np_proc_state *p, uint64_t calls)
{
	if (calls > p->raw_step)
		return 0;
	uint64_t raw = p->raw_step - calls;
	if (p->joined[raw % NP_JOIN_HIST].raw == raw)
		return p->joined[raw % NP_JOIN_HIST].step;
	uint64_t now = p->raw_step - p->step_shift;   /* older: as if none joined */
	return now >= calls ? now - calls : 0;
}

void np_collector_event(struct np_collector *c, const struct np_event *e)
{
	c->events++;
	struct np_proc_state *p = np_collector_proc(c, (pid_t)e->pid);
	if (!p)
		return;
	if (!c->first_ts)
		c->first_ts = e->ts_ns;
	if (!p->first_ts) {
		p->first_ts = e->ts_ns;
		p->cur.t0 = e->ts_ns;
		p->cur.step = e->step;
	}
	p->last_ts = e->ts_ns;
	if (e->kind == NP_EV_TYPE_NAME) {
		char name[NP_TYPE_NAME_LEN + 1];
		memcpy(name, e->name, NP_TYPE_NAME_LEN);
		name[NP_TYPE_NAME_LEN] = 0;
		/* "torch.nn.modules.linear.Linear" for static types: keep the last part */
		const char *dot = strrchr(name, '.');
		np_map_put(&c->type_names, (uint64_t)p->pid, e->a, np_intern(c, dot ? dot + 1 : name));
		return;
	}
	if (e->kind == NP_EV_PROC_EXIT) {
		p->exited = true;
		return;
	}
	settle_step(c, p, e);
	struct np_thread_state *t = thread_of(c, p, e->tid);
	if (!t) {
		p->events_dropped++;
		return;
	}
	p->raw_step = e->step;
	p->joined[e->step % NP_JOIN_HIST].raw = e->step;
	p->joined[e->step % NP_JOIN_HIST].step = e->step >= p->step_shift ? e->step - p->step_shift : 0;
	static struct np_bulk_event copy;   /* the collector runs on one thread */
	dispatch(c, p, t, shifted(p, e, &copy));
}

static void dispatch(struct np_collector *c, struct np_proc_state *p,
		     struct np_thread_state *t, const struct np_event *e)
{
	p->batch = e->batch;
	switch (e->kind) {
	case NP_EV_MOD_ENTER:
		on_mod_enter(c, p, t, e);
		break;
	case NP_EV_MOD_EXIT:
		on_mod_exit(c, p, t, e);
		break;
	case NP_EV_BWD_ENTER:
		close_forward(c, p, e->tid, e->ts_ns, e->a != 0);
		if (p->bwd_depth++ == 0)
			p->bwd_t0 = e->ts_ns;
		np_gpu_context(p, e->ts_ns, t->tid, e->step, NP_PHASE_BACKWARD, 0, 0);
		break;
	case NP_EV_BWD_EXIT:
		/* nodes may run on libtorch's device threads, not the caller's */
		for (uint32_t k = 0; k < p->nthreads; k++) {
			close_node(c, p, &p->threads[k], e->ts_ns);
			close_group(c, p, &p->threads[k]);
		}
		if (p->bwd_depth && --p->bwd_depth == 0)
			phase_rec(c, p, e->tid, NP_PHASE_BACKWARD, p->bwd_t0, e->ts_ns);
		for (uint32_t k = 0; k < p->nthreads; k++)
			np_gpu_context(p, e->ts_ns, p->threads[k].tid, e->step, NP_PHASE_NONE, 0, 0);
		if (p->opt_t0 && !p->bwd_depth) {
			/* the backward of optimizer.step(closure)'s closure: the
			 * optimizer's own part (the update) starts now, so that
			 * the phases follow each other, not nest */
			p->opt_t0 = e->ts_ns;
			np_gpu_context(p, e->ts_ns, t->tid, e->step, NP_PHASE_OPTIMIZER, 0, 0);
		}
		break;
	case NP_EV_NODE_ENTER:
		on_node(c, p, t, e);
		break;
	case NP_EV_AGENT:
		np_findings_record(c, p, t, e);
		break;
	case NP_EV_AGENT_BULK:
		np_findings_stats(c, p, (const struct np_bulk_event *)e);
		break;
	case NP_EV_OPT_ENTER:
		close_forward(c, p, e->tid, e->ts_ns, false);
		p->opt_t0 = e->ts_ns;
		np_gpu_context(p, e->ts_ns, t->tid, e->step, NP_PHASE_OPTIMIZER, 0, 0);
		break;
	case NP_EV_OPT_EXIT:
		/* no phase if its entry was lost (ring buffer full) */
		if (p->opt_t0)
			phase_rec(c, p, e->tid, NP_PHASE_OPTIMIZER, p->opt_t0, e->ts_ns);
		p->opt_t0 = 0;
		np_gpu_context(p, e->ts_ns, t->tid, e->step, NP_PHASE_NONE, 0, 0);
		p->cur.opt_calls++;
		p->end_pending = true;   /* ends at the next work (settle_step) */
		p->joining = false;
		p->end_ts = e->ts_ns;
		break;
	default:
		c->unknown_events++;
	}
}

void np_collector_finish(struct np_collector *c)
{
	for (uint32_t i = 0; i < c->nprocs; i++) {
		struct np_proc_state *p = &c->procs[i];
		if (!p->first_ts)
			continue;
		close_forward(c, p, (uint32_t)p->pid, p->last_ts, false);
		for (uint32_t k = 0; k < p->nthreads; k++) {
			close_node(c, p, &p->threads[k], p->last_ts);
			close_group(c, p, &p->threads[k]);
		}
		if (p->end_pending) {
			p->end_pending = false;
			close_step(c, p, p->end_ts, true);
		}
		/* keep the step in progress only if something happened in it */
		if (p->cur.module_calls || p->cur.nodes || p->bucket_open)
			close_step(c, p, p->last_ts, false);
		np_findings_finish(c, p);
	}
}
