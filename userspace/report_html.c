#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "findings.h"
#include "findings_out.h"
#include "gpu_findings.h"
#include "jsonw.h"
#include "report_html.h"
#include "report_page.h"
#include "verdict.h"

/* The process the page is about: the origin rank's, else one with an
 * origin, else one with statistics, else the first. */
static const struct np_proc_state *main_proc(const struct np_collector *c, int origin_pid)
{
	const struct np_proc_state *best = c->nprocs ? &c->procs[0] : NULL;
	int score = -1;
	for (uint32_t i = 0; i < c->nprocs; i++) {
		const struct np_proc_state *p = &c->procs[i];
		int sc = p->pid == origin_pid ? 4 : p->ag.found ? 3 : p->ag.heat ? 2 : p->nsteps ? 1 : 0;
		if (sc > score) {
			score = sc;
			best = p;
		}
	}
	return best;
}

/* Heat values: |x| >= 0, -1 for non-finite, null for not measured. */
static void heat_value(struct np_jsonw *w, float v)
{
	if (isnan(v))
		np_jsonw_null(w);
	else if (!isfinite(v))
		np_jsonw_int(w, -1);
	else
		np_jsonw_double(w, v);
}

static void write_data(struct np_jsonw *w, const struct np_collector *c,
		       const struct np_session_info *s, const char *compare)
{
	(void)s;
	int origin_pid = -1;
	static struct np_rank_finding f[NP_VERDICT_MAX];
	static struct np_verdict v;
	size_t nchecked, nf = np_collector_findings(c, f, NP_VERDICT_MAX, &nchecked);
	if (nf) {
		np_verdict_compute(f, nf, &v);
		if (v.origin >= 0)
			origin_pid = (int)f[v.origin].pid;
	}
	const struct np_proc_state *p = main_proc(c, origin_pid);
	np_jsonw_start_object(w);
	np_jsonw_name(w, "origin");
	const struct np_proc_state *op = NULL;
	for (uint32_t i = 0; i < c->nprocs; i++)
		if (c->procs[i].ag.found && (!op || c->procs[i].pid == origin_pid))
			op = &c->procs[i];
	if (op) {
		const struct np_finding *o = &op->ag.origin;
		np_jsonw_start_object(w);
		np_jsonw_uint_field(w, "step", o->step);
		np_jsonw_string_field(w, "phase", np_phase_name(o->phase));
		if (*np_grad_mode_words(o))
			np_jsonw_string_field(w, "grad_mode_words", np_grad_mode_words(o));
		if (*np_batch_words(o))
			np_jsonw_string_field(w, "batch_words", np_batch_words(o));
		np_jsonw_string_field(w, "module", o->outside ? NULL : np_name(c, o->module));
		np_jsonw_string_field(w, "module_type", np_name(c, o->module_type));
		np_jsonw_string_field(w, "op", np_name(c, o->op));
		np_jsonw_string_field(w, "op_note", *np_op_note(o) ? np_op_note(o) : NULL);
		if (o->gpu && o->cuda_device)   /* a model split over devices */
			np_jsonw_uint_field(w, "cuda_device", o->cuda_device);
		np_jsonw_string_field(w, "tensor", np_role_name(o->role));
		if (*np_name(c, o->received_by))
			np_jsonw_string_field(w, "received_by", np_name(c, o->received_by));
		np_jsonw_string_field(w, "param", *np_name(c, o->param) ? np_name(c, o->param) : NULL);
		np_jsonw_string_field(w, "why", np_origin_why(o));
		if (*np_divisor_note(o, np_name(c, o->op)))
			np_jsonw_string_field(w, "divisor_note", np_divisor_note(o, np_name(c, o->op)));
		if (*np_rows_note(o))
			np_jsonw_string_field(w, "rows_note", np_rows_note(o));
		const char *ctc = np_ctc_note(o, np_name(c, o->op), np_name(c, o->module_type));
		if (*ctc)
			np_jsonw_string_field(w, "ctc_note", ctc);
		if (*np_domain_note(o, np_name(c, o->op)))
			np_jsonw_string_field(w, "domain_note", np_domain_note(o, np_name(c, o->op)));
		char exp[NP_EXP_NOTE_MAX];
		if (*np_exp_note(o, np_name(c, o->op), exp, sizeof(exp)))
			np_jsonw_string_field(w, "exp_note", exp);
		char update[NP_UPDATE_NOTE_MAX];
		if (*np_update_note(c, o, update, sizeof(update)))
			np_jsonw_string_field(w, "update_note", update);
		if (*np_singular_note(o, np_name(c, o->op)))
			np_jsonw_string_field(w, "derivative_note",
					      np_singular_note(o, np_name(c, o->op)));
		if (*np_range_note(o))
			np_jsonw_string_field(w, "range_note", np_range_note(o));
		np_jsonw_int_field(w, "rank", op->rank);
		np_jsonw_uint_field(w, "pid", (uint64_t)op->pid);
		np_jsonw_uint_field(w, "nan", o->nan);
		np_jsonw_uint_field(w, "posinf", o->posinf);
		np_jsonw_uint_field(w, "neginf", o->neginf);
		np_jsonw_uint_field(w, "numel", o->numel);
		if (o->spread.ndim) {
			char spread[512];
			np_spread_text(spread, sizeof(spread), &o->spread);
			np_jsonw_name(w, "shape");
			np_jsonw_start_array(w);
			for (int d = 0; d < o->spread.ndim; d++)
				np_jsonw_uint(w, o->spread.size[d]);
			np_jsonw_end_array(w);
			np_jsonw_name(w, "first_at");
			np_jsonw_start_array(w);
			for (int d = 0; d < o->spread.ndim; d++)
				np_jsonw_uint(w, o->spread.first[d]);
			np_jsonw_end_array(w);
			np_jsonw_string_field(w, "spread", spread[0] ? spread : NULL);
		}
		np_jsonw_end_object(w);
	} else {
		np_jsonw_null(w);
	}
	np_jsonw_name(w, "verdict");
	if (nf && nchecked >= 2) {
		np_jsonw_start_object(w);
		np_jsonw_int_field(w, "origin_rank", v.origin >= 0 ? f[v.origin].rank : -1);
		np_jsonw_name(w, "received");
		np_jsonw_start_array(w);
		for (size_t i = 0; i < nf; i++) {
			if ((int)i == v.origin)
				continue;
			np_jsonw_start_object(w);
			np_jsonw_int_field(w, "rank", f[i].rank);
			np_jsonw_string_field(w, "via", v.via[i]);
			np_jsonw_end_object(w);
		}
		np_jsonw_end_array(w);
		np_jsonw_end_object(w);
	} else {
		np_jsonw_null(w);
	}
	np_jsonw_name(w, "process");
	if (p) {
		char py[16];
		snprintf(py, sizeof(py), "%d.%d", p->info.py_major, p->info.py_minor);
		np_jsonw_start_object(w);
		np_jsonw_uint_field(w, "pid", (uint64_t)p->pid);
		np_jsonw_int_field(w, "rank", p->rank);
		np_jsonw_string_field(w, "python", py);
		np_jsonw_string_field(w, "torch", p->info.torch_version[0] ? p->info.torch_version : "?");
		np_jsonw_name(w, "steps");
		np_jsonw_start_array(w);
		for (uint32_t k = 0; k < p->nsteps; k++) {
			const struct np_step_stats *st = &p->steps[k];
			np_jsonw_start_object(w);
			np_jsonw_uint_field(w, "step", st->step);
			np_jsonw_double_field(w, "ms", (double)(st->t1 - st->t0) / 1e6);
			np_jsonw_double_field(w, "grad_norm", st->grad_norm);
			np_jsonw_uint_field(w, "nonfinite", st->nonfinite);
			np_jsonw_end_object(w);
		}
		np_jsonw_end_array(w);
		np_jsonw_end_object(w);
	} else {
		np_jsonw_null(w);
	}
	np_jsonw_name(w, "heat");
	const struct np_heat *h = p ? p->ag.heat : NULL;
	if (h && h->len) {
		np_jsonw_start_object(w);
		np_jsonw_name(w, "modules");
		np_jsonw_start_array(w);
		for (uint32_t k = 0; k < h->nmods; k++)
			np_jsonw_string(w, np_name(c, h->mod_name[k]));
		np_jsonw_end_array(w);
		/* outermost modules are all named "": the model, a loss module */
		np_jsonw_name(w, "types");
		np_jsonw_start_array(w);
		for (uint32_t k = 0; k < h->nmods; k++)
			np_jsonw_string(w, np_name(c, h->mod_type[k]));
		np_jsonw_end_array(w);
		np_jsonw_name(w, "steps");
		np_jsonw_start_array(w);
		for (uint32_t i = 0; i < h->len; i++)
			np_jsonw_uint(w, h->step[(h->start + i) % NP_HEAT_STEPS]);
		np_jsonw_end_array(w);
		for (int which = 0; which < 2; which++) {
			np_jsonw_name(w, which ? "grad" : "out");
			np_jsonw_start_array(w);
			for (uint32_t i = 0; i < h->len; i++) {
				uint32_t col = (h->start + i) % NP_HEAT_STEPS;
				np_jsonw_start_array(w);
				for (uint32_t k = 0; k < h->nmods; k++)
					heat_value(w, which ? h->grad[col][k] : h->out[col][k]);
				np_jsonw_end_array(w);
			}
			np_jsonw_end_array(w);
		}
		np_jsonw_end_object(w);
	} else {
		np_jsonw_null(w);
	}
	np_jsonw_name(w, "scaler");   /* loss scaling's skipped iterations */
	const struct np_scaler_state *sc = p ? &p->ag.scaler : NULL;
	if (sc && sc->on) {
		np_jsonw_start_object(w);
		np_jsonw_uint_field(w, "iterations", sc->iterations);
		np_jsonw_uint_field(w, "skipped", sc->skipped);
		np_jsonw_name(w, "first");
		if (sc->first_has) {
			np_jsonw_start_object(w);
			np_jsonw_uint_field(w, "step", sc->first.step);
			np_jsonw_string_field(w, "module", np_name(c, sc->first.module));
			np_jsonw_string_field(w, "op", np_name(c, sc->first.op));
			np_jsonw_end_object(w);
		} else {
			np_jsonw_null(w);
		}
		np_jsonw_end_object(w);
	} else {
		np_jsonw_null(w);
	}
	np_jsonw_name(w, "gpu");      /* the CUDA checks, and what they could not see */
	const struct np_gpu_state *g = p ? &p->gpu : NULL;
	if (g && g->state == 1) {
		np_jsonw_start_object(w);
		np_jsonw_string_field(w, "mode", g->how);
		np_jsonw_uint_field(w, "checks", g->checks);
		np_jsonw_uint_field(w, "undecoded", g->undecoded);
		np_jsonw_uint_field(w, "guard_checks", g->guard_checks);
		np_jsonw_uint_field(w, "generic_checks", g->generic_checks);
		/* sampled in the job (cupti/host_cost.h); 0: not reported */
		np_jsonw_uint_field(w, "host_ns_per_launch", np_gpu_host_ns_per_launch(g));
		np_jsonw_name(w, "kernels");
		np_gpu_json_undecoded(w, c, g);
		np_jsonw_end_object(w);
	} else {
		np_jsonw_null(w);
	}
	np_jsonw_name(w, "warnings");
	np_jsonw_start_array(w);
	for (uint32_t i = 0; p && i < p->ag.nwarnings; i++) {
		const struct np_explosion_warning *x = &p->ag.warnings[i];
		np_jsonw_start_object(w);
		np_jsonw_uint_field(w, "step", x->step);
		np_jsonw_string_field(w, "module", np_name(c, x->module));
		np_jsonw_string_field(w, "module_type", np_name(c, x->module_type));
		np_jsonw_string_field(w, "metric", np_metric_name(x->metric));
		np_jsonw_double_field(w, "value", x->value);
		np_jsonw_double_field(w, "ratio", x->ratio);
		np_jsonw_end_object(w);
	}
	np_jsonw_end_array(w);
	np_jsonw_name(w, "compare");
	np_jsonw_null(w);   /* replaced below when there is one */
	np_jsonw_end_object(w);
	(void)compare;
}

/* Copies JSON into a <script> element: "</" would end it early. */
static void put_script_safe(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '<' && i + 1 < n && s[i + 1] == '/') {
			fputs("<\\/", f);
			i++;
		} else {
			fputc(s[i], f);
		}
	}
}

static char *slurp(const char *path, size_t max, size_t *len)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = malloc(max + 1);
	*len = buf ? fread(buf, 1, max, f) : 0;
	bool whole = buf && feof(f);
	fclose(f);
	if (!whole) {
		free(buf);
		return NULL;   /* too large for a report: left out */
	}
	buf[*len] = 0;
	return buf;
}

int np_write_report(const struct np_collector *c, const struct np_session_info *s,
		    const char *path, const char *compare_json)
{
	char *data = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&data, &len);
	if (!mem)
		return -ENOMEM;
	struct np_jsonw *w = np_jsonw_new(mem, NP_JSONW_COMPACT);
	if (!w) {
		fclose(mem);
		free(data);
		return -ENOMEM;
	}
	write_data(w, c, s, compare_json);
	int err = np_jsonw_error(w);
	np_jsonw_free(w);
	fclose(mem);
	if (err) {
		free(data);
		return err;
	}
	FILE *f = fopen(path, "w");
	if (!f) {
		err = -errno;
		free(data);
		return err;
	}
	fputs(np_report_head, f);
	fputs("<h1>nanprof report</h1>\n<p class=\"muted\" id=\"session\"></p>\n"
	      "<div id=\"error\"></div>\n<div id=\"main\"></div>\n<script>\nconst DATA=", f);
	/* the compare object goes in place of the trailing "compare":null */
	size_t cut = len;
	const char *tail = "\"compare\":null}";
	size_t cmplen = 0;
	char *cmp = compare_json ? slurp(compare_json, 8 << 20, &cmplen) : NULL;
	if (cmp && len >= strlen(tail) && !strcmp(data + len - strlen(tail), tail))
		cut = len - strlen(tail);
	put_script_safe(f, data, cut);
	if (cut != len) {
		fputs("\"compare\":", f);
		put_script_safe(f, cmp, cmplen);
		fputs("}", f);
	}
	fputs(";\n", f);
	/* the session line, as data too (the command may hold anything) */
	fputs("DATA.session=", f);
	free(data);
	data = NULL;
	mem = open_memstream(&data, &len);
	w = mem ? np_jsonw_new(mem, NP_JSONW_COMPACT) : NULL;
	if (w) {
		np_jsonw_start_object(w);
		np_jsonw_string_field(w, "mode", s->mode);
		np_jsonw_string_field(w, "command", s->command);
		np_jsonw_uint_field(w, "processes", c->nprocs);
		np_jsonw_end_object(w);
		np_jsonw_free(w);
	}
	if (mem)
		fclose(mem);
	put_script_safe(f, data ? data : "null", data ? len : 4);
	fputs(";\ndocument.getElementById('session').textContent=DATA.session?"
	      "('nanprof '+DATA.session.mode+': '+DATA.session.command+' \\u2014 '+DATA.session.processes+' process(es)'):'';\n"
	      "</script>\n", f);
	fputs(np_report_script, f);
	free(data);
	free(cmp);
	if (fclose(f))
		return -errno;
	return 0;
}
