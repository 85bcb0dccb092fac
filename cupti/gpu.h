/* gpu.h - the agent's CUDA side: finite checks of every kernel's outputs,
 * launched from CUPTI's driver-API launch callbacks on the kernel's own
 * stream (cupti/README.md has the whole design).
 *
 * Everything here is optional: in a process without libcuda, or where
 * CUPTI is taken, np_gpu_start() says why and the CPU checks go on.
 * Nothing here calls exit or abort, and no stream is ever synchronised.
 */
#ifndef NP_GPU_H
#define NP_GPU_H

#include <stdint.h>

enum np_gpu_mode {
	NP_GPU_EVERY = 0,      /* check every launch */
	NP_GPU_SAMPLE,         /* every k-th launch of each kernel, every
				* launch once a non-finite value propagated */
};

struct np_gpu_config {
	enum np_gpu_mode mode;
	uint32_t sample_every;     /* k of NP_GPU_SAMPLE */
};

/* Reads NANPROF_GPU_MODE ("every", "sample" or "sample:K") into *cfg;
 * defaults: every launch, k = 16. */
void np_gpu_config_from_env(struct np_gpu_config *cfg);

/* Subscribes to CUPTI and starts checking, if the process has libcuda.
 * Idempotent.  Returns 0, or -1 with *why a short reason (at most 31
 * characters, for the agent's STATUS record).  Call from the agent's own
 * thread, never from a thread that may hold the loader lock. */
int np_gpu_start(const struct np_gpu_config *cfg, const char **why);

/* Stops launching checks (at once) and drains what is in flight for up
 * to 100 ms.  The subscription stays, its callbacks returning at once,
 * and so do the check kernels and their memory (freeing them could race
 * a check still queued on a stream); np_gpu_start() turns it all on
 * again. */
void np_gpu_stop(void);

/* Whether np_gpu_start() succeeded and np_gpu_stop() was not called. */
int np_gpu_active(void);

#endif
