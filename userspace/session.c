#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "agentlink.h"
#include "findings_out.h"
#include "log.h"
#include "report_html.h"
#include "proc.h"
#include "session.h"

uint64_t np_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void on_event(const struct np_event *e, void *ctx)
{
	np_collector_event(ctx, e);
}

/* --on-nan signal:NAME: to every traced process still running, once */
static void act_on_nan(struct np_collector *c, struct np_session *s)
{
	if (!s || !s->on_nan.signo || s->on_nan.fired)
		return;
	pid_t pids[256];
	unsigned n = 0;
	for (uint32_t i = 0; i < c->nprocs && n < sizeof(pids) / sizeof(pids[0]); i++)
		if (!c->procs[i].exited)
			pids[n++] = c->procs[i].pid;
	unsigned sent = np_on_nan_fire(&s->on_nan, pids, n, np_now_ns());
	fprintf(stderr, "nanprof: --on-nan: sent %s to %u process%s", np_signal_name(s->on_nan.signo),
		sent, sent == 1 ? "" : "es");
	for (unsigned i = 0; i < sent && i < NP_ON_NAN_PIDS; i++)
		fprintf(stderr, "%s%d", i ? ", " : " (pid ", s->on_nan.pids[i]);
	fprintf(stderr, "%s%s\n", sent ? (sent > NP_ON_NAN_PIDS ? ", ...)" : ")") : "",
		s->on_nan.nfailed ? "; some refused it (gone already?)" : "");
	if (s->on_nan.nignoring)
		np_warn("%u process%s ignore%s %s, so it does nothing there (a job a shell "
			"script started with '&' ignores SIGINT): --on-nan signal:TERM ends it",
			s->on_nan.nignoring, s->on_nan.nignoring == 1 ? "" : "es",
			s->on_nan.nignoring == 1 ? "s" : "", np_signal_name(s->on_nan.signo));
}

/* Findings go to stderr the moment they are known: the job may run
 * (or hang) for hours after its first NaN. */
static void on_finding(struct np_collector *c, struct np_proc_state *p, int kind)
{
	if (kind == NP_FIND_ORIGIN) {
		np_print_origin(stderr, c, p);
		act_on_nan(c, c->finding_ctx);
	} else if (kind == NP_FIND_WARNING) {
		/* stderr gets the whole model's gradient norm and the first
		 * module that warned; events.jsonl has every warning */
		const struct np_explosion_warning *w = &p->ag.warnings[p->ag.nwarnings - 1];
		bool whole = w->module == 0 && w->metric == NP_METRIC_GRAD_NORM;
		if (whole || !p->ag.module_warning_printed) {
			np_print_warning(stderr, c, p, w);
			if (!whole) {
				p->ag.module_warning_printed = true;
				fprintf(stderr, "  (further warnings for single modules: see "
					"events.jsonl)\n");
			}
		}
	} else if (kind == NP_FIND_RECEIVED) {
		np_print_received(stderr, c, p);
		act_on_nan(c, c->finding_ctx);   /* born on a rank not traced */
	} else if (kind == NP_FIND_CHECKS) {
		if (p->checks == NP_CHECKS_ON)
			np_debug("pid %d: checks on (torch %s)", p->pid, p->ag.torch);
		else
			np_warn("pid %d: no checks in this process: %s", p->pid,
				p->ag.torch);
	}
	fflush(stderr);
}

int np_session_open(struct np_session *s, const struct np_opts *o, const char *mode)
{
	memset(s, 0, sizeof(*s));
	s->o = o;
	struct np_collector_opts co = { .window = o->window, .max_records = o->max_records,
					.max_steps = 10000000, .max_procs = 256,
					.max_threads = 1024 };
	if (np_collector_init(&s->col, &co)) {
		np_err("out of memory");
		return -ENOMEM;
	}
	s->col.attach_mode = strcmp(mode, "attach") == 0;
	s->col.on_finding = on_finding;
	s->col.finding_ctx = s;
	s->on_nan.signo = o->on_nan_signal;
	struct np_probes_opts po = { .py_probe = (enum np_py_probe)o->python_probe,
				     .ring_mb = o->ring_mb, .no_session = o->no_session,
				     .on_event = on_event, .ctx = &s->col };
	int err = np_probes_open(&s->probes, &po);
	if (err)
		return err;
	struct timespec wall;
	clock_gettime(CLOCK_REALTIME, &wall);
	s->info.mode = mode;
	s->info.command = s->command;
	s->info.probe_mode = np_probes_mode(s->probes);
	s->info.start_ns = np_now_ns();
	s->info.start_unix_ns = (uint64_t)wall.tv_sec * 1000000000ULL + (uint64_t)wall.tv_nsec;
	s->info.window = o->window;
	s->info.exit_status = -1;
	s->info.on_nan = &s->on_nan;
	return 0;
}

static int mkdir_p(const char *dir)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s", dir);
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(path, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

int np_session_output_dir(struct np_session *s, pid_t pid)
{
	if (s->o->out_dir)
		snprintf(s->out_dir, sizeof(s->out_dir), "%s", s->o->out_dir);
	else
		snprintf(s->out_dir, sizeof(s->out_dir), "nanprof-%d", pid);
	int err = mkdir_p(s->out_dir);
	/* root passes access() checks: create a file to be sure */
	char probe[PATH_MAX + 32];
	snprintf(probe, sizeof(probe), "%s/.nanprof-write-test", s->out_dir);
	if (!err) {
		int fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			err = -errno;
		else {
			close(fd);
			unlink(probe);
		}
	}
	if (err)
		np_err("cannot write to output directory %s: %s", s->out_dir, strerror(-err));
	return err;
}

int np_session_add(struct np_session *s, pid_t pid, bool followed)
{
	struct np_proc_info info;
	int err = np_probes_add(s->probes, pid, &info);
	if (err == -ENOEXEC) {
		if (!followed)
			np_err("pid %d is not a python process (no _PyEval_EvalFrameDefault in "
			       "its executable or a libpython)", pid);
		return err;
	}
	if (err && !info.py_attached)
		return err;
	char rank_s[32];
	int rank = -1;
	if (np_proc_getenv(pid, "RANK", rank_s, sizeof(rank_s)) == 0)
		rank = atoi(rank_s);
	struct np_proc_state *p = np_collector_add_proc(&s->col, &info, rank);
	if (!p) {
		np_probes_remove(s->probes, pid);
		np_warn("not tracing pid %d: too many processes", pid);
		return -ENOSPC;
	}
	p->probes_ready_ns = np_now_ns();
	if (followed)
		np_info("tracing pid %d%s%s: python %d.%d, torch %s", pid,
			rank >= 0 ? " rank " : "", rank >= 0 ? rank_s : "", info.py_major,
			info.py_minor, info.torch_attached ? info.torch_version : "not loaded yet");
	return 0;
}

void np_session_check_torch(struct np_session *s, pid_t pid)
{
	struct np_proc_state *p = np_collector_proc(&s->col, pid);
	if (!p || p->exited || (p->info.torch_attached && !p->info.torch_seq_pending &&
				!p->info.torch_bwd_pending))
		return;
	if (np_probes_add_torch(s->probes, pid, &p->info) != 1)
		return;
	p->probes_ready_ns = np_now_ns();
	np_debug("pid %d loaded torch %s: autograd probes attached", pid, p->info.torch_version);
}

void np_session_tick(struct np_session *s)
{
	np_probes_poll(s->probes);
	/* where a Python Function's node keeps its object: found by the
	 * collector, read by BPF from then on */
	for (uint32_t i = 0; i < s->col.nprocs; i++) {
		struct np_proc_state *p = &s->col.procs[i];
		if (p->info.pynode_obj && !p->info.pynode_obj_sent && !p->exited) {
			p->info.pynode_obj_sent = true;
			int err = np_probes_set_pynode_obj(s->probes, p->pid, &p->info);
			if (err)
				np_debug("pid %d: PyNode's object offset not handed to BPF: %s",
					 p->pid, strerror(-err));
			else
				np_debug("pid %d: a Python Function node's object at +%u", p->pid,
					 p->info.pynode_obj);
		}
	}
	/* torch imported after we attached: look twice a second */
	uint64_t now = np_now_ns();
	if (now - s->last_torch_check_ns < 500000000ULL)
		return;
	s->last_torch_check_ns = now;
	for (uint32_t i = 0; i < s->col.nprocs; i++) {
		const struct np_proc_state *p = &s->col.procs[i];
		/* a process with the agent says when torch is loaded; a look
		 * during its dlopen would find libtorch half relocated */
		if (p->agent && !p->info.torch_attached)
			continue;
		np_session_check_torch(s, p->pid);
	}
}

void np_session_abort(struct np_session *s)
{
	np_probes_close(s->probes);
	s->probes = NULL;
	np_collector_free(&s->col);
}

static int write_file(const char *dir, const char *name, char *path, size_t len)
{
	return snprintf(path, len, "%s/%s", dir, name) >= (int)len ? -ENAMETOOLONG : 0;
}

int np_session_close(struct np_session *s, int exit_status)
{
	if (!s->probes)
		return 0;
	np_agent_detach_all(s);
	for (uint32_t i = 0; i < s->col.nprocs; i++)
		np_probes_remove(s->probes, s->col.procs[i].pid);
	np_probes_poll(s->probes);
	np_probes_counters(s->probes, s->info.counters);
	s->info.end_ns = np_now_ns();
	s->info.exit_status = exit_status;
	/* detached above; the probes object still holds libtorch's symbols,
	 * which name the nodes closed here */
	np_collector_finish(&s->col);

	char path[PATH_MAX + 32];
	int err = 0, e;
	write_file(s->out_dir, "events.jsonl", path, sizeof(path));
	if ((e = np_write_events(&s->col, &s->info, path))) {
		np_err("cannot write %s: %s", path, strerror(-e));
		err = e;
	}
	write_file(s->out_dir, "trace.json", path, sizeof(path));
	if ((e = np_write_trace(&s->col, &s->info, path))) {
		np_err("cannot write %s: %s", path, strerror(-e));
		err = e;
	}
	write_file(s->out_dir, "report.html", path, sizeof(path));
	char cmp[PATH_MAX + 32];
	snprintf(cmp, sizeof(cmp), "%s/compare.json", s->out_dir);
	if ((e = np_write_report(&s->col, &s->info, path, access(cmp, R_OK) ? NULL : cmp))) {
		np_err("cannot write %s: %s", path, strerror(-e));
		err = e;
	}
	write_file(s->out_dir, "summary.txt", path, sizeof(path));
	FILE *f = fopen(path, "w");
	if (f) {
		np_write_summary(&s->col, &s->info, f);
		fprintf(f, "  outputs: %s/{events.jsonl,trace.json,report.html,summary.txt}\n", s->out_dir);
		if (fclose(f))
			err = -errno;
	} else {
		err = -errno;
		np_err("cannot write %s: %s", path, strerror(errno));
	}
	if (!s->o->quiet) {
		np_write_summary(&s->col, &s->info, stderr);
		fprintf(stderr, "  outputs: %s/{events.jsonl,trace.json,report.html,summary.txt}\n", s->out_dir);
	}
	np_collector_free(&s->col);
	np_probes_close(s->probes);
	s->probes = NULL;
	return err;
}
