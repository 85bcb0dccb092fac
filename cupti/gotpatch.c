/* gotpatch.c - pointing a process's imports of a function at another
 * (gotpatch.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "gotpatch.h"

#if defined(__x86_64__)
#define SLOT_JUMP R_X86_64_JUMP_SLOT
#define SLOT_DATA R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define SLOT_JUMP R_AARCH64_JUMP_SLOT
#define SLOT_DATA R_AARCH64_GLOB_DAT
#endif

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;
	return s ? s + 1 : path ? path : "";
}

static uint64_t object_key(const struct dl_phdr_info *info)
{
	uint64_t h = 1469598103934665603ull;   /* FNV-1a of the name, with the address */
	for (const char *p = info->dlpi_name ? info->dlpi_name : ""; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h ^ (uint64_t)info->dlpi_addr;
}

struct walk {
	const struct np_got_hook *hooks;
	int n;
	const char *const *skip;
	struct np_got_seen *seen;
	int written;
	unsigned unsettled;
	int maps_read;          /* read_maps done in this walk */
	char program[512];      /* the main program's file (argv[0] may be anything) */
};

/* The data mappings of files (not executable), from /proc/self/maps, in
 * address order: an object's RELRO pages among the writable ones are not
 * protected yet, so the loader is still relocating it.  Read at the start
 * of each walk, inside dl_iterate_phdr: while it holds the loader's list
 * lock no object is added or removed, so the snapshot is of the objects
 * walked (read before it, an object unloaded meanwhile and a new one
 * loaded at its address would look settled mid-relocation). */
#define MAPS_MAX 8192
static struct {
	uintptr_t lo, hi;
	int writable;
} maps[MAPS_MAX];
static unsigned n_maps;
static int maps_known;   /* 0: unreadable, or more than MAPS_MAX */
static char maps_buf[16384];

/* the lowercase hex number at *s, which is left after it */
static uintptr_t hex(const char **s)
{
	uintptr_t v = 0;
	for (;; (*s)++) {
		char c = **s;
		if (c >= '0' && c <= '9')
			v = v << 4 | (uintptr_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uintptr_t)(c - 'a' + 10);
		else
			return v;
	}
}

/* One line of /proc/self/maps: "lo-hi rw-p offset dev inode /path".
 * Kept: a file's private data (not a device's: a CUDA job maps
 * /dev/nvidia* thousands of times, shared).  0, or -1 when full.  By
 * hand, not sscanf: the maps run to thousands of lines, read with the
 * loader's lock held.  A line that is not one (the rest of a path too
 * long for the buffer) is passed over. */
static int map_line(const char *line)
{
	const char *s = line;
	uintptr_t lo = hex(&s);
	if (*s++ != '-')
		return 0;
	uintptr_t hi = hex(&s);
	if (*s++ != ' ' || strnlen(s, 4) < 4)
		return 0;
	const char *perms = s, *path = strchr(s, '/');
	if (perms[2] == 'x' || perms[3] != 'p' || !path || strncmp(path, "/dev/", 5) == 0)
		return 0;
	if (n_maps == MAPS_MAX)
		return -1;
	maps[n_maps].lo = lo;
	maps[n_maps].hi = hi;
	maps[n_maps++].writable = perms[1] == 'w';
	return 0;
}

/* no allocation, no stdio: called with the loader's lock held */
static void read_maps(void)
{
	n_maps = 0;
	maps_known = 0;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	size_t have = 0;
	int fits = 1, eof = 0;
	while (fits && !eof) {
		ssize_t r = read(fd, maps_buf + have, sizeof(maps_buf) - 1 - have);
		if (r < 0) {
			fits = 0;   /* unknown, not trusted */
			break;
		}
		eof = r == 0;
		have += (size_t)r;
		maps_buf[have] = 0;
		char *line = maps_buf, *nl;
		while ((nl = strchr(line, '\n')) || (eof && *line)) {
			if (nl)
				*nl = 0;
			if (map_line(line))
				fits = 0;
			line = nl ? nl + 1 : line + strlen(line);
		}
		have = (size_t)(maps_buf + have - line);
		if (have == sizeof(maps_buf) - 1) {   /* a line longer than the buffer */
			line[80] = 0;   /* its fields come first; the path is cut */
			if (map_line(line))
				fits = 0;
			have = 0;
		} else {
			memmove(maps_buf, line, have);
		}
	}
	close(fd);
	maps_known = fits;
}

/* 1 read-only, 0 writable, -1 in no mapping read */
static int page_protected(uintptr_t p)
{
	unsigned lo = 0, hi = n_maps;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		if (maps[mid].hi <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == n_maps || maps[lo].lo > p)
		return -1;
	return !maps[lo].writable;
}

/* Whether the loader is done with the object: each RELRO page range it
 * protects (rounded as glibc's _dl_protect_relro does) is read-only.
 * Without the maps, assumed done (write_slot then leaves pages writable). */
static int settled(const struct dl_phdr_info *info)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_GNU_RELRO)
			continue;
		uintptr_t lo = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
		uintptr_t hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(page - 1);
		if (lo < hi && maps_known && page_protected(lo) != 1)
			return 0;
	}
	return 1;
}

/* A dynamic entry's address: glibc relocates most of them in place when
 * it loads an object, other loaders do not. */
static uintptr_t dyn_addr(const struct dl_phdr_info *info, ElfW(Addr) v)
{
	return v < info->dlpi_addr ? info->dlpi_addr + v : v;
}

#ifdef SLOT_JUMP
static void write_slot(const struct dl_phdr_info *info, void **slot, void *to, struct walk *w)
{
	if (__atomic_load_n(slot, __ATOMIC_RELAXED) == to)
		return;
	/* only in a writable segment; in its RELRO part (a BIND_NOW
	 * object's whole GOT) the loader made whole pages read-only once it
	 * was done: the range rounded down to pages at both ends, as glibc's
	 * _dl_protect_relro does, its last partial page left writable */
	uintptr_t s = (uintptr_t)slot, page = (uintptr_t)sysconf(_SC_PAGESIZE);
	int writable = 0, relro = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && s >= lo && s + sizeof(void *) <= hi)
			writable = 1;
		if (ph->p_type == PT_GNU_RELRO && s >= (lo & ~(page - 1)) && s < (hi & ~(page - 1)))
			relro = 1;
	}
	void *pg = (void *)(s & ~(page - 1));
	if (!writable || (relro && mprotect(pg, (size_t)page, PROT_READ | PROT_WRITE)))
		return;
	__atomic_store_n(slot, to, __ATOMIC_RELEASE);
	/* read-only again only when known to have been (settled()): a
	 * page the loader still writes must stay writable */
	if (relro && maps_known)
		mprotect(pg, (size_t)page, PROT_READ);
	w->written++;
}

static void walk_relocs(const struct dl_phdr_info *info, const ElfW(Rela) *r, size_t bytes,
			const ElfW(Sym) *symtab, const char *strtab, size_t strsz, struct walk *w)
{
	for (size_t i = 0; i < bytes / sizeof(*r); i++) {
		unsigned type = (unsigned)ELF64_R_TYPE(r[i].r_info);
		if (type != SLOT_JUMP && type != SLOT_DATA)
			continue;
		const ElfW(Sym) *sym = &symtab[ELF64_R_SYM(r[i].r_info)];
		if (sym->st_shndx != SHN_UNDEF || sym->st_name >= strsz)
			continue;   /* defined here: no import */
		const char *name = strtab + sym->st_name;
		for (int h = 0; h < w->n; h++)
			if (strcmp(name, w->hooks[h].name) == 0)
				write_slot(info, (void **)(info->dlpi_addr + r[i].r_offset),
					   w->hooks[h].to, w);
	}
}
#endif

static int seen_has(const struct np_got_seen *seen, uint64_t key)
{
	for (unsigned i = 0; seen && i < seen->n; i++)
		if (seen->key[i] == key)
			return 1;
	return 0;
}

static void seen_add(struct np_got_seen *seen, uint64_t key)
{
	if (!seen)
		return;
	if (seen->n < NP_GOT_SEEN)
		seen->key[seen->n++] = key;
	else
		seen->full++;
}

static int patch_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct walk *w = arg;
	if (!w->maps_read) {   /* the list is fixed from here to the walk's end */
		read_maps();
		w->maps_read = 1;
	}
	/* the main program's name is empty: its file's, then */
	const char *base = base_name(info->dlpi_name && *info->dlpi_name ? info->dlpi_name
									 : w->program);
	for (const char *const *s = w->skip; s && *s; s++)
		if (strncmp(base, *s, strlen(*s)) == 0)
			return 0;
	uint64_t key = object_key(info);
	if (strncmp(base, "linux-vdso", 10) == 0 || seen_has(w->seen, key))
		return 0;
	if (!settled(info)) {   /* still being loaded: walked by a later call */
		w->unsettled++;
		return 0;
	}
	seen_add(w->seen, key);
#ifdef SLOT_JUMP
	const ElfW(Dyn) *dyn = NULL;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return 0;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	size_t strsz = 0, plt_bytes = 0, rela_bytes = 0;
	const ElfW(Rela) *plt = NULL, *rela = NULL;
	long plt_kind = DT_RELA;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB: symtab = (const void *)dyn_addr(info, dyn->d_un.d_ptr); break;
		case DT_STRTAB: strtab = (const void *)dyn_addr(info, dyn->d_un.d_ptr); break;
		case DT_STRSZ: strsz = dyn->d_un.d_val; break;
		case DT_JMPREL: plt = (const void *)dyn_addr(info, dyn->d_un.d_ptr); break;
		case DT_PLTRELSZ: plt_bytes = dyn->d_un.d_val; break;
		case DT_PLTREL: plt_kind = (long)dyn->d_un.d_val; break;
		case DT_RELA: rela = (const void *)dyn_addr(info, dyn->d_un.d_ptr); break;
		case DT_RELASZ: rela_bytes = dyn->d_un.d_val; break;
		}
	}
	if (!symtab || !strtab)
		return 0;
	if (plt && plt_kind == DT_RELA)
		walk_relocs(info, plt, plt_bytes, symtab, strtab, strsz, w);
	if (rela)   /* GLOB_DAT: the function's address taken, or -fno-plt calls */
		walk_relocs(info, rela, rela_bytes, symtab, strtab, strsz, w);
#endif
	return 0;
}

int np_got_patch(const struct np_got_hook *hooks, int n, const char *const *skip,
		 struct np_got_seen *seen)
{
	struct walk w = { .hooks = hooks, .n = n, .skip = skip, .seen = seen };
	ssize_t len = readlink("/proc/self/exe", w.program, sizeof(w.program) - 1);
	w.program[len > 0 ? len : 0] = 0;
	dl_iterate_phdr(patch_object, &w);   /* reads the maps first (read_maps) */
	if (seen)
		seen->unsettled = w.unsettled;
	return w.written;
}

struct find {
	const char *prefix;
	char path[512];
};

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct find *f = arg;
	if (!info->dlpi_name || strncmp(base_name(info->dlpi_name), f->prefix,
					strlen(f->prefix)) != 0)
		return 0;
	snprintf(f->path, sizeof(f->path), "%s", info->dlpi_name);
	return 1;
}

void *np_got_lookup(const char *lib, const char *name)
{
	struct find f = { .prefix = lib };
	if (!dl_iterate_phdr(find_object, &f))
		return NULL;
	/* outside the walk: dlopen takes the loader's lock too */
	void *h = dlopen(f.path, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return NULL;
	void *p = dlsym(h, name);
	dlclose(h);   /* drops only the reference just taken: it stays loaded */
	return p;
}

static int loads_of(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uint64_t *)arg = (uint64_t)info->dlpi_adds;
	return 1;
}

uint64_t np_got_loads(void)
{
	uint64_t adds = 0;
	dl_iterate_phdr(loads_of, &adds);
	return adds;
}
