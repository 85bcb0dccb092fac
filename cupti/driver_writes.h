/* driver_writes.h - the device memory a driver call writes without a
 * kernel and without a check of what it wrote: copies from the host,
 * memsets, 2D and 3D copies (any direction), batched copies.  As CUPTI
 * hands their arguments to the callback (the *_params structs of its
 * driver domain).  No state.
 *
 * Why the agent needs them, though it checks none of them: what such a
 * call writes replaces what a kernel wrote there.  A check of that
 * kernel's output still waiting (defer.h) would read the new bytes and
 * blame the kernel; an undecoded kernel's note (generic.h) would have
 * the new bytes checked as its output at their first reader.  Both
 * were seen on a GPU (docs/gpu-results.md, run-input).
 *
 * Device-to-device copies of one range (cuMemcpyDtoD, cuMemcpy, peer
 * copies) are driver_args.h's np_copy_args: those the agent checks. */
#ifndef NP_DRIVER_WRITES_H
#define NP_DRIVER_WRITES_H

#include <stddef.h>
#include <stdint.h>
#include "cuda_api.h"

#define NP_WRITES_MAX 16   /* ranges told per call (a batched copy's first 16) */

struct np_writes {
	int n;                 /* device ranges [lo[i], hi[i]) it writes */
	/* it writes host memory too: the host may act on what it reads
	 * (a loss copied back), as after any copy to the host */
	int to_host;
	/* what it writes is not all told: a batch of more than
	 * NP_WRITES_MAX copies, a 3D batch's copy from an array (its
	 * element size not read), an extent that overflows */
	int untold;
	uint64_t lo[NP_WRITES_MAX], hi[NP_WRITES_MAX];
	/* where range i was copied from, when that may be device memory
	 * (its first byte); 0 for a memset, a copy from the host or an array */
	uint64_t src[NP_WRITES_MAX];
	/* range i's source is [src[i], src[i] + hi[i] - lo[i]), laid out
	 * as it byte for byte (a 1D copy; a pitched one whose rows and
	 * slices lie alike at both ends); else only src[i] is known */
	uint8_t whole[NP_WRITES_MAX];
	CUstream stream;       /* the call's (NULL: the synchronous forms') */
};

/* The calls np_driver_writes reads, for the subscription. */
extern const CUpti_CallbackId np_write_cbids[];
extern const size_t np_write_ncbids;

/* What call cbid (its params as CUPTI gives them) writes, into *w; -1
 * for a call not in np_write_cbids.  A CUDA array's memory (cuMemcpy2D
 * to an array) is no tensor's and is not told. */
int np_driver_writes(CUpti_CallbackId cbid, const void *params, struct np_writes *w);

#endif
