/* triton_plan.c - the Python side's two calls into cupti/triton.h: the
 * wrapper of Inductor's CachingAutotuner.run (agent/bootstrap.h) hands
 * over a launch's tensors before it, and clears them after. */
#include "../cupti/gpu.h"
#include "../cupti/triton.h"
#include "pyapi.h"
#include "triton_plan.h"

static PyObject *none(void)
{
	if (np_py_reraise())   /* a KeyboardInterrupt met on the way (pyapi.h) */
		return NULL;
	np_py.IncRef(np_py.None);
	return np_py.None;
}

/* nanprof_triton_plan(name, flat): flat holds (role, data_ptr, numel,
 * pointer type) for each tensor; a tensor of a type no check reads is
 * left out.  Never raises: the kernel must launch whatever happens. */
static PyObject *plan(PyObject *self, PyObject *args)
{
	(void)self;
	if (!np_gpu_active() || np_py.Tuple_Size(args) != 2)
		return none();
	const char *name = np_py.Unicode_AsUTF8(np_py.Tuple_GetItem(args, 0));
	PyObject *flat = np_py.Tuple_GetItem(args, 1);
	ptrdiff_t n = flat && name ? np_py.Tuple_Size(flat) / 4 : 0;
	struct np_triton_arg a[NP_TRITON_ARGS];
	int k = 0;
	for (ptrdiff_t i = 0; i < n && k < NP_TRITON_ARGS; i++) {
		long long role = np_py.Long_AsLongLong(np_py.Tuple_GetItem(flat, 4 * i));
		long long ptr = np_py.Long_AsLongLong(np_py.Tuple_GetItem(flat, 4 * i + 1));
		long long numel = np_py.Long_AsLongLong(np_py.Tuple_GetItem(flat, 4 * i + 2));
		const char *type = np_py.Unicode_AsUTF8(np_py.Tuple_GetItem(flat, 4 * i + 3));
		int dt = type ? np_triton_dtype(type) : -1;
		if (np_py.Err_Occurred() || dt < 0 || role < 0 || role > NP_TRITON_UPDATED ||
		    ptr == 0 || numel <= 0) {
			np_py_err_clear();
			continue;
		}
		a[k++] = (struct np_triton_arg){ .ptr = (uint64_t)ptr, .numel = (uint64_t)numel,
						 .dtype = (enum np_dtype)dt,
						 .role = (enum np_triton_role)role };
	}
	if (np_py.Err_Occurred())
		np_py_err_clear();
	if (name && k)
		np_triton_next(name, a, k);
	return none();
}

static PyObject *done(PyObject *self, PyObject *args)
{
	(void)self;
	(void)args;
	np_triton_done();
	return none();
}

static struct np_py_methoddef defs[] = {
	{ "nanprof_triton_plan", plan, NP_METH_VARARGS, NULL },
	{ "nanprof_triton_done", done, NP_METH_VARARGS, NULL },
};

PyObject *np_triton_callable(const char *which)
{
	int k = which[0] == 'p' ? 0 : 1;
	return np_py.CFunction_NewEx(&defs[k], NULL, NULL);
}
