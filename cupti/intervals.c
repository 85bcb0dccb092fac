/* intervals.c - the allocation interval map (intervals.h).
 *
 * Each kind is an array sorted by base whose intervals never overlap, so
 * their ends are sorted too: the intervals overlapping any range form one
 * contiguous run, found with two binary searches, and an insert replaces
 * that run with one entry in a single memmove.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "intervals.h"

int np_ivmap_init(struct np_ivmap *m, size_t max_segments, size_t max_tensors)
{
	size_t cap[NP_IV_KINDS] = { max_segments, max_tensors };

	memset(m, 0, sizeof(*m));
	for (int k = 0; k < NP_IV_KINDS; k++) {
		/* at least one element, so that calloc(0) cannot look like a failure */
		m->set[k].v = calloc(cap[k] ? cap[k] : 1, sizeof(struct np_iv));
		m->set[k].cap = cap[k];
		if (!m->set[k].v) {
			np_ivmap_free(m);
			return -ENOMEM;
		}
	}
	pthread_mutex_init(&m->lock, NULL);
	return 0;
}

/* The mutex is left alone: a default glibc mutex holds no resources, and
 * leaving it makes a second free harmless. */
void np_ivmap_free(struct np_ivmap *m)
{
	for (int k = 0; k < NP_IV_KINDS; k++) {
		free(m->set[k].v);
		m->set[k] = (struct np_iv_set){ 0 };
	}
}

void np_ivmap_lock(struct np_ivmap *m)
{
	pthread_mutex_lock(&m->lock);
}

void np_ivmap_unlock(struct np_ivmap *m)
{
	pthread_mutex_unlock(&m->lock);
}

/* Index of the first interval whose base is above addr. */
static size_t upper(const struct np_iv_set *s, uint64_t addr)
{
	size_t lo = 0, hi = s->len;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->v[mid].base <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The interval of s containing addr, or NULL.  addr - base < len also
 * holds for an interval ending at the top of the address space. */
static const struct np_iv *find(const struct np_iv_set *s, uint64_t addr)
{
	size_t i = upper(s, addr);

	if (!i)
		return NULL;
	const struct np_iv *iv = &s->v[i - 1];
	return addr - iv->base < iv->len ? iv : NULL;
}

/* [*lo, *hi): the run of intervals overlapping [base, end), end > base. */
static void span(const struct np_iv_set *s, uint64_t base, uint64_t end, size_t *lo, size_t *hi)
{
	size_t i = upper(s, base);

	/* only the interval at or before base can reach into the range from the left */
	if (i && s->v[i - 1].base + s->v[i - 1].len > base)
		i--;
	*lo = i;
	*hi = upper(s, end - 1);
}

/* Replaces the run [lo, hi) with one entry (iv) or none (iv NULL).  The
 * caller has made sure the result fits. */
static void splice(struct np_iv_set *s, size_t lo, size_t hi, const struct np_iv *iv)
{
	size_t keep = iv ? 1 : 0;

	memmove(&s->v[lo + keep], &s->v[hi], (s->len - hi) * sizeof(*s->v));
	if (iv)
		s->v[lo] = *iv;
	s->len = s->len - (hi - lo) + keep;
}

int np_ivmap_insert(struct np_ivmap *m, enum np_iv_kind kind, uint64_t base, uint64_t len,
		    int dtype, uint32_t id)
{
	if ((unsigned)kind >= NP_IV_KINDS || !len || len > UINT64_MAX - base)
		return -EINVAL;

	struct np_iv_set *s = &m->set[kind];
	struct np_iv iv = {
		.base = base, .len = len, .id = id, .dtype = (int16_t)dtype, .kind = kind,
	};
	size_t lo, hi;

	span(s, base, base + len, &lo, &hi);
	if (lo == hi && s->len >= s->cap) {
		m->overflow++;
		return -ENOSPC;
	}
	splice(s, lo, hi, &iv);
	m->replaced += hi - lo;
	return (int)(hi - lo);
}

int np_ivmap_remove(struct np_ivmap *m, enum np_iv_kind kind, uint64_t base)
{
	if ((unsigned)kind >= NP_IV_KINDS)
		return -ENOENT;

	struct np_iv_set *s = &m->set[kind];
	size_t i = upper(s, base);

	if (!i || s->v[i - 1].base != base)
		return -ENOENT;

	uint64_t end = base + s->v[i - 1].len;
	int n = 1;

	splice(s, i - 1, i, NULL);
	if (kind == NP_IV_SEGMENT) {
		struct np_iv_set *t = &m->set[NP_IV_TENSOR];
		size_t lo, hi;

		span(t, base, end, &lo, &hi);
		splice(t, lo, hi, NULL);
		n += (int)(hi - lo);
	}
	return n;
}

int np_ivmap_remove_range(struct np_ivmap *m, uint64_t base, uint64_t len)
{
	if (!len || base + len < base)
		return -EINVAL;
	int n = 0;
	for (int k = 0; k < NP_IV_KINDS; k++) {
		size_t lo, hi;
		span(&m->set[k], base, base + len, &lo, &hi);
		splice(&m->set[k], lo, hi, NULL);
		n += (int)(hi - lo);
	}
	return n;
}

int np_ivmap_lookup(const struct np_ivmap *m, uint64_t addr, struct np_iv *out)
{
	const struct np_iv *iv = find(&m->set[NP_IV_TENSOR], addr);

	if (!iv)
		iv = find(&m->set[NP_IV_SEGMENT], addr);
	if (!iv)
		return -ENOENT;
	if (out)
		*out = *iv;
	return 0;
}

int np_iv_extent(const struct np_ivmap *m, uint64_t ptr, uint64_t *len)
{
	struct np_iv iv;

	if (np_ivmap_lookup(m, ptr, &iv))
		return -ENOENT;
	*len = iv.base + iv.len - ptr;
	return 0;
}

size_t np_ivmap_entries(const struct np_ivmap *m)
{
	return m->set[NP_IV_SEGMENT].len + m->set[NP_IV_TENSOR].len;
}
