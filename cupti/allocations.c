/* allocations.c - the device memory the job holds (allocations.h). */
#include "allocations.h"

static struct np_ivmap allocations;

int np_alloc_init(void)
{
	return np_ivmap_init(&allocations, NP_IV_DEFAULT_SEGMENTS, NP_IV_DEFAULT_TENSORS);
}

/* The innermost known interval holding ptr: a tensor, else the device
 * allocation.  An allocation made before we subscribed is asked of the
 * driver once, then kept.  0, or -1 for memory the driver does not know. */
int np_alloc_of(uint64_t ptr, struct np_iv *iv)
{
	np_ivmap_lock(&allocations);
	int known = np_ivmap_lookup(&allocations, ptr, iv) == 0;
	np_ivmap_unlock(&allocations);
	if (known)
		return 0;
	CUdeviceptr base;
	size_t size;
	if (np_cu.mem_get_address_range(&base, &size, (CUdeviceptr)ptr) != CUDA_SUCCESS)
		return -1;
	*iv = (struct np_iv){ .base = base, .len = size, .kind = NP_IV_SEGMENT };
	np_ivmap_lock(&allocations);
	np_ivmap_insert(&allocations, NP_IV_SEGMENT, base, size, -1, 0);
	np_ivmap_unlock(&allocations);
	return 0;
}

/* Memory mapped into a reserved range (cuMemMap: PyTorch's expandable
 * segments grow a segment a chunk at a time).  Adjacent mapped chunks
 * become one segment, so a tensor across a chunk boundary can still be
 * checked: every byte of it is mapped.  Called with the map locked. */
static void mapped(uint64_t base, uint64_t len)
{
	struct np_iv iv;
	uint64_t lo = base, hi = base + len;
	if (base && np_ivmap_lookup(&allocations, base - 1, &iv) == 0 && iv.kind == NP_IV_SEGMENT &&
	    iv.base + iv.len == base)
		lo = iv.base;
	if (np_ivmap_lookup(&allocations, hi, &iv) == 0 && iv.kind == NP_IV_SEGMENT && iv.base == hi)
		hi = iv.base + iv.len;
	np_ivmap_insert(&allocations, NP_IV_SEGMENT, lo, hi - lo, -1, 0);
}

int np_alloc_on_call(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	const void *p = cb->functionParams;
	int ok = !cb->functionReturnValue || *(const CUresult *)cb->functionReturnValue == CUDA_SUCCESS;
	np_ivmap_lock(&allocations);
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2: {
		const cuMemAlloc_v2_params *a = p;
		if (cb->callbackSite == CUPTI_API_EXIT && ok && a->dptr)
			np_ivmap_insert(&allocations, NP_IV_SEGMENT, *a->dptr, a->bytesize, -1, 0);
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync: {
		const cuMemAllocAsync_params *a = p;
		if (cb->callbackSite == CUPTI_API_EXIT && ok && a->dptr)
			np_ivmap_insert(&allocations, NP_IV_SEGMENT, *a->dptr, a->bytesize, -1, 0);
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2:
		if (cb->callbackSite == CUPTI_API_ENTER)
			np_ivmap_remove(&allocations, NP_IV_SEGMENT,
					((const cuMemFree_v2_params *)p)->dptr);
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync:
		if (cb->callbackSite == CUPTI_API_ENTER)
			np_ivmap_remove(&allocations, NP_IV_SEGMENT,
					((const cuMemFreeAsync_params *)p)->dptr);
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuMemMap: {
		const cuMemMap_params *a = p;
		if (cb->callbackSite == CUPTI_API_EXIT && ok && a->size)
			mapped(a->ptr, a->size);
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuMemUnmap: {
		/* before the memory goes: no check may be bounded by it after.
		 * The whole segment holding any of it goes (a merged one too);
		 * what stays mapped is asked of the driver again when used. */
		const cuMemUnmap_params *a = p;
		if (cb->callbackSite == CUPTI_API_ENTER && a->size)
			np_ivmap_remove_range(&allocations, a->ptr, a->size);
		break;
	}
	}
	np_ivmap_unlock(&allocations);
	return cb->callbackSite == CUPTI_API_EXIT && ok;
}
