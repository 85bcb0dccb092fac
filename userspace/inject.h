/* inject.h - loading a shared library into a running process with ptrace
 * (x86-64, glibc >= 2.34, where dlopen is exported by libc.so.6).
 *
 * One thread is seized and interrupted, at a safe point: not inside libc
 * or the dynamic loader (it might be in the middle of malloc, which takes
 * no lock in a single-threaded process), unless blocked in a system call
 * that malloc never makes; otherwise it runs on and is interrupted again.
 * Its registers and extended state are saved; it is made to call dlopen(path, RTLD_NOW) with a return
 * address of 0 and the stack 8 mod 16 below the red zone, so the call
 * ends in a SIGSEGV at address 0; then everything is restored and the
 * thread detached.  The library's constructor runs on that thread and
 * must hand any real work to a thread of its own: the hijacked one may
 * hold locks.  This is groundwork for the in-process agent (issue #3);
 * see shared/design/facts.md for the sequence and its traps.
 */
#ifndef NP_INJECT_H
#define NP_INJECT_H

#include <stdint.h>
#include <sys/types.h>

/* Loads path into pid on thread tid (pid itself for the main thread).
 * On success returns 0 and the dlopen handle in *handle (never 0).
 * -ENOENT: no such process, or no dlopen in its libc; -ESRCH: no such
 * thread; -EPERM: not allowed to trace it; -ELIBBAD: dlopen returned NULL; -ETIMEDOUT:
 * no safe point came, or the call did not come back, within timeout_ms
 * (in the second case the thread is left detached inside dlopen: nothing
 * safe can be done about that). */
int np_inject_dlopen(pid_t pid, pid_t tid, const char *path, int timeout_ms,
		     uint64_t *handle);

/* A thread of pid to hijack: one blocked in a system call malloc never
 * makes (an idle worker waiting on a futex, a poller), so that neither the
 * training thread is paused nor a safe point waited for; else pid itself
 * (the main thread).  Needs ptrace access to read /proc/PID/task/TID/syscall. */
pid_t np_inject_pick_thread(pid_t pid);

#endif
