/* check_accum.h - everything the finite-check kernels do except the
 * warp/block reduction: how a buffer is split among the threads, one
 * thread's scan of its part into an accumulator, merging accumulators,
 * and a block's total into the check's slot and, from the last block,
 * into the result ring (check_abi.h).
 *
 * Plain C, every function NP_HD: kernels/finite_check.cu runs it on the
 * GPU and tests/unit/test_check_kernels.c runs the same code on the CPU,
 * block by block, thread by thread.  Elements are classified from their
 * bits with finite.h, never as floats, so the GPU and the CPU checks
 * (agent/cpu_check.c) agree on every pattern.
 *
 * first_bad.  The smallest bad index must win across threads and blocks
 * with one atomic each.  An accumulator keeps it as a key, ~index, with
 * 0 for none: the smallest index has the largest key, so merging is an
 * unsigned max (atomicMax in the slot), and "none" (0) loses to every
 * real key without a special case.  No real index has key 0 (that would
 * be index 2^64 - 1).  The slot's first_bad holds the same key, which
 * keeps the slot all-zero when free.
 */
#ifndef NP_CHECK_ACCUM_H
#define NP_CHECK_ACCUM_H

#include <stdint.h>
#include <string.h>   /* memcpy: the host's loads */
#include "finite.h"
#include "check_abi.h"
#include "np_atomic.h"
#include "gpu_ring.h"

#ifdef __CUDA_ARCH__
#define NP_UNROLL _Pragma("unroll")
#else
#define NP_UNROLL
#endif
#ifdef __CUDACC__
#define NP_NOINLINE __noinline__
#else
/* static, not inline: "unused" keeps gcc quiet where nothing calls it */
#define NP_NOINLINE __attribute__((noinline, unused))
#endif

/* One thread's (then one warp's, one block's, one check's) findings. */
struct np_acc {
	unsigned long long nan, posinf, neginf;
	unsigned long long max_mag;   /* largest finite magnitude, raw bits */
	unsigned long long bad_key;   /* ~(smallest bad index); 0: none */
};

NP_HD static inline void np_acc_init(struct np_acc *a)
{
	a->nan = a->posinf = a->neginf = 0;
	a->max_mag = 0;
	a->bad_key = 0;
}

NP_HD static inline int np_acc_bad(const struct np_acc *a)
{
	return a->nan || a->posinf || a->neginf;
}

/* The first bad index a key stands for, -1 for none. */
NP_HD static inline long long np_bad_index(unsigned long long key)
{
	return key ? (long long)~key : -1;
}

/* Folds element i, given as its raw bits (zero-extended). */
NP_HD static inline void np_acc_add(struct np_acc *a, enum np_dtype t, uint64_t bits,
				    unsigned long long i)
{
	switch (np_classify(t, bits)) {
	case NP_FINITE: {
		uint64_t mag = bits & (np_sign_bit(t) - 1);
		if (mag > a->max_mag)
			a->max_mag = mag;
		return;
	}
	case NP_NAN: a->nan++; break;
	case NP_POSINF: a->posinf++; break;
	case NP_NEGINF: a->neginf++; break;
	}
	if (~i > a->bad_key)
		a->bad_key = ~i;
}

/* a += b: counts add, maxima and keys take the larger. */
NP_HD static inline void np_acc_merge(struct np_acc *a, const struct np_acc *b)
{
	a->nan += b->nan;
	a->posinf += b->posinf;
	a->neginf += b->neginf;
	if (b->max_mag > a->max_mag)
		a->max_mag = b->max_mag;
	if (b->bad_key > a->bad_key)
		a->bad_key = b->bad_key;
}

/*
 * Lanes: a 16-byte vector is read as two 64-bit little-endian words, each
 * holding 8 / size elements.  With the sign bits (H) cleared every lane
 * is below H, which lets the clean case, nearly every vector, be done on
 * whole words: one max for the non-finite test, one into a running max.
 */

/* v repeated in every lane of a word. */
NP_HD static inline uint64_t np_lanes_rep(unsigned esz, uint64_t v)
{
	switch (esz) {
	case 1: return v * 0x0101010101010101ull;
	case 2: return v * 0x0001000100010001ull;
	case 4: return v * 0x0000000100000001ull;
	default: return v;
	}
}

/* Lane j of word w. */
NP_HD static inline uint64_t np_lane(uint64_t w, unsigned esz, unsigned j)
{
	return esz == 8 ? w : (w >> (8 * esz * j)) & ((1ull << (8 * esz)) - 1);
}

/* Lane-wise unsigned max of two words whose lanes are all below H.
 * 32/64-bit lanes are machine maxima; narrower ones are SWAR: per lane,
 * (a | H) - b keeps H iff a >= b and never borrows across lanes; that
 * bit is spread into a whole-lane select mask. */
NP_HD static inline uint64_t np_lanes_max(unsigned esz, uint64_t a, uint64_t b)
{
	if (esz == 8)
		return a > b ? a : b;
	if (esz == 4) {
		uint32_t al = (uint32_t)a, bl = (uint32_t)b;
		uint32_t ah = (uint32_t)(a >> 32), bh = (uint32_t)(b >> 32);
		return (uint64_t)(ah > bh ? ah : bh) << 32 | (al > bl ? al : bl);
	}
	uint64_t h = np_lanes_rep(esz, 1ull << (8 * esz - 1));
	uint64_t ge = ((a | h) - b) & h;
	uint64_t sel = ge | (ge - (ge >> (8 * esz - 1)));
	return (a & sel) | (b & ~sel);
}

/* Whether any lane of m (all below H) is at least the dtype's smallest
 * non-finite magnitude: adding H - limit carries into H exactly then,
 * and never past the lane. */
NP_HD static inline int np_lanes_nonfinite(enum np_dtype t, uint64_t m)
{
	unsigned esz = np_dtype_size(t);
	uint64_t h = np_lanes_rep(esz, np_sign_bit(t));
	return ((m + np_lanes_rep(esz, np_sign_bit(t) - np_nonfinite_min(t))) & h) != 0;
}

/* Folds the running lane maxima into a->max_mag. */
NP_HD static inline void np_acc_lanes(struct np_acc *a, unsigned esz, uint64_t lanes)
{
	NP_UNROLL
	for (unsigned j = 0; j < 8 / esz; j++) {
		uint64_t v = np_lane(lanes, esz, j);
		if (v > a->max_mag)
			a->max_mag = v;
	}
}

/* A vector with a non-finite lane, element by element, for exact counts
 * and the first index.  Out of line: inlined, its registers pushed the
 * kernels' clean loop past 32 (spills in every iteration); called, the
 * accumulator lives in local memory, which the clean loop never touches. */
NP_HD NP_NOINLINE static void np_acc_vec_slow(struct np_acc *a, enum np_dtype t, uint64_t w0,
					      uint64_t w1, unsigned long long i0)
{
	unsigned esz = np_dtype_size(t), per = 8 / esz;
	for (unsigned j = 0; j < per; j++)
		np_acc_add(a, t, np_lane(w0, esz, j), i0 + j);
	for (unsigned j = 0; j < per; j++)
		np_acc_add(a, t, np_lane(w1, esz, j), i0 + per + j);
}

/* Folds the 16-byte vector w[0..1] whose first element is i0.  A clean
 * vector, nearly every one, only raises *lanes. */
NP_HD static inline void np_acc_vec(struct np_acc *a, enum np_dtype t, const uint64_t w[2],
				    unsigned long long i0, uint64_t *lanes)
{
	unsigned esz = np_dtype_size(t);
	uint64_t mask = ~np_lanes_rep(esz, np_sign_bit(t));
	uint64_t m = np_lanes_max(esz, w[0] & mask, w[1] & mask);

	if (!np_lanes_nonfinite(t, m)) {
		*lanes = np_lanes_max(esz, *lanes, m);
		return;
	}
	np_acc_vec_slow(a, t, w[0], w[1], i0);
}

/*
 * Splitting a buffer.  Vectors are 16 bytes, loaded only from 16-byte
 * aligned addresses: the elements before the first boundary (the head)
 * and after the last whole vector (the tail) are loaded one at a time.
 * A buffer not even aligned to its element size (never seen from
 * PyTorch, but a misaligned load would kill the job's CUDA context) is
 * all "head", loaded byte by byte.  No load ever reaches past numel.
 */
struct np_split {
	unsigned long long head;      /* elements before the first vector */
	unsigned long long nvec;      /* whole vectors after them */
	unsigned long long nscalar;   /* head + tail: loaded one at a time */
	unsigned int vlen;            /* elements per vector */
	unsigned int aligned;         /* 0: element loads go byte by byte */
};

NP_HD static inline struct np_split np_split_of(unsigned long long addr, unsigned long long numel,
						unsigned esz)
{
	struct np_split s;
	s.vlen = 16 / esz;
	s.aligned = addr % esz == 0;
	s.head = s.aligned ? (16 - addr % 16) % 16 / esz : numel;
	if (s.head > numel)
		s.head = numel;
	s.nvec = (numel - s.head) / s.vlen;
	s.nscalar = numel - s.nvec * s.vlen;
	return s;
}

/* The index of the k-th element loaded alone: the head, then the tail. */
NP_HD static inline unsigned long long np_split_scalar(const struct np_split *s,
						       unsigned long long k)
{
	return k < s->head ? k : k + s->nvec * s->vlen;
}

/* The grid: thread `tid` of block `blk` starts at np_thread_first() and
 * strides by np_grid_stride(), through the lone elements and then
 * through the vectors. */
NP_HD static inline unsigned long long np_thread_first(unsigned blk, unsigned nthreads, unsigned tid)
{
	return (unsigned long long)blk * nthreads + tid;
}

NP_HD static inline unsigned long long np_grid_stride(unsigned nblocks, unsigned nthreads)
{
	return (unsigned long long)nblocks * nthreads;
}

/* One element at p, zero-extended. */
NP_HD static inline uint64_t np_load_elem(const unsigned char *p, unsigned esz, int aligned)
{
#ifdef __CUDA_ARCH__
	if (aligned) {
		switch (esz) {
		case 8: return __ldg((const unsigned long long *)p);
		case 4: return __ldg((const unsigned int *)p);
		case 2: return __ldg((const unsigned short *)p);
		default: return __ldg(p);
		}
	}
	uint64_t v = 0;
	for (unsigned k = 0; k < esz; k++)
		v |= (uint64_t)__ldg(p + k) << (8 * k);
	return v;
#else
	uint64_t v = 0;   /* the host is little-endian, like the GPU */
	(void)aligned;    /* memcpy takes any alignment */
	memcpy(&v, p, esz);
	return v;
#endif
}

/* The 16 bytes at p (16-byte aligned) as two words. */
NP_HD static inline void np_load16(const unsigned char *p, uint64_t w[2])
{
#ifdef __CUDA_ARCH__
	ulonglong2 v = __ldg((const ulonglong2 *)p);
	w[0] = v.x;
	w[1] = v.y;
#else
	memcpy(w, p, 16);
#endif
}

/* One thread's whole part of the buffer, from element `first` in steps
 * of `stride`, folded into a. */
NP_HD static inline void np_scan_thread(struct np_acc *a, enum np_dtype t, const void *buf,
					const struct np_split *s, unsigned long long first,
					unsigned long long stride)
{
	const unsigned char *p = (const unsigned char *)buf;
	unsigned esz = np_dtype_size(t);
	uint64_t lanes = 0;

	for (unsigned long long k = first; k < s->nscalar; k += stride) {
		unsigned long long i = np_split_scalar(s, k);
		np_acc_add(a, t, np_load_elem(p + i * esz, esz, s->aligned), i);
	}
	for (unsigned long long v = first; v < s->nvec; v += stride) {
		unsigned long long i0 = s->head + v * s->vlen;
		uint64_t w[2];
		np_load16(p + i0 * esz, w);
		np_acc_vec(a, t, w, i0, &lanes);
	}
	np_acc_lanes(a, esz, lanes);
}

/*
 * The check's slot.  Every block adds its total with one atomic per
 * non-zero field, then counts itself done; the fence in between makes
 * its atomics land before its count.  The block that counts last sees
 * every other block's atomics, takes the totals and zeroes the slot in
 * the same exchanges, so the slot is free again when the kernel ends.
 */
NP_HD static inline void np_acc_to_slot(struct np_check_slot *s, const struct np_acc *a)
{
	if (a->nan)
		NP_ATOMIC_ADD64(&s->nan, a->nan);
	if (a->posinf)
		NP_ATOMIC_ADD64(&s->posinf, a->posinf);
	if (a->neginf)
		NP_ATOMIC_ADD64(&s->neginf, a->neginf);
	if (a->max_mag)
		NP_ATOMIC_MAX64(&s->max_mag, a->max_mag);
	if (a->bad_key)
		NP_ATOMIC_MAX64(&s->first_bad, a->bad_key);
}

/* Counts one block of nblocks done; 1 for the last one. */
NP_HD static inline int np_slot_arrive(struct np_check_slot *s, unsigned nblocks)
{
	NP_FENCE_DEVICE();
	return NP_ATOMIC_ADD32(&s->done, 1u) == nblocks - 1;
}

/* The last block only: the totals into a, the slot left zero. */
NP_HD static inline void np_slot_take(struct np_check_slot *s, struct np_acc *a)
{
	NP_FENCE_DEVICE();
	a->nan = NP_ATOMIC_XCHG64(&s->nan, 0ull);
	a->posinf = NP_ATOMIC_XCHG64(&s->posinf, 0ull);
	a->neginf = NP_ATOMIC_XCHG64(&s->neginf, 0ull);
	a->max_mag = NP_ATOMIC_XCHG64(&s->max_mag, 0ull);
	a->bad_key = NP_ATOMIC_XCHG64(&s->first_bad, 0ull);
	NP_ATOMIC_XCHG32(&s->done, 0u);
}

NP_HD static inline void np_acc_to_rec(const struct np_acc *a, enum np_dtype t,
				       unsigned long long tag, unsigned long long numel,
				       struct np_gpu_rec *r)
{
	r->tag = tag;
	r->numel = numel;
	r->nan = a->nan;
	r->posinf = a->posinf;
	r->neginf = a->neginf;
	r->max_mag = a->max_mag;
	r->first_bad = np_bad_index(a->bad_key);
	r->dtype = (unsigned int)t;
	r->seq = 0;   /* np_gpu_ring_push writes its own */
}

/* One block's total into the check (one thread per block calls it).
 * Returns 1 if this was the last block and it pushed a record, -1 if it
 * was and the ring was full, 0 otherwise. */
NP_HD static inline int np_check_publish(const struct np_check_args *args, enum np_dtype t,
					 const struct np_acc *blk, unsigned nblocks)
{
	struct np_acc tot;
	struct np_gpu_rec rec;

	np_acc_to_slot(args->slot, blk);
	if (!np_slot_arrive(args->slot, nblocks))
		return 0;
	np_slot_take(args->slot, &tot);
	if (!np_acc_bad(&tot) && !args->report_all)
		return 0;
	np_acc_to_rec(&tot, t, args->tag, args->numel, &rec);
	return np_gpu_ring_push(&args->ring, &rec) ? 1 : -1;
}

#endif
