/* fake.h - what the fake CUDA driver (fake_cuda.c, built as libcuda.so.1)
 * offers beyond the driver API, to the fake CUPTI (fake_cupti.c) and the
 * fake job (fake_job.c).
 *
 * The fake exists so that the agent's CUDA side (cupti/) runs for real on
 * a machine with no GPU: the real agent binary, its real CUPTI callback,
 * its real check launches.  "Device" memory is host memory (unified
 * addresses: a device pointer is the host pointer); kernels run on the
 * host, on one worker thread per stream, in launch order, so launches are
 * asynchronous as on a GPU; the agent's check kernels run as the host
 * emulation of kernels/finite_check.cu (tests/check_emu.h).
 */
#ifndef NP_FAKE_CUDA_H
#define NP_FAKE_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include <cuda.h>
#include <cupti.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

/* ---- for the fake CUPTI: where the driver's callbacks go ---- */

/* Sets the one subscriber (callback NULL: none). */
FAKE_EXPORT void fake_cuda_set_subscriber(CUpti_CallbackFunc cb, void *userdata);
/* Turns the callback of one driver-API cbid on or off. */
FAKE_EXPORT void fake_cuda_enable_cbid(CUpti_CallbackId cbid, int on);

/* ---- for the fake job ---- */

/* A job kernel: runs on the stream's worker with the launch's arguments
 * packed as the parameter layout says (args + offset[i] is parameter i). */
typedef void (*fake_kernel_fn)(const void *args, unsigned grid, unsigned block);

/* Registers a kernel under its mangled name (what CUPTI reports as
 * symbolName) with its parameter layout, offset:size per parameter (as
 * cuFuncGetParamInfo gives it).  Returns its CUfunction; *as_kernel, if
 * not NULL, gets a CUkernel handle of the same kernel (a launch through
 * it is a launch of a CUkernel cast to a CUfunction, which only
 * cuKernelGetParamInfo knows). */
FAKE_EXPORT CUfunction fake_cuda_register(const char *mangled, int nparams,
					  const uint32_t *offset, const uint32_t *size,
					  fake_kernel_fn fn, CUkernel *as_kernel);

/* Whether a subscriber is set with at least one callback on. */
FAKE_EXPORT int fake_cuda_subscribed(void);
/* cuptiSubscribe calls refused because CUPTI was taken (FAKE_CUPTI_TAKEN). */
FAKE_EXPORT void fake_cuda_note_refused(void);
FAKE_EXPORT int fake_cuda_refused(void);

/* What the fake saw, for the job's own checks. */
struct fake_cuda_stats {
	uint64_t launches;        /* every cuLaunchKernel */
	uint64_t check_launches;  /* of nanprof's np_check_* kernels */
	uint64_t checks;          /* buffers they checked (a list launch checks several) */
	uint64_t check_blocks;    /* blocks those ran */
	uint64_t callbacks;       /* CUPTI callbacks delivered */
	uint64_t allocs;          /* cuMemAlloc_v2 */
	uint64_t libraries;       /* cuLibraryLoadData that found the check kernels */
	uint64_t faults;          /* what would kill the context on a GPU */
};
FAKE_EXPORT void fake_cuda_stats(struct fake_cuda_stats *out);

#endif
