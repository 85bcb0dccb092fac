/* generic.c - addresses handed to undecoded launches (generic.h). */
#include <pthread.h>
#include <string.h>
#include "addr_slot.h"
#include "generic.h"

/* launches[n % NP_GENERIC_LAUNCHES] holds the n-th noted launch (from 1) */
static struct {
	uint64_t n;
	struct np_generic_launch u;
} launches[NP_GENERIC_LAUNCHES];
static struct {
	uint64_t addr;
	uint64_t n;		/* the launch it maps to; 0: free */
} slots[NP_GENERIC_SLOTS];
static uint64_t noted;
static struct np_generic_stats stats;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void np_generic_reset(void)
{
	pthread_mutex_lock(&lock);
	memset(launches, 0, sizeof(launches));
	memset(slots, 0, sizeof(slots));
	memset(&stats, 0, sizeof(stats));
	__atomic_store_n(&noted, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&lock);
}

void np_generic_note(const struct np_generic_launch *u)
{
	uint32_t n_words = u->n_words < NP_GENERIC_WORDS ? u->n_words : NP_GENERIC_WORDS;
	if (!n_words)
		return;
	pthread_mutex_lock(&lock);
	uint64_t n = noted + 1;
	__atomic_store_n(&noted, n, __ATOMIC_RELAXED);
	stats.noted++;
	launches[n % NP_GENERIC_LAUNCHES].n = n;
	launches[n % NP_GENERIC_LAUNCHES].u = *u;
	launches[n % NP_GENERIC_LAUNCHES].u.n_words = n_words;
	for (uint32_t i = 0; i < n_words; i++) {
		if (u->read_only >> i & 1)
			continue;
		unsigned s = np_addr_slot(u->words[i], NP_GENERIC_SLOTS);
		if (slots[s].n && slots[s].addr != u->words[i])
			stats.displaced++;
		__atomic_store_n(&slots[s].addr, u->words[i], __ATOMIC_RELAXED);
		slots[s].n = n;
	}
	pthread_mutex_unlock(&lock);
}

int np_generic_take(uint64_t addr, struct np_generic_launch *out)
{
	/* the launch callbacks ask for every elementwise input: nothing to
	 * look up in a job whose kernels are all decoded */
	if (!addr || !__atomic_load_n(&noted, __ATOMIC_RELAXED))
		return 0;
	unsigned s = np_addr_slot(addr, NP_GENERIC_SLOTS);
	/* most inputs were never handed to an undecoded launch: a racy look
	 * first (a note being written is seen next time, or by the lock) */
	if (__atomic_load_n(&slots[s].addr, __ATOMIC_RELAXED) != addr)
		return 0;
	int found = 0;
	pthread_mutex_lock(&lock);
	if (slots[s].n && slots[s].addr == addr) {
		uint64_t n = slots[s].n;
		slots[s].n = 0;
		if (launches[n % NP_GENERIC_LAUNCHES].n == n) {
			*out = launches[n % NP_GENERIC_LAUNCHES].u;
			stats.taken++;
			found = 1;
		} else {
			stats.expired++;
		}
	}
	pthread_mutex_unlock(&lock);
	return found;
}

int np_generic_any(void)
{
	return __atomic_load_n(&noted, __ATOMIC_RELAXED) != 0;
}

int np_generic_maybe(uint64_t addr)
{
	if (!addr || !__atomic_load_n(&noted, __ATOMIC_RELAXED))
		return 0;
	unsigned s = np_addr_slot(addr, NP_GENERIC_SLOTS);
	return __atomic_load_n(&slots[s].addr, __ATOMIC_RELAXED) == addr &&
	       __atomic_load_n(&slots[s].n, __ATOMIC_RELAXED) != 0;
}

void np_generic_forget(uint64_t addr)
{
	if (!addr || !__atomic_load_n(&noted, __ATOMIC_RELAXED))
		return;
	unsigned s = np_addr_slot(addr, NP_GENERIC_SLOTS);
	pthread_mutex_lock(&lock);
	if (slots[s].addr == addr)
		slots[s].n = 0;
	pthread_mutex_unlock(&lock);
}

void np_generic_stats(struct np_generic_stats *out)
{
	pthread_mutex_lock(&lock);
	*out = stats;
	pthread_mutex_unlock(&lock);
}
