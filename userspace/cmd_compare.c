/* cmd_compare.c - `nanprof compare [--steps N] -- CMD`: what nanprof
 * costs and finds on the user's own job, next to anomaly mode.
 *
 * CMD runs --rounds times three ways, interleaved (plain, anomaly,
 * nanprof, plain, ...) so that drift hits all alike; each time the agent
 * is preloaded in "compare" mode: it times the first N optimizer steps
 * and ends the process (plain and anomaly runs get nothing else; anomaly
 * mode is switched on inside the process, the user's code unchanged).
 * Reported per configuration: median and p90 step time (medians over
 * rounds of each run's), the ratio to plain, and where each said the
 * first non-finite value was: nanprof's origin, anomaly mode's error.
 * The last run is nanprof's, into the output directory: its report.html
 * carries the comparison, written to compare.json just before it ends. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../agent/agent_proto.h"
#include "agentlink.h"
#include "commands.h"
#include "jsonline.h"
#include "jsonw.h"
#include "log.h"

#define NCFG 3
#define MAX_ROUNDS 20
#define MAX_STEPS 100000
static const char *const cfg_name[NCFG] = { "plain", "anomaly", "nanprof" };

static const char compare_help[] =
"usage: nanprof compare [-o DIR] [--steps N] [--rounds R] -- CMD [ARGS...]\n"
"\n"
"Run the first N optimizer steps of CMD three ways, R times each,\n"
"interleaved: plain, under torch.autograd.set_detect_anomaly(True)\n"
"(switched on inside the process: your code is not changed), and under\n"
"nanprof with every check on.  Then print the step time of each (median,\n"
"p90, ratio to plain) and where each one said the first NaN/Inf came\n"
"from: anomaly mode names the backward node whose output was NaN, nanprof\n"
"the origin.  Each run stops after N steps (or when the job ends or fails:\n"
"anomaly mode raises at its first NaN).\n"
"\n"
"Writes DIR/compare.json, and the last nanprof run's outputs\n"
"(events.jsonl, trace.json, report.html with the comparison) into DIR;\n"
"every run's output and log stay in DIR/compare/.\n"
"\n"
"Options:\n"
"  -o, --output DIR   output directory (default ./nanprof-compare)\n"
"      --steps N      optimizer steps timed per run (default 50)\n"
"      --rounds R     runs of each configuration (default 3, at most 20)\n"
"  -h, --help         this help\n"
"\n"
"Example:\n"
"  nanprof compare --steps 60 -- python3 examples/train_nan.py\n";

struct run_result {
	double *ms;            /* step times, the first (warm-up) step left out */
	size_t n;
	double median, p90;
	int status;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double q)
{
	if (!n)
		return NAN;
	double *s = malloc(n * sizeof(*s));
	if (!s)
		return NAN;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	size_t i = (size_t)(q * (double)(n - 1) + 0.5);
	double r = s[i < n ? i : n - 1];
	free(s);
	return r;
}

/* The agent's timing file: {"step_end_ns":[t0, t1, ...], ...}. */
static int read_times(const char *path, struct run_result *r)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	char *buf = NULL;
	size_t cap = 0;
	ssize_t len = getdelim(&buf, &cap, 0, f);
	fclose(f);
	char *p = len > 0 ? strstr(buf, "\"step_end_ns\"") : NULL;
	p = p ? strchr(p, '[') : NULL;
	if (!p) {
		free(buf);
		return -EINVAL;
	}
	double prev = -1;
	size_t k = 0;
	r->ms = calloc(MAX_STEPS, sizeof(double));
	for (p++; r->ms && *p && *p != ']' && r->n < MAX_STEPS; k++) {
		char *end;
		double t = strtod(p, &end);
		if (end == p)
			break;
		if (prev >= 0 && k >= 2)   /* step 0 (the first) is warm-up */
			r->ms[r->n++] = (t - prev) / 1e6;
		prev = t;
		p = end;
		while (*p == ',' || *p == ' ')
			p++;
	}
	free(buf);
	r->median = pct(r->ms, r->n, 0.5);
	r->p90 = pct(r->ms, r->n, 0.9);
	return 0;
}

static pid_t spawn(char **argv, const char *log_out, const char *log_err, char *const env_add[])
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	signal(SIGINT, SIG_DFL);   /* ignored only by nanprof compare itself */
	for (int i = 0; env_add[i]; i += 2)
		setenv(env_add[i], env_add[i + 1], 1);
	int o = open(log_out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int e = open(log_err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (o >= 0)
		dup2(o, 1);
	if (e >= 0)
		dup2(e, 2);
	execvp(argv[0], argv);
	fprintf(stderr, "nanprof: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* Anomaly mode's message: "Function 'MulBackward0' returned nan values in
 * its 0th output", and the last line of the forward traceback it prints. */
static void anomaly_location(const char *log, char *buf, size_t len)
{
	snprintf(buf, len, "nothing (no error)");
	FILE *f = fopen(log, "r");
	if (!f)
		return;
	char line[1024], node[128] = "", where[512] = "";
	bool in_tb = false;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "Function '");
		if (p && strstr(p, "returned nan"))
			sscanf(p, "Function '%127[^']'", node);
		if (strstr(line, "Traceback of forward call that caused the error"))
			in_tb = true;
		else if (in_tb && (p = strstr(line, "File \"")) && !strstr(p, "packages/torch/"))
			snprintf(where, sizeof(where), "%.*s", (int)strcspn(p, "\n"), p);
		else if (in_tb && !strncmp(line, "Traceback", 9))
			in_tb = false;
	}
	fclose(f);
	if (*node)
		snprintf(buf, len, "backward node %s%s%s", node, *where ? "; forward call at " : "",
			 where);
}

/* nanprof's origin from a run's events.jsonl. */
static void nanprof_location(const char *events, char *buf, size_t len)
{
	snprintf(buf, len, "nothing (no non-finite value)");
	FILE *f = fopen(events, "r");
	if (!f)
		return;
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		char type[32], phase[16] = "", module[256] = "", op[64] = "", tensor[16] = "";
		int64_t step = 0;
		if (np_jl_str(line, "type", type, sizeof(type)) || strcmp(type, "nan_origin"))
			continue;
		np_jl_int(line, "step", &step);
		np_jl_str(line, "phase", phase, sizeof(phase));
		if (np_jl_str(line, "module", module, sizeof(module)))
			snprintf(module, sizeof(module), "(outside any module)");
		np_jl_str(line, "op", op, sizeof(op));
		np_jl_str(line, "tensor", tensor, sizeof(tensor));
		snprintf(buf, len, "step %lld, %s, %s%s%s, %s", (long long)step, phase,
			 *module ? module : "(outermost module)", *op ? ", op " : "", op, tensor);
		break;
	}
	free(line);
	fclose(f);
}

/* The same from the origin paragraph a run printed on stderr (its
 * events.jsonl is written only when it ends). */
static void nanprof_location_log(const char *log, char *buf, size_t len)
{
	FILE *f = fopen(log, "r");
	if (!f)
		return;
	char line[1024], head[256] = "", module[256] = "", op[128] = "";
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		char *p = strstr(line, "first non-finite value: ");
		if (p && !*head)
			snprintf(head, sizeof(head), "%.*s", (int)strcspn(p + 24, "("), p + 24);
		else if (*head && !*module && !strncmp(line, "  module: ", 10))
			snprintf(module, sizeof(module), "%.250s", line + 10);
		else if (*head && !*module && !strncmp(line, "  where:  ", 10))
			snprintf(module, sizeof(module), "%.250s", line + 10);
		else if (*head && !*op && !strncmp(line, "  op:     ", 10))
			snprintf(op, sizeof(op), ", op %.100s", line + 10);
	}
	fclose(f);
	size_t h = strlen(head);
	while (h && head[h - 1] == ' ')
		head[--h] = 0;
	if (*head)
		snprintf(buf, len, "%s, in %s%s", head, module, op);
}

static int mkdirs(const char *d)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%.4000s", d);
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(tmp, 0755);
			*p = '/';
		}
	return mkdir(tmp, 0755) && errno != EEXIST ? -errno : 0;
}

static void write_compare(const char *path, char **cmd, unsigned steps, unsigned rounds,
			  struct run_result res[NCFG][MAX_ROUNDS], unsigned done[NCFG],
			  char loc[NCFG][700], bool print)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		np_err("cannot write %s: %s", path, strerror(errno));
		return;
	}
	struct np_jsonw *w = np_jsonw_new(f, NP_JSONW_COMPACT);
	np_jsonw_start_object(w);
	np_jsonw_string_field(w, "type", "compare");
	char command[2048] = "";
	size_t used = 0;
	for (char **a = cmd; *a && used < sizeof(command) - 1; a++)
		used += snprintf(command + used, sizeof(command) - used, "%s%s", a == cmd ? "" : " ", *a);
	np_jsonw_string_field(w, "command", command);
	np_jsonw_uint_field(w, "steps", steps);
	np_jsonw_uint_field(w, "rounds", rounds);
	double plain = NAN;
	np_jsonw_name(w, "configs");
	np_jsonw_start_array(w);
	for (int c = 0; c < NCFG; c++) {
		double med[MAX_ROUNDS], p90[MAX_ROUNDS];
		unsigned n = 0;
		for (unsigned r = 0; r < done[c]; r++)
			if (res[c][r].n) {
				med[n] = res[c][r].median;
				p90[n++] = res[c][r].p90;
			}
		double m = pct(med, n, 0.5), q = pct(p90, n, 0.5);
		if (c == 0)
			plain = m;
		np_jsonw_start_object(w);
		np_jsonw_string_field(w, "name", cfg_name[c]);
		np_jsonw_uint_field(w, "runs", n);
		np_jsonw_double_field(w, "median_ms", m);
		np_jsonw_double_field(w, "p90_ms", q);
		np_jsonw_double_field(w, "ratio", m / plain);
		np_jsonw_string_field(w, "location", loc[c]);
		/* the step times of its last run, for the chart */
		np_jsonw_name(w, "steps");
		np_jsonw_start_array(w);
		const struct run_result *last = done[c] ? &res[c][done[c] - 1] : NULL;
		for (size_t i = 0; last && i < last->n; i++)
			np_jsonw_double(w, last->ms[i]);
		np_jsonw_end_array(w);
		np_jsonw_end_object(w);
		if (print)
			fprintf(stderr, "  %-8s median %9.3f ms  p90 %9.3f ms  %6.2fx  first non-finite: "
				"%s\n", cfg_name[c], m, q, m / plain, loc[c]);
	}
	np_jsonw_end_array(w);
	np_jsonw_end_object(w);
	np_jsonw_free(w);
	fputc('\n', f);
	fclose(f);
}

int np_cmd_compare(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' }, { "steps", required_argument, NULL, 's' },
		{ "rounds", required_argument, NULL, 'r' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 } };
	const char *dir = "nanprof-compare";
	unsigned steps = 50, rounds = 3;
	int c;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:h", opts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'o': dir = optarg; break;
		case 's':
			steps = (unsigned)strtoul(optarg, &end, 10);
			if (*end || steps < 2 || steps > MAX_STEPS) {
				np_err("invalid --steps '%s': expected 2 to %d", optarg, MAX_STEPS);
				return 2;
			}
			break;
		case 'r':
			rounds = (unsigned)strtoul(optarg, &end, 10);
			if (*end || rounds < 1 || rounds > MAX_ROUNDS) {
				np_err("invalid --rounds '%s': expected 1 to %d", optarg, MAX_ROUNDS);
				return 2;
			}
			break;
		case 'h': fputs(compare_help, stdout); return 0;
		case ':': np_err("option %s needs a value", argv[optind - 1]); return 2;
		default: np_err("unknown option '%s' (see --help)", argv[optind - 1]); return 2;
		}
	}
	if (optind >= argc) {
		np_err("missing command: nanprof compare [options] -- CMD [ARGS...]");
		return 2;
	}
	char **cmd = &argv[optind];
	char agent[PATH_MAX], self[PATH_MAX], sub[PATH_MAX + 16];
	int err = np_agent_path(agent, sizeof(agent));
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (err || sl < 0) {
		np_err("cannot find libnanprof_agent.so next to nanprof; set NANPROF_AGENT");
		return 1;
	}
	self[sl] = 0;
	snprintf(sub, sizeof(sub), "%s/compare", dir);
	if ((err = mkdirs(sub))) {
		np_err("cannot create %s: %s", sub, strerror(-err));
		return 1;
	}
	signal(SIGINT, SIG_IGN);   /* Ctrl-C goes to the run in progress */
	static struct run_result res[NCFG][MAX_ROUNDS];
	unsigned done[NCFG] = { 0 };
	char loc[NCFG][700] = { "nothing (no detector)", "", "" };
	char steps_s[16];
	snprintf(steps_s, sizeof(steps_s), "%u", steps);
	const char *pre = getenv("LD_PRELOAD");
	char preload[PATH_MAX * 2];
	snprintf(preload, sizeof(preload), "%s%s%s", agent, pre && *pre ? ":" : "", pre ? pre : "");
	for (unsigned r = 0; r < rounds; r++) {
		for (int k = 0; k < NCFG; k++) {
			bool last = r == rounds - 1 && k == NCFG - 1;
			char times[PATH_MAX + 64], out[PATH_MAX + 64], errlog[PATH_MAX + 64],
				rundir[PATH_MAX + 64];
			snprintf(times, sizeof(times), "%s/%s-%u.times.json", sub, cfg_name[k], r + 1);
			snprintf(out, sizeof(out), "%s/%s-%u.out", sub, cfg_name[k], r + 1);
			snprintf(errlog, sizeof(errlog), "%s/%s-%u.err", sub, cfg_name[k], r + 1);
			snprintf(rundir, sizeof(rundir), "%s/nanprof-%u", sub, r + 1);
			unlink(times);
			char times_ack[PATH_MAX + 80];
			snprintf(times_ack, sizeof(times_ack), "%s.ack", times);
			unlink(times_ack);
			char *env[] = { NP_AGENT_ENV_COMPARE, (char *)cfg_name[k],
					NP_AGENT_ENV_COMPARE_STEPS, steps_s,
					NP_AGENT_ENV_COMPARE_OUT, times, NULL, NULL, NULL };
			char *run_argv[256];
			int n = 0;
			if (k == 2) {   /* nanprof: `nanprof run` of the command */
				run_argv[n++] = self;
				run_argv[n++] = "run";
				run_argv[n++] = "-q";
				run_argv[n++] = "-o";
				run_argv[n++] = last ? (char *)dir : rundir;
				run_argv[n++] = "--";
			} else {
				env[6] = "LD_PRELOAD";
				env[7] = preload;
			}
			for (char **a = cmd; *a && n < 254; a++)
				run_argv[n++] = *a;
			run_argv[n] = NULL;
			fprintf(stderr, "nanprof compare: round %u/%u, %s ...", r + 1, rounds, cfg_name[k]);
			pid_t pid = spawn(run_argv, out, errlog, env);
			int ws = 0;
			if (last) {
				/* the report of this run embeds compare.json: write it
				 * once the agent has timed the steps, then let it go */
				for (;;) {
					if (waitpid(pid, &ws, WNOHANG) == pid)
						break;
					if (access(times, R_OK) == 0) {
						read_times(times, &res[k][r]);
						if (!*loc[2])
							nanprof_location_log(errlog, loc[2], sizeof(loc[2]));
						done[k] = r + 1;
						fputc('\n', stderr);
						char cj[PATH_MAX + 32];
						snprintf(cj, sizeof(cj), "%s/compare.json", dir);
						write_compare(cj, cmd, steps, rounds, res, done, loc, false);
						int fd = open(times_ack, O_WRONLY | O_CREAT, 0644);
						if (fd >= 0)
							close(fd);
						waitpid(pid, &ws, 0);
						break;
					}
					struct timespec ts = { 0, 10 * 1000000L };
					nanosleep(&ts, NULL);
				}
			} else {
				waitpid(pid, &ws, 0);
			}
			res[k][r].status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
			if (!last) {
				if (read_times(times, &res[k][r]) == 0)
					done[k] = r + 1;
				if (res[k][r].n)
					fprintf(stderr, " %zu steps, median %.3f ms%s\n", res[k][r].n,
						res[k][r].median,
						res[k][r].status ? " (exited with an error)" : "");
				else
					fprintf(stderr, " no step timed (exit status %d)\n", res[k][r].status);
			}
			if (k == 1 && !*loc[1])
				anomaly_location(errlog, loc[1], sizeof(loc[1]));
			if (k == 2 && !*loc[2] && !last) {
				char ev[PATH_MAX + 96];
				snprintf(ev, sizeof(ev), "%s/events.jsonl", rundir);
				nanprof_location(ev, loc[2], sizeof(loc[2]));
			}
			if (k == 2 && last && !*loc[2]) {
				char ev[PATH_MAX + 32];
				snprintf(ev, sizeof(ev), "%s/events.jsonl", dir);
				nanprof_location(ev, loc[2], sizeof(loc[2]));
			}
			if (!res[k][r].n) {
				np_err("%s run %u timed no step (see %s): is CMD a torch training job that "
				       "calls optimizer.step()?", cfg_name[k], r + 1, errlog);
				return 1;
			}
		}
	}
	/* final numbers, with every run (the report has those before the last) */
	char cj[PATH_MAX + 32];
	snprintf(cj, sizeof(cj), "%s/compare.json", dir);
	fprintf(stderr, "nanprof compare: %u steps timed per run, %u run%s of each:\n", steps, rounds,
		rounds > 1 ? "s" : "");
	write_compare(cj, cmd, steps, rounds, res, done, loc, true);
	fprintf(stderr, "  outputs: %s/{compare.json,report.html,events.jsonl,trace.json}, "
		"logs in %s/\n", dir, sub);
	for (int k = 0; k < NCFG; k++)
		for (unsigned r = 0; r < rounds; r++)
			free(res[k][r].ms);
	return 0;
}
