/* kdecode_reduce.h - the outputs of a torch reduction launch, read from its
 * ReduceOp.
 *
 * Every TensorIterator reduction on CUDA (sum, mean, norm, var/std, max,
 * aminmax, any, ...) is one kernel, at::native::reduce_kernel<nt,
 * output_vec_size, R>(R reduction), whose single by-value parameter R is a
 * ReduceOp<scalar_t, ops_t, index_t, out_scalar_t, vt0, input_vec_size>
 * (ATen/native/cuda/Reduce.cuh):
 *
 *   ops_t ops; arg_t ident;                  size and alignment vary
 *   ReduceConfig config;                     64 bytes: 14 ints, a bool, an int
 *   OffsetCalculator<1, index_t> input_calc; 404 bytes for index_t = uint32_t:
 *   OffsetCalculator<2, index_t> output_calc;  int dims, 25 IntDividers of 12,
 *                                              25 x NARGS (at least 2) strides
 *   const void *src; const char *dst[2];     the last 64 bytes, from src on:
 *   void *acc_buf, *cta_buf; int *semaphores;  8-byte fields, then the bools
 *   int64_t base_idx;                          and noutputs
 *   bool accumulate, final_output; int noutputs;
 *
 * Only the head depends on the op.  From src on the layout is fixed, so the
 * tail is found from the parameter's end; the config then lies 972 bytes
 * (64 + 404 + 504) before src, less up to 4 bytes of padding, and is
 * recognised by its fields agreeing with the launch (block = (block_width,
 * block_height), grid = (ceil(num_outputs / output_vec_size / step_output),
 * ctas_per_output)).  The output calculator must then describe exactly
 * num_outputs elements, densely: only then is [dst, dst + num_outputs) the
 * output and nothing else.  Layouts confirmed by nvcc on torch 2.13's own
 * headers (tests/fixtures/reduce_ops.cu) and by the parameter sizes of
 * torch 2.14.1's reduce kernels (tests/unit/fixtures/torch_kernels.tsv);
 * torch 1.13's header has the same fields.
 */
#ifndef NP_KDECODE_REDUCE_H
#define NP_KDECODE_REDUCE_H

#include <stdint.h>

/* What one reduce_kernel launch writes and reads. */
struct np_reduce_view {
	uint64_t src;            /* the input */
	uint64_t dst[2];         /* the outputs; dst[1] only when noutputs is 2 */
	uint64_t acc_buf;        /* partial results of earlier sub-reductions, or 0 */
	uint32_t num_outputs;    /* elements of each output */
	int noutputs;            /* 1 or 2 */
	int accumulate;          /* combines with what dst (or acc_buf) holds */
};

/* Reads the ReduceOp of one launch: op, size bytes (the parameter),
 * index_size the sizeof index_t (only 4, uint32_t, is understood: torch
 * splits larger reductions), esize the sizeof out_scalar_t, ovs the
 * kernel's output_vec_size template argument, grid and block the launch's
 * dimensions.  Fills *v and returns 1 when the launch is this kernel's
 * final write of a dense output of num_outputs elements; 0 otherwise (a
 * layout that does not match, a partial result, a strided output). */
int np_reduce_read(const unsigned char *op, uint32_t size, int index_size, uint32_t esize,
		   int ovs, const uint32_t grid[3], const uint32_t block[3],
		   struct np_reduce_view *v);

/* The input of one launch (its arguments as np_reduce_read's, in_esize
 * the sizeof scalar_t): 1, with its address and element count, when the
 * calculators walk num_inputs x num_outputs elements lying densely from
 * src (in any order of dims: a reduction over an inner or an outer dim of
 * a contiguous tensor); 0 otherwise (a strided input, a sub-reduction of
 * a split one, a layout that does not match).  A partial or strided
 * output does not matter: the input is read all the same. */
int np_reduce_input(const unsigned char *op, uint32_t size, int index_size, uint32_t in_esize,
		    int ovs, const uint32_t grid[3], const uint32_t block[3], uint64_t *src,
		    uint64_t *numel);

#endif
