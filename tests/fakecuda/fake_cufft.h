/* fake_cufft.h - the part of cuFFT's API (cuFFT 12's cufft.h and
 * cufftXt.h: the same names, signatures and values) that the fake cuFFT
 * (fake_cufft.c, built as libcufft.so.12) implements for the fake job
 * (fake_ops.c): plans made as torch makes them (cufftCreate, then
 * cufftXtMakePlanMany) or by the legacy cufftPlan1d and
 * cufftMakePlanMany64, and their
 * execution (cufftXtExec, cufftExecC2R, cufftExecR2C, cufftExecC2C).
 *
 * A transform runs one kernel on the fake driver whose only parameter is
 * the address of a descriptor in device memory, as opaque as cuFFT's own
 * kernels (vector_fft_c2r...): the agent can learn where a transform
 * writes only from the call and its plan (cupti/fft.h).  The arithmetic
 * is no Fourier transform, only a map that carries every non-finite
 * value of the input into the output: what the checks are about.
 * Rank 1, dense layouts only (no embed arrays, or embeds that describe
 * the basic layout); float32 and complex64.
 */
#ifndef NP_FAKE_CUFFT_H
#define NP_FAKE_CUFFT_H

#include <cuda.h>

typedef int cufftResult;
typedef int cufftHandle;
enum { CUFFT_SUCCESS = 0, CUFFT_INVALID_PLAN = 1, CUFFT_INVALID_VALUE = 4,
       CUFFT_EXEC_FAILED = 6, CUFFT_NOT_SUPPORTED = 16 };
enum { CUFFT_R2C = 0x2a, CUFFT_C2R = 0x2c, CUFFT_C2C = 0x29 };
enum { CUFFT_FORWARD = -1, CUFFT_INVERSE = 1 };
enum { FAKE_FFT_R_32F = 0, FAKE_FFT_C_32F = 4 };

cufftResult cufftCreate(cufftHandle *plan);
cufftResult cufftDestroy(cufftHandle plan);
cufftResult cufftSetStream(cufftHandle plan, CUstream stream);
cufftResult cufftPlan1d(cufftHandle *plan, int nx, int type, int batch);
cufftResult cufftXtMakePlanMany(cufftHandle plan, int rank, long long *n, long long *inembed,
				long long istride, long long idist, int inputtype,
				long long *onembed, long long ostride, long long odist,
				int outputtype, long long batch, size_t *workSize,
				int executiontype);
cufftResult cufftMakePlanMany64(cufftHandle plan, int rank, long long *n, long long *inembed,
				long long istride, long long idist, long long *onembed,
				long long ostride, long long odist, int type, long long batch,
				size_t *workSize);
/* the work area a plan's transforms use: FAKE_FFT_WORK_FLOATS floats
 * (the size a cufftXtMakePlanMany or cufftMakePlanMany64 says), which a
 * transform fills with NaN (its scratch) when one was set */
#define FAKE_FFT_WORK_FLOATS 80
cufftResult cufftSetWorkArea(cufftHandle plan, void *workArea);
cufftResult cufftXtExec(cufftHandle plan, void *input, void *output, int direction);
cufftResult cufftExecC2R(cufftHandle plan, void *idata, void *odata);
cufftResult cufftExecR2C(cufftHandle plan, void *idata, void *odata);
cufftResult cufftExecC2C(cufftHandle plan, void *idata, void *odata, int direction);

#endif
