/* cuda_api.h - the CUDA driver and CUPTI functions the GPU agent calls,
 * looked up at run time.
 *
 * The agent is preloaded into every process of a job, most of which
 * never touch a GPU, and the build and test machines have no libcuda.so.1
 * at all: a NEEDED entry on libcuda or libcupti would stop the agent from
 * loading there.  So nothing is linked; np_cuda_open() finds libcuda only
 * if the process has already mapped it, and takes the libcupti.so.13 the
 * process has mapped (torch's own copy) before any other.
 */
#ifndef NP_CUDA_API_H
#define NP_CUDA_API_H

#include <cuda.h>
#include <cupti.h>

struct np_cuda_api {
	/* driver */
	__typeof__(&cuGetErrorName) get_error_name;
	__typeof__(&cuCtxGetCurrent) ctx_get_current;
	__typeof__(&cuCtxGetDevice) ctx_get_device;
	__typeof__(&cuCtxSetCurrent) ctx_set_current;
	__typeof__(&cuStreamGetCtx) stream_get_ctx;
	__typeof__(&cuDeviceGet) device_get;
	__typeof__(&cuDeviceGetCount) device_get_count;
	__typeof__(&cuPointerGetAttribute) pointer_get_attribute;
	__typeof__(&cuDevicePrimaryCtxRetain) device_primary_ctx_retain;
	__typeof__(&cuStreamIsCapturing) stream_is_capturing;
	__typeof__(&cuDeviceGetAttribute) device_get_attribute;
	__typeof__(&cuLaunchKernel) launch_kernel;
	__typeof__(&cuLibraryLoadData) library_load_data;
	__typeof__(&cuLibraryGetKernel) library_get_kernel;
	__typeof__(&cuKernelGetFunction) kernel_get_function;
	__typeof__(&cuFuncLoad) func_load;
	__typeof__(&cuFuncGetParamInfo) func_get_param_info;
	__typeof__(&cuKernelGetParamInfo) kernel_get_param_info;
	__typeof__(&cuMemAlloc_v2) mem_alloc;
	__typeof__(&cuMemsetD8Async) memset_d8_async;
	__typeof__(&cuStreamCreate) stream_create;
	__typeof__(&cuStreamSynchronize) stream_synchronize;
	__typeof__(&cuMemcpyDtoHAsync_v2) memcpy_dtoh_async;
	__typeof__(&cuThreadExchangeStreamCaptureMode) exchange_capture_mode;
	__typeof__(&cuMemHostAlloc) mem_host_alloc;
	__typeof__(&cuMemHostGetDevicePointer_v2) mem_host_get_device_pointer;
	__typeof__(&cuMemGetAddressRange_v2) mem_get_address_range;
	/* CUPTI */
	__typeof__(&cuptiSubscribe) subscribe;
	__typeof__(&cuptiUnsubscribe) unsubscribe;
	__typeof__(&cuptiEnableCallback) enable_callback;
	__typeof__(&cuptiGetResultString) get_result_string;
	__typeof__(&cuptiEnableDomain) enable_domain;   /* optional: NULL if absent */
	/* libstdc++ (torch has it mapped), for kernel names */
	char *(*cxa_demangle)(const char *, char *, size_t *, int *);
	const char *cupti_path;      /* where libcupti came from */
};

extern struct np_cuda_api np_cu;

/* Fills np_cu.  Returns 0, or -1 with *why set to a one-line reason
 * ("libcuda is not loaded", "no libcupti.so.13 found", "libcuda has no
 * cuFuncGetParamInfo: driver older than CUDA 12.4").  Never loads libcuda
 * itself.  Thread-safe to call once; later calls return the first
 * answer. */
int np_cuda_open(const char **why);

/* A driver error's name, for logs ("CUDA_ERROR_INVALID_VALUE"). */
const char *np_cu_err(CUresult r);
const char *np_cupti_err(CUptiResult r);

#endif
