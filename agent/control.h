/* control.h - when the agent's checks are on.
 *
 * A thread of the agent's own (never the job's threads) waits for torch
 * to be imported, then takes the GIL and installs the hooks.  The checks
 * stay on while nanprof holds a connection to the agent; when it closes
 * (nanprof finished, was killed, or detached) the hooks are taken out
 * the same way.
 *
 * run:    the agent connects to nanprof's socket (NANPROF_SOCK).
 * attach: the injected agent listens on @nanprof-agent-<pid>, for this
 *         and every later `nanprof attach`. */
#ifndef NP_CONTROL_H
#define NP_CONTROL_H

/* Starts the control thread (once per process).  With the checks off
 * (--no-checks) it only watches for libtorch, for nanprof's probes. */
void np_control_start(int run_mode);

/* agent.c: whether libtorch_python is mapped; and telling nanprof, once,
 * that it is (it then attaches its autograd probes; the caller waits,
 * bounded, for its answer). */
int np_agent_torch_mapped(void);
void np_agent_torch_loaded(void);

#endif
