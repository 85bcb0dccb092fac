"""The agent's wrapper of Inductor's CachingAutotuner.run (agent/bootstrap.h),
run as the agent runs it, on torch's own class, with its calls into the
agent recorded: what plan each launch hands over, and that the job's
launch happens once, whatever goes wrong in the wrapper.

  python3 tests/integration/triton_wrapper_check.py

Prints one line per check ("ok ..." or "FAIL ..."); exit 1 if any failed.
"""
import functools
import importlib
import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from torch._inductor.runtime.triton_heuristics import CachingAutotuner  # noqa: E402

from agent_python import bootstrap, check, failed  # noqa: E402
from fake_inductor import DeviceTensor  # noqa: E402


def kernel(name, sig, launched, mutated=()):
    """A CachingAutotuner past autotuning, as Inductor's code holds it."""
    t = CachingAutotuner.__new__(CachingAutotuner)
    t.fn = types.SimpleNamespace(__name__=name, arg_names=[n for n, _ in sig])
    t.triton_meta = {"signature": dict(sig)}
    t.inductor_meta = {}
    t.mutated_arg_names = list(mutated)

    def launch(*a, stream):
        launched.append(a)
    t._cached_launcher = launch
    return t


def main():
    ns = {}
    exec(bootstrap(), ns)
    plans, dones = [], []
    ns["_nanprof_set_triton"](lambda name, flat: plans.append((name, flat)),
                              lambda: dones.append(1))
    orig = CachingAutotuner.__dict__["run"]
    undo = []
    check("wrapped once Inductor is loaded", ns["wrap_triton"](functools, undo) is True)
    check("wrapping again is a no-op", ns["wrap_triton"](functools, undo) is True and len(undo) == 1)
    launched = []

    # a pointwise kernel: one read, one output of xnumel elements
    poi = kernel("triton_poi_fused_exp_0", [("in_ptr0", "*fp32"), ("in_ptr1", "*bf16"),
                                            ("out_ptr0", "*fp32"), ("xnumel", "i32"),
                                            ("XBLOCK", "constexpr")], launched)
    a, b, out = DeviceTensor(0x1000, 64), DeviceTensor(0x2000, 8), DeviceTensor(0x3000, 64)
    poi.run(a, b, out, 64, stream=0)
    check("the launch happened once", len(launched) == 1)
    check("a pointwise launch's plan: reads and the output",
          plans[-1] == ("triton_poi_fused_exp_0",
                        (0, 0x1000, 64, "*fp32", 0, 0x2000, 8, "*bf16", 1, 0x3000, 64, "*fp32")),
          repr(plans[-1]))
    check("done() after the launch", len(dones) == 1)

    # an output of another size than xnumel: written in part (a slice of
    # a cat through strides): no output in the plan
    n = len(plans)
    poi.run(a, b, DeviceTensor(0x3000, 128), 64, stream=0)
    check("an output of another size is left out", all(r != 1 for r in plans[n][1][0::4]),
          repr(plans[n:]))
    # a CPU tensor and a non-contiguous one are no device ranges
    n = len(plans)
    poi.run(torch.zeros(64), b, torch.zeros(64, 2).t(), 64, stream=0)
    check("CPU and non-contiguous tensors are left out",
          plans[n][1] == (0, 0x2000, 8, "*bf16"), repr(plans[n:]))

    # a reduction writing its result (xnumel) in place over its old
    # values, and a normalisation's per-element output (x * r0)
    red = kernel("triton_per_fused_native_layer_norm_0",
                 [("in_out_ptr0", "*fp32"), ("in_ptr0", "*fp32"), ("out_ptr0", "*fp32"),
                  ("out_ptr1", "*i64"), ("xnumel", "i32"), ("r0_numel", "i32")], launched)
    red.run(DeviceTensor(0x4000, 8), DeviceTensor(0x5000, 256), DeviceTensor(0x6000, 256),
            DeviceTensor(0x7000, 8), 8, 32, stream=0)
    check("in_out_ptr updated, x * r0 output taken, integer pointers passed on",
          plans[-1][1] == (2, 0x4000, 8, "*fp32", 0, 0x5000, 256, "*fp32",
                           1, 0x6000, 256, "*fp32", 1, 0x7000, 8, "*i64"), repr(plans[-1]))
    mut = kernel("triton_poi_fused_add_1", [("in_ptr0", "*fp32"), ("out_ptr0", "*fp32"),
                                            ("xnumel", "i32")], launched, mutated=["in_ptr0"])
    mut.run(DeviceTensor(0x8000, 16), DeviceTensor(0x9000, 16), 16, stream=0)
    check("a mutated argument is updated, not read", plans[-1][1][0] == 2, repr(plans[-1]))

    # a kernel with no xnumel (a template, a combo kernel): reads only
    tem = kernel("triton_tem_fused_mm_0", [("arg_A", "*fp32"), ("arg_B", "*fp32"),
                                           ("out_ptr0", "*fp32")], launched)
    tem.run(DeviceTensor(0xa000, 16), DeviceTensor(0xb000, 16), DeviceTensor(0xc000, 16),
            stream=0)
    check("no xnumel: no output", all(r == 0 for r in plans[-1][1][0::4]), repr(plans[-1]))

    # what goes wrong in the wrapper never stops the launch, nor repeats it
    before = len(launched)
    odd = kernel("x", [("out_ptr0", "*fp32"), ("xnumel", "i32")], launched)
    del odd.fn.__name__                       # an Inductor this does not know
    odd.run(DeviceTensor(0xd000, 4), 4, stream=0)
    check("a spec that cannot be read: launched once", len(launched) == before + 1)
    check("... and never read again", odd.__dict__.get("_nanprof_spec") is False)

    def boom(name, flat):
        raise RuntimeError("agent")
    ns["TRITON"][0] = boom
    poi.run(a, b, out, 64, stream=0)
    check("a failing hand-over: launched once", len(launched) == before + 2)

    def fails(*a, stream):
        launched.append(a)
        raise ValueError("launch")
    poi._cached_launcher = fails
    d = len(dones)
    try:
        poi.run(a, b, out, 64, stream=0)
        raised = False
    except ValueError:
        raised = True
    check("the launch's own error reaches the caller, launched once, plan cleared",
          raised and len(launched) == before + 3 and len(dones) == d + 1)

    for u in reversed(undo):
        u()
    check("uninstall puts run() back", CachingAutotuner.__dict__["run"] is orig)
    import_later(ns)
    sys.exit(1 if failed else 0)


def import_later(ns):
    """Inductor imported after the install (an inference job's first
    compile, with no optimizer step to look after): its run() is wrapped
    as soon as its module has run, and the import is otherwise the same."""
    name = ns["TRITON_MODULE"]
    saved = sys.modules.pop(name)
    before = list(sys.meta_path)
    undo = []

    class NoHooks:   # a torch whose optimizers have no global hooks
        pass
    ns["wrap_triton_later"](functools, NoHooks, undo)
    check("not loaded: a watch is first on sys.meta_path",
          len(sys.meta_path) == len(before) + 1 and sys.meta_path[1:] == before)
    import json.tool  # noqa: F401  (another import, not yet loaded: the watch passes it on)
    check("other imports pass through", "json.tool" in sys.modules)
    try:
        m = importlib.import_module(name)
        run = m.CachingAutotuner.__dict__["run"]
        check("a fresh import: its CachingAutotuner.run wrapped",
              m is not saved and getattr(run, "_nanprof", False))
        check("the watch is gone once it wrapped", sys.meta_path == before)
        check("the module still knows its source", bool(m.__loader__.get_source(name)),
              repr(m.__loader__))
        for u in reversed(undo):
            u()
        check("uninstall puts the fresh run() back",
              not getattr(m.CachingAutotuner.__dict__["run"], "_nanprof", False))
    finally:
        sys.modules[name] = saved
        sys.meta_path[:] = before


if __name__ == "__main__":
    main()
