/* test_kdecode_fuzz.c - the decoders never read past a parameter, whatever
 * it holds (cupti/kdecode.c and its family decoders, through
 * np_kdecode_outputs, np_kdecode_reads and np_kdecode_pointer_words).
 *
 * They run inside the training job, on every launch: a read past the end
 * of a parameter (a layout that does not match the name, a struct of
 * another torch) would crash the job nanprof watches.  Each parameter of
 * each real kernel (both fixtures: torch 2.14.1's and 2.11.0's) is put
 * at the very end of its own mapping, followed by an unmapped page, so
 * any read past it faults and Criterion reports the crash.  It is filled
 * with random bytes, or with plausible ones (pointer-like words, small
 * counts), launched on random grids; then again with each parameter cut
 * shorter than the cubin says (a misread layout), which every decoder
 * must notice before it reads.  And the name parser on every fixture
 * name cut short, or with brackets and commas put in or taken out (a
 * demangler's output nanprof did not foresee), its terminating NUL the
 * last byte before an unmapped page. */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include "fixture.h"
#include "../../cupti/kdecode.h"

#define TRIALS 24

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)      /* xorshift64*: reproducible */
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

struct guarded {
	unsigned char *map;
	size_t len;
};

/* size bytes that end where an unmapped page begins */
static unsigned char *guarded_alloc(struct guarded *g, uint32_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t data = (size + page - 1) / page * page;
	g->len = data + page;
	g->map = mmap(NULL, g->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(g->map, MAP_FAILED);
	cr_assert_eq(mprotect(g->map + data, page, PROT_NONE), 0);
	return g->map + data - size;
}

/* random bytes, or words a launch could hold: device-like addresses,
 * small counts and strides, zeros */
static void fill(unsigned char *p, uint32_t size, int plausible)
{
	for (uint32_t i = 0; i < size; i++)
		p[i] = (unsigned char)next();
	if (!plausible)
		return;
	for (uint32_t at = 0; at + 8 <= size; at += 8) {
		uint64_t w, r = next();
		switch (r % 4) {
		case 0:
			w = 0x7f0000000000ull + (next() % 0x100000) * 256;
			break;
		case 1:
			w = next() % 300;
			break;
		case 2:
			w = (next() % 64) | (next() % 64) << 32;      /* two small ints */
			break;
		default:
			w = 0;
		}
		memcpy(p + at, &w, 8);
	}
}

static void random_launch(struct np_klaunch *kl)
{
	static const uint32_t dims[] = { 1, 2, 3, 4, 8, 32, 64, 128, 256, 512, 1024 };
	*kl = (struct np_klaunch){ 0 };
	for (int i = 0; i < 3; i++) {
		kl->grid[i] = i && next() % 2 ? 1 : dims[next() % 11];
		kl->block[i] = i && next() % 2 ? 1 : dims[next() % 11];
	}
	kl->blocks = kl->grid[0] * kl->grid[1] * kl->grid[2];
	kl->threads = (uint64_t)kl->blocks * kl->block[0] * kl->block[1] * kl->block[2];
}

/* One kernel's launches: every parameter guarded, layout l (possibly
 * cut), contents random or plausible.  Whatever comes back must fit the
 * caller's arrays. */
static void run(const struct np_kinfo *ki, const struct np_kparams *l, int plausible)
{
	struct guarded g[NP_KD_MAX_PARAMS];
	void *kp[NP_KD_MAX_PARAMS];
	struct np_kbuf out[NP_KD_MAX_OUTPUTS];
	struct np_kread in[8];
	uint64_t words[64];
	struct np_klaunch kl;

	for (int i = 0; i < l->n; i++) {
		kp[i] = guarded_alloc(&g[i], l->p[i].size ? l->p[i].size : 1);
		fill(kp[i], l->p[i].size, plausible);
	}
	random_launch(&kl);
	for (int pass = 0; pass < 3; pass++) {
		int n = np_kdecode_outputs(ki, l, kp, pass ? &kl : NULL, out, NP_KD_MAX_OUTPUTS);
		cr_assert(n >= 0 && n <= NP_KD_MAX_OUTPUTS);
		/* an output's address is not vouched for here: the subscriber
		 * checks only what lies inside a known allocation */
		for (int k = 0; k < n; k++)
			cr_assert(out[k].n_in <= NP_KD_BUF_INPUTS && out[k].dtype <= NP_DT_MAX,
				  "output %d: %d inputs", k, out[k].n_in);
		n = np_kdecode_reads(ki, l, kp, pass ? &kl : NULL, in, 8);
		cr_assert(n >= 0 && n <= 8);
		n = np_kdecode_pointer_words(l, kp, words, 64);
		cr_assert(n >= 0 && n <= 64);
		kl.more = 0;
		kl.first = pass;        /* a caller reading the outputs in turns */
	}
	for (int i = 0; i < l->n; i++)
		munmap(g[i].map, g[i].len);
}

static void fuzz_fixture(void)
{
	int ran = 0;
	for (int i = 0; i < nlines; i++) {
		struct np_kinfo ki;
		struct np_kparams l, cut;
		np_kdecode_classify(lines[i].dem, &ki);
		cr_assert_gt(np_kdecode_layout_parse(lines[i].layout, &l), 0);
		for (int t = 0; t < TRIALS; t++)
			run(&ki, &l, t % 2);
		/* each parameter in turn shorter than the cubin says: the
		 * decoders must check the layout before they read */
		for (int p = 0; p < l.n; p++) {
			cut = l;
			cut.p[p].size = l.p[p].size > 1 ? (uint32_t)(next() % l.p[p].size) : 0;
			run(&ki, &cut, 1);
		}
		/* a parameter missing, or one too many */
		cut = l;
		cut.n = l.n - 1;
		run(&ki, &cut, 1);
		if (l.n < NP_KD_MAX_PARAMS) {
			cut = l;
			cut.p[cut.n].offset = l.p[l.n - 1].offset + l.p[l.n - 1].size;
			cut.p[cut.n].size = 8;
			cut.n++;
			run(&ki, &cut, 1);
		}
		ran++;
	}
	cr_expect_geq(ran, 250);
}

/* name, mutated, ending at an unmapped page */
static void classify_mutated(const char *name)
{
	static const char chars[] = "<>(),: *&{}#0123456789abc";
	struct guarded g;
	size_t n = strlen(name), cut = n ? next() % (n + 1) : 0;
	char *s = (char *)guarded_alloc(&g, (uint32_t)(n + 1));
	struct np_kinfo ki;

	memcpy(s, name, n + 1);
	switch (next() % 3) {
	case 0:                 /* cut short */
		s[cut] = '\0';
		break;
	case 1:                 /* a few characters changed */
		for (int k = 0; k < 4 && n; k++)
			s[next() % n] = chars[next() % (sizeof(chars) - 1)];
		break;
	default:                /* a bracket's partner dropped */
		for (size_t i = 0; i < n; i++)
			if (strchr("<>()", s[i]) && next() % 8 == 0)
				s[i] = ' ';
	}
	int f = np_kdecode_classify(s, &ki);
	cr_assert(f >= NP_KF_UNKNOWN && f < NP_KF_MAX);
	cr_assert(ki.nsig >= -1 && ki.nsig <= NP_KD_MAX_PARAMS);
	munmap(g.map, g.len);
}

Test(kdecode_fuzz, mutated_names_parse_within_their_bytes, .init = fixture_load,
     .fini = fixture_unload)
{
	for (int i = 0; i < nlines; i++)
		for (int t = 0; t < 16; t++)
			classify_mutated(lines[i].dem);
}

Test(kdecode_fuzz, torch_2_14_kernels_never_read_past_a_parameter, .init = fixture_load,
     .fini = fixture_unload)
{
	fuzz_fixture();
}

Test(kdecode_fuzz, torch_2_11_kernels_never_read_past_a_parameter, .init = fixture_load_2_11,
     .fini = fixture_unload)
{
	fuzz_fixture();
}
