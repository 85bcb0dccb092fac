/* tensor.h - look at a torch.Tensor from C: is it a CPU floating-point
 * tensor we can check in place, and what do its bytes hold?
 *
 * Everything goes through Python attribute and method calls (dtype,
 * is_cpu, data_ptr(), ...), never through torch's C++ layout, which
 * changes between releases.  Call with the GIL held.
 */
#ifndef NP_TENSOR_H
#define NP_TENSOR_H

#include <stdbool.h>
#include "cpu_check.h"
#include "pyapi.h"

struct np_tensor_check {
	struct np_check_result r;
	uint64_t numel;
	uint8_t dtype;           /* enum np_dtype */
	uint8_t pairs;           /* complex: checked as its real and imaginary parts */
	uint64_t repeat;         /* expanded: each stored value stands for this many */
};

/* Interns names and finds torch.Tensor and the dtypes; 0 on success. */
int np_tensor_init(void);

/* The grad mode now (enum np_arec_mode bits; 0 if it cannot be read):
 * a Python call or two, for the records of births only. */
uint8_t np_grad_mode(void);

/* Is o a torch.Tensor (or subclass)? */
bool np_is_tensor(PyObject *o);

/* Where a checkable tensor's elements are: one dense block. */
struct np_tensor_view {
	const void *ptr;
	uint64_t numel;
	uint8_t dtype;           /* enum np_dtype */
	uint8_t pairs;           /* complex: dtype and numel are its parts' */
	uint64_t repeat;         /* an expanded tensor (stride-0 dimensions): numel
				  * counts what it stores, each element standing
				  * for this many; else 1 */
};

/* 1: v filled; 2: v filled for a CUDA tensor (checked by the GPU side at
 * module level while np_gpu_modules(), cupti/gpu.h; its .grad's norm
 * taken by agent/gpu_norms.c); 0: not checkable here (not floating point,
 * on another device, empty, not dense); -1: Python error (cleared). */
int np_tensor_view(PyObject *t, struct np_tensor_view *v);
/* The stream torch runs the next op on, on CUDA tensor t's device: in a
 * hook, the stream that made t; and that device's ordinal (-1: none).
 * One Python call: asked only when a module-level check is launched.
 * 0, or -1 (Python error cleared). */
int np_tensor_cuda_stream(PyObject *t, uint64_t *stream, int *device);
/* t's sizes and strides (in elements), when it has 1..max dimensions:
 * 0; else -1 (a Python error cleared). */
int np_tensor_shape(PyObject *t, int *ndim, int64_t *shape, int64_t *stride, int max);
/* Checks the elements of a view (counts into np_tensor_stats). */
void np_tensor_check_view(const struct np_tensor_view *v, struct np_tensor_check *c);

/* Both: 1 when checked (c filled), else as np_tensor_view. */
int np_tensor_check(PyObject *t, struct np_tensor_check *c);

/* Calls fn on every tensor in o: a tensor, or tuples, lists and dict
 * values of them, bounded in depth and count. */
typedef void (*np_tensor_fn)(PyObject *t, void *arg);
void np_tensor_visit(PyObject *o, np_tensor_fn fn, void *arg);

struct np_tensor_stats {
	uint64_t checked, bytes, skipped;
};
extern struct np_tensor_stats np_tensor_stats;

/* Names used by the hooks too (interned str objects). */
struct np_names {
	PyObject *dtype, *is_cpu, *is_cuda, *data_ptr, *numel, *is_contiguous, *shape, *stride,
		*grad_fn, *next_functions, *register_hook, *name, *grad, *param_groups,
		*_parameters, *_modules, *__dataclass_fields__, *__dict__;
};
extern struct np_names np_n;

#endif
