/* test_blas_workspace.c - cupti/blas_workspace.c: each cuBLAS handle's
 * workspace, known only once seen set, so that a deferred check is never
 * left waiting on memory a cuBLAS call writes. */
#include <criterion/criterion.h>
#include "../../cupti/blas_workspace.h"

static int handles[NP_BLAS_WS_HANDLES + 2];   /* only their addresses matter */

TestSuite(blas_workspace, .init = np_blas_ws_reset);

Test(blas_workspace, a_handle_never_set_is_not_known)
{
	uint64_t lo = 7, hi = 7;
	cr_expect_eq(np_blas_ws_get(&handles[0], &lo, &hi), -1,
		     "its workspace may have been set before the agent came");
}

Test(blas_workspace, the_last_workspace_set_is_the_handles)
{
	uint64_t lo = 0, hi = 0;
	cr_assert_eq(np_blas_ws_set(&handles[0], 0x1000, 0x400), 0);
	cr_assert_eq(np_blas_ws_set(&handles[1], 0x9000, 0x100), 0);
	cr_assert_eq(np_blas_ws_get(&handles[0], &lo, &hi), 1);
	cr_expect_eq(lo, 0x1000);
	cr_expect_eq(hi, 0x1400);
	/* torch sets it again at each take of the handle, maybe elsewhere */
	cr_assert_eq(np_blas_ws_set(&handles[0], 0x5000, 0x800), 0);
	cr_assert_eq(np_blas_ws_get(&handles[0], &lo, &hi), 1);
	cr_expect_eq(lo, 0x5000);
	cr_expect_eq(hi, 0x5800);
	cr_assert_eq(np_blas_ws_get(&handles[1], &lo, &hi), 1, "the other handle untouched");
	cr_expect_eq(lo, 0x9000);
}

Test(blas_workspace, no_workspace_is_known_and_writes_nothing_of_the_jobs)
{
	uint64_t lo = 1, hi = 1;
	cr_assert_eq(np_blas_ws_set(&handles[2], 0, 0x400), 0);
	cr_expect_eq(np_blas_ws_get(&handles[2], &lo, &hi), 0, "NULL: cuBLAS's own");
	cr_assert_eq(np_blas_ws_set(&handles[2], 0x1000, 0), 0);
	cr_expect_eq(np_blas_ws_get(&handles[2], &lo, &hi), 0, "size 0: none");
	cr_assert_eq(np_blas_ws_set(&handles[2], UINT64_MAX - 4, 64), 0);
	cr_expect_eq(np_blas_ws_get(&handles[2], &lo, &hi), 0, "a range that wraps is none");
}

Test(blas_workspace, handles_past_the_table_are_counted_and_never_known)
{
	uint64_t lo, hi;
	for (int i = 0; i < NP_BLAS_WS_HANDLES; i++)
		cr_assert_eq(np_blas_ws_set(&handles[i], 0x1000 * (uint64_t)(i + 1), 0x10), 0);
	cr_expect_eq(np_blas_ws_set(&handles[NP_BLAS_WS_HANDLES], 0x100000, 0x10), -1);
	cr_expect_eq(np_blas_ws_set(&handles[NP_BLAS_WS_HANDLES + 1], 0x200000, 0x10), -1);
	cr_expect_eq(np_blas_ws_overflow(), 2);
	cr_expect_eq(np_blas_ws_get(&handles[NP_BLAS_WS_HANDLES], &lo, &hi), -1);
	/* a handle already kept can still be set again */
	cr_expect_eq(np_blas_ws_set(&handles[NP_BLAS_WS_HANDLES - 1], 0x300000, 0x20), 0);
	cr_assert_eq(np_blas_ws_get(&handles[NP_BLAS_WS_HANDLES - 1], &lo, &hi), 1);
	cr_expect_eq(lo, 0x300000);
	cr_expect_eq(np_blas_ws_overflow(), 2);
}
