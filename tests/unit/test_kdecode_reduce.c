/* test_kdecode_reduce.c - a reduction's outputs, read from its ReduceOp
 * (cupti/kdecode_reduce.c through np_kdecode_outputs).
 *
 * The parameter images are real: tests/unit/fixtures/reduce_ops.tsv (torch
 * 2.13) and reduce_ops_1.tsv (torch 1.13) hold ReduceOps built by torch's
 * own constructors and laid out by nvcc from torch's own headers
 * (tests/fixtures/reduce_ops.cu), with the grid and
 * block ReduceConfig gives, and the outputs each must yield.  Their
 * padding and unset fields hold 0xa5 garbage, as on a real launch.  The
 * rest checks that a launch which does not agree with its ReduceOp, or a
 * ReduceOp cut short, yields nothing. */
#include "fixture.h"
#include "launch_fixture.h"

static const char *const fixtures[] = {
	"tests/unit/fixtures/reduce_ops.tsv",   /* torch 2.13: find_case() looks here */
	"tests/unit/fixtures/reduce_ops_1.tsv", /* torch 1.13 */
};
#define SRC 0x7f3a00000000ull    /* as in reduce_ops.cu */
#define DST0 0x7f3a00400000ull
#define ACC 0x7f3a00c00000ull

static struct fx_launch cases[32];
static int ncases;

static void load_cases(void)
{
	ncases = 0;
	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++)
		fx_load(fixtures[i], cases, &ncases, 32, 10);
}

static const struct fx_launch *find_case(const char *label)
{
	return fx_find(cases, ncases, label);
}

/* Decodes c's launch with kl (its own unless given) and size (its own
 * unless 0). */
static int decode(const struct fx_launch *c, const struct np_klaunch *kl, uint32_t size,
		  struct np_kbuf *out)
{
	struct np_kinfo ki;
	struct np_kparams l = c->l;
	struct np_klaunch k = kl ? *kl : c->kl;
	void *kp[NP_KD_MAX_PARAMS];

	fx_params(c, kp);
	cr_assert_eq(np_kdecode_classify(c->name, &ki), NP_KF_REDUCE, "%s", c->name);
	if (size)
		l.p[0].size = size;
	return np_kdecode_outputs(&ki, &l, kp, &k, out, NP_KD_MAX_OUTPUTS);
}

TestSuite(kdecode_reduce, .init = load_cases);


Test(kdecode_reduce, every_real_reduce_op_of_torch_2_and_1_yields_exactly_its_outputs)
{
	for (int i = 0; i < ncases; i++) {
		const struct fx_launch *c = &cases[i];
		struct np_kbuf out[NP_KD_MAX_OUTPUTS];
		struct np_kinfo ki;
		int n = decode(c, NULL, 0, out);

		np_kdecode_classify(c->name, &ki);
		cr_expect_eq(n, c->nwant, "%s %s: %d outputs, want %d", c->file, c->label, n,
			     c->nwant);
		for (int k = 0; k < n && k < c->nwant; k++) {
			cr_expect_eq(out[k].ptr, c->want_ptr[k], "%s %s[%d]: %#" PRIx64, c->file,
				     c->label, k, out[k].ptr);
			cr_expect_eq(out[k].numel, c->want_numel[k], "%s %s[%d]: %" PRIu64 " elements",
				     c->file, c->label, k, out[k].numel);
			cr_expect_eq(out[k].dtype, ki.dtype, "%s", c->label);
			cr_expect_eq(out[k].pairs, ki.pairs, "%s", c->label);
			cr_expect_eq(out[k].how, NP_KH_REDUCE, "%s", c->label);
			cr_expect_geq(out[k].n_in, 1, "%s", c->label);
			cr_expect_eq(out[k].in[0], SRC, "%s: the input first", c->label);
		}
	}
}

Test(kdecode_reduce, dtypes_come_from_out_scalar_t)
{
	struct np_kinfo ki;
	np_kdecode_classify(find_case("half_sum_2d")->name, &ki);
	cr_expect_eq(ki.dtype, NP_DT_F16);
	cr_expect_eq(ki.pairs, 0);
	/* a complex64 sum: its real view, float32 parts, two per value */
	np_kdecode_classify(find_case("complex_sum_rows")->name, &ki);
	cr_expect_eq(ki.dtype, NP_DT_F32);
	cr_expect_eq(ki.pairs, 1);
	np_kdecode_classify(find_case("norm_double")->name, &ki);
	cr_expect_eq(ki.dtype, NP_DT_F64);
	cr_expect_eq(ki.red.pair_values, 0);
	np_kdecode_classify(find_case("mean_cols_vec4")->name, &ki);
	cr_expect_eq(ki.red.ovs, 4);
	cr_expect_eq(ki.red.index_size, 4);
	np_kdecode_classify(find_case("std_mean_pairs")->name, &ki);
	cr_expect_eq(ki.red.pair_values, 1);
	np_kdecode_classify(find_case("max_values_indices")->name, &ki);
	cr_expect_eq(ki.red.pair_values, 0, "max's second output is int64 indices");
}

Test(kdecode_reduce, an_accumulating_write_reads_what_the_output_and_buffer_hold)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	cr_assert_eq(decode(find_case("sum_final_accumulate"), NULL, 0, out), 1);
	cr_expect_eq(out[0].n_in, 3);
	cr_expect_eq(out[0].in[0], SRC);
	cr_expect_eq(out[0].in[1], DST0, "accumulate reads the output");
	cr_expect_eq(out[0].in[2], ACC, "and the partial results");
	cr_assert_eq(decode(find_case("sum_rows"), NULL, 0, out), 1);
	cr_expect_eq(out[0].n_in, 1, "a plain reduction reads only its input");
}

/* The grid and block are how the config is found and believed: any
 * disagreement means the bytes are not read as a ReduceOp. */
Test(kdecode_reduce, a_launch_that_disagrees_with_its_config_yields_nothing)
{
	const struct fx_launch *c = find_case("sum_all_global");
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	struct np_klaunch kl;

	cr_assert_eq(decode(c, NULL, 0, out), 1);
	kl = c->kl;
	kl.grid[1]++;           /* ctas_per_output */
	cr_expect_eq(decode(c, &kl, 0, out), 0);
	kl = c->kl;
	kl.grid[0]++;
	cr_expect_eq(decode(c, &kl, 0, out), 0);
	kl = c->kl;
	kl.block[0] = c->kl.block[1];
	kl.block[1] = c->kl.block[0];
	cr_expect_eq(decode(c, &kl, 0, out), 0, "block width and height swapped");
	kl = (struct np_klaunch){ 0 };
	cr_expect_eq(decode(c, &kl, 0, out), 0, "grid unknown");
	cr_expect_eq(np_kdecode_outputs(&(struct np_kinfo){ 0 }, &c->l, (void *[]){ (void *)c->buf },
					NULL, out, NP_KD_MAX_OUTPUTS), 0, "no launch");
}

Test(kdecode_reduce, a_reduce_op_cut_short_or_padded_yields_nothing)
{
	const struct fx_launch *c = find_case("sum_rows");
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	cr_expect_eq(decode(c, NULL, c->l.p[0].size - 8, out), 0);
	cr_expect_eq(decode(c, NULL, c->l.p[0].size - 4, out), 0);
	cr_expect_eq(decode(c, NULL, c->l.p[0].size + 8, out), 0);
	cr_expect_eq(decode(c, NULL, 512, out), 0);
}

Test(kdecode_reduce, vectorized_output_count_is_read_from_the_config_not_the_grid)
{
	/* mean over dim 0 of [8, 512] with output_vec_size 4: 4 blocks of 32
	 * threads, 512 outputs; the name's output_vec_size must match the config */
	const struct fx_launch *c = find_case("mean_cols_vec4");
	static struct fx_launch other;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	char *at;

	cr_assert_eq(decode(c, NULL, 0, out), 1);
	cr_expect_eq(out[0].numel, 512);
	other = *c;
	at = strstr(other.name, "<128, 4, ");
	cr_assert_not_null(at, "%s", other.name);
	at[6] = '2';            /* reduce_kernel<128, 2, ..> */
	cr_expect_eq(decode(&other, NULL, 0, out), 0);
}

/* Where sum_rows' ReduceConfig lies in its image (its element size 4
 * and 1000 inputs), or -1. */
static int32_t sum_rows_config(const struct fx_launch *c)
{
	for (uint32_t at = 0; at + 8 <= c->l.p[0].size; at += 4) {
		int32_t esize, nin;
		memcpy(&esize, c->buf + at, 4);
		memcpy(&nin, c->buf + at + 4, 4);
		if (esize == 4 && nin == 1000)
			return (int32_t)at;
	}
	return -1;
}

/* The output calculator must walk exactly num_outputs elements: a config
 * that claims one fewer (the grid still agrees) is not believed. */
Test(kdecode_reduce, outputs_the_calculator_does_not_walk_exactly_yield_nothing)
{
	struct fx_launch c = *find_case("sum_rows");       /* [64, 1000].sum(1), 4 x 16 outputs */
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	int32_t v, config;

	config = sum_rows_config(&c);
	cr_assert_geq(config, 0, "no ReduceConfig in sum_rows");
	memcpy(&v, c.buf + config + 8, 4);
	cr_assert_eq(v, 64, "num_outputs");
	cr_assert_eq(decode(&c, NULL, 0, out), 1);
	v = 63;                 /* grid.x = ceil(63 / 16) = 4 still */
	memcpy(c.buf + config + 8, &v, 4);
	cr_expect_eq(decode(&c, NULL, 0, out), 0, "one fewer");
	v = 65;                 /* and one more, on a grid of 5 */
	memcpy(c.buf + config + 8, &v, 4);
	c.kl.grid[0] = 5;
	cr_expect_eq(decode(&c, NULL, 0, out), 0, "one more");
}

/* What a case's launch reads, sized (np_kdecode_reads). */
static int reads_of(const struct fx_launch *c, struct np_kread *rd)
{
	struct np_kinfo ki;
	void *kp[NP_KD_MAX_PARAMS];

	fx_params(c, kp);
	cr_assert_eq(np_kdecode_classify(c->name, &ki), NP_KF_REDUCE, "%s", c->name);
	return np_kdecode_reads(&ki, &c->l, kp, &c->kl, rd, 4);
}

/* Every fixture's input lies densely (reduce_ops.cu's shapes): a reader
 * of num_inputs x num_outputs scalar_t from src, whatever its output (a
 * strided one, a partial sum): the dirty tracker judges it over all of
 * them, the generic tier checks what undecoded kernels wrote there. */
Test(kdecode_reduce, a_dense_input_is_read_whole)
{
	static const struct {
		const char *label;
		uint64_t numel;
		enum np_dtype dtype;
		uint8_t pairs;
	} want[] = {
		{ "sum_rows", 64 * 1000, NP_DT_F32, 0 },
		{ "sum_all_global", 1 << 20, NP_DT_F32, 0 },
		{ "mean_cols_vec4", 8 * 512, NP_DT_F32, 0 },       /* reduced over the outer dim */
		{ "half_sum_2d", 8 * 300 * 5, NP_DT_F16, 0 },      /* the middle one */
		{ "complex_sum_rows", 2 * 64 * 1000, NP_DT_F32, 1 },
		{ "std_mean_pairs", 16, NP_DT_F32, 0 },
		{ "max_values_indices", 32 * 100, NP_DT_F32, 0 },
		{ "aminmax_double", 10 * 70, NP_DT_F64, 0 },
		{ "norm_double", 128 * 256, NP_DT_F64, 0 },
		{ "sum_strided_out", 64 * 1000, NP_DT_F32, 0 },
		{ "sum_partial", 64 * 1000, NP_DT_F32, 0 },
	};
	int seen = 0;
	for (int i = 0; i < ncases; i++)
		for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
			if (strcmp(cases[i].label, want[k].label))
				continue;
			struct np_kread rd[4];
			cr_assert_eq(reads_of(&cases[i], rd), 1, "%s %s", cases[i].file, want[k].label);
			cr_expect_eq(rd[0].ptr, SRC, "%s", want[k].label);
			cr_expect_eq(rd[0].numel, want[k].numel, "%s %s: %" PRIu64, cases[i].file,
				     want[k].label, rd[0].numel);
			cr_expect_eq(rd[0].dtype, want[k].dtype, "%s", want[k].label);
			cr_expect_eq(rd[0].pairs, want[k].pairs, "%s", want[k].label);
			seen++;
		}
	cr_expect_eq(seen, 22, "both torches' fixtures");
}

/* A gap in the input (a stride past its inner size), or an output base
 * that does not follow the reduced dims, is not one dense range: nothing
 * read; nor with a launch that disagrees with the config. */
Test(kdecode_reduce, a_strided_input_is_not_read_whole)
{
	struct fx_launch c = *find_case("sum_rows");   /* in: [1000] stride 4; out base: 4000 */
	struct np_kread rd[4];
	int32_t config, v;

	config = sum_rows_config(&c);
	cr_assert_geq(config, 0, "no ReduceConfig in sum_rows");
	/* the input calculator: dims, 25 dividers of 12, then the strides;
	 * the output calculator's (two per dim, the input's second) after */
	uint32_t in_stride = (uint32_t)config + 64 + 4 + 25 * 12;
	uint32_t out_in_stride = (uint32_t)config + 64 + 404 + 4 + 25 * 12 + 4;
	memcpy(&v, c.buf + in_stride, 4);
	cr_assert_eq(v, 4, "the reduced dim's stride");
	memcpy(&v, c.buf + out_in_stride, 4);
	cr_assert_eq(v, 4000, "each output's base in the input");
	cr_assert_eq(reads_of(&c, rd), 1);

	struct fx_launch gap = c;
	v = 8;                  /* every other float */
	memcpy(gap.buf + in_stride, &v, 4);
	cr_expect_eq(reads_of(&gap, rd), 0, "a strided reduced dim");
	gap = c;
	v = 4004;               /* rows a float apart */
	memcpy(gap.buf + out_in_stride, &v, 4);
	cr_expect_eq(reads_of(&gap, rd), 0, "rows with gaps between them");
	gap = c;
	v = 2000;               /* rows overlapping */
	memcpy(gap.buf + out_in_stride, &v, 4);
	cr_expect_eq(reads_of(&gap, rd), 0, "overlapping rows");
	gap = c;
	gap.kl.block[0] = 64;
	cr_expect_eq(reads_of(&gap, rd), 0, "a launch that disagrees with its config");
}

/* torch's own reduce kernels (torch_kernels.tsv and torch_kernels_2.11.tsv,
 * from the cubins of torch 2.14.1 and 2.11.0):
 * their ReduceOps are 8-byte multiples with a head of 4 to 64 bytes
 * before the config, as the decoder assumes, and name what it needs. */
static void reduce_ops_have_the_assumed_shape(void (*load)(void))
{
	int seen = 0;
	load();
	for (int i = 0; i < nlines; i++) {
		struct np_kinfo ki;
		struct np_kparams l;
		if (np_kdecode_classify(lines[i].dem, &ki) != NP_KF_REDUCE)
			continue;
		cr_assert_eq(np_kdecode_layout_parse(lines[i].layout, &l), 1, "%s", lines[i].dem);
		uint32_t size = l.p[0].size, head = size - 64 - 972;
		cr_expect_eq(size % 8, 0, "%s: %u", lines[i].dem, size);
		cr_expect(head >= 4 && head <= 64 + 4, "%s: head %u", lines[i].dem, head);
		cr_expect_eq(ki.red.index_size, 4, "%s", lines[i].dem);
		cr_expect_geq(ki.red.ovs, 1, "%s", lines[i].dem);
		seen++;
	}
	cr_expect_geq(seen, 10);
	fixture_unload();
}

Test(kdecode_reduce, torch_2_14_reduce_ops_have_the_assumed_shape)
{
	reduce_ops_have_the_assumed_shape(fixture_load);
}

/* torch 2.11.0's, the GPU test host's, too */
Test(kdecode_reduce, torch_2_11_reduce_ops_have_the_assumed_shape)
{
	reduce_ops_have_the_assumed_shape(fixture_load_2_11);
}

/* nll_loss reduced to a mean or sum (cross_entropy's second half) writes
 * two scalars: the loss and the targets' total weight.  Names and layouts
 * written from LossNLL.cu's signatures (no cubin of these in the
 * fixture): torch 2.x, the newer order with total_weight after weights,
 * and torch 1.x's, whose inputs are not const. */
static int nll(const char *name, const char *layout, struct np_kbuf *out)
{
	struct np_kinfo ki;
	struct np_kparams l;
	static unsigned char buf[128];
	void *kp[NP_KD_MAX_PARAMS];

	np_kdecode_classify(name, &ki);
	cr_assert_eq(ki.family, NP_KF_EXPLICIT, "%s", name);
	cr_assert_gt(np_kdecode_layout_parse(layout, &l), 0);
	memset(buf, 0, sizeof(buf));
	for (int i = 0; i < l.n; i++) {
		kp[i] = buf + l.p[i].offset;
		if (l.p[i].size == 8)   /* pointer i holds 0x7f0000500000 + i pages */
			memcpy(kp[i], &(uint64_t){ 0x7f0000500000ull + 0x1000ull * i }, 8);
	}
	return np_kdecode_outputs(&ki, &l, kp, &(struct np_klaunch){ .threads = 1024,
		.blocks = 1, .grid = { 1, 1, 1 }, .block = { 1024, 1, 1 } }, out, NP_KD_MAX_OUTPUTS);
}

Test(kdecode_reduce, nll_loss_writes_two_scalars_whichever_order)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	int n = nll("void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d"
		    "<float, float, long>(float*, float*, float const*, long const*, float const*, "
		    "bool, long, long, long, long)",
		    "0:8,8:8,16:8,24:8,32:8,40:1,48:8,56:8,64:8,72:8", out);
	cr_assert_eq(n, 2);
	cr_expect_eq(out[0].ptr, 0x7f0000500000ull);
	cr_expect_eq(out[1].ptr, 0x7f0000501000ull);
	cr_expect(out[0].numel == 1 && out[1].numel == 1 && out[0].dtype == NP_DT_F32);

	n = nll("void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d"
		"<c10::Half, float, long>(c10::Half*, c10::Half const*, long const*, "
		"c10::Half const*, c10::Half*, bool, int, int, int, int)",
		"0:8,8:8,16:8,24:8,32:8,40:1,44:4,48:4,52:4,56:4", out);
	cr_assert_eq(n, 2);
	cr_expect_eq(out[0].ptr, 0x7f0000500000ull);
	cr_expect_eq(out[1].ptr, 0x7f0000504000ull, "total_weight after weights");
	cr_expect(out[0].numel == 1 && out[1].numel == 1 && out[1].dtype == NP_DT_F16);
}

Test(kdecode_reduce, nll_loss_with_non_const_inputs_stays_unsized)
{
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	int n = nll("void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d"
		    "<float, float, long>(float*, float*, float*, long*, float*, bool, int, int, int, "
		    "long)", "0:8,8:8,16:8,24:8,32:8,40:1,44:4,48:4,52:4,56:8", out);
	cr_assert_eq(n, 4, "output, total_weight, and the input and weights taken for outputs");
	for (int i = 0; i < n; i++)
		cr_expect_eq(out[i].numel, 0, "output %d sized", i);
}
