/* driver_args.c - what a driver call's arguments say (driver_args.h). */
#include <string.h>
#include "driver_args.h"

#define LAUNCH(a, stream_, extra_)                                                  \
	((struct np_launch){ (a)->f, (stream_), (a)->kernelParams, (extra_),             \
			  { (a)->gridDimX, (a)->gridDimY, (a)->gridDimZ },            \
			  { (a)->blockDimX, (a)->blockDimY, (a)->blockDimZ } })

int np_launch_args(CUpti_CallbackId cbid, const void *p, struct np_launch *l)
{
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
		const cuLaunchKernel_params *a = p;
		*l = LAUNCH(a, a->hStream, a->extra);
		return 0;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
		const cuLaunchCooperativeKernel_params *a = p;
		*l = LAUNCH(a, a->hStream, NULL);
		return 0;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
		const cuLaunchKernelEx_params *a = p;
		if (!a->config)
			return -1;
		const CUlaunchConfig *k = a->config;
		*l = (struct np_launch){ a->f, k->hStream, a->kernelParams, a->extra,
				      { k->gridDimX, k->gridDimY, k->gridDimZ },
				      { k->blockDimX, k->blockDimY, k->blockDimZ } };
		return 0;
	}
	}
	return -1;
}

/* Arguments packed in `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER) as the
 * kernelParams array the decoders read: a pointer to each parameter. */
void **np_params_from_extra(void **extra, const struct np_kparams *layout, void **out)
{
	char *buf = NULL;
	size_t size = 0;
	for (int i = 0; extra && extra[i] != CU_LAUNCH_PARAM_END && i < 16; i += 2) {
		if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			buf = extra[i + 1];
		else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1])
			size = *(size_t *)extra[i + 1];
	}
	if (!buf)
		return NULL;
	for (int k = 0; k < layout->n; k++) {
		if (layout->p[k].offset + layout->p[k].size > size)
			return NULL;
		out[k] = buf + layout->p[k].offset;
	}
	return out;
}

int np_driver_layout(uint64_t key, struct np_kparams *out, void *arg)
{
	(void)arg;
	CUfunction f = (CUfunction)key;
	size_t off, size;
	/* f may be a CUkernel cast to a CUfunction: then only
	 * cuKernelGetParamInfo knows it */
	int as_kernel = np_cu.func_get_param_info(f, 0, &off, &size) != CUDA_SUCCESS;
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < NP_KD_MAX_PARAMS; i++) {
		CUresult r = as_kernel ? np_cu.kernel_get_param_info((CUkernel)f, i, &off, &size)
				       : np_cu.func_get_param_info(f, i, &off, &size);
		if (r != CUDA_SUCCESS)
			return i > 0 ? 0 : -1;   /* past the last parameter */
		out->p[i].offset = (uint32_t)off;
		out->p[i].size = (uint32_t)size;
		out->n = i + 1;
	}
	return 0;
}

int np_copy_args(CUpti_CallbackId cbid, const void *p, uint64_t *dst, uint64_t *src,
		 size_t *bytes, CUstream *stream)
{
	*stream = NULL;         /* the synchronous copies: the legacy stream */
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2_ptds: {
		const cuMemcpyDtoD_v2_params *a = p;
		*dst = a->dstDevice, *src = a->srcDevice, *bytes = a->ByteCount;
		return 0;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2_ptsz: {
		const cuMemcpyDtoDAsync_v2_params *a = p;
		*dst = a->dstDevice, *src = a->srcDevice, *bytes = a->ByteCount;
		*stream = a->hStream;
		return 0;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpy:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpy_ptds: {
		const cuMemcpy_params *a = p;
		*dst = a->dst, *src = a->src, *bytes = a->ByteCount;
		return 0;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz: {
		const cuMemcpyAsync_params *a = p;
		*dst = a->dst, *src = a->src, *bytes = a->ByteCount;
		*stream = a->hStream;
		return 0;
	}
	/* between devices: torch's caching allocator's copy of expandable
	 * segments between devices without P2P */
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeer:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeer_ptds: {
		const cuMemcpyPeer_params *a = p;
		*dst = a->dstDevice, *src = a->srcDevice, *bytes = a->ByteCount;
		return 0;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync_ptsz: {
		const cuMemcpyPeerAsync_params *a = p;
		*dst = a->dstDevice, *src = a->srcDevice, *bytes = a->ByteCount;
		*stream = a->hStream;
		return 0;
	}
	}
	return -1;
}
