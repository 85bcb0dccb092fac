/* check_launch.h - enqueueing one finite check, shared by the CUPTI
 * launch callbacks (subscriber.c) and the module-level checks
 * (modules.c).  Internal to cupti/. */
#ifndef NP_CHECK_LAUNCH_H
#define NP_CHECK_LAUNCH_H

#include <cuda.h>
#include <stdint.h>
#include "gpu_ctx.h"
#include "kdecode.h"
#include "kfunc.h"

/* Launches np_check_<dtype> over b on stream, after what is queued
 * there, with an in-flight entry saying which function made b (f) and
 * from which input words (dirty.h judges the result).  b->numel 0: only
 * as far as a tensor interval covers.  Never past the device allocation
 * holding b.  Returns 1 if launched (*tag: its record's tag, 0 for a
 * captured check), 0 if not (counted), -1 if b's extent is unknown.  A
 * launched check makes the generic tier's note of b stale (generic.h). */
int np_gpu_launch_check(struct np_gpu_ctx *g, CUstream stream, const struct np_kfunc *f,
			const struct np_kbuf *b, const uint64_t *inputs, uint32_t n_in,
			int captured, uint64_t *tag);

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
