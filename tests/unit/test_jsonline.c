/* test_jsonline.c - top-level member reads and rewrites of one JSON line. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "jsonline.h"

static const char line[] =
	"{\"type\":\"module\",\"pid\":12,\"module\":\"a,\\\"ts\\\":1}\",\"args\":{\"ts\":5,"
	"\"pid\":[1,{\"x\":\"}\"}]},\"ts\":1.5,\"neg\":-3,\"start_ns\":100}\n";

Test(jsonline, reads_top_level_members_only)
{
	double d;
	int64_t i;
	char s[64];
	cr_assert_eq(np_jl_int(line, "pid", &i), 0);
	cr_expect_eq(i, 12);
	cr_assert_eq(np_jl_num(line, "ts", &d), 0);
	cr_expect_eq(d, 1.5);   /* not args.ts, not the text inside "module" */
	cr_assert_eq(np_jl_int(line, "neg", &i), 0);
	cr_expect_eq(i, -3);
	cr_assert_eq(np_jl_str(line, "type", s, sizeof(s)), 0);
	cr_expect_str_eq(s, "module");
	cr_expect_eq(np_jl_int(line, "x", &i), -ENOENT);     /* nested only */
	cr_expect_eq(np_jl_int(line, "type", &i), -ENOENT);  /* not a number */
	cr_expect_eq(np_jl_str(line, "pid", s, sizeof(s)), -ENOENT);
	cr_expect_eq(np_jl_str(line, "type", s, 3), 0);
	cr_expect_str_eq(s, "mo");                             /* cut to the buffer */
}

static bool shift(const char *key, const char *num, char *repl, size_t len, void *arg)
{
	if (strcmp(key, "ts") && strcmp(key, "pid"))
		return false;
	snprintf(repl, len, "%g", strtod(num, NULL) + *(double *)arg);
	return true;
}

Test(jsonline, rewrites_top_level_numbers_only)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	double by = 1000;
	cr_assert_eq(np_jl_rewrite(line, f, shift, &by), 0);
	fclose(f);
	cr_expect_str_eq(out,
		"{\"type\":\"module\",\"pid\":1012,\"module\":\"a,\\\"ts\\\":1}\",\"args\":{\"ts\":5,"
		"\"pid\":[1,{\"x\":\"}\"}]},\"ts\":1001.5,\"neg\":-3,\"start_ns\":100}\n");
	free(out);
}

Test(jsonline, not_an_object)
{
	int64_t i;
	cr_expect_eq(np_jl_int("[1,2]", "pid", &i), -ENOENT);
	cr_expect_eq(np_jl_int("{\"pid\":", "pid", &i), -ENOENT);
	cr_expect_eq(np_jl_int("{\"pid\":\"unterminated", "pid", &i), -ENOENT);
}
