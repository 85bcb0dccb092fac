/* grad_mode.c - the launching thread's autograd mode (see grad_mode.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <time.h>
#include "../agent/agent_report.h"
#include "grad_mode.h"

typedef _Bool (*mode_fn)(void);

static mode_fn grad_enabled;        /* c10::GradMode::is_enabled() */
static mode_fn inference_enabled;   /* c10::InferenceMode::is_enabled() */
static uint64_t last_try_ns;

static int find_c10(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *name = info->dlpi_name, *base = name ? strrchr(name, '/') : NULL;
	base = base ? base + 1 : name;
	if (!base || strncmp(base, "libc10.so", 9) != 0)
		return 0;
	*(const char **)arg = name;
	return 1;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void np_grad_mode_resolve(void)
{
	if (__atomic_load_n(&grad_enabled, __ATOMIC_ACQUIRE))
		return;
	uint64_t t = mono_ns();
	if (last_try_ns && t - last_try_ns < 1000000000ull)   /* once a second */
		return;
	last_try_ns = t;
	const char *path = NULL;
	if (!dl_iterate_phdr(find_c10, &path) || !path)
		return;
	void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return;
	mode_fn g = (mode_fn)dlsym(h, "_ZN3c108GradMode10is_enabledEv");
	mode_fn i = (mode_fn)dlsym(h, "_ZN3c1013InferenceMode10is_enabledEv");
	dlclose(h);   /* torch keeps it mapped: NOLOAD took only a reference */
	if (!g)
		return;
	/* inference first: a reader that sees grad_enabled sees both */
	__atomic_store_n(&inference_enabled, i, __ATOMIC_RELAXED);
	__atomic_store_n(&grad_enabled, g, __ATOMIC_RELEASE);
}

uint8_t np_grad_mode_now(void)
{
	mode_fn g = __atomic_load_n(&grad_enabled, __ATOMIC_ACQUIRE);
	if (!g)
		return 0;
	if (g())
		return NP_AMODE_KNOWN;
	mode_fn i = __atomic_load_n(&inference_enabled, __ATOMIC_RELAXED);
	return (uint8_t)(NP_AMODE_KNOWN | NP_AMODE_NO_GRAD |
			 (i && i() ? NP_AMODE_INFERENCE : 0));
}
