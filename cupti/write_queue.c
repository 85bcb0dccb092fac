/* write_queue.c - unchecked writes, posted for the drain thread
 * (write_queue.h). */
#include <pthread.h>
#include <time.h>
#include "inflight.h"
#include "write_queue.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct np_wq_item ring[NP_WQ_CAP];
static unsigned head, len;   /* oldest at head */
static uint64_t lost;

int np_wq_post(const uint64_t *lo, const uint64_t *hi, const uint64_t *src, const uint8_t *whole,
	       int n, uint64_t stream)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	int posted = 0;
	pthread_mutex_lock(&lock);
	uint64_t order = np_inflight_tag(0);
	for (int i = 0; i < n; i++) {
		if (len == NP_WQ_CAP) {
			lost += (uint64_t)(n - i);
			break;
		}
		ring[(head + len++) % NP_WQ_CAP] = (struct np_wq_item){
			.lo = lo[i], .hi = hi[i], .src = src ? src[i] : 0,
			.whole = whole && whole[i], .order = order,
			.stream = stream, .at_ns = now };
		posted++;
	}
	pthread_mutex_unlock(&lock);
	return posted;
}

int np_wq_take(struct np_wq_item *out, int max)
{
	int n = 0;
	pthread_mutex_lock(&lock);
	for (; n < max && len; n++, len--) {
		out[n] = ring[head];
		head = (head + 1) % NP_WQ_CAP;
	}
	pthread_mutex_unlock(&lock);
	return n;
}

uint64_t np_wq_lost(void)
{
	pthread_mutex_lock(&lock);
	uint64_t n = lost;
	pthread_mutex_unlock(&lock);
	return n;
}
