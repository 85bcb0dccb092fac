/* param_bytes.h - reading fields out of a kernel parameter's bytes (a
 * by-value struct: ReduceOp, a lambda's captures), wherever they fall:
 * memcpy, since the offsets need not be aligned in the host buffer; and
 * whether a word there can be a device address. */
#ifndef NP_PARAM_BYTES_H
#define NP_PARAM_BYTES_H

#include <stdint.h>
#include <string.h>

/* A word w is a candidate device pointer when NP_KD_PTR_MIN <= w <
 * NP_KD_PTR_MAX.  The top is the end of x86_64/arm64 47-bit user space
 * (CUDA's unified addresses live there).  The floor is 4 GiB: the driver
 * places device allocations above it in practice, and it drops most words
 * that are really a pair of 32-bit scalars (an int next to a small float
 * or int has a zero or tiny high half).  Words that pass are only
 * candidates: the allocation map decides. */
#define NP_KD_PTR_MIN (1ull << 32)
#define NP_KD_PTR_MAX (1ull << 47)

static inline int np_pointer_like(uint64_t w)
{
	return w >= NP_KD_PTR_MIN && w < NP_KD_PTR_MAX;
}

static inline uint32_t np_u32_at(const unsigned char *b, uint32_t at)
{
	uint32_t v;
	memcpy(&v, b + at, sizeof(v));
	return v;
}

static inline int32_t np_i32_at(const unsigned char *b, uint32_t at)
{
	return (int32_t)np_u32_at(b, at);
}

static inline uint64_t np_u64_at(const unsigned char *b, uint32_t at)
{
	uint64_t v;
	memcpy(&v, b + at, sizeof(v));
	return v;
}

#endif
