/* test_intervals.c - cupti/intervals.c: the allocation interval map.
 * Boundaries, tensors nested in segments, replacement of overlapping
 * intervals, a full map, extents, and random operations against a
 * brute-force reference. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "../../cupti/intervals.h"

static struct np_ivmap m;

static void teardown(void)
{
	np_ivmap_free(&m);
}

TestSuite(intervals, .fini = teardown);

/* The id of the innermost interval containing addr, or -1. */
static long id_at(uint64_t addr)
{
	struct np_iv iv;

	if (np_ivmap_lookup(&m, addr, &iv))
		return -1;
	cr_assert(addr >= iv.base && addr - iv.base < iv.len, "%#llx outside the interval returned",
		  (unsigned long long)addr);
	return iv.id;
}

static uint64_t extent(uint64_t ptr)
{
	uint64_t len = 0;

	cr_assert_eq(np_iv_extent(&m, ptr, &len), 0, "no extent at %#llx", (unsigned long long)ptr);
	return len;
}

Test(intervals, empty)
{
	uint64_t len = 77;

	cr_assert_eq(np_ivmap_init(&m, 8, 8), 0);
	cr_expect_eq(np_ivmap_entries(&m), 0);
	cr_expect_eq(np_ivmap_lookup(&m, 0, NULL), -ENOENT);
	cr_expect_eq(np_ivmap_lookup(&m, 0x7f0000000000, NULL), -ENOENT);
	cr_expect_eq(np_iv_extent(&m, 0x1000, &len), -ENOENT);
	cr_expect_eq(len, 77, "extent written on a miss");
	cr_expect_eq(np_ivmap_remove(&m, NP_IV_SEGMENT, 0x1000), -ENOENT);
}

Test(intervals, insert_lookup_remove)
{
	struct np_iv iv;

	cr_assert_eq(np_ivmap_init(&m, 8, 8), 0);
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x10000, 0x1000, -1, 1), 0);
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x30000, 0x2000, -1, 3), 0);
	/* inserted out of order: the array is kept sorted */
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x20000, 0x1000, -1, 2), 0);
	cr_expect_eq(np_ivmap_entries(&m), 3);

	cr_assert_eq(np_ivmap_lookup(&m, 0x30100, &iv), 0);
	cr_expect_eq(iv.base, 0x30000);
	cr_expect_eq(iv.len, 0x2000);
	cr_expect_eq(iv.id, 3);
	cr_expect_eq(iv.dtype, -1);
	cr_expect_eq(iv.kind, NP_IV_SEGMENT);
	cr_expect_eq(id_at(0x10800), 1);
	cr_expect_eq(id_at(0x20800), 2);
	cr_expect_eq(id_at(0x18000), -1, "gap between segments");
	cr_expect_eq(id_at(0x40000), -1);

	/* remove by base only: an address inside is not a base */
	cr_expect_eq(np_ivmap_remove(&m, NP_IV_SEGMENT, 0x20800), -ENOENT);
	cr_expect_eq(np_ivmap_remove(&m, NP_IV_TENSOR, 0x20000), -ENOENT, "wrong kind");
	cr_expect_eq(np_ivmap_remove(&m, NP_IV_SEGMENT, 0x20000), 1);
	cr_expect_eq(id_at(0x20800), -1);
	cr_expect_eq(id_at(0x10800), 1);
	cr_expect_eq(id_at(0x30800), 3);
	cr_expect_eq(np_ivmap_entries(&m), 2);
	cr_expect_eq(np_ivmap_remove(&m, NP_IV_SEGMENT, 0x20000), -ENOENT, "removed twice");
	cr_expect_eq(m.replaced, 0);
	cr_expect_eq(m.overflow, 0);
}

Test(intervals, boundaries)
{
	cr_assert_eq(np_ivmap_init(&m, 8, 8), 0);
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x1000, 0x100, -1, 1), 0);
	/* touching, not overlapping: [0x1100, 0x1200) */
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x1100, 0x100, -1, 2), 0);
	cr_expect_eq(m.replaced, 0, "touching intervals replaced");
	cr_expect_eq(id_at(0x0fff), -1);
	cr_expect_eq(id_at(0x1000), 1, "addr == base");
	cr_expect_eq(id_at(0x10ff), 1, "addr == end - 1");
	cr_expect_eq(id_at(0x1100), 2, "addr == end is the next one's base");
	cr_expect_eq(id_at(0x11ff), 2);
	cr_expect_eq(id_at(0x1200), -1, "addr == end");
	/* one-byte interval */
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x5000, 1, -1, 5), 0);
	cr_expect_eq(id_at(0x4fff), -1);
	cr_expect_eq(id_at(0x5000), 5);
	cr_expect_eq(id_at(0x5001), -1);
	cr_expect_eq(extent(0x5000), 1);
	/* the top of the address space */
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, UINT64_MAX - 0x10, 0x10, -1, 9), 0);
	cr_expect_eq(id_at(UINT64_MAX - 1), 9);
	cr_expect_eq(id_at(UINT64_MAX), -1);
	cr_expect_eq(extent(UINT64_MAX - 1), 1);
	/* address 0 */
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_TENSOR, 0, 8, -1, 10), 0);
	cr_expect_eq(id_at(0), 10);
	cr_expect_eq(id_at(8), -1);
}

Test(intervals, invalid)
{
	cr_assert_eq(np_ivmap_init(&m, 8, 8), 0);
	cr_expect_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x1000, 0, -1, 1), -EINVAL, "len 0");
	cr_expect_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, UINT64_MAX - 0xf, 0x11, -1, 1), -EINVAL,
		     "wraps past the top");
	cr_expect_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, UINT64_MAX, 1, -1, 1), -EINVAL);
	cr_expect_eq(np_ivmap_insert(&m, NP_IV_KINDS, 0x1000, 0x10, -1, 1), -EINVAL, "bad kind");
	cr_expect_eq(np_ivmap_insert(&m, (enum np_iv_kind)-1, 0x1000, 0x10, -1, 1), -EINVAL);
	cr_expect_eq(np_ivmap_remove(&m, NP_IV_KINDS, 0x1000), -ENOENT);
	cr_expect_eq(np_ivmap_entries(&m), 0);
	cr_expect_eq(m.overflow, 0, "an invalid insert counted as overflow");
}

Test(intervals, tensor_inside_segment)
{
	struct np_iv iv;

	cr_assert_eq(np_ivmap_init(&m, 8, 8), 0);
	/* a 2 MiB segment carved into two tensors with a free gap between */
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x200000, 0x200000, -1, 1), 0);
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_TENSOR, 0x200000, 0x1000, 0, 100), 0);
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_TENSOR, 0x280000, 0x400, 3, 101), 0);
	cr_expect_eq(m.replaced, 0, "kinds replace each other");
	cr_expect_eq(np_ivmap_entries(&m), 3);

	cr_assert_eq(np_ivmap_lookup(&m, 0x200000, &iv), 0);
	cr_expect_eq(iv.kind, NP_IV_TENSOR, "segment found before the tensor at a shared base");
	cr_expect_eq(iv.id, 100);
	cr_expect_eq(iv.dtype, 0);
	cr_expect_eq(id_at(0x200fff), 100);
	cr_expect_eq(id_at(0x201000), 1, "past the tensor, still in the segment");
	cr_expect_eq(id_at(0x280200), 101);
	cr_assert_eq(np_ivmap_lookup(&m, 0x280200, &iv), 0);
	cr_expect_eq(iv.dtype, 3);
	cr_expect_eq(id_at(0x280400), 1);
	cr_expect_eq(id_at(0x3fffff), 1);
	cr_expect_eq(id_at(0x400000), -1);

	/* extent: to the end of the innermost interval */
	cr_expect_eq(extent(0x200000), 0x1000);
	cr_expect_eq(extent(0x200ff0), 0x10);
	cr_expect_eq(extent(0x201000), 0x1ff000);
	cr_expect_eq(extent(0x280100), 0x300);
	cr_expect_eq(extent(0x3fffff), 1);

	/* freeing a tensor leaves the segment; freeing the segment takes the rest */
	cr_expect_eq(np_ivmap_remove(&m, NP_IV_TENSOR, 0x200000), 1);
	cr_expect_eq(id_at(0x200000), 1);
	cr_expect_eq(extent(0x200000), 0x200000);
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_TENSOR, 0x500000, 0x100, -1, 102), 0);
	cr_expect_eq(np_ivmap_remove(&m, NP_IV_SEGMENT, 0x200000), 2, "tensor inside not removed");
	cr_expect_eq(id_at(0x280200), -1);
	cr_expect_eq(id_at(0x500000), 102, "a tensor outside the segment removed");
	cr_expect_eq(np_ivmap_entries(&m), 1);
}

/* A freed segment also drops tensors that only partly overlap it (a
 * tensor across two mappings of an expandable segment). */
Test(intervals, segment_removal_drops_straddling_tensor)
{
	cr_assert_eq(np_ivmap_init(&m, 8, 8), 0);
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x1000, 0x1000, -1, 1), 0);
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x2000, 0x1000, -1, 2), 0);
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_TENSOR, 0x0f00, 0x100, -1, 10), 0);
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_TENSOR, 0x1f00, 0x200, -1, 11), 0);
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_TENSOR, 0x2100, 0x100, -1, 12), 0);
	cr_expect_eq(np_ivmap_remove(&m, NP_IV_SEGMENT, 0x1000), 2);
	cr_expect_eq(id_at(0x0f00), 10, "tensor ending at the segment's base removed");
	cr_expect_eq(id_at(0x1f80), -1);
	cr_expect_eq(id_at(0x2000), 2, "straddling tensor kept");
	cr_expect_eq(id_at(0x2100), 12);
}

/* cuMemUnmap of one chunk of a growing (VMM) segment: what it touched
 * goes, of both kinds; what lies wholly outside stays. */
Test(intervals, unmapped_range_removes_what_it_touches)
{
	cr_assert_eq(np_ivmap_init(&m, 8, 8), 0);
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x1000, 0x1000, -1, 1), 0);
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x2000, 0x1000, -1, 2), 0);
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x3000, 0x1000, -1, 3), 0);
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_TENSOR, 0x1f00, 0x200, -1, 11), 0);
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_TENSOR, 0x3000, 0x100, -1, 13), 0);
	/* half of segment 2 and the tensor reaching into it */
	cr_expect_eq(np_ivmap_remove_range(&m, 0x2800, 0x100), 1, "segment 2 only");
	cr_expect_eq(id_at(0x2400), -1, "a partly unmapped segment is no bound any more");
	cr_expect_eq(id_at(0x2000), 11, "the tensor outside the range stays");
	cr_expect_eq(np_ivmap_remove_range(&m, 0x1800, 0x800), 2, "segment 1 and tensor 11");
	cr_expect_eq(id_at(0x1000), -1);
	cr_expect_eq(id_at(0x2000), -1);
	cr_expect_eq(id_at(0x3000), 13, "beyond the range: kept");
	cr_expect_eq(id_at(0x3800), 3);
	cr_expect_eq(np_ivmap_remove_range(&m, 0x5000, 0x1000), 0, "nothing there");
	cr_expect_eq(np_ivmap_remove_range(&m, 0x5000, 0), -EINVAL);
	cr_expect_eq(np_ivmap_remove_range(&m, ~0ull - 10, 0x100), -EINVAL);
	cr_expect_eq(np_ivmap_entries(&m), 2);
}

Test(intervals, overlap_replaces)
{
	cr_assert_eq(np_ivmap_init(&m, 8, 8), 0);
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x1000, 0x100, -1, 1), 0);
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x1200, 0x100, -1, 2), 0);
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x1400, 0x100, -1, 3), 0);
	cr_assert_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x1600, 0x100, -1, 4), 0);

	/* reaches into 1's last byte and 3's first byte: 1, 2, 3 go */
	cr_expect_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x10ff, 0x302, -1, 5), 3);
	cr_expect_eq(m.replaced, 3);
	cr_expect_eq(np_ivmap_entries(&m), 2);
	cr_expect_eq(id_at(0x1000), -1, "the replaced interval's other bytes still mapped");
	cr_expect_eq(id_at(0x10ff), 5);
	cr_expect_eq(id_at(0x1400), 5);
	cr_expect_eq(id_at(0x1401), -1);
	cr_expect_eq(id_at(0x1600), 4);

	/* the same interval again (reuse after an unseen free) */
	cr_expect_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x1600, 0x100, 1, 6), 1);
	cr_expect_eq(id_at(0x1600), 6);
	/* one covering everything */
	cr_expect_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0, 0x10000, -1, 7), 2);
	cr_expect_eq(m.replaced, 6);
	cr_expect_eq(np_ivmap_entries(&m), 1);
	cr_expect_eq(id_at(0x1600), 7);
	/* one inside it */
	cr_expect_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x8000, 0x10, -1, 8), 1);
	cr_expect_eq(id_at(0x1600), -1);
	cr_expect_eq(id_at(0x8000), 8);
	cr_expect_eq(m.replaced, 7);
	cr_expect_eq(m.overflow, 0);
}

Test(intervals, overflow)
{
	cr_assert_eq(np_ivmap_init(&m, 4, 2), 0);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x1000 * (i + 1), 0x100, -1, i), 0);
	cr_expect_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x9000, 0x100, -1, 9), -ENOSPC);
	cr_expect_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x0000, 0x100, -1, 9), -ENOSPC);
	cr_expect_eq(m.overflow, 2);
	cr_expect_eq(np_ivmap_entries(&m), 4);
	cr_expect_eq(id_at(0x9000), -1);
	cr_expect_eq(id_at(0x0000), -1);
	/* a replacing insert needs no room */
	cr_expect_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x2080, 0x100, -1, 8), 1);
	cr_expect_eq(id_at(0x2100), 8);
	cr_expect_eq(m.overflow, 2);
	/* tensors have their own capacity */
	cr_expect_eq(np_ivmap_insert(&m, NP_IV_TENSOR, 0x1000, 0x10, -1, 20), 0);
	cr_expect_eq(np_ivmap_insert(&m, NP_IV_TENSOR, 0x1010, 0x10, -1, 21), 0);
	cr_expect_eq(np_ivmap_insert(&m, NP_IV_TENSOR, 0x1020, 0x10, -1, 22), -ENOSPC);
	cr_expect_eq(m.overflow, 3);
	/* room again after a remove */
	cr_expect_eq(np_ivmap_remove(&m, NP_IV_SEGMENT, 0x4000), 1);
	cr_expect_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x9000, 0x100, -1, 9), 0);
	cr_expect_eq(id_at(0x9000), 9);
	cr_expect_eq(m.overflow, 3);
}

Test(intervals, zero_capacity)
{
	cr_assert_eq(np_ivmap_init(&m, 2, 0), 0);
	cr_expect_eq(np_ivmap_insert(&m, NP_IV_TENSOR, 0x1000, 0x10, -1, 1), -ENOSPC);
	cr_expect_eq(m.overflow, 1);
	cr_expect_eq(np_ivmap_insert(&m, NP_IV_SEGMENT, 0x1000, 0x10, -1, 1), 0);
	cr_expect_eq(np_ivmap_remove(&m, NP_IV_SEGMENT, 0x1000), 1);
}

Test(intervals, lock_wraps_a_mutex)
{
	cr_assert_eq(np_ivmap_init(&m, 2, 2), 0);
	np_ivmap_lock(&m);
	cr_expect_eq(pthread_mutex_trylock(&m.lock), EBUSY);
	np_ivmap_unlock(&m);
	cr_expect_eq(pthread_mutex_trylock(&m.lock), 0);
	np_ivmap_unlock(&m);
}

/* The reference: a plain list per kind, searched linearly. */
struct ref {
	struct np_iv v[NP_IV_KINDS][64];
	size_t n[NP_IV_KINDS], cap[NP_IV_KINDS];
	uint64_t overflow, replaced;
};

static int ref_drop_overlapping(struct ref *r, int k, uint64_t base, uint64_t end)
{
	int dropped = 0;

	for (size_t i = 0; i < r->n[k];) {
		struct np_iv *iv = &r->v[k][i];
		if (iv->base < end && base < iv->base + iv->len) {
			*iv = r->v[k][--r->n[k]];
			dropped++;
		} else {
			i++;
		}
	}
	return dropped;
}

static int ref_insert(struct ref *r, int k, uint64_t base, uint64_t len, uint32_t id)
{
	int overlaps = 0;

	for (size_t i = 0; i < r->n[k]; i++)
		if (r->v[k][i].base < base + len && base < r->v[k][i].base + r->v[k][i].len)
			overlaps++;
	if (!overlaps && r->n[k] >= r->cap[k]) {
		r->overflow++;
		return -ENOSPC;
	}
	ref_drop_overlapping(r, k, base, base + len);
	r->v[k][r->n[k]++] = (struct np_iv){ .base = base, .len = len, .id = id, .kind = k };
	r->replaced += overlaps;
	return overlaps;
}

static int ref_remove(struct ref *r, int k, uint64_t base)
{
	for (size_t i = 0; i < r->n[k]; i++) {
		struct np_iv iv = r->v[k][i];
		if (iv.base != base)
			continue;
		r->v[k][i] = r->v[k][--r->n[k]];
		if (k == NP_IV_SEGMENT)
			return 1 + ref_drop_overlapping(r, NP_IV_TENSOR, iv.base, iv.base + iv.len);
		return 1;
	}
	return -ENOENT;
}

static const struct np_iv *ref_lookup(const struct ref *r, uint64_t addr)
{
	for (int k = NP_IV_TENSOR; k >= NP_IV_SEGMENT; k--)
		for (size_t i = 0; i < r->n[k]; i++)
			if (addr >= r->v[k][i].base && addr - r->v[k][i].base < r->v[k][i].len)
				return &r->v[k][i];
	return NULL;
}

static void check_sorted(void)
{
	for (int k = 0; k < NP_IV_KINDS; k++) {
		const struct np_iv_set *s = &m.set[k];
		cr_assert_leq(s->len, s->cap);
		for (size_t i = 1; i < s->len; i++)
			cr_assert_leq(s->v[i - 1].base + s->v[i - 1].len, s->v[i].base,
				      "kind %d: entries %zu and %zu out of order or overlapping", k,
				      i - 1, i);
	}
}

static void check_addr(const struct ref *r, int step, uint64_t a)
{
	const struct np_iv *want = ref_lookup(r, a);
	struct np_iv got;
	uint64_t len = 0;
	int rc = np_ivmap_lookup(&m, a, &got);

	cr_assert_eq(rc, want ? 0 : -ENOENT, "step %d: addr %llu", step, (unsigned long long)a);
	if (!want)
		return;
	cr_assert_eq(got.id, want->id, "step %d: addr %llu", step, (unsigned long long)a);
	cr_assert_eq(got.kind, want->kind);
	cr_assert_eq(np_iv_extent(&m, a, &len), 0);
	cr_assert_eq(len, want->base + want->len - a, "step %d: extent at %llu", step,
		     (unsigned long long)a);
}

/* Random inserts and removes in a 4 KiB window against the reference:
 * after each step, every interval's edges and random addresses are
 * looked up; every 100 steps, every address. */
Test(intervals, random_against_reference)
{
	static struct ref r;
	const uint64_t window = 4096;

	srand(12345);
	cr_assert_eq(np_ivmap_init(&m, 8, 16), 0);
	memset(&r, 0, sizeof(r));
	r.cap[NP_IV_SEGMENT] = 8;
	r.cap[NP_IV_TENSOR] = 16;

	for (int step = 0; step < 3000; step++) {
		int k = rand() % 3 ? NP_IV_TENSOR : NP_IV_SEGMENT;
		uint64_t base = (uint64_t)rand() % window;
		uint64_t len = 1 + (uint64_t)rand() % (k == NP_IV_SEGMENT ? 256 : 32);
		uint32_t id = (uint32_t)step;

		if (rand() % 4 == 0) {
			/* remove: usually an existing base */
			if (r.n[k] && rand() % 4)
				base = r.v[k][(size_t)rand() % r.n[k]].base;
			cr_assert_eq(np_ivmap_remove(&m, k, base), ref_remove(&r, k, base),
				     "step %d: remove kind %d at %llu", step, k,
				     (unsigned long long)base);
		} else {
			cr_assert_eq(np_ivmap_insert(&m, k, base, len, -1, id),
				     ref_insert(&r, k, base, len, id),
				     "step %d: insert kind %d [%llu, +%llu)", step, k,
				     (unsigned long long)base, (unsigned long long)len);
		}
		check_sorted();
		cr_assert_eq(m.set[NP_IV_SEGMENT].len, r.n[NP_IV_SEGMENT]);
		cr_assert_eq(m.set[NP_IV_TENSOR].len, r.n[NP_IV_TENSOR]);
		cr_assert_eq(m.overflow, r.overflow);
		cr_assert_eq(m.replaced, r.replaced);
		for (int kk = 0; kk < NP_IV_KINDS; kk++) {
			for (size_t i = 0; i < r.n[kk]; i++) {
				uint64_t b = r.v[kk][i].base, e = b + r.v[kk][i].len;
				if (b)
					check_addr(&r, step, b - 1);
				check_addr(&r, step, b);
				check_addr(&r, step, e - 1);
				check_addr(&r, step, e);
			}
		}
		for (int i = 0; i < 64; i++)
			check_addr(&r, step, (uint64_t)rand() % (window + 600));
		if (step % 100 == 0)
			for (uint64_t a = 0; a < window + 600; a++)
				check_addr(&r, step, a);
	}
	cr_expect_gt(r.overflow, 0, "the random run never filled the map");
	cr_expect_gt(r.replaced, 0);
}
