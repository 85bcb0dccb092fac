/* modules.c - module-level checks of CUDA tensors (gpu.h), for when no
 * kernel launch can be seen: another tool (Kineto, nsys) holds CUPTI, or
 * NANPROF_GPU_MODE=modules leaves it free for one; or besides the launch
 * checks ("every+modules"), so that a value made by a kernel whose
 * outputs cannot be decoded (cuBLAS, cuDNN) is caught at the module
 * that made it rather than at its first decoded reader.
 *
 * The agent's hooks see every module output, every gradient a node
 * produces, each .grad and each parameter after the step, as on the CPU.
 * A CUDA tensor among them is checked by the same kernel a launch's
 * output would be, enqueued on the stream that made it (torch's current
 * stream in the hook), and judged by the same drain: non-finite while
 * none of the tensors it was made from is known non-finite is a birth,
 * placed in the module, step and phase the hook ran in.  What it cannot
 * tell is which kernel inside the module made the value: the kernel is
 * named after what was checked, and, beside the launch checks (guards,
 * "+modules"), after the latest kernel whose outputs went unchecked
 * (np_gpu_suspect()).
 */
#include <stdio.h>
#include <string.h>
#include "../agent/agent_report.h"
#include "check_launch.h"
#include "cuda_api.h"
#include "drain.h"
#include "gpu.h"
#include "gpu_ctx.h"
#include "kfunc.h"
#include "outmax.h"
#include "writers.h"

/* Pseudo-function keys: no CUfunction lives in the first page. */
static const char *const names[NP_GPU_WHAT_MAX] = {
	[NP_GPU_WHAT_OUTPUT] = NP_GPU_OUTPUT_CHECK_NAME,
	[NP_GPU_WHAT_GRAD] = "nanprof module-level check: gradient a node produced",
	[NP_GPU_WHAT_PARAM_GRAD] = "nanprof module-level check: parameter .grad",
	[NP_GPU_WHAT_PARAM] = "nanprof module-level check: parameter after the step",
	[NP_GPU_WHAT_ROOT] = "nanprof check: the loss handed to backward",
};

/* A guard's pseudo-function: what was checked, after which kernel.  Keys
 * with bit 63 set are no CUfunction either; the low byte is the what. */
static struct np_kfunc *suspect_kfunc(uint8_t what, uint32_t suspect)
{
	const struct np_kfunc *s = np_kfunc_by_id(suspect);
	if (!s || s->id != suspect)
		return NULL;
	char name[NP_KFUNC_NAME + 64];   /* np_kfunc_get keeps what fits */
	snprintf(name, sizeof(name), "%s, after %s", names[what], s->name);
	return np_kfunc_get(NP_KFUNC_PSEUDO | (uint64_t)suspect << 8 | what, name,
			    np_kfunc_no_layout, NULL);
}

static int check_tensor(const struct np_gpu_tensor *t, CUstream stream, CUcontext ctx);

/* The legacy and per-thread default streams: one handle for every
 * context, whose stream is the current context's. */
static int default_stream(uint64_t h)
{
	return h == 0 || h == (uint64_t)(uintptr_t)CU_STREAM_LEGACY ||
	       h == (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD;
}

/* The context of t's stream: on a default stream, its device's (torch's
 * current device may be another: a model split over devices runs every
 * hook with one current), else the stream's own. */
static CUcontext context_of(const struct np_gpu_tensor *t, CUstream stream)
{
	CUcontext ctx = NULL;
	if (t->device >= 0 && default_stream(t->stream))
		return np_gpu_device_ctx(t->device);
	if (np_cu.stream_get_ctx(stream, &ctx) != CUDA_SUCCESS)
		return NULL;
	return ctx;
}

int np_gpu_check_tensor(const struct np_gpu_tensor *t)
{
	if (t->what == 0 || t->what >= NP_GPU_WHAT_MAX || !t->numel)
		return 0;
	/* a root whenever the GPU side is on: no later kernel may read the
	 * loss, so no launch check can see its value leave (gpu_findings.c) */
	if (!(t->what == NP_GPU_WHAT_ROOT ? np_gpu_active() : np_gpu_modules()))
		return 0;
	/* with the launch checks on too, our setup and launch are not the job's */
	np_gpu_own(1);
	int r = 0;
	CUstream stream = (CUstream)(uintptr_t)t->stream;
	CUcontext ctx = context_of(t, stream);
	struct np_ctx_switch sw;
	/* checked in the tensor's own context (gpu_ctx.h) */
	if (ctx && np_gpu_ctx_enter(ctx, &sw) == 0) {
		r = check_tensor(t, stream, ctx);
		np_gpu_ctx_leave(&sw);
	}
	np_gpu_own(0);
	return r;
}

static int check_tensor(const struct np_gpu_tensor *t, CUstream stream, CUcontext ctx)
{
	CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;
	np_cu.stream_is_capturing(stream, &cap);
	int captured = cap == CU_STREAM_CAPTURE_STATUS_ACTIVE;
	const char *why = NULL;
	/* nothing is loaded or allocated while the stream captures */
	struct np_gpu_ctx *g = captured ? np_gpu_ctx_find(ctx) : np_gpu_ctx_get(ctx, &why);
	if (!g) {
		__atomic_add_fetch(&np_gpu_cnt.capture_skip, 1, __ATOMIC_RELAXED);
		return 0;
	}
	uint32_t suspect = np_gpu_writers() ? np_gpu_suspect(t->ptr) : 0;
	struct np_kfunc *f = suspect ? suspect_kfunc(t->what, suspect) : NULL;
	if (!f)
		f = np_kfunc_get(t->what, names[t->what], np_kfunc_no_layout, NULL);
	if (!f)
		return 0;
	struct np_kbuf b = { .ptr = t->ptr, .numel = t->numel, .dtype = (enum np_dtype)t->dtype,
			     .pairs = t->pairs, .n_in = -1 };
	uint64_t tag = 0;
	if (np_gpu_launch_check(g, stream, f, &b, t->inputs, t->n_in, captured, &tag) != 1)
		return 0;
	np_outmax_expect(tag, t->stat_module, t->stat_step);
	/* seen now: a guard of a parent returning the same tensor does not
	 * check it again, and no check of it names an older suspect */
	if (np_gpu_writers())
		np_writers_checked(t->ptr, np_writers_next(), tag,
				   t->dtype | (t->pairs ? NP_WRITERS_PAIRS : 0));
	if (np_gpu_guarding())
		__atomic_add_fetch(&np_gpu_cnt.guard_checks, 1, __ATOMIC_RELAXED);
	return 1;
}
