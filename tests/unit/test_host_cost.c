/* test_host_cost.c - cupti/host_cost.c: one callback in NP_HC_EVERY per
 * thread is timed, each kind (callbacks, check launches) on its own count. */
#include <criterion/criterion.h>
#include <pthread.h>
#include "../../cupti/host_cost.h"

TestSuite(host_cost, .init = np_hc_reset);

/* n callbacks on the calling thread, each timed one taking ns */
static unsigned run_callbacks(unsigned n, uint64_t ns)
{
	unsigned timed = 0;
	for (unsigned i = 0; i < n; i++)
		if (np_hc_callback_timed()) {
			np_hc_callback_took(ns);
			timed++;
		}
	return timed;
}

Test(host_cost, one_callback_in_every_is_timed_and_counts_those_before_it)
{
	struct np_hc_totals t;
	cr_assert_eq(run_callbacks(NP_HC_EVERY - 1, 500), 0);
	np_hc_read(&t);
	cr_expect_eq(t.callbacks.timed, 0, "nothing timed before the NP_HC_EVERY-th");
	cr_assert_eq(run_callbacks(1, 500), 1, "the NP_HC_EVERY-th is timed");
	np_hc_read(&t);
	cr_expect_eq(t.callbacks.timed, 1);
	cr_expect_eq(t.callbacks.ns, 500);
	cr_expect_eq(run_callbacks(3 * NP_HC_EVERY, 800), 3);
	np_hc_read(&t);
	cr_expect_eq(t.callbacks.timed, 4);
	cr_expect_eq(t.callbacks.ns, 500 + 3 * 800);
	cr_expect_eq(np_hc_mean_ns(&t.callbacks), (500 + 3 * 800) / 4);
	cr_expect_eq(t.checks.timed, 0, "check launches are counted apart");
}

Test(host_cost, a_launchs_entry_and_exit_are_both_sampled)
{
	/* a launch makes two callbacks, a cheap entry (100 ns) and a costly
	 * exit (900 ns): the sample must time both kinds alike, or the mean
	 * is one kind's (an even period times only exits) */
	struct np_hc_totals t;
	for (unsigned i = 0; i < 20 * NP_HC_EVERY; i++) {
		if (np_hc_callback_timed())
			np_hc_callback_took(100);
		if (np_hc_callback_timed())
			np_hc_callback_took(900);
	}
	np_hc_read(&t);
	cr_assert_eq(t.callbacks.timed, 40);
	cr_expect_eq(np_hc_mean_ns(&t.callbacks), 500, "entries and exits alike");
}

Test(host_cost, check_launches_are_sampled_on_their_own_count)
{
	struct np_hc_totals t;
	unsigned timed = 0;
	for (unsigned i = 0; i < 2 * NP_HC_EVERY; i++) {
		/* a callback between every two check launches does not move
		 * the check launches' count */
		if (np_hc_callback_timed())
			np_hc_callback_took(100);
		if (np_hc_check_timed()) {
			np_hc_check_took(2000);
			timed++;
		}
	}
	cr_assert_eq(timed, 2);
	np_hc_read(&t);
	cr_expect_eq(t.checks.timed, 2);
	cr_expect_eq(t.checks.ns, 2 * 2000);
	cr_expect_eq(np_hc_mean_ns(&t.checks), 2000);
	cr_expect_eq(t.callbacks.timed, 2, "the callbacks between on their own count");
}

Test(host_cost, no_time_means_no_mean)
{
	struct np_hc_sample none = { .timed = 0, .ns = 12345 };
	cr_expect_eq(np_hc_mean_ns(&none), 0);
}

static void *thread_callbacks(void *arg)
{
	unsigned n = *(unsigned *)arg;
	run_callbacks(n, 10);
	return NULL;
}

Test(host_cost, each_thread_counts_its_own_callbacks)
{
	/* 4 threads of 2 * NP_HC_EVERY + 5: two timed each, the 5 after
	 * not yet counted; a thread of NP_HC_EVERY - 1 adds nothing */
	pthread_t th[5];
	unsigned n[5] = { 2 * NP_HC_EVERY + 5, 2 * NP_HC_EVERY + 5, 2 * NP_HC_EVERY + 5,
			  2 * NP_HC_EVERY + 5, NP_HC_EVERY - 1 };
	for (int i = 0; i < 5; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, thread_callbacks, &n[i]), 0);
	for (int i = 0; i < 5; i++)
		pthread_join(th[i], NULL);
	struct np_hc_totals t;
	np_hc_read(&t);
	cr_expect_eq(t.callbacks.timed, 8);
	cr_expect_eq(t.callbacks.ns, 80);
}
