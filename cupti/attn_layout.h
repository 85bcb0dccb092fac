/* attn_layout.h - where an attention kernel's q, k, v (or their
 * gradients) lie, from the (batch, seq, heads, dim) strides the kernel's
 * parameter struct holds: shared by the flash and memory-efficient
 * attention decoders (kdecode_flash.c, kdecode_memeff.c).
 *
 * Each tensor is read as one range only when its strides make it dense.
 * A transformer's q, k and v are often the three slices of one
 * projection's output, (b, s, 3, h, d) (nanoGPT's c_attn(x).split(),
 * MHA's packed in_proj, PyTorch's packed gradients): no slice is dense
 * alone, but the three together are, and are then one range. */
#ifndef NP_ATTN_LAYOUT_H
#define NP_ATTN_LAYOUT_H

#include <stdint.h>
#include "dense_range.h"
#include "param_bytes.h"

/* One (b, s, h, d) tensor: element strides, the last dimension's 1. */
struct np_bshd {
	uint64_t ptr;
	int64_t b, s, h, d;
	uint64_t sb, ss, sh;
};

/* Its elements when its strides cover one dense range, in any order of
 * the dimensions, else 0.  A stride of 0 (one row for every batch) is
 * no layout these kernels are given: 0. */
static inline uint64_t np_bshd_numel(const struct np_bshd *t)
{
	struct np_dense dn = { .n = 0 };

	if (!np_pointer_like(t->ptr) || t->b < 1 || t->s < 1 || t->h < 1 || t->d < 1 ||
	    (t->b > 1 && !t->sb) || (t->s > 1 && !t->ss) || (t->h > 1 && !t->sh))
		return 0;
	np_dense_add(&dn, (uint64_t)t->b, t->sb);
	np_dense_add(&dn, (uint64_t)t->s, t->ss);
	np_dense_add(&dn, (uint64_t)t->h, t->sh);
	np_dense_add(&dn, (uint64_t)t->d, 1);
	return np_dense_numel(&dn, 1);
}

/* The ranges of q, k and v (t[0..3)) of esize-byte elements: into ptr[]
 * and numel[], each one dense alone, or one range for all three when
 * they are the slices of one (b, s, 3, h, d) tensor.  Returns how many
 * ranges (0 to 3); a tensor neither way is left out. */
static inline int np_qkv_ranges(const struct np_bshd t[3], uint32_t esize, uint64_t ptr[3],
				uint64_t numel[3])
{
	const struct np_bshd *q = &t[0], *k = &t[1], *v = &t[2];
	uint64_t hd = (uint64_t)q->h * (uint64_t)q->d;
	int n = 0;

	if (k->ptr == q->ptr + hd * esize && v->ptr == k->ptr + hd * esize && k->b == q->b &&
	    v->b == q->b && k->s == q->s && v->s == q->s && k->h == q->h && v->h == q->h &&
	    k->d == q->d && v->d == q->d && k->sb == q->sb && v->sb == q->sb &&
	    k->ss == q->ss && v->ss == q->ss && k->sh == q->sh && v->sh == q->sh &&
	    q->ss == 3 * hd) {
		struct np_bshd all = *q;
		all.h = 3 * q->h;       /* (b, s, 3, h, d) as (b, s, 3h, d) when sh is d */
		uint64_t m = all.sh == (uint64_t)q->d ? np_bshd_numel(&all) : 0;
		if (m) {
			ptr[0] = q->ptr;
			numel[0] = m;
			return 1;
		}
	}
	for (int i = 0; i < 3; i++) {
		uint64_t m = np_bshd_numel(&t[i]);
		if (m) {
			ptr[n] = t[i].ptr;
			numel[n++] = m;
		}
	}
	return n;
}

#endif
