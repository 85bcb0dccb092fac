/* kdecode_reduce.c - the outputs of a torch reduction launch, read from its
 * ReduceOp (see kdecode_reduce.h for the layout and where it comes from).
 *
 * Why it matters: a reduction is where many NaNs are born.  std/var over
 * one element (n - 1 = 0), mean over an empty slice, a fp16 sum that
 * overflows: each makes a non-finite value from finite inputs inside
 * reduce_kernel, and until this decoder the kernel was opaque, so the
 * birth was named at its first decoded reader, or at the module output
 * by the guards.
 *
 * Every field is checked against the launch before it is believed: a
 * ReduceOp misread here would become a check of the wrong memory, and the
 * caller's allocation map only keeps such a mistake inside an allocation.
 */
#include <string.h>
#include "param_bytes.h"
#include "kdecode_reduce.h"

#define TAIL 64u                 /* src .. noutputs, from the end */
#define CONFIG_SIZE 64u          /* ReduceConfig */
#define MAX_DIMS 25u             /* OffsetCalculator's (CUDA; ROCm has 16) */
#define DIVIDER 12u              /* IntDivider<uint32_t>: divisor, m1, shift */
#define IN_CALC (4u + MAX_DIMS * DIVIDER + MAX_DIMS * 1u * 4u)   /* 404 */
#define OUT_CALC (4u + MAX_DIMS * DIVIDER + MAX_DIMS * 2u * 4u)  /* 504 */

/* ReduceConfig's fields, as offsets in it. */
enum {
	RC_ESIZE = 0, RC_NUM_INPUTS = 4, RC_NUM_OUTPUTS = 8, RC_STEP_INPUT = 12,
	RC_STEP_OUTPUT = 16, RC_CTAS = 20, RC_BLOCK_WIDTH = 44, RC_BLOCK_HEIGHT = 48,
	RC_NUM_THREADS = 52, RC_VECTORIZE = 56, RC_OUTPUT_VEC = 60,
};

/* The tail's fields, as offsets from src. */
enum {
	T_SRC = 0, T_DST0 = 8, T_DST1 = 16, T_ACC_BUF = 24, T_ACCUMULATE = 56,
	T_FINAL = 57, T_NOUTPUTS = 60,
};

/* Whether a ReduceConfig at c agrees with the launch it was launched with. */
static int config_matches(const unsigned char *c, int ovs, const uint32_t grid[3],
			  const uint32_t block[3])
{
	int32_t esize = np_i32_at(c, RC_ESIZE), nin = np_i32_at(c, RC_NUM_INPUTS),
		nout = np_i32_at(c, RC_NUM_OUTPUTS), step_in = np_i32_at(c, RC_STEP_INPUT),
		step_out = np_i32_at(c, RC_STEP_OUTPUT), ctas = np_i32_at(c, RC_CTAS),
		bw = np_i32_at(c, RC_BLOCK_WIDTH), bh = np_i32_at(c, RC_BLOCK_HEIGHT),
		vec = np_i32_at(c, RC_OUTPUT_VEC);

	if (esize < 1 || esize > 64 || nin < 1 || nout < 1 || step_in < 1 || step_out < 1 ||
	    ctas < 1 || bw < 1 || bh < 1 || c[RC_VECTORIZE] > 1 || vec != ovs)
		return 0;
	if ((uint32_t)bw != block[0] || (uint32_t)bh != block[1] || block[2] != 1 ||
	    np_i32_at(c, RC_NUM_THREADS) != bw * bh)
		return 0;
	return grid[0] == ((uint32_t)(nout / vec) + (uint32_t)step_out - 1) / (uint32_t)step_out &&
	       grid[1] == (uint32_t)ctas && grid[2] == 1;
}

/* Whether the output calculator at oc walks exactly n elements of esize
 * bytes, densely, from offset 0: then [dst, dst + n) is the output. */
static int output_dense(const unsigned char *oc, uint32_t n, uint32_t esize)
{
	int32_t dims = np_i32_at(oc, 0);
	uint64_t expect = esize, count = 1;

	if (dims < 0 || (uint32_t)dims > MAX_DIMS)
		return 0;
	for (int32_t d = 0; d < dims; d++) {
		uint32_t size = (uint32_t)np_i32_at(oc, 4u + (uint32_t)d * DIVIDER);
		uint32_t stride = (uint32_t)np_i32_at(oc, 4u + MAX_DIMS * DIVIDER + (uint32_t)d * 8u);
		if (size == 0)
			return 0;
		count *= size;
		if (count > n)
			return 0;
		if (size == 1)
			continue;
		if (stride != expect)
			return 0;
		expect *= size;
	}
	return count == n;
}

/* One dimension of the input: its size and byte stride. */
struct dim {
	uint32_t size, stride;
};

/* The input dims one calculator walks (nargs strides per dim, the input's
 * the last), appended to d[*n]; 0 when its dims are out of range. */
static int input_dims(const unsigned char *calc, uint32_t nargs, struct dim *d, uint32_t *n)
{
	int32_t dims = np_i32_at(calc, 0);

	if (dims < 0 || (uint32_t)dims > MAX_DIMS)
		return 0;
	for (uint32_t k = 0; k < (uint32_t)dims; k++)
		d[(*n)++] = (struct dim){
			(uint32_t)np_i32_at(calc, 4u + k * DIVIDER),
			(uint32_t)np_i32_at(calc, 4u + MAX_DIMS * DIVIDER + (k * nargs + nargs - 1) * 4u) };
	return 1;
}

/* Whether the input, as the reduced dims (the input calculator) and each
 * output's base (the output calculator's second strides) walk it, is n
 * elements of esize bytes lying densely from src in some order of its
 * dims: then the reduction reads [src, src + n * esize) and nothing else. */
static int input_dense(const unsigned char *ic, const unsigned char *oc, uint64_t n,
		       uint32_t esize)
{
	struct dim d[2 * MAX_DIMS];
	uint32_t nd = 0;
	uint64_t expect = esize, count = 1;

	if (!input_dims(ic, 1, d, &nd) || !input_dims(oc, 2, d, &nd))
		return 0;
	/* by stride, smallest first (at most 50: insertion) */
	for (uint32_t i = 1; i < nd; i++)
		for (uint32_t j = i; j && d[j - 1].stride > d[j].stride; j--) {
			struct dim t = d[j];
			d[j] = d[j - 1];
			d[j - 1] = t;
		}
	for (uint32_t i = 0; i < nd; i++) {
		if (d[i].size == 0)
			return 0;
		count *= d[i].size;
		if (count > n)
			return 0;
		if (d[i].size == 1)
			continue;
		if (d[i].stride != expect)
			return 0;
		expect *= d[i].size;
	}
	return count == n;
}

/* The config's offset in op, and src's, when exactly one place for it
 * agrees with the launch; else 0. */
static int find_config(const unsigned char *op, uint32_t size, int index_size, int ovs,
		       const uint32_t grid[3], const uint32_t block[3], uint32_t *config,
		       uint32_t *src)
{
	int found = 0;

	if (!op || index_size != 4 || ovs < 1 || !grid || !block || grid[0] == 0 || size % 8 ||
	    size < TAIL + IN_CALC + OUT_CALC + CONFIG_SIZE + 4)
		return 0;
	*src = size - TAIL;
	/* the config ends the head: src is the next 8-byte boundary after
	 * config + both calculators (972 bytes), so the config starts 972 or
	 * 976 bytes before src; exactly one of them must agree with the launch */
	for (uint32_t pad = 0; pad <= 4; pad += 4) {
		uint32_t at = *src - (CONFIG_SIZE + IN_CALC + OUT_CALC) - pad;
		if (config_matches(op + at, ovs, grid, block)) {
			*config = at;
			found++;
		}
	}
	return found == 1;
}

int np_reduce_input(const unsigned char *op, uint32_t size, int index_size, uint32_t in_esize,
		    int ovs, const uint32_t grid[3], const uint32_t block[3], uint64_t *src,
		    uint64_t *numel)
{
	uint32_t c, at;

	if (in_esize == 0 || !find_config(op, size, index_size, ovs, grid, block, &c, &at))
		return 0;
	uint64_t n = (uint64_t)(uint32_t)np_i32_at(op + c, RC_NUM_INPUTS) *
		     (uint32_t)np_i32_at(op + c, RC_NUM_OUTPUTS);
	*src = np_u64_at(op, at + T_SRC);
	*numel = n;
	return *src && input_dense(op + c + CONFIG_SIZE, op + c + CONFIG_SIZE + IN_CALC, n, in_esize);
}

int np_reduce_read(const unsigned char *op, uint32_t size, int index_size, uint32_t esize,
		   int ovs, const uint32_t grid[3], const uint32_t block[3],
		   struct np_reduce_view *v)
{
	uint32_t src, c = 0;

	if (esize == 0 || !find_config(op, size, index_size, ovs, grid, block, &c, &src))
		return 0;
	if (np_i32_at(op, c + CONFIG_SIZE) < 0 || (uint32_t)np_i32_at(op, c + CONFIG_SIZE) > MAX_DIMS)
		return 0;       /* the input calculator's dims */

	memset(v, 0, sizeof(*v));
	v->src = np_u64_at(op, src + T_SRC);
	v->dst[0] = np_u64_at(op, src + T_DST0);
	v->acc_buf = np_u64_at(op, src + T_ACC_BUF);
	v->noutputs = np_i32_at(op, src + T_NOUTPUTS);
	v->accumulate = op[src + T_ACCUMULATE];
	v->num_outputs = (uint32_t)np_i32_at(op + c, RC_NUM_OUTPUTS);
	if (v->accumulate > 1 || op[src + T_FINAL] > 1 || v->noutputs < 1 || v->noutputs > 2 ||
	    !v->src || !v->dst[0])
		return 0;
	if (!op[src + T_FINAL])
		return 0;       /* a partial result of a split reduction: not the output yet */
	if (v->noutputs == 2)
		v->dst[1] = np_u64_at(op, src + T_DST1);
	return output_dense(op + c + CONFIG_SIZE + IN_CALC, v->num_outputs, esize);
}
