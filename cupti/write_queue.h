/* write_queue.h - writes no check saw, on their way from the threads
 * that make them to the drain thread.
 *
 * A copy from the host, a memset, or a device copy the agent does not
 * check replaces what a kernel left in device memory.  The origin
 * tracker (dirty.h) must hear of it, or a range a birth once left
 * non-finite stays dirty after it is overwritten, and a later birth
 * reading the new bytes is taken for that old value's propagation.  The
 * tracker belongs to the drain thread, and the write must reach it in
 * its place among the launches' results, which come back later: so each
 * write is numbered in the launches' sequence (inflight.h's tags) when
 * posted, and waits here until the drain thread takes it (drain.c says
 * when it is applied).
 *
 * Bounded: NP_WQ_CAP ranges; a range posted to a full queue is dropped
 * and counted (the tracker then keeps what it knew, as before).  One
 * lock: a few writes per training step, against thousands of launches.
 */
#ifndef NP_WRITE_QUEUE_H
#define NP_WRITE_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#define NP_WQ_CAP 1024

struct np_wq_item {
	uint64_t lo, hi;      /* the device range written, [lo, hi) */
	uint64_t src;         /* copied from there (may be device memory), or 0 */
	bool whole;           /* the source is [src, src + hi - lo), laid out as the
			       * range; else only its first byte is known */
	uint64_t order;       /* its place among the launches (a tag) */
	uint64_t stream;      /* the call's stream */
	uint64_t at_ns;       /* when posted, CLOCK_MONOTONIC */
};

/* Posts the n ranges one call wrote, all under one new number, taken
 * under the queue's lock so that the queue stays in launch order; src
 * and whole (np_wq_item's) may be NULL.  Returns how many were posted
 * (the rest counted lost). */
int np_wq_post(const uint64_t *lo, const uint64_t *hi, const uint64_t *src, const uint8_t *whole,
	       int n, uint64_t stream);

/* Moves up to max ranges, oldest first, into out; how many. */
int np_wq_take(struct np_wq_item *out, int max);

/* Ranges dropped because the queue was full. */
uint64_t np_wq_lost(void);

#endif
