#include <errno.h>
#include <stdlib.h>
#include "hashmap.h"

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL + (a << 6) + (a >> 2));
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

int np_map_init(struct np_map *m, size_t max)
{
	m->cap = 64;
	m->len = 0;
	m->max = max;
	m->slots = calloc(m->cap, sizeof(*m->slots));
	return m->slots ? 0 : -ENOMEM;
}

void np_map_free(struct np_map *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->len = 0;
}

static struct np_map_slot *find(const struct np_map *m, uint64_t k1, uint64_t k2)
{
	size_t i = mix(k1, k2) & (m->cap - 1);
	for (;;) {
		struct np_map_slot *s = &m->slots[i];
		if (!s->used || (s->k1 == k1 && s->k2 == k2))
			return s;
		i = (i + 1) & (m->cap - 1);
	}
}

int np_map_get(const struct np_map *m, uint64_t k1, uint64_t k2, uint64_t *value)
{
	if (!m->slots)
		return -ENOENT;
	struct np_map_slot *s = find(m, k1, k2);
	if (!s->used)
		return -ENOENT;
	*value = s->value;
	return 0;
}

static int grow(struct np_map *m)
{
	struct np_map old = *m;
	m->cap *= 2;
	m->slots = calloc(m->cap, sizeof(*m->slots));
	if (!m->slots) {
		*m = old;
		return -ENOMEM;
	}
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].used)
			*find(m, old.slots[i].k1, old.slots[i].k2) = old.slots[i];
	free(old.slots);
	return 0;
}

int np_map_put(struct np_map *m, uint64_t k1, uint64_t k2, uint64_t value)
{
	struct np_map_slot *s = find(m, k1, k2);
	if (s->used) {
		s->value = value;
		return 0;
	}
	if (m->len >= m->max)
		return -ENOSPC;
	if ((m->len + 1) * 2 > m->cap) {   /* keep load under one half */
		if (grow(m))
			return -ENOMEM;
		s = find(m, k1, k2);
	}
	*s = (struct np_map_slot){ k1, k2, value, true };
	m->len++;
	return 0;
}
