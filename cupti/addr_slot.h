/* addr_slot.h - the slot of a direct-mapped table an address falls in:
 * the tables keyed by device addresses (writers.c, generic.c,
 * param_owners.c) and by module addresses (outmax.c). */
#ifndef NP_ADDR_SLOT_H
#define NP_ADDR_SLOT_H

#include <stdint.h>

/* Addresses are aligned: the low bits say little, so they are dropped
 * and the rest multiplied by 2^64 / phi (Fibonacci hashing).  slots is a
 * power of two, at most 2^24. */
static inline unsigned np_addr_slot(uint64_t addr, unsigned slots)
{
	return (unsigned)((addr >> 4) * 0x9e3779b97f4a7c15ull >> 40) & (slots - 1);
}

#endif
