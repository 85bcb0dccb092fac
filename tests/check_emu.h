/* check_emu.h - one block of a finite-check launch (kernels/finite_check.cu)
 * run on the CPU, thread by thread, with the same check_accum.h and
 * gpu_ring.h code the GPU runs.  Only the warp shuffles are emulated.
 *
 * Shared by the unit test of the check kernels (tests/unit/
 * test_check_kernels.c) and the fake CUDA driver (tests/fakecuda/), which
 * runs the agent's check launches with it.
 */
#ifndef NP_CHECK_EMU_H
#define NP_CHECK_EMU_H

#include <stdint.h>
#include "../kernels/finite.h"
#include "../kernels/check_abi.h"
#include "../kernels/check_accum.h"
#include "../kernels/gpu_ring.h"

/* __shfl_down_sync: lane l gets lane l + off's value, its own past 31. */
static inline void np_emu_warp_reduce(struct np_acc v[32])
{
	for (int off = 16; off; off >>= 1) {
		struct np_acc o[32];
		for (int l = 0; l < 32; l++)
			o[l] = v[l + off < 32 ? l + off : l];
		for (int l = 0; l < 32; l++)
			np_acc_merge(&v[l], &o[l]);
	}
}

/* Block blk of a <<<nblocks, nthreads>>> launch, as np_check() in
 * finite_check.cu runs it; returns np_check_publish()'s answer.
 * nthreads: a multiple of 32, at most NP_CHECK_THREADS. */
static inline int np_emu_block(const struct np_check_args *args, enum np_dtype t, unsigned blk,
			       unsigned nblocks, unsigned nthreads)
{
	struct np_acc th[NP_CHECK_THREADS], warps[NP_CHECK_THREADS / 32], w0[32];
	struct np_split s = np_split_of((uintptr_t)args->buf, args->numel, np_dtype_size(t));
	unsigned nwarps = nthreads / 32;

	for (unsigned tid = 0; tid < nthreads; tid++) {
		np_acc_init(&th[tid]);
		np_scan_thread(&th[tid], t, args->buf, &s, np_thread_first(blk, nthreads, tid),
			       np_grid_stride(nblocks, nthreads));
	}
	for (unsigned w = 0; w < nwarps; w++) {
		np_emu_warp_reduce(th + 32 * w);
		warps[w] = th[32 * w];
	}
	for (unsigned l = 0; l < 32; l++) {
		if (l < nwarps)
			w0[l] = warps[l];
		else
			np_acc_init(&w0[l]);
	}
	np_emu_warp_reduce(w0);
	return np_check_publish(args, t, &w0[0], nblocks);
}

#endif
