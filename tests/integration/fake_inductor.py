"""torch.compile's Triton kernels on the fake driver: a fake device
buffer as Inductor's run() gets a CUDA tensor, and an Inductor kernel as
its generated code holds it (torch's own CachingAutotuner, its launcher
the fake's libfakeops.so fo_tri_launch).  For fake_gpu_job.py --triton
and bench/bench_triton.sh; needs a torch with Inductor (2.x).
"""
import ctypes
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


def inductor_kernel(ops, name, k, n_in=1):
    """An Inductor kernel as its generated code holds it: torch's own
    CachingAutotuner, with a pointwise kernel's signature (in_ptr0 ..
    in_ptr{n_in - 1}, out_ptr0, xnumel), past autotuning (its launcher
    cached, as after a first run), the launcher the fake's Triton kernel
    k, or with n_in > 1 its fused sum (fo_tri_launch_sum)."""
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner
    ins = ["in_ptr%d" % i for i in range(n_in)]
    t = CachingAutotuner.__new__(CachingAutotuner)
    t.fn = types.SimpleNamespace(__name__=name,
                                 arg_names=ins + ["out_ptr0", "xnumel", "XBLOCK"])
    sig = {a: "*fp32" for a in ins}
    sig.update({"out_ptr0": "*fp32", "xnumel": "i32", "XBLOCK": "constexpr"})
    t.triton_meta = {"signature": sig}
    t.inductor_meta = {}
    t.mutated_arg_names = []

    def launch(*args, stream):
        *bufs, out, n = args
        if n_in == 1:
            failed = ops.fo_tri_launch(k, bufs[0].data_ptr(), out.data_ptr(), n)
        else:
            ptrs = (ctypes.c_ulonglong * n_in)(*(b.data_ptr() for b in bufs))
            failed = ops.fo_tri_launch_sum(ptrs, out.data_ptr(), n)
        if failed:
            sys.exit("fake_gpu_job: a Triton launch failed")

    t._cached_launcher = launch
    return t
