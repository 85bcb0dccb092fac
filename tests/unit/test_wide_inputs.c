/* test_wide_inputs.c - cupti/wide_inputs.c: a torch.cat's input words
 * past its launch entry's, kept until its result is judged; an entry
 * reused by later wide checks is lost, never another check's words. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include "../../cupti/wide_inputs.h"

/* n words, word k of check tag: tag << 16 | k, stored unaligned as in a
 * kernel's parameter buffer */
static void words(uint64_t tag, uint32_t n, unsigned char *at)
{
	for (uint32_t k = 0; k < n; k++) {
		uint64_t w = tag << 16 | k;
		memcpy(at + 8 * k, &w, 8);
	}
}

Test(wide_inputs, words_come_back_under_their_tag)
{
	unsigned char buf[1 + 8 * 112];
	uint64_t out[NP_WIDE_MAX];

	words(41, 112, buf + 1);
	uint32_t slot = np_wide_put(41, 0, buf + 1, 112);
	cr_assert(slot >= 1 && slot <= NP_WIDE_SLOTS);
	cr_assert_eq(np_wide_get(slot, 41, out), 112);
	for (uint32_t k = 0; k < 112; k++)
		cr_expect_eq(out[k], 41ull << 16 | k);
	cr_expect_eq(np_wide_get(slot, 42, out), -ENOENT, "another tag");
	cr_expect_eq(np_wide_get(0, 41, out), -ENOENT, "no slot");
	cr_expect_eq(np_wide_get(NP_WIDE_SLOTS + 1, 41, out), -ENOENT, "past the ring");
	cr_expect_eq(np_wide_put(0, 0, buf, 3), 0, "no tag");
	cr_expect_eq(np_wide_put(43, 0, buf, 0), 0, "no words");
}

Test(wide_inputs, more_than_an_entry_holds_is_cut)
{
	static unsigned char buf[8 * (NP_WIDE_MAX + 4)];
	uint64_t out[NP_WIDE_MAX];

	words(7, NP_WIDE_MAX + 4, buf);
	uint32_t slot = np_wide_put(7, 0, buf, NP_WIDE_MAX + 4);
	cr_assert_eq(np_wide_get(slot, 7, out), NP_WIDE_MAX);
	cr_expect_eq(out[NP_WIDE_MAX - 1], 7ull << 16 | (NP_WIDE_MAX - 1));
}

Test(wide_inputs, an_entry_reused_is_lost)
{
	unsigned char buf[8 * 4];
	uint64_t out[NP_WIDE_MAX];

	words(100, 4, buf);
	uint32_t first = np_wide_put(100, 0, buf, 4);
	for (uint64_t t = 101; t < 101 + NP_WIDE_SLOTS - 1; t++) {
		words(t, 4, buf);
		cr_assert_neq(np_wide_put(t, 0, buf, 4), first, "the ring goes round first");
	}
	cr_assert_eq(np_wide_get(first, 100, out), 4, "the last of its round");
	words(500, 4, buf);
	cr_assert_eq(np_wide_put(500, 0, buf, 4), first, "then it is taken again");
	cr_expect_eq(np_wide_get(first, 100, out), -ENOENT);
	cr_assert_eq(np_wide_get(first, 500, out), 4);
	cr_expect_eq(out[3], 500ull << 16 | 3);
}

/* A captured check's words are kept for every replay, whatever goes
 * round the ring; past NP_WIDE_CAPTURED of them, none are. */
Test(wide_inputs, captured_checks_keep_theirs_for_good)
{
	unsigned char buf[8 * 4];
	uint64_t out[NP_WIDE_MAX];
	uint32_t kept[NP_WIDE_CAPTURED];

	for (uint32_t i = 0; i < NP_WIDE_CAPTURED; i++) {
		uint64_t tag = (1ull << 63) | (i + 1);
		words(tag & 0xffff, 4, buf);
		kept[i] = np_wide_put(tag, 1, buf, 4);
		cr_assert(kept[i] > NP_WIDE_SLOTS, "captured %u: slot %u", i, kept[i]);
	}
	words(9, 4, buf);
	cr_expect_eq(np_wide_put((1ull << 63) | 999, 1, buf, 4), 0, "all taken: none kept");
	for (uint64_t t = 2000; t < 2000 + 3 * NP_WIDE_SLOTS; t++)
		np_wide_put(t, 0, buf, 4);
	for (uint32_t i = 0; i < NP_WIDE_CAPTURED; i++) {
		uint64_t tag = (1ull << 63) | (i + 1);
		cr_assert_eq(np_wide_get(kept[i], tag, out), 4, "captured %u, replayed", i);
		cr_expect_eq(out[2], (tag & 0xffff) << 16 | 2);
		cr_assert_eq(np_wide_get(kept[i], tag, out), 4, "and replayed again");
	}
}

/* One writer going round the ring, the reader on this thread reading the
 * latest checks' entries as they are overwritten: what comes back is
 * always one check's words, whole, or -ENOENT. */
#define RACE_BASE (1ull << 20)
#define RACE_CHECKS 200000
static uint32_t race_first;     /* the ring's counter before the writer */
static uint64_t race_done;      /* checks written */

static void *writer(void *arg)
{
	unsigned char buf[8 * 32];
	(void)arg;
	for (uint64_t i = 0; i < RACE_CHECKS; i++) {
		words(RACE_BASE + i, 32, buf);
		np_wide_put(RACE_BASE + i, 0, buf, 32);
		__atomic_store_n(&race_done, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

Test(wide_inputs, a_racing_reader_never_mixes_two_checks)
{
	pthread_t th;
	uint64_t out[NP_WIDE_MAX];
	long whole = 0, lost = 0;
	unsigned char probe[8];

	/* where the writer starts: the slot after a put of ours */
	words(3, 1, probe);
	race_first = np_wide_put(3, 0, probe, 1) % NP_WIDE_SLOTS;
	cr_assert_eq(pthread_create(&th, NULL, writer, NULL), 0);
	for (;;) {
		uint64_t done = __atomic_load_n(&race_done, __ATOMIC_ACQUIRE);
		for (uint64_t back = 1; back <= NP_WIDE_SLOTS && back <= done; back++) {
			uint64_t i = done - back;
			uint32_t slot = (uint32_t)((race_first + i) % NP_WIDE_SLOTS) + 1;
			int n = np_wide_get(slot, RACE_BASE + i, out);
			if (n < 0) {
				lost++;
				continue;
			}
			cr_assert_eq(n, 32);
			for (int k = 0; k < 32; k++)
				cr_assert_eq(out[k], (RACE_BASE + i) << 16 | (uint64_t)k,
					     "word %d of check %llu", k, (unsigned long long)i);
			whole++;
		}
		if (done == RACE_CHECKS)
			break;
	}
	pthread_join(th, NULL);
	cr_expect_gt(whole, 1000, "the reader saw entries while they were written");
	cr_log_info("%ld whole reads, %ld lost, while writing", whole, lost);
}
