/* pymethods.h - a Python extension's C function found through its
 * method table, where its symbol is gone (a stripped build).
 *
 * THPEngine_run_backward (torch._C._EngineBase.run_backward, behind every
 * loss.backward()) is static in torch 2.x: it is named only in .symtab,
 * which a distribution's package strips.  Its PyMethodDef
 *     { ml_name, ml_meth, ml_flags, ml_doc }          (32 bytes)
 * sits in THPEngine_methods just before {"queue_callback", ...}.  Each
 * ml_name is a relative relocation to its string; the ml_meth beside
 * run_backward's has none: the library's static initialiser writes it
 * (castPyCFunctionWithKeywords is no constant expression), so it is read
 * from the live process, once that initialiser has run.
 */
#ifndef NP_PYMETHODS_H
#define NP_PYMETHODS_H

#include <stdint.h>
#include <sys/types.h>
#include "elfsym.h"

/* The vaddr of ml_meth in the method table entry named `name` that the
 * entry named `next` follows.  0 or -ENOENT. */
int np_pymethod_slot(const struct np_elf *e, const char *name, const char *next,
		     uint64_t *slot);

/* The function's vaddr, read from that slot in process pid, whose copy
 * of the file has vaddr 0 at base.  0; -EAGAIN while the slot is still
 * unset (the library is loading); -errno when it cannot be read. */
int np_pymethod_read(pid_t pid, uint64_t base, uint64_t slot, uint64_t *vaddr);

#endif
