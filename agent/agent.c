/* agent.c - libnanprof_agent.so: preloaded by `nanprof run`, injected
 * by `nanprof attach`.
 *
 * Preloaded, it first makes each process of the job wait (bounded) until
 * nanprof has attached its probes, before main(); its control thread
 * (control.c) tells nanprof when libtorch is mapped, holding the GIL so
 * that `import torch` waits for nanprof's autograd probes: no backward
 * pass or optimizer step is missed.  In both modes that thread puts the
 * finite checks (hooks.c) in place once torch is imported.  It links
 * nothing but libc, libdl and libpthread (CPython is found at run time),
 * wraps no libc function, never writes to stdout, and on any failure just
 * lets the process go on.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "agent_proto.h"
#include "control.h"
#include "report.h"

static int torch_reported;

static int wait_ms(void)
{
	const char *s = getenv(NP_AGENT_ENV_WAIT);
	int ms = s ? atoi(s) : NP_AGENT_DEFAULT_WAIT_MS;
	return ms > 0 ? ms : NP_AGENT_DEFAULT_WAIT_MS;
}

/* One request, one reply; errno is preserved for the caller's sake. */
static void handshake(enum np_agent_msg_kind kind)
{
	const char *path = getenv(NP_AGENT_ENV_SOCK);
	if (!path || !*path || strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return;
	int saved = errno;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto out;
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	strcpy(addr.sun_path, path);
	socklen_t alen = sizeof(addr);
	if (path[0] == '@') {   /* abstract namespace: nothing left on disk */
		addr.sun_path[0] = 0;
		alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	}
	if (connect(fd, (struct sockaddr *)&addr, alen) == 0) {
		struct np_agent_msg m = { .magic = NP_AGENT_MAGIC, .kind = kind, .pid = (uint32_t)getpid() };
		if (send(fd, &m, sizeof(m), MSG_NOSIGNAL) == sizeof(m)) {
			struct pollfd p = { .fd = fd, .events = POLLIN };
			char ack;
			if (poll(&p, 1, wait_ms()) == 1)
				(void)!recv(fd, &ack, 1, 0);
		}
	}
	close(fd);
out:
	errno = saved;
}

/* libtorch_python: torch's Python bindings, loaded with torch._C after
 * libtorch_cpu (its dependency), so both are mapped once it is. */
static int find_torch(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
	base = base ? base + 1 : info->dlpi_name;
	return base && strncmp(base, "libtorch_python.so", 18) == 0;
}

int np_agent_torch_mapped(void)
{
	return dl_iterate_phdr(find_torch, NULL);
}

/* Not by wrapping dlopen: glibc searches a library's DT_RUNPATH by the
 * caller of dlopen, and a wrapper made every dlopen("libfoo.so") look in
 * the agent's (none) instead: torch's lazy load of libnvrtc by name, a
 * library's own plugins, failed under nanprof. */
void np_agent_torch_loaded(void)
{
	if (getenv(NP_AGENT_ENV_SOCK) && !__atomic_exchange_n(&torch_reported, 1, __ATOMIC_ACQ_REL))
		handshake(NP_AGENT_LIBTORCH);
}

/* CUDA_INJECTION64_PATH (set by `nanprof run`): the driver dlopens the
 * agent at cuInit and calls this.  The agent is already loaded and its
 * control thread sees libcuda mapped; nothing to do, and nothing that may
 * call CUDA here.  1: loaded fine. */
__attribute__((visibility("default")))
int InitializeInjection(void)
{
	return 1;
}

__attribute__((constructor))
static void agent_init(void)
{
	if (!getenv(NP_AGENT_ENV_SOCK)) {
		/* preloaded alone, records to a file; or injected by attach */
		np_control_start(np_report_to_file());
		return;
	}
	/* A process that already has libtorch (a fork of a torch process
	 * that then exec'd one) reports it at once. */
	if (np_agent_torch_mapped())
		torch_reported = 1;
	handshake(NP_AGENT_HELLO);
	np_control_start(1);
}
