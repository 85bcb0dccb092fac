/* subscriber.c - the CUPTI callback switchboard: kernel launches (checks
 * of their outputs, enqueued on the same stream at API exit), copies,
 * and device allocations (allocations.h), in the driver domain (see
 * gpu.h; driver_args.h reads each call's arguments).
 *
 * The callback runs on the job's launching threads, for every launch: it
 * allocates nothing after the first launch of a context, takes only the
 * interval map's mutex for a few lookups, and never synchronises.  Our
 * own check launches come back into it: a thread-local flag ignores
 * them.  Copies and memsets are copy_calls.c's.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "../agent/agent_proto.h"
#include "../agent/alog.h"
#include "../agent/report.h"
#include "allocations.h"
#include "blas.h"
#include "check_launch.h"
#include "copy_calls.h"
#include "cuda_api.h"
#include "defer.h"
#include "drain.h"
#include "driver_args.h"
#include "driver_writes.h"
#include "generic.h"
#include "gpu.h"
#include "gpu_ctx.h"
#include "grad_mode.h"
#include "host_cost.h"
#include "inflight.h"
#include "intervals.h"
#include "kdecode_lambda.h"
#include "kfunc.h"
#include "outmax.h"
#include "triton.h"
#include "writers.h"

#define MAX_OUTPUTS NP_KD_MAX_OUTPUTS
#define MAX_WORDS 64             /* pointer words looked at per launch */
#define MAX_READS 32             /* inputs offered to the generic tier per launch (an
				  * optimizer's first 32 gradients) */

static CUpti_SubscriberHandle subscriber;
static volatile int enabled;
static int started;
static pid_t owner;              /* the process that started the checks */
static struct np_gpu_config config;
static int modules;              /* module-level checks: no CUPTI subscription */
static const char *modules_why;
#define CUPTI_TAKEN "cupti taken by another tool"
static __thread int inside;      /* our own driver calls and launches */

/* kernel launches first (KERNEL_LAUNCH_CBIDS of them), then what else
 * the agent always sees */
#define KERNEL_LAUNCH_CBIDS 6
static const CUpti_CallbackId launch_cbids[] = {
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
	CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync,
	CUPTI_DRIVER_TRACE_CBID_cuMemMap,
	CUPTI_DRIVER_TRACE_CBID_cuMemUnmap,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2_ptds,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpy,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpy_ptds,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeer,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeer_ptds,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync_ptsz,
};

static int is_launch(CUpti_CallbackId cbid)
{
	for (size_t i = 0; i < KERNEL_LAUNCH_CBIDS; i++)
		if (launch_cbids[i] == cbid)
			return 1;
	return 0;
}

static int is_write_call(CUpti_CallbackId cbid)
{
	for (size_t i = 0; i < np_write_ncbids; i++)
		if (np_write_cbids[i] == cbid)
			return 1;
	return 0;
}

/* A call the agent always sees but a kernel launch: allocations, frees,
 * mappings, copies, memsets. */
static int is_memory_call(CUpti_CallbackId cbid)
{
	for (size_t i = KERNEL_LAUNCH_CBIDS; i < sizeof(launch_cbids) / sizeof(launch_cbids[0]); i++)
		if (launch_cbids[i] == cbid)
			return 1;
	return is_write_call(cbid);
}

/* ---- the guards' suspect ---- */

/* this thread's latest launch with unchecked outputs: the guards' suspect */
static __thread uint64_t unchecked_seq;
static __thread uint32_t unchecked_func;

static void note_unchecked(uint64_t seq, const struct np_kfunc *f)
{
	np_writers_unchecked(seq);
	unchecked_seq = seq;
	unchecked_func = f ? f->id : 0;
}

uint32_t np_gpu_suspect(uint64_t ptr)
{
	return unchecked_seq && unchecked_seq > np_writers_last(ptr) ? unchecked_func : 0;
}

void np_gpu_own(int on)
{
	inside = on;
}

/* sample:K's statistics step is on (gpu.h: np_gpu_step) */
static volatile int stat_step;

static int sampled_out(struct np_kfunc *f)
{
	/* every launch of a kernel bumps its counter only when sampling:
	 * launching threads share it */
	if (config.mode != NP_GPU_SAMPLE || np_gpu_zoom || stat_step)
		return 0;
	uint64_t n = __atomic_fetch_add(&f->launches, 1, __ATOMIC_RELAXED);
	return n % config.sample_every != 0;
}

/* The dtype writers.h keeps for b's write: complex values marked. */
static int written_dtype(const struct np_kbuf *b)
{
	return (int)b->dtype | (b->pairs ? NP_WRITERS_PAIRS : 0);
}

/* b with its dtype: a torch.cat output's is what last wrote its first
 * input (writers.h), of the element size the kernel copies, written into
 * *tmp; NULL when that is not known (the output then goes unchecked, as
 * an unsized one).  A cat of complex values (OpaqueType<8> of complex64)
 * is checked as their real view.  Any other buffer: b itself. */
static const struct np_kbuf *typed(const struct np_kbuf *b, struct np_kbuf *tmp)
{
	if (b->how != NP_KH_CAT)
		return b;
	int d = b->n_in > 0 && np_gpu_writers() ? np_writers_dtype(b->in[0]) : -1;
	int pairs = d >= 0 && (d & NP_WRITERS_PAIRS);
	d &= ~NP_WRITERS_PAIRS;
	if (d < 0 || np_dtype_size((enum np_dtype)d) << pairs != b->esize)
		return NULL;
	*tmp = *b;
	tmp->dtype = (enum np_dtype)d;
	tmp->pairs = (uint8_t)pairs;
	tmp->numel = b->numel << pairs;
	return tmp;
}

/* A prepared check of output b (check_prepare returned 1) into the
 * batch, noted as the checked write of its buffer: its generic-tier note
 * stale, the guards' writer checked (a check launch the driver refuses
 * later is counted, but the writer stays noted as checked). */
static void enqueue_checked(struct np_gpu_ctx *g, CUstream stream, struct np_check_batch *bt,
			    const struct np_check_ready *c, const struct np_kbuf *b, uint64_t seq,
			    int captured)
{
	np_check_batch_add(g, stream, bt, c);
	np_generic_forget(b->ptr);
	if (seq)
		np_writers_checked(b->ptr, seq, captured ? 0 : c->args.tag, written_dtype(b));
}

/* Some launch of f had an output sized: from now on its sampled-out
 * launches need no note (on_launch). */
static void mark_sized(struct np_kfunc *f)
{
	if (!__atomic_load_n(&f->sized, __ATOMIC_RELAXED))
		__atomic_store_n(&f->sized, 1, __ATOMIC_RELAXED);
}

/* A launch of f whose outputs no check covers: the coverage report's. */
static void count_undecoded(struct np_kfunc *f)
{
	__atomic_add_fetch(&np_gpu_cnt.undecoded, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&f->undecoded, 1, __ATOMIC_RELAXED);
}

/* ---- the generic tier (generic.h) ---- */

/* Words that are no device address, seen in undecoded launches' opaque
 * parameters (a pair of ints, a host pointer): asked of the driver once,
 * until the next allocation.  Races between threads cost at most an
 * extra question, or a word not noted once. */
#define NOT_DEVICE_CACHE 512
static uint64_t not_device[NOT_DEVICE_CACHE];

static unsigned not_device_slot(uint64_t w)
{
	return (unsigned)((w >> 3) * 0x9e3779b97f4a7c15ull >> 40) & (NOT_DEVICE_CACHE - 1);
}

static int device_word(uint64_t w)
{
	struct np_iv iv;
	unsigned s = not_device_slot(w);
	if (__atomic_load_n(&not_device[s], __ATOMIC_RELAXED) == w)
		return 0;
	if (np_alloc_of(w, &iv) == 0)
		return 1;
	__atomic_store_n(&not_device[s], w, __ATOMIC_RELAXED);
	return 0;
}

/* Whether an undecoded launch has reads a decoder sizes (a
 * multi_tensor_apply functor that writes no list: LpNormFunctor). */
static int reads_known(const struct np_kfunc *f)
{
	return f->info.family == NP_KF_MULTI_TENSOR_APPLY && f->info.mta.read;
}

/* What a launch reads with a known extent (np_kdecode_reads), into
 * in[0..MAX_READS), for the generic tier; none while nothing was ever
 * noted (decoding them repeats some of the outputs' validation: an
 * optimizer's block table). */
static int generic_reads_of(const struct np_kfunc *f, void **params,
			    const struct np_klaunch *kl, struct np_kread *in)
{
	return config.generic && params && np_generic_any() ?
		       np_kdecode_reads(&f->info, &f->params, (void *const *)params, kl, in,
					MAX_READS) : 0;
}

/* An undecoded launch's words (of a launch on stream by f): those in
 * device memory are noted as maybe written by it, for its first decoded
 * reader to check; those it is known to read (rd[0..nr), sized, and
 * ro[0..nro), known inputs of no known extent) keep their writer's note
 * (they are only the inputs of its checks). */
static void note_words(CUstream stream, const struct np_kfunc *f, const uint64_t *words, int nw,
		       const struct np_kread *rd, int nr, const uint64_t *ro, int nro,
		       uint64_t seq)
{
	struct np_generic_launch u = { .seq = seq, .func = f->id };
	for (int i = 0; i < nw && u.n_words < NP_GENERIC_WORDS; i++) {
		int dup = 0, read = 0;
		for (uint32_t k = 0; k < u.n_words; k++)
			dup |= u.words[k] == words[i];
		for (int k = 0; k < nr; k++)
			read |= rd[k].ptr == words[i];
		for (int k = 0; k < nro; k++)
			read |= ro[k] == words[i];
		if (dup || !device_word(words[i]))
			continue;
		u.read_only |= (uint32_t)read << u.n_words;
		u.words[u.n_words++] = words[i];
	}
	if (!u.n_words)
		return;
	CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;
	np_cu.stream_is_capturing(stream, &cap);
	u.captured = cap == CU_STREAM_CAPTURE_STATUS_ACTIVE;
	/* its place among the checks' launches, for the dirty tracker */
	if (!(u.order = np_inflight_tag(0)))
		return;
	u.launch_ns = np_now_ns();
	u.tid = np_gpu_tid();
	u.mode = np_grad_mode_now();
	np_generic_note(&u);
}

/* An undecoded launch: its pointer words, noted (note_words).  A strided
 * copy into a strided view is not sized, but its lambda says which
 * pointer is its input: a later reader of that input (the tensor it was
 * copied from) must not have it checked as the copy's output.  Seen on
 * an H200: the input's NaN, born in the outermost module, was named at
 * the copy in blocks.0.attn. */
static void note_generic(const struct np_launch *l, const struct np_kfunc *f, void **params,
			 const struct np_klaunch *kl, const struct np_kread *rd, int nr,
			 uint64_t seq)
{
	uint64_t words[MAX_WORDS], ro[NP_LAMBDA_MAX_TENSORS];
	if (!config.generic || !params)
		return;
	int nw = np_kdecode_pointer_words(&f->params, (void *const *)params, words, MAX_WORDS);
	int nro = np_kdecode_input_words(&f->info, &f->params, (void *const *)params, kl, ro,
					 NP_LAMBDA_MAX_TENSORS);
	note_words(l->stream, f, words, nw, rd, nr, ro, nro, seq);
}

/* A decoded launch's inputs that an undecoded launch was handed since
 * their last checked write: each checked over what this launch reads, as
 * that launch's output (its kernel, thread, time, place in launch order,
 * and its other words as inputs), in a check launch of their own before
 * this launch's checks, whose verdicts then see them dirty.  An input
 * this launch also writes (in place) is left to its own check. */
static void check_generic_reads(struct np_gpu_ctx *g, const struct np_launch *l,
				const struct np_kread *in, int n, const struct np_kbuf *outs,
				int nout, int captured, struct np_check_batch *batch)
{
	struct np_generic_launch u;
	int added = 0;
	for (int i = 0; i < n; i++) {
		int own = 0;
		for (int k = 0; k < nout; k++)
			own |= outs[k].ptr == in[i].ptr;
		if (own || !np_generic_take(in[i].ptr, &u) || u.captured != captured)
			continue;
		struct np_kfunc *uf = np_kfunc_by_id(u.func);
		struct np_kbuf b = { .ptr = in[i].ptr, .numel = in[i].numel, .dtype = in[i].dtype,
				     .pairs = in[i].pairs, .n_in = -1 };
		/* judged on the launch's other words: the buffer's own address
		 * may be known dirty from whatever held it before (a -inf mask
		 * the allocator's block held last step), and the launch most
		 * likely wrote it, not read it */
		uint64_t from[NP_GENERIC_WORDS];
		uint32_t n_from = 0;
		for (uint32_t k = 0; k < u.n_words; k++)
			if (u.words[k] != b.ptr)
				from[n_from++] = u.words[k];
		struct np_check_ready c;
		if (!uf || np_check_prepare(g, l->stream, uf, &b, from, n_from, NULL, 0, captured, &u,
					    &c) != 1)
			continue;
		np_check_batch_add(g, l->stream, batch, &c);
		added = 1;
		__atomic_add_fetch(&np_gpu_cnt.generic_checks, 1, __ATOMIC_RELAXED);
		if (u.seq && np_gpu_writers())
			np_writers_checked(b.ptr, u.seq, captured ? 0 : c.args.tag,
					   written_dtype(&b));
	}
	/* their records must come before this launch's: not in one list */
	if (added)
		np_check_batch_flush(g, l->stream, batch);
}

/* An undecoded launch whose reads a decoder sizes (_foreach_norm's
 * LpNormFunctor, the first reader of clip_grad_norm_'s gradients): they
 * check what undecoded launches before it wrote, as a decoded reader's
 * do, before its own words are noted. */
static void check_reads_only(const struct np_launch *l, const struct np_kread *in, int n,
			     CUcontext ctx)
{
	const char *why = NULL;
	if (!n)
		return;
	CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;
	np_cu.stream_is_capturing(l->stream, &cap);
	int captured = cap == CU_STREAM_CAPTURE_STATUS_ACTIVE;
	struct np_gpu_ctx *g = captured ? np_gpu_ctx_find(ctx) : np_gpu_ctx_get(ctx, &why);
	if (!g)
		return;
	struct np_check_batch batch;
	np_check_batch_init(&batch);
	check_generic_reads(g, l, in, n, NULL, 0, captured, &batch);
}

/* What a launch's configuration tells the decoders: the grid for row
 * kernels and tensor lists, the thread count as a sanity bound on
 * elementwise counts (kdecode.h). */
static struct np_klaunch klaunch_of(const struct np_launch *l)
{
	uint32_t blocks = l->grid[0] * l->grid[1] * l->grid[2];
	return (struct np_klaunch){
		.threads = (uint64_t)blocks * l->block[0] * l->block[1] * l->block[2],
		.blocks = blocks,
		.grid = { l->grid[0], l->grid[1], l->grid[2] },
		.block = { l->block[0], l->block[1], l->block[2] } };
}

/* A decoded launch about to write in place (add_, mul_, relu_: its
 * output's address is one of its inputs too) what an undecoded launch
 * wrote and no decoded one has read yet.  The generic tier checks such
 * an address after its first decoded reader, but one that writes it in
 * place has overwritten it by then (check_generic_reads leaves it to
 * the reader's own check, which sees a birth: a ReLU in place after a
 * convolution whose plan was made before attach).  So the address is
 * checked now, at the launch's API entry, before it is enqueued, as the
 * undecoded launch's output over what this launch writes.  Looked at
 * only when an address the generic tier noted appears twice among the
 * launch's first words: a few word comparisons per launch otherwise. */
#define IN_PLACE_WORDS 16
static void before_launch(const struct np_launch *l, const struct np_kfunc *f, void **params,
			  CUcontext ctx)
{
	uint64_t words[IN_PLACE_WORDS];
	int nw = np_kdecode_pointer_words(&f->params, (void *const *)params, words,
					  IN_PLACE_WORDS), hit = 0;
	for (int i = 0; i < nw && !hit; i++)
		for (int j = i + 1; j < nw && !hit; j++)
			hit = words[i] == words[j] && np_generic_maybe(words[i]);
	if (!hit)
		return;
	struct np_klaunch kl = klaunch_of(l);
	struct np_kbuf outs[MAX_OUTPUTS];
	struct np_kread rd[MAX_OUTPUTS];
	int nout = np_kdecode_outputs(&f->info, &f->params, (void *const *)params, &kl, outs,
				      MAX_OUTPUTS), nr = 0;
	for (int k = 0; k < nout; k++) {
		const struct np_kbuf *b = &outs[k];
		int twice = 0;
		for (int i = 0; i < nw; i++)
			twice += words[i] == b->ptr;
		for (int i = 0; i < b->n_in; i++)
			twice += b->in[i] == b->ptr;
		if (twice >= 2 && b->numel && b->dtype < NP_DT_MAX && b->how != NP_KH_CAT)
			rd[nr++] = (struct np_kread){ .ptr = b->ptr, .numel = b->numel,
						      .dtype = b->dtype, .pairs = b->pairs };
	}
	check_reads_only(l, rd, nr, ctx);
}

/* Waiting checks (defer.h) launched before a kernel that may write what
 * they read: its outputs decoded at the launch's entry, a tensor list's
 * (an optimizer's) in turns as at its exit.  One whose writes are not all
 * known (undecoded, a library's but a planned cuBLAS call's,
 * at_launch_entry; an output of unknown extent or dtype; a list of more
 * than DEFER_TURNS turns) launches them all. */
#define DEFER_TURNS 256          /* of MAX_OUTPUTS outputs: 4096 */
static void defer_before_launch(const struct np_kfunc *f, void **params, struct np_klaunch kl)
{
	struct np_kbuf outs[MAX_OUTPUTS];
	uint64_t lo[MAX_OUTPUTS], hi[MAX_OUTPUTS];
	int nout = params ? np_kdecode_outputs(&f->info, &f->params, (void *const *)params, &kl,
					       outs, MAX_OUTPUTS) : 0;
	for (unsigned turn = 0; nout > 0; turn++) {
		for (int k = 0; k < nout; k++) {
			const struct np_kbuf *b = &outs[k];
			/* a cat's dtype is not known here, its extent is */
			uint64_t bytes = b->how == NP_KH_CAT ? b->numel * b->esize
				       : b->dtype < NP_DT_MAX ? np_kbuf_bytes(b) : 0;
			if (!bytes) {
				np_defer_flush(NP_DEFER_UNKNOWN);
				return;
			}
			lo[k] = b->ptr;
			hi[k] = b->ptr + bytes;
		}
		np_defer_before_writes(lo, hi, nout);
		/* the last turn, or nothing waits any more (launched) */
		if (!kl.more || !np_defer_pending())
			return;
		if (turn + 1 >= DEFER_TURNS)
			break;
		kl.first += (uint32_t)nout;
		nout = np_kdecode_outputs(&f->info, &f->params, (void *const *)params, &kl, outs,
					  MAX_OUTPUTS);
	}
	np_defer_flush(NP_DEFER_UNKNOWN);
}

/* A launch's API entry, before it is enqueued: what waits and what it
 * writes (deferred checks), an undecoded kernel's output it writes in
 * place (the generic tier).  The launch is read once for both. */
static void at_launch_entry(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	int defer = np_defer_pending();
	int generic = config.generic && np_generic_any() && np_blas_idle();
	struct np_launch l;
	if (defer) {
		/* a kernel of a cuBLAS call: the call says what it writes */
		uint64_t lo[NP_CALL_WRITES], hi[NP_CALL_WRITES];
		int n = np_blas_call_writes(lo, hi);
		if (n > 0)
			np_defer_before_writes(lo, hi, n);
		else if (n < 0)
			np_defer_flush(NP_DEFER_UNKNOWN);
		defer = !n;
	}
	if (!defer && !generic)
		return;
	if (np_launch_args(cbid, cb->functionParams, &l)) {
		if (defer)
			np_defer_flush(NP_DEFER_UNKNOWN);
		return;
	}
	struct np_kfunc *f = np_kfunc_get((uint64_t)(uintptr_t)l.f, cb->symbolName,
					  np_driver_layout, NULL);
	if (f && f->ours)
		return;
	void *packed[NP_KD_MAX_PARAMS];
	void **params = !f || f->info.family == NP_KF_UNKNOWN ? NULL :
			l.params ? l.params : np_params_from_extra(l.extra, &f->params, packed);
	if (defer)
		defer_before_launch(f, params, klaunch_of(&l));
	if (generic && params)
		before_launch(&l, f, params, cb->context);
}

static void on_launch(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	struct np_launch l;
	if (cb->callbackSite == CUPTI_API_ENTER) {
		at_launch_entry(cbid, cb);
		return;
	}
	if (cb->callbackSite != CUPTI_API_EXIT || np_launch_args(cbid, cb->functionParams, &l))
		return;
	if (cb->functionReturnValue && *(const CUresult *)cb->functionReturnValue != CUDA_SUCCESS)
		return;
	__atomic_add_fetch(&np_gpu_cnt.launches, 1, __ATOMIC_RELAXED);
	struct np_kfunc *f = np_kfunc_get((uint64_t)(uintptr_t)l.f, cb->symbolName,
					  np_driver_layout, NULL);
	if (!f) {
		__atomic_add_fetch(&np_gpu_cnt.table_full, 1, __ATOMIC_RELAXED);
		if (np_gpu_writers())   /* it wrote something no check saw */
			np_writers_unchecked(np_writers_next());
		return;
	}
	void *packed[NP_KD_MAX_PARAMS];
	if (f->ours)
		return;
	/* a kernel of a cuBLAS call whose output the call's wrapper has
	 * checked after the call's last kernel (blas.h) */
	if (np_blas_claim(f, l.stream, cb->context))
		return;
	void **params = l.params ? l.params : np_params_from_extra(l.extra, &f->params, packed);
	struct np_klaunch kl = klaunch_of(&l);
	if (sampled_out(f)) {
		__atomic_add_fetch(&np_gpu_cnt.sampled_out, 1, __ATOMIC_RELAXED);
		/* a kernel no launch of which was ever sized (no decoder reads
		 * it, or none sizes its outputs: LpNormFunctor, a T* of unknown
		 * extent) is noted all the same (no GPU work): a sampled reader
		 * then names it, or every sampled reader would need its writer
		 * sampled too.  What it is known to read keeps its writer's note. */
		if (f->info.family == NP_KF_UNKNOWN || !__atomic_load_n(&f->sized, __ATOMIC_RELAXED)) {
			struct np_kread rd[MAX_READS];
			int nr = reads_known(f) ? generic_reads_of(f, params, &kl, rd) : 0;
			note_generic(&l, f, params, &kl, rd, nr, 0);
		}
		return;
	}
	/* the guards' launch order: what this launch wrote, checked or not */
	uint64_t seq = np_gpu_writers() ? np_writers_next() : 0;
	struct np_kbuf outs[MAX_OUTPUTS];
	int nout = params ? np_kdecode_outputs(&f->info, &f->params, (void *const *)params,
					       &kl, outs, MAX_OUTPUTS) : 0;
	/* a torch.compile'd Triton kernel: its outputs as its Python call
	 * told them (triton.h), with its reads */
	struct np_kread rd[MAX_READS];
	int nr = -1;
	uint64_t words[MAX_WORDS];
	int nw = -1;   /* the launch's pointer words, once read */
	if (nout <= 0 && params && np_triton_pending()) {
		nw = np_kdecode_pointer_words(&f->params, (void *const *)params, words, MAX_WORDS);
		nout = np_triton_claim(f->name, words, nw, outs, MAX_OUTPUTS, rd, MAX_READS, &nr);
		static int told;
		__atomic_add_fetch(&np_gpu_cnt.triton_checks, nout > 0, __ATOMIC_RELAXED);
		if (nout > 0 && !__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
			np_alog("Triton: %s's outputs checked as its Python call named them",
				f->name);
		if (nout <= 0)
			nr = -1;
	}
	if (nout <= 0) {
		count_undecoded(f);
		if (seq)
			note_unchecked(seq, f);
		/* reads of a launch that writes nothing sized: checked once,
		 * then kept out of its note */
		nr = reads_known(f) ? generic_reads_of(f, params, &kl, rd) : 0;
		check_reads_only(&l, rd, nr, cb->context);
		note_generic(&l, f, params, &kl, rd, nr, seq);
		return;
	}
	CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;
	np_cu.stream_is_capturing(l.stream, &cap);
	int captured = cap == CU_STREAM_CAPTURE_STATUS_ACTIVE;
	const char *why = NULL;
	struct np_gpu_ctx *g = captured ? np_gpu_ctx_find(cb->context)
					: np_gpu_ctx_get(cb->context, &why);
	if (!g) {
		static int told;
		__atomic_add_fetch(&np_gpu_cnt.capture_skip, 1, __ATOMIC_RELAXED);
		/* the context's check kernels or memory cannot be made (no
		 * image for this GPU, out of memory): nothing will be checked,
		 * which the gpu_on already sent must not hide */
		if (why && !__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
			np_report_status_gpu(NP_AST_GPU_OFF, why);
		if (seq)
			note_unchecked(seq, f);
		return;
	}
	/* inputs: every pointer word but each output's own word, once: an
	 * in-place kernel (data[1] == data[0]) reads its output, and a
	 * non-finite value there is propagation, not a birth */
	uint64_t inputs[MAX_WORDS];
	if (nw < 0)
		nw = np_kdecode_pointer_words(&f->params, (void *const *)params, words, MAX_WORDS);
	uint32_t n_in = 0;
	uint32_t taken = 0;   /* outputs whose own word was dropped (bit k) */
	for (int i = 0; i < nw; i++) {
		int k = 0;
		while (k < nout && (k >= 32 || (taken >> k & 1) || words[i] != outs[k].ptr))
			k++;
		if (k < nout)
			taken |= 1u << k;
		else
			inputs[n_in++] = words[i];
	}
	/* outputs named but of unknown extent (a T* no tensor interval
	 * covers) go unchecked: counted with the undecoded, not lost.  An
	 * output that names its own inputs (a tensor list entry: the launch's
	 * words hold other entries', and stale ones) is judged on those.  A
	 * launch with more outputs than outs[] holds (an optimizer's list,
	 * up to about a thousand) is read in turns. */
	int sized = 0;
	struct np_kbuf cat_out;
	struct np_check_batch batch;
	np_check_batch_init_for(&batch, !captured);
	/* what it reads, sized: its inputs judged over it (dirty.h: a
	 * reader of a whole buffer handed its start reads a slice a birth
	 * wrote further in), and the generic tier's checks of what
	 * undecoded launches wrote there */
	if (nr < 0)
		nr = params ? np_kdecode_reads(&f->info, &f->params, (void *const *)params, &kl, rd,
					       MAX_READS) : 0;
	if (config.generic && np_generic_any())
		check_generic_reads(g, &l, rd, nr, outs, nout, captured, &batch);
	for (;;) {
		for (int k = 0; k < nout; k++) {
			const struct np_kbuf *b = typed(&outs[k], &cat_out);
			int own = outs[k].n_in >= 0;
			struct np_check_ready c;
			int r = !b ? -1 : np_check_prepare(g, l.stream, f, b, own ? b->in : inputs,
							own ? (uint32_t)b->n_in : n_in, rd, nr,
							captured, NULL, &c);
			sized |= r >= 0;
			if (r == 1)
				enqueue_checked(g, l.stream, &batch, &c, b, seq, captured);
			else if (seq)
				note_unchecked(seq, f);
		}
		if (!kl.more)
			break;
		kl.first += (uint32_t)nout;
		nout = np_kdecode_outputs(&f->info, &f->params, (void *const *)params, &kl, outs,
					  MAX_OUTPUTS);
		if (nout <= 0)
			break;
	}
	np_check_batch_flush(g, l.stream, &batch);
	if (sized) {
		mark_sized(f);
	} else {
		count_undecoded(f);
		note_generic(&l, f, params, &kl, reads_known(f) ? rd : NULL, reads_known(f) ? nr : 0,
			     seq);
	}
}

/* ---- cuBLAS calls (blas.h) ---- */

/* A planned call's outputs (cuBLAS's D; a cuDNN graph's one or more),
 * checked after its last kernel f as a decoded launch's: what undecoded
 * kernels wrote into A and B first (the generic tier), then each output,
 * judged on A, B (C, the bias; a graph's every input).  Sampled out, or
 * an output not checkable after all (memory the driver does not know),
 * the outputs left are noted for the generic tier as f's, A and B as
 * its reads: their first decoded reader then names f. */
static void gemm_done(const struct np_gemm_plan *p, struct np_kfunc *f, CUstream stream,
		      CUcontext ctx)
{
	struct np_launch l = { .stream = stream };
	struct np_kbuf outs[1 + NP_GEMM_MORE_OUTS];
	int n_out = 1 + (p->n_more < NP_GEMM_MORE_OUTS ? p->n_more : NP_GEMM_MORE_OUTS);
	outs[0] = p->out;
	memcpy(&outs[1], p->more, (size_t)(n_out - 1) * sizeof(outs[0]));
	/* the words of the outputs left unchecked, then of every input (the
	 * outputs share theirs) */
	uint64_t words[1 + NP_GEMM_MORE_OUTS + NP_KD_BUF_INPUTS];
	int nw = 0, checked = 0;
	/* a call whose output's extent is unknown (fft.h), or whose outputs
	 * are not known (dnn_graph.h: a plan made before the agent came):
	 * its addresses, which its kernels' parameters hide, noted for the
	 * generic tier, the output (and any input that may be one) as
	 * written, the inputs as read */
	if (p->note_only) {
		uint64_t seq = np_gpu_writers() ? np_writers_next() : 0;
		uint64_t ro[NP_KD_BUF_INPUTS];
		int nro = 0;
		words[nw++] = p->out.ptr;
		for (int k = 0; k < p->out.n_in; k++) {
			words[nw++] = p->out.in[k];
			if (p->out.in[k] != p->out.ptr && !(p->note_written >> k & 1))
				ro[nro++] = p->out.in[k];
		}
		count_undecoded(f);
		if (seq)
			note_unchecked(seq, f);
		if (config.generic)
			note_words(stream, f, words, nw, NULL, 0, ro, nro, seq);
		return;
	}
	if (sampled_out(f)) {
		__atomic_add_fetch(&np_gpu_cnt.sampled_out, 1, __ATOMIC_RELAXED);
		if (config.generic) {
			for (int i = 0; i < n_out; i++)
				words[nw++] = outs[i].ptr;
			for (int k = 0; k < p->out.n_in; k++)
				words[nw++] = p->out.in[k];
			note_words(stream, f, words, nw, p->rd, p->n_rd, NULL, 0, 0);
		}
		return;
	}
	uint64_t seq = np_gpu_writers() ? np_writers_next() : 0;
	CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;
	np_cu.stream_is_capturing(stream, &cap);
	int captured = cap == CU_STREAM_CAPTURE_STATUS_ACTIVE;
	const char *why = NULL;
	struct np_gpu_ctx *g = captured ? np_gpu_ctx_find(ctx) : np_gpu_ctx_get(ctx, &why);
	struct np_check_batch batch;
	np_check_batch_init_for(&batch, !captured);
	if (g) {
		int nr = config.generic && np_generic_any() ? p->n_rd : 0;
		check_generic_reads(g, &l, p->rd, nr, outs, n_out, captured, &batch);
	} else {
		__atomic_add_fetch(&np_gpu_cnt.capture_skip, 1, __ATOMIC_RELAXED);
	}
	for (int i = 0; i < n_out; i++) {
		const struct np_kbuf *b = &outs[i];
		struct np_check_ready c;
		/* judged on A and B (a graph's two largest inputs) all of them */
		if (g && np_check_prepare(g, stream, f, b, b->in, (uint32_t)b->n_in, p->rd, p->n_rd,
				       captured, NULL, &c) == 1) {
			enqueue_checked(g, stream, &batch, &c, b, seq, captured);
			checked++;
		} else {
			words[nw++] = b->ptr;
		}
	}
	if (checked)
		mark_sized(f);
	if (checked < n_out) {
		count_undecoded(f);
		if (seq)
			note_unchecked(seq, f);
		if (config.generic) {
			for (int k = 0; k < p->out.n_in; k++)
				words[nw++] = p->out.in[k];
			note_words(stream, f, words, nw, p->rd, p->n_rd, NULL, 0, seq);
		}
	}
	if (g)
		np_check_batch_flush(g, stream, &batch);
	__atomic_add_fetch(&np_gpu_cnt.gemm_checks, checked > 0, __ATOMIC_RELAXED);
}

/* blas.h: on the calling thread, after the call returned */
void np_gpu_gemm_done(const struct np_gemm_plan *p, struct np_kfunc *f, CUstream stream,
		      CUcontext ctx)
{
	if (!enabled || inside)
		return;
	inside = 1;   /* the checks' own driver calls: not the job's */
	gemm_done(p, f, stream, ctx);
	inside = 0;
}

/* Whether a copy's destination may be the host's memory: not device
 * memory the job allocated (np_alloc_of knows every such range, and
 * asks the driver of the rest once) */
static int maybe_host(uint64_t dst)
{
	struct np_iv iv;
	return np_alloc_of(dst, &iv) != 0;
}

/* What waits (defer.h), before a driver call other than a kernel launch:
 * a copy or memset into device memory launches it only when it writes a
 * waiting range, as a kernel does; a new allocation or mapping never (no
 * waiting range lies in memory not mapped: frees and unmaps launch what
 * waits); every other call launches it all (a free, a sync, an event
 * record, a copy to the host, a copy whose writes are not all told,
 * capture, replay, teardown). */
static void defer_before_call(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	uint64_t dst, src;
	size_t bytes;
	CUstream stream;
	struct np_writes w;
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2:
	case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync:
	case CUPTI_DRIVER_TRACE_CBID_cuMemMap:
		return;
	}
	if (np_copy_args(cbid, cb->functionParams, &dst, &src, &bytes, &stream) == 0) {
		uint64_t hi = dst + bytes;
		if (hi < dst)
			np_defer_flush(NP_DEFER_UNKNOWN);
		else if (maybe_host(dst))
			np_defer_flush(NP_DEFER_ORDER);   /* a copy to the host */
		else
			np_defer_before_writes(&dst, &hi, 1);
		return;
	}
	if (np_driver_writes(cbid, cb->functionParams, &w) == 0) {
		for (int i = 0; i < w.n && !w.to_host; i++)
			w.to_host = maybe_host(w.lo[i]);
		if (w.to_host || w.untold)
			np_defer_flush(w.to_host ? NP_DEFER_ORDER : NP_DEFER_UNKNOWN);
		else
			np_defer_before_writes(w.lo, w.hi, w.n);
		return;
	}
	np_defer_flush(is_memory_call(cbid) ? NP_DEFER_MEMORY : NP_DEFER_ORDER);
}

/* NANPROF_GPU_TRACE_ERRORS=1, a diagnosis: every driver call is seen,
 * and each call that fails is logged on stderr (once per call and
 * error, 64 at most), saying
 * whether the call was nanprof's or the job's.  How
 * a broken graph capture ("operation failed due to a previous error
 * during capture") is traced to the first call that broke it. */
static int trace_errors;

static int watched(CUpti_CallbackId cbid)
{
	for (size_t i = 0; i < sizeof(launch_cbids) / sizeof(launch_cbids[0]); i++)
		if (launch_cbids[i] == cbid)
			return 1;
	for (size_t i = 0; config.defer && i < np_defer_ncbids; i++)
		if (np_defer_cbids[i] == cbid)
			return 1;
	return is_write_call(cbid);
}

static void trace_error(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	static uint64_t seen[64];   /* (call, error) pairs logged: each once */
	static unsigned nseen;
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	if (cb->callbackSite != CUPTI_API_EXIT || !cb->functionReturnValue)
		return;
	CUresult r = *(const CUresult *)cb->functionReturnValue;
	if (r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY)
		return;
	uint64_t key = (uint64_t)cbid << 32 | (uint32_t)r;
	pthread_mutex_lock(&lock);
	unsigned i = 0;
	while (i < nseen && seen[i] != key)
		i++;
	int fresh = i == nseen && nseen < 64;
	if (fresh)
		seen[nseen++] = key;
	pthread_mutex_unlock(&lock);
	if (!fresh)
		return;
	int was_inside = inside;
	inside = 1;   /* cuGetErrorName is a driver call too */
	const char *name = np_cu_err(r);
	inside = was_inside;
	fprintf(stderr, "nanprof-agent[%d]: driver call %s (cbid %u%s%s) failed: %s (%d), "
		"%s call, thread %ld\n", (int)getpid(), cb->functionName ? cb->functionName : "?",
		(unsigned)cbid, cb->symbolName ? ", " : "", cb->symbolName ? cb->symbolName : "",
		name, (int)r, was_inside ? "nanprof's" : "the job's", (long)syscall(SYS_gettid));
}

static void CUPTIAPI callback(void *userdata, CUpti_CallbackDomain domain,
			      CUpti_CallbackId cbid, const void *data)
{
	(void)userdata;
	if (domain != CUPTI_CB_DOMAIN_DRIVER_API || !enabled)
		return;
	const CUpti_CallbackData *cb = data;
	if (trace_errors) {
		trace_error(cbid, cb);
		if (!watched(cbid))
			return;
	}
	if (inside)
		return;
	inside = 1;
	int timed = np_hc_callback_timed();   /* host_cost.h */
	uint64_t t0 = timed ? np_now_ns() : 0;
	if (cb->callbackSite == CUPTI_API_ENTER && np_defer_pending() && !is_launch(cbid))
		defer_before_call(cbid, cb);
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2:
	case CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2:
	case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync:
	case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync:
	case CUPTI_DRIVER_TRACE_CBID_cuMemMap:
	case CUPTI_DRIVER_TRACE_CBID_cuMemUnmap:
		/* new device memory: a word that was no device address
		 * may be one now */
		if (np_alloc_on_call(cbid, cb))
			memset(not_device, 0, sizeof(not_device));
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2_ptds:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2_ptsz:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpy:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpy_ptds:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeer:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeer_ptds:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync_ptsz:
		np_copy_call(cbid, cb);
		break;
	default:
		if (!is_launch(cbid)) {   /* np_defer_cbids[]: only the flush above */
			np_write_call(cbid, cb);
			break;
		}
		on_launch(cbid, cb);
		if (cb->callbackSite == CUPTI_API_EXIT)
			np_defer_launch_done();
	}
	if (timed)
		np_hc_callback_took(np_now_ns() - t0);
	inside = 0;
}

/* ---- start, stop ---- */

void np_gpu_config_from_env(struct np_gpu_config *cfg)
{
	np_gpu_config_parse(getenv("NANPROF_GPU_MODE"), cfg);
}

void np_gpu_config_parse(const char *s, struct np_gpu_config *cfg)
{
	cfg->mode = NP_GPU_EVERY;
	cfg->sample_every = 16;
	cfg->with_modules = s && strstr(s, "+modules") != NULL;
	if (s && strcmp(s, "modules") == 0)
		cfg->mode = NP_GPU_MODULES;
	if (s && strncmp(s, "sample", 6) == 0) {
		cfg->mode = NP_GPU_SAMPLE;
		if (s[6] == ':' && atoi(s + 7) > 0)
			cfg->sample_every = (uint32_t)atoi(s + 7);
	}
	/* not when sampling: nearly every output's last check would be old,
	 * and guarding them all would cost what sampling saves */
	const char *g = getenv("NANPROF_GPU_GUARD");
	cfg->guard = cfg->mode == NP_GPU_EVERY && !cfg->with_modules && !(g && strcmp(g, "0") == 0);
	const char *gen = getenv("NANPROF_GPU_GENERIC");
	cfg->generic = cfg->mode != NP_GPU_MODULES && !(gen && strcmp(gen, "0") == 0);
	const char *d = getenv("NANPROF_GPU_DEFER");
	np_gpu_config_set_defer(cfg, d && atoi(d) > 0 ? (unsigned)atoi(d) : 0);
	const char *diag = getenv("NANPROF_GPU_DIAG");
	cfg->empty_checks = diag && strcmp(diag, "empty-checks") == 0;
	static int told;   /* the config is read more than once */
	if (diag && *diag && !cfg->empty_checks && !__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
		np_alog("NANPROF_GPU_DIAG=%s not known (empty-checks is): ignored", diag);
}

void np_gpu_config_set_defer(struct np_gpu_config *cfg, unsigned n)
{
	_Static_assert(NP_AGENT_GPU_DEFER_MAX == NP_DEFER_MAX_WINDOW, "--gpu-defer's bound");
	cfg->defer = cfg->mode == NP_GPU_MODULES ? 0 : n > NP_DEFER_MAX_WINDOW ? NP_DEFER_MAX_WINDOW : n;
}

/* The calls before which what waits is launched (defer.h), subscribed
 * the first time checks are deferred: 0, or -1 if one cannot be seen
 * (then nothing may wait). */
static int subscribe_defer_calls(void)
{
	static int done;
	for (size_t i = 0; !done && i < np_defer_ncbids; i++)
		if (np_cu.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
					  np_defer_cbids[i]) != CUPTI_SUCCESS) {
			np_alog("cannot see driver call %u: checks not deferred",
				(unsigned)np_defer_cbids[i]);
			return -1;
		}
	done = 1;
	return 0;
}

static const char *subscribe(void)
{
	CUptiResult r = np_cu.subscribe(&subscriber, (CUpti_CallbackFunc)callback, NULL);
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
		return CUPTI_TAKEN;
	if (r != CUPTI_SUCCESS)
		return "cupti subscribe failed";
	for (size_t i = 0; i < sizeof(launch_cbids) / sizeof(launch_cbids[0]); i++) {
		if (np_cu.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
					  launch_cbids[i]) != CUPTI_SUCCESS) {
			np_cu.unsubscribe(subscriber);
			return "cupti enable failed";
		}
	}
	/* a CUPTI older than a call cannot see it; nor then, it seems, can
	 * the job make it through that CUPTI's driver: said, and gone on */
	size_t unseen = 0, first = 0;
	for (size_t i = 0; i < np_write_ncbids; i++)
		if (np_cu.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
					  np_write_cbids[i]) != CUPTI_SUCCESS && !unseen++)
			first = i;
	if (unseen)
		np_alog("cannot see %zu of %zu copy and memset calls (cbid %u first): "
			"what they write is not known", unseen, np_write_ncbids,
			(unsigned)np_write_cbids[first]);
	if (config.defer && subscribe_defer_calls()) {
		config.defer = 0;
		np_defer_config(0);
	}
	const char *t = getenv("NANPROF_GPU_TRACE_ERRORS");
	if (t && *t && *t != '0' && np_cu.enable_domain &&
	    np_cu.enable_domain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API) == CUPTI_SUCCESS)
		trace_errors = 1;
	return NULL;
}

/* A forked child inherits the handler but neither the drain thread nor
 * the ring and scratch (pinned and device memory are not mapped in a
 * child): draining there would fault, or report the parent's counters
 * again under the parent's numbers. */
static void at_exit(void)
{
	if (getpid() == owner)
		np_gpu_stop();
}

int np_gpu_start(struct np_gpu_config *cfg, const char **why)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	int rc = 0;
	pthread_mutex_lock(&lock);
	if (started) {   /* nanprof attached again */
		/* its mode, unless that would subscribe or unsubscribe: the
		 * launch checks' modes switch; CUPTI stays as it is */
		unsigned was = np_defer_window();
		if (!modules && cfg->mode != NP_GPU_MODULES)
			config = *cfg;
		else
			config.defer = was;
		/* its window (nothing waits while detached: np_gpu_stop
		 * launched it all), its calls subscribed if they were not */
		if (config.defer && !was && subscribe_defer_calls())
			config.defer = 0;
		if (config.defer != was) {
			np_defer_flush(NP_DEFER_NOW);
			np_defer_config(config.defer);
			if (config.defer)
				np_alog("checks deferred: the checks of up to %u launches in one "
					"list launch", config.defer);
			else
				np_alog("checks no longer deferred");
		}
		*cfg = config;
		np_check_set_empty(config.empty_checks);
		/* what ran while detached was not seen: no buffer's last
		 * writer is known to have been checked */
		np_writers_reset();
		np_generic_reset();
		np_outmax_reset();
		np_gpu_zoom = 0;
		if (np_drain_start()) {
			*why = "cannot start drain thread";
			rc = -1;
		} else {
			enabled = 1;
			rc = modules;
			*why = modules ? modules_why : NULL;
		}
		goto out;
	}
	*why = NULL;
	const char *w = NULL;
	if (np_cuda_open(&w)) {
		*why = w;
		rc = -1;
		goto out;
	}
	np_kfunc_demangle = np_cu.cxa_demangle;
	np_grad_mode_resolve();   /* torch is loaded before CUDA: found now */
	config = *cfg;
	np_check_set_empty(config.empty_checks);
	np_defer_config(config.defer);
	if (config.defer)
		np_alog("checks deferred: the checks of up to %u launches in one list launch "
			"(NANPROF_GPU_DEFER)", config.defer);
	if (np_inflight_init() || np_kfunc_init() ||
	    np_alloc_init()) {
		*why = "out of memory";
		rc = -1;
		goto out;
	}
	/* everything ready before the subscription, the wrappers of
	 * cuBLAS's and cuDNN's calls and the drain among it: from the
	 * subscription on, every launch and call is checked (a job may be
	 * waiting for it).  The wrappers go idle if CUPTI turns out to be
	 * held elsewhere (np_gpu_launches()). */
	if (config.mode != NP_GPU_MODULES)
		np_blas_install();
	if (np_drain_start()) {
		*why = "cannot start drain thread";
		rc = -1;
		goto out;
	}
	modules = config.mode == NP_GPU_MODULES;
	started = 1;
	enabled = 1;
	/* CUPTI held by another tool (Kineto, nsys), or left free on
	 * purpose: the hooks check CUDA tensors at module level instead
	 * (modules.c), with the same kernels and the same drain */
	const char *taken = modules ? "asked for" : subscribe();
	if (taken && strcmp(taken, CUPTI_TAKEN) != 0 && !modules) {
		enabled = 0;
		started = 0;
		np_drain_stop(0);
		*why = taken;
		rc = -1;
		goto out;
	}
	if (taken) {
		modules = 1;
		*why = taken;
		rc = 1;
		config.defer = 0;   /* no launch checks to defer */
		np_defer_config(0);
	}
	cfg->defer = config.defer;   /* off if its calls could not be subscribed */
	modules_why = *why;
	/* cuBLAS's calls, whose kernels' parameters are opaque: seen at the
	 * call (blas.h), when launches are checked at all; the libraries
	 * loaded since the install above */
	if (!modules)
		np_blas_install();
	/* at exit: the last results and counters, before the thread dies */
	owner = getpid();
	atexit(at_exit);
out:
	pthread_mutex_unlock(&lock);
	return rc;
}

void np_gpu_stop(void)
{
	if (!started || !enabled)
		return;
	enabled = 0;
	inside = 1;   /* our launches: not the job's */
	np_defer_flush(NP_DEFER_NOW);
	inside = 0;
	np_drain_stop(100);
}

int np_gpu_active(void)
{
	return started && enabled;
}

int np_gpu_capture_relaxed(void)
{
	CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
	if (!started || np_cu.exchange_capture_mode(&m) != CUDA_SUCCESS)
		return -1;
	return (int)m;
}

void np_gpu_capture_restore(int mode)
{
	CUstreamCaptureMode m = (CUstreamCaptureMode)mode;
	if (mode >= 0)
		np_cu.exchange_capture_mode(&m);
}

int np_gpu_launches(void)
{
	return started && enabled && !modules;
}

void np_gpu_track(const struct np_gpu_config *cfg)
{
	if (!started && cfg->mode != NP_GPU_MODULES)
		np_blas_track();
}

void np_gpu_poll(void)
{
	if (started && !modules)
		np_blas_install();   /* libraries loaded since (blas.h) */
}

/* the guards are on: in `every` mode, and in sample:K's statistics steps */
static int guarding_now(void)
{
	return config.guard || stat_step;
}

void np_gpu_step(uint32_t step)
{
	int on = started && enabled && !modules && config.mode == NP_GPU_SAMPLE &&
		 step % NP_GPU_STAT_STEPS == 0;
	if (on && !stat_step)
		np_writers_reset();   /* what ran sampled since the last one left no notes */
	stat_step = on;
}

int np_gpu_modules(void)
{
	return (modules || config.with_modules || guarding_now()) && started && enabled;
}

int np_gpu_wants(uint64_t ptr, uint64_t *seen_tag)
{
	*seen_tag = 0;
	if (!np_gpu_modules())
		return 0;
	if (modules || config.with_modules || !np_writers_seen(ptr, seen_tag))
		return 1;
	__atomic_add_fetch(&np_gpu_cnt.guard_skips, 1, __ATOMIC_RELAXED);
	return 0;
}

int np_gpu_guarding(void)
{
	return !modules && !config.with_modules && guarding_now();
}

int np_gpu_writers(void)
{
	return !modules && (config.with_modules || guarding_now());
}
