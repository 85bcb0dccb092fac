/* pymethods.c - method table lookups (see pymethods.h). */
#include <errno.h>
#include <string.h>
#include "pymem.h"
#include "pymethods.h"

#define MAX_STRINGS 8
#define METHOD_DEF_SIZE 32   /* sizeof(PyMethodDef) on 64-bit */

struct scan {
	uint64_t names[MAX_STRINGS], nexts[MAX_STRINGS], slots[MAX_STRINGS];
	int nnames, nnexts, nslots;
	uint64_t found;   /* ml_name's slot of the entry whose successor is `next` */
};

static int holds(const uint64_t *v, int n, uint64_t x)
{
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

/* pass 1: the slots that point at `name` */
static int name_slots(void *ctx, uint64_t slot, uint64_t target)
{
	struct scan *s = ctx;
	if (holds(s->names, s->nnames, target) && s->nslots < MAX_STRINGS)
		s->slots[s->nslots++] = slot;
	return 0;
}

/* pass 2: the one of them whose next entry's ml_name points at `next` */
static int next_entry(void *ctx, uint64_t slot, uint64_t target)
{
	struct scan *s = ctx;
	if (!holds(s->nexts, s->nnexts, target))
		return 0;
	for (int i = 0; i < s->nslots; i++)
		if (s->slots[i] + METHOD_DEF_SIZE == slot) {
			s->found = s->slots[i];
			return 1;
		}
	return 0;
}

int np_pymethod_slot(const struct np_elf *e, const char *name, const char *next,
		     uint64_t *slot)
{
	struct scan s;
	memset(&s, 0, sizeof(s));
	s.nnames = np_elf_rodata_strings(e, name, s.names, MAX_STRINGS);
	s.nnexts = np_elf_rodata_strings(e, next, s.nexts, MAX_STRINGS);
	if (!s.nnames || !s.nnexts)
		return -ENOENT;
	np_elf_relative_relocs(e, name_slots, &s);
	if (!s.nslots || !np_elf_relative_relocs(e, next_entry, &s))
		return -ENOENT;
	*slot = s.found + 8;   /* ml_meth follows ml_name */
	return 0;
}

int np_pymethod_read(pid_t pid, uint64_t base, uint64_t slot, uint64_t *vaddr)
{
	uint64_t v = 0;
	int err = np_pymem_read_pid((void *)(intptr_t)pid, base + slot, &v, sizeof(v));
	if (err)
		return err;
	if (!v)
		return -EAGAIN;
	if (v <= base)
		return -ENOENT;
	*vaddr = v - base;
	return 0;
}
