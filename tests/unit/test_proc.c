/* test_proc.c - unit tests for userspace/proc.c.
 *
 * The parsers run over crafted /proc texts; the live functions run on this
 * test process and on children it starts, whose state the test controls.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"

/* ---- np_maps_find ---- */

static const char maps[] =
	"55d0a0000000-55d0a0001000 r--p 00000000 08:01 1001                       /usr/bin/python3.11\n"
	"55d0a1000000-55d0a1100000 rw-p 00000000 00:00 0                          [heap]\n"
	/* a mapping of the library that does not start at offset 0 comes first */
	"7f0000100000-7f0000200000 r-xp 00001000 08:01 2002                       /opt/py/lib/libpython3.11.so.1.0\n"
	/* a replaced copy of the library: must be ignored */
	"7f0000300000-7f0000301000 r--p 00000000 08:01 2003                       /opt/old/libpython3.11.so.1.0 (deleted)\n"
	/* the prefix in a directory name, not in the file name */
	"7f0000400000-7f0000401000 r--p 00000000 08:01 2004                       /opt/libpython3.11/lib/libfoo.so\n"
	/* anonymous mappings */
	"7f0000500000-7f0000501000 rw-p 00000000 00:00 0 \n"
	"7f0000600000-7f0000601000 rw-p 00000000 00:00 0\n"
	"7f0000700000-7f0000701000 r--p 00000000 00:00 0                          [vdso]\n"
	/* the mapping wanted */
	"7f0000800000-7f0000900000 r--p 00000000 08:01 2002                       /opt/py/lib/libpython3.11.so.1.0\n"
	"7f0000900000-7f0000a00000 r-xp 00100000 08:01 2002                       /opt/py/lib/libpython3.11.so.1.0\n"
	/* a second library with the same prefix: the first one wins */
	"7f0000b00000-7f0000c00000 r--p 00000000 08:01 3003                       /usr/lib/libpython3.12.so.1.0\n"
	/* spaces in the path */
	"7f0001000000-7f0001100000 r--p 00000000 08:01 4004                       /tmp/my dir/libtorch_cpu.so\n"
	/* a long line and a last line without a newline */
	"7f0002000000-7f0002100000 r--p 00000000 08:01 5005                       /usr/lib/libc.so.6";

Test(maps, picks_offset_zero_file_mapping)
{
	struct np_mapping m;

	memset(&m, 0, sizeof(m));
	cr_assert_eq(np_maps_find(maps, "libpython3.", &m), 0);
	cr_expect_eq(m.start, 0x7f0000800000ULL, "start %#llx", (unsigned long long)m.start);
	cr_expect_str_eq(m.path, "/opt/py/lib/libpython3.11.so.1.0");
}

Test(maps, full_name_and_other_libraries)
{
	struct np_mapping m;

	cr_assert_eq(np_maps_find(maps, "libpython3.12", &m), 0);
	cr_expect_eq(m.start, 0x7f0000b00000ULL);
	cr_expect_str_eq(m.path, "/usr/lib/libpython3.12.so.1.0");

	cr_assert_eq(np_maps_find(maps, "python3.11", &m), 0);
	cr_expect_eq(m.start, 0x55d0a0000000ULL);
	cr_expect_str_eq(m.path, "/usr/bin/python3.11");

	cr_assert_eq(np_maps_find(maps, "libtorch_cpu.so", &m), 0);
	cr_expect_eq(m.start, 0x7f0001000000ULL);
	cr_expect_str_eq(m.path, "/tmp/my dir/libtorch_cpu.so");

	cr_assert_eq(np_maps_find(maps, "libc.so", &m), 0);
	cr_expect_eq(m.start, 0x7f0002000000ULL);
	cr_expect_str_eq(m.path, "/usr/lib/libc.so.6");
}

Test(maps, absent)
{
	struct np_mapping m = { .start = 0x1234 };

	cr_expect_eq(np_maps_find(maps, "libtorch_cuda", &m), -ENOENT);
	cr_expect_eq(m.start, 0x1234, "out written on failure");
	/* [heap], [vdso] and anonymous mappings are not files */
	cr_expect_eq(np_maps_find(maps, "[heap]", &m), -ENOENT);
	cr_expect_eq(np_maps_find(maps, "[vdso", &m), -ENOENT);
	/* a directory component never matches */
	cr_expect_eq(np_maps_find(maps, "lib/", &m), -ENOENT);
	cr_expect_eq(np_maps_find("", "lib", &m), -ENOENT);
	cr_expect_eq(np_maps_find("\n\n", "lib", &m), -ENOENT);
	cr_expect_eq(np_maps_find("garbage line\n", "garbage", &m), -ENOENT);
}

Test(maps, only_deleted_copy)
{
	static const char text[] =
		"7f0000300000-7f0000301000 r--p 00000000 08:01 2003 /x/libpython3.11.so (deleted)\n";
	struct np_mapping m;

	cr_expect_eq(np_maps_find(text, "libpython3.", &m), -ENOENT);
}

Test(maps, long_line_skipped)
{
	char *text = malloc(8192);
	struct np_mapping m;
	int n;

	cr_assert_not_null(text);
	n = sprintf(text, "7f0000000000-7f0000001000 r--p 00000000 08:01 1 /");
	memset(text + n, 'd', 2000);
	n += 2000;
	n += sprintf(text + n, "/libfoo.so\n"
			       "7f0000100000-7f0000101000 r--p 00000000 08:01 2 /lib/libfoo.so.2\n");
	cr_assert_eq(np_maps_find(text, "libfoo", &m), 0);
	cr_expect_eq(m.start, 0x7f0000100000ULL);
	cr_expect_str_eq(m.path, "/lib/libfoo.so.2");
	free(text);
}

/* ---- np_environ_find ---- */

static const char env[] = "LOCAL_RANK=3\0RANK=7\0RANKX=9\0EMPTY=\0EQ=a=b\0WORLD_SIZE=2";

Test(environ, exact_name)
{
	char buf[32];

	cr_assert_eq(np_environ_find(env, sizeof(env), "RANK", buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "7");
	cr_assert_eq(np_environ_find(env, sizeof(env), "LOCAL_RANK", buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "3");
	cr_assert_eq(np_environ_find(env, sizeof(env), "RANKX", buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "9");
	cr_assert_eq(np_environ_find(env, sizeof(env), "EQ", buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "a=b");
}

Test(environ, rank_does_not_match_local_rank)
{
	static const char only_local[] = "LOCAL_RANK=3\0GROUP_RANK=1\0RANK_X=4\0";
	char buf[32] = "untouched";

	cr_expect_eq(np_environ_find(only_local, sizeof(only_local), "RANK", buf, sizeof(buf)),
		     -ENOENT, "matched '%s'", buf);
	cr_expect_eq(np_environ_find(env, sizeof(env), "RAN", buf, sizeof(buf)), -ENOENT);
	cr_expect_eq(np_environ_find(env, sizeof(env), "K", buf, sizeof(buf)), -ENOENT);
	cr_expect_eq(np_environ_find(env, sizeof(env), "HOME", buf, sizeof(buf)), -ENOENT);
}

Test(environ, empty_value)
{
	char buf[8] = "xx";

	cr_assert_eq(np_environ_find(env, sizeof(env), "EMPTY", buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "");
}

Test(environ, bounded_by_length)
{
	char buf[32];

	/* the last entry without its NUL: strnlen must stop at env_len */
	cr_assert_eq(np_environ_find(env, sizeof(env) - 1, "WORLD_SIZE", buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "2");
	/* a block cut in the middle of a value gives the part that is there */
	cr_assert_eq(np_environ_find("AB=1234", 5, "AB", buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "12");
	/* a block cut inside the name or just after '=' */
	cr_expect_eq(np_environ_find("AB=1234", 2, "AB", buf, sizeof(buf)), -ENOENT);
	cr_expect_eq(np_environ_find("AB=1234", 0, "AB", buf, sizeof(buf)), -ENOENT);
}

Test(environ, truncates_to_buffer)
{
	char buf[4];

	cr_assert_eq(np_environ_find("LONG=abcdefgh", 14, "LONG", buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "abc");
}

/* ---- live: this process ---- */

Test(live, exe_of_self)
{
	char want[PATH_MAX], got[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", want, sizeof(want) - 1);

	cr_assert_gt(n, 0);
	want[n] = 0;
	cr_assert_eq(np_proc_exe(getpid(), got, sizeof(got)), 0);
	cr_expect_str_eq(got, want);
}

Test(live, exe_truncates)
{
	char got[6];

	memset(got, 'x', sizeof(got));
	cr_assert_eq(np_proc_exe(getpid(), got, sizeof(got)), 0);
	cr_expect_eq(strlen(got), sizeof(got) - 1);
}

Test(live, comm_and_thread_name)
{
	char buf[32];

	cr_assert_eq(prctl(PR_SET_NAME, "nptest-main"), 0);
	cr_assert_eq(np_proc_comm(getpid(), buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "nptest-main");
	np_proc_thread_name(getpid(), gettid(), buf, sizeof(buf));
	cr_expect_str_eq(buf, "nptest-main");
	/* a thread that does not exist: "" */
	strcpy(buf, "stale");
	np_proc_thread_name(getpid(), INT_MAX, buf, sizeof(buf));
	cr_expect_str_eq(buf, "");
	/* truncation keeps a terminated string */
	np_proc_thread_name(getpid(), gettid(), buf, 5);
	cr_expect_str_eq(buf, "npte");
}

Test(live, alive_and_uid)
{
	cr_expect(np_proc_alive(getpid()));
	cr_expect_eq(np_proc_uid(getpid()), (int64_t)getuid());
	/* pids are below pid_max, at most 2^22, so INT_MAX never exists */
	cr_expect_not(np_proc_alive(INT_MAX));
	cr_expect_eq(np_proc_uid(INT_MAX), -ENOENT);
	char buf[64];
	cr_expect_eq(np_proc_exe(INT_MAX, buf, sizeof(buf)), -ENOENT);
	cr_expect_eq(np_proc_comm(INT_MAX, buf, sizeof(buf)), -ENOENT);
	cr_expect_eq(np_proc_getenv(INT_MAX, "PATH", buf, sizeof(buf)), -ENOENT);
}

Test(live, find_mapping_of_libc)
{
	Dl_info info;
	struct np_mapping m;

	cr_assert_neq(dladdr((void *)printf, &info), 0);
	cr_assert_eq(np_proc_find_mapping(getpid(), "libc.so", &m), 0);
	/* dli_fbase is the start of the library's first mapping */
	cr_expect_eq(m.start, (uint64_t)(uintptr_t)info.dli_fbase, "%#llx vs %p",
		     (unsigned long long)m.start, info.dli_fbase);
	const char *base = strrchr(m.path, '/');
	cr_assert_not_null(base);
	cr_expect_str_eq(base, "/libc.so.6");
	cr_expect_eq(np_proc_find_mapping(getpid(), "libnot-there-at-all", &m), -ENOENT);
}

/* ---- live: children ---- */

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Waits until the child shows a state in /proc/PID/stat (e.g. 'Z'). */
static int wait_state(pid_t pid, char state)
{
	char path[64], buf[512];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(path, "r");
		if (f) {
			size_t n = fread(buf, 1, sizeof(buf) - 1, f);
			fclose(f);
			buf[n] = 0;
			const char *rp = strrchr(buf, ')');
			if (rp && rp[1] == ' ' && rp[2] == state)
				return 0;
		}
		sleep_ms(10);
	}
	return -1;
}

Test(children, zombie_and_reaped_child_not_alive)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(0);
	cr_assert_eq(wait_state(pid, 'Z'), 0, "child never became a zombie");
	cr_expect_not(np_proc_alive(pid), "a zombie counts as alive");
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	cr_expect_not(np_proc_alive(pid), "a reaped child counts as alive");
}

Test(children, stopped_child_alive)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		raise(SIGSTOP);
		_exit(0);
	}
	cr_assert_eq(wait_state(pid, 'T'), 0);
	cr_expect(np_proc_alive(pid));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

Test(children, getenv_of_execd_child)
{
	char *const argv[] = { "sleep", "10", NULL };
	char *const envp[] = { "LOCAL_RANK=3", "RANK=7", "NP_EMPTY=", "WORLD_SIZE=16", NULL };
	char buf[64], exe[PATH_MAX];
	pid_t pid;
	int execd = 0;

	cr_assert_eq(access("/bin/sleep", X_OK), 0, "needs /bin/sleep");
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		execve("/bin/sleep", argv, envp);
		_exit(127);
	}
	/* /proc/PID/environ shows the fork's copy until the exec is done */
	for (int i = 0; i < 500 && !execd; i++) {
		if (np_proc_comm(pid, buf, sizeof(buf)) == 0 && strcmp(buf, "sleep") == 0)
			execd = 1;
		else
			sleep_ms(10);
	}
	cr_assert(execd, "child did not exec /bin/sleep");

	cr_expect_eq(np_proc_getenv(pid, "RANK", buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "7");
	cr_expect_eq(np_proc_getenv(pid, "LOCAL_RANK", buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "3");
	cr_expect_eq(np_proc_getenv(pid, "WORLD_SIZE", buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "16");
	cr_expect_eq(np_proc_getenv(pid, "NP_EMPTY", buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "");
	cr_expect_eq(np_proc_getenv(pid, "HOME", buf, sizeof(buf)), -ENOENT);
	cr_expect_eq(np_proc_getenv(pid, "PATH", buf, sizeof(buf)), -ENOENT);
	cr_expect_eq(np_proc_uid(pid), (int64_t)getuid());
	cr_expect(np_proc_alive(pid));

	cr_assert_eq(np_proc_exe(pid, exe, sizeof(exe)), 0);
	char want[PATH_MAX];
	cr_assert_not_null(realpath("/bin/sleep", want));
	cr_expect_str_eq(exe, want);

	kill(pid, SIGKILL);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	cr_expect_not(np_proc_alive(pid));
}
