/* test_dirty_model.c - cupti/dirty.c against a model that keeps one tag
 * per byte: random sequences of results, writes and copies, in launch
 * order (one stream), and after every step the verdict, the copy's
 * answer and every byte's tag must be the model's.
 *
 * The model is the rule of dirty.h written the slow way: a result's
 * inputs are dirty when the byte they point at is, or a byte they read
 * (in_len) that is the first non-finite byte of a dirty result, not
 * written over since (known_bad); a dirty result marks
 * its output with its tag, a clean one clears it; a write clears; a copy
 * laid out as its source gives each destination byte its source byte's
 * state (dirty as of the copy), one known by its first byte gives all of
 * them the first byte's.  What dirty.c adds -- ranges, carving, parts --
 * must not change any answer.  Launch order only: what happens when
 * results of several streams interleave is test_dirty.c's. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>
#include "../../cupti/dirty.h"

#define BASE 0x100000ull
#define SPAN 1024             /* bytes modelled */
#define CHUNK 16              /* ranges start and end on these */
#define SEQUENCES 1500
#define STEPS 60

static struct np_dirty t;
static int64_t model[SPAN];   /* -1: clean, else the tag it is dirty as of */
static uint8_t known_bad[SPAN];   /* the first non-finite byte of its result, while
				   * not written over (carried by whole copies) */
static int has_origin;
static uint64_t origin_tag;
static uint64_t rng;

static uint32_t next(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;   /* xorshift64 */
	return (uint32_t)(rng >> 32);
}

/* A range of whole chunks inside the span, at most max_chunks long. */
static void pick_range(uint64_t *lo, uint64_t *hi, unsigned max_chunks)
{
	unsigned n = 1 + next() % max_chunks;
	unsigned first = next() % (SPAN / CHUNK - n + 1);
	*lo = BASE + (uint64_t)first * CHUNK;
	*hi = *lo + (uint64_t)n * CHUNK;
}

/* An input word: mostly inside the span, anywhere in a chunk; sometimes
 * outside it (a pointer the tracker never saw) */
static uint64_t pick_word(void)
{
	if (next() % 8 == 0)
		return BASE + SPAN + next() % 4096;
	return BASE + next() % SPAN;
}

static void set_model(uint64_t lo, uint64_t hi, int64_t v)
{
	for (uint64_t a = lo; a < hi; a++) {
		model[a - BASE] = v;
		known_bad[a - BASE] = 0;
	}
}

static int bad_at(uint64_t addr)
{
	return addr >= BASE && addr < BASE + SPAN && known_bad[addr - BASE];
}

static int64_t model_at(uint64_t addr)
{
	return addr >= BASE && addr < BASE + SPAN ? model[addr - BASE] : -1;
}

static void expect_same_bytes(unsigned seq, unsigned step)
{
	for (uint64_t a = BASE; a < BASE + SPAN; a += CHUNK / 2) {
		uint64_t tag = 0;
		int64_t got = np_dirty_lookup(&t, a, &tag) ? -1 : (int64_t)tag;
		cr_assert_eq(got, model_at(a), "sequence %u step %u: byte %#llx tagged %lld, the model %lld",
			     seq, step, (unsigned long long)a, (long long)got, (long long)model_at(a));
	}
	/* each range's bad byte is the model's, and the model has no other */
	unsigned ranges_bad = 0, model_bad = 0;
	for (size_t i = 0; i < SPAN; i++)
		model_bad += known_bad[i];
	for (size_t i = 0; i < t.len; i++) {
		if (t.v[i].bad != NP_DIRTY_NO_BAD) {
			ranges_bad++;
			cr_assert(bad_at(t.v[i].bad), "sequence %u step %u: bad byte %#llx, not the model's",
				  seq, step, (unsigned long long)t.v[i].bad);
		}
	}
	cr_assert_eq(ranges_bad, model_bad, "sequence %u step %u: %u bad bytes, the model %u", seq,
		     step, ranges_bad, model_bad);
	for (size_t i = 0; i < t.len; i++) {
		cr_assert_lt(t.v[i].base, t.v[i].end, "sequence %u step %u: an empty range", seq, step);
		if (i)
			cr_assert_leq(t.v[i - 1].end, t.v[i].base,
				      "sequence %u step %u: ranges overlap or are out of order", seq,
				      step);
	}
}

static void step_result(uint64_t tag, unsigned seq, unsigned step)
{
	struct np_dirty_launch l = { .tag = tag, .stream = 1 };
	pick_range(&l.out_ptr, &l.out_len, 8);
	l.out_len -= l.out_ptr;
	l.n_in = next() % 4;
	int inputs_dirty = 0;
	for (uint32_t k = 0; k < l.n_in; k++) {
		l.in[k] = pick_word();
		/* half of them read on from their word (in_len), up to past
		 * the span's end */
		l.in_len[k] = next() % 2 ? 0 : 1 + next() % (3 * CHUNK * 4);
		/* its word in a dirty byte, or a known bad byte in its extent */
		inputs_dirty |= model_at(l.in[k]) >= 0;
		for (uint64_t a = l.in[k]; a < l.in[k] + l.in_len[k]; a++)
			inputs_dirty |= model_at(a) >= 0 && bad_at(a);
	}
	/* its first bad element: in the output, past it (none known) */
	l.first_bad = next() % 8 ? next() % (l.out_len + 8) : NP_DIRTY_NO_BAD;
	int dirty = next() % 2;
	enum np_dirty_verdict want;
	if (!dirty)
		want = NP_DIRTY_CLEAN;
	else if (inputs_dirty)
		want = NP_DIRTY_PROPAGATED;
	else if (has_origin)
		want = NP_DIRTY_LATER_BIRTH;
	else
		want = NP_DIRTY_FIRST_ORIGIN;
	if (want == NP_DIRTY_FIRST_ORIGIN)
		has_origin = 1, origin_tag = tag;
	set_model(l.out_ptr, l.out_ptr + l.out_len, dirty ? (int64_t)tag : -1);
	if (dirty && l.first_bad < l.out_len)
		known_bad[l.out_ptr + l.first_bad - BASE] = 1;
	struct np_dirty_why why;
	enum np_dirty_verdict got = np_dirty_result(&t, &l, dirty, &why);
	cr_assert_eq(got, want, "sequence %u step %u: verdict %s, the model %s", seq, step,
		     np_dirty_verdict_name(got), np_dirty_verdict_name(want));
	cr_assert_eq(why.inputs_dirty, inputs_dirty, "sequence %u step %u: inputs dirty", seq,
		     step);
}

static void step_write(uint64_t tag)
{
	uint64_t lo, hi;
	pick_range(&lo, &hi, 8);
	set_model(lo, hi, -1);
	np_dirty_write(&t, lo, hi, tag);
}

static void step_copy(uint64_t tag, unsigned seq, unsigned step)
{
	uint64_t lo, hi;
	pick_range(&lo, &hi, 16);
	uint64_t len = hi - lo;
	/* a source of the same length anywhere in the span (overlapping the
	 * destination too: read before written, as the tracker does) */
	uint64_t src = BASE + (uint64_t)(next() % ((SPAN - len) / CHUNK + 1)) * CHUNK;
	bool whole = next() % 4 != 0;
	int64_t before[SPAN];
	uint8_t bad_before[SPAN];
	memcpy(before, model, sizeof(model));
	memcpy(bad_before, known_bad, sizeof(known_bad));
	int want = 0;
	int64_t want_source = -1;
	for (uint64_t i = 0; i < len; i++) {
		int64_t s = before[src - BASE + (whole ? i : 0)];
		model[lo - BASE + i] = s >= 0 ? (int64_t)tag : -1;
		/* a whole copy carries its source's bad bytes; one known by its
		 * first byte knows none */
		known_bad[lo - BASE + i] = whole && s >= 0 && bad_before[src - BASE + i];
		if (s >= 0 && !want)
			want = 1, want_source = s;
	}
	uint64_t source = 0;
	int got = np_dirty_copy(&t, lo, hi, src, whole, tag, &source);
	cr_assert_eq(got, want, "sequence %u step %u: a %s copy carried %d, the model %d", seq,
		     step, whole ? "whole" : "first-byte", got, want);
	if (want)
		cr_assert_eq((int64_t)source, want_source,
			     "sequence %u step %u: carried from tag %llu, the model %lld", seq, step,
			     (unsigned long long)source, (long long)want_source);
}

Test(dirty_model, results_writes_and_copies_in_launch_order_agree_with_a_byte_map)
{
	rng = 0x9e3779b97f4a7c15ull;
	for (unsigned seq = 0; seq < SEQUENCES; seq++) {
		cr_assert_eq(np_dirty_init(&t, NP_DIRTY_DEFAULT_CAP), 0);
		for (size_t i = 0; i < SPAN; i++)
			model[i] = -1;
		memset(known_bad, 0, sizeof(known_bad));
		has_origin = 0;
		origin_tag = 0;
		uint64_t tag = 0;
		for (unsigned step = 0; step < STEPS; step++) {
			tag += 1 + next() % 3;
			unsigned what = next() % 10;
			if (what < 5)
				step_result(tag, seq, step);
			else if (what < 7)
				step_write(tag);
			else
				step_copy(tag, seq, step);
			expect_same_bytes(seq, step);
		}
		cr_expect_eq(t.has_origin, has_origin, "sequence %u: an origin", seq);
		if (has_origin)
			cr_expect_eq(t.origin_tag, origin_tag, "sequence %u: the origin's tag", seq);
		np_dirty_free(&t);
	}
}
