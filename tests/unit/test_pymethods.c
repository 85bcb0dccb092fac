/* test_pymethods.c - unit tests for userspace/pymethods.c.
 *
 * First on a method table of this test binary's own, shaped as CPython's
 * PyMethodDef and as torch fills THPEngine_methods: every ml_name a
 * relative relocation to its string, the first entry's ml_meth written by
 * a constructor (no relocation), one entry's never.  Then on torch's real
 * libtorch_python.so in a live `import torch`: the function found through
 * its method table is the one its symbol names (torch 2.x keeps the
 * static symbol in .symtab; a stripped build would have only the table).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elfsym.h"
#include "proc.h"
#include "pymethods.h"

struct method_def {   /* PyMethodDef */
	const char *name;
	void *meth;
	int flags;
	const char *doc;
};

__attribute__((noinline)) void np_tmeth_run(void)
{
	__asm__ volatile("");
}

__attribute__((noinline)) void np_tmeth_queue(void)
{
	__asm__ volatile("");
}

/* not const: in .data, with the loader's relocations, as torch's */
struct method_def np_tmeth_table[] = {
	{ "np_tmeth_run_backward", NULL, 3, NULL },
	{ "np_tmeth_queue_callback", (void *)np_tmeth_queue, 1, NULL },
	{ "np_tmeth_unset", NULL, 1, NULL },
	{ "np_tmeth_after_unset", (void *)np_tmeth_queue, 1, NULL },
	{ NULL, NULL, 0, NULL },
};

__attribute__((constructor)) static void fill_table(void)
{
	np_tmeth_table[0].meth = (void *)np_tmeth_run;
}

static int first_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uint64_t *)arg = info->dlpi_addr;
	return 1;   /* the executable comes first */
}

/* runtime address of this executable's vaddr 0 */
static uint64_t self_base(void)
{
	uint64_t base = 0;
	dl_iterate_phdr(first_object, &base);
	return base;
}

Test(pymethods, finds_a_method_its_constructor_filled)
{
	struct np_elf *e = np_elf_open("/proc/self/exe");
	cr_assert_not_null(e);
	uint64_t slot = 0, vaddr = 0, base = self_base();
	cr_assert_eq(np_pymethod_slot(e, "np_tmeth_run_backward", "np_tmeth_queue_callback", &slot),
		     0);
	cr_assert_eq(base + slot, (uint64_t)(uintptr_t)&np_tmeth_table[0].meth);
	cr_assert_eq(np_pymethod_read(getpid(), base, slot, &vaddr), 0);
	cr_assert_eq(base + vaddr, (uint64_t)(uintptr_t)np_tmeth_run);
	np_elf_close(e);
}

Test(pymethods, an_unset_entry_is_tried_again)
{
	struct np_elf *e = np_elf_open("/proc/self/exe");
	cr_assert_not_null(e);
	uint64_t slot = 0, vaddr = 0;
	cr_assert_eq(np_pymethod_slot(e, "np_tmeth_unset", "np_tmeth_after_unset", &slot), 0);
	cr_assert_eq(np_pymethod_read(getpid(), self_base(), slot, &vaddr), -EAGAIN);
	np_elf_close(e);
}

Test(pymethods, needs_the_name_and_its_successor)
{
	struct np_elf *e = np_elf_open("/proc/self/exe");
	cr_assert_not_null(e);
	uint64_t slot = 0;
	/* not adjacent in the table, a name nowhere, a tail of a string */
	cr_assert_eq(np_pymethod_slot(e, "np_tmeth_run_backward", "np_tmeth_unset", &slot), -ENOENT);
	cr_assert_eq(np_pymethod_slot(e, "np_tmeth_no_such_method", "np_tmeth_queue_callback",
				      &slot), -ENOENT);
	cr_assert_eq(np_pymethod_slot(e, "tmeth_run_backward", "np_tmeth_queue_callback", &slot),
		     -ENOENT);
	np_elf_close(e);
}

/* torch's own: the live method table gives THPEngine_run_backward */
Test(pymethods, finds_torchs_run_backward_in_a_live_process, .timeout = 120)
{
	if (system("python3 -c 'import torch' 2>/dev/null") != 0)
		cr_skip_test("SKIP: no torch for python3");
	int fds[2];
	cr_assert_eq(pipe(fds), 0);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fds[0], 0);
		close(fds[1]);
		execlp("python3", "python3", "-c",
		       "import sys, torch; sys.stdin.read()", (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	struct np_mapping m = { 0 };
	int found = -1;
	for (int i = 0; i < 600 && found; i++) {
		/* imported: libtorch_python mapped, and its method table set */
		found = np_proc_find_mapping(pid, "libtorch_python.so", &m);
		usleep(100000);
	}
	cr_assert_eq(found, 0, "python3 never mapped libtorch_python.so");
	struct np_elf *e = np_elf_open(m.path);
	cr_assert_not_null(e, "%s", m.path);
	uint64_t want = np_elf_sym_addr(e, "_ZL22THPEngine_run_backwardP7_objectS0_S0_", 0);
	if (!want)
		want = np_elf_sym_addr(e, "_Z22THPEngine_run_backwardP7_objectS0_S0_", 0);
	uint64_t slot = 0, vaddr = 0;
	int rc = np_pymethod_slot(e, "run_backward", "queue_callback", &slot);
	int read = -1;
	/* the import goes on after the mapping: wait for the table's entry */
	for (int i = 0; i < 300 && rc == 0 && read; i++) {
		read = np_pymethod_read(pid, m.start - np_elf_load_bias(e), slot, &vaddr);
		if (read)
			usleep(100000);
	}
	close(fds[1]);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	np_elf_close(e);
	if (!want)
		cr_skip_test("SKIP: %s has no THPEngine_run_backward symbol to compare with", m.path);
	cr_assert_eq(rc, 0, "no method table entry in %s", m.path);
	cr_assert_eq(read, 0, "the entry was never set: %d", read);
	cr_assert_eq(vaddr, want, "table %#lx, symbol %#lx", (unsigned long)vaddr,
		     (unsigned long)want);
}
