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
 * give the plan (gemm.h): the graph's written tensors checked whole
 * after the call's last kernel, each judged on every tensor the graph
 * reads (and its own old values when beta is set), and its two largest
 * dense inputs offered as reads.  A convolution writes one; attention
 * writes O and the softmax's statistics (the backward: dQ, dK, dV, and
 * float sums in cuDNN's workspace), as cudnn_frontend lowers SDPA to
 * matmuls, pointwise ops, reductions and dropout's RNG, or to one SDPA
 * operation (cuDNN >= 9.13; dnn_ops.h has what each operation reads and
 * writes).
 *
 * Only what can be named is planned: a graph of known operations whose
 * every non-virtual output (at most 1 + NP_GEMM_MORE_OUTS) is dense and
 * of a floating type, and whose every tensor is in the variant pack.
 * A tensor of packed variable-length sequences (a ragged offset) or a
 * reordered layout is not dense.  Anything else (an operation dnn_ops.h
 * does not know, plans built before the agent came, a plan read back
 * from JSON) goes to the generic tier as before.
 *
 * Bounded: NP_DG_SLOTS descriptors (the types above only; a descriptor
 * refused for a full table is counted, and what refers to it is not
 * planned).  Thread-safe (one mutex; nothing allocates).  Pure logic:
 * unit-tested (tests/unit/test_dnn_graph.c).
 */
#ifndef NP_DNN_GRAPH_H
#define NP_DNN_GRAPH_H

#include <stddef.h>
#include <stdint.h>
#include "gemm.h"

#define NP_DG_SLOTS 4096        /* descriptors remembered (about 2 MiB) */
#define NP_DG_TENSORS 16        /* non-virtual tensors of one graph, and of a
				 * variant pack, at most (attention's backward:
				 * q, k, v, o, dO, stats, dQ, dK, dV and cuDNN's
				 * own workspace tensors) */

/* cudnnBackendDescriptorType_t values (cudnn_graph.h: cuDNN 9.28's, the
 * later ones marked with the release that added them) */
enum np_dg_type {
	NP_DG_ENGINE = 2, NP_DG_ENGINECFG = 3, NP_DG_ENGINEHEUR = 4, NP_DG_PLAN = 5,
	NP_DG_CONV_FWD = 10, NP_DG_CONV_BWD_FILTER = 11, NP_DG_CONV_BWD_DATA = 12,
	NP_DG_POINTWISE = 13, NP_DG_OPGRAPH = 15, NP_DG_VARIANT_PACK = 16, NP_DG_TENSOR = 17,
	NP_DG_MATMUL = 19, NP_DG_REDUCTION = 22, NP_DG_RESHAPE = 31, NP_DG_RNG = 33,
	NP_DG_SDPA_FWD = 41,            /* 9.13: attention's forward as one operation */
	NP_DG_SDPA_BWD = 43,            /* 9.17: its backward */
	NP_DG_BAND_MASK = 44,           /* 9.20: a causal or sliding-window mask */
	NP_DG_SOFTMAX = 45,             /* 9.20: softmax, with attention's statistics */
	NP_DG_TRANSPOSE = 46, NP_DG_SLICE = 47,     /* 9.22 */
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
	NP_DGA_PLAN_WORKSPACE_SIZE = 402,
	NP_DGA_PACK_UIDS = 1000, NP_DGA_PACK_POINTERS = 1001, NP_DGA_PACK_INTERMEDIATES = 1002,
	NP_DGA_PACK_WORKSPACE = 1003,
	NP_DGA_ENGINE_GRAPH = 1300,
	NP_DGA_MATMUL_A = 1520, NP_DGA_MATMUL_B = 1521, NP_DGA_MATMUL_C = 1522,
	NP_DGA_REDUCTION_X = 1610, NP_DGA_REDUCTION_Y = 1611,
	NP_DGA_RNG_Y = 2310, NP_DGA_RNG_SEED = 2311, NP_DGA_RNG_OFFSET = 2313,
	NP_DGA_TENSOR_REORDERING = 909, NP_DGA_TENSOR_RAGGED = 913,
	NP_DGA_RESHAPE_X = 2200, NP_DGA_RESHAPE_Y = 2201,
	NP_DGA_SDPA_FWD_Q = 2800, NP_DGA_SDPA_FWD_K = 2801, NP_DGA_SDPA_FWD_V = 2802,
	NP_DGA_SDPA_FWD_O = 2803, NP_DGA_SDPA_FWD_STATS = 2804, NP_DGA_SDPA_FWD_SCALE = 2805,
	NP_DGA_SDPA_FWD_SEQ_LEN_Q = 2809, NP_DGA_SDPA_FWD_SEQ_LEN_KV = 2810,
	NP_DGA_SDPA_FWD_SUBGRAPH = 2811,
	NP_DGA_SDPA_BWD_Q = 2851, NP_DGA_SDPA_BWD_K = 2852, NP_DGA_SDPA_BWD_V = 2853,
	NP_DGA_SDPA_BWD_O = 2854, NP_DGA_SDPA_BWD_STATS = 2855, NP_DGA_SDPA_BWD_SCALE = 2856,
	NP_DGA_SDPA_BWD_DQ = 2859, NP_DGA_SDPA_BWD_DK = 2860, NP_DGA_SDPA_BWD_DV = 2861,
	NP_DGA_SDPA_BWD_DO = 2862,
	NP_DGA_BAND_MASK_X = 3000, NP_DGA_BAND_MASK_Y = 3006,
	NP_DGA_SOFTMAX_X = 3100, NP_DGA_SOFTMAX_Y = 3101, NP_DGA_SOFTMAX_STATS = 3102,
	NP_DGA_SOFTMAX_MAX = 3103, NP_DGA_SOFTMAX_SUM_EXP = 3104,
	NP_DGA_TRANSPOSE_X = 3200, NP_DGA_TRANSPOSE_Y = 3201,
	NP_DGA_SLICE_X = 3300, NP_DGA_SLICE_Y = 3301,
};

/* cudnnBackendAttributeType_t values the table reads */
enum np_dg_atype {
	NP_DGT_DATA_TYPE = 1, NP_DGT_BOOLEAN = 2, NP_DGT_INT64 = 3, NP_DGT_FLOAT = 4,
	NP_DGT_DOUBLE = 5, NP_DGT_VOID_PTR = 6, NP_DGT_BACKEND_DESCRIPTOR = 15,
	NP_DGT_REORDERING = 20,
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

/* Why an execution was not planned: what the first GPU runs need to
 * tell, as cuDNN's graphs there are not known in advance. */
enum np_dg_reason {
	NP_DGW_NONE = 0,
	NP_DGW_PLAN_UNSEEN,     /* the plan not seen built (before the agent came) */
	NP_DGW_PACK_UNSEEN,     /* the variant pack not seen built */
	NP_DGW_GRAPH_UNSEEN,    /* the plan's config, engine or graph not seen built */
	NP_DGW_OPERATION,       /* an operation not read: value its descriptor type
				 * (-1: not seen built) */
	NP_DGW_OP_TENSOR,       /* an operation's tensor not seen built, or without an id */
	NP_DGW_TENSORS,         /* more than NP_DG_TENSORS non-virtual tensors */
	NP_DGW_PACK,            /* a pack of more than NP_DG_TENSORS, or uids and
				 * pointers of different counts */
	NP_DGW_NOT_IN_PACK,     /* a tensor's id (value) not in the pack */
	NP_DGW_NOT_DENSE,       /* an output (value: its id) not one dense range */
	NP_DGW_NOT_FLOAT,       /* an output (value: its id) of no checkable type */
	NP_DGW_OUTPUTS,         /* more outputs than a plan holds */
	NP_DGW_NO_OUTPUT,       /* nothing written */
	NP_DGW_MAX
};

struct np_dg_why {
	enum np_dg_reason reason;
	int64_t value;
};

/* np_dg_plan, saying why not in *why. */
int np_dg_plan_why(const void *plan, const void *vpack, struct np_gemm_plan *p,
		   struct np_dg_why *why);

/* When an execution is not planned but its variant pack was seen built
 * (torch builds one per call): a note_only plan (gemm.h) of the pack's
 * addresses, for the generic tier, as an undecoded kernel's pointer
 * words are noted.  cuDNN's kernels take their tensors inside opaque
 * parameters; the pack names them all.  With the plan's graph known (a
 * plan refused for its shape: an output with gaps, too many outputs),
 * the tensors it only reads are noted as read; otherwise (a plan built
 * before the agent came, as torch's cached plans are under `nanprof
 * attach`) any address of the pack may be an output.  0 and *p, or -1
 * when no pack with an address was seen. */
int np_dg_plan_noted(const void *plan, const void *vpack, struct np_gemm_plan *p);

/* The workspace a variant pack gives its execution: 0 and *ptr (0: none
 * given), or -1 when the pack was not seen built or gives intermediates'
 * memory too (more that its kernels write).  Its size is the plan's
 * (NP_DGA_PLAN_WORKSPACE_SIZE), which cuDNN keeps. */
int np_dg_pack_workspace(const void *vpack, uint64_t *ptr);

/* A reason in words: "an operation of type 48 not read" (buf, n bytes). */
const char *np_dg_why_text(const struct np_dg_why *why, char *buf, size_t n);

void np_dg_stats(struct np_dg_stats *out);

#endif
