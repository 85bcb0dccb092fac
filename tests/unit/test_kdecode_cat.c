/* test_kdecode_cat.c - torch.cat's output, read from its input metadata
 * (cupti/kdecode_cat.c through np_kdecode_outputs).
 *
 * The names and parameter layouts are torch 2.14.1's own
 * (tests/unit/fixtures/torch_kernels.tsv); the metadata's size computed
 * from its fields must equal the size the cubin gives.  The metadata
 * images are laid out here, field by field as Shape.cu declares them: a
 * launch copying two inputs, [3, 4] and [5, 4], into an [8, 4] output,
 * and the ways a launch can fail to write its whole, contiguous output. */
#include <stdint.h>
#include "../../cupti/kdecode.h"

#include "fixture.h"

#define OUT 0x7f0000600000ull
#define IN0 0x7f0000700000ull
#define IN1 0x7f0000800000ull

struct cat_launch {
	struct np_kinfo ki;
	struct np_kparams l;
	unsigned char buf[4096];
	void *kp[NP_KD_MAX_PARAMS];
	struct np_klaunch kl;
};

static void put32(unsigned char *b, uint32_t at, uint32_t v)
{
	memcpy(b + at, &v, 4);
}

/* The fixture's CatArrayBatchedCopy_<variant> of OpaqueType<2> (half-sized),
 * its Dims replaced by dims, into an output of sizes[0..dims) with
 * strides[0..dims), cat along concat_dim (dimStride or trailingSize
 * dim_stride); no inputs yet. */
static void base(struct cat_launch *c, const char *variant, int dims, const uint32_t *sizes,
		 const uint32_t *strides, int32_t concat_dim, uint32_t dim_stride)
{
	char sub[128];
	snprintf(sub, sizeof(sub), "CatArrayBatchedCopy_%s<at::native::(anonymous namespace)::"
		 "OpaqueType<2u>", variant);
	const struct kline *k = fixture_find(sub);
	static char name[2048];
	char *at;
	uint64_t out = OUT;

	snprintf(name, sizeof(name), "%s", k->dem);
	at = strstr(name, "unsigned int, 1, 128, 1");
	cr_assert_not_null(at, "%s", name);
	at[14] = (char)('0' + dims);
	np_kdecode_classify(name, &c->ki);
	cr_assert_eq(c->ki.family, NP_KF_CAT);
	cr_assert_eq(np_kdecode_layout_parse(k->layout, &c->l), 5, "%s", k->layout);
	memset(c->buf, 0xa5, sizeof(c->buf));   /* unused metadata: garbage */
	for (int i = 0; i < c->l.n; i++)
		c->kp[i] = c->buf + c->l.p[i].offset;
	memcpy(c->kp[0], &out, 8);
	unsigned char *os = c->kp[2];
	for (int d = 0; d < dims; d++) {        /* os: tensorSize[4], tensorStride[4] */
		put32(os, 4u * (uint32_t)d, sizes[d]);
		put32(os, 16u + 4u * (uint32_t)d, strides[d]);
	}
	put32(c->kp[3], 0, (uint32_t)concat_dim);
	put32(c->kp[4], 0, dim_stride);
}

/* Metadata entry k (of batch 128, unsigned int): input, offset[],
 * dimSize[], nElements[]. */
static void put_input(struct cat_launch *c, uint32_t k, uint64_t in, uint32_t offset,
		      uint32_t dim_size, uint32_t elements)
{
	unsigned char *meta = c->kp[1];
	memcpy(meta + 8 * k, &in, 8);
	put32(meta, 1024 + 4 * k, offset);
	put32(meta, 1536 + 4 * k, dim_size);
	put32(meta, 2048 + 4 * k, elements);
}

static void set_grid(struct cat_launch *c, uint32_t ninputs)
{
	c->kl = (struct np_klaunch){ .grid = { 2, ninputs, 1 }, .block = { 512, 1, 1 },
				     .blocks = 2 * ninputs, .threads = 1024u * ninputs };
}

/* The k-th of many inputs */
#define IN_K(k) (0x7f0001000000ull + (uint64_t)(k) * 0x10000)

/* A launch of n inputs, input k of dim_size[k] steps of inner elements,
 * the first at offset first_offset along the concat dimension. */
static void put_inputs(struct cat_launch *c, uint32_t n, uint32_t first_offset,
		       const uint32_t *dim_size, uint32_t inner)
{
	for (uint32_t k = 0, offset = first_offset; k < n; offset += dim_size[k], k++)
		put_input(c, k, IN_K(k), offset, dim_size[k], dim_size[k] * inner);
	set_grid(c, n);
}

/* base() with two inputs, [3, 4] and [5, 4] along dim 0 (dimStride 4),
 * of n0 and n1 elements, on a grid of ninputs rows. */
static void setup_variant(struct cat_launch *c, const char *variant, int dims,
			  const uint32_t *sizes, const uint32_t *strides, uint32_t n0, uint32_t n1,
			  uint32_t ninputs)
{
	base(c, variant, dims, sizes, strides, 0, 4);
	put_input(c, 0, IN0, 0, 3, n0);
	put_input(c, 1, IN1, 3, 5, n1);
	set_grid(c, ninputs);
}

static void setup(struct cat_launch *c, int dims, const uint32_t *sizes, const uint32_t *strides,
		  uint32_t n0, uint32_t n1, uint32_t ninputs)
{
	setup_variant(c, "contig", dims, sizes, strides, n0, n1, ninputs);
}

static int decode(struct cat_launch *c, struct np_kbuf *out)
{
	return np_kdecode_outputs(&c->ki, &c->l, c->kp, &c->kl, out, NP_KD_MAX_OUTPUTS);
}

TestSuite(kdecode_cat, .init = fixture_load, .fini = fixture_unload);

Test(kdecode_cat, torch_2_14s_metadata_is_the_size_its_fields_make)
{
	int seen = 0;
	for (int i = 0; i < nlines; i++) {
		struct np_kinfo ki;
		struct np_kparams l;
		if (np_kdecode_classify(lines[i].dem, &ki) != NP_KF_CAT)
			continue;
		cr_assert_eq(np_kdecode_layout_parse(lines[i].layout, &l), 5);
		cr_expect_neq(ki.cat.esize, 0, "%s", lines[i].dem);
		/* _vectorized<.., 16, elems_per_vec>: 16 bytes a vector */
		cr_expect_eq(strstr(lines[i].dem, "_vectorized<") ? ki.cat.per_vec * ki.cat.esize : 16,
			     16, "%s", lines[i].dem);
		cr_expect_eq(np_cat_meta_size(&ki.cat), l.p[1].size, "%s", lines[i].dem);
		cr_expect_eq(l.p[2].size, 8 * ki.cat.index_size);
		seen++;
	}
	cr_expect_geq(seen, 4);
}

Test(kdecode_cat, one_launch_writing_the_whole_output_is_checked_from_its_inputs)
{
	static struct cat_launch c;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	const uint32_t sizes[] = { 8, 4 }, strides[] = { 4, 1 };

	setup(&c, 2, sizes, strides, 12, 20, 2);
	cr_assert_eq(decode(&c, out), 1);
	cr_expect_eq(out[0].ptr, OUT);
	cr_expect_eq(out[0].numel, 32);
	cr_expect_eq(out[0].how, NP_KH_CAT);
	cr_expect_eq(out[0].dtype, NP_DT_MAX, "the caller finds the dtype");
	cr_expect_eq(out[0].esize, 2);
	cr_assert_eq(out[0].n_in, 2);
	cr_expect(out[0].in[0] == IN0 && out[0].in[1] == IN1);
}

/* The vectorized copy (inputs and output 16-byte aligned: the common
 * case) counts os in vectors of 8 halves: the same [8, 4] output, cat
 * along dim 0, is os [4] of stride 1 (Shape.cu's kernelOutputParam). */
Test(kdecode_cat, the_vectorized_copy_counts_its_output_in_vectors)
{
	static struct cat_launch c;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	const uint32_t vectors[] = { 4 }, unit[] = { 1 };

	setup_variant(&c, "vectorized", 1, vectors, unit, 12, 20, 2);
	cr_assert_eq(c.ki.cat.per_vec, 8);
	cr_assert_eq(decode(&c, out), 1);
	cr_expect_eq(out[0].numel, 32, "4 vectors of 8");
	cr_expect_eq(out[0].esize, 2);
	setup_variant(&c, "vectorized", 1, vectors, unit, 12, 12, 2);
	cr_expect_eq(decode(&c, out), 0, "24 elements of 32 copied");
}

/* Along dim 0 each input's part is one dense range: a launch holding
 * only some of the inputs (a cat of more than 128) writes its parts. */
Test(kdecode_cat, a_launch_of_some_inputs_along_dim_0_checks_the_part_it_writes)
{
	static struct cat_launch c;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	const uint32_t sizes[] = { 8, 4 }, strides[] = { 4, 1 };

	setup(&c, 2, sizes, strides, 12, 20, 1);        /* the first of two launches */
	cr_assert_eq(decode(&c, out), 1);
	cr_expect_eq(out[0].ptr, OUT);
	cr_expect_eq(out[0].numel, 12);
	cr_assert_eq(out[0].n_in, 1);
	cr_expect_eq(out[0].in[0], IN0);

	base(&c, "contig", 2, sizes, strides, 0, 4);    /* the second: offset 3 on */
	put_input(&c, 0, IN1, 3, 5, 20);
	set_grid(&c, 1);
	cr_assert_eq(decode(&c, out), 1);
	cr_expect_eq(out[0].ptr, OUT + 12 * 2, "3 rows of 4 halves in");
	cr_expect_eq(out[0].numel, 20);
	cr_expect_eq(out[0].in[0], IN1);

	setup(&c, 2, sizes, strides, 12, 19, 2);        /* counts one short */
	cr_expect_eq(decode(&c, out), 0);
}

/* Along an inner dimension an input's part is strided: only a launch
 * writing the whole output is read. */
Test(kdecode_cat, a_launch_of_some_inputs_along_an_inner_dimension_yields_nothing)
{
	static struct cat_launch c;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	const uint32_t sizes[] = { 2, 8 }, strides[] = { 8, 1 }, steps[] = { 3, 5 };

	base(&c, "contig", 2, sizes, strides, 1, 1);    /* [2, 3] and [2, 5] into [2, 8] */
	put_inputs(&c, 2, 0, steps, 2);
	cr_assert_eq(decode(&c, out), 1, "the whole output");
	cr_expect_eq(out[0].numel, 16);
	set_grid(&c, 1);
	cr_expect_eq(decode(&c, out), 0, "rows 0 and 1 of [2, 3], 5 apart");
}

/* Along an inner dimension, more inputs than in[] holds: one check of the
 * whole output, the inputs past in[] where the launch's metadata holds
 * them (check_launch.c keeps them for the judge).  As many as in[]
 * holds: the plain check. */
Test(kdecode_cat, a_launch_of_many_inputs_along_an_inner_dimension_is_one_copy)
{
	static struct cat_launch c;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	const uint32_t sizes[] = { 3, 40 }, strides[] = { 40, 1 };
	uint32_t twos[20];

	for (int k = 0; k < 20; k++)
		twos[k] = 2;
	base(&c, "contig", 2, sizes, strides, 1, 1);    /* 20 of [3, 2] into [3, 40] */
	put_inputs(&c, 20, 0, twos, 3);
	cr_assert_eq(decode(&c, out), 1, "the whole output");
	cr_expect_eq(out[0].ptr, OUT);
	cr_expect_eq(out[0].numel, 120);
	cr_expect_eq(out[0].how, NP_KH_CAT);
	cr_assert_eq(out[0].n_in, NP_KD_BUF_INPUTS);
	for (int k = 0; k < NP_KD_BUF_INPUTS; k++)
		cr_expect_eq(out[0].in[k], IN_K(k));
	cr_assert_eq(out[0].n_more, 20 - NP_KD_BUF_INPUTS);
	cr_assert_not_null(out[0].more_in);
	for (int k = NP_KD_BUF_INPUTS; k < 20; k++) {
		uint64_t w;
		memcpy(&w, (const char *)out[0].more_in + 8 * (k - NP_KD_BUF_INPUTS), 8);
		cr_expect_eq(w, IN_K(k), "input %d", k);
	}

	const uint32_t kept[] = { 3, 32 }, kept_strides[] = { 32, 1 };
	base(&c, "contig", 2, kept, kept_strides, 1, 1);    /* 16 of [3, 2] into [3, 32] */
	put_inputs(&c, 16, 0, twos, 3);
	cr_assert_eq(decode(&c, out), 1);
	cr_expect_eq(out[0].numel, 96);
	cr_expect_eq(out[0].n_more, 0, "every input in in[]");
	cr_expect_null(out[0].more_in);
	cr_expect_eq(out[0].n_in, 16);

	base(&c, "contig", 2, sizes, strides, 1, 1);
	put_inputs(&c, 19, 0, twos, 3);                 /* 38 of 40 columns */
	cr_expect_eq(decode(&c, out), 0, "a launch's strided part: nothing");
}

/* All of a launch's outputs, read in turns as the callback does. */
static int decode_all(struct cat_launch *c, struct np_kbuf *all, int max)
{
	int n = 0, got;
	c->kl.first = 0;
	do {
		got = np_kdecode_outputs(&c->ki, &c->l, c->kp, &c->kl, all + n,
					 max - n < NP_KD_MAX_OUTPUTS ? max - n : NP_KD_MAX_OUTPUTS);
		n += got;
		c->kl.first += (uint32_t)got;
	} while (c->kl.more && got > 0 && n < max);
	return n;
}

/* torch.stack of 150 scalars (clip_grad_norm_'s per-parameter norms):
 * two launches, of 128 inputs and of 22, offsets counting on across
 * them.  More inputs than an output's check keeps: each is checked on
 * its own, from its own input. */
Test(kdecode_cat, a_stack_of_more_inputs_than_kept_is_checked_input_by_input)
{
	static struct cat_launch c;
	static struct np_kbuf all[256];
	const uint32_t sizes[] = { 150 }, strides[] = { 1 };
	uint32_t ones[128];

	for (int k = 0; k < 128; k++)
		ones[k] = 1;
	base(&c, "contig", 1, sizes, strides, 0, 1);
	put_inputs(&c, 128, 0, ones, 1);
	cr_assert_eq(decode_all(&c, all, 256), 128);
	for (int k = 0; k < 128; k++) {
		cr_expect_eq(all[k].ptr, OUT + 2u * (uint32_t)k);
		cr_expect_eq(all[k].numel, 1);
		cr_expect_eq(all[k].how, NP_KH_CAT);
		cr_assert_eq(all[k].n_in, 1);
		cr_expect_eq(all[k].in[0], IN_K(k));
		cr_expect_eq(all[k].n_more, 0, "each slab has its one input");
	}

	base(&c, "contig", 1, sizes, strides, 0, 1);
	put_inputs(&c, 22, 128, ones, 1);
	cr_assert_eq(decode_all(&c, all, 256), 22);
	for (int k = 0; k < 22; k++) {
		cr_expect_eq(all[k].ptr, OUT + 2u * (128u + (uint32_t)k));
		cr_expect_eq(all[k].in[0], IN_K(k));
	}

	put_inputs(&c, 16, 128, ones, 1);               /* as many as a check keeps */
	cr_assert_eq(decode_all(&c, all, 256), 1, "one check of the launch's part");
	cr_expect_eq(all[0].ptr, OUT + 2 * 128);
	cr_expect_eq(all[0].numel, 16);
	cr_assert_eq(all[0].n_in, 16);
	cr_expect_eq(all[0].in[15], IN_K(15));
}

/* Of the slabs, what a misread would give: parts that overlap or leave a
 * gap, an input counted past the output, a dimStride that is not the
 * concat dimension's stride. */
Test(kdecode_cat, slabs_that_do_not_hold_together_yield_nothing)
{
	static struct cat_launch c;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	const uint32_t sizes[] = { 8, 4 }, strides[] = { 4, 1 };

	base(&c, "contig", 2, sizes, strides, 0, 4);
	put_input(&c, 0, IN0, 0, 2, 8);
	put_input(&c, 1, IN1, 3, 1, 4);                 /* a row left out */
	set_grid(&c, 2);
	cr_expect_eq(decode(&c, out), 0);
	put_input(&c, 1, IN1, 1, 1, 4);                 /* a row written twice */
	cr_expect_eq(decode(&c, out), 0);
	put_input(&c, 1, IN1, 2, 7, 28);                /* rows 2..8 of 8 */
	cr_expect_eq(decode(&c, out), 0);
	put_input(&c, 1, IN1, 2, 1, 4);
	cr_expect_eq(decode(&c, out), 1, "rows 0..2, the control");
	cr_expect_eq(out[0].numel, 12);
	put32(c.kp[4], 0, 2);                           /* dimStride 2 of rows of 4 */
	put_input(&c, 0, IN0, 0, 4, 8);
	put_input(&c, 1, IN1, 4, 2, 4);
	cr_expect_eq(decode(&c, out), 0);
	put32(c.kp[4], 0, 4);
	put32(c.kp[3], 0, 2);                           /* no dim 2 */
	cr_expect_eq(decode(&c, out), 0);
}

/* The vectorized copy's parts: trailingSize elements a step, os in
 * vectors.  [16, 4] halves, the second launch's [12, 4] from row 4. */
Test(kdecode_cat, the_vectorized_copy_of_some_inputs_checks_its_part)
{
	static struct cat_launch c;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	const uint32_t vectors[] = { 8 }, unit[] = { 1 };

	base(&c, "vectorized", 1, vectors, unit, 0, 4);
	put_input(&c, 0, IN1, 4, 12, 48);
	set_grid(&c, 1);
	cr_assert_eq(decode(&c, out), 1);
	cr_expect_eq(out[0].ptr, OUT + 16 * 2);
	cr_expect_eq(out[0].numel, 48);
	put32(c.kp[4], 0, 5);                           /* 64 elements are no rows of 5 */
	put_input(&c, 0, IN1, 0, 12, 60);
	cr_expect_eq(decode(&c, out), 0);
}

Test(kdecode_cat, a_strided_output_yields_nothing)
{
	static struct cat_launch c;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	const uint32_t sizes[] = { 8, 4 }, padded[] = { 5, 1 }, transposed[] = { 1, 8 };

	setup(&c, 2, sizes, padded, 12, 20, 2);          /* rows of 5, 4 used */
	cr_expect_eq(decode(&c, out), 0);
	setup(&c, 2, sizes, transposed, 12, 20, 2);
	cr_expect_eq(decode(&c, out), 0);
}

Test(kdecode_cat, a_layout_or_grid_that_does_not_fit_yields_nothing)
{
	static struct cat_launch c;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	const uint32_t sizes[] = { 8, 4 }, strides[] = { 4, 1 };

	setup(&c, 2, sizes, strides, 12, 20, 2);
	c.l.p[1].size -= 8;                              /* metadata of another shape */
	cr_expect_eq(decode(&c, out), 0);
	setup(&c, 2, sizes, strides, 12, 20, 2);
	c.kl.grid[1] = 129;                              /* more inputs than a launch holds */
	cr_expect_eq(decode(&c, out), 0);
	setup(&c, 2, sizes, strides, 12, 20, 2);
	c.kl = (struct np_klaunch){ 0 };                 /* no grid known */
	cr_expect_eq(decode(&c, out), 0);
}
