#include <stdarg.h>
#include <stdio.h>
#include "log.h"

enum np_log_level np_log_level = NP_LOG_INFO;

void np_log(enum np_log_level level, const char *fmt, ...)
{
	if (level > np_log_level)
		return;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* One write, so lines from several sources do not interleave. */
	fprintf(stderr, "nanprof: %s%s\n", level == NP_LOG_WARN ? "warning: " : "", buf);
}
