/* dnn_ops.h - which tensors each cuDNN backend operation reads and
 * writes, by the attribute a tensor was set as (cudnn_graph.h, cuDNN
 * 9.28's header: the operations and attributes it documents).
 *
 * dnn_graph.c composes a graph's tensors from its operations'.  An
 * operation type not listed here is not read: a graph holding one is
 * never planned (its outputs go to the generic tier), as nanprof cannot
 * know what it writes.  A tensor attribute not listed (an integer
 * sequence length on a matmul, a sink's logits) is neither: an input
 * left out only makes a later judgement stricter, and an output left
 * out is the operation's own and checked by none.  Pure data. */
#ifndef NP_DNN_OPS_H
#define NP_DNN_OPS_H

#include <stdint.h>

enum {
	NP_DG_READ = 1,         /* an operation reads the tensor */
	NP_DG_WRITTEN = 2,      /* an operation writes it */
};

/* Whether a descriptor type is an operation this file reads. */
int np_dg_is_operation(int type);

/* NP_DG_READ, NP_DG_WRITTEN, or 0: attr is not a tensor type reads or
 * writes. */
uint8_t np_dg_tensor_role(int type, int attr);

#endif
