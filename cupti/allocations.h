/* allocations.h - the device memory the job holds, as its driver calls
 * say (cuMemAlloc, cuMemAllocAsync, cuMemMap and their frees), in an
 * interval map (intervals.h): how far a check may read from an address.
 * Memory allocated before the subscription is asked of the driver once
 * and then kept.  Called on the job's threads; the map's own mutex. */
#ifndef NP_ALLOCATIONS_H
#define NP_ALLOCATIONS_H

#include <stdint.h>
#include "cuda_api.h"
#include "intervals.h"

/* 0, or -1 out of memory. */
int np_alloc_init(void);

/* The innermost known interval holding ptr: a tensor, else the device
 * allocation.  0, or -1 for memory the driver does not know (host
 * memory, a freed block). */
int np_alloc_of(uint64_t ptr, struct np_iv *iv);

/* A memory call of the driver domain, at its entry or exit: the map
 * updated.  1 when it made new device memory (at its exit): a word that
 * was no device address may be one now. */
int np_alloc_on_call(CUpti_CallbackId cbid, const CUpti_CallbackData *cb);

#endif
