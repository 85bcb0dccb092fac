/* np_atomic.h - the few atomics and fences the check kernels use, as
 * macros that mean the same thing in nvcc's device pass (CUDA atomics,
 * __threadfence*) and on the host (GCC __atomic builtins), so that
 * check_accum.h and gpu_ring.h are one piece of code, unit-tested on the
 * CPU (tests/unit/test_check_kernels.c) and run unchanged on the GPU.
 *
 * The macros are expanded inside NP_HD functions, so the choice is made
 * per compilation pass (__CUDA_ARCH__), not per file.
 *
 *   NP_ATOMIC_ADD32/64(p, v)   fetch-and-add, relaxed; returns the old value
 *   NP_ATOMIC_MAX64(p, v)      unsigned fetch-and-max, relaxed
 *   NP_ATOMIC_XCHG32/64(p, v)  exchange, relaxed; returns the old value
 *   NP_ATOMIC_CAS32(p, o, n)   compare-and-swap; returns the value seen
 *   NP_LOAD32(p)               a fresh (not cached) load of a shared word
 *   NP_LOAD_ACQ32(p)           the same, ordered before later accesses
 *   NP_STORE_REL32(p, v)       a store ordered after earlier accesses
 *                              (on the device: after NP_FENCE_SYSTEM())
 *   NP_FENCE_DEVICE()          orders this thread's accesses for the GPU
 *   NP_FENCE_SYSTEM()          ... and for the host, over PCIe
 */
#ifndef NP_ATOMIC_H
#define NP_ATOMIC_H

#ifdef __CUDA_ARCH__

#define NP_ATOMIC_ADD32(p, v)     atomicAdd((p), (unsigned int)(v))
#define NP_ATOMIC_ADD64(p, v)     atomicAdd((p), (unsigned long long)(v))
#define NP_ATOMIC_MAX64(p, v)     atomicMax((p), (unsigned long long)(v))
#define NP_ATOMIC_XCHG32(p, v)    atomicExch((p), (unsigned int)(v))
#define NP_ATOMIC_XCHG64(p, v)    atomicExch((p), (unsigned long long)(v))
#define NP_ATOMIC_CAS32(p, o, n)  atomicCAS((p), (o), (n))
/* volatile: straight to L2 (device memory) or over PCIe (mapped memory),
 * never a stale L1 line */
#define NP_LOAD32(p)              (*(const volatile unsigned int *)(p))
#define NP_LOAD_ACQ32(p)          (*(const volatile unsigned int *)(p))
#define NP_STORE_REL32(p, v)      (*(volatile unsigned int *)(p) = (v))
#define NP_FENCE_DEVICE()         __threadfence()
#define NP_FENCE_SYSTEM()         __threadfence_system()

#else /* host: gcc, or nvcc's host pass */

#define NP_ATOMIC_ADD32(p, v)     __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define NP_ATOMIC_ADD64(p, v)     __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define NP_ATOMIC_MAX64(p, v)     np_host_fetch_max64((p), (v))
#define NP_ATOMIC_XCHG32(p, v)    __atomic_exchange_n((p), (v), __ATOMIC_RELAXED)
#define NP_ATOMIC_XCHG64(p, v)    __atomic_exchange_n((p), (v), __ATOMIC_RELAXED)
#define NP_ATOMIC_CAS32(p, o, n)  np_host_cas32((p), (o), (n))
#define NP_LOAD32(p)              __atomic_load_n((p), __ATOMIC_RELAXED)
#define NP_LOAD_ACQ32(p)          __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define NP_STORE_REL32(p, v)      __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define NP_FENCE_DEVICE()         __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define NP_FENCE_SYSTEM()         __atomic_thread_fence(__ATOMIC_SEQ_CST)

/* GCC has no fetch-max builtin: a CAS loop, like the GPU does in L2. */
static inline unsigned long long np_host_fetch_max64(unsigned long long *p,
						     unsigned long long v)
{
	unsigned long long old = __atomic_load_n(p, __ATOMIC_RELAXED);
	while (old < v &&
	       !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return old;
}

/* atomicCAS's contract: returns what *p held; the swap happened iff that
 * equals o.  acq_rel, so that a taken ring slot is not written before
 * the tail that freed it was read. */
static inline unsigned int np_host_cas32(unsigned int *p, unsigned int o, unsigned int n)
{
	__atomic_compare_exchange_n(p, &o, n, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	return o;
}

#endif

#endif
