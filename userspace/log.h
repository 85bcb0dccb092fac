/* log.h - one logging entry point for the CLI.
 *
 * Messages go to stderr as "nanprof: <message>", lower case, no full stop.
 * The level is checked before anything is formatted.
 */
#ifndef NP_LOG_H
#define NP_LOG_H

enum np_log_level { NP_LOG_ERROR = 0, NP_LOG_WARN, NP_LOG_INFO, NP_LOG_DEBUG };

extern enum np_log_level np_log_level;

void np_log(enum np_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define np_err(...)   np_log(NP_LOG_ERROR, __VA_ARGS__)
#define np_warn(...)  np_log(NP_LOG_WARN, __VA_ARGS__)
#define np_info(...)  np_log(NP_LOG_INFO, __VA_ARGS__)
#define np_debug(...) np_log(NP_LOG_DEBUG, __VA_ARGS__)

#endif
