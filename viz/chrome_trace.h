/* chrome_trace.h - writes a Chrome Trace Event Format file as Perfetto
 * reads it: {"traceEvents":[...]}, ts/dur in microseconds, no
 * displayTimeUnit.  Streaming: events go to disk as they are added; the
 * caller must add the slices of one thread so that they nest (the writer
 * checks nothing about nesting, see tests/integration/check_trace.py).
 */
#ifndef NP_CHROME_TRACE_H
#define NP_CHROME_TRACE_H

#include <stdint.h>

struct np_trace;

enum np_trace_arg_kind { NP_ARG_STR, NP_ARG_INT, NP_ARG_UINT, NP_ARG_DOUBLE };

/* One entry of a slice's or instant's "args" object. */
struct np_trace_arg {
	const char *key;
	enum np_trace_arg_kind kind;
	union {
		const char *s;
		int64_t i;
		uint64_t u;
		double d;
	};
};

/* Creates/truncates path and writes the opening.  NULL, errno set, on error. */
struct np_trace *np_trace_open(const char *path);
/* Writes the closing "]}" and closes.  0, or -errno if any write failed
 * (the file is then incomplete).  Frees t either way; safe on NULL. */
int np_trace_close(struct np_trace *t);

/* Metadata ("ph":"M"): track names and order. */
void np_trace_process_name(struct np_trace *t, uint32_t pid, const char *name);
void np_trace_process_sort_index(struct np_trace *t, uint32_t pid, int64_t index);
void np_trace_thread_name(struct np_trace *t, uint32_t pid, uint32_t tid, const char *name);

/* A complete slice ("ph":"X").  cat may be NULL. nargs may be 0. */
void np_trace_slice(struct np_trace *t, uint32_t pid, uint32_t tid,
		    const char *name, const char *cat, double ts_us, double dur_us,
		    const struct np_trace_arg *args, int nargs);

/* An instant ("ph":"i"); scope is 't' (thread), 'p' (process) or 'g'. */
void np_trace_instant(struct np_trace *t, uint32_t pid, uint32_t tid,
		      const char *name, const char *cat, double ts_us, char scope,
		      const struct np_trace_arg *args, int nargs);

/* A counter sample ("ph":"C"): every series value is a number. */
void np_trace_counter(struct np_trace *t, uint32_t pid, const char *name,
		      double ts_us, const char *const *series,
		      const double *values, int nseries);

/* Events written so far (metadata included). */
uint64_t np_trace_count(const struct np_trace *t);

#endif
