/* chrome_trace.c - Chrome Trace Event Format writer, see chrome_trace.h.
 *
 * The file looks like
 *
 *   {"traceEvents":[
 *   {"name":"process_name","ph":"M","pid":1,"args":{"name":"python"}},
 *   {"name":"forward","cat":"module","ph":"X","ts":10,"dur":5,...}
 *   ]}
 *
 * one event per line, so traces diff and grep well.  Each event is a
 * top-level value as far as jsonw knows; the array's commas and newlines
 * are ours.
 */
#include "chrome_trace.h"
#include "jsonw.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

struct np_trace {
	FILE *f;
	struct np_jsonw *w;
	uint64_t count;
	int err;		/* first -errno of our own raw writes */
};

static void put_raw(struct np_trace *t, const char *s)
{
	if (!t->err && fputs(s, t->f) == EOF)
		t->err = errno ? -errno : -EIO;
}

/* Perfetto drops events whose ts or dur is not a number, and jsonw
 * would write a non-finite double as null: write 0 instead. */
static double finite_or_zero(double v)
{
	return isfinite(v) ? v : 0.0;
}

struct np_trace *np_trace_open(const char *path)
{
	struct np_trace *t;
	int saved;

	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->f = fopen(path, "w");
	if (!t->f)
		goto fail;
	t->w = np_jsonw_new(t->f, NP_JSONW_COMPACT);
	if (!t->w)
		goto fail;
	put_raw(t, "{\"traceEvents\":[");
	return t;
fail:
	saved = errno;
	if (t->f)
		fclose(t->f);
	free(t);
	errno = saved;
	return NULL;
}

int np_trace_close(struct np_trace *t)
{
	int err;

	if (!t)
		return 0;
	put_raw(t, "\n]}\n");
	err = t->err ? t->err : np_jsonw_error(t->w);
	/* Buffered data meets a full disk only here, at flush. */
	if (fflush(t->f) != 0 && !err)
		err = errno ? -errno : -EIO;
	if (fclose(t->f) != 0 && !err)
		err = errno ? -errno : -EIO;
	np_jsonw_free(t->w);
	free(t);
	return err;
}

uint64_t np_trace_count(const struct np_trace *t)
{
	return t ? t->count : 0;
}

/* Opens one event: separator, then name, cat (if any) and ph, the
 * fields every event starts with. */
static void begin_event(struct np_trace *t, const char *name, const char *cat,
			const char *ph)
{
	put_raw(t, t->count ? ",\n" : "\n");
	t->count++;
	np_jsonw_start_object(t->w);
	np_jsonw_string_field(t->w, "name", name ? name : "");
	if (cat)
		np_jsonw_string_field(t->w, "cat", cat);
	np_jsonw_string_field(t->w, "ph", ph);
}

static void end_event(struct np_trace *t)
{
	np_jsonw_end_object(t->w);
}

static void write_args(struct np_trace *t, const struct np_trace_arg *args,
		       int nargs)
{
	int i;

	if (!args || nargs <= 0)
		return;
	np_jsonw_name(t->w, "args");
	np_jsonw_start_object(t->w);
	for (i = 0; i < nargs; i++) {
		const struct np_trace_arg *a = &args[i];

		np_jsonw_name(t->w, a->key ? a->key : "");
		switch (a->kind) {
		case NP_ARG_STR:
			np_jsonw_string(t->w, a->s);
			break;
		case NP_ARG_INT:
			np_jsonw_int(t->w, a->i);
			break;
		case NP_ARG_UINT:
			np_jsonw_uint(t->w, a->u);
			break;
		case NP_ARG_DOUBLE:
			np_jsonw_double(t->w, a->d);
			break;
		default:
			np_jsonw_null(t->w);
			break;
		}
	}
	np_jsonw_end_object(t->w);
}

/* Opens an "M" event and its args object; the caller writes the args
 * and closes both. */
static void metadata(struct np_trace *t, const char *what, uint32_t pid,
		     const uint32_t *tid)
{
	begin_event(t, what, NULL, "M");
	np_jsonw_uint_field(t->w, "pid", pid);
	if (tid)
		np_jsonw_uint_field(t->w, "tid", *tid);
	np_jsonw_name(t->w, "args");
	np_jsonw_start_object(t->w);
}

void np_trace_process_name(struct np_trace *t, uint32_t pid, const char *name)
{
	if (!t)
		return;
	metadata(t, "process_name", pid, NULL);
	np_jsonw_string_field(t->w, "name", name ? name : "");
	np_jsonw_end_object(t->w);
	end_event(t);
}

void np_trace_process_sort_index(struct np_trace *t, uint32_t pid, int64_t index)
{
	if (!t)
		return;
	metadata(t, "process_sort_index", pid, NULL);
	np_jsonw_int_field(t->w, "sort_index", index);
	np_jsonw_end_object(t->w);
	end_event(t);
}

void np_trace_thread_name(struct np_trace *t, uint32_t pid, uint32_t tid,
			  const char *name)
{
	if (!t)
		return;
	metadata(t, "thread_name", pid, &tid);
	np_jsonw_string_field(t->w, "name", name ? name : "");
	np_jsonw_end_object(t->w);
	end_event(t);
}

void np_trace_slice(struct np_trace *t, uint32_t pid, uint32_t tid,
		    const char *name, const char *cat, double ts_us, double dur_us,
		    const struct np_trace_arg *args, int nargs)
{
	if (!t)
		return;
	/* Perfetto drops an X event without a dur, and a negative one
	 * (clock skew between sources) would break nesting. */
	dur_us = finite_or_zero(dur_us);
	if (dur_us < 0)
		dur_us = 0;
	begin_event(t, name, cat, "X");
	np_jsonw_double_field(t->w, "ts", finite_or_zero(ts_us));
	np_jsonw_double_field(t->w, "dur", dur_us);
	np_jsonw_uint_field(t->w, "pid", pid);
	np_jsonw_uint_field(t->w, "tid", tid);
	write_args(t, args, nargs);
	end_event(t);
}

void np_trace_instant(struct np_trace *t, uint32_t pid, uint32_t tid,
		      const char *name, const char *cat, double ts_us, char scope,
		      const struct np_trace_arg *args, int nargs)
{
	char s[2] = { 't', '\0' };

	if (!t)
		return;
	if (scope == 'p' || scope == 'g')
		s[0] = scope;
	begin_event(t, name, cat, "i");
	np_jsonw_double_field(t->w, "ts", finite_or_zero(ts_us));
	np_jsonw_uint_field(t->w, "pid", pid);
	np_jsonw_uint_field(t->w, "tid", tid);
	np_jsonw_string_field(t->w, "s", s);
	write_args(t, args, nargs);
	end_event(t);
}

void np_trace_counter(struct np_trace *t, uint32_t pid, const char *name,
		      double ts_us, const char *const *series,
		      const double *values, int nseries)
{
	int i;

	if (!t)
		return;
	begin_event(t, name, NULL, "C");
	np_jsonw_double_field(t->w, "ts", finite_or_zero(ts_us));
	np_jsonw_uint_field(t->w, "pid", pid);
	np_jsonw_name(t->w, "args");
	np_jsonw_start_object(t->w);
	for (i = 0; values && i < nseries; i++) {
		const char *key = series && series[i] ? series[i] : "value";

		/* Perfetto wants numbers in counter args, never null. */
		np_jsonw_double_field(t->w, key, finite_or_zero(values[i]));
	}
	np_jsonw_end_object(t->w);
	end_event(t);
}
