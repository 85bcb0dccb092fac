/* defer_set.c - checks waiting to be launched together (defer_set.h). */
#include <string.h>
#include "defer_set.h"

unsigned np_defer_class(unsigned blocks)
{
	unsigned c = 0;
	for (unsigned top = 4; blocks > top && c < NP_DEFER_CLASSES - 1; top *= 4)
		c++;
	return c;
}

void np_defer_clear(struct np_defer_set *s)
{
	s->n = s->entries = 0;
	s->box_lo = UINT64_MAX;
	s->box_hi = 0;
}

struct np_defer_list *np_defer_slot(struct np_defer_set *s, const void *ctx, uint64_t stream,
				    uint8_t dtype, unsigned blocks)
{
	if (!s->entries)
		np_defer_clear(s);   /* a zeroed set's box is empty too */
	unsigned cls = np_defer_class(blocks);
	for (unsigned i = 0; i < s->n; i++) {
		struct np_defer_list *l = &s->l[i];
		if (l->ctx == ctx && l->stream == stream && l->dtype == dtype && l->cls == cls &&
		    l->n < NP_CHECK_LIST)
			return l;
	}
	if (s->n == NP_DEFER_LISTS)
		return NULL;
	struct np_defer_list *l = &s->l[s->n++];
	l->ctx = ctx;
	l->stream = stream;
	l->dtype = dtype;
	l->cls = (uint8_t)cls;
	l->n = l->blocks = 0;
	l->bytes = 0;
	return l;
}

void np_defer_put(struct np_defer_set *s, struct np_defer_list *l, const struct np_check_args *a,
		  unsigned blocks, uint64_t lo, uint64_t hi)
{
	l->blocks_of[l->n] = (uint16_t)blocks;
	l->list.e[l->n++] = *a;
	if (blocks > l->blocks)
		l->blocks = blocks;
	l->bytes += a->numel ? hi - lo : 0;   /* an empty check reads nothing (gpu.h) */
	/* room: at most NP_CHECK_LIST entries in each of NP_DEFER_LISTS lists */
	s->lo[s->entries] = lo;
	s->hi[s->entries++] = hi;
	if (lo < s->box_lo)
		s->box_lo = lo;
	if (hi > s->box_hi)
		s->box_hi = hi;
}

int np_defer_overlaps(const struct np_defer_set *s, uint64_t lo, uint64_t hi)
{
	if (!s->entries || hi <= s->box_lo || lo >= s->box_hi)
		return 0;
	for (unsigned i = 0; i < s->entries; i++)
		if (lo < s->hi[i] && s->lo[i] < hi)
			return 1;
	return 0;
}
