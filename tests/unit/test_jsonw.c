/* test_jsonw.c - unit tests for viz/jsonw.c.
 *
 * Every test writes through a real FILE (tmpfile) and compares the exact
 * bytes that reached it.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"

static FILE *f;
static struct np_jsonw *w;
static char out[8192];

static void open_writer(enum np_jsonw_mode mode)
{
	f = tmpfile();
	cr_assert_not_null(f);
	w = np_jsonw_new(f, mode);
	cr_assert_not_null(w);
}

static void setup(void) { open_writer(NP_JSONW_COMPACT); }

static void teardown(void)
{
	np_jsonw_free(w);
	if (f)
		fclose(f);
}

/* Reads back everything written so far. */
static const char *output(void)
{
	size_t n;

	cr_assert_eq(fflush(f), 0);
	rewind(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	return out;
}

static void expect(const char *want)
{
	cr_assert_eq(np_jsonw_error(w), 0);
	cr_assert_str_eq(output(), want);
}

TestSuite(jsonw, .init = setup, .fini = teardown);

Test(jsonw, empty_containers)
{
	np_jsonw_start_array(w);
	np_jsonw_start_object(w);
	np_jsonw_end_object(w);
	np_jsonw_start_array(w);
	np_jsonw_end_array(w);
	np_jsonw_end_array(w);
	expect("[{},[]]");
}

Test(jsonw, nested_commas)
{
	np_jsonw_start_object(w);
	np_jsonw_int_field(w, "a", 1);
	np_jsonw_name(w, "b");
	np_jsonw_start_array(w);
	np_jsonw_uint(w, 1);
	np_jsonw_uint(w, 2);
	np_jsonw_start_object(w);
	np_jsonw_bool_field(w, "c", true);
	np_jsonw_name(w, "d");
	np_jsonw_null(w);
	np_jsonw_end_object(w);
	np_jsonw_end_array(w);
	np_jsonw_name(w, "e");
	np_jsonw_start_object(w);
	np_jsonw_end_object(w);
	np_jsonw_bool_field(w, "f", false);
	np_jsonw_string_field(w, "g", "x");
	np_jsonw_double_field(w, "h", 2.5);
	np_jsonw_uint_field(w, "i", 7);
	np_jsonw_end_object(w);
	expect("{\"a\":1,\"b\":[1,2,{\"c\":true,\"d\":null}],\"e\":{},"
	       "\"f\":false,\"g\":\"x\",\"h\":2.5,\"i\":7}");
}

Test(jsonw, escapes_quote_backslash_and_controls)
{
	np_jsonw_start_array(w);
	np_jsonw_string(w, "a\"b\\c/d");
	np_jsonw_string(w, "\n\t\r\b\f\x01\x1f\x7f");
	np_jsonw_string(w, "");
	np_jsonw_end_array(w);
	expect("[\"a\\\"b\\\\c/d\","
	       "\"\\u000a\\u0009\\u000d\\u0008\\u000c\\u0001\\u001f\x7f\","
	       "\"\"]");
}

Test(jsonw, escapes_keys)
{
	np_jsonw_start_object(w);
	np_jsonw_int_field(w, "k\"\n", 1);
	np_jsonw_int_field(w, NULL, 2);
	np_jsonw_end_object(w);
	expect("{\"k\\\"\\u000a\":1,\"\":2}");
}

Test(jsonw, valid_utf8_passes_through)
{
	/* 2-, 3- and 4-byte sequences, including the largest code point. */
	np_jsonw_string(w, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf");
	expect("\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf\"");
}

#define FFFD "\xef\xbf\xbd"

Test(jsonw, invalid_utf8_becomes_fffd)
{
	np_jsonw_start_array(w);
	np_jsonw_string(w, "a\x80z");			/* lone continuation */
	np_jsonw_string(w, "\xff\xfe");			/* never valid */
	np_jsonw_string(w, "\xc0\xaf");			/* overlong '/' */
	np_jsonw_string(w, "\xe0\x80\xaf");		/* overlong, 3 bytes */
	np_jsonw_string(w, "\xed\xa0\x80");		/* surrogate U+D800 */
	np_jsonw_string(w, "\xf4\x90\x80\x80");		/* above U+10FFFF */
	np_jsonw_string(w, "\xe2\x82" "A");		/* truncated, then ASCII */
	np_jsonw_string(w, "x\xe2\x82");		/* truncated at the end */
	np_jsonw_end_array(w);
	expect("[\"a" FFFD "z\","
	       "\"" FFFD FFFD "\","
	       "\"" FFFD FFFD "\","
	       "\"" FFFD FFFD FFFD "\","
	       "\"" FFFD FFFD FFFD "\","
	       "\"" FFFD FFFD FFFD FFFD "\","
	       "\"" FFFD FFFD "A\","
	       "\"x" FFFD FFFD "\"]");
}

Test(jsonw, null_string_is_null)
{
	np_jsonw_start_object(w);
	np_jsonw_string_field(w, "s", NULL);
	np_jsonw_end_object(w);
	expect("{\"s\":null}");
}

Test(jsonw, integer_limits)
{
	np_jsonw_start_array(w);
	np_jsonw_int(w, INT64_MIN);
	np_jsonw_int(w, INT64_MAX);
	np_jsonw_int(w, -1);
	np_jsonw_uint(w, UINT64_MAX);
	np_jsonw_uint(w, 0);
	np_jsonw_end_array(w);
	expect("[-9223372036854775808,9223372036854775807,-1,"
	       "18446744073709551615,0]");
}

Test(jsonw, doubles_shortest_round_trip)
{
	np_jsonw_start_array(w);
	np_jsonw_double(w, 0.1);
	np_jsonw_double(w, 1.5);
	np_jsonw_double(w, 3.0);
	np_jsonw_double(w, -0.0);
	np_jsonw_double(w, 1e300);
	np_jsonw_double(w, 1e-7);
	np_jsonw_double(w, 0.1 + 0.2);		/* needs 17 digits */
	np_jsonw_double(w, 1.0 / 3.0);
	np_jsonw_double(w, 123456.789);
	np_jsonw_end_array(w);
	expect("[0.1,1.5,3,-0,1e+300,1e-07,0.30000000000000004,"
	       "0.33333333333333331,123456.789]");
}

Test(jsonw, non_finite_doubles_are_null)
{
	np_jsonw_start_object(w);
	np_jsonw_double_field(w, "nan", NAN);
	np_jsonw_double_field(w, "inf", INFINITY);
	np_jsonw_double_field(w, "ninf", -INFINITY);
	np_jsonw_end_object(w);
	expect("{\"nan\":null,\"inf\":null,\"ninf\":null}");
}

Test(jsonw, comma_decimal_locale_still_writes_a_point)
{
	if (!setlocale(LC_NUMERIC, "de_DE.UTF-8"))
		cr_skip_test("locale de_DE.UTF-8 not installed");
	np_jsonw_double(w, 1.5);
	expect("1.5");
}

Test(jsonw, compact_top_level_values_are_not_separated)
{
	np_jsonw_uint(w, 1);
	np_jsonw_start_object(w);
	np_jsonw_end_object(w);
	expect("1{}");
}

Test(jsonw, lines_mode_ends_each_top_level_value)
{
	np_jsonw_free(w);
	fclose(f);
	open_writer(NP_JSONW_LINES);

	np_jsonw_start_object(w);
	np_jsonw_name(w, "a");
	np_jsonw_start_array(w);
	np_jsonw_uint(w, 1);
	np_jsonw_end_array(w);
	np_jsonw_end_object(w);
	np_jsonw_string(w, "s");
	np_jsonw_double(w, NAN);
	np_jsonw_start_array(w);
	np_jsonw_end_array(w);
	/* No comma between lines: each is its own document. */
	expect("{\"a\":[1]}\n\"s\"\nnull\n[]\n");
}

Test(jsonw, too_deep_nesting_stays_valid)
{
	char want[256];
	int i, n = 0;

	for (i = 0; i < 64; i++)
		np_jsonw_start_array(w);
	/* Levels 65 and 66: written as one null, their contents dropped. */
	np_jsonw_start_object(w);
	np_jsonw_int_field(w, "dropped", 1);
	np_jsonw_start_array(w);
	np_jsonw_int(w, 2);
	np_jsonw_end_array(w);
	np_jsonw_end_object(w);
	np_jsonw_int(w, 3);			/* back at level 64 */
	for (i = 0; i < 64; i++)
		np_jsonw_end_array(w);

	for (i = 0; i < 64; i++)
		want[n++] = '[';
	n += sprintf(want + n, "null,3");
	for (i = 0; i < 64; i++)
		want[n++] = ']';
	want[n] = '\0';
	expect(want);
}

Test(jsonw, unbalanced_end_is_ignored)
{
	np_jsonw_start_array(w);
	np_jsonw_end_array(w);
	np_jsonw_end_array(w);
	np_jsonw_end_object(w);
	expect("[]");
}

Test(jsonw, write_error_on_dev_full)
{
	np_jsonw_free(w);
	fclose(f);
	f = fopen("/dev/full", "w");
	cr_assert_not_null(f);
	/* Unbuffered, so each write reaches the device and fails now. */
	setvbuf(f, NULL, _IONBF, 0);
	w = np_jsonw_new(f, NP_JSONW_COMPACT);
	cr_assert_not_null(w);

	cr_assert_eq(np_jsonw_error(w), 0);
	np_jsonw_start_object(w);
	np_jsonw_string_field(w, "a", "b");
	np_jsonw_end_object(w);
	cr_assert_eq(np_jsonw_error(w), -EIO);
}

/* A stream whose first write fails and later ones succeed, to show the
 * error sticks once seen. */
static char cookie_buf[256];
static size_t cookie_len;
static int cookie_calls;

static ssize_t flaky_write(void *c, const char *buf, size_t n)
{
	(void)c;
	if (cookie_calls++ == 0) {
		errno = EIO;
		return -1;
	}
	if (n > sizeof(cookie_buf) - cookie_len)
		n = sizeof(cookie_buf) - cookie_len;
	memcpy(cookie_buf + cookie_len, buf, n);
	cookie_len += n;
	return (ssize_t)n;
}

Test(jsonw, error_is_sticky)
{
	cookie_io_functions_t io = { .write = flaky_write };

	np_jsonw_free(w);
	fclose(f);
	f = fopencookie(NULL, "w", io);
	cr_assert_not_null(f);
	setvbuf(f, NULL, _IONBF, 0);
	w = np_jsonw_new(f, NP_JSONW_COMPACT);
	cr_assert_not_null(w);

	np_jsonw_start_array(w);		/* this write fails */
	cr_assert_eq(np_jsonw_error(w), -EIO);
	clearerr(f);
	np_jsonw_uint(w, 1);			/* the stream works again ... */
	np_jsonw_end_array(w);
	cr_assert_eq(np_jsonw_error(w), -EIO);	/* ... but the error stays */
	cr_assert_eq(cookie_len, 0, "nothing is written after an error");
}

Test(jsonw, new_rejects_null_file)
{
	errno = 0;
	cr_assert_null(np_jsonw_new(NULL, NP_JSONW_COMPACT));
	cr_assert_eq(errno, EINVAL);
	np_jsonw_free(NULL);			/* must not crash */
}
