/* dnn_ops.c - which tensors each cuDNN operation reads and writes
 * (dnn_ops.h). */
#include "dnn_graph.h"
#include "dnn_ops.h"

#define R NP_DG_READ
#define W NP_DG_WRITTEN

static const struct {
	int16_t type, attr;
	uint8_t role;
} roles[] = {
	/* convolutions: torch's Conv_v8.cpp */
	{ NP_DG_CONV_FWD, NP_DGA_CONV_FWD_X, R }, { NP_DG_CONV_FWD, NP_DGA_CONV_FWD_W, R },
	{ NP_DG_CONV_FWD, NP_DGA_CONV_FWD_Y, W },
	{ NP_DG_CONV_BWD_DATA, NP_DGA_CONV_BWD_DATA_W, R },
	{ NP_DG_CONV_BWD_DATA, NP_DGA_CONV_BWD_DATA_DY, R },
	{ NP_DG_CONV_BWD_DATA, NP_DGA_CONV_BWD_DATA_DX, W },
	{ NP_DG_CONV_BWD_FILTER, NP_DGA_CONV_BWD_FILTER_X, R },
	{ NP_DG_CONV_BWD_FILTER, NP_DGA_CONV_BWD_FILTER_DY, R },
	{ NP_DG_CONV_BWD_FILTER, NP_DGA_CONV_BWD_FILTER_DW, W },
	/* the blocks cudnn_frontend lowers fused graphs and attention to */
	{ NP_DG_POINTWISE, NP_DGA_PW_X, R }, { NP_DG_POINTWISE, NP_DGA_PW_B, R },
	{ NP_DG_POINTWISE, NP_DGA_PW_DY, R }, { NP_DG_POINTWISE, NP_DGA_PW_T, R },
	{ NP_DG_POINTWISE, NP_DGA_PW_Y, W }, { NP_DG_POINTWISE, NP_DGA_PW_DX, W },
	{ NP_DG_MATMUL, NP_DGA_MATMUL_A, R }, { NP_DG_MATMUL, NP_DGA_MATMUL_B, R },
	{ NP_DG_MATMUL, NP_DGA_MATMUL_C, W },
	{ NP_DG_REDUCTION, NP_DGA_REDUCTION_X, R }, { NP_DG_REDUCTION, NP_DGA_REDUCTION_Y, W },
	{ NP_DG_RESHAPE, NP_DGA_RESHAPE_X, R }, { NP_DG_RESHAPE, NP_DGA_RESHAPE_Y, W },
	{ NP_DG_TRANSPOSE, NP_DGA_TRANSPOSE_X, R }, { NP_DG_TRANSPOSE, NP_DGA_TRANSPOSE_Y, W },
	{ NP_DG_SLICE, NP_DGA_SLICE_X, R }, { NP_DG_SLICE, NP_DGA_SLICE_Y, W },
	/* dropout's mask; its seed and offset, when tensors, integers read */
	{ NP_DG_RNG, NP_DGA_RNG_SEED, R }, { NP_DG_RNG, NP_DGA_RNG_OFFSET, R },
	{ NP_DG_RNG, NP_DGA_RNG_Y, W },
	/* a causal or sliding-window mask: its bounds and lengths read */
	{ NP_DG_BAND_MASK, NP_DGA_BAND_MASK_X, R }, { NP_DG_BAND_MASK, 3001, R },
	{ NP_DG_BAND_MASK, 3002, R }, { NP_DG_BAND_MASK, 3003, R },
	{ NP_DG_BAND_MASK, 3004, R }, { NP_DG_BAND_MASK, 3005, R },
	{ NP_DG_BAND_MASK, 3008, R }, { NP_DG_BAND_MASK, 3009, R },
	{ NP_DG_BAND_MASK, NP_DGA_BAND_MASK_Y, W },
	/* softmax: attention's statistics (and row max and sum) written */
	{ NP_DG_SOFTMAX, NP_DGA_SOFTMAX_X, R }, { NP_DG_SOFTMAX, 3105, R },
	{ NP_DG_SOFTMAX, NP_DGA_SOFTMAX_Y, W }, { NP_DG_SOFTMAX, NP_DGA_SOFTMAX_STATS, W },
	{ NP_DG_SOFTMAX, NP_DGA_SOFTMAX_MAX, W }, { NP_DG_SOFTMAX, NP_DGA_SOFTMAX_SUM_EXP, W },
	/* attention's forward as one operation: q, k, v, the scale, masks,
	 * page tables, sequence lengths, dropout's seed, fp8 scales read;
	 * O, the statistics, dropout's dump and fp8 maxima written */
	{ NP_DG_SDPA_FWD, NP_DGA_SDPA_FWD_Q, R }, { NP_DG_SDPA_FWD, NP_DGA_SDPA_FWD_K, R },
	{ NP_DG_SDPA_FWD, NP_DGA_SDPA_FWD_V, R }, { NP_DG_SDPA_FWD, NP_DGA_SDPA_FWD_SCALE, R },
	{ NP_DG_SDPA_FWD, 2806, R }, { NP_DG_SDPA_FWD, 2807, R }, { NP_DG_SDPA_FWD, 2808, R },
	{ NP_DG_SDPA_FWD, NP_DGA_SDPA_FWD_SEQ_LEN_Q, R },
	{ NP_DG_SDPA_FWD, NP_DGA_SDPA_FWD_SEQ_LEN_KV, R },
	{ NP_DG_SDPA_FWD, 2815, R }, { NP_DG_SDPA_FWD, 2816, R }, { NP_DG_SDPA_FWD, 2820, R },
	{ NP_DG_SDPA_FWD, 2821, R }, { NP_DG_SDPA_FWD, 2822, R }, { NP_DG_SDPA_FWD, 2823, R },
	{ NP_DG_SDPA_FWD, 2824, R }, { NP_DG_SDPA_FWD, 2825, R }, { NP_DG_SDPA_FWD, 2826, R },
	{ NP_DG_SDPA_FWD, 2827, R },
	{ NP_DG_SDPA_FWD, NP_DGA_SDPA_FWD_O, W }, { NP_DG_SDPA_FWD, NP_DGA_SDPA_FWD_STATS, W },
	{ NP_DG_SDPA_FWD, 2817, W }, { NP_DG_SDPA_FWD, 2828, W }, { NP_DG_SDPA_FWD, 2829, W },
	/* its backward: dQ, dK, dV (and a sink's and a bias's gradients)
	 * from q, k, v, O, dO and the statistics */
	{ NP_DG_SDPA_BWD, NP_DGA_SDPA_BWD_Q, R }, { NP_DG_SDPA_BWD, NP_DGA_SDPA_BWD_K, R },
	{ NP_DG_SDPA_BWD, NP_DGA_SDPA_BWD_V, R }, { NP_DG_SDPA_BWD, NP_DGA_SDPA_BWD_O, R },
	{ NP_DG_SDPA_BWD, NP_DGA_SDPA_BWD_STATS, R }, { NP_DG_SDPA_BWD, NP_DGA_SDPA_BWD_SCALE, R },
	{ NP_DG_SDPA_BWD, 2857, R }, { NP_DG_SDPA_BWD, 2858, R },
	{ NP_DG_SDPA_BWD, NP_DGA_SDPA_BWD_DO, R }, { NP_DG_SDPA_BWD, 2863, R },
	{ NP_DG_SDPA_BWD, 2870, R }, { NP_DG_SDPA_BWD, 2871, R }, { NP_DG_SDPA_BWD, 2872, R },
	{ NP_DG_SDPA_BWD, 2873, R },
	{ NP_DG_SDPA_BWD, NP_DGA_SDPA_BWD_DQ, W }, { NP_DG_SDPA_BWD, NP_DGA_SDPA_BWD_DK, W },
	{ NP_DG_SDPA_BWD, NP_DGA_SDPA_BWD_DV, W }, { NP_DG_SDPA_BWD, 2864, W },
	{ NP_DG_SDPA_BWD, 2875, W },
};

int np_dg_is_operation(int type)
{
	for (unsigned i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		if (roles[i].type == type)
			return 1;
	return 0;
}

uint8_t np_dg_tensor_role(int type, int attr)
{
	for (unsigned i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		if (roles[i].type == type && roles[i].attr == attr)
			return roles[i].role;
	return 0;
}
