/* test_kdecode_index.c - index_select's output, read from its TensorInfo
 * parameters (cupti/kdecode_index.c through np_kdecode_outputs), and
 * dropout's, whose kernels take TensorInfos too.
 *
 * The small kernel is torch 2.14.1's own (name and layout from
 * tests/unit/fixtures/torch_kernels.tsv); the large one, which an
 * embedding over more than 16 tokens runs, is not in the fixture: its
 * name and layout below follow the small one's and Indexing.cu's
 * signature.  Each launch is filled as index_select_out_cuda_impl fills
 * it: dst collapsed, its select dimension's size set to 1 (reduceDim). */
#include <stddef.h>
#include "fixture.h"
#include "../../cupti/kdecode.h"

struct tensor_info {            /* at::cuda::detail::TensorInfo<T, unsigned int> */
	uint64_t data;
	uint32_t sizes[25], strides[25];
	int32_t dims;
};
_Static_assert(sizeof(struct tensor_info) == 216, "torch 2.14.1's parameter size");

#define DST 0x7f0000100000ull
#define SRC 0x7f0000800000ull
#define IDX 0x7f0000900000ull

static struct np_kinfo ki;
static struct np_kparams layout;
static struct tensor_info dst, src, idx;
static struct {
	int32_t dst_dim, src_dim;
	uint32_t total, inner;
	int64_t src_dim_size;
} sc;

/* embedding(weight [1000, 64], 12 tokens) = weight.index_select(0, ids):
 * dst [12, 64] as the host leaves it, (1, 64) with strides (64, 1) */
static void fill(int n_idx)
{
	memset(&dst, 0xa5, sizeof(dst));
	dst.data = DST, dst.dims = 2;
	dst.sizes[0] = 1, dst.sizes[1] = 64;
	dst.strides[0] = 64, dst.strides[1] = 1;
	src = dst;
	src.data = SRC;
	memset(&idx, 0xa5, sizeof(idx));
	idx.data = IDX, idx.dims = 1, idx.sizes[0] = (uint32_t)n_idx, idx.strides[0] = 1;
	sc.dst_dim = sc.src_dim = 0;
	sc.src_dim_size = 1000;
}

static void setup(void)
{
	fixture_load();
	const struct kline *k = fixture_find("indexSelectSmallIndex<float, int, unsigned int");
	cr_assert_eq(np_kdecode_classify(k->dem, &ki), NP_KF_INDEX, "%s", k->dem);
	cr_assert_eq(np_kdecode_layout_parse(k->layout, &layout), 7);
	fill(12);
	sc.inner = 64;
}

static int decode_small(struct np_kbuf *out)
{
	void *kp[7] = { &dst, &src, &idx, &sc.dst_dim, &sc.src_dim, &sc.inner, &sc.src_dim_size };
	return np_kdecode_outputs(&ki, &layout, kp, NULL, out, NP_KD_MAX_OUTPUTS);
}

TestSuite(kdecode_index, .init = setup, .fini = fixture_unload);

Test(kdecode_index, an_embedding_lookup_writes_all_of_dst)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	cr_expect_eq(ki.dtype, NP_DT_F32);
	cr_expect_eq(ki.index.index_size, 4);
	cr_assert_eq(decode_small(out), 1);
	cr_expect_eq(out[0].ptr, DST);
	cr_expect_eq(out[0].numel, 12 * 64);
	cr_expect_eq(out[0].dtype, NP_DT_F32);
	cr_expect_eq(out[0].how, NP_KH_INDEX);
	cr_expect_eq(out[0].n_in, -1, "judged on the launch's words: the table, the ids");
	/* indices of any shape count by their elements: ids [3, 4] */
	idx.dims = 2, idx.sizes[0] = 3, idx.sizes[1] = 4, idx.strides[0] = 4;
	cr_assert_eq(decode_small(out), 1);
	cr_expect_eq(out[0].numel, 12 * 64);
}

Test(kdecode_index, what_the_host_would_not_launch_reads_nothing)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	sc.inner = 32;
	cr_expect_eq(decode_small(out), 0, "a slice of 32 in rows of 64");
	sc.inner = 64;
	dst.sizes[0] = 12;
	cr_expect_eq(decode_small(out), 0, "the select dimension not reduced to 1");
	dst.sizes[0] = 1, dst.strides[1] = 2;
	cr_expect_eq(decode_small(out), 0, "every other element: not one dense range");
	dst.strides[1] = 1, sc.dst_dim = 2;
	cr_expect_eq(decode_small(out), 0, "a select dimension past dst's");
	sc.dst_dim = 0, idx.sizes[0] = 0;
	cr_expect_eq(decode_small(out), 0, "no index");
	idx.sizes[0] = 12, dst.dims = 26;
	cr_expect_eq(decode_small(out), 0);
	dst.dims = 2, dst.data = 0x1000;
	cr_expect_eq(decode_small(out), 0, "not a device address");
	dst.data = DST;
	cr_expect_eq(decode_small(out), 1);
	layout.p[0].size = 416;
	cr_expect_eq(decode_small(out), 0, "a TensorInfo of another IndexType");
}

Test(kdecode_index, a_select_along_an_inner_dimension)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	/* x [8, 1000].index_select(1, 5 ids) -> dst [8, 5]: (8, 1), strides (5, 1) */
	fill(5);
	dst.sizes[0] = 8, dst.sizes[1] = 1;
	dst.strides[0] = 5, dst.strides[1] = 1;
	sc.dst_dim = 1, sc.inner = 8;
	cr_assert_eq(decode_small(out), 1);
	cr_expect_eq(out[0].numel, 40);
}

Test(kdecode_index, the_large_kernel_names_its_inner_size_by_its_major)
{
	static const char *const names[2] = {
		"void at::native::(anonymous namespace)::indexSelectLargeIndex<float, long, unsigned "
		"int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<float, unsigned int>, "
		"at::cuda::detail::TensorInfo<float const, unsigned int>, at::cuda::detail::"
		"TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long)",
		"void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, "
		"unsigned int, 2, 2, -2, false>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned "
		"int>, at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::"
		"detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, "
		"long)",
	};
	struct np_kinfo large;
	struct np_kparams l;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	uint32_t total = 3000 * 64, inner;
	cr_assert_eq(np_kdecode_layout_parse("0:216,216:216,432:216,648:4,652:4,656:4,660:4,664:8",
					     &l), 8);
	fill(3000);
	void *kp[8] = { &dst, &src, &idx, &sc.dst_dim, &sc.src_dim, &total, &inner,
			&sc.src_dim_size };
	for (int major = 1; major >= 0; major--) {
		cr_assert_eq(np_kdecode_classify(names[1 - major], &large), NP_KF_INDEX);
		cr_expect_eq(large.index.large, 1);
		cr_expect_eq(large.index.index_major, major);
		inner = major ? 64 : 3000;      /* sliceSize, or numIndices */
		cr_assert_eq(np_kdecode_outputs(&large, &l, kp, NULL, out, 4), 1, "major %d", major);
		cr_expect_eq(out[0].numel, 3000 * 64);
		cr_expect_eq(out[0].dtype, major ? NP_DT_F32 : NP_DT_BF16);
		inner = major ? 3000 : 64;
		cr_expect_eq(np_kdecode_outputs(&large, &l, kp, NULL, out, 4), 0,
			     "the other major's inner size");
		inner = major ? 64 : 3000;
		total = 3000 * 63;
		cr_expect_eq(np_kdecode_outputs(&large, &l, kp, NULL, out, 4), 0, "a wrong total");
		total = 3000 * 64;
	}
}

/* ---- dropout: fused_dropout_kernel[_vec](TensorInfo a, TensorInfo b,
 * TensorInfo mask, IndexType totalElements, acc p, PhiloxCudaState), as
 * fused_dropout_cuda launches it: every TensorInfo collapsed ---- */

static struct tensor_info din, dout, dmask;
static struct {
	uint32_t total;
	float p;
	unsigned char philox[32];
} dsc;

static void dropout_setup(void)
{
	fixture_load();
	const struct kline *k = fixture_find("fused_dropout_kernel_vec<float, float, unsigned int, "
					     "1, 4, bool>");
	cr_assert_eq(np_kdecode_classify(k->dem, &ki), NP_KF_DROPOUT, "%s", k->dem);
	cr_assert_eq(np_kdecode_layout_parse(k->layout, &layout), 6);
	cr_assert_eq(layout.p[0].size, sizeof(struct tensor_info));
	/* x [32, 256] contiguous, collapsed to one dimension of 8192 */
	memset(&din, 0xa5, sizeof(din));
	din.data = SRC, din.dims = 1, din.sizes[0] = 8192, din.strides[0] = 1;
	dout = din, dout.data = DST;
	dmask = din, dmask.data = IDX;
	dsc.total = 8192, dsc.p = 0.9f;
}

static int dropout_decode(struct np_kbuf *out)
{
	void *kp[6] = { &din, &dout, &dmask, &dsc.total, &dsc.p, dsc.philox };
	return np_kdecode_outputs(&ki, &layout, kp, NULL, out, NP_KD_MAX_OUTPUTS);
}

static int dropout_reads(struct np_kread *in)
{
	void *kp[6] = { &din, &dout, &dmask, &dsc.total, &dsc.p, dsc.philox };
	return np_kdecode_reads(&ki, &layout, kp, NULL, in, 4);
}

TestSuite(kdecode_dropout, .init = dropout_setup, .fini = fixture_unload);

Test(kdecode_dropout, all_of_its_output_and_its_input)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	struct np_kread in[4];
	cr_expect_eq(ki.dtype, NP_DT_F32);
	cr_assert_eq(dropout_decode(out), 1, "b; the bool mask is not checkable");
	cr_expect_eq(out[0].ptr, DST);
	cr_expect_eq(out[0].numel, 8192);
	cr_expect_eq(out[0].dtype, NP_DT_F32);
	cr_expect_eq(out[0].how, NP_KH_DROPOUT);
	cr_assert_eq(dropout_reads(in), 1, "a, for the generic tier (a GEMM's output)");
	cr_expect_eq(in[0].ptr, SRC);
	cr_expect_eq(in[0].numel, 8192);
}

Test(kdecode_dropout, strided_tensors_and_misreads)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	struct np_kread in[4];
	/* the strided kernel: a transposed [256, 32] view, two dimensions */
	din.dims = 2, din.sizes[0] = 256, din.sizes[1] = 32, din.strides[0] = 1;
	din.strides[1] = 256;
	dout = din, dout.data = DST;
	cr_assert_eq(dropout_decode(out), 1, "dense in another order: all of it");
	cr_expect_eq(out[0].numel, 8192);
	dout.strides[1] = 512;                  /* every other column of a wider tensor */
	cr_expect_eq(dropout_decode(out), 0, "gaps");
	dout = din, dout.data = DST, dsc.total = 4096;
	cr_expect_eq(dropout_decode(out), 0, "totalElements is not b's");
	dsc.total = 8192, din.strides[1] = 0;   /* a broadcast input */
	cr_expect_eq(dropout_decode(out), 1);
	cr_expect_eq(dropout_reads(in), 0, "its input not one range of 8192");
	layout.p[3].size = 8;
	cr_expect_eq(dropout_decode(out), 0, "IndexType's size");
}

Test(kdecode_dropout, the_other_instances)
{
	struct np_kinfo other;
	np_kdecode_classify(fixture_find("fused_dropout_kernel_vec<c10::BFloat16, float, unsigned "
					 "int, 1, 8, bool>")->dem, &other);
	cr_expect_eq(other.family, NP_KF_DROPOUT);
	cr_expect_eq(other.dtype, NP_DT_BF16);
	np_kdecode_classify(fixture_find("fused_dropout_kernel_vec<float, float, unsigned long, 1, "
					 "4, bool>")->dem, &other);
	cr_expect_eq(other.index.index_size, 8);
	np_kdecode_classify(fixture_find("fused_dropout_kernel<float, float, unsigned int, -1, -1, "
					 "bool>")->dem, &other);
	cr_expect_eq(other.family, NP_KF_DROPOUT);
}

