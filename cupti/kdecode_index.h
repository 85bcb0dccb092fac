/* kdecode_index.h - index_select's output (an embedding's lookup), read
 * from the TensorInfo structs its kernels take by value.
 *
 *   indexSelectSmallIndex<T, IndicesType, IndexType, DstDim, SrcDim, IdxDim>
 *       (TensorInfo<T, IndexType> dst, TensorInfo<const T, IndexType> src,
 *        TensorInfo<const IndicesType, IndexType> indices,
 *        int dstSelectDim, int srcSelectDim, IndexType innerSize,
 *        int64_t srcSelectDimSize)
 *   indexSelectLargeIndex<.., IndexIsMajor>(dst, src, indices,
 *        int dstSelectDim, int srcSelectDim, IndexType totalSize,
 *        IndexType innerSize, int64_t srcSelectDimSize)
 *
 * (ATen/native/cuda/Indexing.cu).  TensorInfo is { T *data; IndexType
 * sizes[25]; IndexType strides[25]; int dims; }: 216 bytes with a 32-bit
 * IndexType, as torch 2.14.1's cubin says, 416 with a 64-bit one.  The
 * host collapses dst's dimensions and sets its select dimension's size to
 * 1 (reduceDim): one launch writes all of dst, one slice per index along
 * that dimension.  innerSize is the slice's elements (the large kernel's,
 * when not IndexIsMajor, the indices' count), totalSize all of dst.  The
 * launch is believed only when all of that agrees with dst's sizes and
 * the indices' count, and dst's strides (element strides) make it one
 * dense range.
 */
#ifndef NP_KDECODE_INDEX_H
#define NP_KDECODE_INDEX_H

#include <stdint.h>

/* The size of TensorInfo<T, IndexType> for an index_size-byte IndexType
 * (4 or 8), 0 for any other. */
uint32_t np_index_info_size(uint32_t index_size);

/* The elements of the TensorInfo at info (index_size-byte IndexType)
 * when its sizes and strides make one dense range (any order of its
 * dimensions, no broadcast), else 0.  Dropout's kernels take theirs the
 * same way (kdecode.c, "dropout"). */
uint64_t np_tensorinfo_numel(const unsigned char *info, uint32_t index_size);

/* What one launch's scalar parameters and name say. */
struct np_index_launch {
	int32_t select_dim;      /* dstSelectDim */
	uint8_t large;           /* indexSelectLargeIndex */
	uint8_t index_major;     /* its IndexIsMajor */
	uint64_t total;          /* large: totalSize */
	uint64_t inner;          /* innerSize */
};

/* Reads one launch: dst and indices the TensorInfo parameters.  *ptr and
 * *numel the output: 1, or 0 when any check above fails. */
int np_index_read(const unsigned char *dst, const unsigned char *indices, uint32_t index_size,
		  const struct np_index_launch *in, uint64_t *ptr, uint64_t *numel);

#endif
