/* test_gotpatch.c - cupti/gotpatch.c on this test program's own import of
 * libm's cbrt: pointed at another function, then back at the real one.
 * Each test runs in a process of its own (Criterion forks), so the
 * patch stays there. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "../../cupti/gotpatch.h"

static double not_cbrt(double x)
{
	return x + 1000.0;
}

/* the call goes through the import slot (PLT or GOT), never inlined */
static double call_cbrt(double x)
{
	volatile double v = x;
	return cbrt(v);
}

static const char *const skip_libm[] = { "libm.so", NULL };

Test(gotpatch, an_import_is_pointed_elsewhere_and_back)
{
	cr_assert_float_eq(call_cbrt(8.0), 2.0, 1e-12);
	struct np_got_hook h = { "cbrt", (void *)not_cbrt };
	int n = np_got_patch(&h, 1, skip_libm, NULL);
	cr_assert_geq(n, 1, "this program imports cbrt");
	cr_expect_float_eq(call_cbrt(8.0), 1008.0, 1e-12, "the call reaches the replacement");
	void *real = np_got_lookup("libm.so", "cbrt");
	cr_assert_not_null(real);
	h.to = real;
	cr_expect_geq(np_got_patch(&h, 1, skip_libm, NULL), 1);
	cr_expect_float_eq(call_cbrt(27.0), 3.0, 1e-12, "the real one again");
	h.to = real;
	cr_expect_eq(np_got_patch(&h, 1, skip_libm, NULL), 0, "a slot already there is not written");
}

Test(gotpatch, skipped_and_seen_objects_are_not_walked)
{
	struct np_got_hook h = { "cbrt", (void *)not_cbrt };
	/* this program's file name: test_gotpatch */
	const char *const skip_me[] = { "test_gotpatch", NULL };
	cr_expect_eq(np_got_patch(&h, 1, skip_me, NULL), 0);
	cr_expect_float_eq(call_cbrt(8.0), 2.0, 1e-12);

	struct np_got_seen seen = { .n = 0 };
	cr_expect_geq(np_got_patch(&h, 1, skip_libm, &seen), 1);
	cr_expect_gt(seen.n, 1, "every object walked is remembered");
	h.to = np_got_lookup("libm.so", "cbrt");
	cr_expect_eq(np_got_patch(&h, 1, skip_libm, &seen), 0, "nothing loaded since");
	cr_expect_float_eq(call_cbrt(8.0), 1008.0, 1e-12);
}

/* the first page of this program's RELRO, which the loader made
 * read-only once it had relocated the program */
static int relro_of_program(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	if (info->dlpi_name && *info->dlpi_name)
		return 0;   /* the program comes first, with an empty name */
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
		uintptr_t hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(page - 1);
		if (ph->p_type == PT_GNU_RELRO && lo < hi)
			*(void **)arg = (void *)lo;
	}
	return 1;
}

/* An object whose RELRO is still writable is one the loader is still
 * relocating (in another thread's dlopen): passed over, not remembered,
 * counted; walked once the loader has protected it. */
Test(gotpatch, an_object_still_being_loaded_is_walked_later)
{
	void *relro = NULL;
	dl_iterate_phdr(relro_of_program, &relro);
	cr_assert_not_null(relro, "this program has a RELRO of at least a page");
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	cr_assert_eq(mprotect(relro, page, PROT_READ | PROT_WRITE), 0);   /* as mid-load */

	struct np_got_hook h = { "cbrt", (void *)not_cbrt };
	struct np_got_seen seen = { .n = 0 };
	cr_expect_eq(np_got_patch(&h, 1, skip_libm, &seen), 0, "only this program imports cbrt");
	cr_expect_geq(seen.unsettled, 1, "the program passed over, and counted");
	cr_expect_float_eq(call_cbrt(8.0), 2.0, 1e-12, "its slot untouched");
	unsigned walked = seen.n;

	cr_assert_eq(mprotect(relro, page, PROT_READ), 0);   /* the loader is done */
	cr_expect_geq(np_got_patch(&h, 1, skip_libm, &seen), 1, "walked now");
	cr_expect_eq(seen.unsettled, 0);
	cr_expect_eq(seen.n, walked + 1, "and remembered");
	cr_expect_float_eq(call_cbrt(8.0), 1008.0, 1e-12);
}

/* tests/unit/race/victim.c, built beside this program (Makefile; the
 * sanitized build's lives in ../tests) */
static void victim_path(char *out, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	cr_assert_gt(n, 0);
	exe[n] = 0;
	*strrchr(exe, '/') = 0;
	snprintf(out, size, "%s/libgpvictim.so", exe);
	if (access(out, R_OK) != 0)
		snprintf(out, size, "%s/../tests/libgpvictim.so", exe);
}

struct loads {
	const char *path;
	int n;
	volatile int done;
};

static void *load_again_and_again(void *arg)
{
	struct loads *l = arg;
	for (int i = 0; i < l->n; i++) {
		void *h = dlopen(l->path, RTLD_NOW);
		if (!h) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			break;
		}
		dlclose(h);
	}
	l->done = 1;
	return NULL;
}

/* A walk while another thread loads a library (torch's import; Triton's
 * launchers under torch.compile) meets it listed but half relocated.
 * Written then, a RELRO slot's page was made read-only again under the
 * loader, which faulted on its next relocation there: this test crashed
 * within milliseconds.  Now such an object is left for a later walk. */
Test(gotpatch, a_library_being_loaded_meanwhile_is_left_alone, .timeout = 120)
{
	char path[PATH_MAX + 32];
	victim_path(path, sizeof(path));
	struct loads l = { .path = path, .n = 300 };
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, load_again_and_again, &l), 0);
	struct np_got_hook h = { "cbrt", (void *)not_cbrt };
	long walks = 0;
	unsigned unsettled = 0;
	while (!l.done) {
		struct np_got_seen seen = { .n = 0 };
		np_got_patch(&h, 1, skip_libm, &seen);
		unsettled += seen.unsettled;
		walks++;
	}
	pthread_join(t, NULL);
	void *v = dlopen(path, RTLD_NOW);
	cr_assert_not_null(v, "every load succeeded: %s", dlerror());
	cr_expect_gt(walks, 100, "the walks overlapped the loads");
	cr_expect_gt(unsettled, 0, "some walk met the library half loaded");
	/* settled now: walked, and its import pointed at the replacement */
	double (*vc)(double) = (double (*)(double))dlsym(v, "victim_cbrt");
	cr_assert_not_null(vc);
	cr_expect_geq(np_got_patch(&h, 1, skip_libm, NULL), 1);
	cr_expect_float_eq(vc(8.0), 1008.0, 1e-12);
	dlclose(v);
}

Test(gotpatch, lookups_of_what_is_not_there_are_null)
{
	cr_expect_null(np_got_lookup("libno_such_library.so", "cbrt"));
	cr_expect_null(np_got_lookup("libm.so", "no_such_function_np"));
	cr_expect_neq(np_got_loads(), 0);
}
