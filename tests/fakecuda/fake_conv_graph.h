/* fake_conv_graph.h - a convolution graph built and executed through the
 * fake cuDNN's backend API (fake_cudnn.h) as torch's Conv_v8.cpp does
 * through cudnn_frontend, for the fake job (fake_ops.c) and the launch
 * benchmark (bench/bench_launch.c).  Static functions: each object that
 * includes it calls cuDNN through its own imports, as libtorch_cuda.so
 * does, which is where the agent sees the calls. */
#ifndef NP_FAKE_CONV_GRAPH_H
#define NP_FAKE_CONV_GRAPH_H

#include <stdint.h>
#include <stdio.h>
#include "fake_cudnn.h"

static int fcg_failed;   /* a call failed (said once on stderr) */

static void fcg(cudnnStatus_t st, const char *what)
{
	if (st != CUDNN_STATUS_SUCCESS && !fcg_failed) {
		fprintf(stderr, "fake cuDNN graph: %s failed (%d)\n", what, st);
		fcg_failed = 1;
	}
}

static cudnnBackendDescriptor_t fcg_create(int type)
{
	cudnnBackendDescriptor_t d = NULL;
	fcg(cudnnBackendCreateDescriptor(type, &d), "create");
	return d;
}

static void fcg_ref(cudnnBackendDescriptor_t d, int name, cudnnBackendDescriptor_t ref)
{
	fcg(cudnnBackendSetAttribute(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &ref), "set");
}

static cudnnBackendDescriptor_t fcg_tensor_v(int64_t uid, const int64_t *dims, int virt);

/* a finalized NCHW float tensor descriptor, as cudnn_frontend's
 * TensorBuilder makes one (torch: Conv_v8.cpp's getTensorDescriptor) */
static cudnnBackendDescriptor_t fcg_tensor(int64_t uid, const int64_t *dims)
{
	return fcg_tensor_v(uid, dims, 0);
}

/* ... or a virtual one: a graph's intermediate, never in memory */
static cudnnBackendDescriptor_t fcg_tensor_v(int64_t uid, const int64_t *dims, int virt)
{
	cudnnBackendDescriptor_t t = fcg_create(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
	int64_t strides[4] = { dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1 };
	int64_t align = 16;
	int dtype = CUDNN_DATA_FLOAT;
	fcg(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1,
				     &dtype), "set");
	fcg(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims),
	    "set");
	fcg(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides),
	    "set");
	fcg(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid),
	    "set");
	fcg(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1,
				     &align), "set");
	if (virt) {
		_Bool yes = 1;
		fcg(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1,
					     &yes), "set");
	}
	fcg(cudnnBackendFinalize(t), "finalize");
	return t;
}

/* the plan of a graph of ops[0..n), as cudnn_frontend makes it: the
 * graph, heuristics' engine config, the plan (what it made besides the
 * plan in *graph, *heur, *cfg, for the caller to destroy) */
static cudnnBackendDescriptor_t fcg_plan_of(cudnnHandle_t dnn, cudnnBackendDescriptor_t *ops,
					    int n, cudnnBackendDescriptor_t *graph_out,
					    cudnnBackendDescriptor_t *heur_out,
					    cudnnBackendDescriptor_t *cfg_out)
{
	cudnnBackendDescriptor_t graph = fcg_create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
	fcg(cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1,
				     &dnn), "set");
	fcg(cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
				     CUDNN_TYPE_BACKEND_DESCRIPTOR, n, ops), "set");
	fcg(cudnnBackendFinalize(graph), "finalize");
	cudnnBackendDescriptor_t heur = fcg_create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
	int mode = CUDNN_HEUR_MODE_INSTANT;
	fcg_ref(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
	fcg(cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1,
				     &mode), "set");
	fcg(cudnnBackendFinalize(heur), "finalize");
	cudnnBackendDescriptor_t cfg = fcg_create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
	int64_t got = 0;
	fcg(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
				     CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &cfg), "heuristics");

	cudnnBackendDescriptor_t plan = fcg_create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
	fcg_ref(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg);
	fcg(cudnnBackendFinalize(plan), "finalize plan");
	*graph_out = graph;
	*heur_out = heur;
	*cfg_out = cfg;
	return plan;
}

/* The plan of y = conv(x, w), x and y of dims xd (one channel), w one
 * weight, built once as torch builds and caches one per shape: tensors
 * 'x', 'w' and 'y', the operation, its graph, heuristics' engine config,
 * the plan.  Everything but the plan is then destroyed, as
 * cudnn_frontend's builders let go of theirs.  NULL when a call failed. */
static cudnnBackendDescriptor_t fcg_conv_plan(cudnnHandle_t dnn, const int64_t xd[4])
{
	static const int64_t wd[4] = { 1, 1, 1, 1 };
	cudnnBackendDescriptor_t x = fcg_tensor('x', xd), w = fcg_tensor('w', wd),
				 y = fcg_tensor('y', xd);
	cudnnBackendDescriptor_t conv = fcg_create(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
	int64_t spatial = 2;
	int comp = CUDNN_DATA_FLOAT;
	fcg(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64,
				     1, &spatial), "set");
	fcg(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE,
				     1, &comp), "set");
	fcg(cudnnBackendFinalize(conv), "finalize");

	cudnnBackendDescriptor_t op =
		fcg_create(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
	float one = 1.0f, zero = 0.0f;
	fcg_ref(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x);
	fcg_ref(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w);
	fcg_ref(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y);
	fcg_ref(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv);
	fcg(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
				     CUDNN_TYPE_FLOAT, 1, &one), "set");
	fcg(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA,
				     CUDNN_TYPE_FLOAT, 1, &zero), "set");
	fcg(cudnnBackendFinalize(op), "finalize");

	cudnnBackendDescriptor_t graph, heur, cfg;
	cudnnBackendDescriptor_t plan = fcg_plan_of(dnn, &op, 1, &graph, &heur, &cfg);
	cudnnBackendDescriptor_t done[] = { x, w, y, conv, op, graph, heur, cfg };
	for (unsigned i = 0; i < sizeof(done) / sizeof(done[0]); i++)
		fcg(cudnnBackendDestroyDescriptor(done[i]), "destroy");
	return fcg_failed ? NULL : plan;
}

/* one execution of a plan: a variant pack of uids[k] at ptrs[k] and the
 * workspace ws (NULL: none) built, executed, destroyed.  0, or -1 when a
 * call failed. */
static int fcg_run_ws(cudnnHandle_t dnn, cudnnBackendDescriptor_t plan, int n,
		      const int64_t *uids, void *const *ptrs, void *ws)
{
	cudnnBackendDescriptor_t pack = fcg_create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
	fcg(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR,
				     1, &ws), "set");
	fcg(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
				     CUDNN_TYPE_VOID_PTR, n, ptrs), "set");
	fcg(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n,
				     uids), "set");
	fcg(cudnnBackendFinalize(pack), "finalize");
	fcg(cudnnBackendExecute(dnn, plan, pack), "execute");
	fcg(cudnnBackendDestroyDescriptor(pack), "destroy");
	return fcg_failed ? -1 : 0;
}

__attribute__((unused)) static int fcg_run(cudnnHandle_t dnn, cudnnBackendDescriptor_t plan,
					   int n, const int64_t *uids, void *const *ptrs)
{
	return fcg_run_ws(dnn, plan, n, uids, ptrs, NULL);
}

/* one execution of the convolution's plan, as Conv_v8.cpp's
 * run_conv_plan makes it: a variant pack of 'x', 'y' and 'w', and a
 * workspace from torch's caching allocator (ws; NULL: none) */
__attribute__((unused)) static int fcg_conv_run_ws(cudnnHandle_t dnn,
						   cudnnBackendDescriptor_t plan, void *in,
						   void *out, void *w, void *ws)
{
	void *ptrs[3] = { in, out, w };
	static const int64_t uids[3] = { 'x', 'y', 'w' };
	return fcg_run_ws(dnn, plan, 3, uids, ptrs, ws);
}

__attribute__((unused)) static int fcg_conv_run(cudnnHandle_t dnn, cudnnBackendDescriptor_t plan,
						void *in, void *out, void *w)
{
	return fcg_conv_run_ws(dnn, plan, in, out, w, NULL);
}

/* The plan of attention's forward as cudnn_frontend lowers SDPA for
 * training, cut to its shape: S = matmul(q, k) (virtual), the softmax's
 * statistics a pointwise of S (non-virtual: kept for the backward),
 * o = matmul(S, v); two outputs, the statistics first.  Or, unified,
 * cuDNN 9.13's one SDPA operation of q, k, v, O and the statistics.
 * q, k, v and o of dims d, the statistics of dims sd.  NULL when a call
 * failed. */
__attribute__((unused)) static cudnnBackendDescriptor_t
fcg_attn_plan(cudnnHandle_t dnn, const int64_t d[4], const int64_t sd[4], int unified)
{
	cudnnBackendDescriptor_t q = fcg_tensor('q', d), k = fcg_tensor('k', d),
				 v = fcg_tensor('v', d), o = fcg_tensor('o', d),
				 st = fcg_tensor('s', sd), s = fcg_tensor_v('S', d, 1);
	if (unified) {
		cudnnBackendDescriptor_t op =
			fcg_create(CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR);
		fcg_ref(op, CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, q);
		fcg_ref(op, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC, k);
		fcg_ref(op, CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, v);
		fcg_ref(op, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, o);
		fcg_ref(op, CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC, st);
		fcg(cudnnBackendFinalize(op), "finalize");
		cudnnBackendDescriptor_t graph, heur, cfg;
		cudnnBackendDescriptor_t plan = fcg_plan_of(dnn, &op, 1, &graph, &heur, &cfg);
		cudnnBackendDescriptor_t done[] = { q, k, v, o, st, s, op, graph, heur, cfg };
		for (unsigned i = 0; i < sizeof(done) / sizeof(done[0]); i++)
			fcg(cudnnBackendDestroyDescriptor(done[i]), "destroy");
		return fcg_failed ? NULL : plan;
	}
	cudnnBackendDescriptor_t mm1 = fcg_create(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
	fcg_ref(mm1, CUDNN_ATTR_OPERATION_MATMUL_ADESC, q);
	fcg_ref(mm1, CUDNN_ATTR_OPERATION_MATMUL_BDESC, k);
	fcg_ref(mm1, CUDNN_ATTR_OPERATION_MATMUL_CDESC, s);
	fcg(cudnnBackendFinalize(mm1), "finalize");
	cudnnBackendDescriptor_t pw = fcg_create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
	fcg_ref(pw, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, s);
	fcg_ref(pw, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, st);
	fcg(cudnnBackendFinalize(pw), "finalize");
	cudnnBackendDescriptor_t mm2 = fcg_create(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
	fcg_ref(mm2, CUDNN_ATTR_OPERATION_MATMUL_ADESC, s);
	fcg_ref(mm2, CUDNN_ATTR_OPERATION_MATMUL_BDESC, v);
	fcg_ref(mm2, CUDNN_ATTR_OPERATION_MATMUL_CDESC, o);
	fcg(cudnnBackendFinalize(mm2), "finalize");
	cudnnBackendDescriptor_t ops[3] = { mm1, pw, mm2 }, graph, heur, cfg;
	cudnnBackendDescriptor_t plan = fcg_plan_of(dnn, ops, 3, &graph, &heur, &cfg);
	cudnnBackendDescriptor_t done[] = { q, k, v, o, st, s, mm1, pw, mm2, graph, heur, cfg };
	for (unsigned i = 0; i < sizeof(done) / sizeof(done[0]); i++)
		fcg(cudnnBackendDestroyDescriptor(done[i]), "destroy");
	return fcg_failed ? NULL : plan;
}

/* one execution of the attention plan: its variant pack of the five
 * tensors */
__attribute__((unused)) static int fcg_attn_run(cudnnHandle_t dnn, cudnnBackendDescriptor_t plan,
						void *q, void *k, void *v, void *o, void *stats)
{
	void *ptrs[5] = { q, k, v, o, stats };
	static const int64_t uids[5] = { 'q', 'k', 'v', 'o', 's' };
	return fcg_run(dnn, plan, 5, uids, ptrs);
}

#endif
