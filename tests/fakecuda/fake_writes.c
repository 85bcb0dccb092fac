/* fake_writes.c - copies and memsets the agent does not check
 * (cupti/driver_writes.h), each of one KIND, among torch's fill and add
 * and an opaque kernel, on one stream:
 *
 *   (1) fill y = 1 (4096 floats); KIND writes +inf into 8 floats of y;
 *       add a = y + y.  Deferred (NANPROF_GPU_DEFER=8), the fill's check
 *       waits: the write must launch it first, or it reads the +inf and
 *       the fill is named its birth.  The add is the birth (posinf=8).
 *   (2) fill the first 64 floats of y2; KIND writes +inf into 8 floats
 *       of y2 past them (where pitched, by its offsets); add b = y2 + y2.
 *       The write touches no waiting range: nothing launched for it.
 *       With ELSEWHERE, the write of (2) is instead
 *         host    a 2D copy of y2's rows to the host (what waits is
 *                 launched: the host may act on what it reads)
 *         many    a batch of 20 copies into y2 (more than the agent
 *                 reads of a batch: what waits is launched)
 *   (3) an opaque kernel (a C name, its pointers in a struct) writes
 *       z = 1: the generic tier notes z as its output; KIND writes +inf
 *       into z's first 16 floats; add c = z + z.  The write makes the
 *       note stale: else z would be checked at the add as the opaque
 *       kernel's output and the opaque kernel named the birth.  The
 *       add is (posinf=16).
 *
 * With after or follow, instead of (1)-(3), what a write does to the
 * origin tracker (dirty.h):
 *   (4) after   fill e = 1; KIND writes +inf into e[0..16); add f = e + e,
 *               the origin; KIND writes 1.0 over f[0..16), all finite
 *               again; fill q = 1, KIND writes +inf into 8 floats of q
 *               from 132; add g = f + q: a birth of its own (posinf=8,
 *               first_bad=132), not f's propagation
 *   (5) follow  (4)'s origin f; fill h = 1; KIND copies f[0..16) into
 *               h[0..16) from device memory; add r = h + h: f's
 *               propagation (posinf=16, first_bad=0), not a birth
 *   (6) slice   a flat buffer f of two tensors: fill f = 1; the origin
 *               an add of N/2 floats into f's second half (+inf at its
 *               0..15); fill h = 1; KIND copies f[N/2-8..N/2+8), 8 clean
 *               floats of the first tensor then 8 of the origin's, into
 *               h[0..16), a flat buffer alike; add r = h[8..16) +
 *               h[8..16), the second tensor's reader: the origin's
 *               propagation (posinf=8, first_bad=0), though the copy's
 *               first source byte is clean
 *   (7) whole   readers of whole buffers, handed their start, of a birth
 *               in a slice further in: (6)'s flat buffer f and origin;
 *               add r = f + f, all N floats: the origin's propagation
 *               (posinf=16, first_bad=N/2); t = f.sum() (reduce_kernel):
 *               its propagation too (posinf=1); fill h = 1; KIND copies
 *               (6)'s 16 floats into h[0..16); add s = h + h, all N:
 *               propagation too (posinf=8, first_bad=8; 5 ms later, or
 *               drain.h would not report the add's second propagation
 *               of the birth).  The tracker
 *               must judge an input over the extent its kernel reads,
 *               not at the word it is handed
 *
 * KIND: htod (cuMemcpyHtoDAsync), dtod (cuMemcpyDtoDAsync, from device
 * memory), memset (cuMemsetD32Async), memset2d (cuMemsetD2D32Async),
 * copy2d (cuMemcpy2DAsync from the host; follow: from device memory),
 * copy3d (cuMemcpy3DAsync from device memory), batch
 * (cuMemcpyBatchAsync; follow: from device memory), batch3d (copy3d's
 * copy as a cuMemcpy3DBatchAsync between pointers, from the host; follow:
 * from device memory).
 * tests/integration/test_gpu_fake.sh runs each and reads the records.
 *
 * With after or follow and then side, KIND's writes are on a second
 * stream with no checked launch after them (a batch loaded on a copy
 * stream), ordered by the host: told to the tracker before the result of
 * the main stream's reader that reads what they wrote.
 *
 *   fake_writes KIND [host|many|after|follow|slice|whole [side]]
 * Prints "fake_writes: checks=C check_launches=L faults=F" last. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fake_elementwise.h"
#include "fake_reduce.h"

#define N 4096

static const char opaque_name[] = "nvjet_fake_writes_opaque";

struct opaque_args {          /* a GEMM-like argument struct */
	int32_t m, n, k, ld;
	float *a, *c;
	char rest[64];
};

static CUfunction add, fill, opaque, sum;
static CUstream stream;
static CUstream side;         /* KIND's writes' stream when not stream (side) */
static float *inf_host;       /* N floats of +inf, host memory */
static CUdeviceptr inf_dev;   /* the same on the device */
static float *ones_host;      /* N floats of 1.0, host memory */
static CUdeviceptr ones_dev;  /* the same on the device */
static int failed;

static void must(CUresult r, const char *what)
{
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "fake_writes: %s failed: %d\n", what, (int)r);
		failed = 1;
	}
}

static void k_opaque(const void *a, unsigned grid, unsigned block)
{
	(void)grid, (void)block;
	const struct opaque_args *o = a;
	for (int i = 0; i < o->m * o->n; i++)
		o->c[i] = 1.0f;
}

static void launch_fill(CUdeviceptr out, int n)
{
	float one = 1.0f;
	char *d[1] = { (char *)out };
	void *p[] = { &n, &one, d };
	must(cuLaunchKernel(fill, 8, 1, 1, 128, 1, 1, 0, stream, p, NULL), "fill");
}

/* out = a + b over n floats (torch's add: out, self, other) */
static void launch_add_n(CUdeviceptr out, CUdeviceptr a, CUdeviceptr b, int n)
{
	float alpha = 1.0f;
	char *d[3] = { (char *)out, (char *)a, (char *)b };
	void *p[] = { &n, &alpha, d };
	must(cuLaunchKernel(add, 8, 1, 1, 128, 1, 1, 0, stream, p, NULL), "add");
}

static void launch_add2(CUdeviceptr out, CUdeviceptr a, CUdeviceptr b)
{
	launch_add_n(out, a, b, N);
}

static void launch_add(CUdeviceptr out, CUdeviceptr in)
{
	launch_add2(out, in, in);
}

static void launch_opaque(CUdeviceptr out)
{
	struct opaque_args o;
	memset(&o, 0, sizeof(o));
	o.m = 64, o.n = 64, o.k = 1, o.ld = 64;
	o.a = o.c = (float *)out;
	void *p[] = { &o };
	must(cuLaunchKernel(opaque, 4, 1, 1, 128, 1, 1, 0, stream, p, NULL), "opaque");
}

/* What KIND writes: from host (a copy from the host), from dev (from
 * device memory) or the pattern bits (a memset) */
struct source {
	const float *host;
	CUdeviceptr dev;
	uint32_t bits;
};

/* KIND writes source: in (1) and (2), 8 floats from float `at` of buf
 * (pitched kinds: two rows of 4, 16 floats apart, their first at `at`);
 * whole, the 16 floats from float `at` (pitched: two rows of 8) */
static void write_from(const char *kind, CUdeviceptr buf, size_t at, int whole,
		       struct source from)
{
	CUdeviceptr at_ptr = buf + at * 4;
	/* on the side stream: after what the main stream did, before what
	 * it does next (the host waits, as an event would order them) */
	CUstream ws = side ? side : stream;
	if (side)
		must(cuStreamSynchronize(stream), "cuStreamSynchronize");
	size_t count = whole ? 16 : 8;
	/* a whole write's rows are 8 floats, packed: its source's too */
	size_t src_pitch = whole ? 32 : 64;
	if (!strcmp(kind, "htod")) {
		must(cuMemcpyHtoDAsync(at_ptr, from.host, count * 4, ws), kind);
	} else if (!strcmp(kind, "dtod")) {
		must(cuMemcpyDtoDAsync(at_ptr, from.dev, count * 4, ws), kind);
	} else if (!strcmp(kind, "memset")) {
		must(cuMemsetD32Async(at_ptr, from.bits, count, ws), kind);
	} else if (!strcmp(kind, "memset2d")) {
		/* rows of 4 floats (whole: 8), 64 bytes (whole: 32) apart */
		must(cuMemsetD2D32Async(at_ptr, whole ? 32 : 64, from.bits, count / 2, 2, ws), kind);
	} else if (!strcmp(kind, "copy2d")) {
		/* from the host (from device memory when there is no host
		 * source); the destination at row at / 16, byte (at % 16) * 4
		 * of rows 64 bytes apart (whole: at `at`, rows 32 bytes apart) */
		CUDA_MEMCPY2D c;
		memset(&c, 0, sizeof(c));
		if (from.host)
			c.srcMemoryType = CU_MEMORYTYPE_HOST, c.srcHost = from.host;
		else
			c.srcMemoryType = CU_MEMORYTYPE_DEVICE, c.srcDevice = from.dev;
		c.srcPitch = src_pitch;
		c.dstMemoryType = CU_MEMORYTYPE_DEVICE, c.dstDevice = whole ? at_ptr : buf;
		c.dstPitch = whole ? 32 : 64;
		c.dstY = whole ? 0 : at / 16, c.dstXInBytes = whole ? 0 : (at % 16) * 4;
		c.WidthInBytes = count / 2 * 4, c.Height = 2;
		must(cuMemcpy2DAsync(&c, ws), kind);
	} else if (!strcmp(kind, "copy3d")) {
		/* from device memory; (1), (2): one row of 4 floats in each of
		 * two slices of 4 rows, the first at slice at / 64, row
		 * (at % 64) / 16 (rows 64 bytes apart: slices 16 floats x 4) */
		CUDA_MEMCPY3D c;
		memset(&c, 0, sizeof(c));
		c.srcMemoryType = CU_MEMORYTYPE_DEVICE, c.srcDevice = from.dev;
		c.srcPitch = src_pitch, c.srcHeight = whole ? 2 : 4;
		c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
		if (whole) {
			c.dstDevice = at_ptr, c.dstPitch = 32, c.dstHeight = 2;
			c.WidthInBytes = 32, c.Height = 2, c.Depth = 1;
		} else {
			c.dstDevice = buf, c.dstPitch = 64, c.dstHeight = 4;
			c.dstZ = at / 64, c.dstY = (at % 64) / 16, c.dstXInBytes = (at % 16) * 4;
			c.WidthInBytes = 16, c.Height = 1, c.Depth = 2;
		}
		must(cuMemcpy3DAsync(&c, ws), kind);
	} else if (!strcmp(kind, "batch3d")) {
		/* copy3d's, as one operation of a 3D batch between pointers:
		 * from `at`, rows of 4 floats (whole: 8) in 2 layers of 4 rows
		 * (whole: one layer of 2 rows), rows 64 bytes (whole: 32) apart */
		CUDA_MEMCPY3D_BATCH_OP op;
		memset(&op, 0, sizeof(op));
		op.dst.type = op.src.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
		op.dst.op.ptr.ptr = at_ptr;
		op.src.op.ptr.ptr = from.host ? (CUdeviceptr)from.host : from.dev;
		op.dst.op.ptr.rowLength = op.src.op.ptr.rowLength = src_pitch;
		op.dst.op.ptr.layerHeight = op.src.op.ptr.layerHeight = whole ? 2 : 4;
		op.extent = whole ? (CUextent3D){ 32, 2, 1 } : (CUextent3D){ 16, 1, 2 };
		op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
		must(cuMemcpy3DBatchAsync(1, &op, 0, ws), kind);
	} else if (!strcmp(kind, "batch")) {
		/* two copies of 4 floats (whole: 8), 16 floats (whole: 8) apart */
		size_t half = count / 2 * 4;
		CUdeviceptr src = from.host ? (CUdeviceptr)from.host : from.dev;
		CUdeviceptr dsts[2] = { at_ptr, at_ptr + (whole ? 32 : 64) };
		CUdeviceptr srcs[2] = { src, src + (from.host ? 0 : half) };
		size_t sizes[2] = { half, half };
		CUmemcpyAttributes attr;
		memset(&attr, 0, sizeof(attr));
		attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
		size_t idx = 0;
		must(cuMemcpyBatchAsync(dsts, srcs, sizes, 2, &attr, &idx, 1, ws), kind);
	} else {
		fprintf(stderr, "fake_writes: no kind %s\n", kind);
		exit(2);
	}
	if (side)
		must(cuStreamSynchronize(side), "cuStreamSynchronize");
}

static const uint32_t inf_bits = 0x7f800000u, one_bits = 0x3f800000u;

/* KIND writes +inf (see write_from) */
static void write_inf(const char *kind, CUdeviceptr buf, size_t at, int whole)
{
	write_from(kind, buf, at, whole, (struct source){ inf_host, inf_dev, inf_bits });
}

/* KIND writes 1.0 (see write_from) */
static void write_ones(const char *kind, CUdeviceptr buf, size_t at, int whole)
{
	write_from(kind, buf, at, whole, (struct source){ ones_host, ones_dev, one_bits });
}

/* (2) with ELSEWHERE */
static void write_elsewhere(const char *how, CUdeviceptr y2, float *host)
{
	if (!strcmp(how, "host")) {
		CUDA_MEMCPY2D c;
		memset(&c, 0, sizeof(c));
		c.srcMemoryType = CU_MEMORYTYPE_DEVICE, c.srcDevice = y2, c.srcPitch = 64;
		c.dstMemoryType = CU_MEMORYTYPE_HOST, c.dstHost = host, c.dstPitch = 16;
		c.WidthInBytes = 16, c.Height = 4;
		must(cuMemcpy2DAsync(&c, stream), "copy2d to the host");
	} else if (!strcmp(how, "many")) {
		CUdeviceptr dsts[20], srcs[20];
		size_t sizes[20];
		for (int i = 0; i < 20; i++)
			dsts[i] = y2 + (1024 + 16 * i) * 4, srcs[i] = (CUdeviceptr)host, sizes[i] = 4;
		CUmemcpyAttributes attr;
		memset(&attr, 0, sizeof(attr));
		attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
		size_t idx = 0;
		must(cuMemcpyBatchAsync(dsts, srcs, sizes, 20, &attr, &idx, 1, stream), "batch of 20");
	} else {
		fprintf(stderr, "fake_writes: no elsewhere %s\n", how);
		exit(2);
	}
}

/* (4) after an origin: a birth's output overwritten by KIND, then read
 * by a later birth */
static void after_an_origin(const char *kind, CUdeviceptr e, CUdeviceptr f, CUdeviceptr q,
			    CUdeviceptr g)
{
	launch_fill(e, N);
	write_inf(kind, e, 0, 1);
	launch_add(f, e);            /* the origin: f[0..16) = +inf */
	write_ones(kind, f, 0, 1);   /* f all finite again */
	launch_fill(q, N);
	write_inf(kind, q, 128 + 4, 0);
	launch_add2(g, f, q);        /* a birth of its own, at 132 */
}

/* (5) a copy of an origin's output: KIND copies it from device memory,
 * its reader is its propagation */
static void copy_of_an_origin(const char *kind, CUdeviceptr e, CUdeviceptr f, CUdeviceptr h,
			      CUdeviceptr r)
{
	launch_fill(e, N);
	write_inf(kind, e, 0, 1);
	launch_add(f, e);            /* the origin: f[0..16) = +inf */
	launch_fill(h, N);
	write_from(kind, h, 0, 1, (struct source){ NULL, f, 0 });
	launch_add(r, h);            /* r[0..16) = +inf, carried */
}

/* (6) a copy whose source starts in a clean tensor and ends in the
 * origin's output, the next tensor of the same buffer; its reader reads
 * the copy of the origin's tensor (the tracker looks up the pointers a
 * kernel is handed, not the extents it reads) */
static void copy_across_tensors(const char *kind, CUdeviceptr e, CUdeviceptr f, CUdeviceptr h,
				CUdeviceptr r)
{
	const size_t half = N / 2;
	launch_fill(f, N);
	launch_fill(e, N);
	write_inf(kind, e, 0, 1);
	launch_add_n(f + half * 4, e, e, (int)half);   /* the origin: f[half..half+16) */
	launch_fill(h, N);
	write_from(kind, h, 0, 1, (struct source){ NULL, f + (half - 8) * 4, 0 });
	launch_add_n(r, h + 8 * 4, h + 8 * 4, 8);      /* r[0..8) = +inf, carried */
}

/* (7) readers of whole buffers whose dirty slice lies past their start:
 * written in place by the origin, and copied */
static void readers_of_whole_buffers(const char *kind, CUdeviceptr e, CUdeviceptr f,
				     CUdeviceptr h, CUdeviceptr r, CUdeviceptr s, CUdeviceptr t)
{
	const size_t half = N / 2;
	launch_fill(f, N);
	launch_fill(e, N);
	write_inf(kind, e, 0, 1);
	launch_add_n(f + half * 4, e, e, (int)half);   /* the origin: f[half..half+16) */
	launch_add(r, f);                              /* r[half..half+16) = +inf */
	struct reduce_op op;
	fake_sum_op(&op, (const void *)f, (void *)t, N);
	void *p[] = { &op };
	must(cuLaunchKernel(sum, 1, 1, 1, 32, 16, 1, 0, stream, p, NULL), "sum");   /* t = +inf */
	/* the same kernel propagating the same birth is reported again
	 * only a gap of launch time later (drain.h) */
	struct timespec gap = { 0, 5 * 1000 * 1000 };
	nanosleep(&gap, NULL);
	launch_fill(h, N);
	write_from(kind, h, 0, 1, (struct source){ NULL, f + (half - 8) * 4, 0 });
	launch_add(s, h);                              /* s[8..16) = +inf, carried */
}

static void wait_for_agent(void)
{
	for (int i = 0; i < 400 && !fake_cuda_subscribed() && getenv("LD_PRELOAD"); i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: fake_writes KIND [host|many|after|follow|slice|whole [side]]\n");
		return 2;
	}
	const char *kind = argv[1], *elsewhere = argc > 2 ? argv[2] : NULL;
	CUdevice dev;
	CUcontext ctx;
	must(cuInit(0), "cuInit");
	must(cuDeviceGet(&dev, 0), "cuDeviceGet");
	must(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	must(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
	static const uint32_t op_off[] = { 0 }, op_size[] = { sizeof(struct opaque_args) };
	fake_register_add_fill(&add, &fill);
	sum = fake_register_sum();
	opaque = fake_cuda_register(opaque_name, 1, op_off, op_size, k_opaque, NULL);
	wait_for_agent();
	must(cuStreamCreate(&stream, 0), "cuStreamCreate");
	if (argc > 3 && !strcmp(argv[3], "side"))
		must(cuStreamCreate(&side, 0), "cuStreamCreate");

	CUdeviceptr y, y2, z, a, b, c;
	CUdeviceptr *bufs[] = { &y, &y2, &z, &a, &b, &c, &inf_dev, &ones_dev };
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		must(cuMemAlloc(bufs[i], N * sizeof(float)), "cuMemAlloc");
	inf_host = malloc(N * sizeof(float));
	ones_host = malloc(N * sizeof(float));
	float *back = calloc(N, sizeof(float));
	for (int i = 0; i < N; i++) {   /* the fake's device memory is the host's */
		inf_host[i] = INFINITY, ((float *)inf_dev)[i] = INFINITY;
		ones_host[i] = 1.0f, ((float *)ones_dev)[i] = 1.0f;
	}
	if (failed)
		return 1;

	if (elsewhere && (!strcmp(elsewhere, "after") || !strcmp(elsewhere, "follow") ||
			  !strcmp(elsewhere, "slice") || !strcmp(elsewhere, "whole"))) {
		/* y, y2, z, a (, b, c): e, f, h or q, r or g (, s, t) */
		if (!strcmp(elsewhere, "after"))
			after_an_origin(kind, y, y2, z, a);
		else if (!strcmp(elsewhere, "follow"))
			copy_of_an_origin(kind, y, y2, z, a);
		else if (!strcmp(elsewhere, "slice"))
			copy_across_tensors(kind, y, y2, z, a);
		else
			readers_of_whole_buffers(kind, y, y2, z, a, b, c);
		goto done;
	}
	/* (1) */
	launch_fill(y, N);
	write_inf(kind, y, 64 + 4, 0);
	launch_add(a, y);
	/* (2): past the fill's 64 floats (pitched: from row 4, slice 1) */
	launch_fill(y2, 64);
	if (elsewhere)
		write_elsewhere(elsewhere, y2, back);
	else
		write_inf(kind, y2, 64 + 4, 0);
	launch_add(b, y2);
	/* (3) */
	launch_opaque(z);
	write_inf(kind, z, 0, 1);
	launch_add(c, z);
done:
	must(cuStreamSynchronize(stream), "cuStreamSynchronize");

	/* the agent's drain thread polls every 0.5 ms: let it read the last */
	struct timespec ts = { 0, 300 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	struct fake_cuda_stats st;
	fake_cuda_stats(&st);
	printf("fake_writes: checks=%llu check_launches=%llu faults=%llu\n",
	       (unsigned long long)st.checks, (unsigned long long)st.check_launches,
	       (unsigned long long)st.faults);
	free(inf_host);
	free(ones_host);
	free(back);
	return failed;
}
