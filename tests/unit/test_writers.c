/* test_writers.c - cupti/writers.c: when a module's CUDA output needs a
 * guard check (its last writer may not have been checked) and when not. */
#include <criterion/criterion.h>
#include "../../cupti/writers.h"
#include "../../kernels/finite.h"

TestSuite(writers, .init = np_writers_reset);

#define A 0x7f0000200000ull
#define B 0x7f0000400000ull

Test(writers, never_written_needs_a_check)
{
	cr_expect_eq(np_writers_seen(A, NULL), 0);
	cr_expect_eq(np_writers_seen(0, NULL), 0);
}

Test(writers, a_checked_output_is_seen_until_an_unchecked_launch)
{
	uint64_t fill = np_writers_next();
	np_writers_checked(A, fill, 0, NP_DT_F32);
	cr_expect_eq(np_writers_seen(A, NULL), 1);
	cr_expect_eq(np_writers_seen(B, NULL), 0, "another buffer was not written");
	cr_expect_eq(np_writers_seen(A + 16, NULL), 0, "a view inside A is not A's start");
	/* a matmul nobody decodes: it may have written A */
	np_writers_unchecked(np_writers_next());
	cr_expect_eq(np_writers_seen(A, NULL), 0);
	/* a decoded kernel after it writes A again: checked, seen */
	np_writers_checked(A, np_writers_next(), 0, NP_DT_F32);
	cr_expect_eq(np_writers_seen(A, NULL), 1);
}

Test(writers, an_older_note_never_hides_a_newer_unchecked_launch)
{
	uint64_t early = np_writers_next();       /* thread 1's launch */
	uint64_t opaque = np_writers_next();      /* thread 2's, unchecked */
	np_writers_unchecked(opaque);
	np_writers_checked(A, early, 0, NP_DT_F32);             /* thread 1 notes late */
	cr_expect_eq(np_writers_seen(A, NULL), 0);
	/* and a late note of an older launch does not replace a newer one */
	uint64_t newer = np_writers_next();
	np_writers_checked(B, newer, 0, NP_DT_F32);
	np_writers_checked(B, early, 0, NP_DT_F32);
	cr_expect_eq(np_writers_seen(B, NULL), 1);
	np_writers_unchecked(early);              /* out of order: no effect */
	cr_expect_eq(np_writers_seen(B, NULL), 1);
}

Test(writers, a_slot_taken_by_another_address_forgets_the_first)
{
	uint64_t s = np_writers_next();
	np_writers_checked(A, s, 0, NP_DT_F32);
	/* find an address sharing A's slot: the table is bounded */
	uint64_t other = 0;
	for (uint64_t p = A + 256; p < A + (1ull << 32) && !other; p += 256) {
		np_writers_checked(p, np_writers_next(), 0, NP_DT_F32);
		if (!np_writers_seen(A, NULL))
			other = p;
	}
	cr_assert_neq(other, 0, "no address shares A's slot");
	cr_expect_eq(np_writers_seen(other, NULL), 1);
	cr_expect_eq(np_writers_seen(A, NULL), 0, "forgotten: checked again, never skipped wrongly");
}

Test(writers, last_checked_write_by_address)
{
	cr_expect_eq(np_writers_last(A), 0, "never written");
	uint64_t s = np_writers_next();
	np_writers_checked(A, s, 0, NP_DT_F32);
	np_writers_unchecked(np_writers_next());
	cr_expect_eq(np_writers_last(A), s, "an unchecked launch since does not change it");
	cr_expect_eq(np_writers_last(B), 0);
	cr_expect_eq(np_writers_last(0), 0);
}

Test(writers, launch_numbers_grow)
{
	uint64_t a = np_writers_next(), b = np_writers_next();
	cr_expect_gt(b, a);
	cr_expect_gt(a, 0);
}

Test(writers, the_check_tag_of_a_seen_write)
{
	uint64_t tag = 5;
	cr_expect_eq(np_writers_seen(A, &tag), 0, "never written");
	cr_expect_eq(tag, 5, "left alone when not seen");
	np_writers_checked(A, np_writers_next(), 77, NP_DT_F32);
	cr_expect_eq(np_writers_seen(A, &tag), 1);
	cr_expect_eq(tag, 77);
	np_writers_checked(A, np_writers_next(), 78, NP_DT_F32);
	np_writers_seen(A, &tag);
	cr_expect_eq(tag, 78, "the latest write's check");
	np_writers_unchecked(np_writers_next());
	tag = 5;
	cr_expect_eq(np_writers_seen(A, &tag), 0, "maybe overwritten since");
	cr_expect_eq(tag, 5, "its record says nothing of A now");
}

/* A copy of a buffer holds what its last checked write held: the dtype a
 * device-to-device copy's check reads it as (copy_calls.c). */
Test(writers, the_last_checked_write_gives_the_dtype_a_copy_holds)
{
	cr_expect_eq(np_writers_dtype(A), -1, "never written");
	np_writers_checked(A, np_writers_next(), 0, NP_DT_F16);
	cr_expect_eq(np_writers_dtype(A), NP_DT_F16);
	np_writers_checked(A, np_writers_next(), 0, NP_DT_BF16);
	cr_expect_eq(np_writers_dtype(A), NP_DT_BF16, "rewritten as another type");
	cr_expect_eq(np_writers_dtype(A + 4), -1, "inside a buffer: only its start is known");
	cr_expect_eq(np_writers_dtype(0), -1);
}
