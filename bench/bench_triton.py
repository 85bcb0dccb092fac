"""bench_triton.py - the launching thread's CPU time per Triton launch on
the fake CUDA driver: a torch.compile'd kernel through torch's own
CachingAutotuner.run (tests/integration/fake_inductor.py), or (jit) a
user's @triton.jit kernel through Triton's own JITFunction.run
(tests/integration/fake_triton_jit.py; triton on PYTHONPATH): what the
agent's wrapper of run() and its launch callback cost (cupti/triton.h,
agent/triton_jit.py).  bench_triton.sh runs it without the agent, with
it, and with it but run() left alone (NANPROF_AGENT_SKIP=triton).

  python3 bench/bench_triton.py LIBFAKEOPS ITERS wrapped|plain [inductor|jit]

Prints "run_ns N": thread CPU ns per launch, after a warm-up.
"""
import ctypes
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))
import torch  # noqa: E402  (the agent installs once torch is imported)
import torch.nn  # noqa: E402,F401
import torch.optim  # noqa: E402,F401

from fake_inductor import DeviceTensor, inductor_kernel  # noqa: E402

N = 256                 # elements per launch: the fake's kernel work stays small


def main():
    lib, iters, want = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    jit = sys.argv[4:] == ["jit"]
    if jit:
        import triton.runtime.jit as J
        wrapped_run = lambda: J.JITFunction.run  # noqa: E731
    else:
        from torch._inductor.runtime.triton_heuristics import CachingAutotuner
        wrapped_run = lambda: CachingAutotuner.run  # noqa: E731
    ops = ctypes.CDLL(lib)
    ops.fo_tri_buf.restype = ctypes.c_ulonglong
    ops.fo_tri_launch.argtypes = [ctypes.c_int, ctypes.c_ulonglong, ctypes.c_ulonglong,
                                  ctypes.c_int]
    if ops.fo_init():
        sys.exit("bench_triton: fake CUDA init failed")
    agent = "LD_PRELOAD" in os.environ
    deadline = time.monotonic() + 20
    # under the agent: CUPTI subscribed, and run() wrapped when wanted
    # (the agent looks for Inductor after each optimizer step, as a
    # training job takes them)
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    while agent and time.monotonic() < deadline:
        opt.step()
        wrapped = getattr(wrapped_run(), "_nanprof", False)
        if ops.fo_subscribed() and (wrapped or want != "wrapped"):
            break
        time.sleep(0.02)
    else:
        if agent:
            sys.exit("bench_triton: the agent did not subscribe or wrap run()")
    y, t = DeviceTensor(ops.fo_tri_buf(0), N), DeviceTensor(ops.fo_tri_buf(1), N)
    if jit:
        from fake_triton_jit import user_kernels
        y.dtype = t.dtype = torch.float32   # Triton's binder asks
        exp = user_kernels(ops)[0][((N + 127) // 128,)]

        def launch():
            exp(y, t, N, BLOCK=128)
    else:
        k = inductor_kernel(ops, "triton_poi_fused_exp_0", 0)

        def launch():
            k.run(y, t, N, stream=0)
    for _ in range(min(iters, 2000)):
        launch()
    t0 = time.thread_time_ns()
    for _ in range(iters):
        launch()
    t1 = time.thread_time_ns()
    print("run_ns %.1f" % ((t1 - t0) / iters))


if __name__ == "__main__":
    main()
