/* triton_plan.h - the calls a torch.compile'd Triton kernel's Python
 * launch makes into the agent (triton_plan.c, cupti/triton.h). */
#ifndef NP_TRITON_PLAN_H
#define NP_TRITON_PLAN_H

#include "pyapi.h"

/* "plan" (name, flat) or "done" (): a new reference (GIL held). */
PyObject *np_triton_callable(const char *which);

#endif
