/* test_chrome_trace.c - unit tests for viz/chrome_trace.c.
 *
 * Each test writes a real trace file under /tmp and reads it back.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chrome_trace.h"

static char path[64];
static char out[16384];

static void setup(void)
{
	int fd;

	/* Fresh template each time, in case tests run in one process. */
	strcpy(path, "/tmp/test_chrome_trace.XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
}

static void teardown(void)
{
	unlink(path);
}

static const char *read_back(void)
{
	FILE *f = fopen(path, "r");
	size_t n;

	cr_assert_not_null(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	fclose(f);
	return out;
}

static int count_of(const char *hay, const char *needle)
{
	int n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

TestSuite(chrome_trace, .init = setup, .fini = teardown);

Test(chrome_trace, full_trace_exact)
{
	struct np_trace *t = np_trace_open(path);
	struct np_trace_arg args[] = {
		{ .key = "shape", .kind = NP_ARG_STR, .s = "[2, \"3\"]" },
		{ .key = "delta", .kind = NP_ARG_INT, .i = -5 },
		{ .key = "bytes", .kind = NP_ARG_UINT, .u = UINT64_MAX },
		{ .key = "ratio", .kind = NP_ARG_DOUBLE, .d = 0.25 },
	};
	const char *series[] = { "allocated", NULL, "reserved" };
	const double values[] = { 1024, NAN, INFINITY };

	cr_assert_not_null(t);
	np_trace_process_name(t, 10, "python");
	np_trace_process_sort_index(t, 10, -1);
	np_trace_thread_name(t, 10, 11, "main");
	np_trace_slice(t, 10, 11, "step", "train", 100, 50.5, NULL, 0);
	np_trace_slice(t, 10, 11, "forward", "module", 101.25, 20, args, 4);
	np_trace_slice(t, 10, 11, "skewed", NULL, 130, -3, NULL, 0);
	np_trace_slice(t, 10, 11, "bad ts", NULL, NAN, NAN, NULL, 0);
	np_trace_instant(t, 10, 11, "nan found", "check", 105, 'p', args, 1);
	np_trace_instant(t, 10, 11, "odd scope", NULL, 106, 'x', NULL, 0);
	np_trace_counter(t, 10, "memory", 107, series, values, 3);
	cr_assert_eq(np_trace_count(t), 10);
	cr_assert_eq(np_trace_close(t), 0);

	cr_assert_str_eq(read_back(),
		"{\"traceEvents\":[\n"
		"{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":10,"
		"\"args\":{\"name\":\"python\"}},\n"
		"{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":10,"
		"\"args\":{\"sort_index\":-1}},\n"
		"{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":10,\"tid\":11,"
		"\"args\":{\"name\":\"main\"}},\n"
		"{\"name\":\"step\",\"cat\":\"train\",\"ph\":\"X\",\"ts\":100,"
		"\"dur\":50.5,\"pid\":10,\"tid\":11},\n"
		"{\"name\":\"forward\",\"cat\":\"module\",\"ph\":\"X\","
		"\"ts\":101.25,\"dur\":20,\"pid\":10,\"tid\":11,"
		"\"args\":{\"shape\":\"[2, \\\"3\\\"]\",\"delta\":-5,"
		"\"bytes\":18446744073709551615,\"ratio\":0.25}},\n"
		"{\"name\":\"skewed\",\"ph\":\"X\",\"ts\":130,\"dur\":0,"
		"\"pid\":10,\"tid\":11},\n"
		"{\"name\":\"bad ts\",\"ph\":\"X\",\"ts\":0,\"dur\":0,"
		"\"pid\":10,\"tid\":11},\n"
		"{\"name\":\"nan found\",\"cat\":\"check\",\"ph\":\"i\","
		"\"ts\":105,\"pid\":10,\"tid\":11,\"s\":\"p\","
		"\"args\":{\"shape\":\"[2, \\\"3\\\"]\"}},\n"
		"{\"name\":\"odd scope\",\"ph\":\"i\",\"ts\":106,\"pid\":10,"
		"\"tid\":11,\"s\":\"t\"},\n"
		"{\"name\":\"memory\",\"ph\":\"C\",\"ts\":107,\"pid\":10,"
		"\"args\":{\"allocated\":1024,\"value\":0,\"reserved\":0}}\n"
		"]}\n");
}

Test(chrome_trace, many_slices_one_per_line)
{
	struct np_trace *t = np_trace_open(path);
	const char *s;
	int i;

	cr_assert_not_null(t);
	for (i = 0; i < 100; i++)
		np_trace_slice(t, 1, 2, "op", "aten", i * 10.0, 5, NULL, 0);
	np_trace_counter(t, 1, "c", 0, NULL, (const double[]){ 1.5 }, 1);
	cr_assert_eq(np_trace_count(t), 101);
	cr_assert_eq(np_trace_close(t), 0);

	s = read_back();
	cr_assert_eq(strncmp(s, "{\"traceEvents\":[\n", 17), 0);
	cr_assert_str_eq(s + strlen(s) - 4, "\n]}\n");
	cr_assert_eq(count_of(s, "\"ph\":\"X\""), 100);
	cr_assert_eq(count_of(s, "\"dur\":5,"), 100);
	cr_assert_eq(count_of(s, "\n"), 103);	/* open + 101 events + close */
	cr_assert_eq(count_of(s, "},\n{"), 100);
	cr_assert_neq(strstr(s, "\"args\":{\"value\":1.5}"), NULL);
	cr_assert_null(strstr(s, "null"));
	cr_assert_null(strstr(s, "displayTimeUnit"));
}

Test(chrome_trace, empty_trace_is_valid)
{
	struct np_trace *t = np_trace_open(path);

	cr_assert_not_null(t);
	cr_assert_eq(np_trace_count(t), 0);
	cr_assert_eq(np_trace_close(t), 0);
	cr_assert_str_eq(read_back(), "{\"traceEvents\":[\n]}\n");
}

Test(chrome_trace, close_reports_full_disk)
{
	struct np_trace *t = np_trace_open("/dev/full");

	cr_assert_not_null(t);
	np_trace_process_name(t, 1, "p");
	np_trace_slice(t, 1, 1, "s", NULL, 1, 2, NULL, 0);
	cr_assert_eq(np_trace_close(t), -ENOSPC);
}

Test(chrome_trace, open_failure_sets_errno)
{
	errno = 0;
	cr_assert_null(np_trace_open("/nonexistent-dir/trace.json"));
	cr_assert_eq(errno, ENOENT);
}

Test(chrome_trace, null_trace_is_safe)
{
	cr_assert_eq(np_trace_close(NULL), 0);
	cr_assert_eq(np_trace_count(NULL), 0);
	np_trace_slice(NULL, 1, 1, "s", NULL, 0, 1, NULL, 0);
}
