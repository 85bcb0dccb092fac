/* fake_dnn_user.c - a library that imports cuDNN but not the driver, as
 * libtorch_cuda.so does, which torch loads at its import while libcuda
 * comes only with the first CUDA call.  fdu_plan() does what torch's
 * first convolution does: makes a cuDNN handle (which opens libcuda, see
 * fake_cudnn.c) and at once builds the graph's execution plan, within
 * microseconds of libcuda's load, before any poll of the agent's could
 * see it.  The plan is then executed through libfakeops.so's imports
 * (fo_conv_adopt).  tests/integration/fake_gpu_job.py --conv-early. */
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

FAKE_DNN_EXPORT void *fdu_handle(void)
{
	return handle;
}

FAKE_DNN_EXPORT void *fdu_plan_of(void)
{
	return plan;
}
