#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include "pymem.h"

#define MAX_DICT_ENTRIES 4096   /* modules rarely have more than a few dozen */

int np_pymem_read_pid(void *ctx, uint64_t addr, void *buf, size_t len)
{
	pid_t pid = (pid_t)(intptr_t)ctx;
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

static int rd(const struct np_pymem *m, uint64_t addr, void *buf, size_t len)
{
	if (!addr)
		return -EFAULT;
	return m->read(m->ctx, addr, buf, len);
}

static int rd64(const struct np_pymem *m, uint64_t addr, uint64_t *v)
{
	return rd(m, addr, v, sizeof(*v));
}

int np_py_str(const struct np_pymem *m, uint64_t str, char *buf, size_t len)
{
	uint64_t length;
	uint32_t state;
	int err;
	if ((err = rd64(m, str + m->v->str_length, &length)) ||
	    (err = rd(m, str + m->v->str_state, &state, sizeof(state))))
		return err;
	/* state bits (3.10-3.13): interned:2, kind:3, compact:1, ascii:1 */
	int compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
	if (!compact || !ascii || len == 0)
		return -EINVAL;
	size_t n = length < len - 1 ? (size_t)length : len - 1;
	if ((err = rd(m, str + m->v->bpf.str_ascii_data, buf, n)))
		return err;
	buf[n] = 0;
	return 0;
}

/* Where the entries of a keys object start and how they look. */
struct keys_view {
	uint64_t entries;
	uint64_t nentries;
	unsigned entry_size;   /* 24: hash,key,value; 16: key,value */
	unsigned key_off, value_off;
};

static int keys_view(const struct np_pymem *m, uint64_t keys, struct keys_view *kv)
{
	int err;
	if (m->v->keys_layout == 310) {
		/* dk_refcnt, dk_size, dk_lookup, dk_usable, dk_nentries, dk_indices */
		uint64_t size, nentries;
		if ((err = rd64(m, keys + 8, &size)) || (err = rd64(m, keys + 32, &nentries)))
			return err;
		unsigned ib = size <= 0xff ? 1 : size <= 0xffff ? 2 : size <= 0xffffffffULL ? 4 : 8;
		kv->entries = keys + 40 + size * ib;
		kv->nentries = nentries;
		kv->entry_size = 24;
		kv->key_off = 8;
		kv->value_off = 16;
		return 0;
	}
	/* 3.11+: dk_refcnt, dk_log2_size, dk_log2_index_bytes, dk_kind,
	 * dk_version, dk_usable, dk_nentries, dk_indices[] */
	uint8_t hdr[3];
	uint64_t nentries;
	if ((err = rd(m, keys + 8, hdr, sizeof(hdr))) || (err = rd64(m, keys + 24, &nentries)))
		return err;
	if (hdr[1] > 40)
		return -EINVAL;
	kv->entries = keys + 32 + (1ULL << hdr[1]);
	kv->nentries = nentries;
	if (hdr[2] == 0) {   /* DICT_KEYS_GENERAL */
		kv->entry_size = 24;
		kv->key_off = 8;
		kv->value_off = 16;
	} else {             /* DICT_KEYS_UNICODE / SPLIT */
		kv->entry_size = 16;
		kv->key_off = 0;
		kv->value_off = 8;
	}
	return 0;
}

int np_py_dict_each(const struct np_pymem *m, uint64_t dict, size_t limit,
		    np_dict_visit_fn fn, void *arg)
{
	uint64_t keys, values;
	int err;
	if ((err = rd64(m, dict + m->v->dict_keys, &keys)) ||
	    (err = rd64(m, dict + m->v->dict_values, &values)))
		return err;
	struct keys_view kv;
	if ((err = keys_view(m, keys, &kv)))
		return err;
	size_t n = kv.nentries;
	if (n > limit)
		n = limit;
	if (n > MAX_DICT_ENTRIES)
		n = MAX_DICT_ENTRIES;
	if (n == 0)
		return 0;
	size_t bytes = n * kv.entry_size;
	uint8_t *ents = malloc(bytes);
	uint64_t *vals = values ? malloc(n * 8) : NULL;
	if (!ents || (values && !vals)) {
		err = -ENOMEM;
		goto out;
	}
	if ((err = rd(m, kv.entries, ents, bytes)))
		goto out;
	/* A split dict keeps its values apart: values[i], after a small
	 * header from 3.13 on. */
	if (values && (err = rd(m, values + m->v->dict_values_header, vals, n * 8)))
		goto out;
	for (size_t i = 0; i < n; i++) {
		uint64_t key, value;
		memcpy(&key, ents + i * kv.entry_size + kv.key_off, 8);
		if (values)
			value = vals[i];
		else
			memcpy(&value, ents + i * kv.entry_size + kv.value_off, 8);
		if (!key || !value)
			continue;   /* deleted entry */
		char text[256];
		if (np_py_str(m, key, text, sizeof(text)))
			continue;
		if ((err = fn(text, value, arg)))
			goto out;
	}
	err = 0;
out:
	free(ents);
	free(vals);
	return err;
}

struct get_arg {
	const char *key;
	uint64_t value;
};

static int get_visit(const char *key, uint64_t value, void *arg)
{
	struct get_arg *g = arg;
	if (strcmp(key, g->key))
		return 0;
	g->value = value;
	return 1;
}

int np_py_dict_get(const struct np_pymem *m, uint64_t dict, const char *key, uint64_t *value)
{
	struct get_arg g = { key, 0 };
	int err = np_py_dict_each(m, dict, MAX_DICT_ENTRIES, get_visit, &g);
	*value = g.value;
	if (err < 0)
		return err;
	return g.value ? 0 : -ENOENT;
}

int np_py_instance_dict(const struct np_pymem *m, uint64_t obj, uint64_t *dict)
{
	int err;
	*dict = 0;
	if (m->v->managed_dict) {
		uint64_t d;
		if ((err = rd64(m, obj - 24, &d)))
			return err;
		if (m->v->dict_values_tagged && (d & 1))
			return -ENOENT;   /* inline values, no dict object */
		*dict = d;
		return d ? 0 : -ENOENT;
	}
	uint64_t type, off;
	if ((err = rd64(m, obj + m->v->bpf.obj_type, &type)) ||
	    (err = rd64(m, type + m->v->type_dictoffset, &off)))
		return err;
	if ((int64_t)off <= 0)
		return -ENOENT;
	if ((err = rd64(m, obj + off, dict)))
		return err;
	return *dict ? 0 : -ENOENT;
}

static int modules_dict(const struct np_pymem *m, uint64_t module, uint64_t *mods)
{
	uint64_t d;
	int err = np_py_instance_dict(m, module, &d);
	if (err)
		return err;
	return np_py_dict_get(m, d, "_modules", mods);
}

struct path_search {
	const struct np_pymem *m;
	uint64_t child;
	int depth_left;
	char *buf;
	size_t len;
};

static int search(struct path_search *s, uint64_t parent, size_t prefix_len);

static int direct_visit(const char *key, uint64_t value, void *arg)
{
	struct path_search *s = arg;
	if (value != s->child)
		return 0;
	size_t used = strlen(s->buf);
	snprintf(s->buf + used, s->len - used, "%s%s", used ? "." : "", key);
	return 1;
}

static int deep_visit(const char *key, uint64_t value, void *arg)
{
	struct path_search *s = arg;
	size_t used = strlen(s->buf);
	snprintf(s->buf + used, s->len - used, "%s%s", used ? "." : "", key);
	if (search(s, value, strlen(s->buf)) == 1)
		return 1;
	s->buf[used] = 0;
	return 0;
}

/* Direct children first, then depth first through each child: a module
 * registered both directly and deeper gets its direct name. */
static int search(struct path_search *s, uint64_t parent, size_t prefix_len)
{
	uint64_t mods;
	s->buf[prefix_len] = 0;
	if (modules_dict(s->m, parent, &mods))
		return 0;
	if (np_py_dict_each(s->m, mods, MAX_DICT_ENTRIES, direct_visit, s) == 1)
		return 1;
	if (s->depth_left <= 1)
		return 0;
	s->depth_left--;
	int r = np_py_dict_each(s->m, mods, MAX_DICT_ENTRIES, deep_visit, s);
	s->depth_left++;
	s->buf[prefix_len] = r == 1 ? s->buf[prefix_len] : 0;
	return r == 1;
}

int np_py_module_path(const struct np_pymem *m, uint64_t parent, uint64_t child,
		      int max_depth, char *buf, size_t len)
{
	if (len == 0)
		return -EINVAL;
	buf[0] = 0;
	struct path_search s = { m, child, max_depth, buf, len };
	if (search(&s, parent, 0) == 1)
		return 0;
	buf[0] = 0;
	return -ENOENT;
}

int np_py_type_name(const struct np_pymem *m, uint64_t type, char *buf, size_t len)
{
	uint64_t name;
	int err;
	if (len == 0)
		return -EINVAL;
	if ((err = rd64(m, type + m->v->bpf.type_name, &name)))
		return err;
	/* a C string of unknown length: read what fits, in one go or, near
	 * the end of a mapping, a byte at a time */
	if (m->read(m->ctx, name, buf, len - 1) != 0) {
		size_t i = 0;
		for (; i + 1 < len && rd(m, name + i, &buf[i], 1) == 0 && buf[i]; i++)
			;
		if (i == 0)
			return -EFAULT;
		buf[i] = 0;
		return 0;
	}
	buf[len - 1] = 0;
	return buf[0] ? 0 : -EINVAL;
}

uint64_t np_py_function_class(const struct np_pymem *m, uint64_t obj)
{
	static const char want[] = "BackwardCFunction";
	uint64_t type, base;
	char name[sizeof(want) + 1];
	if (rd64(m, obj + m->v->bpf.obj_type, &type) || !type ||
	    rd64(m, type + m->v->bpf.type_base, &base) || !base ||
	    np_py_type_name(m, base, name, sizeof(name)))
		return 0;
	return strcmp(name, want) == 0 ? type : 0;
}

int np_py_find_function_obj(const struct np_pymem *m, uint64_t node, size_t span,
			    uint32_t *off, uint64_t *type)
{
	uint64_t words[128];
	size_t n = span / 8 < 128 ? span / 8 : 128;
	int err = rd(m, node, words, n * 8);
	if (err)
		return err;
	for (size_t i = 1; i < n; i++) {   /* word 0: the vtable */
		if (words[i] < 0x10000 || (words[i] & 7))
			continue;
		uint64_t t = np_py_function_class(m, words[i]);
		if (t) {
			*off = (uint32_t)(i * 8);
			*type = t;
			return 0;
		}
	}
	return -ENOENT;
}
