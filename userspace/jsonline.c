#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "jsonline.h"

/* End of the JSON string starting at s (on its opening quote): the
 * position after the closing quote, or NULL. */
static const char *skip_string(const char *s)
{
	for (s++; *s; s++) {
		if (*s == '\\') {
			if (!*++s)
				return NULL;
		} else if (*s == '"') {
			return s + 1;
		}
	}
	return NULL;
}

/* Visits the top-level members: key (with quotes, klen bytes) and the
 * value's extent [v, vend).  Stops when fn returns non-zero. */
typedef int (*member_fn)(const char *key, size_t klen, const char *v, const char *vend,
			 void *arg);

static int members(const char *line, member_fn fn, void *arg)
{
	const char *p = strchr(line, '{');
	if (!p)
		return -EINVAL;
	p++;
	for (;;) {
		while (*p == ' ' || *p == ',' || *p == '\t')
			p++;
		if (*p != '"')
			return 0;   /* '}' or garbage: done */
		const char *key = p, *kend = skip_string(p);
		if (!kend)
			return -EINVAL;
		p = kend;
		while (*p == ' ')
			p++;
		if (*p++ != ':')
			return -EINVAL;
		while (*p == ' ')
			p++;
		const char *v = p;
		int depth = 0;
		for (; *p; p++) {
			if (*p == '"') {
				p = skip_string(p);
				if (!p)
					return -EINVAL;
				p--;
			} else if (*p == '{' || *p == '[') {
				depth++;
			} else if (*p == '}' || *p == ']') {
				if (depth-- == 0)
					break;
			} else if (*p == ',' && depth == 0) {
				break;
			}
		}
		int r = fn(key, (size_t)(kend - key), v, p, arg);
		if (r)
			return r;
		if (*p != ',')
			return 0;
	}
}

struct find {
	const char *key;
	const char *v, *vend;
};

static int find_fn(const char *key, size_t klen, const char *v, const char *vend, void *arg)
{
	struct find *f = arg;
	size_t n = strlen(f->key);
	if (klen == n + 2 && memcmp(key + 1, f->key, n) == 0) {
		f->v = v;
		f->vend = vend;
		return 1;
	}
	return 0;
}

static int find(const char *line, const char *key, const char **v, const char **vend)
{
	struct find f = { key, NULL, NULL };
	if (members(line, find_fn, &f) != 1)
		return -ENOENT;
	*v = f.v;
	*vend = f.vend;
	return 0;
}

int np_jl_num(const char *line, const char *key, double *out)
{
	const char *v, *vend;
	if (find(line, key, &v, &vend) || !(*v == '-' || (*v >= '0' && *v <= '9')))
		return -ENOENT;
	*out = strtod(v, NULL);
	return 0;
}

int np_jl_int(const char *line, const char *key, int64_t *out)
{
	const char *v, *vend;
	if (find(line, key, &v, &vend) || !(*v == '-' || (*v >= '0' && *v <= '9')))
		return -ENOENT;
	*out = strtoll(v, NULL, 10);
	return 0;
}

int np_jl_str(const char *line, const char *key, char *buf, size_t len)
{
	const char *v, *vend;
	if (find(line, key, &v, &vend) || *v != '"' || vend - v < 2 || len == 0)
		return -ENOENT;
	size_t n = (size_t)(vend - v - 2);
	if (n >= len)
		n = len - 1;
	memcpy(buf, v + 1, n);
	buf[n] = 0;
	return 0;
}

struct rewrite {
	FILE *f;
	const char *done;   /* written up to here */
	np_jl_map_fn map;
	void *arg;
	int err;
};

static int rewrite_fn(const char *key, size_t klen, const char *v, const char *vend, void *arg)
{
	struct rewrite *r = arg;
	if (!(*v == '-' || (*v >= '0' && *v <= '9')))
		return 0;
	char k[64], num[64], repl[64];
	if (klen - 2 >= sizeof(k) || (size_t)(vend - v) >= sizeof(num))
		return 0;
	memcpy(k, key + 1, klen - 2);
	k[klen - 2] = 0;
	memcpy(num, v, (size_t)(vend - v));
	num[vend - v] = 0;
	if (!r->map(k, num, repl, sizeof(repl), r->arg))
		return 0;
	if (fwrite(r->done, 1, (size_t)(v - r->done), r->f) != (size_t)(v - r->done) ||
	    fputs(repl, r->f) == EOF)
		r->err = -EIO;
	r->done = vend;
	return 0;
}

int np_jl_rewrite(const char *line, FILE *f, np_jl_map_fn map, void *arg)
{
	struct rewrite r = { f, line, map, arg, 0 };
	members(line, rewrite_fn, &r);
	if (fputs(r.done, f) == EOF)
		r.err = -EIO;
	return r.err;
}
