/* driver_args.h - what a driver call's arguments say, as CUPTI hands
 * them to the callback (the *_params structs of its driver domain): a
 * kernel launch of any of the launch APIs, its parameters packed in
 * `extra`, a kernel's parameter layout (asked of the driver once per
 * function), a device-to-device copy (driver_writes.h: the writes the
 * agent does not check).  No state. */
#ifndef NP_DRIVER_ARGS_H
#define NP_DRIVER_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include "cuda_api.h"
#include "kdecode.h"

/* One launch, whatever API made it. */
struct np_launch {
	CUfunction f;
	CUstream stream;
	void **params;
	void **extra;
	uint32_t grid[3], block[3]; /* gridDim, blockDim */
};

/* cuLaunchKernel, cuLaunchCooperativeKernel, cuLaunchKernelEx (and their
 * per-thread-stream forms) into *l; -1 for any other call. */
int np_launch_args(CUpti_CallbackId cbid, const void *p, struct np_launch *l);

/* Arguments packed in `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER) as the
 * kernelParams array the decoders read, in out[0..layout->n); NULL when
 * there is no buffer or a parameter would lie past its size. */
void **np_params_from_extra(void **extra, const struct np_kparams *layout, void **out);

/* A function's parameter layout, from cuFuncGetParamInfo (or
 * cuKernelGetParamInfo for a CUkernel): kfunc.h's layout callback. */
int np_driver_layout(uint64_t key, struct np_kparams *out, void *arg);

/* cuMemcpyDtoD[Async] and cuMemcpy[Async]: destination, source, bytes
 * and stream (NULL for the synchronous ones); -1 for any other call. */
int np_copy_args(CUpti_CallbackId cbid, const void *p, uint64_t *dst, uint64_t *src,
		 size_t *bytes, CUstream *stream);

#endif
