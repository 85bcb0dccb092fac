/* fake_elementwise.h - torch's vectorized add and fill of floats on the
 * fake driver: their mangled names (every fake program and the launch
 * benchmark use these), and for the small fake programs (fake_devices.c,
 * fake_writes.c) the parameter layout torch passes (int numel, the
 * functor by value, std::array<char*, N> with data[0] the output) and
 * host bodies.  fake_register_add_fill() registers both. */
#ifndef NP_FAKE_ELEMENTWISE_H
#define NP_FAKE_ELEMENTWISE_H

#include <string.h>
#include "fake.h"

#define FAKE_ADD_F32 \
	"_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EELb1EEEviT0_T1_"
#define FAKE_FILL_F32 \
	"_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_11FillFunctorIfEESt5arrayIPcLm1EELb1EEEviT0_T1_"

/* the data pointers, after numel and the functor's 4 bytes */
static inline char **fake_data_of(const void *a)
{
	return (char **)((const char *)a + 8);
}

/* data[0] = data[1] + alpha * data[2] */
static inline void fake_k_add(const void *a, unsigned grid, unsigned block)
{
	(void)grid, (void)block;
	int n;
	float alpha;
	memcpy(&n, a, 4);
	memcpy(&alpha, (const char *)a + 4, 4);
	char **d = fake_data_of(a);
	for (int i = 0; i < n; i++)
		((float *)d[0])[i] = ((float *)d[1])[i] + alpha * ((float *)d[2])[i];
}

/* data[0] = value */
static inline void fake_k_fill(const void *a, unsigned grid, unsigned block)
{
	(void)grid, (void)block;
	int n;
	float v;
	memcpy(&n, a, 4);
	memcpy(&v, (const char *)a + 4, 4);
	for (int i = 0; i < n; i++)
		((float *)fake_data_of(a)[0])[i] = v;
}

static inline void fake_register_add_fill(CUfunction *add, CUfunction *fill)
{
	static const uint32_t off[] = { 0, 4, 8 }, add_size[] = { 4, 4, 24 },
			      fill_size[] = { 4, 4, 8 };
	*add = fake_cuda_register(FAKE_ADD_F32, 3, off, add_size, fake_k_add, NULL);
	*fill = fake_cuda_register(FAKE_FILL_F32, 3, off, fill_size, fake_k_fill, NULL);
}

#endif
