/* test_output.c - unit tests for userspace/output.c.
 *
 * A small synthetic session goes through the collector (two processes
 * whose pids do not exist, so modules get their fallback names), then
 * through the three writers: events.jsonl and trace.json into a fresh
 * temporary directory, the summary into a memory stream.  The trace is
 * also checked by tests/integration/check_trace.py (Python standard
 * library only), the same check the integration tests use.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <signal.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "findings_out.h"
#include "on_nan.h"
#include "output.h"
#include "verdict.h"

/* Bit 30 clear, so the "steps and phases" track id (0x40000000 | pid)
 * differs from the pid; far above pid_max, so no such process. */
#define PID1 0x3ffffff0u   /* 1073741808, rank 0 */
#define PID2 0x3ffffff1u   /* 1073741809, no rank */
#define TID1 (PID1 + 8)
#define TID2 (PID2 + 8)

#define T_NET 0x100ULL
#define T_LIN 0x200ULL
#define M_NET 0x10000ULL
#define M_LIN 0x20000ULL

/* ---- the BPF side, simulated (as in test_collector.c) ---- */

struct sim {
	struct np_collector *c;
	uint32_t pid, tid;
	uint64_t step;
	uint32_t batch;
	bool saw_backward;
	uint32_t bwd_depth, opt_depth;
	uint32_t depth;
	uint64_t stack[NP_MAX_STACK];
};

static struct np_event ev(const struct sim *s, uint32_t kind, uint64_t ts)
{
	struct np_event e;

	memset(&e, 0, sizeof(e));
	e.kind = kind;
	e.pid = s->pid;
	e.tid = s->tid;
	e.phase = s->opt_depth ? NP_PHASE_OPTIMIZER : s->bwd_depth ? NP_PHASE_BACKWARD
			   : s->depth ? NP_PHASE_FORWARD : NP_PHASE_NONE;
	e.depth = (uint16_t)s->depth;
	e.ts_ns = ts;
	e.step = s->step;
	e.batch = s->batch;
	return e;
}

static void type_name(struct sim *s, uint64_t ts, uint64_t type, const char *name)
{
	struct np_event e = ev(s, NP_EV_TYPE_NAME, ts);
	e.a = type;
	snprintf(e.name, sizeof(e.name), "%s", name);
	np_collector_event(s->c, &e);
}

static void mod_enter(struct sim *s, uint64_t ts, uint64_t self, uint64_t type, uint64_t seq)
{
	if (s->depth == 0 && !s->bwd_depth && !s->opt_depth && s->saw_backward) {
		s->batch++;
		s->saw_backward = false;
	}
	uint64_t parent = s->depth ? s->stack[s->depth - 1] : 0;
	s->stack[s->depth++] = self;
	struct np_event e = ev(s, NP_EV_MOD_ENTER, ts);
	e.a = self;
	e.b = type;
	e.c = parent;
	e.d = seq;
	np_collector_event(s->c, &e);
}

static void mod_exit(struct sim *s, uint64_t ts, uint64_t seq)
{
	s->depth--;
	struct np_event e = ev(s, NP_EV_MOD_EXIT, ts);
	e.a = s->stack[s->depth];
	e.d = seq;
	np_collector_event(s->c, &e);
}

static void simple(struct sim *s, uint32_t kind, uint64_t ts)
{
	if (kind == NP_EV_BWD_ENTER)
		s->bwd_depth++;
	if (kind == NP_EV_OPT_ENTER)
		s->opt_depth++;
	if (kind == NP_EV_OPT_EXIT)
		s->opt_depth--;
	struct np_event e = ev(s, kind, ts);
	np_collector_event(s->c, &e);
	if (kind == NP_EV_BWD_EXIT && --s->bwd_depth == 0)
		s->saw_backward = true;
	if (kind == NP_EV_OPT_EXIT) {
		s->step++;
		s->batch = 0;
		s->saw_backward = false;
	}
}

static void node(struct sim *s, uint64_t ts, uint64_t seq)
{
	struct np_event e = ev(s, NP_EV_NODE_ENTER, ts);
	e.a = 0x900000 + ts;
	e.b = 0xabc0;
	e.d = seq;
	np_collector_event(s->c, &e);
}

/* Step k at T(k), as in test_collector.c: Net calls Linear; five nodes
 * (Net's, Linear's, one older than any span, Linear's, one unknown). */
#define T(k) (1000000ULL + (uint64_t)(k) * 100000ULL)
#define S(k) (1000ULL + (uint64_t)(k) * 100ULL)

static void std_step(struct sim *s, unsigned k)
{
	uint64_t t = T(k), q = S(k);

	mod_enter(s, t, M_NET, T_NET, q + 10);
	mod_enter(s, t + 1000, M_LIN, T_LIN, q + 10);
	mod_exit(s, t + 3000, q + 13);
	mod_exit(s, t + 5000, q + 14);
	simple(s, NP_EV_BWD_ENTER, t + 10000);
	node(s, t + 11000, q + 13);
	node(s, t + 12000, q + 12);
	node(s, t + 13000, 5);
	node(s, t + 14000, q + 11);
	node(s, t + 15000, NP_SEQ_UNKNOWN);
	simple(s, NP_EV_BWD_EXIT, t + 16000);
	simple(s, NP_EV_OPT_ENTER, t + 20000);
	simple(s, NP_EV_OPT_EXIT, t + 30000);
}

/* ---- fixture ---- */

static struct np_collector col;
static bool col_init;
static struct np_session_info info;
static char dir[64], events_path[128], trace_path[128];
static char *text;       /* the file read last */
static char **lines;
static size_t nlines;

/* The session: process 1 (rank 0) runs steps 0-2, process 2 (no rank)
 * runs step 0 and exits.  window steps of detail; attach mode makes the
 * first step of each process partial.  Tests may add events before
 * session_end() ends it. */
static void session_begin(uint32_t window, uint32_t max_records, bool attach)
{
	struct np_collector_opts o = { .window = window, .max_records = max_records,
				       .max_steps = 100, .max_procs = 4, .max_threads = 4 };
	cr_assert_eq(np_collector_init(&col, &o), 0);
	col_init = true;
	col.attach_mode = attach;

	struct np_proc_info pi;
	memset(&pi, 0, sizeof(pi));
	pi.py_major = 3;
	pi.py_minor = 11;
	snprintf(pi.python, sizeof(pi.python), "/usr/bin/python3.11");
	snprintf(pi.probes, sizeof(pi.probes), "_PyEval_EvalFrameDefault,Engine::execute");
	pi.pid = PID1;
	cr_assert_not_null(np_collector_add_proc(&col, &pi, 0));
	pi.pid = PID2;
	snprintf(pi.torch_version, sizeof(pi.torch_version), "2.5.0+cpu");
	snprintf(pi.torch_lib, sizeof(pi.torch_lib), "/opt/torch/lib/libtorch_cpu.so");
	pi.py_verified = true;
	cr_assert_not_null(np_collector_add_proc(&col, &pi, -1));

	struct sim s1 = { .c = &col, .pid = PID1, .tid = TID1 };
	struct sim s2 = { .c = &col, .pid = PID2, .tid = TID2 };
	type_name(&s1, T(0), T_NET, "Net");
	type_name(&s1, T(0), T_LIN, "torch.nn.modules.linear.Linear");
	type_name(&s2, T(0), T_NET, "Net");
	type_name(&s2, T(0), T_LIN, "torch.nn.modules.linear.Linear");
	for (unsigned k = 0; k < 3; k++) {
		std_step(&s1, k);
		if (k == 0)
			std_step(&s2, 0);
	}
	simple(&s2, NP_EV_PROC_EXIT, T(1));
	cr_assert_eq(col.events, 4 + 4 * 13 + 1, "events %llu", (unsigned long long)col.events);

	memset(&info, 0, sizeof(info));
	info.mode = "run";
	info.command = "python3 train.py --tag \"a b\"";
	info.probe_mode = "uprobe-session";
	info.start_ns = 500000;
	info.end_ns = 2500000000ULL;
	info.start_unix_ns = 1700000000123456789ULL;
	for (int k = 0; k < NP_CNT_MAX; k++)
		info.counters[k] = 11 + k;
	info.exit_status = 3;
	info.window = window;
}

static void session_end(void)
{
	np_collector_finish(&col);
}

static void session(uint32_t window, uint32_t max_records, bool attach)
{
	session_begin(window, max_records, attach);
	session_end();
}

static void setup(void)
{
	strcpy(dir, "/tmp/test_output.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(events_path, sizeof(events_path), "%s/events.jsonl", dir);
	snprintf(trace_path, sizeof(trace_path), "%s/trace.json", dir);
}

static void teardown(void)
{
	unlink(events_path);
	unlink(trace_path);
	rmdir(dir);
	free(text);
	free(lines);
	text = NULL;
	lines = NULL;
	nlines = 0;
	if (col_init)
		np_collector_free(&col);
	col_init = false;
}

TestSuite(output, .init = setup, .fini = teardown);

/* Reads a whole file; splits it into lines when split is set. */
static const char *slurp(const char *path, bool split)
{
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "cannot open %s", path);
	size_t cap = 1 << 16, len = 0, n;
	free(text);
	text = malloc(cap + 1);
	cr_assert_not_null(text);
	while ((n = fread(text + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			cap *= 2;
			text = realloc(text, cap + 1);
			cr_assert_not_null(text);
		}
	}
	fclose(f);
	text[len] = 0;
	if (!split)
		return text;
	free(lines);
	nlines = 0;
	lines = calloc(len + 1, sizeof(*lines));
	cr_assert_not_null(lines);
	cr_assert(len == 0 || text[len - 1] == '\n', "last line without a newline");
	for (char *p = text; *p;) {
		char *nl = strchr(p, '\n');
		*nl = 0;
		lines[nlines++] = p;
		p = nl + 1;
	}
	return text;
}

/* The value of "type" of a line that must start with {"type":" */
static void type_of(const char *line, char *buf, size_t len)
{
	static const char prefix[] = "{\"type\":\"";
	cr_assert_eq(strncmp(line, prefix, sizeof(prefix) - 1), 0, "line does not start with "
		     "{\"type\":\": %s", line);
	const char *s = line + sizeof(prefix) - 1, *end = strchr(s, '"');
	cr_assert_not_null(end);
	cr_assert_lt((size_t)(end - s), len);
	memcpy(buf, s, end - s);
	buf[end - s] = 0;
	cr_assert_eq(line[strlen(line) - 1], '}', "line does not end with }: %s", line);
}

static bool has(const char *hay, const char *needle)
{
	return strstr(hay, needle) != NULL;
}

#define expect_has(hay, needle) \
	cr_expect(has((hay), (needle)), "missing %s\n in: %s", (needle), (hay))
#define expect_lacks(hay, needle) \
	cr_expect(!has((hay), (needle)), "unexpected %s\n in: %s", (needle), (hay))

static int count_of(const char *hay, const char *needle)
{
	int n = 0;
	while ((hay = strstr(hay, needle))) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

/* The detail record types of the standard step, in the order they close. */
static const char *const std_types[] = {
	"module", "module", "phase", "backward_node", "module_backward", "backward_node",
	"backward_node", "backward_node", "backward_node", "module_backward", "phase", "phase",
};
#define STD_RECS 12

/* ---- events.jsonl ---- */

Test(output, events_record_order)
{
	session(8, 1000, false);
	cr_assert_eq(np_write_events(&col, &info, events_path), 0);
	slurp(events_path, true);

	/* session, 2 processes, 3 + 1 steps, 4 steps of detail, end */
	cr_assert_eq(nlines, 1 + 2 + 4 + 4 * STD_RECS + 1, "%zu lines", nlines);
	size_t i = 0;
	char type[32];
	type_of(lines[i++], type, sizeof(type));
	cr_expect_str_eq(type, "session");
	for (int k = 0; k < 2; k++) {
		type_of(lines[i++], type, sizeof(type));
		cr_expect_str_eq(type, "process", "line %zu", i);
	}
	for (int k = 0; k < 4; k++) {
		type_of(lines[i++], type, sizeof(type));
		cr_expect_str_eq(type, "step", "line %zu", i);
	}
	for (int k = 0; k < 4 * STD_RECS; k++) {
		type_of(lines[i++], type, sizeof(type));
		cr_expect_str_eq(type, std_types[k % STD_RECS], "line %zu: %s", i, lines[i - 1]);
		/* process 1's three steps, then process 2's */
		char want[64];
		snprintf(want, sizeof(want), "\"pid\":%u,", k < 3 * STD_RECS ? PID1 : PID2);
		expect_has(lines[i - 1], want);
		snprintf(want, sizeof(want), "\"step\":%d,", k < 3 * STD_RECS ? k / STD_RECS : 0);
		expect_has(lines[i - 1], want);
	}
	type_of(lines[i++], type, sizeof(type));
	cr_expect_str_eq(type, "end");
}

/* --on-nan: the session says which signal; what it did follows it */
Test(output, events_on_nan_action_after_the_session)
{
	session(8, 1000, false);
	struct np_on_nan act = { .signo = SIGINT, .fired = true, .ts_ns = 777, .nsent = 2,
				 .pids = { 11, 12 } };
	info.on_nan = &act;
	cr_assert_eq(np_write_events(&col, &info, events_path), 0);
	slurp(events_path, true);
	cr_assert_geq(nlines, 3);
	expect_has(lines[0], "\"processes\":2,\"on_nan\":\"SIGINT\"}");
	cr_expect_str_eq(lines[1],
		"{\"type\":\"on_nan_action\",\"signal\":\"SIGINT\",\"ts_ns\":777,"
		"\"processes_signalled\":2,\"processes_refused\":0,\"processes_ignoring\":0,"
		"\"pids\":[11,12]}");
	char type[32];
	type_of(lines[2], type, sizeof(type));
	cr_expect_str_eq(type, "process");
	info.on_nan = NULL;
}

Test(output, events_session_and_process_fields)
{
	session(8, 1000, false);
	cr_assert_eq(np_write_events(&col, &info, events_path), 0);
	slurp(events_path, true);
	cr_assert_geq(nlines, 3);

	cr_expect_str_eq(lines[0],
		"{\"type\":\"session\",\"version\":\"0.1.0\",\"mode\":\"run\","
		"\"command\":\"python3 train.py --tag \\\"a b\\\"\",\"probe_mode\":\"uprobe-session\","
		"\"start_unix_ns\":1700000000123456789,\"start_ns\":500000,\"end_ns\":2500000000,"
		"\"window_steps\":8,\"processes\":2,\"on_nan\":\"report\"}");
	cr_expect_str_eq(lines[1],
		"{\"type\":\"process\",\"pid\":1073741808,\"rank\":0,\"python\":\"3.11\","
		"\"python_binary\":\"/usr/bin/python3.11\",\"python_offsets_verified\":false,"
		"\"torch\":null,\"torch_library\":null,"
		"\"probes\":[\"_PyEval_EvalFrameDefault\",\"Engine::execute\"],\"exited\":false}");
	cr_expect_str_eq(lines[2],
		"{\"type\":\"process\",\"pid\":1073741809,\"rank\":-1,\"python\":\"3.11\","
		"\"python_binary\":\"/usr/bin/python3.11\",\"python_offsets_verified\":true,"
		"\"torch\":\"2.5.0+cpu\",\"torch_library\":\"/opt/torch/lib/libtorch_cpu.so\","
		"\"probes\":[\"_PyEval_EvalFrameDefault\",\"Engine::execute\"],\"exited\":true}");
}

Test(output, events_step_fields)
{
	session(8, 1000, false);
	cr_assert_eq(np_write_events(&col, &info, events_path), 0);
	slurp(events_path, true);
	cr_assert_geq(nlines, 7);

	/* step 0 runs from the first event, later ones from the last step's end */
	cr_expect_str_eq(lines[3],
		"{\"type\":\"step\",\"pid\":1073741808,\"rank\":0,\"step\":0,"
		"\"start_ns\":1000000,\"end_ns\":1030000,\"dur_ms\":0.03,"
		"\"forward_ms\":0.005,\"backward_ms\":0.006,\"optimizer_ms\":0.01,"
		"\"batches\":1,\"optimizer_calls\":1,\"module_calls\":2,\"backward_nodes\":5,\"records_dropped\":0,"
		"\"complete\":true,\"partial\":false}");
	cr_expect_str_eq(lines[4],
		"{\"type\":\"step\",\"pid\":1073741808,\"rank\":0,\"step\":1,"
		"\"start_ns\":1030000,\"end_ns\":1130000,\"dur_ms\":0.1,"
		"\"forward_ms\":0.005,\"backward_ms\":0.006,\"optimizer_ms\":0.01,"
		"\"batches\":1,\"optimizer_calls\":1,\"module_calls\":2,\"backward_nodes\":5,\"records_dropped\":0,"
		"\"complete\":true,\"partial\":false}");
	expect_has(lines[5], "\"step\":2,\"start_ns\":1130000,\"end_ns\":1230000,");
	expect_has(lines[6], "\"pid\":1073741809,\"rank\":-1,\"step\":0,");
	expect_has(lines[6], "\"batches\":1,");
}

Test(output, events_detail_fields)
{
	session(8, 1000, false);
	cr_assert_eq(np_write_events(&col, &info, events_path), 0);
	slurp(events_path, true);
	cr_assert_geq(nlines, 7 + STD_RECS);

	/* process 1, step 0: tid 1073741816 */
	const char *const want[STD_RECS] = {
		"{\"type\":\"module\",\"pid\":1073741808,\"rank\":0,\"tid\":1073741816,\"step\":0,"
		"\"batch\":0,\"phase\":\"forward\",\"module\":\"<Linear>\",\"module_type\":\"Linear\","
		"\"depth\":1,\"start_ns\":1001000,\"dur_ns\":2000}",
		"{\"type\":\"module\",\"pid\":1073741808,\"rank\":0,\"tid\":1073741816,\"step\":0,"
		"\"batch\":0,\"phase\":\"forward\",\"module\":\"\",\"module_type\":\"Net\","
		"\"depth\":0,\"start_ns\":1000000,\"dur_ns\":5000}",
		"{\"type\":\"phase\",\"pid\":1073741808,\"rank\":0,\"tid\":1073741816,\"step\":0,"
		"\"batch\":0,\"phase\":\"forward\",\"start_ns\":1000000,\"dur_ns\":5000}",
		"{\"type\":\"backward_node\",\"pid\":1073741808,\"rank\":0,\"tid\":1073741816,"
		"\"step\":0,\"batch\":0,\"phase\":\"backward\",\"module\":\"\",\"module_type\":\"Net\","
		"\"node\":\"Node\",\"sequence_nr\":1013,\"start_ns\":1011000,\"dur_ns\":1000}",
		"{\"type\":\"module_backward\",\"pid\":1073741808,\"rank\":0,\"tid\":1073741816,"
		"\"step\":0,\"batch\":0,\"phase\":\"backward\",\"module\":\"\",\"module_type\":\"Net\","
		"\"start_ns\":1011000,\"dur_ns\":1000}",
		"{\"type\":\"backward_node\",\"pid\":1073741808,\"rank\":0,\"tid\":1073741816,"
		"\"step\":0,\"batch\":0,\"phase\":\"backward\",\"module\":\"<Linear>\","
		"\"module_type\":\"Linear\",\"node\":\"Node\",\"sequence_nr\":1012,"
		"\"start_ns\":1012000,\"dur_ns\":1000}",
		"{\"type\":\"backward_node\",\"pid\":1073741808,\"rank\":0,\"tid\":1073741816,"
		"\"step\":0,\"batch\":0,\"phase\":\"backward\",\"module\":\"<none>\","
		"\"module_type\":\"\",\"node\":\"Node\",\"sequence_nr\":5,"
		"\"start_ns\":1013000,\"dur_ns\":1000}",
		NULL,   /* like the one before last */
		"{\"type\":\"backward_node\",\"pid\":1073741808,\"rank\":0,\"tid\":1073741816,"
		"\"step\":0,\"batch\":0,\"phase\":\"backward\",\"module\":\"<none>\","
		"\"module_type\":\"\",\"node\":\"Node\",\"sequence_nr\":18446744073709551615,"
		"\"start_ns\":1015000,\"dur_ns\":1000}",
		"{\"type\":\"module_backward\",\"pid\":1073741808,\"rank\":0,\"tid\":1073741816,"
		"\"step\":0,\"batch\":0,\"phase\":\"backward\",\"module\":\"<Linear>\","
		"\"module_type\":\"Linear\",\"start_ns\":1012000,\"dur_ns\":4000}",
		"{\"type\":\"phase\",\"pid\":1073741808,\"rank\":0,\"tid\":1073741816,\"step\":0,"
		"\"batch\":0,\"phase\":\"backward\",\"start_ns\":1010000,\"dur_ns\":6000}",
		"{\"type\":\"phase\",\"pid\":1073741808,\"rank\":0,\"tid\":1073741816,\"step\":0,"
		"\"batch\":0,\"phase\":\"optimizer\",\"start_ns\":1020000,\"dur_ns\":10000}",
	};
	for (int k = 0; k < STD_RECS; k++)
		if (want[k])
			cr_expect_str_eq(lines[7 + k], want[k], "detail line %d", k);
	expect_has(lines[7 + 7], "\"module\":\"<Linear>\",\"module_type\":\"Linear\","
		   "\"node\":\"Node\",\"sequence_nr\":1011,\"start_ns\":1014000,\"dur_ns\":1000}");
	/* step 1's first record */
	expect_has(lines[7 + STD_RECS], "\"type\":\"module\",\"pid\":1073741808,\"rank\":0,"
		   "\"tid\":1073741816,\"step\":1,\"batch\":0,");
	expect_has(lines[7 + STD_RECS], "\"start_ns\":1101000,\"dur_ns\":2000}");
}

Test(output, events_end_record)
{
	session(8, 1000, false);
	cr_assert_eq(np_write_events(&col, &info, events_path), 0);
	slurp(events_path, true);
	cr_assert_geq(nlines, 1);
	cr_expect_str_eq(lines[nlines - 1],
		"{\"type\":\"end\",\"exit_status\":3,\"events\":57,\"records_dropped\":0,"
		"\"step_counters_dropped\":0,\"processes_dropped\":0,\"threads_dropped\":0,"
		"\"thread_events_dropped\":0,\"module_spans_dropped\":0,\"names_dropped\":0,"
		"\"module_paths_dropped\":0,"
		"\"ringbuf_full\":11,\"stack_overflow\":12,\"read_fail\":13,"
		"\"python_frames_probed\":14,\"code_cache_full\":15}");
}

/* --window 2: step records for every step, detail for the last two only */
Test(output, events_window_and_drops)
{
	session_begin(2, 16, true);
	/* one more step for process 1, with more records than --max-records */
	struct sim s1 = { .c = &col, .pid = PID1, .tid = TID1, .step = 3 };
	mod_enter(&s1, T(3), M_NET, T_NET, NP_SEQ_UNKNOWN);
	for (unsigned i = 0; i < 20; i++) {
		mod_enter(&s1, T(3) + 10 + 10 * i, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
		mod_exit(&s1, T(3) + 15 + 10 * i, NP_SEQ_UNKNOWN);
	}
	mod_exit(&s1, T(3) + 5000, NP_SEQ_UNKNOWN);
	simple(&s1, NP_EV_OPT_ENTER, T(3) + 20000);
	simple(&s1, NP_EV_OPT_EXIT, T(3) + 30000);
	session_end();
	cr_assert_eq(np_write_events(&col, &info, events_path), 0);
	slurp(events_path, true);

	/* session, 2 processes, 4 + 1 steps; detail: process 1 steps 2 and 3
	 * (12 + 16), process 2 step 0 (12); end */
	cr_assert_eq(nlines, 1 + 2 + 5 + 12 + 16 + 12 + 1, "%zu lines", nlines);
	expect_has(lines[3], "\"step\":0,");
	expect_has(lines[3], "\"complete\":true,\"partial\":true}");
	expect_has(lines[4], "\"complete\":true,\"partial\":false}");
	expect_has(lines[6], "\"step\":3,");
	expect_has(lines[6], "\"module_calls\":21,\"backward_nodes\":0,\"records_dropped\":7,");
	expect_has(lines[7], "\"pid\":1073741809,");
	expect_has(lines[7], "\"partial\":true}");
	for (size_t i = 8; i < 8 + 12; i++)
		expect_has(lines[i], "\"pid\":1073741808,\"rank\":0,\"tid\":1073741816,\"step\":2,");
	for (size_t i = 8 + 12; i < 8 + 28; i++)
		expect_has(lines[i], "\"pid\":1073741808,\"rank\":0,\"tid\":1073741816,\"step\":3,");
	for (size_t i = 8 + 28; i < 8 + 40; i++)
		expect_has(lines[i], "\"pid\":1073741809,");
	expect_has(lines[nlines - 1], "\"records_dropped\":7,");
}

Test(output, events_missing_directory)
{
	session(8, 1000, false);
	char path[160];
	snprintf(path, sizeof(path), "%s/missing/events.jsonl", dir);
	cr_expect_eq(np_write_events(&col, &info, path), -ENOENT);
	snprintf(path, sizeof(path), "%s/missing/trace.json", dir);
	cr_expect_eq(np_write_trace(&col, &info, path), -ENOENT);
}

Test(output, full_disk_is_an_error)
{
	if (access("/dev/full", W_OK))
		cr_skip_test("no /dev/full");
	session(8, 1000, false);
	int err = np_write_trace(&col, &info, "/dev/full");
	cr_expect_lt(err, 0, "trace to /dev/full: %d", err);
	err = np_write_events(&col, &info, "/dev/full");
	cr_expect_lt(err, 0, "events to /dev/full: %d", err);
}

/* A file small enough to stay in stdio's buffer fails only at fclose. */
Test(output, full_disk_small_file_is_an_error)
{
	if (access("/dev/full", W_OK))
		cr_skip_test("no /dev/full");
	struct np_collector_opts o = { .window = 1, .max_records = 16, .max_steps = 1,
				       .max_procs = 1, .max_threads = 1 };
	cr_assert_eq(np_collector_init(&col, &o), 0);
	col_init = true;
	memset(&info, 0, sizeof(info));
	info.mode = "attach";
	info.command = "attach 1";
	info.probe_mode = "uprobe+uretprobe";
	info.exit_status = -1;
	int err = np_write_events(&col, &info, "/dev/full");
	cr_expect_lt(err, 0, "events to /dev/full: %d", err);
	err = np_write_trace(&col, &info, "/dev/full");
	cr_expect_lt(err, 0, "trace to /dev/full: %d", err);
	/* the same to a real file: session and end only */
	cr_assert_eq(np_write_events(&col, &info, events_path), 0);
	slurp(events_path, true);
	cr_assert_eq(nlines, 2);
	expect_has(lines[0], "\"mode\":\"attach\",\"command\":\"attach 1\","
		   "\"probe_mode\":\"uprobe+uretprobe\",");
	expect_has(lines[0], "\"processes\":0,\"on_nan\":\"report\"}");
	expect_has(lines[1], "{\"type\":\"end\",\"exit_status\":-1,\"events\":0,");
	cr_assert_eq(np_write_trace(&col, &info, trace_path), 0);
	const char *t = slurp(trace_path, false);
	cr_expect_str_eq(t, "{\"traceEvents\":[\n]}\n");
}

/* ---- trace.json ---- */

Test(output, trace_tracks_and_slices)
{
	session(8, 1000, false);
	cr_assert_eq(np_write_trace(&col, &info, trace_path), 0);
	const char *t = slurp(trace_path, false);

	cr_expect_eq(strncmp(t, "{\"traceEvents\":[", 16), 0, "starts with %.40s", t);
	size_t n = strlen(t);
	while (n && (t[n - 1] == '\n' || t[n - 1] == ' '))
		n--;
	cr_expect(n >= 2 && t[n - 2] == ']' && t[n - 1] == '}', "does not end with ]}");

	expect_has(t, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1073741808,"
		   "\"args\":{\"name\":\"rank 0 (pid 1073741808)\"}}");
	expect_has(t, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1073741809,"
		   "\"args\":{\"name\":\"pid 1073741809\"}}");
	/* sorted by rank, else by pid */
	expect_has(t, "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":1073741808,"
		   "\"args\":{\"sort_index\":0}}");
	expect_has(t, "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":1073741809,"
		   "\"args\":{\"sort_index\":1073741809}}");
	/* 0x40000000 | pid */
	expect_has(t, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1073741808,"
		   "\"tid\":2147483632,\"args\":{\"name\":\"steps and phases\"}}");
	expect_has(t, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1073741808,"
		   "\"tid\":1073741816,\"args\":{\"name\":\"thread\"}}");
	/* ts in us from session start (500000 ns) */
	expect_has(t, "{\"name\":\"step 0\",\"cat\":\"step\",\"ph\":\"X\",\"ts\":500,\"dur\":30,"
		   "\"pid\":1073741808,\"tid\":2147483632,"
		   "\"args\":{\"step\":0,\"batches\":1,\"complete\":1}}");
	expect_has(t, "{\"name\":\"step 2\",\"cat\":\"step\",\"ph\":\"X\",\"ts\":630,\"dur\":100,");
	expect_has(t, "{\"name\":\"forward\",\"cat\":\"phase\",\"ph\":\"X\",\"ts\":500,\"dur\":5,"
		   "\"pid\":1073741808,\"tid\":2147483632,\"args\":{\"step\":0,\"batch\":0}}");
	expect_has(t, "{\"name\":\"backward\",\"cat\":\"phase\",\"ph\":\"X\",\"ts\":510,\"dur\":6,");
	expect_has(t, "{\"name\":\"optimizer\",\"cat\":\"phase\",\"ph\":\"X\",\"ts\":520,\"dur\":10,");
	/* the outermost module is named by its class */
	expect_has(t, "{\"name\":\"Net\",\"cat\":\"module\",\"ph\":\"X\",\"ts\":500,\"dur\":5,"
		   "\"pid\":1073741808,\"tid\":1073741816,\"args\":{\"step\":0,\"batch\":0,"
		   "\"module\":\"\",\"module_type\":\"Net\",\"phase\":\"forward\"}}");
	expect_has(t, "{\"name\":\"<Linear>\",\"cat\":\"module\",\"ph\":\"X\",\"ts\":501,\"dur\":2,");
	expect_has(t, "{\"name\":\"<Linear> (backward)\",\"cat\":\"module_backward\",\"ph\":\"X\","
		   "\"ts\":512,\"dur\":4,\"pid\":1073741808,\"tid\":1073741816,"
		   "\"args\":{\"step\":0,\"batch\":0,\"module\":\"<Linear>\",\"module_type\":\"Linear\"}}");
	expect_has(t, "{\"name\":\"Node\",\"cat\":\"autograd\",\"ph\":\"X\",\"ts\":512,\"dur\":1,"
		   "\"pid\":1073741808,\"tid\":1073741816,\"args\":{\"step\":0,\"batch\":0,"
		   "\"module\":\"<Linear>\",\"sequence_nr\":1012}}");
	expect_has(t, "{\"name\":\"step time (ms)\",\"ph\":\"C\",\"ts\":500,\"pid\":1073741808,"
		   "\"args\":{\"step_ms\":0.03,\"forward_ms\":0.005,\"backward_ms\":0.006,"
		   "\"optimizer_ms\":0.01}}");
	expect_has(t, "{\"name\":\"calls per step\",\"ph\":\"C\",\"ts\":500,\"pid\":1073741808,"
		   "\"args\":{\"module_calls\":2,\"backward_nodes\":5}}");

	cr_expect_eq(count_of(t, "\"cat\":\"step\""), 4);
	cr_expect_eq(count_of(t, "\"cat\":\"phase\""), 4 * 3);
	cr_expect_eq(count_of(t, "\"cat\":\"module\","), 4 * 2);
	cr_expect_eq(count_of(t, "\"cat\":\"module_backward\""), 4 * 2);
	cr_expect_eq(count_of(t, "\"cat\":\"autograd\""), 4 * 5);
	cr_expect_eq(count_of(t, "\"name\":\"step time (ms)\""), 4);
}

Test(output, trace_window_limits_slices_not_counters)
{
	session(2, 1000, false);
	cr_assert_eq(np_write_trace(&col, &info, trace_path), 0);
	const char *t = slurp(trace_path, false);

	expect_lacks(t, "\"name\":\"step 0\",\"cat\":\"step\",\"ph\":\"X\",\"ts\":500,\"dur\":30,"
		     "\"pid\":1073741808,");
	expect_has(t, "\"name\":\"step 1\",\"cat\":\"step\"");
	expect_has(t, "\"name\":\"step 2\",\"cat\":\"step\"");
	/* process 2's only step is in its window */
	expect_has(t, "\"name\":\"step 0\",\"cat\":\"step\",\"ph\":\"X\",\"ts\":500,\"dur\":30,"
		   "\"pid\":1073741809,");
	cr_expect_eq(count_of(t, "\"cat\":\"step\""), 3);
	cr_expect_eq(count_of(t, "\"cat\":\"autograd\""), 3 * 5);
	/* counters cover every step */
	cr_expect_eq(count_of(t, "\"name\":\"step time (ms)\",\"ph\":\"C\",\"ts\":"), 4);
	cr_expect_eq(count_of(t, "\"name\":\"calls per step\""), 4);
}

static void check_trace(const char *path, const char *extra)
{
	if (access("tests/integration/check_trace.py", R_OK))
		cr_skip_test("tests/integration/check_trace.py not found (run from the repo root)");
	if (system("python3 -c pass >/dev/null 2>&1") != 0)
		cr_skip_test("python3 not available");
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "python3 tests/integration/check_trace.py '%s' %s >/dev/null",
		 path, extra);
	int rc = system(cmd);
	cr_assert(rc != -1 && WIFEXITED(rc), "cannot run %s", cmd);
	cr_expect_eq(WEXITSTATUS(rc), 0, "%s: exit %d", cmd, WEXITSTATUS(rc));
}

Test(output, trace_passes_check_trace)
{
	session(8, 1000, false);
	cr_assert_eq(np_write_trace(&col, &info, trace_path), 0);
	check_trace(trace_path, "--require-name 'step 0' --require-name '<Linear> (backward)' "
		    "--require-cat module_backward --require-cat autograd --require-cat phase");
}

Test(output, trace_with_gradient_accumulation_and_open_step_passes_check_trace)
{
	session_begin(8, 1000, false);
	/* process 1: two batches in step 3, then the job ends in step 4's forward */
	struct sim s1 = { .c = &col, .pid = PID1, .tid = TID1, .step = 3 };
	for (unsigned b = 0; b < 2; b++) {
		uint64_t t = T(3) + b * 40000, q = S(3) + b * 50;
		mod_enter(&s1, t, M_NET, T_NET, q + 10);
		mod_enter(&s1, t + 1000, M_LIN, T_LIN, q + 10);
		mod_exit(&s1, t + 3000, q + 13);
		mod_exit(&s1, t + 5000, q + 14);
		simple(&s1, NP_EV_BWD_ENTER, t + 10000);
		node(&s1, t + 11000, q + 12);
		node(&s1, t + 12000, q + 13);
		simple(&s1, NP_EV_BWD_EXIT, t + 16000);
	}
	simple(&s1, NP_EV_OPT_ENTER, T(3) + 90000);
	simple(&s1, NP_EV_OPT_EXIT, T(3) + 95000);
	mod_enter(&s1, T(4), M_NET, T_NET, S(4));
	mod_enter(&s1, T(4) + 100, M_LIN, T_LIN, S(4));
	mod_exit(&s1, T(4) + 200, S(4) + 1);
	session_end();

	cr_assert_eq(np_write_trace(&col, &info, trace_path), 0);
	check_trace(trace_path, "--require-name 'step 4' --require-cat module_backward");
	const char *t = slurp(trace_path, false);
	expect_has(t, "\"name\":\"step 3\",\"cat\":\"step\",\"ph\":\"X\",\"ts\":730,\"dur\":165,"
		   "\"pid\":1073741808,\"tid\":2147483632,"
		   "\"args\":{\"step\":3,\"batches\":2,\"complete\":1}}");
	expect_has(t, "\"name\":\"step 4\",\"cat\":\"step\",\"ph\":\"X\",\"ts\":895,\"dur\":5.2,"
		   "\"pid\":1073741808,\"tid\":2147483632,"
		   "\"args\":{\"step\":4,\"batches\":1,\"complete\":0}}");
	expect_has(t, "{\"name\":\"forward\",\"cat\":\"phase\",\"ph\":\"X\",\"ts\":840,\"dur\":5,"
		   "\"pid\":1073741808,\"tid\":2147483632,\"args\":{\"step\":3,\"batch\":1}}");
}

/* check_trace.py must reject what it is there to catch, or passing it
 * proves nothing. */
Test(output, check_trace_rejects_bad_nesting)
{
	FILE *f = fopen(trace_path, "w");
	cr_assert_not_null(f);
	fputs("{\"traceEvents\":[\n"
	      "{\"name\":\"a\",\"ph\":\"X\",\"ts\":0,\"dur\":10,\"pid\":1,\"tid\":1},\n"
	      "{\"name\":\"b\",\"ph\":\"X\",\"ts\":5,\"dur\":10,\"pid\":1,\"tid\":1}\n"
	      "]}\n", f);
	fclose(f);
	if (access("tests/integration/check_trace.py", R_OK))
		cr_skip_test("tests/integration/check_trace.py not found (run from the repo root)");
	if (system("python3 -c pass >/dev/null 2>&1") != 0)
		cr_skip_test("python3 not available");
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "python3 tests/integration/check_trace.py '%s' 2>/dev/null",
		 trace_path);
	int rc = system(cmd);
	cr_assert(rc != -1 && WIFEXITED(rc));
	cr_expect_eq(WEXITSTATUS(rc), 1);
}

/* ---- summary ---- */

static const char *summary(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_not_null(f);
	np_write_summary(&col, &info, f);
	cr_assert_eq(fclose(f), 0);
	free(text);
	text = buf;
	return text;
}

Test(output, summary_text)
{
	session(8, 1000, false);
	const char *s = summary();

	cr_expect_str_eq(s,
		"nanprof 0.1.0 summary (run: python3 train.py --tag \"a b\")\n"
		"  traced for 2.50 s with uprobe-session probes; 57 events\n"
		"  pid 1073741808 rank 0: python 3.11, torch not loaded\n"
		"    steps: 3 recorded (3 complete), module calls 6, backward nodes 15\n"
		"    step time: median 0.100 ms, p90 0.100 ms\n"
		"  pid 1073741809: python 3.11, torch 2.5.0+cpu\n"
		"    steps: 1 recorded (1 complete), module calls 2, backward nodes 5\n"
		"    step time: median 0.030 ms, p90 0.030 ms\n"
		"  warning: 11 events lost (ring buffer full; try --ring-mb)\n"
		"  warning: 12 module calls nested deeper than 32 were not traced\n");
	expect_has(s, "steps: 3 recorded (3 complete)");
	expect_has(s, " rank 0:");
}

/* Python processes that did no torch work (torch.compile's compile
 * workers, a launcher, a DataLoader worker that imported torch) fold
 * into one line; a traced one keeps its lines. */
Test(output, summary_folds_processes_without_torch_work)
{
	session(8, 1000, false);
	col.o.max_procs = 12;   /* room for ten more */
	struct np_proc_state *grown = realloc(col.procs, 12 * sizeof(*grown));
	cr_assert_not_null(grown);
	col.procs = grown;
	struct np_rank_finding vf[4];
	size_t checked_before, checked_after;
	np_collector_findings(&col, vf, 4, &checked_before);
	for (int k = 0; k < 10; k++) {
		struct np_proc_info pi = { .pid = 5000 + k, .py_major = 3, .py_minor = 11 };
		if (k == 0)   /* a DataLoader worker: torch imported, checks on, nothing trained */
			strcpy(pi.torch_version, "2.5.0+cpu");
		struct np_proc_state *w = np_collector_add_proc(&col, &pi, -1);
		cr_assert_not_null(w);
		if (k == 0)
			w->checks = NP_CHECKS_ON;
	}
	np_collector_findings(&col, vf, 4, &checked_after);
	cr_expect_eq(checked_after, checked_before, "a worker has no say in the verdict");
	const char *s = summary();
	expect_has(s, "  pid 1073741809: python 3.11, torch 2.5.0+cpu\n");
	expect_has(s, "  pid 1073741808 rank 0: python 3.11, torch not loaded\n");
	expect_has(s, "  10 more python processes without module, backward or optimizer work "
		   "(launchers, data or compile workers: pid 5000, 5001, 5002, 5003, "
		   "5004, 5005, 5006, 5007, ...)\n");
	expect_lacks(s, "pid 5000:");
	cr_expect_eq(count_of(s, "steps:"), 2);
}

Test(output, summary_partial_steps_and_drops)
{
	session_begin(8, 16, true);
	struct sim s1 = { .c = &col, .pid = PID1, .tid = TID1, .step = 3 };
	mod_enter(&s1, T(3), M_NET, T_NET, NP_SEQ_UNKNOWN);
	for (unsigned i = 0; i < 20; i++) {
		mod_enter(&s1, T(3) + 10 + 10 * i, M_LIN, T_LIN, NP_SEQ_UNKNOWN);
		mod_exit(&s1, T(3) + 15 + 10 * i, NP_SEQ_UNKNOWN);
	}
	/* the job ends inside this step */
	session_end();
	memset(info.counters, 0, sizeof(info.counters));
	const char *s = summary();

	/* the partial first step and the cut-off last one are not complete */
	expect_has(s, "  pid 1073741808 rank 0: python 3.11, torch not loaded\n"
		   "    steps: 4 recorded (2 complete), module calls 27, backward nodes 15\n"
		   "    step time: median 0.100 ms, p90 0.100 ms\n"
		   "    dropped: 5 detail records, 0 step counters, 0 events of 0 threads over "
		   "the limit\n");
	static const char tail[] =
		"  pid 1073741809: python 3.11, torch 2.5.0+cpu\n"
		"    steps: 1 recorded (0 complete), module calls 2, backward nodes 5\n";
	cr_expect(strlen(s) > strlen(tail) && !strcmp(s + strlen(s) - strlen(tail), tail),
		  "summary does not end with process 2's lines:\n%s", s);
	expect_lacks(s, "warning");
	cr_expect_eq(count_of(s, "step time:"), 1);
}
