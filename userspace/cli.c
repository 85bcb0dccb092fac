#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../agent/agent_proto.h"
#include "cli.h"
#include "log.h"
#include "on_nan.h"

static const char run_help[] =
"usage: nanprof run [-o DIR] [options] -- CMD [ARGS...]\n"
"\n"
"Start CMD with nanprof's probes attached before its first Python line\n"
"runs, follow every process it starts (launchers that spawn one process\n"
"per rank), and exit with CMD's exit status.  Once torch is imported,\n"
"nanprof's agent checks every module output, every gradient and every\n"
"parameter update for NaN and Inf, and the first one found (its step,\n"
"phase, module and op) is printed as soon as it is known.\n"
"\n"
"Options:\n"
"  -o, --output DIR     where to write events.jsonl, trace.json, summary.txt\n"
"                       (default ./nanprof-<pid>)\n"
"      --window N       steps kept in full detail (default 20); every\n"
"                       step's counters are kept regardless\n"
"      --max-records N  detail records per step and process (default 50000)\n"
"      --ring-mb N      BPF ring buffer size in MiB (default 16)\n"
"      --no-session     use uprobe+uretprobe pairs instead of uprobe sessions\n"
"      --no-checks      trace only: no agent checks of tensor values\n"
"      --python-probe P where the Python probe goes: auto (default), call\n"
"                       (CPython's slot_tp_call: one hit per module call) or\n"
"                       eval (_PyEval_EvalFrameDefault: works everywhere, costs\n"
"                       about 4x more hits)\n"
"      --gpu MODE       how CUDA work is checked (sets NANPROF_GPU_MODE):\n"
"                       every (default): the outputs of every kernel launch\n"
"                       (cuBLAS's matrix multiplies: read from their calls;\n"
"                       NANPROF_GPU_BLAS=0: not), and, as guards, the CUDA\n"
"                       tensors a module returns whose last kernel nanprof\n"
"                       could not read (cuDNN, Triton): a NaN such a kernel\n"
"                       makes is named at its\n"
"                       module (NANPROF_GPU_GUARD=0: no guards); and such a\n"
"                       kernel's output is checked when an elementwise kernel\n"
"                       reads it, and named as its own (NANPROF_GPU_GENERIC=0:\n"
"                       not);\n"
"                       sample:K: every K-th launch of each kernel, every\n"
"                       launch once a NaN spreads; modules: no CUPTI (free for\n"
"                       your profiler): the CUDA tensors modules return, the\n"
"                       gradients and the parameters; every+modules or\n"
"                       sample:K+modules: both, all of those tensors\n"
"      --gpu-defer N    let the checks of up to N launches (1..64) wait and go\n"
"                       out as one list launch, fewer launches for the same\n"
"                       checks (sets NANPROF_GPU_DEFER; 0: off, the default);\n"
"                       a list goes out early when a kernel may write what\n"
"                       it checks, so verdicts stay the same (experimental:\n"
"                       its speed-up is not yet measured on a GPU)\n"
"      --on-nan ACTION  what to do once the first non-finite value is found:\n"
"                       report (default: say where, let the job run on), or\n"
"                       signal:NAME: send signal NAME, once, to every process\n"
"                       traced, so that a job gone NaN stops using its\n"
"                       machines: signal:INT stops it as Ctrl-C does (a\n"
"                       KeyboardInterrupt: `except KeyboardInterrupt` can\n"
"                       save a checkpoint), signal:TERM asks a launcher to\n"
"                       stop its ranks (and ends a job started with '&',\n"
"                       which ignores SIGINT), signal:USR1 runs a handler\n"
"                       of yours\n"
"  -v, --verbose        debug messages, libbpf's included\n"
"  -q, --quiet          no summary on stderr\n"
"  -h, --help           this help\n"
"\n"
"Examples:\n"
"  nanprof run -- python3 train.py --epochs 1\n"
"  nanprof run -o out/ --window 50 -- python3 examples/train_nan.py\n"
"  RANK=0 nanprof run -- python3 launch.py   # a launcher and its ranks\n"
"  nanprof run --on-nan signal:INT -- python3 train.py   # stop at the first NaN\n";

static const char attach_help[] =
"usage: nanprof attach [-o DIR] [--duration SEC] [options] PID...\n"
"       nanprof attach [-o DIR] [--duration SEC] [options] --children PID\n"
"\n"
"Attach to running Python training processes: the pids given, or every\n"
"Python process that descends from a launcher (--children), including\n"
"ranks it starts later.  Tracing ends on Ctrl-C, SIGTERM, --duration, or\n"
"when every target has exited; the targets then run exactly as before.\n"
"Steps are counted from the moment of attaching.  nanprof loads its\n"
"agent into each process (ptrace, from a thread that is idle) to check\n"
"tensor values, and takes its hooks out again when it detaches.\n"
"\n"
"Options:\n"
"  -o, --output DIR     output directory (default ./nanprof-<first PID>)\n"
"      --children PID   trace the Python descendants of PID (a launcher)\n"
"  -d, --duration SEC   stop after SEC seconds (default: until stopped)\n"
"      --window N       steps kept in full detail (default 20)\n"
"      --max-records N  detail records per step and process (default 50000)\n"
"      --ring-mb N      BPF ring buffer size in MiB (default 16)\n"
"      --no-session     use uprobe+uretprobe pairs instead of uprobe sessions\n"
"      --no-checks      trace only: do not load the agent\n"
"      --python-probe P auto (default), call or eval (see nanprof run --help)\n"
"      --gpu MODE       how CUDA work is checked: every, sample:K, modules,\n"
"                       every+modules or sample:K+modules (see nanprof run\n"
"                       --help); default: the process's NANPROF_GPU_MODE\n"
"      --gpu-defer N    checks of up to N launches in one list launch, 0: off\n"
"                       (see nanprof run --help); default: the process's\n"
"                       NANPROF_GPU_DEFER, at each attach\n"
"      --on-nan ACTION  report (default), or signal:NAME: sent once to every\n"
"                       traced process at the first non-finite value\n"
"                       (signal:INT: as Ctrl-C; see nanprof run --help)\n"
"  -v, --verbose        more messages\n"
"  -q, --quiet          no summary on stderr\n"
"  -h, --help           this help\n"
"\n"
"Examples:\n"
"  nanprof attach 12345\n"
"  nanprof attach --duration 30 -o /tmp/np $(pgrep -f train.py)\n"
"  nanprof attach --children $(pgrep -f torchrun)   # every rank\n"
"  nanprof attach --on-nan signal:TERM 12345   # end it at its first NaN\n"
"\n"
"CUDA work is checked as --gpu says, else as the process's own\n"
"NANPROF_GPU_MODE says (default every; modes: see nanprof run --help).\n"
"A process attached before keeps what it subscribed to: launch checks\n"
"(every, sample:K) stay launch checks and modules stays modules; between\n"
"every and sample:K it switches.\n";

void np_usage_main(void)
{
	fputs("usage: nanprof <command> [options]\n"
	      "\n"
	      "Find where NaNs and Infs are born in PyTorch training jobs, from\n"
	      "outside the process: eBPF probes on CPython and libtorch name the\n"
	      "module, step and phase of every piece of work, and an agent in the\n"
	      "process checks module outputs, gradients and parameters for\n"
	      "non-finite values, naming the first one's origin.\n"
	      "\n"
	      "Commands:\n"
	      "  run      start a training command under nanprof\n"
	      "  attach   attach to running training processes\n"
	      "  merge    combine the outputs of several runs (one per machine)\n"
	      "  compare  time your job plain, under nanprof and under anomaly mode\n"
	      "  help     this help (`nanprof <command> --help` for each)\n"
	      "\n"
	      "Outputs (in the -o directory): events.jsonl, trace.json (open it in\n"
	      "https://ui.perfetto.dev), report.html, summary.txt; see docs/outputs.md.\n"
	      "\n"
	      "Exit status: run exits with the command's status; otherwise 0 on\n"
	      "success, 1 on failure, 2 on a usage error.  Needs root (CAP_BPF,\n"
	      "CAP_PERFMON, CAP_SYS_PTRACE).\n"
	      "\n"
	      "Examples:\n"
	      "  nanprof run -- python3 examples/train_nan.py\n"
	      "  nanprof attach --duration 30 12345\n", stdout);
}

static int parse_uint(const char *opt, const char *s, unsigned min, unsigned max, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max) {
		np_err("invalid %s '%s': expected an integer from %u to %u", opt, s, min, max);
		return -EINVAL;
	}
	*out = (unsigned)v;
	return 0;
}

enum { OPT_WINDOW = 256, OPT_MAX_RECORDS, OPT_RING_MB, OPT_NO_SESSION, OPT_PYTHON_PROBE,
       OPT_CHILDREN, OPT_NO_CHECKS, OPT_GPU, OPT_GPU_DEFER, OPT_ON_NAN };

/* every | sample | sample:K | modules, the first three maybe +modules:
 * what the agent's np_gpu_config_from_env() reads (cupti/gpu.h) */
static bool valid_gpu_mode(const char *s)
{
	if (strlen(s) >= NP_AGENT_GPU_MODE_LEN)   /* what attach can send */
		return false;
	const char *plus = strchr(s, '+');
	size_t n = plus ? (size_t)(plus - s) : strlen(s);
	if (plus && strcmp(plus, "+modules") != 0)
		return false;
	if ((n == 5 && !strncmp(s, "every", 5)) || (n == 6 && !strncmp(s, "sample", 6)))
		return true;
	if (n == 7 && !strncmp(s, "modules", 7))
		return !plus;
	if (n > 7 && !strncmp(s, "sample:", 7)) {
		unsigned long k = 0;
		for (size_t i = 7; i < n; i++) {
			if (s[i] < '0' || s[i] > '9' || k > 1000000)
				return false;
			k = k * 10 + (unsigned long)(s[i] - '0');
		}
		return k >= 1 && k <= 1000000;
	}
	return false;
}

static const struct option long_opts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "duration", required_argument, NULL, 'd' },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "max-records", required_argument, NULL, OPT_MAX_RECORDS },
	{ "ring-mb", required_argument, NULL, OPT_RING_MB },
	{ "no-session", no_argument, NULL, OPT_NO_SESSION },
	{ "python-probe", required_argument, NULL, OPT_PYTHON_PROBE },
	{ "children", required_argument, NULL, OPT_CHILDREN },
	{ "no-checks", no_argument, NULL, OPT_NO_CHECKS },
	{ "gpu", required_argument, NULL, OPT_GPU },
	{ "gpu-defer", required_argument, NULL, OPT_GPU_DEFER },
	{ "on-nan", required_argument, NULL, OPT_ON_NAN },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void defaults(struct np_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->window = 20;
	o->max_records = 50000;
	o->ring_mb = 16;
	o->gpu_defer = -1;
}

/* Options common to both commands; attach also takes -d. */
static int parse_common(int argc, char **argv, struct np_opts *o, bool attach,
			const char *help)
{
	defaults(o);
	optind = 0;   /* 0, not 1: glibc then also forgets a half-read cluster */
	opterr = 0;
	/* '+': stop at the first non-option, so CMD's own options are CMD's */
	const char *short_opts = attach ? "+:o:d:vqh" : "+:o:vqh";
	int c;
	while ((c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->out_dir = optarg;
			break;
		case 'd': {
			char *end;
			if (!attach) {
				np_err("unknown option '--duration' (see --help)");
				return -EINVAL;
			}
			errno = 0;
			o->duration = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->duration > 0) || !(o->duration <= 1e9)) {
				np_err("invalid --duration '%s': expected seconds > 0", optarg);
				return -EINVAL;
			}
			break;
		}
		case OPT_WINDOW:
			if (parse_uint("--window", optarg, 1, 100000, &o->window))
				return -EINVAL;
			break;
		case OPT_MAX_RECORDS:
			if (parse_uint("--max-records", optarg, 16, 50000000, &o->max_records))
				return -EINVAL;
			break;
		case OPT_RING_MB:
			if (parse_uint("--ring-mb", optarg, 1, 1024, &o->ring_mb))
				return -EINVAL;
			/* BPF ring buffers are a power of two in size */
			if (o->ring_mb & (o->ring_mb - 1)) {
				np_err("invalid --ring-mb '%s': must be a power of two", optarg);
				return -EINVAL;
			}
			break;
		case OPT_NO_SESSION:
			o->no_session = true;
			break;
		case OPT_NO_CHECKS:
			o->no_checks = true;
			break;
		case OPT_CHILDREN: {
			unsigned pid;
			if (!attach) {
				np_err("unknown option '--children' (see --help)");
				return -EINVAL;
			}
			if (parse_uint("--children", optarg, 1, INT_MAX, &pid))
				return -EINVAL;
			o->children_of = (pid_t)pid;
			break;
		}
		case OPT_GPU:
			if (!valid_gpu_mode(optarg)) {
				np_err("invalid --gpu '%s': expected every, sample:K, modules, "
				       "every+modules or sample:K+modules", optarg);
				return -EINVAL;
			}
			o->gpu_mode = optarg;
			break;
		case OPT_GPU_DEFER: {
			unsigned n;
			if (parse_uint("--gpu-defer", optarg, 0, NP_AGENT_GPU_DEFER_MAX, &n))
				return -EINVAL;
			o->gpu_defer = (int)n;
			break;
		}
		case OPT_ON_NAN:
			if (np_on_nan_parse(optarg, &o->on_nan_signal))
				return -EINVAL;
			break;
		case OPT_PYTHON_PROBE:
			if (!strcmp(optarg, "auto"))
				o->python_probe = 0;
			else if (!strcmp(optarg, "call"))
				o->python_probe = 1;
			else if (!strcmp(optarg, "eval"))
				o->python_probe = 2;
			else {
				np_err("invalid --python-probe '%s': expected auto, call or eval", optarg);
				return -EINVAL;
			}
			break;
		case 'v':
			o->verbose++;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			fputs(help, stdout);
			return 1;
		case ':':
			np_err("option %s needs a value", argv[optind - 1]);
			return -EINVAL;
		default:
			if (optopt && optopt < 256)
				np_err("unknown option '-%c' (see --help)", optopt);
			else
				np_err("unknown option '%s' (see --help)", argv[optind - 1]);
			return -EINVAL;
		}
	}
	return 0;
}

int np_parse_run(int argc, char **argv, struct np_opts *o)
{
	int err = parse_common(argc, argv, o, false, run_help);
	if (err)
		return err;
	if (optind < argc && strcmp(argv[optind - 1], "--") != 0 && argv[optind][0] == '-') {
		np_err("unknown option '%s' (see --help)", argv[optind]);
		return -EINVAL;
	}
	if (optind >= argc) {
		np_err("missing command: nanprof run [options] -- CMD [ARGS...]");
		return -EINVAL;
	}
	o->cmd = &argv[optind];
	return 0;
}

int np_parse_attach(int argc, char **argv, struct np_opts *o)
{
	int err = parse_common(argc, argv, o, true, attach_help);
	if (err)
		return err;
	if (optind >= argc && !o->children_of) {
		np_err("missing pid: nanprof attach [options] PID... or --children PID");
		return -EINVAL;
	}
	for (int i = optind; i < argc; i++) {
		unsigned pid;
		if (i > optind && argv[i][0] == '-') {
			np_err("unexpected argument '%s': options go before the pids", argv[i]);
			return -EINVAL;
		}
		if (o->npids >= NP_MAX_ATTACH) {
			np_err("too many pids: at most %d", NP_MAX_ATTACH);
			return -EINVAL;
		}
		if (parse_uint("pid", argv[i], 1, INT_MAX, &pid))
			return -EINVAL;
		o->pids[o->npids++] = (pid_t)pid;
	}
	o->pid = o->npids ? o->pids[0] : o->children_of;
	return 0;
}
