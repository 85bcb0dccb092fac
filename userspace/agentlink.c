#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "../agent/agent_proto.h"
#include "agentlink.h"
#include "inject.h"
#include "log.h"
#include "proc.h"
#include "session.h"

#define INJECT_TIMEOUT_MS 5000
#define CONNECT_TRIES 100      /* x 20 ms: the agent's thread starts listening */
#define DETACH_WAIT_MS 1000

int np_agent_path(char *buf, size_t len)
{
	const char *env = getenv("NANPROF_AGENT");
	if (env) {
		snprintf(buf, len, "%s", env);
		return access(buf, R_OK) ? -errno : 0;
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return -errno;
	self[n] = 0;
	snprintf(buf, len, "%s/libnanprof_agent.so", dirname(self));
	return access(buf, R_OK) ? -errno : 0;
}

static int probe_agent(struct np_session *s, struct np_proc_state *p)
{
	int err = np_probes_add_agent(s->probes, p->pid, &p->info);
	if (err)
		np_warn("pid %d: cannot probe the agent's reports (%s): no checks there",
			p->pid, strerror(-err));
	return err;
}

int np_agent_accept(struct np_session *s, pid_t pid, int fd)
{
	struct np_proc_state *p = np_collector_proc(&s->col, pid);
	if (!p || p->agent_fd > 0 || probe_agent(s, p))
		return -1;
	p->agent_fd = fd;
	p->checks = NP_CHECKS_WAITING;
	return 0;
}

/* gpu_mode: attach --gpu MODE, NULL: the process's own; gpu_defer:
 * --gpu-defer N, -1: the process's own */
static int connect_agent(pid_t pid, const char *gpu_mode, int gpu_defer)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int n = snprintf(addr.sun_path, sizeof(addr.sun_path), "%c" NP_AGENT_ATTACH_FMT, 0,
			 (int)pid);
	socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	for (int i = 0; i < CONNECT_TRIES; i++) {
		int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		if (connect(fd, (struct sockaddr *)&addr, alen) == 0) {
			struct np_agent_msg m = { .magic = NP_AGENT_MAGIC, .kind = NP_AGENT_CHECKS,
						  .pid = (uint32_t)pid,
						  .gpu_defer = gpu_defer >= 0
							  ? (uint32_t)gpu_defer + 1 : 0 };
			if (gpu_mode)
				snprintf(m.gpu_mode, sizeof(m.gpu_mode), "%s", gpu_mode);
			struct pollfd pf = { .fd = fd, .events = POLLIN };
			char ack;
			if (send(fd, &m, sizeof(m), MSG_NOSIGNAL) == sizeof(m) &&
			    poll(&pf, 1, 2000) == 1 && recv(fd, &ack, 1, 0) == 1)
				return fd;
			close(fd);
			return -EPROTO;
		}
		close(fd);
		struct timespec ts = { 0, 20 * 1000000L };
		nanosleep(&ts, NULL);
	}
	return -ETIMEDOUT;
}

int np_agent_attach(struct np_session *s, pid_t pid)
{
	struct np_proc_state *p = np_collector_proc(&s->col, pid);
	if (!p)
		return -ESRCH;
	struct np_mapping m;
	if (np_proc_find_mapping(pid, "libnanprof_agent.so", &m)) {
		char path[PATH_MAX];
		int err = np_agent_path(path, sizeof(path));
		if (err) {
			np_warn("cannot find libnanprof_agent.so next to nanprof (%s): tracing "
				"without checks", strerror(-err));
			return err;
		}
		uint64_t handle;
		pid_t tid = np_inject_pick_thread(pid);
		err = np_inject_dlopen(pid, tid, path, INJECT_TIMEOUT_MS, &handle);
		if (err) {
			np_warn("pid %d: cannot load the agent (%s): tracing without checks", pid,
				err == -ETIMEDOUT ? "no safe point to stop the process at"
						  : strerror(-err));
			return err;
		}
		np_debug("pid %d: agent loaded on thread %d", pid, tid);
	}
	int err = probe_agent(s, p);
	if (err)
		return err;
	int fd = connect_agent(pid, s->o->gpu_mode, s->o->gpu_defer);
	if (fd < 0) {
		np_warn("pid %d: the agent does not answer (%s): tracing without checks", pid,
			strerror(-fd));
		return fd;
	}
	p->agent_fd = fd;
	p->checks = NP_CHECKS_WAITING;
	return 0;
}

void np_agent_detach_all(struct np_session *s)
{
	int open = 0;
	for (uint32_t i = 0; i < s->col.nprocs; i++) {
		struct np_proc_state *p = &s->col.procs[i];
		if (p->agent_fd > 0) {
			close(p->agent_fd);
			p->agent_fd = 0;
			if (p->checks == NP_CHECKS_ON && !p->exited && np_proc_alive(p->pid))
				open++;
		}
	}
	/* their DETACHED records carry the last counters */
	uint64_t until = np_now_ns() + DETACH_WAIT_MS * 1000000ULL;
	while (open && np_now_ns() < until) {
		struct pollfd pf = { .fd = np_probes_wakeup_fd(s->probes), .events = POLLIN };
		poll(&pf, 1, 20);
		np_probes_poll(s->probes);
		open = 0;
		for (uint32_t i = 0; i < s->col.nprocs; i++) {
			const struct np_proc_state *p = &s->col.procs[i];
			open += p->checks == NP_CHECKS_ON && !p->exited && np_proc_alive(p->pid);
		}
	}
}
