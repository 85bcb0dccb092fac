/* kdecode_rows.c - kernels that write whole rows (kdecode_priv.h): layer
 * norm, RMSNorm, group norm, softmax, batch norm's channels-last kernels,
 * sized from a row-length parameter and the grid.
 */
#include <string.h>
#include "kdecode_priv.h"

/* ---- row-sized outputs ----
 *
 * Layer norm, RMSNorm and softmax kernels give each block one row (or a
 * few) and write whole rows; the row length is a parameter, the rows come
 * from the grid.  Read from the sm_90 SASS of torch 2.14.1+cu130's
 * libtorch_cuda.so (cuobjdump -sass: which parameters and special
 * registers address each store) and from PyTorch's source, which it
 * matches (aten/src/ATen/native/cuda/layer_norm_kernel.cu,
 * PersistentSoftmax.cuh, SoftMax.cu).  rows = gridDim.x: no kernel here
 * reads blockIdx.y or loops over rows, so whatever grid the host chose,
 * the launch writes rows 0 .. gridDim.x - 1 exactly; launches with a 2-D
 * or 3-D grid are not PyTorch's and stay unsized.
 *
 *  layer_norm_kernel.cu, <T, T_ACC, bool rms_norm>; rms_norm = true is
 *  the RMSNorm instance, which computes no mean and leaves that pointer
 *  unwritten (it must not be checked: whatever is there is not its own):
 *   vectorized_layer_norm_kernel(int N, T_ACC eps, X, gamma, beta,
 *       T_ACC* mean, T_ACC* rstd, T* Y): Y + blockIdx.x * N, N / 4 vectors
 *       of 4 (vec_size 4 for every T, no tail: the host launches it only
 *       for N % 4 == 0, anything else would leave gaps); mean[blockIdx.x],
 *       rstd[blockIdx.x].  Y: rows x N, mean and rstd: rows.  For double
 *       the kernel only asserts (the host never launches it): unsized.
 *   LayerNormForwardCUDAKernel(int64_t, int64_t N, X, mean, rstd, gamma,
 *       beta, T* Y): Y[blockIdx.x * N + j], j < N.  rows x N.
 *   RowwiseMomentsCUDAKernel(int64_t, int64_t N, T_ACC eps, X, T_ACC* mean,
 *       T_ACC* rstd): mean and rstd [blockIdx.x].  rows each.
 *   (The first int64_t of these two is read by neither kernel.  Torch
 *   2.11's have none: (int64_t N, X, mean, rstd, gamma, beta, T* Y) and
 *   (int64_t N, T_ACC eps, X, mean, rstd), the same rows.)
 *   layer_norm_grad_input_kernel and _vectorized (dY, X, mean, rstd,
 *       gamma, T* dX, int N): dX + blockIdx.x * N, all N (the vectorized
 *       one has a tail loop).  rows x N.
 *
 *  group_norm_kernel.cu, one block per row (a group of a sample: rows =
 *  N x G, N = D x HxW; or a channel of a sample: rows = N x C):
 *   RowwiseMomentsCUDAKernel<T, T_ACC>(int64_t N, T eps, X, T* mean,
 *       T* rstd, T_ACC* mean_acc, T_ACC* rstd_acc): mean[blockIdx.x],
 *       rstd[blockIdx.x], and the _acc pair only when T_ACC is not T
 *       (an `if constexpr`: for float they are left as they are).  Torch
 *       2.11's <T> has no _acc pair.  X rows x N.
 *   ComputeInternalGradientsCUDAKernel<T>(int64_t HxW, dY, X, T_ACC* ds,
 *       T_ACC* db): ds and db [blockIdx.x]; dY and X rows x HxW.
 *  Both are what a convolution's output meets first in a diffusion UNet
 *  (conv, then GroupNorm): as decoded readers of X they let the generic
 *  tier name the convolution, not the statistics kernel.
 *
 *  SoftMax.cu, one block per row of `classes`, input and output advanced
 *  by blockIdx.x * classes:
 *   cunn_SoftMaxForward<ILP, ..>(out, in, int classes) and
 *   cunn_SoftMaxBackward<ILP, ..>(gradInput, output, gradOutput, int64_t
 *       classes): every element of the row, misaligned heads and tails
 *       included.  rows x classes.
 *   cunn_SoftMaxForwardSmem and cunn_SoftMaxBackwardSmem<ILP, ..>: ILP-wide
 *       vectors only (the host needs classes % ILP == 0).  rows x classes.
 *   cunn_SoftMaxForwardReg<in, acc, out, Epilogue, index_t, REG>: element
 *       threadIdx.x + k * blockDim.x, k < REG, if below classes: the row
 *       is whole only if blockDim.x * REG >= classes.  rows x classes.
 *
 *  PersistentSoftmax.cuh, softmax_warp_forward and softmax_warp_backward
 *  <in, out, acc, log2_elements, is_log_softmax, is_masked, WARP_SIZE_PARAM>
 *  (torch 2.11: no WARP_SIZE_PARAM, C10_WARP_SIZE, 32, in its place)
 *  (dst, src[, output], int batch_size, int stride, int element_count, ..):
 *  next = 1 << log2_elements, WARP_SIZE = min(next, WARP_SIZE_PARAM),
 *  WARP_BATCH = next <= 128 ? 2 : 1; warp (blockIdx.x, threadIdx.y) does
 *  rows first = (blockDim.y * blockIdx.x + threadIdx.y) * WARP_BATCH and
 *  the next, dst + first * stride + threadIdx.x, row i of the warp at
 *  + i * element_count, columns threadIdx.x + it * WARP_SIZE below
 *  element_count, it < next / WARP_SIZE, rows below batch_size.  Whole
 *  rows, back to back, only if stride == element_count (what the host
 *  passes), element_count <= next, blockDim.x == WARP_SIZE and the grid
 *  covers batch_size rows.  batch_size x element_count.
 *
 *  Normalization.cuh, batch norm's channels-last elementwise kernels
 *  (the tensor as reduction_size rows of `stride` channels):
 *   batch_norm_transform_input_channels_last_kernel<T, acc, layer, LOADS>
 *       (x, z, mean, inv_std, weight, shift, T* out, int reduction_size,
 *       int stride, bool fuse_relu) and
 *   batch_norm_backward_elemt_channels_last_kernel<LOADS, T, acc, layer>
 *       (dy, x, mean, inv_std, weight, sum_dy, sum_dy_xmu, [int const*
 *       numel,] T* grad_input, [acc norm_fct | int64_t world_size], int
 *       reduction_size, int stride): thread (c = blockIdx.x * blockDim.x
 *       + threadIdx.x, m = blockIdx.y * blockDim.y + threadIdx.y) writes
 *       [m * stride + c] and every blockDim.y * gridDim.y rows below it,
 *       for c < stride, m < reduction_size: whole only if gridDim.x *
 *       blockDim.x >= stride (the host's flexible_launch_configs makes
 *       it so).  reduction_size x stride.
 *  and its channels-last reductions, on the same grid:
 *   batch_norm_collect_statistics_channels_last_kernel<VarTransform, T,
 *       acc, LOADS>(x, acc* out_mean, acc* out_invstd, volatile acc*
 *       staging_data, int* semaphores, int reduction_size, int stride,
 *       acc epsilon) and
 *   batch_norm_backward_reduce_channels_last_kernel<LOADS, T, acc,
 *       layer>(x, dy, mean, inv_std, acc* sum_dy, acc* sum_dy_xmu, layer*
 *       grad_weight, layer* grad_bias, volatile acc* staging_data, int*
 *       semaphores, int reduction_size, int stride): each output's
 *       element c written by thread (c, threadIdx.y 0) of block row 0
 *       (gridDim.y 1) or of the column's last block to finish (the
 *       others leave partial results in staging_data, no output), for c
 *       < stride: whole when gridDim.x * blockDim.x >= stride, stride
 *       elements each (grad_weight and grad_bias NULL without an affine
 *       weight); x (and dy) reduction_size x stride.
 *
 *  layer_norm_kernel.cu, the weight and bias gradients (torch >= 2.7):
 *   GammaBetaBackwardCUDAKernelTemplate<T, T_ACC, block_dim_x,
 *       block_dim_y, rows_per_block_y, partial_reduction, aligned_grid,
 *       rms_norm>(int64_t M, int64_t N, dY, X, mean, rstd, T* dg, T* db):
 *       column thread_x = blockIdx.x * block_dim_x + threadIdx.x, below N
 *       (every column when aligned_grid, whose host makes N a multiple
 *       of block_dim_x), sums its M rows.  With partial_reduction (or a
 *       single thread row: blockDim.y and gridDim.y 1) each thread row
 *       thread_y = blockIdx.y * blockDim.y + threadIdx.y writes its own
 *       dg[thread_y * N + thread_x]: gridDim.y x blockDim.y rows of N
 *       (the host's dgamma_blocks, summed by a reduce_kernel after it, or
 *       dgamma itself when that is one row); else the block's rows are
 *       reduced and dg[column] written: N.  db likewise, except in the
 *       rms_norm instance (RMSNorm: no bias, db not written).  dg and db
 *       NULL when their gradient is not wanted.  Read whole only if the
 *       block is block_dim_x x block_dim_y and gridDim.x * block_dim_x
 *       covers N.  dY and X: M x N.
 *
 *  group_norm_kernel.cu, the weight and bias gradients, <T>(int64_t N,
 *  int64_t C, int64_t group, ..., T* dgamma, T* dbeta), each NULL when
 *  not wanted:
 *   GammaBetaBackwardCUDAKernel1 and GammaBeta1dBackwardCUDAKernel1:
 *       column c = blockIdx.x * blockDim.x + threadIdx.x, below C, sums
 *       its N rows: dgamma[c].
 *   GammaBetaBackwardCUDAKernel2 and GammaBeta1dBackwardCUDAKernel2
 *       (the host's block 32 x 16): a block reduces a tile of blockDim.x
 *       columns, written by threads (0, y) as columns blockIdx.x *
 *       blockDim.x + y and + blockDim.y: all of them only if blockDim.x
 *       is 2 * blockDim.y.
 *   C each when gridDim.x * blockDim.x covers C.  The 1d forms' dY and X
 *   (const T*, N x C) are reads; the others read ds and db, of the
 *   accumulate type the signature does not name.
 *
 * Group norm's other kernels, batch norm's other statistics kernels and
 * the spatial softmax stay unsized:
 * the launch checks do not see them, the guards do (writers.h).  Batch
 * norm's NCHW kernels take tensor accessors: "accessor outputs" below.
 */
static const struct {
	const char *name;
	uint8_t kind;
	int8_t nsig, count;
	uint8_t csize;          /* sizeof the count: 4, 8, 0 for either (index_t) */
	int8_t y, mean, rstd;
	uint8_t xin;            /* bit p: parameter p is an input of rows x N elements
				 * (X, dY, a softmax's input, output, gradient), read
				 * by the generic tier (np_kdecode_reads) */
	uint16_t outs;          /* BN_CL_CHAN and the weight gradients: bit p, a per-row output */
	uint16_t scratch;       /* a T* written that is no output (staging_data,
				 * semaphores) */
} row_kernels[] = {
	{ "vectorized_layer_norm_kernel", NP_KR_LN_VEC, 8, 0, 4, 7, 5, 6, 1 << 2, 0, 0 },
	{ "LayerNormForwardCUDAKernel", NP_KR_LN, 8, 1, 8, 7, -1, -1, 1 << 2, 0, 0 },
	{ "RowwiseMomentsCUDAKernel", NP_KR_LN, 6, 1, 8, -1, 4, 5, 1 << 3, 0, 0 },
	/* torch 2.11: without the unread leading int64_t */
	{ "LayerNormForwardCUDAKernel", NP_KR_LN, 7, 0, 8, 6, -1, -1, 1 << 1, 0, 0 },
	{ "RowwiseMomentsCUDAKernel", NP_KR_LN, 5, 0, 8, -1, 3, 4, 1 << 2, 0, 0 },
	{ "layer_norm_grad_input_kernel", NP_KR_LN, 7, 6, 4, 5, -1, -1, 1 << 0 | 1 << 1, 0, 0 },
	{ "layer_norm_grad_input_kernel_vectorized", NP_KR_LN, 7, 6, 4, 5, -1, -1, 1 << 0 | 1 << 1, 0, 0 },
	{ "cunn_SoftMaxForward", NP_KR_SM_BLOCK, 3, 2, 4, 0, -1, -1, 1 << 1, 0, 0 },
	{ "cunn_SoftMaxBackward", NP_KR_SM_BLOCK, 4, 3, 8, 0, -1, -1, 1 << 1 | 1 << 2, 0, 0 },
	{ "cunn_SoftMaxForwardSmem", NP_KR_SM_SMEM, 3, 2, 0, 0, -1, -1, 1 << 1, 0, 0 },
	{ "cunn_SoftMaxBackwardSmem", NP_KR_SM_SMEM, 4, 3, 8, 0, -1, -1, 1 << 1 | 1 << 2, 0, 0 },
	{ "cunn_SoftMaxForwardReg", NP_KR_SM_REG, 3, 2, 0, 0, -1, -1, 1 << 1, 0, 0 },
	{ "softmax_warp_forward", NP_KR_SM_WARP, 8, 2, 4, 0, -1, -1, 1 << 1, 0, 0 },
	{ "softmax_warp_backward", NP_KR_SM_WARP, 7, 3, 4, 0, -1, -1, 1 << 1 | 1 << 2, 0, 0 },
	/* x (and dy): reduction_size x stride, as the output */
	{ "batch_norm_transform_input_channels_last_kernel", NP_KR_BN_CL, 10, 7, 4, 6, -1, -1,
	  1 << 0, 0, 0 },
	{ "batch_norm_backward_elemt_channels_last_kernel", NP_KR_BN_CL, 11, 9, 4, 7, -1, -1,
	  1 << 0 | 1 << 1, 0, 0 },
	{ "batch_norm_backward_elemt_channels_last_kernel", NP_KR_BN_CL, 12, 10, 4, 8, -1, -1,
	  1 << 0 | 1 << 1, 0, 0 },
	/* stride outputs each; x (and dy) reduction_size x stride */
	{ "batch_norm_collect_statistics_channels_last_kernel", NP_KR_BN_CL_CHAN, 8, 5, 4, -1, -1,
	  -1, 1 << 0, 1 << 1 | 1 << 2, 1 << 3 | 1 << 4 },
	{ "batch_norm_backward_reduce_channels_last_kernel", NP_KR_BN_CL_CHAN, 12, 10, 4, -1, -1,
	  -1, 1 << 0 | 1 << 1, 1 << 4 | 1 << 5 | 1 << 6 | 1 << 7, 1 << 8 | 1 << 9 },
	/* dg and db (db in mean's place: the RMSNorm instance writes none);
	 * dY and X M x N */
	{ "GammaBetaBackwardCUDAKernelTemplate", NP_KR_GAMMA_BETA, 8, 1, 8, -1, 7, -1,
	  1 << 2 | 1 << 3, 1 << 6, 0 },
	/* group norm's: dgamma and dbeta, C each; the 1d forms' dY and X */
	{ "GammaBetaBackwardCUDAKernel1", NP_KR_GN_GAMMA_BETA, 9, 1, 8, -1, -1, -1, 0,
	  1 << 7 | 1 << 8, 0 },
	{ "GammaBetaBackwardCUDAKernel2", NP_KR_GN_GAMMA_BETA, 9, 1, 8, -1, -1, -1, 0,
	  1 << 7 | 1 << 8, 0 },
	{ "GammaBeta1dBackwardCUDAKernel1", NP_KR_GN_GAMMA_BETA, 9, 1, 8, -1, -1, -1,
	  1 << 3 | 1 << 4, 1 << 7 | 1 << 8, 0 },
	{ "GammaBeta1dBackwardCUDAKernel2", NP_KR_GN_GAMMA_BETA, 9, 1, 8, -1, -1, -1,
	  1 << 3 | 1 << 4, 1 << 7 | 1 << 8, 0 },
	/* group norm's statistics (torch 2.14: T's, and T_ACC's when they
	 * differ) and its backward's per-(n, c) sums ds, db; X (dY) rows x N */
	{ "RowwiseMomentsCUDAKernel", NP_KR_GN, 7, 0, 8, -1, 3, 4, 1 << 2, 1 << 5 | 1 << 6, 0 },
	/* torch 2.11's <T>: layer norm's 2.11 statistics kernel's shape, its
	 * mean and rstd of T */
	{ "RowwiseMomentsCUDAKernel", NP_KR_GN, 5, 0, 8, -1, 3, 4, 1 << 2, 0, 0 },
	{ "ComputeInternalGradientsCUDAKernel", NP_KR_GN, 5, 0, 8, -1, 3, 4, 1 << 1 | 1 << 2, 0,
	  0 },
};

/* *out from row_kernels[i] for this kernel: 0, or -1 when its template
 * or signature is not the one that row read. */
static int rows_from(size_t i, const struct np_kinfo *ki, struct span name, struct span targs,
		     struct np_krows *out)
{
	struct np_krows r = { 0 };
	int v, w;

	r.kind = row_kernels[i].kind;
	r.count = row_kernels[i].count;
	r.csize = row_kernels[i].csize;
	r.y = row_kernels[i].y;
	r.mean = row_kernels[i].mean;
	r.rstd = row_kernels[i].rstd;
	r.outs = row_kernels[i].outs;
	r.scratch = row_kernels[i].scratch;
	/* the outputs (and scratch) must be the T* the signature names,
	 * nothing else */
	for (int p = 0; p < ki->nsig; p++) {
		int written = p == r.y || p == r.mean || p == r.rstd || (r.outs >> p & 1) ||
			      (r.scratch >> p & 1);
		if (written != (ki->sig[p].kind == NP_KP_OUT_PTR) ||
		    (p == r.count && ki->sig[p].kind != NP_KP_SCALAR))
			return -1;
		/* and the inputs const floating T* */
		if ((row_kernels[i].xin >> p & 1) && ki->sig[p].kind == NP_KP_IN_PTR &&
		    ki->sig[p].dtype >= 0)
			r.xin |= (uint8_t)(1u << p);
	}
	switch (r.kind) {
	case NP_KR_LN_VEC:
	case NP_KR_LN:
		if (span_eq(nth_item(targs, 2), "true"))
			r.rms = 1;
		else if (!span_eq(nth_item(targs, 2), "false"))
			return -1;
		if (r.kind == NP_KR_LN_VEC && span_eq(nth_item(targs, 0), "double"))
			return -1;
		break;
	case NP_KR_SM_BLOCK:
	case NP_KR_BN_CL:
	case NP_KR_BN_CL_CHAN:
		break;
	case NP_KR_GN:                  /* <T, T_ACC> or <T> */
		if (nth_item(targs, 2).p)
			return -1;
		/* T_ACC's copies are written only when T_ACC is not T: else
		 * they are left as they are (not checked) */
		if (r.outs && spans_eq(nth_item(targs, 0), nth_item(targs, 1)))
			r.scratch |= r.outs, r.outs = 0;
		break;
	case NP_KR_GAMMA_BETA:  /* <T, T_ACC, bx, by, rows_per_block_y, partial, aligned, rms> */
		v = targ_int(targs, 2);
		w = targ_int(targs, 3);
		if (v < 1 || v > 64 || w < 1 || w > 64 || v * w > 1024 ||
		    !(span_eq(nth_item(targs, 5), "true") || span_eq(nth_item(targs, 5), "false")) ||
		    !(span_eq(nth_item(targs, 7), "true") || span_eq(nth_item(targs, 7), "false")))
			return -1;
		r.warp = (uint8_t)v;
		r.unit = (uint8_t)w;
		r.partial = span_eq(nth_item(targs, 5), "true");
		r.rms = span_eq(nth_item(targs, 7), "true");
		break;
	case NP_KR_GN_GAMMA_BETA:       /* <T>; Kernel2 writes a tile per block */
		if (nth_item(targs, 1).p)
			return -1;
		r.unit = name.p[name.n - 1] == '2' ? 2 : 1;
		break;
	case NP_KR_SM_SMEM:             /* <ILP, ..> */
	case NP_KR_SM_REG:              /* <.., index_t, REG> */
		v = targ_int(targs, r.kind == NP_KR_SM_SMEM ? 0 : 5);
		if (v < 1 || v > 64)
			return -1;
		r.unit = (uint8_t)v;
		break;
	case NP_KR_SM_WARP:             /* <.., log2_elements, .., .., WARP_SIZE_PARAM> */
		v = targ_int(targs, 3);
		w = nth_item(targs, 6).p ? targ_int(targs, 6) : 32;     /* torch 2.11 */
		if (v < 0 || v > 14 || w < 1 || w > 64 || (w & (w - 1)))
			return -1;
		r.unit = (uint8_t)v;
		r.warp = (uint8_t)w;
		break;
	}
	*out = r;
	return 0;
}

/* Fills ki->rows from the first row of the table above that reads this
 * kernel (its name and parameter count, then its template: two rows may
 * share both, group norm's and layer norm's statistics in torch 2.11);
 * leaves NP_KR_NONE (unsized) when none does. */
void kd_rows_classify(struct np_kinfo *ki, struct span name, struct span targs)
{
	if (!targs.p)
		return;
	for (size_t i = 0; i < sizeof(row_kernels) / sizeof(row_kernels[0]); i++)
		if (span_eq(name, row_kernels[i].name) && ki->nsig == row_kernels[i].nsig &&
		    rows_from(i, ki, name, targs, &ki->rows) == 0)
			return;
}

/* The rows and row length a row kernel's launch writes (see "row-sized
 * outputs"): *rows x *cols elements of output y and of the inputs read
 * whole, *each of every other output (mean and rstd: *rows).  All 0 when
 * the launch does not let us know (no grid, a grid or arguments the
 * kernel's host never gives it).  Returns -1 when the layout does not fit
 * the name. */
int kd_row_extent(const struct np_krows *r, const struct np_kparams *l, void *const *kp,
		      const struct np_klaunch *kl, uint64_t *rows, uint64_t *cols, uint64_t *each)
{
	const uint32_t *g = kl ? kl->grid : NULL, *b = kl ? kl->block : NULL;
	int64_t n, batch, stride;
	uint32_t next, ws, wb;

	*rows = *cols = *each = 0;
	if (r->csize ? l->p[r->count].size != r->csize :
		       l->p[r->count].size != 4 && l->p[r->count].size != 8)
		return -1;
	if (r->kind == NP_KR_SM_WARP &&
	    (l->p[r->count + 1].size != 4 || l->p[r->count + 2].size != 4))
		return -1;
	if (r->kind == NP_KR_BN_CL || r->kind == NP_KR_BN_CL_CHAN) {
		/* a 2-D grid: channels x, rows y */
		if (l->p[r->count + 1].size != 4)
			return -1;
		n = int_at(l, kp, r->count);
		stride = int_at(l, kp, r->count + 1);
		if (!g || !g[0] || !b[0] || n <= 0 || stride <= 0 ||
		    (uint64_t)g[0] * b[0] < (uint64_t)stride)
			return 0;
		/* the reductions' outputs are a row of channels */
		*rows = *each = (uint64_t)(r->kind == NP_KR_BN_CL ? n : stride);
		*cols = (uint64_t)(r->kind == NP_KR_BN_CL ? stride : n);
		return 0;
	}
	if (r->kind == NP_KR_GAMMA_BETA || r->kind == NP_KR_GN_GAMMA_BETA) {
		/* weight gradients, (int64_t M, int64_t N, ..): N columns on x,
		 * each summing M rows */
		if (l->p[0].size != 8)
			return -1;
		batch = int_at(l, kp, 0);
		n = int_at(l, kp, 1);
		if (!g || batch <= 0 || n <= 0 || !b[0] || b[2] != 1 || g[2] != 1 ||
		    (uint64_t)g[0] * b[0] < (uint64_t)n || (uint64_t)batch > UINT64_MAX / (uint64_t)n)
			return 0;
		if (r->kind == NP_KR_GN_GAMMA_BETA) {
			/* one block row; Kernel2's thread rows write its tile's columns */
			if (g[1] != 1 || (r->unit == 2 && b[0] != 2u * b[1]))
				return 0;
			*each = (uint64_t)n;
		} else {
			/* the template's block; a row of N per thread row when they
			 * are not reduced */
			if (b[0] != r->warp || b[1] != r->unit || !g[1] ||
			    (uint64_t)n * g[1] * b[1] > (1ull << 48))
				return 0;
			*each = r->partial || (b[1] == 1 && g[1] == 1) ?
					(uint64_t)n * g[1] * b[1] : (uint64_t)n;
		}
		*rows = (uint64_t)n;
		*cols = (uint64_t)batch;
		return 0;
	}
	if (!g || !g[0] || g[1] != 1 || g[2] != 1 || !b[0] || !b[1] || b[2] != 1)
		return 0;
	n = int_at(l, kp, r->count);
	if (n <= 0)
		return 0;
	switch (r->kind) {
	case NP_KR_LN_VEC:
		if (n % 4)
			return 0;
		break;
	case NP_KR_SM_SMEM:
		if (n % r->unit)
			return 0;
		break;
	case NP_KR_SM_REG:
		if (b[1] != 1 || (uint64_t)b[0] * r->unit < (uint64_t)n)
			return 0;
		break;
	case NP_KR_SM_WARP:
		batch = n;
		stride = int_at(l, kp, r->count + 1);
		n = int_at(l, kp, r->count + 2);
		next = 1u << r->unit;
		ws = next < r->warp ? next : r->warp;
		wb = next <= 128 ? 2 : 1;
		/* the kernel's offsets are int: past INT32_MAX it wraps */
		if (n <= 0 || n > next || stride != n || b[0] != ws ||
		    (uint64_t)g[0] * b[1] * wb < (uint64_t)batch ||
		    (uint64_t)batch * (uint64_t)n > INT32_MAX)
			return 0;
		*rows = *each = (uint64_t)batch;
		*cols = (uint64_t)n;
		return 0;
	}
	if ((uint64_t)n > UINT64_MAX / g[0])
		return 0;
	*rows = *each = g[0];
	*cols = (uint64_t)n;
	return 0;
}

int kd_rows_reads(const struct np_kinfo *ki, const struct np_kparams *l, void *const *kp,
		  const struct np_klaunch *kl, struct np_kread *out, int max)
{
	uint64_t rows = 0, cols = 0, each;
	int n = 0;

	if (ki->nsig != l->n || kd_row_extent(&ki->rows, l, kp, kl, &rows, &cols, &each) ||
	    !rows || !cols)
		return 0;
	for (int i = 0; i < ki->nsig && n < max; i++) {
		uint64_t p = ki->rows.xin >> i & 1 && l->p[i].size == 8 ? word_at(kp, i, 0) : 0;
		if (p)
			out[n++] = (struct np_kread){ .ptr = p, .numel = rows * cols,
						      .dtype = (enum np_dtype)ki->sig[i].dtype };
	}
	return n;
}
