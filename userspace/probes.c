#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "elfsym.h"
#include "log.h"
#include "probes.h"
#include "proc.h"
#include "pyoffsets.h"
#include "pymem.h"
#include "pymethods.h"
#include "pyslots.h"
#include "insn.h"
#include "tracer.skel.h"
#include "../agent/agent_report.h"

/* UAPI values newer than the system's linux/bpf.h (enum bpf_attach_type). */
#define NP_BPF_TRACE_UPROBE_MULTI   48
#define NP_BPF_TRACE_UPROBE_SESSION 57

#define SYM_PY_EVAL     "_PyEval_EvalFrameDefault"
#define SYM_ENGINE_EXEC "_ZN5torch8autograd6Engine7executeERKSt6vector"
#define SYM_EVAL_FN     "_ZN5torch8autograd6Engine17evaluate_functionE"
#define SYM_SEQ_PEEK    "_ZN2at15sequence_number4peekEv"
#define SYM_PY_SEQ_NR   "_ZN5torch8autograd26THPCppFunction_sequence_nrEP7_objectS2_"
#define SYM_PYNODE_VTABLE "_ZTVN5torch8autograd6PyNodeE"
#define SYM_PYNODE_TRACEABLE "_ZN5torch8autograd6PyNode12is_traceableEv"
/* THPEngine_run_backward, behind loss.backward() and autograd.grad():
 * static in torch 2.x (in .symtab; else found by its method table,
 * pymethods.h), global in 1.x */
static const char *const SYM_RUN_BACKWARD[] = { "_ZL22THPEngine_run_backwardP7_objectS0_S0_",
						 "_Z22THPEngine_run_backwardP7_objectS0_S0_" };

#define MAX_LINKS 12
#define NP_MAX_TORCH_LIBS 8
#define NP_SEQ_TRIES 20        /* tls_index still 0 after this many looks */

struct proc_links {
	pid_t pid;
	int fds[MAX_LINKS];              /* raw uprobe_multi links */
	struct bpf_link *links[MAX_LINKS];
	int nfds, nlinks;
};

/* libtorch symbol offsets, looked up once per library file: indexing
 * libtorch_cpu's symbols takes long enough for a short rank to finish. */
struct torch_syms {
	char path[512];
	struct np_elf *elf;        /* kept open: names autograd nodes by vtable */
	uint64_t bias, exec_off, evfn_off;
	struct np_tls_ref seq;     /* the autograd sequence counter */
	int seq_err;
	char py_path[512];         /* libtorch_python, for Node::sequence_nr_ */
	int node_seq_off;
	uint64_t py_bias;          /* libtorch_python's load bias */
	uint64_t pynode_vt;        /* its PyNode vtable's vaddr (0: none) */
	uint32_t pynode_obj_off;   /* PyNode's Python object (0: not read from the code) */
	uint64_t run_bwd_off;      /* THPEngine_run_backward's file offset (0: none) */
	uint64_t run_bwd_slot;     /* without its symbol: its method entry's ml_meth (0: none) */
};

struct np_probes {
	/* one entry per libtorch file seen (two Pythons may load two);
	 * entries stay open while any traced process may point at them */
	struct torch_syms torch_cache[NP_MAX_TORCH_LIBS];
	struct tracer_bpf *skel;
	struct ring_buffer *rb;
	bool session;
	enum np_py_probe py_probe;
	np_event_fn on_event;
	void *ctx;
	struct bpf_link *exit_link;
	struct proc_links procs[NP_MAX_PROCS];
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && np_log_level < NP_LOG_DEBUG)
		return 0;
	if (level != LIBBPF_WARN && np_log_level < NP_LOG_DEBUG)
		return 0;
	char buf[512];
	vsnprintf(buf, sizeof(buf), fmt, ap);
	size_t n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = 0;
	np_debug("libbpf: %s", buf);
	return 0;
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct np_probes *p = ctx;
	if (size >= sizeof(struct np_event))
		p->on_event(data, p->ctx);
	return 0;
}

static void set_session_mode(struct tracer_bpf *s, bool session)
{
	/* Engine::execute's entry probe is loaded either way */
	struct bpf_program *sess[] = { s->progs.np_py_eval_session, s->progs.np_call_session,
				       s->progs.np_run_bwd_session };
	struct bpf_program *pair[] = { s->progs.np_py_eval_entry, s->progs.np_py_eval_return,
				       s->progs.np_call_entry, s->progs.np_call_return,
				       s->progs.np_run_bwd_entry, s->progs.np_bwd_return };
	for (size_t i = 0; i < sizeof(sess) / sizeof(sess[0]); i++) {
		bpf_program__set_autoload(sess[i], session);
		bpf_program__set_expected_attach_type(sess[i], NP_BPF_TRACE_UPROBE_SESSION);
	}
	for (size_t i = 0; i < sizeof(pair) / sizeof(pair[0]); i++)
		bpf_program__set_autoload(pair[i], !session);
}

static int load(struct np_probes *p, const struct np_probes_opts *o, bool session)
{
	p->skel = tracer_bpf__open();
	if (!p->skel)
		return -errno;
	set_session_mode(p->skel, session);
	bpf_map__set_max_entries(p->skel->maps.events, (o->ring_mb ? o->ring_mb : 8) << 20);
	int err = tracer_bpf__load(p->skel);
	if (err) {
		tracer_bpf__destroy(p->skel);
		p->skel = NULL;
	}
	return err;
}

int np_probes_open(struct np_probes **out, const struct np_probes_opts *o)
{
	libbpf_set_print(libbpf_print);
	struct np_probes *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->on_event = o->on_event;
	p->ctx = o->ctx;
	p->py_probe = o->py_probe;
	int err = -EINVAL;
	if (!o->no_session) {
		err = load(p, o, true);
		p->session = !err;
		if (err)
			np_debug("uprobe sessions unavailable (%s): using entry+return probes",
				 strerror(-err));
	}
	if (!p->session && (err = load(p, o, false))) {
		if (err == -EPERM || err == -EACCES)
			np_err("cannot load bpf programs: permission denied (run as root or with CAP_BPF and CAP_PERFMON)");
		else
			np_err("cannot load bpf programs: %s", strerror(-err));
		free(p);
		return err;
	}
	p->exit_link = bpf_program__attach(p->skel->progs.np_proc_exit);
	if (!p->exit_link) {
		err = -errno;
		np_err("cannot attach sched_process_exit tracepoint: %s", strerror(-err));
		np_probes_close(p);
		return err;
	}
	p->rb = ring_buffer__new(bpf_map__fd(p->skel->maps.events), handle_event, p, NULL);
	if (!p->rb) {
		err = -errno;
		np_err("cannot create ring buffer: %s", strerror(-err));
		np_probes_close(p);
		return err;
	}
	*out = p;
	return 0;
}

const char *np_probes_mode(const struct np_probes *p)
{
	return p->session ? "uprobe-session" : "uprobe+uretprobe";
}

static struct proc_links *links_of(struct np_probes *p, pid_t pid, bool create)
{
	for (int i = 0; i < NP_MAX_PROCS; i++)
		if (p->procs[i].pid == pid)
			return &p->procs[i];
	if (!create)
		return NULL;
	for (int i = 0; i < NP_MAX_PROCS; i++)
		if (p->procs[i].pid == 0) {
			memset(&p->procs[i], 0, sizeof(p->procs[i]));
			p->procs[i].pid = pid;
			return &p->procs[i];
		}
	return NULL;
}

/* A session link: one program on entry and return, filtered to pid by
 * the kernel (libbpf 1.1 has no wrapper for uprobe_multi). */
static int attach_session(int prog_fd, const char *path, uint64_t offset, pid_t pid)
{
	struct {
		__u32 prog_fd, target_fd, attach_type, flags;
		__u64 path, offsets, ref_ctr_offsets, cookies;
		__u32 cnt, um_flags, pid, pad;
	} attr;
	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = prog_fd;
	attr.attach_type = NP_BPF_TRACE_UPROBE_SESSION;
	attr.path = (uintptr_t)path;
	attr.offsets = (uintptr_t)&offset;
	attr.cnt = 1;
	attr.pid = pid;
	int fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

/* Entry (and, for a pair, return) probes on path+offset for pid. */
static int attach_probe(struct np_probes *p, struct proc_links *l, const char *path,
			uint64_t offset, struct bpf_program *session,
			struct bpf_program *entry, struct bpf_program *ret)
{
	if (p->session && session) {
		if (l->nfds >= MAX_LINKS)
			return -ENOSPC;
		int fd = attach_session(bpf_program__fd(session), path, offset, l->pid);
		if (fd < 0)
			return fd;
		l->fds[l->nfds++] = fd;
		return 0;
	}
	struct bpf_program *progs[2] = { entry, ret };
	for (int i = 0; i < 2; i++) {
		if (!progs[i])
			continue;
		if (l->nlinks >= MAX_LINKS)
			return -ENOSPC;
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .retprobe = i == 1);
		struct bpf_link *link = bpf_program__attach_uprobe_opts(progs[i], l->pid, path,
								       offset, &uo);
		if (!link)
			return -errno;
		l->links[l->nlinks++] = link;
	}
	return 0;
}

static uint64_t sym_offset(struct np_elf *e, const char *sym, int prefix)
{
	uint64_t vaddr = np_elf_sym_addr(e, sym, prefix);
	return vaddr ? np_elf_vaddr_to_offset(e, vaddr) : 0;
}

/* Finds the file holding the interpreter loop (libpython if the process
 * maps one, else the executable: a statically linked python), the offset
 * of _PyEval_EvalFrameDefault in it and, when it can be found, of
 * slot_tp_call (*call_off, 0 if not). */
static int find_python(pid_t pid, struct np_proc_info *info, uint64_t *offset,
		       uint64_t *call_off)
{
	struct np_mapping m;
	if (np_proc_find_mapping(pid, "libpython3.", &m) == 0) {
		snprintf(info->python, sizeof(info->python), "%s", m.path);
	} else {
		char exe[512];
		const char *base;
		if (np_proc_exe(pid, exe, sizeof(exe)))
			return -ENOEXEC;
		base = strrchr(exe, '/');
		if (np_proc_find_mapping(pid, base ? base + 1 : exe, &m))
			return -ENOEXEC;
		snprintf(info->python, sizeof(info->python), "%s", m.path);
	}
	struct np_elf *e = np_elf_open(info->python);
	if (!e)
		return -ENOEXEC;
	*offset = sym_offset(e, SYM_PY_EVAL, 0);
	uint64_t call = 0;
	*call_off = 0;
	if (*offset && np_find_slot_tp_call(e, m.start - np_elf_load_bias(e), np_pymem_read_pid,
					    (void *)(intptr_t)pid, &call) == 0)
		*call_off = np_elf_vaddr_to_offset(e, call);
	/* 3.11+ exports its version: Py_Version = 0xMMmmppRS */
	uint64_t vaddr = np_elf_sym_addr(e, "Py_Version", 0);
	uint32_t hex = 0;
	if (vaddr && np_elf_read(e, vaddr, &hex, sizeof(hex)) == 0 && hex >> 24 == 3) {
		info->py_major = 3;
		info->py_minor = (hex >> 16) & 0xff;
	} else if (np_pyver_from_name(info->python, &info->py_major, &info->py_minor)) {
		info->py_major = info->py_minor = 0;
	}
	np_elf_close(e);
	return *offset ? 0 : -ENOEXEC;
}

/* __version__ from torch/version.py, in the directory of torch._C. */
static int version_py(const char *torch_dir, char *buf, size_t len)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/version.py", torch_dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return -ENOENT;
	char line[256], v[64];
	int err = -ENOENT;
	while (err && fgets(line, sizeof(line), f))
		if (sscanf(line, "__version__ = '%63[^']'", v) == 1) {
			snprintf(buf, len, "%s", v);
			err = 0;
		}
	fclose(f);
	return err;
}

/* The torch version the process runs: torch/version.py next to the
 * torch._C extension it mapped (pip and Debian alike), else the
 * library's own .so.X.Y suffix (Debian's libtorch_cpu.so.1.13). */
static void torch_version_of(pid_t pid, const char *lib, char *buf, size_t len)
{
	struct np_mapping c;
	if (np_proc_find_mapping(pid, "_C.cpython", &c) == 0) {
		char dir[512];
		snprintf(dir, sizeof(dir), "%s", c.path);
		if (version_py(dirname(dir), buf, len) == 0)
			return;
	}
	const char *so = strstr(lib, ".so.");
	snprintf(buf, len, "%s", so ? so + 4 : "unknown");
}

/* Where a PyNode keeps its Python object, read out of is_traceable()
 * and believed only if the string it looks up is "_forward_cls"; 0 if
 * not (the collector then finds it on a live node). */
static uint32_t pynode_obj_offset(const struct np_elf *e)
{
	static const char want[] = "_forward_cls";
	uint64_t fn = e ? np_elf_sym_addr(e, SYM_PYNODE_TRACEABLE, 0) : 0, str;
	uint8_t code[128];
	char text[sizeof(want)];
	if (!fn || np_elf_read(e, fn, code, sizeof(code)))
		return 0;
	int off = np_pynode_obj_decode(code, sizeof(code), fn, &str);
	if (off <= 0 || np_elf_read(e, str, text, sizeof(text)) || memcmp(text, want, sizeof(want)))
		return 0;
	return (uint32_t)off;
}

/* Node::sequence_nr_ is at +24 up to torch 1.x (verified on 1.13) and
 * moved with Node's base class later (+16 in 2.13): read it out of
 * libtorch_python's accessor when it has one. */
static uint32_t node_seq_offset(struct torch_syms *ts, const struct np_mapping *pym)
{
	const struct np_mapping m = *pym;
	if (strcmp(ts->py_path, m.path) != 0) {
		snprintf(ts->py_path, sizeof(ts->py_path), "%s", m.path);
		ts->node_seq_off = 24;
		struct np_elf *e = np_elf_open(m.path);
		uint64_t fn = e ? np_elf_sym_addr(e, SYM_PY_SEQ_NR, 0) : 0;
		ts->py_bias = e ? np_elf_load_bias(e) : 0;
		ts->pynode_vt = e ? np_elf_sym_addr(e, SYM_PYNODE_VTABLE, 0) : 0;
		ts->pynode_obj_off = pynode_obj_offset(e);
		ts->run_bwd_off = ts->run_bwd_slot = 0;
		for (size_t i = 0; e && !ts->run_bwd_off && i < sizeof(SYM_RUN_BACKWARD) /
								 sizeof(SYM_RUN_BACKWARD[0]); i++)
			ts->run_bwd_off = sym_offset(e, SYM_RUN_BACKWARD[i], 0);
		if (e && !ts->run_bwd_off &&
		    np_pymethod_slot(e, "run_backward", "queue_callback", &ts->run_bwd_slot))
			ts->run_bwd_slot = 0;
		uint8_t code[16];
		if (fn && np_elf_read(e, fn, code, sizeof(code)) == 0) {
			int off = np_seq_offset_decode(code, sizeof(code));
			if (off > 0)
				ts->node_seq_off = off;
			else
				np_warn("%s: unexpected code in THPCppFunction_sequence_nr; "
					"assuming Node::sequence_nr_ at +24", m.path);
		}
		np_elf_close(e);
	}
	return (uint32_t)ts->node_seq_off;
}

/* Reads libtorch's relocated tls_index for the sequence counter and hands
 * it to BPF.  The dynamic loader fills it in while it loads libtorch, so
 * a look during the load finds 0: then it stays pending and is tried
 * again (np_probes_add_torch), and only a lasting failure is reported. */
static void torch_seq_locate(struct np_probes *p, pid_t pid, struct np_proc_info *info,
			     const struct torch_syms *ts, uint32_t node_seq_off)
{
	struct np_torch_offsets to = { .node_seq_nr = node_seq_off,
				       .pynode_vtable = info->pynode_vtable,
				       .pynode_obj = info->pynode_obj };
	uint64_t ti[2];   /* {ti_module, ti_offset} */
	if (!ts->seq_err &&
	    np_pymem_read_pid((void *)(intptr_t)pid, info->torch_base + ts->seq.tls_index_vaddr,
			      ti, sizeof(ti)) == 0 && ti[0]) {
		to.tls_module = ti[0];
		to.tls_offset = ti[1] + (uint64_t)ts->seq.disp;
		info->torch_seq_pending = false;
	} else if (ts->seq_err || ++info->torch_seq_tries >= NP_SEQ_TRIES) {
		info->torch_seq_pending = false;
		np_warn("cannot locate libtorch's autograd sequence counter in pid %d: "
			"backward nodes will not be tied to modules", pid);
	} else {
		info->torch_seq_pending = true;
	}
	info->torch_seq_off = node_seq_off;
	bpf_map__update_elem(p->skel->maps.torch, &(__u32){ (__u32)pid }, sizeof(__u32), &to,
			     sizeof(to), BPF_ANY);
}

static struct torch_syms *torch_cache_of(struct np_probes *p, const char *path)
{
	for (int i = 0; i < NP_MAX_TORCH_LIBS; i++)
		if (p->torch_cache[i].elf && strcmp(p->torch_cache[i].path, path) == 0)
			return &p->torch_cache[i];
	return NULL;
}

/* libtorch_cpu's symbols, from the cache or read now (the slow part of
 * the libtorch probes: a big symbol table) */
static int torch_syms_load(struct np_probes *p, pid_t pid, const struct np_mapping *m,
			   struct torch_syms **out)
{
	struct torch_syms *ts = NULL;
	for (int i = 0; i < NP_MAX_TORCH_LIBS && !ts; i++)
		if (!p->torch_cache[i].elf || strcmp(p->torch_cache[i].path, m->path) == 0)
			ts = &p->torch_cache[i];
	if (!ts) {
		np_warn("pid %d: more than %d different libtorch files: not traced in backward",
			pid, NP_MAX_TORCH_LIBS);
		return -ENOSPC;
	}
	if (!ts->elf) {
		struct np_elf *e = np_elf_open(m->path);
		if (!e) {
			int err = -errno;
			np_warn("cannot read %s: %s", m->path, strerror(-err));
			return err;
		}
		ts->elf = e;
		snprintf(ts->path, sizeof(ts->path), "%s", m->path);
		ts->bias = np_elf_load_bias(e);
		ts->exec_off = sym_offset(e, SYM_ENGINE_EXEC, 1);
		ts->evfn_off = sym_offset(e, SYM_EVAL_FN, 1);
		uint8_t code[64];
		uint64_t peek = np_elf_sym_addr(e, SYM_SEQ_PEEK, 0);
		ts->seq_err = !peek ? -ENOENT : np_elf_read(e, peek, code, sizeof(code));
		if (!ts->seq_err)
			ts->seq_err = np_tls_decode(code, sizeof(code), peek, &ts->seq);
	}
	*out = ts;
	return 0;
}

/* Before the Python probe goes in: read a loaded libtorch's symbols, so
 * that its probes follow at once.  Read after, they took 100 ms or more
 * (torch 2.13: five steps of 20 ms), and an attached job's first steps
 * had forward calls but no backward. */
static void torch_syms_prefetch(struct np_probes *p, pid_t pid)
{
	struct np_mapping m, pym;
	struct torch_syms *ts;
	if (np_proc_find_mapping(pid, "libtorch_cpu.so", &m) == 0 &&
	    np_proc_find_mapping(pid, "libtorch_python.so", &pym) == 0 &&
	    torch_syms_load(p, pid, &m, &ts) == 0)
		node_seq_offset(ts, &pym);
}

/* THPEngine_run_backward's file offset in pym: by its symbol, or read
 * from its method table entry in the process.  -EAGAIN while that entry
 * is unset (the library is still loading); -ENOENT when neither is. */
static int run_backward_offset(pid_t pid, const struct torch_syms *ts,
			       const struct np_mapping *pym, uint64_t *off)
{
	uint64_t v;
	*off = ts->run_bwd_off;
	if (*off)
		return 0;
	if (!ts->run_bwd_slot)
		return -ENOENT;
	int err = np_pymethod_read(pid, pym->start - ts->py_bias, ts->run_bwd_slot, &v);
	if (err)
		return err;
	struct np_elf *e = np_elf_open(pym->path);
	*off = e ? np_elf_vaddr_to_offset(e, v) : 0;
	np_elf_close(e);
	return *off ? 0 : -ENOENT;
}

/* A backward pass begins at Engine::execute (entry only: it reads
 * accumulate_grad there) and ends when THPEngine_run_backward returns.
 * Not at Engine::execute's return: a return probe replaces the return
 * address with the kernel's trampoline, which the C++ unwinder cannot
 * step past, so an error torch throws inside the engine (backward
 * through a freed graph, anomaly mode's NaN check, a hook's exception)
 * would end the job in std::terminate instead of reaching Python.
 * THPEngine_run_backward catches every error in its own frame: the
 * unwinder never needs its return address.  Its entry is probed too: an
 * Engine::execute that no run_backward called (TorchScript's) is no pass,
 * as its end would never be seen.  All of them or none.
 * 1 attached; 0 not yet (info->torch_bwd_pending: tried again); -errno. */
static int attach_backward(struct np_probes *p, struct proc_links *l, pid_t pid,
			   struct np_proc_info *info, const struct torch_syms *ts,
			   const struct np_mapping *m, const struct np_mapping *pym)
{
	uint64_t run_off;
	int err = run_backward_offset(pid, ts, pym, &run_off);
	info->torch_bwd_pending = err == -EAGAIN && ++info->torch_bwd_tries < NP_SEQ_TRIES;
	if (info->torch_bwd_pending)
		return 0;
	if (err) {
		np_warn("%s: THPEngine_run_backward not found (no symbol, no method table "
			"entry): backward passes are not traced", pym->path);
		return 0;
	}
	struct tracer_bpf *s = p->skel;
	if ((err = attach_probe(p, l, m->path, ts->exec_off, NULL, s->progs.np_bwd_entry, NULL)) ||
	    (err = attach_probe(p, l, pym->path, run_off, s->progs.np_run_bwd_session,
				s->progs.np_run_bwd_entry, s->progs.np_bwd_return)))
		return err;
	size_t used = strlen(info->probes);
	snprintf(info->probes + used, sizeof(info->probes) - used, ",Engine::execute");
	return 1;
}

int np_probes_add_torch(struct np_probes *p, pid_t pid, struct np_proc_info *info)
{
	if (info->torch_attached) {
		struct torch_syms *ts = torch_cache_of(p, info->torch_lib);
		if (info->torch_seq_pending && ts)
			torch_seq_locate(p, pid, info, ts, info->torch_seq_off);
		struct np_mapping m, pym;
		struct proc_links *l;
		if (info->torch_bwd_pending && ts && (l = links_of(p, pid, false)) &&
		    !np_proc_find_mapping(pid, "libtorch_cpu.so", &m) &&
		    !np_proc_find_mapping(pid, "libtorch_python.so", &pym)) {
			int err = attach_backward(p, l, pid, info, ts, &m, &pym);
			if (err < 0)
				np_warn("cannot attach the backward probes to pid %d: %s", pid,
					strerror(-err));
		}
		return 0;
	}
	/* both halves: libtorch_python decides Node's layout, and without
	 * it there is no Python training to see; import maps it right after
	 * libtorch_cpu, so wait for it */
	struct np_mapping m, pym;
	if (np_proc_find_mapping(pid, "libtorch_cpu.so", &m) ||
	    np_proc_find_mapping(pid, "libtorch_python.so", &pym))
		return 0;
	struct proc_links *l = links_of(p, pid, true);
	if (!l)
		return -ENOSPC;
	snprintf(info->torch_lib, sizeof(info->torch_lib), "%s", m.path);
	torch_version_of(pid, m.path, info->torch_version, sizeof(info->torch_version));
	struct torch_syms *ts = NULL;
	int err = torch_syms_load(p, pid, &m, &ts);
	if (err)
		return err;
	info->torch_elf = ts->elf;
	info->torch_base = m.start - ts->bias;
	uint64_t exec_off = ts->exec_off, evfn_off = ts->evfn_off;
	uint32_t seq_off = node_seq_offset(ts, &pym);
	/* objects point 16 bytes into the vtable symbol, past the offset to
	 * top and the type info */
	info->pynode_vtable = ts->pynode_vt ? pym.start - ts->py_bias + ts->pynode_vt + 16 : 0;
	info->pynode_obj = ts->pynode_obj_off;
	info->pynode_obj_sent = info->pynode_obj != 0;   /* with the rest, below */
	torch_seq_locate(p, pid, info, ts, seq_off);
	struct tracer_bpf *s = p->skel;
	if (exec_off)
		err = attach_backward(p, l, pid, info, ts, &m, &pym);
	if (err >= 0 && evfn_off &&
	    !(err = attach_probe(p, l, m.path, evfn_off, NULL, s->progs.np_node_entry, NULL))) {
		size_t used = strlen(info->probes);
		snprintf(info->probes + used, sizeof(info->probes) - used,
			 ",Engine::evaluate_function");
	}
	if (err < 0) {
		np_warn("cannot attach libtorch probes to pid %d: %s", pid, strerror(-err));
		return err;
	}
	if (!exec_off || !evfn_off)
		np_warn("%s lacks some autograd symbols: backward attribution is partial", m.path);
	info->torch_attached = true;
	return 1;
}

int np_probes_set_pynode_obj(struct np_probes *p, pid_t pid, const struct np_proc_info *info)
{
	struct np_torch_offsets to;
	__u32 key = (__u32)pid;
	if (bpf_map__lookup_elem(p->skel->maps.torch, &key, sizeof(key), &to, sizeof(to), 0))
		return -errno;
	to.pynode_obj = info->pynode_obj;
	if (bpf_map__update_elem(p->skel->maps.torch, &key, sizeof(key), &to, sizeof(to),
				 BPF_EXIST))
		return -errno;
	return 0;
}

int np_probes_add(struct np_probes *p, pid_t pid, struct np_proc_info *info)
{
	memset(info, 0, sizeof(*info));
	info->pid = pid;
	uint64_t eval_off = 0, call_off = 0;
	int err = find_python(pid, info, &eval_off, &call_off);
	if (err)
		return err;
	bool use_call = p->py_probe != NP_PY_PROBE_EVAL && call_off;
	if (p->py_probe == NP_PY_PROBE_CALL && !call_off) {
		np_err("cannot find slot_tp_call in %s (try --python-probe eval)", info->python);
		return -ENOENT;
	}
	const struct np_pyver *v = np_pyver_find(info->py_major, info->py_minor);
	if (!v) {
		np_err("pid %d runs python %d.%d, which nanprof cannot read (known: %s)",
		       pid, info->py_major, info->py_minor, np_pyver_known());
		return -ENOTSUP;
	}
	info->py_verified = v->verified;
	torch_syms_prefetch(p, pid);
	if (!v->verified)
		np_warn("python %d.%d offsets are not verified on a live interpreter: "
			"module names may be missing", v->major, v->minor);
	struct np_proc_entry entry = { .py = v->bpf };
	if (bpf_map__update_elem(p->skel->maps.procs, &(__u32){ (__u32)pid }, sizeof(__u32),
				 &entry, sizeof(entry), BPF_ANY)) {
		err = -errno;
		np_err("cannot track pid %d: %s (more than %d processes?)", pid, strerror(-err),
		       NP_MAX_PROCS);
		return err;
	}
	struct proc_links *l = links_of(p, pid, true);
	if (!l)
		return -ENOSPC;
	struct tracer_bpf *s = p->skel;
	if (use_call)
		err = attach_probe(p, l, info->python, call_off, s->progs.np_call_session,
				   s->progs.np_call_entry, s->progs.np_call_return);
	else
		err = attach_probe(p, l, info->python, eval_off, s->progs.np_py_eval_session,
				   s->progs.np_py_eval_entry, s->progs.np_py_eval_return);
	if (err) {
		np_err("cannot attach uprobe to %s in pid %d: %s", info->python, pid, strerror(-err));
		np_probes_remove(p, pid);
		return err;
	}
	info->py_attached = true;
	snprintf(info->probes, sizeof(info->probes), "%s", use_call ? "slot_tp_call" : SYM_PY_EVAL);
	err = np_probes_add_torch(p, pid, info);
	return err < 0 ? err : 0;
}

int np_probes_add_agent(struct np_probes *p, pid_t pid, struct np_proc_info *info)
{
	if (info->agent_attached)
		return 0;
	struct np_mapping m;
	if (np_proc_find_mapping(pid, "libnanprof_agent.so", &m))
		return -ENOENT;
	struct proc_links *l = links_of(p, pid, true);
	if (!l)
		return -ENOSPC;
	if (l->nlinks + 2 > MAX_LINKS)
		return -ENOSPC;
	struct { struct bpf_program *prog; const char *fn; } probes[] = {
		{ p->skel->progs.np_agent_report_probe, NP_AGENT_REPORT_FN },
		{ p->skel->progs.np_agent_bulk_probe, NP_AGENT_BULK_FN },
	};
	for (int i = 0; i < 2; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = probes[i].fn);
		struct bpf_link *link = bpf_program__attach_uprobe_opts(probes[i].prog, pid, m.path,
								       0, &uo);
		if (!link)
			return -errno;
		l->links[l->nlinks++] = link;
	}
	info->agent_attached = true;
	snprintf(info->agent, sizeof(info->agent), "%s", m.path);
	return 0;
}

void np_probes_remove(struct np_probes *p, pid_t pid)
{
	struct proc_links *l = links_of(p, pid, false);
	if (l) {
		for (int i = 0; i < l->nfds; i++)
			close(l->fds[i]);
		for (int i = 0; i < l->nlinks; i++)
			bpf_link__destroy(l->links[i]);
		memset(l, 0, sizeof(*l));
	}
	bpf_map__delete_elem(p->skel->maps.procs, &(__u32){ (__u32)pid }, sizeof(__u32), 0);
	bpf_map__delete_elem(p->skel->maps.torch, &(__u32){ (__u32)pid }, sizeof(__u32), 0);
}

int np_probes_wakeup_fd(const struct np_probes *p)
{
	return ring_buffer__epoll_fd(p->rb);
}

int np_probes_poll(struct np_probes *p)
{
	return ring_buffer__consume(p->rb);
}

void np_probes_counters(struct np_probes *p, uint64_t out[NP_CNT_MAX])
{
	int ncpu = libbpf_num_possible_cpus();
	memset(out, 0, sizeof(uint64_t) * NP_CNT_MAX);
	if (ncpu <= 0)
		return;
	uint64_t *vals = calloc((size_t)ncpu, sizeof(uint64_t));
	if (!vals)
		return;
	for (__u32 k = 0; k < NP_CNT_MAX; k++) {
		if (bpf_map__lookup_elem(p->skel->maps.counters, &k, sizeof(k), vals,
					 sizeof(uint64_t) * (size_t)ncpu, 0))
			continue;
		for (int c = 0; c < ncpu; c++)
			out[k] += vals[c];
	}
	free(vals);
}

void np_probes_close(struct np_probes *p)
{
	if (!p)
		return;
	for (int i = 0; i < NP_MAX_PROCS; i++)
		if (p->procs[i].pid && p->skel)
			np_probes_remove(p, p->procs[i].pid);
	for (int i = 0; i < NP_MAX_TORCH_LIBS; i++)
		np_elf_close(p->torch_cache[i].elf);
	ring_buffer__free(p->rb);
	bpf_link__destroy(p->exit_link);
	tracer_bpf__destroy(p->skel);
	free(p);
}
