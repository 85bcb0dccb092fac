/* intervals.h - the allocation interval map: which device allocation, and
 * where known which tensor, an address lies in.
 *
 * The GPU agent records the device memory it sees allocated: driver
 * allocations and mappings (cuMemAlloc*, cuMemMap; PyTorch's caching
 * allocator carves many tensors from one such SEGMENT) and, where the
 * Python-level hooks told it, the byte range of each TENSOR.  Every kernel
 * launch looks up each pointer-like argument word, so lookups are a
 * binary search over fixed arrays: O(log n), no allocation, no locking of
 * their own.  Inserts and removes are rarer and cost a memmove (O(n)).
 *
 * One sorted array per kind, each holding non-overlapping [base, base+len)
 * intervals; a tensor may lie inside a segment (different kinds never
 * replace each other).  Capacities are fixed at init; an insert into a
 * full kind is refused and counted, never grown.
 *
 * Locking: the map is not thread-safe.  It is written from driver
 * callbacks and Python hooks on any thread and read on every launching
 * thread, so callers hold the map's one mutex around every call:
 * np_ivmap_lock()/np_ivmap_unlock().  The mutex lives in the map so that
 * the rule "one lock per map" is stated in one place; the functions do
 * not take it themselves so that a launch callback takes it once for all
 * of its argument words, not once per word.
 */
#ifndef NP_INTERVALS_H
#define NP_INTERVALS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

enum np_iv_kind {
	NP_IV_SEGMENT = 0,	/* a driver allocation or mapping */
	NP_IV_TENSOR,		/* one tensor's bytes, usually inside a segment */
	NP_IV_KINDS,
};

/* Defaults for np_ivmap_init: a 24-byte entry each, 1.9 MiB in all. */
#define NP_IV_DEFAULT_SEGMENTS 16384
#define NP_IV_DEFAULT_TENSORS 65536

struct np_iv {
	uint64_t base, len;	/* [base, base + len), len > 0 */
	uint32_t id;		/* the caller's number for the allocation or tensor */
	int16_t dtype;		/* enum np_dtype (kernels/finite.h), -1: unknown */
	uint8_t kind;		/* enum np_iv_kind */
};

struct np_iv_set {
	struct np_iv *v;	/* sorted by base, non-overlapping */
	size_t len, cap;
};

struct np_ivmap {
	struct np_iv_set set[NP_IV_KINDS];
	uint64_t overflow;	/* inserts refused: their kind was full */
	uint64_t replaced;	/* intervals dropped because an insert overlapped them */
	pthread_mutex_t lock;
};

/* Room for max_segments and max_tensors intervals (either may be 0: every
 * insert of that kind is then refused).  0, or -ENOMEM. */
int np_ivmap_init(struct np_ivmap *m, size_t max_segments, size_t max_tensors);
/* Frees the arrays; the map may be initialised again. */
void np_ivmap_free(struct np_ivmap *m);

void np_ivmap_lock(struct np_ivmap *m);
void np_ivmap_unlock(struct np_ivmap *m);

/* Records [base, base + len) as a kind interval with the given dtype (-1
 * if unknown) and id.  Intervals of the same kind that overlap it are
 * dropped and counted in m->replaced: the memory was reused after a free
 * we never saw (an identical interval inserted again counts too).
 * Returns how many were dropped (>= 0); -ENOSPC, counted in m->overflow,
 * when the kind is full and nothing overlapped; -EINVAL for len 0, a
 * range past the top of the address space (base + len must fit in 64
 * bits), or a bad kind. */
int np_ivmap_insert(struct np_ivmap *m, enum np_iv_kind kind, uint64_t base, uint64_t len,
		    int dtype, uint32_t id);

/* Removes the kind interval starting exactly at base.  Removing a segment
 * also removes every tensor interval overlapping it, since no tensor
 * outlives its memory.  Returns the number of intervals removed (>= 1),
 * or -ENOENT when no kind interval starts at base. */
int np_ivmap_remove(struct np_ivmap *m, enum np_iv_kind kind, uint64_t base);

/* Removes every interval, of either kind, overlapping [base, base + len):
 * memory unmapped (cuMemUnmap), which may cover part of an interval or
 * several.  Returns the number removed (>= 0); -EINVAL for len 0 or a
 * range past the top of the address space. */
int np_ivmap_remove_range(struct np_ivmap *m, uint64_t base, uint64_t len);

/* The innermost interval containing addr, a tensor before a segment,
 * copied to *out (may be NULL).  0, or -ENOENT when none contains it. */
int np_ivmap_lookup(const struct np_ivmap *m, uint64_t addr, struct np_iv *out);

/* Bytes from ptr to the end of the innermost interval containing it, in
 * *len (>= 1).  0, or -ENOENT when none contains ptr. */
int np_iv_extent(const struct np_ivmap *m, uint64_t ptr, uint64_t *len);

/* Intervals held, both kinds together. */
size_t np_ivmap_entries(const struct np_ivmap *m);

#endif
