/* kdecode.h - which arguments of one CUDA kernel launch are its outputs.
 *
 * The CUPTI launch callback sees a kernel's demangled name, its parameter
 * layout (cuFuncGetParamInfo: offset and size of each parameter, never a
 * type) and kernelParams (one host pointer per parameter, to its value).
 * This module turns those into the output buffers worth a finite check.
 *
 * Two tiers:
 *  - by name: np_kdecode_classify() reads the kernel family and the output
 *    dtype from the template arguments, once per function (cache the
 *    np_kinfo); np_kdecode_outputs() then names the outputs it is certain
 *    of, per launch, without allocating.
 *  - generic: np_kdecode_pointer_words() lists every 8-byte word of every
 *    parameter that could be a device pointer, for the caller to look up in
 *    its allocation map (cupti/intervals.c).  It also gives a launch's
 *    inputs: every such word that is not an output.
 *
 * Names are the c++filt / __cxa_demangle form of torch 2.x kernels, e.g.
 *   void at::native::vectorized_elementwise_kernel<4,
 *       at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>>(int, ...)
 * tests/unit/fixtures/torch_kernels.tsv holds real ones with their layouts.
 * Pure C: no CUDA headers, no allocation.
 */
#ifndef NP_KDECODE_H
#define NP_KDECODE_H

#include <stdint.h>
#include "../kernels/finite.h"
#include "param_bytes.h"
#include "kdecode_cat.h"
#include "kdecode_flash.h"
#include "kdecode_memeff.h"

#define NP_KD_MAX_PARAMS 64     /* parameters we look at; more: the rest are ignored */
#define NP_KD_MAX_OUTPUTS 16    /* a sensible size for the caller's np_kbuf array; a
				 * launch with more outputs is read in turns (np_klaunch) */
#define NP_KD_BUF_INPUTS 16     /* input words one output may carry (np_kbuf.in): as
				 * many as dirty.h keeps of a launch */
#define NP_KD_MTA_DEPTH 5       /* tensor lists of a multi_tensor_apply launch, at most */

/* NP_KD_PTR_MIN, NP_KD_PTR_MAX, np_pointer_like(): param_bytes.h */

enum np_kfamily {
	NP_KF_UNKNOWN = 0,       /* nothing parseable: generic tier only */
	NP_KF_VEC_ELEMENTWISE,   /* at::native::vectorized_elementwise_kernel */
	NP_KF_UNROLLED_ELEMENTWISE, /* at::native::unrolled_elementwise_kernel */
	NP_KF_LAMBDA_ELEMENTWISE, /* elementwise_kernel<.., lambda>: pointers hide in captures */
	NP_KF_REDUCE,            /* at::native::reduce_kernel<.., ReduceOp<..>> */
	NP_KF_SOFTMAX,           /* cunn_SoftMax*, cunn_SpatialSoftMax*, softmax_warp_* */
	NP_KF_LAYER_NORM,        /* layer norm forward and backward kernels */
	NP_KF_BATCH_NORM,        /* at::native::batch_norm_* */
	NP_KF_CAT,               /* CatArrayBatchedCopy* */
	NP_KF_MULTI_TENSOR_APPLY, /* multi_tensor_apply_kernel (fused optimizers, foreach) */
	NP_KF_EXPLICIT,          /* any other kernel whose parameter list names its pointers */
	NP_KF_FLASH,             /* pytorch_flash::flash_fwd_kernel and the backward's
				  * dK/dV and dQ kernels (kdecode_flash.h) */
	NP_KF_INDEX,             /* indexSelect{Small,Large}Index (kdecode_index.h) */
	NP_KF_MEMEFF,            /* fmha_cutlass[FB]_*: memory-efficient attention
				  * (kdecode_memeff.h) */
	NP_KF_DROPOUT,           /* fused_dropout_kernel[_vec]: nn.Dropout's forward */
	NP_KF_NORM_CLEANUP,      /* lpnorm_cleanup, lpmax_cleanup: _foreach_norm's and
				  * _foreach_max's per-tensor results */
	NP_KF_MAX,
};

/* Why np_kinfo.dtype is what it is. */
enum np_kdtype_why {
	NP_KDT_UNKNOWN = 0,      /* the name does not say: dtype -1 */
	NP_KDT_KNOWN,            /* named exactly (functor result type, T* in the signature,
				  * the first list a multi_tensor_apply functor writes) */
	NP_KDT_INFERRED,         /* elementwise lambda: all its arguments are one floating type
				  * and the op is not one known to change type (is*, logical_*,
				  * copies, comparisons, bitwise): the output is taken to be
				  * that type too.  dtype set. */
	NP_KDT_RUNTIME,          /* unrolled with StoreWithCast: np_kdecode_outputs reads
				  * the output's c10::ScalarType from the launch.  dtype -1 */
	NP_KDT_UNCHECKABLE,      /* named, and not a format finite.h checks: bool, integers,
				  * complex, quantized, fnuz/e8m0/fp4 floats.  dtype -1 */
};

/* What the signature says about one parameter. */
enum np_kparam_kind {
	NP_KP_UNPARSED = 0,
	NP_KP_SCALAR,            /* int, long, float, bool, c10::Half, ... by value */
	NP_KP_AGGREGATE,         /* a struct or array by value: may hold pointers */
	NP_KP_IN_PTR,            /* T const* */
	NP_KP_OUT_PTR,           /* T* (written, or at least writable) */
	NP_KP_OTHER_PTR,         /* pointer to pointer, void*, ...: not a typed buffer */
};

struct np_ksig {
	uint8_t kind;            /* enum np_kparam_kind */
	int8_t dtype;            /* for IN_PTR/OUT_PTR: enum np_dtype of the pointee, or -1 */
	uint8_t why;             /* enum np_kdtype_why of that dtype */
};

/* multi_tensor_apply_kernel<Metadata, Functor, Args...>(Metadata, Functor, Args...):
 * what the name says about the metadata struct passed by value as parameter
 * 0 and about which of its tensor lists the functor writes (kdecode_mta.c has the
 * layouts and where they come from). */
enum np_mta_meta {
	NP_MTA_NONE = 0,         /* not understood: no outputs */
	NP_MTA_PLAIN,            /* TensorListMetadata<depth> */
	NP_MTA_SCALARLIST,       /* TensorListScalarListMetadata<scalar_t, depth> */
	NP_MTA_FUSED,            /* FusedOptimizerTensorListMetadata<depth> */
};

struct np_kmta {
	uint8_t meta;            /* enum np_mta_meta */
	uint8_t depth;           /* tensor lists, 1..NP_KD_MTA_DEPTH */
	uint8_t sval_size;       /* scalar list: sizeof and alignof scalar_t */
	uint8_t sval_align;
	uint8_t written;         /* bit d: the functor writes list d */
	uint8_t written_if_scale; /* bit d: written when grad_scale_ptr is not NULL */
	uint8_t read;            /* bit d: the functor reads list d */
	int8_t scale_param;      /* kernel parameter holding grad_scale_ptr, or -1 */
	int8_t dtype[NP_KD_MTA_DEPTH]; /* per list: enum np_dtype, or -1 (not checkable) */
	uint32_t size[2];        /* sizeof the metadata with the CUDA >= 13 and the older
				  * capacity tables: the layout's size picks one */
};

/* Kernels that write whole rows, one row per block (layer norm, RMSNorm,
 * softmax): what the name says about how many elements a launch writes
 * (kdecode_rows.c has the formulas and their sources). */
enum np_krows_kind {
	NP_KR_NONE = 0,          /* outputs unsized (numel 0) */
	NP_KR_LN_VEC,            /* vectorized_layer_norm_kernel: rows x N, N % 4 == 0 */
	NP_KR_LN,                /* the other layer norm kernels: rows x N */
	NP_KR_SM_BLOCK,          /* cunn_SoftMaxForward / Backward: rows x classes */
	NP_KR_SM_SMEM,           /* cunn_SoftMax*Smem: the same, classes % ILP == 0 */
	NP_KR_SM_REG,            /* cunn_SoftMaxForwardReg: blockDim.x x REG >= classes */
	NP_KR_SM_WARP,           /* softmax_warp_forward / backward: batch_size x elements */
	NP_KR_BN_CL,             /* batch norm's channels-last elementwise kernels:
				  * reduction_size x stride (count, count + 1) */
	NP_KR_BN_CL_CHAN,        /* its channels-last reductions (statistics, the
				  * backward's sums): stride elements each output,
				  * rows = stride, N = reduction_size */
	NP_KR_GAMMA_BETA,        /* layer norm's weight and bias gradients
				  * (GammaBetaBackwardCUDAKernelTemplate): N columns
				  * each output (rows = N), or a row of N per
				  * thread row when partial; dY and X M x N */
	NP_KR_GN_GAMMA_BETA,     /* group norm's (GammaBeta[1d]BackwardCUDAKernel1/2):
				  * C columns each output (rows = C, N = the batch) */
	NP_KR_GN,                /* group norm's statistics and internal gradients
				  * (RowwiseMomentsCUDAKernel<T, T_ACC>,
				  * ComputeInternalGradientsCUDAKernel<T>): a row per
				  * block, per-row outputs; X (and dY) rows x N */
};

struct np_krows {
	uint8_t kind;            /* enum np_krows_kind */
	uint8_t rms;             /* layer norm instance for RMSNorm: writes no mean
				  * (GAMMA_BETA: no bias gradient, parameter `mean`) */
	uint8_t unit;            /* SMEM: ILP; REG: registers per thread; WARP: log2_elements;
				  * GAMMA_BETA: block_dim_y; GN_GAMMA_BETA: columns a
				  * thread row writes (2: the tiled Kernel2) */
	uint8_t warp;            /* WARP: WARP_SIZE_PARAM; GAMMA_BETA: block_dim_x */
	uint8_t partial;         /* GAMMA_BETA: partial_reduction (no reduction across
				  * the block's thread rows) */
	int8_t count;            /* parameter holding N (classes, batch_size) */
	uint8_t csize;           /* its size: 4, 8, or 0 for either (index_t) */
	int8_t y;                /* parameter of the rows x N output */
	int8_t mean, rstd;       /* parameters of the per-row outputs, or -1 */
	uint8_t xin;             /* bit p: parameter p is a rows x N input (const T*) */
	uint16_t outs;           /* BN_CL_CHAN, GN_GAMMA_BETA: bit p, parameter p a per-row output */
	uint16_t scratch;        /* bit p: a T* the kernel writes that is no output
				  * (a grid-wide reduction's staging buffer and
				  * semaphores) */
};

/* Batch norm's NCHW elementwise kernels take tensor accessors, not
 * pointers: GenericPackedTensorAccessor<T, 3, .., index_t> by value, the
 * data pointer then 3 sizes and 3 strides of index_t (kdecode_acc.c). */
struct np_kacc {
	int8_t param;            /* the 3-D output accessor's parameter, or -1 */
	uint8_t isz;             /* sizeof index_t: 4 or 8; 0: not such a kernel */
	uint8_t planes;          /* bit p: parameter p a 1-D output, an element a
				  * plane (statistics, grad_weight), of plane_dtype */
	int8_t plane_dtype;
	uint8_t planes2;         /* the same, of plane2_dtype: a kernel's 1-D outputs
				  * of a second type (backward_reduce's sums, of the
				  * accumulate type, beside its weight gradients) */
	int8_t plane2_dtype;
	uint8_t xin;             /* bit p: parameter p a 3-D input accessor, of
				  * in_dtype (read by the generic tier) */
};

/* reduce_kernel<nt, output_vec_size, ReduceOp<scalar_t, ops_t, index_t,
 * out_scalar_t, ..>>: what the name says for reading the ReduceOp
 * (kdecode_reduce.h). */
struct np_kred {
	uint8_t ovs;             /* output_vec_size; 0: the name did not parse */
	uint8_t index_size;      /* sizeof index_t (4: uint32_t) */
	uint8_t pair_values;     /* ops_t projects a pair of out_scalar_t (WelfordOps'
				  * var_mean, MinMaxOps' aminmax): with two outputs,
				  * dst[1] holds values too, not indices */
};

/* Which launcher's lambda an elementwise_kernel runs.  torch 2.x's
 * gpu_kernel_impl has one lambda, the casting one, its same-dtype twin
 * being gpu_kernel_impl_nocast's; older torch (1.13 here) has both in
 * gpu_kernel_impl: #1 same-dtype, #2 casting.  So gpu_kernel_impl's #1
 * is read only once the process has shown which torch it is: a
 * gpu_kernel_impl_nocast kernel (then it casts) or a #2 (then it does
 * not); np_kdecode_classify() learns that from every name it sees. */
enum np_klam_kind {
	NP_KL_NONE = 0,          /* not such a kernel */
	NP_KL_NOCAST,            /* the output's dtype is F's result type */
	NP_KL_CASTING,           /* the output's dtype is read from the lambda */
	NP_KL_IMPL_FIRST,        /* gpu_kernel_impl's lambda #1: either, by torch's age */
};

/* elementwise_kernel<threads, vt, gpu_kernel_impl[_nocast]<F>(..)::{lambda(int)#N}>:
 * what the name says for reading the lambda (kdecode_lambda.h). */
struct np_klam {
	uint8_t kind;            /* enum np_klam_kind */
	uint8_t arity;           /* F's inputs, 0 if the name does not say */
	uint8_t vt;              /* elements per thread */
	uint16_t threads;        /* per block */
};

struct np_kinfo {
	enum np_kfamily family;
	int dtype;               /* enum np_dtype of the (first) output, or -1 */
	enum np_kdtype_why dtype_why;
	uint8_t pairs;           /* elementwise, reduce: the output is complex, c10::complex<dtype>:
				  * its outputs count dtype's elements, two each
				  * (np_kbuf.pairs) */
	int in_dtype;            /* elementwise kernels loading without a cast
				  * (vectorized, unrolled, strided _nocast): the dtype
				  * of every tensor input, when the functor names one
				  * floating type for all; a reduction's scalar_t;
				  * else -1 */
	uint8_t in_pairs;        /* that type is c10::complex<in_dtype> */
	int narrays;             /* elementwise: N of std::array<char*, N>, else 0 */
	uint8_t load_cast;       /* unrolled: N of LoadWithCast<N> (each input's
				  * dtype read from the launch), else 0 */
	int nsig;                /* parameters in the signature, -1 if it did not parse */
	struct np_ksig sig[NP_KD_MAX_PARAMS];
	struct np_kmta mta;      /* NP_KF_MULTI_TENSOR_APPLY only */
	struct np_krows rows;    /* NP_KF_SOFTMAX, NP_KF_LAYER_NORM and NP_KF_BATCH_NORM only */
	struct np_kacc acc;      /* NP_KF_BATCH_NORM only */
	struct np_kred red;      /* NP_KF_REDUCE only */
	struct np_klam lam;      /* NP_KF_LAMBDA_ELEMENTWISE only */
	struct np_cat_shape cat; /* NP_KF_CAT: esize 0 when not read (kdecode_cat.h) */
	struct np_flash_shape flash; /* NP_KF_FLASH: head_dim 0 when not read */
	struct np_memeff_shape memeff; /* NP_KF_MEMEFF (kdecode_memeff.h) */
	struct {                 /* NP_KF_INDEX (kdecode_index.h), NP_KF_DROPOUT */
		uint8_t index_size;      /* sizeof IndexType: 4 or 8 */
		uint8_t large;           /* indexSelectLargeIndex */
		uint8_t index_major;     /* its IndexIsMajor */
	} index;
	uint8_t scalar_outputs;  /* NP_KF_EXPLICIT: each floating T* output is one element
				  * (a loss kernel's reduced value; kdecode.c, "scalar
				  * outputs") */
	uint8_t counted;         /* NP_KF_EXPLICIT: its one floating T* output holds
				  * parameter 0's count of elements, written by a
				  * grid-stride loop (pooling; kdecode.c, "counted
				  * outputs") */
};

/* One function's parameter layout, as cuFuncGetParamInfo gives it. */
struct np_kparams {
	int n;
	struct {
		uint32_t offset, size;
	} p[NP_KD_MAX_PARAMS];
};

/* How an output buffer was found. */
enum np_khow {
	NP_KH_ELEMENTWISE = 1,   /* data[0] of a vectorized/unrolled kernel, numel = param 0,
				  * dtype named by the functor or read from StoreWithCast */
	NP_KH_ELEMENTWISE_INFERRED, /* the same, dtype NP_KDT_INFERRED from the lambda */
	NP_KH_SIGNATURE,         /* a non-const T* parameter, T floating; numel unknown,
				  * or from np_kinfo.rows and the launch's grid */
	NP_KH_TENSOR_LIST,       /* a multi_tensor_apply list entry: the elements this
				  * launch writes, inputs in np_kbuf.in */
	NP_KH_ACCESSOR,          /* a tensor accessor's data: its sizes' product when its
				  * strides are contiguous and the grid covers it, else 0 */
	NP_KH_REDUCE,            /* a ReduceOp's dst: num_outputs elements, its final
				  * write of a dense output (kdecode_reduce.h) */
	NP_KH_STRIDED,           /* a strided elementwise lambda's data[0]: N elements of
				  * a dense output (kdecode_lambda.h) */
	NP_KH_FLASH,             /* flash attention's O or log-sum-exp, or its
				  * backward's dQ, dK or dV (kdecode_flash.h) */
	NP_KH_INDEX,             /* index_select's whole output (kdecode_index.h) */
	NP_KH_MEMEFF,            /* memory-efficient attention's O, log-sum-exp or
				  * gradients of q, k, v (kdecode_memeff.h) */
	NP_KH_DROPOUT,           /* dropout's output: its totalElements, when its
				  * TensorInfo is one dense range of that many */
	NP_KH_CAT,               /* torch.cat's output, or a launch's part of it
				  * (kdecode_cat.h): its dtype is NP_DT_MAX, only its
				  * size is known (esize): the caller finds the dtype
				  * its first input holds, or drops the buffer */
	NP_KH_NORM_RESULT,       /* one tensor's result of _foreach_norm or
				  * _foreach_max: one element, from its partials */
	NP_KH_GEMM,              /* a cuBLAS call's D (gemm.h) or a cuDNN batch
				  * norm's y (dnn.h), from the call's arguments,
				  * not from its kernel's parameters */
	NP_KH_TRITON,            /* a Triton kernel's output, from the Python call
				  * that launched it (triton.h) */
};

struct np_kbuf {
	uint64_t ptr;            /* device address */
	uint64_t numel;          /* elements, 0 = unknown (size it from the allocation map) */
	enum np_dtype dtype;     /* NP_DT_MAX: not known (NP_KH_CAT) */
	uint32_t esize;          /* NP_KH_CAT: the element's size */
	uint8_t pairs;           /* a complex output, checked as its real view
				  * (torch.view_as_real): dtype and numel are its
				  * parts' (complex64: float32, twice the elements) */
	enum np_khow how;
	int n_in;                /* -1: the caller takes the launch's pointer words as this
				  * output's inputs; else in[0..n_in) are all it reads (an
				  * in-place output's own address among them) */
	uint64_t in[NP_KD_BUF_INPUTS];
	const void *more_in;     /* NP_KH_CAT: its n_more input words past in[], unaligned
				  * in the launch's parameters (valid in the callback
				  * only: check_launch.c keeps them, wide_inputs.h) */
	uint32_t n_more;
};

/* The bytes a sized output spans from ptr on: numel elements of its
 * dtype (twice as many for a complex output's real view). */
static inline uint64_t np_kbuf_bytes(const struct np_kbuf *b)
{
	return (b->numel << b->pairs) * np_dtype_size((enum np_dtype)b->dtype);
}

/* What a launch says besides its parameters, and where a caller whose out[]
 * is too small for a launch's outputs stands. */
struct np_klaunch {
	uint64_t threads;        /* grid x block, 0 if unknown: an elementwise N above
				  * 256 elements per thread is taken as a misread */
	uint32_t blocks;         /* grid x*y*z, 0 if unknown: multi_tensor_apply needs it
				  * (which metadata entries this launch uses), else 0 outputs */
	uint32_t grid[3];        /* gridDim x, y, z and blockDim x, y, z, 0 if unknown:  */
	uint32_t block[3];       /* row kernels need them (rows = gridDim.x), else unsized */
	uint32_t first;          /* in: outputs to pass over before out[0] */
	uint32_t more;           /* out: outputs after the last one written, left out
				  * for want of room; read them with first += returned */
};

/* Classifies a kernel from its demangled name: family, output dtype and,
 * where the name carries one, the parameter signature.  Never fails: an
 * unrecognised name gives NP_KF_UNKNOWN, dtype -1, nsig -1.  Returns
 * ki->family.  Not for the hot path (call once per CUfunction, cache). */
int np_kdecode_classify(const char *demangled, struct np_kinfo *ki);

/* The family's name, for reports ("vectorized_elementwise", ...). */
const char *np_kfamily_name(enum np_kfamily f);

/* Parses "offset:size,offset:size,..." (the fixture's layout column) into
 * *layout.  Returns the number of parameters, or -1 on a malformed string
 * or more than NP_KD_MAX_PARAMS of them. */
int np_kdecode_layout_parse(const char *s, struct np_kparams *layout);

/* The output buffers of one launch that the name lets us name with
 * certainty, into out[0..max).  ki from np_kdecode_classify, layout from
 * cuFuncGetParamInfo, kernelParams as passed to cuLaunchKernel, launch (may
 * be NULL: nothing known, first 0) as struct np_klaunch says.  Only buffers
 * with a checkable dtype are returned.  Families whose pointers sit in
 * opaque aggregates (other lambdas' captures, cat metadata) give 0: use
 * the generic tier.  The strided elementwise lambdas of gpu_kernel_impl
 * and gpu_kernel_impl_nocast are read (kdecode_lambda.h), and so is a
 * reduction's ReduceOp (kdecode_reduce.h), when the launch's grid and
 * block are known.  multi_tensor_apply gives one buffer per written list
 * entry the launch touches, list by list (params first), each with its own
 * inputs.  Reads no parameter past its size in layout; returns 0 when the
 * layout or the values do not match the name.  Returns the number of
 * buffers written; launch->more says how many more there are. */
int np_kdecode_outputs(const struct np_kinfo *ki, const struct np_kparams *layout,
		       void *const *kernelParams, struct np_klaunch *launch, struct np_kbuf *out,
		       int max);

/* An input a launch reads whole, with its extent: what the generic tier
 * (generic.h) checks an undecoded kernel's output over. */
struct np_kread {
	uint64_t ptr;
	uint64_t numel;          /* with pairs, of its real view: two per value */
	enum np_dtype dtype;
	uint8_t pairs;           /* complex values, c10::complex<dtype>: checked as
				  * their real view (np_kbuf.pairs) */
};

/* The inputs of one launch whose extent and dtype the name and layout
 * give, into out[0..max): a vectorized or unrolled elementwise kernel's
 * data[1..] (N elements each, loaded without a cast, of ki->in_dtype; of
 * complex values, 2N parts, pairs set),
 * a strided one's (_nocast) inputs that read one dense range
 * (kdecode_lambda.h), when the output decodes too; a layer norm's or
 * softmax's rows x N inputs (X, dY; a softmax's input, output and
 * gradient), when the launch sizes its rows; a multi_tensor_apply
 * launch's read-only lists (an optimizer's gradients), each tensor from
 * its start; a reduction's input, when it lies densely (kdecode_reduce.h:
 * a loss's sum or mean).  Other families give 0.  Returns the number
 * written. */
int np_kdecode_reads(const struct np_kinfo *ki, const struct np_kparams *layout,
		     void *const *kernelParams, const struct np_klaunch *launch,
		     struct np_kread *out, int max);

/* The pointers one launch only reads, when its layout says which they
 * are though its output is not decoded: a strided elementwise kernel's
 * inputs when it writes a strided view (kdecode_lambda.h).  The generic
 * tier keeps them out of the launch's note: a later reader of an input
 * is not checking what this launch wrote.  Returns the number written. */
int np_kdecode_input_words(const struct np_kinfo *ki, const struct np_kparams *layout,
			   void *const *kernelParams, const struct np_klaunch *launch,
			   uint64_t *out, int max);

/* Lists the 8-byte-aligned words (alignment counted in the parameter
 * buffer, as the device sees it) inside every parameter, aggregates
 * included, whose value lies in [NP_KD_PTR_MIN, NP_KD_PTR_MAX):
 * candidate device pointers, input or output.  The 8-byte parameters
 * come first, then the others, each group in parameter order: a caller
 * keeping only the first few words of a launch with many (a
 * multi_tensor_apply's list addresses, then LpNormFunctor's
 * output_per_tensor) keeps its pointer arguments.  Writes at most max
 * values to out; returns how many it wrote.  Duplicates are kept. */
int np_kdecode_pointer_words(const struct np_kparams *layout, void *const *kernelParams,
			     uint64_t *out, int max);

#endif
