/* hooks.c - what torch calls, and what it checks (see hooks.h).
 *
 * Forward: the global forward hook checks every module's outputs; only
 * when one is non-finite does it check the inputs too, to tell an origin
 * (inputs finite) from propagation.
 * Backward: before each backward pass the graph is walked from its roots
 * and a post-hook put on every node; the hook checks the gradients the
 * node produced and, if one is non-finite, those it received.  Which
 * module and op the node belongs to, nanprof knows from its BPF probes.
 * Optimizer: before step() the parameters' .grad are checked and their
 * squares summed (gradient norms); after it the parameters themselves.
 * CUDA tensors among all these are skipped, unless the GPU side checks
 * at module level (cupti/gpu.h: CUPTI taken, or asked for): then each is
 * handed to it with the tensors it was made from, and judged there.
 *
 * Tables are fixed-size; what does not fit is counted and reported.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bad_spread.h"
#include "birth_op.h"
#include "gpu_norms.h"
#include "hooks.h"
#include "module_paths.h"
#include "report.h"
#include "scaler.h"
#include "tensor.h"
#include "update_cause.h"
#include "../cupti/gpu.h"
#include "../cupti/outmax.h"
#include "../cupti/param_owners.h"

#define MOD_SLOTS 16384          /* modules with statistics (power of 2) */
#define PARAM_SLOTS 65536        /* parameters with a known owner */
#define NODE_SLOTS 65536         /* nodes hooked in one backward pass */
#define WALK_STACK 65536
#define REPORTS_PER_STEP 64      /* non-finite reports per step */

struct mod_slot {
	uint64_t key;                /* nn.Module address; 0 = free */
	uint32_t gen;                /* step generation of the statistics */
	float out_max;               /* of its CPU outputs; NAN: none */
	int cuda_out;                /* CUDA outputs too: out_max goes late, with
				      * theirs (cupti/outmax.h) */
	double grad_sumsq;
	uint8_t spreads;             /* births of its output given a SPREAD record
				      * and an op search (agent/birth_op.h) */
	uint8_t mask_spreads;        /* the same for births of -Inf only (a mask
				      * the module makes every step: they do not
				      * use up a later NaN's) */
};

struct param_slot {
	uint64_t key;                /* Parameter address */
	uint64_t module;
	char name[24];
};

static struct mod_slot mods[MOD_SLOTS];
static struct param_slot params[PARAM_SLOTS];
static uint64_t nodes[NODE_SLOTS];
static uint32_t nodes_walk[NODE_SLOTS];   /* which walk the entry is of */
static uint32_t walk_gen;
static PyObject *walk_stack[WALK_STACK];
/* Nodes visited by the walk in progress, held until it ends: torch makes
 * a Python object for a C++ node on demand and frees it with its last
 * reference, so a freed one's address could come back for the next
 * node and look visited. */
static PyObject *visited[NODE_SLOTS];
static uint32_t gen = 1;                 /* bumped at each optimizer step */
static struct mod_slot *touched[MOD_SLOTS];   /* modules with statistics this step */
static uint32_t ntouched;
static uint32_t reports_this_step;
static uint32_t spreads_this_step;       /* SPREAD records (bad_spread.h) */
static int counters_this_step;           /* counters sent with a CHECK record */
static int beyond_masks;                 /* anything non-finite seen this step
					  * but forward outputs of -Inf only (a
					  * mask a module returns every step):
					  * what SOURCE_DIRTY is judged by */
static int enabled;
/* NANPROF_AGENT_SKIP=bodies (benchmarks only): every hook stays
 * installed but returns at once, so a benchmark measures what torch's
 * hook machinery costs by itself, the floor of this design. */
static int bodies_off;
/* Installed by an attach, in the middle of a step: until that step ends,
 * a parameter's .grad holds gradients the hooks did not see made. */
static int mid_step;
static uint64_t dropped, overflow;
static PyObject *accumulate_grad_type;
static PyObject *post_hook_fn;

static inline uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	return k ^ (k >> 33);
}

static struct mod_slot *mod_get(uint64_t key, int *fresh)
{
	uint32_t h = (uint32_t)mix(key) & (MOD_SLOTS - 1);
	for (uint32_t i = 0; i < 64; i++, h = (h + 1) & (MOD_SLOTS - 1)) {
		if (mods[h].key == key) {
			*fresh = 0;
			return &mods[h];
		}
		if (!mods[h].key) {
			mods[h].key = key;
			*fresh = 1;
			return &mods[h];
		}
	}
	overflow++;
	return NULL;
}

/* Statistics of m start over in each step; m joins this step's list. */
static void touch(struct mod_slot *m)
{
	if (m->gen == gen)
		return;
	m->gen = gen;
	m->out_max = NAN;   /* until a CPU output is seen: CUDA ones come late */
	m->cuda_out = 0;
	m->grad_sumsq = 0;
	touched[ntouched++] = m;   /* at most one entry per slot: never overflows */
}

static struct param_slot *param_get(uint64_t key, int create)
{
	uint32_t h = (uint32_t)mix(key) & (PARAM_SLOTS - 1);
	for (uint32_t i = 0; i < 64; i++, h = (h + 1) & (PARAM_SLOTS - 1)) {
		if (params[h].key == key)
			return &params[h];
		if (!params[h].key) {
			if (!create)
				return NULL;
			params[h].key = key;
			return &params[h];
		}
	}
	if (create)
		overflow++;
	return NULL;
}

struct np_tensor_check;
static void output_op(PyObject *t, char *buf, size_t len);

static void send_check(uint8_t role, uint8_t phase, uint8_t flags, uint64_t module,
		       const struct np_tensor_check *c, const char *what, PyObject *t);
static inline int bad(const struct np_tensor_check *c);
static void step_bounds_reset(void);

/* First sight of a module: the parameters it owns, so that a gradient
 * norm or a bad parameter can be put on it.  Children that run are seen
 * first (hooks fire innermost first) and claim their own; what is left
 * under this module belongs to children that never run as modules (MHA's
 * out_proj, used functionally), and so to this one. */
static void index_params(PyObject *module, PyObject *owner, int depth)
{
	PyObject *d = np_py_dict_attr(module, np_n._parameters);
	ptrdiff_t pos = 0;
	PyObject *k, *v;
	while (d && np_py.Dict_Next(d, &pos, &k, &v)) {
		if (!np_is_tensor(v))
			continue;
		struct param_slot *s = param_get((uint64_t)(uintptr_t)v, 1);
		if (!s || s->module)
			continue;   /* shared, or a child's: the first claim holds */
		s->module = (uint64_t)(uintptr_t)owner;
		const char *n = np_py.Unicode_AsUTF8(k);
		strncpy(s->name, n ? n : "?", sizeof(s->name) - 1);
		/* non-finite before we ever looked: born before an attach */
		struct np_tensor_check c;
		if (np_tensor_check(v, &c) == 1 && bad(&c))
			send_check(NP_ROLE_PARAM, NP_APHASE_FORWARD,
				   NP_AF_SOURCE_DIRTY | NP_AF_PREEXISTING, s->module, &c, s->name,
				   v);
	}
	np_py_xdecref(d);
	if (depth < 8 && (d = np_py_dict_attr(module, np_n._modules))) {
		pos = 0;
		while (np_py.Dict_Next(d, &pos, &k, &v))
			if (v != np_py.None)
				index_params(v, owner, depth + 1);
		np_py.DecRef(d);
	}
	if (np_py.Err_Occurred())
		np_py_err_clear();
}

/* A non-finite parameter that `owner` reads (its own, or one of a
 * child that never runs as a module: index_params), into *c, and its
 * path from owner into path ("weight"; "blocks.1.lin.weight" for a
 * torch.compile'd model, whose children never run as modules, without
 * "_orig_mod."; the tail of a longer one); NULL when all are finite.
 * Run at a module's births only: every parameter is checked after each
 * optimizer.step(), so one found here was written by code outside the
 * optimizer. */
static PyObject *bad_param(PyObject *module, PyObject *owner, int depth, const char *prefix,
			   struct np_tensor_check *c, char *path, size_t len)
{
	PyObject *found = NULL, *k, *v, *d = np_py_dict_attr(module, np_n._parameters);
	ptrdiff_t pos = 0;
	while (!found && d && np_py.Dict_Next(d, &pos, &k, &v)) {
		if (!np_is_tensor(v))
			continue;
		struct param_slot *s = param_get((uint64_t)(uintptr_t)v, 0);
		/* its own, even when another module claimed them first
		 * (tied weights); a child's only when unclaimed by the child */
		if (s && (!depth || s->module == (uint64_t)(uintptr_t)owner) &&
		    np_tensor_check(v, c) == 1 && bad(c)) {
			found = v;   /* borrowed: the module holds it */
			const char *n = np_py.Unicode_AsUTF8(k);
			char full[256];
			snprintf(full, sizeof(full), "%s%s", prefix, n ? n : "?");
			size_t flen = strlen(full), room = len - 1;
			if (flen <= room) {
				memcpy(path, full, flen + 1);
			} else {   /* "..lin.weight": the end says most */
				memcpy(path, "..", 2);
				memcpy(path + 2, full + flen - (room - 2), room - 2 + 1);
			}
		}
	}
	np_py_xdecref(d);
	if (!found && depth < 8 && (d = np_py_dict_attr(module, np_n._modules))) {
		pos = 0;
		while (!found && np_py.Dict_Next(d, &pos, &k, &v)) {
			const char *n = np_py.Unicode_AsUTF8(k);
			if (v == np_py.None || !n)
				continue;
			char sub[256];
			if (strcmp(n, "_orig_mod") == 0)   /* torch.compile's wrapper */
				snprintf(sub, sizeof(sub), "%s", prefix);
			else
				snprintf(sub, sizeof(sub), "%s%s.", prefix, n);
			found = bad_param(v, owner, depth + 1, sub, c, path, len);
		}
		np_py.DecRef(d);
	}
	if (np_py.Err_Occurred())
		np_py_err_clear();
	return found;
}

/* An autograd node's name too long for the record ("CompiledFunction-
 * Backward") loses its "Backward..." tail: nanprof names the forward op
 * from what comes before it. */
static void copy_what(char *dst, size_t len, const char *what)
{
	/* "torch::autograd::CopySlices" (an in-place write into a slice):
	 * the class, not its namespace, or 23 bytes hold only the latter */
	const char *ns = strrchr(what, ':');
	if (ns && ns[1])
		what = ns + 1;
	size_t n = strlen(what);
	const char *tail = n >= len ? strstr(what, "Backward") : NULL;
	if (tail)
		n = (size_t)(tail - what);
	if (n >= len)
		n = len - 1;
	memcpy(dst, what, n);
	dst[n] = 0;
}

/* Where a born value lies in its tensor (agent/bad_spread.h): a SPREAD
 * record, sent just before the tensor's CHECK record.  Births only (a
 * few per run), SPREADS_PER_STEP a step and SPREADS_PER_MODULE per
 * module (fwd_hook). */
#define SPREADS_PER_STEP 4
#define SPREADS_PER_MODULE 2
#define SPREAD_SCAN (4u << 20)   /* elements walked one by one: ~20 ms at most */

/* skip_neginf: where its NaN lie, not its -Inf (bad_spread.h no_neginf) */
/* -Inf and nothing else: what a mask holds (log-probabilities of invalid
 * actions, an additive attention mask) */
static int mask_only(const struct np_check_result *r)
{
	return r->neginf && !r->nan && !r->posinf;
}

static void send_spread(PyObject *t, int skip_neginf)
{
	struct np_tensor_view v;
	struct np_spread_in in = { .skip_neginf = (uint8_t)skip_neginf };
	struct np_spread sp;
	if (!t || spreads_this_step >= SPREADS_PER_STEP || np_tensor_view(t, &v) != 1 ||
	    np_tensor_shape(t, &in.ndim, in.shape, in.stride, NP_SPREAD_DIMS))
		return;
	in.dtype = (enum np_dtype)v.dtype;
	in.base = v.ptr;
	in.numel = v.pairs ? v.numel / 2 : v.numel;
	if (v.pairs && np_spread_as_real(&in))
		return;   /* complex: [..., 2] of real and imaginary parts */
	if (np_bad_spread_broadcast(&in, SPREAD_SCAN, &sp))
		return;
	spreads_this_step++;
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_SPREAD;
	r.ndim = sp.ndim;
	r.flags = (sp.partial ? NP_AF_PARTIAL : 0) | (sp.no_neginf ? NP_AF_NO_NEGINF : 0);
	r.dtype = v.dtype | (v.pairs ? NP_ADTYPE_PAIRS : 0);
	memcpy(r.spread.size, sp.size, sizeof(r.spread.size));
	memcpy(r.spread.bad, sp.bad, sizeof(r.spread.bad));
	memcpy(r.spread.first, sp.first, sizeof(r.spread.first));
	np_report_send(&r);
}

/* t: the tensor itself when the hook has it, for where a birth lies */
static void send_check(uint8_t role, uint8_t phase, uint8_t flags, uint64_t module,
		       const struct np_tensor_check *c, const char *what, PyObject *t)
{
	/* a mask returned, or received by the next module: -Inf only */
	if (!((role == NP_ROLE_OUTPUT || role == NP_ROLE_INPUT) && phase == NP_APHASE_FORWARD &&
	      mask_only(&c->r)))
		beyond_masks = 1;
	if (reports_this_step >= REPORTS_PER_STEP) {
		dropped++;
		return;
	}
	reports_this_step++;
	if (!(flags & NP_AF_SOURCE_DIRTY) || (flags & NP_AF_CONST_INPUT))
		send_spread(t, c->r.nan && c->r.neginf && !c->r.posinf);
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_CHECK;
	r.role = role;
	r.phase = phase;
	r.flags = flags;
	r.dtype = c->dtype | (c->pairs ? NP_ADTYPE_PAIRS : 0);
	r.module = module;
	if (phase == NP_APHASE_FORWARD)
		r.mode = np_grad_mode();
	/* an expanded tensor's counts are of the values it stores, each
	 * standing for c->repeat of its elements */
	uint64_t rep = c->repeat ? c->repeat : 1;
	r.chk.numel = c->numel * rep;
	r.chk.nan = c->r.nan * rep;
	r.chk.posinf = c->r.posinf * rep;
	r.chk.neginf = c->r.neginf * rep;
	r.chk.first_bad = c->r.first_bad;
	r.chk.max_abs = c->r.max_abs;
	if (what)
		copy_what(r.chk.what, sizeof(r.chk.what), what);
	np_report_send(&r);
	/* and the counters, once a step: a job killed at its first NaN
	 * (--on-nan signal:TERM) runs no atexit to send its last ones */
	if (!counters_this_step) {
		counters_this_step = 1;
		np_hooks_send_counters();
	}
}

/* a step's bounds start again (and nothing is non-finite in it yet) */
static void step_bounds_reset(void)
{
	reports_this_step = 0;
	spreads_this_step = 0;
	np_birth_op_step();
	counters_this_step = 0;
	beyond_masks = 0;
}

static inline int bad(const struct np_tensor_check *c)
{
	return c->r.nan || c->r.posinf || c->r.neginf;
}

/* Every hook returns through here: None, with no Python error left for
 * torch to see.  An error that got this far is unexpected; after
 * HOOK_ERRORS of them the agent switches itself off (and says so): a
 * broken agent costs its checks, never the job.  A KeyboardInterrupt
 * or SystemExit that a signal's handler raised while the hook ran
 * Python code is the job's, not an error: it is raised again, from the
 * hook, so that Ctrl-C (or --on-nan signal:INT) stops the job. */
#define HOOK_ERRORS 100
static unsigned hook_errors;

static PyObject *hook_done(void)
{
	if (np_py.Err_Occurred()) {
		int own = np_py.Err_ExceptionMatches(*np_py.Exc_Exception);
		np_py_err_clear();
		if (own && ++hook_errors == HOOK_ERRORS && enabled) {
			enabled = 0;
			np_report_status(NP_AST_DISABLED, "too many errors in the hooks");
		}
	}
	if (np_py_reraise())
		return NULL;
	np_py.IncRef(np_py.None);
	return np_py.None;
}

/* ---- visiting tensors ---- */

/* CUDA tensors, while the GPU side checks them at module level
 * (cupti/modules.c): their check is enqueued on the stream that made
 * them and judged later, away from the hook, on what they were made
 * from (inputs: data pointers, known non-finite or not by then).  As
 * guards (cupti/gpu.h) most are not checked: what a check needs (the
 * stream, the inputs' pointers: Python calls) is gathered only for one
 * that is. */
#define GPU_INPUTS 15
struct gpu_site {
	uint8_t what;                /* enum np_gpu_what; 0: not checked on the GPU */
	uint64_t stat_module;        /* outputs of this module: their largest |x|
				      * into its statistics (cupti/outmax.h) */
	int stat_cuda;               /* one was: the module's maximum goes late */
	PyObject *from;              /* borrowed: what they were made from, or NULL */
	int gathered;                /* in[] holds from's CUDA tensors */
	uint32_t n_in;
	uint64_t in[GPU_INPUTS];
};

static void gpu_input(PyObject *t, void *arg)
{
	struct gpu_site *site = arg;
	struct np_tensor_view v;
	if (site->n_in < sizeof(site->in) / sizeof(site->in[0]) && np_tensor_view(t, &v) == 2)
		site->in[site->n_in++] = (uint64_t)(uintptr_t)v.ptr;
}

/* The tensor's own memory counts as an input: a parent module returning
 * its child's output, or a .grad the backward already made non-finite,
 * shows a value seen before, not one born here. */
static void gpu_check(PyObject *obj, const struct np_tensor_view *v, struct gpu_site *site)
{
	uint64_t stream, seen_tag, ptr = (uint64_t)(uintptr_t)v->ptr;
	int device;
	if (!site || !site->what)
		return;
	if (!np_gpu_wants(ptr, &seen_tag)) {
		/* checked already, by the launch that wrote it: that check's
		 * record holds its largest |x| */
		if (site->stat_module) {
			np_outmax_expect(seen_tag, site->stat_module, gen);
			site->stat_cuda = 1;
		}
		return;
	}
	if (np_tensor_cuda_stream(obj, &stream, &device))
		return;
	if (!site->gathered) {
		site->gathered = 1;
		np_tensor_visit(site->from, gpu_input, site);
	}
	uint64_t in[GPU_INPUTS + 1];
	memcpy(in, site->in, site->n_in * sizeof(in[0]));
	in[site->n_in] = (uint64_t)(uintptr_t)v->ptr;
	struct np_gpu_tensor t = { .ptr = (uint64_t)(uintptr_t)v->ptr, .numel = v->numel,
				   .stream = stream, .device = device, .dtype = v->dtype,
				   .pairs = v->pairs, .what = site->what,
				   .inputs = in, .n_in = site->n_in + 1,
				   .stat_module = site->stat_module, .stat_step = gen };
	if (np_gpu_check_tensor(&t) && site->stat_module)
		site->stat_cuda = 1;
}

/* A site for tensors made from what `from` holds; NULL when the GPU side
 * is not checking at module level (the common case costs one call). */
static struct gpu_site *gpu_site(struct gpu_site *site, uint8_t what, PyObject *from)
{
	if (!np_gpu_modules())
		return NULL;
	*site = (struct gpu_site){ .what = what, .from = from };
	return site;
}

struct scan {
	double max_abs;              /* over finite values of clean tensors */
	int cpu;                     /* CPU tensors seen: max_abs is theirs */
	int dirty;
	struct np_tensor_check first;   /* the first non-finite tensor */
	PyObject *first_obj;            /* borrowed, valid during the hook */
	struct gpu_site *gpu;           /* CUDA tensors: checked there */
};

static void scan_one(PyObject *t, void *arg)
{
	struct scan *s = arg;
	struct np_tensor_view v;
	struct np_tensor_check c;
	int r = np_tensor_view(t, &v);
	if (r == 2)
		gpu_check(t, &v, s->gpu);
	if (r != 1)
		return;
	s->cpu++;
	np_tensor_check_view(&v, &c);
	if (c.r.max_abs > s->max_abs)
		s->max_abs = c.r.max_abs;
	if (bad(&c) && !s->dirty++) {
		s->first = c;
		s->first_obj = t;
	}
}

static int any_dirty(PyObject *o)
{
	struct scan s = { 0 };
	np_tensor_visit(o, scan_one, &s);
	return s.dirty > 0;
}

static void kw_one(PyObject *t, void *arg)
{
	struct scan *s = arg;
	struct np_tensor_check c;
	if (np_tensor_check(t, &c) == 1 && (c.r.nan || c.r.posinf) && !s->dirty++) {
		s->first = c;
		s->first_obj = t;
	}
}

/* Keyword arguments flowing into a module count as non-finite only for a
 * NaN or a +Inf: an attention mask is passed as a keyword (attn_mask=,
 * src_mask=) and is -inf by design, every step; counted, it would make
 * every overflow inside nn.MultiheadAttention look like propagation.
 * Positional inputs count whatever they hold (a mask passed positionally
 * makes its module's output look propagated: docs/checks.md).  The GPU
 * side judges module-level checks on positional inputs only, for the
 * same reason: its known-dirty ranges hold the mask. */
static int kw_dirty(PyObject *kwargs, struct scan *s)
{
	np_tensor_visit(kwargs, kw_one, s);
	return s->dirty > 0;
}

/* A module's first non-finite input, positional first (see kw_dirty). */
static int inputs_dirty(PyObject *in, PyObject *in_kw, struct scan *s)
{
	np_tensor_visit(in, scan_one, s);
	return s->dirty || (in_kw && kw_dirty(in_kw, s));
}

/* ---- forward ---- */

/* hook(module, input, output), or hook(module, input, kwargs, output)
 * when registered with_kwargs (torch >= 2.0): the keyword arguments are
 * inputs too. */
static PyObject *fwd_hook(PyObject *self, PyObject *args)
{
	(void)self;
	ptrdiff_t nargs = np_py.Tuple_Size(args);
	if (!enabled || bodies_off || (nargs != 3 && nargs != 4))
		goto out;
	np_gpu_module_done();
	PyObject *module = np_py.Tuple_GetItem(args, 0);
	PyObject *in = np_py.Tuple_GetItem(args, 1);
	PyObject *in_kw = nargs == 4 ? np_py.Tuple_GetItem(args, 2) : NULL;
	PyObject *output = np_py.Tuple_GetItem(args, nargs - 1);
	int fresh = 0;
	struct mod_slot *m = mod_get((uint64_t)(uintptr_t)module, &fresh);
	if (fresh) {
		index_params(module, module, 0);
		np_module_paths_report(module);
	}
	struct gpu_site site;
	struct scan s = { .gpu = gpu_site(&site, NP_GPU_WHAT_OUTPUT, in) };
	if (s.gpu && m)
		s.gpu->stat_module = (uint64_t)(uintptr_t)module;
	np_tensor_visit(output, scan_one, &s);
	if (m) {
		touch(m);
		m->cuda_out |= s.gpu && s.gpu->stat_cuda;
		if (s.cpu && !(m->out_max >= s.max_abs))   /* NAN: none yet */
			m->out_max = s.max_abs > 3.4e38 ? INFINITY : (float)s.max_abs;
		if (s.dirty)
			m->out_max = INFINITY;   /* non-finite: the heatmap shows it red */
	}
	if (s.dirty) {
		struct scan ins = { 0 };
		uint8_t flags = inputs_dirty(in, in_kw, &ins) ? NP_AF_SOURCE_DIRTY : 0;
		/* Non-finite in, and nothing non-finite seen before it this
		 * step: it came from outside every checked tensor (the data,
		 * the loop's code).  If the outermost call turns out to have
		 * received it too, the origin describes this input (shape,
		 * counts, which sample), not the module's output: findings.c.
		 * At most one a step (masks returned before it aside); where
		 * in it only for a NaN or a +Inf: an additive attention mask
		 * passed positionally is -inf by design, every step, and may
		 * be large.  In the step an attach landed in, what made it may
		 * have run before the hooks (the modules before this one): it
		 * was non-finite when first seen, not known to come from outside. */
		if (flags && !beyond_masks)
			send_check(NP_ROLE_INPUT, NP_APHASE_FORWARD,
				   mid_step ? NP_AF_SOURCE_DIRTY | NP_AF_PREEXISTING : 0,
				   (uint64_t)(uintptr_t)module, &ins.first, "",
				   ins.first.r.nan || ins.first.r.posinf ? ins.first_obj : NULL);
		char op[64];   /* the record keeps 23: copy_what() */
		output_op(s.first_obj, op, sizeof(op));
		/* a module's first SPREADS_PER_MODULE births say where: one
		 * that makes a -inf mask every step is walked twice, not on
		 * every call of the job; its masks count apart, so that the
		 * NaN a fully masked row makes one day is walked too */
		PyObject *where = NULL, *param;
		struct np_tensor_check pc;
		char pname[24];   /* the record keeps 23 */
		uint8_t *spent = !m ? NULL : mask_only(&s.first.r) ? &m->mask_spreads : &m->spreads;
		if (!flags && spent && *spent < SPREADS_PER_MODULE) {
			++*spent;
			if ((param = bad_param(module, module, 0, "", &pc, pname, sizeof(pname)))) {
				/* it read a non-finite parameter: the parameter
				 * is the origin, the output its propagation */
				send_check(NP_ROLE_PARAM, NP_APHASE_FORWARD, 0,
					   (uint64_t)(uintptr_t)module, &pc, pname, param);
				flags = NP_AF_SOURCE_DIRTY;
			} else {
				where = s.first_obj;
				/* and which op inside it made the value */
				flags |= (uint8_t)np_birth_op(s.first_obj, in, in_kw, op, sizeof(op),
							      NULL, NULL);
			}
		}
		send_check(NP_ROLE_OUTPUT, NP_APHASE_FORWARD, flags, (uint64_t)(uintptr_t)module,
			   &s.first, op, where);
	}
out:
	return hook_done();
}

/* tp_name sits after the var-object header in every CPython 3. */
static const char *type_name(PyObject *type)
{
	return *(const char **)((char *)type + 3 * sizeof(void *));
}

/* tp_base: word 32, counted from 0, of a PyTypeObject in every CPython 3 */
static PyObject *type_base(PyObject *type)
{
	return *(PyObject **)((char *)type + 32 * sizeof(void *));
}

/* ---- backward ---- */

/* node post-hook(grad_inputs, grad_outputs): grad_inputs are what the
 * node produced, grad_outputs what it was given.  self: the node's class
 * when it is a Python Function's (node_hook_for), else NULL. */
static PyObject *node_hook(PyObject *self, PyObject *args)
{
	if (!enabled || bodies_off || np_py.Tuple_Size(args) != 2)
		goto out;
	struct gpu_site site;
	struct scan s = { .gpu = gpu_site(&site, NP_GPU_WHAT_GRAD, np_py.Tuple_GetItem(args, 1)) };
	np_tensor_visit(np_py.Tuple_GetItem(args, 0), scan_one, &s);
	if (s.dirty) {
		uint8_t flags = any_dirty(np_py.Tuple_GetItem(args, 1)) ? NP_AF_SOURCE_DIRTY : 0;
		/* born here from finite gradients: unless the node read data
		 * it saved in forward that held a NaN or a +Inf, and that a
		 * saturating op kept from every output (an LSTM's input) */
		PyObject *data = !flags && !beyond_masks ? np_birth_saved_data() : NULL;
		struct np_tensor_check dc;
		if (data && np_tensor_check(data, &dc) == 1 && (dc.r.nan || dc.r.posinf)) {
			send_check(NP_ROLE_INPUT, NP_APHASE_BACKWARD, 0, 0, &dc, "", data);
			flags = NP_AF_SAVED_DATA;
		}
		np_py_xdecref(data);
		if (!flags && !beyond_masks)
			flags |= (uint8_t)np_birth_node_cause();
		send_check(NP_ROLE_GRAD, NP_APHASE_BACKWARD, flags, 0, &s.first,
			   self ? type_name(self) : NULL, s.first_obj);
	}
out:
	return hook_done();
}

static struct np_py_methoddef node_hook_def = { "nanprof_node_hook", node_hook, NP_METH_VARARGS,
						 NULL };

/* Autograd nodes whose backward only moves, reshapes, negates or masks
 * values (ReLU's: the gradient where x > 0, else 0) cannot make a
 * non-finite gradient from finite ones: they get no hook (a quarter to a
 * half of a transformer's nodes, every activation of a CNN), and the
 * first node that can is still hooked.  Reductions (Expand, Index,
 * AsStrided, max-pooling: sums), casts (ToCopy), Add (alpha) and every
 * activation that multiplies keep theirs. */
static const char *const movers[] = {
	"ViewBackward0", "ReshapeAliasBackward0", "UnsafeViewBackward0", "TBackward0",
	"TransposeBackward0", "TransposeBackward1", "PermuteBackward0", "SqueezeBackward0",
	"SqueezeBackward1", "SqueezeBackward2", "SqueezeBackward3", "SqueezeBackward4",
	"UnsqueezeBackward0", "SliceBackward0", "SelectBackward0", "CloneBackward0",
	"AliasBackward0", "SplitBackward0", "SplitWithSizesBackward0", "CatBackward0",
	"NegBackward0", "UnbindBackward0", "StackBackward0", "NarrowBackward0",
	"ReluBackward0", "ThresholdBackward0", "HardtanhBackward0",
	/* a complex tensor's real view and back (RoPE, spectral layers) */
	"ViewAsRealBackward0", "ViewAsComplexBackward0",
};

#define TYPE_CACHE 256
/* hook: the post-hook nodes of this type get (below), when not the shared one */
static struct { PyObject *type; int skip; PyObject *hook; } type_cache[TYPE_CACHE];

/* A node of a Python autograd.Function (flash attention's, a fused
 * kernel's, checkpointing's) is one C++ class, PyNode, to the BPF probes:
 * its own class, "<Function>Backward", derives from BackwardCFunction.
 * Such a node gets a post-hook bound to its class, so that a gradient it
 * makes non-finite is named after it, not "Node". */
static int is_python_function(PyObject *type)
{
	PyObject *base = type_base(type);
	const char *name = base ? type_name(base) : NULL;
	return name && strcmp(name, "BackwardCFunction") == 0;
}

static int type_entry(PyObject *node)
{
	PyObject *type = np_py_type(node);
	unsigned h = (unsigned)(((uintptr_t)type >> 4) % TYPE_CACHE);
	if (type_cache[h].type == type)
		return (int)h;
	const char *name = type_name(type);
	int skip = 0;
	for (size_t i = 0; name && i < sizeof(movers) / sizeof(movers[0]); i++)
		skip |= strcmp(name, movers[i]) == 0;
	np_py_xdecref(type_cache[h].hook);   /* hooks registered hold their own */
	type_cache[h].hook = NULL;
	if (is_python_function(type))
		type_cache[h].hook = np_py.CFunction_NewEx(&node_hook_def, type, NULL);
	if (np_py.Err_Occurred())
		np_py_err_clear();
	type_cache[h].type = type;   /* node types live as long as torch */
	type_cache[h].skip = skip;
	return (int)h;
}

int np_node_moves_only(PyObject *node)
{
	return type_cache[type_entry(node)].skip;
}

/* The post-hook for node, or NULL when it needs none (a mover). */
static PyObject *node_hook_for(PyObject *node)
{
	int h = type_entry(node);
	if (type_cache[h].skip)
		return NULL;
	return type_cache[h].hook ? type_cache[h].hook : post_hook_fn;
}

/* node's one input node (a new reference), or NULL when it has none or
 * several */
static PyObject *only_input(PyObject *node)
{
	PyObject *next = np_py.Object_GetAttr(node, np_n.next_functions), *one = NULL;
	ptrdiff_t n = next ? np_py.Tuple_Size(next) : 0;
	int count = 0;
	for (ptrdiff_t i = 0; i < n; i++) {
		PyObject *pair = np_py.Tuple_GetItem(next, i);
		PyObject *fn = pair ? np_py.Tuple_GetItem(pair, 0) : NULL;
		if (fn && fn != np_py.None) {
			one = fn;
			count++;
		}
	}
	if (count == 1)
		np_py.IncRef(one);
	np_py_xdecref(next);
	return count == 1 ? one : NULL;
}

/* The op that made an output, for the report: its autograd node's name,
 * past nodes with one input that only move values (a view, a transpose:
 * they cannot make a non-finite value).  MHA's output is a transpose of
 * its out-projection: the out-projection's addmm is named.  Runs only
 * for a non-finite output. */
static void output_op(PyObject *t, char *buf, size_t len)
{
	buf[0] = 0;
	PyObject *node = np_py.Object_GetAttr(t, np_n.grad_fn);
	for (int hops = 0; node && node != np_py.None && hops < 8 &&
			   type_cache[type_entry(node)].skip; hops++) {
		PyObject *in = only_input(node);
		if (!in)
			break;
		np_py.DecRef(node);
		node = in;
	}
	PyObject *nm = node && node != np_py.None
		? np_py.Object_CallMethodObjArgs(node, np_n.name, NULL) : NULL;
	const char *text = nm ? np_py.Unicode_AsUTF8(nm) : NULL;
	if (text)
		snprintf(buf, len, "%s", text);
	np_py_xdecref(nm);
	np_py_xdecref(node);
	if (np_py.Err_Occurred())
		np_py_err_clear();
}

static int node_seen(uint64_t key)
{
	uint32_t h = (uint32_t)mix(key) & (NODE_SLOTS - 1);
	for (uint32_t i = 0; i < 256; i++, h = (h + 1) & (NODE_SLOTS - 1)) {
		if (nodes_walk[h] != walk_gen) {   /* free in this walk */
			nodes_walk[h] = walk_gen;
			nodes[h] = key;
			return 0;
		}
		if (nodes[h] == key)
			return 1;
	}
	overflow++;
	return 1;   /* full: hook no more */
}

/* A root of backward() that is itself non-finite was computed outside
 * any module (a loss written in the training loop): no forward hook saw
 * it, so it is reported here.  In the step an attach installed the hooks
 * in, the forward that made it may not have been seen at all (attached
 * between forward and backward): then it was born before the attach.
 *
 * A loss is a scalar made by its last op (mean, add), rarely the one
 * that overflowed: -(y * log(p)).sum(1).mean() is NaN because log gave
 * -inf where p underflowed to 0 (and y was 0).  The op search walks the
 * graph behind it; when it finds an earlier op whose output the graph
 * kept, or its kept inputs give again (the log kept p), that output is
 * reported instead, with its op (NP_AF_OP_INSIDE): its shape and spread
 * say which samples.  When the value came from a tensor autograd does
 * not track (NP_AF_CONST_INPUT), that tensor is reported. */
static void check_root(PyObject *root)
{
	struct np_tensor_check c;
	if (np_tensor_check(root, &c) != 1 || !bad(&c))
		return;
	char op[64];   /* the record keeps 23: copy_what() */
	/* the walk reads what the model saved, too (10-30 ms): the first
	 * few non-finite losses only, as a module's first births */
	static unsigned searched;
	unsigned zero_div = 0;   /* a division by 0 made it (NP_AF_ZERO_DIVISOR) */
	if (!mid_step && searched < SPREADS_PER_MODULE) {
		searched++;
		PyObject *seen = NULL, *from = NULL;
		unsigned flags = np_birth_op(root, np_py.None, NULL, op, sizeof(op), &seen, &from);
		/* also when the fallback below names the loss's own op: the
		 * division's output was kept nowhere (sum / mask.sum() + aux) */
		zero_div = flags & NP_AF_ZERO_DIVISOR;
		struct np_tensor_check sc;
		int sent = 0;
		if (from && np_tensor_check(from, &sc) == 1 && bad(&sc)) {
			/* the op read it from outside the graph: that tensor */
			send_check(NP_ROLE_OUTPUT, NP_APHASE_FORWARD,
				   (uint8_t)(flags | NP_AF_OP_INSIDE | NP_AF_SOURCE_DIRTY |
					     NP_AF_CONST_INPUT), 0, &sc, op, from);
			sent = 1;
		} else if ((flags & NP_AF_OP_INSIDE) && seen && np_tensor_check(seen, &sc) == 1 &&
			   bad(&sc)) {
			send_check(NP_ROLE_OUTPUT, NP_APHASE_FORWARD, (uint8_t)flags, 0, &sc, op,
				   seen);
			sent = 1;
		}
		np_py_xdecref(seen);
		np_py_xdecref(from);
		if (np_py.Err_Occurred())
			np_py_err_clear();
		if (sent)
			return;
	}
	output_op(root, op, sizeof(op));
	send_check(NP_ROLE_OUTPUT, NP_APHASE_FORWARD,
		   mid_step ? NP_AF_SOURCE_DIRTY | NP_AF_PREEXISTING : (uint8_t)zero_div, 0, &c, op,
		   root);
}

/* A CUDA root: checked on the GPU, whether or not the launch that wrote
 * it was (a guard would skip it).  A loss whose value was born in the
 * loss's own code (log(0) in the training loop) is read by no later
 * kernel of the forward, so no launch check sees it leave its scope;
 * reaching backward is that (userspace/gpu_findings.c).  Its own memory
 * is its input: a loss already known non-finite is propagation. */
static void gpu_root(PyObject *root)
{
	struct np_tensor_view v;
	uint64_t stream;
	int device;
	if (!np_gpu_active() || np_tensor_view(root, &v) != 2 ||
	    np_tensor_cuda_stream(root, &stream, &device))
		return;
	uint64_t in[1] = { (uint64_t)(uintptr_t)v.ptr };
	struct np_gpu_tensor t = { .ptr = in[0], .numel = v.numel, .stream = stream,
				   .device = device,
				   .dtype = v.dtype, .pairs = v.pairs, .what = NP_GPU_WHAT_ROOT,
				   .inputs = in, .n_in = 1 };
	np_gpu_check_tensor(&t);
}

static uint32_t walk_push(PyObject *root, uint32_t sp)
{
	if (np_is_tensor(root)) {
		if (!np_scaler_is_scaled_loss(root)) {   /* the loss was checked unscaled */
			check_root(root);
			gpu_root(root);
		}
		PyObject *gf = np_py.Object_GetAttr(root, np_n.grad_fn);
		if (gf && gf != np_py.None && sp < WALK_STACK)
			walk_stack[sp++] = gf;   /* owned */
		else
			np_py_xdecref(gf);
	}
	return sp;
}

/* walk(roots): hook every node of the graph behind roots (a tensor or a
 * sequence of them), once per backward pass. */
static PyObject *walk(PyObject *self, PyObject *args)
{
	(void)self;
	if (!enabled || np_py.Tuple_Size(args) != 1)
		goto out;
	if (++walk_gen == 0) {   /* wrapped: clear for real */
		memset(nodes_walk, 0, sizeof(nodes_walk));
		walk_gen = 1;
	}
	uint32_t sp = 0;
	PyObject *roots = np_py.Tuple_GetItem(args, 0);
	if (np_is_tensor(roots)) {
		sp = walk_push(roots, sp);
	} else if (np_py.Object_IsInstance(roots, np_py.TupleType) > 0) {
		for (ptrdiff_t i = 0; i < np_py.Tuple_Size(roots); i++)
			sp = walk_push(np_py.Tuple_GetItem(roots, i), sp);
	} else if (np_py.Object_IsInstance(roots, np_py.ListType) > 0) {
		for (ptrdiff_t i = 0; i < np_py.List_Size(roots); i++)
			sp = walk_push(np_py.List_GetItem(roots, i), sp);
	}
	uint32_t nvisited = 0;
	while (sp) {
		PyObject *node = walk_stack[--sp];
		if (nvisited >= NODE_SLOTS || node_seen((uint64_t)(uintptr_t)node)) {
			np_py.DecRef(node);
			continue;
		}
		visited[nvisited++] = node;   /* our reference, dropped at the end */
		if (np_py_type(node) == accumulate_grad_type)
			continue;
		PyObject *hook = node_hook_for(node);
		PyObject *h = hook ? np_py.Object_CallMethodObjArgs(node, np_n.register_hook, hook, NULL)
				   : NULL;
		if (h)
			np_py.DecRef(h);
		else if (np_py.Err_Occurred())
			np_py_err_clear();
		PyObject *next = np_py.Object_GetAttr(node, np_n.next_functions);
		ptrdiff_t n = next ? np_py.Tuple_Size(next) : 0;
		for (ptrdiff_t i = 0; i < n; i++) {
			PyObject *pair = np_py.Tuple_GetItem(next, i);
			PyObject *fn = pair ? np_py.Tuple_GetItem(pair, 0) : NULL;
			if (!fn || fn == np_py.None)
				continue;
			if (sp >= WALK_STACK) {
				overflow++;
				break;
			}
			np_py.IncRef(fn);
			walk_stack[sp++] = fn;
		}
		np_py_xdecref(next);
		if (np_py.Err_Occurred())
			np_py_err_clear();
	}
	for (uint32_t i = 0; i < nvisited; i++)
		np_py.DecRef(visited[i]);
out:
	return hook_done();
}

/* ---- optimizer ---- */

typedef void (*param_fn)(PyObject *param, void *arg);

/* Calls fn on every parameter of optimizer.param_groups. */
static void each_param(PyObject *opt, param_fn fn, void *arg)
{
	PyObject *groups = np_py.Object_GetAttr(opt, np_n.param_groups);
	ptrdiff_t ng = groups && np_py_type(groups) == np_py.ListType ? np_py.List_Size(groups) : 0;
	for (ptrdiff_t g = 0; g < ng; g++) {
		PyObject *grp = np_py.List_GetItem(groups, g);
		PyObject *ps = grp && np_py.Object_IsInstance(grp, np_py.DictType) > 0
			? np_py.Dict_GetItemString(grp, "params") : NULL;
		ptrdiff_t n = ps && np_py_type(ps) == np_py.ListType ? np_py.List_Size(ps) : 0;
		for (ptrdiff_t i = 0; i < n; i++)
			fn(np_py.List_GetItem(ps, i), arg);
	}
	np_py_xdecref(groups);
	if (np_py.Err_Occurred())
		np_py_err_clear();
}

/* A parameter's .grad before the update: its sum of squares (the norms)
 * is one pass over it, and a non-finite sum means a non-finite element,
 * so the full check runs only then. */
static void grad_one(PyObject *p, void *arg)
{
	(void)arg;
	PyObject *g = np_py.Object_GetAttr(p, np_n.grad);
	struct np_tensor_view v;
	int r = g && g != np_py.None ? np_tensor_view(g, &v) : 0;
	if (r == 2) {
		struct gpu_site site = { .what = NP_GPU_WHAT_PARAM_GRAD };
		gpu_check(g, &v, &site);
		/* its norm, read back in a later step (gpu_norms.h) */
		struct param_slot *ps = param_get((uint64_t)(uintptr_t)p, 0);
		np_gpu_norms_add(g, ps ? ps->module : 0);
	}
	if (r == 1) {
		struct param_slot *ps = param_get((uint64_t)(uintptr_t)p, 0);
		uint64_t module = ps ? ps->module : 0;
		int fresh = 0;
		struct mod_slot *m = mod_get(module ? module : 1, &fresh);
		if (m)
			touch(m);
		/* an expanded .grad (assigned by the job) repeats each value */
		double sq = np_cpu_sumsq((enum np_dtype)v.dtype, v.ptr, v.numel) * (double)v.repeat;
		np_tensor_stats.checked++;
		np_tensor_stats.bytes += v.numel * np_dtype_size((enum np_dtype)v.dtype);
		struct np_tensor_check c;
		if (!isfinite(sq)) {
			np_tensor_check_view(&v, &c);
			uint8_t flags = beyond_masks ? NP_AF_SOURCE_DIRTY : 0;
			if (mid_step)
				flags |= NP_AF_SOURCE_DIRTY | NP_AF_PREEXISTING;
			if (bad(&c))
				send_check(NP_ROLE_PARAM_GRAD, NP_APHASE_OPTIMIZER, flags, module, &c,
					   ps ? ps->name : NULL, g);
		}
		if (m)
			m->grad_sumsq += sq;   /* inf or nan stays so */
	}
	np_py_xdecref(g);
	if (np_py.Err_Occurred())
		np_py_err_clear();
}

/* What param_one needs of the update: the optimizer, the flags of its
 * records, and whether one of its parameters was already reported. */
struct update_ctx {
	PyObject *optimizer;
	uint8_t flags;
	bool reported;
};

static void param_one(PyObject *p, void *arg)
{
	struct update_ctx *u = arg;
	uint8_t flags = u->flags;
	struct np_tensor_view v;
	struct np_tensor_check c;
	int r = np_tensor_view(p, &v);
	if (r == 2) {
		/* whose memory this is, for a launch check's birth in it */
		struct param_slot *ps = param_get((uint64_t)(uintptr_t)p, 0);
		if (ps)
			np_param_owner_note((uint64_t)(uintptr_t)v.ptr, ps->module, ps->name);
		/* made from itself and its .grad */
		PyObject *g = np_py.Object_GetAttr(p, np_n.grad);
		if (np_py.Err_Occurred())
			np_py_err_clear();
		struct gpu_site site = { .what = NP_GPU_WHAT_PARAM,
					 .from = g && g != np_py.None ? g : NULL };
		gpu_check(p, &v, &site);
		np_py_xdecref(g);
		return;
	}
	if (r != 1)
		return;
	np_tensor_check_view(&v, &c);
	if (bad(&c)) {
		struct param_slot *ps = param_get((uint64_t)(uintptr_t)p, 0);
		/* the update's first bad parameter, from finite values: the
		 * candidate origin, whose cause the optimizer may tell */
		if (!u->reported && !(flags & NP_AF_SOURCE_DIRTY))
			np_update_cause(u->optimizer, p);
		u->reported = true;
		send_check(NP_ROLE_PARAM, NP_APHASE_OPTIMIZER, flags, ps ? ps->module : 0, &c,
			   ps ? ps->name : NULL, p);
	}
}

/* The step's statistics, as few traps as it takes (one below 168
 * modules). */
static void flush_stats(void)
{
	static struct np_arec_stat st[NP_AGENT_BULK_STATS];
	uint32_t n = 0;
	for (uint32_t i = 0; i < ntouched; i++) {
		const struct mod_slot *m = touched[i];
		st[n].module = m->key == 1 ? 0 : m->key;
		st[n].out_max = m->out_max;
		if (m->cuda_out) {   /* one value a step: with its CUDA outputs', late */
			if (!isnan(m->out_max))
				np_outmax_value(m->key, gen, m->out_max);
			st[n].out_max = NAN;
		}
		st[n].lag = 0;
		st[n].grad_sumsq = m->grad_sumsq;
		if (++n == NP_AGENT_BULK_STATS) {
			np_report_stats(st, n);
			n = 0;
		}
	}
	np_report_stats(st, n);
}

/* The largest |x| of CUDA module outputs of earlier steps whose checks
 * are all back (cupti/outmax.h), as late statistics. */
struct late_buf {
	struct np_arec_stat st[NP_AGENT_BULK_STATS];
	uint32_t n;
};

static void late_out_one(uint64_t module, uint32_t step, float max, void *arg)
{
	struct late_buf *b = arg;
	b->st[b->n++] = (struct np_arec_stat){ .module = module, .out_max = max,
						 .lag = gen - step, .grad_sumsq = -1 };
	if (b->n == NP_AGENT_BULK_STATS) {
		np_report_stats(b->st, b->n);
		b->n = 0;
	}
}

static void send_late_out_max(void)
{
	static struct late_buf b;
	b.n = 0;
	if (np_outmax_collect(gen, late_out_one, &b) && b.n)
		np_report_stats(b.st, b.n);
}

/* The .grad of every parameter (norms, checks) and the step's statistics:
 * what the update is about to use.  Once a step: a subclass's step() that
 * calls super().step() runs the hooks twice (torch 1.x wraps every
 * class's step(); torch 2 patches each class an optimizer is made of),
 * and a second flush would add the step's gradient sums again (the norm
 * came out sqrt(3) times too large).  An exception out of step() skips
 * its post-hook: the next step's statistics are then lost, not wrong. */
static void before_update(PyObject *optimizer)
{
	static uint32_t done_gen;
	if (done_gen == gen)
		return;
	done_gen = gen;
	np_gpu_norms_poll();   /* CUDA .grad norms of earlier steps, if back */
	send_late_out_max();
	each_param(optimizer, grad_one, NULL);
	flush_stats();
	np_gpu_norms_start();
}

/* optimizer.step(closure): the closure runs the forward and backward
 * inside step() (LBFGS; Lightning steps every optimizer so), after the
 * pre-hook.  Then the .grad and the statistics are taken in the
 * post-hook, before the parameters: the update does not change .grad. */
static int closure_step;

static int has_closure(PyObject *args)
{
	PyObject *a = np_py.Tuple_Size(args) >= 2 ? np_py.Tuple_GetItem(args, 1) : NULL;
	PyObject *k = np_py.Tuple_Size(args) >= 3 ? np_py.Tuple_GetItem(args, 2) : NULL;
	PyObject *c = NULL;
	if (a && np_py.Object_IsInstance(a, np_py.TupleType) > 0 && np_py.Tuple_Size(a) >= 1)
		c = np_py.Tuple_GetItem(a, 0);
	else if (k && np_py_type(k) == np_py.DictType)
		c = np_py.Dict_GetItemString(k, "closure");
	if (np_py.Err_Occurred())
		np_py_err_clear();
	return c && c != np_py.None;
}

static PyObject *opt_pre(PyObject *self, PyObject *args)
{
	(void)self;
	if (enabled && !bodies_off && np_py.Tuple_Size(args) >= 1) {
		closure_step = has_closure(args);
		if (!closure_step)
			before_update(np_py.Tuple_GetItem(args, 0));
	}
	return hook_done();
}

/* Which optimizer stepped, once a call: two that step in turn, each
 * after its own backward (a GAN's discriminator and generator), make two
 * steps an iteration (userspace/collector.c, turns).  The probes see an
 * optimizer's class only: two Adams look the same to them. */
static void send_optimizer(PyObject *opt)
{
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_STATUS;
	r.status = NP_AST_OPTIMIZER;
	r.module = (uint64_t)(uintptr_t)opt;
	np_report_send(&r);
}

static PyObject *opt_post(PyObject *self, PyObject *args, uint8_t extra)
{
	(void)self;
	if (enabled && !bodies_off && np_py.Tuple_Size(args) >= 1) {
		uint8_t flags = extra | (beyond_masks ? NP_AF_SOURCE_DIRTY : 0);
		/* in the step an attach landed in, a parameter whose module the
		 * hooks never saw may have been non-finite before this update */
		if (mid_step)
			flags |= NP_AF_SOURCE_DIRTY | NP_AF_PREEXISTING;
		if (closure_step) {
			before_update(np_py.Tuple_GetItem(args, 0));
			closure_step = 0;
			flags |= beyond_masks ? NP_AF_SOURCE_DIRTY : 0;
		}
		send_optimizer(np_py.Tuple_GetItem(args, 0));
		struct update_ctx u = { .optimizer = np_py.Tuple_GetItem(args, 0), .flags = flags };
		each_param(u.optimizer, param_one, &u);
		/* the step is over: statistics and bounds start again */
		if (++gen == 0)
			gen = 1;
		np_gpu_step(gen);
		ntouched = 0;
		step_bounds_reset();
		mid_step = 0;
		static uint32_t steps;
		if (++steps % 16 == 0)
			np_hooks_send_counters();
	}
	return hook_done();
}

static PyObject *opt_post_hook(PyObject *self, PyObject *args)
{
	return opt_post(self, args, 0);
}

/* torch 1.x has no global optimizer hooks: the bootstrap wraps step()
 * and calls this after it returned. */
static PyObject *opt_post_wrapped(PyObject *self, PyObject *args)
{
	return opt_post(self, args, NP_AF_AFTER_STEP);
}

/* ---- collectives ---- */

/* collective(name, phase, args, kwargs): called by the bootstrap's
 * wrapper of a synchronous torch.distributed collective, before
 * ("pre") and after ("post") it runs.  Its tensors are both what goes in
 * and what comes out; a tensor that is non-finite only after the call
 * came from another rank. */
static int coll_inputs_dirty;

static PyObject *collective(PyObject *self, PyObject *args)
{
	(void)self;
	if (!enabled || np_py.Tuple_Size(args) != 4)
		goto out;
	const char *name = np_py.Unicode_AsUTF8(np_py.Tuple_GetItem(args, 0));
	const char *when = np_py.Unicode_AsUTF8(np_py.Tuple_GetItem(args, 1));
	if (!name || !when)
		goto out;
	struct scan s = { 0 };
	np_tensor_visit(np_py.Tuple_GetItem(args, 2), scan_one, &s);
	np_tensor_visit(np_py.Tuple_GetItem(args, 3), scan_one, &s);
	if (when[1] == 'r') {   /* "pre" */
		coll_inputs_dirty = s.dirty > 0;
	} else if (s.dirty) {
		send_check(NP_ROLE_COLLECTIVE, NP_APHASE_BACKWARD,
			   coll_inputs_dirty ? NP_AF_SOURCE_DIRTY : 0, 0, &s.first, name, s.first_obj);
	}
out:
	return hook_done();
}

/* At the job's exit: the late statistics of its last steps (CUDA .grad
 * norms, CUDA output maxima), which no later optimizer step will send.
 * The job is done with the GPU, so they are waited for a little; what is
 * still out then is counted as dropped. */
static void send_last_late(void)
{
	for (unsigned i = 0; i < 100; i++) {   /* 0.5 s at most */
		np_gpu_norms_poll();
		send_late_out_max();
		uint32_t verdicts = np_scaler_poll();
		if (!np_gpu_norms_pending() && !np_outmax_in_flight(gen) && !verdicts)
			return;
		usleep(5000);
	}
	np_gpu_norms_give_up();
	np_outmax_give_up(gen);
	np_scaler_give_up();
}

/* ---- loss scaling ---- */

/* scaler(what, scaler, loss, scaled): called by the bootstrap's wrappers
 * of GradScaler.scale() ("scale", after it returned scaled) and
 * .update() ("update", before it runs); see scaler.h.  The loss a
 * backward() will be given scaled is checked here, unscaled: a loss
 * computed outside any module is seen nowhere else. */
static PyObject *scaler(PyObject *self, PyObject *args)
{
	(void)self;
	if (!enabled || bodies_off || np_py.Tuple_Size(args) != 4)
		goto out;
	const char *what = np_py.Unicode_AsUTF8(np_py.Tuple_GetItem(args, 0));
	if (!what) {
		np_py_err_clear();
		goto out;
	}
	if (what[0] == 's') {
		PyObject *loss = np_py.Tuple_GetItem(args, 2);
		PyObject *scaled = np_py.Tuple_GetItem(args, 3);
		if (np_is_tensor(loss) && np_is_tensor(scaled)) {
			check_root(loss);
			np_scaler_scale(scaled);
		}
	} else {
		np_scaler_update(np_py.Tuple_GetItem(args, 1));
		/* an iteration ends here, also one whose step the scaler
		 * skipped (no optimizer hook ends it): its overflow must not
		 * use up the next one's reports, or mark it dirty */
		step_bounds_reset();
	}
out:
	return hook_done();
}

/* counters(): at interpreter exit (atexit), so the last ones arrive */
static PyObject *counters(PyObject *self, PyObject *args)
{
	(void)self;
	(void)args;
	if (enabled && !bodies_off)
		send_last_late();
	if (enabled)
		np_hooks_send_counters();
	np_py.IncRef(np_py.None);
	return np_py.None;
}

/* ---- setup ---- */

static struct np_py_methoddef defs[] = {
	{ "nanprof_forward_hook", fwd_hook, NP_METH_VARARGS, NULL },
	{ "nanprof_walk", walk, NP_METH_VARARGS, NULL },
	{ "nanprof_opt_pre", opt_pre, NP_METH_VARARGS, NULL },
	{ "nanprof_opt_post", opt_post_hook, NP_METH_VARARGS, NULL },
	{ "nanprof_opt_post_wrapped", opt_post_wrapped, NP_METH_VARARGS, NULL },
	{ "nanprof_counters", counters, NP_METH_VARARGS, NULL },
	{ "nanprof_collective", collective, NP_METH_VARARGS, NULL },
	{ "nanprof_scaler", scaler, NP_METH_VARARGS, NULL },
};

int np_hooks_init(void)
{
	if (post_hook_fn)
		return 0;
	const char *skip = getenv("NANPROF_AGENT_SKIP");
	bodies_off = skip && strstr(skip, "bodies") != NULL;
	if (np_tensor_init())
		return -1;
	PyObject *ag = np_py.Run_StringFlags(
		"__import__('torch')._C._functions.AccumulateGrad", 258, np_py.Eval_GetBuiltins(),
		NULL, NULL);
	if (!ag)
		np_py_err_clear();   /* then AccumulateGrad nodes get a hook too */
	accumulate_grad_type = ag;
	post_hook_fn = np_py.CFunction_NewEx(&node_hook_def, NULL, NULL);
	return post_hook_fn ? 0 : -1;
}

PyObject *np_hooks_callable(const char *name)
{
	static const char *map[][2] = {
		{ "fwd", "nanprof_forward_hook" }, { "walk", "nanprof_walk" },
		{ "opt_pre", "nanprof_opt_pre" }, { "opt_post", "nanprof_opt_post" },
		{ "opt_post_wrapped", "nanprof_opt_post_wrapped" },
		{ "counters", "nanprof_counters" },
		{ "collective", "nanprof_collective" },
		{ "scaler", "nanprof_scaler" },
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(map[i][0], name) == 0)
			for (size_t k = 0; k < sizeof(defs) / sizeof(defs[0]); k++)
				if (strcmp(defs[k].name, map[i][1]) == 0)
					return np_py.CFunction_NewEx(&defs[k], NULL, NULL);
	return NULL;
}

void np_hooks_enable(int on)
{
	enabled = on;
}

void np_hooks_mid_step(void)
{
	mid_step = 1;
}

void np_hooks_reset(void)
{
	np_gpu_norms_reset();
	np_scaler_reset();
	ntouched = 0;
	memset(mods, 0, sizeof(mods));
	memset(params, 0, sizeof(params));
	step_bounds_reset();
}

void np_hooks_send_counters(void)
{
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_STATUS;
	r.status = NP_AST_COUNTERS;
	r.cnt.checked = np_tensor_stats.checked;
	r.cnt.bytes = np_tensor_stats.bytes;
	r.cnt.skipped = np_tensor_stats.skipped;
	r.cnt.dropped = dropped;
	/* CUDA .grads over the norms' table, steps whose norms or output
	 * maxima were given up */
	r.cnt.overflow = overflow + np_gpu_norms_overflow + np_gpu_norms_dropped + np_scaler_dropped +
			 np_outmax_dropped() + np_module_paths_dropped();
	np_report_send(&r);
}
