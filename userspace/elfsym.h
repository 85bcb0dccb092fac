/* elfsym.h - symbols of an ELF file on disk, for placing uprobes and for
 * naming addresses (C++ vtables) seen in a process. */
#ifndef NP_ELFSYM_H
#define NP_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

struct np_elf;

/* Opens path and indexes .dynsym and .symtab.  NULL, errno set. */
struct np_elf *np_elf_open(const char *path);
void np_elf_close(struct np_elf *e);

/* Virtual address (st_value) of the defined symbol with exactly this name,
 * or of the first one starting with it when prefix is set.  0 if none. */
uint64_t np_elf_sym_addr(const struct np_elf *e, const char *name, int prefix);

/* File offset of a virtual address (for uprobe attach), or 0. */
uint64_t np_elf_vaddr_to_offset(const struct np_elf *e, uint64_t vaddr);

/* Lowest PT_LOAD p_vaddr minus its page offset: runtime address of vaddr
 * is map_start - np_elf_load_bias(e) + vaddr. */
uint64_t np_elf_load_bias(const struct np_elf *e);

/* Address and size of the section with this name.  0 or -ENOENT. */
int np_elf_section(const struct np_elf *e, const char *name, uint64_t *vaddr, uint64_t *size);

/* Reads size bytes at a virtual address from the file.  0 or -errno. */
int np_elf_read(const struct np_elf *e, uint64_t vaddr, void *buf, size_t size);

/* The vaddrs of the NUL-terminated string s in .rodata, each a whole
 * string (preceded by a NUL, not the tail of a longer one): up to max of
 * them written to out; how many. */
int np_elf_rodata_strings(const struct np_elf *e, const char *s, uint64_t *out, int max);

/* Calls fn(ctx, slot, target) for every relative relocation of the file
 * (R_X86_64_RELATIVE, R_AARCH64_RELATIVE: a pointer the loader sets to
 * load bias + target), until fn returns non-zero; returns that, or 0. */
typedef int (*np_elf_reloc_fn)(void *ctx, uint64_t slot, uint64_t target);
int np_elf_relative_relocs(const struct np_elf *e, np_elf_reloc_fn fn, void *ctx);

/* Name of the defined symbol containing vaddr (st_value <= vaddr <
 * st_value + st_size), among those starting with prefix; NULL if none. */
const char *np_elf_sym_at(const struct np_elf *e, uint64_t vaddr, const char *prefix);

#endif
