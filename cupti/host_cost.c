/* host_cost.c - sampled host time of the CUPTI callbacks (host_cost.h). */
#include "host_cost.h"

static struct np_hc_totals totals;
static __thread uint32_t callbacks_here, checks_here;

/* 1 every NP_HC_EVERY-th call on this thread */
static int due(uint32_t *n)
{
	if (++*n < NP_HC_EVERY)
		return 0;
	*n = 0;
	return 1;
}

int np_hc_callback_timed(void)
{
	return due(&callbacks_here);
}

void np_hc_callback_took(uint64_t ns)
{
	__atomic_add_fetch(&totals.callbacks, NP_HC_EVERY, __ATOMIC_RELAXED);
	__atomic_add_fetch(&totals.timed, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&totals.timed_ns, ns, __ATOMIC_RELAXED);
}

int np_hc_check_timed(void)
{
	return due(&checks_here);
}

void np_hc_check_took(uint64_t ns)
{
	__atomic_add_fetch(&totals.check_launches, NP_HC_EVERY, __ATOMIC_RELAXED);
	__atomic_add_fetch(&totals.checks_timed, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&totals.check_ns, ns, __ATOMIC_RELAXED);
}

void np_hc_read(struct np_hc_totals *out)
{
	out->callbacks = __atomic_load_n(&totals.callbacks, __ATOMIC_RELAXED);
	out->timed = __atomic_load_n(&totals.timed, __ATOMIC_RELAXED);
	out->timed_ns = __atomic_load_n(&totals.timed_ns, __ATOMIC_RELAXED);
	out->check_launches = __atomic_load_n(&totals.check_launches, __ATOMIC_RELAXED);
	out->checks_timed = __atomic_load_n(&totals.checks_timed, __ATOMIC_RELAXED);
	out->check_ns = __atomic_load_n(&totals.check_ns, __ATOMIC_RELAXED);
}

uint64_t np_hc_mean_ns(uint64_t timed_ns, uint64_t timed)
{
	return timed ? timed_ns / timed : 0;
}

void np_hc_reset(void)
{
	__atomic_store_n(&totals.callbacks, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&totals.timed, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&totals.timed_ns, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&totals.check_launches, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&totals.checks_timed, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&totals.check_ns, 0, __ATOMIC_RELAXED);
}
