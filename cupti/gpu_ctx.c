/* gpu_ctx.c - per-context resources of the checks (see gpu_ctx.h). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "gpu_ctx.h"
#include "inflight.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct np_gpu_ctx ctxs[NP_GPU_MAX_CTX];
static int nctx;                      /* published with release stores */
static CUlibrary library;             /* context-independent: loaded once */
static CUkernel kernels[NP_DT_MAX];
static CUkernel list_kernels[NP_DT_MAX];   /* NULL: not in the fatbin, one launch per check */

/* The entry points of check_abi.h: a prefix, then the dtype. */
#define CHECK_NAMES(prefix)                                                     \
	{ [NP_DT_F32] = prefix "f32", [NP_DT_F64] = prefix "f64",                  \
	  [NP_DT_F16] = prefix "f16", [NP_DT_BF16] = prefix "bf16",                \
	  [NP_DT_F8E4M3] = prefix "f8e4m3", [NP_DT_F8E5M2] = prefix "f8e5m2" }
static const char *const kernel_names[NP_DT_MAX] = CHECK_NAMES(NP_CHECK_KERNEL_PREFIX);
static const char *const list_kernel_names[NP_DT_MAX] = CHECK_NAMES(NP_CHECK_LIST_KERNEL_PREFIX);

static int load_library(const char **why)
{
	if (library)
		return 0;
	CUresult r = np_cu.library_load_data(&library, np_check_fatbin, NULL, NULL, 0,
					     NULL, NULL, 0);
	if (r != CUDA_SUCCESS) {
		*why = "cannot load the check kernels";
		library = NULL;
		return -1;
	}
	for (int t = 0; t < NP_DT_MAX; t++) {
		if (np_cu.library_get_kernel(&kernels[t], library, kernel_names[t]) != CUDA_SUCCESS) {
			*why = "check kernel missing in fatbin";
			return -1;
		}
		if (np_cu.library_get_kernel(&list_kernels[t], library, list_kernel_names[t]) !=
		    CUDA_SUCCESS)
			list_kernels[t] = NULL;
	}
	return 0;
}

/* Functions of the check kernels in the current context, loaded now so
 * that no later launch (perhaps during a capture) loads code. */
static int load_functions(struct np_gpu_ctx *g, const char **why)
{
	for (int t = 0; t < NP_DT_MAX; t++) {
		if (np_cu.kernel_get_function(&g->check_fn[t], kernels[t]) != CUDA_SUCCESS ||
		    np_cu.func_load(g->check_fn[t]) != CUDA_SUCCESS) {
			*why = "cannot load check kernels here";
			return -1;
		}
		/* the list kernels only save launches: without them, one each */
		g->check_list_fn[t] = NULL;
		CUfunction fn;
		if (list_kernels[t] &&
		    np_cu.kernel_get_function(&fn, list_kernels[t]) == CUDA_SUCCESS &&
		    np_cu.func_load(fn) == CUDA_SUCCESS)
			g->check_list_fn[t] = fn;
	}
	return 0;
}

/* The ring's slots and tail in host-mapped memory; head, dropped and the
 * scratch slots in device memory, zeroed on a stream of our own that we
 * wait for once: no stream of the job's is touched. */
static int alloc_memory(struct np_gpu_ctx *g, const char **why)
{
	size_t slots = sizeof(struct np_gpu_rec) * NP_GPU_RING_SLOTS;
	void *host = NULL;
	if (np_cu.mem_host_alloc(&host, slots + 128,
				 CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE) != CUDA_SUCCESS) {
		*why = "cannot allocate pinned ring";
		return -1;
	}
	memset(host, 0, slots + 128);
	CUdeviceptr dhost;
	if (np_cu.mem_host_get_device_pointer(&dhost, host, 0) != CUDA_SUCCESS) {
		*why = "cannot map pinned ring";
		return -1;
	}
	size_t dev_bytes = 256 + sizeof(struct np_check_slot) *
			   (NP_GPU_SCRATCH_SLOTS + NP_INFLIGHT_CAPTURED);
	CUdeviceptr dev;
	if (np_cu.mem_alloc(&dev, dev_bytes) != CUDA_SUCCESS) {
		*why = "cannot allocate check scratch";
		return -1;
	}
	CUstream own;
	if (np_cu.stream_create(&own, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
	    np_cu.memset_d8_async(dev, 0, dev_bytes, own) != CUDA_SUCCESS ||
	    np_cu.stream_synchronize(own) != CUDA_SUCCESS) {
		*why = "cannot clear check scratch";
		return -1;
	}
	g->own = own;
	g->slots_host = host;
	g->tail_host = (volatile unsigned int *)((char *)host + slots);
	g->dropped_copy = (unsigned int *)((char *)host + slots + 64);
	g->ring.slots = (struct np_gpu_rec *)dhost;
	g->ring.tail = (const volatile unsigned int *)(dhost + slots);
	g->ring.head = (unsigned int *)dev;
	g->ring.dropped = (unsigned int *)(dev + 4);
	g->ring.cap = NP_GPU_RING_SLOTS;
	g->scratch = (struct np_check_slot *)(dev + 256);
	return 0;
}

static void setup(struct np_gpu_ctx *g, CUcontext ctx, const char **why)
{
	g->ctx = ctx;
	g->ready = -1;
	CUdevice dev;
	int sms = 0;
	if (np_cu.ctx_get_device(&dev) != CUDA_SUCCESS) {
		*why = "no device for context";
		return;
	}
	g->device = (int)dev;
	np_cu.device_get_attribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
	g->max_blocks = sms > 0 ? 2u * (unsigned)sms : 64u;
	if (g->max_blocks > NP_CHECK_MAX_BLOCKS)
		g->max_blocks = NP_CHECK_MAX_BLOCKS;
	if (load_library(why) || load_functions(g, why) || alloc_memory(g, why))
		return;
	g->ready = 1;
}

struct np_gpu_ctx *np_gpu_ctx_find(CUcontext ctx)
{
	int n = __atomic_load_n(&nctx, __ATOMIC_ACQUIRE);
	for (int i = 0; i < n; i++)
		if (ctxs[i].ctx == ctx)
			return ctxs[i].ready == 1 ? &ctxs[i] : NULL;
	return NULL;
}

struct np_gpu_ctx *np_gpu_ctx_get(CUcontext ctx, const char **why)
{
	struct np_gpu_ctx *g = np_gpu_ctx_find(ctx);
	if (g)
		return g;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < nctx; i++) {
		if (ctxs[i].ctx == ctx) {   /* made meanwhile, or failed before */
			g = ctxs[i].ready == 1 ? &ctxs[i] : NULL;
			goto out;
		}
	}
	if (nctx == NP_GPU_MAX_CTX) {
		*why = "too many CUDA contexts";
		goto out;
	}
	/* only the launch's own context is current on this thread */
	CUcontext cur = NULL;
	if (np_cu.ctx_get_current(&cur) != CUDA_SUCCESS || cur != ctx) {
		*why = "launch context not current";
		goto out;
	}
	/* relaxed for our allocations: under a graph capture of another
	 * thread's (global mode, torch's default) they would otherwise be
	 * refused and invalidate the job's capture */
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	int exchanged = np_cu.exchange_capture_mode(&mode) == CUDA_SUCCESS;
	setup(&ctxs[nctx], ctx, why);
	if (exchanged)
		np_cu.exchange_capture_mode(&mode);
	g = ctxs[nctx].ready == 1 ? &ctxs[nctx] : NULL;
	__atomic_store_n(&nctx, nctx + 1, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&lock);
	return g;
}

int np_gpu_ctx_enter(CUcontext ctx, struct np_ctx_switch *sw)
{
	sw->prev = NULL;
	sw->switched = 0;
	if (np_cu.ctx_get_current(&sw->prev) != CUDA_SUCCESS)
		return -1;
	if (sw->prev == ctx)
		return 0;
	if (np_cu.ctx_set_current(ctx) != CUDA_SUCCESS)
		return -1;
	sw->switched = 1;
	return 0;
}

void np_gpu_ctx_leave(const struct np_ctx_switch *sw)
{
	if (sw->switched)
		np_cu.ctx_set_current(sw->prev);
}

#define MAX_DEVICES 64
static CUcontext primary[MAX_DEVICES];   /* retained, never released: torch
					  * holds them for the process's life */

CUcontext np_gpu_device_ctx(int ordinal)
{
	if (ordinal < 0 || ordinal >= MAX_DEVICES)
		return NULL;
	CUcontext c = __atomic_load_n(&primary[ordinal], __ATOMIC_ACQUIRE);
	if (c)
		return c;
	CUdevice dev;
	pthread_mutex_lock(&lock);
	if (!(c = primary[ordinal])) {
		if (np_cu.device_get(&dev, ordinal) != CUDA_SUCCESS ||
		    np_cu.device_primary_ctx_retain(&c, dev) != CUDA_SUCCESS)
			c = NULL;
		else
			__atomic_store_n(&primary[ordinal], c, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&lock);
	return c;
}

int np_gpu_ctx_count(void)
{
	return __atomic_load_n(&nctx, __ATOMIC_ACQUIRE);
}

struct np_gpu_ctx *np_gpu_ctx_at(int i)
{
	return ctxs[i].ready == 1 ? &ctxs[i] : NULL;
}

uint64_t np_gpu_ctx_dropped(struct np_gpu_ctx *g)
{
	/* relaxed: while another thread captures a graph in global mode
	 * (torch's default), a synchronising call here would invalidate
	 * the job's capture; in relaxed mode this thread's calls do not */
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	if (np_cu.exchange_capture_mode(&mode) != CUDA_SUCCESS)
		return 0;
	unsigned int d = 0;
	if (np_cu.ctx_set_current(g->ctx) == CUDA_SUCCESS &&
	    np_cu.memcpy_dtoh_async(g->dropped_copy, (CUdeviceptr)g->ring.dropped,
				    sizeof(unsigned int), g->own) == CUDA_SUCCESS &&
	    np_cu.stream_synchronize(g->own) == CUDA_SUCCESS)
		d = *(volatile unsigned int *)g->dropped_copy;
	np_cu.exchange_capture_mode(&mode);
	return d;
}
