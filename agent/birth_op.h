/* birth_op.h - which op inside a module made a non-finite value, when the
 * module's inputs were finite and its output is not.
 *
 * The forward hook sees a module's inputs and outputs, not the ops in
 * between: it names the op that made the output (hooks.c: output_op).
 * For a module of several ops that may be the wrong one: SalienceGate's
 * exp overflows, and the mul after it is what made the output.  The ops
 * in between left traces in the autograd graph: the tensors each node
 * saved for backward (a mul saves both factors, an exp its result).
 * Walking the graph from the output back to the module's inputs and
 * checking those saved tensors gives the earliest op whose output is
 * seen non-finite, and whether what it read was seen finite.
 *
 * A saved tensor packed by saved-tensor hooks (activation checkpointing,
 * save_on_cpu) is never unpacked: unpacking one runs the job's hook
 * (checkpointing would recompute the block).  That needs torch's
 * SavedTensor.unpack_hook (torch 2.13 has it, 1.13 not; it came with
 * compiled autograd, around 2.5); on older torch nothing
 * is walked and the op stays the output's.
 *
 * Called from the forward hook, under the GIL, for a module's first
 * births only (a few walks a run), and for a non-finite loss computed
 * outside every module (hooks.c: check_root), whose ops are only in the
 * graph: there the walk runs into the model, whose saved tensors are
 * finite (else a module output would have been the origin).
 */
#ifndef NP_BIRTH_OP_H
#define NP_BIRTH_OP_H

#include <stddef.h>
#include "pyapi.h"

#define NP_BIRTH_OP_NODES 256         /* autograd nodes walked per search */
#define NP_BIRTH_OP_ELEMS (16u << 20) /* saved elements checked per search */
#define NP_BIRTH_OP_PER_STEP 4        /* searches per step */

/* out: a non-finite output of a module whose inputs (in: the args tuple;
 * kw: the kwargs dict or NULL) were finite.  When the walk finds an op
 * to name, writes its autograd node's name ("ExpBackward0") to op and
 * returns NP_AF_OP_INSIDE when it is not the op that made the output,
 * plus NP_AF_OP_READ_FINITE when everything it read was seen finite,
 * plus NP_AF_ZERO_DIVISOR when it is a division whose divisor held 0,
 * plus NP_AF_DEAD_ROWS when it is a softmax that made NaN of whole rows;
 * else returns 0 and leaves op alone.  seen (may be NULL): a new
 * reference to the tensor the graph kept of that op's output, when the
 * walk saw one non-finite, else NULL.  outside_in (may be NULL): a new
 * reference to a non-finite tensor that op read from outside the graph
 * (it needs no gradient: data, or code under no_grad), when that is
 * where the value came from, else NULL.  Never leaves a Python error. */
unsigned np_birth_op(PyObject *out, PyObject *in, PyObject *kw, char *op, size_t len,
		     PyObject **seen, PyObject **outside_in);

/* Called from a node hook in backward: a tensor the running autograd
 * node saved in forward that holds a non-finite value and came from
 * outside the graph (no grad_fn, no gradient: data, not a parameter),
 * as a new reference; NULL when none, or when this torch cannot tell
 * the running node (torch._C._current_autograd_node: torch 2, not 1.13)
 * or read what it saved safely (as above).  An LSTM's input holding +Inf
 * leaves its output finite (the gates saturate) and its weights'
 * gradients NaN: that input is where the NaN came from. */
PyObject *np_birth_saved_data(void);

/* Called from a node hook in backward, as np_birth_saved_data(): why the
 * running node's gradient is non-finite though what it was given is
 * finite.  NP_AF_ZERO_DIVISOR: it is a division's, whose saved divisor
 * holds 0 (the where trap: torch.where(n > 0, s / n, 0) is finite in
 * forward, the gradient of s / n at n = 0 is not); NP_AF_SINGULAR: its
 * op's derivative is infinite at a value it read (sqrt of 0: a distance
 * of exactly 0; log of 0, pow of 0 by an exponent in (0, 1), acos, asin
 * or atanh of +-1); else 0 (also when this torch cannot tell, as
 * above).  Counts against the per-step bound. */
unsigned np_birth_node_cause(void);

/* A new step: the per-step bound starts again. */
void np_birth_op_step(void);

#endif
