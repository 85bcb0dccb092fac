/* cmd_run.c - `nanprof run -- CMD`: start CMD with the agent preloaded;
 * each process it (and its children) starts checks in with nanprof before
 * main() and after loading libtorch, so the probes are in place before
 * the first Python line and the first autograd call. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../agent/agent_proto.h"
#include "agentlink.h"
#include "commands.h"
#include "log.h"
#include "session.h"

static int listen_socket(char *name, size_t len)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	snprintf(name, len, "@nanprof-%d-%lx", getpid(), (unsigned long)np_now_ns());
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", name);
	addr.sun_path[0] = 0;
	socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(name));
	if (bind(fd, (struct sockaddr *)&addr, alen) || listen(fd, 64)) {
		int err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* One agent message: attach what it asks for, then let it go on. */
static void serve_agent(struct np_session *s, int lfd)
{
	for (;;) {
		int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			return;
		struct np_agent_msg m;
		struct pollfd p = { .fd = c, .events = POLLIN };
		bool keep = false;
		if (poll(&p, 1, 1000) == 1 && recv(c, &m, sizeof(m), 0) == sizeof(m) &&
		    m.magic == NP_AGENT_MAGIC) {
			pid_t pid = (pid_t)m.pid;
			if (m.kind == NP_AGENT_CHECKS) {
				/* the probe on its reports goes on before the ack */
				keep = np_agent_accept(s, pid, c) == 0;
			} else if (m.kind == NP_AGENT_HELLO) {
				struct np_proc_state *ps = np_collector_proc(&s->col, pid);
				if (!ps && np_session_add(s, pid, true) == 0)
					ps = np_collector_proc(&s->col, pid);
				if (ps)
					ps->agent = true;
			} else if (m.kind == NP_AGENT_LIBTORCH) {
				np_session_check_torch(s, pid);
			}
		}
		char ack = 1;
		if (keep) {
			(void)!send(c, &ack, 1, MSG_NOSIGNAL);
			continue;   /* open while the checks are wanted */
		}
		(void)!send(c, &ack, 1, MSG_NOSIGNAL);
		close(c);
	}
}

static void child_exec(struct np_opts *o, int go_fd, const char *agent, const char *sock,
		       const sigset_t *mask)
{
	sigprocmask(SIG_UNBLOCK, mask, NULL);
	char go;
	if (read(go_fd, &go, 1) != 1)
		_exit(127);   /* nanprof gave up before starting us */
	const char *pre = getenv("LD_PRELOAD");
	char preload[PATH_MAX * 2];
	snprintf(preload, sizeof(preload), "%s%s%s", agent, pre && *pre ? ":" : "",
		 pre ? pre : "");
	setenv("LD_PRELOAD", preload, 1);
	setenv(NP_AGENT_ENV_SOCK, sock, 1);
	if (o->gpu_mode)
		setenv("NANPROF_GPU_MODE", o->gpu_mode, 1);
	if (o->gpu_defer >= 0) {
		char n[16];
		snprintf(n, sizeof(n), "%d", o->gpu_defer);
		setenv("NANPROF_GPU_DEFER", n, 1);
	}
	if (o->no_checks)
		setenv(NP_AGENT_ENV_CHECKS, "0", 1);
	else   /* the driver loads the agent at cuInit too; a user's own stays */
		setenv("CUDA_INJECTION64_PATH", agent, 0);
	execvp(o->cmd[0], o->cmd);
	fprintf(stderr, "nanprof: cannot run %s: %s\n", o->cmd[0], strerror(errno));
	_exit(127);
}

int np_cmd_run(int argc, char **argv)
{
	struct np_opts o;
	int err = np_parse_run(argc, argv, &o);
	if (err)
		return err > 0 ? 0 : 2;
	np_log_level = o.verbose ? NP_LOG_DEBUG : NP_LOG_INFO;
	char agent[PATH_MAX], sock[108];
	if ((err = np_agent_path(agent, sizeof(agent)))) {
		np_err("cannot find libnanprof_agent.so next to nanprof (%s); set NANPROF_AGENT",
		       strerror(-err));
		return 1;
	}
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

	struct np_session s;
	if (np_session_open(&s, &o, "run")) {
		np_session_abort(&s);
		return 1;
	}
	size_t used = 0;
	for (char **a = o.cmd; *a && used < sizeof(s.command) - 1; a++)
		used += snprintf(s.command + used, sizeof(s.command) - used, "%s%s",
				 a == o.cmd ? "" : " ", *a);
	int lfd = listen_socket(sock, sizeof(sock));
	int go[2];
	if (lfd < 0 || pipe2(go, O_CLOEXEC)) {
		np_err("cannot create the agent socket: %s", strerror(lfd < 0 ? -lfd : errno));
		np_session_abort(&s);
		return 1;
	}
	pid_t child = fork();
	if (child < 0) {
		np_err("cannot fork: %s", strerror(errno));
		np_session_abort(&s);
		return 1;
	}
	if (child == 0) {
		close(go[1]);
		child_exec(&o, go[0], agent, sock, &mask);
	}
	close(go[0]);
	if (np_session_output_dir(&s, child)) {
		close(go[1]);   /* the child exits without running CMD */
		waitpid(child, NULL, 0);
		np_session_abort(&s);
		return 1;
	}
	(void)!write(go[1], "g", 1);
	close(go[1]);

	int status = -1;
	bool stop = false;
	while (!stop) {
		struct pollfd p[3] = { { .fd = sfd, .events = POLLIN }, { .fd = lfd, .events = POLLIN },
				       { .fd = np_probes_wakeup_fd(s.probes), .events = POLLIN } };
		poll(p, 3, 20);
		if (p[1].revents & POLLIN)
			serve_agent(&s, lfd);
		struct signalfd_siginfo si;
		while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGHUP)
				kill(child, (int)si.ssi_signo);   /* like any launcher */
			else if (si.ssi_signo == SIGINT)
				np_info("interrupted: waiting for the command to exit");
		}
		int ws;
		if (waitpid(child, &ws, WNOHANG) == child) {
			status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
			stop = true;
		}
		np_session_tick(&s);
	}
	close(lfd);
	err = np_session_close(&s, status);
	close(sfd);
	if (err)
		np_warn("outputs incomplete");
	return status;
}
