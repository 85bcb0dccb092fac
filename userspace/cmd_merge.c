/* cmd_merge.c - `nanprof merge DIR...`: one trace and one events.jsonl
 * from the outputs of several nanprof runs (one per machine of a job).
 *
 * Clocks of different machines are not comparable to the microsecond, so
 * inputs are aligned by training step: the earliest step every input
 * completed starts at the same instant in the merged timeline.  Inputs
 * with no step in common fall back to their wall clocks.  A pid seen in
 * more than one input is renumbered in the later ones. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "../agent/agent_report.h"
#include "commands.h"
#include "findings_out.h"
#include "output.h"
#include "hashmap.h"
#include "jsonline.h"
#include "jsonw.h"
#include "log.h"
#include "verdict.h"

#define MAX_INPUTS 64
#define PID_STRIDE 10000000LL   /* renumbered pid = pid + k * PID_STRIDE */

/* Every input's nan_origin and nan_received records, for one verdict. */
static struct np_rank_finding findings[NP_VERDICT_MAX];
static char finding_str[NP_VERDICT_MAX][3][128];   /* module, op or via, tensor */
static size_t nfindings, nchecked;

static uint8_t phase_of(const char *s)
{
	return !strcmp(s, "forward") ? 1 : !strcmp(s, "backward") ? 2 : !strcmp(s, "optimizer") ? 3 : 0;
}

static uint8_t role_of(const char *s)
{
	static const char *const roles[] = { "input", "output", "grad", "param", "param_grad",
					     "collective" };
	for (uint8_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		if (!strcmp(s, roles[i]))
			return i;
	return 0;
}

static void add_finding(const char *line, bool received, uint64_t pid)
{
	if (nfindings >= NP_VERDICT_MAX)
		return;
	size_t i = nfindings++;
	struct np_rank_finding *f = &findings[i];
	int64_t v;
	char phase[32] = "", tensor[32] = "";
	memset(f, 0, sizeof(*f));
	f->rank = np_jl_int(line, "rank", &v) ? -1 : (int)v;
	f->pid = pid;
	f->received = received;
	f->step = np_jl_int(line, "step", &v) ? 0 : (uint64_t)v;
	f->ts = np_jl_int(line, "ts_ns", &v) ? 0 : (uint64_t)v;
	np_jl_str(line, "phase", phase, sizeof(phase));
	np_jl_str(line, "tensor", tensor, sizeof(tensor));
	f->phase = phase_of(phase);
	f->role = role_of(tensor);
	np_jl_str(line, "module", finding_str[i][0], sizeof(finding_str[i][0]));
	np_jl_str(line, received ? "via" : "op", finding_str[i][1], sizeof(finding_str[i][1]));
	snprintf(finding_str[i][2], sizeof(finding_str[i][2]), "%s", tensor);
	f->module = finding_str[i][0];
	f->op = received ? "" : finding_str[i][1];
	f->via = finding_str[i][1];
	f->tensor = finding_str[i][2];
}

struct input {
	const char *dir;
	int64_t start_ns, start_unix_ns;
	struct np_map first_start;    /* (0, step) -> earliest complete start_ns */
	struct np_map pids;           /* (0, pid) -> pid in the merged output */
	int64_t offset_ns;            /* added to this input's monotonic times */
	uint64_t steps;
	bool has_session;
};

static const char merge_help[] =
"usage: nanprof merge [-o DIR] INPUT_DIR...\n"
"\n"
"Combine the outputs of several nanprof runs (one per machine of a\n"
"multi-node job) into one events.jsonl and one trace.json.  Inputs are\n"
"aligned by step: the earliest step all of them completed starts at the\n"
"same instant (machines' clocks differ); with no step in common, by wall\n"
"clock.  Pids that clash are renumbered (+10000000 per input).\n"
"\n"
"Options:\n"
"  -o, --output DIR   where to write (default ./nanprof-merged)\n"
"  -h, --help         this help\n"
"\n"
"Example:\n"
"  nanprof merge -o merged node0/nanprof-1234 node1/nanprof-5678\n";

static FILE *open_in(const char *dir, const char *name)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	if (!f)
		np_err("cannot read %s: %s", path, strerror(errno));
	return f;
}

/* First pass over one events.jsonl: session times, steps, pids. */
static int scan_events(struct input *in, int index, struct np_map *used_pids)
{
	FILE *f = open_in(in->dir, "events.jsonl");
	if (!f)
		return -ENOENT;
	char *line = NULL;
	size_t cap = 0;
	char type[32];
	while (getline(&line, &cap, f) > 0) {
		if (np_jl_str(line, "type", type, sizeof(type)))
			continue;
		int64_t v, pid, step;
		if (!strcmp(type, "session")) {
			in->has_session = true;
			if (!np_jl_int(line, "start_ns", &v))
				in->start_ns = v;
			if (!np_jl_int(line, "start_unix_ns", &v))
				in->start_unix_ns = v;
		}
		if (!np_jl_int(line, "pid", &pid)) {
			uint64_t mapped;
			if (np_map_get(&in->pids, 0, (uint64_t)pid, &mapped)) {
				int64_t out = pid;
				while (np_map_get(used_pids, 0, (uint64_t)out, &mapped) == 0)
					out += PID_STRIDE * (index ? index : 1);
				np_map_put(used_pids, 0, (uint64_t)out, 1);
				np_map_put(&in->pids, 0, (uint64_t)pid, (uint64_t)out);
			}
		}
		uint64_t mapped_pid = 0;
		if (!np_jl_int(line, "pid", &pid))
			np_map_get(&in->pids, 0, (uint64_t)pid, &mapped_pid);
		int64_t cpu_n = 0, gpu_n = 0;
		if (!strcmp(type, "checks") && (strstr(line, "\"state\":\"on\"") ||
						 strstr(line, "\"state\":\"detached\"")) &&
		    ((!np_jl_int(line, "tensors_checked", &cpu_n) && cpu_n > 0) ||
		     (!np_jl_int(line, "gpu_checks", &gpu_n) && gpu_n > 0)))
			nchecked++;   /* processes whose checks were in place and checked
				       * something: not a DataLoader worker */
		if (!strcmp(type, "nan_origin") || !strcmp(type, "nan_received"))
			add_finding(line, type[4] == 'r', mapped_pid);
		if (!strcmp(type, "step") && strstr(line, "\"complete\":true") &&
		    !np_jl_int(line, "step", &step) && !np_jl_int(line, "start_ns", &v)) {
			uint64_t prev;
			if (np_map_get(&in->first_start, 0, (uint64_t)step, &prev) || (uint64_t)v < prev)
				np_map_put(&in->first_start, 0, (uint64_t)step, (uint64_t)v);
			in->steps++;
		}
	}
	free(line);
	fclose(f);
	if (!in->has_session) {
		np_err("%s/events.jsonl has no session record: not a nanprof output", in->dir);
		return -EINVAL;
	}
	return 0;
}

/* The earliest step completed in every input, or -1. */
static int64_t common_step(struct input *ins, int n)
{
	int64_t best = -1;
	for (size_t k = 0; k < ins[0].first_start.cap; k++) {
		const struct np_map_slot *s = &ins[0].first_start.slots[k];
		if (!s->used || (best >= 0 && (int64_t)s->k2 >= best))
			continue;
		bool everywhere = true;
		uint64_t v;
		for (int i = 1; i < n && everywhere; i++)
			everywhere = np_map_get(&ins[i].first_start, 0, s->k2, &v) == 0;
		if (everywhere)
			best = (int64_t)s->k2;
	}
	return best;
}

struct remap {
	const struct input *in;
	double ts_shift_us;      /* trace.json */
	bool trace;
};

static bool remap_fn(const char *key, const char *num, char *repl, size_t len, void *arg)
{
	const struct remap *r = arg;
	if (!strcmp(key, "pid")) {
		uint64_t to;
		if (np_map_get(&r->in->pids, 0, strtoull(num, NULL, 10), &to))
			return false;
		snprintf(repl, len, "%" PRIu64, to);
		return true;
	}
	if (r->trace && !strcmp(key, "ts")) {
		snprintf(repl, len, "%.3f", strtod(num, NULL) + r->ts_shift_us);
		return true;
	}
	if (!r->trace && (!strcmp(key, "start_ns") || !strcmp(key, "end_ns"))) {
		snprintf(repl, len, "%" PRId64, (int64_t)strtoll(num, NULL, 10) + r->in->offset_ns);
		return true;
	}
	return false;
}

static int copy_events(FILE *out, const struct input *in)
{
	FILE *f = open_in(in->dir, "events.jsonl");
	if (!f)
		return -ENOENT;
	struct remap r = { .in = in };
	char *line = NULL;
	size_t cap = 0;
	int err = 0;
	char type[32];
	while (!err && getline(&line, &cap, f) > 0) {
		/* one machine's verdict is replaced by the merged one */
		if (!np_jl_str(line, "type", type, sizeof(type)) && !strcmp(type, "verdict"))
			continue;
		err = np_jl_rewrite(line, out, remap_fn, &r);
	}
	free(line);
	fclose(f);
	return err;
}

/* Event lines of a trace.json as nanprof writes it: one per line. */
static int copy_trace(FILE *out, const struct input *in, const struct input *ref, bool *first)
{
	FILE *f = open_in(in->dir, "trace.json");
	if (!f)
		return -ENOENT;
	struct remap r = { .in = in, .trace = true,
			   .ts_shift_us = (double)(in->start_ns + in->offset_ns - ref->start_ns) / 1e3 };
	char *line = NULL;
	size_t cap = 0;
	int err = 0;
	ssize_t n;
	while (!err && (n = getline(&line, &cap, f)) > 0) {
		if (strncmp(line, "{\"name\"", 7) != 0)
			continue;   /* the {"traceEvents":[ and ]} lines */
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == ','))
			line[--n] = 0;
		if (!*first && fputs(",\n", out) == EOF)
			err = -EIO;
		*first = false;
		if (!err)
			err = np_jl_rewrite(line, out, remap_fn, &r);
	}
	free(line);
	fclose(f);
	return err;
}

static int write_outputs(const char *dir, struct input *ins, int n, int64_t step)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/events.jsonl", dir);
	FILE *ev = fopen(path, "w");
	if (!ev) {
		np_err("cannot write %s: %s", path, strerror(errno));
		return -errno;
	}
	struct np_jsonw *w = np_jsonw_new(ev, NP_JSONW_LINES);
	np_jsonw_start_object(w);
	np_jsonw_string_field(w, "type", "merge");
	np_jsonw_string_field(w, "aligned_by", step >= 0 ? "step" : "wall_clock");
	np_jsonw_int_field(w, "step", step);
	np_jsonw_name(w, "inputs");
	np_jsonw_start_array(w);
	for (int i = 0; i < n; i++) {
		np_jsonw_start_object(w);
		np_jsonw_string_field(w, "dir", ins[i].dir);
		np_jsonw_int_field(w, "offset_ns", ins[i].offset_ns);
		np_jsonw_end_object(w);
	}
	np_jsonw_end_array(w);
	np_jsonw_end_object(w);
	int err = np_jsonw_error(w);
	np_jsonw_free(w);
	for (int i = 0; i < n && !err; i++)
		err = copy_events(ev, &ins[i]);
	if (!err && nchecked >= 2 && nfindings) {
		/* one verdict over every machine's ranks; after their end records */
		static struct np_verdict v;
		np_verdict_compute(findings, nfindings, &v);
		w = np_jsonw_new(ev, NP_JSONW_LINES);
		np_write_verdict(w, findings, nfindings, &v, nchecked);
		err = np_jsonw_error(w);
		np_jsonw_free(w);
		if (v.origin >= 0)
			np_info("merged verdict: born on rank %d at step %llu, %s pass%s%s",
				findings[v.origin].rank, (unsigned long long)findings[v.origin].step,
				np_phase_name(findings[v.origin].phase),
				*findings[v.origin].module ? ", module " : "", findings[v.origin].module);
	}
	if (fclose(ev) && !err)
		err = -errno;
	if (err)
		return err;

	snprintf(path, sizeof(path), "%s/trace.json", dir);
	FILE *tr = fopen(path, "w");
	if (!tr) {
		np_err("cannot write %s: %s", path, strerror(errno));
		return -errno;
	}
	bool first = true;
	if (fputs("{\"traceEvents\":[\n", tr) == EOF)
		err = -EIO;
	for (int i = 0; i < n && !err; i++)
		err = copy_trace(tr, &ins[i], &ins[0], &first);
	if (!err && fputs("\n]}\n", tr) == EOF)
		err = -EIO;
	if (fclose(tr) && !err)
		err = -errno;
	return err;
}

int np_cmd_merge(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out_dir = "nanprof-merged";
	int c;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:h", opts, NULL)) != -1) {
		if (c == 'o') {
			out_dir = optarg;
		} else if (c == 'h') {
			fputs(merge_help, stdout);
			return 0;
		} else {
			np_err(c == ':' ? "option %s needs a value" : "unknown option '%s' (see --help)",
			       argv[optind - 1]);
			return 2;
		}
	}
	int n = argc - optind;
	if (n < 1 || n > MAX_INPUTS) {
		np_err("merge takes 1 to %d output directories (see --help)", MAX_INPUTS);
		return 2;
	}
	static struct input ins[MAX_INPUTS];
	struct np_map used;
	if (np_map_init(&used, 1 << 20))
		return 1;
	int err = 0;
	for (int i = 0; i < n && !err; i++) {
		ins[i].dir = argv[optind + i];
		if (np_map_init(&ins[i].first_start, 1 << 24) || np_map_init(&ins[i].pids, 1 << 16))
			err = -ENOMEM;
		else
			err = scan_events(&ins[i], i, &used);
	}
	int64_t step = err ? -1 : common_step(ins, n);
	for (int i = 0; i < n && !err; i++) {
		uint64_t ref, mine;
		if (step >= 0 && !np_map_get(&ins[0].first_start, 0, (uint64_t)step, &ref) &&
		    !np_map_get(&ins[i].first_start, 0, (uint64_t)step, &mine))
			ins[i].offset_ns = (int64_t)(ref - mine);
		else   /* through the wall clocks: mono_i -> wall -> mono_0 */
			ins[i].offset_ns = ins[0].start_ns - ins[i].start_ns +
					   ins[i].start_unix_ns - ins[0].start_unix_ns;
	}
	if (!err && mkdir(out_dir, 0755) && errno != EEXIST) {
		np_err("cannot create %s: %s", out_dir, strerror(errno));
		err = -errno;
	}
	if (!err && (err = write_outputs(out_dir, ins, n, step)))
		np_err("cannot write the merged outputs in %s: %s", out_dir, strerror(-err));
	if (!err) {
		if (step >= 0)
			fprintf(stderr, "nanprof: merged %d runs, aligned at the start of step %" PRId64 "\n", n, step);
		else
			fprintf(stderr, "nanprof: merged %d runs, aligned by wall clock (no step in common)\n", n);
		for (int i = 0; i < n; i++)
			fprintf(stderr, "  %s: %" PRIu64 " steps, shifted %+.3f ms\n", ins[i].dir,
				ins[i].steps, (double)ins[i].offset_ns / 1e6);
		fprintf(stderr, "  outputs: %s/{events.jsonl,trace.json}\n", out_dir);
	}
	for (int i = 0; i < n; i++) {
		np_map_free(&ins[i].first_start);
		np_map_free(&ins[i].pids);
	}
	np_map_free(&used);
	return err ? 1 : 0;
}
