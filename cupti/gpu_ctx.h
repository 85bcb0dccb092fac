/* gpu_ctx.h - per-CUDA-context resources of the checks: the check
 * kernels' functions, the result ring (host-mapped pinned memory), its
 * device-side counters and the scratch slots of checks in flight.
 *
 * Made the first time a launch is seen in a context while its stream is
 * not capturing a graph (allocating or loading code during a capture
 * would become part of the user's graph), and kept until the process
 * ends: a check still queued on some stream may use them.
 */
#ifndef NP_GPU_CTX_H
#define NP_GPU_CTX_H

#include <stdint.h>
#include "cuda_api.h"
#include "../kernels/check_abi.h"
#include "../kernels/finite.h"

#define NP_GPU_MAX_CTX 16          /* contexts (devices) per process */
#define NP_GPU_RING_SLOTS 65536    /* results in flight per context (4 MiB) */
#define NP_GPU_SCRATCH_SLOTS 65536 /* ordinary checks in flight per context (4 MiB),
				    * then one slot per captured check */

struct np_gpu_ctx {
	CUcontext ctx;
	int device;
	int ready;                       /* 1: usable; -1: failed, never retried */
	CUfunction check_fn[NP_DT_MAX];  /* np_check_<dtype> in this context */
	CUfunction check_list_fn[NP_DT_MAX]; /* np_check_list_<dtype>, or NULL */
	unsigned int max_blocks;         /* 2 x SMs, at most NP_CHECK_MAX_BLOCKS */
	struct np_gpu_ring ring;         /* device addresses, passed to kernels */
	struct np_gpu_rec *slots_host;   /* the same slots, host addresses */
	volatile unsigned int *tail_host;
	unsigned int *dropped_copy;      /* pinned word the dropped counter is copied to */
	CUstream own;                    /* the agent's own stream: never the job's */
	struct np_check_slot *scratch;   /* device memory */
	uint64_t ndrained;
};

/* The resources of ctx, making them if needed (may allocate: never call
 * while the launch's stream is capturing).  NULL when they cannot be
 * made; *why says why once. */
struct np_gpu_ctx *np_gpu_ctx_get(CUcontext ctx, const char **why);

/* The resources of ctx if they exist already (safe during capture). */
struct np_gpu_ctx *np_gpu_ctx_find(CUcontext ctx);

/* Work on another device than the calling thread's current one: a
 * deferred list flushed by a thread launching on another device
 * (defer.c), a module-level check of a tensor on a device that is not
 * torch's current one (modules.c: a model split over devices runs its
 * hooks with device 0 current).  A check kernel must run in its own
 * context, on a stream of it: a launch into another context is refused,
 * and on the legacy stream (the handle every context shares) it would
 * run on the wrong device, reading memory that is not its own (an
 * illegal address: the job's context lost).  np_gpu_ctx_enter makes ctx
 * current on this thread if it is not; np_gpu_ctx_leave puts back what
 * was.  Cheap when ctx is current already (one query). */
struct np_ctx_switch {
	CUcontext prev;
	int switched;
};
int np_gpu_ctx_enter(CUcontext ctx, struct np_ctx_switch *sw);
void np_gpu_ctx_leave(const struct np_ctx_switch *sw);

/* The primary context of CUDA device `ordinal` (the one the runtime,
 * and so torch, uses), retained once per device and kept; NULL if the
 * driver has none for it.  For a tensor on the default stream, whose
 * handle does not say which device's. */
CUcontext np_gpu_device_ctx(int ordinal);

/* Every context's resources made so far, for the drain thread. */
int np_gpu_ctx_count(void);
struct np_gpu_ctx *np_gpu_ctx_at(int i);

/* Results the check kernels could not push (ring full), from the device
 * counter: copied on the agent's own stream, which is all it waits for,
 * in relaxed capture mode.  Not from a launch callback. */
uint64_t np_gpu_ctx_dropped(struct np_gpu_ctx *g);

/* The embedded fatbin (kernels/fatbin.S). */
extern const unsigned char np_check_fatbin[];

#endif
