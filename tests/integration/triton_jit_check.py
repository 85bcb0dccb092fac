"""The agent's reading of user @triton.jit kernels and its wrapper of
JITFunction.run (agent/triton_jit.py), run as the agent runs it (in the
bootstrap's namespace), on real Triton: its own JITFunction, binder and
run(), with only the compiler and the launch replaced (there is no GPU
here: tests/integration/fake_triton_jit.py) and the agent's calls
recorded.

  PYTHONPATH=<a directory holding triton> python3 tests/integration/triton_jit_check.py

Prints one line per check ("ok ..." or "FAIL ..."); exit 1 if any failed.
"""
import functools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

from agent_python import check, failed, namespace as agent_namespace  # noqa: E402


class Tensor:
    """A CUDA tensor as Triton's binder and the wrapper see one."""
    is_cuda = True

    def __init__(self, ptr, n, dtype=torch.float32, contiguous=True):
        self.ptr, self.n, self.dtype, self.contiguous = ptr, n, dtype, contiguous

    def data_ptr(self):
        return self.ptr

    def numel(self):
        return self.n

    def is_contiguous(self):
        return self.contiguous


launched = []


def record(*a):
    launched.append(a)


def specs(ns):
    import triton_jit_kernels as K
    for jit, want in K.WRITES.items():
        if want is None:
            s = ns["jit_spec"](jit, frozenset(K.GIVEN[jit.__name__]))
            check("%s: a pointer not followed: not known" % jit.__name__, s is None, repr(s))
            continue
        s = ns["jit_spec"](jit, frozenset(want))
        got = {jit.arg_names[i]: r for i, r in s[1]} if s else {}
        check("%s: what its source writes and reads" % jit.__name__,
              s is not None and s[0] == jit.__name__ and got == want, repr(s))
    s = ns["jit_spec"](K.copy_tma, frozenset(("amax_ptr",)))
    check("a store through a parameter not taken for a tensor: not known", s is None, repr(s))
    w = ns["jit_whole"]
    check("whole: an element count passed", w(1000, [1000, 128]))
    check("whole: rows x columns, one program per row", w(4 * 96, [96, 128, 4]))
    check("whole: three sizes", w(2 * 3 * 64, [2, 3, 64]))
    check("not whole: no product of the sizes", not w(4 * 128 * 64, [5, 64, 4]))


def launches(ns):
    import triton
    import triton.runtime.jit as J
    import triton_jit_kernels as K
    plans, dones = [], []
    ns["TRITON"][:] = [lambda name, flat: plans.append((name, flat)), lambda: dones.append(1)]
    orig = J.JITFunction.__dict__["run"]
    undo = []
    check("wrapped once triton is loaded", ns["wrap_jit"](functools, undo) is True)
    check("wrapping again is a no-op", ns["wrap_jit"](functools, undo) is True and len(undo) == 1)
    from fake_triton_jit import without_compiler
    for jit in K.WRITES:
        without_compiler(jit, record)

    x, y, o = Tensor(0x1000, 1000), Tensor(0x2000, 1000), Tensor(0x3000, 1000)
    K.add_kernel[lambda m: (triton.cdiv(1000, m["BLOCK_SIZE"]),)](x, y, o, 1000, BLOCK_SIZE=128)
    check("launched once, through Triton's own run()", len(launched) == 1 and
          launched[-1][:3] == (8, 1, 1), repr(launched[-1][:3]))
    check("the plan: reads, then the output, from the source",
          plans == [("add_kernel", (0, 0x1000, 1000, "*fp32", 0, 0x2000, 1000, "*fp32",
                                    1, 0x3000, 1000, "*fp32"))], repr(plans))
    check("done() after the launch", len(dones) == 1)

    try:
        from triton.tools.tensor_descriptor import TensorDescriptor   # Triton 3.4+
    except ImportError:
        TensorDescriptor = None
    if TensorDescriptor is None:
        print("skip host TensorDescriptors: this Triton has none")
    elif hasattr(torch.float32, "itemsize"):   # TensorDescriptor asks (torch >= 2.1)
        src, dst = Tensor(0xd000, 256 * 64), Tensor(0xe000, 256 * 64)
        n = len(plans)
        K.copy_tma[(4,)](TensorDescriptor(src, [256, 64], [64, 1], [64, 64]),
                         TensorDescriptor(dst, [256, 64], [64, 1], [64, 64]),
                         Tensor(0xf000, 4), BLOCK=64)
        check("host TensorDescriptors: their base tensors planned",
              plans[n:] == [("copy_tma", (0, 0xd000, 256 * 64, "*fp32", 1, 0xe000, 256 * 64,
                                          "*fp32", 1, 0xf000, 4, "*fp32"))], repr(plans[n:]))
    else:
        print("skip host TensorDescriptors: this torch's dtypes have no itemsize")

    n = len(plans)
    K.loss_maybe_z[(1,)](x, Tensor(0x10000, 1), None, 1000, HAS_Z=False, BLOCK=1024)
    check("an optional output passed as None: left out, the rest planned",
          plans[n:] == [("loss_maybe_z", (0, 0x1000, 1000, "*fp32", 1, 0x10000, 1, "*fp32"))],
          repr(plans[n:]))

    n, d, before = len(plans), len(dones), len(launched)
    K.add_tuned[lambda m: (triton.cdiv(1000, m["BLOCK_SIZE"]),)](x, y, o, 1000)
    check("autotuned: each launch planned (two timed, then the chosen one)",
          len(launched) == before + 3 and len(dones) == d + 3 and
          plans[n:] == [("add_tuned", (0, 0x1000, 1000, "*fp32", 0, 0x2000, 1000, "*fp32",
                                       1, 0x3000, 1000, "*fp32"))] * 3,
          "%d launches, plans %r" % (len(launched), plans[n:]))

    rows, cols = 6, 96
    Y, X = Tensor(0x4000, rows * cols, torch.bfloat16), Tensor(0x5000, rows * cols, torch.bfloat16)
    W, R = Tensor(0x6000, cols, torch.bfloat16), Tensor(0x7000, rows)
    K.rms_norm_fwd[(rows,)](Y, cols, X, cols, W, 0, R, 1, cols, 1e-6, BLOCK_SIZE=128)
    check("rows: Y (grid x n_cols) and RSTD (grid) written whole, strides left out",
          plans[-1] == ("rms_norm_fwd", (1, 0x4000, rows * cols, "*bf16", 0, 0x5000, rows * cols,
                                         "*bf16", 0, 0x6000, cols, "*bf16",
                                         1, 0x7000, rows, "*fp32")), repr(plans[-1]))

    L = Tensor(0x8000, 4 * 96, torch.float16)
    T = Tensor(0x9000, 4 * 96, torch.float16)
    K.cross_entropy_fwd[(4,)](L, T, Tensor(0xa000, 4, torch.int64), 96, 96, -100, BLOCK=128)
    check("in place over its old values: role 2; an int64 target left out",
          plans[-1][1] == (2, 0x8000, 4 * 96, "*fp16", 1, 0x9000, 4 * 96, "*fp16"),
          repr(plans[-1]))

    n = len(plans)
    d = len(dones)
    B, Lmax, D = 4, 128, 64
    cache = Tensor(0xb000, B * Lmax * D)
    before = len(launched)
    K.kv_cache_append[(B,)](cache, Tensor(0xc000, B * D), 5, Lmax * D, D, D=D)
    check("a write into part of a tensor (a cache's one position): no plan, launched",
          len(plans) == n and len(dones) == d and len(launched) == before + 1)

    K.add_kernel[(8,)](x, y, Tensor(0x3000, 1000, contiguous=False), 1000, BLOCK_SIZE=128)
    check("an output not dense: no plan", len(plans) == n)
    before = len(launched)
    K.asm_pointers[(1,)](o, x, 1000, BLOCK=1024)
    check("a kernel not known: no plan, launched", len(plans) == n and len(launched) == before + 1)
    K.add_kernel.run(x, y, o, 1000, BLOCK_SIZE=128, grid=(8,), warmup=True)
    check("warmup (compile only): no plan", len(plans) == n)

    def boom(name, flat):
        raise RuntimeError("agent")
    ns["TRITON"][0] = boom
    before = len(launched)
    K.add_kernel[(8,)](x, y, o, 1000, BLOCK_SIZE=128)
    check("a failing hand-over: launched once", len(launched) == before + 1)
    ns["TRITON"][0] = lambda name, flat: plans.append((name, flat))

    def fails(*a):
        launched.append(a)
        raise ValueError("launch")
    without_compiler(K.add_kernel, fails)
    d = len(dones)
    try:
        K.add_kernel[(8,)](x, y, o, 1000, BLOCK_SIZE=128)
        raised = False
    except ValueError:
        raised = True
    check("the launch's own error reaches the caller, plan cleared",
          raised and len(launched) == before + 2 and len(dones) == d + 1)

    for u in reversed(undo):
        u()
    check("uninstall puts run() back", J.JITFunction.__dict__["run"] is orig)


def compiled_graph(ns):
    """A user's kernel in a torch.compile'd graph: Inductor's own
    CachingAutotuner with custom_kernel, its fn the kernel, run() given
    the kernel's arguments (constexprs left out, or not: older Triton),
    then the grid (torch/_inductor/ir.py); the wrapper of run() as the
    agent installs it."""
    try:
        from torch._inductor.runtime.triton_heuristics import CachingAutotuner
    except ImportError:
        print("skip compiled graphs: this torch has no Inductor")
        return
    import triton_jit_kernels as K
    plans = []
    ns["TRITON"][:] = [lambda name, flat: plans.append((name, flat)), lambda: None]
    undo = []
    check("Inductor's run() wrapped", ns["wrap_triton"](functools, undo) is True)

    def autotuner(jit):
        t = CachingAutotuner.__new__(CachingAutotuner)
        t.fn, t.triton_meta, t.inductor_meta = jit, {"signature": {}}, {}
        t.mutated_arg_names, t.custom_kernel = [], True
        t._cached_launcher = lambda *a, stream: launched.append(a)
        return t

    rows, cols = 6, 96
    Y, X = Tensor(0x4000, rows * cols, torch.bfloat16), Tensor(0x5000, rows * cols, torch.bfloat16)
    W, R = Tensor(0x6000, cols, torch.bfloat16), Tensor(0x7000, rows)
    before = len(launched)
    autotuner(K.rms_norm_fwd).run(Y, cols, X, cols, W, 0, R, 1, cols, 1e-6, rows, stream=0)
    check("compiled graph: a user's kernel planned from its source, the grid its last argument",
          plans == [("rms_norm_fwd", (1, 0x4000, rows * cols, "*bf16", 0, 0x5000, rows * cols,
                                      "*bf16", 0, 0x6000, cols, "*bf16",
                                      1, 0x7000, rows, "*fp32"))] and
          len(launched) == before + 1, repr(plans))
    x, y = Tensor(0x1000, 1000), Tensor(0x2000, 1000)
    want = [("mid_constexpr", (0, 0x1000, 1000, "*fp32", 1, 0x2000, 1000, "*fp32"))]
    del plans[:]
    autotuner(K.mid_constexpr).run(x, y, 1000, 8, stream=0)
    check("compiled graph: constexprs left out of the call", plans == want, repr(plans))
    del plans[:]
    autotuner(K.mid_constexpr).run(x, 2.0, y, 1000, 128, 8, stream=0)
    check("compiled graph: constexprs in the call (older Triton)", plans == want, repr(plans))
    del plans[:]
    autotuner(K.mid_constexpr).run(1000, x, y, 8, stream=0)
    check("compiled graph: tensors where the source has no pointers: no plan", plans == [],
          repr(plans))
    plain = autotuner(K.add_kernel)
    plain.custom_kernel = False
    del plans[:]
    plain.run(x, y, Tensor(0x3000, 1000), 1000, stream=0)
    check("an Inductor kernel of its own (no custom_kernel): not read from source",
          plans == [], repr(plans))
    for u in reversed(undo):
        u()


def import_later():
    """triton imported after the install (a fresh process: triton's C
    extension loads once): JITFunction.run is wrapped as soon as its
    module has run."""
    ns = agent_namespace()
    ns["TRITON"][:] = [lambda name, flat: None, lambda: None]
    before = list(sys.meta_path)
    undo = []

    class NoHooks:   # a torch whose optimizers have no global hooks
        pass
    ns["wrap_triton_later"](functools, NoHooks, undo)
    check("not loaded: its watch goes first on sys.meta_path",
          "triton" not in sys.modules and len(sys.meta_path) > len(before) and
          sys.meta_path[len(sys.meta_path) - len(before):] == before)
    import triton.runtime.jit as J
    check("imported: its JITFunction.run wrapped",
          getattr(J.JITFunction.__dict__["run"], "_nanprof", False))
    for u in reversed(undo):
        u()
    # (an import may add finders of its own: only the agent's must go)
    watches = [f for f in sys.meta_path if "watch_import" in getattr(f, "__qualname__", "")]
    check("uninstall puts run() back and the watches away",
          not getattr(J.JITFunction.__dict__["run"], "_nanprof", False) and not watches,
          repr(sys.meta_path))
    sys.exit(1 if failed else 0)


def main():
    import subprocess
    import torch  # noqa: F401  (as a job has it: the agent installs after torch)
    from fake_triton_jit import use_fake_driver
    use_fake_driver()
    ns = agent_namespace()
    specs(ns)
    launches(ns)
    compiled_graph(ns)
    sys.stdout.flush()
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--import-later"])
    sys.exit(1 if failed or r.returncode else 0)


if __name__ == "__main__":
    import_later() if sys.argv[1:] == ["--import-later"] else main()
