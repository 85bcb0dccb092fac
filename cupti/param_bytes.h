/* param_bytes.h - reading fields out of a kernel parameter's bytes (a
 * by-value struct: ReduceOp, a lambda's captures), wherever they fall:
 * memcpy, since the offsets need not be aligned in the host buffer. */
#ifndef NP_PARAM_BYTES_H
#define NP_PARAM_BYTES_H

#include <stdint.h>
#include <string.h>

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
