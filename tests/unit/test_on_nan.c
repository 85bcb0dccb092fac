/* test_on_nan.c - userspace/on_nan.c: --on-nan's parsing, and the signal
 * it sends, once, to real processes (forked children). */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include "on_nan.h"

Test(on_nan, parses_report_names_and_numbers)
{
	int sig = -1;
	cr_assert_eq(np_on_nan_parse("report", &sig), 0);
	cr_assert_eq(sig, 0);
	cr_assert_eq(np_on_nan_parse("signal:INT", &sig), 0);
	cr_assert_eq(sig, SIGINT);
	cr_assert_eq(np_on_nan_parse("signal:SIGTERM", &sig), 0);
	cr_assert_eq(sig, SIGTERM);
	cr_assert_eq(np_on_nan_parse("signal:usr1", &sig), 0);
	cr_assert_eq(sig, SIGUSR1);
	cr_assert_eq(np_on_nan_parse("signal:9", &sig), 0);
	cr_assert_eq(sig, SIGKILL);
	cr_assert_str_eq(np_signal_name(SIGINT), "SIGINT");
	cr_assert_str_eq(np_signal_name(SIGRTMIN + 1), "signal 35");
}

Test(on_nan, refuses_what_would_freeze_the_job_or_is_no_signal)
{
	int sig = 0;
	const char *bad[] = { "signal:STOP", "signal:SIGTSTP", "signal:CONT", "signal:19",
			      "signal:", "signal:NOPE", "signal:0", "signal:999", "kill",
			      "INT", "" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(np_on_nan_parse(bad[i], &sig), -EINVAL, "'%s' accepted", bad[i]);
}

static pid_t sleeper(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	cr_assert_gt(pid, 0);
	return pid;
}

static int signal_of_death(pid_t pid)
{
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return WIFSIGNALED(status) ? WTERMSIG(status) : -1;
}

Test(on_nan, sends_its_signal_once_to_every_process)
{
	pid_t a = sleeper(), b = sleeper();
	pid_t pids[] = { a, 0, b };
	struct np_on_nan act = { .signo = SIGUSR1 };
	cr_assert_eq(np_on_nan_fire(&act, pids, 3, 42), 2);
	cr_assert(act.fired);
	cr_assert_eq(act.ts_ns, 42);
	cr_assert_eq(act.pids[0], a);
	cr_assert_eq(act.pids[1], b);
	cr_assert_eq(signal_of_death(a), SIGUSR1);
	cr_assert_eq(signal_of_death(b), SIGUSR1);
	/* once: a second origin (another rank's) sends nothing */
	pid_t c = sleeper();
	cr_assert_eq(np_on_nan_fire(&act, &c, 1, 43), 0);
	cr_assert_eq(act.nsent, 2);
	kill(c, SIGKILL);
	cr_assert_eq(signal_of_death(c), SIGKILL);
	/* a process gone already counts as refused */
	struct np_on_nan again = { .signo = SIGUSR1 };
	cr_assert_eq(np_on_nan_fire(&again, &c, 1, 44), 0);
	cr_assert_eq(again.nfailed, 1);
	/* one that ignores it takes it, and is counted */
	pid_t e = fork();
	if (e == 0) {
		signal(SIGUSR2, SIG_IGN);
		for (;;)
			pause();
	}
	cr_assert_gt(e, 0);
	for (int i = 0; i < 200 && np_signal_ignored(e, SIGUSR2) != 1; i++)
		usleep(10000);   /* until the child has set it */
	cr_assert_eq(np_signal_ignored(e, SIGUSR2), 1);
	cr_assert_eq(np_signal_ignored(e, SIGUSR1), 0);
	struct np_on_nan ign = { .signo = SIGUSR2 };
	cr_assert_eq(np_on_nan_fire(&ign, &e, 1, 46), 1);
	cr_assert_eq(ign.nignoring, 1);
	kill(e, SIGKILL);
	cr_assert_eq(signal_of_death(e), SIGKILL, "it ignored SIGUSR2 and lived on");
	/* report only: nothing sent */
	struct np_on_nan report = { 0 };
	pid_t d = sleeper();
	cr_assert_eq(np_on_nan_fire(&report, &d, 1, 45), 0);
	cr_assert(!report.fired);
	kill(d, SIGTERM);
	cr_assert_eq(signal_of_death(d), SIGTERM);
}
