/* cmd_attach.c - `nanprof attach PID... | --children PID`: trace live
 * processes until Ctrl-C, SIGTERM, --duration or their exit, then leave
 * them exactly as they were. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>
#include "agentlink.h"
#include "commands.h"
#include "log.h"
#include "proc.h"
#include "session.h"

/* The checks that give a clear message before any probe is loaded. */
static int check_target(pid_t pid)
{
	if (pid == getpid()) {
		np_err("cannot attach to nanprof itself");
		return -EINVAL;
	}
	if (kill(pid, 0) && errno == ESRCH) {
		np_err("no such process: %d", pid);
		return -ESRCH;
	}
	if (!np_proc_alive(pid)) {
		np_err("process %d has exited", pid);
		return -ESRCH;
	}
	int64_t uid = np_proc_uid(pid);
	if (geteuid() != 0) {
		if (uid >= 0 && uid != (int64_t)getuid())
			np_err("cannot attach to pid %d: it belongs to uid %lld (run as root)", pid,
			       (long long)uid);
		else
			np_err("cannot attach to pid %d: nanprof needs root for bpf", pid);
		return -EPERM;
	}
	return 0;
}

/* Checks on in a traced process, unless --no-checks.  A process that
 * has not imported torch gets the agent all the same: it installs its
 * hooks once torch is there. */
static void start_checks(struct np_session *s, pid_t pid)
{
	if (!s->o->no_checks)
		np_agent_attach(s, pid);
}

/* Adds the launcher's Python descendants not traced yet; how many. */
static int follow_children(struct np_session *s, pid_t launcher)
{
	pid_t kids[NP_MAX_ATTACH];
	int n = np_proc_descendants(launcher, kids, NP_MAX_ATTACH), added = 0;
	for (int i = 0; i < n; i++)
		if (!np_collector_proc(&s->col, kids[i]) && np_session_add(s, kids[i], true) == 0) {
			start_checks(s, kids[i]);
			added++;
		}
	return added;
}

static bool any_alive(struct np_session *s, pid_t launcher)
{
	if (launcher && np_proc_alive(launcher))
		return true;
	for (uint32_t i = 0; i < s->col.nprocs; i++)
		if (!s->col.procs[i].exited && np_proc_alive(s->col.procs[i].pid))
			return true;
	return false;
}

int np_cmd_attach(int argc, char **argv)
{
	struct np_opts o;
	int err = np_parse_attach(argc, argv, &o);
	if (err)
		return err > 0 ? 0 : 2;
	np_log_level = o.verbose ? NP_LOG_DEBUG : NP_LOG_INFO;
	for (unsigned i = 0; i < o.npids; i++)
		if (check_target(o.pids[i]))
			return 1;
	if (o.children_of && check_target(o.children_of))
		return 1;

	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC);

	struct np_session s;
	if (np_session_open(&s, &o, "attach")) {
		np_session_abort(&s);
		return 1;
	}
	size_t used = snprintf(s.command, sizeof(s.command), "attach");
	if (o.children_of)
		used += snprintf(s.command + used, sizeof(s.command) - used, " --children %d",
				 o.children_of);
	for (unsigned i = 0; i < o.npids && used < sizeof(s.command); i++)
		used += snprintf(s.command + used, sizeof(s.command) - used, " %d", o.pids[i]);
	for (unsigned i = 0; i < o.npids; i++)
		if (np_session_add(&s, o.pids[i], false)) {
			np_session_abort(&s);
			return 1;
		}
	if (np_session_output_dir(&s, o.pid)) {
		np_session_abort(&s);
		return 1;
	}
	for (unsigned i = 0; i < o.npids; i++)
		start_checks(&s, o.pids[i]);
	if (o.children_of && follow_children(&s, o.children_of) == 0)
		np_info("no python process under pid %d yet: waiting for its ranks", o.children_of);
	if (o.npids == 1 && !o.children_of) {
		const struct np_proc_state *ps0 = np_collector_proc(&s.col, o.pid);
		np_info("attached to pid %d (python %d.%d, torch %s); Ctrl-C to stop%s", o.pid,
			ps0->info.py_major, ps0->info.py_minor,
			ps0->info.torch_attached ? ps0->info.torch_version : "not loaded yet",
			o.duration > 0 ? " (or wait for --duration)" : "");
	} else {
		np_info("attached to %u processes; Ctrl-C to stop%s", s.col.nprocs,
			o.duration > 0 ? " (or wait for --duration)" : "");
	}

	uint64_t deadline = o.duration > 0 ? np_now_ns() + (uint64_t)(o.duration * 1e9) : 0;
	uint64_t next_scan = np_now_ns() + 1000000000ULL;
	const char *why = "stopped";
	for (;;) {
		struct pollfd p[2] = { { .fd = sfd, .events = POLLIN },
				       { .fd = np_probes_wakeup_fd(s.probes), .events = POLLIN } };
		if (poll(p, 2, 20) > 0 && (p[0].revents & POLLIN)) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				why = si.ssi_signo == SIGINT ? "interrupted" : "terminated";
				break;
			}
		}
		np_session_tick(&s);
		uint64_t now = np_now_ns();
		if (o.children_of && now >= next_scan) {   /* ranks started since */
			follow_children(&s, o.children_of);
			next_scan = now + 1000000000ULL;
		}
		if (!any_alive(&s, o.children_of)) {
			why = o.npids + (o.children_of ? 1 : 0) > 1 || o.children_of
				? "targets exited" : "target exited";
			break;
		}
		if (deadline && now >= deadline) {
			why = "duration reached";
			break;
		}
	}
	np_info("%s: detaching", why);
	err = np_session_close(&s, -1);
	close(sfd);
	return err ? 1 : 0;
}
