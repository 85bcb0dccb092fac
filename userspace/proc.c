#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>
#include "proc.h"

static int read_file(const char *path, char *buf, size_t cap, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t n = 0;
	while (n < cap) {
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			close(fd);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*len = n;
	return 0;
}

int np_maps_find(const char *text, const char *prefix, struct np_mapping *out)
{
	const char *line = text;
	size_t plen = strlen(prefix);
	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t llen = end ? (size_t)(end - line) : strlen(line);
		char buf[1024];
		if (llen < sizeof(buf)) {
			memcpy(buf, line, llen);
			buf[llen] = 0;
			uint64_t start, end_addr, off;
			char perms[8];
			int pos = 0;
			if (sscanf(buf, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n",
				   &start, &end_addr, perms, &off, &pos) >= 4 && pos > 0) {
				const char *path = buf + pos;
				const char *base = strrchr(path, '/');
				base = base ? base + 1 : path;
				if (path[0] == '/' && off == 0 && strncmp(base, prefix, plen) == 0 &&
				    !strstr(path, " (deleted)")) {
					out->start = start;
					snprintf(out->path, sizeof(out->path), "%s", path);
					return 0;
				}
			}
		}
		line = end ? end + 1 : NULL;
	}
	return -ENOENT;
}

int np_proc_find_mapping(pid_t pid, const char *prefix, struct np_mapping *out)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	/* maps of a torch process run to a few hundred KiB */
	size_t cap = 8 << 20, len = 0;
	char *buf = malloc(cap + 1);
	if (!buf)
		return -ENOMEM;
	int err = read_file(path, buf, cap, &len);
	if (err) {
		free(buf);
		return err;
	}
	buf[len] = 0;
	err = np_maps_find(buf, prefix, out);
	free(buf);
	return err;
}

int np_environ_find(const char *env, size_t env_len, const char *name,
		    char *buf, size_t len)
{
	size_t nlen = strlen(name);
	size_t i = 0;
	while (i < env_len) {
		const char *kv = env + i;
		size_t kvlen = strnlen(kv, env_len - i);
		if (kvlen > nlen && kv[nlen] == '=' && memcmp(kv, name, nlen) == 0) {
			snprintf(buf, len, "%.*s", (int)(kvlen - nlen - 1), kv + nlen + 1);
			return 0;
		}
		i += kvlen + 1;
	}
	return -ENOENT;
}

int np_proc_getenv(pid_t pid, const char *name, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	size_t cap = 1 << 20, n = 0;
	char *env = malloc(cap);
	if (!env)
		return -ENOMEM;
	int err = read_file(path, env, cap, &n);
	if (!err)
		err = np_environ_find(env, n, name, buf, len);
	free(env);
	return err;
}

int np_proc_exe(pid_t pid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(path, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

int np_proc_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	size_t n = 0;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	int err = read_file(path, buf, len - 1, &n);
	if (err)
		return err;
	while (n && (buf[n - 1] == '\n'))
		n--;
	buf[n] = 0;
	return 0;
}

void np_proc_thread_name(pid_t pid, pid_t tid, char *buf, size_t len)
{
	char path[96];
	size_t n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	if (len == 0)
		return;
	if (read_file(path, buf, len - 1, &n))
		n = 0;
	while (n && buf[n - 1] == '\n')
		n--;
	buf[n] = 0;
}

int64_t np_proc_uid(pid_t pid)
{
	char path[64], buf[4096];
	size_t n = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	int err = read_file(path, buf, sizeof(buf) - 1, &n);
	if (err)
		return err;
	buf[n] = 0;
	const char *u = strstr(buf, "\nUid:");
	if (!u)
		return -EINVAL;
	return strtoll(u + 5, NULL, 10);
}

bool np_proc_alive(pid_t pid)
{
	char path[64], buf[512];
	size_t n = 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_file(path, buf, sizeof(buf) - 1, &n))
		return false;
	buf[n] = 0;
	const char *rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512];
	size_t n = 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_file(path, buf, sizeof(buf) - 1, &n))
		return -1;
	buf[n] = 0;
	const char *rp = strrchr(buf, ')');   /* comm may hold spaces */
	int ppid;
	char state;
	if (!rp || sscanf(rp + 1, " %c %d", &state, &ppid) != 2 || state == 'Z')
		return -1;
	return ppid;
}

int np_proc_descendants(pid_t root, pid_t *out, int max)
{
	DIR *d = opendir("/proc");
	if (!d)
		return -errno;
	/* one pass for (pid, ppid) pairs, then grow the set until it stops */
	enum { CAP = 65536 };
	pid_t *pids = malloc(sizeof(pid_t) * CAP * 2), *ppids;
	if (!pids) {
		closedir(d);
		return -ENOMEM;
	}
	ppids = pids + CAP;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < CAP) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		pid_t pp = parent_of((pid_t)pid);
		if (pp < 0)
			continue;
		pids[n] = (pid_t)pid;
		ppids[n++] = pp;
	}
	closedir(d);
	int found = 0;
	for (bool grew = true; grew;) {
		grew = false;
		for (int i = 0; i < n; i++) {
			bool parent_in = ppids[i] == root;
			for (int k = 0; k < found && !parent_in; k++)
				parent_in = ppids[i] == out[k];
			bool already = false;
			for (int k = 0; k < found && !already; k++)
				already = pids[i] == out[k];
			if (parent_in && !already && found < max) {
				out[found++] = pids[i];
				grew = true;
			}
		}
	}
	free(pids);
	return found;
}

int np_proc_file_ranges(pid_t pid, const char *prefix, uint64_t (*ranges)[2], int max)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	char line[1024];
	size_t plen = strlen(prefix);
	int n = 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		uint64_t start, end;
		int pos = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %*s %*s %*s %n", &start, &end, &pos) < 2 ||
		    pos == 0)
			continue;
		char *file = line + pos, *base = strrchr(file, '/');
		base = base ? base + 1 : file;
		if (file[0] == '/' && strncmp(base, prefix, plen) == 0) {
			ranges[n][0] = start;
			ranges[n][1] = end;
			n++;
		}
	}
	fclose(f);
	return n;
}
