/* check_abi.h - what the host (cupti/checker.c) and the finite-check
 * kernels (kernels/finite_check.cu) agree on: the kernels' names and
 * parameters, the result ring in host-mapped pinned memory, and the
 * per-check scratch in device memory.
 *
 * Plain C, shared by nvcc and gcc; every size is fixed so that the host
 * compiled by gcc and the kernels compiled by nvcc see the same layout.
 *
 * Flow of one check: the host takes a tag (a launch-order number) and a
 * scratch slot, and launches np_check_<dtype> on the checked kernel's own
 * stream.  Every block folds its part of the buffer into the slot with
 * device atomics; the last block to finish (a done counter in the slot)
 * reads the totals, resets the slot for its next user, and, when anything
 * is non-finite or the host asked for statistics, pushes one np_gpu_rec
 * into the ring.  A host thread drains the ring; nothing ever
 * synchronises a stream.
 */
#ifndef NP_CHECK_ABI_H
#define NP_CHECK_ABI_H

#include <stdint.h>

/* Kernel entry points, extern "C", one per enum np_dtype (finite.h):
 *   np_check_f32 np_check_f64 np_check_f16 np_check_bf16
 *   np_check_f8e4m3 np_check_f8e5m2
 * each with the parameters of struct np_check_args, passed as ONE
 * by-value struct parameter (so the host passes one pointer in
 * kernelParams). */
#define NP_CHECK_KERNEL_PREFIX "np_check_"
#define NP_CHECK_THREADS 256          /* threads per block */
#define NP_CHECK_MAX_BLOCKS 1024      /* the host never launches more */

/* And np_check_list_<dtype> (same suffixes): the checks of up to
 * NP_CHECK_LIST buffers in one launch, for a kernel with many outputs (an
 * optimizer's tensor lists, a layer norm's y, mean and rstd), whose
 * one-launch-per-output would cost a launch each.  One by-value struct
 * np_check_list parameter; <<<dim3(nblocks, n), threads>>>: blockIdx.y
 * picks the entry, and gridDim.x blocks check it exactly as a launch of
 * np_check_<dtype> with those args would. */
#define NP_CHECK_LIST_KERNEL_PREFIX "np_check_list_"
#define NP_CHECK_LIST 48              /* 3,840 bytes: under the 4 KiB parameter limit */

/* Per-check accumulator in device memory; all zero when free.  The last
 * block leaves it zero again. */
struct np_check_slot {
	unsigned long long nan, posinf, neginf;
	unsigned long long max_mag;   /* largest finite magnitude, raw bits */
	unsigned long long first_bad; /* ~(smallest bad index), 0: none: the
				       * smallest index wins an atomicMax
				       * (check_accum.h) */
	unsigned int done;            /* blocks finished */
	unsigned int pad;
	unsigned long long pad2[2];   /* 64 bytes */
};

/* One result, written by the device into host-mapped memory. */
struct np_gpu_rec {
	unsigned long long tag;       /* the host's number for this check */
	unsigned long long numel;
	unsigned long long nan, posinf, neginf;
	unsigned long long max_mag;   /* raw bits of the largest finite |x| */
	long long first_bad;          /* -1: none */
	unsigned int dtype;           /* enum np_dtype */
	unsigned int seq;             /* written last: slot index + 1 (mod 2^32) */
};                                    /* 64 bytes */

/* The ring's shared words.  `head` and `dropped` live in device memory
 * (device atomics on host memory are not portable over PCIe); `tail` and
 * the slots live in host-mapped pinned memory.  The device reads `tail`
 * (volatile) to see how far the host has drained; a stale tail only makes
 * it drop more, never overwrite. */
struct np_gpu_ring {
	struct np_gpu_rec *slots;     /* device address of the mapped slots */
	unsigned int *head;           /* device memory: next index to take */
	unsigned int *dropped;        /* device memory: records not written */
	const volatile unsigned int *tail; /* mapped: next index the host reads */
	unsigned int cap;             /* power of two */
	unsigned int pad;
};

struct np_check_args {
	const void *buf;              /* first element */
	unsigned long long numel;
	unsigned long long tag;
	struct np_check_slot *slot;   /* device memory, zeroed */
	struct np_gpu_ring ring;
	unsigned int report_all;      /* 1: push a record even when all finite
				       * (statistics are due) */
	unsigned int pad;
};

struct np_check_list {
	struct np_check_args e[NP_CHECK_LIST];   /* the first gridDim.y are used */
};

#endif
