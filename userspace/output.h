/* output.h - the files nanprof writes into its output directory:
 * events.jsonl, trace.json and summary.txt (formats in docs/outputs.md). */
#ifndef NP_OUTPUT_H
#define NP_OUTPUT_H

#include <stdio.h>
#include "collector.h"

/* What the session was, for the "session" event and the summary. */
struct np_on_nan;

struct np_session_info {
	const char *mode;          /* "run" or "attach" */
	const char *command;       /* the command line, or the pid attached to */
	const char *probe_mode;    /* np_probes_mode() */
	uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
	uint64_t start_unix_ns;    /* wall clock at start */
	uint64_t counters[NP_CNT_MAX];
	int exit_status;           /* of the command (run), -1 if none */
	unsigned window;
	const struct np_on_nan *on_nan;   /* --on-nan, and what it did; NULL: none */
};

/* Each returns 0 or -errno; files are complete or reported failed. */
int np_write_events(const struct np_collector *c, const struct np_session_info *s,
		    const char *path);
int np_write_trace(const struct np_collector *c, const struct np_session_info *s,
		   const char *path);
/* The summary goes to f (summary.txt and stderr). */
void np_write_summary(const struct np_collector *c, const struct np_session_info *s, FILE *f);

const char *np_phase_name(unsigned phase);

#endif
