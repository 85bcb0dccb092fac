/* test_inflight.c - cupti/inflight.c: checks in flight by tag, reused
 * entries never misattributed, captured checks kept for every replay. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include "../../cupti/inflight.h"

TestSuite(inflight, .init = (void (*)(void))np_inflight_init);

static struct np_inflight entry(uint64_t tag, uint64_t ptr)
{
	struct np_inflight e;
	memset(&e, 0, sizeof(e));
	e.tag = tag;
	e.tid = 7;
	e.func = 3;
	e.dl.tag = tag;
	e.dl.out_ptr = ptr;
	e.dl.out_len = 64;
	return e;
}

Test(inflight, tags_grow_and_entries_come_back)
{
	uint64_t a = np_inflight_tag(0), b = np_inflight_tag(0);
	cr_assert(a && b > a);
	struct np_inflight e = entry(a, 0x7000), out;
	np_inflight_put(&e);
	cr_assert_eq(np_inflight_get(a, &out), 0);
	cr_assert_eq(out.dl.out_ptr, 0x7000);
	cr_assert_eq(out.func, 3);
	cr_assert_eq(np_inflight_get(b, &out), -ENOENT, "never stored");
}

Test(inflight, a_reused_entry_is_lost_not_misattributed)
{
	uint64_t a = np_inflight_tag(0);
	struct np_inflight e = entry(a, 0x1000), out;
	np_inflight_put(&e);
	uint64_t later = a + NP_INFLIGHT_SLOTS;   /* the same slot */
	e = entry(later, 0x2000);
	np_inflight_put(&e);
	cr_assert_eq(np_inflight_get(a, &out), -ENOENT);
	cr_assert_eq(np_inflight_get(later, &out), 0);
	cr_assert_eq(out.dl.out_ptr, 0x2000);
}

Test(inflight, captured_checks_keep_their_entry_for_every_replay)
{
	uint64_t c = np_inflight_tag(1);
	cr_assert(c & NP_TAG_CAPTURED);
	struct np_inflight e = entry(c, 0x3000), out;
	e.captured = 1;
	np_inflight_put(&e);
	for (int i = 0; i < NP_INFLIGHT_SLOTS + 5; i++) {   /* ordinary traffic */
		uint64_t t = np_inflight_tag(0);
		struct np_inflight o = entry(t, 0x9000);
		np_inflight_put(&o);
	}
	cr_assert_eq(np_inflight_get(c, &out), 0);
	cr_assert_eq(out.dl.out_ptr, 0x3000);
	cr_assert(out.captured);
	uint32_t s = np_inflight_scratch_index(c, 100);
	cr_assert_geq(s, 100, "captured checks have scratch slots of their own");
	cr_assert_lt(np_inflight_scratch_index(12345, 100), 100);
}

Test(inflight, captured_table_is_bounded)
{
	int got = 0;
	for (int i = 0; i < NP_INFLIGHT_CAPTURED + 10; i++)
		got += np_inflight_tag(1) != 0;
	cr_assert_leq(got, NP_INFLIGHT_CAPTURED, "0 once full: the launch goes unchecked");
	cr_assert_eq(np_inflight_tag(1), 0);
}
