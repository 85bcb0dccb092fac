/* pyapi.h - the CPython C API, found at run time.
 *
 * The agent is loaded into processes that may not be Python at all and
 * into every CPython from 3.10 to 3.13, so it links against no libpython:
 * each function is looked up with dlsym once the interpreter is there.
 * Only functions of the stable ABI are used, and reference counts change
 * only through Py_IncRef/Py_DecRef (3.12's immortal objects make the
 * macros version-specific).
 */
#ifndef NP_PYAPI_H
#define NP_PYAPI_H

#include <stddef.h>
#include <stdint.h>

typedef struct _object PyObject;
typedef PyObject *(*np_pycfunc)(PyObject *self, PyObject *args);

/* PyMethodDef as every CPython 3 lays it out. */
struct np_py_methoddef {
	const char *name;
	np_pycfunc meth;
	int flags;
	const char *doc;
};
#define NP_METH_VARARGS 0x0001
#define NP_PY_FILE_INPUT 257
#define NP_PY_LT 0

struct np_pyapi {
	int (*IsInitialized)(void);
	int (*GILState_Ensure)(void);
	void (*GILState_Release)(int);
	int (*IsFinalizing)(void);   /* optional: NULL if not exported */
	PyObject *(*Run_StringFlags)(const char *, int, PyObject *, PyObject *, void *);
	/* optional: np_py_run() names the agent's code in tracebacks with them */
	PyObject *(*CompileStringExFlags)(const char *, const char *, int, void *, int);
	PyObject *(*Eval_EvalCode)(PyObject *, PyObject *, PyObject *);
	PyObject *(*Dict_New)(void);
	int (*Dict_SetItemString)(PyObject *, const char *, PyObject *);
	PyObject *(*Dict_GetItemString)(PyObject *, const char *);   /* borrowed */
	PyObject *(*Dict_GetItem)(PyObject *, PyObject *);           /* borrowed */
	PyObject *(*Eval_GetBuiltins)(void);                          /* borrowed */
	PyObject *(*CFunction_NewEx)(struct np_py_methoddef *, PyObject *, PyObject *);
	PyObject *(*Object_GetAttrString)(PyObject *, const char *);
	PyObject *(*Object_GetAttr)(PyObject *, PyObject *);
	PyObject *(*Object_CallObject)(PyObject *, PyObject *);
	PyObject *(*Object_CallFunctionObjArgs)(PyObject *, ...);
	PyObject *(*Object_CallMethodObjArgs)(PyObject *, PyObject *, ...);
	PyObject *(*Unicode_InternFromString)(const char *);
	int (*Object_IsInstance)(PyObject *, PyObject *);
	int (*Object_IsTrue)(PyObject *);
	ptrdiff_t (*Tuple_Size)(PyObject *);
	PyObject *(*Tuple_GetItem)(PyObject *, ptrdiff_t);           /* borrowed */
	ptrdiff_t (*List_Size)(PyObject *);
	PyObject *(*List_GetItem)(PyObject *, ptrdiff_t);            /* borrowed */
	PyObject *(*List_New)(ptrdiff_t);
	int (*List_Append)(PyObject *, PyObject *);
	double (*Float_AsDouble)(PyObject *);
	int (*Dict_Next)(PyObject *, ptrdiff_t *, PyObject **, PyObject **);
	void *(*Long_AsVoidPtr)(PyObject *);
	long long (*Long_AsLongLong)(PyObject *);
	PyObject *(*Long_FromVoidPtr)(void *);
	PyObject *(*Unicode_FromString)(const char *);
	const char *(*Unicode_AsUTF8)(PyObject *);
	PyObject *(*Err_Occurred)(void);
	void (*Err_Clear)(void);     /* the agent calls np_py_err_clear() */
	int (*Err_ExceptionMatches)(PyObject *);
	void (*Err_Fetch)(PyObject **, PyObject **, PyObject **);
	void (*Err_Restore)(PyObject *, PyObject *, PyObject *);
	PyObject **Exc_Exception;    /* &PyExc_Exception */
	void (*IncRef)(PyObject *);
	void (*DecRef)(PyObject *);
	PyObject *None;
	PyObject *True;
	PyObject *False;
	PyObject *TupleType, *ListType, *DictType;
};

extern struct np_pyapi np_py;

/* Looks every function up; 0 when this process has a usable CPython. */
int np_pyapi_load(void);

/* Py_TYPE(o): ob_type sits right after ob_refcnt in every release build. */
static inline PyObject *np_py_type(PyObject *o)
{
	return ((PyObject **)o)[1];
}

static inline void np_py_xdecref(PyObject *o)
{
	if (o)
		np_py.DecRef(o);
}

/* o.attr when it is a dict (or a subclass: an OrderedDict, a module's
 * _modules in old torch), a new reference; NULL, no error set, if not. */
PyObject *np_py_dict_attr(PyObject *o, PyObject *attr);

/* Clears the current Python error, the agent's own failure: a check is
 * lost, never the job.  All but one kind: an exception that is not an
 * Exception (KeyboardInterrupt, SystemExit) is how Python stops a
 * program, raised by a signal's handler (Ctrl-C) wherever bytecode runs
 * next, which can be inside an agent hook (torch runs Python code to
 * register a node's hook).  Swallowed, the job would not stop; it is
 * kept aside, the first one, for np_py_reraise(). */
void np_py_err_clear(void);
/* Sets the exception kept aside, if any, as the current error again
 * (a hook then returns NULL to hand it to the job): 1, else 0. */
int np_py_reraise(void);

/* Runs src, Python source (a module's statements), in namespace g, as
 * the file "<nanprof agent>": a traceback that passes through one of the
 * agent's wrappers (loss.backward() raising inside torch) says whose
 * frame it is, not "<string>".  Its result, or NULL with the error set. */
PyObject *np_py_run(const char *src, PyObject *g);

/* Runs src, Python source, in a namespace of its own and gives the n
 * functions it defines under names[] (new references; the namespace
 * lives on in them): 0, or -1 with none given and the error cleared. */
int np_py_helper(const char *src, const char *const names[], PyObject *fns[], int n);

#endif
