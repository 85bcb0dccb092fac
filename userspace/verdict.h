/* verdict.h - one answer for a job of several ranks.
 *
 * A non-finite value born on one rank reaches the others through the
 * gradient all-reduce within the same step, so every rank has a "first
 * non-finite value" of its own.  The origin rank is the one whose finding
 * is an origin (not received through a collective) at the earliest step,
 * then the earliest phase (forward, backward, a .grad before the update,
 * a parameter after it), then the earliest time.  Every other rank with a
 * finding received it: through the collective the agent saw, through a
 * gradient all-reduce it could not see (DDP's, when the rank's first
 * finding is a parameter's .grad in the same step), or by propagation in
 * a later step. */
#ifndef NP_VERDICT_H
#define NP_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct np_rank_finding {
	int rank;                 /* -1 if the process had no RANK */
	uint64_t pid;
	bool received;            /* came in through a collective the agent saw */
	uint64_t step;
	uint8_t phase;            /* enum np_phase */
	uint8_t role;             /* enum np_arec_role (0: input) */
	uint64_t ts;              /* comparable within one machine only */
	const char *module, *op, *tensor, *via;   /* via: the collective, if received */
};

#define NP_VERDICT_MAX 1024

struct np_verdict {
	int origin;                  /* index of the origin rank's finding, -1 if none */
	size_t n;                    /* findings */
	const char *via[NP_VERDICT_MAX];   /* per finding: how it got there ("" for the origin) */
	char via_buf[NP_VERDICT_MAX][96];
};

/* Decides; f has n entries (at most NP_VERDICT_MAX are used). */
void np_verdict_compute(const struct np_rank_finding *f, size_t n, struct np_verdict *v);

#endif
