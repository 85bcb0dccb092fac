/* ctxhist.h - where each thread of a process was, over the last while:
 * its step, phase and innermost module, as BPF saw them change.
 *
 * A CUDA kernel's check result comes back milliseconds after the launch,
 * when the launching thread has moved on by many module calls; the agent
 * sends the launch's thread and time, and this history says which
 * module, step and phase that was.  One bounded ring per process, of
 * every thread's changes in time order; the oldest are overwritten, and
 * a launch older than the oldest entry kept is "unknown", not guessed.
 */
#ifndef NP_CTXHIST_H
#define NP_CTXHIST_H

#include <stdint.h>

#define NP_CTXHIST_DEFAULT 65536   /* changes kept per process (2 MiB) */

struct np_ctx_point {
	uint64_t ts;        /* when the thread got here (BPF clock) */
	uint64_t step;
	uint32_t tid;
	uint32_t module, module_type;   /* interned names; 0: outside modules */
	uint8_t phase;      /* enum np_phase */
};

struct np_ctxhist {
	struct np_ctx_point *v;
	uint32_t cap;
	uint64_t n;         /* points pushed in all */
};

/* 0, or -ENOMEM. */
int np_ctxhist_init(struct np_ctxhist *h, uint32_t cap);
void np_ctxhist_free(struct np_ctxhist *h);

/* A thread's context changed at pt->ts (pushed in time order). */
void np_ctxhist_push(struct np_ctxhist *h, const struct np_ctx_point *pt);

/* The context thread tid was in at time ts: the last change of that
 * thread at or before ts.  0, -ENOENT when the thread has no change kept
 * at or before ts, or -ERANGE when ts is older than the history kept. */
int np_ctxhist_at(const struct np_ctxhist *h, uint32_t tid, uint64_t ts,
		  struct np_ctx_point *out);

#endif
