/* test_kdecode_norm.c - the row-sized outputs of cupti/kdecode_rows.c: layer
 * norm, RMSNorm, softmax and batch norm's kernels (channels-last
 * pointers, NCHW accessors) of torch 2.14 (their real names and
 * layouts, tests/unit/fixtures/torch_kernels.tsv) launched with known
 * arguments and grids.  Rows and columns are always different numbers,
 * and the grid's total blocks differ from gridDim.x, so a formula that
 * swaps them, or counts blocks, fails here. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../cupti/kdecode.h"

#include "fixture.h"

/* Pointer parameter i holds PTR(i). */
#define PTR(i) (0x7f0000300000ull + 0x1000ull * (i))

struct launch {
	struct np_kinfo ki;
	struct np_kparams l;
	unsigned char buf[1024];
	void *kp[NP_KD_MAX_PARAMS];
};

/* Finds the first fixture line whose demangled name contains sub, and
 * lays out its parameters: every 8-byte one PTR(i), everything else 0. */
static void setup(struct launch *ln, const char *sub)
{
	const struct kline *k = fixture_find(sub);
	np_kdecode_classify(k->dem, &ln->ki);
	cr_assert_gt(np_kdecode_layout_parse(k->layout, &ln->l), 0, "%s", k->dem);
	memset(ln->buf, 0, sizeof(ln->buf));
	for (int i = 0; i < ln->l.n; i++) {
		cr_assert_leq(ln->l.p[i].offset + ln->l.p[i].size, sizeof(ln->buf));
		ln->kp[i] = ln->buf + ln->l.p[i].offset;
		if (ln->l.p[i].size == 8)
			memcpy(ln->kp[i], &(uint64_t){ PTR(i) }, 8);
	}
}

static void set32(struct launch *ln, int i, int32_t v)
{
	cr_assert_eq(ln->l.p[i].size, 4, "param %d", i);
	memcpy(ln->kp[i], &v, 4);
}

static void set64(struct launch *ln, int i, int64_t v)
{
	cr_assert_eq(ln->l.p[i].size, 8, "param %d", i);
	memcpy(ln->kp[i], &v, 8);
}

static struct np_klaunch grid(uint32_t gx, uint32_t bx, uint32_t by)
{
	return (struct np_klaunch){ .threads = (uint64_t)gx * bx * by, .blocks = gx,
				    .grid = { gx, 1, 1 }, .block = { bx, by, 1 } };
}

static int decode(struct launch *ln, struct np_klaunch kl, struct np_kbuf *out)
{
	return np_kdecode_outputs(&ln->ki, &ln->l, ln->kp, &kl, out, NP_KD_MAX_OUTPUTS);
}

static void expect_out(const struct np_kbuf *b, int param, uint64_t numel, enum np_dtype dt)
{
	cr_expect_eq(b->ptr, PTR(param), "ptr %#llx, want param %d", (unsigned long long)b->ptr,
		     param);
	cr_expect_eq(b->numel, numel, "param %d: numel %llu, want %llu", param,
		     (unsigned long long)b->numel, (unsigned long long)numel);
	cr_expect_eq(b->dtype, dt, "param %d: dtype %d", param, b->dtype);
	cr_expect_eq(b->how, NP_KH_SIGNATURE);
}

/* vectorized_layer_norm_kernel(int N, float eps, X, gamma, beta, float* mean,
 * float* rstd, T* Y): Y rows x N, mean and rstd rows; rows = gridDim.x. */
TestSuite(kdecode_norm, .init = fixture_load, .fini = fixture_unload);

Test(kdecode_norm, vectorized_layer_norm)
{
	static struct launch ln;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];

	setup(&ln, "vectorized_layer_norm_kernel<c10::BFloat16, float, false>");
	cr_assert_eq(ln.ki.family, NP_KF_LAYER_NORM);
	set32(&ln, 0, 768);
	/* blockDim (32, 4): blocks != rows x anything but gridDim.x */
	cr_assert_eq(decode(&ln, grid(37, 32, 4), out), 3);
	expect_out(&out[0], 5, 37, NP_DT_F32);
	expect_out(&out[1], 6, 37, NP_DT_F32);
	expect_out(&out[2], 7, 37 * 768, NP_DT_BF16);

	/* N not a multiple of 4: the kernel would leave gaps, not PyTorch's
	 * launch: named, unsized */
	set32(&ln, 0, 770);
	cr_assert_eq(decode(&ln, grid(37, 32, 4), out), 3);
	for (int k = 0; k < 3; k++)
		cr_expect_eq(out[k].numel, 0);
	set32(&ln, 0, 768);
	/* a 2-D grid is not how torch launches it: unsized */
	struct np_klaunch kl = grid(37, 32, 4);
	kl.grid[1] = 2;
	kl.blocks = 74;
	cr_assert_eq(decode(&ln, kl, out), 3);
	cr_expect_eq(out[2].numel, 0);
	/* no grid known: unsized, as before */
	cr_assert_eq(np_kdecode_outputs(&ln.ki, &ln.l, ln.kp, NULL, out, 4), 3);
	cr_expect_eq(out[2].numel, 0);
}

Test(kdecode_norm, vectorized_rms_norm_writes_no_mean)
{
	static struct launch ln;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];

	setup(&ln, "vectorized_layer_norm_kernel<c10::Half, float, true>");
	set32(&ln, 0, 4096);
	cr_assert_eq(decode(&ln, grid(5, 32, 4), out), 2);
	expect_out(&out[0], 6, 5, NP_DT_F32);
	expect_out(&out[1], 7, 5 * 4096, NP_DT_F16);
}

Test(kdecode_norm, vectorized_double_is_never_launched)
{
	static struct launch ln;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];

	setup(&ln, "vectorized_layer_norm_kernel<double, double, true>");
	set32(&ln, 0, 64);
	cr_assert_eq(decode(&ln, grid(5, 32, 4), out), 3);
	for (int k = 0; k < 3; k++)
		cr_expect_eq(out[k].numel, 0);
}

/* RowwiseMomentsCUDAKernel(int64_t, int64_t N, float eps, X, float* mean,
 * float* rstd) and LayerNormForwardCUDAKernel(int64_t, int64_t N, X, mean,
 * rstd, gamma, beta, T* Y): the first int64_t is read by neither. */
Test(kdecode_norm, layer_norm_forward_two_kernels)
{
	static struct launch ln;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];

	setup(&ln, "RowwiseMomentsCUDAKernel<c10::Half, float, false>");
	set64(&ln, 0, 999);
	set64(&ln, 1, 1000);
	cr_assert_eq(decode(&ln, grid(11, 512, 1), out), 2);
	expect_out(&out[0], 4, 11, NP_DT_F32);
	expect_out(&out[1], 5, 11, NP_DT_F32);

	setup(&ln, "RowwiseMomentsCUDAKernel<float, float, true>");
	set64(&ln, 1, 1000);
	cr_assert_eq(decode(&ln, grid(11, 512, 1), out), 1, "RMSNorm: rstd only");
	expect_out(&out[0], 5, 11, NP_DT_F32);

	setup(&ln, "LayerNormForwardCUDAKernel<c10::BFloat16, float, false>");
	set64(&ln, 0, 999);
	set64(&ln, 1, 1000);
	cr_assert_eq(decode(&ln, grid(11, 256, 1), out), 1);
	expect_out(&out[0], 7, 11 * 1000, NP_DT_BF16);

	setup(&ln, "LayerNormForwardCUDAKernel<double, double, true>");
	set64(&ln, 1, 3);
	cr_assert_eq(decode(&ln, grid(7, 256, 1), out), 1);
	expect_out(&out[0], 7, 21, NP_DT_F64);
	set64(&ln, 1, 0);       /* an empty row: nothing known */
	cr_assert_eq(decode(&ln, grid(7, 256, 1), out), 1);
	cr_expect_eq(out[0].numel, 0);
}

/* layer_norm_grad_input_kernel[_vectorized](dY, X, mean, rstd, gamma, T* dX,
 * int N): dX rows x N. */
Test(kdecode_norm, layer_norm_grad_input)
{
	static const char *const subs[] = {
		"layer_norm_grad_input_kernel<c10::Half, float, false>",
		"layer_norm_grad_input_kernel<float, float, true>",
		"layer_norm_grad_input_kernel_vectorized<float, float, true>",
		"layer_norm_grad_input_kernel<double, double, true>",
	};
	static const enum np_dtype dts[] = { NP_DT_F16, NP_DT_F32, NP_DT_F32, NP_DT_F64 };
	static struct launch ln;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];

	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
		setup(&ln, subs[i]);
		set32(&ln, 6, 513);
		cr_assert_eq(decode(&ln, grid(9, 128, 1), out), 1, "%s", subs[i]);
		expect_out(&out[0], 5, 9 * 513, dts[i]);
	}
}

/* cunn_SoftMax* (out, in, [gradOutput,] classes): rows x classes. */
Test(kdecode_norm, cunn_softmax_block_per_row)
{
	static struct launch ln;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];

	setup(&ln, "cunn_SoftMaxForward<4, float, float, float,");
	set32(&ln, 2, 3000);
	cr_assert_eq(decode(&ln, grid(17, 1024, 1), out), 1);
	expect_out(&out[0], 0, 17 * 3000, NP_DT_F32);

	setup(&ln, "cunn_SoftMaxBackward<2, double,");
	set64(&ln, 3, 3001);    /* no vectors: any length */
	cr_assert_eq(decode(&ln, grid(17, 1024, 1), out), 1);
	expect_out(&out[0], 0, 17 * 3001, NP_DT_F64);

	/* Smem: ILP-wide vectors only, classes % ILP == 0 */
	setup(&ln, "cunn_SoftMaxForwardSmem<4, float, float, float,");
	set64(&ln, 2, 3000);
	cr_assert_eq(decode(&ln, grid(17, 1024, 1), out), 1);
	expect_out(&out[0], 0, 17 * 3000, NP_DT_F32);
	set64(&ln, 2, 3002);
	cr_assert_eq(decode(&ln, grid(17, 1024, 1), out), 1);
	cr_expect_eq(out[0].numel, 0);

	setup(&ln, "cunn_SoftMaxBackwardSmem<2, double,");
	set64(&ln, 3, 3002);
	cr_assert_eq(decode(&ln, grid(17, 1024, 1), out), 1);
	expect_out(&out[0], 0, 17 * 3002, NP_DT_F64);

	/* Reg<.., long, 1>: one element a thread, the block must span the row */
	setup(&ln, "cunn_SoftMaxForwardReg<float, float, float,");
	set64(&ln, 2, 700);
	cr_assert_eq(decode(&ln, grid(17, 704, 1), out), 1);
	expect_out(&out[0], 0, 17 * 700, NP_DT_F32);
	cr_assert_eq(decode(&ln, grid(17, 512, 1), out), 1);
	cr_expect_eq(out[0].numel, 0, "512 threads write 512 of 700");
}

/* softmax_warp_forward / backward: batch_size x element_count. */
Test(kdecode_norm, softmax_warp)
{
	static struct launch ln;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];

	/* <.., 7, false, false, 32>: 128 wide, warp 32, 2 rows a warp; torch
	 * launches (32, 4) threads, ceil(batch / 8) blocks */
	setup(&ln, "softmax_warp_forward<float, float, float, 7, false, false, 32>");
	cr_assert_eq(ln.ki.family, NP_KF_SOFTMAX);
	set32(&ln, 2, 1001);    /* batch_size */
	set32(&ln, 3, 100);     /* stride */
	set32(&ln, 4, 100);     /* element_count */
	cr_assert_eq(decode(&ln, grid(126, 32, 4), out), 1);
	expect_out(&out[0], 0, 1001 * 100, NP_DT_F32);
	/* a grid one block short leaves rows out: unsized */
	cr_assert_eq(decode(&ln, grid(125, 32, 4), out), 1);
	cr_expect_eq(out[0].numel, 0);
	/* rows strided wider than the row: gaps, unsized */
	set32(&ln, 3, 128);
	cr_assert_eq(decode(&ln, grid(126, 32, 4), out), 1);
	cr_expect_eq(out[0].numel, 0);
	set32(&ln, 3, 100);
	/* longer than the instance's 128: not all written */
	set32(&ln, 3, 129);
	set32(&ln, 4, 129);
	cr_assert_eq(decode(&ln, grid(126, 32, 4), out), 1);
	cr_expect_eq(out[0].numel, 0);
	set32(&ln, 3, 100);
	set32(&ln, 4, 100);
	/* a block 16 wide covers half of each row */
	cr_assert_eq(decode(&ln, grid(252, 16, 4), out), 1);
	cr_expect_eq(out[0].numel, 0);

	/* <.., 10, ..>: 1024 wide, 1 row a warp */
	setup(&ln, "softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 10, false, false, 32>");
	set32(&ln, 2, 9);
	set32(&ln, 3, 1000);
	set32(&ln, 4, 1000);
	cr_assert_eq(decode(&ln, grid(3, 32, 4), out), 1);
	expect_out(&out[0], 0, 9 * 1000, NP_DT_BF16);
	cr_assert_eq(decode(&ln, grid(2, 32, 4), out), 1);
	cr_expect_eq(out[0].numel, 0, "8 warps of 1 row cannot do 9 rows");

	/* <.., 0, ..>: 1 wide, warp 1 */
	setup(&ln, "softmax_warp_forward<float, float, float, 0, false, true, 32>");
	set32(&ln, 2, 300);
	set32(&ln, 3, 1);
	set32(&ln, 4, 1);
	cr_assert_eq(decode(&ln, grid(2, 1, 128), out), 1);
	expect_out(&out[0], 0, 300, NP_DT_F32);

	/* backward (gradInput, grad, output, batch, stride, elements, mask) */
	setup(&ln, "softmax_warp_backward<float, float, float, 7, false, false, 32>");
	set32(&ln, 3, 50);
	set32(&ln, 4, 77);
	set32(&ln, 5, 77);
	cr_assert_eq(decode(&ln, grid(7, 32, 4), out), 1);
	expect_out(&out[0], 0, 50 * 77, NP_DT_F32);
	setup(&ln, "softmax_warp_backward<float, c10::Half, float, 0, true, false, 32>");
	set32(&ln, 3, 50);
	set32(&ln, 4, 1);
	set32(&ln, 5, 1);
	cr_assert_eq(decode(&ln, grid(1, 1, 128), out), 1);
	expect_out(&out[0], 0, 50, NP_DT_F16);
}

/* A layout that does not fit the name: nothing. */
/* Batch norm's channels-last elementwise kernels: reduction_size rows of
 * stride channels, on a 2-D grid (channels on x, rows on y); whole only
 * when the x threads cover every channel. */
static struct np_klaunch grid2(uint32_t gx, uint32_t gy, uint32_t bx, uint32_t by)
{
	return (struct np_klaunch){ .threads = (uint64_t)gx * gy * bx * by, .blocks = gx * gy,
				    .grid = { gx, gy, 1 }, .block = { bx, by, 1 } };
}

Test(kdecode_norm, batch_norm_channels_last_elementwise)
{
	static struct launch ln;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	static const struct {
		const char *sub;
		int y, count;
		enum np_dtype dt;
	} k[] = {
		{ "batch_norm_transform_input_channels_last_kernel<float, float, float, 4>", 6, 7,
		  NP_DT_F32 },
		{ "batch_norm_transform_input_channels_last_kernel<double, double, double, 4>", 6,
		  7, NP_DT_F64 },
		{ "float const*, float const*, float*, float, int, int)", 7, 9, NP_DT_F32 },
		{ "float const*, int const*, float*, long, int, int)", 8, 10, NP_DT_F32 },
	};

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		setup(&ln, k[i].sub);
		cr_assert_eq(ln.ki.rows.kind, NP_KR_BN_CL, "%s", k[i].sub);
		set32(&ln, k[i].count, 300);        /* reduction_size: N*H*W */
		set32(&ln, k[i].count + 1, 24);     /* stride: channels */
		/* 24 channels on 1 x 32 threads, the rows on 10 x 4 */
		cr_assert_eq(decode(&ln, grid2(1, 10, 32, 4), out), 1, "%s", k[i].sub);
		expect_out(&out[0], k[i].y, 300 * 24, k[i].dt);
		/* channels the x threads do not reach: not the whole tensor */
		set32(&ln, k[i].count + 1, 40);
		cr_assert_eq(decode(&ln, grid2(1, 10, 32, 4), out), 1);
		cr_expect_eq(out[0].numel, 0, "%s: unsized", k[i].sub);
		cr_assert_eq(decode(&ln, grid2(2, 10, 32, 4), out), 1);
		expect_out(&out[0], k[i].y, 300 * 40, k[i].dt);
	}
}

/* Batch norm's NCHW kernels: a 3-D accessor (data, sizes, strides of
 * index_t) as the output, whole when its planes (size 1) are all below
 * gridDim.x and its strides are contiguous. */
static void set_acc(struct launch *ln, int i, uint64_t ptr, const int64_t size[3],
		    const int64_t stride[3], unsigned isz)
{
	cr_assert_eq(ln->l.p[i].size, 8 + 6 * isz, "param %d", i);
	memcpy(ln->kp[i], &ptr, 8);
	for (int k = 0; k < 6; k++) {
		int64_t v = k < 3 ? size[k] : stride[k - 3];
		int32_t v32 = (int32_t)v;
		memcpy((unsigned char *)ln->kp[i] + 8 + isz * k, isz == 4 ? (void *)&v32 : (void *)&v,
		       isz);
	}
}

Test(kdecode_norm, batch_norm_nchw_accessors)
{
	static struct launch ln;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	static const struct {
		const char *sub;
		int param;
		enum np_dtype dt;
	} k[] = {
		{ "batch_norm_transform_input_kernel<float, float, float, true, int>", 1, NP_DT_F32 },
		{ "batch_norm_transform_input_kernel<c10::Half, float, float, true, int>", 1,
		  NP_DT_F16 },
		{ "batch_norm_backward_elemt_kernel<float, float, float, int>", 7, NP_DT_F32 },
	};
	const int64_t size[3] = { 8, 16, 49 }, nchw[3] = { 16 * 49, 49, 1 };
	const int64_t strided[3] = { 16 * 64, 64, 1 };   /* rows padded: not one range */
	const uint64_t at = 0x7f0000900000ull;

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		setup(&ln, k[i].sub);
		cr_assert_eq(ln.ki.acc.isz, 4, "%s", k[i].sub);
		set_acc(&ln, k[i].param, at, size, nchw, 4);
		/* the host's grid: one block column per plane, batches on y */
		cr_assert_eq(decode(&ln, grid2(16, 4, 64, 1), out), 1, "%s", k[i].sub);
		cr_expect_eq(out[0].ptr, at);
		cr_expect_eq(out[0].numel, 8 * 16 * 49, "%s: numel %llu", k[i].sub,
			     (unsigned long long)out[0].numel);
		cr_expect_eq(out[0].dtype, k[i].dt);
		cr_expect_eq(out[0].how, NP_KH_ACCESSOR);
		/* planes past gridDim.x are not written */
		cr_assert_eq(decode(&ln, grid2(15, 4, 64, 1), out), 1);
		cr_expect_eq(out[0].numel, 0, "%s: unsized", k[i].sub);
		set_acc(&ln, k[i].param, at, size, strided, 4);
		cr_assert_eq(decode(&ln, grid2(16, 4, 64, 1), out), 1);
		cr_expect_eq(out[0].numel, 0, "%s: strided: unsized", k[i].sub);
		/* a dummy accessor (no such output) */
		set_acc(&ln, k[i].param, 0, size, nchw, 4);
		cr_expect_eq(decode(&ln, grid2(16, 4, 64, 1), out), 0);
	}
	/* int64_t indexing (a tensor past 2^31 elements): the same kernel with
	 * index_t long, whose accessor is 8 + 6 * 8 bytes */
	static struct np_kinfo ki;
	static struct np_kparams l = { .n = 7, .p = { { 0, 56 }, { 56, 56 }, { 112, 24 },
						       { 136, 24 }, { 160, 24 }, { 184, 24 },
						       { 208, 4 } } };
	np_kdecode_classify("void at::native::batch_norm_transform_input_kernel<float, float, "
			    "float, true, long>(A, B, C, D, E, F, float)", &ki);
	cr_expect_eq(ki.acc.isz, 8);
	cr_expect_eq(ki.acc.param, 1);
	ln.ki = ki;
	ln.l = l;
	memset(ln.buf, 0, sizeof(ln.buf));
	for (int i = 0; i < l.n; i++)
		ln.kp[i] = ln.buf + l.p[i].offset;
	set_acc(&ln, 1, at, size, nchw, 8);
	cr_assert_eq(decode(&ln, grid2(16, 4, 64, 1), out), 1);
	cr_expect_eq(out[0].numel, 8 * 16 * 49);
	/* an accessor of the wrong size for its index type: no output */
	ln.l.p[1].size = 32;
	cr_expect_eq(decode(&ln, grid2(16, 4, 64, 1), out), 0);
}

Test(kdecode_norm, layout_mismatch_gives_no_outputs)
{
	static struct launch ln;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];

	setup(&ln, "vectorized_layer_norm_kernel<float, float, false>");
	set32(&ln, 0, 64);
	ln.l.p[0].size = 8;     /* N as a long: not this kernel */
	cr_expect_eq(decode(&ln, grid(4, 32, 4), out), 0);
	ln.l.p[0].size = 4;
	ln.l.n--;               /* a parameter short */
	cr_expect_eq(decode(&ln, grid(4, 32, 4), out), 0);

	setup(&ln, "RowwiseMomentsCUDAKernel<float, float, false>");
	ln.l.p[1].size = 4;
	cr_expect_eq(decode(&ln, grid(4, 512, 1), out), 0);

	setup(&ln, "softmax_warp_forward<float, float, float, 7, false, false, 32>");
	ln.l.p[4].size = 8;
	cr_expect_eq(decode(&ln, grid(4, 32, 4), out), 0);

	setup(&ln, "batch_norm_transform_input_channels_last_kernel<float, float, float, 4>");
	ln.l.p[8].size = 8;     /* stride as a long: not this kernel */
	cr_expect_eq(decode(&ln, grid2(1, 10, 32, 4), out), 0);
}

/* The name, not the family, decides: a kernel named like none of the
 * above, or with another template, stays unsized. */
Test(kdecode_norm, other_names_stay_unsized)
{
	struct np_kinfo ki;

	np_kdecode_classify("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel"
			    "<float, float>(int, float, float const*, float const*, float const*, "
			    "float*, float*, float*)", &ki);
	cr_expect_eq(ki.family, NP_KF_LAYER_NORM);
	cr_expect_eq(ki.rows.kind, NP_KR_NONE, "no rms_norm argument: not the source read");
	np_kdecode_classify("void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel"
			    "Template<float, float, 32u, 1u, 8u, true, true>(long, long, "
			    "float const*, float const*, float const*, float const*, float*, float*)",
			    &ki);
	cr_expect_eq(ki.family, NP_KF_LAYER_NORM);
	cr_expect_eq(ki.rows.kind, NP_KR_NONE, "no rms_norm argument: not the source read");
	np_kdecode_classify("void at::native::(anonymous namespace)::ComputeBackwardFusedParams"
			    "CUDAKernel<float>(long, long, long, float const*, float const*, float "
			    "const*, float const*, float const*, float const*, float const*, float*, "
			    "float*)", &ki);
	cr_expect_eq(ki.rows.kind, NP_KR_NONE, "group norm's backward fused parameters");
	np_kdecode_classify("void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel"
			    "<float, float, float>(long, float, float const*, float*, float*, float*, "
			    "float*)", &ki);
	cr_expect_eq(ki.rows.kind, NP_KR_NONE, "group norm's statistics, a third type");
	np_kdecode_classify("void at::native::(anonymous namespace)::cunn_SpatialSoftMaxForward"
			    "<float, float, float, int, at::native::(anonymous namespace)::"
			    "SoftMaxForwardEpilogue>(float*, float const*, int, int, int)", &ki);
	cr_expect_eq(ki.family, NP_KF_SOFTMAX);
	cr_expect_eq(ki.rows.kind, NP_KR_NONE);
}

/* The generic tier's reads (np_kdecode_reads): a row kernel's rows x N
 * inputs, each of its own parameter's dtype, when the launch sizes the
 * rows; gamma, beta, mean, rstd and a mask are not rows x N. */
static int reads(struct launch *ln, struct np_klaunch kl, struct np_kread *in)
{
	return np_kdecode_reads(&ln->ki, &ln->l, ln->kp, &kl, in, 8);
}

static void expect_read(const struct np_kread *r, int param, uint64_t numel, enum np_dtype dt)
{
	cr_expect_eq(r->ptr, PTR(param), "ptr %#llx, want param %d", (unsigned long long)r->ptr,
		     param);
	cr_expect_eq(r->numel, numel, "param %d: numel %llu, want %llu", param,
		     (unsigned long long)r->numel, (unsigned long long)numel);
	cr_expect_eq(r->dtype, dt, "param %d: dtype %d", param, r->dtype);
}

Test(kdecode_norm, row_kernels_read_their_rows_x_n_inputs)
{
	static struct launch ln;
	struct np_kread in[8];

	setup(&ln, "vectorized_layer_norm_kernel<c10::BFloat16, float, false>");
	set32(&ln, 0, 768);
	cr_assert_eq(reads(&ln, grid(37, 32, 4), in), 1, "X, not gamma or beta");
	expect_read(&in[0], 2, 37 * 768, NP_DT_BF16);
	set32(&ln, 0, 770);     /* unsized rows: nothing read either */
	cr_expect_eq(reads(&ln, grid(37, 32, 4), in), 0);

	setup(&ln, "LayerNormForwardCUDAKernel<c10::BFloat16, float, false>");
	set64(&ln, 1, 1000);
	cr_assert_eq(reads(&ln, grid(11, 256, 1), in), 1);
	expect_read(&in[0], 2, 11 * 1000, NP_DT_BF16);

	setup(&ln, "RowwiseMomentsCUDAKernel<c10::Half, float, false>");
	set64(&ln, 1, 1000);
	cr_assert_eq(reads(&ln, grid(11, 512, 1), in), 1);
	expect_read(&in[0], 3, 11 * 1000, NP_DT_F16);

	setup(&ln, "layer_norm_grad_input_kernel<c10::Half, float, false>");
	set32(&ln, 6, 513);
	cr_assert_eq(reads(&ln, grid(9, 128, 1), in), 2, "dY and X");
	expect_read(&in[0], 0, 9 * 513, NP_DT_F16);
	expect_read(&in[1], 1, 9 * 513, NP_DT_F16);

	setup(&ln, "cunn_SoftMaxForward<4, float, float, float,");
	set32(&ln, 2, 3000);
	cr_assert_eq(reads(&ln, grid(17, 1024, 1), in), 1);
	expect_read(&in[0], 1, 17 * 3000, NP_DT_F32);

	setup(&ln, "cunn_SoftMaxBackward<2, double,");
	set64(&ln, 3, 3001);
	cr_assert_eq(reads(&ln, grid(17, 1024, 1), in), 2, "output and gradOutput");
	expect_read(&in[0], 1, 17 * 3001, NP_DT_F64);
	expect_read(&in[1], 2, 17 * 3001, NP_DT_F64);

	setup(&ln, "softmax_warp_forward<float, float, float, 7, false, false, 32>");
	set32(&ln, 2, 1001);
	set32(&ln, 3, 100);
	set32(&ln, 4, 100);
	cr_assert_eq(reads(&ln, grid(126, 32, 4), in), 1, "src; the mask is bool");
	expect_read(&in[0], 1, 1001 * 100, NP_DT_F32);
	cr_expect_eq(reads(&ln, grid(125, 32, 4), in), 0, "a grid a block short");

	/* backward <input_t float, output_t Half>: grad and output are input_t */
	setup(&ln, "softmax_warp_backward<float, c10::Half, float, 0, true, false, 32>");
	set32(&ln, 3, 50);
	set32(&ln, 4, 1);
	set32(&ln, 5, 1);
	cr_assert_eq(reads(&ln, grid(1, 1, 128), in), 2);
	expect_read(&in[0], 1, 50, NP_DT_F32);
	expect_read(&in[1], 2, 50, NP_DT_F32);

	/* batch norm's: batch_norm_elementwise_kernels_read_their_inputs */
	setup(&ln, "batch_norm_transform_input_channels_last_kernel");
	cr_expect_eq(ln.ki.rows.xin, 1, "x, reduction_size x stride");
}

/* The channels-last reductions, on the elementwise kernels' grid: each
 * output a row of `stride` channels (written by the column's last block
 * when the grid has several rows; the others leave partial results in
 * staging_data, which is no output); x (and dy) reduction_size x stride
 * are reads. */
Test(kdecode_norm, batch_norm_channels_last_reductions)
{
	static struct launch ln;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	struct np_kread in[8];

	setup(&ln, "batch_norm_collect_statistics_channels_last_kernel<at::native::Var, float,");
	cr_assert_eq(ln.ki.rows.kind, NP_KR_BN_CL_CHAN);
	set32(&ln, 5, 300);                     /* reduction_size */
	set32(&ln, 6, 24);                      /* stride: channels */
	cr_assert_eq(decode(&ln, grid2(1, 10, 32, 4), out), 2, "mean and invstd, not staging");
	expect_out(&out[0], 1, 24, NP_DT_F32);
	expect_out(&out[1], 2, 24, NP_DT_F32);
	cr_assert_eq(reads(&ln, grid2(1, 10, 32, 4), in), 1);
	expect_read(&in[0], 0, 300 * 24, NP_DT_F32);
	set32(&ln, 6, 40);                      /* channels the x threads do not reach */
	cr_assert_eq(decode(&ln, grid2(1, 10, 32, 4), out), 2);
	cr_expect_eq(out[0].numel, 0, "unsized");
	cr_expect_eq(reads(&ln, grid2(1, 10, 32, 4), in), 0);

	setup(&ln, "batch_norm_backward_reduce_channels_last_kernel<4, c10::Half, float, float>");
	cr_assert_eq(ln.ki.rows.kind, NP_KR_BN_CL_CHAN);
	set32(&ln, 10, 300);
	set32(&ln, 11, 24);
	cr_assert_eq(decode(&ln, grid2(1, 1, 32, 16), out), 4, "sum_dy, sum_dy_xmu, dw, db");
	for (int k = 0; k < 4; k++)
		expect_out(&out[k], 4 + k, 24, NP_DT_F32);
	cr_assert_eq(reads(&ln, grid2(1, 1, 32, 16), in), 2);
	expect_read(&in[0], 0, 300 * 24, NP_DT_F16);
	expect_read(&in[1], 1, 300 * 24, NP_DT_F16);
	/* no affine weight: grad_weight and grad_bias NULL */
	set64(&ln, 6, 0);
	set64(&ln, 7, 0);
	cr_expect_eq(decode(&ln, grid2(1, 1, 32, 16), out), 2);
}

/* batch_norm_collect_statistics_kernel<InvStd, input, stat, stat_acc,
 * index_t>(input, epsilon, momentum, save_mean, save_transformed_var):
 * one block per plane writes both statistics of its plane (1-D accessors
 * of stat_acc); its input, as transform_input's, is a read */
static void set_acc1(struct launch *ln, int i, uint64_t ptr, int32_t size, int32_t stride)
{
	cr_assert_eq(ln->l.p[i].size, 16, "param %d: a 1-D accessor of int", i);
	memcpy(ln->kp[i], &ptr, 8);
	memcpy((unsigned char *)ln->kp[i] + 8, &size, 4);
	memcpy((unsigned char *)ln->kp[i] + 12, &stride, 4);
}

Test(kdecode_norm, batch_norm_statistics)
{
	static struct launch ln;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	struct np_kread in[8];
	const int64_t size[3] = { 8, 16, 49 }, nchw[3] = { 16 * 49, 49, 1 };
	const uint64_t x = 0x7f0000900000ull, mean = 0x7f0000a00000ull, invstd = 0x7f0000a10000ull;

	setup(&ln, "batch_norm_collect_statistics_kernel<at::native::InvStd, c10::Half, c10::Half, "
		   "float, int>");
	cr_assert_eq(ln.ki.family, NP_KF_BATCH_NORM);
	cr_expect_eq(ln.ki.dtype, NP_DT_F32, "the statistics are stat_accscalar_t");
	cr_expect_eq(ln.ki.in_dtype, NP_DT_F16, "the input is input_scalar_t");
	set_acc(&ln, 0, x, size, nchw, 4);
	set_acc1(&ln, 3, mean, 16, 1);
	set_acc1(&ln, 4, invstd, 16, 1);
	/* the host's grid: a block per plane */
	cr_assert_eq(decode(&ln, grid2(16, 1, 32, 16), out), 2);
	cr_expect_eq(out[0].ptr, mean);
	cr_expect_eq(out[0].numel, 16);
	cr_expect_eq(out[0].dtype, NP_DT_F32);
	cr_expect_eq(out[1].ptr, invstd);
	cr_expect_eq(out[1].numel, 16);
	cr_assert_eq(reads(&ln, grid2(16, 1, 32, 16), in), 1);
	cr_expect_eq(in[0].ptr, x);
	cr_expect_eq(in[0].numel, 8 * 16 * 49);
	cr_expect_eq(in[0].dtype, NP_DT_F16);
	/* a block short: plane 15's statistics are not written */
	cr_assert_eq(decode(&ln, grid2(15, 1, 32, 16), out), 2);
	cr_expect_eq(out[0].numel, 0);
	cr_expect_eq(reads(&ln, grid2(15, 1, 32, 16), in), 0, "nor is plane 15 read");
	/* batch_norm_stats' mean only: save_transformed_var a dummy */
	set_acc1(&ln, 4, 0, 0, 0);
	cr_assert_eq(decode(&ln, grid2(16, 1, 32, 16), out), 1);
	cr_expect_eq(out[0].ptr, mean);
	set_acc1(&ln, 3, mean, 16, 2);          /* every other element of a wider tensor */
	cr_assert_eq(decode(&ln, grid2(16, 1, 32, 16), out), 1);
	cr_expect_eq(out[0].numel, 0, "strided: unsized");
}

/* batch_norm_backward_kernel<input, stat, stat_acc, index_t>(input,
 * grad_output, grad_input, grad_weight, grad_bias, weight, running_mean,
 * running_var, save_mean, save_invstd, train, epsilon): the fused NCHW
 * backward, a block per plane writing that plane of grad_input (a dummy
 * when not wanted) and its grad_weight and grad_bias element */
Test(kdecode_norm, batch_norm_fused_backward)
{
	static struct launch ln;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	struct np_kread in[8];
	const int64_t size[3] = { 8, 16, 49 }, nchw[3] = { 16 * 49, 49, 1 };
	const uint64_t x = 0x7f0000900000ull, dy = 0x7f0000980000ull, dx = 0x7f0000b00000ull,
		       dw = 0x7f0000a00000ull, db = 0x7f0000a10000ull;

	setup(&ln, "batch_norm_backward_kernel<float, float, float, int>");
	cr_assert_eq(ln.ki.family, NP_KF_BATCH_NORM);
	set_acc(&ln, 0, x, size, nchw, 4);
	set_acc(&ln, 1, dy, size, nchw, 4);
	set_acc(&ln, 2, dx, size, nchw, 4);
	set_acc1(&ln, 3, dw, 16, 1);
	set_acc1(&ln, 4, db, 16, 1);
	set_acc1(&ln, 5, PTR(5), 16, 1);        /* weight, running stats, saved ones: read */
	set_acc1(&ln, 8, PTR(8), 16, 1);
	set_acc1(&ln, 9, PTR(9), 16, 1);
	/* the host's grid: a block per plane, (tf, 512 / tf) threads */
	cr_assert_eq(decode(&ln, grid2(16, 1, 64, 8), out), 3);
	cr_expect_eq(out[0].ptr, dx);
	cr_expect_eq(out[0].numel, 8 * 16 * 49);
	cr_expect_eq(out[0].dtype, NP_DT_F32);
	cr_expect_eq(out[1].ptr, dw);
	cr_expect_eq(out[1].numel, 16);
	cr_expect_eq(out[2].ptr, db);
	cr_expect_eq(out[2].numel, 16);
	cr_expect_eq(out[2].dtype, NP_DT_F32);
	cr_assert_eq(reads(&ln, grid2(16, 1, 64, 8), in), 2, "x and dy");
	cr_expect_eq(in[0].ptr, x);
	cr_expect_eq(in[1].ptr, dy);
	cr_expect_eq(in[1].numel, 8 * 16 * 49);
	/* a block short: nothing whole */
	cr_assert_eq(decode(&ln, grid2(15, 1, 64, 8), out), 3);
	cr_expect(out[0].numel == 0 && out[1].numel == 0 && out[2].numel == 0);
	/* the first layer's: no grad_input, grad_weight and grad_bias still */
	set_acc(&ln, 2, 0, (const int64_t[3]){ 0, 0, 0 }, (const int64_t[3]){ 0, 0, 0 }, 4);
	cr_assert_eq(decode(&ln, grid2(16, 1, 64, 8), out), 2);
	cr_expect_eq(out[0].ptr, dw);
	cr_expect_eq(out[1].ptr, db);
	/* no affine weight: grad_weight and grad_bias dummies too */
	set_acc1(&ln, 3, 0, 0, 0);
	set_acc1(&ln, 4, 0, 0, 0);
	cr_expect_eq(decode(&ln, grid2(16, 1, 64, 8), out), 0);
	/* a 1-D accessor of another size: not this kernel's layout */
	ln.l.p[4].size = 24;
	cr_expect_eq(decode(&ln, grid2(16, 1, 64, 8), out), 0);
}

Test(kdecode_norm, batch_norm_elementwise_kernels_read_their_inputs)
{
	static struct launch ln;
	struct np_kread in[8];
	const int64_t size[3] = { 8, 16, 49 }, nchw[3] = { 16 * 49, 49, 1 };

	/* NCHW: transform reads x (param 0), backward_elemt x and dy (0, 1) */
	setup(&ln, "batch_norm_transform_input_kernel<c10::Half, float, float, true, int>");
	set_acc(&ln, 0, PTR(0), size, nchw, 4);
	set_acc(&ln, 1, PTR(1), size, nchw, 4);
	cr_assert_eq(reads(&ln, grid2(16, 4, 64, 1), in), 1);
	expect_read(&in[0], 0, 8 * 16 * 49, NP_DT_F16);
	setup(&ln, "batch_norm_backward_elemt_kernel<float, float, float, int>");
	set_acc(&ln, 0, PTR(0), size, nchw, 4);
	set_acc(&ln, 1, PTR(1), size, nchw, 4);
	cr_assert_eq(reads(&ln, grid2(16, 4, 64, 1), in), 2);
	expect_read(&in[1], 1, 8 * 16 * 49, NP_DT_F32);
	/* channels-last: x, reduction_size x stride */
	setup(&ln, "batch_norm_transform_input_channels_last_kernel<float, float, float, 4>");
	set32(&ln, 7, 300);
	set32(&ln, 8, 24);
	cr_assert_eq(reads(&ln, grid2(1, 10, 32, 4), in), 1);
	expect_read(&in[0], 0, 300 * 24, NP_DT_F32);
}

/* ---- torch 2.11 (the GPU test host's): the same rows, other names ---- */

TestSuite(kdecode_norm_torch_2_11, .init = fixture_load_2_11, .fini = fixture_unload);

Test(kdecode_norm_torch_2_11, layer_norm_forward_without_the_leading_int64)
{
	static struct launch ln;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];

	/* (int64_t N, T_ACC eps, X, T_ACC* mean, T_ACC* rstd) */
	setup(&ln, "RowwiseMomentsCUDAKernel<c10::Half, float, false>(long, float,");
	set64(&ln, 0, 1000);
	cr_assert_eq(decode(&ln, grid(11, 512, 1), out), 2);
	expect_out(&out[0], 3, 11, NP_DT_F32);
	expect_out(&out[1], 4, 11, NP_DT_F32);
	setup(&ln, "RowwiseMomentsCUDAKernel<float, float, true>(long, float,");
	set64(&ln, 0, 1000);
	cr_assert_eq(decode(&ln, grid(11, 512, 1), out), 1, "RMSNorm: rstd only");
	expect_out(&out[0], 4, 11, NP_DT_F32);
	/* group norm's RowwiseMomentsCUDAKernel<T>: the same rows, its mean
	 * and rstd of T (a group a row: N = D x HxW) */
	setup(&ln, "RowwiseMomentsCUDAKernel<c10::Half>(long, c10::Half,");
	set64(&ln, 0, 4 * 1024);
	cr_assert_eq(decode(&ln, grid(64, 512, 1), out), 2);
	expect_out(&out[0], 3, 64, NP_DT_F16);
	expect_out(&out[1], 4, 64, NP_DT_F16);
	/* its backward's internal sums: as torch 2.14's */
	setup(&ln, "ComputeInternalGradientsCUDAKernel<c10::BFloat16>(");
	set64(&ln, 0, 3136);
	cr_assert_eq(decode(&ln, grid(640, 256, 1), out), 2);
	expect_out(&out[0], 3, 640, NP_DT_F32);
	expect_out(&out[1], 4, 640, NP_DT_F32);

	/* (int64_t N, X, mean, rstd, gamma, beta, T* Y) */
	setup(&ln, "LayerNormForwardCUDAKernel<c10::BFloat16, float, false>(long, c10::BFloat16");
	set64(&ln, 0, 1000);
	cr_assert_eq(decode(&ln, grid(11, 256, 1), out), 1);
	expect_out(&out[0], 6, 11 * 1000, NP_DT_BF16);
}

Test(kdecode_norm_torch_2_11, softmax_warp_without_the_warp_size_parameter)
{
	static struct launch ln;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];

	/* <.., 0, false, true>: 1 wide, so a warp of 1 (min(1, C10_WARP_SIZE)) */
	setup(&ln, "softmax_warp_forward<float, float, float, 0, false, true>(");
	cr_assert_eq(ln.ki.rows.warp, 32);
	set32(&ln, 2, 300);
	set32(&ln, 3, 1);
	set32(&ln, 4, 1);
	cr_assert_eq(decode(&ln, grid(2, 1, 128), out), 1);
	expect_out(&out[0], 0, 300, NP_DT_F32);
	cr_assert_eq(decode(&ln, grid(2, 32, 4), out), 1);
	cr_expect_eq(out[0].numel, 0, "a warp of 32 is not this instance's");

	setup(&ln, "softmax_warp_backward<float, c10::Half, float, 0, true, false>(");
	set32(&ln, 3, 50);
	set32(&ln, 4, 1);
	set32(&ln, 5, 1);
	cr_assert_eq(decode(&ln, grid(1, 1, 128), out), 1);
	expect_out(&out[0], 0, 50, NP_DT_F16);
}

/* GammaBetaBackwardCUDAKernelTemplate<T, T_ACC, block_dim_x, block_dim_y,
 * rows_per_block_y, partial_reduction, aligned_grid, rms_norm>(M, N, dY,
 * X, mean, rstd, T* dg, T* db): layer norm's weight and bias gradients,
 * N columns each; with partial_reduction a row of N per thread row
 * (gridDim.y x block_dim_y rows); the RMSNorm instance writes no db.  dY
 * and X, M x N, are reads. */
Test(kdecode_norm, layer_norm_gamma_beta_backward)
{
	static struct launch ln;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	struct np_kread in[8];

	/* the full reduction of 32 x 32 blocks (M >= 256) */
	setup(&ln, "GammaBetaBackwardCUDAKernelTemplate<float, float, 32u, 32u, 256u, false, "
		   "false, false>");
	cr_assert_eq(ln.ki.rows.kind, NP_KR_GAMMA_BETA);
	set64(&ln, 0, 1000);    /* M */
	set64(&ln, 1, 770);     /* N: 25 blocks of 32 columns, the last partly */
	cr_assert_eq(decode(&ln, grid(25, 32, 32), out), 2, "dg and db");
	expect_out(&out[0], 6, 770, NP_DT_F32);
	expect_out(&out[1], 7, 770, NP_DT_F32);
	cr_assert_eq(reads(&ln, grid(25, 32, 32), in), 2, "dY and X, not mean or rstd");
	expect_read(&in[0], 2, 1000 * 770, NP_DT_F32);
	expect_read(&in[1], 3, 1000 * 770, NP_DT_F32);
	/* a grid a block short of N, or another block shape: not whole */
	cr_assert_eq(decode(&ln, grid(24, 32, 32), out), 2);
	cr_expect(out[0].numel == 0 && out[1].numel == 0);
	cr_expect_eq(reads(&ln, grid(24, 32, 32), in), 0);
	cr_assert_eq(decode(&ln, grid(25, 32, 16), out), 2);
	cr_expect_eq(out[0].numel, 0);
	/* several block rows of a full reduction still write N */
	cr_assert_eq(decode(&ln, grid2(25, 3, 32, 32), out), 2);
	cr_expect_eq(out[0].numel, 770);
	/* the bias's gradient not wanted: db NULL */
	set64(&ln, 7, 0);
	cr_assert_eq(decode(&ln, grid(25, 32, 32), out), 1);
	expect_out(&out[0], 6, 770, NP_DT_F32);

	setup(&ln, "GammaBetaBackwardCUDAKernelTemplate<c10::BFloat16, float, 32u, 16u, 128u, "
		   "false, true, false>");
	set64(&ln, 0, 200);
	set64(&ln, 1, 768);
	cr_assert_eq(decode(&ln, grid(24, 32, 16), out), 2);
	expect_out(&out[0], 6, 768, NP_DT_BF16);
	expect_out(&out[1], 7, 768, NP_DT_BF16);

	/* partial (M > 64K, N small): each thread row's sums, a row of N per
	 * block row, into dgamma_blocks (summed after by a reduce_kernel) */
	setup(&ln, "GammaBetaBackwardCUDAKernelTemplate<float, float, 32u, 1u, 32u, true, false, "
		   "false>");
	set64(&ln, 0, 100000);
	set64(&ln, 1, 100);
	cr_assert_eq(decode(&ln, grid2(4, 327, 32, 1), out), 2);
	expect_out(&out[0], 6, 327 * 100, NP_DT_F32);
	expect_out(&out[1], 7, 327 * 100, NP_DT_F32);
	cr_assert_eq(reads(&ln, grid2(4, 327, 32, 1), in), 2);
	expect_read(&in[1], 3, 100000ull * 100, NP_DT_F32);

	/* RMSNorm's: dg only, db is not written */
	setup(&ln, "GammaBetaBackwardCUDAKernelTemplate<c10::Half, float, 32u, 8u, 64u, false, "
		   "false, true>");
	cr_assert(ln.ki.rows.rms);
	set64(&ln, 0, 100);
	set64(&ln, 1, 64);
	cr_assert_eq(decode(&ln, grid(2, 32, 8), out), 1);
	expect_out(&out[0], 6, 64, NP_DT_F16);
	cr_assert_eq(reads(&ln, grid(2, 32, 8), in), 2);
	expect_read(&in[0], 2, 100 * 64, NP_DT_F16);

	/* M < 64: one thread row, the partial instance writing dg itself */
	setup(&ln, "GammaBetaBackwardCUDAKernelTemplate<float, float, 32u, 1u, 8u, true, true, "
		   "true>");
	set64(&ln, 0, 40);
	set64(&ln, 1, 96);
	cr_assert_eq(decode(&ln, grid(3, 32, 1), out), 1);
	expect_out(&out[0], 6, 96, NP_DT_F32);
}

/* batch_norm_backward_reduce_kernel<input, stat, stat_acc, index_t>(input,
 * grad_output, mean, invstd, sum_dy, sum_dy_xmu, grad_weight, grad_bias):
 * a block per plane writes the plane's sums (stat_acc) and weight
 * gradients (stat) of those whose size is not 0; mean and invstd are
 * only read; input and grad_output are reads */
Test(kdecode_norm, batch_norm_backward_reduce)
{
	static struct launch ln;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	struct np_kread in[8];
	const int64_t size[3] = { 8, 16, 49 }, nchw[3] = { 16 * 49, 49, 1 };
	const uint64_t x = 0x7f0000900000ull, dy = 0x7f0000980000ull;

	setup(&ln, "batch_norm_backward_reduce_kernel<c10::Half, float, float, int>");
	cr_assert_eq(ln.ki.family, NP_KF_BATCH_NORM);
	set_acc(&ln, 0, x, size, nchw, 4);
	set_acc(&ln, 1, dy, size, nchw, 4);
	for (int p = 2; p < 8; p++)
		set_acc1(&ln, p, PTR(p), 16, 1);
	cr_assert_eq(decode(&ln, grid2(16, 1, 64, 8), out), 4,
		     "sum_dy, sum_dy_xmu, grad_weight, grad_bias; not mean, invstd");
	for (int k = 0; k < 4; k++) {
		cr_expect_eq(out[k].ptr, PTR(4 + k));
		cr_expect_eq(out[k].numel, 16);
		cr_expect_eq(out[k].dtype, NP_DT_F32);
	}
	cr_assert_eq(reads(&ln, grid2(16, 1, 64, 8), in), 2, "input and grad_output");
	cr_expect_eq(in[0].ptr, x);
	cr_expect_eq(in[1].ptr, dy);
	cr_expect_eq(in[1].numel, 8 * 16 * 49);
	cr_expect_eq(in[1].dtype, NP_DT_F16);
	/* a block short of the planes: unsized */
	cr_assert_eq(decode(&ln, grid2(15, 1, 64, 8), out), 4);
	cr_expect_eq(out[0].numel, 0);
	/* SyncBatchNorm without an affine weight: only the sums */
	set_acc1(&ln, 6, 0, 0, 0);
	set_acc1(&ln, 7, 0, 0, 0);
	cr_assert_eq(decode(&ln, grid2(16, 1, 64, 8), out), 2);
	cr_expect_eq(out[1].ptr, PTR(5));

	/* the weight gradients of their own type: a Half batch norm with Half
	 * weights (the template arguments decide, the accessors' layout is
	 * the same) */
	const char *dem = fixture_find("batch_norm_backward_reduce_kernel<c10::Half, float, "
				       "float, int>")->dem;
	const char *targs = strstr(dem, "<c10::Half, float, float, int>");
	char half[4096];
	cr_assert(targs && strlen(dem) < sizeof(half) - 16);
	snprintf(half, sizeof(half), "%.*s<c10::Half, c10::Half, float, int>%s",
		 (int)(targs - dem), dem, targs + strlen("<c10::Half, float, float, int>"));
	np_kdecode_classify(half, &ln.ki);
	cr_expect_eq(ln.ki.acc.plane_dtype, NP_DT_F16, "grad_weight, grad_bias: stat");
	cr_expect_eq(ln.ki.acc.plane2_dtype, NP_DT_F32, "sum_dy, sum_dy_xmu: stat_acc");
	cr_assert_eq(decode(&ln, grid2(16, 1, 64, 8), out), 2);
	cr_expect_eq(out[0].dtype, NP_DT_F32);
	set_acc1(&ln, 6, PTR(6), 16, 1);
	cr_assert_eq(decode(&ln, grid2(16, 1, 64, 8), out), 3);
	cr_expect_eq(out[2].ptr, PTR(6));
	cr_expect_eq(out[2].dtype, NP_DT_F16);
}

/* torch 2.11 instantiates partial_reduction both ways for every tile
 * shape; its kernels are 2.14's, the same template and layout */
Test(kdecode_norm_torch_2_11, layer_norm_gamma_beta_backward)
{
	static struct launch ln;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];

	setup(&ln, "GammaBetaBackwardCUDAKernelTemplate<float, float, 32u, 32u, 256u, false, "
		   "false, false>");
	set64(&ln, 0, 1000);
	set64(&ln, 1, 770);
	cr_assert_eq(decode(&ln, grid(25, 32, 32), out), 2);
	expect_out(&out[0], 6, 770, NP_DT_F32);
	setup(&ln, "GammaBetaBackwardCUDAKernelTemplate<c10::Half, float, 32u, 8u, 64u, false, "
		   "false, true>");
	set64(&ln, 0, 100);
	set64(&ln, 1, 64);
	cr_assert_eq(decode(&ln, grid(2, 32, 8), out), 1, "RMSNorm: dg only");
	expect_out(&out[0], 6, 64, NP_DT_F16);
}

/* group norm's GammaBeta[1d]BackwardCUDAKernel1/2<T>(N, C, group, ..., T*
 * dgamma, T* dbeta): C each when the grid's x threads cover C, the tiled
 * Kernel2 only with blockDim.x == 2 * blockDim.y (its writes come from
 * the thread rows); the 1d forms' dY and X (N x C) are reads */
Test(kdecode_norm, group_norm_gamma_beta_backward)
{
	static struct launch ln;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	struct np_kread in[8];

	setup(&ln, "GammaBetaBackwardCUDAKernel2<c10::BFloat16>");
	cr_assert_eq(ln.ki.rows.kind, NP_KR_GN_GAMMA_BETA);
	set64(&ln, 0, 300);     /* N: more than 128, the tiled kernel */
	set64(&ln, 1, 70);      /* C: 3 tiles of 32 */
	set64(&ln, 2, 7);
	cr_assert_eq(decode(&ln, grid(3, 32, 16), out), 2, "dgamma and dbeta");
	expect_out(&out[0], 7, 70, NP_DT_BF16);
	expect_out(&out[1], 8, 70, NP_DT_BF16);
	cr_expect_eq(reads(&ln, grid(3, 32, 16), in), 0, "ds and db: the type is not named");
	/* a tile its thread rows do not cover, or a grid short of C */
	cr_assert_eq(decode(&ln, grid(3, 32, 8), out), 2);
	cr_expect_eq(out[0].numel, 0);
	cr_assert_eq(decode(&ln, grid(2, 32, 16), out), 2);
	cr_expect_eq(out[0].numel, 0);
	set64(&ln, 8, 0);       /* no bias gradient wanted */
	cr_assert_eq(decode(&ln, grid(3, 32, 16), out), 1);
	expect_out(&out[0], 7, 70, NP_DT_BF16);

	setup(&ln, "GammaBeta1dBackwardCUDAKernel1<float>");
	cr_assert_eq(ln.ki.family, NP_KF_LAYER_NORM);
	set64(&ln, 0, 100);
	set64(&ln, 1, 300);
	set64(&ln, 2, 30);
	cr_assert_eq(decode(&ln, grid(2, 256, 1), out), 2);
	expect_out(&out[0], 7, 300, NP_DT_F32);
	expect_out(&out[1], 8, 300, NP_DT_F32);
	cr_assert_eq(reads(&ln, grid(2, 256, 1), in), 2, "dY and X, not mean or rstd");
	expect_read(&in[0], 3, 100 * 300, NP_DT_F32);
	expect_read(&in[1], 4, 100 * 300, NP_DT_F32);
	cr_assert_eq(decode(&ln, grid(1, 256, 1), out), 2);
	cr_expect_eq(out[1].numel, 0, "one block of 256 short of C");

	setup(&ln, "GammaBeta1dBackwardCUDAKernel2<c10::Half>");
	set64(&ln, 0, 200);
	set64(&ln, 1, 64);
	set64(&ln, 2, 8);
	cr_assert_eq(decode(&ln, grid(2, 32, 16), out), 2);
	expect_out(&out[1], 8, 64, NP_DT_F16);
	cr_assert_eq(reads(&ln, grid(2, 32, 16), in), 2);
	expect_read(&in[0], 3, 200 * 64, NP_DT_F16);
}

/* Group norm (group_norm_kernel.cu, torch 2.14): a row per block, N x G
 * rows of D x HxW for the statistics, N x C rows of HxW for the
 * backward's internal sums. */
Test(kdecode_norm, group_norm_statistics_and_internal_gradients)
{
	static struct launch ln;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	struct np_kread in[8];

	/* RowwiseMomentsCUDAKernel<T, T_ACC>(int64_t N, T eps, X, T* mean,
	 * T* rstd, T_ACC* mean_acc, T_ACC* rstd_acc): the T_ACC copies too
	 * when the types differ */
	setup(&ln, "RowwiseMomentsCUDAKernel<c10::Half, float>(long, c10::Half");
	cr_expect_eq(ln.ki.rows.kind, NP_KR_GN);
	set64(&ln, 0, 8 * 1024);
	cr_assert_eq(decode(&ln, grid(96, 512, 1), out), 4);
	expect_out(&out[0], 3, 96, NP_DT_F16);
	expect_out(&out[1], 4, 96, NP_DT_F16);
	expect_out(&out[2], 5, 96, NP_DT_F32);
	expect_out(&out[3], 6, 96, NP_DT_F32);
	cr_assert_eq(reads(&ln, grid(96, 512, 1), in), 1);
	expect_read(&in[0], 2, 96 * 8 * 1024, NP_DT_F16);
	/* T == T_ACC: the copies are left as they are, not written */
	setup(&ln, "RowwiseMomentsCUDAKernel<float, float>(long, float, float const*, float*, "
		   "float*, float*, float*)");
	set64(&ln, 0, 8 * 1024);
	cr_assert_eq(decode(&ln, grid(96, 512, 1), out), 2);
	expect_out(&out[0], 3, 96, NP_DT_F32);
	expect_out(&out[1], 4, 96, NP_DT_F32);
	/* a 2-D grid is no host's launch of it */
	struct np_klaunch kl = grid(96, 512, 1);
	kl.grid[1] = 2;
	cr_assert_eq(decode(&ln, kl, out), 2);
	cr_expect_eq(out[0].numel, 0, "unsized");

	/* ComputeInternalGradientsCUDAKernel<T>(int64_t HxW, dY, X, T_ACC* ds,
	 * T_ACC* db): ds and db a row each; dY and X rows x HxW */
	setup(&ln, "ComputeInternalGradientsCUDAKernel<c10::BFloat16>(");
	set64(&ln, 0, 3136);
	cr_assert_eq(decode(&ln, grid(640, 256, 1), out), 2);
	expect_out(&out[0], 3, 640, NP_DT_F32);
	expect_out(&out[1], 4, 640, NP_DT_F32);
	cr_assert_eq(reads(&ln, grid(640, 256, 1), in), 2, "dY and X");
	expect_read(&in[0], 1, 640 * 3136, NP_DT_BF16);
	expect_read(&in[1], 2, 640 * 3136, NP_DT_BF16);
	set64(&ln, 0, 0);        /* no rows: unsized */
	cr_assert_eq(decode(&ln, grid(640, 256, 1), out), 2);
	cr_expect_eq(out[0].numel, 0);
}
