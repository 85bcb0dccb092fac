/* writers.h - whether the launch checks saw what last wrote a buffer: the
 * question a module-level "guard" check asks before it checks a CUDA
 * tensor a module returned.
 *
 * The launch checks name the kernel a non-finite value was born in, but
 * only when they can decode its outputs.  A value an undecoded kernel
 * makes (cuBLAS, cuDNN, a reduction) is first seen at its first decoded
 * reader, which then looks like the birth: the wrong op, and often the
 * wrong module (the GELU after a Linear whose matmul overflowed).  So in
 * "every" mode the hooks' CUDA tensors get a module-level check of their
 * own whenever the launch checks may not have seen their last writer:
 * the births of undecoded kernels are then named at the module that ran
 * them.  Tensors a decoded, checked kernel wrote are not checked twice.
 *
 * The rule, on one global launch order (np_writers_next()):
 *   a buffer's start address was the output of a checked launch, and no
 *   launch whose outputs went unchecked came after that one
 *                                         -> seen: no guard check
 *   otherwise (never seen, or an unchecked launch since: it may have
 *   written the buffer through a pointer nobody decoded)
 *                                         -> guard check
 * It is conservative: an unchecked launch on any thread or stream makes
 * every older output "maybe overwritten".  A guard check that was
 * launched counts as a checked write of its buffer, so a parent module
 * returning its child's output is not checked again.
 *
 * A bounded, direct-mapped table (NP_WRITERS_SLOTS): a slot taken by
 * another address forgets the first, whose next guard then checks.
 * Thread-safe (one mutex; launch callbacks and hooks run on any thread).
 */
#ifndef NP_WRITERS_H
#define NP_WRITERS_H

#include <stdint.h>

#define NP_WRITERS_SLOTS 8192   /* 32 bytes each */

/* Forgets everything (tests, and a new start). */
void np_writers_reset(void);

/* A number for a new launch, larger than every earlier one's (from 1). */
uint64_t np_writers_next(void);

/* In a dtype kept here: the write was a complex tensor's, checked as its
 * real view (np_kbuf.pairs), and the rest of the value is its parts'
 * enum np_dtype.  A copy or a cat of it is then a complex one too. */
#define NP_WRITERS_PAIRS 0x100

/* Launch `seq` wrote ptr, as elements of dtype (enum np_dtype, with
 * NP_WRITERS_PAIRS for complex values), and its check was enqueued with
 * `tag` (0: a captured check, whose records come at replays). */
void np_writers_checked(uint64_t ptr, uint64_t seq, uint64_t tag, int dtype);

/* Launch `seq` may have written buffers no check covers. */
void np_writers_unchecked(uint64_t seq);

/* 1: the latest writer of ptr was checked (the rule above); 0: a guard
 * check is needed.  When seen, *tag (if not NULL) is that write's check
 * tag, whose record holds ptr's largest |x| (outmax.h); 0 for a captured
 * check. */
int np_writers_seen(uint64_t ptr, uint64_t *tag);

/* The number of the latest checked launch that wrote ptr, 0 if none is
 * known: a launch after it may have written ptr. */
uint64_t np_writers_last(uint64_t ptr);

/* The dtype of the latest checked write starting at ptr (what a copy of
 * it holds; NP_WRITERS_PAIRS set for complex values), or -1 if none is
 * known. */
int np_writers_dtype(uint64_t ptr);

#endif
