/* test_pymem.c - unit tests for userspace/pymem.c.
 *
 * Builds a fake CPython 3.11 heap in a byte buffer: compact ASCII strs,
 * dicts with general, unicode and split keys, and nn.Module-like objects
 * whose managed __dict__ pointer sits at obj - 24.  The reader callback
 * serves only that buffer, so every stray read shows up as a failed read.
 * A few tests at the end switch to the 3.10, 3.12 and 3.13 layouts.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pymem.h"

#define HEAP_BASE 0x7f3400000000ULL   /* like a real heap address, never 0 */
#define HEAP_SIZE (1 << 20)

static uint8_t *heap;
static size_t heap_used;
static unsigned reads, failed_reads;
static uint64_t fail_from, fail_to;   /* reads touching [from, to) fail */
static struct np_pymem mem;

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	reads++;
	cr_assert_eq(ctx, (void *)&heap, "callback context not passed through");
	if (addr < HEAP_BASE || addr - HEAP_BASE > HEAP_SIZE || len > HEAP_SIZE - (addr - HEAP_BASE) ||
	    (addr < fail_to && addr + len > fail_from)) {
		failed_reads++;
		return -EFAULT;
	}
	memcpy(buf, heap + (addr - HEAP_BASE), len);
	return 0;
}

static void setup(void)
{
	heap = calloc(1, HEAP_SIZE);
	cr_assert_not_null(heap);
	/* leave the first page unused, so no object sits at the heap's start */
	heap_used = 4096;
	reads = failed_reads = 0;
	fail_from = fail_to = 0;
	mem.read = fake_read;
	mem.ctx = &heap;
	mem.v = np_pyver_find(3, 11);
	cr_assert_not_null(mem.v);
}

static void teardown(void)
{
	free(heap);
}

TestSuite(pymem, .init = setup, .fini = teardown);

/* ---- building the fake heap ---- */

static uint64_t alloc(size_t size)
{
	uint64_t addr;

	heap_used = (heap_used + 15) & ~(size_t)15;
	cr_assert_leq(heap_used + size, HEAP_SIZE, "fake heap full");
	addr = HEAP_BASE + heap_used;
	heap_used += size;
	return addr;
}

static void put64(uint64_t addr, uint64_t v) { memcpy(heap + (addr - HEAP_BASE), &v, 8); }
static void put32(uint64_t addr, uint32_t v) { memcpy(heap + (addr - HEAP_BASE), &v, 4); }
static void put8(uint64_t addr, uint8_t v) { heap[addr - HEAP_BASE] = v; }

#define STATE_COMPACT (1u << 5)
#define STATE_ASCII (1u << 6)
#define KIND_1BYTE (1u << 2)
#define KIND_2BYTE (2u << 2)

/* A str object: PyASCIIObject (length +16, state +32), text at +48 for a
 * compact ASCII one (+40 from 3.12, which dropped wstr).  The state word
 * also carries interned bits, as the strings used as dict keys are usually
 * interned. */
static uint64_t str_with(const char *s, uint32_t state)
{
	size_t n = strlen(s);
	uint32_t data = mem.v->bpf.str_ascii_data;
	uint64_t o = alloc(48 + n + 1);

	put64(o + 0, 1);                     /* ob_refcnt */
	put64(o + 8, 0xdead0000);            /* ob_type: never read */
	put64(o + 16, n);                    /* length */
	put64(o + 24, 0x1234);               /* hash */
	put32(o + 32, state);
	if (data > 40)
		put64(o + 40, 0);            /* 3.11: wstr */
	memcpy(heap + (o + data - HEAP_BASE), s, n + 1);
	return o;
}

static uint64_t str(const char *s)
{
	return str_with(s, 1u /* interned */ | KIND_1BYTE | STATE_COMPACT | STATE_ASCII);
}

enum { KEYS_GENERAL = 0, KEYS_UNICODE = 1, KEYS_SPLIT = 2 };

struct ent {
	uint64_t key, value;
};

/* A 3.11 PyDictKeysObject: dk_refcnt, dk_log2_size (u8 +8),
 * dk_log2_index_bytes (u8 +9), dk_kind (u8 +10), dk_version (u32 +12),
 * dk_usable (+16), dk_nentries (+24), dk_indices (+32), then the entries.
 * Index width grows with the table size, as in CPython, so the index
 * area is not 1 << dk_log2_size bytes once the table has 256 slots. */
static uint64_t keys_obj(int kind, unsigned log2_size, const struct ent *e, size_t n)
{
	unsigned width_log2 = log2_size < 8 ? 0 : log2_size < 16 ? 1 : 2;
	unsigned log2_index_bytes = log2_size + width_log2;
	size_t index_bytes = (size_t)1 << log2_index_bytes;
	size_t esize = kind == KEYS_GENERAL ? 24 : 16;
	uint64_t k = alloc(32 + index_bytes + n * esize);

	put64(k + 0, 1);
	put8(k + 8, (uint8_t)log2_size);
	put8(k + 9, (uint8_t)log2_index_bytes);
	put8(k + 10, (uint8_t)kind);
	put32(k + 12, 0);
	put64(k + 16, ((size_t)1 << log2_size) * 2 / 3 - n);
	put64(k + 24, n);
	/* indices: filled with DKIX_EMPTY (-1); the code under test must not
	 * need them, but mistaking them for entries gives garbage */
	memset(heap + (k + 32 - HEAP_BASE), 0xff, index_bytes);
	uint64_t ents = k + 32 + index_bytes;
	for (size_t i = 0; i < n; i++) {
		uint64_t at = ents + i * esize;
		if (kind == KEYS_GENERAL) {
			put64(at, 0x5151 + i);   /* me_hash */
			at += 8;
		}
		put64(at, e[i].key);
		put64(at + 8, e[i].value);
	}
	return k;
}

/* A PyDictObject: ma_used +16, ma_version_tag +24, ma_keys +32, ma_values +40. */
static uint64_t dict_obj(uint64_t keys, uint64_t values, size_t used)
{
	uint64_t d = alloc(48);

	put64(d + 0, 1);
	put64(d + 8, 0xd1c7);
	put64(d + 16, used);
	put64(d + 32, keys);
	put64(d + 40, values);
	return d;
}

static uint64_t dict_kind(int kind, const struct ent *e, size_t n)
{
	return dict_obj(keys_obj(kind, 3, e, n), 0, n);
}

/* A split dict: the keys hold decoy values, the real ones are in the
 * values array (3.11: PyDictValues is values[] at offset 0; 3.13: after
 * capacity, size, embedded, valid bytes padded to 8). */
static uint64_t split_dict(const struct ent *e, size_t n, uint64_t decoy)
{
	struct ent shared[16];
	uint32_t hdr = mem.v->dict_values_header;
	uint64_t values = alloc(hdr + 8 * n);

	cr_assert_leq(n, 16);
	for (uint32_t i = 0; i < hdr; i++)
		put8(values + i, (uint8_t)(0xa0 + i));   /* a header that is no pointer */
	for (size_t i = 0; i < n; i++) {
		shared[i] = (struct ent){ e[i].key, decoy };
		put64(values + hdr + 8 * i, e[i].value);
	}
	return dict_obj(keys_obj(KEYS_SPLIT, 3, shared, n), values, n);
}

/* An object of a class with a managed dict: pre-header (dict pointer at
 * obj - 24, values pointer at obj - 32), then ob_refcnt and ob_type. */
static uint64_t object_with_dict(uint64_t dict)
{
	uint64_t pre = alloc(32 + 16);
	uint64_t obj = pre + 32;

	put64(obj - 24, dict);
	put64(obj, 1);
	put64(obj + 8, 0x7e7e0000);
	return obj;
}

/* A module: __dict__ = {"training": <obj>, "_parameters": {}, "_modules": mods}.
 * Instance dicts use unicode keys; the _modules dict a general one, so both
 * entry layouts are walked on every path. */
static uint64_t module_obj(uint64_t mods)
{
	struct ent e[] = {
		{ str("training"), 0x7777 },
		{ str("_parameters"), 0 },
		{ str("_modules"), mods },
	};

	e[1].value = dict_kind(KEYS_GENERAL, NULL, 0);
	return object_with_dict(dict_kind(KEYS_UNICODE, e, 3));
}

static uint64_t leaf_module(void)
{
	return module_obj(dict_kind(KEYS_GENERAL, NULL, 0));
}

/* root -> "encoder" -> "_modules" {"layers": LAYERS, "drop": D}
 * LAYERS -> {"0": A, <deleted>, <non-ASCII key> -> B, "1": B}
 * B -> {"norm1": N1, "norm2": C}
 * encoder's instance dict is a split dict whose keys hold a decoy
 * _modules dict that names B "decoy". */
struct tree {
	uint64_t root, encoder, layers, drop, a, b, c, n1, decoy_b;
};

static struct tree build_tree(void)
{
	struct tree t;

	t.a = leaf_module();
	t.c = leaf_module();
	t.n1 = leaf_module();
	t.drop = leaf_module();
	t.decoy_b = leaf_module();
	{
		struct ent e[] = { { str("norm1"), t.n1 }, { str("norm2"), t.c } };
		t.b = module_obj(dict_kind(KEYS_GENERAL, e, 2));
	}
	{
		uint64_t non_ascii = str_with("\xc3\xbc", KIND_1BYTE | STATE_COMPACT);
		struct ent e[] = {
			{ str("0"), t.a },
			{ 0, 0 },              /* deleted entry */
			{ 0, t.b },            /* key gone, value left: still deleted */
			{ non_ascii, t.b },    /* a key that is not an ASCII str */
			{ str("1"), t.b },
		};
		t.layers = module_obj(dict_kind(KEYS_UNICODE, e, 5));
	}
	{
		struct ent mods[] = { { str("layers"), t.layers }, { str("drop"), t.drop } };
		struct ent decoy_mods[] = { { str("decoy"), t.b } };
		uint64_t decoy = dict_kind(KEYS_GENERAL, decoy_mods, 1);
		struct ent e[] = {
			{ str("training"), 0x7777 },
			{ str("_modules"), dict_kind(KEYS_GENERAL, mods, 2) },
		};
		t.encoder = object_with_dict(split_dict(e, 2, decoy));
	}
	{
		struct ent e[] = { { str("encoder"), t.encoder } };
		t.root = module_obj(dict_kind(KEYS_UNICODE, e, 1));
	}
	return t;
}

static const char *path(uint64_t parent, uint64_t child, int depth, int *err)
{
	static char buf[256];

	memset(buf, 'Z', sizeof(buf));
	*err = np_py_module_path(&mem, parent, child, depth, buf, sizeof(buf));
	return buf;
}

/* ---- np_py_str ---- */

Test(pymem, str_exact)
{
	char buf[64];
	uint64_t s = str("norm2");

	cr_assert_eq(np_py_str(&mem, s, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "norm2");
	cr_assert_eq(np_py_str(&mem, str(""), buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "");
}

Test(pymem, str_truncates)
{
	uint64_t s = str("normalization");
	char buf[6];

	memset(buf, 'x', sizeof(buf));
	cr_assert_eq(np_py_str(&mem, s, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "norma");
	cr_expect_eq(np_py_str(&mem, s, buf, 0), -EINVAL);

	char one[1] = { 'x' };
	cr_assert_eq(np_py_str(&mem, s, one, 1), 0);
	cr_expect_eq(one[0], '\0');
}

/* The length must bound the copy: text after it is not part of the str. */
Test(pymem, str_uses_length)
{
	uint64_t s = str("abcdef");
	char buf[16];

	put64(s + 16, 3);
	cr_assert_eq(np_py_str(&mem, s, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "abc");
}

Test(pymem, str_not_ascii_or_not_compact)
{
	char buf[16] = "keep";

	cr_expect_eq(np_py_str(&mem, str_with("\xc3\xbc", KIND_1BYTE | STATE_COMPACT), buf,
			       sizeof(buf)), -EINVAL);
	cr_expect_eq(np_py_str(&mem, str_with("ab", KIND_2BYTE | STATE_COMPACT), buf,
			       sizeof(buf)), -EINVAL);
	/* legacy (non-compact) ASCII string: text is elsewhere */
	cr_expect_eq(np_py_str(&mem, str_with("ab", KIND_1BYTE | STATE_ASCII), buf,
			       sizeof(buf)), -EINVAL);
}

Test(pymem, str_failed_reads)
{
	char buf[16];
	uint64_t s = str("hello");

	cr_expect_eq(np_py_str(&mem, 0, buf, sizeof(buf)), -EFAULT);
	cr_expect_eq(np_py_str(&mem, 0x1000, buf, sizeof(buf)), -EFAULT);
	cr_expect_eq(np_py_str(&mem, HEAP_BASE + HEAP_SIZE - 20, buf, sizeof(buf)), -EFAULT);
	/* header readable, text not */
	fail_from = s + 48;
	fail_to = s + 49;
	cr_expect_eq(np_py_str(&mem, s, buf, sizeof(buf)), -EFAULT);
}

/* ---- dicts ---- */

struct seen {
	int n;
	char keys[8][32];
	uint64_t values[8];
	int stop_at;   /* return 42 on this visit (1-based), 0 = never */
};

static int record(const char *key, uint64_t value, void *arg)
{
	struct seen *s = arg;

	cr_assert_lt(s->n, 8);
	snprintf(s->keys[s->n], sizeof(s->keys[0]), "%s", key);
	s->values[s->n] = value;
	s->n++;
	return s->n == s->stop_at ? 42 : 0;
}

Test(pymem, dict_each_general_keys)
{
	struct ent e[] = { { str("alpha"), 0x100 }, { str("beta"), 0x200 }, { str("gamma"), 0x300 } };
	uint64_t d = dict_kind(KEYS_GENERAL, e, 3);
	struct seen s = { 0 };

	cr_assert_eq(np_py_dict_each(&mem, d, 100, record, &s), 0);
	cr_assert_eq(s.n, 3);
	cr_expect_str_eq(s.keys[0], "alpha");
	cr_expect_str_eq(s.keys[1], "beta");
	cr_expect_str_eq(s.keys[2], "gamma");
	cr_expect_eq(s.values[0], 0x100);
	cr_expect_eq(s.values[1], 0x200);
	cr_expect_eq(s.values[2], 0x300);
}

Test(pymem, dict_each_unicode_keys)
{
	struct ent e[] = { { str("x"), 0x10 }, { str("yy"), 0x20 } };
	uint64_t d = dict_kind(KEYS_UNICODE, e, 2);
	struct seen s = { 0 };

	cr_assert_eq(np_py_dict_each(&mem, d, 100, record, &s), 0);
	cr_assert_eq(s.n, 2);
	cr_expect_str_eq(s.keys[0], "x");
	cr_expect_str_eq(s.keys[1], "yy");
	cr_expect_eq(s.values[0], 0x10);
	cr_expect_eq(s.values[1], 0x20);
}

/* 256 slots take 2-byte indices: 512 bytes, dk_log2_index_bytes 9, while
 * dk_log2_size is 8.  The entries start after 512 bytes, not 256. */
Test(pymem, dict_entries_after_wide_indices)
{
	struct ent e[] = { { str("wide"), 0xabc } };
	uint64_t d = dict_obj(keys_obj(KEYS_UNICODE, 8, e, 1), 0, 1);
	uint64_t v = 0;

	cr_assert_eq(np_py_dict_get(&mem, d, "wide", &v), 0);
	cr_expect_eq(v, 0xabc);
}

Test(pymem, dict_each_skips_deleted_and_non_ascii)
{
	struct ent e[] = {
		{ str("a"), 0x1 },
		{ 0, 0 },
		{ str("gone"), 0 },   /* value NULL: deleted in place */
		{ str_with("\xc3\xa9t\xc3\xa9", KIND_1BYTE | STATE_COMPACT), 0x2 },
		{ str("b"), 0x3 },
	};
	uint64_t d = dict_kind(KEYS_GENERAL, e, 5);
	struct seen s = { 0 };

	cr_assert_eq(np_py_dict_each(&mem, d, 100, record, &s), 0);
	cr_assert_eq(s.n, 2);
	cr_expect_str_eq(s.keys[0], "a");
	cr_expect_str_eq(s.keys[1], "b");
	cr_expect_eq(s.values[1], 0x3);
}

Test(pymem, dict_each_stops_early_and_limits)
{
	struct ent e[] = { { str("a"), 1 }, { str("b"), 2 }, { str("c"), 3 } };
	uint64_t d = dict_kind(KEYS_GENERAL, e, 3);
	struct seen s = { .stop_at = 2 };

	cr_expect_eq(np_py_dict_each(&mem, d, 100, record, &s), 42);
	cr_expect_eq(s.n, 2);

	struct seen l = { 0 };
	cr_expect_eq(np_py_dict_each(&mem, d, 2, record, &l), 0);
	cr_expect_eq(l.n, 2);
	cr_expect_str_eq(l.keys[1], "b");

	struct seen z = { 0 };
	cr_expect_eq(np_py_dict_each(&mem, d, 0, record, &z), 0);
	cr_expect_eq(z.n, 0);
}

Test(pymem, dict_empty)
{
	uint64_t d = dict_kind(KEYS_GENERAL, NULL, 0);
	struct seen s = { 0 };
	uint64_t v = 99;

	cr_expect_eq(np_py_dict_each(&mem, d, 100, record, &s), 0);
	cr_expect_eq(s.n, 0);
	cr_expect_eq(np_py_dict_get(&mem, d, "x", &v), -ENOENT);
	cr_expect_eq(v, 0);
}

Test(pymem, dict_split_values)
{
	struct ent e[] = { { str("p"), 0x111 }, { str("q"), 0x222 } };
	uint64_t d = split_dict(e, 2, 0xbad);
	struct seen s = { 0 };
	uint64_t v = 0;

	cr_assert_eq(np_py_dict_each(&mem, d, 100, record, &s), 0);
	cr_assert_eq(s.n, 2);
	cr_expect_eq(s.values[0], 0x111, "value %#llx", (unsigned long long)s.values[0]);
	cr_expect_eq(s.values[1], 0x222);
	cr_assert_eq(np_py_dict_get(&mem, d, "q", &v), 0);
	cr_expect_eq(v, 0x222);
}

Test(pymem, dict_split_deleted_value)
{
	struct ent e[] = { { str("p"), 0 }, { str("q"), 0x222 } };
	uint64_t d = split_dict(e, 2, 0xbad);
	struct seen s = { 0 };

	cr_assert_eq(np_py_dict_each(&mem, d, 100, record, &s), 0);
	cr_assert_eq(s.n, 1);
	cr_expect_str_eq(s.keys[0], "q");
}

Test(pymem, dict_get)
{
	struct ent e[] = { { str("_parameters"), 0x50 }, { str("_modules"), 0x60 },
			   { str("_modules_x"), 0x70 } };
	uint64_t d = dict_kind(KEYS_UNICODE, e, 3);
	uint64_t v = 0;

	cr_assert_eq(np_py_dict_get(&mem, d, "_modules", &v), 0);
	cr_expect_eq(v, 0x60);
	cr_expect_eq(np_py_dict_get(&mem, d, "_module", &v), -ENOENT);
	cr_expect_eq(v, 0);
}

Test(pymem, dict_failed_reads)
{
	struct ent e[] = { { str("a"), 1 }, { str("b"), 2 } };
	uint64_t keys = keys_obj(KEYS_GENERAL, 3, e, 2);
	uint64_t d = dict_obj(keys, 0, 2);
	struct seen s = { 0 };
	uint64_t v;

	/* the dict itself unreadable */
	cr_expect_eq(np_py_dict_each(&mem, 0x10, 100, record, &s), -EFAULT);
	cr_expect_eq(np_py_dict_each(&mem, 0, 100, record, &s), -EFAULT);
	cr_expect_eq(np_py_dict_get(&mem, 0x10, "a", &v), -EFAULT);
	/* keys pointer NULL or wild */
	cr_expect_eq(np_py_dict_each(&mem, dict_obj(0, 0, 0), 100, record, &s), -EFAULT);
	cr_expect_eq(np_py_dict_each(&mem, dict_obj(0x42, 0, 0), 100, record, &s), -EFAULT);
	/* entries unreadable */
	fail_from = keys + 32 + 8;
	fail_to = fail_from + 1;
	cr_expect_eq(np_py_dict_each(&mem, d, 100, record, &s), -EFAULT);
	fail_from = fail_to = 0;
	/* split values unreadable */
	cr_expect_eq(np_py_dict_each(&mem, dict_obj(keys, 0x42, 2), 100, record, &s), -EFAULT);
	cr_expect_eq(s.n, 0);
}

/* A corrupt keys object must fail cleanly or stay bounded, never read
 * gigabytes: dk_nentries is capped (at 4096 entries), and an index size
 * that cannot be real is refused. */
Test(pymem, dict_corrupt_keys)
{
	struct ent e[] = { { str("a"), 1 } };
	uint64_t keys = keys_obj(KEYS_GENERAL, 3, e, 1);
	uint64_t d = dict_obj(keys, 0, 1);
	struct seen s = { 0 };

	/* 2^40 entries: the zeroed heap after the one real entry reads as
	 * deleted entries, so the walk ends having visited just "a" */
	put64(keys + 24, 1ULL << 40);
	cr_expect_eq(np_py_dict_each(&mem, d, SIZE_MAX, record, &s), 0);
	cr_expect_eq(s.n, 1);
	/* the same keys object at the end of readable memory: the capped
	 * read runs off it and fails as a whole */
	uint64_t end_keys = HEAP_BASE + HEAP_SIZE - (32 + 8 + 24);
	memcpy(heap + (end_keys - HEAP_BASE), heap + (keys - HEAP_BASE), 32 + 8 + 24);
	s.n = 0;
	cr_expect_eq(np_py_dict_each(&mem, dict_obj(end_keys, 0, 1), SIZE_MAX, record, &s),
		     -EFAULT);
	cr_expect_eq(s.n, 0);

	put64(keys + 24, 1);
	put8(keys + 9, 200);             /* dk_log2_index_bytes */
	cr_expect_eq(np_py_dict_each(&mem, d, SIZE_MAX, record, &s), -EINVAL);
	cr_expect_eq(s.n, 0);
}

/* ---- instance dicts and module paths ---- */

Test(pymem, instance_dict_managed)
{
	uint64_t d = dict_kind(KEYS_UNICODE, NULL, 0);
	uint64_t obj = object_with_dict(d);
	uint64_t got = 0;

	cr_assert_eq(np_py_instance_dict(&mem, obj, &got), 0);
	cr_expect_eq(got, d);
	got = 5;
	cr_expect_eq(np_py_instance_dict(&mem, object_with_dict(0), &got), -ENOENT);
	cr_expect_eq(got, 0);
	cr_expect_eq(np_py_instance_dict(&mem, 0x20, &got), -EFAULT);
}

Test(pymem, module_path_direct_and_nested)
{
	struct tree t = build_tree();
	const char *p;
	int err;

	p = path(t.b, t.c, 3, &err);
	cr_expect_eq(err, 0);
	cr_expect_str_eq(p, "norm2");

	p = path(t.encoder, t.b, 3, &err);
	cr_expect_eq(err, 0);
	cr_expect_str_eq(p, "layers.1");

	p = path(t.encoder, t.drop, 1, &err);
	cr_expect_eq(err, 0);
	cr_expect_str_eq(p, "drop");

	p = path(t.layers, t.a, 1, &err);
	cr_expect_eq(err, 0);
	cr_expect_str_eq(p, "0");

	p = path(t.root, t.c, 4, &err);
	cr_expect_eq(err, 0);
	cr_expect_str_eq(p, "encoder.layers.1.norm2");

	p = path(t.root, t.n1, 8, &err);
	cr_expect_eq(err, 0);
	cr_expect_str_eq(p, "encoder.layers.1.norm1");

	p = path(t.root, t.encoder, 1, &err);
	cr_expect_eq(err, 0);
	cr_expect_str_eq(p, "encoder");
}

Test(pymem, module_path_depth_limit)
{
	struct tree t = build_tree();
	const char *p;
	int err;

	p = path(t.encoder, t.b, 1, &err);
	cr_expect_eq(err, -ENOENT);
	cr_expect_str_eq(p, "");
	p = path(t.encoder, t.b, 2, &err);
	cr_expect_eq(err, 0);
	cr_expect_str_eq(p, "layers.1");

	p = path(t.root, t.c, 2, &err);
	cr_expect_eq(err, -ENOENT);
	cr_expect_str_eq(p, "");
	p = path(t.root, t.c, 3, &err);
	cr_expect_eq(err, -ENOENT);
	cr_expect_str_eq(p, "");
	p = path(t.root, t.c, 0, &err);
	cr_expect_eq(err, -ENOENT);
}

Test(pymem, module_path_not_found)
{
	struct tree t = build_tree();
	const char *p;
	int err;

	/* not a descendant: C's parent chain does not include A */
	p = path(t.a, t.c, 8, &err);
	cr_expect_eq(err, -ENOENT);
	cr_expect_str_eq(p, "");
	/* upwards is not a path */
	p = path(t.c, t.root, 8, &err);
	cr_expect_eq(err, -ENOENT);
	/* a module is not its own child */
	p = path(t.root, t.root, 8, &err);
	cr_expect_eq(err, -ENOENT);
	/* the decoy in the split dict's keys must not be used */
	p = path(t.encoder, t.b, 1, &err);
	cr_expect_eq(err, -ENOENT, "found B through the split dict's decoy: %s", p);
}

/* The deleted entries and the non-ASCII key that also point at B come
 * before "1": they must be skipped, not produce a name. */
Test(pymem, module_path_skips_bad_keys)
{
	struct tree t = build_tree();
	const char *p;
	int err;

	p = path(t.layers, t.b, 1, &err);
	cr_expect_eq(err, 0);
	cr_expect_str_eq(p, "1");
}

/* A direct child wins over the same module found deeper. */
Test(pymem, module_path_direct_child_first)
{
	uint64_t x = leaf_module();
	struct ent deep[] = { { str("x"), x } };
	uint64_t a = module_obj(dict_kind(KEYS_GENERAL, deep, 1));
	struct ent top[] = { { str("a"), a }, { str("alias"), x } };
	uint64_t root = module_obj(dict_kind(KEYS_GENERAL, top, 2));
	const char *p;
	int err;

	p = path(root, x, 4, &err);
	cr_expect_eq(err, 0);
	cr_expect_str_eq(p, "alias");
}

Test(pymem, module_path_small_buffer)
{
	struct tree t = build_tree();
	char buf[10];

	memset(buf, 'Z', sizeof(buf));
	int err = np_py_module_path(&mem, t.root, t.c, 4, buf, sizeof(buf));
	/* either a clean failure or a terminated prefix of the full path */
	cr_assert_eq(memchr(buf, 0, sizeof(buf)) != NULL, 1, "not terminated");
	if (err == 0)
		cr_expect_str_eq(buf, "encoder.l");
	else
		cr_expect_eq(err, -ENOENT);
	cr_expect_eq(np_py_module_path(&mem, t.root, t.c, 4, buf, 0), -EINVAL);
}

Test(pymem, module_path_failed_reads)
{
	struct tree t = build_tree();
	const char *p;
	int err;

	/* unreadable parent */
	p = path(0x10, t.c, 4, &err);
	cr_expect_eq(err, -ENOENT);
	cr_expect_str_eq(p, "");
	p = path(0, t.c, 4, &err);
	cr_expect_eq(err, -ENOENT);
	/* a module whose dict pointer is wild, in the middle of the tree */
	put64(t.layers - 24, 0x5000);
	p = path(t.root, t.c, 8, &err);
	cr_expect_eq(err, -ENOENT);
	cr_expect_str_eq(p, "");
	p = path(t.root, t.drop, 8, &err);
	cr_expect_eq(err, 0);
	cr_expect_str_eq(p, "encoder.drop");
	cr_expect_gt(failed_reads, 0);
}

/* Everything fails: no crash, only errors, whatever the starting point. */
Test(pymem, module_path_reads_fail_everywhere)
{
	struct tree t = build_tree();
	const char *p;
	int err;

	fail_from = HEAP_BASE;
	fail_to = HEAP_BASE + HEAP_SIZE;
	p = path(t.root, t.c, 8, &err);
	cr_expect_eq(err, -ENOENT);
	cr_expect_str_eq(p, "");
	char buf[16];
	uint64_t v;
	cr_expect_eq(np_py_str(&mem, t.root, buf, sizeof(buf)), -EFAULT);
	cr_expect_eq(np_py_dict_get(&mem, t.root, "x", &v), -EFAULT);
}

/* A cycle (a module registered inside itself) ends at max_depth. */
Test(pymem, module_path_cycle)
{
	uint64_t mods = alloc(48);   /* filled below, once the module exists */
	uint64_t self_ref = module_obj(mods);
	struct ent e[] = { { str("me"), self_ref } };
	uint64_t real = dict_kind(KEYS_GENERAL, e, 1);
	uint64_t other = leaf_module();
	const char *p;
	int err;

	memcpy(heap + (mods - HEAP_BASE), heap + (real - HEAP_BASE), 48);
	p = path(self_ref, other, 50, &err);
	cr_expect_eq(err, -ENOENT);
	p = path(self_ref, self_ref, 3, &err);
	cr_expect_eq(err, 0);
	cr_expect_str_eq(p, "me");
}

/* ---- other versions' layouts ---- */

/* 3.13: str text at +40, split-dict values after an 8-byte header. */
Test(pymem, v313_tree)
{
	mem.v = np_pyver_find(3, 13);
	cr_assert_not_null(mem.v);
	cr_assert_eq(mem.v->dict_values_header, 8);

	struct tree t = build_tree();
	const char *p;
	int err;
	char buf[16];

	cr_assert_eq(np_py_str(&mem, str("layers"), buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "layers");
	p = path(t.root, t.c, 4, &err);
	cr_expect_eq(err, 0);
	cr_expect_str_eq(p, "encoder.layers.1.norm2");
	p = path(t.encoder, t.drop, 1, &err);
	cr_expect_eq(err, 0);
	cr_expect_str_eq(p, "drop");
}

/* 3.12: a tagged pointer at obj - 24 means inline values, no dict. */
Test(pymem, v312_tagged_values)
{
	mem.v = np_pyver_find(3, 12);
	cr_assert_not_null(mem.v);

	uint64_t d = dict_kind(KEYS_UNICODE, NULL, 0);
	uint64_t obj = object_with_dict(d);
	uint64_t got = 7;

	cr_assert_eq(np_py_instance_dict(&mem, obj, &got), 0);
	cr_expect_eq(got, d);
	put64(obj - 24, alloc(64) | 1);
	got = 7;
	cr_expect_eq(np_py_instance_dict(&mem, obj, &got), -ENOENT);
	cr_expect_eq(got, 0);
}

/* 3.10: no managed dict; the type's tp_dictoffset (at +288) locates it. */
Test(pymem, v310_dictoffset)
{
	mem.v = np_pyver_find(3, 10);
	cr_assert_not_null(mem.v);

	uint64_t d = dict_kind(KEYS_GENERAL, NULL, 0);
	uint64_t type = alloc(400);
	uint64_t obj = alloc(64);
	uint64_t got = 7;

	put64(type + 288, 32);   /* tp_dictoffset */
	put64(obj + 8, type);    /* ob_type */
	put64(obj + 32, d);
	cr_assert_eq(np_py_instance_dict(&mem, obj, &got), 0);
	cr_expect_eq(got, d);
	put64(type + 288, 0);
	cr_expect_eq(np_py_instance_dict(&mem, obj, &got), -ENOENT);
}

/* ---- Python autograd.Function nodes ---- */

/* a type object: tp_name a C string, tp_base as given */
static uint64_t type_obj(const char *name, uint64_t base)
{
	uint64_t t = alloc(416), text = alloc(strlen(name) + 1);
	memcpy(heap + (text - HEAP_BASE), name, strlen(name) + 1);
	put64(t + mem.v->bpf.type_name, text);
	put64(t + mem.v->bpf.type_base, base);
	return t;
}

static uint64_t instance_of(uint64_t type)
{
	uint64_t o = alloc(64);
	put64(o + 0, 1);   /* ob_refcnt */
	put64(o + mem.v->bpf.obj_type, type);
	return o;
}

Test(pymem, type_name_is_tp_name)
{
	char buf[64];
	uint64_t t = type_obj("HandSqrtBackward", 0);
	cr_assert_eq(np_py_type_name(&mem, t, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "HandSqrtBackward");
	char small[5];
	cr_assert_eq(np_py_type_name(&mem, t, small, sizeof(small)), 0);
	cr_assert_str_eq(small, "Hand", "cut to the buffer, terminated");
	cr_assert_neq(np_py_type_name(&mem, 0x1000, buf, sizeof(buf)), 0, "unreadable type");
}

/* A PyNode as torch 2.13 lays it out: vtable, Node's fields (pointers to
 * other objects among them), the Python object at +112. */
Test(pymem, function_node_object_found_past_decoys)
{
	uint64_t module = type_obj("Module", 0);
	uint64_t cfn = type_obj("BackwardCFunction", module);
	uint64_t hand = type_obj("HandSqrtBackward", cfn);
	uint64_t other = type_obj("AddmmBackward0", type_obj("CppFunction", 0));
	uint64_t node = alloc(464);
	put64(node, 0x7f0000145d5f0ULL);                /* vtable: not readable here */
	put64(node + 8, HEAP_BASE + 8);                 /* into the heap, no object */
	put64(node + 16, 3);                            /* sequence_nr: small */
	put64(node + 40, instance_of(other));           /* a C++ node's wrapper */
	put64(node + 48, instance_of(module) | 4);      /* misaligned: not an object */
	put64(node + 56, instance_of(module));          /* a class not derived from it */
	uint64_t obj = instance_of(hand);
	put64(node + 112, obj);
	uint32_t off = 0;
	uint64_t cls = 0;
	cr_assert_eq(np_py_find_function_obj(&mem, node, 464, &off, &cls), 0);
	cr_assert_eq(off, 112);
	cr_assert_eq(cls, hand);
	cr_assert_eq(np_py_function_class(&mem, obj), hand);
	cr_assert_eq(np_py_function_class(&mem, node + 40), 0, "not an instance");
	/* past the span searched, or no such object at all */
	cr_assert_eq(np_py_find_function_obj(&mem, node, 112, &off, &cls), -ENOENT);
	put64(node + 112, instance_of(cfn));   /* BackwardCFunction itself: no Function's */
	cr_assert_eq(np_py_find_function_obj(&mem, node, 464, &off, &cls), -ENOENT);
	cr_assert_neq(np_py_find_function_obj(&mem, 0x1000, 464, &off, &cls), 0, "unreadable node");
}
