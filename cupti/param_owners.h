/* param_owners.h - which module owns the CUDA parameter at an address:
 * how a kernel the optimizer launched is named by the parameter it made
 * non-finite.
 *
 * An optimizer's kernels run outside every module (one foreach launch
 * updates all of a group's parameters), so the launch context alone
 * names an lr=inf update at module "".  On the CPU the agent checks each
 * parameter after the step and names its owner; on CUDA the launch check
 * of the update sees the parameter's memory, not the parameter.  So the
 * agent's optimizer hook notes each CUDA parameter's data pointer with
 * its owner and name, and the drain, reporting a birth whose checked
 * range starts at a noted pointer, says whose it is (drain.c).
 *
 * Bounded, direct-mapped (NP_PARAM_OWNER_SLOTS): a slot taken by another
 * pointer forgets the first (counted); a parameter moved to new memory is
 * noted again at the next step.  Thread-safe (one mutex: the hooks note,
 * the drain thread looks up).  Nothing here needs CUDA.
 */
#ifndef NP_PARAM_OWNERS_H
#define NP_PARAM_OWNERS_H

#include <stdint.h>

#define NP_PARAM_OWNER_SLOTS 16384   /* 48 bytes each */
#define NP_PARAM_NAME 24             /* as a CHECK record's `what` */

/* Forgets everything (tests, and a new start). */
void np_param_owners_reset(void);

/* The parameter at ptr is owner's (a module's address, as the agent's
 * records give it), named name ("weight"; cut to NP_PARAM_NAME - 1). */
void np_param_owner_note(uint64_t ptr, uint64_t owner, const char *name);

/* 1 and the owner and name of the parameter noted at ptr; 0 if none. */
int np_param_owner_of(uint64_t ptr, uint64_t *owner, char name[NP_PARAM_NAME]);

/* Notes that replaced another pointer's. */
uint64_t np_param_owners_displaced(void);

#endif
