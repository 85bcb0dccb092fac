/* blas_workspace.h - the workspace each cuBLAS handle was given
 * (cublasSetWorkspace_v2), so that a cuBLAS call's writes are known
 * while checks are deferred (defer.h, blas.h).
 *
 * A cuBLAS call writes its D and its workspace (a split-K GEMM's partial
 * sums).  torch gives each handle and stream a workspace from its caching
 * allocator, and sets it again each time it takes the handle: memory a
 * tensor may have held a moment before, whose check may still wait.  A
 * handle given no workspace uses cuBLAS's own, from cudaMalloc, which no
 * live tensor's memory can be.  But the agent cannot tell such a handle
 * from one whose workspace was set before it came, so only a handle seen
 * set here counts as known.
 *
 * A handle destroyed and its address reused keeps its old entry until it
 * is set again: at worst an extra range tested, never one missed (the
 * new handle's own workspace is cuBLAS's).
 *
 * Bounded: NP_BLAS_WS_HANDLES handles (torch has one per thread and
 * device); a handle past them is never known, and counted.  Pure logic
 * under a mutex: unit-tested (tests/unit/test_blas_workspace.c).
 */
#ifndef NP_BLAS_WORKSPACE_H
#define NP_BLAS_WORKSPACE_H

#include <stdint.h>

#define NP_BLAS_WS_HANDLES 64

/* handle's workspace is [ptr, ptr + size) from now on (NULL or 0: none of
 * the job's memory).  0, or -1 when the table is full (not kept). */
int np_blas_ws_set(const void *handle, uint64_t ptr, uint64_t size);

/* 1 with *lo < *hi: the handle's workspace; 0: it was given none; -1: not
 * known (never seen set, or the table was full). */
int np_blas_ws_get(const void *handle, uint64_t *lo, uint64_t *hi);

/* Handles not kept for room. */
uint64_t np_blas_ws_overflow(void);

/* Everything forgotten (tests). */
void np_blas_ws_reset(void);

#endif
