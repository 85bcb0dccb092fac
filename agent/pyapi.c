/* pyapi.c - dlsym the CPython functions the agent uses (see pyapi.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "pyapi.h"

struct np_pyapi np_py;

#define NEED(field, sym) \
	do { \
		*(void **)&np_py.field = dlsym(RTLD_DEFAULT, sym); \
		if (!np_py.field) \
			return -1; \
	} while (0)

int np_pyapi_load(void)
{
	if (np_py.DecRef)
		return 0;
	NEED(IsInitialized, "Py_IsInitialized");
	NEED(GILState_Ensure, "PyGILState_Ensure");
	NEED(GILState_Release, "PyGILState_Release");
	/* public in 3.13, private before; either may be missing */
	*(void **)&np_py.IsFinalizing = dlsym(RTLD_DEFAULT, "Py_IsFinalizing");
	if (!np_py.IsFinalizing)
		*(void **)&np_py.IsFinalizing = dlsym(RTLD_DEFAULT, "_Py_IsFinalizing");
	NEED(Run_StringFlags, "PyRun_StringFlags");
	*(void **)&np_py.CompileStringExFlags = dlsym(RTLD_DEFAULT, "Py_CompileStringExFlags");
	*(void **)&np_py.Eval_EvalCode = dlsym(RTLD_DEFAULT, "PyEval_EvalCode");
	NEED(Dict_New, "PyDict_New");
	NEED(Dict_SetItemString, "PyDict_SetItemString");
	NEED(Dict_GetItemString, "PyDict_GetItemString");
	NEED(Dict_GetItem, "PyDict_GetItem");
	NEED(Eval_GetBuiltins, "PyEval_GetBuiltins");
	NEED(CFunction_NewEx, "PyCFunction_NewEx");
	NEED(Object_GetAttrString, "PyObject_GetAttrString");
	NEED(Object_GetAttr, "PyObject_GetAttr");
	NEED(Object_CallObject, "PyObject_CallObject");
	NEED(Object_CallFunctionObjArgs, "PyObject_CallFunctionObjArgs");
	NEED(Object_CallMethodObjArgs, "PyObject_CallMethodObjArgs");
	NEED(Unicode_InternFromString, "PyUnicode_InternFromString");
	NEED(Object_IsInstance, "PyObject_IsInstance");
	NEED(Object_IsTrue, "PyObject_IsTrue");
	NEED(Tuple_Size, "PyTuple_Size");
	NEED(Tuple_GetItem, "PyTuple_GetItem");
	NEED(List_Size, "PyList_Size");
	NEED(List_GetItem, "PyList_GetItem");
	NEED(List_New, "PyList_New");
	NEED(List_Append, "PyList_Append");
	NEED(Float_AsDouble, "PyFloat_AsDouble");
	NEED(Dict_Next, "PyDict_Next");
	NEED(Long_AsVoidPtr, "PyLong_AsVoidPtr");
	NEED(Long_AsLongLong, "PyLong_AsLongLong");
	NEED(Long_FromVoidPtr, "PyLong_FromVoidPtr");
	NEED(Unicode_FromString, "PyUnicode_FromString");
	NEED(Unicode_AsUTF8, "PyUnicode_AsUTF8");
	NEED(Err_Occurred, "PyErr_Occurred");
	NEED(Err_Clear, "PyErr_Clear");
	NEED(Err_ExceptionMatches, "PyErr_ExceptionMatches");
	NEED(Err_Fetch, "PyErr_Fetch");
	NEED(Err_Restore, "PyErr_Restore");
	NEED(Exc_Exception, "PyExc_Exception");
	NEED(IncRef, "Py_IncRef");
	NEED(None, "_Py_NoneStruct");
	NEED(True, "_Py_TrueStruct");
	NEED(False, "_Py_FalseStruct");
	NEED(TupleType, "PyTuple_Type");
	NEED(ListType, "PyList_Type");
	NEED(DictType, "PyDict_Type");
	NEED(DecRef, "Py_DecRef");   /* last: it marks the table complete */
	return 0;
}

/* the exception kept aside by np_py_err_clear(); the GIL guards it */
static PyObject *kept_type, *kept_value, *kept_tb;

PyObject *np_py_dict_attr(PyObject *o, PyObject *attr)
{
	PyObject *d = np_py.Object_GetAttr(o, attr);
	if (d && np_py_type(d) != np_py.DictType && np_py.Object_IsInstance(d, np_py.DictType) <= 0) {
		np_py.DecRef(d);
		d = NULL;
	}
	if (!d)
		np_py_err_clear();
	return d;
}

void np_py_err_clear(void)
{
	if (!np_py.Err_Occurred())
		return;
	if (np_py.Err_ExceptionMatches(*np_py.Exc_Exception) || kept_type) {
		np_py.Err_Clear();
		return;
	}
	np_py.Err_Fetch(&kept_type, &kept_value, &kept_tb);
}

int np_py_reraise(void)
{
	if (!kept_type)
		return 0;
	np_py.Err_Restore(kept_type, kept_value, kept_tb);   /* steals them */
	kept_type = kept_value = kept_tb = NULL;
	return 1;
}

PyObject *np_py_run(const char *src, PyObject *g)
{
	if (!np_py.CompileStringExFlags || !np_py.Eval_EvalCode)
		return np_py.Run_StringFlags(src, NP_PY_FILE_INPUT, g, g, NULL);
	PyObject *code = np_py.CompileStringExFlags(src, "<nanprof agent>", NP_PY_FILE_INPUT,
						    NULL, -1);
	if (!code)
		return NULL;
	PyObject *r = np_py.Eval_EvalCode(code, g, g);
	np_py.DecRef(code);
	return r;
}

int np_py_helper(const char *src, const char *const names[], PyObject *fns[], int n)
{
	int got = 0;
	PyObject *g = np_py.Dict_New();
	if (g) {
		np_py.Dict_SetItemString(g, "__builtins__", np_py.Eval_GetBuiltins());
		PyObject *r = np_py_run(src, g);
		np_py_xdecref(r);
		while (r && got < n && (fns[got] = np_py.Dict_GetItemString(g, names[got])))
			got++;
	}
	if (got < n) {
		np_py_err_clear();
		return -1;
	}
	for (int i = 0; i < n; i++)
		np_py.IncRef(fns[i]);   /* borrowed from g, which stays alive with them */
	return 0;
}
