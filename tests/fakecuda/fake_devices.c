/* fake_devices.c - two threads, one per device (FAKE_CUDA_DEVICES=2), as
 * nn.DataParallel's replicas or two pipeline stages run in one process:
 * each launches torch's fill and add on its own device's legacy stream
 * (the same NULL handle for both), ITERS times, and waits for its stream
 * every few launches.  At iteration BAD the fill on device 1 writes
 * +inf, which the add after it reads.
 *
 * With the agent preloaded and deferring (NANPROF_GPU_DEFER=8) the
 * waiting lists of both devices sit in one set, and a thread's flush
 * (its synchronisation, a launch that writes what a list reads) launches
 * the other device's lists too: each must go out in its own context,
 * or the fake refuses it as a GPU would, and counts a fault.
 * tests/integration/test_gpu_fake.sh runs it and reads the records.
 *
 *   fake_devices [ITERS [BAD]]     (defaults 200 and 150)
 * Prints "fake_devices: checks=C check_launches=L faults=F" last. */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fake_elementwise.h"

#define N 4096

static CUfunction add, fill;
static int iters = 200, bad = 150;
static pthread_barrier_t start;
static int failed;

static void check(CUresult r, const char *what)
{
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "fake_devices: %s failed: %d\n", what, (int)r);
		__atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
	}
}

/* One device's replica: fill a, b = a + a, ITERS times. */
static void *replica(void *arg)
{
	int dev = (int)(intptr_t)arg;
	CUdevice d;
	CUcontext ctx;
	CUdeviceptr a = 0, b = 0;
	check(cuDeviceGet(&d, dev), "cuDeviceGet");
	check(cuDevicePrimaryCtxRetain(&ctx, d), "cuDevicePrimaryCtxRetain");
	check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
	check(cuMemAlloc_v2(&a, N * sizeof(float)), "cuMemAlloc");
	check(cuMemAlloc_v2(&b, N * sizeof(float)), "cuMemAlloc");
	pthread_barrier_wait(&start);
	for (int i = 0; i < iters && !__atomic_load_n(&failed, __ATOMIC_RELAXED); i++) {
		int n = N;
		float v = dev == 1 && i == bad ? INFINITY : 1.0f, alpha = 1.0f;
		char *fd[1] = { (char *)a };
		void *fp[] = { &n, &v, fd };
		check(cuLaunchKernel(fill, 8, 1, 1, 128, 1, 1, 0, NULL, fp, NULL), "fill");
		char *ad[3] = { (char *)b, (char *)a, (char *)a };
		void *ap[] = { &n, &alpha, ad };
		check(cuLaunchKernel(add, 8, 1, 1, 128, 1, 1, 0, NULL, ap, NULL), "add");
		if (i % 5 == 4)
			check(cuStreamSynchronize(NULL), "cuStreamSynchronize");
	}
	check(cuCtxSynchronize(), "cuCtxSynchronize");
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		iters = atoi(argv[1]);
	if (argc > 2)
		bad = atoi(argv[2]);
	int count = 0;
	check(cuInit(0), "cuInit");
	check(cuDeviceGetCount(&count), "cuDeviceGetCount");
	if (count < 2) {
		fprintf(stderr, "fake_devices: needs FAKE_CUDA_DEVICES=2\n");
		return 2;
	}
	fake_register_add_fill(&add, &fill);
	/* the agent subscribes from its control thread: wait for it */
	for (int i = 0; i < 400 && !fake_cuda_subscribed() && getenv("LD_PRELOAD"); i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	pthread_t t[2];
	pthread_barrier_init(&start, NULL, 2);
	for (int k = 0; k < 2; k++)
		pthread_create(&t[k], NULL, replica, (void *)(intptr_t)k);
	for (int k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	/* the agent's drain thread polls every 0.5 ms: let it read the last */
	struct timespec ts = { 0, 300 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	struct fake_cuda_stats st;
	fake_cuda_stats(&st);
	printf("fake_devices: checks=%llu check_launches=%llu faults=%llu\n",
	       (unsigned long long)st.checks, (unsigned long long)st.check_launches,
	       (unsigned long long)st.faults);
	return failed;
}
