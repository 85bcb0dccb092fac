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
	void *p[16];
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
	int64_t nine[9] = { 'x', 'y', 'w', 1, 2, 3, 4, 5, 6 };
	uint64_t nine_at[9] = { X, Y, W, 1, 2, 3, 4, 5, 6 };
	cr_expect_eq(np_dg_plan(plan, pack(41, nine, nine_at, 9), &p), -1,
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

	/* two outputs (attention's O and its statistics) */
	np_dg_reset();
	void *o = tensor(1, 'o', YD, NULL, FLOAT, false), *s = tensor(2, 's', XD, NULL, FLOAT, false);
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

	struct np_dg_stats st;
	np_dg_stats(&st);
	cr_expect_eq(st.planned, 1);
	cr_expect_eq(st.unplanned, 1);
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
