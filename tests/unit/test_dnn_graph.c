/* test_dnn_graph.c - cupti/dnn_graph.c: a cuDNN graph's output and reads
 * from its backend descriptors, built as torch's Conv_v8.cpp builds them
 * through cudnn_frontend (tensors 'x', 'w', 'y'; one convolution; the
 * graph; heuristics' engine configs; a plan; a variant pack per call). */
#include <criterion/criterion.h>
#include <stdbool.h>
#include "../../cupti/dnn_graph.h"
#include "plan_inputs.h"

#define X 0x7f0000100000ull
#define Y 0x7f0000200000ull
#define W 0x7f0000300000ull
#define Z 0x7f0000400000ull
#define B 0x7f0000500000ull

enum { FLOAT = 0, HALF = 2, INT32 = 4 };   /* cudnnDataType_t */

/* a descriptor handle: any distinct address */
static void *desc(unsigned i)
{
	return (void *)(uintptr_t)(0x5550000ull + 32ull * i);
}

static void set1(void *d, int attr, int atype, const void *v)
{
	np_dg_set(d, attr, atype, 1, v);
}

static void set_ref(void *d, int attr, void *ref)
{
	set1(d, attr, NP_DGT_BACKEND_DESCRIPTOR, &ref);
}

/* a finalized tensor descriptor: 4 dims, NCHW strides unless given */
static void *tensor(unsigned i, int64_t uid, const int64_t *dims, const int64_t *strides,
		    int dtype, bool virt)
{
	void *d = desc(i);
	cr_assert_eq(np_dg_created(d, NP_DG_TENSOR), 0);
	int64_t nchw[4] = { dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1 };
	np_dg_set(d, NP_DGA_TENSOR_DIMS, NP_DGT_INT64, 4, dims);
	np_dg_set(d, NP_DGA_TENSOR_STRIDES, NP_DGT_INT64, 4, strides ? strides : nchw);
	set1(d, NP_DGA_TENSOR_UID, NP_DGT_INT64, &uid);
	set1(d, NP_DGA_TENSOR_DTYPE, NP_DGT_DATA_TYPE, &dtype);
	set1(d, NP_DGA_TENSOR_VIRTUAL, NP_DGT_BOOLEAN, &virt);
	return d;
}

static const int64_t XD[4] = { 8, 16, 12, 12 }, WD[4] = { 32, 16, 3, 3 },
		     YD[4] = { 8, 32, 12, 12 };

/* an operation of type with its tensors set as attrs[0..n) */
static void *operation(unsigned i, int type, const int *attrs, void *const *ts, int n)
{
	void *op = desc(i);
	cr_assert_eq(np_dg_created(op, type), 0);
	for (int k = 0; k < n; k++)
		set_ref(op, attrs[k], ts[k]);
	return op;
}

/* one more tensor attribute on an operation (a select's condition T) */
static void operation_more(void *op, const int *attr, void *t)
{
	set_ref(op, attr[0], t);
}

/* graph of ops[0..n), heuristics on it, two engine configs from its
 * results, a plan of the second: the plan */
static void *plan_of_graph(unsigned i, void *const *ops, int n)
{
	void *g = desc(i), *heur = desc(i + 1), *cfg[2] = { desc(i + 2), desc(i + 3) };
	void *plan = desc(i + 4);
	cr_assert_eq(np_dg_created(g, NP_DG_OPGRAPH), 0);
	np_dg_set(g, NP_DGA_GRAPH_OPS, NP_DGT_BACKEND_DESCRIPTOR, n, ops);
	cr_assert_eq(np_dg_created(heur, NP_DG_ENGINEHEUR), 0);
	set_ref(heur, NP_DGA_HEUR_GRAPH, g);
	for (int k = 0; k < 2; k++)
		cr_assert_eq(np_dg_created(cfg[k], NP_DG_ENGINECFG), 0);
	np_dg_results(heur, cfg, 2);
	cr_assert_eq(np_dg_created(plan, NP_DG_PLAN), 0);
	set_ref(plan, NP_DGA_PLAN_CFG, cfg[1]);
	return plan;
}

/* a variant pack of uids[k] at ptrs[k] */
static void *pack(unsigned i, const int64_t *uids, const uint64_t *ptrs, int n)
{
	void *v = desc(i);
	cr_assert_eq(np_dg_created(v, NP_DG_VARIANT_PACK), 0);
	void *p[NP_DG_TENSORS + 1];
	cr_assert_leq(n, NP_DG_TENSORS + 1);
	for (int k = 0; k < n; k++)
		p[k] = (void *)(uintptr_t)ptrs[k];
	np_dg_set(v, NP_DGA_PACK_POINTERS, NP_DGT_VOID_PTR, n, p);
	np_dg_set(v, NP_DGA_PACK_UIDS, NP_DGT_INT64, n, uids);
	return v;
}

static const int64_t XWY[3] = { 'x', 'y', 'w' };
static const uint64_t XWY_AT[3] = { X, Y, W };

/* torch's forward convolution: y = conv(x, w), beta as given (NULL: unset) */
static void *conv_plan(const float *beta)
{
	void *ts[3] = { tensor(1, 'x', XD, NULL, FLOAT, false),
			tensor(2, 'w', WD, NULL, FLOAT, false),
			tensor(3, 'y', YD, NULL, FLOAT, false) };
	int attrs[3] = { NP_DGA_CONV_FWD_X, NP_DGA_CONV_FWD_W, NP_DGA_CONV_FWD_Y };
	void *op = operation(10, NP_DG_CONV_FWD, attrs, ts, 3);
	if (beta)
		set1(op, NP_DGA_CONV_FWD_BETA, NP_DGT_FLOAT, beta);
	return plan_of_graph(20, &op, 1);
}

static void reset(void)
{
	np_dg_reset();
}

TestSuite(dnn_graph, .init = reset);

Test(dnn_graph, a_forward_convolution_writes_y_whole_and_reads_x_and_w)
{
	float zero = 0.0f;
	void *plan = conv_plan(&zero);
	struct np_gemm_plan p;
	cr_assert_eq(np_dg_plan(plan, pack(40, XWY, XWY_AT, 3), &p), 0);
	cr_expect_eq(p.out.ptr, Y);
	cr_expect_eq(p.out.numel, 8 * 32 * 12 * 12);
	cr_expect_eq(p.out.dtype, NP_DT_F32);
	cr_expect_eq(p.out.n_in, 2);
	cr_expect(has_input(&p, X) && has_input(&p, W));
	cr_expect(!has_input(&p, Y), "beta 0: y's old values are nobody's input");
	cr_assert_eq(p.n_rd, 2);
	uint64_t a = p.rd[0].ptr, b = p.rd[1].ptr;
	cr_expect((a == X && b == W) || (a == W && b == X));
	for (int k = 0; k < 2; k++)
		cr_expect_eq(p.rd[k].numel, p.rd[k].ptr == X ? 8 * 16 * 12 * 12 : 32 * 16 * 3 * 3);
	struct np_dg_stats s;
	np_dg_stats(&s);
	cr_expect_eq(s.planned, 1);
	cr_expect_eq(s.unplanned, 0);
}

Test(dnn_graph, beta_set_reads_the_outputs_old_values)
{
	float one = 1.0f;
	struct np_gemm_plan p;
	cr_assert_eq(np_dg_plan(conv_plan(&one), pack(40, XWY, XWY_AT, 3), &p), 0);
	cr_expect(has_input(&p, Y));
	cr_expect_eq(p.out.ptr, Y);
}

Test(dnn_graph, beta_never_set_is_cudnns_default_zero)
{
	struct np_gemm_plan p;
	cr_assert_eq(np_dg_plan(conv_plan(NULL), pack(40, XWY, XWY_AT, 3), &p), 0);
	cr_expect(!has_input(&p, Y));
	double dzero = 0.0, done = 1.0;
	void *op = desc(10);   /* conv_plan's operation: a double beta, as for double data */
	set1(op, NP_DGA_CONV_FWD_BETA, NP_DGT_DOUBLE, &done);
	np_dg_set(desc(20), NP_DGA_GRAPH_OPS, NP_DGT_BACKEND_DESCRIPTOR, 1, &op);
	set_ref(desc(21), NP_DGA_HEUR_GRAPH, desc(20));
	void *cfg = desc(23);
	np_dg_results(desc(21), &cfg, 1);
	set_ref(desc(24), NP_DGA_PLAN_CFG, cfg);
	cr_assert_eq(np_dg_plan(desc(24), pack(41, XWY, XWY_AT, 3), &p), 0);
	cr_expect(has_input(&p, Y), "a graph rebuilt on beta 1.0 reads y");
	set1(op, NP_DGA_CONV_FWD_BETA, NP_DGT_DOUBLE, &dzero);
	cr_assert_eq(np_dg_plan(desc(24), pack(42, XWY, XWY_AT, 3), &p), 0);
	cr_expect(has_input(&p, Y), "the plan keeps the graph it was built on");
}

Test(dnn_graph, backward_data_writes_dx_and_backward_filter_dw)
{
	/* torch passes grad_input as 'x', grad_output as 'y' */
	void *ts[3] = { tensor(1, 'x', XD, NULL, FLOAT, false),
			tensor(2, 'w', WD, NULL, FLOAT, false),
			tensor(3, 'y', YD, NULL, FLOAT, false) };
	int data[3] = { NP_DGA_CONV_BWD_DATA_DX, NP_DGA_CONV_BWD_DATA_W,
			NP_DGA_CONV_BWD_DATA_DY };
	void *op = operation(10, NP_DG_CONV_BWD_DATA, data, ts, 3);
	struct np_gemm_plan p;
	cr_assert_eq(np_dg_plan(plan_of_graph(20, &op, 1), pack(40, XWY, XWY_AT, 3), &p), 0);
	cr_expect_eq(p.out.ptr, X);
	cr_expect_eq(p.out.numel, 8 * 16 * 12 * 12);
	cr_expect(has_input(&p, Y) && has_input(&p, W) && !has_input(&p, X));

	int filter[3] = { NP_DGA_CONV_BWD_FILTER_X, NP_DGA_CONV_BWD_FILTER_DW,
			  NP_DGA_CONV_BWD_FILTER_DY };
	op = operation(11, NP_DG_CONV_BWD_FILTER, filter, ts, 3);
	cr_assert_eq(np_dg_plan(plan_of_graph(30, &op, 1), pack(41, XWY, XWY_AT, 3), &p), 0);
	cr_expect_eq(p.out.ptr, W);
	cr_expect_eq(p.out.numel, 32 * 16 * 3 * 3);
	cr_expect(has_input(&p, X) && has_input(&p, Y) && !has_input(&p, W));
}

Test(dnn_graph, a_plan_built_from_an_engine_outlives_its_descriptors)
{
	void *ts[3] = { tensor(1, 'x', XD, NULL, FLOAT, false),
			tensor(2, 'w', WD, NULL, FLOAT, false),
			tensor(3, 'y', YD, NULL, FLOAT, false) };
	int attrs[3] = { NP_DGA_CONV_FWD_X, NP_DGA_CONV_FWD_W, NP_DGA_CONV_FWD_Y };
	void *op = operation(10, NP_DG_CONV_FWD, attrs, ts, 3);
	void *g = desc(20), *engine = desc(21), *cfg = desc(22), *plan = desc(23);
	cr_assert_eq(np_dg_created(g, NP_DG_OPGRAPH), 0);
	np_dg_set(g, NP_DGA_GRAPH_OPS, NP_DGT_BACKEND_DESCRIPTOR, 1, &op);
	cr_assert_eq(np_dg_created(engine, NP_DG_ENGINE), 0);
	set_ref(engine, NP_DGA_ENGINE_GRAPH, g);
	cr_assert_eq(np_dg_created(cfg, NP_DG_ENGINECFG), 0);
	set_ref(cfg, NP_DGA_CFG_ENGINE, engine);
	cr_assert_eq(np_dg_created(plan, NP_DG_PLAN), 0);
	set_ref(plan, NP_DGA_PLAN_CFG, cfg);
	void *gone[] = { ts[0], ts[1], ts[2], op, g, engine, cfg };
	for (int k = 0; k < 7; k++)
		np_dg_destroyed(gone[k]);
	struct np_gemm_plan p;
	cr_assert_eq(np_dg_plan(plan, pack(40, XWY, XWY_AT, 3), &p), 0);
	cr_expect_eq(p.out.ptr, Y);
	np_dg_destroyed(plan);
	cr_expect_eq(np_dg_plan(plan, pack(41, XWY, XWY_AT, 3), &p), -1, "a destroyed plan");
}

/* cudnn_convolution_add_relu: y = relu(conv(x, w) * a1 + z * a2 + b),
 * its intermediates virtual */
Test(dnn_graph, a_fused_graph_writes_its_one_non_virtual_output)
{
	static const int64_t BD[4] = { 1, 32, 1, 1 };
	void *x = tensor(1, 'x', XD, NULL, FLOAT, false), *w = tensor(2, 'w', WD, NULL, FLOAT, false);
	void *z = tensor(3, 'z', YD, NULL, FLOAT, false), *b = tensor(4, 'b', BD, NULL, FLOAT, false);
	void *y = tensor(5, 'y', YD, NULL, FLOAT, false);
	void *v1 = tensor(6, 'C', YD, NULL, FLOAT, true), *v2 = tensor(7, 'A', YD, NULL, FLOAT, true);
	void *v3 = tensor(8, 'B', YD, NULL, FLOAT, true);
	int conv_attrs[3] = { NP_DGA_CONV_FWD_X, NP_DGA_CONV_FWD_W, NP_DGA_CONV_FWD_Y };
	int pw_attrs[3] = { NP_DGA_PW_X, NP_DGA_PW_B, NP_DGA_PW_Y };
	int relu_attrs[2] = { NP_DGA_PW_X, NP_DGA_PW_Y };
	void *ops[4] = { operation(10, NP_DG_CONV_FWD, conv_attrs, (void *[]){ x, w, v1 }, 3),
			 operation(11, NP_DG_POINTWISE, pw_attrs, (void *[]){ v1, z, v2 }, 3),
			 operation(12, NP_DG_POINTWISE, pw_attrs, (void *[]){ v2, b, v3 }, 3),
			 operation(13, NP_DG_POINTWISE, relu_attrs, (void *[]){ v3, y }, 2) };
	int64_t uids[5] = { 'x', 'y', 'w', 'z', 'b' };
	uint64_t at[5] = { X, Y, W, Z, B };
	struct np_gemm_plan p;
	cr_assert_eq(np_dg_plan(plan_of_graph(20, ops, 4), pack(40, uids, at, 5), &p), 0);
	cr_expect_eq(p.out.ptr, Y);
	cr_expect_eq(p.out.n_in, 4);
	cr_expect(has_input(&p, X) && has_input(&p, W) && has_input(&p, Z) && has_input(&p, B));
	cr_assert_eq(p.n_rd, 2, "the two largest inputs");
	uint64_t a = p.rd[0].ptr, c = p.rd[1].ptr;
	cr_expect((a == X && c == Z) || (a == Z && c == X), "x and z, not w or the bias");
}

Test(dnn_graph, what_cannot_be_named_is_not_planned)
{
	struct np_gemm_plan p;
	float zero = 0.0f;
	void *plan = conv_plan(&zero);
	int64_t two[2] = { 'x', 'y' };
	cr_expect_eq(np_dg_plan(plan, pack(40, two, XWY_AT, 2), &p), -1,
		     "w missing from the variant pack");
	int64_t long_uids[NP_DG_TENSORS + 1] = { 'x', 'y', 'w' };
	uint64_t long_at[NP_DG_TENSORS + 1] = { X, Y, W };
	for (int k = 3; k <= NP_DG_TENSORS; k++)
		long_uids[k] = k, long_at[k] = (uint64_t)k;
	cr_expect_eq(np_dg_plan(plan, pack(41, long_uids, long_at, NP_DG_TENSORS + 1), &p), -1,
		     "a pack longer than the table keeps");
	cr_expect_eq(np_dg_plan(desc(99), pack(42, XWY, XWY_AT, 3), &p), -1,
		     "a plan built before the agent came");
	cr_expect_eq(np_dg_plan(plan, desc(98), &p), -1, "a variant pack not seen built");

	/* y a view with gaps */
	np_dg_reset();
	int64_t gaps[4] = { 32 * 12 * 24, 12 * 24, 24, 1 };
	void *ts[3] = { tensor(1, 'x', XD, NULL, FLOAT, false),
			tensor(2, 'w', WD, NULL, FLOAT, false),
			tensor(3, 'y', YD, gaps, FLOAT, false) };
	int attrs[3] = { NP_DGA_CONV_FWD_X, NP_DGA_CONV_FWD_W, NP_DGA_CONV_FWD_Y };
	void *op = operation(10, NP_DG_CONV_FWD, attrs, ts, 3);
	cr_expect_eq(np_dg_plan(plan_of_graph(20, &op, 1), pack(40, XWY, XWY_AT, 3), &p), -1);

	/* an integer output */
	np_dg_reset();
	ts[0] = tensor(1, 'x', XD, NULL, FLOAT, false);
	ts[1] = tensor(2, 'w', WD, NULL, FLOAT, false);
	ts[2] = tensor(3, 'y', YD, NULL, INT32, false);
	op = operation(10, NP_DG_CONV_FWD, attrs, ts, 3);
	cr_expect_eq(np_dg_plan(plan_of_graph(20, &op, 1), pack(40, XWY, XWY_AT, 3), &p), -1);

	/* an operation of a kind not read (a norm's forward, type 29) */
	np_dg_reset();
	ts[2] = tensor(3, 'y', YD, NULL, FLOAT, false);
	ts[0] = tensor(1, 'x', XD, NULL, FLOAT, false);
	ts[1] = tensor(2, 'w', WD, NULL, FLOAT, false);
	void *ops[2] = { operation(10, NP_DG_CONV_FWD, attrs, ts, 3), desc(11) };
	cr_expect_eq(np_dg_created(desc(11), 29), 0, "not remembered, not refused");
	cr_expect_eq(np_dg_plan(plan_of_graph(20, ops, 2), pack(40, XWY, XWY_AT, 3), &p), -1);

	/* two outputs, one of them an integer: neither is planned, as the
	 * other's readers would take it for clean */
	np_dg_reset();
	void *o = tensor(1, 'o', YD, NULL, FLOAT, false), *s = tensor(2, 's', XD, NULL, INT32, false);
	void *q = tensor(3, 'q', YD, NULL, FLOAT, false);
	int red[2] = { NP_DGA_REDUCTION_X, NP_DGA_REDUCTION_Y };
	int mm[3] = { NP_DGA_MATMUL_A, NP_DGA_MATMUL_B, NP_DGA_MATMUL_C };
	void *two_out[2] = { operation(10, NP_DG_REDUCTION, red, (void *[]){ q, s }, 2),
			     operation(11, NP_DG_MATMUL, mm, (void *[]){ q, q, o }, 3) };
	int64_t qso[3] = { 'q', 's', 'o' };
	uint64_t qso_at[3] = { X, Y, W };
	cr_expect_eq(np_dg_plan(plan_of_graph(20, two_out, 2), pack(40, qso, qso_at, 3), &p), -1);
	cr_expect_eq(np_dg_plan(plan_of_graph(30, two_out + 1, 1), pack(41, qso, qso_at, 3), &p),
		     0, "the matmul alone has one output");
	cr_expect_eq(p.out.ptr, W);
	cr_expect_eq(p.n_more, 0);

	struct np_dg_stats st;
	np_dg_stats(&st);
	cr_expect_eq(st.planned, 1);
	cr_expect_eq(st.unplanned, 1);
}

/* ---- attention, as cudnn_frontend's SDPA nodes lower it ---- */

enum { BF16 = 9, INT64 = 10 };
#define Q 0x7f0001000000ull
#define K 0x7f0002000000ull
#define V 0x7f0003000000ull
#define O 0x7f0004000000ull
#define STATS 0x7f0005000000ull
#define DO 0x7f0006000000ull
#define DQ 0x7f0007000000ull
#define DK 0x7f0008000000ull
#define DV 0x7f0009000000ull
#define SUMS 0x7f000a000000ull
#define DQ_ACC 0x7f000b000000ull

/* (b, h, s, d) = (2, 4, 64, 32) in torch's (b, s, h, d) memory; the
 * statistics (b, h, s, 1) */
static const int64_t BHSD[4] = { 2, 4, 64, 32 }, BSHD_STRIDES[4] = { 64 * 4 * 32, 32, 4 * 32, 1 };
static const int64_t BHS1[4] = { 2, 4, 64, 1 }, BHSS[4] = { 2, 4, 64, 64 };
#define QKV_NUMEL (2 * 4 * 64 * 32)
#define STATS_NUMEL (2 * 4 * 64)

static unsigned next_desc;

static void *nv(int64_t uid, const int64_t *dims, const int64_t *strides, int dtype)
{
	return tensor(next_desc++, uid, dims, strides, dtype, false);
}

static void *virt(const int64_t *dims)
{
	unsigned i = next_desc++;
	return tensor(i, 1000 + i, dims, NULL, FLOAT, true);
}

/* a scalar passed by value (the scale, -inf for the mask): no memory */
static void *by_value(void)
{
	unsigned i = next_desc++;
	void *t = tensor(i, 2000 + i, (int64_t[]){ 1, 1, 1, 1 }, NULL, FLOAT, false);
	bool yes = true;
	set1(t, NP_DGA_TENSOR_BY_VALUE, NP_DGT_BOOLEAN, &yes);
	return t;
}

static void *pw(void *x, void *b, void *y)
{
	int attrs[3] = { NP_DGA_PW_X, NP_DGA_PW_Y, NP_DGA_PW_B };
	return operation(next_desc++, NP_DG_POINTWISE, attrs, (void *[]){ x, y, b }, b ? 3 : 2);
}

static void *matmul(void *a, void *b, void *c)
{
	int attrs[3] = { NP_DGA_MATMUL_A, NP_DGA_MATMUL_B, NP_DGA_MATMUL_C };
	return operation(next_desc++, NP_DG_MATMUL, attrs, (void *[]){ a, b, c }, 3);
}

static void *reduction(void *x, void *y)
{
	int attrs[2] = { NP_DGA_REDUCTION_X, NP_DGA_REDUCTION_Y };
	return operation(next_desc++, NP_DG_REDUCTION, attrs, (void *[]){ x, y }, 2);
}

/* The forward with the statistics training keeps: S = Q K^T * scale,
 * a causal mask (index generation, a compare, a select of -inf), a
 * softmax whose max and sum give the statistics (m + log z), O = P V.
 * With dropout, an RNG mask multiplies P.  ops[] gets the operations. */
static int sdpa_forward(void **ops, bool dropout)
{
	void *q = nv('q', BHSD, BSHD_STRIDES, BF16), *k = nv('k', BHSD, BSHD_STRIDES, BF16);
	void *v = nv('v', BHSD, BSHD_STRIDES, BF16), *o = nv('o', BHSD, BSHD_STRIDES, BF16);
	void *stats = nv('s', BHS1, NULL, FLOAT);
	void *s = virt(BHSS), *s1 = virt(BHSS), *row = virt(BHSS), *col = virt(BHSS);
	void *mask = virt(BHSS), *s2 = virt(BHSS), *m = virt(BHS1), *s3 = virt(BHSS);
	void *e = virt(BHSS), *z = virt(BHS1), *lz = virt(BHS1), *p = virt(BHSS);
	int n = 0, t_attr[1] = { NP_DGA_PW_T };
	ops[n++] = matmul(q, k, s);
	ops[n++] = pw(s, by_value(), s1);
	ops[n++] = pw(s1, NULL, row);
	ops[n++] = pw(s1, NULL, col);
	ops[n++] = pw(row, col, mask);
	ops[n++] = pw(s1, by_value(), s2);
	operation_more(ops[n - 1], t_attr, mask);
	ops[n++] = reduction(s2, m);
	ops[n++] = pw(s2, m, s3);
	ops[n++] = pw(s3, NULL, e);
	ops[n++] = reduction(e, z);
	ops[n++] = pw(z, NULL, lz);
	ops[n++] = pw(m, lz, stats);
	ops[n++] = pw(e, z, p);
	if (dropout) {
		void *seed = nv('r', (int64_t[]){ 1, 1, 1, 1 }, NULL, INT64);
		void *offset = nv('f', (int64_t[]){ 1, 1, 1, 1 }, NULL, INT64);
		void *rmask = virt(BHSS), *pd = virt(BHSS);
		int rng_attrs[3] = { NP_DGA_RNG_Y, NP_DGA_RNG_SEED, NP_DGA_RNG_OFFSET };
		ops[n++] = operation(next_desc++, NP_DG_RNG, rng_attrs,
				     (void *[]){ rmask, seed, offset }, 3);
		ops[n++] = pw(p, rmask, pd);
		p = pd;
	}
	ops[n++] = matmul(p, v, o);
	return n;
}

static void attention_reset(void)
{
	np_dg_reset();
	next_desc = 100;
}

TestSuite(dnn_attention, .init = attention_reset);

/* the output at ptr in p (out or more), NULL if none */
static const struct np_kbuf *output_at(const struct np_gemm_plan *p, uint64_t ptr)
{
	if (p->out.ptr == ptr)
		return &p->out;
	for (int i = 0; i < p->n_more; i++)
		if (p->more[i].ptr == ptr)
			return &p->more[i];
	return NULL;
}

static int reads(const struct np_kbuf *b, uint64_t ptr)
{
	for (int k = 0; k < b->n_in; k++)
		if (b->in[k] == ptr)
			return 1;
	return 0;
}

Test(dnn_attention, the_forward_checks_o_and_its_statistics_each_judged_on_q_k_v)
{
	void *ops[32];
	int n = sdpa_forward(ops, false);
	int64_t uids[5] = { 'q', 'k', 'v', 'o', 's' };
	uint64_t at[5] = { Q, K, V, O, STATS };
	struct np_gemm_plan p;
	cr_assert_eq(np_dg_plan(plan_of_graph(next_desc, ops, n), pack(900, uids, at, 5), &p), 0);
	cr_assert_eq(p.n_more, 1, "two outputs");
	const struct np_kbuf *o = output_at(&p, O), *st = output_at(&p, STATS);
	cr_assert(o && st);
	cr_expect_eq(o->numel, QKV_NUMEL, "O whole: (b, s, h, d) is dense in any order");
	cr_expect_eq(o->dtype, NP_DT_BF16);
	cr_expect_eq(st->numel, STATS_NUMEL);
	cr_expect_eq(st->dtype, NP_DT_F32);
	for (int i = 0; i < 2; i++) {
		const struct np_kbuf *b = i ? st : o;
		cr_expect_eq(b->n_in, 3, "q, k, v: the by-value scale and -inf have no memory");
		cr_expect(reads(b, Q) && reads(b, K) && reads(b, V));
		cr_expect_eq(b->how, NP_KH_GEMM);
	}
	cr_assert_eq(p.n_rd, 2, "two of q, k, v offered to the generic tier");
	for (int k = 0; k < 2; k++)
		cr_expect(p.rd[k].ptr == Q || p.rd[k].ptr == K || p.rd[k].ptr == V);
}

Test(dnn_attention, dropouts_rng_mask_is_an_operation_read)
{
	void *ops[32];
	int n = sdpa_forward(ops, true);
	int64_t uids[7] = { 'q', 'k', 'v', 'o', 's', 'r', 'f' };
	uint64_t at[7] = { Q, K, V, O, STATS, DO, DQ };
	struct np_gemm_plan p;
	cr_assert_eq(np_dg_plan(plan_of_graph(next_desc, ops, n), pack(900, uids, at, 7), &p), 0,
		     "the RNG operation is known");
	cr_expect_eq(p.n_more, 1);
	cr_expect(output_at(&p, O) && output_at(&p, STATS));
	cr_expect(reads(&p.out, DO) && reads(&p.out, DQ), "the seed and offset are read");
	cr_expect_eq(p.n_rd, 2, "integers never offered: two of q, k, v");
	for (int k = 0; k < p.n_rd; k++)
		cr_expect(p.rd[k].ptr != DO && p.rd[k].ptr != DQ);
}

Test(dnn_attention, the_backward_checks_dq_dk_dv_and_cudnns_own_sums)
{
	void *q = nv('q', BHSD, BSHD_STRIDES, BF16), *k = nv('k', BHSD, BSHD_STRIDES, BF16);
	void *v = nv('v', BHSD, BSHD_STRIDES, BF16), *o = nv('o', BHSD, BSHD_STRIDES, BF16);
	void *dout = nv('O', BHSD, BSHD_STRIDES, BF16), *stats = nv('s', BHS1, NULL, FLOAT);
	void *dq = nv('Q', BHSD, BSHD_STRIDES, BF16), *dk = nv('K', BHSD, BSHD_STRIDES, BF16);
	void *dv = nv('V', BHSD, BSHD_STRIDES, BF16), *sums = nv('u', BHS1, NULL, FLOAT);
	void *dq_acc = nv('a', BHSD, NULL, FLOAT);
	void *t = virt(BHSD), *s = virt(BHSS), *s2 = virt(BHSS), *pr = virt(BHSS);
	void *dp = virt(BHSS), *ds1 = virt(BHSS), *ds = virt(BHSS);
	void *ops[16];
	int n = 0;
	ops[n++] = pw(dout, o, t);
	ops[n++] = reduction(t, sums);          /* rowsum(dO * O), in cuDNN's workspace */
	ops[n++] = matmul(q, k, s);
	ops[n++] = pw(s, stats, s2);
	ops[n++] = pw(s2, NULL, pr);
	ops[n++] = matmul(pr, dout, dv);
	ops[n++] = matmul(dout, v, dp);
	ops[n++] = pw(dp, sums, ds1);
	ops[n++] = pw(pr, ds1, ds);
	ops[n++] = matmul(ds, k, dq_acc);
	ops[n++] = pw(dq_acc, NULL, dq);
	ops[n++] = matmul(ds, q, dk);
	int64_t uids[11] = { 'q', 'k', 'v', 'o', 'O', 's', 'Q', 'K', 'V', 'u', 'a' };
	uint64_t at[11] = { Q, K, V, O, DO, STATS, DQ, DK, DV, SUMS, DQ_ACC };
	struct np_gemm_plan p;
	cr_assert_eq(np_dg_plan(plan_of_graph(next_desc, ops, n), pack(900, uids, at, 11), &p), 0,
		     "eleven tensors: more than a convolution's table held");
	cr_assert_eq(p.n_more, 4, "dQ, dK, dV, the row sums and dQ's float accumulator");
	uint64_t written[5] = { DQ, DK, DV, SUMS, DQ_ACC };
	for (int i = 0; i < 5; i++) {
		const struct np_kbuf *b = output_at(&p, written[i]);
		cr_assert(b, "output %d", i);
		cr_expect_eq(b->numel, i == 3 ? STATS_NUMEL : QKV_NUMEL);
		cr_expect_eq(b->dtype, i >= 3 ? NP_DT_F32 : NP_DT_BF16);
		cr_expect(reads(b, Q) && reads(b, K) && reads(b, V) && reads(b, O) &&
			  reads(b, DO) && reads(b, STATS));
		cr_expect(reads(b, SUMS) && reads(b, DQ_ACC),
			  "read inside the graph: a value there is no birth of a later output");
		cr_expect(!reads(b, DQ) && !reads(b, DK) && !reads(b, DV));
	}
	for (int k = 0; k < p.n_rd; k++)
		cr_expect(p.rd[k].ptr != SUMS && p.rd[k].ptr != DQ_ACC, "written: no read offered");
}

/* cuDNN 9.13's single SDPA operation, as cudnn_frontend builds it when it
 * picks the unified implementation: q, k, v, a by-value scale, O and the
 * statistics, and a subgraph (score modifiers), no tensor */
Test(dnn_attention, the_unified_forward_operation_checks_o_and_its_statistics)
{
	void *q = nv('q', BHSD, BSHD_STRIDES, BF16), *k = nv('k', BHSD, BSHD_STRIDES, BF16);
	void *v = nv('v', BHSD, BSHD_STRIDES, BF16), *o = nv('o', BHSD, BSHD_STRIDES, BF16);
	void *stats = nv('s', BHS1, NULL, FLOAT);
	void *sub = desc(next_desc++);
	cr_assert_eq(np_dg_created(sub, NP_DG_OPGRAPH), 0);
	int attrs[7] = { NP_DGA_SDPA_FWD_Q, NP_DGA_SDPA_FWD_K, NP_DGA_SDPA_FWD_V,
			 NP_DGA_SDPA_FWD_SCALE, NP_DGA_SDPA_FWD_O, NP_DGA_SDPA_FWD_STATS,
			 NP_DGA_SDPA_FWD_SUBGRAPH };
	void *op = operation(next_desc++, NP_DG_SDPA_FWD, attrs,
			     (void *[]){ q, k, v, by_value(), o, stats, sub }, 7);
	int64_t uids[5] = { 'q', 'k', 'v', 'o', 's' };
	uint64_t at[5] = { Q, K, V, O, STATS };
	struct np_gemm_plan p;
	cr_assert_eq(np_dg_plan(plan_of_graph(next_desc, &op, 1), pack(900, uids, at, 5), &p), 0);
	cr_assert_eq(p.n_more, 1);
	const struct np_kbuf *ob = output_at(&p, O), *sb = output_at(&p, STATS);
	cr_assert(ob && sb);
	cr_expect_eq(ob->numel, QKV_NUMEL);
	cr_expect_eq(ob->dtype, NP_DT_BF16);
	cr_expect_eq(sb->numel, STATS_NUMEL);
	cr_expect_eq(sb->dtype, NP_DT_F32);
	cr_expect_eq(ob->n_in, 3);
	cr_expect(reads(ob, Q) && reads(ob, K) && reads(ob, V));
}

Test(dnn_attention, the_unified_backward_operation_checks_dq_dk_dv)
{
	void *q = nv('q', BHSD, BSHD_STRIDES, BF16), *k = nv('k', BHSD, BSHD_STRIDES, BF16);
	void *v = nv('v', BHSD, BSHD_STRIDES, BF16), *o = nv('o', BHSD, BSHD_STRIDES, BF16);
	void *dout = nv('O', BHSD, BSHD_STRIDES, BF16), *stats = nv('s', BHS1, NULL, FLOAT);
	void *dq = nv('Q', BHSD, BSHD_STRIDES, BF16), *dk = nv('K', BHSD, BSHD_STRIDES, BF16);
	void *dv = nv('V', BHSD, BSHD_STRIDES, BF16);
	int attrs[10] = { NP_DGA_SDPA_BWD_Q, NP_DGA_SDPA_BWD_K, NP_DGA_SDPA_BWD_V,
			  NP_DGA_SDPA_BWD_O, NP_DGA_SDPA_BWD_STATS, NP_DGA_SDPA_BWD_DO,
			  NP_DGA_SDPA_BWD_SCALE, NP_DGA_SDPA_BWD_DQ, NP_DGA_SDPA_BWD_DK,
			  NP_DGA_SDPA_BWD_DV };
	void *op = operation(next_desc++, NP_DG_SDPA_BWD, attrs,
			     (void *[]){ q, k, v, o, stats, dout, by_value(), dq, dk, dv }, 10);
	int64_t uids[9] = { 'q', 'k', 'v', 'o', 's', 'O', 'Q', 'K', 'V' };
	uint64_t at[9] = { Q, K, V, O, STATS, DO, DQ, DK, DV };
	struct np_gemm_plan p;
	cr_assert_eq(np_dg_plan(plan_of_graph(next_desc, &op, 1), pack(900, uids, at, 9), &p), 0,
		     "nine tensors");
	cr_assert_eq(p.n_more, 2);
	uint64_t written[3] = { DQ, DK, DV };
	for (int i = 0; i < 3; i++) {
		const struct np_kbuf *b = output_at(&p, written[i]);
		cr_assert(b);
		cr_expect_eq(b->numel, QKV_NUMEL);
		cr_expect_eq(b->n_in, 6, "q, k, v, O, dO, the statistics");
		cr_expect(reads(b, DO) && reads(b, STATS) && !reads(b, DQ));
	}
}

/* cuDNN 9.20's softmax operation in the composite graph: the statistics
 * its output, beside P (virtual) */
Test(dnn_attention, the_softmax_operations_statistics_are_an_output)
{
	void *q = nv('q', BHSD, BSHD_STRIDES, BF16), *k = nv('k', BHSD, BSHD_STRIDES, BF16);
	void *v = nv('v', BHSD, BSHD_STRIDES, BF16), *o = nv('o', BHSD, BSHD_STRIDES, BF16);
	void *stats = nv('s', BHS1, NULL, FLOAT);
	void *s = virt(BHSS), *m = virt(BHSS), *pr = virt(BHSS);
	int band[2] = { NP_DGA_BAND_MASK_X, NP_DGA_BAND_MASK_Y };
	int soft[3] = { NP_DGA_SOFTMAX_X, NP_DGA_SOFTMAX_Y, NP_DGA_SOFTMAX_STATS };
	void *ops[4] = { matmul(q, k, s),
			 operation(next_desc++, NP_DG_BAND_MASK, band, (void *[]){ s, m }, 2),
			 operation(next_desc++, NP_DG_SOFTMAX, soft, (void *[]){ m, pr, stats }, 3),
			 matmul(pr, v, o) };
	int64_t uids[5] = { 'q', 'k', 'v', 'o', 's' };
	uint64_t at[5] = { Q, K, V, O, STATS };
	struct np_gemm_plan p;
	cr_assert_eq(np_dg_plan(plan_of_graph(next_desc, ops, 4), pack(900, uids, at, 5), &p), 0);
	cr_expect_eq(p.n_more, 1);
	cr_expect(output_at(&p, O) && output_at(&p, STATS));
}

/* packed variable-length sequences (a ragged offset) or a reordered
 * layout: its dims and strides do not say where O lies */
Test(dnn_attention, a_ragged_or_reordered_output_is_not_planned)
{
	for (int how = 0; how < 2; how++) {
		attention_reset();
		void *q = nv('q', BHSD, BSHD_STRIDES, BF16), *k = nv('k', BHSD, BSHD_STRIDES, BF16);
		void *v = nv('v', BHSD, BSHD_STRIDES, BF16), *o = nv('o', BHSD, BSHD_STRIDES, BF16);
		void *stats = nv('s', BHS1, NULL, FLOAT);
		if (how == 0) {
			void *offsets = nv('r', (int64_t[]){ 3, 1, 1, 1 }, NULL, INT32);
			set_ref(o, NP_DGA_TENSOR_RAGGED, offsets);
		} else {
			int f16x16 = 2;
			set1(o, NP_DGA_TENSOR_REORDERING, NP_DGT_REORDERING, &f16x16);
		}
		int attrs[5] = { NP_DGA_SDPA_FWD_Q, NP_DGA_SDPA_FWD_K, NP_DGA_SDPA_FWD_V,
				 NP_DGA_SDPA_FWD_O, NP_DGA_SDPA_FWD_STATS };
		void *op = operation(next_desc++, NP_DG_SDPA_FWD, attrs,
				     (void *[]){ q, k, v, o, stats }, 5);
		int64_t uids[5] = { 'q', 'k', 'v', 'o', 's' };
		uint64_t at[5] = { Q, K, V, O, STATS };
		struct np_gemm_plan p;
		cr_expect_eq(np_dg_plan(plan_of_graph(next_desc, &op, 1), pack(900, uids, at, 5), &p),
			     -1, "%s", how ? "reordered" : "ragged");
	}
	/* no reordering (mode 0) is plain */
	attention_reset();
	void *o = nv('o', BHSD, BSHD_STRIDES, BF16), *q = nv('q', BHSD, BSHD_STRIDES, BF16);
	int none = 0;
	set1(o, NP_DGA_TENSOR_REORDERING, NP_DGT_REORDERING, &none);
	void *op = pw(q, NULL, o);
	int64_t uids[2] = { 'q', 'o' };
	uint64_t at[2] = { Q, O };
	struct np_gemm_plan p;
	cr_expect_eq(np_dg_plan(plan_of_graph(next_desc, &op, 1), pack(900, uids, at, 2), &p), 0);
}

Test(dnn_attention, more_outputs_than_a_plan_holds_are_not_planned)
{
	void *x = nv('x', BHSD, NULL, FLOAT);
	void *ops[NP_GEMM_MORE_OUTS + 2];
	int64_t uids[NP_GEMM_MORE_OUTS + 3] = { 'x' };
	uint64_t at[NP_GEMM_MORE_OUTS + 3] = { X };
	for (int i = 0; i < NP_GEMM_MORE_OUTS + 2; i++) {
		uids[1 + i] = 'A' + i;
		at[1 + i] = Y + 0x100000ull * (uint64_t)i;
		ops[i] = pw(x, NULL, nv(uids[1 + i], BHSD, NULL, FLOAT));
	}
	struct np_gemm_plan p;
	struct np_dg_why why;
	char text[96];
	cr_expect_eq(np_dg_plan_why(plan_of_graph(next_desc, ops, NP_GEMM_MORE_OUTS + 2),
				    pack(900, uids, at, NP_GEMM_MORE_OUTS + 3), &p, &why), -1);
	cr_expect_eq(why.reason, NP_DGW_OUTPUTS);
	cr_expect_str_eq(np_dg_why_text(&why, text, sizeof(text)), "more than 6 outputs");
	cr_expect_eq(np_dg_plan(plan_of_graph(next_desc + 10, ops, NP_GEMM_MORE_OUTS + 1),
				pack(901, uids, at, NP_GEMM_MORE_OUTS + 2), &p), 0,
		     "as many as it holds");
	cr_expect_eq(p.n_more, NP_GEMM_MORE_OUTS);
}

/* what the agent's log says of an execution left to the generic tier */
static struct np_dg_why why_not(void *plan, void *vpack)
{
	struct np_gemm_plan p;
	struct np_dg_why why;
	cr_assert_eq(np_dg_plan_why(plan, vpack, &p, &why), -1);
	return why;
}

Test(dnn_graph, why_an_execution_is_not_planned_is_said)
{
	float zero = 0.0f;
	char text[96];
	void *plan = conv_plan(&zero);
	struct np_dg_why w = why_not(desc(99), pack(40, XWY, XWY_AT, 3));
	cr_expect_eq(w.reason, NP_DGW_PLAN_UNSEEN);
	cr_expect_str_eq(np_dg_why_text(&w, text, sizeof(text)),
			 "the plan not seen built (before the agent came?)");
	cr_expect_eq(why_not(plan, desc(98)).reason, NP_DGW_PACK_UNSEEN);
	int64_t two[2] = { 'x', 'y' };
	w = why_not(plan, pack(41, two, XWY_AT, 2));
	cr_expect_eq(w.reason, NP_DGW_NOT_IN_PACK);
	cr_expect_eq(w.value, 'w');
	cr_expect_str_eq(np_dg_why_text(&w, text, sizeof(text)), "tensor 119 not in the variant pack");

	/* an operation of a type not read (a norm's forward, 29), and one
	 * never seen created */
	np_dg_reset();
	int attrs[3] = { NP_DGA_CONV_FWD_X, NP_DGA_CONV_FWD_W, NP_DGA_CONV_FWD_Y };
	void *ts[3] = { tensor(1, 'x', XD, NULL, FLOAT, false), tensor(2, 'w', WD, NULL, FLOAT, false),
			tensor(3, 'y', YD, NULL, FLOAT, false) };
	void *ops[2] = { operation(10, NP_DG_CONV_FWD, attrs, ts, 3), desc(11) };
	cr_assert_eq(np_dg_created(desc(11), 29), 0);
	w = why_not(plan_of_graph(20, ops, 2), pack(40, XWY, XWY_AT, 3));
	cr_expect_eq(w.reason, NP_DGW_OPERATION);
	cr_expect_eq(w.value, 29);
	cr_expect_str_eq(np_dg_why_text(&w, text, sizeof(text)), "an operation of type 29 not read");
	np_dg_destroyed(desc(11));
	w = why_not(plan_of_graph(30, ops, 2), pack(41, XWY, XWY_AT, 3));
	cr_expect_eq(w.reason, NP_DGW_OPERATION);
	cr_expect_eq(w.value, -1, "destroyed: its type forgotten");

	/* an operation whose tensor was never seen created */
	void *op2 = operation(50, NP_DG_CONV_FWD, attrs, (void *[]){ ts[0], ts[1], desc(51) }, 3);
	cr_expect_eq(why_not(plan_of_graph(60, &op2, 1), pack(42, XWY, XWY_AT, 3)).reason,
		     NP_DGW_OP_TENSOR);

	/* a plan whose engine config was not seen built */
	void *lone = desc(70);
	cr_assert_eq(np_dg_created(lone, NP_DG_PLAN), 0);
	set_ref(lone, NP_DGA_PLAN_CFG, desc(71));
	cr_expect_eq(why_not(lone, pack(43, XWY, XWY_AT, 3)).reason, NP_DGW_GRAPH_UNSEEN);

	/* an output with gaps, an integer output */
	np_dg_reset();
	int64_t gaps[4] = { 32 * 12 * 24, 12 * 24, 24, 1 };
	ts[0] = tensor(1, 'x', XD, NULL, FLOAT, false);
	ts[1] = tensor(2, 'w', WD, NULL, FLOAT, false);
	ts[2] = tensor(3, 'y', YD, gaps, FLOAT, false);
	void *op = operation(10, NP_DG_CONV_FWD, attrs, ts, 3);
	w = why_not(plan_of_graph(20, &op, 1), pack(40, XWY, XWY_AT, 3));
	cr_expect_eq(w.reason, NP_DGW_NOT_DENSE);
	cr_expect_eq(w.value, 'y');
	ts[2] = tensor(4, 'y', YD, NULL, INT32, false);
	op = operation(30, NP_DG_CONV_FWD, attrs, ts, 3);
	cr_expect_eq(why_not(plan_of_graph(40, &op, 1), pack(50, XWY, XWY_AT, 3)).reason,
		     NP_DGW_NOT_FLOAT);

	/* uids and pointers of different counts */
	np_dg_reset();
	plan = conv_plan(&zero);
	void *uneven = desc(40);
	cr_assert_eq(np_dg_created(uneven, NP_DG_VARIANT_PACK), 0);
	np_dg_set(uneven, NP_DGA_PACK_UIDS, NP_DGT_INT64, 3, XWY);
	cr_expect_eq(why_not(plan, uneven).reason, NP_DGW_PACK);
}

Test(dnn_graph, bounded_the_table_counts_what_it_refuses_and_forgets_nothing_kept)
{
	/* every other slot's descriptor destroyed: lookups past the holes
	 * must still find what was kept (clusters share home slots) */
	for (unsigned i = 0; i < NP_DG_SLOTS - 8; i++)
		cr_assert_eq(np_dg_created(desc(1000 + i), NP_DG_TENSOR), 0);
	for (unsigned i = 0; i < NP_DG_SLOTS - 8; i += 2)
		np_dg_destroyed(desc(1000 + i));
	float zero = 0.0f;
	void *plan = conv_plan(&zero);
	struct np_gemm_plan p;
	cr_expect_eq(np_dg_plan(plan, pack(40, XWY, XWY_AT, 3), &p), 0);
	cr_expect_eq(p.out.ptr, Y);

	unsigned made = 0;
	while (np_dg_created(desc(100000 + made), NP_DG_VARIANT_PACK) == 0)
		made++;
	/* kept: half of SLOTS - 8, the 3 tensors, op, graph, heur, 2 configs,
	 * plan and the pack: 10 */
	cr_expect_eq(made, NP_DG_SLOTS - (NP_DG_SLOTS - 8) / 2 - 10);
	struct np_dg_stats s;
	np_dg_stats(&s);
	cr_expect_eq(s.table_full, 1);
	cr_expect_eq(np_dg_created(desc(5), 29), 0, "a type not remembered takes no slot");
	for (unsigned i = 1; i < NP_DG_SLOTS - 8; i += 2)
		np_dg_destroyed(desc(1000 + i));
	for (unsigned i = 0; i < made; i++)
		np_dg_destroyed(desc(100000 + i));
	cr_expect_eq(np_dg_plan(plan, pack(41, XWY, XWY_AT, 3), &p), 0,
		     "what was kept survives every erase");
}

/* ---- a variant pack's addresses, noted when not planned ---- */

Test(dnn_graph, an_unseen_plans_pack_is_noted_every_address_maybe_written)
{
	/* torch's cached plan, built before the agent came: only the pack
	 * (x, y, w, built per call) is seen */
	struct np_gemm_plan p;
	cr_expect_eq(np_dg_plan(desc(99), pack(40, XWY, XWY_AT, 3), &p), -1);
	cr_assert_eq(np_dg_plan_noted(desc(99), pack(41, XWY, XWY_AT, 3), &p), 0);
	cr_expect_eq(p.note_only, 1);
	cr_expect_eq(p.out.ptr, X, "the pack's first address: the note's output");
	cr_assert_eq(p.out.n_in, 2);
	cr_expect_eq(p.out.in[0], Y);
	cr_expect_eq(p.out.in[1], W);
	cr_expect_eq(p.note_written, 0x3, "which of them is the output is not known");
	cr_expect_eq(p.out.numel, 0, "nothing sized: the generic tier checks at a reader");

	/* no pack seen: nothing to note */
	cr_expect_eq(np_dg_plan_noted(desc(99), desc(98), &p), -1);
	/* a null address (an optional tensor left out) is skipped, and an
	 * address given twice kept once */
	int64_t uids[4] = { 'x', 'b', 'y', 'z' };
	uint64_t at[4] = { X, 0, Y, X };
	cr_assert_eq(np_dg_plan_noted(desc(99), pack(42, uids, at, 4), &p), 0);
	cr_expect_eq(p.out.ptr, X);
	cr_assert_eq(p.out.n_in, 1);
	cr_expect_eq(p.out.in[0], Y);
}

Test(dnn_graph, a_refused_plan_of_a_known_graph_notes_its_reads_as_read)
{
	/* y with gaps: not planned, but the graph says x and w are read, y
	 * written; the pack lists x first */
	int64_t gaps[4] = { 32 * 12 * 24, 12 * 24, 24, 1 };
	void *ts[3] = { tensor(1, 'x', XD, NULL, FLOAT, false), tensor(2, 'w', WD, NULL, FLOAT, false),
			tensor(3, 'y', YD, gaps, FLOAT, false) };
	int attrs[3] = { NP_DGA_CONV_FWD_X, NP_DGA_CONV_FWD_W, NP_DGA_CONV_FWD_Y };
	void *op = operation(10, NP_DG_CONV_FWD, attrs, ts, 3);
	void *plan = plan_of_graph(20, &op, 1);
	struct np_gemm_plan p;
	cr_expect_eq(np_dg_plan(plan, pack(40, XWY, XWY_AT, 3), &p), -1);
	cr_assert_eq(np_dg_plan_noted(plan, pack(41, XWY, XWY_AT, 3), &p), 0);
	cr_expect_eq(p.out.ptr, Y, "the one output the graph names");
	cr_assert_eq(p.out.n_in, 2);
	cr_expect_eq(p.out.in[0], X);
	cr_expect_eq(p.out.in[1], W);
	cr_expect_eq(p.note_written, 0, "x and w only read: they keep their writers' notes");

	/* a pack address whose uid the graph does not have may be written */
	int64_t uids[4] = { 'x', 'y', 'w', 'q' };
	uint64_t at[4] = { X, Y, W, Z };
	cr_assert_eq(np_dg_plan_noted(plan, pack(42, uids, at, 4), &p), 0);
	cr_assert_eq(p.out.n_in, 3);
	cr_expect_eq(p.out.in[2], Z);
	cr_expect_eq(p.note_written, 0x4);
}
