/* test_defer_set.c - cupti/defer_set.c: deferred checks grouped into lists
 * by context, stream, dtype and block class, and the ranges they will
 * read, which a later write must not touch unseen. */
#include <criterion/criterion.h>
#include <string.h>
#include "../../cupti/defer_set.h"

static struct np_defer_set set;
static int ctx_a, ctx_b;   /* two contexts: only their addresses matter */

static void fresh(void)
{
	memset(&set, 0, sizeof(set));
}

TestSuite(defer_set, .init = fresh);

/* a check of [lo, lo + bytes) tagged tag, in the list it belongs to */
static struct np_defer_list *put(const void *ctx, uint64_t stream, uint8_t dtype, unsigned blocks,
				 uint64_t lo, uint64_t bytes, uint64_t tag)
{
	struct np_defer_list *l = np_defer_slot(&set, ctx, stream, dtype, blocks);
	if (!l)
		return NULL;
	struct np_check_args a = { .buf = (const void *)(uintptr_t)lo, .numel = bytes / 4,
				   .tag = tag };
	np_defer_put(&set, l, &a, blocks, lo, lo + bytes);
	return l;
}

Test(defer_set, block_classes_are_at_most_four_times_apart)
{
	cr_expect_eq(np_defer_class(1), 0);
	cr_expect_eq(np_defer_class(4), 0);
	cr_expect_eq(np_defer_class(5), 1);
	cr_expect_eq(np_defer_class(16), 1);
	cr_expect_eq(np_defer_class(17), 2);
	cr_expect_eq(np_defer_class(1024), 4);
	cr_expect_eq(np_defer_class(100000), NP_DEFER_CLASSES - 1, "the last class takes the rest");
}

Test(defer_set, checks_of_one_stream_dtype_and_class_share_a_list)
{
	struct np_defer_list *a = put(&ctx_a, 7, 0, 2, 0x1000, 4096, 1);
	struct np_defer_list *b = put(&ctx_a, 7, 0, 3, 0x3000, 4096, 2);
	cr_assert_not_null(a);
	cr_expect_eq(a, b, "same context, stream, dtype, class");
	cr_expect_eq(a->n, 2);
	cr_expect_eq(a->blocks, 3, "the list's grid is its largest entry's");
	cr_expect_eq(a->blocks_of[0], 2);
	cr_expect_eq(a->blocks_of[1], 3);
	cr_expect_eq(a->list.e[1].tag, 2, "entries in the order they came");
	cr_expect_eq(a->bytes, 8192);
	cr_expect_neq(put(&ctx_a, 8, 0, 2, 0x5000, 64, 3), a, "another stream, another list");
	cr_expect_neq(put(&ctx_a, 7, 2, 2, 0x6000, 64, 4), a, "another dtype, another list");
	cr_expect_neq(put(&ctx_a, 7, 0, 200, 0x7000, 1 << 20, 5), a, "a large check apart");
	cr_expect_neq(put(&ctx_b, 7, 0, 2, 0x8000, 64, 6), a, "another context, another list");
	cr_expect_eq(set.n, 5);
	cr_expect_eq(set.entries, 6);
}

Test(defer_set, a_full_list_opens_another_and_no_room_says_so)
{
	struct np_defer_list *first = NULL;
	for (unsigned i = 0; i < NP_CHECK_LIST; i++)
		first = put(&ctx_a, 7, 0, 1, 0x100000 + 64 * i, 64, i + 1);
	cr_assert_eq(first->n, NP_CHECK_LIST);
	struct np_defer_list *next = put(&ctx_a, 7, 0, 1, 0x900000, 64, 99);
	cr_expect_neq(next, first, "a full list takes no more");
	for (uint64_t s = 100; set.n < NP_DEFER_LISTS; s++)
		cr_assert_not_null(put(&ctx_a, s, 0, 1, 0xa00000 + s * 64, 64, s));
	cr_expect_null(np_defer_slot(&set, &ctx_a, 555, 0, 1),
		       "every list open and none fits: the caller launches them");
	cr_expect_not_null(np_defer_slot(&set, &ctx_a, 7, 0, 1), "the open one with room still takes");
}

Test(defer_set, a_write_meets_a_waiting_range_only_where_they_overlap)
{
	cr_expect_not(np_defer_overlaps(&set, 0, UINT64_MAX), "nothing waits");
	put(&ctx_a, 7, 0, 1, 0x1000, 0x100, 1);
	put(&ctx_a, 7, 0, 1, 0x5000, 0x100, 2);
	cr_expect(np_defer_overlaps(&set, 0x1000, 0x1001));
	cr_expect(np_defer_overlaps(&set, 0x10ff, 0x2000), "the last byte");
	cr_expect(np_defer_overlaps(&set, 0x0, 0x1001), "the first byte");
	cr_expect(np_defer_overlaps(&set, 0x4000, 0x6000), "a write around it");
	cr_expect_not(np_defer_overlaps(&set, 0x1100, 0x5000), "between the two: inside the box, "
		      "outside both");
	cr_expect_not(np_defer_overlaps(&set, 0x0, 0x1000), "ends where it starts");
	cr_expect_not(np_defer_overlaps(&set, 0x5100, 0x9000), "starts where it ends");
	np_defer_clear(&set);
	cr_expect_not(np_defer_overlaps(&set, 0x1000, 0x1001), "cleared: nothing waits");
	cr_expect_eq(set.n, 0);
}

Test(defer_set, an_empty_check_reads_no_bytes_but_its_range_still_counts)
{
	struct np_defer_list *l = np_defer_slot(&set, &ctx_a, 7, 0, 1);
	struct np_check_args a = { .buf = (const void *)(uintptr_t)0x1000, .numel = 0, .tag = 1 };
	np_defer_put(&set, l, &a, 1, 0x1000, 0x2000);
	cr_expect_eq(l->bytes, 0, "NANPROF_GPU_DIAG=empty-checks: nothing read");
	cr_expect(np_defer_overlaps(&set, 0x1800, 0x1900), "its launch must still come first");
}
