/* blas_workspace.c - each cuBLAS handle's workspace (blas_workspace.h). */
#include <pthread.h>
#include <stddef.h>
#include "blas_workspace.h"

static struct {
	const void *handle;
	uint64_t lo, hi;
} table[NP_BLAS_WS_HANDLES];
static unsigned used;          /* entries in table, never removed */
static uint64_t overflow;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int find_locked(const void *handle)
{
	for (unsigned i = 0; i < used; i++)
		if (table[i].handle == handle)
			return (int)i;
	return -1;
}

int np_blas_ws_set(const void *handle, uint64_t ptr, uint64_t size)
{
	int r = 0;
	pthread_mutex_lock(&lock);
	int i = find_locked(handle);
	if (i < 0 && used < NP_BLAS_WS_HANDLES)
		i = (int)used++;
	if (i >= 0) {
		table[i].handle = handle;
		/* no workspace, or one that wraps: nothing of the job's */
		int none = !ptr || !size || ptr + size < ptr;
		table[i].lo = none ? 0 : ptr;
		table[i].hi = none ? 0 : ptr + size;
	} else {
		overflow++;
		r = -1;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

int np_blas_ws_get(const void *handle, uint64_t *lo, uint64_t *hi)
{
	pthread_mutex_lock(&lock);
	int i = find_locked(handle), r = -1;
	if (i >= 0) {
		*lo = table[i].lo;
		*hi = table[i].hi;
		r = *lo < *hi;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

uint64_t np_blas_ws_overflow(void)
{
	pthread_mutex_lock(&lock);
	uint64_t n = overflow;
	pthread_mutex_unlock(&lock);
	return n;
}

void np_blas_ws_reset(void)
{
	pthread_mutex_lock(&lock);
	used = 0;
	overflow = 0;
	pthread_mutex_unlock(&lock);
}
