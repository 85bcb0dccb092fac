/* test_kdecode_lambda.c - a strided elementwise kernel's output, read from
 * its lambda (cupti/kdecode_lambda.c through np_kdecode_outputs).
 *
 * The launches are real: tests/unit/fixtures/lambda_ops.tsv holds the
 * parameters torch 2.13's own gpu_kernel_impl_nocast and gpu_kernel_impl
 * passed, run on CPU tensors' TensorIterators with the launch intercepted
 * (tests/fixtures/lambda_ops.cu), with the layouts nvcc gave the kernels
 * and the outputs each must yield; the rest of each lambda is what the
 * host stack held.  lambda_ops_1.tsv holds torch 1.13's, whose
 * gpu_kernel_impl has both lambdas (#1 same-dtype, #2 casting).  Each
 * test runs in a process of its own, which sees one torch.  The other
 * tests check that a launch which does not agree with its lambda yields
 * nothing. */
#include "fixture.h"
#include "launch_fixture.h"

static struct fx_launch cases[24], cases_1[24];  /* torch 2.13's, torch 1.13's */
static int ncases, ncases_1;

static void load_cases(void)
{
	ncases = ncases_1 = 0;
	fx_load("tests/unit/fixtures/lambda_ops.tsv", cases, &ncases, 24, 10);
	fx_load("tests/unit/fixtures/lambda_ops_1.tsv", cases_1, &ncases_1, 24, 10);
}

/* Decodes c with kl instead of its own launch, if given. */
static int decode(const struct fx_launch *c, const struct np_klaunch *kl, struct np_kbuf *out)
{
	struct np_kinfo ki;
	void *kp[NP_KD_MAX_PARAMS];

	fx_params(c, kp);
	cr_assert_eq(np_kdecode_classify(c->name, &ki), NP_KF_LAMBDA_ELEMENTWISE, "%s", c->name);
	return np_kdecode_outputs(&ki, &c->l, kp, (struct np_klaunch *)(kl ? kl : &c->kl), out,
				  NP_KD_MAX_OUTPUTS);
}

/* Shows the decoder a torch 2.x process: a gpu_kernel_impl_nocast kernel
 * (then gpu_kernel_impl's lambda #1 is the casting one). */
static void seen_torch_2(void)
{
	struct np_kinfo ki;
	np_kdecode_classify(fx_find(cases, ncases, "exp_transposed")->name, &ki);
	cr_assert_eq(ki.lam.kind, NP_KL_NOCAST);
}

TestSuite(kdecode_lambda, .init = load_cases);

/* Shows the decoder a torch 1.x process: gpu_kernel_impl's lambda #2. */
static void seen_torch_1(void)
{
	struct np_kinfo ki;
	np_kdecode_classify(fx_find(cases_1, ncases_1, "exp_cast_half_in")->name, &ki);
	cr_assert_eq(ki.lam.kind, NP_KL_CASTING);
}

/* Each test runs in a process of its own: the era starts unknown. */
Test(kdecode_lambda, gpu_kernel_impls_first_lambda_waits_for_the_torch_era)
{
	const struct fx_launch *c = fx_find(cases, ncases, "exp_cast_half_in");
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	cr_expect_eq(decode(c, NULL, out), 0, "casting in torch 2.x, not in 1.x: not read yet");
	seen_torch_2();
	cr_expect_eq(decode(c, NULL, out), 1);
	cr_expect_eq(out[0].dtype, NP_DT_F32);
}

Test(kdecode_lambda, in_torch_1_the_first_lambda_does_not_cast)
{
	const struct fx_launch *c = fx_find(cases_1, ncases_1, "half_mul_transposed");
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	struct np_kinfo ki;

	np_kdecode_classify(c->name, &ki);
	cr_assert_eq(ki.lam.kind, NP_KL_IMPL_FIRST, "%s", c->name);
	cr_expect_eq(decode(c, NULL, out), 0, "not read before the era is known");
	seen_torch_1();
	cr_assert_eq(decode(c, NULL, out), 1);
	cr_expect_eq(out[0].dtype, NP_DT_F16, "the functor's result type");
}

static void expect_all(const struct fx_launch *all, int n_all)
{
	for (int i = 0; i < n_all; i++) {
		const struct fx_launch *c = &all[i];
		struct np_kbuf out[NP_KD_MAX_OUTPUTS];
		int n = decode(c, NULL, out);

		cr_expect_eq(n, c->nwant, "%s %s: %d outputs, want %d", c->file, c->label, n,
			     c->nwant);
		if (n != 1 || c->nwant != 1)
			continue;
		cr_expect_eq(out[0].ptr, c->want_ptr[0], "%s %s: %#" PRIx64, c->file, c->label,
			     out[0].ptr);
		cr_expect_eq(out[0].numel, c->want_numel[0], "%s %s: %" PRIu64 " elements", c->file,
			     c->label, out[0].numel);
		cr_expect_eq(out[0].how, NP_KH_STRIDED, "%s", c->label);
		cr_expect_geq(out[0].n_in, 1, "%s: its inputs", c->label);
		for (int k = 0; k < out[0].n_in; k++)
			cr_expect_neq(out[0].in[k], out[0].ptr, "%s: input %d is the output", c->label, k);
	}
}

Test(kdecode_lambda, every_real_torch_2_lambda_yields_exactly_its_output)
{
	seen_torch_2();
	expect_all(cases, ncases);
}

Test(kdecode_lambda, every_real_torch_1_lambda_yields_exactly_its_output)
{
	seen_torch_1();
	expect_all(cases_1, ncases_1);
}

Test(kdecode_lambda, dtypes_from_the_name_or_from_the_lambda_when_it_casts)
{
	static const struct {
		const char *label;
		enum np_dtype dtype;
		int inputs;
	} want[] = {
		{ "exp_transposed", NP_DT_F32, 1 },     /* first: shows torch 2.x */
		{ "add_broadcast_alpha", NP_DT_F32, 2 },
		{ "addcmul_3_inputs", NP_DT_F32, 3 },
		{ "half_mul_transposed", NP_DT_F16, 2 },
		{ "half_add_broadcast", NP_DT_F16, 2 },
		{ "exp_cast_half_in", NP_DT_F32, 1 },          /* computed and stored as float */
		{ "add_cast_bf16_out", NP_DT_BF16, 2 },        /* float math, a bfloat16 output */
		/* complex64 outputs, checked as their real view (pairs) */
		{ "complex_mul_transposed", NP_DT_F32, 2 },
		{ "complex_mul_cast_float_in", NP_DT_F32, 2 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct np_kbuf out[NP_KD_MAX_OUTPUTS];
		cr_assert_eq(decode(fx_find(cases, ncases, want[i].label), NULL, out), 1, "%s",
			     want[i].label);
		cr_expect_eq(out[0].dtype, want[i].dtype, "%s: dtype %d", want[i].label,
			     out[0].dtype);
		cr_expect_eq(out[0].n_in, want[i].inputs, "%s: %d inputs", want[i].label,
			     out[0].n_in);
		cr_expect_eq(out[0].pairs, !strncmp(want[i].label, "complex", 7), "%s: pairs %d",
			     want[i].label, out[0].pairs);
	}
}

/* The grid and block launch_legacy_kernel makes from N: any other means
 * the bytes are not this lambda. */
Test(kdecode_lambda, a_launch_that_disagrees_with_n_yields_nothing)
{
	const struct fx_launch *c = fx_find(cases, ncases, "add_broadcast_3d");   /* 24 blocks */
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	struct np_klaunch kl;

	cr_assert_eq(decode(c, NULL, out), 1);
	kl = c->kl;
	kl.grid[0]--;
	cr_expect_eq(decode(c, &kl, out), 0, "a block short");
	kl = c->kl;
	kl.block[0] = 256;
	cr_expect_eq(decode(c, &kl, out), 0, "other threads per block");
	kl = c->kl;
	kl.grid[1] = 2;
	cr_expect_eq(decode(c, &kl, out), 0, "a 2-D grid");
}

/* Every dimension's IntDivider must hold its constructor's magic numbers,
 * and the sizes must multiply to N: a lambda misread as another shape
 * fails one of them. */
Test(kdecode_lambda, sizes_and_their_dividers_must_agree_with_n)
{
	static struct fx_launch c;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	uint32_t m1;

	c = *fx_find(cases, ncases, "exp_transposed");      /* [6, 4]: dims 4 and 6 */
	cr_assert_eq(decode(&c, NULL, out), 1);
	memcpy(&m1, c.buf + 8 + 4 + 12 + 4, 4);                /* dim 1's m1 */
	m1 ^= 1;
	memcpy(c.buf + 8 + 4 + 12 + 4, &m1, 4);
	cr_expect_eq(decode(&c, NULL, out), 0, "a divider's magic number off by one");

	c = *fx_find(cases, ncases, "exp_transposed");
	int32_t n = 25;                                        /* 24 elements, grid of 1 still */
	memcpy(c.buf, &n, 4);
	cr_expect_eq(decode(&c, NULL, out), 0, "N is not the sizes' product");
}

/* Replaces every from in s (of room bytes) with to. */
static void replace_all(char *s, size_t room, const char *from, const char *to)
{
	char tmp[sizeof(((struct fx_launch *)0)->name)];
	char *at;
	while ((at = strstr(s, from))) {
		snprintf(tmp, sizeof(tmp), "%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
		snprintf(s, room, "%s", tmp);
	}
}

/* The functor's arity, when the name gives it, fixes the tensor count: a
 * name that says two inputs for a lambda of one refuses it, as does one
 * whose result type the strides contradict. */
Test(kdecode_lambda, the_name_must_agree_with_the_lambda)
{
	static struct fx_launch c;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];

	c = *fx_find(cases, ncases, "exp_transposed");
	cr_assert_eq(decode(&c, NULL, out), 1);
	replace_all(c.name, sizeof(c.name), "{lambda(float)#1}", "{lambda(float, float)#1}");
	cr_expect_eq(decode(&c, NULL, out), 0, "three tensors named, two captured");

	c = *fx_find(cases, ncases, "exp_transposed");
	replace_all(c.name, sizeof(c.name), "{lambda(float)#1}", "{lambda(double)#1}");
	cr_expect_eq(decode(&c, NULL, out), 0, "a double output whose strides are 4 bytes");
}

/* A functor the name does not explain (arity unknown): the tensor count
 * is the one whose data pointers fit, and only if no other does. */
Test(kdecode_lambda, an_unknown_functor_needs_exactly_one_tensor_count_to_fit)
{
	static struct fx_launch c;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	uint64_t zero = 0, ptr = 0x7f0000100000ull;
	const uint32_t one_at = 8 + 408, two_at = 8 + 504;   /* where 1 or 2 tensors'
							       * pointers would be: in the
							       * 3-tensor strides' unused dims,
							       * which hold host stack garbage */

	seen_torch_2();
	c = *fx_find(cases, ncases, "add_cast_bf16_out");     /* casting: dtype from the lambda */
	replace_all(c.name, sizeof(c.name), "CUDAFunctor_add<float>", "Mystery<float>");
	memcpy(c.buf + one_at, &zero, 8);
	memcpy(c.buf + two_at, &zero, 8);
	memcpy(c.buf + two_at + 8, &zero, 8);
	cr_assert_eq(decode(&c, NULL, out), 1, "3 tensors, the only count that fits");
	cr_expect_eq(out[0].n_in, 2);
	memcpy(c.buf + two_at, &ptr, 8);
	memcpy(c.buf + two_at + 8, &ptr, 8);
	cr_expect_eq(decode(&c, NULL, out), 0, "2 tensors fit as well: ambiguous");
}

/* The casting lambda's dtypes array is found by its bytes: a second place
 * that could hold it makes the output's type unknown. */
Test(kdecode_lambda, a_second_place_for_the_dtypes_refuses_the_launch)
{
	static struct fx_launch c;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	/* exp_cast_half_in: f (1 byte) at 520, dtypes {Float, Half} at 521,
	 * padding to 528, the host pointer (all in the lambda, parameter 1 at 8) */
	seen_torch_2();
	c = *fx_find(cases, ncases, "exp_cast_half_in");
	cr_assert_eq(decode(&c, NULL, out), 1);
	cr_assert(c.buf[8 + 521] == 6 && c.buf[8 + 522] == 5, "dtypes at 521: %d %d",
		  c.buf[8 + 521], c.buf[8 + 522]);
	c.buf[8 + 524] = 6;     /* Float, Byte: another dtypes array in the padding */
	c.buf[8 + 525] = 0;
	cr_expect_eq(decode(&c, NULL, out), 0);
}

/* complex_mul_cast_float_in: dtypes {ComplexFloat, Float, ComplexFloat}
 * at 633, zero padding to 640: the last input's byte and the padding
 * after it fit as a place too, an echo of the array, not a second one;
 * the same with a byte of that padding set is two places. */
Test(kdecode_lambda, the_arrays_echo_in_its_padding_is_not_a_second_place)
{
	static struct fx_launch c;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	seen_torch_2();
	c = *fx_find(cases, ncases, "complex_mul_cast_float_in");
	cr_assert(c.buf[8 + 633] == 9 && c.buf[8 + 634] == 6 && c.buf[8 + 635] == 9 &&
		  c.buf[8 + 636] == 0 && c.buf[8 + 637] == 0, "dtypes at 633");
	cr_assert_eq(decode(&c, NULL, out), 1);
	cr_expect_eq(out[0].numel, 24, "12 complex values");
	c.buf[8 + 636] = 6;
	cr_expect_eq(decode(&c, NULL, out), 0);
}

/* torch's own strided elementwise kernels (torch_kernels.tsv, and
 * torch_kernels_2.11.tsv for 2.11.0):
 * the lambda of N tensors and a functor of F bytes is
 * align8(align8(304 + 100 N) + 8 N + F [+ N]) + 8 bytes; each real one's
 * size must fit that with some N and a small functor. */
static void lambdas_have_the_assumed_size(void (*load)(void))
{
	int seen = 0;
	load();
	for (int i = 0; i < nlines; i++) {
		struct np_kinfo ki;
		struct np_kparams l;
		int fits = 0;
		if (np_kdecode_classify(lines[i].dem, &ki) != NP_KF_LAMBDA_ELEMENTWISE || !ki.lam.kind)
			continue;
		cr_assert_eq(np_kdecode_layout_parse(lines[i].layout, &l), 2, "%s", lines[i].dem);
		cr_expect_eq(l.p[0].size, 4);
		uint32_t size = l.p[1].size;
		for (uint32_t nt = 1; nt <= 8; nt++) {
			uint32_t data = (304 + 100 * nt + 7) & ~7u, base = data + 8 * nt;
			if (size >= ((base + 1 + 7) & ~7u) + 8 && size <= base + 64 + 8 + 8)
				fits += !ki.lam.arity || nt == ki.lam.arity + 1u;
		}
		cr_expect_eq(fits, 1, "%s: %u bytes", lines[i].dem, size);
		seen++;
	}
	cr_expect_geq(seen, 10, "only %d strided elementwise kernels in the fixture", seen);
	fixture_unload();
}

Test(kdecode_lambda, torch_2_14_lambdas_have_the_assumed_size)
{
	lambdas_have_the_assumed_size(fixture_load);
}

/* torch 2.11.0's, the GPU test host's, too */
Test(kdecode_lambda, torch_2_11_lambdas_have_the_assumed_size)
{
	lambdas_have_the_assumed_size(fixture_load_2_11);
}

/* The generic tier checks what an input reads (np_kdecode_reads): each
 * _nocast lambda's inputs, as many elements as the tensor they read has,
 * a broadcast one only its own (shapes from tests/fixtures/lambda_ops.cu). */
static int reads(const struct fx_launch *c, struct np_kread *in)
{
	struct np_kinfo ki;
	void *kp[NP_KD_MAX_PARAMS];
	fx_params(c, kp);
	np_kdecode_classify(c->name, &ki);
	return np_kdecode_reads(&ki, &c->l, kp, &c->kl, in, 8);
}

Test(kdecode_lambda, a_strided_kernel_reads_each_input_over_its_own_elements)
{
	static const struct {
		const char *label;
		int n;
		uint64_t numel[3];
		enum np_dtype dtype;
	} want[] = {
		{ "exp_transposed", 1, { 24 }, NP_DT_F32 },            /* x [4, 6].t() */
		{ "add_broadcast_alpha", 2, { 40, 5 }, NP_DT_F32 },    /* [8, 5] + [5] */
		{ "add_broadcast_3d", 2, { 6144, 32 }, NP_DT_F32 },
		{ "addcmul_3_inputs", 3, { 63, 7, 63 }, NP_DT_F32 },   /* [7, 9], [7, 1], [7, 9] */
		{ "half_mul_transposed", 2, { 30, 30 }, NP_DT_F16 },
		{ "half_add_broadcast", 2, { 60, 10 }, NP_DT_F16 },
		{ "exp_into_transposed", 1, { 24 }, NP_DT_F32 },
		/* complex64 [5, 4].t() times [4, 5]: 20 values, 40 parts each */
		{ "complex_mul_transposed", 2, { 40, 40 }, NP_DT_F32 },
		/* not read: a (bool, float, float) lambda, an output with gaps, casts */
		{ "where_mixed_args", 0, { 0 }, 0 },
		{ "exp_into_strided", 0, { 0 }, 0 },
		{ "add_cast_bf16_out", 0, { 0 }, 0 },
		{ "complex_mul_cast_float_in", 0, { 0 }, 0 },
	};
	seen_torch_2();
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct fx_launch *c = fx_find(cases, ncases, want[i].label);
		struct np_kbuf out[NP_KD_MAX_OUTPUTS];
		struct np_kread in[8];
		int n = reads(c, in), nout = decode(c, NULL, out);
		cr_assert_eq(n, want[i].n, "%s: %d reads", want[i].label, n);
		for (int k = 0; k < n; k++) {
			cr_expect_eq(in[k].numel, want[i].numel[k], "%s: input %d reads %" PRIu64,
				     want[i].label, k, in[k].numel);
			cr_expect_eq(in[k].dtype, want[i].dtype, "%s", want[i].label);
			cr_expect_eq(in[k].pairs, !strncmp(want[i].label, "complex", 7), "%s",
				     want[i].label);
			cr_assert_eq(nout, 1);
			cr_expect_eq(in[k].ptr, out[0].in[k], "%s: input %d's address", want[i].label, k);
		}
	}
}

Test(kdecode_lambda, an_input_with_gaps_is_not_read)
{
	/* add_broadcast_alpha: dims in the output's stride order, [5] then
	 * [8]; the bias (operand 2) has strides 4 and 0.  Its stride in the
	 * 8-row dimension made 40 bytes: rows of 5 floats with gaps of 5,
	 * not one dense range; 20: a dense [8, 5] */
	struct fx_launch c = *fx_find(cases, ncases, "add_broadcast_alpha");
	struct np_kread in[8];
	const uint32_t nt = 3, strides = 4 + 25 * 12, at = strides + (1 * nt + 2) * 4;
	uint32_t st;
	seen_torch_2();
	memcpy(&st, c.buf + c.l.p[1].offset + at, 4);
	cr_assert_eq(st, 0, "the bias is broadcast over rows");
	st = 40;
	memcpy(c.buf + c.l.p[1].offset + at, &st, 4);
	cr_assert_eq(reads(&c, in), 1, "only x is read");
	cr_expect_eq(in[0].numel, 40);
	st = 20;
	memcpy(c.buf + c.l.p[1].offset + at, &st, 4);
	cr_assert_eq(reads(&c, in), 2);
	cr_expect_eq(in[1].numel, 40, "the bias read as a dense [8, 5]");
}

Test(kdecode_lambda, torch_1_nocast_lambda_reads_its_inputs_once_the_era_is_known)
{
	const struct fx_launch *c = fx_find(cases_1, ncases_1, "half_add_broadcast");
	struct np_kread in[8];
	cr_expect_eq(reads(c, in), 0, "the era is not known yet");
	seen_torch_1();
	cr_assert_eq(reads(c, in), 2);
	cr_expect_eq(in[0].numel, 60);
	cr_expect_eq(in[1].numel, 10);
}

/* Which pointers a strided launch only reads, for the generic tier, also
 * when its output is not one dense range and nothing is sized: exp into a
 * strided view (exp_into_strided) is such a launch.  Its input must stay
 * out of the launch's note, or the tensor it read is checked as its
 * output at that tensor's next reader (seen on an H200, a strided copy
 * in attention named for the NaN it was copying). */
static int input_words(const struct fx_launch *c, uint64_t *w)
{
	struct np_kinfo ki;
	void *kp[NP_KD_MAX_PARAMS];
	fx_params(c, kp);
	np_kdecode_classify(c->name, &ki);
	return np_kdecode_input_words(&ki, &c->l, kp, &c->kl, w, 8);
}

/* label's launch writes a strided view: its one input word, no output */
static void strided_says_its_input(const struct fx_launch *c, const char *label)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	struct np_kread in[8];
	uint64_t w[8], words[64];   /* the host image's padding holds stack words too */
	void *kp[NP_KD_MAX_PARAMS];
	cr_assert_eq(decode(c, NULL, out), 0, "%s: its output is not sized", label);
	cr_assert_eq(reads(c, in), 0, "%s: nor are its reads", label);
	cr_assert_eq(input_words(c, w), 1, "%s reads one tensor", label);
	/* the input is one of the launch's pointer words, and not the
	 * output: the other word */
	fx_params(c, kp);
	int nw = np_kdecode_pointer_words(&c->l, kp, words, 64), found = 0, other = 0;
	for (int i = 0; i < nw; i++) {
		found |= words[i] == w[0];
		other |= words[i] != w[0];
	}
	cr_expect(found, "%s: the input is among the launch's words", label);
	cr_expect(other, "%s: and the output is a word of its own", label);
}

Test(kdecode_lambda, a_strided_output_still_says_which_pointers_are_inputs)
{
	seen_torch_2();
	strided_says_its_input(fx_find(cases, ncases, "exp_into_strided"), "exp_into_strided");
	/* torch's same-dtype copy into a strided view (out[:, ::2] = x), the
	 * H200's false birth in attention: both torches */
	strided_says_its_input(fx_find(cases, ncases, "copy_into_strided"), "copy_into_strided");
	/* torch 1's image holds more pointer-like stack words than a scan
	 * keeps: only the count is asserted there */
	seen_torch_1();
	uint64_t w[8];
	cr_expect_eq(input_words(fx_find(cases_1, ncases_1, "copy_into_strided"), w), 1,
		     "torch 1's copy into a strided view reads one tensor");
}

Test(kdecode_lambda, a_direct_copy_keeps_its_dtype_and_a_casting_copy_is_not_read)
{
	seen_torch_2();
	const struct fx_launch *c = fx_find(cases, ncases, "copy_transposed_in");
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	cr_assert_eq(decode(c, NULL, out), 1);
	cr_expect_eq(out[0].dtype, NP_DT_F32, "what it takes: float");
	cr_expect_eq(out[0].numel, 24);
	/* a copy that casts (float to half) returns another type than it
	 * takes: its name says copy_kernel, not direct_copy_kernel_cuda */
	struct np_kinfo ki;
	np_kdecode_classify("void at::native::elementwise_kernel<128, 2, "
			    "at::native::gpu_kernel_impl_nocast<at::native::float16_copy_kernel_cuda("
			    "at::TensorIteratorBase&)::{lambda(float)#1}>(at::TensorIteratorBase&, "
			    "at::native::float16_copy_kernel_cuda(at::TensorIteratorBase&)::"
			    "{lambda(float)#1} const&)::{lambda(int)#1}>(int, "
			    "at::native::gpu_kernel_impl_nocast<at::native::float16_copy_kernel_cuda("
			    "at::TensorIteratorBase&)::{lambda(float)#1}>(at::TensorIteratorBase&, "
			    "at::native::float16_copy_kernel_cuda(at::TensorIteratorBase&)::"
			    "{lambda(float)#1} const&)::{lambda(int)#1})", &ki);
	cr_expect_eq(ki.family, NP_KF_LAMBDA_ELEMENTWISE);
	cr_expect_lt(ki.dtype, 0, "a casting copy's result type is not inferred");
}

Test(kdecode_lambda, a_dense_strided_launch_gives_the_inputs_it_decodes)
{
	seen_torch_2();
	const char *labels[] = { "exp_transposed", "add_broadcast_alpha", "addcmul_3_inputs" };
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++) {
		const struct fx_launch *c = fx_find(cases, ncases, labels[i]);
		struct np_kbuf out[NP_KD_MAX_OUTPUTS];
		uint64_t w[8];
		cr_assert_eq(decode(c, NULL, out), 1, "%s", labels[i]);
		int n = input_words(c, w);
		cr_assert_eq(n, out[0].n_in, "%s: %d input words", labels[i], n);
		for (int k = 0; k < n; k++)
			cr_expect_eq(w[k], out[0].in[k], "%s: input %d", labels[i], k);
	}
}

Test(kdecode_lambda, other_families_give_no_input_words)
{
	const struct fx_launch *c = fx_find(cases, ncases, "exp_into_strided");
	struct np_kinfo ki;
	void *kp[NP_KD_MAX_PARAMS];
	uint64_t w[8];
	fx_params(c, kp);
	np_kdecode_classify("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
			    "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, "
			    "float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
			    "unsigned int, float, 4, 4> >", &ki);
	cr_expect_eq(np_kdecode_input_words(&ki, &c->l, kp, &c->kl, w, 8), 0);
}
