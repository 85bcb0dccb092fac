/* session.h - one tracing session: probes + collector + output files,
 * shared by `run` and `attach`. */
#ifndef NP_SESSION_H
#define NP_SESSION_H

#include <limits.h>
#include "cli.h"
#include "collector.h"
#include "on_nan.h"
#include "output.h"
#include "probes.h"

struct np_session {
	const struct np_opts *o;
	struct np_probes *probes;
	struct np_collector col;
	struct np_session_info info;
	struct np_on_nan on_nan;
	char out_dir[PATH_MAX];
	char command[1024];
	uint64_t last_torch_check_ns;
};

/* Loads the probes.  0 or -errno (message logged). */
int np_session_open(struct np_session *s, const struct np_opts *o, const char *mode);

/* Chooses (-o or ./nanprof-<pid>), creates and checks the output directory
 * before anything is traced.  0 or -errno (message logged). */
int np_session_output_dir(struct np_session *s, pid_t pid);

/* Traces a process; rank from its RANK variable.  -ENOEXEC when it runs no
 * Python.  For a process found by following a job (`run`, `attach
 * --children`: followed), which may be any program, that is silent and
 * each traced process is announced; for a pid the user named it is an
 * error, and nothing else is printed. */
int np_session_add(struct np_session *s, pid_t pid, bool followed);

/* Attaches libtorch probes to processes that have loaded it since. */
void np_session_check_torch(struct np_session *s, pid_t pid);

/* Drains the ring buffer and polls for late libtorch loads. */
void np_session_tick(struct np_session *s);

/* Detaches and frees without writing anything (setup failed). */
void np_session_abort(struct np_session *s);

/* Detaches, drains, writes the outputs and the summary.  0 or -errno. */
int np_session_close(struct np_session *s, int exit_status);

uint64_t np_now_ns(void);

#endif
