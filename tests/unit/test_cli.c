/* test_cli.c - unit tests for userspace/cli.c (np_parse_run, np_parse_attach).
 *
 * Every parse runs with stderr captured, so the tests check the message a
 * user would see as well as the return value, and the run stays quiet.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <signal.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* argv arrays are compound literals ending in NULL, like a real argv.  A
 * compound literal inside cr_assert_eq() dies with the macro's block, so
 * parse() copies the pointers to static storage that o.cmd may point
 * into until the next parse. */
#define ARGV(...) ((char *[]){ __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *[]){ __VA_ARGS__ }) / sizeof(char *)))
#define RUN(o, ...) parse(np_parse_run, (o), ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))
#define ATTACH(o, ...) parse(np_parse_attach, (o), ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))

typedef int (*parse_fn)(int, char **, struct np_opts *);

static char err_text[4096];
static char out_text[16384];

/* Reads what went to fd (redirected to tmp) since the redirect, then
 * puts the original descriptor back. */
static void restore(int fd, int saved, FILE *tmp, char *buf, size_t cap)
{
	size_t n;

	dup2(saved, fd);
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, cap - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
}

/* Calls fn with stdout and stderr captured into out_text and err_text. */
static int parse(parse_fn fn, struct np_opts *o, int argc, char **argv_in)
{
	static char *argv[64];
	FILE *out = tmpfile(), *err = tmpfile();
	int saved_out, saved_err, ret;

	cr_assert_lt(argc, 64);
	memcpy(argv, argv_in, (size_t)(argc + 1) * sizeof(*argv));
	cr_assert_null(argv[argc], "argv not NULL-terminated");
	cr_assert_not_null(out);
	cr_assert_not_null(err);
	fflush(stdout);
	fflush(stderr);
	saved_out = dup(1);
	saved_err = dup(2);
	dup2(fileno(out), 1);
	dup2(fileno(err), 2);
	ret = fn(argc, argv, o);
	fflush(stdout);
	fflush(stderr);
	restore(1, saved_out, out, out_text, sizeof(out_text));
	restore(2, saved_err, err, err_text, sizeof(err_text));
	return ret;
}

static void expect_no_message(void)
{
	cr_expect_str_empty(err_text, "unexpected message: %s", err_text);
}

/* One error line, "nanprof: ...", that contains each given fragment. */
static void expect_error(const char *frag1, const char *frag2)
{
	cr_expect(strncmp(err_text, "nanprof: ", 9) == 0, "message: %s", err_text);
	cr_expect(strchr(err_text, '\n') == err_text + strlen(err_text) - 1,
		  "want exactly one line: %s", err_text);
	if (frag1)
		cr_expect(strstr(err_text, frag1), "want '%s' in: %s", frag1, err_text);
	if (frag2)
		cr_expect(strstr(err_text, frag2), "want '%s' in: %s", frag2, err_text);
}

static void expect_cmd(struct np_opts *o, const char *const *want, int n)
{
	cr_assert_not_null(o->cmd);
	for (int i = 0; i < n; i++) {
		cr_assert_not_null(o->cmd[i], "cmd[%d] missing", i);
		cr_expect_str_eq(o->cmd[i], want[i], "cmd[%d]", i);
	}
	cr_expect_null(o->cmd[n], "cmd not terminated after %d words", n);
}

/* ---- run: defaults and options ---- */

Test(cli_run, defaults)
{
	struct np_opts o;

	memset(&o, 0xa5, sizeof(o));   /* the parser must set every field */
	cr_assert_eq(RUN(&o, "run", "--", "python3", "train.py"), 0);
	expect_no_message();
	cr_expect_null(o.out_dir);
	cr_expect_eq(o.window, 20);
	cr_expect_eq(o.max_records, 50000);
	cr_expect_eq(o.ring_mb, 16);
	cr_expect_eq(o.duration, 0.0);
	cr_expect_eq(o.no_session, false);
	cr_expect_eq(o.verbose, 0);
	cr_expect_eq(o.quiet, false);
	cr_expect_eq(o.pid, 0);
	cr_expect_eq(o.on_nan_signal, 0, "--on-nan report by default");
	expect_cmd(&o, (const char *[]){ "python3", "train.py" }, 2);
}

Test(cli_run, on_nan_signal)
{
	struct np_opts o;

	cr_assert_eq(RUN(&o, "run", "--on-nan", "signal:INT", "--", "python3", "t.py"), 0);
	cr_expect_eq(o.on_nan_signal, SIGINT);
	expect_cmd(&o, (const char *[]){ "python3", "t.py" }, 2);
	cr_assert_eq(ATTACH(&o, "attach", "--on-nan=signal:TERM", "1234"), 0);
	cr_expect_eq(o.on_nan_signal, SIGTERM);
	cr_expect_eq(RUN(&o, "run", "--on-nan", "signal:STOP", "--", "x"), -EINVAL);
	expect_error("invalid --on-nan", "freeze the job");
	cr_expect_eq(RUN(&o, "run", "--on-nan", "stop", "--", "x"), -EINVAL);
	expect_error("invalid --on-nan", "signal:NAME");
}

Test(cli_run, output_short_and_long)
{
	struct np_opts o;

	cr_assert_eq(RUN(&o, "run", "-o", "out/dir", "--", "x"), 0);
	cr_expect_str_eq(o.out_dir, "out/dir");
	cr_assert_eq(RUN(&o, "run", "--output", "d2", "--", "x"), 0);
	cr_expect_str_eq(o.out_dir, "d2");
	cr_assert_eq(RUN(&o, "run", "--output=d3", "--", "x"), 0);
	cr_expect_str_eq(o.out_dir, "d3");
	cr_assert_eq(RUN(&o, "run", "-od4", "--", "x"), 0);
	cr_expect_str_eq(o.out_dir, "d4");
	/* the last -o wins */
	cr_assert_eq(RUN(&o, "run", "-o", "a", "-o", "b", "--", "x"), 0);
	cr_expect_str_eq(o.out_dir, "b");
}

Test(cli_run, all_options)
{
	struct np_opts o;

	cr_assert_eq(RUN(&o, "run", "-o", "d", "--window", "50", "--max-records", "1000",
			 "--ring-mb", "64", "--no-session", "-v", "--verbose", "-q", "--",
			 "python3", "t.py"), 0);
	expect_no_message();
	cr_expect_str_eq(o.out_dir, "d");
	cr_expect_eq(o.window, 50);
	cr_expect_eq(o.max_records, 1000);
	cr_expect_eq(o.ring_mb, 64);
	cr_expect_eq(o.no_session, true);
	cr_expect_eq(o.verbose, 2);
	cr_expect_eq(o.quiet, true);
	expect_cmd(&o, (const char *[]){ "python3", "t.py" }, 2);
}

Test(cli_run, clustered_short_options)
{
	struct np_opts o;

	cr_assert_eq(RUN(&o, "run", "-vvq", "--", "x"), 0);
	cr_expect_eq(o.verbose, 2);
	cr_expect_eq(o.quiet, true);
}

Test(cli_run, window_bounds)
{
	struct np_opts o;

	cr_assert_eq(RUN(&o, "run", "--window", "1", "--", "x"), 0);
	cr_expect_eq(o.window, 1);
	cr_assert_eq(RUN(&o, "run", "--window=100000", "--", "x"), 0);
	cr_expect_eq(o.window, 100000);

	cr_expect_eq(RUN(&o, "run", "--window", "0", "--", "x"), -EINVAL);
	expect_error("--window", "'0'");
	cr_expect_eq(RUN(&o, "run", "--window", "100001", "--", "x"), -EINVAL);
	expect_error("--window", "'100001'");
}

Test(cli_run, max_records_bounds)
{
	struct np_opts o;

	cr_assert_eq(RUN(&o, "run", "--max-records", "16", "--", "x"), 0);
	cr_expect_eq(o.max_records, 16);
	cr_assert_eq(RUN(&o, "run", "--max-records", "50000000", "--", "x"), 0);
	cr_expect_eq(o.max_records, 50000000);
	cr_expect_eq(RUN(&o, "run", "--max-records", "15", "--", "x"), -EINVAL);
	expect_error("--max-records", "'15'");
	cr_expect_eq(RUN(&o, "run", "--max-records", "50000001", "--", "x"), -EINVAL);
	expect_error("--max-records", NULL);
}

Test(cli_run, ring_mb_power_of_two)
{
	static const unsigned good[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024 };
	static const char *const bad[] = { "3", "6", "12", "24", "100", "1000", "1023" };
	struct np_opts o;
	char num[16];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(num, sizeof(num), "%u", good[i]);
		cr_assert_eq(RUN(&o, "run", "--ring-mb", num, "--", "x"), 0, "--ring-mb %s", num);
		cr_expect_eq(o.ring_mb, good[i]);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(RUN(&o, "run", "--ring-mb", (char *)bad[i], "--", "x"), -EINVAL,
			     "--ring-mb %s", bad[i]);
		expect_error("--ring-mb", "power of two");
	}
	/* out of range before the power-of-two check */
	cr_expect_eq(RUN(&o, "run", "--ring-mb", "0", "--", "x"), -EINVAL);
	expect_error("--ring-mb", "'0'");
	cr_expect_eq(RUN(&o, "run", "--ring-mb", "2048", "--", "x"), -EINVAL);
	expect_error("--ring-mb", "'2048'");
}

Test(cli_run, invalid_numbers)
{
	static const char *const bad[] = {
		"", "abc", "12x", "x12", "-1", "-0", "1.5", "0x10", "1e3",
		"4294967297",            /* wraps to 1 if cut to 32 bits */
		"18446744073709551617",  /* overflows unsigned long */
	};
	struct np_opts o;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(RUN(&o, "run", "--window", (char *)bad[i], "--", "x"), -EINVAL,
			     "--window '%s' accepted", bad[i]);
		expect_error("invalid --window", NULL);
	}
}

Test(cli_run, unknown_options)
{
	struct np_opts o;

	cr_expect_eq(RUN(&o, "run", "--bogus", "--", "x"), -EINVAL);
	expect_error("unknown option", "--bogus");
	cr_expect_eq(RUN(&o, "run", "-x", "--", "x"), -EINVAL);
	expect_error("unknown option", "-x");
	/* -d is attach's, not run's */
	cr_expect_eq(RUN(&o, "run", "-d", "5", "--", "x"), -EINVAL);
	expect_error("unknown option", "-d");
}

/* run has no duration: it ends with the command.  The long option table is
 * shared with attach, so --duration must be refused by run explicitly
 * rather than parsed and then silently ignored. */
Test(cli_run, duration_is_attach_only)
{
	struct np_opts o;

	cr_expect_eq(RUN(&o, "run", "--duration", "5", "--", "x"), -EINVAL,
		     "run accepted --duration (duration=%g), which run never uses", o.duration);
}

/* --gpu takes what the agent's NANPROF_GPU_MODE parser reads, and
 * nothing else: a typo must not silently fall back to the default. */
Test(cli_run, gpu_modes)
{
	static const char *const good[] = {
		"every", "sample", "sample:1", "sample:16", "sample:1000000", "modules",
		"every+modules", "sample+modules", "sample:4+modules",
	};
	static const char *const bad[] = {
		"", "all", "Every", "sample:", "sample:0", "sample:-3", "sample:x", "sample:1000001",
		"sample:99999999999999999999", "modules+modules", "every+", "every+mod",
		"every+modules+modules", "+modules", "every modules", "sample16",
	};
	struct np_opts o;

	cr_expect_eq(RUN(&o, "run", "--", "x"), 0);
	cr_expect_null(o.gpu_mode, "default must leave the job's own NANPROF_GPU_MODE");
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		cr_expect_eq(RUN(&o, "run", "--gpu", (char *)good[i], "--", "x"), 0,
			     "--gpu '%s' refused: %s", good[i], err_text);
		expect_no_message();
		cr_expect_str_eq(o.gpu_mode, good[i]);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(RUN(&o, "run", "--gpu", (char *)bad[i], "--", "x"), -EINVAL,
			     "--gpu '%s' accepted", bad[i]);
		expect_error("invalid --gpu", "every+modules");
	}
	/* attach sends the mode to each agent (every one fits its message) */
	cr_expect_eq(ATTACH(&o, "attach", "123"), 0);
	cr_expect_null(o.gpu_mode, "default must leave the process's own NANPROF_GPU_MODE");
	cr_expect_eq(ATTACH(&o, "attach", "--gpu", "sample:1000000+modules", "123"), 0);
	cr_expect_str_eq(o.gpu_mode, "sample:1000000+modules");
	cr_expect_eq(ATTACH(&o, "attach", "--gpu", "sample:4x", "123"), -EINVAL);
	expect_error("invalid --gpu", "every+modules");
}

/* --gpu-defer N: 0 (off) to 64 lists' launches, else an error; unset, the
 * process's own NANPROF_GPU_DEFER (-1) */
Test(cli_run, gpu_defer)
{
	struct np_opts o;

	cr_expect_eq(RUN(&o, "run", "--", "x"), 0);
	cr_expect_eq(o.gpu_defer, -1, "default must leave the job's own NANPROF_GPU_DEFER");
	cr_expect_eq(RUN(&o, "run", "--gpu-defer", "8", "--", "x"), 0);
	cr_expect_eq(o.gpu_defer, 8);
	cr_expect_eq(RUN(&o, "run", "--gpu-defer", "0", "--", "x"), 0);
	cr_expect_eq(o.gpu_defer, 0, "0 turns a job's own deferring off");
	cr_expect_eq(RUN(&o, "run", "--gpu-defer", "64", "--", "x"), 0);
	cr_expect_eq(o.gpu_defer, 64);
	static const char *const bad[] = { "65", "-1", "x", "", "8k" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(RUN(&o, "run", "--gpu-defer", (char *)bad[i], "--", "x"), -EINVAL,
			     "--gpu-defer '%s' accepted", bad[i]);
		expect_error("invalid --gpu-defer", "from 0 to 64");
	}
	cr_expect_eq(ATTACH(&o, "attach", "123"), 0);
	cr_expect_eq(o.gpu_defer, -1);
	cr_expect_eq(ATTACH(&o, "attach", "--gpu-defer", "4", "123"), 0);
	cr_expect_eq(o.gpu_defer, 4);
}

Test(cli_run, missing_value)
{
	struct np_opts o;

	cr_expect_eq(RUN(&o, "run", "-o"), -EINVAL);
	expect_error("-o", "needs a value");
	cr_expect_eq(RUN(&o, "run", "--window"), -EINVAL);
	expect_error("--window", "needs a value");
}

Test(cli_run, missing_command)
{
	struct np_opts o;

	cr_expect_eq(RUN(&o, "run"), -EINVAL);
	expect_error("missing command", NULL);
	cr_expect_eq(RUN(&o, "run", "--"), -EINVAL);
	expect_error("missing command", NULL);
	cr_expect_eq(RUN(&o, "run", "-o", "d", "--"), -EINVAL);
	expect_error("missing command", NULL);
	cr_expect_eq(RUN(&o, "run", "-o", "d", "-v"), -EINVAL);
	expect_error("missing command", NULL);
}

Test(cli_run, command_options_belong_to_command)
{
	struct np_opts o;

	cr_assert_eq(RUN(&o, "run", "-o", "d", "--", "python3", "-v", "x.py"), 0);
	expect_no_message();
	cr_expect_str_eq(o.out_dir, "d");
	cr_expect_eq(o.verbose, 0, "python's -v was taken as nanprof's");
	expect_cmd(&o, (const char *[]){ "python3", "-v", "x.py" }, 3);

	cr_assert_eq(RUN(&o, "run", "python3", "-v"), 0);
	cr_expect_eq(o.verbose, 0);
	expect_cmd(&o, (const char *[]){ "python3", "-v" }, 2);

	cr_assert_eq(RUN(&o, "run", "-q", "python3", "-o", "x", "--window", "3"), 0);
	cr_expect_eq(o.quiet, true);
	cr_expect_null(o.out_dir);
	cr_expect_eq(o.window, 20);
	expect_cmd(&o, (const char *[]){ "python3", "-o", "x", "--window", "3" }, 5);

	/* after --, even a word that looks like an option is the command */
	cr_assert_eq(RUN(&o, "run", "--", "-weird", "--", "a"), 0);
	expect_cmd(&o, (const char *[]){ "-weird", "--", "a" }, 3);
}

Test(cli_run, cmd_points_into_argv)
{
	char *argv[] = { "run", "-o", "d", "--", "sleep", "1", NULL };
	struct np_opts o;

	cr_assert_eq(np_parse_run(6, argv, &o), 0);
	cr_expect_eq(o.cmd, &argv[4]);
	cr_expect_eq(o.out_dir, argv[2]);
}

/* The defaults that --help states are the ones the parser sets. */
static void expect_help_states_defaults(const struct np_opts *d)
{
	char want[64];

	snprintf(want, sizeof(want), "(default %u)", d->window);
	cr_expect(strstr(strstr(out_text, "--window") ?: "", want), "--window %s", want);
	snprintf(want, sizeof(want), "(default %u)", d->max_records);
	cr_expect(strstr(strstr(out_text, "--max-records") ?: "", want), "--max-records %s", want);
	snprintf(want, sizeof(want), "(default %u)", d->ring_mb);
	cr_expect(strstr(strstr(out_text, "--ring-mb") ?: "", want), "--ring-mb %s", want);
}

Test(cli_run, help)
{
	struct np_opts o, d;

	cr_assert_eq(RUN(&d, "run", "--", "x"), 0);

	cr_expect_eq(RUN(&o, "run", "-h"), 1);
	cr_expect(strncmp(out_text, "usage: nanprof run", 18) == 0, "help: %.60s", out_text);
	expect_no_message();
	cr_expect_eq(RUN(&o, "run", "-o", "d", "--help", "--", "x"), 1);
	cr_expect(strncmp(out_text, "usage: nanprof run", 18) == 0);
	cr_expect(strstr(out_text, "Examples:"));
	expect_help_states_defaults(&d);
}

/* np_parse_* may be called more than once in one process (the tests do;
 * a future `nanprof help run` might).  A parse that stopped in the middle of
 * a cluster of short options must not leak the rest of that cluster into
 * the next parse. */
Test(cli_run, reparse_after_help_in_cluster)
{
	struct np_opts o;

	cr_assert_eq(RUN(&o, "run", "-hv", "--", "x"), 1);
	cr_assert_eq(RUN(&o, "run", "--", "y"), 0);
	cr_expect_eq(o.verbose, 0, "the -v left over from the previous parse was applied");
	expect_cmd(&o, (const char *[]){ "y" }, 1);
}

Test(cli_run, reparse_after_error_in_cluster)
{
	struct np_opts o;

	cr_assert_eq(RUN(&o, "run", "-xq", "--", "x"), -EINVAL);
	cr_assert_eq(RUN(&o, "run", "--", "y"), 0);
	cr_expect_eq(o.quiet, false, "the -q left over from the previous parse was applied");
}

/* Someone else in the process used getopt first without '+' (a test
 * runner, a library): run must still stop at the command, not permute
 * the command's own options in front of it. */
Test(cli_run, after_other_getopt_user)
{
	static const struct option none[] = { { NULL, 0, NULL, 0 } };
	char *other[] = { "prog", "-x", NULL };
	struct np_opts o;

	opterr = 0;
	while (getopt_long(2, other, "x", none, NULL) != -1)
		;
	cr_assert_eq(RUN(&o, "run", "python3", "-v", "x.py"), 0);
	cr_expect_eq(o.verbose, 0, "python's -v was taken as nanprof's");
	expect_cmd(&o, (const char *[]){ "python3", "-v", "x.py" }, 3);
}

Test(cli_run, reparse_is_independent)
{
	struct np_opts o;

	cr_assert_eq(RUN(&o, "run", "-v", "-o", "a", "--window", "7", "--", "x"), 0);
	cr_assert_eq(RUN(&o, "run", "--", "y"), 0);
	cr_expect_eq(o.verbose, 0);
	cr_expect_null(o.out_dir);
	cr_expect_eq(o.window, 20);
	expect_cmd(&o, (const char *[]){ "y" }, 1);
}

/* ---- attach ---- */

Test(cli_attach, pid_and_defaults)
{
	struct np_opts o;

	memset(&o, 0xa5, sizeof(o));
	cr_assert_eq(ATTACH(&o, "attach", "1234"), 0);
	expect_no_message();
	cr_expect_eq(o.pid, 1234);
	cr_expect_eq(o.window, 20);
	cr_expect_eq(o.max_records, 50000);
	cr_expect_eq(o.ring_mb, 16);
	cr_expect_eq(o.duration, 0.0);
	cr_expect_null(o.out_dir);
	cr_expect_null(o.cmd);
	cr_expect_eq(o.verbose, 0);
}

Test(cli_attach, options)
{
	struct np_opts o;

	cr_assert_eq(ATTACH(&o, "attach", "-o", "/tmp/np", "-d", "30", "--window", "5",
			    "-v", "--", "42"), 0);
	cr_expect_eq(o.pid, 42);
	cr_expect_str_eq(o.out_dir, "/tmp/np");
	cr_expect_eq(o.duration, 30.0);
	cr_expect_eq(o.window, 5);
	cr_expect_eq(o.verbose, 1);

	cr_assert_eq(ATTACH(&o, "attach", "--duration", "0.5", "7"), 0);
	cr_expect_eq(o.duration, 0.5);
	cr_expect_eq(o.pid, 7);
	cr_assert_eq(ATTACH(&o, "attach", "--duration=90", "7"), 0);
	cr_expect_eq(o.duration, 90.0);
	cr_assert_eq(ATTACH(&o, "attach", "-d2.25", "7"), 0);
	cr_expect_eq(o.duration, 2.25);
}

Test(cli_attach, pid_max)
{
	struct np_opts o;
	char num[32];

	snprintf(num, sizeof(num), "%d", INT_MAX);
	cr_assert_eq(ATTACH(&o, "attach", num), 0);
	cr_expect_eq(o.pid, INT_MAX);
	snprintf(num, sizeof(num), "%lld", (long long)INT_MAX + 1);
	cr_expect_eq(ATTACH(&o, "attach", num), -EINVAL);
	expect_error("pid", NULL);
}

Test(cli_attach, bad_pid)
{
	static const char *const bad[] = { "abc", "12ab", "", "0", "-5", "1.0", "0x10" };
	struct np_opts o;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* after --, so that "-5" reaches the pid parser as a pid */
		cr_expect_eq(ATTACH(&o, "attach", "--", (char *)bad[i]), -EINVAL,
			     "pid '%s' accepted as %d", bad[i], (int)o.pid);
		expect_error("invalid pid", NULL);
	}
	/* without --, "-5" is an unknown option */
	cr_expect_eq(ATTACH(&o, "attach", "-5"), -EINVAL);
	expect_error("unknown option", "-5");
}

Test(cli_attach, missing_or_extra_pid)
{
	struct np_opts o;

	cr_expect_eq(ATTACH(&o, "attach"), -EINVAL);
	expect_error("missing pid", NULL);
	cr_expect_eq(ATTACH(&o, "attach", "-o", "d"), -EINVAL);
	expect_error("missing pid", NULL);
	/* options stop at the first pid */
	cr_expect_eq(ATTACH(&o, "attach", "12", "-v"), -EINVAL);
	expect_error("unexpected argument", "'-v'");
}

Test(cli_attach, several_pids)
{
	struct np_opts o;

	cr_assert_eq(ATTACH(&o, "attach", "-o", "d", "12", "13", "14"), 0);
	cr_expect_eq(o.npids, 3);
	cr_expect_eq(o.pids[0], 12);
	cr_expect_eq(o.pids[2], 14);
	cr_expect_eq(o.pid, 12);
	cr_expect_eq(o.children_of, 0);
	cr_expect_eq(ATTACH(&o, "attach", "12", "x"), -EINVAL);
	expect_error("invalid pid", "'x'");
}

Test(cli_attach, children_of_a_launcher)
{
	struct np_opts o;

	cr_assert_eq(ATTACH(&o, "attach", "--children", "77"), 0);
	cr_expect_eq(o.children_of, 77);
	cr_expect_eq(o.npids, 0);
	cr_expect_eq(o.pid, 77);
	cr_expect_eq(ATTACH(&o, "attach", "--children", "0"), -EINVAL);
	expect_error("invalid --children", NULL);
	cr_expect_eq(RUN(&o, "run", "--children", "5", "--", "x"), -EINVAL);
	expect_error("unknown option", "--children");
}

Test(cli_attach, bad_duration)
{
	static const char *const bad[] = { "0", "-1", "abc", "", "5s", "nan", "-0.5" };
	struct np_opts o;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(ATTACH(&o, "attach", "--duration", (char *)bad[i], "1"), -EINVAL,
			     "--duration '%s' accepted", bad[i]);
		expect_error("invalid --duration", NULL);
	}
}

/* cmd_attach.c turns the duration into (uint64_t)(duration * 1e9): a value
 * that does not fit (inf, 1e300) is undefined behaviour there, so the
 * parser must refuse it. */
Test(cli_attach, duration_must_be_finite)
{
	static const char *const bad[] = { "inf", "infinity", "1e300" };
	struct np_opts o;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(ATTACH(&o, "attach", "--duration", (char *)bad[i], "1"), -EINVAL,
			     "--duration '%s' accepted (duration=%g)", bad[i], o.duration);
	}
}

Test(cli_attach, missing_duration_value)
{
	struct np_opts o;

	cr_expect_eq(ATTACH(&o, "attach", "-d"), -EINVAL);
	expect_error("-d", "needs a value");
}

Test(cli_attach, help)
{
	struct np_opts o, d;

	cr_assert_eq(ATTACH(&d, "attach", "1"), 0);

	cr_expect_eq(ATTACH(&o, "attach", "-h"), 1);
	cr_expect(strncmp(out_text, "usage: nanprof attach", 21) == 0, "help: %.60s", out_text);
	cr_expect_eq(ATTACH(&o, "attach", "--help", "123"), 1);
	cr_expect(strncmp(out_text, "usage: nanprof attach", 21) == 0);
	expect_no_message();
	expect_help_states_defaults(&d);
}
