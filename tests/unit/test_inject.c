/* test_inject.c - userspace/inject.c against live Python processes.
 * Needs root (ptrace of a child is allowed anyway, but the agent path and
 * process_vm_writev are checked as nanprof runs them) and python3;
 * skips, visibly, without them. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "inject.h"
#include "proc.h"

static char agent[PATH_MAX];

/* Starts python3 -c code with stdout into a pipe; returns its pid. */
static pid_t start_python(const char *code, int *out_fd)
{
	int fds[2];
	if (pipe(fds))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		execlp("python3", "python3", "-c", code, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	*out_fd = fds[0];
	return pid;
}

static void need_python_and_agent(void)
{
	if (!realpath("libnanprof_agent.so", agent))
		cr_skip_test("SKIP: libnanprof_agent.so not built (run from the repo root after make)");
	if (system("python3 -c pass 2>/dev/null") != 0)
		cr_skip_test("SKIP: no python3");
}

static bool mapped(pid_t pid, const char *name)
{
	struct np_mapping m;
	return np_proc_find_mapping(pid, name, &m) == 0;
}

static void finish(pid_t pid, int fd, const char *want)
{
	char buf[256] = "";
	size_t used = 0;
	ssize_t n;
	while (used < sizeof(buf) - 1 && (n = read(fd, buf + used, sizeof(buf) - 1 - used)) > 0)
		used += (size_t)n;
	buf[used] = 0;
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "target status %#x", st);
	cr_expect_str_eq(buf, want);
	close(fd);
}

/* A computing job gets the library, many times over, and computes the
 * same result as it would have alone. */
Test(inject, into_a_computing_python, .timeout = 60)
{
	need_python_and_agent();
	const char *code =
		"import time\n"
		"t = time.time(); x = 0.0\n"
		"while time.time() - t < 3: x = (x * 1.0000001 + 0.5) % 1000.0\n"
		"s = sum(i * 0.5 for i in range(100000))\n"
		"print(s)\n";
	int fd;
	pid_t pid = start_python(code, &fd);
	usleep(500000);
	cr_assert(!mapped(pid, "libnanprof_agent.so"));
	cr_expect_eq(np_inject_pick_thread(pid), pid, "one thread only: the main one");
	uint64_t first = 0;
	for (int i = 0; i < 20; i++) {
		uint64_t h = 0;
		int err = np_inject_dlopen(pid, pid, agent, 5000, &h);
		cr_assert_eq(err, 0, "injection %d: %s", i, strerror(-err));
		cr_assert_neq(h, 0);
		if (i == 0)
			first = h;
		cr_expect_eq(h, first, "dlopen of the same library returns the same handle");
	}
	cr_expect(mapped(pid, "libnanprof_agent.so"));
	finish(pid, fd, "2499975000.0\n");
}

/* A job that spends its time in libc (allocating and zeroing large
 * bytearrays through malloc, beyond Python's own allocator): injection
 * must wait for a safe point, or the dlopen inside it can corrupt the
 * heap (seen in CI before the safe-point check: "malloc assertion failure
 * in sysmalloc").  Safe points are rare there, so each injection may take
 * a while; the job runs until told to stop. */
Test(inject, into_a_python_busy_in_malloc, .timeout = 90)
{
	need_python_and_agent();
	char stop[] = "/tmp/nanprof-inject-stop.XXXXXX";
	int sfd = mkstemp(stop);
	cr_assert(sfd >= 0);
	close(sfd);
	unlink(stop);
	char code[512];
	snprintf(code, sizeof(code),
		 "import os, time\n"
		 "t = time.time()\n"
		 "while time.time() - t < 60 and not os.path.exists('%s'):\n"
		 "    x = [bytearray(150000 + i) for i in range(30)]\n"
		 "print('ok')\n", stop);
	int fd;
	pid_t pid = start_python(code, &fd);
	usleep(400000);
	for (int i = 0; i < 15; i++) {
		uint64_t h;
		int err = np_inject_dlopen(pid, pid, agent, 10000, &h);
		cr_assert_eq(err, 0, "injection %d: %s", i, strerror(-err));
	}
	FILE *f = fopen(stop, "w");
	cr_assert_not_null(f);
	fclose(f);
	finish(pid, fd, "ok\n");
	unlink(stop);
}

/* A thread asleep in a system call: the call is restarted afterwards and
 * the job's own timing and output are unchanged. */
Test(inject, into_a_sleeping_python, .timeout = 60)
{
	need_python_and_agent();
	int fd;
	pid_t pid = start_python("import time\ntime.sleep(2)\nprint('slept')\n", &fd);
	usleep(700000);
	uint64_t h = 0;
	cr_assert_eq(np_inject_dlopen(pid, pid, agent, 5000, &h), 0);
	cr_expect(mapped(pid, "libnanprof_agent.so"));
	finish(pid, fd, "slept\n");
}

/* Runs a command to completion and returns its stdout (static buffer). */
static const char *output_of(const char *cmd)
{
	static char buf[4096];
	FILE *f = popen(cmd, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	buf[n] = 0;
	if (f)
		pclose(f);
	return buf;
}

/* A torch training job, injected into ten times while it trains, prints
 * the same losses as without. */
Test(inject, into_torch_training_numerics_unchanged, .timeout = 120)
{
	need_python_and_agent();
	if (system("python3 -c 'import torch' 2>/dev/null") != 0)
		cr_skip_test("SKIP: no torch for python3");
	const char *job = "OMP_NUM_THREADS=1 exec python3 tests/integration/workload.py --steps 40 --sleep 0.02";
	char plain[4096];
	snprintf(plain, sizeof(plain), "%s", output_of(job));
	cr_assert(strstr(plain, "finished 40 steps"), "plain run: %s", plain);

	int fds[2];
	cr_assert_eq(pipe(fds), 0);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		setenv("OMP_NUM_THREADS", "1", 1);
		execl("/bin/sh", "sh", "-c", job + strlen("OMP_NUM_THREADS=1 "), (char *)NULL);   /* exec: same pid */
		_exit(127);
	}
	close(fds[1]);
	/* sh execs python: wait until the process is python with torch */
	for (int i = 0; i < 100 && !mapped(pid, "libtorch_python.so"); i++)
		usleep(50000);
	cr_assert(mapped(pid, "libtorch_python.so"), "the job did not start");
	for (int i = 0; i < 10; i++) {
		uint64_t h;
		cr_assert_eq(np_inject_dlopen(pid, pid, agent, 5000, &h), 0);
		usleep(50000);
	}
	finish(pid, fds[0], plain);
}

/* With an idle thread (blocked on a futex), that thread is the one
 * hijacked: the main thread, which trains, is not paused. */
Test(inject, picks_an_idle_thread, .timeout = 60)
{
	need_python_and_agent();
	const char *code =
		"import threading, time\n"
		"ev = threading.Event()\n"
		"th = threading.Thread(target=ev.wait); th.start()\n"
		"t = time.time(); x = 0\n"
		"while time.time() - t < 2: x += 1\n"
		"ev.set(); th.join(); print('done')\n";
	int fd;
	pid_t pid = start_python(code, &fd);
	usleep(500000);
	pid_t tid = np_inject_pick_thread(pid);
	cr_expect_neq(tid, pid, "the idle thread, not the busy main thread");
	uint64_t h;
	cr_assert_eq(np_inject_dlopen(pid, tid, agent, 5000, &h), 0);
	cr_expect(mapped(pid, "libnanprof_agent.so"));
	finish(pid, fd, "done\n");
}

Test(inject, errors)
{
	need_python_and_agent();
	uint64_t h;
	cr_expect_eq(np_inject_dlopen(2147483647, 2147483647, agent, 1000, &h), -ENOENT,
		     "no such pid: no libc mapping to find");
	int fd;
	pid_t pid = start_python("import time\ntime.sleep(1.5)\nprint('alive')\n", &fd);
	usleep(500000);
	cr_expect_eq(np_inject_dlopen(pid, pid, "/nonexistent/lib.so", 5000, &h), -ELIBBAD);
	finish(pid, fd, "alive\n");
}
