/* on_nan.c - the action --on-nan takes (on_nan.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "log.h"
#include "on_nan.h"

static const struct {
	const char *name;
	int signo;
} names[] = {
	{ "INT", SIGINT }, { "TERM", SIGTERM }, { "HUP", SIGHUP }, { "QUIT", SIGQUIT },
	{ "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "ABRT", SIGABRT }, { "KILL", SIGKILL },
	{ "STOP", SIGSTOP }, { "TSTP", SIGTSTP }, { "TTIN", SIGTTIN }, { "TTOU", SIGTTOU },
	{ "CONT", SIGCONT },
};

const char *np_signal_name(int signo)
{
	static const char *const full[] = {
		[SIGINT] = "SIGINT", [SIGTERM] = "SIGTERM", [SIGHUP] = "SIGHUP",
		[SIGQUIT] = "SIGQUIT", [SIGUSR1] = "SIGUSR1", [SIGUSR2] = "SIGUSR2",
		[SIGABRT] = "SIGABRT", [SIGKILL] = "SIGKILL",
	};
	static char other[32];
	if (signo > 0 && (size_t)signo < sizeof(full) / sizeof(full[0]) && full[signo])
		return full[signo];
	snprintf(other, sizeof(other), "signal %d", signo);
	return other;
}

static int signal_of(const char *s)
{
	if (!strncasecmp(s, "SIG", 3))
		s += 3;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(s, names[i].name))
			return names[i].signo;
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > SIGRTMAX)
		return -1;
	return (int)v;
}

int np_on_nan_parse(const char *s, int *signo)
{
	*signo = 0;
	if (!strcmp(s, "report"))
		return 0;
	int sig = strncmp(s, "signal:", 7) ? -1 : signal_of(s + 7);
	if (sig < 0) {
		np_err("invalid --on-nan '%s': expected report or signal:NAME "
		       "(signal:INT, signal:TERM, signal:USR1, ...)", s);
		return -EINVAL;
	}
	if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU || sig == SIGCONT) {
		np_err("invalid --on-nan '%s': it would freeze the job, not end it, with "
		       "nanprof waiting on it; to look inside, use signal:INT (a traceback) "
		       "or py-spy dump", s);
		return -EINVAL;
	}
	*signo = sig;
	return 0;
}

int np_signal_ignored(pid_t pid, int signo)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int r = -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "SigIgn:", 7)) {
			unsigned long long mask = strtoull(line + 7, NULL, 16);
			r = signo >= 1 && signo <= 64 && (mask >> (signo - 1) & 1);
			break;
		}
	fclose(f);
	return r;
}

unsigned np_on_nan_fire(struct np_on_nan *a, const pid_t *pids, unsigned n, uint64_t now_ns)
{
	if (!a->signo || a->fired)
		return 0;
	a->fired = true;
	a->ts_ns = now_ns;
	for (unsigned i = 0; i < n; i++) {
		if (pids[i] <= 0)
			continue;
		int ignoring = np_signal_ignored(pids[i], a->signo) == 1;
		if (kill(pids[i], a->signo)) {
			a->nfailed++;
			continue;
		}
		if (a->nsent < NP_ON_NAN_PIDS)
			a->pids[a->nsent] = pids[i];
		a->nsent++;
		a->nignoring += (unsigned)ignoring;
	}
	return a->nsent;
}
