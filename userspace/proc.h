/* proc.h - what /proc says about a process. */
#ifndef NP_PROC_H
#define NP_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A file-backed mapping found in /proc/PID/maps. */
struct np_mapping {
	uint64_t start;      /* address of the mapping with file offset 0 */
	char path[512];
};

/* Finds the first mapping whose file name (basename) starts with prefix,
 * e.g. "libpython3." or "libtorch_cpu.so".  0, -ENOENT, or -errno. */
int np_proc_find_mapping(pid_t pid, const char *prefix, struct np_mapping *out);

/* Same, over a maps text already read (for tests). */
int np_maps_find(const char *maps_text, const char *prefix, struct np_mapping *out);

/* The value of NAME in PID's initial environment, or -ENOENT. */
int np_proc_getenv(pid_t pid, const char *name, char *buf, size_t len);

/* Same, over an environ block (NUL-separated) already read (for tests). */
int np_environ_find(const char *env, size_t env_len, const char *name,
		    char *buf, size_t len);

/* /proc/PID/exe target.  0 or -errno. */
int np_proc_exe(pid_t pid, char *buf, size_t len);

/* /proc/PID/comm.  0 or -errno. */
int np_proc_comm(pid_t pid, char *buf, size_t len);

/* Real uid of the process, or -errno. */
int64_t np_proc_uid(pid_t pid);

/* True while the process exists and is not a zombie. */
bool np_proc_alive(pid_t pid);

/* Address ranges [start, end) of every mapping of files whose basename
 * starts with prefix (all segments).  The count, or -errno. */
int np_proc_file_ranges(pid_t pid, const char *prefix, uint64_t (*ranges)[2], int max);

/* Every live descendant of root (children, their children, ...), found
 * through the parent pid in /proc/N/stat; at most max.  The count, or
 * -errno. */
int np_proc_descendants(pid_t root, pid_t *out, int max);

/* Names the thread (comm of /proc/PID/task/TID), "" if gone. */
void np_proc_thread_name(pid_t pid, pid_t tid, char *buf, size_t len);

#endif
