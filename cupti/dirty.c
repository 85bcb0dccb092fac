/* dirty.c - clean->dirty tracking (dirty.h).
 *
 * The known-dirty ranges are one array sorted by base whose ranges never
 * overlap, so a word is looked up with one binary search.  Marking and
 * clearing work per tag: a range only ever loses the parts a later
 * launch rewrote, and a mark fills only the gaps left between ranges
 * with a later tag, so every byte carries the latest tag known for it.
 * Making room scans for the oldest tag (O(n)): it only happens when the
 * set is full, on the ring-draining thread, never on a launch.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "dirty.h"

int np_dirty_init(struct np_dirty *t, size_t cap)
{
	memset(t, 0, sizeof(*t));
	if (!cap)
		return -EINVAL;
	t->v = calloc(cap, sizeof(*t->v));
	if (!t->v)
		return -ENOMEM;
	t->cap = cap;
	return 0;
}

void np_dirty_free(struct np_dirty *t)
{
	free(t->v);
	t->v = NULL;
	t->len = t->cap = 0;
}

/* Index of the first range whose base is above addr. */
static size_t upper(const struct np_dirty *t, uint64_t addr)
{
	size_t lo = 0, hi = t->len;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].base <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Index of the first range ending after addr (ends are sorted too). */
static size_t first_after(const struct np_dirty *t, uint64_t addr)
{
	size_t i = upper(t, addr);

	if (i && t->v[i - 1].end > addr)
		i--;
	return i;
}

static const struct np_dirty_range *find(const struct np_dirty *t, uint64_t addr)
{
	size_t i = upper(t, addr);

	if (!i || t->v[i - 1].end <= addr)
		return NULL;
	return &t->v[i - 1];
}

static void remove_at(struct np_dirty *t, size_t i)
{
	memmove(&t->v[i], &t->v[i + 1], (t->len - i - 1) * sizeof(*t->v));
	t->len--;
}

/* Drops the range with the oldest tag: the one least likely still read. */
static void evict(struct np_dirty *t)
{
	size_t old = 0;

	for (size_t i = 1; i < t->len; i++)
		if (t->v[i].tag < t->v[old].tag)
			old = i;
	remove_at(t, old);
	t->evicted++;
}

/* bad if it lies in [base, end), else NP_DIRTY_NO_BAD: a known bad
 * byte stays with the part of a range that still holds it. */
static uint64_t within(uint64_t bad, uint64_t base, uint64_t end)
{
	return bad >= base && bad < end ? bad : NP_DIRTY_NO_BAD;
}

/* Adds [base, end), which overlaps no range, making room if full. */
static void add(struct np_dirty *t, uint64_t base, uint64_t end, uint64_t tag, uint64_t bad)
{
	if (t->len >= t->cap)
		evict(t);

	size_t i = upper(t, base);

	memmove(&t->v[i + 1], &t->v[i], (t->len - i) * sizeof(*t->v));
	t->v[i] = (struct np_dirty_range){ .base = base, .end = end, .tag = tag,
					   .bad = within(bad, base, end) };
	t->len++;
}

/* Keeps [base, end), dirty as of dirty_tag until `until`, for late
 * judgements; the oldest span goes when the ring is full. */
static void remember(struct np_dirty *t, uint64_t base, uint64_t end, uint64_t dirty_tag,
		     uint64_t until, uint64_t bad)
{
	if (t->hist_len == NP_DIRTY_HISTORY)
		t->forgotten++;   /* the oldest span goes */
	t->hist[t->hist_next] = (struct np_dirty_span){ base, end, dirty_tag, until,
							within(bad, base, end) };
	t->hist_next = (t->hist_next + 1) % NP_DIRTY_HISTORY;
	if (t->hist_len < NP_DIRTY_HISTORY)
		t->hist_len++;
	if (until > t->hist_until)
		t->hist_until = until;
}

/* Takes [base, end) out of every range whose tag is below `below`. */
static void carve(struct np_dirty *t, uint64_t base, uint64_t end, uint64_t below)
{
	size_t i = first_after(t, base);

	while (i < t->len && t->v[i].base < end) {
		struct np_dirty_range r = t->v[i];

		if (r.tag < below)
			remember(t, r.base > base ? r.base : base, r.end < end ? r.end : end, r.tag,
				 below, r.bad);
		if (r.tag >= below) {
			i++;
		} else if (r.base < base && r.end > end) {
			/* a hole in the middle: the right part needs a new entry */
			t->v[i].end = base;
			t->v[i].bad = within(r.bad, r.base, base);
			add(t, end, r.end, r.tag, r.bad);
			return;
		} else if (r.base < base) {
			t->v[i].end = base;
			t->v[i].bad = within(r.bad, r.base, base);
			i++;
		} else if (r.end > end) {
			t->v[i].base = end;
			t->v[i].bad = within(r.bad, end, r.end);
			return;
		} else {
			remove_at(t, i);
		}
	}
}

/* Marks [base, end) dirty as of `tag`, bad (or NP_DIRTY_NO_BAD) a byte
 * of it known non-finite; parts already dirty as of a later tag keep
 * theirs.  Each pass fills one gap, found afresh, so an eviction in add()
 * cannot leave a stale index behind. */
static void mark(struct np_dirty *t, uint64_t base, uint64_t end, uint64_t tag, uint64_t bad)
{
	uint64_t cur = base;

	carve(t, base, end, tag);
	while (cur < end) {
		size_t i = first_after(t, cur);

		if (i < t->len && t->v[i].base <= cur) {
			cur = t->v[i].end;
			continue;
		}
		uint64_t stop = i < t->len && t->v[i].base < end ? t->v[i].base : end;
		add(t, cur, stop, tag, bad);
		cur = stop;
	}
}

/* Input k of a launch, [*lo, return): in[] first, each its word alone
 * or as far as in_len says, then more_in[]'s words. */
static uint64_t input_at(const struct np_dirty_launch *l, uint32_t n_kept, uint32_t k,
			 uint64_t *lo)
{
	*lo = k < n_kept ? l->in[k] : l->more_in[k - n_kept];
	uint64_t len = k < n_kept && l->in_len[k] ? l->in_len[k] : 1;
	return len > UINT64_MAX - *lo ? UINT64_MAX : *lo + len;
}

/* Is a read of [lo, hi) from word lo a read of the bytes of [base, end)
 * (bad: a byte of it known non-finite)?  The word in it, as ever; past
 * the word only its known bad byte counts: a range is marked whole though
 * its bad values may be few, and a reader of the rest of a buffer whose
 * bad part was written over since is not their propagation. */
static bool reads_of(uint64_t lo, uint64_t hi, uint64_t base, uint64_t end, uint64_t bad)
{
	return (lo >= base && lo < end) || (bad >= lo && bad < hi);
}

/* The first range read by [lo, hi) from word lo, dirtied before tag, or
 * NULL. */
static const struct np_dirty_range *dirty_in(const struct np_dirty *t, uint64_t lo, uint64_t hi,
					     uint64_t tag)
{
	for (size_t i = first_after(t, lo); i < t->len && t->v[i].base < hi; i++) {
		const struct np_dirty_range *r = &t->v[i];
		if (r->tag < tag && reads_of(lo, hi, r->base, r->end, r->bad))
			return r;
	}
	return NULL;
}

/* Does an input read a range dirtied before this launch? */
static bool inputs_dirty(const struct np_dirty *t, const struct np_dirty_launch *l,
			 uint64_t *source)
{
	uint32_t kept = l->n_in < NP_DIRTY_MAX_INPUTS ? l->n_in : NP_DIRTY_MAX_INPUTS;
	uint32_t n = kept + (l->more_in ? l->n_more : 0);
	uint64_t lo, hi;

	for (uint32_t k = 0; k < n; k++) {
		hi = input_at(l, kept, k, &lo);
		const struct np_dirty_range *r = dirty_in(t, lo, hi, l->tag);
		if (r) {
			*source = r->tag;
			return true;
		}
	}
	/* a late launch: what it read may since have been cleared or
	 * re-marked by launches after it, whose results came first; so may
	 * a launch before a write told already (np_dirty_write) */
	if ((!l->late && l->tag >= t->writes_until) || l->tag >= t->hist_until)
		return false;
	bool found = false;
	for (uint32_t k = 0; k < n; k++) {
		hi = input_at(l, kept, k, &lo);
		for (uint32_t h = 0; h < t->hist_len; h++) {
			const struct np_dirty_span *s = &t->hist[h];
			if (reads_of(lo, hi, s->base, s->end, s->bad) && s->dirty_tag < l->tag &&
			    l->tag < s->until && (!found || s->dirty_tag > *source)) {
				*source = s->dirty_tag;
				found = true;
			}
		}
	}
	return found;
}

/* End of the output range: at least one byte, clamped to the address space. */
static uint64_t out_end(const struct np_dirty_launch *l)
{
	uint64_t len = l->out_len ? l->out_len : 1;

	return len > UINT64_MAX - l->out_ptr ? UINT64_MAX : l->out_ptr + len;
}

/* A launch's result that comes after a write launched later: the
 * write's bytes stay as the write left them. */
static void keep_writes(struct np_dirty *t, uint64_t base, uint64_t end, uint64_t tag)
{
	if (tag >= t->writes_until)
		return;
	for (uint32_t i = 0; i < t->writes_len; i++) {
		const struct np_dirty_write *w = &t->writes[i];
		if (w->order > tag && w->base < end && w->end > base)
			carve(t, w->base > base ? w->base : base, w->end < end ? w->end : end,
			      w->order);
	}
}

enum np_dirty_verdict np_dirty_result(struct np_dirty *t, const struct np_dirty_launch *l,
				      int dirty, struct np_dirty_why *why)
{
	struct np_dirty_why w = { 0 };

	w.inputs_dirty = inputs_dirty(t, l, &w.source_tag);
	if (why)
		*why = w;
	if (!dirty) {
		carve(t, l->out_ptr, out_end(l), l->tag);
		t->clean++;
		return NP_DIRTY_CLEAN;
	}
	uint64_t bad = l->first_bad < out_end(l) - l->out_ptr ? l->out_ptr + l->first_bad
							      : NP_DIRTY_NO_BAD;
	mark(t, l->out_ptr, out_end(l), l->tag, bad);
	keep_writes(t, l->out_ptr, out_end(l), l->tag);
	if (w.inputs_dirty) {
		t->propagated++;
		return NP_DIRTY_PROPAGATED;
	}
	t->births++;
	if (t->has_origin && l->tag > t->origin_tag)
		return NP_DIRTY_LATER_BIRTH;
	t->has_origin = true;
	t->origin_tag = l->tag;
	return NP_DIRTY_FIRST_ORIGIN;
}

void np_dirty_write(struct np_dirty *t, uint64_t base, uint64_t end, uint64_t order)
{
	if (end <= base)
		return;
	t->written++;
	carve(t, base, end, order);
	t->writes[t->writes_next] = (struct np_dirty_write){ base, end, order };
	t->writes_next = (t->writes_next + 1) % NP_DIRTY_WRITES;
	if (t->writes_len < NP_DIRTY_WRITES)
		t->writes_len++;
	if (order > t->writes_until)
		t->writes_until = order;
}

/* A dirty part of a copy's source, [lo, hi), dirty as of tag, bad a
 * byte of it known non-finite (or NP_DIRTY_NO_BAD). */
struct part {
	uint64_t lo, hi, tag, bad;
};

/* Keeps [lo, hi) ∩ [src, src_end) among the parts; past
 * NP_DIRTY_COPY_PARTS the last part grows to cover it too (carried a
 * little wider, never dropped). */
static void add_part(struct part *p, unsigned *n, uint64_t lo, uint64_t hi, uint64_t tag,
		     uint64_t bad, uint64_t src, uint64_t src_end)
{
	lo = lo > src ? lo : src;
	hi = hi < src_end ? hi : src_end;
	if (lo >= hi)
		return;
	bad = within(bad, lo, hi);
	if (*n < NP_DIRTY_COPY_PARTS) {
		p[(*n)++] = (struct part){ lo, hi, tag, bad };
		return;
	}
	struct part *last = &p[NP_DIRTY_COPY_PARTS - 1];
	last->lo = lo < last->lo ? lo : last->lo;
	last->hi = hi > last->hi ? hi : last->hi;
	if (last->bad == NP_DIRTY_NO_BAD)
		last->bad = bad;
}

/* The parts of [src, src_end) dirty as of a launch before order: known
 * dirty now, or cleared since by later results (the history keeps what
 * they were).  Known-dirty parts come first, by address. */
static unsigned source_parts(const struct np_dirty *t, uint64_t src, uint64_t src_end,
			     uint64_t order, struct part *p)
{
	unsigned n = 0;

	for (size_t i = first_after(t, src); i < t->len && t->v[i].base < src_end; i++)
		if (t->v[i].tag < order)
			add_part(p, &n, t->v[i].base, t->v[i].end, t->v[i].tag, t->v[i].bad, src,
				 src_end);
	if (order >= t->hist_until)
		return n;
	for (uint32_t h = 0; h < t->hist_len; h++) {
		const struct np_dirty_span *s = &t->hist[h];
		if (s->dirty_tag < order && order < s->until)
			add_part(p, &n, s->base, s->end, s->dirty_tag, s->bad, src, src_end);
	}
	return n;
}

int np_dirty_copy(struct np_dirty *t, uint64_t base, uint64_t end, uint64_t src, bool whole,
		  uint64_t order, uint64_t *source)
{
	struct part p[NP_DIRTY_COPY_PARTS];
	uint64_t len = end - base;
	unsigned n;

	if (end <= base)
		return 0;
	if (whole) {
		n = source_parts(t, src, len > UINT64_MAX - src ? UINT64_MAX : src + len, order, p);
	} else {
		/* only the first byte is known (a pitched copy whose rows lie
		 * otherwise): it stands for the whole, as input words do */
		n = source_parts(t, src, src == UINT64_MAX ? src : src + 1, order, p) ? 1 : 0;
		p[0].lo = src;
		p[0].hi = src + len;   /* offsets 0..len below, wrapping or not */
		p[0].bad = NP_DIRTY_NO_BAD;   /* which byte is bad, if any, is not known */
	}
	/* the destination is the copy's now, all of it; then each dirty
	 * part of the source is dirty again in its place */
	np_dirty_write(t, base, end, order);
	if (!n)
		return 0;
	t->copied++;
	for (unsigned i = 0; i < n; i++) {
		/* parts lie within [src, src + len): their offsets fit */
		uint64_t lo = base + (p[i].lo - src), hi = base + (p[i].hi - src);
		uint64_t bad = p[i].bad == NP_DIRTY_NO_BAD ? p[i].bad : base + (p[i].bad - src);
		mark(t, lo, hi, order, bad);
		keep_writes(t, lo, hi, order);
	}
	if (source)
		*source = p[0].tag;
	return 1;
}

int np_dirty_lookup(const struct np_dirty *t, uint64_t addr, uint64_t *tag)
{
	const struct np_dirty_range *r = find(t, addr);

	if (!r)
		return -ENOENT;
	if (tag)
		*tag = r->tag;
	return 0;
}

const char *np_dirty_verdict_name(enum np_dirty_verdict v)
{
	switch (v) {
	case NP_DIRTY_CLEAN: return "clean";
	case NP_DIRTY_FIRST_ORIGIN: return "first-origin";
	case NP_DIRTY_LATER_BIRTH: return "later-birth";
	case NP_DIRTY_PROPAGATED: return "propagated";
	}
	return "?";
}
