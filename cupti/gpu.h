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
	NP_GPU_MODULES,        /* no CUPTI: CUDA tensors the hooks see */
};

struct np_gpu_config {
	enum np_gpu_mode mode;
	uint32_t sample_every;     /* k of NP_GPU_SAMPLE */
	int with_modules;          /* launches, and the hooks' CUDA tensors too */
	int guard;                 /* every launch, and the hooks' CUDA tensors
				    * whose last writer went unchecked (writers.h) */
	int generic;               /* undecoded kernels' outputs checked at their
				    * first decoded reader (generic.h) */
	int empty_checks;          /* a benchmark's diagnosis: every check launched
				    * as it would be, reading nothing */
	uint32_t defer;            /* launches whose checks may share one list
				    * launch (defer.h); 0: each launch's at once */
};

/* Reads NANPROF_GPU_MODE ("every", "sample", "sample:K" or "modules";
 * "+modules" after either of the first three adds module-level checks
 * of every CUDA tensor the hooks see to the launch checks) into *cfg;
 * defaults: every launch, k = 16, no module-level checks but the guards.
 * Guards (every mode without "+modules"; NANPROF_GPU_GUARD=0 turns them
 * off, for measuring): a CUDA tensor a module returns, a node's gradient,
 * a .grad or a parameter is checked at module level when its last writer
 * may have been a kernel the launch checks could not decode (cuBLAS,
 * cuDNN), so that such a kernel's non-finite output is named at the
 * module that made it, not at its first decoded reader.  The generic tier
 * (launch modes; NANPROF_GPU_GENERIC=0 turns it off, for measuring): an
 * undecoded kernel's output is checked when a decoded kernel reads it,
 * over what that kernel reads, and named as the undecoded kernel's.
 * NANPROF_GPU_DIAG=empty-checks, for the benchmark only: every check is
 * launched with its grid but given no element to read, so that a run's
 * step time without the checks' reads, but with their launches, can be
 * measured (tests/gpu/bench_gpu.py's agent-empty); nothing can be found.
 * NANPROF_GPU_DEFER=N (launch modes, read at the start only; at most
 * 64): the checks of up to N consecutive launches wait and go out as
 * one list launch (defer.h), fewer launches for the same checks. */
void np_gpu_config_from_env(struct np_gpu_config *cfg);

/* The same from a mode string s (NULL: the defaults), as `nanprof attach
 * --gpu MODE` sends it (NANPROF_GPU_GUARD still comes from the
 * environment). */
void np_gpu_config_parse(const char *s, struct np_gpu_config *cfg);

/* cfg's deferring window set to n (`nanprof attach --gpu-defer N`): 0
 * off, at most 64, none in modules mode. */
void np_gpu_config_set_defer(struct np_gpu_config *cfg, unsigned n);

/* Subscribes to CUPTI and starts checking, if the process has libcuda.
 * Idempotent: called again (nanprof attached again), it switches to
 * cfg's mode when both the old and the new one check launches (CUPTI is
 * never subscribed or unsubscribed again); *cfg is then the mode in
 * force.  Returns 0 (every kernel's outputs checked); 1 when CUPTI
 * is held by another tool (Kineto, nsys) or mode is NP_GPU_MODULES: then
 * only the CUDA tensors the hooks hand to np_gpu_check_tensor() are
 * checked, and *why says why; or -1 with *why a short reason.  Reasons
 * are at most 31 characters, for the agent's STATUS record.  Call from
 * the agent's own thread, never from a thread that may hold the loader
 * lock. */
int np_gpu_start(struct np_gpu_config *cfg, const char **why);

/* Stops launching checks (at once) and drains what is in flight for up
 * to 100 ms.  The subscription stays, its callbacks returning at once,
 * and so do the check kernels and their memory (freeing them could race
 * a check still queued on a stream); np_gpu_start() turns it all on
 * again. */
void np_gpu_stop(void);

/* Marks the calling thread's driver calls and launches as the agent's own
 * (1) or not (0): the CUPTI callback ignores them, as it ignores those it
 * makes itself (a module-level check's set-up and launch, the gradient
 * norms agent/gpu_norms.c has torch compute from a hook). */
void np_gpu_own(int on);

/* sample:K's statistics steps: one optimizer step in NP_GPU_STAT_STEPS
 * runs as `every` does (every launch checked, the guards on), so that the
 * records of its checks give its CUDA module outputs' largest |x|
 * (outmax.h), which sampled checks cannot.  Called by the hooks as each
 * optimizer step ends, with the number of the step that begins. */
#define NP_GPU_STAT_STEPS 16
void np_gpu_step(uint32_t step);

/* A module's forward call has just returned (the hooks' forward hook):
 * the launches after it are in another span of module calls.  The drain
 * reports a birth's first propagation into each kernel in each such
 * span, so that a kernel used inside the birth's module and again
 * outside it (a vectorized add) shows the value leaving (drain.c). */
void np_gpu_module_done(void);

/* Now and then from the agent's control thread before np_gpu_start(),
 * with the mode it will be given: unless that is module-level checks
 * alone, cuDNN's descriptor calls are wrapped from cuDNN's load on, so
 * that a plan built before the checks start is known (cupti/blas.h's
 * np_blas_track). */
void np_gpu_track(const struct np_gpu_config *cfg);

/* Now and then from the agent's control thread once np_gpu_start()
 * returned: the cuBLAS imports of libraries loaded since are pointed at
 * the agent's wrappers (cupti/blas.h). */
void np_gpu_poll(void);

/* Whether np_gpu_start() succeeded and np_gpu_stop() was not called. */
int np_gpu_active(void);

/* Around the agent's own CUDA calls from Python (an event query): this
 * thread's stream-capture mode set to relaxed, so that a CUDA graph
 * another thread captures in global mode (torch's default) is not
 * invalidated by them.  Returns what np_gpu_capture_restore() takes
 * back; -1 (nothing to restore) when the GPU side is off. */
int np_gpu_capture_relaxed(void);
void np_gpu_capture_restore(int mode);

/* ... and launches are checked: not module-level checks alone. */
int np_gpu_launches(void);

/* Whether the hooks hand CUDA tensors to np_gpu_check_tensor():
 * module-level checks on, instead of the launch checks (np_gpu_start()
 * returned 1), besides them ("+modules"), or as guards. */
int np_gpu_modules(void);

/* Whether a CUDA tensor at ptr is to be checked at module level now: all
 * are with "modules" and "+modules"; as a guard, only one whose last
 * writer the launch checks may not have seen (skips are counted).  The
 * hooks ask before they gather what a check needs.  A guard skipped sets
 * *seen_tag to the tag of the check that read the tensor's last write
 * (0: none usable), whose record gives its largest |x| (outmax.h). */
int np_gpu_wants(uint64_t ptr, uint64_t *seen_tag);

/* What a module-level check looked at; each is named as a pseudo-kernel
 * in the reports ("nanprof module-level check: ..."). */
enum np_gpu_what {
	NP_GPU_WHAT_OUTPUT = 1,    /* a module's forward output */
	NP_GPU_WHAT_GRAD,          /* a gradient an autograd node produced */
	NP_GPU_WHAT_PARAM_GRAD,    /* a parameter's .grad before the step */
	NP_GPU_WHAT_PARAM,         /* a parameter after the step */
	NP_GPU_WHAT_ROOT,          /* a root handed to backward (the loss): checked
				    * whenever the GPU side is on, guard or not */
	NP_GPU_WHAT_MAX
};

struct np_gpu_tensor {
	uint64_t ptr, numel;       /* contiguous device memory */
	uint64_t stream;           /* the stream that made it (torch's current) */
	int device;                /* its CUDA device's ordinal, -1: not known (the
				    * stream's context, else the current one) */
	uint8_t dtype;             /* enum np_dtype */
	uint8_t pairs;             /* complex: dtype and numel are its real view's */
	uint8_t what;              /* enum np_gpu_what */
	const uint64_t *inputs;    /* data pointers it was made from: known
				    * non-finite there makes it propagation */
	uint32_t n_in;
	uint64_t stat_module;      /* a module output: its check's largest |x|
				    * goes into this module's statistics of
				    * step stat_step (outmax.h); 0: not one */
	uint32_t stat_step;
};

/* Enqueues the finite check of t on t->stream, after the work that made
 * it, as a kernel launch's output would be checked; no synchronisation.
 * Returns 1 if launched, 0 if not (off, capture without resources, table
 * full: counted). */
int np_gpu_check_tensor(const struct np_gpu_tensor *t);

#endif
