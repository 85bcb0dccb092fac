// SPDX-License-Identifier: GPL-2.0
/* tracer.bpf.c - training context from CPython and libtorch, from outside.
 *
 * Probes (all attached per process by userspace/probes.c):
 *   slot_tp_call               nn.Module calls and optimizer.step(), or
 *   _PyEval_EvalFrameDefault   the same where slot_tp_call is not found
 *   Engine::execute            the backward pass
 *   Engine::evaluate_function  each autograd node run in backward (entry)
 *
 * Which module's forward created a node needs no probe on node creation:
 * module entry and exit read the thread's autograd sequence counter (a
 * libtorch thread_local), which brackets the sequence numbers of the nodes
 * created inside; each node carries its own.  Userspace matches them.
 *
 * The first two exist as "session" programs (one program on entry and
 * return, return only when the entry asks for it; Linux >= 6.13) and as
 * entry/return pairs for older kernels.  Both call the same helpers.
 * The costly part is the trap itself (about 1 us here), so entry work is
 * kept to a cache lookup for the common case: a Python frame that is
 * neither a module call nor an optimizer step.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "nanprof.h"

#define E2BIG 7

char LICENSE[] SEC("license") = "GPL";

extern bool bpf_session_is_return(void) __ksym __weak;

/* Per traced process: context, and the layout of its interpreter. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NP_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct np_proc_entry);
} procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NP_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct np_torch_offsets);
} torch SEC(".maps");

/* Per-thread module stack (and where the current optimizer step began). */
struct np_thread {
	struct np_thread_ctx ctx;
	__u64 sp[NP_MAX_STACK];   /* stack pointer at each frame's entry */
	__u64 opt_sp;             /* stack pointer at the outermost step entry */
	__u64 step_record;        /* slot_tp_call form: the open step's record */
	__u32 in_step;            /* this thread is inside optimizer.step() */
	__u32 step_depth;         /* its module depth when the step began */
	__u32 run_bwd;            /* THPEngine_run_backward calls in progress */
	__u32 run_bwd_engine;     /* how many of them entered Engine::execute */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct np_thread);
} threads SEC(".maps");

/* A zeroed np_thread to insert from: too big for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct np_thread);
} thread_zero SEC(".maps");

struct pair_key {
	__u64 pair;     /* caller module and module, hashed */
	__u32 tgid;
	__u32 pad;
};

struct code_key {
	__u64 code;
	__u32 tgid;
	__u32 pad;
};

/* What each code object is (enum np_code_kind), so that the usual frame
 * costs one lookup.  A plain preallocated hash: its lookup is the
 * cheapest, and a job has far fewer code objects than this; when it is
 * full, new code objects are classified at each call (counted). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct code_key);
	__type(value, __u32);
} code_kinds SEC(".maps");

/* What each Python type is (enum np_type_kind), for slot_tp_call. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct code_key);
	__type(value, __u32);
} type_kinds SEC(".maps");

/* Types whose name userspace has been sent. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct code_key);
	__type(value, __u8);
} seen_types SEC(".maps");


struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);   /* resized by userspace (--ring-mb) */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NP_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);
	if (c)
		*c += 1;
}

static __always_inline __u64 read_ptr(__u64 addr)
{
	__u64 v = 0;
	if (bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		count(NP_CNT_READ_FAIL);
	return v;
}

/* The calling thread's next autograd sequence number (libtorch's
 * thread_local at::sequence_number), through glibc's DTV:
 * fs:8 -> dtv; dtv[module].val -> TLS block; + offset -> the counter.
 * NP_SEQ_UNKNOWN before libtorch is loaded or while the thread has not
 * touched its TLS block yet. */
static __always_inline __u64 read_seq(__u32 tgid)
{
	struct np_torch_offsets *to = bpf_map_lookup_elem(&torch, &tgid);
	__u64 mod = to ? to->tls_module : 0;
	if (!to || !mod)
		return NP_SEQ_UNKNOWN;
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 fs = BPF_CORE_READ(task, thread.fsbase);
	__u64 dtv = 0, len = 0, block = 0, seq = 0;
	if (bpf_probe_read_user(&dtv, 8, (void *)(fs + 8)) || !dtv ||
	    bpf_probe_read_user(&len, 8, (void *)(dtv - 16)) || mod > len ||
	    bpf_probe_read_user(&block, 8, (void *)(dtv + 16 * mod)) ||
	    !block || block == (__u64)-1 ||
	    bpf_probe_read_user(&seq, 8, (void *)(block + to->tls_offset)))
		return NP_SEQ_UNKNOWN;
	return seq;
}

static __always_inline struct np_thread *thread_get(__u32 tid, bool create)
{
	struct np_thread *t = bpf_map_lookup_elem(&threads, &tid);
	if (t || !create)
		return t;
	__u32 zero = 0;
	struct np_thread *z = bpf_map_lookup_elem(&thread_zero, &zero);
	if (!z)
		return NULL;
	bpf_map_update_elem(&threads, &tid, z, BPF_NOEXIST);
	return bpf_map_lookup_elem(&threads, &tid);
}

/* Backward and module calls come first: optimizer.step(closure) runs the
 * closure's forward and backward inside the step (LBFGS; Lightning steps
 * every optimizer so), and they are still a forward and a backward.  A
 * module the step was called from (a learner module whose forward runs
 * the whole training step) is not: only modules entered inside it. */
static __always_inline __u16 phase_of(struct np_proc_entry *p, struct np_thread *t)
{
	if (p->ctx.bwd_depth)
		return NP_PHASE_BACKWARD;
	if (t && t->ctx.depth && !(t->in_step && t->ctx.depth <= t->step_depth))
		return NP_PHASE_FORWARD;
	if (p->ctx.opt_depth)
		return NP_PHASE_OPTIMIZER;
	return NP_PHASE_NONE;
}

static __always_inline struct np_event *event_new(__u32 kind, struct np_proc_entry *p,
						   struct np_thread *t)
{
	struct np_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(NP_CNT_RINGBUF_FULL);
		return NULL;
	}
	__u64 id = bpf_get_current_pid_tgid();
	e->kind = kind;
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->phase = phase_of(p, t);
	e->depth = t ? (t->ctx.depth > 0xffff ? 0xffff : t->ctx.depth) : 0;
	e->ts_ns = bpf_ktime_get_ns();
	e->step = p->ctx.step;
	e->batch = p->ctx.batch;
	e->pad = 0;
	e->a = e->b = e->c = e->d = 0;
	e->name[0] = 0;
	return e;
}

static __always_inline void event_send(struct np_event *e)
{
	/* Userspace drains on a timer: a wakeup per event costs 2-3x. */
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

/* (caller module, module) pairs already announced with a wakeup. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct pair_key);
	__type(value, __u8);
} seen_pairs SEC(".maps");

/* The first call of a module from a given caller wakes userspace at once:
 * it names the module by reading the caller's _modules dict, which must
 * happen while the process is alive, even for a job of a few steps. */
static __always_inline void event_send_module(struct np_event *e, __u32 tgid)
{
	struct pair_key k = { .pair = e->a * 31 + e->c, .tgid = tgid };
	__u8 one = 1;
	if (bpf_map_lookup_elem(&seen_pairs, &k)) {
		bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
		return;
	}
	bpf_map_update_elem(&seen_pairs, &k, &one, BPF_ANY);
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/* Compare a NUL-terminated string in user memory with a literal of
 * length n (including its NUL). */
static __always_inline bool user_str_is(__u64 addr, const char *lit, int n)
{
	char buf[24] = {};
	if (n > (int)sizeof(buf))
		return false;
	if (bpf_probe_read_user(buf, n, (void *)addr))
		return false;
	for (int i = 0; i < n && i < (int)sizeof(buf); i++)
		if (buf[i] != lit[i])
			return false;
	return true;
}

/* Does the type (or one of its first bases) have the given tp_name?
 * Used once per code object, so the loop is not on the hot path. */
static __always_inline bool type_derives(struct np_py_offsets *o, __u64 type,
					 const char *name, int n)
{
	for (int i = 0; i < 8 && type; i++) {
		if (user_str_is(read_ptr(type + o->type_name), name, n))
			return true;
		type = read_ptr(type + o->type_base);
	}
	return false;
}

static __always_inline __u32 classify_code(struct np_py_offsets *o, __u64 code,
					   __u64 frame)
{
	__u64 name = read_ptr(code + o->code_name);
	if (!name)
		return NP_CODE_OTHER;
	__u64 chars = name + o->str_ascii_data;
	bool call_impl = user_str_is(chars, "_call_impl", 11);
	bool step = !call_impl && user_str_is(chars, "step", 5);
	if (!call_impl && !step)
		return NP_CODE_OTHER;
	__u64 self = read_ptr(frame + o->frame_localsplus);
	if (!self)
		return NP_CODE_OTHER;
	__u64 type = read_ptr(self + o->obj_type);
	if (call_impl && type_derives(o, type, "Module", 7))
		return NP_CODE_MODULE_CALL;
	if (step && type_derives(o, type, "Optimizer", 10))
		return NP_CODE_OPT_STEP;
	return NP_CODE_OTHER;
}

static __always_inline void send_type_name(struct np_proc_entry *p, struct np_thread *t,
					   __u32 tgid, __u64 type)
{
	struct code_key k = { .code = type, .tgid = tgid };
	__u8 one = 1;
	if (bpf_map_lookup_elem(&seen_types, &k))
		return;
	struct np_event *e = event_new(NP_EV_TYPE_NAME, p, t);
	if (!e)
		return;   /* not marked seen: retried at the next call */
	e->a = type;
	bpf_probe_read_user_str(e->name, sizeof(e->name),
				(void *)read_ptr(type + p->py.type_name));
	event_send(e);
	bpf_map_update_elem(&seen_types, &k, &one, BPF_ANY);
}

/* optimizer.step() began on this thread (a nested one is not counted). */
static __always_inline void step_begin(struct np_proc_entry *p, struct np_thread *t,
				       __u32 tgid, __u64 type, __u64 self)
{
	p->ctx.opt_depth++;
	t->in_step = 1;
	t->step_depth = t->ctx.depth;
	if (type)
		send_type_name(p, t, tgid, type);
	struct np_event *e = event_new(NP_EV_OPT_ENTER, p, t);
	if (e) {
		e->a = type;
		e->b = self;
		event_send(e);
	}
}

/* optimizer.step() returned: step N is over, what follows is step N+1. */
static __always_inline void step_end(struct np_proc_entry *p, struct np_thread *t)
{
	if (p->ctx.opt_depth)
		p->ctx.opt_depth--;
	struct np_event *e = event_new(NP_EV_OPT_EXIT, p, t);
	if (e)
		event_send(e);
	t->in_step = 0;
	p->ctx.step++;
	p->ctx.batch = 0;
	p->ctx.saw_backward = 0;
}

/* An nn.Module call began: push it.  Returns 0 when its return must be
 * seen (session semantics). */
static __always_inline int module_push(struct np_proc_entry *p, struct np_thread *t,
				       __u32 tgid, __u64 self, __u64 type, __u64 sp)
{
	__u32 d = t->ctx.depth;
	if (d == 0 && !p->ctx.bwd_depth && !p->ctx.opt_depth && p->ctx.saw_backward) {
		/* first forward after a backward in the same step: next batch */
		p->ctx.batch++;
		p->ctx.saw_backward = 0;
	}
	if (d >= NP_MAX_STACK) {
		count(NP_CNT_STACK_OVERFLOW);
		t->ctx.depth = d + 1;
		return 1;   /* too deep: no return, so no pop; depth is fixed up
			     * when the frame below returns (see module_pop) */
	}
	__u64 parent = 0;
	if (d > 0 && d - 1 < NP_MAX_STACK)
		parent = t->ctx.frames[d - 1].self;
	t->ctx.frames[d].self = self;
	t->ctx.frames[d].type = type;
	t->sp[d] = sp;
	t->ctx.depth = d + 1;
	send_type_name(p, t, tgid, type);
	struct np_event *e = event_new(NP_EV_MOD_ENTER, p, t);
	if (e) {
		e->a = self;
		e->b = type;
		e->c = parent;
		e->d = read_seq(tgid);
		event_send_module(e, tgid);
	}
	return 0;
}

/* A return whose stack pointer (entry sp + 8 after ret) matches the top
 * module frame pops it; any other return (fallback mode) is ignored. */
static __always_inline void module_pop(struct np_proc_entry *p, struct np_thread *t,
				       __u32 tgid, __u64 sp)
{
	__u32 d = t->ctx.depth;
	if (d == 0)
		return;
	if (d > NP_MAX_STACK) {
		/* Frames past the stack limit were not recorded; the first
		 * recorded one to return resets the depth to its own. */
		d = NP_MAX_STACK;
	}
	__u32 top = d - 1;
	if (top >= NP_MAX_STACK || t->sp[top] != sp)
		return;
	t->ctx.depth = top;
	struct np_event *e = event_new(NP_EV_MOD_EXIT, p, t);
	if (e) {
		e->a = t->ctx.frames[top].self;
		e->d = read_seq(tgid);
		e->depth = top;
		event_send(e);
	}
}

/* ---- Python probe, general form: _PyEval_EvalFrameDefault ----
 * Every Python frame entered from C: module calls enter through tp_call,
 * optimizer steps through the wrappers' f(*args, **kwargs). */

static __always_inline int py_eval_enter(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	count(NP_CNT_PY_ENTRIES);
	struct np_proc_entry *p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p)
		return 1;
	__u64 frame = PT_REGS_PARM2(ctx);
	__u64 code = read_ptr(frame + p->py.frame_code);
	struct code_key k = { .code = code, .tgid = tgid };
	__u32 *kindp = bpf_map_lookup_elem(&code_kinds, &k);
	__u32 kind;
	if (kindp) {
		kind = *kindp;
	} else {
		kind = classify_code(&p->py, code, frame);
		if (bpf_map_update_elem(&code_kinds, &k, &kind, BPF_NOEXIST) == -E2BIG)
			count(NP_CNT_CODE_MAP_FULL);
	}
	if (kind == NP_CODE_OTHER)
		return 1;

	struct np_thread *t = thread_get(tid, true);
	if (!t)
		return 1;
	__u64 self = read_ptr(frame + p->py.frame_localsplus);
	__u64 type = read_ptr(self + p->py.obj_type);
	__u64 sp = PT_REGS_SP(ctx);

	if (kind == NP_CODE_OPT_STEP) {
		if (t->opt_sp)        /* a step inside a step: count the outer */
			return 1;
		t->opt_sp = sp;
		step_begin(p, t, tgid, type, self);
		return 0;
	}
	return module_push(p, t, tgid, self, type, sp);
}

static __always_inline int py_eval_exit(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct np_thread *t = bpf_map_lookup_elem(&threads, &tid);
	struct np_proc_entry *p = bpf_map_lookup_elem(&procs, &tgid);
	if (!t || !p)
		return 0;
	__u64 sp = PT_REGS_SP(ctx) - 8;
	if (t->opt_sp && t->opt_sp == sp) {
		t->opt_sp = 0;
		step_end(p, t);
		return 0;
	}
	module_pop(p, t, tgid, sp);
	return 0;
}

/* ---- Python probe, fast form: slot_tp_call(self, args, kwds) ----
 * CPython calls an instance of a Python class with __call__ through
 * slot_tp_call: every nn.Module call, and the torch.ops calls with which
 * torch.autograd.profiler.record_function enters and exits.  Optimizer
 * steps are record_function("Optimizer.step#<Class>.step") blocks (torch
 * 1.13 and 2.x): the enter op's argument is that name, it returns the
 * record, and the exit op gets that record back.  About 1 hit per module
 * call and 4 per step, where _PyEval_EvalFrameDefault takes ~4 and ~30. */

static __always_inline __u32 classify_type(struct np_py_offsets *o, __u64 type)
{
	if (type_derives(o, type, "Module", 7))
		return NP_TYPE_MODULE;
	__u64 name = read_ptr(type + o->type_name);
	if (user_str_is(name, "OpOverloadPacket", 17) || user_str_is(name, "OpOverload", 11) ||
	    user_str_is(name, "TorchBindOpOverload", 20))
		return NP_TYPE_TORCH_OP;
	return NP_TYPE_OTHER;
}

static __always_inline int call_enter(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	count(NP_CNT_PY_ENTRIES);
	struct np_proc_entry *p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p)
		return 1;
	__u64 self = PT_REGS_PARM1(ctx);
	__u64 type = read_ptr(self + p->py.obj_type);
	struct code_key k = { .code = type, .tgid = tgid };
	__u32 *kindp = bpf_map_lookup_elem(&type_kinds, &k);
	__u32 kind;
	if (kindp) {
		kind = *kindp;
	} else {
		kind = classify_type(&p->py, type);
		bpf_map_update_elem(&type_kinds, &k, &kind, BPF_ANY);
	}
	if (kind == NP_TYPE_OTHER)
		return 1;
	struct np_thread *t = thread_get(tid, true);
	if (!t)
		return 1;
	__u64 sp = PT_REGS_SP(ctx);
	if (kind == NP_TYPE_MODULE)
		return module_push(p, t, tgid, self, type, sp);

	/* a torch.ops call: the optimizer's record_function enter or exit? */
	__u64 args = PT_REGS_PARM2(ctx);
	__u64 arg0 = read_ptr(args + p->py.tuple_item);
	if (t->step_record) {
		if (arg0 == t->step_record) {   /* the exit of the open step */
			t->step_record = 0;
			step_end(p, t);
		}
		return 1;
	}
	if (t->opt_sp || !user_str_is(read_ptr(read_ptr(arg0 + p->py.obj_type) + p->py.type_name),
				      "str", 4))
		return 1;
	if (!user_str_is(arg0 + p->py.str_ascii_data, "Optimizer.step#", 15))
		return 1;
	t->opt_sp = sp;   /* see its return: the record it hands back */
	return 0;
}

static __always_inline int call_exit(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct np_thread *t = bpf_map_lookup_elem(&threads, &tid);
	struct np_proc_entry *p = bpf_map_lookup_elem(&procs, &tgid);
	if (!t || !p)
		return 0;
	__u64 sp = PT_REGS_SP(ctx) - 8;
	if (t->opt_sp && t->opt_sp == sp) {
		t->opt_sp = 0;
		t->step_record = PT_REGS_RC(ctx);
		if (t->step_record)
			step_begin(p, t, tgid, 0, 0);
		return 0;
	}
	module_pop(p, t, tgid, sp);
	return 0;
}

/* Engine::execute(roots, inputs, keep_graph, create_graph,
 * accumulate_grad, outputs) returns a variable_list through a hidden
 * pointer, so accumulate_grad is its 7th integer argument: on the stack
 * on x86-64 (the slot above the return address), x5 on arm64 (whose
 * result pointer goes in x8).  Same in torch 1.13 and 2.13.  False for
 * torch.autograd.grad: a gradient penalty's backward, which writes no
 * .grad and ends no micro-batch. */
static __always_inline int bwd_accumulates(struct pt_regs *ctx)
{
#if defined(__TARGET_ARCH_x86)
	__u8 v = 1;
	if (bpf_probe_read_user(&v, 1, (void *)(PT_REGS_SP(ctx) + 8)))
		return 1;
	return v != 0;
#elif defined(__TARGET_ARCH_arm64)
	return (PT_REGS_PARM6(ctx) & 0xff) != 0;
#else
	return 1;
#endif
}

/* A backward pass is an Engine::execute that a Python backward()
 * (THPEngine_run_backward, whose return ends it) called on this thread.
 * Per thread, run_bwd counts the run_backward calls in progress and
 * run_bwd_engine those that entered the engine: an Engine::execute no
 * run_backward of its own called (TorchScript's, C++'s: its end would
 * never be seen) is no pass, and a run_backward that raised before the
 * engine (a tensor needing no gradient) ends none. */
static __always_inline int run_bwd_enter(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	if (!bpf_map_lookup_elem(&procs, &tgid))
		return 0;
	struct np_thread *t = thread_get((__u32)id, true);
	if (t)
		t->run_bwd++;
	return 0;
}

/* torch::autograd::Engine::execute: a backward pass. */
static __always_inline int bwd_enter(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct np_proc_entry *p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p)
		return 1;
	struct np_thread *t = bpf_map_lookup_elem(&threads, &(__u32){(__u32)id});
	if (!t || t->run_bwd_engine >= t->run_bwd)
		return 0;
	t->run_bwd_engine++;
	int grads_only = !bwd_accumulates(ctx);
	if (!p->ctx.bwd_depth)
		p->ctx.bwd_grads_only = grads_only;
	p->ctx.bwd_depth++;
	struct np_event *e = event_new(NP_EV_BWD_ENTER, p, t);
	if (e) {
		e->a = (__u64)grads_only;
		event_send(e);
	}
	return 0;
}

/* THPEngine_run_backward returns: the pass it began ends, if it began one */
static __always_inline int bwd_exit(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct np_proc_entry *p = bpf_map_lookup_elem(&procs, &tgid);
	struct np_thread *t = bpf_map_lookup_elem(&threads, &(__u32){(__u32)id});
	if (!p || !t || !t->run_bwd)   /* entered before nanprof attached */
		return 0;
	int began = t->run_bwd_engine == t->run_bwd;
	t->run_bwd--;
	if (!began)
		return 0;
	t->run_bwd_engine--;
	struct np_event *e = event_new(NP_EV_BWD_EXIT, p, t);
	if (e)
		event_send(e);
	if (p->ctx.bwd_depth)
		p->ctx.bwd_depth--;
	/* the next forward is a new micro-batch's, unless this was
	 * autograd.grad inside the step (its forward goes on) */
	if (!p->ctx.bwd_depth && !p->ctx.bwd_grads_only)
		p->ctx.saw_backward = 1;
	return 0;
}

static __always_inline __u64 node_seq(__u64 node, struct np_torch_offsets *to)
{
	__u64 seq;
	if (!to || bpf_probe_read_user(&seq, sizeof(seq), (void *)(node + to->node_seq_nr)))
		return NP_SEQ_UNKNOWN;
	return seq;
}

/* Engine::evaluate_function(this, graph_task, Node *func, inputs, queue):
 * entry only; a node ends where the next one on its thread begins, or
 * with the backward pass (saves a return trap per node). */
SEC("uprobe")
int BPF_KPROBE(np_node_entry)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct np_proc_entry *p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p)
		return 0;
	struct np_thread *t = bpf_map_lookup_elem(&threads, &(__u32){(__u32)id});
	struct np_torch_offsets *to = bpf_map_lookup_elem(&torch, &tgid);
	__u64 node = PT_REGS_PARM3(ctx);
	struct np_event *e = event_new(NP_EV_NODE_ENTER, p, t);
	if (e) {
		e->a = node;
		e->b = read_ptr(node);
		e->d = node_seq(node, to);
		/* one C++ class for every Python autograd.Function: its
		 * Python object's class names it */
		if (to && to->pynode_obj && e->b && e->b == to->pynode_vtable) {
			__u64 obj = read_ptr(node + to->pynode_obj);
			e->c = obj ? read_ptr(obj + p->py.obj_type) : 0;
		}
		event_send(e);
	}
	return 0;
}

/* Session programs: one program on entry and return.  The section name
 * only tells libbpf the program type; userspace sets the attach type to
 * BPF_TRACE_UPROBE_SESSION and attaches it itself. */
SEC("kprobe.multi")
int np_py_eval_session(struct pt_regs *ctx)
{
	if (bpf_session_is_return())
		return py_eval_exit(ctx);
	return py_eval_enter(ctx);
}

SEC("kprobe.multi")
int np_call_session(struct pt_regs *ctx)
{
	if (bpf_session_is_return())
		return call_exit(ctx);
	return call_enter(ctx);
}

SEC("kprobe.multi")
int np_run_bwd_session(struct pt_regs *ctx)
{
	if (bpf_session_is_return())
		return bwd_exit();
	return run_bwd_enter();
}



/* Fallback pairs for kernels without uprobe sessions. */
SEC("uprobe")
int BPF_KPROBE(np_py_eval_entry) { py_eval_enter(ctx); return 0; }
SEC("uretprobe")
int BPF_KPROBE(np_py_eval_return) { return py_eval_exit(ctx); }
SEC("uprobe")
int BPF_KPROBE(np_call_entry) { call_enter(ctx); return 0; }
SEC("uretprobe")
int BPF_KPROBE(np_call_return) { return call_exit(ctx); }

/* A backward pass: Engine::execute's entry (a plain uprobe in both
 * modes) between THPEngine_run_backward's entry and return (see
 * userspace/probes.c: a return probe on Engine::execute would turn
 * torch's errors into std::terminate). */
SEC("uprobe")
int BPF_KPROBE(np_bwd_entry) { bwd_enter(ctx); return 0; }
SEC("uprobe")
int BPF_KPROBE(np_run_bwd_entry) { return run_bwd_enter(); }
SEC("uretprobe")
int BPF_KPROBE(np_bwd_return) { return bwd_exit(); }

/* np_agent_report(rec) in libnanprof_agent.so: copy the agent's record
 * into the ring, in order with this thread's other events.  Records are
 * rare and wanted at once (the process may be about to exit). */
SEC("uprobe")
int BPF_KPROBE(np_agent_report_probe)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct np_proc_entry *p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p)
		return 0;
	struct np_thread *t = bpf_map_lookup_elem(&threads, &(__u32){(__u32)id});
	struct np_event *e = event_new(NP_EV_AGENT, p, t);
	if (!e)
		return 0;
	if (bpf_probe_read_user(&e->a, NP_AGENT_REC_BYTES, (void *)PT_REGS_PARM1(ctx))) {
		count(NP_CNT_READ_FAIL);
		bpf_ringbuf_discard(e, 0);
		return 0;
	}
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	return 0;
}

/* np_agent_report_bulk(buf, len): a step's statistics in one event. */
SEC("uprobe")
int BPF_KPROBE(np_agent_bulk_probe)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct np_proc_entry *p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p)
		return 0;
	struct np_bulk_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(NP_CNT_RINGBUF_FULL);
		return 0;
	}
	__u32 len = (__u32)PT_REGS_PARM2(ctx);
	if (len > NP_AGENT_BULK_MAX)
		len = NP_AGENT_BULK_MAX;
	e->kind = NP_EV_AGENT_BULK;
	e->pid = tgid;
	e->tid = (__u32)id;
	e->phase = 0;
	e->depth = 0;
	e->ts_ns = bpf_ktime_get_ns();
	e->step = p->ctx.step;
	e->batch = p->ctx.batch;
	/* a fixed size for the verifier: the agent's buffer is that big */
	if (bpf_probe_read_user(e->data, NP_AGENT_BULK_MAX, (void *)PT_REGS_PARM1(ctx))) {
		count(NP_CNT_READ_FAIL);
		len = 0;
	}
	e->len = len;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

/* A traced process is gone: tell userspace, forget it. */
SEC("raw_tp/sched_process_exit")
int np_proc_exit(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	bpf_map_delete_elem(&threads, &tid);
	if (tgid != tid)
		return 0;
	struct np_proc_entry *p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p)
		return 0;
	struct np_event *e = event_new(NP_EV_PROC_EXIT, p, NULL);
	if (e)
		event_send(e);
	bpf_map_delete_elem(&procs, &tgid);
	bpf_map_delete_elem(&torch, &tgid);
	return 0;
}
