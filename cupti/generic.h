/* generic.h - the generic tier: outputs of kernels no decoder reads
 * (cuBLAS, cuDNN, Triton, NCCL), checked at their first
 * decoded reader.
 *
 * An undecoded launch hands its kernel pointers inside opaque structures,
 * and nothing says which are outputs or how long they are.  Checking
 * every pointer word from the word to the end of its allocator segment
 * would run into other tensors, and into freed memory that may hold any
 * bit pattern: a false birth.  So the tier splits the question in two:
 *
 *  - at the undecoded launch U: its parameter words that lie inside a
 *    known device allocation are noted, each as "maybe written by U"
 *    (np_generic_note);
 *  - at a later decoded launch R that reads one of those addresses with
 *    a known extent and dtype (np_kdecode_reads: an elementwise kernel's
 *    inputs, a layer norm's or softmax's rows), the address is taken
 *    (np_generic_take) and checked over that extent, after R on R's
 *    stream, as U's output: under U's kernel, thread and launch time (so
 *    nanprof places it in U's module, step and phase), ordered in the
 *    clean->dirty tracker (dirty.h) at U's place, judged on U's other
 *    pointer words.  R's own check then sees its input dirty:
 *    propagation, and U is the birth.
 *
 * A checked write of an address (a decoded kernel's output, a copy, a
 * guard) makes its note stale (np_generic_forget): what the address
 * holds was then checked after U.
 *
 * An address maps to the latest undecoded launch handed it, which is
 * right for the common shapes (a matmul, then its bias or activation; a
 * reused block's new producer) and wrong when an undecoded kernel
 * writes a buffer that a second undecoded kernel then reads before any
 * decoded one does: the second is named.  Each note is taken once.
 *
 * Bounded: the latest NP_GENERIC_LAUNCHES undecoded launches, and a
 * direct-mapped table of NP_GENERIC_SLOTS addresses; an address whose
 * launch was overwritten, or whose slot another address took, is
 * forgotten and counted (np_generic_stats).  Thread-safe (one mutex;
 * launch callbacks run on any thread); nothing allocates.
 */
#ifndef NP_GENERIC_H
#define NP_GENERIC_H

#include <stdint.h>

#define NP_GENERIC_WORDS 16	/* pointer words kept per undecoded launch */
#define NP_GENERIC_LAUNCHES 1024	/* undecoded launches remembered, about 200 KiB */
#define NP_GENERIC_SLOTS 8192	/* addresses remembered, 16 bytes each */

/* An undecoded launch, as its generic checks will report it. */
struct np_generic_launch {
	uint64_t order;		/* its place in the dirty tracker's launch order */
	uint64_t seq;		/* its writers.h number, 0 when none is kept */
	uint64_t launch_ns;	/* CLOCK_MONOTONIC, at its launch */
	uint32_t tid;		/* the launching thread */
	uint32_t func;		/* its kfunc id */
	uint8_t captured;	/* launched into a stream capturing a CUDA graph */
	uint8_t mode;		/* the launching thread's grad mode (grad_mode.h) */
	uint32_t n_words;
	uint64_t words[NP_GENERIC_WORDS];	/* its pointer words inside allocations */
	uint32_t read_only;	/* bit k: words[k] it is known to only read (an input of
				 * its checks, not mapped to it) */
};

struct np_generic_stats {
	uint64_t noted;		/* undecoded launches noted */
	uint64_t taken;		/* addresses taken for a check */
	uint64_t expired;	/* addresses whose launch was overwritten when asked */
	uint64_t displaced;	/* addresses whose slot another address took */
};

/* Forgets everything (tests, and a new start). */
void np_generic_reset(void);

/* Notes *u: each of u->words not read_only now maps to it (replacing an
 * older note of the same address).  Words beyond NP_GENERIC_WORDS are not
 * kept. */
void np_generic_note(const struct np_generic_launch *u);

/* 1 and the launch noted for addr in *out, when there is one and no
 * checked write of addr came since; the note is then used up.  0
 * otherwise. */
int np_generic_take(uint64_t addr, struct np_generic_launch *out);

/* Whether any launch was ever noted: until then no decoded launch's
 * reads need decoding (np_kdecode_reads). */
int np_generic_any(void);

/* Whether addr may be noted now: a look without the lock, for a filter
 * on every launch (a note being written may be missed; a yes is
 * confirmed by np_generic_take). */
int np_generic_maybe(uint64_t addr);

/* A checked write of addr: its note, if any, is stale. */
void np_generic_forget(uint64_t addr);

void np_generic_stats(struct np_generic_stats *out);

#endif
