/* inflight.h - what the agent remembers about each check it launched,
 * until the check's result comes back through the ring: the launch's
 * thread, time, kernel, stream, output range and input words.
 *
 * Indexed by tag.  Ordinary checks live in a ring of NP_INFLIGHT_SLOTS
 * entries (tag modulo the size): a result that comes back after
 * NP_INFLIGHT_SLOTS newer launches finds its entry reused and is counted
 * as lost, never misattributed.  Checks launched into a stream that is
 * capturing a CUDA graph run again at every replay with the same tag, so
 * they get an entry of their own that is never reused, from a table of
 * NP_INFLIGHT_CAPTURED; their tags carry NP_TAG_CAPTURED.
 *
 * One writer per entry (the launching thread) and one reader (the
 * drainer); the tag is written last with release and checked again after
 * the copy (a seqlock), so a reader never keeps a half-written entry.
 */
#ifndef NP_INFLIGHT_H
#define NP_INFLIGHT_H

#include <stdint.h>
#include "dirty.h"

#define NP_INFLIGHT_SLOTS 32768
#define NP_INFLIGHT_CAPTURED 4096
#define NP_TAG_CAPTURED (1ULL << 63)

struct np_inflight {
	uint64_t tag;            /* 0: empty */
	uint64_t launch_ns;      /* CLOCK_MONOTONIC */
	uint32_t tid;
	uint32_t func;           /* kfunc id */
	uint8_t dtype;
	uint8_t pairs;           /* a complex output checked as its real view (np_kbuf) */
	uint8_t captured;
	uint8_t mode;            /* the launching thread's grad mode (grad_mode.h) */
	uint32_t span;           /* module-call span at the launch (gpu.h: np_gpu_module_done) */
	uint16_t wide;           /* its input words past dl.in: wide_inputs.h's slot
				  * plus one, or 0 (none; dl.more_in stays NULL) */
	uint8_t wide_missing;    /* it had more, not kept (no captured entry left) */
	uint8_t device;          /* the CUDA device it ran on (its context's ordinal) */
	struct np_dirty_launch dl;
};

/* Allocates the tables (about 11 MiB).  0 or -ENOMEM. */
int np_inflight_init(void);

/* A new tag: ordinary (captured 0) or for a graph being captured.
 * Returns 0 when the captured table is full (the launch then goes
 * unchecked, counted by the caller). */
uint64_t np_inflight_tag(int captured);

/* Stores *e under e->tag (the launching thread). */
void np_inflight_put(const struct np_inflight *e);

/* Copies the entry of tag into *out: 0, or -ENOENT when it was reused. */
int np_inflight_get(uint64_t tag, struct np_inflight *out);

/* The scratch slot index of a tag (see gpu_ctx.h: ordinary checks share
 * NP_GPU_SCRATCH_SLOTS slots, captured ones have one each after them). */
uint32_t np_inflight_scratch_index(uint64_t tag, uint32_t ordinary_slots);

#endif
