/* kdecode_lambda.h - the output of torch's strided elementwise kernel, read
 * from the lambda it is launched with.
 *
 * An elementwise op whose operands are not all contiguous (a broadcast
 * bias, a transposed view, a mask of another shape) runs
 *   elementwise_kernel<threads, vt, gpu_kernel_impl_nocast<F>(..)::{lambda(int)#1}>
 *       (int N, <lambda>)
 * or gpu_kernel_impl<F>'s twin, which casts each operand from its dtype
 * (ATen/native/cuda/CUDALoops.cuh).  nvcc passes an extended __host__
 * __device__ lambda as a wrapper of its captures, in the order the body
 * first uses them, then a host pointer:
 *
 *   OffsetCalculator<nt> offset_calc;  4 + 25 x 12 + 25 x nt x 4 bytes:
 *                                       dims, IntDividers, strides[25][nt]
 *   char *data[nt];                     at the next 8-byte boundary
 *   F f;                                the functor (its captures)
 *   ScalarType dtypes[nt];              gpu_kernel_impl only, 1 byte each
 *   void *host_lambda;                  at the next 8-byte boundary: the end
 *
 * with nt = the functor's arity + 1 (the output first).  Seen on nvcc's
 * own output for torch 2.13's headers (tests/fixtures/lambda_ops.cu,
 * which runs torch's launch code with the launch intercepted) and
 * matching torch 2.14.1's parameter sizes.
 *
 * The launch is believed only when every part agrees: block and grid as
 * launch_legacy_kernel makes them from N, each dimension's IntDivider
 * magic numbers as its constructor computes them, the sizes' product N,
 * data pointers where nt puts them, exactly one nt (or the one the
 * functor's arity names) fitting the parameter's size, and, when
 * casting, exactly one dtypes array whose output type has the element
 * size the output's strides show.  The output must be one dense range
 * (a permutation of a contiguous tensor is): [data[0], data[0] + N).
 *
 * An input is one dense range too when its dimensions of more than one
 * element and a non-zero stride, in stride order, are a contiguous
 * tensor's: a transposed view, or a bias broadcast over rows (stride 0).
 * A slice with gaps is not: the range would cover elements it never
 * reads.
 */
#ifndef NP_KDECODE_LAMBDA_H
#define NP_KDECODE_LAMBDA_H

#include <stdint.h>

#define NP_LAMBDA_MAX_TENSORS 8  /* output + 7 inputs: more are not read */

/* What one strided elementwise launch writes and reads. */
struct np_lambda_view {
	uint64_t data[NP_LAMBDA_MAX_TENSORS];  /* data[0] the output, then the inputs */
	int ntensors;
	uint64_t numel;          /* N: the output's elements */
	uint32_t esize;          /* the output's element size, from its strides (0: N is 1) */
	int scalar_type;         /* casting: the output's c10::ScalarType; -1 otherwise */
	uint64_t in_numel[NP_LAMBDA_MAX_TENSORS]; /* input k's elements when it reads one
						    * dense range of in_esize-byte ones
						    * (broadcast dimensions aside); else 0 */
};

/* What the kernel's name says (kdecode_elementwise.c). */
struct np_lambda_shape {
	int casting;             /* gpu_kernel_impl (dtypes captured), not _nocast */
	int arity;               /* the functor's inputs, 0 if the name does not say */
	int threads, vt;         /* elementwise_kernel<threads, vt, ..> */
	uint32_t esize;          /* nocast: sizeof the output type the name gives */
	uint32_t in_esize;       /* nocast: sizeof the inputs' type, 0 if not one known */
	int complex;             /* the functor computes complex values: a casting
				  * lambda's output is complex (torch casts no complex
				  * result to a real output), a real one's never is */
};

/* Reads the lambda of one launch: closure, size bytes (parameter 1), n
 * (parameter 0), grid and block the launch's.  Fills *v and returns 1
 * when the output is one dense range of n elements and every check above
 * holds; 2 when every check holds but the output is not one dense range
 * (a copy into a strided view): then only data[] and ntensors say
 * anything, which pointer is the output and which the inputs; 0
 * otherwise. */
int np_lambda_read(const unsigned char *closure, uint32_t size, int32_t n,
		   const struct np_lambda_shape *shape, const uint32_t grid[3],
		   const uint32_t block[3], struct np_lambda_view *v);

#endif
