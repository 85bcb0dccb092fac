/* test_kdecode.c - cupti/kdecode.c on real torch 2.14 kernel names and
 * parameter layouts (tests/unit/fixtures/torch_kernels.tsv, made by
 * tests/fixtures/extract_torch_kernels.py) and on crafted names for the
 * dtype parser's edge cases.  Launches are simulated: a parameter buffer
 * laid out as the real layout says, holding known values. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../cupti/kdecode.h"
#include "fixture.h"

static int starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* The family each fixture kernel must get, worked out from the name
 * without the decoder's parser: first matching rule wins, and every line
 * must match one (a new fixture kernel needs a rule here). */
static const struct {
	const char *sub;
	int prefix;                     /* 1: sub must start the name */
	enum np_kfamily family;
} family_rules[] = {
	{ "void at::native::vectorized_elementwise_kernel<", 1, NP_KF_VEC_ELEMENTWISE },
	{ "void at::native::unrolled_elementwise_kernel<", 1, NP_KF_UNROLLED_ELEMENTWISE },
	{ "void at::native::elementwise_kernel<", 1, NP_KF_LAMBDA_ELEMENTWISE },
	{ "void at::native::index_elementwise_kernel<", 1, NP_KF_LAMBDA_ELEMENTWISE },
	{ "void at::native::_scatter_gather_elementwise_kernel<", 1, NP_KF_LAMBDA_ELEMENTWISE },
	{ "void at::native::reduce_kernel<", 1, NP_KF_REDUCE },
	{ "::softmax_warp_", 0, NP_KF_SOFTMAX },
	{ "::cunn_S", 0, NP_KF_SOFTMAX },
	{ "::RowwiseMomentsCUDAKernel<", 0, NP_KF_LAYER_NORM },
	{ "::vectorized_layer_norm_kernel<", 0, NP_KF_LAYER_NORM },
	{ "::layer_norm_grad_input_kernel", 0, NP_KF_LAYER_NORM },
	{ "::LayerNormForwardCUDAKernel<", 0, NP_KF_LAYER_NORM },
	{ "::ComputeInternalGradientsCUDAKernel<", 0, NP_KF_LAYER_NORM },
	{ "::GammaBetaBackwardCUDAKernel", 0, NP_KF_LAYER_NORM },
	{ "::GammaBeta1dBackwardCUDAKernel", 0, NP_KF_LAYER_NORM },
	{ "void at::native::batch_norm_", 1, NP_KF_BATCH_NORM },
	{ "::CatArrayBatchedCopy", 0, NP_KF_CAT },
	{ "::multi_tensor_apply_kernel<", 0, NP_KF_MULTI_TENSOR_APPLY },
	/* TensorInfo / accessor aggregates, no pointer in the list */
	{ "::indexSelectSmallIndex<", 0, NP_KF_INDEX },
	{ "::indexFunc", 0, NP_KF_UNKNOWN },
	{ "::triu_tril_kernel<", 0, NP_KF_UNKNOWN },
	{ "::embedding_bag_nbits_rowwise_offsets_kernel<", 0, NP_KF_UNKNOWN },
	{ "void pytorch_flash::flash_fwd_kernel<", 1, NP_KF_FLASH },
	{ "void pytorch_flash::flash_bwd_", 1, NP_KF_FLASH },
	{ "fmha_cutlassF_", 1, NP_KF_MEMEFF },
	{ "::fused_dropout_kernel", 0, NP_KF_DROPOUT },
	{ "fmha_cutlassB_", 1, NP_KF_MEMEFF },
	{ "::lpnorm_cleanup<", 0, NP_KF_NORM_CLEANUP },
	{ "::lpmax_cleanup<", 0, NP_KF_NORM_CLEANUP },
	/* plain pointer lists */
	{ "::vectorized_gather_kernel<", 0, NP_KF_EXPLICIT },
	{ "::vectorized_scatter_add_kernel<", 0, NP_KF_EXPLICIT },
	{ "mbedding", 0, NP_KF_EXPLICIT },
	{ "::max_unpooling2d_forward_kernel<", 0, NP_KF_EXPLICIT },
	{ "::avg_pool2d_", 0, NP_KF_EXPLICIT },
	{ "::max_pool_forward_nchw<", 0, NP_KF_EXPLICIT },
	{ "::im2col_kernel<", 0, NP_KF_EXPLICIT },
	{ "::cross_kernel<", 0, NP_KF_EXPLICIT },
	{ "::glu_backward_kernel<", 0, NP_KF_EXPLICIT },
	{ "::DeviceReduceKernel<", 0, NP_KF_EXPLICIT },
};

static int expected_family(const char *dem)
{
	for (size_t i = 0; i < sizeof(family_rules) / sizeof(family_rules[0]); i++)
		if (family_rules[i].prefix ? starts(dem, family_rules[i].sub) :
					     strstr(dem, family_rules[i].sub) != NULL)
			return family_rules[i].family;
	return -1;
}


static void every_line_parses(void)
{
	struct np_kparams l;
	cr_assert_geq(nlines, 200, "fixture has %d kernels", nlines);
	for (int i = 0; i < nlines; i++) {
		int n = np_kdecode_layout_parse(lines[i].layout, &l);
		cr_assert_gt(n, 0, "%s: layout \"%s\"", lines[i].dem, lines[i].layout);
		cr_assert(starts(lines[i].mangled, "_Z"), "%s", lines[i].mangled);
		for (int k = 1; k < n; k++)     /* ordinal order is offset order, no overlap */
			cr_assert_geq(l.p[k].offset, l.p[k - 1].offset + l.p[k - 1].size,
				      "%s: param %d", lines[i].dem, k);
	}
}

static void family_and_signature_of_every_kernel(void)
{
	int per[NP_KF_MAX] = { 0 };
	for (int i = 0; i < nlines; i++) {
		struct np_kinfo ki;
		struct np_kparams l;
		int want = expected_family(lines[i].dem);
		cr_assert_neq(want, -1, "no family rule for %s", lines[i].dem);
		cr_expect_eq(np_kdecode_classify(lines[i].dem, &ki), want, "%s: family %s, want %s",
			     lines[i].dem, np_kfamily_name(ki.family), np_kfamily_name(want));
		/* the signature in the name has as many parameters as the cubin */
		cr_expect_eq(ki.nsig, np_kdecode_layout_parse(lines[i].layout, &l), "%s",
			     lines[i].dem);
		cr_expect(ki.dtype >= -1 && ki.dtype < NP_DT_MAX);
		cr_expect((ki.dtype >= 0) ==
			  (ki.dtype_why == NP_KDT_KNOWN || ki.dtype_why == NP_KDT_INFERRED),
			  "%s: dtype %d why %d", lines[i].dem, ki.dtype, ki.dtype_why);
		per[ki.family]++;
	}
	/* the fixture holds one flash attention kernel (test_kdecode_flash.c),
	 * two index_select ones (test_kdecode_index.c) and three of
	 * _foreach_norm's and _foreach_max's cleanups
	 * (test_kdecode_norm_cleanup.c) */
	for (int f = NP_KF_VEC_ELEMENTWISE; f < NP_KF_MAX; f++)
		cr_expect_geq(per[f], f == NP_KF_FLASH ? 1 : f == NP_KF_INDEX ? 2 :
				      f == NP_KF_NORM_CLEANUP ? 3 : 4,
			      "only %d %s kernels", per[f], np_kfamily_name(f));
}

static const struct {
	const char *sub;
	enum np_kfamily family;
	int dtype;
	enum np_kdtype_why why;
	int narrays;
} spot[] = {
	{ "vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>",
	  NP_KF_VEC_ELEMENTWISE, NP_DT_F32, NP_KDT_KNOWN, 3 },
	{ "vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>,",
	  NP_KF_VEC_ELEMENTWISE, NP_DT_BF16, NP_KDT_KNOWN, 3 },
	{ "vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<double>,",
	  NP_KF_VEC_ELEMENTWISE, NP_DT_F64, NP_KDT_KNOWN, 3 },
	{ "vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<int>,",
	  NP_KF_VEC_ELEMENTWISE, -1, NP_KDT_UNCHECKABLE, 3 },
	{ "vectorized_elementwise_kernel<8, at::native::AbsFunctor<bool>,",
	  NP_KF_VEC_ELEMENTWISE, -1, NP_KDT_UNCHECKABLE, 2 },
	{ "vectorized_elementwise_kernel<8, at::native::FillFunctor<int>,",
	  NP_KF_VEC_ELEMENTWISE, -1, NP_KDT_UNCHECKABLE, 1 },
	{ "vectorized_elementwise_kernel<8, at::native::FillFunctor<c10::Half>, std::array<char*, 1ul>",
	  NP_KF_VEC_ELEMENTWISE, NP_DT_F16, NP_KDT_KNOWN, 1 },
	{ "at::native::BinaryFunctor<float, float, bool, at::native::(anonymous namespace)::CompareEqFunctor<float> >, std::array<char*, 3ul>, true>",
	  NP_KF_VEC_ELEMENTWISE, -1, NP_KDT_UNCHECKABLE, 3 },
	{ "vectorized_elementwise_kernel<8, at::native::BUnaryFunctor<c10::Half, c10::Half, c10::Half, at::native::binary_internal::MulFunctor<float> >",
	  NP_KF_VEC_ELEMENTWISE, NP_DT_F16, NP_KDT_KNOWN, 2 },
	{ "vectorized_elementwise_kernel<8, at::native::AUnaryFunctor<double, double, double,",
	  NP_KF_VEC_ELEMENTWISE, NP_DT_F64, NP_KDT_KNOWN, 2 },
	{ "vectorized_elementwise_kernel<8, at::native::(anonymous namespace)::CompareFunctor<c10::Half>",
	  NP_KF_VEC_ELEMENTWISE, -1, NP_KDT_UNCHECKABLE, 3 },
	{ "vectorized_elementwise_kernel<8, at::native::ConvertToFloat8E4M3fnOp<c10::BFloat16>",
	  NP_KF_VEC_ELEMENTWISE, NP_DT_F8E4M3, NP_KDT_KNOWN, 2 },
	{ "vectorized_elementwise_kernel<8, at::native::ConvertFloatToFloat8E5M2Op,",
	  NP_KF_VEC_ELEMENTWISE, NP_DT_F8E5M2, NP_KDT_KNOWN, 2 },
	{ "silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#6}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>",
	  NP_KF_VEC_ELEMENTWISE, NP_DT_BF16, NP_KDT_INFERRED, 2 },
	{ "mse_kernel_cuda(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#3}::operator()() const::{lambda(c10::Half, c10::Half)#1}, std::array",
	  NP_KF_VEC_ELEMENTWISE, NP_DT_F16, NP_KDT_INFERRED, 3 },
	{ "vectorized_elementwise_kernel<2, at::native::addcmul_cuda_kernel(at::TensorIteratorBase&, c10::Scalar const&)::{lambda()#2}::operator()() const::{lambda()#6}",
	  NP_KF_VEC_ELEMENTWISE, NP_DT_F64, NP_KDT_INFERRED, 4 },
	/* bool out, or a cast: the lambda's argument type is not the output's */
	{ "vectorized_elementwise_kernel<8, at::native::(anonymous namespace)::isneginf_kernel_impl(",
	  NP_KF_VEC_ELEMENTWISE, -1, NP_KDT_UNKNOWN, 2 },
	{ "vectorized_elementwise_kernel<8, at::native::logical_not_kernel_cuda(",
	  NP_KF_VEC_ELEMENTWISE, -1, NP_KDT_UNKNOWN, 2 },
	{ "vectorized_elementwise_kernel<8, at::native::float16_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#1}",
	  NP_KF_VEC_ELEMENTWISE, -1, NP_KDT_UNKNOWN, 2 },
	{ "vectorized_elementwise_kernel<8, at::native::float8_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#2}",
	  NP_KF_VEC_ELEMENTWISE, -1, NP_KDT_UNKNOWN, 2 },
	{ "::masked_fill_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float, bool)#1}",
	  NP_KF_VEC_ELEMENTWISE, -1, NP_KDT_UNKNOWN, 3 },
	{ "unrolled_elementwise_kernel<at::native::CUDAFunctor_add<c10::Half>, std::array<char*, 3ul>, 4, TrivialOffsetCalculator<2, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithoutCast",
	  NP_KF_UNROLLED_ELEMENTWISE, NP_DT_F16, NP_KDT_KNOWN, 3 },
	{ "unrolled_elementwise_kernel<at::native::CUDAFunctor_add<c10::Half>, std::array<char*, 3ul>, 4, TrivialOffsetCalculator<2, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<2>",
	  NP_KF_UNROLLED_ELEMENTWISE, -1, NP_KDT_RUNTIME, 3 },
	{ "elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::AbsFunctor<float> >",
	  NP_KF_LAMBDA_ELEMENTWISE, NP_DT_F32, NP_KDT_KNOWN, 0 },
	{ "gpu_kernel_impl<at::native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#5}::operator()() const::{lambda(c10::Half)#1}>",
	  NP_KF_LAMBDA_ELEMENTWISE, NP_DT_F16, NP_KDT_INFERRED, 0 },
	{ "reduce_kernel<128, 4, at::native::ReduceOp<double, at::native::MaxOps<double>, unsigned int, double,",
	  NP_KF_REDUCE, NP_DT_F64, NP_KDT_KNOWN, 0 },
	{ "reduce_kernel<128, 4, at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long,",
	  NP_KF_REDUCE, -1, NP_KDT_UNCHECKABLE, 0 },
	{ "softmax_warp_forward<c10::Half, float, float, 0, true, false, 32>",
	  NP_KF_SOFTMAX, NP_DT_F32, NP_KDT_KNOWN, 0 },
	{ "softmax_warp_backward<float, c10::Half, float, 0, true, false, 32>",
	  NP_KF_SOFTMAX, NP_DT_F16, NP_KDT_KNOWN, 0 },
	{ "cunn_SoftMaxBackward<2, double, double, double,", NP_KF_SOFTMAX, NP_DT_F64, NP_KDT_KNOWN, 0 },
	{ "vectorized_layer_norm_kernel<c10::Half, float, true>", NP_KF_LAYER_NORM, NP_DT_F32,
	  NP_KDT_KNOWN, 0 },
	{ "LayerNormForwardCUDAKernel<c10::Half, float, true>", NP_KF_LAYER_NORM, NP_DT_F16,
	  NP_KDT_KNOWN, 0 },
	/* at::AccumulateType<float, true>::type* */
	{ "ComputeInternalGradientsCUDAKernel<float>", NP_KF_LAYER_NORM, NP_DT_F32, NP_KDT_KNOWN, 0 },
	{ "batch_norm_backward_reduce_channels_last_kernel<4, c10::Half, float, float>",
	  NP_KF_BATCH_NORM, NP_DT_F32, NP_KDT_KNOWN, 0 },
	/* accessor aggregates: the output accessor's T is the first template
	 * argument (kdecode_acc.c) */
	{ "batch_norm_transform_input_kernel<c10::Half, float, float, true, int>",
	  NP_KF_BATCH_NORM, NP_DT_F16, NP_KDT_KNOWN, 0 },
	{ "CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>,", NP_KF_CAT, -1,
	  NP_KDT_UNKNOWN, 0 },
	{ "FusedAdamMathFunctor<float, 5,", NP_KF_MULTI_TENSOR_APPLY, NP_DT_F32, NP_KDT_KNOWN, 0 },
	{ "embedding_backward_feature_kernel<double, double, int>", NP_KF_EXPLICIT, NP_DT_F64,
	  NP_KDT_KNOWN, 0 },
	{ "embedding_renorm_wrap_indices_kernel<int>", NP_KF_EXPLICIT, -1, NP_KDT_UNCHECKABLE, 0 },
	{ "im2col_kernel<c10::Half>", NP_KF_EXPLICIT, NP_DT_F16, NP_KDT_KNOWN, 0 },
	{ "indexSelectSmallIndex<float,", NP_KF_INDEX, NP_DT_F32, NP_KDT_KNOWN, 0 },
	{ "pytorch_flash::flash_fwd_kernel<", NP_KF_FLASH, NP_DT_F16, NP_KDT_KNOWN, 0 },
	{ "fmha_cutlassF_f32_aligned_64x64_rf_sm80(", NP_KF_MEMEFF, NP_DT_F32, NP_KDT_KNOWN, 0 },
	{ "fmha_cutlassB_bf16_aligned_64x64_k64_sm80(", NP_KF_MEMEFF, NP_DT_BF16, NP_KDT_KNOWN, 0 },
};

Test(kdecode_fixture, named_kernels_exactly)
{
	for (size_t i = 0; i < sizeof(spot) / sizeof(spot[0]); i++) {
		struct np_kinfo ki;
		const struct kline *l = fixture_find(spot[i].sub);
		np_kdecode_classify(l->dem, &ki);
		cr_expect_eq(ki.family, spot[i].family, "%s: family %s", spot[i].sub,
			     np_kfamily_name(ki.family));
		cr_expect_eq(ki.dtype, spot[i].dtype, "%s: dtype %d, want %d", spot[i].sub, ki.dtype,
			     spot[i].dtype);
		cr_expect_eq(ki.dtype_why, spot[i].why, "%s: why %d, want %d", spot[i].sub,
			     ki.dtype_why, spot[i].why);
		cr_expect_eq(ki.narrays, spot[i].narrays, "%s: narrays %d", spot[i].sub, ki.narrays);
	}
}

/* A fake launch: one buffer laid out as l says, kp[i] into it. */
struct launch {
	unsigned char buf[32768];
	void *kp[NP_KD_MAX_PARAMS];
};

static void lay_out(struct launch *ln, const struct np_kparams *l)
{
	memset(ln->buf, 0xa5, sizeof(ln->buf));
	for (int i = 0; i < l->n; i++) {
		cr_assert_leq(l->p[i].offset + l->p[i].size, sizeof(ln->buf));
		ln->kp[i] = ln->buf + l->p[i].offset;
	}
}

static void put64(struct launch *ln, const struct np_kparams *l, int i, uint32_t at, uint64_t v)
{
	cr_assert_leq(at + 8, l->p[i].size);
	memcpy(ln->buf + l->p[i].offset + at, &v, 8);
}

#define DATA(k) (0x7f0000100000ull + 0x1000ull * (k))

/* Sets up an elementwise launch: N, data[k] = DATA(k), storer dtype st. */
static void elementwise_launch(struct launch *ln, const struct np_kparams *l, int32_t n,
			       uint8_t st)
{
	lay_out(ln, l);
	memcpy(ln->kp[0], &n, 4);
	for (uint32_t k = 0; k < l->p[2].size / 8; k++)
		put64(ln, l, 2, 8 * k, DATA(k));
	if (l->n == 7)
		*(uint8_t *)ln->kp[6] = st;
}

static void elementwise_output_is_data0_with_numel_n(void)
{
	static struct launch ln;
	int decoded = 0, runtime = 0;
	for (int i = 0; i < nlines; i++) {
		struct np_kinfo ki;
		struct np_kparams l;
		struct np_kbuf out[4];
		uint64_t words[64];
		if (np_kdecode_classify(lines[i].dem, &ki) != NP_KF_VEC_ELEMENTWISE &&
		    ki.family != NP_KF_UNROLLED_ELEMENTWISE)
			continue;
		np_kdecode_layout_parse(lines[i].layout, &l);
		cr_assert_eq(l.n, ki.family == NP_KF_VEC_ELEMENTWISE ? 3 : 7, "%s", lines[i].dem);
		cr_assert_eq(l.p[2].size, 8u * ki.narrays, "%s", lines[i].dem);
		elementwise_launch(&ln, &l, 12345, 15 /* BFloat16 */);
		int n = np_kdecode_outputs(&ki, &l, ln.kp, NULL, out, 4);
		int want_dtype = ki.dtype_why == NP_KDT_RUNTIME ? NP_DT_BF16 : ki.dtype;
		cr_assert_eq(n, want_dtype >= 0, "%s: %d outputs", lines[i].dem, n);
		/* every data[k] is a candidate pointer word, N is not */
		int nw = np_kdecode_pointer_words(&l, ln.kp, words, 64);
		for (int k = 0; k < ki.narrays; k++) {
			int seen = 0;
			for (int w = 0; w < nw; w++)
				seen |= words[w] == DATA(k);
			cr_expect(seen, "%s: data[%d] not among the pointer words", lines[i].dem, k);
		}
		if (!n)
			continue;
		decoded++;
		cr_expect_eq(out[0].ptr, DATA(0), "%s", lines[i].dem);
		/* a complex output counts its parts (ki.pairs; its StoreWithCast
		 * launch here stores bfloat16) */
		cr_expect_eq(out[0].numel, 12345u << ki.pairs, "%s", lines[i].dem);
		cr_expect_eq(out[0].pairs, ki.pairs, "%s", lines[i].dem);
		cr_expect_eq((int)out[0].dtype, want_dtype);
		cr_expect_eq(out[0].how, ki.dtype_why == NP_KDT_INFERRED ? NP_KH_ELEMENTWISE_INFERRED :
					 NP_KH_ELEMENTWISE);
		/* 48 threads cannot cover 12345 elements: a misread, dropped */
		cr_expect_eq(np_kdecode_outputs(&ki, &l, ln.kp, &(struct np_klaunch){ .threads = 48 },
						out, 4), 0);
		cr_expect_eq(np_kdecode_outputs(&ki, &l, ln.kp,
						&(struct np_klaunch){ .threads = 12345 }, out, 4), 1);
		/* an empty launch has nothing to check */
		elementwise_launch(&ln, &l, 0, 15);
		cr_expect_eq(np_kdecode_outputs(&ki, &l, ln.kp, NULL, out, 4), 0);
		if (ki.dtype_why == NP_KDT_RUNTIME) {
			runtime++;
			elementwise_launch(&ln, &l, 77, 11 /* Bool */);
			cr_expect_eq(np_kdecode_outputs(&ki, &l, ln.kp, NULL, out, 4), 0);
			elementwise_launch(&ln, &l, 77, 5 /* Half */);
			cr_expect_eq(np_kdecode_outputs(&ki, &l, ln.kp, NULL, out, 4), 1);
			cr_expect_eq(out[0].dtype, NP_DT_F16);
			cr_expect_eq(out[0].numel, 77);
			cr_expect_eq(out[0].pairs, 0);
			/* a complex64 output: 77 pairs of floats */
			elementwise_launch(&ln, &l, 77, 9 /* ComplexFloat */);
			cr_expect_eq(np_kdecode_outputs(&ki, &l, ln.kp, NULL, out, 4), 1);
			cr_expect_eq(out[0].dtype, NP_DT_F32);
			cr_expect_eq(out[0].numel, 154);
			cr_expect_eq(out[0].pairs, 1);
		}
		/* a layout that does not fit the name gives nothing */
		l.n--;
		cr_expect_eq(np_kdecode_outputs(&ki, &l, ln.kp, NULL, out, 4), 0);
	}
	cr_expect_geq(decoded, 50, "only %d elementwise kernels decoded", decoded);
	cr_expect_geq(runtime, 4, "only %d StoreWithCast kernels decoded", runtime);
}

/* The dtype an elementwise kernel loads its inputs as, when it loads
 * them without a cast (the generic tier checks them over N elements). */
static const struct {
	const char *sub;
	int in_dtype;
} spot_in[] = {
	{ "vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>",
	  NP_DT_F32 },
	{ "vectorized_elementwise_kernel<8, at::native::BUnaryFunctor<c10::Half, c10::Half, c10::Half, at::native::binary_internal::MulFunctor<float> >",
	  NP_DT_F16 },
	{ "vectorized_elementwise_kernel<8, at::native::AUnaryFunctor<double, double, double,",
	  NP_DT_F64 },
	/* float in, bool out: the inputs' type is known, the output is not checked */
	{ "at::native::BinaryFunctor<float, float, bool, at::native::(anonymous namespace)::CompareEqFunctor<float> >, std::array<char*, 3ul>, true>",
	  NP_DT_F32 },
	{ "mse_kernel_cuda(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#3}::operator()() const::{lambda(c10::Half, c10::Half)#1}, std::array",
	  NP_DT_F16 },
	{ "silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#6}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>",
	  NP_DT_BF16 },
	{ "vectorized_elementwise_kernel<8, at::native::float16_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#1}",
	  NP_DT_F32 },
	/* a bool operand: not one floating type */
	{ "::masked_fill_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float, bool)#1}",
	  -1 },
	{ "vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<int>,", -1 },
	{ "unrolled_elementwise_kernel<at::native::CUDAFunctor_add<c10::Half>, std::array<char*, 3ul>, 4, TrivialOffsetCalculator<2, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithoutCast",
	  NP_DT_F16 },
	/* cast on load: the functor's type is not the inputs' */
	{ "unrolled_elementwise_kernel<at::native::CUDAFunctor_add<c10::Half>, std::array<char*, 3ul>, 4, TrivialOffsetCalculator<2, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<2>",
	  -1 },
	/* strided: the _nocast lambda's functor, read with its strides */
	{ "elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::AbsFunctor<float> >",
	  NP_DT_F32 },
	/* a reduction: its scalar_t, what its input holds (read when dense) */
	{ "reduce_kernel<128, 4, at::native::ReduceOp<double, at::native::MaxOps<double>, unsigned int, double,",
	  NP_DT_F64 },
	{ "reduce_kernel<128, 4, at::native::ReduceOp<c10::Half, at::native::ArgMaxOps<float>, unsigned int, long, 4, 4> >",
	  NP_DT_F16 },
};

Test(kdecode_fixture, elementwise_input_dtypes)
{
	for (size_t i = 0; i < sizeof(spot_in) / sizeof(spot_in[0]); i++) {
		struct np_kinfo ki;
		np_kdecode_classify(fixture_find(spot_in[i].sub)->dem, &ki);
		cr_expect_eq(ki.in_dtype, spot_in[i].in_dtype, "%s: in_dtype %d, want %d",
			     spot_in[i].sub, ki.in_dtype, spot_in[i].in_dtype);
	}
}

static void elementwise_reads_are_data1_on_with_numel_n(void)
{
	static struct launch ln;
	int read = 0;
	for (int i = 0; i < nlines; i++) {
		struct np_kinfo ki;
		struct np_kparams l;
		struct np_kbuf out[4];
		struct np_kread in[8];
		np_kdecode_classify(lines[i].dem, &ki);
		np_kdecode_layout_parse(lines[i].layout, &l);
		elementwise_launch(&ln, &l, 4321, 15);
		int n = np_kdecode_reads(&ki, &l, ln.kp, NULL, in, 8);
		int outputs = ki.family == NP_KF_VEC_ELEMENTWISE ||
					      ki.family == NP_KF_UNROLLED_ELEMENTWISE ?
				      np_kdecode_outputs(&ki, &l, ln.kp, NULL, out, 4) : 0;
		if (ki.in_dtype < 0 || ki.narrays < 2 || outputs != 1) {
			cr_expect_eq(n, 0, "%s: %d reads", lines[i].dem, n);
			continue;
		}
		read++;
		cr_assert_eq(n, ki.narrays - 1, "%s: %d reads", lines[i].dem, n);
		for (int k = 0; k < n; k++) {
			cr_expect_eq(in[k].ptr, DATA(k + 1), "%s: read %d", lines[i].dem, k);
			/* a complex input's parts: two per value */
			cr_expect_eq(in[k].numel, 4321u << ki.in_pairs, "%s", lines[i].dem);
			cr_expect_eq((int)in[k].dtype, ki.in_dtype);
			cr_expect_eq(in[k].pairs, ki.in_pairs);
		}
		cr_expect_eq(np_kdecode_reads(&ki, &l, ln.kp, NULL, in, 1), 1, "max is honoured");
		/* a misread (N beyond the threads' reach) reads nothing either */
		cr_expect_eq(np_kdecode_reads(&ki, &l, ln.kp, &(struct np_klaunch){ .threads = 4 },
					      in, 8), 0);
		elementwise_launch(&ln, &l, 0, 15);
		cr_expect_eq(np_kdecode_reads(&ki, &l, ln.kp, NULL, in, 8), 0, "N = 0");
	}
	cr_expect_geq(read, 30, "only %d elementwise kernels give their reads", read);
}

/* The checks above hold for every kernel of either torch: 2.14.1, and
 * 2.11.0, the GPU test host's, whose names and layouts differ in places
 * (the vectorized kernels' widths, multi_tensor_apply's smaller
 * metadata, the older memory-efficient attention backward). */
TestSuite(kdecode_fixture, .init = fixture_load, .fini = fixture_unload);
TestSuite(kdecode_torch_2_11, .init = fixture_load_2_11, .fini = fixture_unload);

Test(kdecode_fixture, every_line_parses)
{
	every_line_parses();
}

Test(kdecode_torch_2_11, every_line_parses)
{
	every_line_parses();
}

Test(kdecode_fixture, family_and_signature_of_every_kernel)
{
	family_and_signature_of_every_kernel();
}

Test(kdecode_torch_2_11, family_and_signature_of_every_kernel)
{
	family_and_signature_of_every_kernel();
}

Test(kdecode_fixture, elementwise_output_is_data0_with_numel_n)
{
	elementwise_output_is_data0_with_numel_n();
}

Test(kdecode_torch_2_11, elementwise_output_is_data0_with_numel_n)
{
	elementwise_output_is_data0_with_numel_n();
}

Test(kdecode_fixture, elementwise_reads_are_data1_on_with_numel_n)
{
	elementwise_reads_are_data1_on_with_numel_n();
}

Test(kdecode_torch_2_11, elementwise_reads_are_data1_on_with_numel_n)
{
	elementwise_reads_are_data1_on_with_numel_n();
}

/* A cast on load (LoadWithCast<N>: the launch names each input's
 * ScalarType and element size), as autocast's upcast of bf16 logits to
 * float runs: each input read as its own type, when the size agrees */
Test(kdecode_fixture, cast_on_load_reads_each_input_as_the_launch_names_it)
{
	static struct launch ln;
	struct np_kinfo ki;
	struct np_kparams l;
	struct np_kread in[4];
	const struct kline *k = fixture_find(
		"unrolled_elementwise_kernel<at::native::CUDAFunctor_add<c10::Half>, std::array<char*, "
		"3ul>, 4, TrivialOffsetCalculator<2, unsigned int>, TrivialOffsetCalculator<1, "
		"unsigned int>, at::native::memory::LoadWithCast<2>");
	np_kdecode_classify(k->dem, &ki);
	np_kdecode_layout_parse(k->layout, &l);
	cr_assert_eq(ki.load_cast, 2);
	cr_assert_eq(ki.in_dtype, -1, "the functor's type is not the inputs'");
	cr_assert_eq(l.p[5].size, 12, "ScalarType[2], then uint32_t[2] from offset 4");
	elementwise_launch(&ln, &l, 777, 5 /* Half out */);
	unsigned char *load = ln.kp[5];
	load[0] = 15, load[1] = 6;              /* BFloat16, Float */
	memcpy(load + 4, &(uint32_t){ 2 }, 4);
	memcpy(load + 8, &(uint32_t){ 4 }, 4);
	cr_assert_eq(np_kdecode_reads(&ki, &l, ln.kp, NULL, in, 4), 2);
	cr_expect_eq(in[0].ptr, DATA(1));
	cr_expect_eq(in[0].numel, 777);
	cr_expect_eq(in[0].dtype, NP_DT_BF16);
	cr_expect_eq(in[1].ptr, DATA(2));
	cr_expect_eq(in[1].dtype, NP_DT_F32);
	memcpy(load + 8, &(uint32_t){ 8 }, 4);  /* Float of 8 bytes: a misread */
	cr_assert_eq(np_kdecode_reads(&ki, &l, ln.kp, NULL, in, 4), 1);
	cr_expect_eq(in[0].dtype, NP_DT_BF16);
	load[0] = 11;                           /* Bool: not checkable */
	cr_expect_eq(np_kdecode_reads(&ki, &l, ln.kp, NULL, in, 4), 0);
}

/* The complex multiply casting on load (complex64 times a complex32
 * upcast): each input read as the launch names it, complex ones as their
 * real view, 2N parts. */
Test(kdecode_fixture, cast_on_load_reads_complex_inputs_as_their_parts)
{
	static struct launch ln;
	struct np_kinfo ki;
	struct np_kparams l;
	struct np_kread in[4];
	const struct kline *k = fixture_find(
		"unrolled_elementwise_kernel<at::native::BinaryFunctor<c10::complex<float>, "
		"c10::complex<float>, c10::complex<float>, at::native::binary_internal::MulFunctor");
	np_kdecode_classify(k->dem, &ki);
	np_kdecode_layout_parse(k->layout, &l);
	cr_assert_eq(ki.load_cast, 2);
	elementwise_launch(&ln, &l, 777, 9 /* ComplexFloat out */);
	unsigned char *load = ln.kp[5];
	load[0] = 9, load[1] = 8;               /* ComplexFloat, ComplexHalf */
	memcpy(load + 4, &(uint32_t){ 8 }, 4);
	memcpy(load + 8, &(uint32_t){ 4 }, 4);
	cr_assert_eq(np_kdecode_reads(&ki, &l, ln.kp, NULL, in, 4), 2);
	cr_expect_eq(in[0].ptr, DATA(1));
	cr_expect_eq(in[0].numel, 2 * 777, "777 complex values, 1554 parts");
	cr_expect_eq(in[0].dtype, NP_DT_F32);
	cr_expect_eq(in[0].pairs, 1);
	cr_expect_eq(in[1].ptr, DATA(2));
	cr_expect_eq(in[1].numel, 2 * 777);
	cr_expect_eq(in[1].dtype, NP_DT_F16);
	cr_expect_eq(in[1].pairs, 1);
	load[1] = 6;                            /* Float of 4 bytes: a real input */
	cr_assert_eq(np_kdecode_reads(&ki, &l, ln.kp, NULL, in, 4), 2);
	cr_expect_eq(in[1].numel, 777);
	cr_expect_eq(in[1].pairs, 0);
	memcpy(load + 4, &(uint32_t){ 4 }, 4);  /* ComplexFloat of 4 bytes: a misread */
	cr_assert_eq(np_kdecode_reads(&ki, &l, ln.kp, NULL, in, 4), 1);
	cr_expect_eq(in[0].ptr, DATA(2));
}

/* Signature kernels: pointer param i holds 0x7f0000200000 + 0x100 * i. */
#define SPTR(i) (0x7f0000200000ull + 0x100ull * (i))

static int signature_launch_at(const char *sub, struct np_klaunch *kl, struct np_kbuf *out,
			       int max)
{
	static struct launch ln;
	struct np_kinfo ki;
	struct np_kparams l;
	const struct kline *k = fixture_find(sub);
	np_kdecode_classify(k->dem, &ki);
	np_kdecode_layout_parse(k->layout, &l);
	lay_out(&ln, &l);
	for (int i = 0; i < l.n; i++)
		if (l.p[i].size == 8)
			put64(&ln, &l, i, 0, SPTR(i));
	return np_kdecode_outputs(&ki, &l, ln.kp, kl, out, max);
}

static int signature_launch(const char *sub, struct np_kbuf *out, int max)
{
	return signature_launch_at(sub, &(struct np_klaunch){ .threads = 1000 }, out, max);
}

static const struct {
	const char *sub;
	int n;
	int param[5];
	enum np_dtype dtype[5];
} sig_spot[] = {
	/* (int, float, T const* X, T const* gamma, T const* beta, acc* mean, acc* rstd, T* Y);
	 * no grid: unsized.  The RMSNorm instance (rms_norm = true) writes no mean */
	{ "vectorized_layer_norm_kernel<c10::Half, float, false>", 3, { 5, 6, 7 },
	  { NP_DT_F32, NP_DT_F32, NP_DT_F16 } },
	{ "vectorized_layer_norm_kernel<c10::Half, float, true>", 2, { 6, 7 },
	  { NP_DT_F32, NP_DT_F16 } },
	{ "softmax_warp_forward<float, float, float, 0, false, true, 32>", 1, { 0 }, { NP_DT_F32 } },
	{ "softmax_warp_backward<float, c10::Half, float, 0, true, false, 32>", 1, { 0 },
	  { NP_DT_F16 } },
	/* (T const* x, T const* dy, float const* mean, float const* invstd, float* sum_dy,
	 *  float* sum_dy_xmu, float* dw, float* db, float volatile* staging, int*, ..):
	 *  the staging buffer is written, but no output */
	{ "batch_norm_backward_reduce_channels_last_kernel<4, c10::Half, float, float>", 4,
	  { 4, 5, 6, 7 }, { NP_DT_F32, NP_DT_F32, NP_DT_F32, NP_DT_F32 } },
	/* (int const* indices, T const* grad, T* grad_weight, int, long, int) */
	{ "embedding_backward_feature_kernel<float, float, int>", 1, { 2 }, { NP_DT_F32 } },
	/* (int const*, int const*, T const* weight, T* output, int* offset2bag, ..) */
	{ "EmbeddingBag_updateOutputKernel_sum_mean<float, int>", 1, { 3 }, { NP_DT_F32 } },
	{ "im2col_kernel<c10::Half>", 1, { 14 }, { NP_DT_F16 } },
	/* (int, T* out, T const*, T const*, OffsetCalculator<3>) */
	{ "cross_kernel<float, OffsetCalculator<3, unsigned int, false>, int>", 1, { 1 },
	  { NP_DT_F32 } },
	{ "vectorized_scatter_add_kernel<16, double, int>", 1, { 0 }, { NP_DT_F64 } },
	{ "ComputeInternalGradientsCUDAKernel<double>", 2, { 3, 4 }, { NP_DT_F64, NP_DT_F64 } },
	/* int*, OpaqueType*, char*, aggregates: nothing checkable named */
	{ "embedding_renorm_wrap_indices_kernel<long>", 0, { 0 }, { 0 } },
	{ "CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<1u>,", 0, { 0 }, { 0 } },
	{ "CatArrayBatchedCopy_vectorized<", 0, { 0 }, { 0 } },
	{ "vectorized_gather_kernel<16, int>", 0, { 0 }, { 0 } },
	{ "batch_norm_transform_input_kernel<float, float, float, true, int>", 0, { 0 }, { 0 } },
	{ "reduce_kernel<128, 4, at::native::ReduceOp<double, at::native::MaxOps<double>,", 0, { 0 },
	  { 0 } },
	{ "FusedAdamMathFunctor<float, 5,", 0, { 0 }, { 0 } },
	{ "elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::AbsFunctor<float> >",
	  0, { 0 }, { 0 } },
};

Test(kdecode_fixture, signature_outputs_are_the_non_const_floating_pointers)
{
	for (size_t i = 0; i < sizeof(sig_spot) / sizeof(sig_spot[0]); i++) {
		struct np_kbuf out[NP_KD_MAX_OUTPUTS];
		int n = signature_launch(sig_spot[i].sub, out, NP_KD_MAX_OUTPUTS);
		cr_expect_eq(n, sig_spot[i].n, "%s: %d outputs, want %d", sig_spot[i].sub, n,
			     sig_spot[i].n);
		for (int k = 0; k < n && k < sig_spot[i].n; k++) {
			cr_expect_eq(out[k].ptr, SPTR(sig_spot[i].param[k]), "%s: output %d",
				     sig_spot[i].sub, k);
			cr_expect_eq(out[k].dtype, sig_spot[i].dtype[k], "%s: output %d dtype %d",
				     sig_spot[i].sub, k, out[k].dtype);
			cr_expect_eq(out[k].numel, 0);
			cr_expect_eq(out[k].how, NP_KH_SIGNATURE);
		}
	}
	/* max bounds the outputs written; the rest are counted, and read
	 * from where the last turn stopped */
	struct np_kbuf one[1];
	struct np_klaunch kl = { .threads = 1000 };
	const char *ln = "vectorized_layer_norm_kernel<c10::Half, float, false>";
	cr_expect_eq(signature_launch_at(ln, &kl, one, 1), 1);
	cr_expect_eq(one[0].ptr, SPTR(5));
	cr_expect_eq(one[0].n_in, -1, "the launch's pointer words are its inputs");
	cr_expect_eq(kl.more, 2);
	kl.first = 2;
	cr_expect_eq(signature_launch_at(ln, &kl, one, 1), 1);
	cr_expect_eq(one[0].ptr, SPTR(7));
	cr_expect_eq(kl.more, 0);
	kl.first = 3;
	cr_expect_eq(signature_launch_at(ln, &kl, one, 1), 0);
}

/* Pooling's counted outputs: the first parameter (int or int64_t) counts
 * the one floating output's elements, all written by a grid-stride loop
 * whatever the grid; max pooling's int64_t indices are no check's. */
Test(kdecode_fixture, pooling_outputs_hold_their_first_parameters_count)
{
	static const struct {
		const char *sub;
		int out;
		uint32_t csize;
		enum np_dtype dt;
	} k[] = {
		{ "avg_pool2d_out_cuda_frame<float, float>(", 13, 4, NP_DT_F32 },
		{ "avg_pool2d_out_cuda_frame_nhwc<c10::BFloat16, float>(", 13, 4, NP_DT_BF16 },
		{ "avg_pool2d_backward_out_cuda_frame<float, float, int>(", 13, 4, NP_DT_F32 },
		{ "avg_pool2d_backward_out_cuda_frame_nhwc<c10::BFloat16, float, int>(", 13, 4,
		  NP_DT_BF16 },
		{ "max_pool_forward_nchw<float, int>(", 15, 4, NP_DT_F32 },
		{ "max_pool_forward_nchw<c10::Half, long>(", 15, 8, NP_DT_F16 },
	};
	static struct launch ln;

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		const struct kline *kl = fixture_find(k[i].sub);
		struct np_kinfo ki;
		struct np_kparams l;
		struct np_kbuf out[4];
		int64_t count = 8 * 64 * 28 * 28;

		cr_assert_eq(np_kdecode_classify(kl->dem, &ki), NP_KF_EXPLICIT, "%s", kl->dem);
		cr_expect(ki.counted, "%s", kl->dem);
		cr_assert_gt(np_kdecode_layout_parse(kl->layout, &l), 0);
		cr_assert_eq(l.p[0].size, k[i].csize, "%s", kl->dem);
		lay_out(&ln, &l);
		for (int p = 0; p < l.n; p++)
			if (l.p[p].size == 8 && p)
				put64(&ln, &l, p, 0, SPTR(p));
		memcpy(ln.kp[0], &count, k[i].csize);   /* little-endian: int or int64 */
		cr_assert_eq(np_kdecode_outputs(&ki, &l, ln.kp, NULL, out, 4), 1, "%s", kl->dem);
		cr_expect_eq(out[0].ptr, SPTR(k[i].out), "%s", kl->dem);
		cr_expect_eq(out[0].numel, (uint64_t)count, "%s: numel %llu", kl->dem,
			     (unsigned long long)out[0].numel);
		cr_expect_eq(out[0].dtype, k[i].dt, "%s", kl->dem);
		count = -5;                             /* no launch of the host's: unsized */
		memcpy(ln.kp[0], &count, k[i].csize);
		cr_assert_eq(np_kdecode_outputs(&ki, &l, ln.kp, NULL, out, 4), 1);
		cr_expect_eq(out[0].numel, 0, "%s", kl->dem);
	}
}

Test(kdecode_fixture, null_optional_output_is_skipped)
{
	static struct launch ln;
	struct np_kinfo ki;
	struct np_kparams l;
	struct np_kbuf out[4];
	const struct kline *k = fixture_find("vectorized_layer_norm_kernel<float, float, false>");
	np_kdecode_classify(k->dem, &ki);
	np_kdecode_layout_parse(k->layout, &l);
	lay_out(&ln, &l);
	for (int i = 2; i < 8; i++)
		put64(&ln, &l, i, 0, i == 6 ? 0 : SPTR(i));
	cr_assert_eq(np_kdecode_outputs(&ki, &l, ln.kp, NULL, out, 4), 2);
	cr_expect_eq(out[0].ptr, SPTR(5));
	cr_expect_eq(out[1].ptr, SPTR(7));
}

Test(kdecode_fixture, pointer_words_inside_multi_tensor_apply_metadata)
{
	static struct launch ln;
	struct np_kinfo ki;
	struct np_kparams l;
	static uint64_t words[4096];
	struct np_kbuf out[4];
	const struct kline *k = fixture_find("FusedAdamMathFunctor<float, 5,");
	np_kdecode_classify(k->dem, &ki);
	np_kdecode_layout_parse(k->layout, &l);
	cr_assert_gt(l.p[0].size, 4096, "the metadata is passed by value, %u bytes", l.p[0].size);
	lay_out(&ln, &l);
	memset(ln.buf, 0, sizeof(ln.buf));
	put64(&ln, &l, 0, 0, DATA(1));          /* addresses[0][0] */
	put64(&ln, &l, 0, 8 * 30, DATA(2));     /* addresses[1][0] */
	put64(&ln, &l, 0, l.p[0].size - 8, DATA(3));
	cr_expect_eq(np_kdecode_outputs(&ki, &l, ln.kp, NULL, out, 4), 0,
		     "without the grid, which entries are this launch's is unknown");
	cr_assert_eq(np_kdecode_pointer_words(&l, ln.kp, words, 4096), 3);
	cr_expect_eq(words[0], DATA(1));
	cr_expect_eq(words[1], DATA(2));
	cr_expect_eq(words[2], DATA(3));
	cr_expect_eq(np_kdecode_pointer_words(&l, ln.kp, words, 2), 2, "max is honoured");
}

/* Crafted names: the dtype parser's edge cases. */
static struct np_kinfo classify(const char *name)
{
	struct np_kinfo ki;
	np_kdecode_classify(name, &ki);
	return ki;
}

Test(kdecode_names, scalar_type_spellings)
{
	static const struct {
		const char *name;
		int dtype;
		enum np_kdtype_why why;
	} t[] = {
		{ "void k(float*)", NP_DT_F32, NP_KDT_KNOWN },
		{ "void k(double*, float const*)", NP_DT_F64, NP_KDT_KNOWN },
		{ "void k(__half*)", NP_DT_F16, NP_KDT_KNOWN },
		{ "void k(cutlass::half_t*)", NP_DT_F16, NP_KDT_KNOWN },
		{ "void k(__nv_bfloat16*)", NP_DT_BF16, NP_KDT_KNOWN },
		{ "void k(cutlass::bfloat16_t*)", NP_DT_BF16, NP_KDT_KNOWN },
		{ "void k(c10::Float8_e4m3fn*)", NP_DT_F8E4M3, NP_KDT_KNOWN },
		{ "void k(__nv_fp8_e4m3*)", NP_DT_F8E4M3, NP_KDT_KNOWN },
		{ "void k(c10::Float8_e5m2*)", NP_DT_F8E5M2, NP_KDT_KNOWN },
		{ "void k(cutlass::float_e5m2_t*)", NP_DT_F8E5M2, NP_KDT_KNOWN },
		/* formats finite.h has no check for, and non-floats */
		{ "void k(c10::Float8_e5m2fnuz*)", -1, NP_KDT_UNCHECKABLE },
		{ "void k(c10::Float8_e4m3fnuz*)", -1, NP_KDT_UNCHECKABLE },
		{ "void k(c10::Float8_e8m0fnu*)", -1, NP_KDT_UNCHECKABLE },
		{ "void k(c10::complex<float>*, float const*)", -1, NP_KDT_UNCHECKABLE },
		{ "void k(bool*)", -1, NP_KDT_UNCHECKABLE },
		{ "void k(unsigned long long*)", -1, NP_KDT_UNCHECKABLE },
		/* 'float' inside other names is not float */
		{ "void k(float4*)", -1, NP_KDT_UNKNOWN },
		{ "void k(float2 const*, floatish*)", -1, NP_KDT_UNKNOWN },
		{ "void k(my::float*)", -1, NP_KDT_UNKNOWN },
		{ "void k(float_t*)", -1, NP_KDT_UNKNOWN },
		{ "void k(halfway*)", -1, NP_KDT_UNKNOWN },
		/* aliases layer and batch norm use */
		{ "void k(std::conditional<true, float, c10::Half>::type*)", NP_DT_F32, NP_KDT_KNOWN },
		{ "void k(std::conditional<false, float, c10::Half>::type*)", NP_DT_F16, NP_KDT_KNOWN },
		{ "void k(at::AccumulateType<c10::BFloat16, true>::type*)", NP_DT_F32, NP_KDT_KNOWN },
		{ "void k(at::AccumulateType<double, true>::type*)", NP_DT_F64, NP_KDT_KNOWN },
		{ "void k(at::AccumulateType<c10::Half, false>::type*)", -1, NP_KDT_UNKNOWN },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct np_kinfo ki = classify(t[i].name);
		cr_expect_eq(ki.dtype, t[i].dtype, "%s: dtype %d", t[i].name, ki.dtype);
		cr_expect_eq(ki.dtype_why, t[i].why, "%s: why %d", t[i].name, ki.dtype_why);
	}
}

Test(kdecode_names, pointer_kinds)
{
	struct np_kinfo ki = classify("void ns::k<float>(float*, float const*, float volatile*, "
				      "float const volatile*, float**, void*, int, "
				      "at::Foo<float*, 2>, c10::Half, long const*)");
	static const int kind[] = { NP_KP_OUT_PTR, NP_KP_IN_PTR, NP_KP_OUT_PTR, NP_KP_IN_PTR,
				    NP_KP_OTHER_PTR, NP_KP_OTHER_PTR, NP_KP_SCALAR,
				    NP_KP_AGGREGATE, NP_KP_SCALAR, NP_KP_IN_PTR };
	cr_assert_eq(ki.nsig, 10);
	cr_expect_eq(ki.family, NP_KF_EXPLICIT);
	for (int i = 0; i < 10; i++)
		cr_expect_eq(ki.sig[i].kind, kind[i], "param %d: kind %d", i, ki.sig[i].kind);
	cr_expect_eq(ki.sig[1].dtype, NP_DT_F32);
	cr_expect_eq(ki.sig[9].dtype, -1);
	cr_expect_eq(ki.sig[9].why, NP_KDT_UNCHECKABLE);
}

Test(kdecode_names, explicit_outputs_skip_unknown_pointees)
{
	struct np_kinfo ki = classify("void k(floatish*, float*, c10::Half*, int*, float const*)");
	struct np_kparams l;
	uint64_t v[5] = { DATA(0), DATA(1), DATA(2), DATA(3), DATA(4) };
	void *kp[5] = { &v[0], &v[1], &v[2], &v[3], &v[4] };
	struct np_kbuf out[4];
	cr_assert_eq(np_kdecode_layout_parse("0:8,8:8,16:8,24:8,32:8", &l), 5);
	cr_expect_eq(ki.dtype, -1, "the first output's type is not a known float");
	cr_assert_eq(np_kdecode_outputs(&ki, &l, kp, NULL, out, 4), 2);
	cr_expect_eq(out[0].ptr, DATA(1));
	cr_expect_eq(out[0].dtype, NP_DT_F32);
	cr_expect_eq(out[1].ptr, DATA(2));
	cr_expect_eq(out[1].dtype, NP_DT_F16);
	/* a layout with another parameter count is another function: nothing */
	l.n = 4;
	cr_expect_eq(np_kdecode_outputs(&ki, &l, kp, NULL, out, 4), 0);
	l.n = 5;
	/* a pointer parameter of the wrong size is a misread name: skipped */
	l.p[1].size = 4;
	cr_expect_eq(np_kdecode_outputs(&ki, &l, kp, NULL, out, 4), 1);
}

/* A vectorized elementwise kernel of functor (or lambda) f, classified. */
static struct np_kinfo classify_functor(const char *f)
{
	char name[512];
	snprintf(name, sizeof(name),
		 "void at::native::vectorized_elementwise_kernel<4, %s, std::array<char*, 3ul>, "
		 "false>(int, %s, std::array<char*, 3ul>)", f, f);
	return classify(name);
}

Test(kdecode_names, elementwise_functors_and_lambdas)
{
	static const struct {
		const char *functor;
		int dtype;
		enum np_kdtype_why why;
	} t[] = {
		/* result type is the third argument, not the inputs' */
		{ "at::native::BinaryFunctor<c10::Half, c10::Half, float, at::native::F<float> >",
		  NP_DT_F32, NP_KDT_KNOWN },
		{ "at::native::AUnaryFunctor<float, float, c10::BFloat16, at::native::F>", NP_DT_BF16,
		  NP_KDT_KNOWN },
		/* a complex result: its parts' dtype (ki.pairs, below) */
		{ "at::native::FillFunctor<c10::complex<double> >", NP_DT_F64, NP_KDT_KNOWN },
		{ "at::native::SomeNewFunctor<float>", -1, NP_KDT_UNKNOWN },
		{ "at::native::op(at::TensorIteratorBase&)::{lambda(float, double)#1}", -1,
		  NP_KDT_UNKNOWN },
		{ "at::native::op(at::TensorIteratorBase&)::{lambda()#1}", -1, NP_KDT_UNKNOWN },
		{ "at::native::op(at::TensorIteratorBase&)::{lambda(int, int)#1}", -1, NP_KDT_UNKNOWN },
		{ "at::native::op(at::TensorIteratorBase&)::{lambda(double, double)#1}", NP_DT_F64,
		  NP_KDT_INFERRED },
		{ "at::native::isnan_kernel(at::TensorIteratorBase&)::{lambda(float)#1}", -1,
		  NP_KDT_UNKNOWN },
		/* torch's direct copy: its lambda's parameter is the output's
		 * dtype (Copy.cu: scalar_t of iter.dtype(0)), whatever it loads;
		 * the copies that cast in the lambda are other functions */
		{ "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#1}",
		  NP_DT_F32, NP_KDT_INFERRED },
		{ "at::native::float16_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#1}",
		  -1, NP_KDT_UNKNOWN },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct np_kinfo ki = classify_functor(t[i].functor);
		cr_expect_eq(ki.family, NP_KF_VEC_ELEMENTWISE, "%s", t[i].functor);
		cr_expect_eq(ki.narrays, 3);
		cr_expect_eq(ki.dtype, t[i].dtype, "%s: dtype %d", t[i].functor, ki.dtype);
		cr_expect_eq(ki.dtype_why, t[i].why, "%s: why %d", t[i].functor, ki.dtype_why);
	}
}

/* Complex outputs (RoPE's freqs_cis product, a spectral layer's
 * weights times an FFT): checked as torch.view_as_real shows them, the
 * parts' dtype and twice the elements, from torch 2.14.1's own kernels. */
Test(kdecode_fixture, complex_outputs_are_their_real_view)
{
	static struct launch ln;
	static const struct {
		const char *sub;
		int dtype, pairs;
		enum np_kdtype_why why;
		int in_dtype, in_pairs;
		int reads;      /* inputs, read over N values each (2N parts if complex) */
	} t[] = {
		{ "vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::complex<float>, c10::complex<float>, c10::complex<float>, at::native::binary_internal::MulFunctor",
		  NP_DT_F32, 1, NP_KDT_KNOWN, NP_DT_F32, 1, 2 },
		/* x * a with a captured: one complex input */
		{ "vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<c10::complex<double>,",
		  NP_DT_F64, 1, NP_KDT_KNOWN, NP_DT_F64, 1, 1 },
		{ "vectorized_elementwise_kernel<4, at::native::tanh_kernel_cuda(", NP_DT_F32, 1,
		  NP_KDT_INFERRED, NP_DT_F32, 1, 1 },
		/* torch.complex(re, im): a lambda of two floats that makes one
		 * complex64 value (1000 of them: 2000 parts, not 1000 floats) */
		{ "complex_kernel_cuda(at::TensorIterator&)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float, float)#1}, std::array<char*, 3ul>",
		  NP_DT_F32, 1, NP_KDT_INFERRED, NP_DT_F32, 0, 2 },
		/* complex in, bool out: the inputs' type known, no output to
		 * size them by */
		{ "vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::complex<float>, c10::complex<float>, bool,",
		  -1, 0, NP_KDT_UNCHECKABLE, NP_DT_F32, 1, 0 },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct np_kinfo ki;
		struct np_kparams l;
		struct np_kbuf out[4];
		struct np_kread in[4];
		const struct kline *k = fixture_find(t[i].sub);
		cr_assert_eq(np_kdecode_classify(k->dem, &ki), NP_KF_VEC_ELEMENTWISE, "%s", t[i].sub);
		cr_expect_eq(ki.dtype, t[i].dtype, "%s: dtype %d", t[i].sub, ki.dtype);
		cr_expect_eq(ki.pairs, t[i].pairs, "%s: pairs %d", t[i].sub, ki.pairs);
		cr_expect_eq(ki.dtype_why, t[i].why, "%s: why %d", t[i].sub, ki.dtype_why);
		/* inputs offered to the generic tier, complex ones as their
		 * real view (what cuFFT wrote, read by a spectral multiply) */
		cr_expect_eq(ki.in_dtype, t[i].in_dtype, "%s", t[i].sub);
		cr_expect_eq(ki.in_pairs, t[i].in_pairs, "%s", t[i].sub);
		np_kdecode_layout_parse(k->layout, &l);
		elementwise_launch(&ln, &l, 1000, 0);
		int n = np_kdecode_outputs(&ki, &l, ln.kp, NULL, out, 4);
		cr_assert_eq(n, t[i].dtype >= 0, "%s: %d outputs", t[i].sub, n);
		cr_assert_eq(np_kdecode_reads(&ki, &l, ln.kp, NULL, in, 4), t[i].reads, "%s",
			     t[i].sub);
		for (int k = 0; k < t[i].reads; k++) {
			cr_expect_eq(in[k].ptr, DATA(k + 1));
			cr_expect_eq(in[k].numel, 1000u << t[i].in_pairs, "%s: read %d", t[i].sub, k);
			cr_expect_eq((int)in[k].dtype, t[i].in_dtype);
			cr_expect_eq(in[k].pairs, t[i].in_pairs);
		}
		if (!n)
			continue;
		cr_expect_eq(out[0].ptr, DATA(0));
		cr_expect_eq(out[0].numel, 2000, "%s: 1000 complex values, 2000 parts", t[i].sub);
		cr_expect_eq((int)out[0].dtype, t[i].dtype);
		cr_expect_eq(out[0].pairs, 1);
	}
	/* the strided kernels and complex32's fill: named as their parts */
	static const char *const lambda_sub[] = {
		"elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<c10::complex<float>, c10::complex<float>, c10::complex<float>, at::native::binary_internal::MulFunctor",
		"elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::FillFunctor<c10::complex<c10::Half> > >",
	};
	static const int lambda_dtype[] = { NP_DT_F32, NP_DT_F16 };
	for (size_t i = 0; i < 2; i++) {
		struct np_kinfo ki;
		np_kdecode_classify(fixture_find(lambda_sub[i])->dem, &ki);
		cr_expect_eq(ki.family, NP_KF_LAMBDA_ELEMENTWISE);
		cr_expect_eq(ki.dtype, lambda_dtype[i], "%s: dtype %d", lambda_sub[i], ki.dtype);
		cr_expect_eq(ki.pairs, 1, "%s", lambda_sub[i]);
	}
}

Test(kdecode_names, complex_results_and_the_ops_that_make_them_real)
{
	static const struct {
		const char *functor;
		int dtype, pairs;
	} t[] = {
		{ "at::native::BinaryFunctor<c10::complex<float>, c10::complex<float>, float, at::native::F>",
		  NP_DT_F32, 0 },
		{ "at::native::BinaryFunctor<float, float, c10::complex<float>, at::native::F>",
		  NP_DT_F32, 1 },
		{ "at::native::CUDAFunctor_add<c10::complex<c10::Half> >", NP_DT_F16, 1 },
		/* |z| is real: AbsFunctor names its input type */
		{ "at::native::AbsFunctor<c10::complex<float> >", -1, 0 },
		{ "at::native::op(at::TensorIteratorBase&)::{lambda(c10::complex<double>)#1}", NP_DT_F64,
		  1 },
		{ "at::native::abs_kernel_cuda(at::TensorIteratorBase&)::{lambda(c10::complex<float>)#1}",
		  -1, 0 },
		{ "at::native::angle_kernel_cuda(at::TensorIteratorBase&)::{lambda(c10::complex<float>)#1}",
		  -1, 0 },
		/* mixed parameters: no one type */
		{ "at::native::op(at::TensorIteratorBase&)::{lambda(c10::complex<float>, float)#1}", -1,
		  0 },
		/* parts no check reads, and other complex types */
		{ "at::native::FillFunctor<c10::complex<int> >", -1, 0 },
		{ "at::native::FillFunctor<c10::complex<c10::BFloat16> >", -1, 0 },
		{ "at::native::FillFunctor<std::complex<float> >", -1, 0 },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct np_kinfo ki = classify_functor(t[i].functor);
		cr_expect_eq(ki.dtype, t[i].dtype, "%s: dtype %d", t[i].functor, ki.dtype);
		cr_expect_eq(ki.pairs, t[i].pairs, "%s: pairs %d", t[i].functor, ki.pairs);
	}
	/* a complex pointer in a signature stays a type no check reads */
	struct np_kinfo ki = classify("void k(c10::complex<float>*, float const*)");
	cr_expect_eq(ki.sig[0].dtype, -1);
	cr_expect_eq(ki.sig[0].why, NP_KDT_UNCHECKABLE);
}

Test(kdecode_names, malformed_and_odd_names)
{
	static const char *const unknown[] = {
		"", "my_kernel", "_Z9my_kernelPf", "void", "void k<float>", "void k(float*",
		"void k<float(float*)", "void k(int, long)",
	};
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		struct np_kinfo ki = classify(unknown[i]);
		cr_expect_eq(ki.family, NP_KF_UNKNOWN, "\"%s\": %s", unknown[i],
			     np_kfamily_name(ki.family));
		cr_expect_eq(ki.dtype, -1, "\"%s\"", unknown[i]);
	}
	struct np_kinfo ki;
	cr_expect_eq(np_kdecode_classify(NULL, &ki), NP_KF_UNKNOWN);
	/* a pointer list makes it explicit, even with no dtype to name */
	ki = classify("void at::native::float8_copy_kernel_cuda_like(float8_t*)");
	cr_expect_eq(ki.family, NP_KF_EXPLICIT);
	cr_expect_eq(ki.dtype, -1);
	cr_expect_eq(ki.dtype_why, NP_KDT_UNKNOWN);
	ki = classify("void k()");
	cr_expect_eq(ki.nsig, 0);
	/* more parameters than we track: no signature at all, not a truncated one */
	char big[2048] = "void k(float*";
	for (int i = 1; i < NP_KD_MAX_PARAMS + 1; i++)
		strcat(big, ", int");
	strcat(big, ")");
	ki = classify(big);
	cr_expect_eq(ki.nsig, -1);
	cr_expect_eq(ki.family, NP_KF_UNKNOWN);
	cr_expect_str_eq(np_kfamily_name(NP_KF_MULTI_TENSOR_APPLY), "multi_tensor_apply");
	cr_expect_str_eq(np_kfamily_name((enum np_kfamily)99), "?");
}

Test(kdecode_layout, parse)
{
	struct np_kparams l;
	cr_expect_eq(np_kdecode_layout_parse("", &l), 0);
	cr_expect_eq(np_kdecode_layout_parse("0:4", &l), 1);
	cr_expect_eq(np_kdecode_layout_parse("0:4,8:24,32:8", &l), 3);
	cr_expect_eq(l.p[1].offset, 8);
	cr_expect_eq(l.p[1].size, 24);
	static const char *const bad[] = { "0:4,", "a:1", "0:", "0", ":4", "0:4;8:8", "0:4 ",
					   "4294967296:1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(np_kdecode_layout_parse(bad[i], &l), -1, "\"%s\"", bad[i]);
	char many[1024] = "0:8";
	for (int i = 1; i < NP_KD_MAX_PARAMS; i++)
		sprintf(many + strlen(many), ",%d:8", 8 * i);
	cr_expect_eq(np_kdecode_layout_parse(many, &l), NP_KD_MAX_PARAMS);
	strcat(many, ",9999:8");
	cr_expect_eq(np_kdecode_layout_parse(many, &l), -1);
}

Test(kdecode_layout, pointer_word_bounds_and_alignment)
{
	/* param 0: int at 0; param 1: 20-byte struct at 4 whose 8-aligned words
	 * (device offsets 8 and 16) are its bytes 4..11 and 12..19; param 2:
	 * 8 bytes at 24 */
	unsigned char p1[20];
	uint32_t n = 7;
	uint64_t lo = NP_KD_PTR_MIN, below = NP_KD_PTR_MIN - 1, top = NP_KD_PTR_MAX - 1;
	uint64_t above = NP_KD_PTR_MAX, words[8];
	void *kp[3] = { &n, p1, &top };
	struct np_kparams l;
	cr_assert_eq(np_kdecode_layout_parse("0:4,4:20,24:8", &l), 3);
	memset(p1, 0, sizeof(p1));
	memcpy(p1, &lo, 4);             /* bytes 0..3: not 8-aligned on the device */
	memcpy(p1 + 4, &lo, 8);
	memcpy(p1 + 12, &below, 8);
	cr_assert_eq(np_kdecode_pointer_words(&l, kp, words, 8), 2);
	cr_expect_eq(words[0], top, "an 8-byte parameter first");
	cr_expect_eq(words[1], lo);
	memcpy(p1 + 12, &above, 8);
	cr_expect_eq(np_kdecode_pointer_words(&l, kp, words, 8), 2);
	cr_expect_eq(np_kdecode_pointer_words(&l, kp, words, 1), 1);
	cr_expect_eq(words[0], top);
	cr_expect_eq(np_kdecode_pointer_words(&l, kp, words, 0), 0);
	cr_expect_eq(np_kdecode_pointer_words(&l, NULL, words, 8), 0);
}
