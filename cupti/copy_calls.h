/* copy_calls.h - what the agent does at a copy or memset the job makes
 * (CUPTI's driver domain, at API exit, on the job's thread).
 *
 * A device-to-device copy moves a non-finite value without a kernel: it
 * is checked after the copy when its source's last write was checked
 * (writers.h), so that its destination's first reader is not taken for
 * the birth.  Every other write into device memory -- a copy from the
 * host, a memset, a 2D, 3D or batched copy, a device copy not checked --
 * is told to the origin tracker (write_queue.h, dirty.h) in its place
 * among the launches, and makes an undecoded kernel's note of its
 * destination stale (generic.h).  Writes captured into a CUDA graph run
 * at its replays, unseen, and are not told. */
#ifndef NP_COPY_CALLS_H
#define NP_COPY_CALLS_H

#include "cuda_api.h"

/* A device-to-device copy of one range (driver_args.h's np_copy_args). */
void np_copy_call(CUpti_CallbackId cbid, const CUpti_CallbackData *cb);

/* Any call of driver_writes.h's np_write_cbids. */
void np_write_call(CUpti_CallbackId cbid, const CUpti_CallbackData *cb);

#endif
