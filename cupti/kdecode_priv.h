/* kdecode_priv.h - what kdecode.c shares with its family files.
 *
 * kdecode.c classifies a kernel by its name and dispatches a launch to
 * its family's reader; the bigger families live in files of their own:
 *   kdecode_elementwise.c  elementwise kernels: functor types, lambdas
 *   kdecode_mta.c          multi_tensor_apply (foreach ops, optimizers)
 *   kdecode_rows.c         row-sized outputs (layer/group norm, softmax,
 *                          batch norm's channels-last kernels)
 *   kdecode_acc.c          batch norm's NCHW kernels (tensor accessors)
 *   kdecode_attn.c         SDPA's flash and memory-efficient attention
 * Not part of the decoders' interface (kdecode.h).
 */
#ifndef NP_KDECODE_PRIV_H
#define NP_KDECODE_PRIV_H

#include <stdint.h>
#include "kdecode.h"
#include "kname.h"

/* Where the outputs of one launch go: the first `skip` found are passed
 * over, then out[] fills, then the rest are only counted. */
struct emit {
	struct np_kbuf *out;
	int max, n;
	uint32_t skip, more;
};

/* The slot for the next output found, or NULL if it is passed over. */
struct np_kbuf *emit_next(struct emit *e);

/* 8 bytes at offset `at` of parameter i (size checked by the caller). */
uint64_t word_at(void *const *kp, int i, uint32_t at);
/* Parameter i as a signed integer of its size (4 or 8); -1 otherwise. */
int64_t int_at(const struct np_kparams *l, void *const *kp, int i);
/* The pointer-like 8-aligned words of parameter i, appended to out[*k..max). */
void param_words(const struct np_kparams *l, void *const *kp, int i, uint64_t *out, int *k,
		 int max);

/* Elementwise kernels (kdecode_elementwise.c): dtypes and launch shape
 * from the name; a dense output (vectorized, unrolled: `hint`, the
 * launch's threads, bounds N), or a strided one read from its lambda;
 * and the inputs they read whole, for the generic tier. */
void kd_elementwise_classify(struct np_kinfo *ki, struct span targs);
int kd_elementwise_outputs(const struct np_kinfo *ki, const struct np_kparams *l,
			   void *const *kp, uint64_t hint, struct emit *e);
int kd_lambda_outputs(const struct np_kinfo *ki, const struct np_kparams *l, void *const *kp,
		      const struct np_klaunch *kl, struct emit *e);
int kd_lambda_input_words(const struct np_kinfo *ki, const struct np_kparams *l,
			  void *const *kp, const struct np_klaunch *kl, uint64_t *out, int max);
int kd_elementwise_reads(const struct np_kinfo *ki, const struct np_kparams *l,
			 void *const *kp, const struct np_klaunch *kl, struct np_kread *out,
			 int max);

/* multi_tensor_apply (kdecode_mta.c), over the launch's nblocks blocks. */
void kd_mta_classify(struct np_kinfo *ki, struct span targs);
int kd_mta_outputs(const struct np_kinfo *ki, const struct np_kparams *l, void *const *kp,
		   uint32_t nblocks, struct emit *e);
int kd_mta_reads(const struct np_kinfo *ki, const struct np_kparams *l, void *const *kp,
		 uint32_t nblocks, struct np_kread *out, int max);

/* Row-sized outputs (kdecode_rows.c): the rows, row length and other
 * outputs' size of a launch (all 0: unsized; -1: the layout does not fit
 * the name), and the rows x N inputs it reads. */
void kd_rows_classify(struct np_kinfo *ki, struct span name, struct span targs);
int kd_row_extent(const struct np_krows *r, const struct np_kparams *l, void *const *kp,
		  const struct np_klaunch *kl, uint64_t *rows, uint64_t *cols, uint64_t *each);
int kd_rows_reads(const struct np_kinfo *ki, const struct np_kparams *l, void *const *kp,
		  const struct np_klaunch *kl, struct np_kread *out, int max);

/* Batch norm's accessor kernels (kdecode_acc.c). */
void kd_acc_classify(struct np_kinfo *ki, struct span name, struct span targs);
int kd_acc_outputs(const struct np_kinfo *ki, const struct np_kparams *l, void *const *kp,
		   const struct np_klaunch *kl, struct emit *e);
int kd_acc_reads(const struct np_kinfo *ki, const struct np_kparams *l, void *const *kp,
		 const struct np_klaunch *kl, struct np_kread *out, int max);

/* SDPA's attention kernels (kdecode_attn.c): from the name, then the
 * outputs and the whole inputs of a launch of either kind. */
void kd_flash_classify(struct np_kinfo *ki, struct span kernel, struct span targs);
void kd_memeff_classify(struct np_kinfo *ki, struct span name, struct span rest);
int kd_flash_outputs(const struct np_kinfo *ki, const struct np_kparams *l, void *const *kp,
		     const struct np_klaunch *kl, struct emit *e);
int kd_memeff_outputs(const struct np_kinfo *ki, const struct np_kparams *l, void *const *kp,
		      const struct np_klaunch *kl, struct emit *e);
int kd_attn_reads(const struct np_kinfo *ki, const struct np_kparams *l, void *const *kp,
		  const struct np_klaunch *kl, struct np_kread *out, int max);

#endif
