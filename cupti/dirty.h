/* dirty.h - clean->dirty tracking: which kernel launch a non-finite value
 * was born in, from finite-check results that arrive after the launches.
 *
 * For each check the agent keeps, at launch time, a struct
 * np_dirty_launch: the launch's tag (launch-order number), its stream,
 * the checked output range and the kernel's pointer-like input words.
 * When the check's result comes back through the ring (non-finite, or
 * finite: the agent's checks report both), np_dirty_result() judges it:
 *
 *   an input word (or extent) meets a range known dirty  PROPAGATED
 *   dirty output, no input in a dirty range       a birth: FIRST_ORIGIN
 *                                                 or LATER_BIRTH
 *   clean output                                  CLEAN, and the output
 *                                                 range is no longer dirty
 *
 * and a dirty output range becomes known dirty.  Known-dirty ranges are a
 * bounded set of non-overlapping [base, end), each with the tag of the
 * latest launch that left it non-finite; when full, the range with the
 * oldest tag is evicted and counted.
 *
 * Ordering.  Results come back in launch order per stream, but results of
 * different streams interleave.  A correctly synchronised consumer is
 * always launched after its producer, so the rule compares tags, not
 * arrival order:
 *  - an input counts as dirty only if the range's tag is lower than the
 *    judged launch's tag (a later launch's output, already reported from
 *    another stream, cannot have fed it, nor can the launch's own other
 *    outputs);
 *  - a clean result clears only the parts of ranges with a lower tag (a
 *    later launch may already have made them dirty again);
 *  - FIRST_ORIGIN goes to a birth launched before every birth seen so
 *    far, so a birth whose result arrives late from another stream takes
 *    the origin over with a second FIRST_ORIGIN; the caller keeps the
 *    last one (tracker->origin_tag).  Other outputs of the origin launch
 *    are FIRST_ORIGIN too; births launched after it are LATER_BIRTH.
 *
 * Limits of the rule, all of them giving a wrong verdict, never a crash:
 *  - Non-finite values that reach device memory without a decoded kernel
 *    output (copied from the host, written by a kernel whose outputs
 *    could not be decoded or were not checked, by a library with its own
 *    launch path) make their first decoded consumer look like a birth.
 *  - An input is its word alone unless the caller knows how far the
 *    kernel reads from it (in_len: a dense elementwise input, a copy's
 *    source, a GEMM's A and B): a consumer handed a pointer below a
 *    dirty range (the start of a buffer whose later slice a producer
 *    wrote) is seen to read it only then, and only if it reads the
 *    range's known bad byte (the first non-finite element its producer's
 *    check found, while no write or clean result has covered it since):
 *    a dirty output is marked whole, its non-finite values may be few,
 *    and a reader of the rest of a buffer whose bad part was written over
 *    must not look like their propagation.  A bad value past the first
 *    is thus seen only by a reader handed a pointer into its range.
 *    Inputs past in[] are words.
 *  - A kernel that reads its output buffer (in place, accumulating) is
 *    judged from its inputs only: the caller must list such an output's
 *    word among the inputs as well.
 *  - A range is cleared only by a clean result (the agent's checks
 *    report every result, check_abi.h's report_all) or a write told
 *    (below).  Memory freed and reused with neither stays dirty, and its
 *    next readers look PROPAGATED.
 *  - When results of different streams interleave, a consumer whose
 *    result arrives before its producer's looks like a birth (the
 *    producer's later FIRST_ORIGIN still corrects the origin), and a
 *    consumer arriving before an earlier clean overwrite of its input
 *    looks PROPAGATED.  A range keeps only its latest dirty tag, so an
 *    earlier launch reading it after an earlier producer is missed when
 *    a later producer's result came first.
 *  - A late judgement (the generic tier's: an undecoded launch's output,
 *    checked at a reader long after it) comes after results of launches
 *    that followed it, which may have cleared or re-marked what it read.
 *    For those the tracker keeps the last NP_DIRTY_HISTORY spans taken
 *    out of dirty ranges (dirty from one tag until another): a late
 *    launch between the two read them dirty.  Older spans are forgotten
 *    (counted: forgotten) and the late reader looks like a birth.
 *  - Eviction forgets the oldest dirty ranges (counted: evicted): their
 *    readers look like births.
 *
 * Writes no check saw (a copy from the host, a memset, a device copy the
 * agent did not check) are told with np_dirty_write and np_dirty_copy,
 * in launch order among the results (the caller holds each back until a
 * later launch's result on its stream is judged).  A write ends what
 * earlier launches left dirty there: a later birth reading the new
 * bytes is a birth, not their propagation.  The last NP_DIRTY_WRITES
 * writes are kept, so that a result of an earlier launch arriving after
 * one (from another stream) does not mark its bytes dirty again, and
 * launches before a write whose results come after it look its spans
 * up in the history, as late judgements do.  A copy carries its
 * source's state: copied from a range dirtied before it, the destination
 * becomes dirty as of the copy.  Only the source's first byte is looked
 * up, as only input words are, when the source's rows lie otherwise than
 * the destination's; a copy laid out byte for byte as its source (any 1D
 * copy) carries each dirty part of the source to its place, and the rest
 * of the destination is clean.
 *
 * Not thread-safe: one thread (the ring drainer) owns a tracker.  Nothing
 * allocates after np_dirty_init.
 */
#ifndef NP_DIRTY_H
#define NP_DIRTY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NP_DIRTY_MAX_INPUTS 16		/* input words kept per launch */
#define NP_DIRTY_DEFAULT_CAP 4096	/* known-dirty ranges, 24 bytes each */
#define NP_DIRTY_HISTORY 64		/* spans cleared or re-marked, for late judgements */
#define NP_DIRTY_WRITES 64		/* unchecked writes kept against earlier results */
#define NP_DIRTY_COPY_PARTS 16		/* a copy's dirty source parts carried apart */

struct np_dirty_launch {
	uint64_t tag;		/* launch-order number: a later launch has a larger tag */
	uint64_t stream;	/* CUstream, for the caller's report; the rule uses tags */
	uint64_t out_ptr;	/* the checked output range [out_ptr, out_ptr + out_len); */
	uint64_t out_len;	/* 0: the byte at out_ptr */
	uint32_t n_in;		/* words used in in[]; more than NP_DIRTY_MAX_INPUTS reads as that */
	uint64_t in[NP_DIRTY_MAX_INPUTS];	/* the kernel's pointer-like input words */
	uint32_t in_len[NP_DIRTY_MAX_INPUTS];	/* bytes it reads from in[k] on (past
						 * 4 GiB: 4 GiB); 0: the word only */
	bool late;		/* judged after results of launches that followed it (the
				 * generic tier): its inputs are looked up in the history too */
	const uint64_t *more_in;	/* input words past in[] (a torch.cat of many
					 * inputs, wide_inputs.h), or NULL: the judge's */
	uint32_t n_more;
	uint64_t first_bad;	/* the result's: byte offset in the output of its first
				 * non-finite element (the check's first_bad); out_len
				 * or past: not known.  The judge's */
};

enum np_dirty_verdict {
	NP_DIRTY_CLEAN = 0,	/* finite output */
	NP_DIRTY_FIRST_ORIGIN,	/* a birth launched before every other birth seen */
	NP_DIRTY_LATER_BIRTH,	/* a birth launched after the origin */
	NP_DIRTY_PROPAGATED,	/* dirty output, and an input read a dirty range */
};

/* What np_dirty_result saw, besides its verdict. */
struct np_dirty_why {
	bool inputs_dirty;	/* an input word lay in a known-dirty range: the
				 * record's SOURCE_DIRTY flag, for clean results too */
	uint64_t source_tag;	/* if so, the tag of the first such range */
};

#define NP_DIRTY_NO_BAD UINT64_MAX	/* a range's bad byte: none known */

struct np_dirty_range {
	uint64_t base, end;	/* [base, end) */
	uint64_t tag;		/* latest launch known to have left it non-finite */
	uint64_t bad;		/* a byte of it known non-finite (its launch's first bad
				 * element, while not written over), or NP_DIRTY_NO_BAD */
};

/* Bytes that were dirty as of dirty_tag until a launch tagged until
 * cleared them or left them dirty again; bad as the range's. */
struct np_dirty_span {
	uint64_t base, end, dirty_tag, until, bad;
};

/* An unchecked write of [base, end), launched as order. */
struct np_dirty_write {
	uint64_t base, end, order;
};

struct np_dirty {
	struct np_dirty_range *v;	/* sorted by base, non-overlapping */
	size_t len, cap;
	bool has_origin;
	uint64_t origin_tag;	/* the latest FIRST_ORIGIN's tag, if has_origin */
	uint64_t births;	/* FIRST_ORIGIN and LATER_BIRTH verdicts */
	uint64_t propagated;	/* PROPAGATED verdicts */
	uint64_t clean;		/* CLEAN verdicts */
	uint64_t evicted;	/* ranges dropped, oldest tag first, to make room */
	uint64_t forgotten;	/* spans pushed out of the full history ring */
	struct np_dirty_span hist[NP_DIRTY_HISTORY];	/* a ring: the latest spans */
	uint32_t hist_len, hist_next;
	uint64_t hist_until;	/* the largest until in it: later launches skip it */
	struct np_dirty_write writes[NP_DIRTY_WRITES];	/* a ring: the latest writes */
	uint32_t writes_len, writes_next;
	uint64_t writes_until;	/* the largest order in it: later results skip it */
	uint64_t written;	/* np_dirty_write and np_dirty_copy calls */
	uint64_t copied;	/* copies that carried a dirty source */
};

/* Room for cap known-dirty ranges (>= 1).  0, -EINVAL for cap 0, or
 * -ENOMEM. */
int np_dirty_init(struct np_dirty *t, size_t cap);
/* Frees the ranges; the tracker may be initialised again. */
void np_dirty_free(struct np_dirty *t);

/* Judges the result of the check kept as *launch: dirty non-zero when the
 * output held a non-finite value.  Updates the known-dirty ranges and the
 * counters, fills *why (may be NULL) and returns the verdict. */
enum np_dirty_verdict np_dirty_result(struct np_dirty *t, const struct np_dirty_launch *launch,
				      int dirty, struct np_dirty_why *why);

/* A write no check saw, launched as order (a number of the launches'
 * sequence), of [base, end): what launches before it left dirty there
 * is gone, and stays gone when their results come later. */
void np_dirty_write(struct np_dirty *t, uint64_t base, uint64_t end, uint64_t order);

/* A device copy no check saw, launched as order, into [base, end).
 * whole: its source is [src, src + end - base), laid out as the
 * destination byte for byte, and each part of it dirtied before order
 * becomes dirty as of order in its place (past NP_DIRTY_COPY_PARTS
 * parts, the last one covers the rest).  Else only src's first byte is
 * known: dirtied before order, all of [base, end) becomes dirty.  What
 * is not carried is written, as np_dirty_write's.  1 when anything was
 * carried, with the tag of the first such part in *source (may be
 * NULL); else 0. */
int np_dirty_copy(struct np_dirty *t, uint64_t base, uint64_t end, uint64_t src, bool whole,
		  uint64_t order, uint64_t *source);

/* 0 and the tag of the known-dirty range containing addr in *tag (may be
 * NULL), or -ENOENT. */
int np_dirty_lookup(const struct np_dirty *t, uint64_t addr, uint64_t *tag);

/* "clean", "first-origin", "later-birth", "propagated", or "?". */
const char *np_dirty_verdict_name(enum np_dirty_verdict v);

#endif
