/* alog.h - the agent's debug lines: NANPROF_AGENT_DEBUG=1 in the job's
 * environment sends them to its stderr.  Off by default: the agent never
 * writes into the job's output otherwise. */
#ifndef NP_ALOG_H
#define NP_ALOG_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline int np_alog_on(void)
{
	static int on = -1;
	if (on < 0) {
		const char *s = getenv("NANPROF_AGENT_DEBUG");
		on = s && *s && *s != '0';
	}
	return on;
}

#define np_alog(...) \
	do { \
		if (np_alog_on()) { \
			fprintf(stderr, "nanprof-agent[%d]: ", (int)getpid()); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
		} \
	} while (0)

#endif
