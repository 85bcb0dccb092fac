/* findings_out.h - how findings are shown: the stderr paragraph of the
 * origin, one line per explosion warning, and their events.jsonl and
 * trace.json forms (docs/outputs.md). */
#ifndef NP_FINDINGS_OUT_H
#define NP_FINDINGS_OUT_H

#include <stdio.h>
#include "chrome_trace.h"
#include "collector.h"
#include "jsonw.h"

/* "1 of 4 along dim 0 (only index 2), all 32 along dim 2": where in its
 * tensor a finding's non-finite values lie ("" if nothing to say) */
void np_spread_text(char *buf, size_t n, const struct np_spread *s);
/* What is known of a forward origin's op (agent/birth_op.h): "inside the
 * module; it read only finite values", ...; "" when nothing is (the op
 * that made the module's output, its inputs not seen). */
const char *np_op_note(const struct np_finding *f);
/* The tensor in words: "its output", "a gradient it produced", "its
 * input, as blocks.0.norm received it" (an input from outside the model,
 * as the first module that saw it saw it). */
void np_tensor_words(char *buf, size_t n, const struct np_collector *c,
		     const struct np_finding *f);
/* The origin paragraph's last sentence: born here, came from outside,
 * written outside the optimizer, before the attach. */
const char *np_origin_why(const struct np_finding *o);
/* For a value born here in a narrow float type, what that type holds:
 * "float16 holds finite values up to 65504 only: ..." ("" otherwise). */
const char *np_range_note(const struct np_finding *o);
/* For an op that divided by a tensor holding 0 (agent/birth_op.h), or a
 * std or var (op) over too few values, the words saying so ("" otherwise). */
const char *np_divisor_note(const struct np_finding *o, const char *op);
/* For a softmax that made NaN of whole rows, the words saying what that
 * takes ("" otherwise). */
const char *np_rows_note(const struct np_finding *o);
/* For CTC's loss born +inf (op ctc_loss, or a CTCLoss module: type), what
 * that takes, a target no alignment fits ("" otherwise). */
const char *np_ctc_note(const struct np_finding *o, const char *op, const char *type);
/* For an op (a forward op's name: "sqrt") that read only finite values
 * and made NaN or an Inf of values outside its domain (a square root of
 * a negative value, a log of 0, an acos past 1), the words saying so and
 * where such values come from ("" otherwise). */
const char *np_domain_note(const struct np_finding *o, const char *op);
/* For an exp (op) named so that made an Inf, the value past which exp
 * overflows the tensor's dtype, and what to do, written into buf ("" otherwise). */
#define NP_EXP_NOTE_MAX 320
const char *np_exp_note(const struct np_finding *o, const char *op, char *buf, size_t n);
/* For a parameter that an update made non-finite from finite values, what
 * the optimizer did (a denominator of 0: eps = 0, or 1e-8 in float16; a
 * learning rate that is not finite), written into buf ("" otherwise). */
#define NP_UPDATE_NOTE_MAX 640
const char *np_update_note(const struct np_collector *c, const struct np_finding *o, char *buf,
			   size_t n);
/* Its JSON name: "zero_denominator", "learning_rate" ("" otherwise). */
const char *np_update_cause_name(const struct np_finding *o);
/* For a backward origin whose op's derivative is infinite at a value it
 * read (sqrt of 0), the words saying so and what to do ("" otherwise);
 * op: the origin's op name ("SqrtBackward0"). */
const char *np_singular_note(const struct np_finding *o, const char *op);
void np_print_origin(FILE *f, const struct np_collector *c, const struct np_proc_state *p);
void np_print_warning(FILE *f, const struct np_collector *c, const struct np_proc_state *p,
		      const struct np_explosion_warning *w);
/* "checks" line of the summary for one process. */
void np_print_checks(FILE *f, const struct np_collector *c, const struct np_proc_state *p);

/* events.jsonl: the process's checks, origin and warnings. */
void np_json_findings(struct np_jsonw *w, const struct np_collector *c,
		      const struct np_proc_state *p);
/* trace.json: the origin as an instant on its thread, warnings on the
 * steps track, statistics as counters. */
void np_trace_findings(struct np_trace *t, const struct np_collector *c,
		       const struct np_proc_state *p, uint64_t start_ns, uint32_t steps_tid);

/* The job's verdict over its ranks (verdict.h), when two or more traced
 * processes had checks and one had a finding: printed / written; false
 * (nothing written) otherwise.  `received` lines of one process too. */
bool np_print_verdict(FILE *f, const struct np_collector *c);
void np_json_verdict(struct np_jsonw *w, const struct np_collector *c);
void np_print_received(FILE *f, const struct np_collector *c, const struct np_proc_state *p);

struct np_rank_finding;
struct np_verdict;
/* Each process's origin or received value, for a verdict (into out, at
 * most max); *nchecked: processes whose checks were in place. */
size_t np_collector_findings(const struct np_collector *c, struct np_rank_finding *out,
			     size_t max, size_t *nchecked);
/* The verdict record (also used by `nanprof merge`). */
void np_write_verdict(struct np_jsonw *w, const struct np_rank_finding *f, size_t n,
		      const struct np_verdict *v, size_t processes);

const char *np_dtype_name(unsigned dtype);

/* " under no_grad" (or " under inference_mode") for a forward finding
 * made with grad off, else "": after "forward pass". */
const char *np_grad_mode_words(const struct np_finding *o);
const char *np_batch_words(const struct np_finding *o);
bool np_iteration_of(const struct np_proc_state *p, uint64_t step, uint64_t *iteration);
const char *np_iteration_words(const struct np_proc_state *p, uint64_t step);

/* What that means, for a line of its own ("" when grad was on). */
const char *np_grad_mode_why(const struct np_finding *o);
const char *np_metric_name(unsigned metric);

#endif
