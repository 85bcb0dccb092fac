/* gpu_norms.c - gradient norms of CUDA parameters, read back without a
 * sync (gpu_norms.h). */
#include <math.h>
#include <string.h>
#include <unistd.h>
#include "../cupti/gpu.h"
#include "agent_report.h"
#include "alog.h"
#include "gpu_norms.h"
#include "report.h"

/* start(grads): per device, the norms of the .grads in float32, copied
 * to pinned memory after an event (torch's caching host allocator reuses
 * the pinned blocks once the copy is done); None while the stream
 * captures a CUDA graph (allocating pinned memory then would break the
 * user's capture).  ready(pending): None while the stream captures
 * (querying an event then would break the capture: seen on an H200,
 * docs/gpu-results.md) and until every event has completed, then the norms in the order of grads, -1 for a .grad left
 * out (a DTensor: its norm may take a collective).  A device-less run
 * (the fake driver's tests: no torch.cuda) computes them where the
 * tensors are, ready at once. */
static const char helper_py[] =
"import torch\n"
"def _norms(gs):\n"
"    f = getattr(torch, '_foreach_norm', None)\n"
"    if f is not None:\n"
"        try:\n"
"            return f(gs, 2, dtype=torch.float32)\n"
"        except TypeError:\n"
"            return [n.float() for n in f(gs)]\n"
"    return [torch.linalg.vector_norm(g, dtype=torch.float32) for g in gs]\n"
"def start(grads):\n"
"    if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():\n"
"        return None\n"
"    groups = {}\n"
"    for i, g in enumerate(grads):\n"
"        if type(g).__name__ not in ('DTensor', 'ShardedTensor'):\n"
"            groups.setdefault((g.device, g.dtype), []).append(i)\n"
"    out = [len(grads)]\n"
"    with torch.no_grad():\n"
"        for idx in groups.values():\n"
"            n = torch.stack(_norms([grads[i].detach() for i in idx]))\n"
"            if n.is_cuda:\n"
"                host = torch.empty(n.shape, dtype=n.dtype, pin_memory=True)\n"
"                host.copy_(n, non_blocking=True)\n"
"                ev = torch.cuda.Event()\n"
"                ev.record(torch.cuda.current_stream(n.device))\n"
"            else:\n"
"                host, ev = n, None\n"
"            out.append((idx, host, ev))\n"
"    return out\n"
"def ready(pending):\n"
"    if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():\n"
"        return None\n"
"    if any(ev is not None and not ev.query() for _, _, ev in pending[1:]):\n"
"        return None\n"
"    vals = [-1.0] * pending[0]\n"
"    for idx, host, _ in pending[1:]:\n"
"        for i, v in zip(idx, host.tolist()):\n"
"            vals[i] = v\n"
"    return vals\n";

struct pending {
	PyObject *obj;            /* what start() returned; NULL: free */
	uint32_t step;            /* the optimizer step it belongs to (ours) */
	uint32_t n;
	uint64_t keys[NP_GPU_NORMS_PARAMS];   /* module of each .grad */
};

static PyObject *start_fn, *ready_fn, *grads;
static uint64_t keys[NP_GPU_NORMS_PARAMS];
static uint32_t ngrads;
static struct pending pend[NP_GPU_NORMS_PENDING];   /* a ring: npend from head */
static uint32_t head, npend, steps;   /* steps: optimizer steps seen */
static int broken;             /* the helper could not be made: no norms */
uint64_t np_gpu_norms_dropped, np_gpu_norms_overflow;

static int helper(void)
{
	if (start_fn)
		return 0;
	if (broken)
		return -1;
	static const char *const names[] = { "start", "ready" };
	PyObject *fns[2];
	if (np_py_helper(helper_py, names, fns, 2)) {
		np_alog("CUDA gradient norms off: helper failed");
		broken = 1;
		return -1;
	}
	start_fn = fns[0];
	ready_fn = fns[1];
	return 0;
}

void np_gpu_norms_add(PyObject *grad, uint64_t module)
{
	if (helper())
		return;
	if (ngrads == NP_GPU_NORMS_PARAMS) {
		np_gpu_norms_overflow++;
		return;
	}
	if (!grads && !(grads = np_py.List_New(0))) {
		np_py_err_clear();
		return;
	}
	if (np_py.List_Append(grads, grad)) {
		np_py_err_clear();
		return;
	}
	keys[ngrads++] = module;
}

void np_gpu_norms_start(void)
{
	steps++;
	if (!ngrads)
		return;
	if (npend == NP_GPU_NORMS_PENDING) {   /* all in flight: give the oldest up */
		np_gpu_norms_dropped++;
		np_py.DecRef(pend[head].obj);
		pend[head].obj = NULL;
		head = (head + 1) % NP_GPU_NORMS_PENDING;
		npend--;
	}
	struct pending *p = &pend[(head + npend) % NP_GPU_NORMS_PENDING];
	/* our own launches: the launch checks leave them alone */
	np_gpu_own(1);
	PyObject *obj = np_py.Object_CallFunctionObjArgs(start_fn, grads, NULL);
	np_gpu_own(0);
	if (!obj) {
		np_py_err_clear();
		np_gpu_norms_dropped++;
	} else if (obj == np_py.None) {   /* capturing a graph: no norms this step */
		np_py.DecRef(obj);
	} else {
		p->obj = obj;
		p->step = steps;
		p->n = ngrads;
		memcpy(p->keys, keys, ngrads * sizeof(keys[0]));
		npend++;
	}
	np_py.DecRef(grads);
	grads = NULL;
	ngrads = 0;
}

/* One step's norms as statistics: a record per run of .grads of one
 * module (a module's parameters are usually next to each other). */
static void send(const struct pending *p, PyObject *vals, uint32_t lag)
{
	static struct np_arec_stat st[NP_AGENT_BULK_STATS];
	uint32_t n = 0;
	for (uint32_t i = 0; i < p->n; i++) {
		PyObject *v = np_py.List_GetItem(vals, (ptrdiff_t)i);
		double x = v ? np_py.Float_AsDouble(v) : NAN;
		if (x < 0)
			continue;   /* left out (gpu_norms.c's helper) */
		if (n && st[n - 1].module == p->keys[i]) {
			st[n - 1].grad_sumsq += x * x;
			continue;
		}
		if (n == NP_AGENT_BULK_STATS) {
			np_report_stats(st, n);
			n = 0;
		}
		st[n++] = (struct np_arec_stat){ .module = p->keys[i], .out_max = NAN, .lag = lag,
						 .grad_sumsq = x * x };
	}
	np_report_stats(st, n);
	np_py_err_clear();
}

void np_gpu_norms_poll(void)
{
	while (npend) {
		struct pending *p = &pend[head];
		/* relaxed: another thread's graph capture is not broken
		 * by the event query either (gpu.h) */
		int mode = np_gpu_capture_relaxed();
		PyObject *vals = np_py.Object_CallFunctionObjArgs(ready_fn, p->obj, NULL);
		np_gpu_capture_restore(mode);
		if (!vals) {
			np_py_err_clear();
			np_gpu_norms_dropped++;
		} else if (vals == np_py.None) {
			np_py.DecRef(vals);
			return;   /* not back yet: the next step looks again */
		} else {
			if (np_py.List_Size(vals) == (ptrdiff_t)p->n)
				send(p, vals, steps - p->step + 1);
			else
				np_gpu_norms_dropped++;
			np_py.DecRef(vals);
		}
		np_py.DecRef(p->obj);
		p->obj = NULL;
		head = (head + 1) % NP_GPU_NORMS_PENDING;
		npend--;
	}
}

uint32_t np_gpu_norms_pending(void)
{
	return npend;
}

void np_gpu_norms_give_up(void)
{
	np_gpu_norms_dropped += npend;
	np_gpu_norms_reset();
}

void np_gpu_norms_reset(void)
{
	for (uint32_t i = 0; i < NP_GPU_NORMS_PENDING; i++) {
		np_py_xdecref(pend[i].obj);
		pend[i].obj = NULL;
	}
	np_py_xdecref(grads);
	grads = NULL;
	ngrads = 0;
	head = npend = 0;
}
