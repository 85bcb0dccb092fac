/* param_owners.c - the owner of each noted CUDA parameter (param_owners.h). */
#include <pthread.h>
#include <string.h>
#include "addr_slot.h"
#include "param_owners.h"

static struct {
	uint64_t ptr, owner;
	char name[NP_PARAM_NAME];
} slots[NP_PARAM_OWNER_SLOTS];
static uint64_t displaced;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

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
	unsigned i = np_addr_slot(ptr, NP_PARAM_OWNER_SLOTS);
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
	unsigned i = np_addr_slot(ptr, NP_PARAM_OWNER_SLOTS);
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
