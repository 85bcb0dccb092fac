/* writers.c - the last checked writer of each buffer (writers.h). */
#include <pthread.h>
#include <string.h>
#include "addr_slot.h"
#include "writers.h"

static struct {
	uint64_t ptr, seq, tag;
	int dtype;
} slots[NP_WRITERS_SLOTS];
static uint64_t last_unchecked;   /* seq of the latest launch with unchecked outputs */
static uint64_t counter;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void np_writers_reset(void)
{
	pthread_mutex_lock(&lock);
	memset(slots, 0, sizeof(slots));
	last_unchecked = 0;
	pthread_mutex_unlock(&lock);
}

uint64_t np_writers_next(void)
{
	return __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
}

void np_writers_checked(uint64_t ptr, uint64_t seq, uint64_t tag, int dtype)
{
	if (!ptr)
		return;
	unsigned i = np_addr_slot(ptr, NP_WRITERS_SLOTS);
	pthread_mutex_lock(&lock);
	/* launches of different threads may note out of order: keep the latest */
	if (slots[i].ptr != ptr || slots[i].seq < seq) {
		slots[i].ptr = ptr;
		slots[i].seq = seq;
		slots[i].tag = tag;
		slots[i].dtype = dtype;
	}
	pthread_mutex_unlock(&lock);
}

void np_writers_unchecked(uint64_t seq)
{
	pthread_mutex_lock(&lock);
	if (seq > last_unchecked)
		last_unchecked = seq;
	pthread_mutex_unlock(&lock);
}

uint64_t np_writers_last(uint64_t ptr)
{
	unsigned i = np_addr_slot(ptr, NP_WRITERS_SLOTS);
	pthread_mutex_lock(&lock);
	uint64_t seq = ptr && slots[i].ptr == ptr ? slots[i].seq : 0;
	pthread_mutex_unlock(&lock);
	return seq;
}

int np_writers_seen(uint64_t ptr, uint64_t *tag)
{
	unsigned i = np_addr_slot(ptr, NP_WRITERS_SLOTS);
	pthread_mutex_lock(&lock);
	int seen = ptr && slots[i].ptr == ptr && slots[i].seq > last_unchecked;
	if (seen && tag)
		*tag = slots[i].tag;
	pthread_mutex_unlock(&lock);
	return seen;
}

int np_writers_dtype(uint64_t ptr)
{
	unsigned i = np_addr_slot(ptr, NP_WRITERS_SLOTS);
	pthread_mutex_lock(&lock);
	int dtype = ptr && slots[i].ptr == ptr ? slots[i].dtype : -1;
	pthread_mutex_unlock(&lock);
	return dtype;
}
