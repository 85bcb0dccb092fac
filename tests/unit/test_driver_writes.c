/* test_driver_writes.c - cupti/driver_writes.c: the device ranges a copy
 * or memset the agent does not check writes, read from the parameter
 * structs CUPTI hands the callback.  Built with the CUDA toolkit's
 * headers (the structs are CUPTI's), so only where the agent has its GPU
 * side.  tests/fakecuda/fake_writes.c plays the common calls end to end;
 * here every form, the pitched extents' arithmetic and the limits. */
#include <criterion/criterion.h>
#include <string.h>
#include "../../cupti/driver_writes.h"

#define D(name) CUPTI_DRIVER_TRACE_CBID_##name

static struct np_writes w;

/* exactly one range, [lo, lo + bytes) */
static void one(uint64_t lo, uint64_t bytes)
{
	cr_assert_eq(w.n, 1, "ranges: %d", w.n);
	cr_expect_eq(w.lo[0], lo, "lo %#llx, want %#llx", (unsigned long long)w.lo[0],
		     (unsigned long long)lo);
	cr_expect_eq(w.hi[0], lo + bytes, "bytes %llu, want %llu",
		     (unsigned long long)(w.hi[0] - w.lo[0]), (unsigned long long)bytes);
	cr_expect(!w.to_host && !w.untold);
}

Test(driver_writes, other_calls_are_not_read)
{
	cuMemcpyDtoDAsync_v2_params p = { 0x1000, 0x2000, 64, NULL };
	cr_expect_eq(np_driver_writes(D(cuMemcpyDtoDAsync_v2), &p, &w), -1,
		     "a device copy of one range: np_copy_args's, checked");
	cr_expect_eq(np_driver_writes(D(cuLaunchKernel), &p, &w), -1);
}

Test(driver_writes, every_listed_call_is_read)
{
	/* params big enough for any form, all zero: nothing written */
	union {
		char bytes[256];
		void *align;
	} zero;
	memset(&zero, 0, sizeof(zero));
	for (size_t i = 0; i < np_write_ncbids; i++) {
		cuMemcpy2D_v2_params *pc = (void *)&zero;
		CUDA_MEMCPY3D_PEER c;   /* large enough for a 2D or 3D copy too */
		memset(&c, 0, sizeof(c));
		pc->pCopy = (const void *)&c;
		cr_expect_eq(np_driver_writes(np_write_cbids[i], &zero, &w), 0, "cbid %u",
			     (unsigned)np_write_cbids[i]);
		cr_expect_eq(w.n, 0, "cbid %u: nothing written", (unsigned)np_write_cbids[i]);
		pc->pCopy = NULL;
	}
}

Test(driver_writes, host_to_device_and_memsets)
{
	cuMemcpyHtoDAsync_v2_params h = { 0x10000, (void *)0x20, 100, NULL };
	np_driver_writes(D(cuMemcpyHtoDAsync_v2_ptsz), &h, &w);
	one(0x10000, 100);
	cuMemcpyHtoD_v2_params hs = { 0x10000, (void *)0x20, 7 };
	np_driver_writes(D(cuMemcpyHtoD_v2), &hs, &w);
	one(0x10000, 7);
	cuMemsetD8_v2_params m8 = { 0x4000, 0xff, 9 };
	np_driver_writes(D(cuMemsetD8_v2_ptds), &m8, &w);
	one(0x4000, 9);
	cuMemsetD16Async_params m16 = { 0x4000, 0x7c00, 10, NULL };
	np_driver_writes(D(cuMemsetD16Async), &m16, &w);
	one(0x4000, 20);
	cuMemsetD16_v2_params m16s = { 0x4000, 0x7c00, 3 };
	np_driver_writes(D(cuMemsetD16_v2), &m16s, &w);
	one(0x4000, 6);
	cuMemsetD32Async_params m32 = { 0x4000, 0x7f800000, 10, NULL };
	np_driver_writes(D(cuMemsetD32Async_ptsz), &m32, &w);
	one(0x4000, 40);
}

Test(driver_writes, memset_2d_spans_its_rows)
{
	/* Height rows of Width elements, dstPitch bytes apart: from the
	 * first byte to the last row's last */
	cuMemsetD2D8Async_params m8 = { 0x8000, 100, 1, 10, 4, NULL };
	np_driver_writes(D(cuMemsetD2D8Async), &m8, &w);
	one(0x8000, 3 * 100 + 10);
	cuMemsetD2D16_v2_params m16 = { 0x8000, 100, 1, 10, 4 };
	np_driver_writes(D(cuMemsetD2D16_v2_ptds), &m16, &w);
	one(0x8000, 3 * 100 + 20);
	cuMemsetD2D32Async_params m32 = { 0x8000, 256, 1, 8, 2, NULL };
	np_driver_writes(D(cuMemsetD2D32Async_ptsz), &m32, &w);
	one(0x8000, 256 + 32);
	cuMemsetD2D32_v2_params none = { 0x8000, 256, 1, 8, 0 };
	np_driver_writes(D(cuMemsetD2D32_v2), &none, &w);
	cr_expect_eq(w.n, 0, "no rows: nothing written");
}

Test(driver_writes, copy_2d_from_its_offsets)
{
	CUDA_MEMCPY2D c;
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_HOST, c.srcHost = (void *)0x100, c.srcPitch = 80;
	c.dstMemoryType = CU_MEMORYTYPE_DEVICE, c.dstDevice = 0x100000, c.dstPitch = 64;
	c.dstXInBytes = 16, c.dstY = 4, c.WidthInBytes = 16, c.Height = 2;
	cuMemcpy2DAsync_v2_params p = { &c, NULL };
	np_driver_writes(D(cuMemcpy2DAsync_v2), &p, &w);
	one(0x100000 + 4 * 64 + 16, 64 + 16);
	cuMemcpy2D_v2_params ps = { &c };
	np_driver_writes(D(cuMemcpy2DUnaligned_v2_ptds), &ps, &w);
	one(0x100000 + 4 * 64 + 16, 64 + 16);
	c.dstMemoryType = CU_MEMORYTYPE_UNIFIED;   /* the caller asks whose */
	np_driver_writes(D(cuMemcpy2D_v2), &ps, &w);
	one(0x100000 + 4 * 64 + 16, 64 + 16);
}

Test(driver_writes, copy_2d_to_the_host_or_an_array)
{
	CUDA_MEMCPY2D c;
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_DEVICE, c.srcDevice = 0x100000, c.srcPitch = 64;
	c.dstMemoryType = CU_MEMORYTYPE_HOST, c.dstHost = (void *)0x100, c.dstPitch = 16;
	c.WidthInBytes = 16, c.Height = 4;
	cuMemcpy2DAsync_v2_params p = { &c, NULL };
	np_driver_writes(D(cuMemcpy2DAsync_v2_ptsz), &p, &w);
	cr_expect_eq(w.n, 0);
	cr_expect(w.to_host, "a copy to the host said");
	c.dstMemoryType = CU_MEMORYTYPE_ARRAY, c.dstArray = (CUarray)0x5;
	np_driver_writes(D(cuMemcpy2DAsync_v2_ptsz), &p, &w);
	cr_expect(w.n == 0 && !w.to_host && !w.untold, "an array: no tensor's memory");
}

Test(driver_writes, copy_3d_over_its_slices)
{
	CUDA_MEMCPY3D c;
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_DEVICE, c.srcDevice = 0x900000, c.srcPitch = 64;
	c.dstMemoryType = CU_MEMORYTYPE_DEVICE, c.dstDevice = 0x100000;
	c.dstPitch = 64, c.dstHeight = 4;                 /* slices of 4 rows: 256 bytes */
	c.dstXInBytes = 8, c.dstY = 1, c.dstZ = 2;
	c.WidthInBytes = 16, c.Height = 2, c.Depth = 3;
	cuMemcpy3DAsync_v2_params p = { &c, NULL };
	np_driver_writes(D(cuMemcpy3DAsync_v2), &p, &w);
	/* from slice 2, row 1, byte 8; to slice 4, row 2, byte 24 */
	one(0x100000 + (2 * 4 + 1) * 64 + 8, (2 * 4 + 1) * 64 + 16);
	c.Depth = 1, c.dstHeight = 0;                     /* one slice: its height unused */
	c.dstZ = 0;
	cuMemcpy3D_v2_params ps = { &c };
	np_driver_writes(D(cuMemcpy3D_v2_ptds), &ps, &w);
	one(0x100000 + 64 + 8, 64 + 16);
}

Test(driver_writes, copy_3d_between_devices)
{
	CUDA_MEMCPY3D_PEER c;
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_DEVICE, c.srcDevice = 0x900000;
	c.dstMemoryType = CU_MEMORYTYPE_DEVICE, c.dstDevice = 0x200000;
	c.dstPitch = 128, c.dstHeight = 2, c.dstZ = 1;
	c.WidthInBytes = 128, c.Height = 2, c.Depth = 2;
	cuMemcpy3DPeerAsync_params p = { &c, NULL };
	np_driver_writes(D(cuMemcpy3DPeerAsync_ptsz), &p, &w);
	one(0x200000 + 2 * 128, 3 * 128 + 128);
}

Test(driver_writes, a_batch_each_copy)
{
	CUdeviceptr dsts[3] = { 0x1000, 0x5000, 0x9000 }, srcs[3] = { 1, 2, 3 };
	size_t sizes[3] = { 16, 0, 32 };
	cuMemcpyBatchAsync_v2_params p = { dsts, srcs, sizes, 3, NULL, NULL, 0, NULL };
	np_driver_writes(D(cuMemcpyBatchAsync_v2), &p, &w);
	cr_assert_eq(w.n, 2, "an empty copy writes nothing");
	cr_expect(w.lo[0] == 0x1000 && w.hi[0] == 0x1010);
	cr_expect(w.lo[1] == 0x9000 && w.hi[1] == 0x9020);
	cr_expect(!w.untold);
	cuMemcpyBatchAsync_params p1 = { dsts, srcs, sizes, 1, NULL, NULL, 0, NULL, NULL };
	np_driver_writes(D(cuMemcpyBatchAsync_ptsz), &p1, &w);
	one(0x1000, 16);
}

/* Where each range was copied from (the tracker follows a device
 * copy's source), and the call's stream */
Test(driver_writes, sources_and_streams)
{
	CUstream s = (CUstream)0x77;
	cuMemcpyHtoDAsync_v2_params h = { 0x10000, (void *)0x20, 100, s };
	np_driver_writes(D(cuMemcpyHtoDAsync_v2), &h, &w);
	cr_expect_eq(w.src[0], 0, "from the host: no source");
	cr_expect_eq(w.stream, s);
	cuMemcpyHtoD_v2_params hs = { 0x10000, (void *)0x20, 7 };
	np_driver_writes(D(cuMemcpyHtoD_v2), &hs, &w);
	cr_expect_eq(w.stream, NULL, "a synchronous form: no stream");
	cuMemsetD2D16Async_params m = { 0x30000, 64, 0, 8, 2, s };
	np_driver_writes(D(cuMemsetD2D16Async_ptsz), &m, &w);
	cr_expect(w.src[0] == 0 && w.stream == s, "a memset");

	CUDA_MEMCPY2D c;
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_DEVICE, c.srcDevice = 0x900000, c.srcPitch = 128;
	c.srcXInBytes = 8, c.srcY = 3;
	c.dstMemoryType = CU_MEMORYTYPE_DEVICE, c.dstDevice = 0x100000, c.dstPitch = 64;
	c.WidthInBytes = 16, c.Height = 2;
	cuMemcpy2DAsync_v2_params p2 = { &c, s };
	np_driver_writes(D(cuMemcpy2DAsync_v2_ptsz), &p2, &w);
	cr_expect_eq(w.src[0], 0x900000 + 3 * 128 + 8, "2D: its first source byte");
	cr_expect_eq(w.stream, s);
	c.srcMemoryType = CU_MEMORYTYPE_HOST, c.srcHost = (void *)0x900000;
	np_driver_writes(D(cuMemcpy2DAsync_v2), &p2, &w);
	cr_expect_eq(w.src[0], 0, "2D from the host");

	CUDA_MEMCPY3D c3;
	memset(&c3, 0, sizeof(c3));
	c3.srcMemoryType = CU_MEMORYTYPE_UNIFIED, c3.srcDevice = 0x900000;
	c3.srcPitch = 64, c3.srcHeight = 4, c3.srcXInBytes = 4, c3.srcY = 1, c3.srcZ = 2;
	c3.dstMemoryType = CU_MEMORYTYPE_DEVICE, c3.dstDevice = 0x100000;
	c3.dstPitch = 64, c3.dstHeight = 4, c3.WidthInBytes = 16, c3.Height = 1, c3.Depth = 1;
	cuMemcpy3DAsync_v2_params p3 = { &c3, s };
	np_driver_writes(D(cuMemcpy3DAsync_v2), &p3, &w);
	cr_expect_eq(w.src[0], 0x900000 + (2 * 4 + 1) * 64 + 4, "3D: slice, row and byte");
	c3.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	np_driver_writes(D(cuMemcpy3DAsync_v2), &p3, &w);
	cr_expect_eq(w.src[0], 0, "3D from an array");

	CUdeviceptr dsts[2] = { 0x1000, 0x9000 }, srcs[2] = { 0x5000, 0x6000 };
	size_t sizes[2] = { 16, 32 };
	cuMemcpyBatchAsync_v2_params pb = { dsts, srcs, sizes, 2, NULL, NULL, 0, s };
	np_driver_writes(D(cuMemcpyBatchAsync_v2), &pb, &w);
	cr_expect(w.src[0] == 0x5000 && w.src[1] == 0x6000, "a batch: each copy's");
	cr_expect_eq(w.stream, s);
	cuMemcpyBatchAsync_params pb1 = { dsts, srcs, sizes, 2, NULL, NULL, 0, NULL, s };
	np_driver_writes(D(cuMemcpyBatchAsync), &pb1, &w);
	cr_expect_eq(w.stream, s, "the first version: its stream after failIdx");
}

Test(driver_writes, more_than_it_tells_is_untold)
{
	CUdeviceptr dsts[NP_WRITES_MAX + 1], srcs[NP_WRITES_MAX + 1];
	size_t sizes[NP_WRITES_MAX + 1];
	for (int i = 0; i <= NP_WRITES_MAX; i++)
		dsts[i] = 0x1000 + 64 * (uint64_t)i, srcs[i] = 1, sizes[i] = 4;
	cuMemcpyBatchAsync_v2_params p = { dsts, srcs, sizes, NP_WRITES_MAX, NULL, NULL, 0, NULL };
	np_driver_writes(D(cuMemcpyBatchAsync_v2_ptsz), &p, &w);
	cr_expect(w.n == NP_WRITES_MAX && !w.untold, "%d copies: all told", NP_WRITES_MAX);
	p.count = NP_WRITES_MAX + 1;
	np_driver_writes(D(cuMemcpyBatchAsync_v2_ptsz), &p, &w);
	cr_expect(w.untold, "one more: not all told");
}

static CUmemcpy3DOperand pointer(CUdeviceptr p, size_t row_length, size_t layer_height)
{
	CUmemcpy3DOperand o;
	memset(&o, 0, sizeof(o));
	o.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
	o.op.ptr.ptr = p, o.op.ptr.rowLength = row_length, o.op.ptr.layerHeight = layer_height;
	return o;
}

/* Whether a copy's source maps onto its destination byte for byte (the
 * tracker then carries each dirty part of it to its place) */
Test(driver_writes, sources_laid_out_alike)
{
	CUDA_MEMCPY2D c;
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_DEVICE, c.srcDevice = 0x900000, c.srcPitch = 128;
	c.dstMemoryType = CU_MEMORYTYPE_DEVICE, c.dstDevice = 0x100000, c.dstPitch = 64;
	c.WidthInBytes = 16, c.Height = 2;
	cuMemcpy2D_v2_params p2 = { &c };
	np_driver_writes(D(cuMemcpy2D_v2), &p2, &w);
	cr_expect(!w.whole[0], "2D, rows apart otherwise: the first byte only");
	c.Height = 1;
	np_driver_writes(D(cuMemcpy2D_v2), &p2, &w);
	cr_expect(w.whole[0], "one row: alike whatever the pitches");
	c.Height = 2, c.srcPitch = 64;
	np_driver_writes(D(cuMemcpy2D_v2), &p2, &w);
	cr_expect(w.whole[0], "the same pitch");
	c.srcMemoryType = CU_MEMORYTYPE_HOST, c.srcHost = (void *)0x900000;
	np_driver_writes(D(cuMemcpy2D_v2), &p2, &w);
	cr_expect(!w.whole[0], "from the host: no source");

	CUDA_MEMCPY3D c3;
	memset(&c3, 0, sizeof(c3));
	c3.srcMemoryType = CU_MEMORYTYPE_DEVICE, c3.srcDevice = 0x900000;
	c3.srcPitch = 64, c3.srcHeight = 8;
	c3.dstMemoryType = CU_MEMORYTYPE_DEVICE, c3.dstDevice = 0x100000;
	c3.dstPitch = 64, c3.dstHeight = 4, c3.WidthInBytes = 16, c3.Height = 2, c3.Depth = 2;
	cuMemcpy3D_v2_params p3 = { &c3 };
	np_driver_writes(D(cuMemcpy3D_v2), &p3, &w);
	cr_expect(!w.whole[0], "3D, slices apart otherwise");
	c3.srcHeight = 4;
	np_driver_writes(D(cuMemcpy3D_v2), &p3, &w);
	cr_expect(w.whole[0], "3D, rows and slices alike");

	CUdeviceptr dsts[1] = { 0x1000 }, srcs[1] = { 0x5000 };
	size_t sizes[1] = { 16 };
	cuMemcpyBatchAsync_v2_params pb = { dsts, srcs, sizes, 1, NULL, NULL, 0, NULL };
	np_driver_writes(D(cuMemcpyBatchAsync_v2), &pb, &w);
	cr_expect(w.whole[0], "a batch's copies are 1D");

	CUDA_MEMCPY3D_BATCH_OP ops[2];
	memset(ops, 0, sizeof(ops));
	ops[0].dst = pointer(0x100000, 64, 4), ops[0].src = pointer(0x900000, 0, 0);
	ops[0].extent = (CUextent3D){ 16, 3, 2 };
	ops[1].dst = pointer(0x200000, 0, 0), ops[1].src = pointer(0x800000, 0, 0);
	ops[1].extent = (CUextent3D){ 32, 2, 1 };
	cuMemcpy3DBatchAsync_v2_params b = { 2, ops, 0, NULL };
	np_driver_writes(D(cuMemcpy3DBatchAsync_v2), &b, &w);
	cr_expect(!w.whole[0], "3D batch: pitched into packed");
	cr_expect(w.whole[1], "3D batch: packed at both ends");
}

/* cudaMemcpy3DBatchAsync: between pointers, extents in bytes */
Test(driver_writes, a_3d_batch_each_copy)
{
	CUDA_MEMCPY3D_BATCH_OP ops[3];
	memset(ops, 0, sizeof(ops));
	/* 2 layers of 3 rows of 16 bytes, rows 64 bytes apart, layers 4 rows */
	ops[0].dst = pointer(0x100000, 64, 4), ops[0].src = pointer(0x900000, 0, 0);
	ops[0].extent = (CUextent3D){ 16, 3, 2 };
	/* packed: rowLength and layerHeight 0 */
	ops[1].dst = pointer(0x200000, 0, 0), ops[1].src = pointer(0x800000, 0, 0);
	ops[1].extent = (CUextent3D){ 32, 2, 1 };
	/* into an array: no tensor's memory */
	ops[2].dst.type = CU_MEMCPY_OPERAND_TYPE_ARRAY, ops[2].src = pointer(0x700000, 0, 0);
	ops[2].extent = (CUextent3D){ 8, 1, 1 };
	CUstream s = (CUstream)0x55;
	cuMemcpy3DBatchAsync_v2_params b = { 3, ops, 0, s };
	np_driver_writes(D(cuMemcpy3DBatchAsync_v2_ptsz), &b, &w);
	cr_assert_eq(w.n, 2);
	cr_expect(!w.untold);
	cr_expect(w.lo[0] == 0x100000 && w.hi[0] == 0x100000 + (1 * 4 + 2) * 64 + 16,
		  "to layer 1, row 2: %#llx", (unsigned long long)w.hi[0]);
	cr_expect(w.lo[1] == 0x200000 && w.hi[1] == 0x200000 + 64, "packed");
	cr_expect(w.src[0] == 0x900000 && w.src[1] == 0x800000);
	cr_expect_eq(w.stream, s);
	/* the first version reads the same; its stream after failIdx */
	cuMemcpy3DBatchAsync_params b1 = { 1, ops, NULL, 0, s };
	np_driver_writes(D(cuMemcpy3DBatchAsync), &b1, &w);
	cr_expect(w.n == 1 && w.lo[0] == 0x100000 && w.stream == s);
	/* from an array into a pointer: its element size not read */
	ops[1].src.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
	np_driver_writes(D(cuMemcpy3DBatchAsync_v2), &b, &w);
	cr_expect(w.untold, "from an array: not told");
	cuMemcpy3DBatchAsync_v2_params none = { 1, NULL, 0, NULL };
	np_driver_writes(D(cuMemcpy3DBatchAsync_v2), &none, &w);
	cr_expect(w.n == 0 && !w.untold, "no operations");
}

Test(driver_writes, extents_that_overflow_are_untold)
{
	cuMemsetD32Async_params m = { 0x1000, 0, SIZE_MAX / 2, NULL };
	np_driver_writes(D(cuMemsetD32Async), &m, &w);
	cr_expect(w.untold && w.n == 0, "N * 4 overflows");
	cuMemcpyHtoDAsync_v2_params h = { UINT64_MAX - 8, NULL, 64, NULL };
	np_driver_writes(D(cuMemcpyHtoDAsync_v2), &h, &w);
	cr_expect(w.untold && w.n == 0, "past the address space");
	cuMemsetD2D32Async_params m2 = { 0x1000, SIZE_MAX / 2, 0, 4, 4, NULL };
	np_driver_writes(D(cuMemsetD2D32Async), &m2, &w);
	cr_expect(w.untold && w.n == 0, "rows * pitch overflows");
	CUDA_MEMCPY3D c;
	memset(&c, 0, sizeof(c));
	c.dstMemoryType = CU_MEMORYTYPE_DEVICE, c.dstDevice = 0x1000;
	c.dstPitch = 1 << 20, c.dstHeight = SIZE_MAX / 4, c.dstZ = 8;
	c.WidthInBytes = 4, c.Height = 1, c.Depth = 1;
	cuMemcpy3DAsync_v2_params p = { &c, NULL };
	np_driver_writes(D(cuMemcpy3DAsync_v2), &p, &w);
	cr_expect(w.untold && w.n == 0, "the offset overflows");
}
