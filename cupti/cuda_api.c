/* cuda_api.c - run-time lookup of libcuda, libcupti and the demangler
 * (see cuda_api.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_api.h"

struct np_cuda_api np_cu;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *open_why = "not tried";
static int open_rc = -1;

/* ---- finding libcupti ---- */

struct found {
	const char *prefix;     /* basename prefix wanted */
	char path[512];
};

static int find_mapped(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct found *f = arg;
	const char *name = info->dlpi_name, *base = name ? strrchr(name, '/') : NULL;
	base = base ? base + 1 : name;
	if (!base || strncmp(base, f->prefix, strlen(f->prefix)) != 0)
		return 0;
	snprintf(f->path, sizeof(f->path), "%s", name);
	return 1;
}

/* The directory of a mapped library ("libtorch_cuda.so"), or "". */
static void mapped_dir(const char *prefix, char *dir, size_t n)
{
	struct found f = { .prefix = prefix };
	dir[0] = 0;
	if (!dl_iterate_phdr(find_mapped, &f))
		return;
	char *slash = strrchr(f.path, '/');
	if (slash) {
		*slash = 0;
		snprintf(dir, n, "%s", f.path);
	}
}

static void *try_open(const char *path, const char **used)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h)
		*used = strdup(path);
	return h;
}

/* Torch's wheels carry their own CUPTI: it must be that one, since only
 * one CUPTI can be in a process.  Order: one already mapped; the user's
 * NANPROF_CUPTI; next to torch's libraries (the nvidia/cu13 or
 * nvidia/cuda_cupti wheels); the toolkit; the loader's search path. */
static void *open_cupti(const char **used)
{
	struct found f = { .prefix = "libcupti.so" };
	void *h;
	if (dl_iterate_phdr(find_mapped, &f) && (h = dlopen(f.path, RTLD_NOW | RTLD_NOLOAD))) {
		*used = strdup(f.path);
		return h;
	}
	const char *env = getenv("NANPROF_CUPTI");
	if (env && *env && (h = try_open(env, used)))
		return h;
	char dir[512], path[700];
	mapped_dir("libtorch_cuda.so", dir, sizeof(dir));
	static const char *const rel[] = {
		"../../nvidia/cu13/lib/libcupti.so.13",
		"../../nvidia/cuda_cupti/lib/libcupti.so.13",
		"../../nvidia/cuda_cupti/lib/libcupti.so.12",
	};
	for (size_t i = 0; dir[0] && i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, rel[i]);
		if ((h = try_open(path, used)))
			return h;
	}
	static const char *const sys[] = {
		"/usr/local/cuda/lib64/libcupti.so.13",
		"/usr/local/cuda/lib/libcupti.so.13",
		"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
		"libcupti.so.13",
	};
	for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++)
		if ((h = try_open(sys[i], used)))
			return h;
	return NULL;
}

/* ---- symbols ---- */

#define NEED(lib, field, sym)                                        \
	do {                                                         \
		*(void **)&np_cu.field = dlsym(lib, sym);            \
		if (!np_cu.field) {                                  \
			open_why = "missing " sym;                   \
			return -1;                                   \
		}                                                    \
	} while (0)

static int load_driver(void *cu)
{
	NEED(cu, get_error_name, "cuGetErrorName");
	NEED(cu, ctx_get_current, "cuCtxGetCurrent");
	NEED(cu, ctx_get_device, "cuCtxGetDevice");
	NEED(cu, ctx_set_current, "cuCtxSetCurrent");
	NEED(cu, stream_get_ctx, "cuStreamGetCtx");
	NEED(cu, device_get, "cuDeviceGet");
	NEED(cu, device_get_count, "cuDeviceGetCount");
	NEED(cu, pointer_get_attribute, "cuPointerGetAttribute");
	NEED(cu, device_primary_ctx_retain, "cuDevicePrimaryCtxRetain");
	NEED(cu, stream_is_capturing, "cuStreamIsCapturing");
	NEED(cu, device_get_attribute, "cuDeviceGetAttribute");
	NEED(cu, launch_kernel, "cuLaunchKernel");
	NEED(cu, library_load_data, "cuLibraryLoadData");
	NEED(cu, library_get_kernel, "cuLibraryGetKernel");
	NEED(cu, kernel_get_function, "cuKernelGetFunction");
	NEED(cu, func_load, "cuFuncLoad");
	NEED(cu, func_get_param_info, "cuFuncGetParamInfo");
	NEED(cu, kernel_get_param_info, "cuKernelGetParamInfo");
	NEED(cu, mem_alloc, "cuMemAlloc_v2");
	NEED(cu, memset_d8_async, "cuMemsetD8Async");
	NEED(cu, stream_create, "cuStreamCreate");
	NEED(cu, stream_synchronize, "cuStreamSynchronize");
	NEED(cu, memcpy_dtoh_async, "cuMemcpyDtoHAsync_v2");
	NEED(cu, exchange_capture_mode, "cuThreadExchangeStreamCaptureMode");
	NEED(cu, mem_host_alloc, "cuMemHostAlloc");
	NEED(cu, mem_host_get_device_pointer, "cuMemHostGetDevicePointer_v2");
	NEED(cu, mem_get_address_range, "cuMemGetAddressRange_v2");
	return 0;
}

static int load_cupti(void *cp)
{
	NEED(cp, subscribe, "cuptiSubscribe");
	NEED(cp, unsubscribe, "cuptiUnsubscribe");
	NEED(cp, enable_callback, "cuptiEnableCallback");
	NEED(cp, get_result_string, "cuptiGetResultString");
	/* only for NANPROF_GPU_TRACE_ERRORS: its absence costs nothing else */
	*(void **)&np_cu.enable_domain = dlsym(cp, "cuptiEnableDomain");
	return 0;
}

/* Python loads torch with RTLD_LOCAL, and libstdc++ comes in with it:
 * its symbols are not in the global scope, so ask the library itself
 * (loading it if nothing has: kernel names without it stay mangled,
 * and no kernel is decoded). */
static char *(*find_demangler(void))(const char *, char *, size_t *, int *)
{
	void *f = dlsym(RTLD_DEFAULT, "__cxa_demangle");
	void *h = f ? NULL : dlopen("libstdc++.so.6", RTLD_NOW | RTLD_NOLOAD);
	if (!f && !h)
		h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
	if (!f && h)
		f = dlsym(h, "__cxa_demangle");
	return (char *(*)(const char *, char *, size_t *, int *))f;
}

static void open_once(void)
{
	/* RTLD_NOLOAD: a process that has not loaded libcuda is not a GPU
	 * job (yet), and loading the driver ourselves would change it. */
	void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!cu) {
		open_why = "libcuda is not loaded";
		return;
	}
	if (load_driver(cu))
		return;
	const char *used = NULL;
	void *cp = open_cupti(&used);
	if (!cp) {
		open_why = "no libcupti.so.13 found (set NANPROF_CUPTI to its path)";
		return;
	}
	if (load_cupti(cp))
		return;
	np_cu.cupti_path = used;
	np_cu.cxa_demangle = find_demangler();
	open_why = NULL;
	open_rc = 0;
}

int np_cuda_open(const char **why)
{
	pthread_once(&once, open_once);
	if (why)
		*why = open_why;
	return open_rc;
}

const char *np_cu_err(CUresult r)
{
	const char *s = NULL;
	if (!np_cu.get_error_name || np_cu.get_error_name(r, &s) != CUDA_SUCCESS || !s)
		return "CUDA error";
	return s;
}

const char *np_cupti_err(CUptiResult r)
{
	const char *s = NULL;
	if (!np_cu.get_result_string || np_cu.get_result_string(r, &s) != CUPTI_SUCCESS || !s)
		return "CUPTI error";
	return s;
}
