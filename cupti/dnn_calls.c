/* dnn_calls.c - cuDNN's calls seen at the call, through the same import
 * slots and call bookkeeping as cuBLAS's (blas.h): the legacy batch
 * normalisation and convolution calls (dnn.h), and the backend API's
 * descriptors and executions (dnn_graph.h: torch's convolutions).
 *
 * cuDNN's types are declared here as cuDNN 9's headers declare them
 * (cudnn_ops.h, cudnn_graph.h): the toolkit need not carry cuDNN.
 */
#include <string.h>
#include "../agent/alog.h"
#include "blas.h"
#include "defer.h"
#include "dnn.h"
#include "dnn_graph.h"
#include "drain.h"
#include "gotpatch.h"

typedef int dnn_status;                 /* cudnnStatus_t, 0: success */
typedef void *dnn_handle, *dnn_desc;    /* cudnnHandle_t, cudnnTensorDescriptor_t, ... */

static struct {
	dnn_status (*fwd_train)(dnn_handle, int, int, const void *, const void *, dnn_desc,
				const void *, dnn_desc, const void *, dnn_desc, void *, dnn_desc,
				const void *, const void *, double, void *, void *, double, void *,
				void *, dnn_desc, void *, size_t, void *, size_t);
	dnn_status (*fwd_infer)(dnn_handle, int, const void *, const void *, dnn_desc,
				const void *, dnn_desc, void *, dnn_desc, const void *,
				const void *, const void *, const void *, double);
	dnn_status (*bwd)(dnn_handle, int, int, const void *, const void *, const void *,
			  const void *, dnn_desc, const void *, dnn_desc, const void *, dnn_desc,
			  const void *, dnn_desc, void *, dnn_desc, void *, dnn_desc, const void *,
			  const void *, void *, void *, double, const void *, const void *, dnn_desc,
			  void *, size_t, void *, size_t);
	dnn_status (*be_create)(int, dnn_desc *);
	dnn_status (*be_destroy)(dnn_desc);
	dnn_status (*be_set)(dnn_desc, int, int, int64_t, const void *);
	dnn_status (*be_get)(dnn_desc, int, int, int64_t, int64_t *, void *);
	dnn_status (*be_execute)(dnn_handle, dnn_desc, dnn_desc);
	dnn_status (*conv_fwd)(dnn_handle, const void *, dnn_desc, const void *, dnn_desc,
			       const void *, dnn_desc, int, void *, size_t, const void *, dnn_desc,
			       void *);
	dnn_status (*conv_bias_act)(dnn_handle, const void *, dnn_desc, const void *, dnn_desc,
				    const void *, dnn_desc, int, void *, size_t, const void *,
				    dnn_desc, const void *, dnn_desc, const void *, dnn_desc,
				    dnn_desc, void *);
	dnn_status (*conv_bwd_data)(dnn_handle, const void *, dnn_desc, const void *, dnn_desc,
				    const void *, dnn_desc, int, void *, size_t, const void *,
				    dnn_desc, void *);
	dnn_status (*conv_bwd_filter)(dnn_handle, const void *, dnn_desc, const void *, dnn_desc,
				      const void *, dnn_desc, int, void *, size_t, const void *,
				      dnn_desc, void *);
	dnn_status (*get_nd)(dnn_desc, int, int *, int *, int *, int *);
	dnn_status (*get_filter)(dnn_desc, int, int *, int *, int *, int *);
} real;

/* dims, strides and type of a tensor descriptor; -1 when not asked */
static int described(dnn_desc d, int *nb, int *dims, int *strides, int *dtype)
{
	*nb = 0;
	if (!d || !real.get_nd || real.get_nd(d, NP_DNN_MAX_DIMS, dtype, nb, dims, strides) != 0)
		return -1;
	return *nb >= 1 && *nb <= NP_DNN_MAX_DIMS ? 0 : -1;
}

/* ---- what a call writes besides its plan's outputs, for deferred
 * checks (blas.h: np_blas_writes_besides): its workspace, a batch
 * norm's statistics.  Only while checks are deferred: otherwise nothing
 * asks, and the wrappers stay a few stores. ---- */

/* bytes of the dense tensor d describes, 0 when not known */
static uint64_t dense_bytes(dnn_desc d)
{
	int nb, dims[NP_DNN_MAX_DIMS], strides[NP_DNN_MAX_DIMS], dtype;
	if (described(d, &nb, dims, strides, &dtype))
		return 0;
	int t = np_dnn_dtype(dtype);
	return t < 0 ? 0 : np_dnn_dense_numel(nb, dims, strides) * np_dtype_size((enum np_dtype)t);
}

/* a batch norm call's per-channel tensors (pd: their descriptor; the
 * running and saved statistics, dscale and dbias), another tensor of
 * zd's (dz), the workspace and reserve space; nothing said when a tensor
 * is given but its size is not known.  Those not given are empty ranges,
 * which np_blas_writes_besides leaves out. */
static void bn_writes(dnn_desc pd, void *const per_channel[4], dnn_desc zd, void *z,
		      void *ws, size_t ws_size, void *reserve, size_t reserve_size)
{
	uint64_t pb = dense_bytes(pd), zb = z ? dense_bytes(zd) : 0;
	const void *at[7] = { per_channel[0], per_channel[1], per_channel[2], per_channel[3], z,
			      ws, reserve };
	const uint64_t bytes[7] = { pb, pb, pb, pb, zb, ws_size, reserve_size };
	uint64_t lo[7], hi[7];
	for (int i = 0; i < 7; i++) {
		if (at[i] && !bytes[i] && i < 5)   /* a tensor of unknown size */
			return;
		lo[i] = (uintptr_t)at[i];
		hi[i] = at[i] ? lo[i] + bytes[i] : 0;
	}
	np_blas_writes_besides(lo, hi, 7);
}

/* a convolution's workspace */
static void ws_writes(void *ws, size_t ws_size)
{
	uint64_t lo = (uintptr_t)ws, hi = ws ? (uintptr_t)ws + ws_size : 0;
	np_blas_writes_besides(&lo, &hi, 1);
}

/* The plan of y = bn(x): NULL when not plannable (the call's kernels
 * then go to the generic tier).  beta (host memory: a float, a double
 * for double data) other than 0 blends y's old values in: read. */
static const struct np_gemm_plan *plan_of(dnn_desc xd, const void *x, dnn_desc yd, void *y,
					  const void *beta, const void *p0, const void *p1,
					  const void *p2, const void *p3, struct np_gemm_plan *p)
{
	struct np_dnn_bn c = { .x = (uintptr_t)x, .y = (uintptr_t)y,
			       .params = { (uintptr_t)p0, (uintptr_t)p1, (uintptr_t)p2,
					   (uintptr_t)p3 } };
	int nx, ny, xdims[NP_DNN_MAX_DIMS];
	if (!np_blas_idle() || described(xd, &nx, xdims, c.x_strides, &c.x_dtype) ||
	    described(yd, &ny, c.dims, c.y_strides, &c.y_dtype) || nx != ny ||
	    memcmp(xdims, c.dims, (size_t)ny * sizeof(int)) != 0)
		return NULL;
	c.nb = ny;
	if (np_dnn_bn_plan(&c, p))
		return NULL;
	if (beta && !np_gemm_scalar_zero(beta, np_dnn_dtype(c.y_dtype) == NP_DT_F64 ? 8 : 4) &&
	    p->out.n_in < NP_KD_BUF_INPUTS)
		p->out.in[p->out.n_in++] = c.y;
	return p;
}

static dnn_status w_fwd_train(dnn_handle h, int mode, int ops, const void *alpha,
			      const void *beta, dnn_desc xd, const void *x, dnn_desc zd,
			      const void *z, dnn_desc yd, void *y, dnn_desc pd, const void *scale,
			      const void *bias, double factor, void *run_mean, void *run_var,
			      double eps, void *save_mean, void *save_invvar, dnn_desc act,
			      void *ws, size_t ws_size, void *reserve, size_t reserve_size)
{
	struct np_gemm_plan p;
	/* z (an added residual) is read too, as the params are */
	if (np_blas_begin_plan(plan_of(xd, x, yd, y, beta, scale, bias, z, NULL, &p)) &&
	    np_defer_window())
		bn_writes(pd, (void *const[4]){ run_mean, run_var, save_mean, save_invvar }, NULL,
			  NULL, ws, ws_size, reserve, reserve_size);
	return np_blas_end(real.fwd_train(h, mode, ops, alpha, beta, xd, x, zd, z, yd, y, pd,
					  scale, bias, factor, run_mean, run_var, eps, save_mean,
					  save_invvar, act, ws, ws_size, reserve, reserve_size));
}

static dnn_status w_fwd_infer(dnn_handle h, int mode, const void *alpha, const void *beta,
			      dnn_desc xd, const void *x, dnn_desc yd, void *y, dnn_desc pd,
			      const void *scale, const void *bias, const void *mean,
			      const void *var, double eps)
{
	struct np_gemm_plan p;
	if (np_blas_begin_plan(plan_of(xd, x, yd, y, beta, scale, bias, mean, var, &p)) &&
	    np_defer_window())
		np_blas_writes_besides(NULL, NULL, 0);   /* y alone */
	return np_blas_end(real.fwd_infer(h, mode, alpha, beta, xd, x, yd, y, pd, scale, bias,
					  mean, var, eps));
}

/* dx from dy, x and the saved statistics (dscale and dbias, written
 * too, are left to the generic tier) */
static dnn_status w_bwd(dnn_handle h, int mode, int ops, const void *a_data,
			const void *b_data, const void *a_param, const void *b_param, dnn_desc xd,
			const void *x, dnn_desc yd, const void *y, dnn_desc dyd, const void *dy,
			dnn_desc dzd, void *dz, dnn_desc dxd, void *dx, dnn_desc pd,
			const void *scale, const void *bias, void *dscale, void *dbias, double eps,
			const void *save_mean, const void *save_invvar, dnn_desc act, void *ws,
			size_t ws_size, void *reserve, size_t reserve_size)
{
	struct np_gemm_plan p;
	const struct np_gemm_plan *pp = plan_of(dyd, dy, dxd, dx, b_data, x, scale, save_mean,
						save_invvar, &p);
	if (np_blas_begin_plan(pp) && np_defer_window())
		bn_writes(pd, (void *const[4]){ dscale, dbias }, dzd, dz, ws, ws_size, reserve,
			  reserve_size);
	return np_blas_end(real.bwd(h, mode, ops, a_data, b_data, a_param, b_param, xd, x, yd, y,
				    dyd, dy, dzd, dz, dxd, dx, pd, scale, bias, dscale, dbias, eps,
				    save_mean, save_invvar, act, ws, ws_size, reserve,
				    reserve_size));
}

/* ---- legacy convolutions (torch's Conv_v7.cpp) ---- */

/* a tensor operand from its descriptor; -1 when it cannot be asked */
static int tensor_operand(dnn_desc d, const void *ptr, struct np_dnn_operand *o)
{
	o->ptr = (uintptr_t)ptr;
	o->packed = 0;
	return described(d, &o->nb, o->dims, o->strides, &o->dtype);
}

/* a filter operand: dims and type; packed by its format */
static int filter_operand(dnn_desc d, const void *ptr, struct np_dnn_operand *o)
{
	int format;
	o->ptr = (uintptr_t)ptr;
	o->packed = 1;
	o->nb = 0;
	if (!d || !real.get_filter ||
	    real.get_filter(d, NP_DNN_MAX_DIMS, &o->dtype, &format, &o->nb, o->dims) != 0)
		return -1;
	return o->nb >= 1 && o->nb <= NP_DNN_MAX_DIMS ? 0 : -1;
}

/* The plan of a convolution call whose operands were read (ok), beta
 * in host memory (a double for double data); NULL when not plannable. */
static const struct np_gemm_plan *conv_plan(int ok, struct np_dnn_conv *c, const void *beta,
					    struct np_gemm_plan *p)
{
	if (!ok)
		return NULL;
	c->beta_set = beta && !np_gemm_scalar_zero(beta, np_dnn_dtype(c->out.dtype) == NP_DT_F64
								 ? 8 : 4);
	return np_dnn_conv_plan(c, p) == 0 ? p : NULL;
}

static dnn_status w_conv_fwd(dnn_handle h, const void *alpha, dnn_desc xd, const void *x,
			     dnn_desc wd, const void *w, dnn_desc conv, int algo, void *ws,
			     size_t ws_size, const void *beta, dnn_desc yd, void *y)
{
	struct np_dnn_conv c = { 0 };
	struct np_gemm_plan p;
	int ok = np_blas_idle() && !tensor_operand(yd, y, &c.out) &&
		 !tensor_operand(xd, x, &c.in[0]) && !filter_operand(wd, w, &c.in[1]);
	if (np_blas_begin_plan(conv_plan(ok, &c, beta, &p)) && np_defer_window())
		ws_writes(ws, ws_size);
	return np_blas_end(real.conv_fwd(h, alpha, xd, x, wd, w, conv, algo, ws, ws_size, beta,
					 yd, y));
}

/* y = act(alpha1 conv(x) + alpha2 z + bias): z and the bias judged on */
static dnn_status w_conv_bias_act(dnn_handle h, const void *alpha1, dnn_desc xd, const void *x,
				  dnn_desc wd, const void *w, dnn_desc conv, int algo, void *ws,
				  size_t ws_size, const void *alpha2, dnn_desc zd, const void *z,
				  dnn_desc bd, const void *bias, dnn_desc act, dnn_desc yd,
				  void *y)
{
	struct np_dnn_conv c = { .extra = { (uintptr_t)z, (uintptr_t)bias } };
	struct np_gemm_plan p;
	int ok = np_blas_idle() && !tensor_operand(yd, y, &c.out) &&
		 !tensor_operand(xd, x, &c.in[0]) && !filter_operand(wd, w, &c.in[1]);
	if (np_blas_begin_plan(conv_plan(ok, &c, NULL, &p)) && np_defer_window())
		ws_writes(ws, ws_size);
	return np_blas_end(real.conv_bias_act(h, alpha1, xd, x, wd, w, conv, algo, ws, ws_size,
					      alpha2, zd, z, bd, bias, act, yd, y));
}

static dnn_status w_conv_bwd_data(dnn_handle h, const void *alpha, dnn_desc wd, const void *w,
				  dnn_desc dyd, const void *dy, dnn_desc conv, int algo, void *ws,
				  size_t ws_size, const void *beta, dnn_desc dxd, void *dx)
{
	struct np_dnn_conv c = { 0 };
	struct np_gemm_plan p;
	int ok = np_blas_idle() && !tensor_operand(dxd, dx, &c.out) &&
		 !tensor_operand(dyd, dy, &c.in[0]) && !filter_operand(wd, w, &c.in[1]);
	if (np_blas_begin_plan(conv_plan(ok, &c, beta, &p)) && np_defer_window())
		ws_writes(ws, ws_size);
	return np_blas_end(real.conv_bwd_data(h, alpha, wd, w, dyd, dy, conv, algo, ws, ws_size,
					      beta, dxd, dx));
}

static dnn_status w_conv_bwd_filter(dnn_handle h, const void *alpha, dnn_desc xd, const void *x,
				    dnn_desc dyd, const void *dy, dnn_desc conv, int algo,
				    void *ws, size_t ws_size, const void *beta, dnn_desc dwd,
				    void *dw)
{
	struct np_dnn_conv c = { 0 };
	struct np_gemm_plan p;
	int ok = np_blas_idle() && !filter_operand(dwd, dw, &c.out) &&
		 !tensor_operand(xd, x, &c.in[0]) && !tensor_operand(dyd, dy, &c.in[1]);
	if (np_blas_begin_plan(conv_plan(ok, &c, beta, &p)) && np_defer_window())
		ws_writes(ws, ws_size);
	return np_blas_end(real.conv_bwd_filter(h, alpha, xd, x, dyd, dy, conv, algo, ws,
						ws_size, beta, dwd, dw));
}

/* ---- the backend API: descriptors remembered as they are built ---- */

/* These run whether or not checks are on: a plan built while they were
 * off (or before nanprof attached again) is executed later. */
static dnn_status w_be_create(int type, dnn_desc *d)
{
	dnn_status r = real.be_create(type, d);
	if (r == 0 && d && np_dg_created(*d, type))
		__atomic_add_fetch(&np_gpu_cnt.table_full, 1, __ATOMIC_RELAXED);
	return r;
}

static dnn_status w_be_destroy(dnn_desc d)
{
	np_dg_destroyed(d);   /* first: the address may be reused at once */
	return real.be_destroy(d);
}

static dnn_status w_be_set(dnn_desc d, int attr, int atype, int64_t n, const void *v)
{
	dnn_status r = real.be_set(d, attr, atype, n, v);
	if (r == 0)
		np_dg_set(d, attr, atype, n, v);
	return r;
}

/* heuristics' engine configs arrive by a get, not a set */
static dnn_status w_be_get(dnn_desc d, int attr, int atype, int64_t want, int64_t *got,
			   void *v)
{
	dnn_status r = real.be_get(d, attr, atype, want, got, v);
	if (r == 0 && attr == NP_DGA_HEUR_RESULTS && atype == NP_DGT_BACKEND_DESCRIPTOR && got)
		np_dg_results(d, (void *const *)v, *got < want ? *got : want);
	return r;
}

/* says once (NANPROF_AGENT_DEBUG=1) whether executions are planned, with
 * one output (a convolution) and with several (attention), or, once for
 * each reason, why not, and whether its variant pack's addresses were
 * noted: the GPU check reads it */
static void tell(int planned, int noted, const struct np_gemm_plan *p,
		 const struct np_dg_why *why)
{
	static int told[2 + NP_DGW_MAX];
	int kind = planned ? (p->n_more ? 1 : 0) : 2 + (int)why->reason;
	char text[96];
	/* read first: every execution comes here, from any thread */
	if ((unsigned)kind >= sizeof(told) / sizeof(told[0]) ||
	    __atomic_load_n(&told[kind], __ATOMIC_RELAXED) ||
	    __atomic_exchange_n(&told[kind], 1, __ATOMIC_RELAXED))
		return;
	if (kind == 0)
		np_alog("cuDNN: a graph execution's output (%llu elements) checked at the call",
			(unsigned long long)p->out.numel);
	else if (kind == 1)
		np_alog("cuDNN: a graph execution's outputs (%d, the first of %llu elements) "
			"checked at the call", 1 + p->n_more, (unsigned long long)p->out.numel);
	else
		np_alog("cuDNN: a graph execution left to the generic tier: %s%s",
			np_dg_why_text(why, text, sizeof(text)),
			noted ? "; its variant pack's addresses noted" : "");
}

/* a planned execution's workspace: the pack's address, the plan's size
 * (cuDNN keeps it; torch asks it when it builds the plan) */
static void graph_writes(dnn_desc plan, dnn_desc pack)
{
	uint64_t ws;
	int64_t size = 0, got = 0;
	if (np_dg_pack_workspace(pack, &ws))
		return;
	if (ws && (!real.be_get || real.be_get(plan, NP_DGA_PLAN_WORKSPACE_SIZE, NP_DGT_INT64, 1,
					       &got, &size) != 0 || got != 1 || size < 0))
		return;
	uint64_t hi = ws ? ws + (uint64_t)size : 0;
	np_blas_writes_besides(&ws, &hi, 1);
}

static dnn_status w_be_execute(dnn_handle h, dnn_desc plan, dnn_desc pack)
{
	struct np_gemm_plan p;
	struct np_dg_why why;
	int idle = np_blas_idle();
	int planned = idle && np_dg_plan_why(plan, pack, &p, &why) == 0;
	/* not planned: the variant pack's addresses for the generic tier,
	 * which the kernels' opaque parameters may not show it */
	int noted = idle && !planned && np_dg_plan_noted(plan, pack, &p) == 0;
	if (idle)
		tell(planned, noted, &p, &why);
	if (np_blas_begin_plan(planned || noted ? &p : NULL) && planned && np_defer_window())
		graph_writes(plan, pack);
	return np_blas_end(real.be_execute(h, plan, pack));
}

const struct np_libcall np_dnn_wrapped[NP_DNN_WRAPPED] = {
	{ "libcudnn.so", "cudnnBatchNormalizationForwardTrainingEx", (void *)w_fwd_train,
	  (void **)&real.fwd_train },
	{ "libcudnn.so", "cudnnBatchNormalizationForwardInference", (void *)w_fwd_infer,
	  (void **)&real.fwd_infer },
	{ "libcudnn.so", "cudnnBatchNormalizationBackwardEx", (void *)w_bwd, (void **)&real.bwd },
	{ "libcudnn.so", "cudnnConvolutionForward", (void *)w_conv_fwd, (void **)&real.conv_fwd },
	{ "libcudnn.so", "cudnnConvolutionBiasActivationForward", (void *)w_conv_bias_act,
	  (void **)&real.conv_bias_act },
	{ "libcudnn.so", "cudnnConvolutionBackwardData", (void *)w_conv_bwd_data,
	  (void **)&real.conv_bwd_data },
	{ "libcudnn.so", "cudnnConvolutionBackwardFilter", (void *)w_conv_bwd_filter,
	  (void **)&real.conv_bwd_filter },
	{ "libcudnn.so", "cudnnBackendExecute", (void *)w_be_execute,
	  (void **)&real.be_execute },
};

/* the descriptors' bookkeeping, wrapped from cuDNN's load on (blas.h) */
const struct np_libcall np_dnn_trackers[NP_DNN_TRACKERS] = {
	{ "libcudnn.so", "cudnnBackendCreateDescriptor", (void *)w_be_create,
	  (void **)&real.be_create },
	{ "libcudnn.so", "cudnnBackendDestroyDescriptor", (void *)w_be_destroy,
	  (void **)&real.be_destroy },
	{ "libcudnn.so", "cudnnBackendSetAttribute", (void *)w_be_set, (void **)&real.be_set },
	{ "libcudnn.so", "cudnnBackendGetAttribute", (void *)w_be_get, (void **)&real.be_get },
};

void np_dnn_prepare(void)
{
	/* before any slot points at a wrapper: a wrapper may run at once */
	if (!real.get_nd)
		real.get_nd = np_got_lookup("libcudnn.so", "cudnnGetTensorNdDescriptor");
	if (!real.get_filter)
		real.get_filter = np_got_lookup("libcudnn.so", "cudnnGetFilterNdDescriptor");
}
