#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "elfsym.h"

struct np_sym {
	uint64_t addr;
	uint64_t size;
	const char *name;   /* points into the ELF's string table */
};

struct np_elf {
	int fd;
	Elf *elf;
	struct np_sym *syms;   /* sorted by address */
	size_t nsyms;
	uint64_t max_size;      /* largest st_size, bounds np_elf_sym_at's walk */
	GElf_Phdr *phdrs;
	size_t nphdrs;
};

static int sym_cmp(const void *a, const void *b)
{
	const struct np_sym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int index_section(struct np_elf *e, Elf_Scn *scn, GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	if (!data || !sh->sh_entsize)
		return 0;
	size_t n = sh->sh_size / sh->sh_entsize;
	struct np_sym *grown = realloc(e->syms, (e->nsyms + n) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	e->syms = grown;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym s;
		if (!gelf_getsym(data, (int)i, &s) || s.st_shndx == SHN_UNDEF || !s.st_value)
			continue;
		int type = GELF_ST_TYPE(s.st_info);
		if (type != STT_FUNC && type != STT_OBJECT)
			continue;
		const char *name = elf_strptr(e->elf, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		e->syms[e->nsyms++] = (struct np_sym){ s.st_value, s.st_size, name };
		if (s.st_size > e->max_size)
			e->max_size = s.st_size;
	}
	return 0;
}

struct np_elf *np_elf_open(const char *path)
{
	elf_version(EV_CURRENT);
	struct np_elf *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (e->fd < 0)
		goto fail;
	e->elf = elf_begin(e->fd, ELF_C_READ_MMAP, NULL);
	if (!e->elf || elf_kind(e->elf) != ELF_K_ELF) {
		errno = ENOEXEC;
		goto fail;
	}
	if (elf_getphdrnum(e->elf, &e->nphdrs) == 0 && e->nphdrs) {
		e->phdrs = calloc(e->nphdrs, sizeof(*e->phdrs));
		if (!e->phdrs)
			goto fail;
		for (size_t i = 0; i < e->nphdrs; i++)
			gelf_getphdr(e->elf, (int)i, &e->phdrs[i]);
	}
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM)
			if (index_section(e, scn, &sh))
				goto fail;
	}
	qsort(e->syms, e->nsyms, sizeof(*e->syms), sym_cmp);
	return e;
fail:;
	int saved = errno ? errno : EINVAL;
	np_elf_close(e);
	errno = saved;
	return NULL;
}

void np_elf_close(struct np_elf *e)
{
	if (!e)
		return;
	if (e->elf)
		elf_end(e->elf);
	if (e->fd >= 0)
		close(e->fd);
	free(e->syms);
	free(e->phdrs);
	free(e);
}

uint64_t np_elf_sym_addr(const struct np_elf *e, const char *name, int prefix)
{
	size_t len = strlen(name);
	for (size_t i = 0; i < e->nsyms; i++) {
		const char *n = e->syms[i].name;
		/* skip compiler-split parts such as "f.cold", which come first */
		if (prefix ? strncmp(n, name, len) == 0 && !strchr(n + len, '.')
			   : strcmp(n, name) == 0)
			return e->syms[i].addr;
	}
	return 0;
}

uint64_t np_elf_vaddr_to_offset(const struct np_elf *e, uint64_t vaddr)
{
	for (size_t i = 0; i < e->nphdrs; i++) {
		const GElf_Phdr *p = &e->phdrs[i];
		if (p->p_type == PT_LOAD && vaddr >= p->p_vaddr && vaddr < p->p_vaddr + p->p_filesz)
			return vaddr - p->p_vaddr + p->p_offset;
	}
	return 0;
}

uint64_t np_elf_load_bias(const struct np_elf *e)
{
	for (size_t i = 0; i < e->nphdrs; i++)
		if (e->phdrs[i].p_type == PT_LOAD)
			return e->phdrs[i].p_vaddr - e->phdrs[i].p_offset;
	return 0;
}

int np_elf_section(const struct np_elf *e, const char *name, uint64_t *vaddr, uint64_t *size)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(e->elf, &shstrndx))
		return -ENOENT;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		const char *n;
		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(e->elf, shstrndx, sh.sh_name)) &&
		    strcmp(n, name) == 0 && sh.sh_addr) {
			*vaddr = sh.sh_addr;
			*size = sh.sh_size;
			return 0;
		}
	}
	return -ENOENT;
}

int np_elf_read(const struct np_elf *e, uint64_t vaddr, void *buf, size_t size)
{
	uint64_t off = np_elf_vaddr_to_offset(e, vaddr);
	if (!off)
		return -ENOENT;
	ssize_t n = pread(e->fd, buf, size, (off_t)off);
	if (n < 0)
		return -errno;
	return (size_t)n == size ? 0 : -EIO;
}

const char *np_elf_sym_at(const struct np_elf *e, uint64_t vaddr, const char *prefix)
{
	/* last symbol with addr <= vaddr, then walk back over equal addresses */
	size_t lo = 0, hi = e->nsyms;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (e->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t plen = prefix ? strlen(prefix) : 0;
	for (size_t i = lo; i-- > 0;) {
		const struct np_sym *s = &e->syms[i];
		/* symbols may nest (or alias with size 0): skip those that end
		 * before vaddr, stop once none could reach it */
		if (vaddr - s->addr >= (e->max_size ? e->max_size : 1))
			break;
		if (vaddr >= s->addr + (s->size ? s->size : 1))
			continue;
		if (!prefix || strncmp(s->name, prefix, plen) == 0)
			return s->name;
	}
	return NULL;
}

#define MAX_RODATA (64u << 20)

int np_elf_rodata_strings(const struct np_elf *e, const char *s, uint64_t *out, int max)
{
	uint64_t addr, size;
	if (np_elf_section(e, ".rodata", &addr, &size) || size > MAX_RODATA)
		return 0;
	char *buf = malloc(size);
	if (!buf)
		return 0;
	size_t len = strlen(s) + 1;   /* with its NUL */
	int n = 0;
	if (np_elf_read(e, addr, buf, size) == 0)
		for (uint64_t i = 1; i + len <= size && n < max; i++)
			if (buf[i - 1] == 0 && memcmp(buf + i, s, len) == 0)
				out[n++] = addr + i;
	free(buf);
	return n;
}

int np_elf_relative_relocs(const struct np_elf *e, np_elf_reloc_fn fn, void *ctx)
{
	GElf_Ehdr eh;
	if (!gelf_getehdr(e->elf, &eh))
		return 0;
	uint32_t relative = eh.e_machine == EM_AARCH64 ? R_AARCH64_RELATIVE : R_X86_64_RELATIVE;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Rela r;
			int rc;
			if (gelf_getrela(data, (int)i, &r) && GELF_R_TYPE(r.r_info) == relative &&
			    (rc = fn(ctx, r.r_offset, (uint64_t)r.r_addend)))
				return rc;
		}
	}
	return 0;
}
