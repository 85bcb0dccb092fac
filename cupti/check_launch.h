/* check_launch.h - enqueueing finite checks (check_launch.c), shared by
 * the CUPTI launch callbacks (subscriber.c) and the module-level checks
 * (modules.c).  Internal to cupti/.
 *
 * A check is prepared (its in-flight entry stored: what the drain
 * judges its result by) and then launched on the stream after what it
 * checks, never past the device allocation holding its buffer: a
 * decoding mistake must not become a read that faults and takes the
 * job's CUDA context down with it. */
#ifndef NP_CHECK_LAUNCH_H
#define NP_CHECK_LAUNCH_H

#include <cuda.h>
#include <stdint.h>
#include <time.h>
#include "../kernels/check_abi.h"
#include "generic.h"
#include "gpu_ctx.h"
#include "kdecode.h"
#include "kfunc.h"

static inline uint64_t np_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The calling thread's id, kept after the first ask. */
uint32_t np_gpu_tid(void);

/* NANPROF_GPU_DIAG=empty-checks (gpu.h): checks launched, reading nothing. */
void np_check_set_empty(int on);

/* A check made ready: its in-flight entry stored, its arguments filled;
 * launched alone or in a list (np_check_list_<dtype>). */
struct np_check_ready {
	struct np_check_args args;
	unsigned blocks;
	uint8_t dtype;
	uint64_t span;   /* bytes from args.buf it reads (even when it is
			  * made to read nothing: np_check_set_empty) */
};

/* Prepares the check of output b, made by f on stream, judged on
 * inputs[0..n_in); an input word that is a read's of rd[0..nr) (rd may
 * be NULL) is judged over the read's extent, not its word alone (a
 * reader of a whole buffer handed its start sees a birth in a slice of
 * it).  as: the generic tier's undecoded launch whose output b is,
 * found at a later reader (NULL: f's own).  1: c is ready; 0: not
 * (counted); -1: b's extent is unknown. */
int np_check_prepare(struct np_gpu_ctx *g, CUstream stream, const struct np_kfunc *f,
		     const struct np_kbuf *b, const uint64_t *inputs, uint32_t n_in,
		     const struct np_kread *rd, int nr, int captured,
		     const struct np_generic_launch *as, struct np_check_ready *c);

/* Outputs of one launch, checked in as few launches as it takes: small
 * ones (at most NP_CHECK_LIST_MAX_BLOCKS blocks: every entry of a list
 * gets as many blocks as its largest) of one dtype go in one list
 * launch.  Starts empty (np_check_batch_init); flushed before the
 * launch's callback returns.  A deferring batch (NANPROF_GPU_DEFER,
 * defer.h) launches nothing: its checks wait, with other launches'. */
#define NP_CHECK_LIST_MAX_BLOCKS 8
struct np_check_batch {
	struct np_check_list list;
	uint16_t blocks_of[NP_CHECK_LIST];   /* each entry's own, for a lone launch */
	unsigned n, blocks;
	uint8_t dtype;
	uint8_t defer;
	uint64_t bytes;
};

/* Empty, without clearing the list (a kilobyte, on every launch);
 * deferring if defer (and NANPROF_GPU_DEFER is on). */
void np_check_batch_init_for(struct np_check_batch *bt, int defer);
static inline void np_check_batch_init(struct np_check_batch *bt)
{
	np_check_batch_init_for(bt, 0);
}

/* c into bt (a large one launched at once, alone). */
void np_check_batch_add(struct np_gpu_ctx *g, CUstream stream, struct np_check_batch *bt,
			const struct np_check_ready *c);

/* What bt holds, launched on stream; bt empty again. */
void np_check_batch_flush(struct np_gpu_ctx *g, CUstream stream, struct np_check_batch *bt);

/* The n checks of list (of dtype; blocks_of[i] each, the largest
 * blocks, reading bytes in all) in one launch on stream (alone when n is
 * 1), nothing waiting launched first: defer.c's. */
void np_check_list_launch(struct np_gpu_ctx *g, CUstream stream, uint8_t dtype,
			  const struct np_check_list *list, const uint16_t *blocks_of, unsigned n,
			  unsigned blocks, uint64_t bytes);

/* Launches np_check_<dtype> over b on stream, after what is queued
 * there, with an in-flight entry saying which function made b (f) and
 * from which input words (dirty.h judges the result).  b->numel 0: only
 * as far as a tensor interval covers.  Never past the device allocation
 * holding b.  Returns 1 if launched (*tag: its record's tag, 0 for a
 * captured check), 0 if not (counted), -1 if b's extent is unknown.  A
 * launched check makes the generic tier's note of b stale (generic.h).
 * While checks are deferred (defer.h) one not captured waits with them
 * instead ("launched" then means on its way). */
int np_gpu_launch_check(struct np_gpu_ctx *g, CUstream stream, const struct np_kfunc *f,
			const struct np_kbuf *b, const uint64_t *inputs, uint32_t n_in,
			int captured, uint64_t *tag);

/* The same, the check reading b's bytes at `read` instead (0: at b->ptr),
 * over as many bytes: a copy's source, once the copy is done, on the
 * copy's device when its destination is another device's (copy_calls.c);
 * inputs judged over the extents of rd[0..nr), as np_check_prepare's. */
int np_gpu_launch_check_from(struct np_gpu_ctx *g, CUstream stream, const struct np_kfunc *f,
			     const struct np_kbuf *b, uint64_t read, const uint64_t *inputs,
			     uint32_t n_in, const struct np_kread *rd, int nr, int captured,
			     uint64_t *tag);

/* Whether module-level checks are guards (gpu.h): then a launched one is
 * counted as a guard. */
int np_gpu_guarding(void);

/* Whether launches are numbered and their checked writes noted
 * (writers.h): with the launch checks and module-level checks both on
 * (guards, "+modules"), for the guards' rule and for naming a module-level
 * check after its suspect. */
int np_gpu_writers(void);

/* The kernel a module-level check of ptr most likely checks the work of: the
 * calling thread's latest launch whose outputs went unchecked, if it
 * came after the latest checked write of ptr (writers.h).  Its kfunc id,
 * or 0. */
uint32_t np_gpu_suspect(uint64_t ptr);

#endif
