/* provider.c - 4096 functions for victim.c to import. */
#include "many.h"

#define F(n) int gp_##n(int x) { return x + 1; }
F4096(f)
