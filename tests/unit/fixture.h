/* fixture.h - the real torch kernels of tests/unit/fixtures/torch_kernels.tsv
 * (torch 2.14.1) and torch_kernels_2.11.tsv (torch 2.11.0, what the GPU
 * test host runs): mangled name, demangled name, cuFuncGetParamInfo
 * layout per line, made by tests/fixtures/extract_torch_kernels.py; read
 * once per test process for the kdecode tests.  Static helpers: included
 * by one file each. */
#ifndef NP_TEST_FIXTURE_H
#define NP_TEST_FIXTURE_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIXTURE "tests/unit/fixtures/torch_kernels.tsv"
#define FIXTURE_2_11 "tests/unit/fixtures/torch_kernels_2.11.tsv"
#define FIXTURE_MAX_LINES 512

struct kline {
	char *mangled, *dem, *layout;
};

static struct kline lines[FIXTURE_MAX_LINES];
static int nlines;
static char *fixture_text;
static const char *fixture_path;

/* Reads the fixture at path into lines[] (comments skipped). */
static void fixture_load_from(const char *path)
{
	FILE *f = fopen(path, "r");
	long n;
	char *p, *nl;

	fixture_path = path;
	cr_assert_not_null(f, "cannot open %s (run from the repository root)", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	fixture_text = malloc((size_t)n + 1);
	cr_assert_eq(fread(fixture_text, 1, (size_t)n, f), (size_t)n);
	fixture_text[n] = '\0';
	fclose(f);
	nlines = 0;
	for (p = fixture_text; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		cr_assert_not_null(nl, "fixture does not end in a newline");
		*nl = '\0';
		if (*p == '#')
			continue;
		cr_assert_lt(nlines, FIXTURE_MAX_LINES);
		struct kline *l = &lines[nlines++];
		l->mangled = p;
		l->dem = strchr(p, '\t');
		cr_assert_not_null(l->dem);
		*l->dem++ = '\0';
		l->layout = strchr(l->dem, '\t');
		cr_assert_not_null(l->layout);
		*l->layout++ = '\0';
	}
}

/* A suite's .init: torch 2.14.1's kernels, or torch 2.11.0's. */
__attribute__((unused)) static void fixture_load(void)
{
	fixture_load_from(FIXTURE);
}

__attribute__((unused)) static void fixture_load_2_11(void)
{
	fixture_load_from(FIXTURE_2_11);
}

static void fixture_unload(void)
{
	free(fixture_text);
}

/* The first fixture line whose demangled name contains sub. */
__attribute__((unused)) static const struct kline *fixture_find(const char *sub)
{
	for (int i = 0; i < nlines; i++)
		if (strstr(lines[i].dem, sub))
			return &lines[i];
	cr_assert_fail("no kernel of %s contains \"%s\"", fixture_path, sub);
	return NULL;
}

#endif
