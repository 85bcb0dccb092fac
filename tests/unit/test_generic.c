/* test_generic.c - cupti/generic.c: which undecoded launch an address a
 * decoded kernel reads is checked as the output of, and when the note is
 * stale, used up or forgotten. */
#include <criterion/criterion.h>
#include "../../cupti/generic.h"

TestSuite(generic, .init = np_generic_reset);

#define A 0x7f0000200000ull
#define B 0x7f0000400000ull
#define W 0x7f0000600000ull   /* a weight both matmuls read */

static struct np_generic_launch launch(uint32_t func, uint64_t order, uint64_t w0, uint64_t w1)
{
	return (struct np_generic_launch){ .order = order, .seq = order * 10, .launch_ns = order * 100,
					   .tid = 7, .func = func, .n_words = 2,
					   .words = { w0, w1 } };
}

Test(generic, an_address_maps_to_the_launch_it_was_handed_to_once)
{
	struct np_generic_launch u = launch(3, 11, A, W), got;
	cr_expect_eq(np_generic_take(A, &got), 0, "nothing noted yet");
	cr_expect_eq(np_generic_any(), 0);
	np_generic_note(&u);
	cr_expect_eq(np_generic_any(), 1);
	cr_expect_eq(np_generic_take(B, &got), 0, "B was never handed to a launch");
	cr_assert_eq(np_generic_take(A, &got), 1);
	cr_expect_eq(got.func, 3);
	cr_expect_eq(got.order, 11);
	cr_expect_eq(got.seq, 110);
	cr_expect_eq(got.launch_ns, 1100);
	cr_expect_eq(got.tid, 7);
	cr_assert_eq(got.n_words, 2);
	cr_expect_eq(got.words[0], A);
	cr_expect_eq(got.words[1], W, "its other words: what it read");
	cr_expect_eq(np_generic_take(A, &got), 0, "taken once");
	cr_expect_eq(np_generic_take(W, &got), 1, "the other word is still there");
	struct np_generic_stats st;
	np_generic_stats(&st);
	cr_expect_eq(st.noted, 1);
	cr_expect_eq(st.taken, 2);
}

Test(generic, the_latest_launch_handed_an_address_wins)
{
	struct np_generic_launch first = launch(3, 11, A, W), second = launch(4, 12, B, W), got;
	np_generic_note(&first);
	np_generic_note(&second);
	cr_assert_eq(np_generic_take(W, &got), 1);
	cr_expect_eq(got.func, 4);
	cr_assert_eq(np_generic_take(A, &got), 1);
	cr_expect_eq(got.func, 3, "A is still the first launch's");
}

/* A word the launch is known to only read (LpNormFunctor's gradients)
 * keeps its writer's note; it is still among the launch's words, the
 * inputs of its own checks. */
Test(generic, a_read_only_word_keeps_its_writers_note)
{
	struct np_generic_launch gemm = launch(3, 11, W, B), norm = launch(4, 12, A, W), got;
	norm.read_only = 1u << 1;       /* W */
	np_generic_note(&gemm);
	np_generic_note(&norm);
	cr_assert_eq(np_generic_take(W, &got), 1);
	cr_expect_eq(got.func, 3, "W is still the writer's");
	cr_assert_eq(np_generic_take(A, &got), 1);
	cr_expect_eq(got.func, 4);
	cr_assert_eq(got.n_words, 2);
	cr_expect_eq(got.words[1], W, "an input of the norm's own check");
}

Test(generic, a_checked_write_makes_the_note_stale)
{
	struct np_generic_launch u = launch(3, 11, A, W), got;
	np_generic_note(&u);
	np_generic_forget(A);
	cr_expect_eq(np_generic_take(A, &got), 0);
	cr_expect_eq(np_generic_take(W, &got), 1, "only A's note");
	np_generic_forget(B);   /* never noted: nothing happens */
}

Test(generic, an_overwritten_launch_is_not_used)
{
	struct np_generic_launch u = launch(3, 1, A, W), got;
	np_generic_note(&u);
	/* NP_GENERIC_LAUNCHES later launches, none handed A */
	for (uint64_t i = 0; i < NP_GENERIC_LAUNCHES; i++) {
		struct np_generic_launch v = launch(5, 2 + i, B + 0x1000 * (i + 1), 0);
		v.n_words = 1;
		np_generic_note(&v);
	}
	cr_expect_eq(np_generic_take(A, &got), 0, "its launch was overwritten");
	struct np_generic_stats st;
	np_generic_stats(&st);
	cr_expect_eq(st.expired, 1);
	cr_expect_eq(st.noted, NP_GENERIC_LAUNCHES + 1);
}

Test(generic, words_are_bounded_and_an_empty_launch_is_not_noted)
{
	struct np_generic_launch u = launch(3, 1, 0, 0), got;
	u.n_words = 0;
	np_generic_note(&u);
	struct np_generic_stats st;
	np_generic_stats(&st);
	cr_expect_eq(st.noted, 0);
	u.n_words = 1000;   /* more than it holds: only the first are kept */
	for (int i = 0; i < NP_GENERIC_WORDS; i++)
		u.words[i] = A + 0x100 * (uint64_t)i;
	np_generic_note(&u);
	cr_assert_eq(np_generic_take(A + 0x100 * (NP_GENERIC_WORDS - 1), &got), 1);
	cr_expect_eq(got.n_words, NP_GENERIC_WORDS);
}

Test(generic, a_slot_taken_by_another_address_forgets_the_first)
{
	struct np_generic_launch u = launch(3, 1, A, 0), got;
	u.n_words = 1;
	np_generic_note(&u);
	uint64_t other = 0;
	for (uint64_t p = A + 256; p < A + (1ull << 32) && !other; p += 256) {
		struct np_generic_launch v = launch(4, 2, p, 0);
		v.n_words = 1;
		np_generic_note(&v);
		struct np_generic_stats st;
		np_generic_stats(&st);
		if (st.displaced)
			other = p;
	}
	cr_assert_neq(other, 0, "no address shares A's slot");
	cr_expect_eq(np_generic_take(A, &got), 0);
	cr_expect_eq(np_generic_take(other, &got), 1);
	cr_expect_eq(got.func, 4);
}
