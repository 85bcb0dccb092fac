#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "elfsym.h"
#include "inject.h"
#include "proc.h"

#define RED_ZONE 128
#define XSTATE_MAX 16384   /* XSAVE area: AVX-512 needs about 2.7 KiB */

/* Runtime address of dlopen in pid: libc.so.6's mapping + its symbol. */
static int dlopen_addr(pid_t pid, uint64_t *addr)
{
	struct np_mapping m;
	if (np_proc_find_mapping(pid, "libc.so.6", &m))
		return -ENOENT;
	struct np_elf *e = np_elf_open(m.path);
	if (!e)
		return -ENOENT;
	uint64_t v = np_elf_sym_addr(e, "dlopen", 0);
	uint64_t bias = np_elf_load_bias(e);
	np_elf_close(e);
	if (!v)
		return -ENOENT;
	*addr = m.start - bias + v;
	return 0;
}

#define MAX_RANGES 64

/* Is the stopped thread at a point where calling dlopen is safe?  Not
 * while it runs inside libc or the dynamic loader: it may be in the middle
 * of malloc (which takes no lock at all in a single-threaded process) or
 * hold the loader's lock.  Blocked in a system call that malloc never
 * makes is fine: sleeping, polling, waiting on a futex or reading. */
static const long blocking[] = { 0 /* read */, 7 /* poll */, 23 /* select */,
					 35 /* nanosleep */, 43 /* accept */, 45 /* recvfrom */,
					 61 /* wait4 */, 202 /* futex */, 230 /* clock_nanosleep */,
					 232 /* epoll_wait */, 270 /* pselect6 */, 271 /* ppoll */,
					 281 /* epoll_pwait */, 288 /* accept4 */, 441 /* epoll_pwait2 */ };

static bool blocking_syscall(long nr)
{
	for (size_t i = 0; i < sizeof(blocking) / sizeof(blocking[0]); i++)
		if (nr == blocking[i])
			return true;
	return false;
}

static bool safe_point(pid_t pid, const struct user_regs_struct *r)
{
	uint64_t ranges[MAX_RANGES][2];
	int n = np_proc_file_ranges(pid, "libc.so", ranges, MAX_RANGES / 2);
	if (n < 0)
		return false;
	int m = np_proc_file_ranges(pid, "ld-linux", ranges + n, MAX_RANGES - n);
	if (m > 0)
		n += m;
	bool inside = false;
	for (int i = 0; i < n && !inside; i++)
		inside = r->rip >= ranges[i][0] && r->rip < ranges[i][1];
	return !inside || blocking_syscall((long)r->orig_rax);
}

pid_t np_inject_pick_thread(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return pid;
	pid_t pick = pid;
	struct dirent *e;
	while ((e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		if (tid <= 0 || tid == pid)
			continue;
		char sc[96], buf[64] = "";
		snprintf(sc, sizeof(sc), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
		FILE *f = fopen(sc, "re");
		if (!f)
			continue;
		bool idle = fgets(buf, sizeof(buf), f) && buf[0] >= '0' && buf[0] <= '9' &&
			    blocking_syscall(strtol(buf, NULL, 10));
		fclose(f);
		if (idle) {
			pick = tid;
			break;
		}
	}
	closedir(d);
	return pick;
}

/* Waits for the tracee to stop, at most timeout_ms.  0, -ETIMEDOUT, or
 * -ESRCH if it died. */
static int wait_stop(pid_t tid, int timeout_ms, int *status)
{
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		pid_t r = waitpid(tid, status, __WALL | WNOHANG);
		if (r == tid)
			return WIFSTOPPED(*status) ? 0 : -ESRCH;
		if (r < 0)
			return -errno;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long ms = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
		if (ms >= timeout_ms)
			return -ETIMEDOUT;
		usleep(1000);
	}
}

static int poke_bytes(pid_t tid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)addr, len };
	/* process_vm_writev works on the stack (writable), unlike text */
	return process_vm_writev(tid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -errno;
}

static int peek_bytes(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)addr, len };
	return process_vm_readv(tid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -errno;
}

int np_inject_dlopen(pid_t pid, pid_t tid, const char *path, int timeout_ms,
		     uint64_t *handle)
{
	uint64_t fn;
	int err = dlopen_addr(pid, &fn);
	if (err)
		return err;
	if (ptrace(PTRACE_SEIZE, tid, 0, 0))
		return errno == EPERM ? -EPERM : -errno;
	int status, pending = 0;
	struct user_regs_struct saved, regs;
	/* stop it at a safe point: interrupt, look, let it run on a little */
	for (int tries = 0;; tries++) {
		if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) || (err = wait_stop(tid, timeout_ms, &status))) {
			err = err ? err : -errno;
			ptrace(PTRACE_DETACH, tid, 0, 0);
			return err;
		}
		if ((status >> 16) != PTRACE_EVENT_STOP && WSTOPSIG(status) != SIGTRAP)
			pending = WSTOPSIG(status);   /* a signal came first: keep it */
		if (ptrace(PTRACE_GETREGS, tid, 0, &saved)) {
			err = -errno;
			ptrace(PTRACE_DETACH, tid, 0, (void *)(intptr_t)pending);
			return err;
		}
		if (safe_point(pid, &saved))
			break;
		if (tries * 2 >= timeout_ms || ptrace(PTRACE_CONT, tid, 0, (void *)(intptr_t)pending)) {
			ptrace(PTRACE_DETACH, tid, 0, 0);
			return -ETIMEDOUT;
		}
		pending = 0;
		usleep(2000);
	}

	/* save everything the call may change */
	static uint8_t xstate[XSTATE_MAX];
	struct iovec xv = { xstate, sizeof(xstate) };
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &xv)) {
		err = -errno;
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return err;
	}
	size_t xlen = xv.iov_len;

	/* the path below the red zone, then the return address 0 */
	size_t plen = strlen(path) + 1;
	uint64_t sp = saved.rsp - RED_ZONE - plen;
	sp &= ~15ULL;
	uint64_t str = sp;
	uint8_t old_stack[4096 + 64];
	uint64_t low = str - 64;   /* room for the return address */
	size_t span = saved.rsp - low;
	if (span > sizeof(old_stack) || peek_bytes(tid, low, old_stack, span)) {
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return -EFAULT;
	}
	uint64_t ret_slot = (str - 8) & ~15ULL;   /* 16-aligned ... */
	ret_slot -= 8;                             /* ... minus 8: rsp = 8 mod 16 at entry */
	uint64_t zero = 0;
	if ((err = poke_bytes(tid, str, path, plen)) ||
	    (err = poke_bytes(tid, ret_slot, &zero, sizeof(zero)))) {
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return err;
	}
	regs = saved;
	regs.rip = fn;
	regs.rdi = str;
	regs.rsi = RTLD_NOW;
	regs.rsp = ret_slot;
	regs.rax = 0;
	regs.orig_rax = (uint64_t)-1;   /* do not restart an interrupted syscall over us */
	if (ptrace(PTRACE_SETREGS, tid, 0, &regs) || ptrace(PTRACE_CONT, tid, 0, 0)) {
		err = -errno;
		goto restore;
	}
	/* run until the return to address 0 faults; a signal that arrives
	 * meanwhile is held back and delivered at detach, after the restore */
	for (;;) {
		if ((err = wait_stop(tid, timeout_ms, &status))) {
			if (err == -ETIMEDOUT)
				ptrace(PTRACE_DETACH, tid, 0, 0);
			return err;
		}
		int sig = WSTOPSIG(status);
		struct user_regs_struct now;
		if (sig == SIGSEGV && ptrace(PTRACE_GETREGS, tid, 0, &now) == 0 && now.rip == 0) {
			*handle = now.rax;
			break;
		}
		if ((status >> 16) != PTRACE_EVENT_STOP)
			pending = sig;
		if (ptrace(PTRACE_CONT, tid, 0, 0)) {
			err = -errno;
			goto restore;
		}
	}
	err = *handle ? 0 : -ELIBBAD;
restore:
	poke_bytes(tid, low, old_stack, span);
	xv.iov_len = xlen;
	ptrace(PTRACE_SETREGSET, tid, (void *)NT_X86_XSTATE, &xv);
	ptrace(PTRACE_SETREGS, tid, 0, &saved);
	ptrace(PTRACE_DETACH, tid, 0, (void *)(intptr_t)pending);
	return err;
}
