/* triton.c - a Triton kernel's outputs, told by its Python call (triton.h). */
#include <string.h>
#include "triton.h"

/* The plan of this thread's call in progress.  Written by the wrapper and
 * read by the launch callback on the same thread: no lock. */
static __thread struct {
	int pending;
	char name[NP_TRITON_NAME];
	int n;
	struct np_triton_arg args[NP_TRITON_ARGS];
} plan;

int np_triton_dtype(const char *type)
{
	static const struct {
		const char *name;
		enum np_dtype dt;
	} types[] = {
		{ "*fp32", NP_DT_F32 }, { "*fp64", NP_DT_F64 }, { "*fp16", NP_DT_F16 },
		{ "*bf16", NP_DT_BF16 }, { "*fp8e4nv", NP_DT_F8E4M3 }, { "*fp8e5", NP_DT_F8E5M2 },
	};
	for (size_t i = 0; type && i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(type, types[i].name) == 0)
			return (int)types[i].dt;
	return -1;
}

void np_triton_next(const char *name, const struct np_triton_arg *args, int n)
{
	size_t len = name ? strlen(name) : 0;
	plan.pending = 0;
	if (!len || n <= 0)
		return;
	if (len >= sizeof(plan.name))
		len = sizeof(plan.name) - 1;   /* as np_kfunc_short_name cuts it */
	memcpy(plan.name, name, len);
	plan.name[len] = 0;
	plan.n = n < NP_TRITON_ARGS ? n : NP_TRITON_ARGS;
	memcpy(plan.args, args, (size_t)plan.n * sizeof(*args));
	plan.pending = 1;
}

void np_triton_done(void)
{
	plan.pending = 0;
}

int np_triton_pending(void)
{
	return plan.pending;
}

static int among(uint64_t ptr, const uint64_t *words, int nw)
{
	for (int i = 0; i < nw; i++)
		if (words[i] == ptr)
			return 1;
	return 0;
}

static int is_output(const struct np_triton_arg *a)
{
	return a->role == NP_TRITON_WRITTEN || a->role == NP_TRITON_UPDATED;
}

int np_triton_claim(const char *name, const uint64_t *words, int nw, struct np_kbuf *outs,
		    int max_out, struct np_kread *rd, int max_rd, int *nr)
{
	*nr = 0;
	if (!plan.pending || !name || strcmp(name, plan.name) != 0)
		return -1;
	/* every output among the words: this launch writes the tensors the
	 * call was given, not an autotuning run's copies of them */
	int n_out = 0;
	for (int i = 0; i < plan.n; i++) {
		const struct np_triton_arg *a = &plan.args[i];
		if (!is_output(a))
			continue;
		if (!a->ptr || !a->numel || !among(a->ptr, words, nw))
			return -1;
		n_out++;
	}
	if (!n_out || n_out > max_out)
		return -1;
	int k = 0;
	for (int i = 0; i < plan.n; i++) {
		const struct np_triton_arg *a = &plan.args[i];
		if (!is_output(a)) {
			if (*nr < max_rd && a->ptr && a->numel && among(a->ptr, words, nw))
				rd[(*nr)++] = (struct np_kread){ .ptr = a->ptr, .numel = a->numel,
								 .dtype = a->dtype };
			continue;
		}
		struct np_kbuf *b = &outs[k++];
		*b = (struct np_kbuf){ .ptr = a->ptr, .numel = a->numel, .dtype = a->dtype,
				       .how = NP_KH_TRITON, .n_in = -1 };
		if (a->role != NP_TRITON_UPDATED)
			continue;
		/* its old values are read: its own address first, then the
		 * launch's other words, as many as in[] holds */
		b->in[0] = a->ptr;
		b->n_in = 1;
		for (int w = 0; w < nw && b->n_in < NP_KD_BUF_INPUTS; w++)
			if (words[w] != a->ptr)
				b->in[b->n_in++] = words[w];
	}
	plan.pending = 0;
	return k;
}
