/* nanprof.h - the only ABI between the BPF programs and userspace.
 *
 * Plain fixed-size types, explicit padding, one size assertion per struct.
 * Included by bpf/tracer.bpf.c (with vmlinux.h) and by userspace (with
 * <linux/types.h>), so it must not include anything itself.
 */
#ifndef NANPROF_H
#define NANPROF_H

#define NP_MAX_STACK      32   /* module nesting tracked per thread */
#define NP_TYPE_NAME_LEN  64   /* class names longer than this are cut */
#define NP_MAX_PROCS      1024 /* processes traced at once */
#define NP_AGENT_REC_BYTES 96  /* = NP_AGENT_REC_SIZE, copied from the agent */

/* One tag for every record the BPF side sends. */
enum np_event_kind {
	NP_EV_MOD_ENTER = 1,  /* an nn.Module call began (Module._call_impl) */
	NP_EV_MOD_EXIT,       /* ... and returned */
	NP_EV_TYPE_NAME,      /* first sight of a Python type: its tp_name */
	NP_EV_OPT_ENTER,      /* optimizer.step() began */
	NP_EV_OPT_EXIT,       /* optimizer.step() returned: the step ends */
	NP_EV_BWD_ENTER,      /* autograd Engine::execute began */
	NP_EV_BWD_EXIT,
	NP_EV_NODE_ENTER,     /* Engine::evaluate_function(node) began */
	NP_EV_PROC_EXIT,      /* a traced process exited */
	NP_EV_AGENT,          /* a record of the agent's checks: a..name hold
			       * NP_AGENT_REC_SIZE bytes (agent/agent_report.h) */
	NP_EV_AGENT_BULK,     /* a struct np_bulk_event: the agent's statistics
			       * of a step, many modules in one trap */
	NP_EV_KIND_MAX,
};

enum np_phase {
	NP_PHASE_NONE = 0,
	NP_PHASE_FORWARD,
	NP_PHASE_BACKWARD,
	NP_PHASE_OPTIMIZER,
	NP_PHASE_MAX,
};

/* What a Python code object is to us; cached per code object in BPF. */
enum np_code_kind {
	NP_CODE_OTHER = 1,
	NP_CODE_MODULE_CALL,   /* torch.nn.Module._call_impl */
	NP_CODE_OPT_STEP,      /* <Optimizer subclass>.step */
};

/* What a Python type is to the slot_tp_call probe; cached per type. */
enum np_type_kind {
	NP_TYPE_OTHER = 1,
	NP_TYPE_MODULE,        /* a subclass of torch.nn.Module */
	NP_TYPE_TORCH_OP,      /* torch.ops callables (OpOverload, ...) */
};

/* Failure and overflow counters, one per-CPU array slot each. */
enum np_counter {
	NP_CNT_RINGBUF_FULL = 0,  /* events lost: ring buffer full */
	NP_CNT_STACK_OVERFLOW,    /* module nesting deeper than NP_MAX_STACK */
	NP_CNT_READ_FAIL,         /* bpf_probe_read_user failed */
	NP_CNT_PY_ENTRIES,        /* Python probe hits (cost gauge) */
	NP_CNT_CODE_MAP_FULL,     /* code objects not cached: classified per call */
	NP_CNT_MAX,
};

/* CPython layout, filled by userspace per interpreter version
 * (userspace/pyoffsets.c).  Each is a byte offset; 0 where unused. */
struct np_py_offsets {
	__u32 frame_code;        /* _PyInterpreterFrame.f_code (3.11+), PyFrameObject.f_code (3.10) */
	__u32 frame_localsplus;  /* first local: `self` of a method */
	__u32 code_name;         /* PyCodeObject.co_name */
	__u32 str_ascii_data;    /* compact ASCII str: offset of the characters */
	__u32 obj_type;          /* PyObject.ob_type */
	__u32 type_name;         /* PyTypeObject.tp_name (const char *) */
	__u32 type_base;         /* PyTypeObject.tp_base */
	__u32 tuple_item;        /* PyTupleObject.ob_item[0] */
};
_Static_assert(sizeof(struct np_py_offsets) == 32, "np_py_offsets ABI");

/* Where libtorch keeps what BPF reads: the value of the `torch` map,
 * written once libtorch is loaded (apart from `procs`, whose context BPF
 * updates all the time). */
struct np_torch_offsets {
	__u32 node_seq_nr;       /* offset of Node::sequence_nr_ (userspace/insn.h) */
	__u32 pynode_obj;        /* offset of a PyNode's Python object: found by
				  * userspace on a live node (0: not yet) */
	__u64 tls_module;        /* TLS module id of libtorch_cpu (0: unknown) */
	__u64 tls_offset;        /* at::sequence_number's counter in its TLS block */
	__u64 pynode_vtable;     /* torch::autograd::PyNode's vtable, as its objects
				  * point to it (0: unknown) */
};
_Static_assert(sizeof(struct np_torch_offsets) == 32, "np_torch_offsets ABI");

#define NP_SEQ_UNKNOWN (~0ULL)

/* Per-process training context, kept by BPF and stamped on every event. */
struct np_proc_ctx {
	__u64 step;        /* completed optimizer.step() calls */
	__u32 batch;       /* forward/backward passes begun in this step, from 0 */
	__u32 saw_backward;/* a backward finished since the last batch began */
	__u32 bwd_depth;   /* Engine::execute nesting */
	__u32 opt_depth;   /* optimizer.step nesting */
	__u32 bwd_grads_only;  /* the outermost backward running is autograd.grad's
				* (no .grad written: a gradient penalty), not a
				* batch's backward() */
	__u32 pad;
};
_Static_assert(sizeof(struct np_proc_ctx) == 32, "np_proc_ctx ABI");

/* The value of the BPF `procs` map: one per traced process. */
struct np_proc_entry {
	struct np_proc_ctx ctx;
	struct np_py_offsets py;
};
_Static_assert(sizeof(struct np_proc_entry) == 64, "np_proc_entry ABI");

struct np_frame {
	__u64 self;        /* the nn.Module object */
	__u64 type;        /* its Python type */
};

/* Per-thread module stack. */
struct np_thread_ctx {
	__u32 depth;       /* frames in use; may exceed NP_MAX_STACK (counted) */
	__u32 pad;
	struct np_frame frames[NP_MAX_STACK];
};

struct np_event {
	__u32 kind;        /* enum np_event_kind */
	__u32 pid;         /* tgid */
	__u32 tid;
	__u16 phase;       /* enum np_phase at the time of the event */
	__u16 depth;       /* module depth of this thread (enter: of the new frame) */
	__u64 ts_ns;       /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u64 step;
	__u32 batch;
	__u32 pad;
	__u64 a;           /* MOD_*: module object; NODE_*: Node*; TYPE_NAME, OPT_ENTER: type;
			    * BWD_ENTER: 1 for autograd.grad's pass (no .grad
			    * written: it ends no batch), else 0 */
	__u64 b;           /* MOD_ENTER: its type; NODE_*: vtable; OPT_ENTER: optimizer */
	__u64 c;           /* MOD_ENTER: parent module (0 at root); NODE_ENTER:
			    * a Python Function's node: its class (Py_TYPE of
			    * its object), else 0 */
	__u64 d;           /* MOD_*: the thread's next autograd sequence number
			    * (NP_SEQ_UNKNOWN if unreadable); NODE_ENTER: the
			    * node's sequence_nr */
	char name[NP_TYPE_NAME_LEN]; /* TYPE_NAME only */
};
_Static_assert(sizeof(struct np_event) == 136, "np_event ABI");
_Static_assert(sizeof(struct np_event) - __builtin_offsetof(struct np_event, a) == NP_AGENT_REC_BYTES,
	       "an agent record fills a..name");

/* NP_EV_AGENT_BULK: the same header as np_event, then len bytes of the
 * agent's np_arec_stat entries.  One uprobe trap costs 10-20 us in a VM:
 * a step's statistics go in one. */
#define NP_AGENT_BULK_MAX 4048
struct np_bulk_event {
	__u32 kind;
	__u32 pid;
	__u32 tid;
	__u16 phase;
	__u16 depth;
	__u64 ts_ns;
	__u64 step;
	__u32 batch;
	__u32 len;         /* bytes used in data */
	__u8 data[NP_AGENT_BULK_MAX];
};
_Static_assert(sizeof(struct np_bulk_event) == 4088, "np_bulk_event ABI");

#endif /* NANPROF_H */
