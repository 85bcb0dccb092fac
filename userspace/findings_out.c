#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "findings.h"
#include "findings_out.h"
#include "gpu_findings.h"
#include "output.h"
#include "verdict.h"

static const char *const checks_names[] = { "off", "waiting for torch", "on", "failed",
					    "detached" };

const char *np_dtype_name(unsigned dtype)
{
	static const char *const n[] = { "float32", "float64", "float16", "bfloat16",
					 "float8_e4m3fn", "float8_e5m2" };
	/* a complex tensor (checked as its real view): by its parts' type */
	static const char *const c[] = { "complex64", "complex128", "complex32" };
	if (dtype & NP_ADTYPE_PAIRS) {
		dtype &= ~(unsigned)NP_ADTYPE_PAIRS;
		return dtype < sizeof(c) / sizeof(c[0]) ? c[dtype] : "?";
	}
	return dtype < sizeof(n) / sizeof(n[0]) ? n[dtype] : "?";
}

const char *np_grad_mode_words(const struct np_finding *o)
{
	if (o->phase != NP_PHASE_FORWARD || !(o->grad_mode & NP_AMODE_KNOWN))
		return "";
	if (o->grad_mode & NP_AMODE_INFERENCE)
		return " under inference_mode";
	return o->grad_mode & NP_AMODE_NO_GRAD ? " under no_grad" : "";
}

const char *np_grad_mode_why(const struct np_finding *o)
{
	if (!*np_grad_mode_words(o))
		return "";
	return o->grad_mode & NP_AMODE_INFERENCE
		? "no backward runs through this pass: an inference pass"
		: "no backward runs through this pass: an evaluation, inference or "
		  "teacher-model pass";
}

static const char *grad_mode_name(uint8_t mode)
{
	return mode & NP_AMODE_INFERENCE ? "inference_mode"
	       : mode & NP_AMODE_NO_GRAD ? "no_grad" : "enabled";
}

/* ", batch 2 of the step": a forward or backward pass after the step's
 * first (gradient accumulation's micro-batches, a closure's calls; see
 * docs/outputs.md, batch); "" otherwise.  The optimizer's batch is the
 * step's last, which says nothing. */
const char *np_batch_words(const struct np_finding *o)
{
	static char buf[64];
	if (!o->batch || (o->phase != NP_PHASE_FORWARD && o->phase != NP_PHASE_BACKWARD))
		return "";
	snprintf(buf, sizeof(buf), ", batch %u of the step", o->batch);
	return buf;
}

/* A job whose two optimizers step in turn, each after its own forward
 * and backward (a GAN), has two steps an iteration; its own loop counts
 * iterations.  Once two whole turns were seen (collector.c: turns), step
 * k is iteration k / 2. */
bool np_iteration_of(const struct np_proc_state *p, uint64_t step, uint64_t *iteration)
{
	if (p->turns_broken || p->turns < 4 || step > p->turns)
		return false;
	*iteration = step / 2;
	return true;
}

/* " (iteration 6, the 2nd of two optimizers stepped in turn)", or "" */
const char *np_iteration_words(const struct np_proc_state *p, uint64_t step)
{
	static char buf[96];
	uint64_t it;
	if (!np_iteration_of(p, step, &it))
		return "";
	snprintf(buf, sizeof(buf), " (iteration %llu, the %s of two optimizers stepped in turn)",
		 (unsigned long long)it, step % 2 ? "2nd" : "1st");
	return buf;
}

const char *np_metric_name(unsigned metric)
{
	return metric == NP_METRIC_GRAD_NORM ? "grad_norm" : "output_max_abs";
}

/* What the tensor is, in words, for the paragraph. */
static const char *tensor_words(const struct np_finding *f)
{
	if (f->preexisting)
		return f->role == 4   ? "a parameter's .grad, in the step nanprof attached in"
		       : f->role == 1 ? "its output, made in the step nanprof attached in by a "
					"forward pass it did not see"
		       : f->role == 0 ? "its input, made in the step nanprof attached in by work "
					"it did not see"
				      : "a parameter of the module, when nanprof first saw it";
	switch (f->role) {
	case 1:   /* a module's output is not its op's; outside, the op's is sent */
		return f->op_read_outside ? "what the op read, which autograd does not track "
					    "(data, or computed under no_grad)"
		       : !f->op_inside    ? "its output"
		       : f->outside       ? "the op's output" : "the module's output";
	case 2: return "a gradient it produced";
	case 3: return f->phase == NP_PHASE_FORWARD ? "a parameter of the module, as it ran"
						    : "a parameter after the update";
	case 4: return "a parameter's .grad before the update";
	default: return "its input";
	}
}

/* tensor_words(), and which module received an input from outside
 * the model first, when not the module named: "its input, as
 * `encoder.embed` received it" */
void np_tensor_words(char *buf, size_t n, const struct np_collector *c,
		     const struct np_finding *f)
{
	const char *by = np_name(c, f->received_by), *type = np_name(c, f->received_type);
	if (*by)   /* "as 0 (Linear) received it": a Sequential's child is a number */
		snprintf(buf, n, "its input, as %s%s%s%s received it", by, *type ? " (" : "",
			 type, *type ? ")" : "");
	else
		snprintf(buf, n, "%s", tensor_words(f));
}

const char *np_op_note(const struct np_finding *f)
{
	if (f->role != NP_ROLE_OUTPUT || f->gpu)
		return "";
	if (f->op_read_outside)
		return "in the code that computed it; it read the non-finite tensor below";
	if (f->op_inside && f->outside)   /* in a loss computed outside modules */
		return f->op_read_finite
			? "in the code that computed it; it read only finite values"
			: "in the code that computed it: the first op seen non-finite; not "
			  "all it read was seen";
	if (f->op_inside)
		return f->op_read_finite
			? "inside the module; it read only finite values"
			: "inside the module: the first op seen non-finite; not all it read "
			  "was seen";
	return f->op_read_finite ? "it read only finite values" : "";
}

/* What made the origin's value, when the agent could tell (a division
 * by 0, a softmax's whole NaN rows, an infinite derivative, the
 * optimizer's arithmetic): one line each, labelled as in the origin
 * paragraph, or bare under the summary's origin line. */
static void print_causes(FILE *f, const struct np_collector *c, const struct np_finding *o,
			 const char *op, const char *type, const char *indent, bool labelled)
{
	char update[NP_UPDATE_NOTE_MAX], exp[NP_EXP_NOTE_MAX];
	const struct {
		const char *label, *text;
	} causes[] = {
		{ "divisor: ", np_divisor_note(o, op) },
		{ "rows:   ", np_rows_note(o) },
		{ "derivative: ", np_singular_note(o, op) },
		{ "ctc:    ", np_ctc_note(o, op, type) },
		{ "domain: ", np_domain_note(o, op) },
		{ "exp:    ", np_exp_note(o, op, exp, sizeof(exp)) },
		{ "update: ", np_update_note(c, o, update, sizeof(update)) },
	};
	for (size_t i = 0; i < sizeof(causes) / sizeof(causes[0]); i++)
		if (*causes[i].text)
			fprintf(f, "%s%s%s\n", indent, labelled ? causes[i].label : "",
				causes[i].text);
}

/* "[4, 6, 32]" */
static void dims_text(char *buf, size_t n, const uint32_t *v, int nd)
{
	size_t k = (size_t)snprintf(buf, n, "[");
	for (int d = 0; d < nd && k < n; d++)
		k += (size_t)snprintf(buf + k, n - k, "%s%u", d ? ", " : "", v[d]);
	if (k < n)
		snprintf(buf + k, n - k, "]");
}

/* "1 of 4 along dim 0 (only index 2), all 32 along dim 2": how many
 * indices along each dimension of more than one hold a non-finite
 * value; "" when every dimension has size 1 */
void np_spread_text(char *buf, size_t n, const struct np_spread *s)
{
	size_t k = 0;
	buf[0] = 0;
	for (int d = 0; d < s->ndim && k < n; d++) {
		if (s->size[d] <= 1)
			continue;
		const char *sep = k ? ", " : "";
		if (s->bad[d] >= s->size[d])
			k += (size_t)snprintf(buf + k, n - k, "%sall %u along dim %d", sep,
					      s->size[d], d);
		else if (s->bad[d] == 1)
			k += (size_t)snprintf(buf + k, n - k, "%s1 of %u along dim %d (only index %u)",
					      sep, s->size[d], d, s->first[d]);
		else
			k += (size_t)snprintf(buf + k, n - k, "%s%u of %u along dim %d", sep,
					      s->bad[d], s->size[d], d);
	}
	if (k && k < n && s->partial)
		k += (size_t)snprintf(buf + k, n - k, " (at least: counted over part of the tensor)");
	if (k && k < n && s->no_neginf)
		snprintf(buf + k, n - k, " (of its NaN; its -inf, as a mask holds, left out)");
}

/* After a kernel's name: its device when not the first (a model split
 * over devices in one process) and whether it ran in a replayed graph. */
static const char *kernel_where(const struct np_finding *o, char *buf, size_t n)
{
	if (o->cuda_device)
		snprintf(buf, n, " (on cuda:%u%s)", o->cuda_device,
			 o->graph ? ", in a replayed CUDA graph" : "");
	else
		snprintf(buf, n, "%s", o->graph ? " (in a replayed CUDA graph)" : "");
	return buf;
}

void np_print_origin(FILE *f, const struct np_collector *c, const struct np_proc_state *p)
{
	char where[64];
	const struct np_finding *o = &p->ag.origin;
	char rank[32] = "";
	if (p->rank >= 0)
		snprintf(rank, sizeof(rank), ", rank %d", p->rank);
	const char *mod = np_name(c, o->module), *type = np_name(c, o->module_type);
	const char *op = np_name(c, o->op), *param = np_name(c, o->param);
	/* phase none: between the passes (clip_grad_norm_ after backward(),
	 * a GradScaler's unscale, the input's preparation) */
	/* an evaluation or inference pass: which of the step's model calls
	 * (an inference-only job has no step but 0) */
	char call[64] = "";
	if (*np_grad_mode_words(o) && o->root_call)
		snprintf(call, sizeof(call), ", outermost module call %u of the step", o->root_call);
	fprintf(f, "nanprof: first non-finite value: step %llu%s%s, %s%s%s%s%s (pid %d, thread %u)\n",
		(unsigned long long)o->step, np_iteration_words(p, o->step), np_batch_words(o),
		o->phase ? np_phase_name(o->phase) : "between passes",
		o->phase ? " pass" : "", np_grad_mode_words(o), call, rank, p->pid, o->tid);
	if (*np_grad_mode_why(o))
		fprintf(f, "  mode:   %s\n", np_grad_mode_why(o));
	if (o->outside && o->op_inside)
		fprintf(f, "  where:  outside any module: an op of the code that computed the "
			"tensor given to backward() (a loss written in the training loop)\n");
	else if (o->outside)
		fprintf(f, "  where:  outside any module: the tensor given to backward()%s%s\n",
			*op ? ", made by " : "", op);
	else if (!*mod && !*type && !o->context_unknown)
		fprintf(f, "  where:  outside any module (between module calls)\n");
	else if (o->phase == NP_PHASE_BACKWARD && strcmp(mod, "<none>") == 0)
		/* the collector's name for a node of no forward module call */
		fprintf(f, "  where:  outside any module: the backward of an op the training "
			"loop ran between module calls (the loss), or of an earlier step's graph\n");
	else if (!*mod)   /* the model, or a module (a loss) the loop called itself */
		fprintf(f, "  module: %s, an outermost call (no module around it)\n",
			*type ? type : "(unknown class)");
	else
		fprintf(f, "  module: %s%s%s%s\n", mod, *type ? " (" : "", type, *type ? ")" : "");
	if (strcmp(type, "OptimizedModule") == 0)
		fprintf(f, "  (a torch.compile'd region: its modules run inside compiled code, "
			"where no hook runs; TORCH_COMPILE_DISABLE=1 in the job's environment "
			"names the module, in eager mode: slower, and rounding may differ)\n");
	if (o->gpu)
		fprintf(f, "  kernel: %s%s\n", *op ? op : "(name not received)",
			kernel_where(o, where, sizeof(where)));
	else if (*op && (!o->outside || o->op_inside))
		fprintf(f, "  op:     %s%s%s%s\n", op, *np_op_note(o) ? " (" : "", np_op_note(o),
			*np_op_note(o) ? ")" : "");
	if (o->context_unknown)
		fprintf(f, "  (its launch is older than the context nanprof keeps: module, "
			"step and phase are not known)\n");
	if (*param)
		fprintf(f, "  param:  %s\n", param);
	char shape[128] = "", first[128], spread[512] = "";
	if (o->spread.ndim) {
		shape[0] = ' ';
		dims_text(shape + 1, sizeof(shape) - 1, o->spread.size, o->spread.ndim);
		dims_text(first, sizeof(first), o->spread.first, o->spread.ndim);
		np_spread_text(spread, sizeof(spread), &o->spread);
	} else {
		snprintf(first, sizeof(first), "index %lld", (long long)o->first_bad);
	}
	char words[160];
	np_tensor_words(words, sizeof(words), c, o);
	fprintf(f, "  tensor: %s, %s%s%s, %llu element%s: %llu nan, %llu +inf, %llu -inf; first at "
		"%s\n", words, np_dtype_name(o->dtype),
		o->dtype & NP_ADTYPE_PAIRS ? " viewed as real" : "", shape,
		(unsigned long long)o->numel, o->numel == 1 ? "" : "s", (unsigned long long)o->nan,
		(unsigned long long)o->posinf, (unsigned long long)o->neginf, first);
	if (spread[0])
		fprintf(f, "  spread: %s\n", spread);
	if (o->scaler_run)
		fprintf(f, "  the GradScaler skipped %u iterations in a row from here on, down to "
			"a loss scale of 1: the gradients are non-finite unscaled, no scale "
			"overflow\n", o->scaler_run);
	print_causes(f, c, o, op, type, "  ", true);
	if (*np_range_note(o))
		fprintf(f, "  range:  %s\n", np_range_note(o));
	fprintf(f, "  %s\n", np_origin_why(o));
}

const char *np_origin_why(const struct np_finding *o)
{
	if (o->preexisting)
		return "it was already non-finite when nanprof first saw it: it was born "
		       "before nanprof attached.";
	if (o->role == NP_ROLE_PARAM && o->phase == NP_PHASE_FORWARD)
		/* agent/hooks.c bad_param(): every parameter is checked after
		 * each optimizer.step() */
		return "the module's inputs were finite, and this parameter was not "
		       "non-finite after any optimizer.step(): code outside the optimizer "
		       "wrote it (load_state_dict, an in-place edit under torch.no_grad(), "
		       "an EMA or weight-averaging swap).";
	if (o->held)
		return "it came into the model from outside (data, or code between module "
		       "calls); the model's output stayed finite (a saturating op such as "
		       "tanh or sigmoid hid it), and the backward pass made the step's "
		       "first non-finite gradient from it.";
	if (o->mask_used)
		return "-inf and nothing else, as a mask holds, but what came next in "
		       "the step made a NaN or an Inf of it (the loss: label smoothing "
		       "or a sum over masked entries; a later module; a gradient).";
	if (o->op_read_outside && o->numel && o->nan == o->numel)
		/* NaN everywhere: what a std of one value gives (advantages
		 * normalised over a batch of one) */
		return "it was already NaN everywhere when the loss's code read it: made "
		       "without gradient (data, a statistic of the batch such as the std "
		       "of a single value, code under no_grad), outside what autograd and "
		       "the module checks see.";
	if (o->op_read_outside)
		return "it was already non-finite when the loss's code read it: made "
		       "without gradient (data, a statistic of the batch, code under "
		       "no_grad), outside what autograd and the module checks see.";
	if (o->outside && !o->op_inside && o->divided_by_zero)
		return "no module's output was non-finite: the training loop's own code "
		       "made it, by that division.";
	if (o->outside && !o->op_inside)   /* what its code read is not known */
		return "no module's output was non-finite: the training loop's own code "
		       "made it, from the model's finite outputs or from a tensor autograd "
		       "does not track (data, a statistic of the batch).";
	if (o->inputs_finite && o->role == NP_ROLE_PARAM_GRAD)
		/* the .grads are checked as optimizer.step() begins: what
		 * happened to them after the backward pass is not seen */
		return "every gradient the backward pass made was finite where checked: "
		       "the .grad became non-finite after it, summed over backward() "
		       "calls, written by a hook or by code before optimizer.step() "
		       "(p.grad /= n), or received from another rank in the gradient "
		       "all-reduce.";
	if (o->inputs_finite)
		return "what flowed in was finite: it was born here; every later "
		       "non-finite value is counted as propagation.";
	if (o->phase == NP_PHASE_FORWARD)
		return "its inputs were already non-finite: it came into the model "
		       "from outside (data, or code between module calls).";
	return "what flowed in was already non-finite, from outside the checked tensors.";
}

/* "std", "var", "std_mean", "var_mean": a forward op's name, as the
 * agent writes it (agent/birth_op.c: _too_few) */
static bool is_spread_stat(const char *op)
{
	return !strcmp(op, "std") || !strcmp(op, "var") || !strcmp(op, "std_mean") ||
	       !strcmp(op, "var_mean");
}

/* nll_loss (cross-entropy's last op) made NaN from finite values: with
 * a mean reduction it divides by the total weight of its targets, 0 when
 * every target is ignore_index (a batch of padding only) or weighs 0 */
static bool empty_nll_mean(const struct np_finding *o, const char *op)
{
	return o->role == NP_ROLE_OUTPUT && o->phase == NP_PHASE_FORWARD && !o->gpu &&
	       o->op_read_finite && o->inputs_finite && !o->preexisting && o->nan &&
	       (!strcmp(op, "nll_loss") || !strcmp(op, "nll_loss2d"));
}

const char *np_divisor_note(const struct np_finding *o, const char *op)
{
	if (empty_nll_mean(o, op))
		return "nll_loss's mean divides by the total weight of its targets, 0 here: "
		       "every target was ignore_index (a batch of padding only) or had weight "
		       "0, and 0 / 0 is NaN (skip such batches, or take reduction='sum' over "
		       "max(count, 1))";
	if (!o->divided_by_zero || o->op_read_outside)
		return "";
	if (o->role != NP_ROLE_GRAD && is_spread_stat(op))
		return "a std or var over no more values than its correction (1 by default: "
		       "Bessel's) divides by n - correction = 0: the std of a single value is "
		       "NaN (a batch of one sample: pass correction=0, or skip such a batch)";
	if (o->role == NP_ROLE_GRAD)
		return "the division's divisor held 0: the gradient of s / n is inf or NaN "
		       "where n = 0, even where a torch.where or masked_fill dropped the "
		       "division's value in forward (divide by a safe divisor inside it: "
		       "n.clamp(min=1))";
	return "a division by a tensor that held 0 made it (0 / 0 is NaN, x / 0 is inf): "
	       "a mean over a mask or a count with nothing in it, a norm, std or "
	       "temperature of 0";
}

const char *np_rows_note(const struct np_finding *o)
{
	if (!o->dead_rows)
		return "";
	return "it made NaN of whole rows: an input row of -inf everywhere, every entry "
	       "masked (a padded sample or query with nothing to attend to, a state with "
	       "no valid action), or a row holding +inf (an overflow before it)";
}

const char *np_ctc_note(const struct np_finding *o, const char *op, const char *type)
{
	/* from finite log-probabilities CTC's loss is +inf only when no
	 * path through the frames spells the target: its probability is 0 */
	if (o->role != NP_ROLE_OUTPUT || o->phase != NP_PHASE_FORWARD || !o->inputs_finite ||
	    o->preexisting || !o->posinf || (strcmp(op, "ctc_loss") && strcmp(type, "CTCLoss")))
		return "";
	return "CTC's loss is +inf for a sample whose target no alignment fits: more labels "
	       "than its input_lengths has frames, counting a blank frame between repeated "
	       "labels (\"aa\" takes 3); nn.CTCLoss(zero_infinity=True) makes such a loss "
	       "and its gradient 0, or leave those samples out";
}

/* op, a forward op that read only finite values, made o: which values
 * outside its domain take that (a NaN from a negative sqrt; -inf only,
 * from a log of exactly 0) and where they usually come from. */
const char *np_domain_note(const struct np_finding *o, const char *op)
{
	if (o->role != NP_ROLE_OUTPUT || o->phase != NP_PHASE_FORWARD || o->gpu ||
	    !(o->op_inside || o->op_read_finite) || !o->inputs_finite || o->preexisting ||
	    o->divided_by_zero)
		return "";   /* (the op search's, torch 2: 1.13 names the output's op) */
	bool nan = o->nan > 0, inf_only = !o->nan && (o->posinf || o->neginf);
	bool neg_only = inf_only && !o->posinf;
	bool root = !strcmp(op, "sqrt") || !strcmp(op, "rsqrt");
	/* sqrt keeps its result only, so what it read is seldom seen: a NaN
	 * there may be one it read; every other op here keeps its input */
#define ROUNDED_BELOW_0 "a variance written as E[x^2] - E[x]^2, or another difference " \
			"that should be >= 0, can round below 0 (clamp(min=0) before it, or torch.var)"
	if (root && nan && !o->op_read_finite)
		return "a square root of a negative value is NaN (what it read was kept "
		       "nowhere: it may have read a NaN instead): " ROUNDED_BELOW_0;
	if (!o->op_read_finite)
		return "";
	if (root && nan)
		return "a square root of a negative value is NaN: " ROUNDED_BELOW_0;
#undef ROUNDED_BELOW_0
	if (!strcmp(op, "rsqrt") && inf_only)
		return "rsqrt of 0 is +inf (an eps inside it: rsqrt(var + eps))";
	if (!strcmp(op, "log") || !strcmp(op, "log2") || !strcmp(op, "log10")) {
		if (nan)
			return "a log of a negative value is NaN: what it read should have been "
			       "> 0 (a difference or a sum of signed terms; clamp(min=eps) first)";
		if (neg_only)
			return "a log of exactly 0 is -inf: a probability, count or norm of 0 "
			       "(keep the value in log space: log_softmax, logsumexp; or "
			       "clamp(min=eps) first)";
	}
	if ((!strcmp(op, "log1_p") || !strcmp(op, "log1p")) && (nan || neg_only))
		return "log1p of a value below -1 is NaN, of -1 -inf (a 1 + x that reached 0 or "
		       "below)";
	if ((!strcmp(op, "acos") || !strcmp(op, "asin")) && nan)
		return "acos and asin of a value past +-1 are NaN: a cosine similarity or a "
		       "normalised dot product can round past 1 (clamp to [-1 + eps, 1 - eps] "
		       "first)";
	if (!strcmp(op, "atanh") && (nan || inf_only))
		return "atanh of a value past +-1 is NaN, of +-1 +-inf (tanh's output rounded to "
		       "+-1: clamp to [-1 + eps, 1 - eps] first)";
	if (!strcmp(op, "acosh") && nan)
		return "acosh of a value below 1 is NaN (clamp(min=1 + eps) first)";
	if (!strcmp(op, "pow") && nan)
		return "a negative base to a fractional power is NaN (x ** 0.5 of a negative x: "
		       "clamp the base to >= 0, or x.abs() ** p * x.sign())";
	return "";
}

/* A CUDA birth's op is its kernel: torch's exp runs as the functor
 * at::native::exp_kernel_cuda inside an elementwise kernel template. */
static bool exp_kernel(const char *kernel)
{
	return strstr(kernel, "::exp_kernel_cuda(") != NULL;
}

const char *np_exp_note(const struct np_finding *o, const char *op, char *buf, size_t n)
{
	/* the op search named it (torch 2), or it is torch's CUDA exp kernel,
	 * the first after which its output held an Inf */
	bool named = o->gpu ? exp_kernel(op) : (o->op_inside || o->op_read_finite) && !strcmp(op, "exp");
	if (o->role != NP_ROLE_OUTPUT || o->phase != NP_PHASE_FORWARD || !n || !named ||
	    !o->inputs_finite || o->preexisting || !(o->posinf || o->neginf))
		return "";
	/* the largest x whose exp the type holds: log(its max) */
	const char *limit;
	switch (o->dtype) {
	case NP_DT_F16: limit = "11.09"; break;
	case NP_DT_F64: limit = "709.78"; break;
	case NP_DT_F32: case NP_DT_BF16: limit = "88.72"; break;
	default: return "";
	}
	snprintf(buf, n, "exp of a value above %s is +inf in %s%s: a logit, log-variance or "
		 "score that grew (clamp it before the exp, subtract the row's max first, or "
		 "stay in log space: logsumexp, log_softmax, softplus)", limit,
		 np_dtype_name(o->dtype),
		 o->gpu ? " (unless what it read held an inf: the writer of its input may "
			  "not have been checked)"
		 : o->op_read_finite ? ""
				     : " (what it read was kept nowhere: it may have read an inf "
				       "instead)");
	return buf;
}

/* a learning rate that is not finite, in words (and in JSON, which has
 * no number for it) */
static const char *nonfinite_words(double v)
{
	return isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
}

const char *np_update_note(const struct np_collector *c, const struct np_finding *o, char *buf,
			   size_t n)
{
	const struct np_update *u = &o->update;
	if (!*np_update_cause_name(o) || !n)
		return "";
	const char *opt = np_name(c, u->optimizer);
	if (u->cause == NP_UPD_LR) {
		snprintf(buf, n, "%s's learning rate is %s: every update it scales is "
			 "non-finite (a learning-rate schedule that divided by 0, or read a "
			 "non-finite value)", opt, nonfinite_words(u->lr));
		return buf;
	}
	const char *st = np_name(c, u->state), *dt = np_dtype_name(u->state_dtype);
	char denom[64], eps[64], hint[192];
	if (!strcmp(st, "exp_inf"))   /* Adamax: a running max of |grad|, eps a floor */
		snprintf(denom, sizeof(denom), "exp_inf (the largest |gradient| so far, or eps)");
	else if (!strcmp(opt, "Adadelta"))
		snprintf(denom, sizeof(denom), "sqrt(%s + eps)", st);
	else
		snprintf(denom, sizeof(denom), "sqrt(%s) plus eps", st);
	if (u->eps == 0) {
		snprintf(eps, sizeof(eps), "eps = 0");
		snprintf(hint, sizeof(hint), "every gradient there so far was 0 (an embedding "
			 "row never looked up, a dead unit, a padding index): use an eps > 0 "
			 "(1e-8 by default)");
	} else {
		snprintf(eps, sizeof(eps), "eps = %g is 0 in %s", u->eps, dt);
		snprintf(hint, sizeof(hint), "a gradient of 0 so far, or one too small for its "
			 "square to show in %s: use an eps %s holds (1e-4 or more in float16), or "
			 "keep the optimizer's state in float32", dt, dt);
	}
	snprintf(buf, n, "%s divides each update by %s, and %s: %llu of the %llu non-finite "
		 "values are where %s held 0, so the update was 0 / 0 (NaN) or x / 0 (inf) "
		 "there; %s", opt, denom, eps, (unsigned long long)u->at_zero,
		 (unsigned long long)(o->nan + o->posinf + o->neginf), st, hint);
	return buf;
}

const char *np_update_cause_name(const struct np_finding *o)
{
	if (o->role != NP_ROLE_PARAM || !o->inputs_finite || o->preexisting)
		return "";
	return o->update.cause == NP_UPD_ZERO_DENOM ? "zero_denominator"
	       : o->update.cause == NP_UPD_LR	     ? "learning_rate"
						     : "";
}

const char *np_singular_note(const struct np_finding *o, const char *op)
{
	if (!o->singular)
		return "";
	if (!strncmp(op, "SqrtBackward", 12))
		return "sqrt's derivative is infinite at 0, and it read a 0 there: a norm or "
		       "distance of exactly 0 (sqrt(x + eps), or torch.linalg.vector_norm, "
		       "whose gradient at 0 is 0)";
	if (!strncmp(op, "PowBackward", 11))
		return "a power below 1 has an infinite derivative at 0, and it read a 0 "
		       "there (x ** 0.5 of a 0: add an epsilon to x)";
	if (!strncmp(op, "Log", 3))
		return "log's derivative is infinite at 0, and it read a 0 there (clamp its "
		       "input, or keep the value in log space: log_softmax, logsumexp)";
	return "its derivative is infinite at +-1, and it read +-1 there (a cosine of "
	       "exactly 1: clamp to [-1 + eps, 1 - eps])";
}

const char *np_range_note(const struct np_finding *o)
{
	/* born here: made from finite values, the range is the first thing
	 * to suspect (a half-precision attention score, an fp8 activation) */
	if (!o->inputs_finite || o->preexisting || o->held || o->mask_used ||
	    o->op_read_outside || (o->outside && !o->op_inside) ||
	    (o->role != NP_ROLE_OUTPUT && o->role != NP_ROLE_GRAD))
		return "";
	switch (o->dtype) {
	case NP_DT_F16:
		return "float16 holds finite values up to 65504 only: a result past it is "
		       "inf, and inf - inf, 0 * inf or a softmax over inf is NaN (bfloat16 "
		       "and float32 reach 3.4e38)";
	case NP_DT_F8E4M3:
		return "float8_e4m3fn holds finite values up to 448 only and has no inf: a "
		       "result past it is NaN unless the cast saturates";
	case NP_DT_F8E5M2:
		return "float8_e5m2 holds finite values up to 57344 only: a result past it "
		       "is inf";
	default:
		return "";
	}
}

void np_print_received(FILE *f, const struct np_collector *c, const struct np_proc_state *p)
{
	const struct np_finding *r = &p->ag.recv;
	char rank[32] = "";
	if (p->rank >= 0)
		snprintf(rank, sizeof(rank), "rank %d ", p->rank);
	char when[48] = "between passes";
	if (r->phase)
		snprintf(when, sizeof(when), "in the %s pass", np_phase_name(r->phase));
	fprintf(f, "nanprof: %s(pid %d): non-finite values came in through %s at step %llu, %s: "
		"born on another rank\n", rank, p->pid, np_name(c, r->op),
		(unsigned long long)r->step, when);
}

size_t np_collector_findings(const struct np_collector *c, struct np_rank_finding *out,
			     size_t max, size_t *nchecked)
{
	size_t n = 0;
	*nchecked = 0;
	for (uint32_t i = 0; i < c->nprocs; i++) {
		const struct np_proc_state *p = &c->procs[i];
		if ((p->checks != NP_CHECKS_ON && p->checks != NP_CHECKS_DETACHED) ||
		    !np_proc_worked(p))
			continue;   /* a launcher, a DataLoader worker: no say */
		++*nchecked;
		if ((!p->ag.found && !p->ag.received) || n >= max)
			continue;
		const struct np_finding *o = p->ag.found ? &p->ag.origin : &p->ag.recv;
		out[n++] = (struct np_rank_finding){
			.rank = p->rank, .pid = (uint64_t)p->pid, .received = !p->ag.found,
			.step = o->step, .phase = o->phase, .role = o->role, .ts = o->ts,
			.module = np_name(c, o->module), .op = np_name(c, o->op),
			.tensor = np_role_name(o->role), .via = np_name(c, o->op) };
	}
	return n;
}

static struct np_rank_finding vf[NP_VERDICT_MAX];
static struct np_verdict vd;

bool np_print_verdict(FILE *f, const struct np_collector *c)
{
	size_t nchecked, n = np_collector_findings(c, vf, NP_VERDICT_MAX, &nchecked);
	if (nchecked < 2 || n == 0)
		return false;
	np_verdict_compute(vf, n, &vd);
	if (vd.origin < 0) {
		fprintf(f, "  verdict over %zu processes: every rank with a non-finite value received "
			"it through a collective; the rank where it was born was not traced\n",
			nchecked);
	} else {
		const struct np_rank_finding *o = &vf[vd.origin];
		fprintf(f, "  verdict over %zu processes: born on rank %d (pid %llu) at step %llu, "
			"%s pass, in %s (%s%s%stensor %s)\n", nchecked, o->rank,
			(unsigned long long)o->pid, (unsigned long long)o->step,
			np_phase_name(o->phase), *o->module ? o->module : "the outermost module",
			*o->op ? "op " : "", o->op, *o->op ? ", " : "", o->tensor);
	}
	for (size_t i = 0; i < n; i++)
		if ((int)i != vd.origin)
			fprintf(f, "    rank %d (pid %llu) received it through %s\n", vf[i].rank,
				(unsigned long long)vf[i].pid, vd.via[i]);
	return true;
}

void np_json_verdict(struct np_jsonw *w, const struct np_collector *c)
{
	size_t nchecked, n = np_collector_findings(c, vf, NP_VERDICT_MAX, &nchecked);
	if (nchecked < 2 || n == 0)
		return;
	np_verdict_compute(vf, n, &vd);
	np_write_verdict(w, vf, n, &vd, nchecked);
}

void np_write_verdict(struct np_jsonw *w, const struct np_rank_finding *f, size_t n,
		      const struct np_verdict *v, size_t processes)
{
	np_jsonw_start_object(w);
	np_jsonw_string_field(w, "type", "verdict");
	np_jsonw_uint_field(w, "processes", processes);
	const struct np_rank_finding *o = v->origin >= 0 ? &f[v->origin] : NULL;
	np_jsonw_bool_field(w, "origin_found", o != NULL);
	np_jsonw_int_field(w, "origin_rank", o ? o->rank : -1);
	np_jsonw_uint_field(w, "origin_pid", o ? o->pid : 0);
	np_jsonw_uint_field(w, "step", o ? o->step : 0);
	np_jsonw_string_field(w, "phase", o ? np_phase_name(o->phase) : NULL);
	np_jsonw_string_field(w, "module", o ? o->module : NULL);
	np_jsonw_string_field(w, "op", o && *o->op ? o->op : NULL);
	np_jsonw_string_field(w, "tensor", o ? o->tensor : NULL);
	np_jsonw_name(w, "received");
	np_jsonw_start_array(w);
	for (size_t i = 0; i < n; i++) {
		if ((int)i == v->origin)
			continue;
		np_jsonw_start_object(w);
		np_jsonw_int_field(w, "rank", f[i].rank);
		np_jsonw_uint_field(w, "pid", f[i].pid);
		np_jsonw_uint_field(w, "step", f[i].step);
		np_jsonw_string_field(w, "phase", np_phase_name(f[i].phase));
		np_jsonw_string_field(w, "via", v->via[i]);
		np_jsonw_end_object(w);
	}
	np_jsonw_end_array(w);
	np_jsonw_end_object(w);
}

void np_print_warning(FILE *f, const struct np_collector *c, const struct np_proc_state *p,
		      const struct np_explosion_warning *w)
{
	char rank[32] = "";
	if (p->rank >= 0)
		snprintf(rank, sizeof(rank), " rank %d", p->rank);
	const char *mod = np_name(c, w->module), *type = np_name(c, w->module_type);
	bool grad = w->metric == NP_METRIC_GRAD_NORM;
	char who[160];
	if (*mod)
		snprintf(who, sizeof(who), "%s", mod);
	else if (*type)   /* named "" as the model is: a loss module beside it */
		snprintf(who, sizeof(who), "the outermost module %s%s", type,
			 grad ? "'s own parameters" : "");
	else
		snprintf(who, sizeof(who), "the whole model");
	char ratio[32];   /* "712", and past a million "9.26e+19", not twenty digits */
	snprintf(ratio, sizeof(ratio), w->ratio < 1e6 ? "%.0f" : "%.3g", w->ratio);
	fprintf(f, "nanprof: warning: step %llu%s: %s of %s is %.3g, %sx its recent median "
		"and growing: %s may be exploding\n", (unsigned long long)w->step, rank,
		grad ? "gradient norm" : "largest |output|", who, w->value, ratio,
		grad ? "gradients" : "activations");
}

/* Coverage: the kernels whose outputs nanprof could not size at launch,
 * most launched first (their values are caught later: cupti/README.md). */
static void print_undecoded(FILE *f, const struct np_collector *c, const struct np_gpu_state *g)
{
	if (!g->nundec)
		return;
	fprintf(f, "    kernels not checked at launch (launches):");
	for (uint32_t i = 0; i < g->nundec; i++)
		fprintf(f, "%s %.80s %llu", i ? ";" : "", np_gpu_kernel_name(c, g, g->undec[i].func),
			(unsigned long long)g->undec[i].launches);
	fputc('\n', f);
}

/* Deferred checks (NANPROF_GPU_DEFER, cupti/defer.h): how many waited,
 * in how many list launches, and why lists went out before their N
 * launches had gone by, the most first: what to change for longer lists. */
static const char *const deferred_early_text[NP_DEFER_EARLY] = {
	"as a launch wrote what waited", "as a launch's writes were not known",
	"at a copy, memset, allocation or free",
	"at a sync, event record, copy to the host or graph capture",
	"at a check launched at once or the stop", "as no open list fitted",
};
static const char *const deferred_early_json[NP_DEFER_EARLY] = {
	"gpu_deferred_sent_at_write", "gpu_deferred_sent_at_unknown_writes",
	"gpu_deferred_sent_at_memory_call", "gpu_deferred_sent_at_order_call",
	"gpu_deferred_sent_at_immediate_check", "gpu_deferred_sent_lists_full",
};

static void print_deferred(FILE *f, const struct np_gpu_state *g)
{
	if (!g->defer.checks)
		return;
	fprintf(f, "; %llu checks deferred into %llu list launches (flushed: %llu at the end "
		"of the window", (unsigned long long)g->defer.checks,
		(unsigned long long)g->defer.launches, (unsigned long long)g->defer.window);
	int shown[NP_DEFER_EARLY] = { 0 };
	for (int k = 0; k < NP_DEFER_EARLY; k++) {
		int best = -1;
		for (int i = 0; i < NP_DEFER_EARLY; i++)
			if (!shown[i] && g->defer.early[i] &&
			    (best < 0 || g->defer.early[i] > g->defer.early[best]))
				best = i;
		if (best < 0)
			break;
		shown[best] = 1;
		fprintf(f, ", %llu %s", (unsigned long long)g->defer.early[best],
			deferred_early_text[best]);
	}
	fputc(')', f);
}

/* " on 2 devices" when the process checked more than one, else "" */
static const char *devices_text(const struct np_gpu_state *g, char *buf, size_t n)
{
	buf[0] = 0;
	if (g->devices > 1)
		snprintf(buf, n, " on %u devices", g->devices);
	return buf;
}

static void print_gpu_checks(FILE *f, const struct np_collector *c, const struct np_proc_state *p)
{
	const struct np_gpu_state *g = &p->gpu;
	char devs[32];
	if (g->state == 2) {
		fprintf(f, "    GPU checks: off: %s\n", g->how);
		return;
	}
	if (g->state != 1)
		return;
	if (strncmp(g->how, "modules", 7) == 0) {
		/* no launch seen: the hooks' CUDA tensors (cupti/modules.c) */
		fprintf(f, "    GPU checks: CUDA tensors at module level (%s)%s; %llu checks (%.1f MB)",
			strstr(g->how, "cupti taken") ? "CUPTI is taken by another tool"
						      : "NANPROF_GPU_MODE=modules",
			devices_text(g, devs, sizeof(devs)), (unsigned long long)g->checks,
			(double)g->bytes / 1e6);
		if (g->births)
			fprintf(f, "; births: %llu", (unsigned long long)g->births);
		if (g->dropped || g->overflow || g->lost)
			fprintf(f, "; %llu results lost, %llu over table limits, %llu records lost",
				(unsigned long long)g->dropped, (unsigned long long)g->overflow,
				(unsigned long long)g->lost);
		fputc('\n', f);
		return;
	}
	int every = strncmp(g->how, "every", 5) == 0;
	fprintf(f, "    GPU checks: %s launch%s%s%s; %s, %llu checks", every ? "every" : "sampled",
		every ? "" : "es", strstr(g->how, "+modules") ? " and CUDA tensors at module level" : "",
		devices_text(g, devs, sizeof(devs)), g->launches[0] ? g->launches : "launches ?",
		(unsigned long long)g->checks);
	if (strstr(g->how, "empty checks"))   /* NANPROF_GPU_DIAG (cupti/gpu.h) */
		fputs(" (NANPROF_GPU_DIAG=empty-checks: launched, reading nothing)", f);
	const char *deferred = strstr(g->how, "deferred ");   /* NANPROF_GPU_DEFER */
	if (deferred)
		fprintf(f, " (those of up to %d launches deferred into one)", atoi(deferred + 9));
	if (g->check_launches)   /* a list launch checks several outputs */
		fprintf(f, " in %llu launches", (unsigned long long)g->check_launches);
	fprintf(f, " (%.1f MB), %llu launches with no output nanprof can size",
		(double)g->bytes / 1e6, (unsigned long long)g->undecoded);
	if (g->sampled_out)
		fprintf(f, ", %llu sampled out", (unsigned long long)g->sampled_out);
	if (g->gemm_checks)   /* cupti/blas.h */
		fprintf(f, "; %llu cuBLAS, cuDNN and cuFFT results checked at their call",
			(unsigned long long)g->gemm_checks);
	if (g->triton_checks)   /* cupti/triton.h */
		fprintf(f, "; %llu Triton launches checked as Inductor named their outputs",
			(unsigned long long)g->triton_checks);
	if (g->generic_checks)   /* cupti/generic.h */
		fprintf(f, "; %llu of their outputs checked at a decoded reader",
			(unsigned long long)g->generic_checks);
	if (g->guard_checks || g->guard_skips)   /* cupti/writers.h */
		fprintf(f, "; guards: %llu CUDA tensors checked at module level after "
			"unchecked launches, %llu not (their writer was checked)",
			(unsigned long long)g->guard_checks, (unsigned long long)g->guard_skips);
	print_deferred(f, g);
	if (g->births)
		fprintf(f, "; %llu kernel births", (unsigned long long)g->births);
	if (g->over_budget)   /* cupti/drain.h: judged, held back */
		fprintf(f, "; %llu later births and propagations not reported (over the "
			"per-second bounds)", (unsigned long long)g->over_budget);
	uint64_t per_launch = np_gpu_host_ns_per_launch(g);
	if (per_launch) {   /* cupti/host_cost.h: sampled */
		fprintf(f, "; nanprof's callbacks took ~%.1f us of host time per kernel launch",
			(double)per_launch / 1e3);
		/* none timed: fewer than one in 31 launched (deferred into lists) */
		if (np_gpu_check_launch_ns(g))
			fprintf(f, " (a check launch ~%.1f us of it)",
				(double)np_gpu_check_launch_ns(g) / 1e3);
	}
	if (g->forgotten)   /* cupti/dirty.h: the tracker's bounds */
		fprintf(f, "; %llu non-finite ranges forgotten for room (a later reader of "
			"one may be named as a birth)", (unsigned long long)g->forgotten);
	if (g->wide_lost)   /* cupti/wide_inputs.h: the ring's bound */
		fprintf(f, "; %llu checks of kernels with more than 16 inputs judged on their "
			"first 16 (the rest no longer kept: one may be named as a birth)",
			(unsigned long long)g->wide_lost);
	if (g->writes_lost)   /* cupti/write_queue.h: the queue's bound */
		fprintf(f, "; %llu copies and memsets not followed (the agent's queue was full: "
			"a later birth reading one may be named a propagation)",
			(unsigned long long)g->writes_lost);
	if (g->dropped || g->overflow || g->lost || g->candidates_dropped)
		fprintf(f, "; %llu results lost, %llu over table limits, %llu records lost",
			(unsigned long long)g->dropped, (unsigned long long)g->overflow,
			(unsigned long long)g->lost);
	fputc('\n', f);
	print_undecoded(f, c, g);
}

/* Loss scaling: its skipped iterations, which are no origin. */
static void print_scaler(FILE *f, const struct np_collector *c, const struct np_proc_state *p)
{
	const struct np_scaler_state *s = &p->ag.scaler;
	if (!s->on)
		return;
	fprintf(f, "    GradScaler: %llu of %llu iterations skipped for inf/NaN gradients",
		(unsigned long long)s->skipped, (unsigned long long)s->iterations);
	if (s->first_has)
		fprintf(f, " (loss-scale overflow, expected; the first at step %llu, %s, in %s%s%s)",
			(unsigned long long)s->first.step, np_phase_name(s->first.phase),
			*np_name(c, s->first.module) ? np_name(c, s->first.module) : "the model",
			*np_name(c, s->first.op) ? ", " : "", np_name(c, s->first.op));
	if (s->not_known)
		fprintf(f, "; %llu verdicts not known", (unsigned long long)s->not_known);
	fputc('\n', f);
}

void np_print_checks(FILE *f, const struct np_collector *c, const struct np_proc_state *p)
{
	const struct np_agent_state *a = &p->ag;
	if (p->checks == NP_CHECKS_OFF)
		return;   /* tracer only (--no-checks, or no agent) */
	if (p->checks == NP_CHECKS_WAITING && !p->info.torch_version[0])
		return;   /* never imported torch (a launcher): nothing to check */
	fprintf(f, "    checks: %s%s%s; %llu tensors (%.1f MB) checked, %llu skipped",
		checks_names[p->checks], a->torch[0] ? ", " : "", a->torch,
		(unsigned long long)a->checked, (double)a->bytes / 1e6,
		(unsigned long long)a->skipped);
	if (a->lost || a->dropped || a->overflow)
		fprintf(f, "; lost %llu reports, %llu over the per-step bound, %llu table "
			"overflows", (unsigned long long)a->lost, (unsigned long long)a->dropped,
			(unsigned long long)a->overflow);
	fputc('\n', f);
	if (a->found) {
		/* self-contained: summary.txt has no origin paragraph above it */
		const struct np_finding *o = &a->origin;
		const char *mod = np_name(c, o->module), *type = np_name(c, o->module_type);
		const char *op = np_name(c, o->op);
		fprintf(f, "    first non-finite: step %llu%s%s, %s%s, in ",
			(unsigned long long)o->step, np_iteration_words(p, o->step),
			np_batch_words(o), np_phase_name(o->phase),
			np_grad_mode_words(o));
		if (o->outside || !strcmp(mod, "<none>"))
			fprintf(f, "code outside any module");
		else if (!*mod)
			fprintf(f, "the outermost %s", *type ? type : "module");
		else
			fprintf(f, "%s%s%s%s", mod, *type ? " (" : "", type, *type ? ")" : "");
		const char *note = *op ? np_op_note(o) : "", *param = np_name(c, o->param);
		char words[160];
		np_tensor_words(words, sizeof(words), c, o);
		fprintf(f, "%s%s%s%s%s, %s%s%s%s; %llu later reports are propagation\n",
			*op ? ", op " : "", op, *note ? " (" : "", note, *note ? ")" : "", words,
			*param ? " (" : "", param, *param ? ")" : "",
			(unsigned long long)a->propagation);
		char spread[512], shape[128];
		np_spread_text(spread, sizeof(spread), &o->spread);
		dims_text(shape, sizeof(shape), o->spread.size, o->spread.ndim);
		if (spread[0])
			fprintf(f, "      where in it %s: %s\n", shape, spread);
		print_causes(f, c, o, op, type, "      ", false);
	}
	else if (a->received)
		fprintf(f, "    first non-finite: received through %s at step %llu (born on "
			"another rank)\n", np_name(c, a->recv.op), (unsigned long long)a->recv.step);
	else if (p->checks == NP_CHECKS_ON || p->checks == NP_CHECKS_DETACHED)
		fprintf(f, "    no non-finite value left any module%s\n",
			a->contained ? " (some stayed inside one)" : "");
	if (a->masked_outputs)
		fprintf(f, "    -inf only (masks) left the model %llu times, and nothing "
			"non-finite came of it in their steps: not faults\n",
			(unsigned long long)a->masked_outputs);
	print_scaler(f, c, p);
	print_gpu_checks(f, c, p);
	if (a->nwarnings)
		fprintf(f, "    explosion warnings: %u%s\n", a->nwarnings,
			a->warnings_dropped ? " (more dropped)" : "");
}

static void uint_array(struct np_jsonw *w, const char *name, const uint32_t *v, int n)
{
	np_jsonw_name(w, name);
	np_jsonw_start_array(w);
	for (int i = 0; i < n; i++)
		np_jsonw_uint(w, v[i]);
	np_jsonw_end_array(w);
}

/* The optimizer's cause of a parameter's birth (np_update_note). */
static void update_json(struct np_jsonw *w, const struct np_collector *c,
			const struct np_finding *o)
{
	const struct np_update *u = &o->update;
	char note[NP_UPDATE_NOTE_MAX];
	np_jsonw_string_field(w, "update_cause", np_update_cause_name(o));
	np_jsonw_string_field(w, "optimizer", np_name(c, u->optimizer));
	if (u->cause == NP_UPD_ZERO_DENOM) {
		np_jsonw_string_field(w, "optimizer_state", np_name(c, u->state));
		np_jsonw_string_field(w, "optimizer_state_dtype", np_dtype_name(u->state_dtype));
		np_jsonw_double_field(w, "eps", u->eps);
		np_jsonw_uint_field(w, "nonfinite_where_state_zero", u->at_zero);
	} else {   /* not a JSON number */
		np_jsonw_string_field(w, "lr", nonfinite_words(u->lr));
	}
	np_jsonw_string_field(w, "update_note", np_update_note(c, o, note, sizeof(note)));
}

/* where in the tensor: its shape, the first non-finite element's index,
 * and how many indices along each dimension hold one */
static void spread_json(struct np_jsonw *w, const struct np_spread *s)
{
	uint_array(w, "shape", s->size, s->ndim);
	uint_array(w, "first_at", s->first, s->ndim);
	uint_array(w, "nonfinite_along", s->bad, s->ndim);
	np_jsonw_bool_field(w, "spread_partial", s->partial);
	if (s->no_neginf)
		np_jsonw_bool_field(w, "spread_without_neginf", true);
}

static void finding_json(struct np_jsonw *w, const struct np_collector *c,
			 const struct np_proc_state *p, const struct np_finding *o, const char *type)
{
	np_jsonw_start_object(w);
	np_jsonw_string_field(w, "type", type);
	np_jsonw_uint_field(w, "step", o->step);
	np_jsonw_string_field(w, "phase", np_phase_name(o->phase));
	np_jsonw_string_field(w, "module", o->outside ? NULL : np_name(c, o->module));
	np_jsonw_string_field(w, "module_type", *np_name(c, o->module_type)
				  ? np_name(c, o->module_type) : NULL);
	np_jsonw_string_field(w, type[4] == 'r' ? "via" : "op",
			      *np_name(c, o->op) ? np_name(c, o->op) : NULL);
	/* what the op read from outside the graph: its input */
	np_jsonw_string_field(w, "tensor", o->op_read_outside ? "input" : np_role_name(o->role));
	if (*np_name(c, o->received_by))
		np_jsonw_string_field(w, "received_by", np_name(c, o->received_by));
	np_jsonw_string_field(w, "param", *np_name(c, o->param) ? np_name(c, o->param) : NULL);
	np_jsonw_string_field(w, "dtype", np_dtype_name(o->dtype));
	if (o->dtype & NP_ADTYPE_PAIRS)   /* shape, numel and spread: of view_as_real */
		np_jsonw_bool_field(w, "viewed_as_real", true);
	np_jsonw_uint_field(w, "numel", o->numel);
	np_jsonw_uint_field(w, "nan", o->nan);
	np_jsonw_uint_field(w, "posinf", o->posinf);
	np_jsonw_uint_field(w, "neginf", o->neginf);
	np_jsonw_int_field(w, "first_index", o->first_bad);
	if (o->spread.ndim)
		spread_json(w, &o->spread);
	np_jsonw_bool_field(w, "inputs_finite", o->inputs_finite);
	if (!o->gpu && o->role == NP_ROLE_OUTPUT && *np_name(c, o->op)) {
		np_jsonw_bool_field(w, "op_inside", o->op_inside);
		np_jsonw_bool_field(w, "op_read_finite", o->op_read_finite);
		if (o->op_read_outside)
			np_jsonw_bool_field(w, "op_read_untracked", true);
	}
	if (!o->gpu && (o->divided_by_zero || empty_nll_mean(o, np_name(c, o->op))))
		np_jsonw_bool_field(w, "divided_by_zero", true);
	if (!o->gpu && o->singular)
		np_jsonw_bool_field(w, "infinite_derivative", true);
	if (!o->gpu && o->dead_rows)
		np_jsonw_bool_field(w, "rows_all_masked", true);
	if (*np_ctc_note(o, np_name(c, o->op), np_name(c, o->module_type)))
		np_jsonw_bool_field(w, "ctc_no_alignment", true);
	if (*np_domain_note(o, np_name(c, o->op)))
		np_jsonw_bool_field(w, "outside_domain", true);
	char exp[NP_EXP_NOTE_MAX];
	if (*np_exp_note(o, np_name(c, o->op), exp, sizeof(exp)))
		np_jsonw_bool_field(w, "exp_overflow", true);
	if (*np_update_cause_name(o))
		update_json(w, c, o);
	if (o->phase == NP_PHASE_FORWARD && (o->grad_mode & NP_AMODE_KNOWN))
		np_jsonw_string_field(w, "grad_mode", grad_mode_name(o->grad_mode));
	if (o->phase == NP_PHASE_FORWARD && o->root_call)
		np_jsonw_uint_field(w, "outermost_call", o->root_call);
	if (o->mask_used)   /* -Inf only, held as a mask until its step used it */
		np_jsonw_bool_field(w, "mask_made_nonfinite", true);
	if (o->held)   /* surfaced in a later phase of its step */
		np_jsonw_bool_field(w, "held_in_forward", true);
	np_jsonw_bool_field(w, "outside_modules", o->outside);
	np_jsonw_bool_field(w, "before_attach", o->preexisting);
	np_jsonw_string_field(w, "device", o->gpu ? "cuda" : "cpu");
	if (o->gpu) {
		np_jsonw_uint_field(w, "cuda_device", o->cuda_device);
		np_jsonw_bool_field(w, "cuda_graph", o->graph);
		np_jsonw_bool_field(w, "context_known", !o->context_unknown);
	}
	if (o->scaler_run)
		np_jsonw_uint_field(w, "grad_scaler_skips_in_row", o->scaler_run);
	uint64_t iteration;
	if (np_iteration_of(p, o->step, &iteration))   /* two optimizers in turn */
		np_jsonw_uint_field(w, "iteration", iteration);
	np_jsonw_uint_field(w, "batch", o->batch);
	np_jsonw_int_field(w, "rank", p->rank);
	np_jsonw_uint_field(w, "pid", (uint64_t)p->pid);
	np_jsonw_uint_field(w, "tid", o->tid);
	np_jsonw_uint_field(w, "ts_ns", o->ts);
	np_jsonw_end_object(w);
}

void np_json_findings(struct np_jsonw *w, const struct np_collector *c,
		      const struct np_proc_state *p)
{
	const struct np_agent_state *a = &p->ag;
	if (p->checks == NP_CHECKS_OFF && !a->found && !a->nwarnings)
		return;   /* tracer only */
	np_jsonw_start_object(w);
	np_jsonw_string_field(w, "type", "checks");
	np_jsonw_uint_field(w, "pid", (uint64_t)p->pid);
	np_jsonw_int_field(w, "rank", p->rank);
	np_jsonw_string_field(w, "state", checks_names[p->checks]);
	np_jsonw_string_field(w, "agent_message", a->torch[0] ? a->torch : NULL);
	np_jsonw_uint_field(w, "tensors_checked", a->checked);
	np_jsonw_uint_field(w, "bytes_checked", a->bytes);
	np_jsonw_uint_field(w, "tensors_skipped", a->skipped);
	np_jsonw_uint_field(w, "agent_records", a->records);
	np_jsonw_uint_field(w, "reports_lost", a->lost);
	np_jsonw_uint_field(w, "reports_over_step_bound", a->dropped);
	np_jsonw_uint_field(w, "agent_table_overflow", a->overflow);
	np_jsonw_uint_field(w, "propagation", a->propagation);
	np_jsonw_uint_field(w, "contained", a->contained);
	np_jsonw_uint_field(w, "masked_outputs", a->masked_outputs);
	np_jsonw_uint_field(w, "explosion_warnings_dropped", a->warnings_dropped);
	np_jsonw_uint_field(w, "module_stats_dropped", a->mods_dropped);
	if (a->scaler.on) {
		np_jsonw_uint_field(w, "grad_scaler_iterations", a->scaler.iterations);
		np_jsonw_uint_field(w, "grad_scaler_skipped", a->scaler.skipped);
		np_jsonw_uint_field(w, "grad_scaler_overflow_reports", a->scaler.overflow_reports);
		np_jsonw_uint_field(w, "grad_scaler_not_known", a->scaler.not_known);
	}
	if (p->gpu.state) {
		const struct np_gpu_state *g = &p->gpu;
		np_jsonw_string_field(w, "gpu_state", g->state == 1 ? "on" : "off");
		np_jsonw_string_field(w, "gpu_message", g->how);
		np_jsonw_uint_field(w, "gpu_checks", g->checks);
		np_jsonw_uint_field(w, "gpu_check_launches", g->check_launches);
		np_jsonw_uint_field(w, "gpu_devices", g->devices);
		np_jsonw_uint_field(w, "gpu_bytes_checked", g->bytes);
		np_jsonw_uint_field(w, "gpu_launches_undecoded", g->undecoded);
		np_jsonw_uint_field(w, "gpu_launches_sampled_out", g->sampled_out);
		np_jsonw_uint_field(w, "gpu_guard_checks", g->guard_checks);
		np_jsonw_uint_field(w, "gpu_guard_skips", g->guard_skips);
		np_jsonw_uint_field(w, "gpu_generic_checks", g->generic_checks);
		np_jsonw_uint_field(w, "gpu_gemm_checks", g->gemm_checks);
		np_jsonw_uint_field(w, "gpu_triton_checks", g->triton_checks);
		np_jsonw_name(w, "gpu_undecoded_kernels");
		np_gpu_json_undecoded(w, c, g);
		np_jsonw_uint_field(w, "gpu_results_lost", g->dropped);
		np_jsonw_uint_field(w, "gpu_reports_over_bounds", g->over_budget);
		np_jsonw_uint_field(w, "gpu_origin_forgotten", g->forgotten);
		np_jsonw_uint_field(w, "gpu_wide_inputs_lost", g->wide_lost);
		np_jsonw_uint_field(w, "gpu_unchecked_writes", g->writes);
		np_jsonw_uint_field(w, "gpu_unchecked_copies_carried", g->writes_carried);
		np_jsonw_uint_field(w, "gpu_unchecked_writes_lost", g->writes_lost);
		np_jsonw_uint_field(w, "gpu_host_ns_per_launch", np_gpu_host_ns_per_launch(g));
		np_jsonw_uint_field(w, "gpu_check_launch_ns", np_gpu_check_launch_ns(g));
		if (g->defer.checks) {   /* cupti/defer.h */
			np_jsonw_uint_field(w, "gpu_deferred_checks", g->defer.checks);
			np_jsonw_uint_field(w, "gpu_deferred_list_launches", g->defer.launches);
			np_jsonw_uint_field(w, "gpu_deferred_sent_at_window", g->defer.window);
			for (int i = 0; i < NP_DEFER_EARLY; i++)
				np_jsonw_uint_field(w, deferred_early_json[i], g->defer.early[i]);
		}
		np_jsonw_uint_field(w, "gpu_table_overflow", g->overflow);
		np_jsonw_uint_field(w, "gpu_records_lost", g->lost);
		np_jsonw_uint_field(w, "gpu_births", g->births);
		np_jsonw_uint_field(w, "gpu_propagations_inside", g->inside);
	}
	np_jsonw_end_object(w);
	if (a->found)
		finding_json(w, c, p, &a->origin, "nan_origin");
	if (a->received)
		finding_json(w, c, p, &a->recv, "nan_received");
	if (a->scaler.first_has)
		finding_json(w, c, p, &a->scaler.first, "loss_scale_overflow");
	for (uint32_t i = 0; i < a->nwarnings; i++) {
		const struct np_explosion_warning *x = &a->warnings[i];
		np_jsonw_start_object(w);
		np_jsonw_string_field(w, "type", "explosion_warning");
		np_jsonw_uint_field(w, "step", x->step);
		np_jsonw_string_field(w, "module", np_name(c, x->module));
		np_jsonw_string_field(w, "module_type", np_name(c, x->module_type));
		np_jsonw_string_field(w, "metric", np_metric_name(x->metric));
		np_jsonw_double_field(w, "value", x->value);
		np_jsonw_double_field(w, "ratio", x->ratio);
		np_jsonw_int_field(w, "rank", p->rank);
		np_jsonw_uint_field(w, "pid", (uint64_t)p->pid);
		np_jsonw_end_object(w);
	}
}

static double us_of(uint64_t ns, uint64_t start)
{
	return ns > start ? (double)(ns - start) / 1e3 : 0;
}

void np_trace_findings(struct np_trace *t, const struct np_collector *c,
		       const struct np_proc_state *p, uint64_t start_ns, uint32_t steps_tid)
{
	const struct np_agent_state *a = &p->ag;
	for (uint32_t k = 0; k < p->nsteps; k++) {
		const struct np_step_stats *st = &p->steps[k];
		if (!isnan(st->grad_norm)) {
			const char *series[] = { "total" };
			double v[] = { isfinite(st->grad_norm) ? st->grad_norm : 0 };
			np_trace_counter(t, (uint32_t)p->pid, "gradient norm", us_of(st->t1, start_ns),
					 series, v, 1);
			const char *s2[] = { "output" };
			double v2[] = { st->out_max };
			np_trace_counter(t, (uint32_t)p->pid, "max |x|", us_of(st->t1, start_ns), s2, v2, 1);
		}
		if (p->checks != NP_CHECKS_OFF) {
			const char *s3[] = { "tensors" };
			double v3[] = { st->nonfinite };
			np_trace_counter(t, (uint32_t)p->pid, "non-finite tensors",
					 us_of(st->t0, start_ns), s3, v3, 1);
		}
	}
	if (a->found) {
		const struct np_finding *o = &a->origin;
		char shape[128], first[128], spread[512], update[NP_UPDATE_NOTE_MAX];
		char exp[NP_EXP_NOTE_MAX];
		dims_text(shape, sizeof(shape), o->spread.size, o->spread.ndim);
		dims_text(first, sizeof(first), o->spread.first, o->spread.ndim);
		np_spread_text(spread, sizeof(spread), &o->spread);
		struct np_trace_arg args[] = {
			{ .key = "step", .kind = NP_ARG_UINT, .u = o->step },
			{ .key = "phase", .kind = NP_ARG_STR, .s = np_phase_name(o->phase) },
			{ .key = "grad_mode", .kind = NP_ARG_STR,
			  .s = o->phase == NP_PHASE_FORWARD && (o->grad_mode & NP_AMODE_KNOWN)
			       ? grad_mode_name(o->grad_mode) : "" },
			{ .key = "module", .kind = NP_ARG_STR, .s = np_name(c, o->module) },
			{ .key = "op", .kind = NP_ARG_STR, .s = np_name(c, o->op) },
			{ .key = "op_note", .kind = NP_ARG_STR, .s = np_op_note(o) },
			{ .key = "tensor", .kind = NP_ARG_STR, .s = np_role_name(o->role) },
			{ .key = "param", .kind = NP_ARG_STR, .s = np_name(c, o->param) },
			{ .key = "received_by", .kind = NP_ARG_STR, .s = np_name(c, o->received_by) },
			{ .key = "why", .kind = NP_ARG_STR, .s = np_origin_why(o) },
			{ .key = "range_note", .kind = NP_ARG_STR, .s = np_range_note(o) },
			{ .key = "divisor_note", .kind = NP_ARG_STR,
			  .s = np_divisor_note(o, np_name(c, o->op)) },
			{ .key = "rows_note", .kind = NP_ARG_STR, .s = np_rows_note(o) },
			{ .key = "derivative_note", .kind = NP_ARG_STR,
			  .s = np_singular_note(o, np_name(c, o->op)) },
			{ .key = "ctc_note", .kind = NP_ARG_STR,
			  .s = np_ctc_note(o, np_name(c, o->op), np_name(c, o->module_type)) },
			{ .key = "domain_note", .kind = NP_ARG_STR,
			  .s = np_domain_note(o, np_name(c, o->op)) },
			{ .key = "exp_note", .kind = NP_ARG_STR,
			  .s = np_exp_note(o, np_name(c, o->op), exp, sizeof(exp)) },
			{ .key = "update_note", .kind = NP_ARG_STR,
			  .s = np_update_note(c, o, update, sizeof(update)) },
			{ .key = "nan", .kind = NP_ARG_UINT, .u = o->nan },
			{ .key = "posinf", .kind = NP_ARG_UINT, .u = o->posinf },
			{ .key = "neginf", .kind = NP_ARG_UINT, .u = o->neginf },
			{ .key = "shape", .kind = NP_ARG_STR, .s = shape },
			{ .key = "first_at", .kind = NP_ARG_STR, .s = first },
			{ .key = "spread", .kind = NP_ARG_STR, .s = spread },
		};
		int nargs = (int)(sizeof(args) / sizeof(args[0]));
		np_trace_instant(t, (uint32_t)p->pid, o->tid, "nan_origin", "nanprof",
				 us_of(o->ts, start_ns), 't', args, o->spread.ndim ? nargs : nargs - 3);
	}
	if (a->scaler.first_has) {   /* where the loss scale first overflowed */
		const struct np_finding *o = &a->scaler.first;
		struct np_trace_arg args[] = {
			{ .key = "step", .kind = NP_ARG_UINT, .u = o->step },
			{ .key = "module", .kind = NP_ARG_STR, .s = np_name(c, o->module) },
			{ .key = "op", .kind = NP_ARG_STR, .s = np_name(c, o->op) },
			{ .key = "skipped", .kind = NP_ARG_UINT, .u = a->scaler.skipped },
		};
		np_trace_instant(t, (uint32_t)p->pid, o->tid, "loss_scale_overflow", "nanprof",
				 us_of(o->ts, start_ns), 't', args, 4);
	}
	for (uint32_t i = 0; i < a->nwarnings; i++) {
		const struct np_explosion_warning *x = &a->warnings[i];
		uint64_t ts = 0;
		for (uint32_t k = 0; k < p->nsteps; k++)
			if (p->steps[k].step == x->step)
				ts = p->steps[k].t1;
		struct np_trace_arg args[] = {
			{ .key = "module", .kind = NP_ARG_STR, .s = np_name(c, x->module) },
			{ .key = "module_type", .kind = NP_ARG_STR, .s = np_name(c, x->module_type) },
			{ .key = "metric", .kind = NP_ARG_STR, .s = np_metric_name(x->metric) },
			{ .key = "value", .kind = NP_ARG_DOUBLE, .d = x->value },
			{ .key = "ratio", .kind = NP_ARG_DOUBLE, .d = x->ratio },
		};
		np_trace_instant(t, (uint32_t)p->pid, steps_tid, "explosion_warning", "nanprof",
				 us_of(ts, start_ns), 't', args, 5);
	}
}
