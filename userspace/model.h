/* model.h - what the collector keeps: interned names, per-step counters
 * for every step, and full detail for the last --window steps (the flight
 * recorder).  Read by the writers in output.c. */
#ifndef NP_MODEL_H
#define NP_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
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
	uint64_t step;
	uint64_t t0, t1;
	uint64_t fwd_ns, bwd_ns, opt_ns;
	uint32_t batches;
	uint32_t module_calls;
	uint32_t nodes;
	uint32_t dropped;    /* detail records over --max-records */
	bool complete;       /* ended by optimizer.step() */
	bool partial;        /* began before nanprof attached */
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
	uint32_t node_name, node_module_type;
	bool in_node;
	bool group_open;
	uint64_t group_t0, group_t1;
	uint32_t group_name, group_type;
};

struct np_proc_state {
	pid_t pid;
	int rank;                    /* -1 when RANK is not set */
	struct np_proc_info info;
	struct np_pymem mem;
	bool exited;
	bool agent;                  /* run: its agent reports when torch is loaded */
	uint64_t first_ts, last_ts;
	/* current step */
	struct np_step_stats cur;
	bool fwd_open;
	uint64_t fwd_t0, fwd_t1, bwd_t0, opt_t0;
	uint32_t bwd_depth;
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
