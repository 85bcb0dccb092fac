/* fake_dnn_hidden.c - a convolution plan built where the agent cannot
 * see it, as torch's cached plans are when `nanprof attach` comes after
 * the job's first convolutions: every backend call of the plan's build
 * goes through cuDNN's own symbols (dlsym), past the agent's wrappers of
 * the callers' imports.  The executions (fo_conv, through libfakeops.so's
 * imports, fo_conv_adopt) and their variant packs are seen.
 * tests/integration/fake_gpu_job.py --conv-unseen. */
#include <dlfcn.h>
#include "fake_cudnn.h"

static cudnnStatus_t (*h_create)(int, cudnnBackendDescriptor_t *);
static cudnnStatus_t (*h_destroy)(cudnnBackendDescriptor_t);
static cudnnStatus_t (*h_finalize)(cudnnBackendDescriptor_t);
static cudnnStatus_t (*h_set)(cudnnBackendDescriptor_t, int, int, int64_t, const void *);
static cudnnStatus_t (*h_get)(cudnnBackendDescriptor_t const, int, int, int64_t, int64_t *,
			      void *);

/* fake_conv_graph.h's calls, through the pointers above */
#define cudnnBackendCreateDescriptor h_create
#define cudnnBackendDestroyDescriptor h_destroy
#define cudnnBackendFinalize h_finalize
#define cudnnBackendSetAttribute h_set
#define cudnnBackendGetAttribute h_get
#include "fake_conv_graph.h"

#define FAKE_DNN_EXPORT __attribute__((visibility("default")))

static cudnnHandle_t handle;

/* the handle fdh_conv_plan made its plan on */
FAKE_DNN_EXPORT void *fdh_handle(void)
{
	return handle;
}

/* the plan of a convolution of an x of dims[4] (fo_conv's), on a handle
 * of its own, or NULL */
FAKE_DNN_EXPORT void *fdh_conv_plan(const int64_t *dims)
{
	if (!handle && cudnnCreate(&handle))
		return NULL;
	void *lib = dlopen("libcudnn.so.9", RTLD_LAZY | RTLD_NOLOAD);
	if (!lib)
		return NULL;
	*(void **)&h_create = dlsym(lib, "cudnnBackendCreateDescriptor");
	*(void **)&h_destroy = dlsym(lib, "cudnnBackendDestroyDescriptor");
	*(void **)&h_finalize = dlsym(lib, "cudnnBackendFinalize");
	*(void **)&h_set = dlsym(lib, "cudnnBackendSetAttribute");
	*(void **)&h_get = dlsym(lib, "cudnnBackendGetAttribute");
	dlclose(lib);
	if (!h_create || !h_destroy || !h_finalize || !h_set || !h_get)
		return NULL;
	cudnnBackendDescriptor_t plan = fcg_conv_plan(handle, dims);
	return plan && !fcg_failed ? plan : NULL;
}
