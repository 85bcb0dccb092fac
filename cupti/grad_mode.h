/* grad_mode.h - the launching thread's autograd mode, for a kernel's
 * record: a NaN born in an evaluation pass (torch.no_grad()) or under
 * torch.inference_mode() says so, as a CPU tensor's does (agent/tensor.c
 * asks Python; here there is no Python to ask, and no GIL).
 *
 * c10 keeps the mode in a thread-local that its exported functions
 * c10::GradMode::is_enabled() and c10::InferenceMode::is_enabled() read
 * (libc10.so, torch 1.13 to 2.14): no lock, no allocation, safe in a
 * launch callback on any thread, autograd's own included. */
#ifndef NP_GRAD_MODE_H
#define NP_GRAD_MODE_H

#include <stdint.h>

/* Looks the two functions up in a mapped libc10 (dlopen with
 * RTLD_NOLOAD: never loads it).  Call outside launch callbacks, as it
 * takes the loader's lock; again later if torch was not loaded yet
 * (cheap once found; rate-limited before). */
void np_grad_mode_resolve(void);

/* The calling thread's mode: enum np_arec_mode bits (agent_report.h),
 * 0 when libc10 was not found (not a torch process, or not yet). */
uint8_t np_grad_mode_now(void);

#endif
