/* driver_writes.c - what a copy or memset writes without a kernel
 * (driver_writes.h). */
#include <string.h>
#include "driver_writes.h"

#define D(name) CUPTI_DRIVER_TRACE_CBID_##name
const CUpti_CallbackId np_write_cbids[] = {
	/* from the host */
	D(cuMemcpyHtoD_v2), D(cuMemcpyHtoD_v2_ptds),
	D(cuMemcpyHtoDAsync_v2), D(cuMemcpyHtoDAsync_v2_ptsz),
	/* memsets: torch's zero_() of a whole tensor, the allocator's
	 * debug fills, cuDNN's and NCCL's own */
	D(cuMemsetD8_v2), D(cuMemsetD8_v2_ptds), D(cuMemsetD8Async), D(cuMemsetD8Async_ptsz),
	D(cuMemsetD16_v2), D(cuMemsetD16_v2_ptds), D(cuMemsetD16Async), D(cuMemsetD16Async_ptsz),
	D(cuMemsetD32_v2), D(cuMemsetD32_v2_ptds), D(cuMemsetD32Async), D(cuMemsetD32Async_ptsz),
	D(cuMemsetD2D8_v2), D(cuMemsetD2D8_v2_ptds), D(cuMemsetD2D8Async),
	D(cuMemsetD2D8Async_ptsz),
	D(cuMemsetD2D16_v2), D(cuMemsetD2D16_v2_ptds), D(cuMemsetD2D16Async),
	D(cuMemsetD2D16Async_ptsz),
	D(cuMemsetD2D32_v2), D(cuMemsetD2D32_v2_ptds), D(cuMemsetD2D32Async),
	D(cuMemsetD2D32Async_ptsz),
	/* pitched copies, any direction (cudaMemcpy2DAsync: extensions,
	 * data loaders) */
	D(cuMemcpy2D_v2), D(cuMemcpy2D_v2_ptds), D(cuMemcpy2DUnaligned_v2),
	D(cuMemcpy2DUnaligned_v2_ptds), D(cuMemcpy2DAsync_v2), D(cuMemcpy2DAsync_v2_ptsz),
	D(cuMemcpy3D_v2), D(cuMemcpy3D_v2_ptds), D(cuMemcpy3DAsync_v2), D(cuMemcpy3DAsync_v2_ptsz),
	D(cuMemcpy3DPeer), D(cuMemcpy3DPeer_ptds), D(cuMemcpy3DPeerAsync),
	D(cuMemcpy3DPeerAsync_ptsz),
	/* batches (cudaMemcpyBatchAsync, CUDA 12.8+: checkpoint loaders,
	 * KV caches, copy-engine collectives) */
	D(cuMemcpyBatchAsync), D(cuMemcpyBatchAsync_ptsz), D(cuMemcpyBatchAsync_v2),
	D(cuMemcpyBatchAsync_v2_ptsz),
	D(cuMemcpy3DBatchAsync), D(cuMemcpy3DBatchAsync_ptsz), D(cuMemcpy3DBatchAsync_v2),
	D(cuMemcpy3DBatchAsync_v2_ptsz),
};
const size_t np_write_ncbids = sizeof(np_write_cbids) / sizeof(np_write_cbids[0]);

/* [lo, lo + bytes), copied from src (0: not device memory); whole: its
 * source laid out alike (np_writes) */
static void add_from(struct np_writes *w, uint64_t lo, size_t bytes, uint64_t src, int whole)
{
	if (!bytes)
		return;
	if (lo + bytes < lo || w->n == NP_WRITES_MAX) {
		w->untold = 1;
		return;
	}
	w->lo[w->n] = lo;
	w->hi[w->n] = lo + bytes;
	w->src[w->n] = src;
	w->whole[w->n] = src && whole;
	w->n++;
}

static void add(struct np_writes *w, uint64_t lo, size_t bytes)
{
	add_from(w, lo, bytes, 0, 0);
}

/* The first byte of a pitched region: byte x of row y of slice z; 0 on
 * overflow. */
static uint64_t pitched_at(uint64_t base, size_t x, size_t y, size_t z, size_t pitch,
			   size_t slice_rows)
{
	size_t rows, off;
	if (__builtin_mul_overflow(z, slice_rows, &rows) || __builtin_add_overflow(rows, y, &rows) ||
	    __builtin_mul_overflow(rows, pitch, &off) || __builtin_add_overflow(off, x, &off) ||
	    base + off < base)
		return 0;
	return base + off;
}

/* Do a pitched copy's rows (and slices) lie alike at both ends, so that
 * its source's span maps onto its destination's byte for byte? */
static int laid_alike(size_t height, size_t depth, size_t src_pitch, size_t dst_pitch,
		      size_t src_rows, size_t dst_rows)
{
	if (depth > 1 && (src_pitch != dst_pitch || src_rows != dst_rows))
		return 0;
	return height <= 1 || src_pitch == dst_pitch;
}

/* A 2D or 3D copy's source when it may be device memory */
static uint64_t src_of(CUmemorytype type, CUdeviceptr device, size_t x, size_t y, size_t z,
		       size_t pitch, size_t slice_rows)
{
	if (type != CU_MEMORYTYPE_DEVICE && type != CU_MEMORYTYPE_UNIFIED)
		return 0;
	return pitched_at(device, x, y, z, pitch, slice_rows);
}

/* depth slices of height rows of width bytes, rows pitch bytes apart
 * and slices slice_rows rows apart, from byte x of row y of slice z:
 * told as the one range from its first byte to its last (what lies
 * between, in the pitch's padding, is not written, but a waiting check
 * there is launched first all the same: only early). */
static void add_pitched(struct np_writes *w, uint64_t base, size_t x, size_t y, size_t z,
			size_t pitch, size_t slice_rows, size_t width, size_t height, size_t depth,
			uint64_t src, int whole)
{
	size_t rows, span;
	if (!width || !height || !depth)
		return;
	uint64_t at = pitched_at(base, x, y, z, pitch, slice_rows);
	if (!at || __builtin_mul_overflow(depth - 1, slice_rows, &rows) ||
	    __builtin_add_overflow(rows, height - 1, &rows) ||
	    __builtin_mul_overflow(rows, pitch, &span) || __builtin_add_overflow(span, width, &span)) {
		w->untold = 1;
		return;
	}
	add_from(w, at, span, src, whole);
}

/* a 2D or 3D copy's destination, by its memory type, copied from src
 * (whole: laid out alike) */
static void add_dst(struct np_writes *w, CUmemorytype type, CUdeviceptr device, size_t x,
		    size_t y, size_t z, size_t pitch, size_t slice_rows, size_t width,
		    size_t height, size_t depth, uint64_t src, int whole)
{
	switch (type) {
	case CU_MEMORYTYPE_HOST:
		w->to_host = 1;
		break;
	case CU_MEMORYTYPE_DEVICE:
	case CU_MEMORYTYPE_UNIFIED:   /* a unified address: the caller asks whose */
		add_pitched(w, device, x, y, z, pitch, slice_rows, width, height, depth, src,
			    whole);
		break;
	default:                      /* a CUDA array: no tensor's memory */
		break;
	}
}

static void add_2d(struct np_writes *w, const CUDA_MEMCPY2D *c)
{
	if (!c)
		return;
	add_dst(w, c->dstMemoryType, c->dstDevice, c->dstXInBytes, c->dstY, 0, c->dstPitch, 0,
		c->WidthInBytes, c->Height, 1,
		src_of(c->srcMemoryType, c->srcDevice, c->srcXInBytes, c->srcY, 0, c->srcPitch, 0),
		laid_alike(c->Height, 1, c->srcPitch, c->dstPitch, 0, 0));
}

static void add_3d(struct np_writes *w, const CUDA_MEMCPY3D *c)
{
	if (!c)
		return;
	add_dst(w, c->dstMemoryType, c->dstDevice, c->dstXInBytes, c->dstY, c->dstZ, c->dstPitch,
		c->dstHeight, c->WidthInBytes, c->Height, c->Depth,
		src_of(c->srcMemoryType, c->srcDevice, c->srcXInBytes, c->srcY, c->srcZ,
		       c->srcPitch, c->srcHeight),
		laid_alike(c->Height, c->Depth, c->srcPitch, c->dstPitch, c->srcHeight,
			   c->dstHeight));
}

static void add_3d_peer(struct np_writes *w, const CUDA_MEMCPY3D_PEER *c)
{
	if (!c)
		return;
	add_dst(w, c->dstMemoryType, c->dstDevice, c->dstXInBytes, c->dstY, c->dstZ, c->dstPitch,
		c->dstHeight, c->WidthInBytes, c->Height, c->Depth,
		src_of(c->srcMemoryType, c->srcDevice, c->srcXInBytes, c->srcY, c->srcZ,
		       c->srcPitch, c->srcHeight),
		laid_alike(c->Height, c->Depth, c->srcPitch, c->dstPitch, c->srcHeight,
			   c->dstHeight));
}

/* a batch's sources may be host or device addresses, unsaid: each is
 * passed on (a host address lies in no range the tracker knows) */
static void add_batch(struct np_writes *w, const CUdeviceptr *dsts, const CUdeviceptr *srcs,
		      const size_t *sizes, size_t count)
{
	if (!dsts || !sizes)
		return;
	for (size_t i = 0; i < count && !w->untold; i++)
		add_from(w, dsts[i], sizes[i], srcs ? srcs[i] : 0, 1);
}

/* A 3D batch's copies (cudaMemcpy3DBatchAsync): between pointers the
 * extent is in bytes, each operand's rows rowLength bytes apart (0:
 * packed, the width) and its layers layerHeight rows (0: the height).
 * Into an array: no tensor's memory.  From an array into a pointer the
 * extent is in the array's elements, whose size is not read: not told. */
static void add_3d_batch(struct np_writes *w, const CUDA_MEMCPY3D_BATCH_OP *ops, size_t count)
{
	if (!ops)
		return;
	for (size_t i = 0; i < count && !w->untold; i++) {
		const CUDA_MEMCPY3D_BATCH_OP *o = &ops[i];
		const CUextent3D *e = &o->extent;
		if (o->dst.type == CU_MEMCPY_OPERAND_TYPE_ARRAY)
			continue;
		if (o->dst.type != CU_MEMCPY_OPERAND_TYPE_POINTER ||
		    o->src.type != CU_MEMCPY_OPERAND_TYPE_POINTER) {
			w->untold = 1;
			return;
		}
		const CUmemcpy3DOperand *d = &o->dst, *s = &o->src;
		size_t pitch = d->op.ptr.rowLength ? d->op.ptr.rowLength : e->width;
		size_t rows = d->op.ptr.layerHeight ? d->op.ptr.layerHeight : e->height;
		size_t src_pitch = s->op.ptr.rowLength ? s->op.ptr.rowLength : e->width;
		size_t src_rows = s->op.ptr.layerHeight ? s->op.ptr.layerHeight : e->height;
		add_pitched(w, d->op.ptr.ptr, 0, 0, 0, pitch, rows, e->width, e->height, e->depth,
			    s->op.ptr.ptr,
			    laid_alike(e->height, e->depth, src_pitch, pitch, src_rows, rows));
	}
}

/* A memset of n elements of size bytes */
static void memset_1d(struct np_writes *w, CUdeviceptr dst, size_t n, size_t size)
{
	if (n > SIZE_MAX / size)
		w->untold = 1;
	else
		add(w, dst, n * size);
}

/* A 2D memset: height rows of width elements of size bytes, pitch bytes apart */
static void memset_2d(struct np_writes *w, CUdeviceptr dst, size_t pitch, size_t width,
		      size_t height, size_t size)
{
	if (width > SIZE_MAX / size)
		w->untold = 1;
	else
		add_pitched(w, dst, 0, 0, 0, pitch, 0, width * size, height, 1, 0, 0);
}

/* The stream of an asynchronous form; NULL for the others (the
 * synchronous forms' legacy or per-thread stream, as np_copy_args) */
static CUstream stream_of(CUpti_CallbackId cbid, const void *p)
{
#define S(type) return ((const type *)p)->hStream
	switch (cbid) {
	case D(cuMemcpyHtoDAsync_v2): case D(cuMemcpyHtoDAsync_v2_ptsz):
		S(cuMemcpyHtoDAsync_v2_params);
	case D(cuMemsetD8Async): case D(cuMemsetD8Async_ptsz):
		S(cuMemsetD8Async_params);
	case D(cuMemsetD16Async): case D(cuMemsetD16Async_ptsz):
		S(cuMemsetD16Async_params);
	case D(cuMemsetD32Async): case D(cuMemsetD32Async_ptsz):
		S(cuMemsetD32Async_params);
	case D(cuMemsetD2D8Async): case D(cuMemsetD2D8Async_ptsz):
		S(cuMemsetD2D8Async_params);
	case D(cuMemsetD2D16Async): case D(cuMemsetD2D16Async_ptsz):
		S(cuMemsetD2D16Async_params);
	case D(cuMemsetD2D32Async): case D(cuMemsetD2D32Async_ptsz):
		S(cuMemsetD2D32Async_params);
	case D(cuMemcpy2DAsync_v2): case D(cuMemcpy2DAsync_v2_ptsz):
		S(cuMemcpy2DAsync_v2_params);
	case D(cuMemcpy3DAsync_v2): case D(cuMemcpy3DAsync_v2_ptsz):
		S(cuMemcpy3DAsync_v2_params);
	case D(cuMemcpy3DPeerAsync): case D(cuMemcpy3DPeerAsync_ptsz):
		S(cuMemcpy3DPeerAsync_params);
	case D(cuMemcpyBatchAsync): case D(cuMemcpyBatchAsync_ptsz):
		S(cuMemcpyBatchAsync_params);
	case D(cuMemcpyBatchAsync_v2): case D(cuMemcpyBatchAsync_v2_ptsz):
		S(cuMemcpyBatchAsync_v2_params);
	case D(cuMemcpy3DBatchAsync): case D(cuMemcpy3DBatchAsync_ptsz):
		S(cuMemcpy3DBatchAsync_params);
	case D(cuMemcpy3DBatchAsync_v2): case D(cuMemcpy3DBatchAsync_v2_ptsz):
		S(cuMemcpy3DBatchAsync_v2_params);
	}
#undef S
	return NULL;
}

/* The parameter structs of a call's forms (_v2, _ptds, Async, _ptsz)
 * share their leading fields, the stream last: each is read through its
 * first form's. */
#define AS(type) const type *a = p

int np_driver_writes(CUpti_CallbackId cbid, const void *p, struct np_writes *w)
{
	memset(w, 0, sizeof(*w));
	w->stream = stream_of(cbid, p);
	switch (cbid) {
	case D(cuMemcpyHtoD_v2): case D(cuMemcpyHtoD_v2_ptds):
	case D(cuMemcpyHtoDAsync_v2): case D(cuMemcpyHtoDAsync_v2_ptsz): {
		AS(cuMemcpyHtoD_v2_params);
		add(w, a->dstDevice, a->ByteCount);
		return 0;
	}
	case D(cuMemsetD8_v2): case D(cuMemsetD8_v2_ptds):
	case D(cuMemsetD8Async): case D(cuMemsetD8Async_ptsz): {
		AS(cuMemsetD8_v2_params);
		memset_1d(w, a->dstDevice, a->N, 1);
		return 0;
	}
	case D(cuMemsetD16_v2): case D(cuMemsetD16_v2_ptds):
	case D(cuMemsetD16Async): case D(cuMemsetD16Async_ptsz): {
		AS(cuMemsetD16_v2_params);
		memset_1d(w, a->dstDevice, a->N, 2);
		return 0;
	}
	case D(cuMemsetD32_v2): case D(cuMemsetD32_v2_ptds):
	case D(cuMemsetD32Async): case D(cuMemsetD32Async_ptsz): {
		AS(cuMemsetD32_v2_params);
		memset_1d(w, a->dstDevice, a->N, 4);
		return 0;
	}
	case D(cuMemsetD2D8_v2): case D(cuMemsetD2D8_v2_ptds):
	case D(cuMemsetD2D8Async): case D(cuMemsetD2D8Async_ptsz): {
		AS(cuMemsetD2D8_v2_params);
		memset_2d(w, a->dstDevice, a->dstPitch, a->Width, a->Height, 1);
		return 0;
	}
	case D(cuMemsetD2D16_v2): case D(cuMemsetD2D16_v2_ptds):
	case D(cuMemsetD2D16Async): case D(cuMemsetD2D16Async_ptsz): {
		AS(cuMemsetD2D16_v2_params);
		memset_2d(w, a->dstDevice, a->dstPitch, a->Width, a->Height, 2);
		return 0;
	}
	case D(cuMemsetD2D32_v2): case D(cuMemsetD2D32_v2_ptds):
	case D(cuMemsetD2D32Async): case D(cuMemsetD2D32Async_ptsz): {
		AS(cuMemsetD2D32_v2_params);
		memset_2d(w, a->dstDevice, a->dstPitch, a->Width, a->Height, 4);
		return 0;
	}
	case D(cuMemcpy2D_v2): case D(cuMemcpy2D_v2_ptds):
	case D(cuMemcpy2DUnaligned_v2): case D(cuMemcpy2DUnaligned_v2_ptds):
	case D(cuMemcpy2DAsync_v2): case D(cuMemcpy2DAsync_v2_ptsz):
		add_2d(w, ((const cuMemcpy2D_v2_params *)p)->pCopy);
		return 0;
	case D(cuMemcpy3D_v2): case D(cuMemcpy3D_v2_ptds):
	case D(cuMemcpy3DAsync_v2): case D(cuMemcpy3DAsync_v2_ptsz):
		add_3d(w, ((const cuMemcpy3D_v2_params *)p)->pCopy);
		return 0;
	case D(cuMemcpy3DPeer): case D(cuMemcpy3DPeer_ptds):
	case D(cuMemcpy3DPeerAsync): case D(cuMemcpy3DPeerAsync_ptsz):
		add_3d_peer(w, ((const cuMemcpy3DPeer_params *)p)->pCopy);
		return 0;
	/* the first version has a failIdx more, after the fields read */
	case D(cuMemcpyBatchAsync): case D(cuMemcpyBatchAsync_ptsz):
	case D(cuMemcpyBatchAsync_v2): case D(cuMemcpyBatchAsync_v2_ptsz): {
		AS(cuMemcpyBatchAsync_v2_params);
		add_batch(w, a->dsts, a->srcs, a->sizes, a->count);
		return 0;
	}
	/* the first version has a failIdx more, after the fields read */
	case D(cuMemcpy3DBatchAsync): case D(cuMemcpy3DBatchAsync_ptsz):
	case D(cuMemcpy3DBatchAsync_v2): case D(cuMemcpy3DBatchAsync_v2_ptsz): {
		AS(cuMemcpy3DBatchAsync_v2_params);
		add_3d_batch(w, a->opList, a->numOps);
		return 0;
	}
	}
	return -1;
}
