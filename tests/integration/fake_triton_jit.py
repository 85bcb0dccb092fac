"""A user's @triton.jit kernels on the fake driver: real Triton (its own
JITFunction, binder and run(), the function the agent wraps), with only
what needs a GPU replaced: the driver's device and target, and the
compiler, whose kernel's launch is the fake's.  For fake_gpu_job.py
--triton jit and triton_jit_check.py; needs triton (no GPU).
"""
import triton
import triton.language as tl
from triton.runtime import driver


class FakeDriver:
    """What JITFunction.run asks of Triton's driver before it compiles."""
    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0

    def get_current_target(self):
        from triton.backends.compiler import GPUTarget
        return GPUTarget("cuda", 90, 32)

    def get_benchmarker(self):
        """Autotuning's timer (older Triton asks for it even when a
        kernel brings its own): one call, made-up times."""
        def bench(kernel_call, quantiles=None, **k):
            kernel_call()
            return [1.0, 1.0, 1.0] if quantiles else 1.0
        return bench


class Compiled:
    """A kernel past Triton's compiler: launch(*args) is its launch, args
    as Triton's launcher gets them (grid, stream, function, metadata,
    hooks, then the kernel's arguments)."""
    function = 1
    packed_metadata = None

    def __init__(self, launch):
        self.launch = launch

    def launch_metadata(self, *a):
        return None

    def run(self, *a):
        self.launch(*a)


def without_compiler(jit, launch):
    """jit's launches go to launch(*args) instead of a compiled kernel,
    cached as Triton caches what it compiled (later launches take
    run()'s fast path, as on a GPU)."""
    if hasattr(jit, "_do_compile"):   # Triton 3.3 and later
        def compile_(key, signature, device, *a, **k):
            kernel = Compiled(launch)
            jit.device_caches[device][0][key] = kernel
            return kernel
        jit.device_caches.clear()   # what was compiled before: forgotten
        jit._do_compile = compile_
        return jit
    # older: run() calls self.compile, set by create_binder, and caches
    # its result in self.cache itself
    binder = type(jit).create_binder

    def create_binder(*a, **k):
        r = binder(jit, *a, **k)
        jit.compile = lambda *a, **k: Compiled(launch)
        return r
    jit.create_binder = create_binder
    jit.binder = None
    jit.cache.clear()
    return jit


def use_fake_driver():
    driver.set_active(FakeDriver())


@triton.jit
def user_exp_kernel(in_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.exp(tl.load(in_ptr + offs, mask=offs < n)), mask=offs < n)


@triton.jit
def user_mul_kernel(in_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(in_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def user_kernels(ops):
    """The two kernels, launched as the fake's Triton kernels 2 and 3
    (libfakeops.so fo_tri_launch)."""
    use_fake_driver()
    for k, jit in ((2, user_exp_kernel), (3, user_mul_kernel)):
        def launch(*a, k=k):
            inp, out, n = a[9:12]
            if ops.fo_tri_launch(k, inp.data_ptr(), out.data_ptr(), n):
                raise RuntimeError("fake_gpu_job: a Triton launch failed")
        without_compiler(jit, launch)
    return user_exp_kernel, user_mul_kernel
