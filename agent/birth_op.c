/* birth_op.c - the op inside a module that made a value non-finite, from
 * the tensors its autograd graph saved for backward (birth_op.h). */
#include <stdint.h>
#include <stdio.h>
#include "agent_report.h"
#include "alog.h"
#include "birth_op.h"
#include "hooks.h"
#include "tensor.h"

/* first_op(out, ins, kw, bad, moves, limit): (node name, inside,
 * read_finite, seen, const, zero_divisor, dead_rows) or None.
 *
 * The walk: the module's autograd nodes, breadth first from its output,
 * not past the nodes that made its inputs (their outputs are finite: the
 * hook calls this only then), at most `limit` of them.  Evidence, per
 * node output (node, output_nr): a saved tensor that bad() finds
 * non-finite marks the node that made it dirty, a finite one clean; a
 * parameter is its AccumulateGrad node's `variable`.  A node that only
 * moves values (moves(): a view, a transpose) and holds a non-finite
 * value got it from its one input.  The answer is the earliest dirty
 * node by creation order (_sequence_nr): its inputs are older, none of
 * them is seen dirty.  read_finite: every input it has was seen finite;
 * an input that needs no gradient (None in next_functions: a buffer, a
 * mask) counts only when the node saved it and it was finite.  A
 * non-finite parameter gives no answer: the parameter checks name it.
 * An op that keeps only its inputs (log, div, pow, a product of two
 * tensors that both need gradients, a matrix product: _REDO) is
 * computed again from them, without grad, when they are finite CPU
 * tensors, no tensor kept shows its output, and the search's work stays
 * within _REDO_COST: a loss's -(y * log(p)).sum() keeps neither log(p)
 * nor the product (y needs no gradient), and log is then found from its
 * p alone; fp16 attention scores q @ k^T that overflow are kept by no
 * node (softmax keeps its result), and the bmm is found from q and k.
 * seen: the tensor that showed the answer's output non-finite (kept by
 * the graph, or computed again), when one did (a node dirty only by
 * moves() has none).  A saved tensor that needs no gradient and is
 * non-finite (data, or computed under no_grad: an advantage normalised
 * by the std of one element) came from outside the graph: the earliest
 * node that read one, when no dirty node is older, is the answer, with
 * const that tensor.  One holding -Inf alone is a mask (a causal
 * attention mask, saved by SDPA every step): not that.
 * A division whose kept divisor holds 0 (a mean over a mask with no
 * valid token: sum / mask.sum()) is dirty without its output seen: x / 0
 * is inf or NaN whatever x is; not when a where, a masked_fill, an index
 * or a nan_to_num reads it (the safe division keeps what is finite).
 * zero_divisor: the answer is one (16 M divisor elements looked at, at
 * most, per search).  dead_rows: the answer is a softmax or log_softmax
 * whose kept result is NaN over a whole row along its dim: an input row
 * of -inf everywhere (a padded sample with every key masked, a state
 * with no valid action) or one holding +inf or NaN.
 *
 * Saved tensors behind saved-tensor hooks (checkpointing: unpacking
 * would recompute the block) and lists of them are skipped, as is every
 * error: what cannot be read is not evidence. */
static const char helper_py[] =
"import torch\n"
"_ST = getattr(torch._C._autograd, 'SavedTensor', None)\n"
"_T = torch.Tensor\n"
"_usable = _ST is not None and hasattr(_ST, 'unpack_hook')\n"
"_names = {}\n"
"def _saved(tp):\n"
"    n = _names.get(tp)\n"
"    if n is None:\n"
"        n = _names[tp] = tuple(a[11:] for a in dir(tp) if a.startswith('_raw_saved_'))\n"
"    return n\n"
"def _tensors(o, acc, depth):\n"
"    if isinstance(o, _T):\n"
"        acc.append(o)\n"
"    elif depth < 3 and isinstance(o, (tuple, list)):\n"
"        for x in o[:64]:\n"
"            _tensors(x, acc, depth + 1)\n"
"    elif depth < 3 and isinstance(o, dict):\n"
"        for x in list(o.values())[:64]:\n"
"            _tensors(x, acc, depth + 1)\n"
"    return acc\n"
"def _one_input(n):\n"
"    ins = [f for f, _ in n.next_functions if f is not None]\n"
"    return ins[0] if len(ins) == 1 else None\n"
"def _output_nr(name):\n"
"    d = name[6:]\n"
"    return int(d) if d.isdigit() else 0\n"
"def _seq(n):\n"
"    try:\n"
"        return n._sequence_nr()\n"
"    except Exception:\n"
"        return 1 << 62\n"
"def _unpacked(n, name):\n"
"    # a saved tensor, unless hooks pack it (unpacking would run them)\n"
"    try:\n"
"        raw = getattr(n, '_raw_saved_' + name)\n"
"        if not isinstance(raw, _ST) or raw.unpack_hook is not None:\n"
"            return None\n"
"        t = getattr(n, '_saved_' + name)\n"
"    except Exception:\n"
"        return None\n"
"    return t if isinstance(t, _T) else None\n"
"def _index(i):\n"
"    return i - (1 << 64) if i >= 1 << 63 else i\n"
"_N = torch._C._nn\n"
"_REDO = {'LogBackward0': (torch.log, ('self',)), 'Log2Backward0': (torch.log2, ('self',)),\n"
"         'Log10Backward0': (torch.log10, ('self',)), 'Log1PBackward0': (torch.log1p, ('self',)),\n"
"         'AcosBackward0': (torch.acos, ('self',)), 'AsinBackward0': (torch.asin, ('self',)),\n"
"         'AtanhBackward0': (torch.atanh, ('self',)), 'LgammaBackward0': (torch.lgamma, ('self',)),\n"
"         'DigammaBackward0': (torch.digamma, ('self',)), 'ErfinvBackward0': (torch.erfinv, ('self',)),\n"
"         'SinhBackward0': (torch.sinh, ('self',)), 'CoshBackward0': (torch.cosh, ('self',)),\n"
"         'MulBackward0': (torch.mul, ('self', 'other')),\n"
"         'DivBackward0': (torch.div, ('self', 'other')), 'XlogyBackward0': (torch.xlogy, ('self', 'other')),\n"
"         'PowBackward0': (torch.pow, ('self', 'exponent')),\n"
"         'NllLossBackward0': (lambda s, t, w, r, i: _N.nll_loss(s, t, w, r, _index(i)),\n"
"                              ('self', 'target', 'weight', 'reduction', 'ignore_index')),\n"
"         'NllLoss2DBackward0': (lambda s, t, w, r, i: _N.nll_loss2d(s, t, w, r, _index(i)),\n"
"                                ('self', 'target', 'weight', 'reduction', 'ignore_index')),\n"
"         'MmBackward0': (torch.mm, ('self', 'mat2')), 'BmmBackward0': (torch.bmm, ('self', 'mat2')),\n"
"         'MvBackward0': (torch.mv, ('self', 'vec')), 'DotBackward0': (torch.dot, ('self', 'tensor'))}\n"
"_PRODUCTS = ('mat2', 'vec', 'tensor')\n"
"_REDO_COST = 1 << 24   # per search, as NP_BIRTH_OP_ELEMS for bad()\n"
"# readers that keep only part of what they read\n"
"_MASKING = {'WhereBackward0', 'MaskedFillBackward0', 'MaskedScatterBackward0',\n"
"            'NanToNumBackward0', 'IndexBackward0', 'MaskedSelectBackward0'}\n"
"def _mask(t):\n"
"    # -inf and nothing else non-finite: an attention or action mask\n"
"    try:\n"
"        return not bool(torch.isnan(t).any() or torch.isposinf(t).any())\n"
"    except Exception:\n"
"        return False\n"
"def _packed_or_gone(n, name):\n"
"    # not a plain None: behind hooks, or unreadable (changed in place)\n"
"    try:\n"
"        raw = getattr(n, '_raw_saved_' + name)\n"
"        return raw.unpack_hook is not None or getattr(n, '_saved_' + name) is not None\n"
"    except Exception:\n"
"        return True\n"
"def _redone(n, bad, left):\n"
"    # the output of an op that keeps only its inputs, computed again from\n"
"    # them when they are CPU tensors, the floating ones finite (and the\n"
"    # numbers it was given): (bad(output), output), or (None, None)\n"
"    f = _REDO.get(type(n).__name__)\n"
"    if f is None:\n"
"        return None, None\n"
"    args = []\n"
"    for name in f[1]:\n"
"        if hasattr(n, '_raw_saved_' + name):\n"
"            v = _unpacked(n, name)\n"
"            if v is None and (name != 'weight' or _packed_or_gone(n, name)):\n"
"                return None, None\n"
"        else:\n"
"            v = getattr(n, '_saved_' + name, None)\n"
"        if isinstance(v, _T):\n"
"            if v.device.type != 'cpu' or (v.is_floating_point() and bad(v) is not False):\n"
"                return None, None\n"
"            v = v.detach()\n"
"        elif v is not None and not isinstance(v, (int, float)):\n"
"            return None, None\n"
"        args.append(v)\n"
"    # an op costs its largest input's size, a product its first factor's\n"
"    # size times the second's last dim (a [4, 512, 64] x [4, 64, 512]\n"
"    # bmm: 67 M): not past left[0], what is left of the search's\n"
"    # _REDO_COST (an output is no larger than its cost)\n"
"    cost = 0\n"
"    for name, v in zip(f[1], args):\n"
"        if isinstance(v, _T):\n"
"            if name in _PRODUCTS:\n"
"                cost *= v.shape[-1] if v.dim() > 1 else 1\n"
"            else:\n"
"                cost = max(cost, v.numel())\n"
"    if cost > left[0]:\n"
"        return None, None\n"
"    left[0] -= cost\n"
"    try:\n"
"        with torch.no_grad():\n"
"            r = f[0](*args)\n"
"    except Exception:\n"
"        return None, None\n"
"    return (bad(r), r) if isinstance(r, _T) else (None, None)\n"
"def _zero_divisor(n, look):\n"
"    # a division whose divisor (kept: even x / 0.0 keeps a 0-dim tensor)\n"
"    # holds 0, a CPU tensor within what is left of look[0], the search's\n"
"    # elements to compare with 0\n"
"    if not type(n).__name__.startswith('DivBackward') or not hasattr(n, '_raw_saved_other'):\n"
"        return False\n"
"    v = _unpacked(n, 'other')\n"
"    try:\n"
"        if v is None or v.device.type != 'cpu' or v.numel() > look[0]:\n"
"            return False\n"
"        look[0] -= v.numel()\n"
"        return bool((v.detach() == 0).any())\n"
"    except Exception:\n"
"        return False\n"
"_STATS = ('StdBackward', 'VarBackward', 'StdMeanBackward', 'VarMeanBackward')\n"
"def _too_few(n):\n"
"    # std or var over no more values than its correction (Bessel's 1 by\n"
"    # default) divides by n - correction <= 0: the std of one value is NaN\n"
"    if not type(n).__name__.startswith(_STATS) or not hasattr(n, '_raw_saved_self'):\n"
"        return False\n"
"    try:\n"
"        shape = _unpacked(n, 'self').shape\n"
"        c = getattr(n, '_saved_correction', None)\n"
"        c = 1 if c is None else c\n"
"        dims = getattr(n, '_saved_dim', None)\n"
"        count = 1\n"
"        for d in (dims if dims else range(len(shape))):\n"
"            count *= shape[d]\n"
"        return count - c <= 0\n"
"    except Exception:\n"
"        return False\n"
"def _dead_rows(n, t):\n"
"    # a softmax or log_softmax whose kept result is NaN over a whole row\n"
"    # along its dim: that input row was -inf everywhere (all masked), or\n"
"    # held +inf or NaN\n"
"    if type(n).__name__ not in ('SoftmaxBackward0', 'LogSoftmaxBackward0') or t is None:\n"
"        return False\n"
"    try:\n"
"        return bool(torch.isnan(t.detach()).all(dim=_index(n._saved_dim)).any())\n"
"    except Exception:\n"
"        return False\n"
"_cur = getattr(torch._C, '_current_autograd_node', None)\n"
"def saved_data(bad):\n"
"    n = _cur() if _usable and _cur is not None else None\n"
"    if n is None:\n"
"        return None\n"
"    for name in _saved(type(n)):\n"
"        t = None if name.startswith('result') else _unpacked(n, name)\n"
"        if t is not None and t.grad_fn is None and not t.requires_grad and bad(t):\n"
"            return t\n"
"    return None\n"
"def _holds(n, name, test):\n"
"    # test() of a saved CPU tensor of at most 16 M elements holds somewhere\n"
"    t = _unpacked(n, name) if hasattr(n, '_raw_saved_' + name) else None\n"
"    try:\n"
"        return (t is not None and t.device.type == 'cpu' and t.numel() <= 1 << 24\n"
"                and bool(test(t.detach()).any()))\n"
"    except Exception:\n"
"        return False\n"
"# a node whose derivative is infinite at a point, and the saved tensor\n"
"# that shows it read that point\n"
"_SINGULAR = {'SqrtBackward0': ('result', lambda t: t == 0),\n"

"             'LogBackward0': ('self', lambda t: t == 0), 'Log2Backward0': ('self', lambda t: t == 0),\n"
"             'Log10Backward0': ('self', lambda t: t == 0),\n"
"             'AcosBackward0': ('self', lambda t: t.abs() == 1), 'AsinBackward0': ('self', lambda t: t.abs() == 1),\n"
"             'AtanhBackward0': ('self', lambda t: t.abs() == 1)}\n"
"def node_cause():\n"
"    # 1: the running node is a division whose divisor held 0 (the where\n"
"    # trap); 2: its op's derivative is infinite where it read (sqrt of 0,\n"
"    # pow of 0 by less than 1, acos of 1); 0: neither, or not known\n"
"    n = _cur() if _usable and _cur is not None else None\n"
"    if n is None:\n"
"        return 0\n"
"    if _zero_divisor(n, [1 << 24]):\n"
"        return 1\n"
"    name = type(n).__name__\n"
"    s = _SINGULAR.get(name)\n"
"    if s is not None and _holds(n, s[0], s[1]):\n"
"        return 2\n"
"    if name == 'PowBackward0':\n"
"        e = getattr(n, '_saved_exponent', None)\n"
"        if isinstance(e, (int, float)) and 0 < e < 1 and _holds(n, 'self', lambda t: t == 0):\n"
"            return 2\n"
"    return 0\n"
"def first_op(out, ins, kw, bad, moves, limit):\n"
"    root = getattr(out, 'grad_fn', None)\n"
"    if not _usable or root is None:\n"
"        return None\n"
"    stop, finite = set(), set()\n"
"    for t in _tensors((ins, kw), [], 0):\n"
"        if t.grad_fn is not None:\n"
"            stop.add(id(t.grad_fn))\n"
"            finite.add((id(t.grad_fn), t.output_nr))\n"
"    nodes, order, i = {id(root): root}, [root], 0\n"
"    while i < len(order) and len(order) < limit:\n"
"        n = order[i]\n"
"        i += 1\n"
"        if id(n) in stop:\n"
"            continue\n"
"        for f, _ in n.next_functions:\n"
"            if f is not None and id(f) not in nodes and len(order) < limit:\n"
"                nodes[id(f)] = f\n"
"                order.append(f)\n"
"    dirty, seen = {id(root): root}, {}\n"
"    consts_ok, consts_bad = {}, {}\n"
"    zeros, look, redo = set(), [1 << 24], [_REDO_COST]\n"
"    users = {}   # node: the kinds of the nodes that read its output\n"
"    for n in order:\n"
"        for f, _ in n.next_functions:\n"
"            if f is not None:\n"
"                users.setdefault(id(f), set()).add(type(n).__name__)\n"
"    for n in order:\n"
"        if id(n) in stop:\n"
"            continue\n"
"        var = getattr(n, 'variable', None)\n"
"        if isinstance(var, _T):\n"
"            v = bad(var)\n"
"            if v is True:\n"
"                return None\n"
"            if v is False:\n"
"                finite.add((id(n), 0))\n"
"            continue\n"
"        for name in _saved(type(n)):\n"
"            t = _unpacked(n, name)\n"
"            if t is None:\n"
"                continue\n"
"            v = bad(t)\n"
"            if v is None:\n"
"                continue\n"
"            if name.startswith('result'):\n"
"                src, nr = n, _output_nr(name)\n"
"            else:\n"
"                src, nr = t.grad_fn, t.output_nr\n"
"            if src is None:\n"
"                if t.requires_grad:\n"
"                    continue\n"
"                if not v:\n"
"                    consts_ok[id(n)] = consts_ok.get(id(n), 0) + 1\n"
"                elif not _mask(t):\n"
"                    consts_bad.setdefault(id(n), t)\n"
"            elif v:\n"
"                dirty[id(src)] = src\n"
"                seen.setdefault(id(src), t)\n"
"            else:\n"
"                finite.add((id(src), nr))\n"
"        # x / 0 is inf or NaN whatever x is, and so is the std of one\n"
"        # value: its output is non-finite, unless what reads it keeps\n"
"        # only some of it (the safe division torch.where(n > 0, s / n, 0)\n"
"        # is finite)\n"
"        if not (_MASKING & users.get(id(n), set())) and (_zero_divisor(n, look) or\n"
"                                                         _too_few(n)):\n"
"            dirty[id(n)] = n\n"
"            zeros.add(id(n))\n"
"        # computed again only when no tensor kept shows its output\n"
"        if id(n) not in seen and (id(n), 0) not in finite:\n"
"            v, t = _redone(n, bad, redo)\n"
"            if v:\n"
"                dirty[id(n)] = n\n"
"                seen[id(n)] = t\n"
"            elif v is False:\n"
"                finite.add((id(n), 0))\n"
"    work = [d for d in dirty.values() if moves(d)]\n"
"    while work:\n"
"        s = _one_input(work.pop())\n"
"        if s is not None and id(s) in nodes and id(s) not in stop and id(s) not in dirty:\n"
"            dirty[id(s)] = s\n"
"            if moves(s):\n"
"                work.append(s)\n"
"    cands = [d for k, d in dirty.items() if k in nodes and k not in stop and not moves(d)]\n"
"    r = root\n"
"    for _ in range(8):\n"
"        s = _one_input(r) if moves(r) else None\n"
"        if s is None:\n"
"            break\n"
"        r = s\n"
"    p = min(cands, key=_seq) if cands else None\n"
"    cb = [n for n in order if id(n) in consts_bad and id(n) not in stop]\n"
"    q = min(cb, key=_seq) if cb else None\n"
"    if q is not None and (p is None or _seq(q) <= _seq(p)):\n"
"        return (q.name(), q is not r, False, None, consts_bad[id(q)], False, False)\n"
"    if p is None:\n"
"        return None\n"
"    ok, nconst = id(p) not in consts_bad, 0\n"
"    for f, nr in p.next_functions:\n"
"        if f is None:\n"
"            nconst += 1\n"
"        elif (id(f), nr) not in finite:\n"
"            ok = False\n"
"    ok = ok and nconst <= consts_ok.get(id(p), 0)\n"
"    return (p.name(), p is not r, ok, seen.get(id(p)), None, id(p) in zeros,\n"
"            _dead_rows(p, seen.get(id(p))))\n";

static PyObject *first_op_fn, *saved_data_fn, *cause_fn, *bad_fn, *moves_fn;
static int broken;                /* the helper could not be made */
static uint64_t elems_left;       /* this search's budget for bad() */
static unsigned searches_this_step;

/* bad(t): True when t holds a non-finite value, False when it is all
 * finite, None when it cannot be checked here (not a CPU floating-point
 * tensor, not dense, over the search's budget). */
static PyObject *bad_py(PyObject *self, PyObject *args)
{
	(void)self;
	PyObject *t = np_py.Tuple_Size(args) == 1 ? np_py.Tuple_GetItem(args, 0) : NULL;
	PyObject *res = np_py.None;
	struct np_tensor_view v;
	if (t && np_is_tensor(t) && np_tensor_view(t, &v) == 1 && v.numel <= elems_left) {
		struct np_tensor_check c;
		elems_left -= v.numel;
		np_tensor_check_view(&v, &c);
		res = c.r.nan || c.r.posinf || c.r.neginf ? np_py.True : np_py.False;
	}
	if (np_py.Err_Occurred())
		np_py_err_clear();
	np_py.IncRef(res);
	return res;
}

static PyObject *moves_py(PyObject *self, PyObject *args)
{
	(void)self;
	PyObject *n = np_py.Tuple_Size(args) == 1 ? np_py.Tuple_GetItem(args, 0) : NULL;
	PyObject *res = n && np_node_moves_only(n) ? np_py.True : np_py.False;
	np_py.IncRef(res);
	return res;
}

static struct np_py_methoddef bad_def = { "nanprof_bad", bad_py, NP_METH_VARARGS, NULL };
static struct np_py_methoddef moves_def = { "nanprof_moves", moves_py, NP_METH_VARARGS, NULL };

static int helper(void)
{
	if (first_op_fn)
		return 0;
	if (broken)
		return -1;
	static const char *const names[] = { "first_op", "saved_data", "node_cause" };
	PyObject *fns[3];
	if (np_py_helper(helper_py, names, fns, 3)) {
		np_alog("birth op search off: helper failed");
		broken = 1;
		return -1;
	}
	bad_fn = np_py.CFunction_NewEx(&bad_def, NULL, NULL);
	moves_fn = np_py.CFunction_NewEx(&moves_def, NULL, NULL);
	if (!bad_fn || !moves_fn) {
		np_py_err_clear();
		for (int i = 0; i < 3; i++)
			np_py_xdecref(fns[i]);
		broken = 1;
		return -1;
	}
	first_op_fn = fns[0];
	saved_data_fn = fns[1];
	cause_fn = fns[2];
	return 0;
}

unsigned np_birth_op(PyObject *out, PyObject *in, PyObject *kw, char *op, size_t len,
		     PyObject **seen, PyObject **outside_in)
{
	if (seen)
		*seen = NULL;
	if (outside_in)
		*outside_in = NULL;
	if (searches_this_step >= NP_BIRTH_OP_PER_STEP || helper())
		return 0;
	searches_this_step++;
	elems_left = NP_BIRTH_OP_ELEMS;
	PyObject *limit = np_py.Long_FromVoidPtr((void *)(uintptr_t)NP_BIRTH_OP_NODES);
	PyObject *res = limit ? np_py.Object_CallFunctionObjArgs(first_op_fn, out, in,
				kw ? kw : np_py.None, bad_fn, moves_fn, limit, NULL) : NULL;
	unsigned flags = 0;
	const char *name = NULL;
	if (res && np_py_type(res) == np_py.TupleType && np_py.Tuple_Size(res) == 7 &&
	    (name = np_py.Unicode_AsUTF8(np_py.Tuple_GetItem(res, 0)))) {
		snprintf(op, len, "%s", name);
		if (np_py.Object_IsTrue(np_py.Tuple_GetItem(res, 1)) == 1)
			flags |= NP_AF_OP_INSIDE;
		if (np_py.Object_IsTrue(np_py.Tuple_GetItem(res, 2)) == 1)
			flags |= NP_AF_OP_READ_FINITE;
		if (np_py.Object_IsTrue(np_py.Tuple_GetItem(res, 5)) == 1)
			flags |= NP_AF_ZERO_DIVISOR;
		if (np_py.Object_IsTrue(np_py.Tuple_GetItem(res, 6)) == 1)
			flags |= NP_AF_DEAD_ROWS;
		PyObject *t = np_py.Tuple_GetItem(res, 3);
		if (seen && np_is_tensor(t)) {
			np_py.IncRef(t);
			*seen = t;
		}
		t = np_py.Tuple_GetItem(res, 4);
		if (outside_in && np_is_tensor(t)) {
			np_py.IncRef(t);
			*outside_in = t;
		}
	}
	np_py_xdecref(res);
	np_py_xdecref(limit);
	if (np_py.Err_Occurred())
		np_py_err_clear();
	return flags;
}

PyObject *np_birth_saved_data(void)
{
	if (searches_this_step >= NP_BIRTH_OP_PER_STEP || helper())
		return NULL;
	searches_this_step++;
	elems_left = NP_BIRTH_OP_ELEMS;
	PyObject *t = np_py.Object_CallFunctionObjArgs(saved_data_fn, bad_fn, NULL);
	if (!t || t == np_py.None || !np_is_tensor(t)) {
		np_py_xdecref(t);
		t = NULL;
	}
	if (np_py.Err_Occurred())
		np_py_err_clear();
	return t;
}

unsigned np_birth_node_cause(void)
{
	if (searches_this_step >= NP_BIRTH_OP_PER_STEP || helper())
		return 0;
	searches_this_step++;
	PyObject *r = np_py.Object_CallFunctionObjArgs(cause_fn, NULL);
	long long code = r ? np_py.Long_AsLongLong(r) : 0;
	np_py_xdecref(r);
	if (np_py.Err_Occurred())
		np_py_err_clear();
	return code == 1 ? NP_AF_ZERO_DIVISOR : code == 2 ? NP_AF_SINGULAR : 0;
}

void np_birth_op_step(void)
{
	searches_this_step = 0;
}
