/* kdecode_acc.c - batch norm's NCHW kernels (kdecode_priv.h), whose
 * outputs and inputs are tensor accessors passed by value.
 */
#include <string.h>
#include "kdecode_priv.h"

/* ---- accessor outputs ----
 *
 *  Normalization.cuh, <T input, stat, stat_acc, [bool train,] index_t>,
 *  tensors viewed as (N, C, rest), each output accessor 3-D:
 *   batch_norm_transform_input_kernel(input, output, mean, var_or_invstd,
 *       weight, bias, epsilon) and
 *   batch_norm_backward_elemt_kernel(input, grad_output, mean, invstd,
 *       weight, sum_dy, sum_dy_xmu, grad_input, norm_fct | (int const*
 *       numel, int world_size)): plane = blockIdx.x (returns past
 *       size(1)); batches from blockIdx.y * blockDim.y + threadIdx.y by
 *       blockDim.y * gridDim.y, features from threadIdx.x by blockDim.x:
 *       every element of the output's planes below gridDim.x.  Whole when
 *       gridDim.x >= size(1), and one contiguous range when the strides
 *       are (size(1) * size(2), size(2), 1) (the host's view of an NCHW
 *       output).  Parameter sizes checked against torch 2.14.1's layouts
 *       (8 + 6 * sizeof(index_t)).
 *  batch_norm_collect_statistics_kernel<VarTransform, input, stat,
 *      stat_acc, index_t>(input, epsilon, momentum, save_mean,
 *      save_transformed_var): plane = blockIdx.x, whose thread 0 writes
 *      save_mean[plane] and save_transformed_var[plane] (1-D accessors of
 *      stat_acc, a dummy when its data is NULL); the host launches one
 *      block per plane, input.size(1).  Whole when gridDim.x is their
 *      size and their stride 1.
 *  batch_norm_backward_kernel<input, stat, stat_acc, index_t>(input,
 *      grad_output, grad_input, grad_weight, grad_bias, weight,
 *      running_mean, running_var, save_mean, save_invstd, train, epsilon)
 *      (the fused backward batch_norm_backward_cuda runs for an NCHW
 *      input whose gradient is wanted): plane = blockIdx.x, one block per
 *      plane; its threads loop over every batch (threadIdx.y by
 *      blockDim.y) and feature (threadIdx.x by blockDim.x) of
 *      grad_input[.][plane][.] (a dummy when not wanted), and thread 0
 *      writes grad_weight[plane] and grad_bias[plane] (of stat, when
 *      their size is not 0).  Whole as the statistics kernel's.
 *  The input accessors these kernels read whole (transform's and the
 *  statistics' input, backward_elemt's input and grad_output) are reads
 *  for the generic tier: a convolution's output (cuDNN, undecodable) is
 *  first read by batch norm's statistics.
 *  batch_norm_backward_reduce_kernel<input, stat, stat_acc, index_t>
 *      (input, grad_output, mean, invstd, sum_dy, sum_dy_xmu, grad_weight,
 *      grad_bias) (SyncBatchNorm's backward, and batch norm's when the
 *      input's gradient is not wanted, or its types are mixed): plane =
 *      blockIdx.x, one block per plane, whose thread 0 writes each of
 *      sum_dy, sum_dy_xmu (stat_acc) and grad_weight, grad_bias (stat)
 *      whose size is not 0; mean and invstd, though not const, are only
 *      read.  Whole as the statistics kernel's; input and grad_output are
 *      reads.
 *  The gather of SyncBatchNorm's statistics stays unsized.
 */
static const struct {
	const char *name;
	int8_t nsig, param, index_targ;
	int8_t dtype_targ;      /* the 3-D output's type (with no 3-D output: the planes') */
	uint8_t planes;         /* bit p: a 1-D output of template argument plane_targ */
	int8_t plane_targ;
	uint8_t xin;            /* bit p: a 3-D input accessor of template argument in_targ */
	int8_t in_targ;
	uint8_t planes2;        /* bit p: a 1-D output of template argument plane2_targ */
	int8_t plane2_targ;
} acc_kernels[] = {
	{ "batch_norm_transform_input_kernel", 7, 1, 4, 0, 0, -1, 1 << 0, 0, 0, -1 },
	{ "batch_norm_backward_elemt_kernel", 9, 7, 3, 0, 0, -1, 1 << 0 | 1 << 1, 0, 0, -1 },
	{ "batch_norm_backward_elemt_kernel", 10, 7, 3, 0, 0, -1, 1 << 0 | 1 << 1, 0, 0, -1 },
	{ "batch_norm_collect_statistics_kernel", 5, -1, 4, 3, 1 << 3 | 1 << 4, 3, 1 << 0, 1,
	  0, -1 },
	{ "batch_norm_backward_kernel", 12, 2, 3, 0, 1 << 3 | 1 << 4, 1, 1 << 0 | 1 << 1, 0,
	  0, -1 },
	{ "batch_norm_backward_reduce_kernel", 8, -1, 3, 1, 1 << 6 | 1 << 7, 1, 1 << 0 | 1 << 1,
	  0, 1 << 4 | 1 << 5, 2 },
};

void kd_acc_classify(struct np_kinfo *ki, struct span name, struct span targs)
{
	int why = NP_KDT_UNKNOWN, in_why, d;
	size_t i;
	struct span it;

	for (i = 0; i < sizeof(acc_kernels) / sizeof(acc_kernels[0]); i++)
		if (span_eq(name, acc_kernels[i].name) && ki->nsig == acc_kernels[i].nsig)
			break;
	if (i == sizeof(acc_kernels) / sizeof(acc_kernels[0]) || !targs.p)
		return;
	it = trim(nth_item(targs, acc_kernels[i].index_targ));
	d = type_dtype(nth_item(targs, acc_kernels[i].dtype_targ), &why);
	if (d < 0 || !(span_eq(it, "int") || span_eq(it, "long")))
		return;
	ki->acc.param = acc_kernels[i].param;
	ki->acc.isz = span_eq(it, "int") ? 4 : 8;
	ki->acc.planes = acc_kernels[i].planes;
	ki->acc.plane_dtype = (int8_t)(acc_kernels[i].plane_targ < 0 ? -1 :
		type_dtype(nth_item(targs, acc_kernels[i].plane_targ), &in_why));
	if (ki->acc.plane_dtype < 0)
		ki->acc.planes = 0;
	ki->acc.planes2 = acc_kernels[i].planes2;
	ki->acc.plane2_dtype = (int8_t)(acc_kernels[i].plane2_targ < 0 ? -1 :
		type_dtype(nth_item(targs, acc_kernels[i].plane2_targ), &in_why));
	if (ki->acc.plane2_dtype < 0)
		ki->acc.planes2 = 0;
	ki->acc.xin = acc_kernels[i].xin;
	ki->in_dtype = type_dtype(nth_item(targs, acc_kernels[i].in_targ), &in_why);
	if (ki->in_dtype < 0)
		ki->acc.xin = 0;
	ki->dtype = d;
	ki->dtype_why = why;
}

/* The output of an accessor kernel (see "accessor outputs"). */
#define ACC_MAX_DIM (1ll << 31)  /* a size beyond: left unsized (the products below fit) */

/* The index_t at b + at. */
static int64_t acc_index(const unsigned char *b, uint32_t isz, uint32_t at)
{
	return isz == 4 ? (int64_t)np_i32_at(b, at) : (int64_t)np_u64_at(b, at);
}

/* A 3-D accessor's data (*ptr, 0 for a dummy) and its elements when its
 * strides are a contiguous (N, C, rest) tensor's and the grid's x covers
 * its planes; 0 if not whole, -1 if nothing is written (a size 0). */
static int64_t acc3_numel(const unsigned char *b, uint32_t isz, const struct np_klaunch *kl,
			  uint64_t *ptr)
{
	int64_t size[3], stride[3];

	*ptr = np_u64_at(b, 0);
	for (int k = 0; k < 3; k++) {
		size[k] = acc_index(b, isz, 8 + isz * (uint32_t)k);
		stride[k] = acc_index(b, isz, 8 + isz * (uint32_t)(3 + k));
	}
	if (size[0] <= 0 || size[1] <= 0 || size[2] <= 0)
		return -1;
	if (size[0] > ACC_MAX_DIM || size[1] > ACC_MAX_DIM || size[2] > ACC_MAX_DIM)
		return 0;
	if ((stride[2] == 1 || size[2] == 1) && (stride[1] == size[2] || size[1] == 1) &&
	    (stride[0] == size[1] * size[2] || size[0] == 1) && kl && kl->grid[0] >= size[1] &&
	    size[0] <= INT64_MAX / size[1] / size[2])
		return size[0] * size[1] * size[2];
	return 0;
}

int kd_acc_outputs(const struct np_kinfo *ki, const struct np_kparams *l,
			    void *const *kp, const struct np_klaunch *kl, struct emit *e)
{
	const struct np_kacc *a = &ki->acc;
	uint32_t acc1 = 8u + 2u * a->isz, acc3 = 8u + 6u * a->isz;
	struct np_kbuf *out;
	uint64_t ptr;

	if (ki->nsig < 0 || l->n != ki->nsig || (a->param < 0 && !a->planes && !a->planes2) ||
	    (a->param >= 0 && l->p[a->param].size != acc3))
		return 0;
	for (int p = 0; p < l->n; p++)
		if (((a->planes | a->planes2) >> p & 1) && l->p[p].size != acc1)
			return 0;
	if (a->param >= 0) {    /* the 3-D output */
		int64_t n = acc3_numel(kp[a->param], a->isz, kl, &ptr);
		if (ptr && n >= 0 && (out = emit_next(e))) {   /* not a dummy, something written */
			out->ptr = ptr;
			out->dtype = (enum np_dtype)ki->dtype;
			out->how = NP_KH_ACCESSOR;
			out->numel = (uint64_t)n;
		}
	}
	for (int p = 0; p < l->n; p++) {        /* the 1-D ones: an element a plane */
		const unsigned char *b = kp[p];
		int64_t size, stride;
		if (!((a->planes | a->planes2) >> p & 1))
			continue;
		size = acc_index(b, a->isz, 8);
		stride = acc_index(b, a->isz, 8 + a->isz);
		ptr = np_u64_at(b, 0);
		if (!ptr || size <= 0 || !(out = emit_next(e)))
			continue;       /* a dummy: nothing written there */
		out->ptr = ptr;
		out->dtype = (enum np_dtype)(a->planes >> p & 1 ? a->plane_dtype : a->plane2_dtype);
		out->how = NP_KH_ACCESSOR;
		out->numel = (stride == 1 || size == 1) && kl && kl->grid[0] == (uint64_t)size &&
					     kl->grid[1] == 1 && kl->grid[2] == 1 ?
				     (uint64_t)size : 0;
	}
	return e->n;
}

/* The 3-D input accessors a batch norm kernel reads whole (acc_kernels). */
int kd_acc_reads(const struct np_kinfo *ki, const struct np_kparams *l, void *const *kp,
			  const struct np_klaunch *kl, struct np_kread *out, int max)
{
	const struct np_kacc *a = &ki->acc;
	int n = 0;

	if (ki->nsig < 0 || l->n != ki->nsig || ki->in_dtype < 0)
		return 0;
	for (int p = 0; p < l->n && n < max; p++) {
		uint64_t ptr;
		int64_t m;
		if (!(a->xin >> p & 1) || l->p[p].size != 8u + 6u * a->isz)
			continue;
		m = acc3_numel(kp[p], a->isz, kl, &ptr);
		if (ptr && m > 0)
			out[n++] = (struct np_kread){ .ptr = ptr, .numel = (uint64_t)m,
						      .dtype = (enum np_dtype)ki->in_dtype };
	}
	return n;
}
