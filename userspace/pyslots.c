#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "pyslots.h"

#define TP_CALL_SLOT_OFFSET 128   /* offsetof(PyTypeObject, tp_call) */
#define MAX_CANDIDATES 16
#define MAX_SECTION (64u << 20)

static int scan_section(const struct np_elf *e, const char *name, uint64_t bias,
			np_mem_read_fn read, void *ctx, const uint64_t *strs, int nstrs,
			uint64_t *vaddr)
{
	uint64_t addr, size;
	if (np_elf_section(e, name, &addr, &size) || size > MAX_SECTION)
		return -ENOENT;
	uint8_t *buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	int err = read(ctx, bias + addr, buf, size);
	if (err) {
		free(buf);
		return err;
	}
	err = -ENOENT;
	for (uint64_t i = 0; i + 24 <= size && err; i += 8) {
		uint64_t name_ptr, fn;
		int32_t off;
		memcpy(&name_ptr, buf + i, 8);
		memcpy(&off, buf + i + 8, 4);
		memcpy(&fn, buf + i + 16, 8);
		if (off != TP_CALL_SLOT_OFFSET || fn <= bias)
			continue;
		for (int k = 0; k < nstrs; k++)
			if (name_ptr == bias + strs[k]) {
				*vaddr = fn - bias;
				err = 0;
				break;
			}
	}
	free(buf);
	return err;
}

int np_find_slot_tp_call(const struct np_elf *e, uint64_t bias, np_mem_read_fn read,
			 void *ctx, uint64_t *vaddr)
{
	uint64_t v = np_elf_sym_addr(e, "slot_tp_call", 0);
	if (v) {
		*vaddr = v;
		return 0;
	}
	uint64_t strs[MAX_CANDIDATES];
	int n = np_elf_rodata_strings(e, "__call__", strs, MAX_CANDIDATES);
	if (n == 0)
		return -ENOENT;
	if (scan_section(e, ".data", bias, read, ctx, strs, n, vaddr) == 0 ||
	    scan_section(e, ".data.rel.ro", bias, read, ctx, strs, n, vaddr) == 0)
		return 0;
	return -ENOENT;
}
