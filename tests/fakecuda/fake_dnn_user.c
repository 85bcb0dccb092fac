/* fake_dnn_user.c - a library that imports cuDNN but not the driver, as
 * libtorch_cuda.so does, which torch loads at its import while libcuda
 * comes only with the first CUDA call.  fdu_plan() does what torch's
 * first convolution does: makes a cuDNN handle (which opens libcuda, see
 * fake_cudnn.c) and at once builds the graph's execution plan, within
 * microseconds of libcuda's load, before any poll of the agent's could
 * see it.  The plan is then executed through libfakeops.so's imports
 * (fo_conv_adopt).  tests/integration/fake_gpu_job.py --conv-early. */
#include <dlfcn.h>
#include "fake_conv_graph.h"

#define FAKE_DNN_EXPORT __attribute__((visibility("default")))

static cudnnHandle_t handle;
static cudnnBackendDescriptor_t plan;

/* the plan of a convolution of an x of dims[4] (fo_conv's), or -1 */
FAKE_DNN_EXPORT int fdu_plan(const int64_t *dims)
{
	if (cudnnCreate(&handle))
		return -1;
	plan = fcg_conv_plan(handle, dims);
	return plan && !fcg_failed ? 0 : -1;
}

/* Whether this library's import of cudnnBackendCreateDescriptor points
 * elsewhere than at cuDNN's own: the agent's tracker is in place.  The
 * job waits for it as torch's import would give it time. */
FAKE_DNN_EXPORT int fdu_tracked(void)
{
	void *lib = dlopen("libcudnn.so.9", RTLD_LAZY | RTLD_NOLOAD);
	void *real = lib ? dlsym(lib, "cudnnBackendCreateDescriptor") : NULL;
	if (lib)
		dlclose(lib);
	/* the address taken through this library's own import slot */
	void *volatile mine = (void *)&cudnnBackendCreateDescriptor;
	return real && mine != real;
}

FAKE_DNN_EXPORT void *fdu_handle(void)
{
	return handle;
}

FAKE_DNN_EXPORT void *fdu_plan_of(void)
{
	return plan;
}
