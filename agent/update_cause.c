/* update_cause.c - why an optimizer's update made a parameter non-finite
 * (update_cause.h). */
#include <stdint.h>
#include <string.h>
#include "agent_report.h"
#include "alog.h"
#include "report.h"
#include "tensor.h"
#include "update_cause.h"

/* update_cause(opt, p, chunk): (cause, optimizer class, state name, eps,
 * lr, at_zero, state tensor) or None.
 *
 * The param group that holds p gives lr and eps (Adafactor's tuple of
 * eps, or none at all as in SGD: no denominator to speak of).  The state
 * divided by is the first of _STATES opt.state[p] has (amsgrad divides
 * by its running maximum), as big as p and on its device.  eps is cast
 * to the state's dtype as the update's `add_(eps)` does: 1e-8 is 0 in
 * float16.  opt.state is a defaultdict: .get, never [], so that looking
 * adds nothing to it.  chunk bounds the temporaries of the comparison. */
static const char helper_py[] =
"import math, torch\n"
"_STATES = ('exp_avg_sq', 'square_avg', 'sum', 'exp_inf')\n"
"def _number(x):\n"
"    if isinstance(x, torch.Tensor):\n"
"        return float(x) if x.numel() == 1 and x.device.type == 'cpu' else None\n"
"    return float(x) if isinstance(x, (int, float)) else None\n"
"def update_cause(opt, p, chunk):\n"
"    try:\n"
"        grp = next((g for g in opt.param_groups\n"
"                    if any(q is p for q in g.get('params', ()))), None)\n"
"        if grp is None:\n"
"            return None\n"
"        cls = type(opt).__name__\n"
"        lr, eps = _number(grp.get('lr')), _number(grp.get('eps'))\n"
"        if lr is not None and not math.isfinite(lr):\n"
"            return (2, cls, '', eps if eps is not None else 0.0, lr, 0, None)\n"
"        st = opt.state.get(p) if isinstance(opt.state, dict) else None\n"
"        if eps is None or not isinstance(st, dict):\n"
"            return None\n"
"        names = (('max_exp_avg_sq',) if grp.get('amsgrad') else ()) + _STATES\n"
"        v = None\n"
"        for name in names:\n"
"            v = st.get(name)\n"
"            if isinstance(v, torch.Tensor) and v.is_floating_point() and \\\n"
"               v.shape == p.shape and v.device == p.device:\n"
"                break\n"
"            v = None\n"
"        if v is None or torch.tensor(eps, dtype=v.dtype).item() != 0:\n"
"            return None\n"
"        x, s = p.detach().reshape(-1), v.detach().reshape(-1)\n"
"        at_zero = 0\n"
"        for i in range(0, x.numel(), chunk):\n"
"            bad = ~torch.isfinite(x[i:i + chunk])\n"
"            at_zero += int((bad & (s[i:i + chunk] == 0)).sum())\n"
"        if not at_zero:\n"
"            return None\n"
"        return (1, cls, name, eps, lr if lr is not None else 0.0, at_zero, v)\n"
"    except Exception:\n"
"        return None\n";

static PyObject *cause_fn;
static int broken;
static unsigned analyses;

static int helper(void)
{
	if (cause_fn)
		return 0;
	if (broken)
		return -1;
	static const char *const names[] = { "update_cause" };
	if (np_py_helper(helper_py, names, &cause_fn, 1)) {
		np_alog("update cause off: helper failed");
		broken = 1;
		return -1;
	}
	return 0;
}

static void copy_text(char *dst, size_t n, PyObject *s)
{
	const char *t = s ? np_py.Unicode_AsUTF8(s) : NULL;
	if (t) {
		strncpy(dst, t, n - 1);
		dst[n - 1] = 0;
	}
}

/* The record from update_cause's tuple; 0 when it is not one. */
static int fill(PyObject *res, struct np_agent_rec *r)
{
	if (!res || np_py_type(res) != np_py.TupleType || np_py.Tuple_Size(res) != 7)
		return 0;
	long long cause = np_py.Long_AsLongLong(np_py.Tuple_GetItem(res, 0));
	if (cause != NP_UPD_ZERO_DENOM && cause != NP_UPD_LR)
		return 0;
	memset(r, 0, sizeof(*r));
	r->kind = NP_AREC_UPDATE;
	r->status = (uint16_t)cause;
	copy_text(r->upd.optimizer, sizeof(r->upd.optimizer), np_py.Tuple_GetItem(res, 1));
	copy_text(r->upd.state, sizeof(r->upd.state), np_py.Tuple_GetItem(res, 2));
	r->upd.eps = np_py.Float_AsDouble(np_py.Tuple_GetItem(res, 3));
	r->upd.lr = np_py.Float_AsDouble(np_py.Tuple_GetItem(res, 4));
	r->upd.at_zero = (uint64_t)np_py.Long_AsLongLong(np_py.Tuple_GetItem(res, 5));
	struct np_tensor_view v;
	PyObject *state = np_py.Tuple_GetItem(res, 6);
	if (np_is_tensor(state) && np_tensor_view(state, &v) == 1)
		r->dtype = v.dtype;
	return !np_py.Err_Occurred();
}

void np_update_cause(PyObject *optimizer, PyObject *param)
{
	if (analyses >= NP_UPDATE_CAUSES || helper())
		return;
	analyses++;
	PyObject *chunk = np_py.Long_FromVoidPtr((void *)(uintptr_t)NP_UPDATE_CHUNK);
	PyObject *res = chunk ? np_py.Object_CallFunctionObjArgs(cause_fn, optimizer, param,
								chunk, NULL)
			      : NULL;
	struct np_agent_rec r;
	if (fill(res, &r))
		np_report_send(&r);
	np_py_xdecref(res);
	np_py_xdecref(chunk);
	if (np_py.Err_Occurred())
		np_py_err_clear();
}
