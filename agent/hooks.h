/* hooks.h - the C functions torch calls: a global forward hook on every
 * nn.Module, a post-hook on every autograd node of each backward pass,
 * and hooks around optimizer.step().  They check the tensors that leave
 * each of these and report what is non-finite (agent_report.h), plus
 * per-module statistics once per step.  All run with the GIL held; none
 * raises or returns anything but None, so torch never sees them fail. */
#ifndef NP_HOOKS_H
#define NP_HOOKS_H

#include "pyapi.h"

/* Builds the function objects; 0 on success (GIL held). */
int np_hooks_init(void);
/* The callables the bootstrap registers, by name: "fwd", "walk",
 * "opt_pre", "opt_post" (new references). */
PyObject *np_hooks_callable(const char *name);

/* Hooks do their work only while enabled (an old hook left on a node
 * of a graph built before detach just returns). */
void np_hooks_enable(int on);

/* The hooks were installed in the middle of a step (attach): until it
 * ends, non-finite .grad values may predate them. */
void np_hooks_mid_step(void);

/* Forget per-process tables (after detach, and in a forked child). */
void np_hooks_reset(void);

/* Does this autograd node only move values (a view, a transpose, a
 * cat)?  Such a node cannot make a non-finite value of finite ones
 * (the movers list; agent/birth_op.c asks too). */
int np_node_moves_only(PyObject *node);

/* Sends the counters as a STATUS record. */
void np_hooks_send_counters(void);

#endif
