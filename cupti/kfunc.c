/* kfunc.c - the per-function cache (see kfunc.h).
 *
 * Open addressing on the function's address.  A reader that finds the key
 * published sees a finished entry; a writer fills a free slot under the
 * lock, then publishes the key.  Slots are never freed (a process loads
 * a bounded number of kernels; past NP_KFUNC_MAX they go unchecked).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "../kernels/check_abi.h"
#include "kfunc.h"

#define TABLE (NP_KFUNC_MAX * 2)     /* power of two, at most half full */

char *(*np_kfunc_demangle)(const char *, char *, size_t *, int *);

static struct np_kfunc *table;          /* TABLE entries, from np_kfunc_init */
static struct np_kfunc *by_id[NP_KFUNC_MAX + 1];
static uint32_t nfuncs;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int np_kfunc_init(void)
{
	if (!table)
		table = calloc(TABLE, sizeof(*table));
	return table ? 0 : -1;
}

static uint32_t hash(uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (uint32_t)key & (TABLE - 1);
}

void np_kfunc_short_name(const char *demangled, char *out, size_t len)
{
	/* the argument list is the last top-level '(': template arguments
	 * may hold parentheses of their own, so count '<' '>' depth */
	size_t n = strlen(demangled), cut = n;
	int depth = 0;
	for (size_t i = 0; i < n; i++) {
		char c = demangled[i];
		if (c == '<')
			depth++;
		else if (c == '>' && depth)
			depth--;
		else if (c == '(' && depth == 0 && i > 0) {
			/* "(anonymous namespace)::" is part of the name */
			if (strncmp(demangled + i, "(anonymous namespace)", 21) == 0) {
				i += 20;
				continue;
			}
			cut = i;
			break;
		}
	}
	if (cut >= len)
		cut = len - 1;
	memcpy(out, demangled, cut);
	out[cut] = 0;
}

static void fill(struct np_kfunc *f, uint64_t key, const char *mangled,
		 np_kfunc_layout_fn layout, void *arg)
{
	char *dem = NULL;
	int status = -1;
	if (mangled && np_kfunc_demangle)
		dem = np_kfunc_demangle(mangled, NULL, NULL, &status);
	const char *name = dem && status == 0 ? dem : mangled ? mangled : "?";
	np_kfunc_short_name(name, f->name, sizeof(f->name));
	f->ours = strncmp(name, NP_CHECK_KERNEL_PREFIX, strlen(NP_CHECK_KERNEL_PREFIX)) == 0;
	np_kdecode_classify(name, &f->info);
	if (layout(key, &f->params, arg))
		memset(&f->params, 0, sizeof(f->params));
	free(dem);
}

struct np_kfunc *np_kfunc_get(uint64_t key, const char *mangled, np_kfunc_layout_fn layout,
			      void *arg)
{
	if (!table)
		return NULL;
	uint32_t h = hash(key);
	for (uint32_t i = 0; i < TABLE; i++) {
		struct np_kfunc *f = &table[(h + i) & (TABLE - 1)];
		uint64_t k = __atomic_load_n(&f->key, __ATOMIC_ACQUIRE);
		if (k == key)
			return f;
		if (k == 0)
			break;
	}
	/* first sight: fill a slot under the lock (another thread may be
	 * doing the same function: look again once we hold it) */
	struct np_kfunc *res = NULL;
	pthread_mutex_lock(&lock);
	for (uint32_t i = 0; i < TABLE; i++) {
		struct np_kfunc *f = &table[(h + i) & (TABLE - 1)];
		if (f->key == key) {
			res = f;
			break;
		}
		if (f->key == 0) {
			if (nfuncs == NP_KFUNC_MAX)
				break;
			fill(f, key, mangled, layout, arg);
			f->id = ++nfuncs;
			by_id[f->id] = f;
			__atomic_store_n(&f->key, key, __ATOMIC_RELEASE);
			res = f;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	return res;
}

struct np_kfunc *np_kfunc_by_id(uint32_t id)
{
	return id && id <= NP_KFUNC_MAX ? by_id[id] : NULL;
}

int np_kfunc_top_undecoded(struct np_kfunc **out, int max)
{
	uint32_t n = __atomic_load_n(&nfuncs, __ATOMIC_ACQUIRE);
	int k = 0;
	for (uint32_t id = 1; id <= n && max > 0; id++) {
		struct np_kfunc *f = by_id[id];
		uint64_t u = f ? __atomic_load_n(&f->undecoded, __ATOMIC_RELAXED) : 0;
		if (!u)
			continue;
		/* insertion into out[0..k), most first; a later equal one goes after */
		int at = k < max ? k++ : max;
		while (at > 0 && __atomic_load_n(&out[at - 1]->undecoded, __ATOMIC_RELAXED) < u) {
			if (at < max)
				out[at] = out[at - 1];
			at--;
		}
		if (at < max)
			out[at] = f;
	}
	return k;
}

int np_kfunc_no_layout(uint64_t key, struct np_kparams *out, void *arg)
{
	(void)key;
	(void)arg;
	memset(out, 0, sizeof(*out));
	return 0;
}
