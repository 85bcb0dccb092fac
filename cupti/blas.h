/* blas.h - cuBLAS calls seen at the call (blas.c).
 *
 * A GEMM's kernels (nvjet, cutlass, xmma) take opaque parameter structs:
 * their launches say nothing of where the product goes.  So the agent
 * points the process's imports of cuBLAS's matrix multiplies
 * (cublas{S,D}gemm_v2, cublasSgemmEx, cublasGemmEx, their strided-
 * batched forms and cublasLtMatmul; the complex cublas{C,Z}gemm_v2 and
 * their strided-batched forms, whose D is checked as its real view),
 * and of the other calls with a
 * floating result that torch makes (cublas{S,D}gemv_v2, cublas{S,D}dot_v2
 * and cublasDotEx, cublas{S,D}trsm_v2: torch 2.11's libtorch_cuda.so
 * imports no other real-valued one but the batched LU and QR
 * factorisations, whose pointer arrays live on the device), at wrappers
 * of its own (gotpatch.h).  A wrapper plans
 * the call's output and reads from its arguments (gemm.h), then calls
 * the real function; the launch callback, on the same thread, hands the
 * call's kernel launches to the plan (np_blas_claim) instead of the
 * generic tier, and after the call's last kernel the wrapper has D
 * checked on that kernel's stream, after everything the call enqueued,
 * named after that kernel (a split-K GEMM's last kernel is its
 * reduction, which writes D; an earlier one writes only cuBLAS's
 * workspace).  A call whose D cannot be checked (a
 * view with gaps, an integer product) is not claimed: its
 * kernels go to the generic tier as before.
 *
 * The slots stay pointed at the wrappers when nanprof detaches (the
 * agent is never unloaded): with the checks off a wrapper describes the
 * call's operands (a few stores), tests a thread-local and calls the
 * real function.  With them on, it costs a few host calls more (the
 * pointer mode; cublasLt's layout attributes).
 * cuDNN's batch norms and backend executions (dnn_calls.c) and cuFFT's
 * transforms (fft_calls.c) use the same slots and bookkeeping.
 * NANPROF_GPU_BLAS=0 leaves the imports alone.
 */
#ifndef NP_BLAS_H
#define NP_BLAS_H

#include <cuda.h>
#include "gemm.h"
#include "kfunc.h"

/* Points the imports of every object loaded since the last call (all,
 * the first time) at the wrappers, once cuBLAS is loaded; cuBLAS's own
 * objects and the agent's are left alone.  Cheap when nothing was
 * loaded since.  Returns the import slots written.  The agent's control
 * thread only (it takes the loader's lock). */
int np_blas_install(void);

/* The same for the cuDNN backend API's descriptor calls and cuFFT's plan
 * calls alone, before
 * checks start, from cuDNN's load on.  torch loads cuDNN at its import
 * but libcuda only at its first CUDA call, and builds (and caches) a
 * convolution's execution plan at the first call of each shape, maybe
 * before np_blas_install has run; a plan not seen built is never
 * planned (dnn_graph.h).  The wrappers only keep the table: nothing of
 * CUDA is touched.  The agent's control thread only. */
int np_blas_track(void);

/* From the launch callback, on the launching thread: 1 when the launch
 * is a kernel of a wrapped call in progress whose output is planned
 * (the callback then leaves it to the wrapper), else 0. */
int np_blas_claim(struct np_kfunc *f, CUstream stream, CUcontext ctx);

/* From the launch callback, on the launching thread, for deferred checks
 * (defer.h): 0 when no wrapped call is in progress; else the count of
 * ranges [lo[i], hi[i]) its kernels may write (the plan's outputs:
 * cuBLAS's D, a cuDNN call's; the workspace torch gave it:
 * blas_workspace.h; a batch norm's statistics), or -1 when they are not
 * all known (a call not planned, a handle whose workspace was never
 * seen set, a cublasLt epilogue that writes more, an fp8 GEMM's max |D|,
 * a cuDNN plan whose workspace size cuDNN would not say, a cuFFT work
 * area of unknown size; more ranges than NP_CALL_WRITES).  Without it
 * every kernel of a library call launches everything waiting. */
#define NP_CALL_WRITES 12       /* 1 + NP_GEMM_MORE_OUTS outputs, 6 ranges besides */
int np_blas_call_writes(uint64_t lo[NP_CALL_WRITES], uint64_t hi[NP_CALL_WRITES]);

/* One wrapped library function: the library that defines it (a file name
 * prefix), its name, the wrapper, and where the real one is kept. */
struct np_libcall {
	const char *lib, *name;
	void *wrapper;
	void **real;
};

/* For other libraries' wrappers (dnn_calls.c), on the calling thread:
 * whether a call starting now may be planned (no wrapped call in
 * progress, checks on); the start of a call, with its plan (NULL: a call
 * whose kernels go to the generic tier); its end, with its status (0:
 * success), which it returns.  Every np_blas_begin_plan needs its
 * np_blas_end. */
int np_blas_idle(void);
int np_blas_begin_plan(const struct np_gemm_plan *p);
int np_blas_end(int status);
/* After np_blas_begin_plan returned 1, with checks deferred: the call
 * writes its plan's outputs and the n ranges [lo[i], hi[i]) besides, and
 * nothing else (np_blas_call_writes).  Not called: its writes are not
 * known, and its kernels launch everything waiting. */
void np_blas_writes_besides(const uint64_t *lo, const uint64_t *hi, int n);

/* cuDNN's wrapped calls (dnn_calls.c), and what they need looked up
 * first (np_dnn_prepare, from np_blas_install); and the backend API's
 * descriptor calls, which only keep dnn_graph.h's table (np_blas_track). */
#define NP_DNN_WRAPPED 8
extern const struct np_libcall np_dnn_wrapped[NP_DNN_WRAPPED];
#define NP_DNN_TRACKERS 4
extern const struct np_libcall np_dnn_trackers[NP_DNN_TRACKERS];
void np_dnn_prepare(void);

/* cuFFT's transforms (fft_calls.c), and the plan calls that only keep
 * fft.h's table of plans (np_blas_track, from cuFFT's load on: torch
 * makes a plan at the first transform of each shape and caches it). */
#define NP_FFT_WRAPPED 7
extern const struct np_libcall np_fft_wrapped[NP_FFT_WRAPPED];
#define NP_FFT_TRACKERS 12
extern const struct np_libcall np_fft_trackers[NP_FFT_TRACKERS];

/* Implemented in subscriber.c: checks a planned call's output after its
 * last kernel f, launched on stream in ctx, as a decoded launch's (its
 * reads first, for the generic tier; sampling, the guards' writers). */
void np_gpu_gemm_done(const struct np_gemm_plan *p, struct np_kfunc *f, CUstream stream,
		      CUcontext ctx);

#endif
