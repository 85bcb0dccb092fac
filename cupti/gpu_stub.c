/* gpu_stub.c - the GPU side of an agent built without the CUDA toolkit
 * (no cupti.h or nvcc on the build machine): it says so, and the CPU
 * checks work as before.  `make` prints a warning when it uses this. */
#include <stddef.h>
#include "gpu.h"

void np_gpu_config_from_env(struct np_gpu_config *cfg)
{
	np_gpu_config_parse(NULL, cfg);
}

void np_gpu_config_parse(const char *s, struct np_gpu_config *cfg)
{
	(void)s;
	*cfg = (struct np_gpu_config){ .mode = NP_GPU_EVERY, .sample_every = 16 };
}

void np_gpu_config_set_defer(struct np_gpu_config *cfg, unsigned n)
{
	(void)cfg;
	(void)n;
}

int np_gpu_start(struct np_gpu_config *cfg, const char **why)
{
	(void)cfg;
	*why = "agent built without CUDA";
	return -1;
}

void np_gpu_stop(void)
{
}

int np_gpu_active(void)
{
	return 0;
}

int np_gpu_launches(void)
{
	return 0;
}

void np_gpu_track(const struct np_gpu_config *cfg)
{
	(void)cfg;
}

void np_gpu_poll(void)
{
}

int np_gpu_modules(void)
{
	return 0;
}

void np_gpu_own(int on)
{
	(void)on;
}

void np_gpu_step(uint32_t step)
{
	(void)step;
}

void np_gpu_module_done(void)
{
}

int np_gpu_wants(uint64_t ptr, uint64_t *seen_tag)
{
	(void)ptr;
	*seen_tag = 0;
	return 0;
}

int np_gpu_check_tensor(const struct np_gpu_tensor *t)
{
	(void)t;
	return 0;
}

int np_gpu_capture_relaxed(void)
{
	return -1;
}

void np_gpu_capture_restore(int mode)
{
	(void)mode;
}
