/* on_nan.h - what nanprof does to the job once it has found the first
 * non-finite value (--on-nan).
 *
 * By default nothing: it reports, and the job runs on (its numbers are
 * its own business).  A job that goes on training on NaN for hours
 * wastes its machines, so `--on-nan signal:NAME` sends a signal, once,
 * to every process nanprof traces, the moment the first origin (or a
 * NaN received from an untraced rank) is known: signal:INT stops a
 * Python job as Ctrl-C does (a KeyboardInterrupt, which the job may
 * catch to save a checkpoint), signal:TERM asks a launcher to shut its
 * ranks down, signal:USR1 calls a handler of the job's own.
 */
#ifndef NP_ON_NAN_H
#define NP_ON_NAN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define NP_ON_NAN_PIDS 16         /* pids kept for the record (all are signalled) */

struct np_on_nan {
	int signo;                /* 0: report only */
	/* what was done (once) */
	bool fired;
	uint64_t ts_ns;           /* CLOCK_MONOTONIC when sent */
	unsigned nsent, nfailed;  /* processes signalled, and those that refused */
	unsigned nignoring;       /* of those signalled, how many ignore it (SigIgn):
				   * a job a shell script started with `&` ignores
				   * SIGINT, and signal:INT then does nothing */
	pid_t pids[NP_ON_NAN_PIDS];
};

/* Parses "report" or "signal:NAME" (INT, SIGINT, TERM, HUP, QUIT, USR1,
 * USR2, ABRT, KILL, or a number).  Refuses the signals that would stop
 * the job without ending it (STOP, TSTP, TTIN, TTOU, CONT): nanprof
 * would then wait on a frozen job.  0, or -EINVAL after a one-line error. */
int np_on_nan_parse(const char *s, int *signo);

/* "SIGINT" for 2 (a static string, "signal N" for one not named). */
const char *np_signal_name(int signo);

/* 1 when process pid ignores signal signo (/proc/PID/status SigIgn),
 * 0 when not, -1 when that cannot be read. */
int np_signal_ignored(pid_t pid, int signo);

/* Sends a->signo to pids[0..n) that are not 0, once (a->fired after);
 * returns how many took it. */
unsigned np_on_nan_fire(struct np_on_nan *a, const pid_t *pids, unsigned n, uint64_t now_ns);

#endif
