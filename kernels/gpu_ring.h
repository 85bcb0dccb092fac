/* gpu_ring.h - the result ring of check_abi.h: many producers (the last
 * block of each finite check, on the GPU), one consumer (a host thread).
 *
 * Indices are free-running 32-bit counters; slot = index & (cap - 1),
 * which is why cap is a power of two (it then divides 2^32, so wrapping
 * the counters never changes which slot an index names).
 *
 * A producer takes index h by CAS on *head, only while h - *tail < cap:
 * a full ring never gives out an index, so it never leaves a hole the
 * consumer would wait on forever; the record is counted in *dropped
 * instead.  It then writes the record, fences, and writes seq = h + 1
 * last.  The consumer takes the record at its tail once that slot's seq
 * is tail + 1, copies it out and only then advances *tail, which is what
 * frees the slot for index tail + cap.
 *
 * Slots must start "not ready": seq != index + 1 for every index the
 * consumer will wait on.  Zeroed slots are, when the counters start at 0;
 * np_gpu_ring_reset() prepares them for any start.
 */
#ifndef NP_GPU_RING_H
#define NP_GPU_RING_H

#include "finite.h"
#include "check_abi.h"
#include "np_atomic.h"

/* The unit tests define this to run another producer inside the window
 * between reading head and taking it, where a real race would hit. */
#ifndef NP_RING_RACE_HOOK
#define NP_RING_RACE_HOOK(r) do { } while (0)
#endif

/* Pushes one record; returns 1, or 0 when the ring was full (counted in
 * *r->dropped).  Any thread may call it; it waits only on other
 * producers' CAS, never on the consumer. */
NP_HD static inline int np_gpu_ring_push(const struct np_gpu_ring *r, const struct np_gpu_rec *rec)
{
	unsigned int h, behind = 0;

	for (;;) {
		/* tail first: it never passes head, so a head read after it is
		 * at least as new and h - t cannot go negative ... */
		unsigned int t = NP_LOAD_ACQ32(r->tail);
		h = NP_LOAD32(r->head);
		/* ... unless the loads were reordered: read both again, but
		 * never spin on a corrupt tail (a hung check hangs the job) */
		if ((int)(h - t) < 0 && ++behind < 64)
			continue;
		if (h - t >= r->cap) {
			NP_ATOMIC_ADD32(r->dropped, 1u);
			return 0;
		}
		NP_RING_RACE_HOOK(r);
		if (NP_ATOMIC_CAS32(r->head, h, h + 1) == h)
			break;
	}

	struct np_gpu_rec *s = &r->slots[h & (r->cap - 1)];
	s->tag = rec->tag;
	s->numel = rec->numel;
	s->nan = rec->nan;
	s->posinf = rec->posinf;
	s->neginf = rec->neginf;
	s->max_mag = rec->max_mag;
	s->first_bad = rec->first_bad;
	s->dtype = rec->dtype;
	/* the fields must reach the host before seq says they are there */
	NP_FENCE_SYSTEM();
	NP_STORE_REL32(&s->seq, h + 1);
	return 1;
}

#ifndef __CUDA_ARCH__
/* Takes the record at *tail_mapped into *out if it has been written;
 * returns 1 if it took one, 0 if the ring is empty (or the next record
 * is still being written: records are taken in index order).  One
 * consumer only. */
static inline int np_gpu_ring_pop(struct np_gpu_rec *slots, unsigned cap,
				  unsigned *tail_mapped, struct np_gpu_rec *out)
{
	unsigned int t = __atomic_load_n(tail_mapped, __ATOMIC_RELAXED); /* ours alone */
	struct np_gpu_rec *s = &slots[t & (cap - 1)];

	if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) != t + 1)
		return 0;
	*out = *s;
	/* release: the copy is done before a producer may reuse the slot */
	__atomic_store_n(tail_mapped, t + 1, __ATOMIC_RELEASE);
	return 1;
}

/* Prepares cap slots for counters (head and tail) starting at `start`:
 * each slot's seq is set to what its index of the previous lap would
 * have left (index + 1 - cap), never the index + 1 the consumer waits
 * for.  Not needed for zeroed slots and start 0. */
static inline void np_gpu_ring_reset(struct np_gpu_rec *slots, unsigned cap, unsigned start)
{
	for (unsigned int k = 0; k < cap; k++) {
		unsigned int i = start + k;
		struct np_gpu_rec *s = &slots[i & (cap - 1)];
		s->seq = i + 1 - cap;
	}
}
#endif

#endif
