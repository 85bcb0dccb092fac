/* dnn_graph.c - cuDNN backend descriptors, remembered as they are built,
 * and the plan of an execution (dnn_graph.h). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "dnn.h"
#include "dnn_graph.h"
#include "dnn_ops.h"

/* how an operation uses a tensor (dnn_ops.h) */
#define T_READ NP_DG_READ
#define T_WRITTEN NP_DG_WRITTEN

/* a non-virtual tensor as an operation or a graph holds it */
struct dg_tensor {
	int64_t uid;
	uint64_t numel;         /* elements when one dense range, else 0 */
	int8_t dtype;           /* enum np_dtype, -1: not checkable */
	uint8_t flags;
};

/* an operation's tensors, or a graph's (what engines, heuristics,
 * configs and plans serve, copied into each) */
struct dg_tensors {
	uint8_t n;
	uint8_t known;          /* a graph was copied in */
	uint8_t bad;            /* something in it is not known: never planned */
	uint8_t why;            /* enum np_dg_reason of bad */
	int32_t why_value;
	uint8_t beta;           /* an operation's beta is set: its output is read */
	struct dg_tensor t[NP_DG_TENSORS];
};

struct dg_entry {
	const void *desc;       /* NULL: a free slot */
	int type;
	union {
		struct {
			int64_t uid;
			int dtype;      /* cudnnDataType_t, -1 unset */
			uint8_t nb, n_strides, has_uid, virt, by_value;
			uint8_t not_plain;      /* ragged or reordered: its strides
						 * do not say where its elements lie */
			int64_t dims[NP_DNN_MAX_DIMS], strides[NP_DNN_MAX_DIMS];
		} tensor;
		struct dg_tensors ts;
		struct {
			uint8_t n_uids, n_ptrs;
			uint8_t intermediates;  /* memory for them given: written too */
			uint64_t workspace;
			int64_t uid[NP_DG_TENSORS];
			uint64_t ptr[NP_DG_TENSORS];
		} pack;
	} u;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct dg_entry table[NP_DG_SLOTS];
static struct np_dg_stats stats;

/* The types of the last descriptors created of a type not remembered:
 * only to say which operation a graph holds that is not read. */
#define UNREAD_RECENT 32
static struct {
	const void *desc;
	int type;
} unread[UNREAD_RECENT];
static unsigned unread_next;

static void mark_bad(struct dg_tensors *ts, enum np_dg_reason why, int64_t value)
{
	if (!ts->bad) {         /* the first reason found */
		ts->why = (uint8_t)why;
		ts->why_value = (int32_t)value;
	}
	ts->bad = 1;
}

static int remembered(int type)
{
	switch (type) {
	case NP_DG_ENGINE: case NP_DG_ENGINECFG: case NP_DG_ENGINEHEUR: case NP_DG_PLAN:
	case NP_DG_OPGRAPH: case NP_DG_VARIANT_PACK: case NP_DG_TENSOR:
		return 1;
	}
	return np_dg_is_operation(type);
}

/* ---- the table: open addressing, linear probing ---- */

static unsigned home(const void *desc)
{
	uint64_t h = (uint64_t)(uintptr_t)desc * 0x9e3779b97f4a7c15ull;
	return (unsigned)(h >> 40) % NP_DG_SLOTS;
}

/* desc's slot, NULL when not remembered; lock held */
static struct dg_entry *find(const void *desc)
{
	if (!desc)
		return NULL;
	for (unsigned i = home(desc), k = 0; k < NP_DG_SLOTS; k++, i = (i + 1) % NP_DG_SLOTS) {
		if (table[i].desc == desc)
			return &table[i];
		if (!table[i].desc)
			return NULL;
	}
	return NULL;
}

/* frees slot i, moving back the entries after it that probed past it
 * (so that no lookup stops at the hole early); lock held.  The hole is
 * always empty, so the walk ends even in a full table. */
static void erase(unsigned i)
{
	memset(&table[i], 0, sizeof(table[i]));
	unsigned hole = i;
	for (unsigned j = (i + 1) % NP_DG_SLOTS; table[j].desc; j = (j + 1) % NP_DG_SLOTS) {
		unsigned h = home(table[j].desc);
		/* j's entry may fill the hole when its home is not in (hole, j] */
		int stays = hole <= j ? (h > hole && h <= j) : (h > hole || h <= j);
		if (!stays) {
			table[hole] = table[j];
			memset(&table[j], 0, sizeof(table[j]));
			hole = j;
		}
	}
}

void np_dg_reset(void)
{
	pthread_mutex_lock(&lock);
	memset(table, 0, sizeof(table));
	memset(&stats, 0, sizeof(stats));
	memset(unread, 0, sizeof(unread));
	pthread_mutex_unlock(&lock);
}

int np_dg_created(const void *desc, int type)
{
	if (!desc)
		return 0;
	int r = 0;
	pthread_mutex_lock(&lock);
	if (!remembered(type)) {
		unread[unread_next++ % UNREAD_RECENT] = (__typeof__(unread[0])){ desc, type };
		pthread_mutex_unlock(&lock);
		return 0;
	}
	struct dg_entry *e = find(desc);    /* an address reused without a destroy seen */
	for (unsigned i = home(desc), k = 0; !e && k < NP_DG_SLOTS;
	     k++, i = (i + 1) % NP_DG_SLOTS)
		if (!table[i].desc)
			e = &table[i];
	if (e) {
		memset(e, 0, sizeof(*e));
		e->desc = desc;
		e->type = type;
		if (type == NP_DG_TENSOR)
			e->u.tensor.dtype = -1;
	} else {
		stats.table_full++;
		r = -1;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

void np_dg_destroyed(const void *desc)
{
	pthread_mutex_lock(&lock);
	struct dg_entry *e = find(desc);
	if (e)
		erase((unsigned)(e - table));
	for (unsigned i = 0; i < UNREAD_RECENT; i++)
		if (unread[i].desc == desc)
			unread[i].desc = NULL;
	pthread_mutex_unlock(&lock);
}

/* ---- attributes ---- */

/* a tensor descriptor as an operation holds it: -1 when it cannot be
 * (not remembered, not a tensor, no id), 1 when it is virtual or passed
 * by value (no device memory of its own), else 0 */
static int tensor_of(const void *desc, struct dg_tensor *t)
{
	struct dg_entry *e = find(desc);
	if (!e || e->type != NP_DG_TENSOR || !e->u.tensor.has_uid)
		return -1;
	if (e->u.tensor.virt || e->u.tensor.by_value)
		return 1;
	t->uid = e->u.tensor.uid;
	t->dtype = (int8_t)np_dnn_dtype(e->u.tensor.dtype);
	t->numel = e->u.tensor.nb == e->u.tensor.n_strides && !e->u.tensor.not_plain
			   ? np_dnn_dense_numel64(e->u.tensor.nb, e->u.tensor.dims,
						  e->u.tensor.strides)
			   : 0;
	t->flags = 0;
	return 0;
}

/* adds t to ts with flags (merged by id) */
static void add_tensor(struct dg_tensors *ts, struct dg_tensor t, uint8_t flags)
{
	for (int i = 0; i < ts->n; i++)
		if (ts->t[i].uid == t.uid) {
			ts->t[i].flags |= flags;
			return;
		}
	if (ts->n == NP_DG_TENSORS) {
		mark_bad(ts, NP_DGW_TENSORS, 0);
		return;
	}
	t.flags = flags;
	ts->t[ts->n++] = t;
}

static int is_beta(int type, int attr)
{
	return (type == NP_DG_CONV_FWD && attr == NP_DGA_CONV_FWD_BETA) ||
	       (type == NP_DG_CONV_BWD_DATA && attr == NP_DGA_CONV_BWD_DATA_BETA) ||
	       (type == NP_DG_CONV_BWD_FILTER && attr == NP_DGA_CONV_BWD_FILTER_BETA);
}

/* a graph's tensors from its operations ops[0..n) */
static void compose(struct dg_tensors *g, void *const *ops, int64_t n)
{
	memset(g, 0, sizeof(*g));
	g->known = 1;
	for (int64_t i = 0; i < n; i++) {
		struct dg_entry *op = find(ops[i]);
		if (!op || !np_dg_is_operation(op->type)) {
			/* an operation of a kind not read, or not seen built */
			int type = op ? op->type : -1;
			for (unsigned k = 0; !op && k < UNREAD_RECENT; k++)
				if (unread[k].desc && unread[k].desc == ops[i])
					type = unread[k].type;
			mark_bad(g, NP_DGW_OPERATION, type);
			return;
		}
		if (op->u.ts.bad) {
			mark_bad(g, (enum np_dg_reason)op->u.ts.why, op->u.ts.why_value);
			return;
		}
		for (int k = 0; k < op->u.ts.n; k++) {
			uint8_t f = op->u.ts.t[k].flags;
			/* beta blends the output's old values in */
			if ((f & T_WRITTEN) && op->u.ts.beta)
				f |= T_READ;
			add_tensor(g, op->u.ts.t[k], f);
		}
	}
}

/* what a graph, engine, heuristics query or engine config serves, into
 * dst: bad unless src is one of them and knows its graph */
static void copy_graph(struct dg_entry *dst, const void *src_desc)
{
	struct dg_entry *src = find(src_desc);
	if (src && (src->type == NP_DG_OPGRAPH || src->type == NP_DG_ENGINE ||
		    src->type == NP_DG_ENGINEHEUR || src->type == NP_DG_ENGINECFG)) {
		dst->u.ts = src->u.ts;
		return;
	}
	memset(&dst->u.ts, 0, sizeof(dst->u.ts));
	dst->u.ts.known = 1;
	mark_bad(&dst->u.ts, NP_DGW_GRAPH_UNSEEN, 0);
}

static void set_tensor(struct dg_entry *e, int attr, int atype, int64_t n, const void *v)
{
	if (attr == NP_DGA_TENSOR_UID && atype == NP_DGT_INT64 && n == 1) {
		memcpy(&e->u.tensor.uid, v, 8);
		e->u.tensor.has_uid = 1;
	} else if (attr == NP_DGA_TENSOR_DTYPE && atype == NP_DGT_DATA_TYPE && n == 1) {
		memcpy(&e->u.tensor.dtype, v, sizeof(int));
	} else if ((attr == NP_DGA_TENSOR_DIMS || attr == NP_DGA_TENSOR_STRIDES) &&
		   atype == NP_DGT_INT64) {
		uint8_t k = n >= 1 && n <= NP_DNN_MAX_DIMS ? (uint8_t)n : 0;
		int dims = attr == NP_DGA_TENSOR_DIMS;
		memcpy(dims ? e->u.tensor.dims : e->u.tensor.strides, v, (size_t)k * 8);
		*(dims ? &e->u.tensor.nb : &e->u.tensor.n_strides) = k;
	} else if (attr == NP_DGA_TENSOR_RAGGED ||
		   (attr == NP_DGA_TENSOR_REORDERING && atype == NP_DGT_REORDERING && n == 1 &&
		    memcmp(v, &(int){ 0 }, sizeof(int)))) {
		/* packed variable-length sequences (an offset per batch), or a
		 * swizzled layout: never checked as dims and strides say */
		e->u.tensor.not_plain = 1;
	} else if ((attr == NP_DGA_TENSOR_VIRTUAL || attr == NP_DGA_TENSOR_BY_VALUE) &&
		   atype == NP_DGT_BOOLEAN && n == 1) {
		uint8_t b = *(const uint8_t *)v != 0;   /* a C bool */
		*(attr == NP_DGA_TENSOR_VIRTUAL ? &e->u.tensor.virt : &e->u.tensor.by_value) = b;
	}
}

static void set_operation(struct dg_entry *e, int attr, int atype, int64_t n, const void *v)
{
	uint8_t role = np_dg_tensor_role(e->type, attr);
	if (role && atype == NP_DGT_BACKEND_DESCRIPTOR && n == 1) {
		const void *td;
		memcpy(&td, v, sizeof(td));
		struct dg_tensor t;
		int r = tensor_of(td, &t);
		if (r < 0)
			mark_bad(&e->u.ts, NP_DGW_OP_TENSOR, 0);
		else if (r == 0)
			add_tensor(&e->u.ts, t, role);
	} else if (is_beta(e->type, attr) && (atype == NP_DGT_FLOAT || atype == NP_DGT_DOUBLE) &&
		   n == 1) {
		e->u.ts.beta = !np_gemm_scalar_zero(v, atype == NP_DGT_FLOAT ? 4 : 8);
	}
}

static void set_pack(struct dg_entry *e, int attr, int atype, int64_t n, const void *v)
{
	int k = n >= 0 && n <= NP_DG_TENSORS ? (int)n : 0;   /* more: never planned */
	if (attr == NP_DGA_PACK_UIDS && atype == NP_DGT_INT64) {
		memcpy(e->u.pack.uid, v, (size_t)k * 8);
		e->u.pack.n_uids = (uint8_t)k;
	} else if (attr == NP_DGA_PACK_POINTERS && atype == NP_DGT_VOID_PTR) {
		for (int i = 0; i < k; i++) {
			const void *p;
			memcpy(&p, (const char *)v + (size_t)i * sizeof(p), sizeof(p));
			e->u.pack.ptr[i] = (uintptr_t)p;
		}
		e->u.pack.n_ptrs = (uint8_t)k;
	} else if (attr == NP_DGA_PACK_WORKSPACE && atype == NP_DGT_VOID_PTR && n == 1) {
		const void *p;
		memcpy(&p, v, sizeof(p));
		e->u.pack.workspace = (uintptr_t)p;
	} else if (attr == NP_DGA_PACK_INTERMEDIATES && atype == NP_DGT_VOID_PTR) {
		for (int64_t i = 0; i < n; i++) {
			const void *p;
			memcpy(&p, (const char *)v + (size_t)i * sizeof(p), sizeof(p));
			e->u.pack.intermediates |= p != NULL;
		}
	}
}

void np_dg_set(const void *desc, int attr, int atype, int64_t n, const void *elems)
{
	if (!elems || n < 0)
		return;
	pthread_mutex_lock(&lock);
	struct dg_entry *e = find(desc);
	if (!e) {
		pthread_mutex_unlock(&lock);
		return;
	}
	const void *ref = NULL;
	if (atype == NP_DGT_BACKEND_DESCRIPTOR && n == 1)
		memcpy(&ref, elems, sizeof(ref));
	if (e->type == NP_DG_TENSOR)
		set_tensor(e, attr, atype, n, elems);
	else if (np_dg_is_operation(e->type))
		set_operation(e, attr, atype, n, elems);
	else if (e->type == NP_DG_VARIANT_PACK)
		set_pack(e, attr, atype, n, elems);
	else if (e->type == NP_DG_OPGRAPH && attr == NP_DGA_GRAPH_OPS &&
		 atype == NP_DGT_BACKEND_DESCRIPTOR)
		compose(&e->u.ts, (void *const *)elems, n);
	else if ((e->type == NP_DG_ENGINE && attr == NP_DGA_ENGINE_GRAPH) ||
		 (e->type == NP_DG_ENGINEHEUR && attr == NP_DGA_HEUR_GRAPH) ||
		 (e->type == NP_DG_ENGINECFG && attr == NP_DGA_CFG_ENGINE) ||
		 (e->type == NP_DG_PLAN && attr == NP_DGA_PLAN_CFG))
		copy_graph(e, ref);
	pthread_mutex_unlock(&lock);
}

void np_dg_results(const void *heur, void *const *cfgs, int64_t n)
{
	if (!cfgs)
		return;
	pthread_mutex_lock(&lock);
	struct dg_entry *h = find(heur);
	for (int64_t i = 0; h && h->type == NP_DG_ENGINEHEUR && i < n; i++) {
		struct dg_entry *c = find(cfgs[i]);
		if (c && c->type == NP_DG_ENGINECFG)
			c->u.ts = h->u.ts;
	}
	pthread_mutex_unlock(&lock);
}

/* ---- an execution ---- */

static uint64_t pointer_of(const struct dg_entry *pack, int64_t uid)
{
	for (int i = 0; i < pack->u.pack.n_uids; i++)
		if (pack->u.pack.uid[i] == uid)
			return pack->u.pack.ptr[i];
	return 0;
}

/* r among p's reads when it is one of the two largest inputs (x and w,
 * dy and w, x and dy; a fused graph's x and added z before a bias) */
static void offer(struct np_gemm_plan *p, struct np_kread r)
{
	if (p->n_rd < 2) {
		p->rd[p->n_rd++] = r;
		return;
	}
	int small = p->rd[0].numel <= p->rd[1].numel ? 0 : 1;
	if (r.numel > p->rd[small].numel)
		p->rd[small] = r;
}

/* the plan from a graph's tensors g and the pack's addresses: every
 * tensor an operation writes (a convolution's y; attention's O and its
 * statistics, or dQ, dK and dV) checked whole, each judged on every
 * tensor the graph reads */
static int plan_of(const struct dg_tensors *g, const struct dg_entry *pack,
		   struct np_gemm_plan *p, struct np_dg_why *why)
{
	if (!g->known)
		return *why = (struct np_dg_why){ NP_DGW_GRAPH_UNSEEN, 0 }, -1;
	if (g->bad)
		return *why = (struct np_dg_why){ (enum np_dg_reason)g->why, g->why_value }, -1;
	if (pack->u.pack.n_uids != pack->u.pack.n_ptrs || !pack->u.pack.n_uids)
		return *why = (struct np_dg_why){ NP_DGW_PACK, 0 }, -1;
	uint64_t ptr[NP_DG_TENSORS];
	int n_out = 0;
	for (int i = 0; i < g->n; i++) {
		const struct dg_tensor *t = &g->t[i];
		if (!(ptr[i] = pointer_of(pack, t->uid)))
			return *why = (struct np_dg_why){ NP_DGW_NOT_IN_PACK, t->uid }, -1;
		if (!(t->flags & T_WRITTEN))
			continue;
		/* every output checkable and dense, or none planned: an output
		 * left out would look clean to its readers */
		if (!t->numel)
			return *why = (struct np_dg_why){ NP_DGW_NOT_DENSE, t->uid }, -1;
		if (t->dtype < 0)
			return *why = (struct np_dg_why){ NP_DGW_NOT_FLOAT, t->uid }, -1;
		if (n_out++ == 1 + NP_GEMM_MORE_OUTS)
			return *why = (struct np_dg_why){ NP_DGW_OUTPUTS, n_out }, -1;
	}
	if (!n_out)
		return *why = (struct np_dg_why){ NP_DGW_NO_OUTPUT, 0 }, -1;
	memset(p, 0, sizeof(*p));
	struct np_kbuf out = { .how = NP_KH_GEMM };
	for (int i = 0; i < g->n; i++)
		if (g->t[i].flags & T_READ)
			np_gemm_add_input(&out, ptr[i]);
	for (int i = 0; i < g->n; i++) {
		if (!(g->t[i].flags & T_WRITTEN))
			continue;
		struct np_kbuf *b = p->out.numel ? &p->more[p->n_more++] : &p->out;
		*b = out;
		b->ptr = ptr[i];
		b->numel = g->t[i].numel;
		b->dtype = (enum np_dtype)g->t[i].dtype;
	}
	for (int i = 0; i < g->n; i++)
		if ((g->t[i].flags & T_READ) && !(g->t[i].flags & T_WRITTEN) && g->t[i].numel &&
		    g->t[i].dtype >= 0)
			offer(p, (struct np_kread){ .ptr = ptr[i], .numel = g->t[i].numel,
						    .dtype = (enum np_dtype)g->t[i].dtype });
	return 0;
}

int np_dg_plan_why(const void *plan, const void *vpack, struct np_gemm_plan *p,
		   struct np_dg_why *why)
{
	struct dg_tensors g;
	struct dg_entry pack;
	struct np_dg_why none;
	int r = -1;
	if (!why)
		why = &none;
	*why = (struct np_dg_why){ NP_DGW_NONE, 0 };
	pthread_mutex_lock(&lock);
	struct dg_entry *pe = find(plan), *ve = find(vpack);
	if (!pe || pe->type != NP_DG_PLAN)
		*why = (struct np_dg_why){ NP_DGW_PLAN_UNSEEN, 0 };
	else if (!ve || ve->type != NP_DG_VARIANT_PACK)
		*why = (struct np_dg_why){ NP_DGW_PACK_UNSEEN, 0 };
	else {
		g = pe->u.ts;
		pack = *ve;
		r = plan_of(&g, &pack, p, why);
	}
	if (r == 0)
		stats.planned++;
	else
		stats.unplanned++;
	pthread_mutex_unlock(&lock);
	return r;
}

/* flags of the tensor of uid in g, 0 when g has none (or is not known) */
static uint8_t flags_of(const struct dg_tensors *g, int64_t uid)
{
	for (int i = 0; g->known && !g->bad && i < g->n; i++)
		if (g->t[i].uid == uid)
			return g->t[i].flags;
	return 0;
}

int np_dg_plan_noted(const void *plan, const void *vpack, struct np_gemm_plan *p)
{
	_Static_assert(NP_KD_BUF_INPUTS <= 16, "note_written holds a bit per input");
	static const struct dg_tensors unknown;
	pthread_mutex_lock(&lock);
	struct dg_entry *pe = find(plan), *ve = find(vpack);
	struct dg_entry pack;
	int have = ve && ve->type == NP_DG_VARIANT_PACK;
	if (have)
		pack = *ve;
	const struct dg_tensors *g = pe && pe->type == NP_DG_PLAN ? &pe->u.ts : &unknown;
	struct dg_tensors graph = *g;
	pthread_mutex_unlock(&lock);
	if (!have)
		return -1;
	memset(p, 0, sizeof(*p));
	p->note_only = 1;
	p->out.how = NP_KH_GEMM;
	/* the first address that may be written is the note's output; every
	 * other one an input, marked written unless the graph says it is
	 * only read.  Pointers without a uid (an uneven pack) count as
	 * unknown. */
	for (int i = 0; i < pack.u.pack.n_ptrs; i++) {
		uint64_t ptr = pack.u.pack.ptr[i];
		uint8_t fl = i < pack.u.pack.n_uids ? flags_of(&graph, pack.u.pack.uid[i]) : 0;
		int read_only = (fl & T_READ) && !(fl & T_WRITTEN);
		if (!ptr || ptr == p->out.ptr)
			continue;
		if (!p->out.ptr && !read_only) {
			p->out.ptr = ptr;
			continue;
		}
		int k = p->out.n_in;
		np_gemm_add_input(&p->out, ptr);
		if (p->out.n_in > k && !read_only)
			p->note_written |= (uint16_t)(1u << k);
	}
	if (!p->out.ptr)   /* every address only read: nothing to note */
		return -1;
	return 0;
}

int np_dg_plan(const void *plan, const void *vpack, struct np_gemm_plan *p)
{
	return np_dg_plan_why(plan, vpack, p, NULL);
}

int np_dg_pack_workspace(const void *vpack, uint64_t *ptr)
{
	int r = -1;
	pthread_mutex_lock(&lock);
	struct dg_entry *e = find(vpack);
	if (e && e->type == NP_DG_VARIANT_PACK && !e->u.pack.intermediates) {
		*ptr = e->u.pack.workspace;
		r = 0;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

const char *np_dg_why_text(const struct np_dg_why *why, char *buf, size_t n)
{
	static const char *const text[NP_DGW_MAX] = {
		[NP_DGW_NONE] = "planned",
		[NP_DGW_PLAN_UNSEEN] = "the plan not seen built (before the agent came?)",
		[NP_DGW_PACK_UNSEEN] = "the variant pack not seen built",
		[NP_DGW_GRAPH_UNSEEN] = "the plan's engine config or graph not seen built",
		[NP_DGW_OPERATION] = "an operation of type %lld not read",
		[NP_DGW_OP_TENSOR] = "an operation's tensor not seen built",
		[NP_DGW_TENSORS] = "more tensors than a graph holds",
		[NP_DGW_PACK] = "a variant pack longer than kept, or uneven",
		[NP_DGW_NOT_IN_PACK] = "tensor %lld not in the variant pack",
		[NP_DGW_NOT_DENSE] = "output %lld not one dense range",
		[NP_DGW_NOT_FLOAT] = "output %lld of a type not checked",
		[NP_DGW_OUTPUTS] = "more than %lld outputs",
		[NP_DGW_NO_OUTPUT] = "no output",
	};
	unsigned r = (unsigned)why->reason;
	long long v = why->reason == NP_DGW_OUTPUTS ? 1 + NP_GEMM_MORE_OUTS : why->value;
	snprintf(buf, n, r < NP_DGW_MAX && text[r] ? text[r] : "?", v);
	return buf;
}

void np_dg_stats(struct np_dg_stats *out)
{
	pthread_mutex_lock(&lock);
	*out = stats;
	pthread_mutex_unlock(&lock);
}
