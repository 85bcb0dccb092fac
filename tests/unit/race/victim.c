/* victim.c - a library importing 4096 functions and cbrt, linked with
 * -z now so that its whole GOT is in RELRO: dlopen'ed again and again
 * while the test walks the loaded objects (test_gotpatch.c). */
#include <math.h>
#include "many.h"

#define F(n) int gp_##n(int x);
F4096(f)
#undef F

#define F(n) s += gp_##n(s);
int victim_sum(int s)
{
	F4096(f)
	return s;
}

double victim_cbrt(double x)
{
	return cbrt(x);
}
