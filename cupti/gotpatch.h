/* gotpatch.h - pointing a process's imports of a function at another.
 *
 * The agent sees each cuBLAS call (cupti/blas.c) by writing its own
 * wrapper's address into the import slots (GOT entries) that the
 * callers' objects, libtorch_cuda.so above all, hold for the cuBLAS
 * functions.  Unlike LD_PRELOAD this works in a process the agent was
 * injected into after the libraries were loaded (nanprof attach), and
 * it touches no byte of code: a slot is one aligned pointer, written
 * atomically, so a thread calling through it meanwhile calls either the
 * real function or the wrapper.  A slot in a read-only (RELRO) page is
 * made writable for the write and read-only again.
 *
 * An object another thread is loading is in the loader's list before it
 * is relocated: a slot written then would be overwritten by its
 * relocation, and a RELRO page made read-only again would fault the
 * loader still relocating it (the job would crash).  The loader makes
 * RELRO read-only once an object is relocated, so an object whose RELRO
 * pages are still writable (/proc/self/maps, read while the loader's
 * list is locked, so of the very objects walked) is passed over, not
 * remembered as seen, and counted (unsettled): a later call walks it.
 * tests/unit/test_gotpatch.c walks while another thread loads a library
 * 300 times; without this it crashed in the loader within milliseconds.
 *
 * Only x86-64 and AArch64 relocations are read (JUMP_SLOT, GLOB_DAT, in
 * RELA tables); elsewhere nothing is patched.  Unit-tested on the test
 * program's own import of libm's cbrt (tests/unit/test_gotpatch.c).
 */
#ifndef NP_GOTPATCH_H
#define NP_GOTPATCH_H

#include <stdint.h>

struct np_got_hook {
	const char *name;       /* the imported function */
	void *to;               /* where its import slots are pointed */
};

/* Objects already walked, by load address and name, so that a later
 * call walks only what was loaded since (libtorch_cuda.so holds about a
 * million relocations). */
#define NP_GOT_SEEN 1024
struct np_got_seen {
	uint64_t key[NP_GOT_SEEN];
	unsigned n;
	uint64_t full;          /* objects walked again for want of room */
	unsigned unsettled;     /* objects the last call passed over: still
				 * being loaded (call again later) */
};

/* In every loaded object except those whose file name (its last path
 * component) begins with one of skip[] (NULL-terminated; NULL: none),
 * points each import slot of hooks[i].name at hooks[i].to.  Objects in
 * *seen (when not NULL) are passed over, and those walked are added;
 * objects still being loaded are passed over (seen->unsettled).
 * Returns the number of slots written.  One thread at a time. */
int np_got_patch(const struct np_got_hook *hooks, int n, const char *const *skip,
		 struct np_got_seen *seen);

/* The address of function name as the first loaded object whose file
 * name begins with lib defines it, or NULL (none loaded, or no such
 * function).  Takes the loader's lock: never from a callback that may
 * hold it. */
void *np_got_lookup(const char *lib, const char *name);

/* A number that changes whenever objects are loaded (dlpi_adds): whether
 * np_got_patch has anything new to walk. */
uint64_t np_got_loads(void);

#endif
