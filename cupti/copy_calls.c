/* copy_calls.c - checks of device copies, and writes told to the origin
 * tracker (copy_calls.h).  Runs inside the CUPTI callback, whose
 * thread-local guard already keeps the agent's own calls out. */
#include <stdint.h>
#include "../agent/alog.h"
#include "allocations.h"
#include "check_launch.h"
#include "copy_calls.h"
#include "driver_args.h"
#include "driver_writes.h"
#include "generic.h"
#include "gpu.h"
#include "gpu_ctx.h"
#include "kdecode.h"
#include "kfunc.h"
#include "write_queue.h"
#include "writers.h"

/* Whether the process sees more than one device (asked once): only then
 * may a copy's two ends be on different devices. */
static int several_devices(void)
{
	static int count;   /* 0: not asked yet */
	int n = __atomic_load_n(&count, __ATOMIC_RELAXED);
	if (!n) {
		if (np_cu.device_get_count(&n) != CUDA_SUCCESS || n < 1)
			n = 1;
		__atomic_store_n(&count, n, __ATOMIC_RELAXED);
	}
	return n > 1;
}

/* The ordinal of the device whose memory ptr is; -1 when not known. */
static int device_of(uint64_t ptr)
{
	int ordinal = -1;
	if (np_cu.pointer_get_attribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
					(CUdeviceptr)ptr) != CUDA_SUCCESS)
		return -1;
	return ordinal;
}

/* Whether a copy or memset into stream is being captured into a CUDA
 * graph (it runs at the graph's replays, not now), asked once per call.
 * The synchronous forms (NULL here) cannot be captured, and their stream
 * is not asked: asking of the legacy stream breaks another thread's
 * global capture. */
static CUstreamCaptureStatus capture_of(CUstream stream)
{
	CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;
	if (stream)
		np_cu.stream_is_capturing(stream, &cap);
	return cap;
}

/* A write no check will read, told to the origin tracker in its place
 * among the launches (write_queue.h): what a birth left there is gone,
 * or, copied from device memory, carried along.  Not a captured one (it
 * happens at each replay, unseen). */
static void tell_tracker(const uint64_t *lo, const uint64_t *hi, const uint64_t *src,
			 const uint8_t *whole, int n, CUstream stream, CUstreamCaptureStatus cap)
{
	if (n > 0 && cap == CU_STREAM_CAPTURE_STATUS_NONE)
		np_wq_post(lo, hi, src, whole, n, (uint64_t)(uintptr_t)stream);
}

/* The check of a device-to-device copy into device memory dst (np_copy_call,
 * below): 1 when launched. */
static int check_copy(const CUpti_CallbackData *cb, uint64_t dst, uint64_t src, size_t bytes,
		      CUstream stream, CUstreamCaptureStatus cap)
{
	uint64_t tag = 0;
	struct np_iv iv;
	int dtype;
	if (!np_gpu_writers() || (dtype = np_writers_dtype(src)) < 0 || !bytes ||
	    cap == CU_STREAM_CAPTURE_STATUS_INVALIDATED)
		return 0;
	int pairs = (dtype & NP_WRITERS_PAIRS) != 0;   /* complex: its real view */
	unsigned part = np_dtype_size((enum np_dtype)(dtype & ~NP_WRITERS_PAIRS));
	if (bytes % (part << pairs))
		return 0;
	/* the source device memory too (cuMemcpy also copies from the host) */
	if (np_alloc_of(src, &iv))
		return 0;
	int captured = cap == CU_STREAM_CAPTURE_STATUS_ACTIVE;
	const char *why = NULL;
	struct np_gpu_ctx *g = captured ? np_gpu_ctx_find(cb->context)
					: np_gpu_ctx_get(cb->context, &why);
	struct np_kfunc *f = np_kfunc_get(NP_KFUNC_PSEUDO | NP_KFUNC_COPY,
					  "cuMemcpy device to device", np_kfunc_no_layout, NULL);
	if (!g || !f)
		return 0;
	/* torch copies between devices on the source's device and stream: a
	 * check there may read only that device's memory (a peer's needs P2P,
	 * else it is an illegal address and the job's context is lost).  It
	 * reads the source instead, the same bytes once the copy is done,
	 * and is judged as the destination's. */
	uint64_t read = 0;
	if (several_devices() && device_of(dst) != g->device) {
		if (device_of(src) != g->device)
			return 0;
		read = src;
	}
	struct np_kbuf b = { .ptr = dst, .numel = bytes / part,
			     .dtype = (enum np_dtype)(dtype & ~NP_WRITERS_PAIRS),
			     .pairs = (uint8_t)pairs, .n_in = -1 };
	/* judged on its source, all of it: a birth in a slice of a buffer
	 * copied whole is this copy's source */
	struct np_kread from = { .ptr = src, .numel = b.numel, .dtype = b.dtype };
	uint64_t seq = np_writers_next();
	if (np_gpu_launch_check_from(g, stream, f, &b, read, &src, 1, &from, 1, captured, &tag) != 1)
		return 0;
	np_writers_checked(dst, seq, tag, dtype);
	return 1;
}

/* A copy (x.clone(), .contiguous() of a contiguous tensor, copy_) moves a
 * non-finite value without a kernel: its destination's first decoded
 * reader would look like the birth, and the real birth would never be
 * seen to leave its module.  So when the source's last write was checked
 * (writers.h knows it, and its dtype), the destination is checked after
 * the copy on the copy's stream, from the source: a non-finite value
 * there is propagation.  Other copies into device memory (of memory no
 * check saw written, of part of a buffer, from the host; or when
 * sampling, which keeps no writers) are told to the origin tracker,
 * which carries a non-finite source's value to the destination. */
void np_copy_call(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	uint64_t dst, src;
	size_t bytes;
	CUstream stream;
	struct np_iv iv;

	if (cb->callbackSite != CUPTI_API_EXIT ||
	    np_copy_args(cbid, cb->functionParams, &dst, &src, &bytes, &stream))
		return;
	if (cb->functionReturnValue && *(const CUresult *)cb->functionReturnValue != CUDA_SUCCESS)
		return;
	/* an undecoded kernel's note of dst is stale, whatever the copy
	 * brought (np_write_call, below) */
	np_generic_forget(dst);
	/* into device memory (cuMemcpy also copies to the host) */
	if (!bytes || dst + bytes < dst || np_alloc_of(dst, &iv))
		return;
	CUstreamCaptureStatus cap = capture_of(stream);
	/* not checked (sampling, a source no check saw written, a copy from
	 * the host): the tracker follows it */
	if (!check_copy(cb, dst, src, bytes, stream, cap)) {
		uint64_t hi = dst + bytes;
		uint8_t whole = 1;   /* one range, byte for byte */
		tell_tracker(&dst, &hi, &src, &whole, 1, stream, cap);
	}
}

/* A copy or memset the agent does not check (driver_writes.h) wrote
 * device memory.  The caching allocator hands a freed block to the next
 * tensor without a call we see, so what it wrote may still be noted as
 * an undecoded kernel's output (generic.h): the note is stale now.  Left
 * there, the first decoded reader of the new contents -- a batch copied
 * in from the host, NaN and all -- would have them checked as that old
 * kernel's output, a birth steps before the value came in.  A note is
 * of the address a kernel was handed: a write from there is what makes
 * it stale. */
void np_write_call(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	struct np_writes w;
	if (cb->callbackSite != CUPTI_API_EXIT || np_driver_writes(cbid, cb->functionParams, &w))
		return;
	if (cb->functionReturnValue && *(const CUresult *)cb->functionReturnValue != CUDA_SUCCESS)
		return;
	for (int i = 0; i < w.n; i++)
		np_generic_forget(w.lo[i]);
	if (w.n > 0)
		tell_tracker(w.lo, w.hi, w.src, w.whole, w.n, w.stream, capture_of(w.stream));
	/* which of these calls a job makes, once each (the GPU check
	 * collects the names from its jobs' logs) */
	static unsigned char told[CUPTI_DRIVER_TRACE_CBID_SIZE];
	if (np_alog_on() && cbid < CUPTI_DRIVER_TRACE_CBID_SIZE &&
	    !__atomic_exchange_n(&told[cbid], 1, __ATOMIC_RELAXED))
		np_alog("unchecked write: %s (its first call: %d device range%s%s%s)",
			cb->functionName ? cb->functionName : "?", w.n, w.n == 1 ? "" : "s",
			w.to_host ? ", to the host too" : "", w.untold ? ", not all told" : "");
}
