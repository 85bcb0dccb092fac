/* defer_set.h - checks waiting to be launched together (NANPROF_GPU_DEFER,
 * defer.h): the lists they wait in and the memory they will read.
 *
 * Checking every launch costs a check launch per output: host time in
 * the driver and a kernel's scheduling on the GPU, for what is often a
 * few microseconds of reading.  Deferred, the checks of several
 * consecutive launches go out as one np_check_list_<dtype> launch.  A
 * deferred check reads its range later than it would have, so it may
 * wait only while nothing writes that range: defer.c launches every list
 * before a launch that writes into any range here (np_defer_overlaps),
 * and before anything else that may write or free memory, or order
 * another stream after this one.
 *
 * A list holds checks of one context, stream and dtype.  Each of its
 * entries is checked by as many blocks as its largest needs, so entries
 * are grouped by a class of block counts (np_defer_class: at most 4x
 * apart), not to spend a large check's grid on a small one.
 *
 * Plain data, no CUDA and no locking (defer.c locks): unit-tested on the
 * CPU (tests/unit/test_defer_set.c). */
#ifndef NP_DEFER_SET_H
#define NP_DEFER_SET_H

#include <stdint.h>
#include "../kernels/check_abi.h"

#define NP_DEFER_LISTS 8            /* open lists at once */
#define NP_DEFER_CLASSES 6          /* block classes: <=4, <=16, <=64, <=256, <=1024, more */

struct np_defer_list {
	const void *ctx;            /* the context's np_gpu_ctx (opaque here) */
	uint64_t stream;            /* CUstream */
	uint8_t dtype, cls;
	unsigned n;                 /* entries used */
	unsigned blocks;            /* the largest entry's */
	uint64_t bytes;             /* what the entries read, for the counters */
	uint16_t blocks_of[NP_CHECK_LIST];   /* each entry's own (a lone launch) */
	struct np_check_list list;
};

struct np_defer_set {
	struct np_defer_list l[NP_DEFER_LISTS];
	unsigned n;                 /* lists open: l[0..n) */
	unsigned entries;           /* over all lists */
	/* what every entry reads: [lo[i], hi[i]) in entry order, over all
	 * lists; box_lo, box_hi bound them all (most writes miss the box) */
	uint64_t lo[NP_DEFER_LISTS * NP_CHECK_LIST], hi[NP_DEFER_LISTS * NP_CHECK_LIST];
	uint64_t box_lo, box_hi;
};

/* Which class a check of `blocks` blocks is grouped in. */
unsigned np_defer_class(unsigned blocks);

/* Empty (and at first use: a zeroed set is empty too). */
void np_defer_clear(struct np_defer_set *s);

/* The open list a check (ctx, stream, dtype, blocks) joins: one of the
 * same context, stream, dtype and class with room, or a new one.  NULL
 * when NP_DEFER_LISTS are open and none fits: launch them all first. */
struct np_defer_list *np_defer_slot(struct np_defer_set *s, const void *ctx, uint64_t stream,
				    uint8_t dtype, unsigned blocks);

/* a (checking `blocks` blocks' worth, reading [lo, hi)) into l, which
 * np_defer_slot gave for it. */
void np_defer_put(struct np_defer_set *s, struct np_defer_list *l, const struct np_check_args *a,
		  unsigned blocks, uint64_t lo, uint64_t hi);

/* Whether [lo, hi) meets what any waiting check reads. */
int np_defer_overlaps(const struct np_defer_set *s, uint64_t lo, uint64_t hi);

#endif
