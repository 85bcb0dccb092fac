/* finite_check.cu - the GPU finite checks of check_abi.h, one kernel per
 * dtype (and one per dtype that checks a list of buffers, a row of
 * blocks each), launched by the host on the checked kernel's own stream.
 *
 * Each thread scans its grid-stride part of the buffer (check_accum.h:
 * 16-byte vector loads where aligned, lone elements at the edges), the
 * block reduces the threads' accumulators (shuffles within each warp,
 * then the warps' results through shared memory in warp 0), and thread 0
 * adds the block's total into the check's slot; the last block turns
 * the slot into a record in the host-mapped ring.
 *
 * Everything but the reduction is check_accum.h, which the unit tests
 * run on the CPU.  No printf, no allocation, no dynamic parallelism:
 * this runs between the job's own kernels.
 *
 * Launch: <<<nblocks <= NP_CHECK_MAX_BLOCKS, NP_CHECK_THREADS>>>; the
 * block size must be a multiple of 32, at most NP_CHECK_THREADS.
 */
#include "finite.h"
#include "check_abi.h"
#include "check_accum.h"
#include "gpu_ring.h"

/* the host's gcc must see the layout nvcc sees */
static_assert(sizeof(struct np_check_args) == 80, "np_check_args is 80 bytes");
static_assert(sizeof(struct np_check_slot) == 64, "np_check_slot is 64 bytes");
static_assert(sizeof(struct np_gpu_rec) == 64, "np_gpu_rec is 64 bytes");
static_assert(sizeof(struct np_check_list) <= 4096, "np_check_list fits the parameter space");

#define NP_WARP 32
/* 8 blocks of 256 per SM (2048 threads, the sm_80/sm_90 limit) caps the
 * kernels at 32 registers: a full launch of NP_CHECK_MAX_BLOCKS is then
 * resident at once on a 132-SM H100/H200 instead of running a second,
 * mostly idle wave; the loop needs no more registers than that. */
#define NP_CHECK_MIN_BLOCKS (2048 / NP_CHECK_THREADS)
#define NP_FULL_MASK 0xffffffffu

/* Leaves the warp's total in lane 0 (other lanes hold partial sums). */
__device__ static __forceinline__ void np_warp_reduce(struct np_acc *a)
{
#pragma unroll
	for (int off = NP_WARP / 2; off; off >>= 1) {
		struct np_acc o;
		o.nan = __shfl_down_sync(NP_FULL_MASK, a->nan, off);
		o.posinf = __shfl_down_sync(NP_FULL_MASK, a->posinf, off);
		o.neginf = __shfl_down_sync(NP_FULL_MASK, a->neginf, off);
		o.max_mag = __shfl_down_sync(NP_FULL_MASK, a->max_mag, off);
		o.bad_key = __shfl_down_sync(NP_FULL_MASK, a->bad_key, off);
		np_acc_merge(a, &o);
	}
}

template <enum np_dtype T>
__device__ static __forceinline__ void np_check(const struct np_check_args &args)
{
	__shared__ struct np_acc warps[NP_CHECK_THREADS / NP_WARP];
	const unsigned lane = threadIdx.x % NP_WARP, warp = threadIdx.x / NP_WARP;
	const unsigned nwarps = blockDim.x / NP_WARP;
	struct np_split s = np_split_of((unsigned long long)args.buf, args.numel, np_dtype_size(T));
	struct np_acc a;

	np_acc_init(&a);
	np_scan_thread(&a, T, args.buf, &s, np_thread_first(blockIdx.x, blockDim.x, threadIdx.x),
		       np_grid_stride(gridDim.x, blockDim.x));

	np_warp_reduce(&a);
	if (lane == 0)
		warps[warp] = a;
	__syncthreads();
	if (warp)
		return;
	if (lane < nwarps)
		a = warps[lane];
	else
		np_acc_init(&a);
	np_warp_reduce(&a);
	if (lane == 0)
		np_check_publish(&args, T, &a, gridDim.x);
}

#define NP_CHECK_KERNEL(name, dt)                                                   \
	extern "C" __global__ void                                                 \
	__launch_bounds__(NP_CHECK_THREADS, NP_CHECK_MIN_BLOCKS)                   \
	name(const struct np_check_args args)                                      \
	{                                                                          \
		np_check<dt>(args);                                                \
	}

/* One entry of the list per row of blocks (check_abi.h). */
#define NP_CHECK_LIST_KERNEL(name, dt)                                              \
	extern "C" __global__ void                                                 \
	__launch_bounds__(NP_CHECK_THREADS, NP_CHECK_MIN_BLOCKS)                   \
	name(const struct np_check_list list)                                      \
	{                                                                          \
		np_check<dt>(list.e[blockIdx.y]);                                  \
	}

NP_CHECK_KERNEL(np_check_f32, NP_DT_F32)
NP_CHECK_KERNEL(np_check_f64, NP_DT_F64)
NP_CHECK_KERNEL(np_check_f16, NP_DT_F16)
NP_CHECK_KERNEL(np_check_bf16, NP_DT_BF16)
NP_CHECK_KERNEL(np_check_f8e4m3, NP_DT_F8E4M3)
NP_CHECK_KERNEL(np_check_f8e5m2, NP_DT_F8E5M2)

NP_CHECK_LIST_KERNEL(np_check_list_f32, NP_DT_F32)
NP_CHECK_LIST_KERNEL(np_check_list_f64, NP_DT_F64)
NP_CHECK_LIST_KERNEL(np_check_list_f16, NP_DT_F16)
NP_CHECK_LIST_KERNEL(np_check_list_bf16, NP_DT_BF16)
NP_CHECK_LIST_KERNEL(np_check_list_f8e4m3, NP_DT_F8E4M3)
NP_CHECK_LIST_KERNEL(np_check_list_f8e5m2, NP_DT_F8E5M2)
