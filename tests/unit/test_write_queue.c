/* test_write_queue.c - cupti/write_queue.c: unchecked writes posted for
 * the drain thread, in launch order, bounded and counted. */
#include <criterion/criterion.h>
#include "../../cupti/inflight.h"
#include "../../cupti/write_queue.h"

static void drain_all(void)
{
	struct np_wq_item got[64];
	while (np_wq_take(got, 64) > 0)
		;
}

Test(write_queue, a_call_s_ranges_share_one_number_after_the_launches_before)
{
	drain_all();
	uint64_t lo[2] = { 0x1000, 0x3000 }, hi[2] = { 0x1100, 0x3040 }, src[2] = { 0, 0x9000 };
	uint8_t whole[2] = { 0, 1 };
	uint64_t before = np_inflight_tag(0);
	cr_assert_eq(np_wq_post(lo, hi, src, whole, 2, 7), 2);
	cr_assert_eq(np_wq_post(lo, hi, NULL, NULL, 1, 8), 1);
	uint64_t after = np_inflight_tag(0);
	struct np_wq_item got[4];
	cr_assert_eq(np_wq_take(got, 4), 3);
	cr_expect_eq(got[0].order, got[1].order, "one call, one number");
	cr_expect_gt(got[0].order, before, "after the launch before it");
	cr_expect_gt(got[2].order, got[1].order, "the next call later");
	cr_expect_lt(got[2].order, after, "before the launch after it");
	cr_expect_eq(got[1].lo, 0x3000);
	cr_expect_eq(got[1].hi, 0x3040);
	cr_expect_eq(got[1].src, 0x9000);
	cr_expect_eq(got[0].src, 0);
	cr_expect_eq(got[2].src, 0, "no sources: 0");
	cr_expect(got[1].whole && !got[0].whole, "each range's layout");
	cr_expect(!got[2].whole, "no layouts: first bytes only");
	cr_expect_eq(got[0].stream, 7);
	cr_expect_eq(got[2].stream, 8);
	cr_expect_neq(got[0].at_ns, 0);
	cr_expect_eq(np_wq_take(got, 4), 0, "taken once");
}

Test(write_queue, a_full_queue_drops_and_counts)
{
	drain_all();
	uint64_t lost = np_wq_lost();
	uint64_t lo = 0x1000, hi = 0x1010;
	for (int i = 0; i < NP_WQ_CAP; i++)
		cr_assert_eq(np_wq_post(&lo, &hi, NULL, NULL, 1, 0), 1);
	uint64_t los[3] = { 1, 2, 3 }, his[3] = { 2, 3, 4 };
	cr_expect_eq(np_wq_post(los, his, NULL, NULL, 3, 0), 0, "no room");
	cr_expect_eq(np_wq_lost(), lost + 3);
	/* oldest first, in order, then room again */
	struct np_wq_item got[16];
	uint64_t last = 0;
	int n, total = 0;
	while ((n = np_wq_take(got, 16)) > 0) {
		for (int i = 0; i < n; i++) {
			cr_assert_gt(got[i].order, last);
			last = got[i].order;
		}
		total += n;
	}
	cr_expect_eq(total, NP_WQ_CAP);
	cr_expect_eq(np_wq_post(los, his, NULL, NULL, 3, 0), 3);
}
