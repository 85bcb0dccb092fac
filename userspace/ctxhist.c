/* ctxhist.c - per-thread context over time (see ctxhist.h). */
#include <errno.h>
#include <stdlib.h>
#include "ctxhist.h"

int np_ctxhist_init(struct np_ctxhist *h, uint32_t cap)
{
	h->n = 0;
	h->cap = cap;
	h->v = cap ? calloc(cap, sizeof(*h->v)) : NULL;
	return cap && !h->v ? -ENOMEM : 0;
}

void np_ctxhist_free(struct np_ctxhist *h)
{
	free(h->v);
	h->v = NULL;
	h->cap = 0;
	h->n = 0;
}

void np_ctxhist_push(struct np_ctxhist *h, const struct np_ctx_point *pt)
{
	if (!h->cap)
		return;
	h->v[h->n % h->cap] = *pt;
	h->n++;
}

/* Newest first: lookups are for launches a few milliseconds old, near
 * the end of the ring, and rare (one per non-finite result reported). */
int np_ctxhist_at(const struct np_ctxhist *h, uint32_t tid, uint64_t ts,
		  struct np_ctx_point *out)
{
	uint64_t kept = h->n < h->cap ? h->n : h->cap;
	for (uint64_t k = 0; k < kept; k++) {
		const struct np_ctx_point *p = &h->v[(h->n - 1 - k) % h->cap];
		if (p->tid == tid && p->ts <= ts) {
			*out = *p;
			return 0;
		}
	}
	/* the ring wrapped after ts: what the thread did then is gone */
	if (h->n > h->cap && h->v[h->n % h->cap].ts > ts)
		return -ERANGE;
	return -ENOENT;
}
