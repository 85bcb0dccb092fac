/* dnn_graph.h - what one execution of a cuDNN graph writes and reads,
 * from the backend descriptors the job built (cupti/dnn_calls.c wraps
 * the cudnnBackend* calls and hands them here).
 *
 * torch runs a CUDA convolution through cuDNN's backend API by default
 * (Conv_v8.cpp, unless TORCH_CUDNN_V8_API_DISABLED): it describes x, w
 * and y as tensor descriptors ('x', 'w', 'y' their unique ids), one
 * convolution operation (forward, backward data or backward filter), an
 * operation graph, heuristics' engine configs and an execution plan, and
 * caches the plan.  Each call then passes a variant pack (the ids and
 * their device addresses) to cudnnBackendExecute.  The kernels are
 * opaque, so before this a convolution's output went to the generic
 * tier, which names the last undecoded kernel handed the address: in
 * conv -> conv the second convolution was named for the first's
 * overflow.
 *
 * So the agent keeps a table of the descriptors as they are built.  A
 * tensor's id, type, dims, strides and whether it is virtual (a graph's
 * intermediate, never in memory); an operation's tensors, each an input
 * or an output by the attribute it was set as (a convolution's Y, DX and
 * DW are written, a pointwise's Y and DX, a matmul's C, a reduction's
 * Y); the graph its operations make; and which graph each engine,
 * heuristics query, engine config and plan serve.  What a descriptor
 * refers to is copied into it when the reference is set (cuDNN requires
 * the referent finalized by then), so a plan outlives the descriptors it
 * was built from.  At an execution the plan's graph and the variant pack
 * give the plan (gemm.h): the graph's one written tensor checked whole
 * after the call's last kernel, judged on every tensor it reads (and its
 * own old values when beta is set), and its two largest dense inputs
 * offered as reads.
 *
 * Only what can be named is planned: a graph of known operations with
 * exactly one non-virtual output, dense and of a floating type, whose
 * every tensor is in the variant pack.  Anything else (attention's
 * graphs, with their statistics, plans built before the agent came, a
 * plan read back from JSON) goes to the generic tier as before.
 *
 * Bounded: NP_DG_SLOTS descriptors (the types above only; a descriptor
 * refused for a full table is counted, and what refers to it is not
 * planned).  Thread-safe (one mutex; nothing allocates).  Pure logic:
 * unit-tested (tests/unit/test_dnn_graph.c).
 */
#ifndef NP_DNN_GRAPH_H
#define NP_DNN_GRAPH_H

#include <stdint.h>
#include "gemm.h"

#define NP_DG_SLOTS 4096        /* descriptors remembered (about 1 MiB) */
#define NP_DG_TENSORS 8         /* non-virtual tensors of one graph, and of a
				 * variant pack, at most */

/* cudnnBackendDescriptorType_t values (cudnn_graph.h, cuDNN 9) */
enum np_dg_type {
	NP_DG_ENGINE = 2, NP_DG_ENGINECFG = 3, NP_DG_ENGINEHEUR = 4, NP_DG_PLAN = 5,
	NP_DG_CONV_FWD = 10, NP_DG_CONV_BWD_FILTER = 11, NP_DG_CONV_BWD_DATA = 12,
	NP_DG_POINTWISE = 13, NP_DG_OPGRAPH = 15, NP_DG_VARIANT_PACK = 16, NP_DG_TENSOR = 17,
	NP_DG_MATMUL = 19, NP_DG_REDUCTION = 22,
};

/* cudnnBackendAttributeName_t values the table reads */
enum np_dg_attr {
	NP_DGA_HEUR_GRAPH = 201, NP_DGA_HEUR_RESULTS = 202,
	NP_DGA_CFG_ENGINE = 300,
	NP_DGA_PLAN_CFG = 401,
	NP_DGA_CONV_FWD_BETA = 701, NP_DGA_CONV_FWD_W = 703, NP_DGA_CONV_FWD_X = 704,
	NP_DGA_CONV_FWD_Y = 705,
	NP_DGA_CONV_BWD_DATA_BETA = 707, NP_DGA_CONV_BWD_DATA_W = 709,
	NP_DGA_CONV_BWD_DATA_DX = 710, NP_DGA_CONV_BWD_DATA_DY = 711,
	NP_DGA_CONV_BWD_FILTER_BETA = 713, NP_DGA_CONV_BWD_FILTER_DW = 715,
	NP_DGA_CONV_BWD_FILTER_X = 716, NP_DGA_CONV_BWD_FILTER_DY = 717,
	NP_DGA_PW_X = 751, NP_DGA_PW_B = 752, NP_DGA_PW_Y = 753, NP_DGA_PW_DX = 756,
	NP_DGA_PW_DY = 757, NP_DGA_PW_T = 758,
	NP_DGA_GRAPH_OPS = 801,
	NP_DGA_TENSOR_DTYPE = 901, NP_DGA_TENSOR_DIMS = 902, NP_DGA_TENSOR_STRIDES = 903,
	NP_DGA_TENSOR_UID = 906, NP_DGA_TENSOR_VIRTUAL = 907, NP_DGA_TENSOR_BY_VALUE = 908,
	NP_DGA_PACK_UIDS = 1000, NP_DGA_PACK_POINTERS = 1001,
	NP_DGA_ENGINE_GRAPH = 1300,
	NP_DGA_MATMUL_A = 1520, NP_DGA_MATMUL_B = 1521, NP_DGA_MATMUL_C = 1522,
	NP_DGA_REDUCTION_X = 1610, NP_DGA_REDUCTION_Y = 1611,
};

/* cudnnBackendAttributeType_t values the table reads */
enum np_dg_atype {
	NP_DGT_DATA_TYPE = 1, NP_DGT_BOOLEAN = 2, NP_DGT_INT64 = 3, NP_DGT_FLOAT = 4,
	NP_DGT_DOUBLE = 5, NP_DGT_VOID_PTR = 6, NP_DGT_BACKEND_DESCRIPTOR = 15,
};

struct np_dg_stats {
	uint64_t table_full;    /* descriptors not remembered: the table was full */
	uint64_t planned;       /* executions planned */
	uint64_t unplanned;     /* executions left to the generic tier */
};

/* Forgets everything (tests). */
void np_dg_reset(void);

/* A descriptor of type (cudnnBackendDescriptorType_t) was created: the
 * types above are remembered.  0, or -1 when the table is full. */
int np_dg_created(const void *desc, int type);

/* ... destroyed. */
void np_dg_destroyed(const void *desc);

/* An attribute was set on desc: n elements of type atype at elems (the
 * call's arguments, after it succeeded). */
void np_dg_set(const void *desc, int attr, int atype, int64_t n, const void *elems);

/* Heuristics heur returned engine configs cfgs[0..n) (a get of
 * NP_DGA_HEUR_RESULTS): each serves heur's graph. */
void np_dg_results(const void *heur, void *const *cfgs, int64_t n);

/* The plan of executing plan with the variant pack vpack: 0 and *p, or
 * -1 (counted either way). */
int np_dg_plan(const void *plan, const void *vpack, struct np_gemm_plan *p);

void np_dg_stats(struct np_dg_stats *out);

#endif
