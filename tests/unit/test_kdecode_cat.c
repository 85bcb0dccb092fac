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

/* The fixture's CatArrayBatchedCopy_contig (or, with variant "vectorized",
 * CatArrayBatchedCopy_vectorized) of OpaqueType<2> (half-sized), its Dims
 * replaced by dims, holding inputs of n0 and n1 elements into an output of
 * sizes[0..dims) with strides[0..dims), on a grid of ninputs rows. */
static void setup_variant(struct cat_launch *c, const char *variant, int dims,
			  const uint32_t *sizes, const uint32_t *strides, uint32_t n0, uint32_t n1,
			  uint32_t ninputs)
{
	char sub[128];
	snprintf(sub, sizeof(sub), "CatArrayBatchedCopy_%s<at::native::(anonymous namespace)::"
		 "OpaqueType<2u>", variant);
	const struct kline *k = fixture_find(sub);
	static char name[2048];
	char *at;
	uint64_t out = OUT, in0 = IN0, in1 = IN1;

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
	unsigned char *meta = c->kp[1], *os = c->kp[2];
	memcpy(meta + 0, &in0, 8);              /* input[0], input[1] */
	memcpy(meta + 8, &in1, 8);
	put32(meta, 1024 + 0, 0);               /* offset[] along the concat dim */
	put32(meta, 1024 + 4, 3);
	put32(meta, 1536 + 0, 3);               /* dimSize[] */
	put32(meta, 1536 + 4, 5);
	put32(meta, 2048 + 0, n0);              /* nElements[] */
	put32(meta, 2048 + 4, n1);
	for (int d = 0; d < dims; d++) {        /* os: tensorSize[4], tensorStride[4] */
		put32(os, 4u * (uint32_t)d, sizes[d]);
		put32(os, 16u + 4u * (uint32_t)d, strides[d]);
	}
	put32(c->kp[3], 0, 0);                  /* concatDim */
	put32(c->kp[4], 0, 4);                  /* dimStride */
	c->kl = (struct np_klaunch){ .grid = { 2, ninputs, 1 }, .block = { 512, 1, 1 },
				     .blocks = 2 * ninputs, .threads = 1024u * ninputs };
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

Test(kdecode_cat, a_launch_writing_part_of_the_output_yields_nothing)
{
	static struct cat_launch c;
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	const uint32_t sizes[] = { 8, 4 }, strides[] = { 4, 1 };

	setup(&c, 2, sizes, strides, 12, 20, 1);        /* the first of two batches */
	cr_expect_eq(decode(&c, out), 0);
	setup(&c, 2, sizes, strides, 12, 19, 2);        /* counts one short */
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
	c.kl.grid[1] = 11;                               /* more inputs than are looked up */
	cr_expect_eq(decode(&c, out), 0);
	setup(&c, 2, sizes, strides, 12, 20, 2);
	c.kl = (struct np_klaunch){ 0 };                 /* no grid known */
	cr_expect_eq(decode(&c, out), 0);
}
