/* wide_inputs.c - input words past a launch entry's (see wide_inputs.h). */
#include <errno.h>
#include <string.h>
#include "wide_inputs.h"

struct wide {
	uint64_t tag;            /* 0: being written, or never */
	uint32_t n;
	uint64_t in[NP_WIDE_MAX];
};

/* the ring, then the captured entries */
static struct wide slots[NP_WIDE_SLOTS + NP_WIDE_CAPTURED];
static uint32_t next_slot, next_captured;

uint32_t np_wide_put(uint64_t tag, int captured, const void *in, uint32_t n)
{
	uint32_t slot;
	if (!tag || !n)
		return 0;
	if (n > NP_WIDE_MAX)
		n = NP_WIDE_MAX;
	if (captured) {
		slot = __atomic_fetch_add(&next_captured, 1, __ATOMIC_RELAXED);
		if (slot >= NP_WIDE_CAPTURED)
			return 0;
		slot += NP_WIDE_SLOTS;
	} else {
		slot = __atomic_fetch_add(&next_slot, 1, __ATOMIC_RELAXED) % NP_WIDE_SLOTS;
	}
	struct wide *w = &slots[slot];
	__atomic_store_n(&w->tag, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	w->n = n;
	memcpy(w->in, in, (size_t)n * sizeof(w->in[0]));
	__atomic_store_n(&w->tag, tag, __ATOMIC_RELEASE);
	return slot + 1;
}

int np_wide_get(uint32_t slot1, uint64_t tag, uint64_t *out)
{
	if (!slot1 || slot1 > NP_WIDE_SLOTS + NP_WIDE_CAPTURED || !tag)
		return -ENOENT;
	struct wide *w = &slots[slot1 - 1];
	if (__atomic_load_n(&w->tag, __ATOMIC_ACQUIRE) != tag)
		return -ENOENT;
	uint32_t n = w->n < NP_WIDE_MAX ? w->n : NP_WIDE_MAX;
	memcpy(out, w->in, (size_t)n * sizeof(out[0]));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&w->tag, __ATOMIC_RELAXED) != tag)
		return -ENOENT;   /* reused while we copied */
	return (int)n;
}
