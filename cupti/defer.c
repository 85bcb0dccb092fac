/* defer.c - deferring checks over a few launches (defer.h). */
#include <pthread.h>
#include "defer.h"
#include "defer_set.h"
#include "drain.h"
#include "gpu_ctx.h"

volatile unsigned np_defer_waiting;

/* The calls, besides those the agent always sees (subscriber.c), before
 * which what waits is launched; every call it sees but a kernel launch
 * is one. */
const CUpti_CallbackId np_defer_cbids[] = {
	CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
	CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,
	CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2,
	CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize,
	CUPTI_DRIVER_TRACE_CBID_cuEventRecord,
	CUPTI_DRIVER_TRACE_CBID_cuEventRecord_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags,
	CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture,
	CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2,
	CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph,
	CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
	CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2_ptds,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuMemRelease,
	/* a list must not be launched on a stream or context that is gone */
	CUPTI_DRIVER_TRACE_CBID_cuStreamDestroy,
	CUPTI_DRIVER_TRACE_CBID_cuStreamDestroy_v2,
	CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy,
	CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy_v2,
	CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxRelease,
	CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxRelease_v2,
	CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxReset,
	CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxReset_v2,
};

const size_t np_defer_ncbids = sizeof(np_defer_cbids) / sizeof(np_defer_cbids[0]);

static unsigned window;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct np_defer_set set;       /* under lock */
static unsigned launches_since;       /* under lock: since the first check waited */
static __thread int flushing;         /* this thread launches the lists */
static struct np_defer_counts counts; /* under lock */

void np_defer_config(unsigned launches)
{
	window = launches > NP_DEFER_MAX_WINDOW ? NP_DEFER_MAX_WINDOW : launches;
}

unsigned np_defer_window(void)
{
	return window;
}

static void flush_locked(enum np_defer_why why)
{
	if (set.entries)
		counts.flushes[why]++;
	flushing = 1;
	for (unsigned i = 0; i < set.n; i++) {
		struct np_defer_list *l = &set.l[i];
		counts.launches += l->n > 0;
		if (!l->n)
			continue;
		/* in the list's own context: this thread may be launching on
		 * another device (its stream, or the legacy stream's handle
		 * shared by every context, would be another's) */
		struct np_gpu_ctx *g = (struct np_gpu_ctx *)l->ctx;
		struct np_ctx_switch sw;
		if (np_gpu_ctx_enter(g->ctx, &sw)) {
			__atomic_add_fetch(&np_gpu_cnt.launch_failed, l->n, __ATOMIC_RELAXED);
			continue;
		}
		np_check_list_launch(g, (CUstream)(uintptr_t)l->stream, l->dtype, &l->list,
				     l->blocks_of, l->n, l->blocks, l->bytes);
		np_gpu_ctx_leave(&sw);
	}
	flushing = 0;
	np_defer_clear(&set);
	launches_since = 0;
	__atomic_store_n(&np_defer_waiting, 0, __ATOMIC_RELAXED);
}

void np_defer_add(struct np_gpu_ctx *g, CUstream stream, const struct np_check_ready *c)
{
	pthread_mutex_lock(&lock);
	struct np_defer_list *l = np_defer_slot(&set, g, (uint64_t)(uintptr_t)stream, c->dtype,
						c->blocks);
	if (!l) {   /* every list open and none fits */
		flush_locked(NP_DEFER_FULL);
		l = np_defer_slot(&set, g, (uint64_t)(uintptr_t)stream, c->dtype, c->blocks);
	}
	uint64_t lo = (uint64_t)(uintptr_t)c->args.buf;
	np_defer_put(&set, l, &c->args, c->blocks, lo, lo + c->span);
	counts.checks++;
	__atomic_store_n(&np_defer_waiting, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&lock);
}

/* Everything launched if any of [lo[i], hi[i]) is read by what waits;
 * n < 0: whatever it reads. */
static void flush_if_read(const uint64_t *lo, const uint64_t *hi, int n, enum np_defer_why why)
{
	if (!np_defer_pending() || flushing)
		return;
	pthread_mutex_lock(&lock);
	int hit = n < 0;
	for (int i = 0; i < n && !hit; i++)
		hit = np_defer_overlaps(&set, lo[i], hi[i]);
	if (hit)
		flush_locked(why);
	pthread_mutex_unlock(&lock);
}

void np_defer_before_writes(const uint64_t *lo, const uint64_t *hi, int n)
{
	flush_if_read(lo, hi, n, NP_DEFER_WRITE);
}

void np_defer_flush(enum np_defer_why why)
{
	flush_if_read(NULL, NULL, -1, why);
}

void np_defer_counts(struct np_defer_counts *out)
{
	pthread_mutex_lock(&lock);
	*out = counts;
	pthread_mutex_unlock(&lock);
}

void np_defer_launch_done(void)
{
	if (!np_defer_pending() || flushing)
		return;
	pthread_mutex_lock(&lock);
	if (set.entries && ++launches_since >= window)
		flush_locked(NP_DEFER_WINDOW);
	pthread_mutex_unlock(&lock);
}
