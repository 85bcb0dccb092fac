/* model.h - what the collector keeps: interned names, per-step counters
 * for every step, and full detail for the last --window steps (the flight
 * recorder).  Read by the writers in output.c. */
#ifndef NP_MODEL_H
#define NP_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "../agent/bad_spread.h"
#include "ctxhist.h"
#include "hashmap.h"
#include "probes.h"
#include "pymem.h"

struct np_strtab {
	char **s;
	uint32_t len, cap, max;
	struct np_map index;     /* (hash, length) -> id */
	uint64_t dropped;
};

enum np_rec_kind {
	NP_REC_MODULE = 1,   /* an nn.Module call in forward */
	NP_REC_NODE,         /* one autograd node run in backward */
	NP_REC_MODULE_BWD,   /* consecutive nodes of one forward module */
	NP_REC_PHASE,        /* forward / backward / optimizer span */
};

/* One completed span.  Names are string-table ids. */
struct np_rec {
	uint8_t kind;        /* enum np_rec_kind */
	uint8_t phase;       /* enum np_phase */
	uint16_t depth;      /* module nesting (MODULE) */
	uint32_t tid;
	uint32_t batch;
	uint32_t name;       /* module path (MODULE, NODE, MODULE_BWD); "" = root */
	uint32_t type;       /* class name (module or autograd node) */
	uint32_t module_type;/* NODE, MODULE_BWD: class of the forward module */
	uint64_t step;
	uint64_t t0, t1;     /* ns, CLOCK_MONOTONIC */
	uint64_t seq;        /* NODE: sequence_nr */
};

/* Counters kept for every step. */
struct np_step_stats {
	double grad_norm;    /* total gradient norm (agent; NAN if not measured) */
	double out_max;      /* largest |x| of any module output (agent) */
	uint32_t nonfinite;  /* non-finite tensors reported (agent) */
	uint64_t step;
	uint64_t t0, t1;
	uint64_t fwd_ns, bwd_ns, opt_ns;
	uint32_t batches;
	uint32_t module_calls;
	uint32_t nodes;
	uint32_t dropped;    /* detail records over --max-records */
	uint32_t opt_calls;  /* optimizer.step() calls in it (back to back: one step) */
	uint32_t root_calls; /* outermost module calls begun in it, on any thread */
	uint64_t optimizer;  /* its first optimizer.step()'s optimizer (agent; 0: none) */
	bool complete;       /* ended by optimizer.step() */
	bool partial;        /* began before nanprof attached (all its probes) */
};

struct np_bucket {       /* detail of one step */
	uint64_t step;
	struct np_rec *recs;
	uint32_t len, cap;
};

#define NP_MAX_OPEN 64
#define NP_MAX_SPANS (1u << 18)    /* module calls per step with a known sequence */
#define NP_NO_SPAN UINT32_MAX

/* The autograd sequence numbers [lo, hi) handed out during one module
 * call's forward: the nodes that call created. */
struct np_seq_span {
	uint64_t lo, hi;           /* hi = NP_SEQ_UNKNOWN while open */
	uint32_t name, type;
	uint32_t parent;           /* enclosing call's span, or NP_NO_SPAN */
	uint32_t pad;
};

struct np_open_frame {
	uint64_t self, t0;
	uint32_t name, type;
	uint64_t step;
	uint32_t batch;
	uint8_t phase;
	uint32_t span;             /* its np_seq_span, or NP_NO_SPAN */
};

struct np_thread_state {
	uint32_t tid;
	char name[32];
	struct np_open_frame stack[NP_MAX_OPEN];
	uint32_t depth;
	/* backward */
	uint64_t node_t0, node_vt, node_seq;
	uint64_t node_pyclass;     /* a Python Function's node: its class */
	uint32_t node_name, node_module_type;
	bool in_node;
	bool group_open;
	uint64_t group_t0, group_t1;
	uint32_t group_name, group_type;
};

enum np_checks_state {
	NP_CHECKS_OFF = 0,        /* no agent, or --no-checks */
	NP_CHECKS_WAITING,        /* connected; waiting for torch to be imported */
	NP_CHECKS_ON,
	NP_CHECKS_FAILED,
	NP_CHECKS_DETACHED,
};

/* Why an optimizer's update made a parameter non-finite, as the agent
 * read it off the optimizer (an UPDATE record: agent/update_cause.h). */
struct np_update {
	uint8_t cause;            /* enum np_update_cause; 0: none known */
	uint8_t state_dtype;      /* ZERO_DENOM: the state's dtype (enum np_dtype) */
	double eps, lr;
	uint64_t at_zero;         /* non-finite elements where the state held 0 */
	uint32_t optimizer;       /* its class (name id) */
	uint32_t state;           /* the state divided by: "exp_avg_sq" (name id) */
};

/* One non-finite tensor the agent reported, placed by the BPF context. */
struct np_finding {
	uint64_t step, ts;
	uint32_t tid, batch;
	uint8_t phase, role, dtype;
	bool inputs_finite;       /* what flowed in was finite */
	bool outside;             /* forward: born outside any module */
	bool preexisting;         /* already non-finite when first seen (before an attach) */
	bool op_inside;           /* forward: op is one inside the module, found in the
				   * tensors its graph saved (agent/birth_op.h), not
				   * the one that made the output */
	bool op_read_finite;      /* forward: what op read was seen finite */
	bool mask_used;           /* -Inf only, as a mask the model returns, and its
				   * step made a non-finite value of another kind
				   * from it (agent_state masked) */
	bool divided_by_zero;     /* forward: a division by a tensor holding 0 made it;
				   * backward: the node is such a division's */
	bool dead_rows;           /* forward: op is a softmax that made NaN of whole
				   * rows (an input row all -inf: all masked; or +inf) */
	bool singular;            /* backward: the node's op has an infinite derivative
				   * at a value it read (sqrt of 0) */
	bool op_read_outside;     /* outside modules: the tensor is what op read from
				   * outside the autograd graph (data, code under
				   * no_grad), not its output */
	uint32_t module, module_type, op, param;   /* name ids ("" if unknown) */
	uint64_t numel, nan, posinf, neginf;
	int64_t first_bad;
	double max_abs;
	uint32_t depth;           /* forward: module depth of the report */
	bool gpu;                 /* a CUDA kernel's output: op is the kernel */
	bool graph;               /* GPU: checked inside a replayed CUDA graph */
	uint8_t cuda_device;      /* GPU: the device's ordinal */
	bool context_unknown;     /* GPU: the launch is older than the context history */
	uint32_t scaler_run;      /* the GradScaler skipped this many iterations in a
				   * row from here (userspace/scaler.h); 0: none */
	struct np_spread spread;  /* where in the tensor (ndim 0: not known) */
	uint32_t received_by;     /* input from outside the model: the module that
				   * first received it, when not this one (name id) */
	uint32_t received_type;   /* and its class (name id) */
	uint8_t grad_mode;        /* forward: enum np_arec_mode bits (0: not read) */
	uint32_t root_call;       /* forward: which outermost module call of its step
				   * it was made in, from 1 (0: none open) */
	bool held;                /* an input from outside that stayed inside the
				   * model in forward, the origin of the first
				   * non-finite value of its step's backward */
	struct np_update update;  /* a parameter after the update: what made it */
};

#define NP_MAX_WARNINGS 100       /* explosion warnings kept per process */
#define NP_MAX_MODSTATS 4096      /* modules with statistics per process */
#define NP_HIST 8                 /* steps of history per statistic */

struct np_explosion_warning {
	uint64_t step;
	uint32_t module;          /* name id; "" = the whole model, or an outermost module */
	uint32_t module_type;     /* its class; "" (id 0) for the whole model */
	uint8_t metric;           /* enum np_metric */
	double value, ratio;
};

enum np_metric { NP_METRIC_GRAD_NORM = 0, NP_METRIC_OUT_MAX, NP_METRIC_MAX };

/* A statistic's recent history (one per module and metric). */
struct np_series {
	double v[NP_HIST];
	uint32_t n;               /* values seen (v holds the last NP_HIST) */
	uint64_t quiet_until;     /* no new warning before this step */
	double warned;            /* value of the last warning */
};

struct np_modstat {
	uint64_t addr;            /* nn.Module */
	double out_max, grad_sumsq;
	uint64_t step;            /* step of the values above */
	double late_sumsq;        /* CUDA .grads' sum of squares of step late_step,
				   * sent a step or more later (agent/gpu_norms.c) */
	uint64_t late_step;
	struct np_series s[NP_METRIC_MAX];
};

/* Module x step statistics for the report's heatmap: the last NP_HEAT_STEPS
 * steps of the first NP_HEAT_MODS modules that sent statistics. */
#define NP_HEAT_STEPS 256
#define NP_HEAT_MODS 128
struct np_heat {
	uint32_t nmods;
	uint64_t mod_addr[NP_HEAT_MODS];
	uint32_t mod_name[NP_HEAT_MODS];
	uint32_t mod_type[NP_HEAT_MODS];        /* its class: names outermost ones ("") */
	uint32_t len, start;                    /* ring of steps */
	uint64_t step[NP_HEAT_STEPS];
	float out[NP_HEAT_STEPS][NP_HEAT_MODS]; /* largest |output|; NAN: not measured */
	float grad[NP_HEAT_STEPS][NP_HEAT_MODS];/* gradient norm of its parameters */
	uint64_t mods_dropped;
};

#define NP_SCALER_WINDOWS 32     /* GradScaler verdicts kept, to place late GPU records */

/* One iteration of a GradScaler: its scaled part, and what became of it. */
struct np_scaler_window {
	uint64_t iter, t0, t1;    /* CLOCK_MONOTONIC: scale() .. update() */
	double scale;             /* the loss scale it used; 0: not known */
	uint8_t verdict;          /* 0 the step ran, 1 skipped, 2 not known */
};

/* Loss scaling (userspace/scaler.h). */
struct np_scaler_state {
	bool on;                  /* the job scales its loss */
	struct np_scaler_window win[NP_SCALER_WINDOWS];   /* a ring of the latest */
	uint32_t nwin;
	uint64_t last_t1;         /* the latest verdict's end: later is not known yet */
	bool held;                /* a finding waiting for its iteration's verdict */
	struct np_finding held_f;
	uint32_t run;             /* skipped iterations in a row, the latest last */
	uint64_t run_iter;        /* the run's first iteration */
	bool run_unscaled;        /* one of them used a scale <= 1: not an overflow */
	bool run_has;             /* the run's first non-finite gradient */
	struct np_finding run_f;
	uint64_t iterations, skipped, overflow_reports, not_known;
	bool first_has;           /* the first overflow's place, for the summary */
	struct np_finding first;
};

struct np_agent_state {
	char torch[32];           /* version the agent found, or why it failed */
	uint64_t records, lost, last_seq;
	/* a SPREAD record, for the CHECK record after it (seq + 1, same thread) */
	bool spread_pending;
	uint32_t spread_tid, spread_seq;
	struct np_spread spread;
	/* an UPDATE record, for the PARAM CHECK record after it (a SPREAD
	 * between them), same thread */
	bool update_pending;
	uint32_t update_tid, update_seq;
	struct np_update update;
	uint64_t checked, bytes, skipped, dropped, overflow;   /* its counters */
	/* origin */
	bool found;
	struct np_finding origin;
	bool received;            /* the first non-finite value came from another
				   * rank, through a collective (not an origin) */
	struct np_finding recv;
	bool candidate;
	struct np_finding cand;
	/* the candidate is the model's output holding -Inf and nothing else
	 * (masked log-probabilities, an additive mask): the origin only if a
	 * non-finite report of another kind follows in the step */
	bool masked;
	uint64_t masked_outputs;  /* such outputs nothing non-finite followed */
	/* the step's first non-finite tensor when it was a module's input
	 * (NP_ROLE_INPUT): what an outermost call that received
	 * non-finite values is described by */
	bool input_pending;
	struct np_finding input;
	/* the step's first module that received non-finite values from its
	 * caller, when nothing non-finite left the model after it: a value
	 * from outside that a saturating op (tanh, sigmoid, clamp) kept
	 * inside in the forward pass, which backward may still surface */
	bool held;
	struct np_finding held_in;
	uint64_t propagation;     /* non-finite reports after (or besides) the origin */
	uint64_t contained;       /* candidates that stayed inside their module */
	/* statistics */
	struct np_map mod_index;  /* module address -> modstats index */
	struct np_modstat *mods;
	uint32_t nmods;
	uint64_t mods_dropped;
	struct np_series total;   /* whole-model gradient norm */
	double step_sumsq;        /* this step's, from STATS records */
	bool step_has_stats;
	bool step_has_grads;      /* a CPU .grad was in them (CUDA ones come late) */
	bool late_has;            /* late CUDA gradient statistics of late_step */
	uint64_t late_step;
	double late_sumsq;
	bool late_seen;           /* ever: CPU totals then wait for the late part */
	bool cpu_has;             /* a step's CPU .grads' sum, waiting (cpu_step) */
	uint64_t cpu_step;
	double cpu_sumsq;
	struct np_explosion_warning warnings[NP_MAX_WARNINGS];
	uint32_t nwarnings;
	uint64_t warnings_dropped;
	bool module_warning_printed;
	struct np_heat *heat;     /* allocated at the first statistics */
	struct np_scaler_state scaler;
};

#define NP_GPU_CANDIDATES 64      /* GPU births awaiting their value to leave */
#define NP_GPU_NAME_BYTES 288     /* a kernel name kept: 4 pieces of 72 */
#define NP_GPU_UNDECODED_TOP 8    /* = the agent's NP_DRAIN_UNDECODED_TOP */

/* The CUDA side of a process's checks: kernel births are candidates
 * until the agent reports their first propagation (the value left the
 * kernel that made it). */
#define NP_DEFER_EARLY 6           /* why deferred lists went out sooner */
struct np_gpu_state {
	uint8_t state;            /* 0 unknown; 1 on; 2 off */
	char how[32];             /* "every", "sample", or why it is off */
	uint64_t checks, bytes, undecoded, dropped, overflow;
	char launches[32];
	uint64_t sampled_out;     /* launches sampling left unchecked */
	uint64_t guard_checks, guard_skips;   /* CUDA tensors the guards checked, or not */
	uint64_t check_launches;  /* launches of check kernels (lists check several) */
	uint32_t devices;         /* CUDA devices checked (a model split over several) */
	uint64_t generic_checks;  /* undecoded kernels' outputs checked at a decoded reader */
	uint64_t gemm_checks;     /* cuBLAS calls' outputs checked at the call */
	uint64_t triton_checks;   /* Triton launches whose outputs their Python call named */
	uint64_t over_budget;     /* births and propagations the agent held back (its
				   * per-second bounds): counted, not lost */
	struct {                  /* the host time its CUPTI callbacks took (sampled:
				   * cupti/host_cost.h); zero when not reported */
		uint64_t launches, timed, timed_ns, checks_timed, check_ns, every;
	} host;
	struct {                  /* deferred checks (cupti/defer.h); zero when off */
		uint64_t checks, launches;   /* checks that waited; their list launches */
		uint64_t window;             /* lists sent when N launches went by */
		uint64_t early[NP_DEFER_EARLY];   /* ... sooner: a launch wrote a
					      * waiting range; its writes not known; a
					      * memory call (copy, memset, alloc, free);
					      * another driver call (sync, event,
					      * capture); a check launched at once or
					      * the stop; no open list fitted */
	} defer;
	uint64_t forgotten;       /* dirty ranges and cleared spans its origin
				   * tracker dropped for room */
	uint64_t wide_lost;       /* checks of launches of more than 16 inputs
				   * judged on their first 16 (the rest's entry
				   * reused) */
	uint64_t writes;          /* copies and memsets no check saw, told to
				   * the origin tracker */
	uint64_t writes_carried;  /* ... device copies of a non-finite source */
	uint64_t writes_lost;     /* ... not told: the agent's queue was full */
	struct {
		uint32_t func;    /* kernel id: its name is in kernels */
		uint64_t launches;
	} undec[NP_GPU_UNDECODED_TOP];   /* the kernels most often left unchecked */
	uint32_t nundec;
	uint64_t records, lost, last_seq;
	uint64_t births, candidates_dropped;
	uint64_t inside;          /* propagations still inside their birth's scope */
	uint64_t unknown_births;  /* propagations of a birth no longer kept */
	struct {
		uint64_t tag;
		struct np_finding f;
	} cand[NP_GPU_CANDIDATES];
	uint32_t ncand;           /* pushed in all (ring) */
	struct np_map kernels;    /* kernel id -> interned name */
	char name_buf[NP_GPU_NAME_BYTES];   /* the name being received */
	uint32_t name_func, name_len;
	struct np_ctxhist ctx;    /* allocated when the GPU checks come on */
};

/* BPF steps whose step after joining is kept for the agent's late
 * statistics, which say how many optimizer calls ago they were taken */
#define NP_JOIN_HIST 16

struct np_proc_state {
	pid_t pid;
	int rank;                    /* -1 when RANK is not set */
	struct np_proc_info info;
	struct np_pymem mem;
	bool exited;
	bool agent;                  /* run: its agent reports when torch is loaded */
	uint32_t pynode_tries;       /* Python Function nodes searched for their object */
	int agent_fd;                /* connection that keeps its checks on (0: none) */
	uint8_t checks;              /* enum np_checks_state */
	struct np_agent_state ag;
	struct np_gpu_state gpu;
	uint64_t first_ts, last_ts;
	/* attach: when its last probes went in (the libtorch ones follow the
	 * Python one); a step begun before saw only part of its work */
	uint64_t probes_ready_ns;
	/* current step */
	struct np_step_stats cur;
	bool fwd_open;
	uint64_t fwd_t0, fwd_t1, bwd_t0, opt_t0;
	uint32_t bwd_depth;
	/* optimizer.step() calls back to back (no module call or backward
	 * between them: Muon + AdamW, sparse + dense) make one step; BPF
	 * counts every call, so later events' steps are shifted down */
	bool end_pending;            /* an optimizer.step() returned: the step
				      * ends at end_ts unless another follows */
	bool joining;                /* this optimizer.step() joined the last */
	uint64_t end_ts;
	uint64_t step_shift;         /* calls joined so far: BPF step - ours */
	uint64_t raw_step;           /* the BPF step of the event in hand */
	struct {
		uint64_t raw, step;
	} joined[NP_JOIN_HIST];      /* recent BPF steps and ours, by raw % size */
	/* two optimizers stepped in turn, each after its own forward and
	 * backward (a GAN's discriminator and generator): two steps an
	 * iteration.  turn[k % 2] is the optimizer of step k while every
	 * step so far kept to it (turns: how many did) */
	uint64_t turn[2];
	uint64_t turns;
	bool turns_broken;
	/* all steps */
	struct np_step_stats *steps;
	uint32_t nsteps, steps_cap;
	uint64_t steps_dropped;
	/* flight recorder: ring of window buckets */
	struct np_bucket *window;
	uint32_t wstart, wlen;
	bool bucket_open;            /* the step in progress has its bucket */
	uint32_t batch;              /* batch of the latest event (BPF context) */
	/* threads */
	struct np_thread_state *threads;
	uint32_t nthreads;
	uint64_t module_calls, nodes, records_dropped;
	uint64_t threads_dropped, events_dropped;   /* threads over --max-threads */
	/* forward spans of the step in progress, in order of entry */
	struct np_seq_span *spans;
	uint32_t nspans;
	uint64_t spans_dropped;
};

#endif
