/* probes.h - loading the BPF tracer and attaching it to processes. */
#ifndef NP_PROBES_H
#define NP_PROBES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include "../bpf/nanprof.h"

struct np_elf;

struct np_probes;

typedef void (*np_event_fn)(const struct np_event *e, void *ctx);

/* Which CPython function the Python probe goes on. */
enum np_py_probe {
	NP_PY_PROBE_AUTO = 0,  /* slot_tp_call where it can be found, else eval */
	NP_PY_PROBE_CALL,      /* slot_tp_call: one hit per module call */
	NP_PY_PROBE_EVAL,      /* _PyEval_EvalFrameDefault: every frame entered from C */
};

struct np_probes_opts {
	enum np_py_probe py_probe;
	unsigned ring_mb;        /* BPF ring buffer size, MiB */
	bool no_session;         /* use entry+return probes even if sessions work */
	np_event_fn on_event;
	void *ctx;
};

/* What was found and attached in one process. */
struct np_proc_info {
	pid_t pid;
	int py_major, py_minor;
	bool py_verified;          /* offsets checked on a live interpreter */
	char python[512];          /* file holding _PyEval_EvalFrameDefault */
	char torch_lib[512];       /* libtorch_cpu, "" until loaded */
	char torch_version[64];
	bool py_attached, torch_attached;
	bool torch_seq_pending;    /* libtorch's tls_index not relocated yet: retry */
	int torch_seq_tries;
	bool torch_bwd_pending;    /* THPEngine_run_backward's method entry unset yet: retry */
	int torch_bwd_tries;
	uint32_t torch_seq_off;    /* Node::sequence_nr_ offset in use */
	uint64_t torch_base;       /* runtime address of libtorch_cpu's vaddr 0 */
	const struct np_elf *torch_elf;  /* its symbols; owned by the probes */
	uint64_t pynode_vtable;    /* PyNode's vtable: a Python autograd.Function's node */
	uint32_t pynode_obj;       /* offset of its Python object, once found (collector) */
	bool pynode_obj_sent;      /* ... and handed to BPF */
	char probes[256];          /* names of the probes attached, for the session event */
	bool agent_attached;       /* the agent's report function is probed */
	char agent[512];           /* its path */
};

/* Loads the BPF programs.  0 or -errno (message already logged). */
int np_probes_open(struct np_probes **out, const struct np_probes_opts *opts);
void np_probes_close(struct np_probes *p);

/* "uprobe-session" or "uprobe+uretprobe". */
const char *np_probes_mode(const struct np_probes *p);

/* Attaches to a process: the interpreter now, libtorch if it is mapped.
 * -ENOEXEC when the process runs no Python we can read, -ENOTSUP for an
 * unknown Python version, other -errno on failure (message logged). */
int np_probes_add(struct np_probes *p, pid_t pid, struct np_proc_info *info);

/* Attaches the libtorch probes if libtorch is mapped now and they are not
 * yet attached, or retries locating its sequence counter if that is still
 * pending.  1 if attached now, 0 if nothing to do, -errno. */
int np_probes_add_torch(struct np_probes *p, pid_t pid, struct np_proc_info *info);

/* Hands BPF the offset of a PyNode's Python object, found by the
 * collector on a live node (info->pynode_obj).  0 or -errno. */
int np_probes_set_pynode_obj(struct np_probes *p, pid_t pid, const struct np_proc_info *info);

/* Attaches the probe on the agent's report function, if the process maps
 * libnanprof_agent.so.  0, -ENOENT (no agent) or -errno. */
int np_probes_add_agent(struct np_probes *p, pid_t pid, struct np_proc_info *info);

/* Detaches everything from one process (it may be gone already). */
void np_probes_remove(struct np_probes *p, pid_t pid);

/* A file descriptor that becomes readable when the BPF side asks for a
 * prompt drain (poll it, then call np_probes_poll). */
int np_probes_wakeup_fd(const struct np_probes *p);

/* Delivers pending events to on_event; returns how many, or -errno. */
int np_probes_poll(struct np_probes *p);

/* Sums the per-CPU failure counters (enum np_counter). */
void np_probes_counters(struct np_probes *p, uint64_t out[NP_CNT_MAX]);

#endif
