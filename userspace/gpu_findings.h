/* gpu_findings.h - what the agent's CUDA records mean (cupti/drain.h
 * sends them): the origin kernel of the first non-finite value, placed
 * in the module, step and phase its launching thread was in.
 *
 * The rule, like the forward rule of findings.h: a kernel whose output
 * became non-finite from finite inputs (a birth) is a candidate; it is
 * the origin once its value is seen, propagated into another kernel's
 * output, outside the module it was born in (or in another phase or
 * step), or in the loss handed to backward.  A birth whose value stays
 * inside, like a -inf attention mask that the softmax turns into zeros,
 * is never an origin.
 */
#ifndef NP_GPU_FINDINGS_H
#define NP_GPU_FINDINGS_H

#include "../agent/agent_report.h"
#include "collector.h"

/* True for the records the GPU side numbers on its own (GPU_CHECK,
 * GPU_NAME, GPU_* STATUS). */
bool np_gpu_is_gpu_record(const struct np_agent_rec *r);

/* One such record. */
void np_gpu_record(struct np_collector *c, struct np_proc_state *p, const struct np_agent_rec *r);

/* A thread's context changed (module call, backward node, phase): kept
 * once the process's GPU checks are on, to place later launches. */
void np_gpu_context(struct np_proc_state *p, uint64_t ts, uint32_t tid, uint64_t step,
		    uint8_t phase, uint32_t module, uint32_t module_type);

void np_gpu_free(struct np_proc_state *p);

/* The name the agent sent for kernel func, or "?". */
const char *np_gpu_kernel_name(const struct np_collector *c, const struct np_gpu_state *g,
			       uint32_t func);

struct np_jsonw;
/* The kernels not checked at launch, most launched first, as a JSON array
 * of {"kernel": name, "launches": N} (events.jsonl, report.html). */
/* The host time the agent's CUPTI callbacks took per kernel launch, in
 * nanoseconds, as its sample estimates it (the timed callbacks' time
 * times the sampling period, over the launches); 0 when not reported.  And the
 * mean time of one check launch in the driver, part of the former. */
uint64_t np_gpu_host_ns_per_launch(const struct np_gpu_state *g);
uint64_t np_gpu_check_launch_ns(const struct np_gpu_state *g);

void np_gpu_json_undecoded(struct np_jsonw *w, const struct np_collector *c,
			   const struct np_gpu_state *g);

/* Whether a propagation placed at *at is outside the scope of the birth
 * *birth: another step or phase, or, in the same one, outside the
 * birth's module (a module holds its submodules; code between module
 * calls is a scope of its own). */
bool np_gpu_left(const struct np_collector *c, const struct np_finding *birth,
		 const struct np_finding *at);

#endif
