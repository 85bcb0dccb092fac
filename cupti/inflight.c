/* inflight.c - checks in flight, by tag (see inflight.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "inflight.h"

static struct np_inflight *ordinary;   /* NP_INFLIGHT_SLOTS */
static struct np_inflight *captured;   /* NP_INFLIGHT_CAPTURED */
static uint64_t next_tag;              /* ordinary tags count from 1 */
static uint64_t next_captured;

int np_inflight_init(void)
{
	if (ordinary)
		return 0;
	struct np_inflight *o = calloc(NP_INFLIGHT_SLOTS, sizeof(*o));
	struct np_inflight *c = calloc(NP_INFLIGHT_CAPTURED, sizeof(*c));
	if (!o || !c) {
		free(o);
		free(c);
		return -ENOMEM;
	}
	captured = c;
	ordinary = o;
	return 0;
}

uint64_t np_inflight_tag(int is_captured)
{
	if (!is_captured)
		return __atomic_add_fetch(&next_tag, 1, __ATOMIC_RELAXED);
	uint64_t k = __atomic_fetch_add(&next_captured, 1, __ATOMIC_RELAXED);
	if (k >= NP_INFLIGHT_CAPTURED)
		return 0;
	return NP_TAG_CAPTURED | (k + 1);
}

static struct np_inflight *slot(uint64_t tag)
{
	if (tag & NP_TAG_CAPTURED) {
		uint64_t k = (tag & ~NP_TAG_CAPTURED) - 1;
		return k < NP_INFLIGHT_CAPTURED ? &captured[k] : NULL;
	}
	return &ordinary[tag % NP_INFLIGHT_SLOTS];
}

void np_inflight_put(const struct np_inflight *e)
{
	struct np_inflight *s = slot(e->tag);
	if (!s)
		return;
	__atomic_store_n(&s->tag, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy((char *)s + sizeof(s->tag), (const char *)e + sizeof(e->tag),
	       sizeof(*e) - sizeof(e->tag));
	__atomic_store_n(&s->tag, e->tag, __ATOMIC_RELEASE);
}

int np_inflight_get(uint64_t tag, struct np_inflight *out)
{
	struct np_inflight *s = slot(tag);
	if (!s || __atomic_load_n(&s->tag, __ATOMIC_ACQUIRE) != tag)
		return -ENOENT;
	memcpy(out, s, sizeof(*out));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&s->tag, __ATOMIC_RELAXED) != tag)
		return -ENOENT;   /* reused while we copied */
	out->tag = tag;
	return 0;
}

uint32_t np_inflight_scratch_index(uint64_t tag, uint32_t ordinary_slots)
{
	if (tag & NP_TAG_CAPTURED)
		return ordinary_slots + (uint32_t)((tag & ~NP_TAG_CAPTURED) - 1);
	return (uint32_t)(tag % ordinary_slots);
}
