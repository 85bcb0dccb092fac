/* cli.h - command-line options of `nanprof run` and `nanprof attach`. */
#ifndef NP_CLI_H
#define NP_CLI_H

#include <stdbool.h>
#include <sys/types.h>

#define NP_MAX_ATTACH 256

struct np_opts {
	const char *out_dir;      /* -o; NULL = ./nanprof-<pid> */
	unsigned window;          /* --window: steps kept in full detail */
	unsigned max_records;     /* --max-records: detail records per step */
	unsigned ring_mb;         /* --ring-mb */
	double duration;          /* attach --duration, 0 = until stopped */
	bool no_session;          /* --no-session */
	bool no_checks;           /* --no-checks: tracer only */
	int python_probe;         /* --python-probe: enum np_py_probe */
	const char *gpu_mode;     /* --gpu: NANPROF_GPU_MODE for run's CMD, or sent to
				   * each attached agent; NULL = the process's own */
	int gpu_defer;            /* --gpu-defer N: NANPROF_GPU_DEFER for run's CMD, or sent
				   * to each attached agent; -1 = the process's own */
	int on_nan_signal;        /* --on-nan signal:NAME; 0: report only (on_nan.h) */
	int verbose;              /* -v (repeatable) */
	bool quiet;               /* -q */
	pid_t pid;                /* attach: the first pid (pids[0]) */
	pid_t pids[NP_MAX_ATTACH];/* attach: every pid given */
	unsigned npids;
	pid_t children_of;        /* attach --children: a launcher's pid, 0 if none */
	char **cmd;               /* run: the command after -- */
};

/* Parses argv of one command (argv[0] is the command name).
 * 0 on success; 1 when help was printed (exit 0); -EINVAL after printing
 * a one-line error (exit 2). */
int np_parse_run(int argc, char **argv, struct np_opts *o);
int np_parse_attach(int argc, char **argv, struct np_opts *o);

void np_usage_main(void);

#endif
