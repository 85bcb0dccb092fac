/* hashmap.h - a bounded open-addressing map from a pair of u64 to a u64.
 * Used for (pid, pointer) -> id caches.  Never grows past max entries:
 * np_map_put then fails with -ENOSPC and the caller counts it. */
#ifndef NP_HASHMAP_H
#define NP_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct np_map_slot {
	uint64_t k1, k2, value;
	bool used;
};

struct np_map {
	struct np_map_slot *slots;
	size_t cap, len, max;
};

/* max: most entries ever held. 0 or -ENOMEM. */
int np_map_init(struct np_map *m, size_t max);
void np_map_free(struct np_map *m);
/* 0 and *value, or -ENOENT. */
int np_map_get(const struct np_map *m, uint64_t k1, uint64_t k2, uint64_t *value);
/* Inserts or replaces: 0, -ENOSPC when full, -ENOMEM. */
int np_map_put(struct np_map *m, uint64_t k1, uint64_t k2, uint64_t value);

#endif
