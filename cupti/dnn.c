/* dnn.c - what one cuDNN batch normalisation call writes and reads (dnn.h). */
#include <string.h>
#include "dnn.h"

int np_dnn_dtype(int cudnn_dtype)
{
	/* cudnnDataType_t (cudnn_graph.h) */
	switch (cudnn_dtype) {
	case 0: return NP_DT_F32;       /* CUDNN_DATA_FLOAT */
	case 1: return NP_DT_F64;       /* CUDNN_DATA_DOUBLE */
	case 2: return NP_DT_F16;       /* CUDNN_DATA_HALF */
	case 9: return NP_DT_BF16;      /* CUDNN_DATA_BFLOAT16 */
	case 12: return NP_DT_F8E4M3;   /* CUDNN_DATA_FP8_E4M3 */
	case 13: return NP_DT_F8E5M2;   /* CUDNN_DATA_FP8_E5M2 */
	}
	return -1;
}

uint64_t np_dnn_dense_numel64(int n, const int64_t *dims, const int64_t *strides)
{
	if (n < 1 || n > NP_DNN_MAX_DIMS)
		return 0;
	/* walk the dimensions from the innermost (smallest stride) out: each
	 * must start where the ones inside it end */
	int used[NP_DNN_MAX_DIMS] = { 0 };
	uint64_t expect = 1, numel = 1;
	for (int k = 0; k < n; k++) {
		int best = -1;
		for (int i = 0; i < n; i++) {
			if (dims[i] < 1 || strides[i] < 0)
				return 0;
			/* a dimension of one element may have any stride */
			if (!used[i] && (best < 0 || (dims[i] > 1 && (dims[best] == 1 ||
								      strides[i] < strides[best]))))
				best = i;
		}
		used[best] = 1;
		if (dims[best] > 1 && (uint64_t)strides[best] != expect)
			return 0;
		if ((uint64_t)dims[best] > (1ull << 40) / numel)
			return 0;
		numel *= (uint64_t)dims[best];
		expect = numel;
	}
	return numel;
}

uint64_t np_dnn_dense_numel(int n, const int *dims, const int *strides)
{
	if (n < 1 || n > NP_DNN_MAX_DIMS)
		return 0;
	int64_t d[NP_DNN_MAX_DIMS], s[NP_DNN_MAX_DIMS];
	for (int i = 0; i < n; i++) {
		d[i] = dims[i];
		s[i] = strides[i];
	}
	return np_dnn_dense_numel64(n, d, s);
}

int np_dnn_bn_plan(const struct np_dnn_bn *c, struct np_gemm_plan *p)
{
	memset(p, 0, sizeof(*p));
	int ydt = np_dnn_dtype(c->y_dtype), xdt = np_dnn_dtype(c->x_dtype);
	uint64_t yn = np_dnn_dense_numel(c->nb, c->dims, c->y_strides);
	uint64_t xn = np_dnn_dense_numel(c->nb, c->dims, c->x_strides);
	if (!c->y || ydt < 0 || !yn)
		return -1;
	p->out = (struct np_kbuf){ .ptr = c->y, .numel = yn, .dtype = (enum np_dtype)ydt,
				   .how = NP_KH_GEMM };
	/* x and the params (y is among them only in place: y == x) */
	uint64_t in[1 + 4] = { c->x, c->params[0], c->params[1], c->params[2], c->params[3] };
	for (int i = 0; i < 5; i++)
		np_gemm_add_input(&p->out, in[i]);
	if (c->x && xdt >= 0 && xn)
		p->rd[p->n_rd++] = (struct np_kread){ .ptr = c->x, .numel = xn,
						      .dtype = (enum np_dtype)xdt };
	return 0;
}

uint64_t np_dnn_operand_numel(const struct np_dnn_operand *o)
{
	if (!o->packed)
		return np_dnn_dense_numel(o->nb, o->dims, o->strides);
	if (o->nb < 1 || o->nb > NP_DNN_MAX_DIMS)
		return 0;
	uint64_t n = 1;
	for (int i = 0; i < o->nb; i++) {
		if (o->dims[i] < 1 || (uint64_t)o->dims[i] > (1ull << 40) / n)
			return 0;
		n *= (uint64_t)o->dims[i];
	}
	return n;
}

int np_dnn_conv_plan(const struct np_dnn_conv *c, struct np_gemm_plan *p)
{
	memset(p, 0, sizeof(*p));
	int dt = np_dnn_dtype(c->out.dtype);
	uint64_t n = np_dnn_operand_numel(&c->out);
	if (!c->out.ptr || dt < 0 || !n)
		return -1;
	p->out = (struct np_kbuf){ .ptr = c->out.ptr, .numel = n, .dtype = (enum np_dtype)dt,
				   .how = NP_KH_GEMM };
	for (int i = 0; i < 2; i++) {
		const struct np_dnn_operand *in = &c->in[i];
		np_gemm_add_input(&p->out, in->ptr);
		int idt = np_dnn_dtype(in->dtype);
		uint64_t in_n = np_dnn_operand_numel(in);
		if (in->ptr && idt >= 0 && in_n)
			p->rd[p->n_rd++] = (struct np_kread){ .ptr = in->ptr, .numel = in_n,
							      .dtype = (enum np_dtype)idt };
	}
	np_gemm_add_input(&p->out, c->extra[0]);
	np_gemm_add_input(&p->out, c->extra[1]);
	if (c->beta_set)
		np_gemm_add_input(&p->out, c->out.ptr);
	return 0;
}
