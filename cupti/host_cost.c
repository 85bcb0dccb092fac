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

static void took(struct np_hc_sample *s, uint64_t ns)
{
	__atomic_add_fetch(&s->timed, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->ns, ns, __ATOMIC_RELAXED);
}

static struct np_hc_sample read_sample(const struct np_hc_sample *s)
{
	return (struct np_hc_sample){ __atomic_load_n(&s->timed, __ATOMIC_RELAXED),
				      __atomic_load_n(&s->ns, __ATOMIC_RELAXED) };
}

int np_hc_callback_timed(void)
{
	return due(&callbacks_here);
}

void np_hc_callback_took(uint64_t ns)
{
	took(&totals.callbacks, ns);
}

int np_hc_check_timed(void)
{
	return due(&checks_here);
}

void np_hc_check_took(uint64_t ns)
{
	took(&totals.checks, ns);
}

void np_hc_read(struct np_hc_totals *out)
{
	out->callbacks = read_sample(&totals.callbacks);
	out->checks = read_sample(&totals.checks);
}

uint64_t np_hc_mean_ns(const struct np_hc_sample *s)
{
	return s->timed ? s->ns / s->timed : 0;
}

static void zero(struct np_hc_sample *s)
{
	__atomic_store_n(&s->timed, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->ns, 0, __ATOMIC_RELAXED);
}

void np_hc_reset(void)
{
	zero(&totals.callbacks);
	zero(&totals.checks);
}
