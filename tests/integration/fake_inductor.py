"""torch.compile's Triton kernels on the fake driver: a fake device
buffer as Inductor's run() gets a CUDA tensor, and an Inductor kernel as
its generated code holds it (torch's own CachingAutotuner, its launcher
the fake's libfakeops.so fo_tri_launch).  For fake_gpu_job.py --triton
and bench/bench_triton.sh; needs a torch with Inductor (2.x).
"""
import sys
import types


class DeviceTensor:
    """A fake device buffer as Inductor's run() gets a CUDA tensor: what
    the agent's wrapper asks of one."""
    is_cuda = True

    def __init__(self, ptr, n):
        self.ptr, self.n = ptr, n

    def data_ptr(self):
        return self.ptr

    def numel(self):
        return self.n

    def is_contiguous(self):
        return True


def inductor_kernel(ops, name, k):
    """An Inductor kernel as its generated code holds it: torch's own
    CachingAutotuner, with a pointwise kernel's signature (in_ptr0,
    out_ptr0, xnumel), past autotuning (its launcher cached, as after a
    first run), the launcher the fake's Triton kernel k."""
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner
    t = CachingAutotuner.__new__(CachingAutotuner)
    t.fn = types.SimpleNamespace(__name__=name,
                                 arg_names=["in_ptr0", "out_ptr0", "xnumel", "XBLOCK"])
    t.triton_meta = {"signature": {"in_ptr0": "*fp32", "out_ptr0": "*fp32", "xnumel": "i32",
                                   "XBLOCK": "constexpr"}}
    t.inductor_meta = {}
    t.mutated_arg_names = []

    def launch(inp, out, n, stream):
        if ops.fo_tri_launch(k, inp.data_ptr(), out.data_ptr(), n):
            sys.exit("fake_gpu_job: a Triton launch failed")

    t._cached_launcher = launch
    return t
