/* control.c - the agent's control thread (see control.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "agent_proto.h"
#include "alog.h"
#include "bootstrap.h"
#include "../cupti/gpu.h"
#include "control.h"
#include "hooks.h"
#include "pyapi.h"
#include "report.h"
#include "triton_plan.h"
#include "triton_jit_py.h"   /* generated from agent/triton_jit.py (Makefile) */

enum state { IDLE, WANT_ON, ON, WANT_OFF };
#define WATCH_ONLY 2   /* control_main's mode besides run (1) and attach (0):
			* --no-checks, libtorch watched for nanprof */

static volatile int state = IDLE;
static PyObject *ns;                  /* the bootstrap's namespace */
static PyObject *uninstall_fn;
static int started;
static int attached;   /* injected by `nanprof attach`: installs come mid-job */
/* attach --gpu MODE: how this attach wants CUDA work checked; "": as the
 * process's NANPROF_GPU_MODE says */
static char attach_gpu_mode[NP_AGENT_GPU_MODE_LEN];
static uint32_t attach_gpu_defer;   /* --gpu-defer N: N + 1; 0: the process's own */

/* ---- under the GIL ---- */

static PyObject *ns_call(const char *fn, PyObject *a, PyObject *b, PyObject *c, PyObject *d,
			 PyObject *e, PyObject *g, PyObject *h, PyObject *i)
{
	PyObject *f = np_py.Dict_GetItemString(ns, fn);
	if (!f)
		return NULL;
	return np_py.Object_CallFunctionObjArgs(f, a, b, c, d, e, g, h, i, NULL);
}

static int load_bootstrap(void)
{
	if (ns)
		return 0;
	PyObject *g = np_py.Dict_New();
	if (!g)
		return -1;
	np_py.Dict_SetItemString(g, "__builtins__", np_py.Eval_GetBuiltins());
	PyObject *r = np_py_run(np_bootstrap_py, g);
	if (!r) {
		np_py.DecRef(g);
		return -1;
	}
	np_py.DecRef(r);
	/* a user's @triton.jit kernels, into the same namespace: without it
	 * the rest is whole, and their launches stay with the generic tier */
	r = np_py_run(np_triton_jit_py, g);
	if (!r) {
		np_py_err_clear();
		np_alog("cannot load the @triton.jit wrapper: user Triton kernels left to the generic tier");
	}
	np_py_xdecref(r);
	ns = g;
	return 0;
}

static void install(void)
{
	PyObject *ready = ns_call("_nanprof_ready", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	int ok = ready == np_py.True;
	np_py_xdecref(ready);
	if (!ok) {
		if (np_py.Err_Occurred())
			np_py_err_clear();
		return;
	}   /* torch is not (fully) imported yet: asked again later */
	np_alog("installing");
	if (np_hooks_init()) {
		np_report_status(NP_AST_FAILED, "cannot find torch.Tensor");
		state = IDLE;
		return;
	}
	PyObject *fn[8] = { np_hooks_callable("fwd"), np_hooks_callable("walk"),
			    np_hooks_callable("opt_pre"), np_hooks_callable("opt_post"),
			    np_hooks_callable("opt_post_wrapped"), np_hooks_callable("counters"),
			    np_hooks_callable("collective"), np_hooks_callable("scaler") };
	PyObject *res = NULL;
	/* torch.compile's Triton launches (triton_plan.h): handed over first,
	 * wrapped by the install once Inductor is loaded */
	PyObject *tp = np_triton_callable("plan"), *td = np_triton_callable("done");
	PyObject *set = tp && td ? ns_call("_nanprof_set_triton", tp, td, NULL, NULL, NULL, NULL,
					   NULL, NULL) : NULL;
	if (!set && np_py.Err_Occurred())
		np_py_err_clear();   /* the rest of the checks go on without it */
	np_py_xdecref(set);
	np_py_xdecref(tp);
	np_py_xdecref(td);
	if (fn[0] && fn[1] && fn[2] && fn[3] && fn[4] && fn[5] && fn[6] && fn[7])
		res = ns_call("_nanprof_install", fn[0], fn[1], fn[2], fn[3], fn[4], fn[5], fn[6],
			      fn[7]);
	for (int i = 0; i < 8; i++)
		np_py_xdecref(fn[i]);
	PyObject *undo = res && np_py.Tuple_Size(res) == 2 ? np_py.Tuple_GetItem(res, 0) : NULL;
	PyObject *msg = res && np_py.Tuple_Size(res) == 2 ? np_py.Tuple_GetItem(res, 1) : NULL;
	const char *text = msg ? np_py.Unicode_AsUTF8(msg) : NULL;
	if (undo && undo != np_py.None) {
		np_py.IncRef(undo);
		uninstall_fn = undo;
		np_hooks_enable(1);
		if (attached)
			np_hooks_mid_step();
		state = ON;
		np_report_status(NP_AST_INSTALLED, text);
		np_alog("checks on (torch %s)", text ? text : "?");
	} else {
		state = IDLE;
		np_report_status(NP_AST_FAILED, text ? text : "bootstrap failed");
		np_alog("install failed: %s", text ? text : "bootstrap failed");
	}
	np_py_xdecref(res);
}

static void uninstall(void)
{
	np_hooks_enable(0);
	if (uninstall_fn) {
		PyObject *r = np_py.Object_CallObject(uninstall_fn, NULL);
		np_py_xdecref(r);
		np_py.DecRef(uninstall_fn);
		uninstall_fn = NULL;
	}
	np_hooks_send_counters();
	np_hooks_reset();
	np_report_status(NP_AST_DETACHED, NULL);
	np_alog("checks off");
	state = IDLE;
}

/* nanprof compare: this run's configuration, from the environment */
static struct {
	const char *mode;      /* "plain", "nanprof", "anomaly"; NULL: not comparing */
	long steps;
	const char *out;
	int done;
} cmp;

static void compare_install(void)
{
	PyObject *ready = ns_call("_nanprof_ready", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	int ok = ready == np_py.True;
	np_py_xdecref(ready);
	if (!ok)
		return;
	cmp.done = 1;
	PyObject *mode = np_py.Unicode_FromString(cmp.mode);
	PyObject *steps = np_py.Long_FromVoidPtr((void *)(intptr_t)cmp.steps);
	PyObject *out = np_py.Unicode_FromString(cmp.out);
	PyObject *wait = strcmp(cmp.mode, "nanprof") == 0 ? np_py.True : np_py.None;
	PyObject *r = mode && steps && out
		? ns_call("_nanprof_compare", mode, steps, out, wait, NULL, NULL, NULL, NULL) : NULL;
	np_alog("compare mode %s, %ld steps: %s", cmp.mode, cmp.steps, r ? "timing" : "failed");
	np_py_xdecref(r);
	np_py_xdecref(mode);
	np_py_xdecref(steps);
	np_py_xdecref(out);
}

static void step_state(void)
{
	if (cmp.mode && !cmp.done && (ns || !load_bootstrap()))
		compare_install();
	if (state == WANT_ON) {
		if (!ns && load_bootstrap()) {
			np_py_err_clear();
			np_alog("cannot load the bootstrap");
			state = IDLE;
		} else {
			install();
		}
	} else if (state == WANT_OFF) {
		uninstall();
	}
	if (np_py.Err_Occurred())
		np_py_err_clear();
}

/* ---- the control thread ---- */

/* Takes the GIL on this thread and moves the state on.  The job's threads
 * hand the GIL over between bytecodes or in a blocking call, so this runs
 * at a point where Python's state is consistent, as a pending call would;
 * Py_AddPendingCall from a thread that is not the main one is not enough
 * on 3.11: it does not wake the main thread's eval loop. */
static void with_gil(void)
{
	if (!np_py.IsInitialized() || (np_py.IsFinalizing && np_py.IsFinalizing()))
		return;
	int g = np_py.GILState_Ensure();
	step_state();
	np_py.GILState_Release(g);
}

static int find_libcuda(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
	return base && strncmp(base + 1, "libcuda.so", 10) == 0;
}

/* The CUDA side: once the job has loaded libcuda, check its kernels too
 * (cupti/gpu.h).  Told once, either way. */
static void gpu_poll(int *told)
{
	if (*told) {
		np_gpu_poll();
		return;
	}
	struct np_gpu_config cfg;
	const char *why = NULL;
	if (attach_gpu_mode[0])
		np_gpu_config_parse(attach_gpu_mode, &cfg);
	else
		np_gpu_config_from_env(&cfg);
	if (attach_gpu_defer)
		np_gpu_config_set_defer(&cfg, attach_gpu_defer - 1);
	/* cuDNN's descriptors, from cuDNN's load on: torch loads it at its
	 * import, libcuda only at its first CUDA call; and before the start
	 * below, whose CUPTI subscription a job may be waiting for */
	np_gpu_track(&cfg);
	if (!dl_iterate_phdr(find_libcuda, NULL))
		return;
	*told = 1;
	int rc = np_gpu_start(&cfg, &why);
	/* module-level checks defer nothing; nor can launch checks whose
	 * flush points cannot be subscribed */
	if (rc >= 0 && attach_gpu_defer && cfg.defer != attach_gpu_defer - 1)
		np_alog("--gpu-defer %u not taken: checks deferred in lists of %u (%s)",
			attach_gpu_defer - 1, cfg.defer,
			rc == 1 ? "module-level checks" : "its driver calls cannot be seen");
	if (rc == 0) {
		char how[48];
		/* launches, and the hooks' CUDA tensors (+modules); the
		 * benchmark's diagnosis; checks deferred into lists (gpu.h) */
		snprintf(how, sizeof(how), "%s%s", cfg.mode == NP_GPU_SAMPLE ? "sample" : "every",
			 cfg.with_modules ? "+modules" : cfg.empty_checks ? ", empty checks" : "");
		if (cfg.defer)
			snprintf(how + strlen(how), sizeof(how) - strlen(how), ", deferred %u",
				 cfg.defer);
		np_report_status_gpu(NP_AST_GPU_ON, how);
		np_alog("GPU checks on: %s", how);
		if (cfg.empty_checks)
			np_alog("NANPROF_GPU_DIAG=empty-checks: the check kernels are launched but "
				"read nothing, to measure their launches alone; nothing can be found");
	} else if (rc == 1) {
		/* "modules: <why>", why being CUPTI's holder or the user's choice */
		char how[32];
		snprintf(how, sizeof(how), "modules: %s",
			 why && strncmp(why, "cupti taken", 11) == 0 ? "cupti taken" : "asked for");
		np_report_status_gpu(NP_AST_GPU_ON, how);
		np_alog("GPU checks at module level: %s", why ? why : "?");
	} else {
		np_report_status_gpu(NP_AST_GPU_OFF, why);
		np_alog("GPU checks off: %s", why ? why : "?");
	}
}

/* How long to wait between looks for libtorch: often in the process's
 * first 30 s (Python's start and its imports, when torch is most likely
 * to come), then every 50 ms. */
static int torch_look_ms(void)
{
	static struct timespec start;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!start.tv_sec && !start.tv_nsec)
		start = now;
	return now.tv_sec - start.tv_sec < 30 ? 5 : 50;
}

/* Tells nanprof that libtorch is mapped, holding the GIL where Python
 * runs: the job's `import torch` pauses at its next bytecode until
 * nanprof's autograd probes are in (bounded by NANPROF_WAIT_MS, as the
 * start-up handshake), since a short job's first backward can follow the
 * import before a busy nanprof has read libtorch's symbols. */
static void report_torch(void)
{
	int py = np_pyapi_load() == 0 && np_py.IsInitialized() &&
		 !(np_py.IsFinalizing && np_py.IsFinalizing());
	int g = py ? np_py.GILState_Ensure() : 0;
	np_agent_torch_loaded();
	if (py)
		np_py.GILState_Release(g);
}

/* libtorch mapped now, and nanprof told (first time only) */
static int torch_now_mapped(int *mapped)
{
	if (!*mapped && (*mapped = np_agent_torch_mapped()))
		report_torch();
	return *mapped;
}

/* Checks on while fd is open: install once torch is there, take the
 * hooks out when nanprof hangs up.  fd -1: on until the process ends
 * (poll ignores a negative fd). */
static void serve(int fd)
{
	state = WANT_ON;
	int torch_mapped = 0, gpu_told = 0;
	while (state == WANT_ON || state == ON) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		/* from libtorch loaded to torch imported, look often: the job
		 * may start training a few milliseconds after its import */
		int n = poll(&p, 1, !torch_mapped ? torch_look_ms() : state == WANT_ON ? 2 : 50);
		if (n > 0) {
			char buf[64];
			if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) <= 0)
				break;   /* nanprof is gone */
		}
		if (torch_now_mapped(&torch_mapped) && state == WANT_ON && np_pyapi_load() == 0)
			with_gil();
		/* kernels are checked even before (or without) torch's hooks */
		gpu_poll(&gpu_told);
	}
	np_gpu_stop();
	if (state == ON) {
		/* the hooks do nothing from now on, even if the GIL is slow to
		 * come (a long C call of the job's); then they come out */
		np_hooks_enable(0);
		state = WANT_OFF;
		with_gil();
	}
	state = IDLE;
}

static int connect_cli(void)
{
	const char *path = getenv(NP_AGENT_ENV_SOCK);
	if (!path || !*path || strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return -1;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	strcpy(addr.sun_path, path);
	socklen_t alen = sizeof(addr);
	if (path[0] == '@') {
		addr.sun_path[0] = 0;
		alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	}
	struct np_agent_msg m = { .magic = NP_AGENT_MAGIC, .kind = NP_AGENT_CHECKS,
				  .pid = (uint32_t)getpid() };
	char ack;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	if (connect(fd, (struct sockaddr *)&addr, alen) ||
	    send(fd, &m, sizeof(m), MSG_NOSIGNAL) != sizeof(m) ||
	    poll(&p, 1, 10000) != 1 || recv(fd, &ack, 1, 0) != 1) {
		close(fd);
		return -1;
	}
	return fd;   /* nanprof keeps its end open while it wants checks */
}

static int listen_attach(void)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int n = snprintf(addr.sun_path, sizeof(addr.sun_path), "%c" NP_AGENT_ATTACH_FMT, 0,
			 (int)getpid());
	if (bind(fd, (struct sockaddr *)&addr, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)) ||
	    listen(fd, 4)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Only root or the job's own user may switch the checks on. */
static int trusted(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 &&
	       (cr.uid == 0 || cr.uid == getuid());
}

/* plain and anomaly runs of nanprof compare: time the steps, nothing else */
static void compare_only(void)
{
	int torch_mapped = 0;
	while (!cmp.done) {
		struct timespec ts = { 0, (torch_mapped ? 2 : 50) * 1000000L };
		nanosleep(&ts, NULL);
		if (torch_now_mapped(&torch_mapped) && np_pyapi_load() == 0)
			with_gil();
	}
}

/* --no-checks: no hooks, but nanprof's autograd probes still wait for
 * word that libtorch is mapped */
static void watch_torch(void)
{
	int torch_mapped = 0;
	while (!torch_now_mapped(&torch_mapped)) {
		struct timespec ts = { 0, torch_look_ms() * 1000000L };
		nanosleep(&ts, NULL);
	}
}

static void *control_main(void *arg)
{
	int run_mode = (int)(intptr_t)arg;
	if (run_mode == WATCH_ONLY) {
		watch_torch();
		return NULL;
	}
	attached = !run_mode;
	if (cmp.mode && strcmp(cmp.mode, "nanprof") != 0) {
		compare_only();
		return NULL;
	}
	if (run_mode) {
		int fd = connect_cli();
		np_alog("connected to nanprof: %s", fd >= 0 ? "yes" : "no");
		if (fd >= 0) {
			serve(fd);
			close(fd);
		} else if (np_report_to_file()) {
			serve(-1);   /* the agent alone: checks on for good */
		}
		return NULL;
	}
	int lfd = listen_attach();
	if (lfd < 0)
		return NULL;
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			break;
		}
		struct np_agent_msg m;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (trusted(fd) && poll(&p, 1, 2000) == 1 &&
		    recv(fd, &m, sizeof(m), 0) == sizeof(m) && m.magic == NP_AGENT_MAGIC &&
		    m.kind == NP_AGENT_CHECKS) {
			memcpy(attach_gpu_mode, m.gpu_mode, sizeof(attach_gpu_mode));
			attach_gpu_mode[sizeof(attach_gpu_mode) - 1] = 0;
			attach_gpu_defer = m.gpu_defer;
			char ack = 1;
			if (send(fd, &ack, 1, MSG_NOSIGNAL) == 1)
				serve(fd);
		}
		close(fd);
	}
	close(lfd);
	return NULL;
}

/* A forked child (a DataLoader worker) has the hooks but not the thread
 * and not nanprof's attention: its checks stay off. */
static void in_child(void)
{
	np_hooks_enable(0);
	started = 0;
	state = IDLE;
}

void np_control_start(int run_mode)
{
	if (started)
		return;
	cmp.mode = getenv(NP_AGENT_ENV_COMPARE);
	cmp.out = getenv(NP_AGENT_ENV_COMPARE_OUT);
	const char *steps = getenv(NP_AGENT_ENV_COMPARE_STEPS);
	cmp.steps = steps ? atol(steps) : 0;
	if (!cmp.mode || !cmp.out || cmp.steps <= 0)
		cmp.mode = NULL;
	const char *off = getenv(NP_AGENT_ENV_CHECKS);
	if (off && strcmp(off, "0") == 0 && !cmp.mode) {
		if (!run_mode || np_agent_torch_mapped())
			return;
		run_mode = WATCH_ONLY;
	}
	started = 1;
	pthread_atfork(NULL, NULL, in_child);
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 256 << 10);
	/* no signal of the job's may land on our thread */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_t t;
	if (pthread_create(&t, &a, control_main, (void *)(intptr_t)run_mode))
		started = 0;
	else
		pthread_setname_np(t, "nanprof-agent");
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
}
