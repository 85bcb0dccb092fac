/* runpath_lib.c - two libraries for the test that the agent leaves the
 * job's library loading alone: built with -DDEP as sub/librunpath_dep.so,
 * and as librunpath_loader.so with DT_RUNPATH $ORIGIN/sub, whose
 * load_dep() dlopens the other by its bare name, as torch loads libnvrtc
 * or a library its plugins.  glibc searches the RUNPATH of dlopen's
 * caller: a dlopen wrapper in the agent would make that the agent's. */
#include <dlfcn.h>
#include <stdio.h>

#ifdef DEP
int dep_value(void)
{
	return 42;
}
#else
int load_dep(void)
{
	void *h = dlopen("librunpath_dep.so", RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return -1;
	}
	int (*value)(void) = (int (*)(void))dlsym(h, "dep_value");
	return value ? value() : -2;
}
#endif
