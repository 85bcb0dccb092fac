/* check_launch.c - enqueueing finite checks (check_launch.h): the
 * in-flight entry each one's result is judged by, its arguments, and its
 * launch on the stream after what it checks, alone or with others of
 * one launch in a list. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "allocations.h"
#include "check_launch.h"
#include "cuda_api.h"
#include "defer.h"
#include "drain.h"
#include "generic.h"
#include "grad_mode.h"
#include "host_cost.h"
#include "inflight.h"
#include "intervals.h"
#include "wide_inputs.h"

#define MAX_CHECK_BYTES (4ull << 30)

static int empty_checks;   /* NANPROF_GPU_DIAG=empty-checks (gpu.h) */

void np_check_set_empty(int on)
{
	empty_checks = on;
}

static __thread uint32_t my_tid;

uint32_t np_gpu_tid(void)
{
	return my_tid ? my_tid : (my_tid = (uint32_t)syscall(SYS_gettid));
}

/* How many elements of the output to check, 0 for none.  Never past the
 * interval holding it: a check that read past a device allocation could
 * fault and take the job's CUDA context down with it, so a decoding
 * mistake must never get that far. */
static uint64_t checked_numel(const struct np_kbuf *b, unsigned esz)
{
	struct np_iv iv;
	if (np_alloc_of(b->ptr, &iv))
		return 0;
	uint64_t room = (iv.base + iv.len - b->ptr) / esz;
	if (!b->numel)   /* unsized: only a tensor interval says how far it goes;
			  * an allocator segment would run into other tensors */
		return iv.kind == NP_IV_TENSOR ? room : 0;
	return b->numel <= room ? b->numel : 0;
}

/* spans of module calls: one more at each module's return */
static uint32_t module_span;

void np_gpu_module_done(void)
{
	__atomic_add_fetch(&module_span, 1, __ATOMIC_RELAXED);
}

/* How far a launch reads from input word w: the bytes of the read of
 * rd[0..nr) at w (4 GiB at most), or 0 (the word alone). */
static uint32_t extent_of(uint64_t w, const struct np_kread *rd, int nr)
{
	for (int k = 0; k < nr; k++)
		if (rd[k].ptr == w) {
			uint64_t bytes = rd[k].numel * np_dtype_size(rd[k].dtype);
			return bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes;
		}
	return 0;
}

int np_check_prepare(struct np_gpu_ctx *g, CUstream stream, const struct np_kfunc *f,
		     const struct np_kbuf *b, const uint64_t *inputs, uint32_t n_in,
		     const struct np_kread *rd, int nr, int captured,
		     const struct np_generic_launch *as, struct np_check_ready *c)
{
	unsigned esz = np_dtype_size((enum np_dtype)b->dtype);
	uint64_t numel = checked_numel(b, esz);
	if (!numel || numel * esz > MAX_CHECK_BYTES)
		return -1;
	uint64_t tag = np_inflight_tag(captured);
	if (!tag) {
		__atomic_add_fetch(&np_gpu_cnt.table_full, 1, __ATOMIC_RELAXED);
		return 0;
	}
	struct np_inflight e = { .tag = tag, .launch_ns = np_now_ns(),
				 .tid = np_gpu_tid(), .func = f->id,
				 .dtype = (uint8_t)b->dtype, .pairs = b->pairs,
				 .captured = (uint8_t)captured,
				 .device = (uint8_t)g->device,
				 .mode = np_grad_mode_now(),
				 .span = __atomic_load_n(&module_span, __ATOMIC_RELAXED) };
	/* dirty.h orders launches by dl.tag.  A captured tag (bit 63) would
	 * come after every ordinary launch: a kernel reading a graph's
	 * output would never see it dirty, and a graph's birth could never
	 * be the first.  So a captured check also takes a number in the
	 * ordinary sequence, at capture: after what was launched before the
	 * graph, before what is launched after it is replayed, and in
	 * capture order within it. */
	uint64_t order = captured ? np_inflight_tag(0) : tag;
	if (as) {   /* the generic tier: an undecoded launch's output, found later */
		e.launch_ns = as->launch_ns;
		e.tid = as->tid;
		e.func = as->func;
		e.mode = as->mode;
		order = as->order;
	}
	/* the generic tier's check is judged at its reader, after results of
	 * launches that came after U's: its inputs' history counts (dirty.h) */
	e.dl = (struct np_dirty_launch){ .tag = order, .stream = (uint64_t)(uintptr_t)stream,
					 .out_ptr = b->ptr, .out_len = numel * esz,
					 .late = as != NULL };
	_Static_assert(NP_KD_BUF_INPUTS <= NP_DIRTY_MAX_INPUTS, "an output's inputs all kept");
	for (uint32_t k = 0; k < n_in && k < NP_DIRTY_MAX_INPUTS; k++) {
		e.dl.in_len[e.dl.n_in] = rd ? extent_of(inputs[k], rd, nr) : 0;
		e.dl.in[e.dl.n_in++] = inputs[k];
	}
	/* inputs past the entry's: a cat's (judged on its own inputs), or a
	 * launch's words past the 16th (an Inductor kernel fusing many
	 * reads); kept before the entry that names them */
	const void *more = NULL;
	uint32_t n_more = 0;
	if (b->more_in && inputs == b->in) {
		more = b->more_in;
		n_more = b->n_more;
	} else if (n_in > NP_DIRTY_MAX_INPUTS) {
		more = inputs + NP_DIRTY_MAX_INPUTS;
		n_more = n_in - NP_DIRTY_MAX_INPUTS;
	}
	if (n_more) {
		e.wide = (uint16_t)np_wide_put(tag, captured, more, n_more);
		e.wide_missing = !e.wide;
	}
	np_inflight_put(&e);

	/* the diagnosis's empty check: the same grid, nothing read (gpu.h) */
	c->args = (struct np_check_args){
		.buf = (const void *)(uintptr_t)b->ptr, .numel = empty_checks ? 0 : numel,
		.tag = tag,
		.slot = &g->scratch[np_inflight_scratch_index(tag, NP_GPU_SCRATCH_SLOTS)],
		.ring = g->ring, .report_all = 1,
	};
	uint64_t per_block = (uint64_t)NP_CHECK_THREADS * 16;
	uint64_t blocks = (numel + per_block - 1) / per_block;
	c->blocks = (unsigned)(blocks > g->max_blocks ? g->max_blocks : blocks);
	c->dtype = (uint8_t)b->dtype;
	c->span = numel * esz;
	return 1;
}

static void counted(CUresult r, uint64_t checks, uint64_t bytes)
{
	if (r != CUDA_SUCCESS) {
		__atomic_add_fetch(&np_gpu_cnt.launch_failed, checks, __ATOMIC_RELAXED);
		return;
	}
	__atomic_add_fetch(&np_gpu_cnt.checks, checks, __ATOMIC_RELAXED);
	__atomic_add_fetch(&np_gpu_cnt.bytes, bytes, __ATOMIC_RELAXED);
	__atomic_add_fetch(&np_gpu_cnt.check_launches, 1, __ATOMIC_RELAXED);
}

/* The driver's launch of one of our check kernels, one in NP_HC_EVERY
 * timed (host_cost.h). */
static CUresult launch_check_kernel(CUfunction fn, unsigned blocks, unsigned rows, CUstream stream,
				    void **kp)
{
	int timed = np_hc_check_timed();
	uint64_t t0 = timed ? np_now_ns() : 0;
	CUresult r = np_cu.launch_kernel(fn, blocks, rows, 1, NP_CHECK_THREADS, 1, 1, 0, stream,
					 kp, NULL);
	if (timed)
		np_hc_check_took(np_now_ns() - t0);
	return r;
}

static int launch_alone(struct np_gpu_ctx *g, CUstream stream, const struct np_check_args *a,
			unsigned blocks, uint8_t dtype)
{
	void *kp[] = { (void *)a };
	CUresult r = launch_check_kernel(g->check_fn[dtype], blocks, 1, stream, kp);
	counted(r, 1, a->numel * np_dtype_size((enum np_dtype)dtype));
	return r == CUDA_SUCCESS;
}

/* A check launched at once comes after every check waiting (defer.h):
 * results come back in launch order on a stream. */
static int launch_one(struct np_gpu_ctx *g, CUstream stream, const struct np_check_ready *c)
{
	np_defer_flush(NP_DEFER_NOW);
	return launch_alone(g, stream, &c->args, c->blocks, c->dtype);
}

void np_check_list_launch(struct np_gpu_ctx *g, CUstream stream, uint8_t dtype,
			  const struct np_check_list *list, const uint16_t *blocks_of, unsigned n,
			  unsigned blocks, uint64_t bytes)
{
	if (n == 1 || (n && !g->check_list_fn[dtype])) {
		for (unsigned i = 0; i < n; i++)
			launch_alone(g, stream, &list->e[i], blocks_of[i], dtype);
	} else if (n) {
		void *kp[] = { (void *)list };
		CUresult r = launch_check_kernel(g->check_list_fn[dtype], blocks, n, stream, kp);
		counted(r, n, bytes);
	}
}

void np_check_batch_init_for(struct np_check_batch *bt, int defer)
{
	bt->n = bt->blocks = 0;
	bt->bytes = 0;
	bt->defer = defer && np_defer_window() > 0;
}

void np_check_batch_flush(struct np_gpu_ctx *g, CUstream stream, struct np_check_batch *bt)
{
	if (bt->n) {
		np_defer_flush(NP_DEFER_NOW);
		np_check_list_launch(g, stream, bt->dtype, &bt->list, bt->blocks_of, bt->n,
				     bt->blocks, bt->bytes);
	}
	bt->n = bt->blocks = 0;
	bt->bytes = 0;
}

void np_check_batch_add(struct np_gpu_ctx *g, CUstream stream, struct np_check_batch *bt,
			const struct np_check_ready *c)
{
	if (bt->defer) {
		np_defer_add(g, stream, c);
		return;
	}
	if (c->blocks > NP_CHECK_LIST_MAX_BLOCKS) {
		launch_one(g, stream, c);
		return;
	}
	if (bt->n && (bt->dtype != c->dtype || bt->n == NP_CHECK_LIST))
		np_check_batch_flush(g, stream, bt);
	bt->blocks_of[bt->n] = (uint16_t)c->blocks;
	bt->list.e[bt->n++] = c->args;
	bt->dtype = c->dtype;
	if (c->blocks > bt->blocks)
		bt->blocks = c->blocks;
	bt->bytes += c->args.numel * np_dtype_size((enum np_dtype)c->dtype);
}

int np_gpu_launch_check(struct np_gpu_ctx *g, CUstream stream, const struct np_kfunc *f,
			const struct np_kbuf *b, const uint64_t *inputs, uint32_t n_in,
			int captured, uint64_t *tag)
{
	return np_gpu_launch_check_from(g, stream, f, b, 0, inputs, n_in, NULL, 0, captured, tag);
}

int np_gpu_launch_check_from(struct np_gpu_ctx *g, CUstream stream, const struct np_kfunc *f,
			     const struct np_kbuf *b, uint64_t read, const uint64_t *inputs,
			     uint32_t n_in, const struct np_kread *rd, int nr, int captured,
			     uint64_t *tag)
{
	struct np_check_ready c;
	int r = np_check_prepare(g, stream, f, b, inputs, n_in, rd, nr, captured, NULL, &c);
	*tag = r == 1 && !captured ? c.args.tag : 0;
	if (r != 1)
		return r;
	if (read)   /* the same bytes elsewhere: judged as b's all the same */
		c.args.buf = (const void *)(uintptr_t)read;
	np_generic_forget(b->ptr);   /* checked after whatever wrote it */
	/* deferring: it waits with the launches' checks (a module-level
	 * check, a guard, a copy's), in the order it was prepared in */
	if (!captured && np_defer_window() > 0) {
		np_defer_add(g, stream, &c);
		return 1;
	}
	return launch_one(g, stream, &c);
}
