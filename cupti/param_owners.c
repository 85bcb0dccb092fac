/* param_owners.c - the owner of each noted CUDA parameter (param_owners.h). */
#include <pthread.h>
#include <string.h>
#include "param_owners.h"

static struct {
	uint64_t ptr, owner;
	char name[NP_PARAM_NAME];
} slots[NP_PARAM_OWNER_SLOTS];
static uint64_t displaced;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Device allocations are aligned: the low bits say little. */
static unsigned slot_of(uint64_t ptr)
{
	uint64_t h = (ptr >> 4) * 0x9e3779b97f4a7c15ull;
	return (unsigned)(h >> 40) & (NP_PARAM_OWNER_SLOTS - 1);
}

void np_param_owners_reset(void)
{
	pthread_mutex_lock(&lock);
	memset(slots, 0, sizeof(slots));
	displaced = 0;
	pthread_mutex_unlock(&lock);
}

void np_param_owner_note(uint64_t ptr, uint64_t owner, const char *name)
{
	if (!ptr)
		return;
	unsigned i = slot_of(ptr);
	pthread_mutex_lock(&lock);
	if (slots[i].ptr && slots[i].ptr != ptr)
		displaced++;
	slots[i].ptr = ptr;
	slots[i].owner = owner;
	strncpy(slots[i].name, name ? name : "", NP_PARAM_NAME - 1);
	slots[i].name[NP_PARAM_NAME - 1] = 0;
	pthread_mutex_unlock(&lock);
}

int np_param_owner_of(uint64_t ptr, uint64_t *owner, char name[NP_PARAM_NAME])
{
	unsigned i = slot_of(ptr);
	int found = 0;
	pthread_mutex_lock(&lock);
	if (ptr && slots[i].ptr == ptr) {
		*owner = slots[i].owner;
		memcpy(name, slots[i].name, NP_PARAM_NAME);
		found = 1;
	}
	pthread_mutex_unlock(&lock);
	return found;
}

uint64_t np_param_owners_displaced(void)
{
	pthread_mutex_lock(&lock);
	uint64_t d = displaced;
	pthread_mutex_unlock(&lock);
	return d;
}
