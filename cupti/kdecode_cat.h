/* kdecode_cat.h - the output of torch.cat's kernel, read from its input
 * metadata.
 *
 * torch.cat on CUDA (ATen/native/cuda/Shape.cu) launches, per batch of up
 * to batch_size inputs,
 *   CatArrayBatchedCopy[_contig|_alignedK_contig]<T, IndexType, Dims,
 *       batch_size, stride_size[, ..]>(T *output,
 *       CatArrInputTensorMetadata<T, IndexType, batch_size, stride_size> inputs,
 *       TensorSizeStride<IndexType, 4> os, int concatDim, IndexType dimStride)
 * with T = OpaqueType<N> (N bytes: the kernel copies, whatever the dtype)
 * and, by value,
 *   const T *input[n]; IndexType offset[n], dimSize[n], nElements[n];
 *   bool isContiguous[n]; TensorSizeStride<IndexType, 4> tensorStride[stride_size];
 *   TensorSizeStride<IndexType, 4> { IndexType tensorSize[4], tensorStride[4]; }
 * gridDim.y is the number of inputs the launch copies (the kernel reads
 * inputs.nElements[blockIdx.y]).  Read from PyTorch's source and matching
 * torch 2.14.1's parameter sizes (2,720 bytes for n 128, stride_size 1).
 *
 * A cat makes no value, it only moves them: decoded, its output is
 * checked so that its readers see the inputs' non-finite values as
 * propagation, not as births.  The output must be contiguous.  What one
 * launch writes is known in two cases:
 *  - whole: its inputs' element counts add up to the output's (one
 *    launch, any concat dimension);
 *  - slabs: every dimension before the concat dimension has size 1 (cat
 *    along dim 0, torch.stack of scalars or vectors: clip_grad_norm_'s
 *    per-parameter norms), so input k's part is one dense range of the
 *    output from offset[k] * dimStride, its nElements long, and a
 *    launch's parts follow each other.  Shape.cu keeps offset[] counting
 *    across launches: a cat of more than batch_size inputs (128, or 64
 *    with strided inputs) takes several launches, each writing its own
 *    parts.
 * kdecode.c checks a launch's write as one range with its inputs when
 * it copies at most NP_KD_BUF_INPUTS of them (each one's dirtiness is
 * looked up), else each slab on its own with its own input; along an
 * inner dimension (no slabs) the whole output, its inputs past
 * NP_KD_BUF_INPUTS handed on in np_kbuf.more_in (kept for the judge by
 * wide_inputs.h).  The dtype
 * is not in the name: the caller takes it from what last wrote the input
 * (writers.h).
 * The _vectorized variant (16-byte aligned inputs and output, the most
 * common; Shape.cu's isInOutAligned) passes a char * output and os in
 * vectors of elems_per_vec elements: the dims from the concat dimension
 * on flattened into one, the strides before it divided by elems_per_vec,
 * so its element count is os's times elems_per_vec; nElements stay in
 * elements, and its last parameter is trailingSize, the elements one step
 * of the concat dimension spans: dimStride in elements.
 */
#ifndef NP_KDECODE_CAT_H
#define NP_KDECODE_CAT_H

#include <stdint.h>

/* What the kernel's name says (kdecode.c). */
struct np_cat_shape {
	uint32_t esize;          /* N of OpaqueType<N> */
	uint32_t index_size;     /* sizeof IndexType: 4 or 8 */
	uint32_t dims;           /* the output's dimensions, 1..4 */
	uint32_t batch;          /* n: inputs the metadata holds */
	uint32_t stride_size;    /* tensorStride entries */
	uint32_t per_vec;        /* _vectorized: elems_per_vec (os counts vectors); else 1 */
};

#define NP_CAT_MAX_BATCH 128    /* Shape.cu's CAT_ARRAY_BATCH_SIZE: inputs one launch
				  * copies, at most; a launch of more is not read */

/* What one launch writes and reads. */
struct np_cat_view {
	uint64_t output;
	uint64_t numel;          /* the output's elements */
	int ninputs;             /* gridDim.y */
	int whole;               /* the launch writes all numel elements */
	int slabs;               /* input k's part is the output's elements
				  * [start[k], start[k] + count[k]), and
				  * start[k + 1] == start[k] + count[k] */
	uint64_t input[NP_CAT_MAX_BATCH];
	uint64_t start[NP_CAT_MAX_BATCH];   /* with slabs */
	uint64_t count[NP_CAT_MAX_BATCH];   /* with slabs: input k's nElements */
};

/* The metadata's size for a shape: what cuFuncGetParamInfo must report. */
uint32_t np_cat_meta_size(const struct np_cat_shape *sh);

/* Reads one launch: output the first parameter's value, meta and os the
 * second and third parameters' bytes, concat_dim and dim_stride the
 * fourth's and fifth's values, grid the launch's.  1 when the output is
 * contiguous and the launch writes it whole or in slabs (v filled, whole
 * or slabs set); 0 otherwise. */
int np_cat_read(uint64_t output, const unsigned char *meta, const unsigned char *os,
		int32_t concat_dim, uint64_t dim_stride, const struct np_cat_shape *sh,
		const uint32_t grid[3], struct np_cat_view *v);

#endif
