/* pyslots.h - finding CPython's slot_tp_call in a live process.
 *
 * slot_tp_call is static: it has a name only where the interpreter keeps
 * its symbol table (pyenv's libpython does; Debian's python3.11 is
 * stripped).  Its address is also in CPython's `slotdefs` table, which
 * pairs each dunder name with the slot function that calls it:
 *     { "__call__", offsetof(PyHeapTypeObject, ht_type.tp_call) = 128,
 *       slot_tp_call, wrap_call, doc, flags, name_strobj }
 * The table's pointers are relocated at load time, so it is read from
 * the process: find the "__call__" strings in .rodata, then the table
 * entry pointing at one with offset 128, in .data or .data.rel.ro.
 */
#ifndef NP_PYSLOTS_H
#define NP_PYSLOTS_H

#include <stdint.h>
#include <sys/types.h>
#include "elfsym.h"
#include "pymem.h"

/* The virtual address (in the file e) of slot_tp_call; bias is the
 * runtime address of the file's vaddr 0 in the process that read reads.
 * 0 or -ENOENT. */
int np_find_slot_tp_call(const struct np_elf *e, uint64_t bias, np_mem_read_fn read,
			 void *ctx, uint64_t *vaddr);

#endif
