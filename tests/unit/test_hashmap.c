/* test_hashmap.c - unit tests for userspace/hashmap.c. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <errno.h>
#include <stdint.h>

#include "hashmap.h"

static struct np_map m;

static void teardown(void)
{
	np_map_free(&m);
}

TestSuite(hashmap, .fini = teardown);

static uint64_t get(uint64_t k1, uint64_t k2)
{
	uint64_t v = 0xdeadbeef;

	cr_assert_eq(np_map_get(&m, k1, k2, &v), 0, "(%#llx, %#llx) missing",
		     (unsigned long long)k1, (unsigned long long)k2);
	return v;
}

static void expect_absent(uint64_t k1, uint64_t k2)
{
	uint64_t v = 0xdeadbeef;

	cr_expect_eq(np_map_get(&m, k1, k2, &v), -ENOENT, "(%#llx, %#llx) present",
		     (unsigned long long)k1, (unsigned long long)k2);
	cr_expect_eq(v, 0xdeadbeef, "value written on a miss");
}

Test(hashmap, empty)
{
	cr_assert_eq(np_map_init(&m, 10), 0);
	cr_expect_eq(m.len, 0);
	expect_absent(0, 0);
	expect_absent(1, 2);
}

Test(hashmap, put_get_replace)
{
	cr_assert_eq(np_map_init(&m, 10), 0);
	cr_assert_eq(np_map_put(&m, 100, 200, 7), 0);
	cr_expect_eq(get(100, 200), 7);
	cr_expect_eq(m.len, 1);
	cr_assert_eq(np_map_put(&m, 100, 200, 8), 0);
	cr_expect_eq(get(100, 200), 8);
	cr_expect_eq(m.len, 1, "a replace counted as an insert");
	/* zero keys and values are ordinary */
	cr_assert_eq(np_map_put(&m, 0, 0, 0), 0);
	cr_expect_eq(get(0, 0), 0);
	cr_assert_eq(np_map_put(&m, UINT64_MAX, UINT64_MAX, UINT64_MAX), 0);
	cr_expect_eq(get(UINT64_MAX, UINT64_MAX), UINT64_MAX);
	cr_expect_eq(get(100, 200), 8);
	cr_expect_eq(m.len, 3);
}

/* (pid, pointer) keys: pairs that differ only in one half, or swap halves. */
Test(hashmap, halves_are_distinct)
{
	cr_assert_eq(np_map_init(&m, 100), 0);
	cr_assert_eq(np_map_put(&m, 1, 2, 12), 0);
	cr_assert_eq(np_map_put(&m, 2, 1, 21), 0);
	cr_assert_eq(np_map_put(&m, 1, 3, 13), 0);
	cr_assert_eq(np_map_put(&m, 3, 2, 32), 0);
	cr_assert_eq(np_map_put(&m, 0, 2, 2), 0);
	cr_assert_eq(np_map_put(&m, 2, 0, 20), 0);
	cr_expect_eq(get(1, 2), 12);
	cr_expect_eq(get(2, 1), 21);
	cr_expect_eq(get(1, 3), 13);
	cr_expect_eq(get(3, 2), 32);
	cr_expect_eq(get(0, 2), 2);
	cr_expect_eq(get(2, 0), 20);
	cr_expect_eq(m.len, 6);
	expect_absent(1, 1);
	expect_absent(2, 2);
	expect_absent(3, 1);
	expect_absent(0, 1);
	/* the collector keys on (pid << 32) ^ parent: high-half differences */
	cr_assert_eq(np_map_put(&m, 1ULL << 32, 0x7f00, 1), 0);
	cr_assert_eq(np_map_put(&m, 2ULL << 32, 0x7f00, 2), 0);
	cr_expect_eq(get(1ULL << 32, 0x7f00), 1);
	cr_expect_eq(get(2ULL << 32, 0x7f00), 2);
	expect_absent(3ULL << 32, 0x7f00);
	expect_absent(0x7f00, 1ULL << 32);
}

/* Many keys force several growths; every key must survive each rehash. */
Test(hashmap, growth_keeps_everything)
{
	const uint64_t n = 20000;

	cr_assert_eq(np_map_init(&m, n), 0);
	size_t cap0 = m.cap;
	for (uint64_t i = 0; i < n; i++) {
		/* page-aligned pointers in a few processes: low entropy keys */
		uint64_t k1 = 1000 + i % 7, k2 = 0x7f0000000000ULL + (i << 12);
		cr_assert_eq(np_map_put(&m, k1, k2, i * 3 + 1), 0, "put %llu", (unsigned long long)i);
	}
	cr_expect_eq(m.len, n);
	cr_expect_gt(m.cap, cap0, "never grew");
	cr_expect_geq(m.cap, 2 * n, "load above one half: cap %zu", m.cap);
	cr_expect_eq(m.cap & (m.cap - 1), 0, "cap %zu not a power of two", m.cap);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t k1 = 1000 + i % 7, k2 = 0x7f0000000000ULL + (i << 12);
		cr_assert_eq(get(k1, k2), i * 3 + 1, "key %llu", (unsigned long long)i);
	}
	/* same pointers under another pid are not there */
	for (uint64_t i = 0; i < 100; i++)
		expect_absent(2000, 0x7f0000000000ULL + (i << 12));
}

Test(hashmap, replace_after_growth)
{
	cr_assert_eq(np_map_init(&m, 1000), 0);
	for (uint64_t i = 0; i < 1000; i++)
		cr_assert_eq(np_map_put(&m, i, ~i, i), 0);
	for (uint64_t i = 0; i < 1000; i += 3)
		cr_assert_eq(np_map_put(&m, i, ~i, i + 5000), 0);
	cr_expect_eq(m.len, 1000);
	for (uint64_t i = 0; i < 1000; i++)
		cr_assert_eq(get(i, ~i), i % 3 ? i : i + 5000);
}

Test(hashmap, full_at_max)
{
	cr_assert_eq(np_map_init(&m, 5), 0);
	for (uint64_t i = 0; i < 5; i++)
		cr_assert_eq(np_map_put(&m, i, i, i + 10), 0);
	cr_expect_eq(np_map_put(&m, 5, 5, 15), -ENOSPC);
	cr_expect_eq(np_map_put(&m, 0, 1, 15), -ENOSPC);
	cr_expect_eq(m.len, 5);
	expect_absent(5, 5);
	expect_absent(0, 1);
	/* a full map still replaces existing keys */
	cr_expect_eq(np_map_put(&m, 3, 3, 99), 0);
	cr_expect_eq(get(3, 3), 99);
	for (uint64_t i = 0; i < 5; i++)
		if (i != 3)
			cr_expect_eq(get(i, i), i + 10);
}

/* A max above the initial capacity: the limit still holds exactly after
 * growing. */
Test(hashmap, full_after_growth)
{
	const uint64_t max = 300;

	cr_assert_eq(np_map_init(&m, max), 0);
	for (uint64_t i = 0; i < max; i++)
		cr_assert_eq(np_map_put(&m, 42, i, i), 0);
	cr_expect_eq(np_map_put(&m, 42, max, max), -ENOSPC);
	cr_expect_eq(np_map_put(&m, 43, 0, 0), -ENOSPC);
	cr_expect_eq(m.len, max);
	for (uint64_t i = 0; i < max; i++)
		cr_expect_eq(get(42, i), i);
}

Test(hashmap, zero_max)
{
	cr_assert_eq(np_map_init(&m, 0), 0);
	cr_expect_eq(np_map_put(&m, 1, 1, 1), -ENOSPC);
	expect_absent(1, 1);
}

Test(hashmap, get_after_free)
{
	cr_assert_eq(np_map_init(&m, 4), 0);
	cr_assert_eq(np_map_put(&m, 1, 1, 1), 0);
	np_map_free(&m);
	cr_expect_null(m.slots);
	cr_expect_eq(m.len, 0);
	expect_absent(1, 1);
	np_map_free(&m);   /* twice is harmless */
}
