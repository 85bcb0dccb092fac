/* tensor.c - torch.Tensor seen from C (see tensor.h). */
#include <string.h>
#include "agent_report.h"
#include "tensor.h"
#include "../cupti/gpu.h"

struct np_names np_n;
struct np_tensor_stats np_tensor_stats;

static PyObject *tensor_type;            /* torch.Tensor */
static PyObject *grad_enabled, *inference_enabled;   /* torch.is_grad_enabled, ... */
static PyObject *dtypes[NP_DT_MAX];      /* torch.float32, ... (NULL: not in this torch) */
static PyObject *complex_dtypes[NP_DT_MAX];   /* torch.complex64 at [NP_DT_F32], ... */

#define VISIT_MAX_DEPTH 4
#define VISIT_MAX_ITEMS 256

static PyObject *intern(const char *s)
{
	return np_py.Unicode_InternFromString(s);
}

int np_tensor_init(void)
{
	if (tensor_type)
		return 0;
#define N(f) np_n.f = intern(#f)
	N(dtype); N(is_cpu); N(is_cuda); N(data_ptr); N(numel); N(is_contiguous); N(shape); N(stride);
	N(grad_fn); N(next_functions); N(register_hook); N(name); N(grad); N(param_groups);
	N(_parameters); N(_modules); N(__dataclass_fields__); N(__dict__);
#undef N
	PyObject *torch = np_py.Run_StringFlags("__import__('torch')", 258 /* Py_eval_input */,
						 np_py.Eval_GetBuiltins(), NULL, NULL);
	if (!torch)
		return -1;
	static const char *names[NP_DT_MAX] = {
		[NP_DT_F32] = "float32", [NP_DT_F64] = "float64", [NP_DT_F16] = "float16",
		[NP_DT_BF16] = "bfloat16", [NP_DT_F8E4M3] = "float8_e4m3fn",
		[NP_DT_F8E5M2] = "float8_e5m2",
	};
	for (int i = 0; i < NP_DT_MAX; i++) {
		dtypes[i] = np_py.Object_GetAttrString(torch, names[i]);
		if (!dtypes[i])
			np_py_err_clear();   /* fp8 is new in torch 2.1 */
	}
	/* complex tensors (FFTs, spectral layers, STFTs) are checked as
	 * their real and imaginary parts */
	static const char *complex_names[NP_DT_MAX] = {
		[NP_DT_F32] = "complex64", [NP_DT_F64] = "complex128", [NP_DT_F16] = "complex32",
	};
	for (int i = 0; i < NP_DT_MAX; i++) {
		if (!complex_names[i])
			continue;
		complex_dtypes[i] = np_py.Object_GetAttrString(torch, complex_names[i]);
		if (!complex_dtypes[i])
			np_py_err_clear();
	}
	grad_enabled = np_py.Object_GetAttrString(torch, "is_grad_enabled");
	inference_enabled = np_py.Object_GetAttrString(torch, "is_inference_mode_enabled");
	if (!grad_enabled || !inference_enabled)
		np_py_err_clear();
	tensor_type = np_py.Object_GetAttrString(torch, "Tensor");
	np_py.DecRef(torch);
	if (!tensor_type) {
		np_py_err_clear();
		return -1;
	}
	return 0;
}

/* 1 (True), 0 (False) or -1 from calling f() */
static int call_flag(PyObject *f)
{
	PyObject *r = f ? np_py.Object_CallObject(f, NULL) : NULL;
	int v = r ? r == np_py.True : -1;
	np_py_xdecref(r);
	if (!r)
		np_py_err_clear();
	return v;
}

uint8_t np_grad_mode(void)
{
	int grad = call_flag(grad_enabled);
	if (grad < 0)
		return 0;
	uint8_t m = NP_AMODE_KNOWN | (grad ? 0 : NP_AMODE_NO_GRAD);
	if (!grad && call_flag(inference_enabled) == 1)
		m |= NP_AMODE_INFERENCE;
	return m;
}

bool np_is_tensor(PyObject *o)
{
	if (!o || o == np_py.None)
		return false;
	PyObject *t = np_py_type(o);
	if (t == tensor_type)
		return true;
	int r = np_py.Object_IsInstance(o, tensor_type);
	if (r < 0)
		np_py_err_clear();
	return r > 0;
}

static int call_u64(PyObject *o, PyObject *method, uint64_t *out)
{
	PyObject *v = np_py.Object_CallMethodObjArgs(o, method, NULL);
	if (!v)
		return -1;
	*out = (uint64_t)np_py.Long_AsLongLong(v);
	np_py.DecRef(v);
	return np_py.Err_Occurred() ? -1 : 0;
}

static int flag(PyObject *o, PyObject *attr, bool call)
{
	PyObject *v = call ? np_py.Object_CallMethodObjArgs(o, attr, NULL)
			   : np_py.Object_GetAttr(o, attr);
	if (!v)
		return -1;
	int r = v == np_py.True;
	np_py.DecRef(v);
	return r;
}

/* A tensor that is not contiguous but still covers one block of memory
 * without gaps (a transpose or permute of a contiguous one) is checked
 * as that block; the order of elements does not matter for a check.  So
 * is an expanded one (a broadcast: dimensions of stride 0, as the
 * gradients of sum() and mean() are) whose other dimensions cover one:
 * the values it stores are all it holds, each repeated as often.
 * 1 and *stored (the block's elements), 0 (gaps or overlaps), -1. */
static int dense_span(PyObject *t, uint64_t numel, uint64_t *stored)
{
	PyObject *shape = np_py.Object_GetAttr(t, np_n.shape);
	PyObject *stride = shape ? np_py.Object_CallMethodObjArgs(t, np_n.stride, NULL) : NULL;
	int dense = -1;
	if (shape && stride) {
		ptrdiff_t nd = np_py.Tuple_Size(shape);
		uint64_t span = 1, n = 1;
		for (ptrdiff_t i = 0; i < nd && nd == np_py.Tuple_Size(stride); i++) {
			long long sz = np_py.Long_AsLongLong(np_py.Tuple_GetItem(shape, i));
			long long st = np_py.Long_AsLongLong(np_py.Tuple_GetItem(stride, i));
			if (sz > 1 && st != 0) {
				span += (uint64_t)(sz - 1) * (uint64_t)(st < 0 ? -st : st);
				n *= (uint64_t)sz;
			}
		}
		dense = !np_py.Err_Occurred() && span == n && numel % n == 0;
		*stored = n;
	}
	np_py_xdecref(shape);
	np_py_xdecref(stride);
	return dense;
}

int np_tensor_shape(PyObject *t, int *ndim, int64_t *shape, int64_t *stride, int max)
{
	PyObject *sh = np_py.Object_GetAttr(t, np_n.shape);
	PyObject *st = sh ? np_py.Object_CallMethodObjArgs(t, np_n.stride, NULL) : NULL;
	int r = -1;
	ptrdiff_t nd = sh && st ? np_py.Tuple_Size(sh) : -1;
	if (nd >= 1 && nd <= max && nd == np_py.Tuple_Size(st)) {
		for (ptrdiff_t i = 0; i < nd; i++) {
			shape[i] = np_py.Long_AsLongLong(np_py.Tuple_GetItem(sh, i));
			stride[i] = np_py.Long_AsLongLong(np_py.Tuple_GetItem(st, i));
		}
		*ndim = (int)nd;
		r = np_py.Err_Occurred() ? -1 : 0;
	}
	np_py_xdecref(sh);
	np_py_xdecref(st);
	if (np_py.Err_Occurred())
		np_py_err_clear();
	return r;
}

int np_tensor_cuda_stream(PyObject *t, uint64_t *stream, int *device)
{
	static PyObject *fn;
	/* the device too: the default stream's handle is every device's */
	if (!fn && !(fn = np_py.Run_StringFlags(
			     "lambda t: (__import__('torch').cuda.current_stream(t.device).cuda_stream,"
			     " -1 if t.device.index is None else t.device.index)",
			     258 /* Py_eval_input */, np_py.Eval_GetBuiltins(), NULL, NULL)))
		goto err;
	PyObject *v = np_py.Object_CallFunctionObjArgs(fn, t, NULL);
	if (!v)
		goto err;
	PyObject *s = np_py.Tuple_GetItem(v, 0), *d = s ? np_py.Tuple_GetItem(v, 1) : NULL;
	if (d) {
		*stream = (uint64_t)np_py.Long_AsLongLong(s);
		*device = (int)np_py.Long_AsLongLong(d);
	}
	np_py.DecRef(v);
	if (d && !np_py.Err_Occurred())
		return 0;
err:
	np_py_err_clear();
	return -1;
}

int np_tensor_view(PyObject *t, struct np_tensor_view *v)
{
	PyObject *dt = np_py.Object_GetAttr(t, np_n.dtype);
	if (!dt)
		goto err;
	int kind = -1, pairs = 0;
	for (int i = 0; i < NP_DT_MAX; i++) {
		if (dtypes[i] && dt == dtypes[i])
			kind = i;
		if (complex_dtypes[i] && dt == complex_dtypes[i])
			kind = i, pairs = 1;
	}
	np_py.DecRef(dt);
	if (kind < 0)
		return 0;   /* integers, bool: nothing to check */
	int cpu = flag(t, np_n.is_cpu, false);
	if (cpu < 0)
		goto err;
	uint64_t numel, ptr;
	int cuda = 0;
	if (!cpu && (cuda = flag(t, np_n.is_cuda, false)) != 1) {
		if (cuda < 0)
			goto err;
		np_tensor_stats.skipped++;
		return 0;
	}
	if (call_u64(t, np_n.numel, &numel) || call_u64(t, np_n.data_ptr, &ptr))
		goto err;
	if (!numel || !ptr)
		return 0;
	int contiguous = flag(t, np_n.is_contiguous, true);
	if (contiguous < 0)
		goto err;
	uint64_t stored = numel;
	if (!contiguous) {
		int dense = dense_span(t, numel, &stored);
		if (dense < 0)
			goto err;
		if (!dense) {
			np_tensor_stats.skipped++;
			return 0;
		}
	}
	v->ptr = (const void *)(uintptr_t)ptr;
	v->repeat = numel / stored;
	v->numel = pairs ? 2 * stored : stored;
	v->dtype = (uint8_t)kind;
	v->pairs = (uint8_t)pairs;
	return cuda ? 2 : 1;
err:
	np_py_err_clear();
	np_tensor_stats.skipped++;
	return -1;
}

void np_tensor_check_view(const struct np_tensor_view *v, struct np_tensor_check *c)
{
	c->numel = v->numel;
	c->dtype = v->dtype;
	c->pairs = v->pairs;
	c->repeat = v->repeat ? v->repeat : 1;
	np_cpu_check((enum np_dtype)v->dtype, v->ptr, v->numel, &c->r);
	np_tensor_stats.checked++;
	np_tensor_stats.bytes += v->numel * np_dtype_size((enum np_dtype)v->dtype);
}

int np_tensor_check(PyObject *t, struct np_tensor_check *c)
{
	struct np_tensor_view v;
	int r = np_tensor_view(t, &v);
	if (r == 1)
		np_tensor_check_view(&v, c);
	return r;
}

static void visit(PyObject *o, np_tensor_fn fn, void *arg, int depth, int *budget);

/* The fields of a dataclass instance (a model's output as research code
 * returns it: Out(logits=..., aux_loss=...)), read from its __dict__, so
 * that what is visited stays referenced by the instance (a property
 * computing a tensor anew is not read; nor are slots=True dataclasses).
 * Types found not to be dataclasses are remembered (a few), so a module
 * returning an int or a string costs one failed lookup per type. */
static void visit_dataclass(PyObject *o, PyObject *type, np_tensor_fn fn, void *arg, int depth,
			    int *budget)
{
	static PyObject *plain[8];   /* types with no __dataclass_fields__ */
	static unsigned nplain;
	for (unsigned i = 0; i < 8; i++)
		if (plain[i] == type)
			return;
	PyObject *fields = np_py.Object_GetAttr(type, np_n.__dataclass_fields__);
	if (!fields || np_py_type(fields) != np_py.DictType) {
		np_py_err_clear();
		np_py_xdecref(fields);
		/* by address: a type freed and another made at its address
		 * is at worst not visited */
		plain[nplain++ % 8] = type;
		return;
	}
	PyObject *d = np_py.Object_GetAttr(o, np_n.__dict__);
	if (d && np_py_type(d) == np_py.DictType) {
		ptrdiff_t pos = 0;
		PyObject *k, *v;
		while (*budget > 0 && np_py.Dict_Next(fields, &pos, &k, &v)) {
			PyObject *val = np_py.Dict_GetItem(d, k);   /* borrowed, from the instance */
			if (val)
				visit(val, fn, arg, depth + 1, budget);
		}
	}
	np_py_xdecref(d);
	np_py.DecRef(fields);
	np_py_err_clear();
}

static void visit(PyObject *o, np_tensor_fn fn, void *arg, int depth, int *budget)
{
	if (!o || o == np_py.None || *budget <= 0)
		return;
	if (np_is_tensor(o)) {
		--*budget;
		fn(o, arg);
		return;
	}
	if (depth >= VISIT_MAX_DEPTH)
		return;
	PyObject *type = np_py_type(o);
	if (type == np_py.TupleType || (type != np_py.ListType && type != np_py.DictType &&
					np_py.Object_IsInstance(o, np_py.TupleType) > 0)) {
		ptrdiff_t n = np_py.Tuple_Size(o);
		for (ptrdiff_t i = 0; i < n && *budget > 0; i++)
			visit(np_py.Tuple_GetItem(o, i), fn, arg, depth + 1, budget);
	} else if (type == np_py.ListType) {
		ptrdiff_t n = np_py.List_Size(o);
		for (ptrdiff_t i = 0; i < n && *budget > 0; i++)
			visit(np_py.List_GetItem(o, i), fn, arg, depth + 1, budget);
	} else if (type == np_py.DictType ||
		   (type != np_py.ListType && np_py.Object_IsInstance(o, np_py.DictType) > 0)) {
		/* and dict subclasses: an OrderedDict, Hugging Face's
		 * ModelOutput (a model's whole output: logits, loss) */
		ptrdiff_t pos = 0;
		PyObject *k, *v;
		while (*budget > 0 && np_py.Dict_Next(o, &pos, &k, &v))
			visit(v, fn, arg, depth + 1, budget);
	} else if (type != np_py.ListType && type != np_py.DictType) {
		visit_dataclass(o, type, fn, arg, depth, budget);
	}
	if (np_py.Err_Occurred())
		np_py_err_clear();
}

void np_tensor_visit(PyObject *o, np_tensor_fn fn, void *arg)
{
	int budget = VISIT_MAX_ITEMS;
	visit(o, fn, arg, 0, &budget);
}
