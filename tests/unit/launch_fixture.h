/* launch_fixture.h - launches recorded from torch's own code, for the
 * kdecode tests: tests/unit/fixtures/{reduce,lambda}_ops*.tsv, made by
 * tests/fixtures/gen_{reduce,lambda}_ops.sh.  One launch per line:
 *
 *   label  demangled-name  layout  gx,gy,gz  bx,by,bz  hex  want
 *
 * hex the parameter buffer packed as the layout says, want "ptr:numel"
 * per output the decoder must find (comma-separated) or "none".  Static
 * helpers: included by one file each. */
#ifndef NP_TEST_LAUNCH_FIXTURE_H
#define NP_TEST_LAUNCH_FIXTURE_H

#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../cupti/kdecode.h"

struct fx_launch {
	const char *file;
	char label[48];
	char name[2048];
	struct np_kparams l;
	struct np_klaunch kl;
	_Alignas(16) unsigned char buf[2048];   /* the packed parameters */
	int nwant;
	uint64_t want_ptr[2], want_numel[2];
};

static char *fx_field(char **p)
{
	char *f = *p, *tab = strchr(f, '\t');
	cr_assert_not_null(tab, "short line in a launch fixture");
	*tab = '\0';
	*p = tab + 1;
	return f;
}

static void fx_parse(char *line, struct fx_launch *c)
{
	char *p = line, *hex, *want;
	unsigned gx, gy, gz, bx, by, bz;
	uint32_t end;

	snprintf(c->label, sizeof(c->label), "%s", fx_field(&p));
	snprintf(c->name, sizeof(c->name), "%s", fx_field(&p));
	cr_assert_gt(np_kdecode_layout_parse(fx_field(&p), &c->l), 0, "%s", c->label);
	cr_assert_eq(sscanf(fx_field(&p), "%u,%u,%u", &gx, &gy, &gz), 3);
	cr_assert_eq(sscanf(fx_field(&p), "%u,%u,%u", &bx, &by, &bz), 3);
	c->kl = (struct np_klaunch){ .threads = (uint64_t)gx * gy * gz * bx * by * bz,
				     .blocks = gx * gy * gz, .grid = { gx, gy, gz },
				     .block = { bx, by, bz } };
	hex = fx_field(&p);
	want = p;
	end = c->l.p[c->l.n - 1].offset + c->l.p[c->l.n - 1].size;
	cr_assert_eq(strlen(hex), 2 * end, "%s", c->label);
	cr_assert_leq(end, sizeof(c->buf));
	for (uint32_t i = 0; i < end; i++) {
		unsigned v;
		cr_assert_eq(sscanf(hex + 2 * i, "%2x", &v), 1);
		c->buf[i] = (unsigned char)v;
	}
	c->nwant = 0;
	if (strcmp(want, "none") != 0)
		for (char *w = strtok(want, ","); w; w = strtok(NULL, ",")) {
			cr_assert_lt(c->nwant, 2);
			cr_assert_eq(sscanf(w, "%" SCNx64 ":%" SCNu64, &c->want_ptr[c->nwant],
					    &c->want_numel[c->nwant]), 2, "%s", w);
			c->nwant++;
		}
}

/* Appends path's launches to cases[*n..max); at least min of them. */
static void fx_load(const char *path, struct fx_launch *cases, int *n, int max, int min)
{
	FILE *f = fopen(path, "r");
	char *text, *nl;
	long len;
	int before = *n;

	cr_assert_not_null(f, "cannot open %s (run from the repository root)", path);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	text = malloc((size_t)len + 1);    /* kept: the cases point into it */
	cr_assert_eq(fread(text, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	text[len] = '\0';
	for (char *p = text; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		cr_assert_not_null(nl, "%s does not end in a newline", path);
		*nl = '\0';
		if (*p == '#')
			continue;
		cr_assert_lt(*n, max);
		cases[*n].file = path;
		fx_parse(p, &cases[(*n)++]);
	}
	cr_assert_geq(*n - before, min, "only %d launches in %s", *n - before, path);
}

static const struct fx_launch *fx_find(const struct fx_launch *cases, int n, const char *label)
{
	for (int i = 0; i < n; i++)
		if (strcmp(cases[i].label, label) == 0)
			return &cases[i];
	cr_assert_fail("no launch %s", label);
	return NULL;
}

/* kernelParams for c's buffer: one pointer per parameter. */
static void fx_params(const struct fx_launch *c, void **kp)
{
	for (int i = 0; i < c->l.n; i++)
		kp[i] = (void *)(c->buf + c->l.p[i].offset);
}

#endif
