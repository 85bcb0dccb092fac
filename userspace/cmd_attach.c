/* cmd_attach.c - `nanprof attach PID`: trace a live process until Ctrl-C,
 * SIGTERM, --duration or its exit, then leave it exactly as it was. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>
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

int np_cmd_attach(int argc, char **argv)
{
	struct np_opts o;
	int err = np_parse_attach(argc, argv, &o);
	if (err)
		return err > 0 ? 0 : 2;
	np_log_level = o.verbose ? NP_LOG_DEBUG : NP_LOG_INFO;
	if (check_target(o.pid))
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
	snprintf(s.command, sizeof(s.command), "attach %d", o.pid);
	if (np_session_add(&s, o.pid, false) || np_session_output_dir(&s, o.pid)) {
		np_session_abort(&s);
		return 1;
	}
	const struct np_proc_state *ps0 = np_collector_proc(&s.col, o.pid);
	np_info("attached to pid %d (python %d.%d, torch %s); Ctrl-C to stop%s", o.pid,
		ps0->info.py_major, ps0->info.py_minor,
		ps0->info.torch_attached ? ps0->info.torch_version : "not loaded yet",
		o.duration > 0 ? " (or wait for --duration)" : "");

	uint64_t deadline = o.duration > 0 ? np_now_ns() + (uint64_t)(o.duration * 1e9) : 0;
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
		struct np_proc_state *ps = np_collector_proc(&s.col, o.pid);
		if ((ps && ps->exited) || !np_proc_alive(o.pid)) {
			why = "target exited";
			break;
		}
		if (deadline && np_now_ns() >= deadline) {
			why = "duration reached";
			break;
		}
	}
	np_info("%s: detaching from pid %d", why, o.pid);
	err = np_session_close(&s, -1);
	close(sfd);
	return err ? 1 : 0;
}
