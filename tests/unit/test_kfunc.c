/* test_kfunc.c - cupti/kfunc.c: the per-function cache of the GPU agent
 * (names cut to their short form, classification once per function, the
 * layout asked once, our own check kernels recognised, a bounded table,
 * and lock-free lookups racing first sights on several threads). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "../../cupti/kfunc.h"

static int layout_calls;

/* (int, functor, std::array<char*, 3>): the elementwise layout */
static int fake_layout(uint64_t key, struct np_kparams *out, void *arg)
{
	(void)arg;
	__atomic_add_fetch(&layout_calls, 1, __ATOMIC_RELAXED);
	memset(out, 0, sizeof(*out));
	out->n = 3;
	out->p[0].offset = 0, out->p[0].size = 4;
	out->p[1].offset = 4, out->p[1].size = 1;
	out->p[2].offset = 8, out->p[2].size = 24;
	return key == 0xdead ? -1 : 0;
}

static void setup(void)
{
	cr_assert_eq(np_kfunc_init(), 0);
	np_kfunc_demangle = NULL;   /* names below are given demangled */
}

TestSuite(kfunc, .init = setup);

Test(kfunc, short_name_drops_the_argument_list_only)
{
	char out[NP_KFUNC_NAME];
	np_kfunc_short_name("void at::native::vectorized_elementwise_kernel<4, at::native::"
			    "CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, at::native::"
			    "CUDAFunctor_add<float>, std::array<char*, 3ul>)", out, sizeof(out));
	cr_assert_str_eq(out, "void at::native::vectorized_elementwise_kernel<4, at::native::"
			      "CUDAFunctor_add<float>, std::array<char*, 3ul> >");
	/* parentheses inside template arguments and anonymous namespaces stay */
	np_kfunc_short_name("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float,"
			    " float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>"
			    "(float*, float const*, int)", out, sizeof(out));
	cr_assert_str_eq(out, "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float,"
			      " float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>");
	np_kfunc_short_name("nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NNT", out, sizeof(out));
	cr_assert_str_eq(out, "nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NNT");
	char tiny[8];
	np_kfunc_short_name("abcdefghijkl(int)", tiny, sizeof(tiny));
	cr_assert_str_eq(tiny, "abcdefg", "cut to the buffer");
}

Test(kfunc, first_sight_classifies_once_and_then_hits)
{
	const char *name = "void at::native::vectorized_elementwise_kernel<4, at::native::"
			   "CUDAFunctor_add<c10::Half>, std::array<char*, 3ul> >(int, at::native::"
			   "CUDAFunctor_add<c10::Half>, std::array<char*, 3ul>)";
	int before = layout_calls;
	struct np_kfunc *f = np_kfunc_get(0x1000, name, fake_layout, NULL);
	cr_assert_not_null(f);
	cr_assert_eq(f->info.family, NP_KF_VEC_ELEMENTWISE);
	cr_assert_eq(f->info.dtype, NP_DT_F16);
	cr_assert_eq(f->params.n, 3);
	cr_assert(!f->ours);
	cr_assert_eq(np_kfunc_by_id(f->id), f);
	struct np_kfunc *again = np_kfunc_get(0x1000, "ignored on a hit", fake_layout, NULL);
	cr_assert_eq(again, f);
	cr_assert_eq(layout_calls, before + 1, "the layout is asked once per function");
	struct np_kfunc *other = np_kfunc_get(0x2000, name, fake_layout, NULL);
	cr_assert_neq(other->id, f->id);
}

Test(kfunc, our_check_kernels_are_recognised)
{
	struct np_kfunc *f = np_kfunc_get(0x3000, "np_check_f32", fake_layout, NULL);
	cr_assert(f->ours);
	f = np_kfunc_get(0x3001, "np_checker_of_something_else(int)", fake_layout, NULL);
	cr_assert(!f->ours);
}

Test(kfunc, failed_layout_is_empty_not_garbage)
{
	struct np_kfunc *f = np_kfunc_get(0xdead, "foo(float*)", fake_layout, NULL);
	cr_assert_not_null(f);
	cr_assert_eq(f->params.n, 0);
	cr_assert_eq(np_kfunc_by_id(0), NULL);
	cr_assert_eq(np_kfunc_by_id(NP_KFUNC_MAX + 1), NULL);
}

#define THREADS 4
#define KEYS 600

static void *first_sights(void *arg)
{
	uintptr_t seed = (uintptr_t)arg;
	for (int i = 0; i < KEYS; i++) {
		uint64_t key = 0x100000 + (uint64_t)((i * 7 + seed * 13) % KEYS) * 64;
		struct np_kfunc *f = np_kfunc_get(key, "k(int)", fake_layout, NULL);
		if (!f || f->key != key)
			return (void *)1;
	}
	return NULL;
}

Test(kfunc, racing_first_sights_make_one_entry_per_function)
{
	pthread_t t[THREADS];
	for (uintptr_t i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, first_sights, (void *)i);
	for (int i = 0; i < THREADS; i++) {
		void *r;
		pthread_join(t[i], &r);
		cr_assert_null(r, "a lookup returned no entry or the wrong one");
	}
	/* every key has exactly one entry, and ids are distinct */
	static uint8_t seen[NP_KFUNC_MAX + 1];
	for (int i = 0; i < KEYS; i++) {
		struct np_kfunc *f = np_kfunc_get(0x100000 + (uint64_t)i * 64, "k(int)", fake_layout,
						  NULL);
		cr_assert_not_null(f);
		cr_assert_eq(seen[f->id], 0, "id %u given twice", f->id);
		seen[f->id] = 1;
	}
}

Test(kfunc, table_is_bounded)
{
	int got = 0;
	for (uint64_t k = 1; k <= NP_KFUNC_MAX + 10; k++)
		got += np_kfunc_get(0x9000000 + k * 16, "k(int)", fake_layout, NULL) != NULL;
	cr_assert_eq(got, NP_KFUNC_MAX, "past the bound: NULL, not growth");
}

Test(kfunc, the_most_undecoded_kernels_first)
{
	struct np_kfunc *f[6], *top[8];
	static const uint64_t undecoded[6] = { 0, 5, 9, 5, 1, 7 };
	cr_expect_eq(np_kfunc_top_undecoded(top, 4), 0, "no function yet");
	for (int i = 0; i < 6; i++) {
		char name[32];
		snprintf(name, sizeof(name), "nvjet_kernel_%d", i);
		f[i] = np_kfunc_get(0x1000 + (uint64_t)i, name, fake_layout, NULL);
		cr_assert_not_null(f[i]);
		f[i]->undecoded = undecoded[i];
	}
	cr_assert_eq(np_kfunc_top_undecoded(top, 4), 4, "at most max");
	cr_expect_eq(top[0], f[2]);
	cr_expect_eq(top[1], f[5]);
	cr_expect_eq(top[2], f[1], "ties: the first seen first");
	cr_expect_eq(top[3], f[3]);
	cr_assert_eq(np_kfunc_top_undecoded(top, 8), 5, "only those with undecoded launches");
	cr_expect_eq(top[4], f[4]);
	cr_expect_eq(np_kfunc_top_undecoded(top, 0), 0);
}
