/* test_dirty.c - cupti/dirty.c: picking the launch a non-finite value was
 * born in from check results.  A producer->consumer chain, later births,
 * clean overwrites, results of two streams interleaved, eviction, and
 * random results against a byte-per-address reference. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "../../cupti/dirty.h"

static struct np_dirty t;
static struct np_dirty_why why;

static void teardown(void)
{
	np_dirty_free(&t);
}

TestSuite(dirty, .fini = teardown);

/* l's result judged, why filled afresh (garbage first: every field set) */
static enum np_dirty_verdict judged(const struct np_dirty_launch *l, int dirty)
{
	memset(&why, 0xa5, sizeof(why));
	return np_dirty_result(&t, l, dirty, &why);
}

static enum np_dirty_verdict result(uint64_t tag, uint64_t stream, uint64_t out, uint64_t len,
				    int dirty, const uint64_t *in, uint32_t n)
{
	struct np_dirty_launch l = {
		.tag = tag, .stream = stream, .out_ptr = out, .out_len = len, .n_in = n,
	};

	memcpy(l.in, in, n * sizeof(*in));
	return judged(&l, dirty);
}

/* RES(tag, stream, out, len, dirty, input words...) */
#define RES(tag, stream, out, len, dirty, ...)                                           \
	result(tag, stream, out, len, dirty, (const uint64_t[]){ 0, ##__VA_ARGS__ } + 1,   \
	       sizeof((const uint64_t[]){ 0, ##__VA_ARGS__ }) / sizeof(uint64_t) - 1)

#define DIRTY 1
#define CLEAN 0

static void expect_verdict(enum np_dirty_verdict got, enum np_dirty_verdict want, const char *what)
{
	cr_expect_eq(got, want, "%s: %s, want %s", what, np_dirty_verdict_name(got),
		     np_dirty_verdict_name(want));
}

static void expect_source(uint64_t tag)
{
	cr_expect(why.inputs_dirty, "inputs not dirty, want source %llu",
		  (unsigned long long)tag);
	cr_expect_eq(why.source_tag, tag, "source %llu, want %llu",
		     (unsigned long long)why.source_tag, (unsigned long long)tag);
}

/* The tag marking addr dirty, or -1. */
static long long tag_at(uint64_t addr)
{
	uint64_t tag = 0;

	if (np_dirty_lookup(&t, addr, &tag))
		return -1;
	return (long long)tag;
}

/* Ranges sorted, non-empty, non-overlapping, within capacity. */
static void check_ranges(void)
{
	cr_assert_leq(t.len, t.cap);
	for (size_t i = 0; i < t.len; i++) {
		cr_assert_lt(t.v[i].base, t.v[i].end, "range %zu empty", i);
		if (i)
			cr_assert_leq(t.v[i - 1].end, t.v[i].base, "ranges %zu, %zu overlap", i - 1,
				      i);
	}
}

Test(dirty, init)
{
	cr_expect_eq(np_dirty_init(&t, 0), -EINVAL);
	cr_assert_eq(np_dirty_init(&t, 8), 0);
	cr_expect_eq(t.len, 0);
	cr_expect_not(t.has_origin);
	cr_expect_eq(np_dirty_lookup(&t, 0x1000, NULL), -ENOENT);
	cr_expect_str_eq(np_dirty_verdict_name(NP_DIRTY_PROPAGATED), "propagated");
	cr_expect_str_eq(np_dirty_verdict_name((enum np_dirty_verdict)99), "?");
}

/* A's output is born dirty; B reads A's output, C reads the middle of B's. */
Test(dirty, chain)
{
	cr_assert_eq(np_dirty_init(&t, 8), 0);
	expect_verdict(RES(1, 7, 0x1000, 0x100, DIRTY, 0x9000, 0x9100), NP_DIRTY_FIRST_ORIGIN, "A");
	cr_expect_not(why.inputs_dirty);
	cr_expect(t.has_origin);
	cr_expect_eq(t.origin_tag, 1);
	cr_expect_eq(tag_at(0x1000), 1);
	cr_expect_eq(tag_at(0x10ff), 1);
	cr_expect_eq(tag_at(0x0fff), -1);
	cr_expect_eq(tag_at(0x1100), -1);

	expect_verdict(RES(2, 7, 0x2000, 0x100, DIRTY, 0x9000, 0x1000), NP_DIRTY_PROPAGATED, "B");
	expect_source(1);
	expect_verdict(RES(3, 7, 0x3000, 0x40, DIRTY, 0x2080), NP_DIRTY_PROPAGATED, "C");
	expect_source(2);
	cr_expect_eq(tag_at(0x303f), 3);

	cr_expect_eq(t.origin_tag, 1);
	cr_expect_eq(t.births, 1);
	cr_expect_eq(t.propagated, 2);
	cr_expect_eq(t.clean, 0);

	/* an input word one past A's output is not A's */
	expect_verdict(RES(4, 7, 0x5000, 0x10, DIRTY, 0x1100), NP_DIRTY_LATER_BIRTH,
		       "reader past the end");
	/* a later, independent birth, and its reader */
	expect_verdict(RES(10, 7, 0x4000, 0x100, DIRTY, 0x9000), NP_DIRTY_LATER_BIRTH, "D");
	cr_expect_not(why.inputs_dirty);
	expect_verdict(RES(11, 7, 0x6000, 0x100, DIRTY, 0x40ff), NP_DIRTY_PROPAGATED, "E");
	expect_source(10);
	cr_expect_eq(t.origin_tag, 1, "a later birth took the origin");
	cr_expect_eq(t.births, 3);
	cr_expect_eq(t.propagated, 3);
}

/* The first birth's launch may have several checked outputs: all of them
 * are the origin, and none propagates into another of the same launch. */
Test(dirty, one_launch_two_outputs)
{
	cr_assert_eq(np_dirty_init(&t, 8), 0);
	expect_verdict(RES(5, 1, 0x1000, 0x100, DIRTY, 0x1000, 0x2000, 0x9000),
		       NP_DIRTY_FIRST_ORIGIN, "output 1");
	expect_verdict(RES(5, 1, 0x2000, 0x100, DIRTY, 0x1000, 0x2000, 0x9000),
		       NP_DIRTY_FIRST_ORIGIN, "output 2");
	cr_expect_not(why.inputs_dirty, "the launch's own output counted as its input");
	cr_expect_eq(t.origin_tag, 5);
	expect_verdict(RES(6, 1, 0x3000, 0x10, DIRTY, 0x2000), NP_DIRTY_PROPAGATED, "reader");
	expect_source(5);
}

/* A clean result says the buffer was overwritten with finite values. */
Test(dirty, clean_overwrite)
{
	cr_assert_eq(np_dirty_init(&t, 8), 0);
	expect_verdict(RES(1, 1, 0x1000, 0x100, DIRTY), NP_DIRTY_FIRST_ORIGIN, "A");
	expect_verdict(RES(2, 1, 0x1000, 0x100, CLEAN, 0x9000), NP_DIRTY_CLEAN, "overwrite");
	cr_expect_not(why.inputs_dirty);
	cr_expect_eq(tag_at(0x1000), -1);
	cr_expect_eq(tag_at(0x10ff), -1);
	cr_expect_eq(t.len, 0);
	cr_expect_eq(t.clean, 1);
	expect_verdict(RES(3, 1, 0x5000, 0x100, DIRTY, 0x1000), NP_DIRTY_LATER_BIRTH,
		       "reader of the overwritten buffer");
	cr_expect_not(why.inputs_dirty);

	/* a clean write into the middle of a dirty range splits it */
	expect_verdict(RES(4, 1, 0x2000, 0x300, DIRTY), NP_DIRTY_LATER_BIRTH, "wide");
	expect_verdict(RES(5, 1, 0x2100, 0x100, CLEAN), NP_DIRTY_CLEAN, "middle");
	check_ranges();
	cr_expect_eq(tag_at(0x2000), 4);
	cr_expect_eq(tag_at(0x20ff), 4);
	cr_expect_eq(tag_at(0x2100), -1);
	cr_expect_eq(tag_at(0x21ff), -1);
	cr_expect_eq(tag_at(0x2200), 4);
	cr_expect_eq(tag_at(0x22ff), 4);
	expect_verdict(RES(6, 1, 0x7000, 0x10, DIRTY, 0x2150), NP_DIRTY_LATER_BIRTH, "hole reader");
	expect_verdict(RES(7, 1, 0x7100, 0x10, DIRTY, 0x2250), NP_DIRTY_PROPAGATED, "right reader");
	expect_source(4);

	/* a clean write over the left end and across two ranges */
	expect_verdict(RES(8, 1, 0x1f00, 0x180, CLEAN), NP_DIRTY_CLEAN, "left end");
	cr_expect_eq(tag_at(0x207f), -1);
	cr_expect_eq(tag_at(0x2080), 4);
	expect_verdict(RES(9, 1, 0x2090, 0x7000, CLEAN), NP_DIRTY_CLEAN, "across");
	cr_expect_eq(tag_at(0x2080), 4);
	cr_expect_eq(tag_at(0x208f), 4);
	cr_expect_eq(tag_at(0x2090), -1);
	cr_expect_eq(tag_at(0x2200), -1);
	cr_expect_eq(tag_at(0x5000), -1);
	cr_expect_eq(tag_at(0x7000), -1);
	cr_expect_eq(t.len, 1);
	check_ranges();
}

/* SOURCE_DIRTY on a clean result: the kernel read a non-finite value and
 * masked it (where(), a loss with ignore_index...). */
Test(dirty, clean_result_with_dirty_inputs)
{
	cr_assert_eq(np_dirty_init(&t, 8), 0);
	RES(1, 1, 0x1000, 0x100, DIRTY);
	expect_verdict(RES(2, 1, 0x2000, 0x100, CLEAN, 0x9000, 0x1010), NP_DIRTY_CLEAN, "masked");
	expect_source(1);
	cr_expect_eq(tag_at(0x1010), 1, "the input was cleared");
	cr_expect_eq(t.propagated, 0);
}

/* Two streams launch 1, 3 (stream A) and 2, 4 (stream B); B's results
 * come back first. */
Test(dirty, interleaved_streams)
{
	const uint64_t A = 0xa, B = 0xb;

	cr_assert_eq(np_dirty_init(&t, 8), 0);
	expect_verdict(RES(2, B, 0x2000, 0x100, DIRTY, 0x9000), NP_DIRTY_FIRST_ORIGIN, "B's birth");
	expect_verdict(RES(4, B, 0x4000, 0x100, DIRTY, 0x2000), NP_DIRTY_PROPAGATED, "B's reader");
	expect_source(2);
	expect_verdict(RES(1, A, 0x1000, 0x100, DIRTY, 0x9000), NP_DIRTY_FIRST_ORIGIN,
		       "A's earlier birth, arriving late");
	cr_expect_eq(t.origin_tag, 1, "the earlier launch did not take the origin over");
	expect_verdict(RES(3, A, 0x3000, 0x100, DIRTY, 0x1000), NP_DIRTY_PROPAGATED, "A's reader");
	expect_source(1);
	expect_verdict(RES(5, B, 0x5000, 0x100, DIRTY, 0x9000), NP_DIRTY_LATER_BIRTH, "B later");
	cr_expect_eq(t.origin_tag, 1);

	/* B's launch 8 left Z dirty, reported before A's launches 6 and 7:
	 * 6 cannot have read 8's output, and 7's clean write came before 8's */
	expect_verdict(RES(8, B, 0x8000, 0x100, DIRTY, 0x9000), NP_DIRTY_LATER_BIRTH, "Z born");
	expect_verdict(RES(6, A, 0x6000, 0x100, DIRTY, 0x8000), NP_DIRTY_LATER_BIRTH,
		       "read of a later launch's output");
	cr_expect_not(why.inputs_dirty);
	expect_verdict(RES(7, A, 0x8000, 0x100, CLEAN), NP_DIRTY_CLEAN, "earlier clean write");
	cr_expect_eq(tag_at(0x8000), 8, "an earlier clean write cleared a later dirty one");
	expect_verdict(RES(9, A, 0x9100, 0x100, DIRTY, 0x8010), NP_DIRTY_PROPAGATED, "Z's reader");
	expect_source(8);
	/* and a later clean write does clear it */
	expect_verdict(RES(10, B, 0x8000, 0x100, CLEAN), NP_DIRTY_CLEAN, "later clean write");
	cr_expect_eq(tag_at(0x8000), -1);
}

/* A late judgement (the generic tier's) of launch 24, reading what 23
 * left dirty, comes after 26 cleared it and 31's reader... */
static enum np_dirty_verdict late(uint64_t tag, uint64_t out, uint64_t in)
{
	struct np_dirty_launch l = { .tag = tag, .stream = 1, .out_ptr = out, .out_len = 0x100,
				     .n_in = 1, .in = { in }, .late = true };

	return judged(&l, 1);
}

Test(dirty, a_late_judgement_sees_what_later_results_cleared)
{
	cr_assert_eq(np_dirty_init(&t, 8), 0);
	expect_verdict(RES(23, 1, 0x1000, 0x100, DIRTY), NP_DIRTY_FIRST_ORIGIN, "conv");
	expect_verdict(RES(26, 1, 0x1000, 0x100, CLEAN), NP_DIRTY_CLEAN, "rewritten clean");
	cr_expect_eq(tag_at(0x1000), -1);
	expect_verdict(late(24, 0x2000, 0x1010), NP_DIRTY_PROPAGATED,
		       "launched between the two: it read the dirty values");
	expect_source(23);
	expect_verdict(RES(25, 1, 0x3000, 0x100, DIRTY, 0x1010), NP_DIRTY_LATER_BIRTH,
		       "judged in order: not looked up in the history");
	expect_verdict(late(27, 0x4000, 0x1010), NP_DIRTY_LATER_BIRTH, "launched after the clean write");
	expect_verdict(late(22, 0x4100, 0x1010), NP_DIRTY_FIRST_ORIGIN,
		       "launched before the conv: a birth, and the earliest");
	cr_expect_not(why.inputs_dirty);

	/* re-marked by a later producer: the late reader's source is the
	 * earlier one */
	expect_verdict(RES(30, 1, 0x5000, 0x100, DIRTY), NP_DIRTY_LATER_BIRTH, "first");
	expect_verdict(RES(33, 1, 0x5000, 0x100, DIRTY), NP_DIRTY_LATER_BIRTH, "second");
	expect_verdict(late(31, 0x6000, 0x5080), NP_DIRTY_PROPAGATED, "between");
	expect_source(30);
	expect_verdict(late(34, 0x6100, 0x5080), NP_DIRTY_PROPAGATED, "after: the range itself");
	expect_source(33);
}

Test(dirty, the_history_is_bounded)
{
	cr_assert_eq(np_dirty_init(&t, 8), 0);
	RES(10, 1, 0x1000, 0x100, DIRTY);
	RES(12, 1, 0x1000, 0x100, CLEAN);
	/* NP_DIRTY_HISTORY more spans push the first out, and say so */
	for (uint64_t i = 0; i < NP_DIRTY_HISTORY; i++) {
		cr_expect_eq(t.forgotten, 0, "room for span %llu", (unsigned long long)i + 1);
		RES(20 + 2 * i, 1, 0x8000 + 0x100 * i, 0x100, DIRTY);
		RES(21 + 2 * i, 1, 0x8000 + 0x100 * i, 0x100, CLEAN);
	}
	cr_expect_eq(t.hist_len, NP_DIRTY_HISTORY);
	cr_expect_eq(t.forgotten, 1, "the first span counted as forgotten");
	expect_verdict(late(11, 0x2000, 0x1010), NP_DIRTY_LATER_BIRTH, "forgotten");
	expect_verdict(late(20 + 2 * (NP_DIRTY_HISTORY - 1), 0x2100,
			    0x8000 + 0x100 * (NP_DIRTY_HISTORY - 1)),
		       NP_DIRTY_LATER_BIRTH, "at the dirty tag itself: not after it");
	struct np_dirty_launch l = { .tag = 20 + 2 * (NP_DIRTY_HISTORY - 1), .out_ptr = 0x2200,
				     .n_in = 1, .late = true,
				     .in = { 0x8000 + 0x100 * (NP_DIRTY_HISTORY - 1) } };
	l.tag++;   /* equal to until: the clean write itself */
	cr_expect_eq(np_dirty_result(&t, &l, 1, &why), NP_DIRTY_LATER_BIRTH);
}

/* A memset or a copy from the host over a non-finite range: a later
 * birth reading the new bytes is a birth, not their propagation. */
Test(dirty, an_unchecked_write_ends_a_dirty_range)
{
	cr_assert_eq(np_dirty_init(&t, 8), 0);
	expect_verdict(RES(1, 1, 0x1000, 0x100, DIRTY), NP_DIRTY_FIRST_ORIGIN, "producer");
	np_dirty_write(&t, 0x1000, 0x1040, 3);
	cr_expect_eq(tag_at(0x1000), -1, "written over");
	cr_expect_eq(tag_at(0x103f), -1);
	cr_expect_eq(tag_at(0x1040), 1, "past the write: still dirty");
	cr_expect_eq(t.written, 1);
	expect_verdict(RES(4, 1, 0x2000, 0x100, DIRTY, 0x1000), NP_DIRTY_LATER_BIRTH,
		       "a reader of the new bytes");
	cr_expect_not(why.inputs_dirty);
	expect_verdict(RES(5, 1, 0x2100, 0x100, DIRTY, 0x1080), NP_DIRTY_PROPAGATED,
		       "a reader of what the write left");
	expect_source(1);
	/* launched before the write, its result after (another stream):
	 * it read the producer's values */
	expect_verdict(RES(2, 2, 0x3000, 0x100, DIRTY, 0x1000), NP_DIRTY_PROPAGATED,
		       "a reader launched before the write");
	expect_source(1);
	/* a write over nothing dirty changes nothing */
	np_dirty_write(&t, 0x9000, 0x9100, 6);
	cr_expect_eq(tag_at(0x9000), -1);
	check_ranges();
}

/* The result of a launch before a write, arriving after it (from another
 * stream, or the write told first): the written bytes stay clean. */
Test(dirty, an_earlier_result_arriving_after_a_write_leaves_it_clean)
{
	cr_assert_eq(np_dirty_init(&t, 8), 0);
	np_dirty_write(&t, 0x2000, 0x2080, 5);
	expect_verdict(RES(4, 1, 0x1f80, 0x200, DIRTY), NP_DIRTY_FIRST_ORIGIN, "producer, late");
	cr_expect_eq(tag_at(0x1f80), 4, "before the write's bytes: dirty");
	cr_expect_eq(tag_at(0x2000), -1, "the write's bytes: not marked again");
	cr_expect_eq(tag_at(0x207f), -1);
	cr_expect_eq(tag_at(0x2080), 4, "after them: dirty");
	check_ranges();
	expect_verdict(RES(6, 1, 0x4000, 0x100, DIRTY, 0x2000), NP_DIRTY_LATER_BIRTH,
		       "a reader after the write");
	/* a later producer's result is not held back by the write */
	expect_verdict(RES(7, 1, 0x2000, 0x80, DIRTY), NP_DIRTY_LATER_BIRTH, "after the write");
	cr_expect_eq(tag_at(0x2000), 7);
	check_ranges();
}

/* A device copy no check saw carries its source's state. */
Test(dirty, an_unchecked_copy_carries_its_source)
{
	uint64_t src = 0;

	cr_assert_eq(np_dirty_init(&t, 8), 0);
	expect_verdict(RES(1, 1, 0x3000, 0x100, DIRTY), NP_DIRTY_FIRST_ORIGIN, "producer");
	cr_expect_eq(np_dirty_copy(&t, 0x5000, 0x5040, 0x3010, true, 2, &src), 1, "a dirty source");
	cr_expect_eq(src, 1);
	cr_expect_eq(tag_at(0x5000), 2, "dirty as of the copy");
	cr_expect_eq(t.copied, 1);
	expect_verdict(RES(3, 1, 0x6000, 0x100, DIRTY, 0x5000), NP_DIRTY_PROPAGATED,
		       "the copy's reader");
	expect_source(2);
	/* a copy launched before the producer does not carry its values */
	cr_expect_eq(np_dirty_copy(&t, 0x7000, 0x7040, 0x3010, true, 1, &src), 0, "not yet dirty");
	/* a clean source: the copy is a write */
	cr_expect_eq(np_dirty_copy(&t, 0x5000, 0x5040, 0xa000, true, 4, NULL), 0, "a clean source");
	cr_expect_eq(tag_at(0x5000), -1, "written over, clean");
	/* the source cleared by a later result told first: the history
	 * keeps what the copy read */
	RES(10, 1, 0x3000, 0x100, CLEAN);
	cr_expect_eq(tag_at(0x3000), -1);
	cr_expect_eq(np_dirty_copy(&t, 0x8000, 0x8040, 0x3000, true, 5, &src), 1,
		     "copied before the clean write");
	cr_expect_eq(src, 1);
	check_ranges();
}

/* A copy laid out as its source carries each dirty part to its place:
 * a flat buffer copied whole, one tensor in its middle non-finite. */
Test(dirty, a_copy_carries_each_dirty_part_of_its_source_to_its_place)
{
	uint64_t src = 0;

	cr_assert_eq(np_dirty_init(&t, 8), 0);
	expect_verdict(RES(1, 1, 0x3040, 0x40, DIRTY), NP_DIRTY_FIRST_ORIGIN, "a slice");
	expect_verdict(RES(2, 1, 0x5000, 0x100, DIRTY), NP_DIRTY_LATER_BIRTH, "the old contents");
	cr_expect_eq(np_dirty_copy(&t, 0x5000, 0x5100, 0x3000, true, 3, &src), 1);
	cr_expect_eq(src, 1);
	cr_expect_eq(tag_at(0x5000), -1, "a clean part: written clean");
	cr_expect_eq(tag_at(0x503f), -1);
	cr_expect_eq(tag_at(0x5040), 3, "the dirty part, in its place");
	cr_expect_eq(tag_at(0x507f), 3);
	cr_expect_eq(tag_at(0x5080), -1, "written clean after it");
	check_ranges();
	expect_verdict(RES(4, 1, 0x6000, 0x40, DIRTY, 0x5040), NP_DIRTY_PROPAGATED,
		       "a reader of the copied slice");
	expect_verdict(RES(5, 1, 0x6100, 0x40, DIRTY, 0x5000), NP_DIRTY_LATER_BIRTH,
		       "a reader of a clean part");

	/* by its first byte alone the same copy carries nothing ... */
	cr_expect_eq(np_dirty_copy(&t, 0x7000, 0x7100, 0x3000, false, 6, NULL), 0);
	cr_expect_eq(tag_at(0x7040), -1, "the first byte clean: nothing carried");
	/* ... or, from a dirty first byte, all of it */
	cr_expect_eq(np_dirty_copy(&t, 0x7000, 0x7100, 0x3040, false, 7, NULL), 1);
	cr_expect_eq(tag_at(0x7000), 7);
	cr_expect_eq(tag_at(0x70ff), 7);

	/* the slice cleared by a later result told first: the history keeps
	 * the part an earlier copy read */
	RES(20, 1, 0x3040, 0x40, CLEAN);
	cr_expect_eq(np_dirty_copy(&t, 0x9000, 0x9100, 0x3000, true, 8, &src), 1);
	cr_expect_eq(src, 1);
	cr_expect_eq(tag_at(0x9000), -1);
	cr_expect_eq(tag_at(0x9040), 8, "carried from the history");
	cr_expect_eq(tag_at(0x9080), -1);
	cr_expect_eq(np_dirty_copy(&t, 0xa000, 0xa100, 0x3000, true, 21, NULL), 0,
		     "copied after the clean result");
	check_ranges();
}

Test(dirty, a_copy_s_dirty_parts_are_bounded)
{
	const uint64_t from = 0x10000, to = 0x40000, n = NP_DIRTY_COPY_PARTS + 4;

	cr_assert_eq(np_dirty_init(&t, 64), 0);
	for (uint64_t i = 0; i < n; i++)
		RES(10 + i, 1, from + 0x100 * i, 0x10, DIRTY);
	cr_expect_eq(np_dirty_copy(&t, to, to + 0x100 * n, from, true, 100, NULL), 1);
	for (uint64_t i = 0; i < NP_DIRTY_COPY_PARTS - 1; i++) {
		cr_expect_eq(tag_at(to + 0x100 * i), 100, "part %llu", (unsigned long long)i);
		cr_expect_eq(tag_at(to + 0x100 * i + 0x10), -1, "the gap after part %llu",
			     (unsigned long long)i);
	}
	/* the last part covers the rest, gaps and all: wider, nothing lost */
	uint64_t last = to + 0x100 * (NP_DIRTY_COPY_PARTS - 1);
	cr_expect_eq(tag_at(last), 100);
	cr_expect_eq(tag_at(last + 0x80), 100, "a gap inside the last part");
	cr_expect_eq(tag_at(to + 0x100 * (n - 1) + 0xf), 100, "the last dirty byte");
	cr_expect_eq(tag_at(to + 0x100 * (n - 1) + 0x10), -1, "after it: clean");
	check_ranges();
}

Test(dirty, the_writes_kept_are_bounded)
{
	cr_assert_eq(np_dirty_init(&t, 8), 0);
	for (uint64_t i = 0; i <= NP_DIRTY_WRITES; i++)
		np_dirty_write(&t, 0x10000 + 0x100 * i, 0x10100 + 0x100 * i, 100 + i);
	cr_expect_eq(t.writes_len, NP_DIRTY_WRITES);
	cr_expect_eq(t.written, NP_DIRTY_WRITES + 1);
	/* the first write is forgotten: an earlier result marks it again */
	RES(50, 1, 0x10000, 0x100, DIRTY);
	cr_expect_eq(tag_at(0x10000), 50, "the oldest write forgotten");
	RES(51, 1, 0x10100, 0x100, DIRTY);
	cr_expect_eq(tag_at(0x10100), -1, "the second kept");
}

/* Each byte keeps the latest tag that left it dirty. */
Test(dirty, overlapping_marks_keep_the_later_tag)
{
	cr_assert_eq(np_dirty_init(&t, 8), 0);
	RES(5, 1, 0x1000, 0x100, DIRTY);
	RES(3, 2, 0x1080, 0x100, DIRTY);	/* launched earlier, reported later */
	check_ranges();
	cr_expect_eq(tag_at(0x1000), 5);
	cr_expect_eq(tag_at(0x1080), 5);
	cr_expect_eq(tag_at(0x10ff), 5);
	cr_expect_eq(tag_at(0x1100), 3);
	cr_expect_eq(tag_at(0x117f), 3);
	cr_expect_eq(tag_at(0x1180), -1);
	RES(4, 2, 0x1000, 0x200, CLEAN);
	cr_expect_eq(tag_at(0x10ff), 5);
	cr_expect_eq(tag_at(0x1100), -1);
	cr_expect_eq(t.len, 1);

	/* a later mark over both sides of an old range and a gap */
	RES(1, 1, 0x3000, 0x10, DIRTY);
	RES(2, 1, 0x3040, 0x10, DIRTY);
	RES(9, 1, 0x2ff0, 0x100, DIRTY);
	check_ranges();
	cr_expect_eq(tag_at(0x2ff0), 9);
	cr_expect_eq(tag_at(0x3000), 9);
	cr_expect_eq(tag_at(0x3020), 9);
	cr_expect_eq(tag_at(0x3045), 9);
	cr_expect_eq(tag_at(0x30ef), 9);
	cr_expect_eq(tag_at(0x30f0), -1);
	/* an earlier mark inside a later range changes nothing */
	size_t len = t.len;
	RES(7, 1, 0x3010, 0x10, DIRTY);
	cr_expect_eq(tag_at(0x3010), 9);
	cr_expect_eq(t.len, len);
}

/* Outputs of unknown length mark one byte; the 16th input word counts,
 * words past n_in do not. */
Test(dirty, edges)
{
	struct np_dirty_launch l = { .tag = 2, .out_ptr = 0x5000, .out_len = 0x10 };

	cr_assert_eq(np_dirty_init(&t, 8), 0);
	RES(1, 1, 0x1000, 0, DIRTY);
	cr_expect_eq(tag_at(0x1000), 1);
	cr_expect_eq(tag_at(0x1001), -1);

	for (int i = 0; i < NP_DIRTY_MAX_INPUTS; i++)
		l.in[i] = 0x9000 + i;
	l.in[NP_DIRTY_MAX_INPUTS - 1] = 0x1000;
	l.n_in = NP_DIRTY_MAX_INPUTS - 1;
	expect_verdict(np_dirty_result(&t, &l, DIRTY, NULL), NP_DIRTY_LATER_BIRTH, "past n_in");
	l.tag = 3;
	l.n_in = NP_DIRTY_MAX_INPUTS;
	expect_verdict(np_dirty_result(&t, &l, DIRTY, &why), NP_DIRTY_PROPAGATED, "last word");
	l.tag = 4;
	l.n_in = 1000;
	expect_verdict(np_dirty_result(&t, &l, DIRTY, &why), NP_DIRTY_PROPAGATED, "n_in too big");

	/* the top of the address space */
	RES(5, 1, UINT64_MAX - 0x10, 0x100, DIRTY);
	cr_expect_eq(tag_at(UINT64_MAX - 0x10), 5);
	cr_expect_eq(tag_at(UINT64_MAX - 1), 5);
	RES(6, 1, UINT64_MAX - 0x10, 0x100, CLEAN);
	cr_expect_eq(tag_at(UINT64_MAX - 1), -1);
	check_ranges();
}

/* Full: the range with the oldest tag makes room, and is counted. */
Test(dirty, eviction)
{
	cr_assert_eq(np_dirty_init(&t, 4), 0);
	/* tags out of address order, so that oldest is not simply first */
	RES(3, 1, 0x1000, 0x100, DIRTY);
	RES(1, 1, 0x2000, 0x100, DIRTY);
	RES(4, 1, 0x3000, 0x100, DIRTY);
	RES(2, 1, 0x4000, 0x100, DIRTY);
	cr_expect_eq(t.len, 4);
	cr_expect_eq(t.evicted, 0);
	RES(5, 1, 0x5000, 0x100, DIRTY);
	cr_expect_eq(t.evicted, 1);
	cr_expect_eq(t.len, 4);
	cr_expect_eq(tag_at(0x2000), -1, "tag 1 not evicted");
	cr_expect_eq(tag_at(0x1000), 3);
	cr_expect_eq(tag_at(0x4000), 2);
	cr_expect_eq(tag_at(0x5000), 5);
	check_ranges();
	/* its readers look like births: the documented cost */
	expect_verdict(RES(6, 1, 0x6000, 0x100, DIRTY, 0x2000), NP_DIRTY_LATER_BIRTH, "evicted");
	cr_expect_eq(t.evicted, 2);
	cr_expect_eq(tag_at(0x4000), -1, "tag 2 not evicted next");
	expect_verdict(RES(7, 1, 0x7000, 0x100, CLEAN, 0x1000), NP_DIRTY_CLEAN, "kept");
	expect_source(3);

	/* a clean hole needs one more entry when full: the oldest goes */
	cr_expect_eq(t.len, 4);
	RES(8, 1, 0x3040, 0x40, CLEAN);
	cr_expect_eq(t.evicted, 3);
	cr_expect_eq(t.len, 4);
	cr_expect_eq(tag_at(0x1000), -1, "tag 3 not evicted");
	cr_expect_eq(tag_at(0x3000), 4);
	cr_expect_eq(tag_at(0x3040), -1);
	cr_expect_eq(tag_at(0x3080), 4);
	check_ranges();

	/* capacity 1: every new range replaces the last */
	np_dirty_free(&t);
	cr_assert_eq(np_dirty_init(&t, 1), 0);
	RES(1, 1, 0x1000, 0x100, DIRTY);
	RES(2, 1, 0x2000, 0x100, DIRTY);
	cr_expect_eq(t.len, 1);
	cr_expect_eq(t.evicted, 1);
	cr_expect_eq(tag_at(0x2000), 2);
	RES(3, 1, 0x2040, 0x40, CLEAN);
	check_ranges();
	cr_expect_eq(t.len, 1);
	cr_expect_eq(tag_at(0x2080), 2);
	/* a mark over a gap between later-tag ranges, with room for one */
	RES(4, 1, 0x3000, 0x10, DIRTY);
	check_ranges();
	cr_expect_eq(t.len, 1);
}

/* Input words past in[] (a torch.cat of many inputs, wide_inputs.h)
 * count as inputs: a value carried through the 19th is propagation. */
/* A reader handed a buffer's start, reading all of it (in_len), reads a
 * slice a birth wrote further in; handed only its word, it does not. */
static enum np_dirty_verdict reads(uint64_t tag, uint64_t out, uint64_t in, uint32_t len,
				   int dirty, bool late)
{
	struct np_dirty_launch l = { .tag = tag, .stream = 1, .out_ptr = out, .out_len = 0x100,
				     .n_in = 1, .in = { in }, .in_len = { len }, .late = late };

	return judged(&l, dirty);
}

Test(dirty, an_input_read_as_far_as_its_extent)
{
	cr_assert_eq(np_dirty_init(&t, 8), 0);
	/* x[:, 16:] = log(-1): a birth in the middle of 0x1000..0x1100 */
	expect_verdict(RES(2, 1, 0x1040, 0x40, DIRTY), NP_DIRTY_FIRST_ORIGIN, "the slice");
	expect_verdict(reads(3, 0x2000, 0x1000, 0, DIRTY, false), NP_DIRTY_LATER_BIRTH,
		       "the word alone: the slice is not seen");
	expect_verdict(reads(4, 0x3000, 0x1000, 0x40, DIRTY, false), NP_DIRTY_LATER_BIRTH,
		       "read up to the slice's start, not into it");
	expect_verdict(reads(5, 0x4000, 0x1000, 0x41, DIRTY, false), NP_DIRTY_PROPAGATED,
		       "one byte of it read");
	expect_source(2);
	expect_verdict(reads(6, 0x5000, 0x1000, 0x100, CLEAN, false), NP_DIRTY_CLEAN,
		       "a clean result of a dirty read");
	cr_expect(why.inputs_dirty, "its inputs were dirty all the same");
	/* a later range past an earlier-tagged one: the one dirtied before
	 * the reader counts, not the nearest */
	expect_verdict(RES(8, 1, 0x1000, 0x10, DIRTY), NP_DIRTY_LATER_BIRTH, "the start, later");
	expect_verdict(reads(7, 0x6000, 0x1000, 0x100, DIRTY, false), NP_DIRTY_PROPAGATED,
		       "launched before the start was dirtied: the slice fed it");
	expect_source(2);
	/* an extent to the end of the address space does not wrap */
	expect_verdict(reads(9, 0x7000, UINT64_MAX - 0x10, UINT32_MAX, DIRTY, false),
		       NP_DIRTY_LATER_BIRTH, "near the top");

	/* a late judgement: the slice, cleared since, from the history */
	expect_verdict(RES(10, 1, 0x1040, 0x40, CLEAN), NP_DIRTY_CLEAN, "the slice rewritten");
	expect_verdict(reads(3, 0x8000, 0x1000, 0x100, DIRTY, true), NP_DIRTY_PROPAGATED,
		       "late, between the birth and the clean write");
	expect_source(2);
	expect_verdict(reads(3, 0x8100, 0x1000, 0x40, DIRTY, true), NP_DIRTY_LATER_BIRTH,
		       "late, short of the slice");
}

/* A birth of out[0..0x100) whose first non-finite element lies at byte
 * first_bad of it. */
static enum np_dirty_verdict birth_at(uint64_t tag, uint64_t out, uint64_t first_bad)
{
	return judged(&(struct np_dirty_launch){ .tag = tag, .stream = 1, .out_ptr = out,
						 .out_len = 0x100, .first_bad = first_bad },
		      DIRTY);
}

Test(dirty, past_its_word_a_reader_reads_a_range_s_known_bad_byte)
{
	cr_assert_eq(np_dirty_init(&t, 16), 0);
	expect_verdict(birth_at(2, 0x1000, 0x80), NP_DIRTY_FIRST_ORIGIN, "bad from 0x1080");
	cr_expect_eq(t.v[0].bad, 0x1080);
	expect_verdict(reads(3, 0x2000, 0xf80, 0x100, DIRTY, false), NP_DIRTY_LATER_BIRTH,
		       "the range read from below, but not its bad byte");
	expect_verdict(reads(4, 0x2100, 0xf80, 0x101, DIRTY, false), NP_DIRTY_PROPAGATED,
		       "its bad byte read");
	expect_source(2);
	expect_verdict(reads(5, 0x2200, 0x1010, 0, DIRTY, false), NP_DIRTY_PROPAGATED,
		       "a word in the range: as ever");

	/* the bad part written over: the rest, marked whole, is no read of
	 * it from below, and the bad byte stays with the part holding it */
	expect_verdict(birth_at(6, 0x3000, 0), NP_DIRTY_LATER_BIRTH, "bad from 0x3000");
	np_dirty_write(&t, 0x2ff0, 0x3010, 7);
	cr_expect_eq(tag_at(0x3010), 6);
	expect_verdict(reads(8, 0x4000, 0x2ff0, 0x100, DIRTY, false), NP_DIRTY_LATER_BIRTH,
		       "its bad byte written over");
	expect_verdict(birth_at(9, 0x5000, 0xc0), NP_DIRTY_LATER_BIRTH, "bad from 0x50c0");
	np_dirty_write(&t, 0x5040, 0x5080, 10);   /* a hole before it */
	expect_verdict(reads(11, 0x4100, 0x4f00, 0x200, DIRTY, false), NP_DIRTY_PROPAGATED,
		       "the bad byte kept by the right part");
	expect_source(9);
	np_dirty_write(&t, 0x50f0, 0x5100, 12);   /* the end: the bad byte stays */
	expect_verdict(reads(13, 0x4200, 0x4f00, 0x200, DIRTY, false), NP_DIRTY_PROPAGATED,
		       "trimmed at its end");

	/* a whole copy carries the bad byte to its place; one known by its
	 * first byte knows none */
	cr_expect_eq(np_dirty_copy(&t, 0x6000, 0x6200, 0x0f00, true, 14, NULL), 1);
	cr_expect_eq(tag_at(0x6100), 14);
	expect_verdict(reads(15, 0x4300, 0x6000, 0x181, DIRTY, false), NP_DIRTY_PROPAGATED,
		       "the copy's bad byte read");
	expect_verdict(reads(16, 0x4400, 0x6000, 0x180, DIRTY, false), NP_DIRTY_LATER_BIRTH,
		       "short of the copy's bad byte");
	cr_expect_eq(np_dirty_copy(&t, 0x7000, 0x7100, 0x1000, false, 17, NULL), 1);
	expect_verdict(reads(18, 0x4500, 0x6ff0, 0x200, DIRTY, false), NP_DIRTY_LATER_BIRTH,
		       "a first-byte copy: read from below, no bad byte known");
	expect_verdict(reads(19, 0x4600, 0x7000, 0, DIRTY, false), NP_DIRTY_PROPAGATED,
		       "a first-byte copy: its word");
	/* a first bad element past the output: none known */
	expect_verdict(birth_at(20, 0x8000, 0x100), NP_DIRTY_LATER_BIRTH, "first_bad out of it");
	cr_expect_eq(t.v[t.len - 1].bad, NP_DIRTY_NO_BAD);
}

Test(dirty, input_words_past_in_count)
{
	uint64_t more[4] = { 0xa000, 0xb000, 0x1008, 0xc000 };
	struct np_dirty_launch cat = { .tag = 3, .out_ptr = 0x8000, .out_len = 0x40 };

	cr_assert_eq(np_dirty_init(&t, 8), 0);
	for (int k = 0; k < NP_DIRTY_MAX_INPUTS; k++)
		cat.in[k] = 0x9000 + 0x100 * (uint64_t)k;
	cat.n_in = NP_DIRTY_MAX_INPUTS;
	expect_verdict(RES(2, 1, 0x1000, 0x10, DIRTY), NP_DIRTY_FIRST_ORIGIN, "the origin");

	expect_verdict(np_dirty_result(&t, &cat, DIRTY, &why), NP_DIRTY_LATER_BIRTH,
		       "judged on in[] alone");
	cat.more_in = more;
	cat.n_more = 2;
	cat.tag = 4;
	expect_verdict(np_dirty_result(&t, &cat, DIRTY, &why), NP_DIRTY_LATER_BIRTH,
		       "past n_more");
	cat.n_more = 3;
	cat.tag = 5;
	expect_verdict(np_dirty_result(&t, &cat, DIRTY, &why), NP_DIRTY_PROPAGATED,
		       "the 19th word");
	expect_source(2);

	/* and for a late judgement, from the history */
	expect_verdict(RES(6, 1, 0x1000, 0x10, CLEAN), NP_DIRTY_CLEAN, "cleared after");
	struct np_dirty_launch late = cat;
	late.tag = 5;
	late.out_ptr = 0x6000;
	late.late = true;
	expect_verdict(np_dirty_result(&t, &late, DIRTY, &why), NP_DIRTY_PROPAGATED,
		       "read before the clear");
	expect_source(2);
	late.n_more = 2;
	expect_verdict(np_dirty_result(&t, &late, DIRTY, &why), NP_DIRTY_LATER_BIRTH,
		       "not among its words");
}

/* The reference: one tag per byte of a small window, 0 for clean. */
#define WINDOW 512
static uint64_t ref[WINDOW];

struct ref_out {
	enum np_dirty_verdict verdict;
	bool inputs_dirty;
	uint64_t source;
};

static bool ref_has_origin;
static uint64_t ref_origin;

static struct ref_out ref_result(const struct np_dirty_launch *l, int dirty)
{
	struct ref_out o = { NP_DIRTY_CLEAN, false, 0 };
	uint64_t end = l->out_ptr + (l->out_len ? l->out_len : 1);

	for (uint32_t k = 0; k < l->n_in + l->n_more && !o.inputs_dirty; k++) {
		uint64_t w = k < l->n_in ? l->in[k] : l->more_in[k - l->n_in];
		uint64_t tag = w < WINDOW ? ref[w] : 0;
		if (tag && tag < l->tag) {
			o.inputs_dirty = true;
			o.source = tag;
		}
	}
	for (uint64_t a = l->out_ptr; a < end; a++) {
		if (!dirty && ref[a] < l->tag)
			ref[a] = 0;
		else if (dirty && ref[a] < l->tag)
			ref[a] = l->tag;
	}
	if (!dirty)
		return o;
	if (o.inputs_dirty) {
		o.verdict = NP_DIRTY_PROPAGATED;
	} else if (ref_has_origin && l->tag > ref_origin) {
		o.verdict = NP_DIRTY_LATER_BIRTH;
	} else {
		o.verdict = NP_DIRTY_FIRST_ORIGIN;
		ref_has_origin = true;
		ref_origin = l->tag;
	}
	return o;
}

static struct np_dirty_launch random_launch(void)
{
	struct np_dirty_launch l = { 0 };
	uint64_t base = (uint64_t)rand() % WINDOW;

	l.tag = 1 + (uint64_t)rand() % 400;	/* repeated and out of order */
	l.stream = (uint64_t)rand() % 3;
	l.out_ptr = base;
	l.out_len = (uint64_t)rand() % 64;
	if (l.out_ptr + l.out_len > WINDOW)
		l.out_len = WINDOW - l.out_ptr;
	l.n_in = (uint32_t)rand() % 5;
	for (uint32_t k = 0; k < l.n_in; k++)
		l.in[k] = (uint64_t)rand() % (WINDOW + 16);
	/* now and then words past in[], after a full in[] */
	static uint64_t more[3];
	if (rand() % 8 == 0) {
		for (uint32_t k = l.n_in; k < NP_DIRTY_MAX_INPUTS; k++)
			l.in[k] = WINDOW + 100 + k;   /* clean: outside the window */
		l.n_in = NP_DIRTY_MAX_INPUTS;
		l.n_more = 1 + (uint32_t)rand() % 3;
		for (uint32_t k = 0; k < l.n_more; k++)
			more[k] = (uint64_t)rand() % (WINDOW + 16);
		l.more_in = more;
	}
	return l;
}

Test(dirty, random_against_reference)
{
	srand(4242);
	/* every range holds at least one byte: never full */
	cr_assert_eq(np_dirty_init(&t, WINDOW), 0);
	memset(ref, 0, sizeof(ref));
	ref_has_origin = false;

	for (int step = 0; step < 4000; step++) {
		struct np_dirty_launch l = random_launch();
		int dirty = rand() % 3 != 0;
		struct np_dirty_why w;
		enum np_dirty_verdict got = np_dirty_result(&t, &l, dirty, &w);
		struct ref_out want = ref_result(&l, dirty);

		cr_assert_eq(got, want.verdict, "step %d: tag %llu %s: %s, want %s", step,
			     (unsigned long long)l.tag, dirty ? "dirty" : "clean",
			     np_dirty_verdict_name(got), np_dirty_verdict_name(want.verdict));
		cr_assert_eq(w.inputs_dirty, want.inputs_dirty, "step %d", step);
		if (want.inputs_dirty)
			cr_assert_eq(w.source_tag, want.source, "step %d", step);
		cr_assert_eq(t.has_origin, ref_has_origin);
		if (ref_has_origin)
			cr_assert_eq(t.origin_tag, ref_origin);
		check_ranges();
		for (uint64_t a = 0; a < WINDOW + 16; a++) {
			long long want_tag = a < WINDOW && ref[a] ? (long long)ref[a] : -1;
			cr_assert_eq(tag_at(a), want_tag, "step %d: addr %llu: tag %lld, want %lld",
				     step, (unsigned long long)a, tag_at(a), want_tag);
		}
	}
	cr_expect_eq(t.evicted, 0);
	cr_expect_gt(t.propagated, 0);
	cr_expect_gt(t.clean, 0);
	cr_expect_gt(t.births, 1);
}

/* Small capacity, random results: evictions keep the set well-formed and
 * bounded, and only ever forget dirty bytes or their latest tag, never
 * invent them. */
Test(dirty, random_eviction)
{
	srand(777);
	cr_assert_eq(np_dirty_init(&t, 6), 0);
	memset(ref, 0, sizeof(ref));
	ref_has_origin = false;

	for (int step = 0; step < 4000; step++) {
		struct np_dirty_launch l = random_launch();
		int dirty = rand() % 3 != 0;

		np_dirty_result(&t, &l, dirty, NULL);
		ref_result(&l, dirty);
		check_ranges();
		for (uint64_t a = 0; a < WINDOW + 16; a++) {
			long long got = tag_at(a);
			if (got < 0)
				continue;
			/* a forgotten range may be filled again by an earlier tag */
			cr_assert(a < WINDOW && ref[a] && (uint64_t)got <= ref[a],
				  "step %d: addr %llu: tag %lld, reference %llu", step,
				  (unsigned long long)a, got,
				  (unsigned long long)(a < WINDOW ? ref[a] : 0));
		}
	}
	cr_expect_gt(t.evicted, 0);
	cr_expect_eq(t.len, t.cap);
}
