/* kdecode_attn.c - SDPA's attention kernels (kdecode_priv.h): flash
 * attention (pytorch_flash::) and memory-efficient attention
 * (fmha_cutlass*).  Their names give the launch shape and element type;
 * their one by-value parameter struct is read by kdecode_flash.c and
 * kdecode_memeff.c.
 */
#include <stdint.h>
#include "kdecode_priv.h"
#include "kdecode_flash.h"
#include "kdecode_memeff.h"

/* pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<kHeadDim, kBlockM,
 * kBlockN, kNWarps, Is_Q_in_regs, Share_Q_K_smem, elem_type, ..>, ..>,
 * and the backward's flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel and
 * flash_bwd_convert_dq_kernel<Flash_bwd_kernel_traits<kHeadDim, kBlockM,
 * kBlockN, kNWarps, AtomLayoutMSdP, AtomLayoutNdKV, AtomLayoutMdQ,
 * Is_V_in_regs, No_double_buffer, elem_type, ..>, ..>: the launch shape
 * and the element type (kdecode_flash.h).  Other flash kernels (split-KV,
 * the backward's scratch ones) stay as they are. */
void kd_flash_classify(struct np_kinfo *ki, struct span kernel, struct span targs)
{
	struct span name, sub, rest, elem;
	struct np_flash_shape sh = { 0 };
	int hd, bm, bn, w, bwd;

	if (span_eq(kernel, "flash_fwd_kernel"))
		sh.kind = NP_FLASH_FWD;
	else if (span_eq(kernel, "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel"))
		sh.kind = NP_FLASH_BWD_DKDV;
	else if (span_eq(kernel, "flash_bwd_convert_dq_kernel"))
		sh.kind = NP_FLASH_BWD_DQ;
	else
		return;
	bwd = sh.kind != NP_FLASH_FWD;
	if (!split_name(nth_item(targs, 0), &name, &sub, &rest) || !sub.p ||
	    !span_eq(name, bwd ? "Flash_bwd_kernel_traits" : "Flash_fwd_kernel_traits"))
		return;
	hd = targ_int(sub, 0), bm = targ_int(sub, 1), bn = targ_int(sub, 2), w = targ_int(sub, 3);
	elem = trim(nth_item(sub, bwd ? 9 : 6));
	if (hd < 1 || hd > 512 || bm < 1 || bm > 512 || bn < 1 || bn > 512 || w < 1 || w > 32)
		return;
	if (span_eq(elem, "cutlass::bfloat16_t"))
		sh.bf16 = 1;
	else if (!span_eq(elem, "cutlass::half_t"))
		return;
	sh.head_dim = (uint16_t)hd;
	sh.block_m = (uint16_t)bm;
	sh.block_n = (uint16_t)bn;
	sh.warps = (uint8_t)w;
	ki->flash = sh;
	ki->family = NP_KF_FLASH;
	ki->dtype = sh.bf16 ? NP_DT_BF16 : NP_DT_F16;
	ki->dtype_why = NP_KDT_KNOWN;
}

/* fmha_cutlass{F,B}_..(PyTorchMemEffAttention::AttentionKernel<scalar_t,
 * Arch, aligned, kQueriesPerBlock, kKeysPerBlock, kMaxK, ..>::Params) and
 * (..AttentionBackwardKernel<Arch, scalar_t, aligned, dropout, preload,
 * kBlockSizeI, kBlockSizeJ, kMaxK, kKeysQueriesAlignedToBlockSize>::Params):
 * the blocks, the head-dim bound and the type (kdecode_memeff.h). */
void kd_memeff_classify(struct np_kinfo *ki, struct span name, struct span rest)
{
	struct span param, tname, targs, after, elem;
	struct np_memeff_shape sh = { 0 };
	int fwd = span_starts(name, "fmha_cutlassF_"), o;
	unsigned long bi, bj, maxk;

	rest = trim(rest);
	if (rest.n < 2 || rest.p[0] != '(' || rest.p[rest.n - 1] != ')')
		return;
	param = trim(span_of(rest.p + 1, rest.p + rest.n - 1));
	if (!split_name(param, &tname, &targs, &after) || !targs.p || !span_eq(after, "::Params") ||
	    !span_eq(tname, fwd ? "AttentionKernel" : "AttentionBackwardKernel"))
		return;
	o = fwd ? 3 : 5;                        /* the first block size's position */
	elem = trim(nth_item(targs, fwd ? 0 : 1));
	bi = targ_ulong(targs, o), bj = targ_ulong(targs, o + 1), maxk = targ_ulong(targs, o + 2);
	if (bi < 16 || bi > 256 || bj < 16 || bj > 256 || bi * bj % 1024 || maxk < 1 ||
	    maxk > UINT32_MAX)
		return;
	if (span_eq(elem, "float"))
		ki->dtype = NP_DT_F32, sh.esize = 4;
	else if (span_eq(elem, "cutlass::half_t"))
		ki->dtype = NP_DT_F16, sh.esize = 2;
	else if (span_eq(elem, "cutlass::bfloat16_t"))
		ki->dtype = NP_DT_BF16, sh.esize = 2;
	else
		return;
	sh.kind = fwd ? NP_MEMEFF_FWD : NP_MEMEFF_BWD;
	sh.block_i = (uint16_t)bi;
	sh.block_j = (uint16_t)bj;
	sh.max_k = (uint32_t)maxk;
	sh.seq_aligned = !fwd && span_eq(trim(nth_item(targs, 8)), "true");
	ki->memeff = sh;
	ki->family = NP_KF_MEMEFF;
	ki->dtype_why = NP_KDT_KNOWN;
}

static void flash_emit(struct emit *e, uint64_t ptr, uint64_t numel, enum np_dtype dtype)
{
	struct np_kbuf *out;
	if (ptr && (out = emit_next(e))) {
		out->ptr = ptr;
		out->numel = numel;
		out->dtype = dtype;
		out->how = NP_KH_FLASH;
	}
}

/* Flash attention's O and log-sum-exp, or the backward's dK and dV, or
 * dQ (kdecode_flash.h); all judged on the launch's pointer words (q, k,
 * v among them).  The dQ kernel's second parameter is its split count. */
int kd_flash_outputs(const struct np_kinfo *ki, const struct np_kparams *l,
			 void *const *kp, const struct np_klaunch *kl, struct emit *e)
{
	struct np_flash_view v;

	if (!kl || l->n != (ki->flash.kind == NP_FLASH_BWD_DQ ? 2 : 1) ||
	    !np_flash_read(kp[0], l->p[0].size, &ki->flash, kl->grid, kl->block, &v))
		return 0;
	flash_emit(e, v.o, v.o_numel, (enum np_dtype)ki->dtype);
	flash_emit(e, v.lse, v.lse_numel, NP_DT_F32);
	flash_emit(e, v.dv, v.dv_numel, (enum np_dtype)ki->dtype);
	return e->n;
}

/* Memory-efficient attention's outputs (kdecode_memeff.h), judged, as
 * flash's, on the launch's pointer words. */
int kd_memeff_outputs(const struct np_kinfo *ki, const struct np_kparams *l,
			  void *const *kp, const struct np_klaunch *kl, struct emit *e)
{
	struct np_memeff_view v;
	struct np_kbuf *out;

	if (!kl || l->n != 1 ||
	    !np_memeff_read(kp[0], l->p[0].size, &ki->memeff, kl->grid, kl->block, &v))
		return 0;
	for (int i = 0; i < v.n && (out = emit_next(e)); i++) {
		out->ptr = v.ptr[i];
		out->numel = v.numel[i];
		out->dtype = v.lse[i] ? NP_DT_F32 : (enum np_dtype)ki->dtype;
		out->how = NP_KH_MEMEFF;
	}
	return e->n;
}

/* What an attention launch reads whole: q, k and v in the forward, dO
 * in the backward, for the generic tier. */
int kd_attn_reads(const struct np_kinfo *ki, const struct np_kparams *l, void *const *kp,
		  const struct np_klaunch *kl, struct np_kread *out, int max)
{
	uint64_t ptr[3], numel[3];
	int k, n = 0;

	if (!kl || l->n < 1)
		return 0;
	k = ki->family == NP_KF_FLASH ?
		    np_flash_reads(kp[0], l->p[0].size, &ki->flash, kl->grid, kl->block, ptr, numel) :
		    np_memeff_reads(kp[0], l->p[0].size, &ki->memeff, kl->grid, kl->block, ptr,
				    numel);
	for (int i = 0; i < k && n < max; i++)
		out[n++] = (struct np_kread){ .ptr = ptr[i], .numel = numel[i],
					      .dtype = (enum np_dtype)ki->dtype };
	return n;
}
