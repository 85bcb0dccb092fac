/* fake_reduce.h - torch's whole-tensor sum of floats on the fake driver:
 * reduce_kernel<512, 1, ReduceOp<float, func_wrapper_t<float,
 * SumFunctor>, unsigned int, float, 4, 4>>, its ReduceOp laid out field
 * for field as Reduce.cuh and OffsetCalculator.cuh declare it (ops_t an
 * empty functor, index_t uint32_t, 25 dims: what torch passes by value;
 * nvcc lays the real one out the same way, tests/unit/fixtures/
 * reduce_ops.tsv: 1048 bytes, src at 984), the one-block configuration
 * torch gives a small sum, and a host body.  fake_ops.c's and
 * fake_writes.c's. */
#ifndef NP_FAKE_REDUCE_H
#define NP_FAKE_REDUCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "fake.h"

/* torch's sum names a lambda where this has SumFunctor */
#define FAKE_SUM_F32                                                                      \
	"_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_14func_wrapper_tIfNS0_" \
	"10SumFunctorEEEjfLi4ELi4EEEEEvT1_"

struct reduce_op {
	char ops;
	float ident;
	struct {
		int32_t element_size_bytes, num_inputs, num_outputs, step_input, step_output,
			ctas_per_output, input_mult[3], output_mult[2], block_width, block_height,
			num_threads;
		bool vectorize_input;
		int32_t output_vec_size;
	} config;
	struct {
		int32_t dims;
		uint32_t sizes[25][3];          /* IntDivider: divisor, m1, shift */
		uint32_t strides[25][1];
	} input_calc;
	struct {
		int32_t dims;
		uint32_t sizes[25][3];
		uint32_t strides[25][2];
	} output_calc;
	const void *src;
	const char *dst[2];
	void *acc_buf, *cta_buf;
	int *semaphores;
	int64_t base_idx;
	bool accumulate, final_output;
	int32_t noutputs;
};
_Static_assert(sizeof(struct reduce_op) == 1048 && offsetof(struct reduce_op, src) == 984,
	       "the ReduceOp of tests/unit/fixtures/reduce_ops.tsv");

/* dst[0] = the sum of n floats from src: one 512-thread block (32 x 16),
 * as torch configures a small whole-tensor sum; launch it <<<1, (32, 16)>>>. */
static inline void fake_sum_op(struct reduce_op *op, const void *src, void *dst, int n)
{
	memset(op, 0xa5, sizeof(*op));  /* padding as on a real launch's stack */
	op->ops = 0;
	op->ident = 0;
	op->config.element_size_bytes = 4;
	op->config.num_inputs = n;
	op->config.num_outputs = 1;
	op->config.step_input = 32 * 16;
	op->config.step_output = 1;
	op->config.ctas_per_output = 1;
	op->config.input_mult[0] = 1, op->config.input_mult[1] = 32, op->config.input_mult[2] = 0;
	op->config.output_mult[0] = op->config.output_mult[1] = 0;
	op->config.block_width = 32, op->config.block_height = 16, op->config.num_threads = 512;
	op->config.vectorize_input = false;
	op->config.output_vec_size = 1;
	op->input_calc.dims = 1;
	op->input_calc.sizes[0][0] = (uint32_t)n;
	op->input_calc.strides[0][0] = 4;
	op->output_calc.dims = 0;       /* a scalar: no output dims */
	op->src = src;
	op->dst[0] = (const char *)dst;
	op->acc_buf = op->cta_buf = NULL;
	op->semaphores = NULL;
	op->base_idx = 0;
	op->accumulate = false;
	op->final_output = true;
	op->noutputs = 1;
}

/* config.num_inputs elements of src into dst[0][0] */
static inline void fake_k_sum(const void *a, unsigned grid, unsigned block)
{
	struct reduce_op op;
	float acc = 0;
	(void)grid, (void)block;
	memcpy(&op, a, sizeof(op));
	for (int i = 0; i < op.config.num_inputs; i++)
		acc += ((const float *)op.src)[i];
	*(float *)op.dst[0] = acc;
}

static inline CUfunction fake_register_sum(void)
{
	static const uint32_t off[] = { 0 }, size[] = { sizeof(struct reduce_op) };
	return fake_cuda_register(FAKE_SUM_F32, 1, off, size, fake_k_sum, NULL);
}

#endif
