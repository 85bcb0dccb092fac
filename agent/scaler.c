/* scaler.c - GradScaler verdicts, read back without a sync (scaler.h). */
#include <math.h>
#include <string.h>
#include <time.h>
#include "../cupti/gpu.h"
#include "agent_report.h"
#include "alog.h"
#include "report.h"
#include "scaler.h"

/* found_inf(scaler): the iteration's verdict, from the scaler's
 * per-optimizer found_inf flags (update() forgets them) and the scale the
 * iteration used (update() changes it): [found, scale] at once on the
 * CPU; on CUDA (host, event), both copied to pinned memory after an
 * event; None when there is nothing to say (no step() this iteration, or
 * a CUDA graph capturing: no pinned memory then).  ready(p): the pair,
 * or None while the copy is still out or the stream captures (an event
 * query would break the capture). */
static const char helper_py[] =
"import torch\n"
"def found_inf(scaler):\n"
"    fs = [v for st in getattr(scaler, '_per_optimizer_states', {}).values()\n"
"          for v in st.get('found_inf_per_device', {}).values()]\n"
"    scale = getattr(scaler, '_scale', None)\n"
"    if not fs or scale is None:\n"
"        return None\n"
"    if all(v.device.type == 'cpu' for v in fs + [scale]):\n"
"        return [float(sum(float(v) for v in fs)), float(scale)]\n"
"    if torch.cuda.is_current_stream_capturing():\n"
"        return None\n"
"    dev = scale.device\n"
"    with torch.no_grad():\n"
"        s = torch.stack([v.to(dev, non_blocking=True).float().reshape(()) for v in fs]).sum()\n"
"        both = torch.stack([s, scale.float().reshape(())])\n"
"        host = torch.empty(2, dtype=both.dtype, pin_memory=True)\n"
"        host.copy_(both, non_blocking=True)\n"
"        ev = torch.cuda.Event()\n"
"        ev.record(torch.cuda.current_stream(dev))\n"
"    return (host, ev)\n"
"def ready(p):\n"
"    if isinstance(p, list):\n"
"        return p\n"
"    if torch.cuda.is_current_stream_capturing():\n"
"        return None\n"
"    host, ev = p\n"
"    return host.tolist() if ev.query() else None\n";

struct pending {
	PyObject *obj;           /* what found_inf() returned; NULL: free */
	uint64_t iter, t_scale, t_update;
};

static PyObject *found_fn, *ready_fn;
static int broken;               /* the helper could not be made */
static struct pending pend[NP_SCALER_PENDING];   /* a ring: npend from head */
static uint32_t head, npend;
static uint64_t iters, t_scale;  /* t_scale 0: no scaled part open */
static uintptr_t scaled_loss;    /* identity only: never dereferenced */
static int announced;
uint64_t np_scaler_dropped;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int helper(void)
{
	if (found_fn)
		return 0;
	if (broken)
		return -1;
	static const char *const names[] = { "found_inf", "ready" };
	PyObject *fns[2];
	if (np_py_helper(helper_py, names, fns, 2)) {
		np_alog("GradScaler verdicts off: helper failed");
		broken = 1;
		return -1;
	}
	found_fn = fns[0];
	ready_fn = fns[1];
	return 0;
}

/* verdict: 0 the step ran, 1 skipped (inf/NaN gradients), 2 not known;
 * scale: the loss scale the iteration used (0: not known) */
static void send_verdict(uint64_t iter, uint64_t t0, uint64_t t1, uint32_t verdict,
			 double scale)
{
	struct np_agent_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = NP_AREC_STATUS;
	r.status = NP_AST_SCALER_VERDICT;
	r.scl.iter = iter;
	r.scl.t_scale = t0;
	r.scl.t_update = t1;
	r.scl.verdict = verdict;
	r.scl.scale = scale;
	np_report_send(&r);
}

void np_scaler_scale(PyObject *scaled)
{
	if (!announced) {   /* nanprof holds gradients back from now on */
		np_report_status(NP_AST_SCALER_ON, "GradScaler");
		announced = 1;
	}
	/* the iteration's first scale() opens it: the micro-batches of
	 * gradient accumulation (and a subclass's scale() calling its
	 * base's) share one update() */
	if (!t_scale) {
		np_scaler_poll();
		iters++;
		t_scale = now_ns();
	}
	scaled_loss = (uintptr_t)scaled;
}

int np_scaler_is_scaled_loss(PyObject *root)
{
	int is = scaled_loss && (uintptr_t)root == scaled_loss;
	scaled_loss = 0;   /* an address may be reused: one backward only */
	return is;
}

void np_scaler_update(PyObject *scaler)
{
	if (!t_scale)
		return;   /* no scale() this iteration (or before the attach) */
	uint64_t t0 = t_scale, t1 = now_ns();
	t_scale = 0;
	if (helper()) {
		send_verdict(iters, t0, t1, 2, 0);
		return;
	}
	np_gpu_own(1);   /* our own launches: the launch checks leave them alone */
	PyObject *obj = np_py.Object_CallFunctionObjArgs(found_fn, scaler, NULL);
	np_gpu_own(0);
	if (!obj || obj == np_py.None) {   /* a Python error, or nothing to say */
		if (!obj) {
			np_py_err_clear();
			np_scaler_dropped++;
		}
		np_py_xdecref(obj);
		send_verdict(iters, t0, t1, 2, 0);
		return;
	}
	if (npend == NP_SCALER_PENDING) {   /* all in flight: give the oldest up */
		np_scaler_dropped++;
		send_verdict(pend[head].iter, pend[head].t_scale, pend[head].t_update, 2, 0);
		np_py.DecRef(pend[head].obj);
		pend[head].obj = NULL;
		head = (head + 1) % NP_SCALER_PENDING;
		npend--;
	}
	pend[(head + npend) % NP_SCALER_PENDING] =
		(struct pending){ .obj = obj, .iter = iters, .t_scale = t0, .t_update = t1 };
	npend++;
	np_scaler_poll();   /* on the CPU: at once */
}

uint32_t np_scaler_poll(void)
{
	while (npend) {
		struct pending *p = &pend[head];
		int mode = np_gpu_capture_relaxed();   /* as gpu_norms.c */
		PyObject *v = np_py.Object_CallFunctionObjArgs(ready_fn, p->obj, NULL);
		np_gpu_capture_restore(mode);
		if (!v) {
			np_py_err_clear();
			np_scaler_dropped++;
			send_verdict(p->iter, p->t_scale, p->t_update, 2, 0);
		} else if (v == np_py.None) {
			np_py.DecRef(v);
			return npend;   /* not back yet: asked again later */
		} else {
			PyObject *f = np_py.List_GetItem(v, 0), *sc = np_py.List_GetItem(v, 1);
			double found = f ? np_py.Float_AsDouble(f) : NAN;
			double scale = sc ? np_py.Float_AsDouble(sc) : 0;
			np_py.DecRef(v);
			np_py_err_clear();
			send_verdict(p->iter, p->t_scale, p->t_update,
				     found > 0 ? 1 : found == 0 ? 0 : 2, scale > 0 ? scale : 0);
		}
		np_py.DecRef(p->obj);
		p->obj = NULL;
		head = (head + 1) % NP_SCALER_PENDING;
		npend--;
	}
	return 0;
}

void np_scaler_give_up(void)
{
	np_scaler_dropped += npend;
	while (npend) {   /* nanprof then reports what it held back */
		struct pending *p = &pend[head];
		send_verdict(p->iter, p->t_scale, p->t_update, 2, 0);
		np_py_xdecref(p->obj);
		p->obj = NULL;
		head = (head + 1) % NP_SCALER_PENDING;
		npend--;
	}
}

void np_scaler_reset(void)
{
	for (uint32_t i = 0; i < NP_SCALER_PENDING; i++) {
		np_py_xdecref(pend[i].obj);
		pend[i].obj = NULL;
	}
	head = npend = 0;
	t_scale = 0;
	scaled_loss = 0;
	announced = 0;
}
