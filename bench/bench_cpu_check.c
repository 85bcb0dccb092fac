/* bench_cpu_check.c - throughput of the agent's CPU finite check, one
 * thread, per dtype, vector and scalar code, on a 64 MiB buffer of finite
 * values (the common case: nothing to report), and the vector code on one
 * of NaNs, what every tensor of a job can hold after its first NaN.
 *   make bench-check */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../agent/cpu_check.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(void)
{
	size_t bytes = 64u << 20;
	uint8_t *buf = malloc(bytes);
	if (!buf)
		return 1;
	for (size_t i = 0; i < bytes; i++)   /* finite in every format: top bits clear */
		buf[i] = (uint8_t)(i * 37) & 0x3f;
	static const char *const names[] = { "f32", "f64", "f16", "bf16", "f8e4m3", "f8e5m2" };
	printf("cpu check, 64 MiB, one thread, impl %s\n", np_cpu_check_impl());
	uint8_t *nans = malloc(bytes);
	if (!nans)
		return 1;
	memset(nans, 0xff, bytes);   /* all ones: a NaN in every format */
	printf("| dtype | vector GB/s | scalar GB/s | vector GB/s, all NaN |\n|---|---:|---:|---:|\n");
	for (int t = 0; t < NP_DT_MAX; t++) {
		size_t n = bytes / np_dtype_size((enum np_dtype)t);
		struct np_check_result r;
		double best_v = 1e9, best_s = 1e9, best_n = 1e9;
		for (int rep = 0; rep < 5; rep++) {
			double t0 = now();
			np_cpu_check((enum np_dtype)t, buf, n, &r);
			double t1 = now();
			np_cpu_check_scalar((enum np_dtype)t, buf, n, &r);
			double t2 = now();
			if (t1 - t0 < best_v)
				best_v = t1 - t0;
			if (t2 - t1 < best_s)
				best_s = t2 - t1;
			np_cpu_check((enum np_dtype)t, nans, n, &r);
			if (now() - t2 < best_n)
				best_n = now() - t2;
			if (r.nan != n)
				return 2;   /* the check must see every NaN */
		}
		printf("| %s | %.1f | %.1f | %.1f |\n", names[t], bytes / best_v / 1e9,
		       bytes / best_s / 1e9, bytes / best_n / 1e9);
	}
	free(nans);
	free(buf);
	return 0;
}
