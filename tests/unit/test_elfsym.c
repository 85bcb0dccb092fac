/* test_elfsym.c - unit tests for userspace/elfsym.c.
 *
 * Opens this test binary (/proc/self/exe) and the libc it runs on, and
 * checks symbol addresses and file reads against the same code as it is
 * mapped in this process.  The symbols with awkward shapes (a ".cold"
 * part, nested objects) are defined in assembly below, so their exact
 * addresses and sizes are known.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfsym.h"

/* Laid out in this order in .text:
 *   np_tsym_split.cold  16 bytes  (GCC places cold parts before the body)
 *   np_tsym_split       16 bytes
 *   np_tsym_outer       64 bytes, an object with np_tsym_inner (8 bytes)
 *                       at +16 inside it, as a vtable group or a
 *                       table with a named sub-table would be
 */
__asm__(
	".pushsection .text\n"
	".p2align 4\n"
	".type np_tsym_split.cold, @function\n"
	"np_tsym_split.cold:\n"
	"  .fill 16, 1, 0xcc\n"
	".size np_tsym_split.cold, 16\n"
	".globl np_tsym_split\n"
	".type np_tsym_split, @function\n"
	"np_tsym_split:\n"
	"  ret\n"
	"  .fill 15, 1, 0xcc\n"
	".size np_tsym_split, 16\n"
	".globl np_tsym_outer\n"
	".type np_tsym_outer, @object\n"
	"np_tsym_outer:\n"
	"  .fill 16, 1, 0x11\n"
	".globl np_tsym_inner\n"
	".type np_tsym_inner, @object\n"
	"np_tsym_inner:\n"
	"  .fill 8, 1, 0x22\n"
	"  .fill 40, 1, 0x33\n"
	".size np_tsym_inner, 8\n"
	".size np_tsym_outer, 64\n"
	".popsection\n");

extern char np_tsym_split[], np_tsym_outer[], np_tsym_inner[];

/* A plain C function, with known bytes to compare. */
__attribute__((noinline, used)) int np_test_marker_fn(int x)
{
	return x * 7 + 3;
}

static struct np_elf *e;

static void teardown(void)
{
	np_elf_close(e);
	e = NULL;
}

TestSuite(elfsym, .fini = teardown);

/* Runtime bias of the main program (dlpi_addr of its entry): the runtime
 * address of a vaddr is bias + vaddr. */
static int first_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	*(uint64_t *)arg = info->dlpi_addr;
	return 1;
}

static uint64_t exe_bias(void)
{
	uint64_t bias = UINT64_MAX;

	dl_iterate_phdr(first_object, &bias);
	cr_assert_neq(bias, UINT64_MAX);
	return bias;
}

static struct np_elf *open_self(void)
{
	struct np_elf *self = np_elf_open("/proc/self/exe");

	cr_assert_not_null(self, "cannot open /proc/self/exe: %s", strerror(errno));
	return self;
}

/* The start of the lowest mapping of path with file offset 0, from
 * /proc/self/maps. */
static uint64_t map_start_of(const char *path)
{
	char want[4096], line[4600];
	uint64_t start = 0;
	FILE *f;

	cr_assert_not_null(realpath(path, want), "realpath %s", path);
	f = fopen("/proc/self/maps", "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, end, off;
		int pos = 0;
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &s, &end, &off, &pos) < 3 || !pos)
			continue;
		line[strcspn(line, "\n")] = 0;
		if (off == 0 && strcmp(line + pos, want) == 0) {
			start = s;
			break;
		}
	}
	fclose(f);
	cr_assert_neq(start, 0, "%s not mapped", want);
	return start;
}

/* ---- this binary ---- */

Test(elfsym, own_function_address)
{
	uint64_t bias = exe_bias(), vaddr, map;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	cr_assert_gt(n, 0);
	exe[n] = 0;
	/* before np_elf_open: libelf maps the file too, at offset 0 */
	map = map_start_of(exe);
	e = open_self();
	vaddr = np_elf_sym_addr(e, "np_test_marker_fn", 0);
	cr_assert_neq(vaddr, 0);
	cr_expect_eq(bias + vaddr, (uint64_t)(uintptr_t)np_test_marker_fn, "%#llx vs %p",
		     (unsigned long long)(bias + vaddr), (void *)np_test_marker_fn);
	/* the header's formula: map_start - load_bias + vaddr */
	cr_expect_eq(map - np_elf_load_bias(e), bias);
}

Test(elfsym, exact_name_only)
{
	e = open_self();
	cr_expect_eq(np_elf_sym_addr(e, "np_test_marker", 0), 0);
	cr_expect_eq(np_elf_sym_addr(e, "np_test_marker_fn_", 0), 0);
	cr_expect_eq(np_elf_sym_addr(e, "no_such_symbol_anywhere", 0), 0);
	cr_expect_eq(np_elf_sym_addr(e, "no_such_symbol_anywhere", 1), 0);
}

Test(elfsym, prefix_skips_cold_part)
{
	uint64_t bias = exe_bias(), vaddr, cold;

	e = open_self();
	cold = np_elf_sym_addr(e, "np_tsym_split.cold", 0);
	cr_assert_neq(cold, 0, "the .cold symbol was not indexed");
	cr_assert_eq(bias + cold + 16, (uint64_t)(uintptr_t)np_tsym_split,
		     "test layout: .cold must come first");
	vaddr = np_elf_sym_addr(e, "np_tsym_split", 1);
	cr_expect_eq(bias + vaddr, (uint64_t)(uintptr_t)np_tsym_split, "prefix lookup gave %s",
		     vaddr == cold ? "the .cold part" : "something else");
	cr_expect_eq(np_elf_sym_addr(e, "np_tsym_split", 0), vaddr);
	/* a prefix shorter than the name still finds it, and names it */
	vaddr = np_elf_sym_addr(e, "np_test_marker", 1);
	cr_assert_neq(vaddr, 0);
	cr_expect_str_eq(np_elf_sym_at(e, vaddr, NULL), "np_test_marker_fn");
}

Test(elfsym, name_of_address)
{
	uint64_t vaddr;
	const char *name;

	e = open_self();
	vaddr = np_elf_sym_addr(e, "np_test_marker_fn", 0);
	cr_assert_neq(vaddr, 0);
	name = np_elf_sym_at(e, vaddr, NULL);
	cr_assert_not_null(name);
	cr_expect_str_eq(name, "np_test_marker_fn");
	cr_expect_str_eq(np_elf_sym_at(e, vaddr + 1, NULL), "np_test_marker_fn");
	cr_expect_str_eq(np_elf_sym_at(e, vaddr, "np_test_"), "np_test_marker_fn");
	cr_expect_null(np_elf_sym_at(e, vaddr, "zz_"));

	vaddr = np_elf_sym_addr(e, "np_tsym_split", 0);
	cr_expect_str_eq(np_elf_sym_at(e, vaddr, NULL), "np_tsym_split");
	cr_expect_str_eq(np_elf_sym_at(e, vaddr + 15, NULL), "np_tsym_split");
	cr_expect_str_eq(np_elf_sym_at(e, vaddr - 1, NULL), "np_tsym_split.cold");
	cr_expect_str_eq(np_elf_sym_at(e, vaddr - 16, NULL), "np_tsym_split.cold");
	/* np_tsym_split's size ends where np_tsym_outer begins */
	cr_expect_str_eq(np_elf_sym_at(e, vaddr + 16, NULL), "np_tsym_outer");
	cr_expect_null(np_elf_sym_at(e, 0, NULL));
	cr_expect_null(np_elf_sym_at(e, UINT64_MAX, NULL));
}

/* st_value <= vaddr < st_value + st_size, even when a smaller symbol sits
 * inside the containing one and ends before vaddr. */
Test(elfsym, name_of_address_in_outer_symbol)
{
	uint64_t outer, inner;

	e = open_self();
	outer = np_elf_sym_addr(e, "np_tsym_outer", 0);
	inner = np_elf_sym_addr(e, "np_tsym_inner", 0);
	cr_assert_neq(outer, 0);
	cr_assert_eq(inner, outer + 16);
	cr_expect_str_eq(np_elf_sym_at(e, outer + 8, NULL), "np_tsym_outer");
	cr_expect_str_eq(np_elf_sym_at(e, inner + 4, NULL), "np_tsym_inner");
	cr_expect_str_eq(np_elf_sym_at(e, inner + 4, "np_tsym_outer"), "np_tsym_outer");
	const char *at40 = np_elf_sym_at(e, outer + 40, NULL);
	cr_expect(at40 && strcmp(at40, "np_tsym_outer") == 0,
		  "outer+40 is inside np_tsym_outer (64 bytes), got %s", at40 ? at40 : "NULL");
}

Test(elfsym, read_own_bytes)
{
	uint64_t bias = exe_bias(), vaddr, off;
	uint8_t buf[16];

	e = open_self();
	vaddr = np_elf_sym_addr(e, "np_test_marker_fn", 0);
	cr_assert_neq(vaddr, 0);
	off = np_elf_vaddr_to_offset(e, vaddr);
	cr_assert_neq(off, 0);
	cr_assert_eq(np_elf_read(e, vaddr, buf, sizeof(buf)), 0);
	cr_expect_arr_eq(buf, (void *)(uintptr_t)(bias + vaddr), sizeof(buf));

	/* the same bytes straight from the file at the offset */
	uint8_t raw[16];
	int fd = open("/proc/self/exe", O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(pread(fd, raw, sizeof(raw), (off_t)off), (ssize_t)sizeof(raw));
	close(fd);
	cr_expect_arr_eq(raw, buf, sizeof(buf));

	vaddr = np_elf_sym_addr(e, "np_tsym_outer", 0);
	cr_assert_eq(np_elf_read(e, vaddr + 14, buf, 4), 0);
	cr_expect_arr_eq(buf, ((uint8_t[]){ 0x11, 0x11, 0x22, 0x22 }), 4);
}

Test(elfsym, unmapped_vaddr)
{
	uint8_t buf[4];

	e = open_self();
	cr_expect_eq(np_elf_vaddr_to_offset(e, UINT64_MAX - 8), 0);
	cr_expect_lt(np_elf_read(e, UINT64_MAX - 8, buf, sizeof(buf)), 0);
}

/* ---- libc ---- */

struct lib_bias {
	const char *name;
	uint64_t bias;
	int found;
};

static int find_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct lib_bias *l = arg;

	if (info->dlpi_name && strcmp(info->dlpi_name, l->name) == 0) {
		l->bias = info->dlpi_addr;
		l->found = 1;
		return 1;
	}
	return 0;
}

Test(elfsym, libc_printf)
{
	Dl_info info;
	struct lib_bias lb = { 0 };
	uint64_t vaddr, runtime;
	uint8_t buf[16];

	cr_assert_neq(dladdr((void *)printf, &info), 0);
	cr_assert_not_null(info.dli_fname);
	cr_assert_not_null(info.dli_saddr);
	lb.name = info.dli_fname;
	dl_iterate_phdr(find_lib, &lb);
	cr_assert(lb.found, "%s not in dl_iterate_phdr", info.dli_fname);
	/* before np_elf_open: libelf maps the file too, at offset 0 */
	uint64_t libc_map = map_start_of(info.dli_fname);
	cr_expect_eq(libc_map, (uint64_t)(uintptr_t)info.dli_fbase);

	e = np_elf_open(info.dli_fname);
	cr_assert_not_null(e, "cannot open %s: %s", info.dli_fname, strerror(errno));
	vaddr = np_elf_sym_addr(e, "printf", 0);
	cr_assert_neq(vaddr, 0);
	runtime = lb.bias + vaddr;
	cr_expect_eq(runtime, (uint64_t)(uintptr_t)info.dli_saddr, "%#llx vs %p",
		     (unsigned long long)runtime, info.dli_saddr);
	/* map_start - load_bias + vaddr, as elfsym.h says */
	cr_expect_eq((uint64_t)(uintptr_t)info.dli_fbase - np_elf_load_bias(e) + vaddr, runtime);
	cr_expect_eq(libc_map - np_elf_load_bias(e), lb.bias);

	cr_assert_neq(np_elf_vaddr_to_offset(e, vaddr), 0);
	cr_assert_eq(np_elf_read(e, vaddr, buf, sizeof(buf)), 0);
	cr_expect_arr_eq(buf, (void *)(uintptr_t)runtime, sizeof(buf));

	/* libc has aliases (_IO_printf): with a prefix the name is exact */
	cr_expect_str_eq(np_elf_sym_at(e, vaddr, "printf"), "printf");
	const char *any = np_elf_sym_at(e, vaddr, NULL);
	cr_assert_not_null(any);
	cr_expect_eq(np_elf_sym_addr(e, any, 0), vaddr, "alias %s elsewhere", any);
}

Test(elfsym, libc_several_functions)
{
	static const char *const names[] = { "malloc", "memcpy", "strlen", "dlopen", "getpid" };
	Dl_info info;
	struct lib_bias lb = { 0 };

	cr_assert_neq(dladdr((void *)printf, &info), 0);
	lb.name = info.dli_fname;
	dl_iterate_phdr(find_lib, &lb);
	cr_assert(lb.found);
	e = np_elf_open(info.dli_fname);
	cr_assert_not_null(e);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		void *sym = dlsym(RTLD_DEFAULT, names[i]);
		Dl_info si;
		uint64_t vaddr = np_elf_sym_addr(e, names[i], 0);
		uint8_t buf[16];

		cr_assert_not_null(sym, "%s", names[i]);
		/* IFUNCs (memcpy, strlen) resolve to an implementation elsewhere;
		 * compare only symbols that dlsym finds in libc by that name */
		if (!dladdr(sym, &si) || !si.dli_sname || strcmp(si.dli_sname, names[i]))
			continue;
		cr_assert_neq(vaddr, 0, "%s", names[i]);
		cr_expect_eq(lb.bias + vaddr, (uint64_t)(uintptr_t)sym, "%s", names[i]);
		cr_assert_eq(np_elf_read(e, vaddr, buf, sizeof(buf)), 0, "%s", names[i]);
		cr_expect_arr_eq(buf, sym, sizeof(buf), "%s", names[i]);
	}
}

/* ---- failures ---- */

Test(elfsym, missing_file)
{
	errno = 0;
	cr_expect_null(np_elf_open("/nonexistent/dir/libnothing.so"));
	cr_expect_eq(errno, ENOENT);
}

Test(elfsym, not_elf)
{
	char path[] = "/tmp/test_elfsym.XXXXXX";
	int fd = mkstemp(path);
	static const char text[] = "#!/bin/sh\necho this is not an ELF file\n";

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	errno = 0;
	cr_expect_null(np_elf_open(path));
	cr_expect_eq(errno, ENOEXEC, "errno %d (%s)", errno, strerror(errno));

	/* an empty file */
	fd = open(path, O_WRONLY | O_TRUNC);
	cr_assert_geq(fd, 0);
	close(fd);
	errno = 0;
	cr_expect_null(np_elf_open(path));
	cr_expect_eq(errno, ENOEXEC, "empty file: errno %d (%s)", errno, strerror(errno));

	/* a directory */
	errno = 0;
	cr_expect_null(np_elf_open("/tmp"));
	cr_expect_neq(errno, 0);
	unlink(path);
}

Test(elfsym, close_null)
{
	np_elf_close(NULL);
}
