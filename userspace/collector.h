/* collector.h - turns the BPF event stream into spans, steps and names.
 *
 * Events of one thread arrive in order; the collector keeps per-thread
 * stacks, closes spans into records, and keeps every step's counters and
 * the last `window` steps' records.  Memory is bounded by the options;
 * whatever does not fit is counted. */
#ifndef NP_COLLECTOR_H
#define NP_COLLECTOR_H

#include "model.h"

struct np_collector_opts {
	uint32_t window;          /* steps kept in full detail */
	uint32_t max_records;     /* detail records per step and process */
	uint32_t max_steps;       /* step counters kept per process */
	uint32_t max_procs;
	uint32_t max_threads;     /* per process */
};

struct np_collector {
	struct np_collector_opts o;
	struct np_strtab names;
	struct np_map module_names;   /* (pid, parent, self) -> name id */
	struct np_map type_names;     /* (pid, type) -> name id */
	struct np_map node_types;     /* (pid, vtable) -> name id */
	struct np_map dropped_threads;/* (pid, tid) of threads over max_threads */
	struct np_proc_state *procs;
	uint32_t nprocs;
	uint64_t events, procs_dropped, unknown_events;
	uint64_t first_ts;
	bool attach_mode;             /* the first step of each process is partial */
	struct np_map module_addrs;   /* (pid, module address) -> name | type << 32 */
	struct np_map agent_paths;    /* (pid, parent, child) -> path the agent reported
				       * (agent/module_paths.h); module_names' key */
	uint64_t agent_paths_dropped; /* over the map's bound */
	/* told at once of an origin (NP_FIND_ORIGIN) or an explosion warning
	 * (NP_FIND_WARNING, the process's latest), e.g. to print it */
	void (*on_finding)(struct np_collector *c, struct np_proc_state *p, int kind);
	void *finding_ctx;
};

enum { NP_FIND_ORIGIN = 1, NP_FIND_WARNING, NP_FIND_CHECKS, NP_FIND_RECEIVED };

int np_collector_init(struct np_collector *c, const struct np_collector_opts *o);
void np_collector_free(struct np_collector *c);

/* A process the probes were attached to; rank from its environment. */
struct np_proc_state *np_collector_add_proc(struct np_collector *c,
					    const struct np_proc_info *info, int rank);
struct np_proc_state *np_collector_proc(struct np_collector *c, pid_t pid);
/* Did p do any work nanprof saw: a module call, a backward node, a step,
 * a tensor or kernel checked, a finding?  Launchers, compile workers and
 * DataLoader workers (torch imported, nothing trained) did not. */
bool np_proc_worked(const struct np_proc_state *p);

/* The agent's path from module parent to its descendant child ("layers.1"):
 * the name of child's calls from parent when the process cannot be read. */
void np_collector_agent_path(struct np_collector *c, const struct np_proc_state *p,
			     uint64_t parent, uint64_t child, const char *path);

/* Feed one event (probes' callback). */
void np_collector_event(struct np_collector *c, const struct np_event *e);

/* The step (after joining back-to-back optimizer calls) of the optimizer
 * call `calls` calls before the event in hand: the agent counts its late
 * statistics' age in calls. */
uint64_t np_collector_calls_ago(const struct np_proc_state *p, uint64_t calls);

/* Close whatever is still open (at the end of tracing). */
void np_collector_finish(struct np_collector *c);

/* Class name of an autograd node of process p, from its vtable, or, for a
 * Python Function's node (pyclass not 0), from its Python class. */
uint32_t np_node_type_name(struct np_collector *c, struct np_proc_state *p, uint64_t vtable,
			   uint64_t pyclass);

/* Interned string by id ("" for an invalid id). */
const char *np_name(const struct np_collector *c, uint32_t id);
/* Interns a string: its id (0 = "" when the table is full). */
uint32_t np_intern(struct np_collector *c, const char *s);

/* Visit the detail buckets of a process, oldest first. */
const struct np_bucket *np_bucket_at(const struct np_collector *c,
				     const struct np_proc_state *p, uint32_t i);

#endif
