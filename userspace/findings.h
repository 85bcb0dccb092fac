/* findings.h - what the agent's records mean: the origin of the first
 * non-finite value, propagation, per-step statistics and early warnings
 * of gradient explosion (docs/outputs.md has the fields).
 *
 * The agent only reports facts: "this module's output is non-finite, and
 * its inputs were (not)"; "this node produced a non-finite gradient from
 * finite ones"; ...  The rules that turn them into one origin live here,
 * where the BPF events give each record its step, phase, module and op:
 *
 * forward   a module whose output is non-finite while its inputs were
 *           finite is a candidate; it becomes the origin once the value
 *           is seen to leave it (any later report, or it is the outermost
 *           call), and is dropped if the outermost call ends clean (a
 *           non-finite value that stayed inside, like a -inf mask).  A
 *           module with non-finite inputs passes the question up to the
 *           module around it; the outermost one with non-finite inputs
 *           means they came from outside the model.
 * backward  a node that produced a non-finite gradient from finite ones
 *           is the origin, named by the module whose forward created it.
 * optimizer a parameter (or its .grad) that became non-finite while
 *           nothing non-finite was seen before in the step.
 * Anything after the origin is propagation: counted, never an origin.
 */
#ifndef NP_FINDINGS_H
#define NP_FINDINGS_H

#include "collector.h"

/* One agent record (NP_EV_AGENT) of a traced process. */
void np_findings_record(struct np_collector *c, struct np_proc_state *p,
			struct np_thread_state *t, const struct np_event *e);

/* A step's statistics (NP_EV_AGENT_BULK). */
void np_findings_stats(struct np_collector *c, struct np_proc_state *p,
		       const struct np_bulk_event *e);

/* A module call began (names modules by address for later records). */
void np_findings_module(struct np_collector *c, struct np_proc_state *p, uint64_t self,
			uint32_t name, uint32_t type);

/* The outermost module call of a thread returned. */
void np_findings_root_exit(struct np_collector *c, struct np_proc_state *p);

/* The step ends: statistics into the step's counters, warnings. */
void np_findings_step_end(struct np_collector *c, struct np_proc_state *p);

/* The process is done: late statistics of its last step (sent at its
 * exit, after that step ended) into their step. */
void np_findings_finish(struct np_collector *c, struct np_proc_state *p);

/* The name and type of the module at addr in process p, as its calls
 * named it; false if none is known. */
bool np_findings_module_names(struct np_collector *c, struct np_proc_state *p, uint64_t addr,
			      uint32_t *name, uint32_t *type);

/* f is the origin of the process's first non-finite value. */
void np_findings_set_origin(struct np_collector *c, struct np_proc_state *p,
			    const struct np_finding *f);

/* Frees per-process tables. */
void np_findings_free(struct np_proc_state *p);

const char *np_role_name(unsigned role);

/* The forward op named by the autograd node that made a tensor:
 * "NativeLayerNormBackward0" -> "native_layer_norm". */
void np_forward_op_name(const char *node, char *buf, size_t len);

/* Adds one step's value to a statistic's history; > 0 (the growth ratio
 * over the recent median) when it warrants an explosion warning.
 * absolute: a value over 1e20 counts as far even without history. */
double np_series_push(struct np_series *s, double x, uint64_t step, bool absolute);

#endif
