/* agent_report.h - what the agent tells nanprof about the tensors it
 * checked.  Shared by libnanprof_agent.so and the nanprof CLI.
 *
 * The agent calls np_agent_report(&rec) for each record; a BPF uprobe on
 * that function copies the NP_AGENT_REC_SIZE bytes into the same ring
 * buffer as the tracer's events, so every record lands in order with the
 * module calls, backward nodes and optimizer steps of its thread.  Without
 * nanprof attached the call costs a few nanoseconds and the record is
 * gone: reports are numbered so that nanprof can count what it missed.
 */
#ifndef NP_AGENT_REPORT_H
#define NP_AGENT_REPORT_H

#include <stdint.h>

#define NP_AGENT_REC_SIZE 96
#define NP_SPREAD_DIMS 6          /* dimensions a SPREAD record describes */
#define NP_AGENT_REPORT_FN "np_agent_report"
/* np_agent_report_bulk(const struct np_arec_stat *st, uint32_t bytes):
 * a step's statistics, up to NP_AGENT_BULK_STATS entries in one trap */
#define NP_AGENT_BULK_FN "np_agent_report_bulk"
#define NP_AGENT_BULK_STATS 168   /* 168 x 24 = 4032 */
#define NP_AGENT_BULK_BYTES 4048  /* = NP_AGENT_BULK_MAX: BPF always copies
				   * this much, so the buffer is this big */

enum np_arec_kind {
	NP_AREC_CHECK = 1,   /* a tensor that holds non-finite values */
	NP_AREC_STATUS = 3,  /* the agent installed, failed, detached */
	NP_AREC_GPU_CHECK = 4, /* a CUDA kernel's output that holds non-finite values */
	NP_AREC_GPU_NAME = 5,  /* a CUDA kernel's name, once per kernel reported */
	NP_AREC_SPREAD = 6,    /* where the non-finite values of the CHECK record
				* that follows it (seq + 1, same thread) lie in
				* its tensor: births only (agent/bad_spread.h) */
	NP_AREC_UPDATE = 7,    /* why an optimizer's update made the PARAM CHECK
				* record after it (seq + 1, or + 2 with a SPREAD
				* between; same thread) non-finite from finite
				* values (agent/update_cause.h) */
	NP_AREC_MODULE_PATH = 8, /* `module` reaches a descendant module through
				  * its _modules dicts by a dotted path: what
				  * nanprof names that descendant by when it is
				  * called from module and nanprof's own read of
				  * the process fails (agent/module_paths.h) */
	NP_AREC_GPU_PARAM = 9,   /* the GPU_CHECK birth before it wrote a CUDA
				  * parameter's memory: `module` owns it
				  * (cupti/param_owners.h) */
	/* (2 was one record per 3 modules' statistics: now np_agent_report_bulk) */
};

/* The pseudo-kernel a GPU module-level check of a module's output is
 * named by (cupti/modules.c), a guard's with ", after <kernel>" added:
 * userspace/gpu_findings.c reads it as a module's output. */
#define NP_GPU_OUTPUT_CHECK_NAME "nanprof module-level check: module output"

/* Which tensor a CHECK record is about. */
enum np_arec_role {
	NP_ROLE_OUTPUT = 1,  /* a module's forward output */
	NP_ROLE_GRAD,        /* a gradient an autograd node produced */
	NP_ROLE_PARAM,       /* a parameter after optimizer.step() */
	NP_ROLE_PARAM_GRAD,  /* a parameter's .grad before optimizer.step() */
	NP_ROLE_COLLECTIVE,  /* a tensor a torch.distributed collective wrote */
	NP_ROLE_INPUT,       /* a module's input, when it is the step's first
			      * non-finite tensor: it came from outside every
			      * checked tensor (the data, the loop's code) */
	NP_ROLE_ROOT,        /* GPU: a root handed to backward (the loss) */
};

/* The agent's own view of the phase (same values as enum np_phase). */
enum np_arec_phase {
	NP_APHASE_FORWARD = 1,
	NP_APHASE_BACKWARD = 2,
	NP_APHASE_OPTIMIZER = 3,
};

enum np_arec_flags {
	NP_AF_SOURCE_DIRTY = 1,  /* what flowed in was already non-finite */
	NP_AF_AFTER_STEP = 2,    /* sent after optimizer.step() returned */
	NP_AF_PREEXISTING = 4,   /* already non-finite when the agent first saw it */
	NP_AF_GRAPH = 8,         /* GPU: the check ran inside a replayed CUDA graph */
	NP_AF_DEAD_ROWS = 8,     /* CHECK OUTPUT (CPU): `what` is a softmax or
				  * log_softmax that made NaN of whole rows (an
				  * input row all -inf: all masked; or +inf) */
	NP_AF_LAST = 16,         /* GPU_NAME: the name's last piece */
	NP_AF_ZERO_DIVISOR = 16, /* CHECK OUTPUT: a division whose divisor, kept by
				  * the graph, held 0 made the value: `what` itself,
				  * or an op before the loss's own (agent/birth_op.h);
				  * CHECK GRAD: the node is that division's backward */
	NP_AF_PARTIAL = 32,      /* SPREAD: counted over part of the tensor */
	NP_AF_NO_NEGINF = 64,    /* SPREAD: of the NaN only: the tensor held NaN
				  * and -Inf (a mask), no +Inf */
	NP_AF_OP_INSIDE = 64,    /* CHECK OUTPUT: `what` is an op inside the module
				  * (agent/birth_op.h), not the one that made
				  * its output */
	NP_AF_OP_READ_FINITE = 128, /* CHECK OUTPUT: what that op read was seen
				  * finite: it made the value non-finite */
	NP_AF_SINGULAR = 32,     /* CHECK GRAD: the node's op has an infinite
				  * derivative at a value it read (sqrt of 0) */
	NP_AF_CONST_INPUT = 32,  /* CHECK OUTPUT outside modules: the tensor is what
				  * `what` read from outside the autograd graph
				  * (no gradient: data, code under no_grad), the
				  * loss's non-finite value came from there */
	NP_AF_SAVED_DATA = 64,   /* CHECK GRAD: the node read a non-finite value it
				  * saved in forward from outside the graph (data),
				  * described by the INPUT record just before */
};

/* CHECK records of the forward phase: the grad mode the module ran in.
 * A forward under torch.no_grad() or inference_mode is an evaluation or
 * inference pass, whose values no backward and no update will use. */
enum np_arec_mode {
	NP_AMODE_KNOWN = 1,      /* the mode was read */
	NP_AMODE_NO_GRAD = 2,    /* torch.is_grad_enabled() was False */
	NP_AMODE_INFERENCE = 4,  /* torch.is_inference_mode_enabled() */
};

enum np_arec_status {
	NP_AST_INSTALLED = 1,    /* hooks in place; what = torch version */
	NP_AST_FAILED,           /* could not install; what = why */
	NP_AST_DISABLED,         /* an error inside the agent switched it off */
	NP_AST_DETACHED,         /* hooks removed (nanprof went away) */
	NP_AST_COUNTERS,         /* periodic counters */
	NP_AST_GPU_ON,           /* CUDA kernels are checked; what = how */
	NP_AST_GPU_OFF,          /* CUDA kernels are not checked; what = why */
	NP_AST_GPU_COUNTERS,     /* checked = checks launched, skipped = launches
				  * with no decodable output, dropped = results
				  * lost (ring full), overflow = table limits */
	NP_AST_GPU_LAUNCHES,     /* launch counters (launch below) */
	NP_AST_SCALER_ON,        /* the job scales its loss (GradScaler): its
				  * iterations' verdicts follow (agent/scaler.h) */
	NP_AST_SCALER_VERDICT,   /* one scaled iteration (scl below) */
	NP_AST_GPU_UNDECODED,    /* one of the kernels launched most often with
				  * outputs no decoder could size (undec below;
				  * its name in GPU_NAME records before it) */
	NP_AST_GPU_TRACKER,      /* the origin tracker's drops (trk below) */
	NP_AST_OPTIMIZER,        /* an optimizer.step() ran; module = the optimizer
				  * (the probes see its class, not which one) */
	NP_AST_GPU_HOST_COST,    /* the launch callbacks' host time (host below) */
	NP_AST_GPU_DEFER,        /* deferred checks (dfr below; NANPROF_GPU_DEFER) */
};

/* UPDATE records: what made the update non-finite (in `status`). */
enum np_update_cause {
	NP_UPD_ZERO_DENOM = 1,   /* it divides by a state (Adam's exp_avg_sq) plus
				  * eps, eps is 0 in the state's dtype, and the
				  * state held 0 where the parameter went bad */
	NP_UPD_LR = 2,           /* its param group's learning rate is not finite */
};

/* One module's statistics of one step (np_agent_report_bulk). */
struct np_arec_stat {
	uint64_t module;         /* nn.Module object; 0: parameters of no module */
	float out_max;           /* largest finite |x| of its forward outputs
				  * (+inf: one was non-finite; NAN: none measured,
				  * as for CUDA outputs on time) */
	uint32_t lag;            /* 0: this step's; k > 0: of the step k optimizer
				  * steps ago, read back without a sync: out_max
				  * of its CUDA outputs (cupti/outmax.h), or
				  * grad_sumsq of its CUDA .grads
				  * (agent/gpu_norms.c); the other is NAN / < 0 */
	double grad_sumsq;       /* sum of squares of its parameters' .grad */
};

/* In a record's dtype: the tensor is complex, checked as its real view
 * (torch.view_as_real): dtype is its parts' (complex64: float32), numel
 * counts parts, and a SPREAD has the parts' dimension of 2 last. */
#define NP_ADTYPE_PAIRS 0x80

struct np_agent_rec {
	uint32_t seq;            /* per process, from 1: a gap is a lost report */
	uint8_t kind;            /* enum np_arec_kind */
	uint8_t role;            /* enum np_arec_role */
	uint8_t phase;           /* enum np_arec_phase */
	uint8_t flags;           /* enum np_arec_flags */
	uint8_t dtype;           /* enum np_dtype (kernels/finite.h), with
				  * NP_ADTYPE_PAIRS for a complex tensor */
	uint8_t ndim;            /* SPREAD: dimensions in spread */
	uint16_t status;         /* STATUS: enum np_arec_status */
	uint8_t mode;            /* CHECK, forward: enum np_arec_mode bits */
	uint8_t device;          /* GPU_CHECK: the CUDA device's ordinal (its context's);
				  * STATUS GPU_LAUNCHES: devices checked so far */
	uint8_t pad[2];
	uint64_t module;         /* CHECK: the module (forward, parameters); 0 if none */
	union {
		struct {
			uint64_t numel, nan, posinf, neginf;
			int64_t first_bad;
			double max_abs;
			char what[24];   /* OUTPUT: autograd node that made it; PARAM*: name;
					  * COLLECTIVE: the collective ("all_reduce") */
		} chk;
		/* GPU_CHECK: one checked output buffer of one kernel launch.
		 * `module` holds the stream; the launching thread and time
		 * place it in the BPF context (module, step, phase). */
		struct {
			uint64_t numel, nan, posinf, neginf;
			int64_t first_bad;
			double max_abs;
			uint64_t launch_ns;      /* CLOCK_MONOTONIC at the launch */
			uint32_t launch_tid;     /* the thread that launched it */
			uint32_t func;           /* kernel id (GPU_NAME) */
			uint64_t birth;          /* tag of the launch that made the value
						  * non-finite: its own for a birth, an
						  * earlier one's when SOURCE_DIRTY */
		} gpu;
		/* GPU_PARAM: the birth (its GPU_CHECK's gpu.birth) and the
		 * parameter's name */
		struct {
			uint64_t birth;
			char what[24];
		} gparam;
		/* MODULE_PATH: the descendant, and its path from `module`
		 * ("layers.1"), NUL-terminated */
		struct {
			uint64_t child;
			char path[64];
		} mp;
		/* SPREAD: per dimension (ndim of them), its size (clamped to
		 * UINT32_MAX), how many indices along it hold a non-finite
		 * value, and the first non-finite element's index */
		struct {
			uint32_t size[NP_SPREAD_DIMS];
			uint32_t bad[NP_SPREAD_DIMS];
			uint32_t first[NP_SPREAD_DIMS];
		} spread;
		/* UPDATE (status: enum np_update_cause; dtype: the state's) */
		struct {
			double eps;              /* the param group's eps */
			double lr;               /* ... and learning rate */
			uint64_t at_zero;        /* ZERO_DENOM: the parameter's non-finite
						  * elements where the state held 0 */
			char optimizer[24];      /* its class: "Adam" */
			char state[16];          /* ZERO_DENOM: the state it divides
						  * by: "exp_avg_sq" */
		} upd;
		/* GPU_NAME: piece `role` of kernel `module`'s name (NP_AF_LAST) */
		struct {
			char text[72];
		} name;
		struct {
			uint64_t checked;        /* tensors checked */
			uint64_t bytes;          /* bytes checked */
			uint64_t skipped;        /* tensors not checked (layout, device) */
			uint64_t dropped;        /* reports not sent (per-step bound) */
			uint64_t overflow;       /* modules over the agent's table */
			char what[32];
		} cnt;
		/* STATUS SCALER_VERDICT: one iteration of a GradScaler */
		struct {
			uint64_t iter;           /* the agent's count of scale() calls */
			uint64_t t_scale;        /* CLOCK_MONOTONIC at scale(): the
						  * scaled part (backward) begins */
			uint64_t t_update;       /* ... at update(): it has ended */
			uint32_t verdict;        /* 0 the step ran; 1 skipped: inf/NaN
						  * gradients; 2 not known */
			uint32_t pad;
			double scale;            /* the loss scale it used; 0: not known */
		} scl;
		/* STATUS GPU_LAUNCHES: what became of the kernel launches */
		struct {
			uint64_t launches;       /* seen */
			uint64_t sampled_out;    /* not checked: sampling */
			uint64_t guard_checks;   /* CUDA tensors checked as guards */
			uint64_t guard_skips;    /* ... not: their writer was checked */
			uint64_t check_launches; /* check kernel launches (a list
						  * launch checks several buffers) */
			uint64_t generic_checks; /* undecoded kernels' outputs checked
						  * at a decoded reader (cupti/generic.h) */
			uint64_t gemm_checks;    /* cuBLAS calls whose output was
						  * checked at the call (cupti/blas.h) */
			uint64_t triton_checks;  /* Triton launches whose outputs their
						  * Python call named (cupti/triton.h) */
			uint64_t over_budget;    /* births and propagations judged but not
						  * reported: over the per-second bounds
						  * (cupti/drain.h), not lost */
		} launch;
		/* STATUS GPU_HOST_COST: the host time nanprof's CUPTI
		 * callbacks took from the job's threads, sampled: one
		 * callback (and one check launch) in `every` per thread is
		 * timed (cupti/host_cost.h) */
		struct {
			uint64_t launches;       /* kernel launches seen (as launch) */
			uint64_t timed;          /* callbacks timed */
			uint64_t timed_ns;       /* their time, check launches inside
						  * them included */
			uint64_t checks_timed;   /* check launches timed */
			uint64_t check_ns;       /* their time in the driver's launch */
			uint64_t every;          /* one timed in this many: the whole
						  * is about every times the sample */
		} host;
		/* STATUS GPU_DEFER: checks deferred into lists
		 * (cupti/defer.h), and why each list went out when it did */
		struct {
			uint64_t checks;         /* checks that waited */
			uint64_t launches;       /* the list launches they went out in */
			uint64_t window;         /* flushes: N launches went by */
			uint64_t full;           /* ... no open list fitted */
			uint64_t write;          /* ... a launch wrote a waiting range */
			uint64_t unknown;        /* ... a launch's writes not known */
			uint64_t memory;         /* ... a copy, memset, alloc, free, map */
			uint64_t order;          /* ... a sync, event record, copy to the
						  * host, capture, replay, teardown */
			uint64_t now;            /* ... a check launched at once, the stop */
		} dfr;
		/* STATUS GPU_TRACKER: what the origin tracker (cupti/dirty.h)
		 * dropped for room; a later reader of it may be taken for a
		 * birth */
		struct {
			uint64_t evicted;        /* non-finite ranges */
			uint64_t forgotten;      /* cleared spans, from the history
						  * late judgements look in */
			uint64_t wide_lost;      /* checks of launches of more than 16
						  * inputs judged on their first 16:
						  * the rest's entry reused */
			uint64_t writes;         /* copies and memsets no check saw,
						  * told to it (write_queue.h) */
			uint64_t copies;         /* ... of them, device copies that
						  * carried a non-finite source */
			uint64_t writes_lost;    /* ... not told: the queue was full */
		} trk;
		/* STATUS GPU_UNDECODED: the rank-th most launched undecoded
		 * kernel so far (0 first), sent with the counters */
		struct {
			uint32_t func;           /* kernel id (GPU_NAME) */
			uint32_t rank;
			uint64_t launches;       /* its launches left unchecked for want
						  * of a decoder */
		} undec;
	};
};
_Static_assert(sizeof(struct np_agent_rec) == NP_AGENT_REC_SIZE, "np_agent_rec ABI");

#endif
