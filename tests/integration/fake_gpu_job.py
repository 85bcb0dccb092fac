"""A PyTorch training job whose modules launch CUDA kernels on the fake
driver (tests/fakecuda/fake_ops.c, through ctypes): the whole GPU path of
nanprof without a GPU.  blocks.0.attn makes a -inf mask that spreads inside
it and is overwritten; blocks.0.gate computes exp(), which overflows at
step --at; head reads the gate's output.  With --fault backward the gate's
exp() runs in the backward of an autograd.Function inside blocks.0.gate,
and the training loop reads its output after backward().  The optimizer
steps a real (CPU) parameter, so nanprof counts steps as in any job.

With --modules (run with FAKE_CUPTI_TAKEN=1: another tool holds CUPTI, so
the agent sees no launch) each module also returns the fake device buffer
it wrote, as a tensor that tells the agent it is a CUDA tensor at that
address: the agent's hooks check it at module level.  attn returns its
finite scores (the mask stays inside), gate its exp() output, head the sum
that reads it.

With --modules --opaque --stale, attn fills the gate's output buffer with
-inf at step --at (a decoded fill: a birth, known dirty) just before the
gate's undecoded exp overwrites it: the buffer's old dirtiness must not
make the exp's overflow look like propagation.

With --opaque the gate's exp runs in a kernel no decoder can read (a
cuBLAS-like C name and one opaque argument struct): its output is never
checked at launch, only at the gate's module output (--modules with
NANPROF_GPU_MODE=every+modules).

With --opaque --inplace the gate then doubles that output in place
(torch's vectorized multiply by a scalar, e *= 2): the first decoded
kernel to read the undecoded kernel's output overwrites it, so the
generic tier must check it before that launch runs, or the multiply
looks like the birth.  --inplace add: e += x instead, the same kernel
head's add runs: its propagation out of the gate must still be
reported, though the same kernel's inside the gate was.

With --copy the gate clones its exp() output (cuMemcpyAsync, device to
device: no kernel) and head reads the clone: the copy must carry the
value's dirtiness, or head's add looks like the birth.

With --cat the gate concatenates half of its exp() output with half of x
(torch.cat's kernel) and head reads the result: the cat must carry the
dirtiness too.  --cat-split does it in two launches, one input each, as
torch.cat does past 128 inputs: each launch's part of the output is
checked on its own.  --cat-wide concatenates 20 tensors along dim 1, the
exp's output the 19th: more inputs than a check keeps, so the cat is
taken as a copy of the origin's values, not as a birth.

With --clip, after backward() the job runs clip_grad_norm_'s kernels
(torch._foreach_norm: a multi_tensor_apply LpNormFunctor no decoder
reads, then lpnorm_cleanup) over a gradient whose squares overflow at
step --at, and the optimizer's step reads the result: the generic tier
must name the LpNormFunctor launch, seen where lpnorm_cleanup reads its
partial sums.

With --sdpa, blocks.0.attn runs attention: attn.qkv a projection in a
kernel no decoder reads, whose output's three slices are q, k and v, and
attn.core torch's memory-efficient SDPA kernel on them; head reads the
attention's output, and the gate stays finite.  --sdpa qkv: at step --at
the projection overflows (+inf in q, k, v), which only the generic tier
sees, when the attention kernel reads them: the origin is the projection
in attn.qkv, not the attention in attn.core.  --sdpa scores: q and k are
1e20 (finite), every score +inf, and the attention kernel makes the NaN.
--sdpa pre: as qkv, after attn.pre ran the same projection kernel into
the same buffer (finite): the kernel launches twice a step, so that
under --gpu sample:2 the launch in attn.qkv is always sampled out (and
must still be noted for the generic tier), the one in attn.pre never.
--sdpa pre-named: as pre, the projection a kernel whose signature names
its pointers (a known family) but whose output no decoder sizes: noted
when sampled out too, as no launch of it was ever checked.

With --mlp, blocks.0.attn is an MLP whose two matmuls (attn.fc1, then
attn.fc2 reading fc1's output) call the fake cuBLAS (--gemm: sgemm,
gemmex, batched, lt, sgemmex; or as a matrix-vector product per column
(gemv), a dot product per element (dot), a copy then a triangular solve
in place (trsm)), whose kernels' parameters are opaque; head reads
the MLP's output.  --mlp gemm: at step --at the MLP's input is 3e37
(a decoded fill) and fc1's product overflows (split-K: its last kernel
writes it), then fc2 makes NaN of it: only the agent's view of the cuBLAS
call names fc1 (the generic tier alone names fc2, the last undecoded
writer before head's decoded add).  --mlp input: the input is made +inf
by an undecodable kernel in attn itself, which fc1's call reads: the
call's reads name that kernel, not fc1.  --mlp spectral (and
spectral-legacy, spectral-many): attn is a Fourier layer's tail, in attn
itself: the complex64 product of cublasCgemm_v2, then irfft through a
fake cuFFT (torch's cufftXtMakePlanMany and cufftXtExec; the legacy
cufftPlan1d, or cufftMakePlanMany64 with embeds, and cufftExecC2R),
whose kernel's parameters are opaque, then irfft's
normalisation, a decoded multiply in place.  At step --at the product
overflows: only the agent's view of the cuFFT call carries it to the
multiply (without it the multiply looks born, the H200's run-spectral).
--mlp spectral-unseen: the plan is made where the agent cannot see it
(as torch's cached plans before `nanprof attach`): the transform's
addresses go to the generic tier, and its first reader, the
normalisation in place, has its output checked as the transform's
before it runs.

With --gn, blocks.0.attn is a convolution (attn.conv: a kernel no
decoder reads, as cuDNN's) and a GroupNorm (attn.norm: torch's
RowwiseMomentsCUDAKernel reads the convolution's output for its
statistics, then an add); head reads the norm's output.  At step --at
the convolution overflows: the GroupNorm's statistics kernel, read as
group norm's, lets the generic tier name the convolution.

With --devices 2 (run with FAKE_CUDA_DEVICES=2) the model is split over
two devices, as `device_map="auto"` splits one: the gate runs on cuda:1
(fake_ops.c's fo_gate_dev1: its own buffers there), its output copied
to cuda:0, where head reads it.  The job keeps device 0 current between
ops, as torch does, so the agent's work for device 1 (a deferred list
flushed at the job's synchronisation, a module-level check of the
gate's cuda:1 output with --modules) must be done in device 1's context:
on the fake, as on a GPU, anything else is refused or reads another
device's memory.  The origin names cuda:1.  With --peer-copy the copy is
cuMemcpyPeerAsync, as torch's caching allocator copies expandable
segments between devices without P2P.

With --eval no_grad (or inference_mode) the gate overflows in an
evaluation pass after step --at's update, under torch.no_grad() (or
torch.inference_mode()): the launch callback reads the thread's grad mode
from torch's c10, and the origin says the mode.

With --sum the gate's overflow is a sum instead: y = 3e38 at step --at
(else 1), r = y.sum() in torch's reduce_kernel, whose ReduceOp the
agent must read to check r; head reads r.

With --modules --fault explode, head owns a parameter whose .grad, set
after each backward, says it is a CUDA tensor (its values are on the CPU,
where torch computes its norm) and grows 4x a step from step --at: its
gradient norm comes back a step late (agent/gpu_norms.c) and must warn
at the step --cpu-grads warns, where the same .grad is a CPU tensor.

With --modules --fault activations, the gate's output (a fake buffer,
filled by a decoded kernel) holds 1e-3 growing 4x a step from step --at:
its largest |x| comes from its check's record (cupti/outmax.h), sent a
step or more late, and must warn at the steps and values --cpu-outputs
warns, where the gate returns the same values as a CPU tensor.

With --modules --fault backward, the gate's exp runs in the backward of
a node gate made, whose gradient for gate.w is the fake buffer it wrote:
checked as a gradient the node produced, then as w's .grad.  With
--modules --fault optimizer, head owns a parameter that says it is a
CUDA tensor over the fake buffer x, which the optimizer's step overwrites
with +inf at step --at (the gate stays finite); head reads x in the next
forward.

  fake_gpu_job.py LIBFAKEOPS [--fault forward|backward|optimizer|explode|activations]
                  [--at N] [--steps N] [--modules] [--opaque [--inplace [mul|add]]] [--stale] [--sum] [--copy]
                  [--cat | --cat-split | --cat-wide] [--clip [norm|gemm]] [--sdpa qkv|scores|pre|pre-named] [--gn] [--mlp gemm|input
                  [--gemm sgemm|gemmex|batched|lt|sgemmex|gemv|dot|trsm]] [--cpu-grads]
                  [--cpu-outputs] [--eval no_grad|inference_mode] [--wait-agent SEC]
                  [--ready-file F] [--devices 2]
"""
import argparse
import ctypes
import os
import sys
import time

import torch
import torch.nn as nn

from fake_inductor import DeviceTensor, inductor_kernel

# --gemm: fake_ops.c's fo_mlp_fc api numbers, in order
ROPE_HOW = ["direct", "copy", "cat", "opaque"]   # fo_gate_rope's how
GEMM_APIS = ["sgemm", "gemmex", "batched", "lt", "sgemmex", "gemv", "dot", "trsm", "cgemm"]
CONV_APIS = ["graph", "legacy", "legacy-data", "legacy-filter", "attn",
             "attn-unified"]   # fo_conv's api


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--at", type=int, default=3, help="step of the overflow; -1: none")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--fault", default="forward",
                    choices=["forward", "backward", "optimizer", "explode", "activations"])
    ap.add_argument("--cpu-grads", action="store_true",
                    help="explode: the growing .grad is a CPU tensor")
    ap.add_argument("--cpu-outputs", action="store_true",
                    help="activations: the gate's growing output is a CPU tensor")
    ap.add_argument("--wait-agent", type=float, default=4.0,
                    help="seconds to wait for the agent's CUPTI subscription (attach)")
    ap.add_argument("--ready-file", help="written once the job waits for the agent")
    ap.add_argument("--modules", action="store_true")
    ap.add_argument("--opaque", action="store_true")
    ap.add_argument("--inplace", nargs="?", const="mul", choices=["mul", "add"],
                    help="with --opaque: the gate doubles (mul) the undecoded output in "
                         "place, or adds x to it (add, head's kernel)")
    ap.add_argument("--sum", action="store_true",
                    help="the gate overflows in a reduction (y.sum()), not in exp()")
    ap.add_argument("--rope", nargs="?", const="direct", choices=ROPE_HOW,
                    help="the gate overflows in a complex64 multiply (RoPE's x * freqs_cis), "
                         "not in exp(); head reads it, or its clone (copy), or its torch.cat "
                         "with x (cat); or (opaque) the overflow is in an undecodable kernel "
                         "(as cuFFT's) whose output the complex multiply reads")
    ap.add_argument("--cat", action="store_true",
                    help="the gate concatenates its output with x (torch.cat); head reads it")
    ap.add_argument("--cat-split", action="store_true",
                    help="--cat in two launches, one input each (as torch.cat past 128 inputs)")
    ap.add_argument("--cat-wide", action="store_true",
                    help="the gate concatenates 20 tensors along dim 1, its output the 19th "
                         "(more inputs than a check keeps); head reads it")
    ap.add_argument("--clip", nargs="?", const="norm", choices=["norm", "gemm"],
                    help="after backward, clip_grad_norm_ (torch._foreach_norm's kernels) of "
                         "gradients whose squares overflow at step --at (norm), or that a "
                         "kernel no decoder reads made +inf in the gate's backward (gemm)")
    ap.add_argument("--copy", action="store_true",
                    help="the gate clones its output by a device-to-device copy; head reads it")
    ap.add_argument("--sdpa", choices=["qkv", "scores", "pre", "pre-named"],
                    help="attn runs a projection and SDPA's memory-efficient kernel; "
                         "qkv: the projection overflows, scores: the attention does")
    ap.add_argument("--mlp", choices=["gemm", "input", "spectral", "spectral-legacy",
                                      "spectral-many", "spectral-unseen"],
                    help="attn is an MLP of two cuBLAS matmuls; gemm: the first overflows, "
                         "input: an undecodable kernel makes its input +inf; spectral: a "
                         "complex matmul then irfft (cuFFT), the matmul overflows")
    ap.add_argument("--gn", action="store_true",
                    help="attn is a convolution (undecodable) then a GroupNorm; the "
                         "convolution overflows")
    ap.add_argument("--bn-cudnn", action="store_true",
                    help="attn is a convolution (undecodable) then a BatchNorm through the "
                         "fake cuDNN (cudnnBatchNormalizationForwardTrainingEx); the "
                         "convolution overflows")
    ap.add_argument("--conv", choices=CONV_APIS,
                    help="attn is two convolutions through the fake cuDNN, the first "
                         "overflowing, the second reading it; graph: its backend API "
                         "(cudnnBackendExecute, as torch's Conv_v8.cpp), legacy: "
                         "cudnnConvolutionForward (Conv_v7.cpp); legacy-data, "
                         "legacy-filter: the first by cudnnConvolutionBackwardData or "
                         "...BackwardFilter; attn: two attention graphs through the "
                         "backend API, two outputs each (the statistics, then o: the "
                         "overflow is in o); attn-unified: the same as cuDNN's one SDPA "
                         "operation")
    ap.add_argument("--conv-reader", choices=["conv", "opaque", "opaque-late", "decoded"],
                    default="conv",
                    help="--conv: what reads the first convolution's output: the second "
                         "convolution, or an undecodable kernel (no read of it offered); "
                         "opaque-late: the first writes e, which the gate rewrites before "
                         "the reader's output is checked; decoded: torch's add")
    ap.add_argument("--triton", nargs="?", const="inductor", choices=["inductor", "jit", "wide"],
                    help="attn is two Triton kernels (exp, then a mul reading it), the exp "
                         "overflowing: a torch.compile'd region launched through Inductor's "
                         "CachingAutotuner.run, or (jit) a user's @triton.jit kernels "
                         "launched through Triton's JITFunction.run (needs triton), or "
                         "(wide) Inductor's, the second a sum of 19 inputs reading the "
                         "exp's output as its 18th (past the 16 a check keeps)")
    ap.add_argument("--gemm", default="sgemm", choices=GEMM_APIS,
                    help="--mlp: the cuBLAS API its matmuls call")
    ap.add_argument("--devices", type=int, choices=[1, 2], default=1,
                    help="2: the gate on cuda:1 (FAKE_CUDA_DEVICES=2)")
    ap.add_argument("--peer-copy", action="store_true",
                    help="--devices 2: its output copied by cuMemcpyPeerAsync")
    ap.add_argument("--eval", choices=["no_grad", "inference_mode"],
                    help="the gate overflows in an evaluation pass after step --at's "
                         "update, under torch.no_grad() or torch.inference_mode(), not in "
                         "training")
    ap.add_argument("--stale", action="store_true",
                    help="--modules: at step --at, attn first fills the gate's output "
                         "buffer with -inf (a decoded fill), which the gate then overwrites")
    ap.add_argument("--conv-early", action="store_true",
                    help="--conv graph: the plan is built by a library that imports cuDNN "
                         "but not libcuda, loaded first (as torch loads libtorch_cuda at "
                         "import), right after its handle loads libcuda")
    ap.add_argument("--conv-unseen", action="store_true",
                    help="--conv graph: the plan is built through cuDNN's own symbols "
                         "(dlsym), unseen by the agent, as torch's cached plans are under "
                         "`nanprof attach`; only each call's variant pack is seen")
    a = ap.parse_args()
    early = None
    if a.conv_early:
        early = ctypes.CDLL(os.path.join(os.path.dirname(a.lib), "libfakednn.so"))
        early.fdu_handle.restype = ctypes.c_void_p
        early.fdu_plan_of.restype = ctypes.c_void_p
        # the rest of torch's import, during which the agent polls: until
        # its tracker is in place, however loaded the machine
        for _ in range(int(a.wait_agent / 0.01)):
            if early.fdu_tracked():
                break
            time.sleep(0.01)
        else:
            sys.exit("fake_gpu_job: the agent never tracked cuDNN's descriptor calls")
    ops = ctypes.CDLL(a.lib)
    ops.fo_gate.argtypes = [ctypes.c_float]
    ops.fo_gate_dev1.argtypes = [ctypes.c_float, ctypes.c_int]
    ops.fo_gate_opaque.argtypes = [ctypes.c_float]
    ops.fo_gate_opaque_inplace.argtypes = [ctypes.c_float, ctypes.c_int]
    ops.fo_gate_sum.argtypes = [ctypes.c_float]
    ops.fo_gate_rope.argtypes = [ctypes.c_float, ctypes.c_int]
    ops.fo_gate_copy.argtypes = [ctypes.c_float]
    ops.fo_gate_cat.argtypes = [ctypes.c_float, ctypes.c_int]
    ops.fo_clip.argtypes = [ctypes.c_float]
    ops.fo_grad_opaque.argtypes = [ctypes.c_float]
    ops.fo_set.argtypes = [ctypes.c_int, ctypes.c_float]
    ops.fo_qkv.argtypes = [ctypes.c_float, ctypes.c_int]
    ops.fo_buf.restype = ctypes.c_ulonglong
    ops.fo_mlp_in.argtypes = [ctypes.c_float, ctypes.c_int]
    ops.fo_mlp_fc.argtypes = [ctypes.c_int, ctypes.c_int]
    ops.fo_spectral.argtypes = [ctypes.c_int]
    ops.fo_gn_conv.argtypes = [ctypes.c_float]
    ops.fo_conv.argtypes = [ctypes.c_int, ctypes.c_float, ctypes.c_int, ctypes.c_int]
    ops.fo_tri_buf.restype = ctypes.c_ulonglong
    ops.fo_tri_input.argtypes = [ctypes.c_float]
    ops.fo_tri_launch.argtypes = [ctypes.c_int, ctypes.c_ulonglong, ctypes.c_ulonglong,
                                  ctypes.c_int]
    ops.fo_tri_launch_sum.argtypes = [ctypes.POINTER(ctypes.c_ulonglong), ctypes.c_ulonglong,
                                      ctypes.c_int]
    if early:
        # the first CUDA call (a cuDNN handle) loads libcuda, and the plan
        # follows at once: before the agent's next poll sees libcuda
        ops.fo_conv_dims.restype = ctypes.c_void_p
        if early.fdu_plan(ctypes.c_void_p(ops.fo_conv_dims())):
            sys.exit("fake_gpu_job: the early convolution plan failed")
        ops.fo_conv_adopt.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        ops.fo_conv_adopt(early.fdu_handle(), early.fdu_plan_of())
    if a.conv_unseen:
        hidden = ctypes.CDLL(os.path.join(os.path.dirname(a.lib), "libfakednn.so"))
        hidden.fdh_conv_plan.restype = ctypes.c_void_p
        hidden.fdh_conv_plan.argtypes = [ctypes.c_void_p]
        hidden.fdh_handle.restype = ctypes.c_void_p
        ops.fo_conv_dims.restype = ctypes.c_void_p
        plan = hidden.fdh_conv_plan(ctypes.c_void_p(ops.fo_conv_dims()))
        if not plan:
            sys.exit("fake_gpu_job: the unseen convolution plan failed")
        ops.fo_conv_adopt.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        ops.fo_conv_adopt(ctypes.c_void_p(hidden.fdh_handle()), ctypes.c_void_p(plan))
    if ops.fo_init():
        sys.exit("fake_gpu_job: fake CUDA init failed")
    # CUPTI taken: the agent is refused; else it subscribes
    refused = a.modules and os.environ.get("FAKE_CUPTI_TAKEN") == "1"
    ready = ops.fo_refused if refused else ops.fo_subscribed
    if a.ready_file:
        open(a.ready_file, "w").write("ready\n")
    for _ in range(int(a.wait_agent / 0.02)):   # a poll or two after start
        if ready():
            break
        time.sleep(0.02)
    else:
        sys.exit("fake_gpu_job: the agent never %s CUPTI"
                 % ("asked for" if refused else "subscribed to"))
    if a.modules:
        time.sleep(0.1)             # from refused to checking at module level
        return modules_job(a, ops)

    class Attn(nn.Module):
        def forward(self, x):
            ops.fo_attn()
            return x

    class Proj(nn.Module):
        def __init__(self, faulty=True):
            super().__init__()
            self.faulty = faulty

        def forward(self, x):
            v = 1.0
            if train.step == a.at and self.faulty:
                v = 1e20 if a.sdpa == "scores" else 3e38
            ops.fo_qkv(v, int(a.sdpa == "pre-named"))
            return x

    class Core(nn.Module):
        def forward(self, x):
            ops.fo_sdpa()
            return x

    class SDPA(nn.Module):
        def __init__(self):
            super().__init__()
            if a.sdpa.startswith("pre"):
                self.pre = Proj(faulty=False)
            self.qkv, self.core = Proj(), Core()

        def forward(self, x):
            if a.sdpa.startswith("pre"):
                x = self.pre(x)
            return self.core(self.qkv(x))

    class Linear(nn.Module):
        def __init__(self, layer):
            super().__init__()
            self.layer = layer

        def forward(self, x):
            api = GEMM_APIS.index(a.gemm)
            if ops.fo_mlp_fc(self.layer, api):
                sys.exit("fake_gpu_job: the fake cuBLAS call failed")
            return x

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = Linear(1), Linear(2)

        def forward(self, x):
            fault = train.step == a.at
            if a.mlp.startswith("spectral"):
                ops.fo_mlp_in(3e37 if fault else 1.0, 0)
                fft_api = ["spectral", "spectral-legacy", "spectral-many",
                           "spectral-unseen"].index(a.mlp)
                if ops.fo_spectral(fft_api):
                    sys.exit("fake_gpu_job: the fake cuBLAS or cuFFT call failed")
                return x
            if a.mlp == "gemm":
                ops.fo_mlp_in(3e37 if fault else 1.0, 0)
            else:
                ops.fo_mlp_in(100.0 if fault else 0.0, 1)
            return self.fc2(self.fc1(x))

    class Conv(nn.Module):
        def forward(self, x):
            ops.fo_gn_conv(100.0 if train.step == a.at else 0.0)
            return x

    class GroupNorm(nn.Module):
        def forward(self, x):
            ops.fo_gn_norm()
            return x

    class CudnnBatchNorm(nn.Module):
        def forward(self, x):
            if ops.fo_bn_cudnn():
                sys.exit("fake_gpu_job: the fake cuDNN call failed")
            return x

    class GraphConv(nn.Module):
        def __init__(self, which):
            super().__init__()
            self.which = which

        def forward(self, x):
            v = 1e38 if train.step == a.at and self.which == 0 else 0.01
            if ops.fo_conv(self.which, v, CONV_APIS.index(a.conv),
                           int(a.conv_reader == "opaque-late")):
                sys.exit("fake_gpu_job: the fake cuDNN call failed")
            return x

    class ConvPair(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = GraphConv(0)
            self.conv2 = GraphConv({"conv": 1, "decoded": 3}.get(a.conv_reader, 2))

        def forward(self, x):
            return self.conv2(self.conv1(x))

    class ConvNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = Conv()
            self.norm = CudnnBatchNorm() if a.bn_cudnn else GroupNorm()

        def forward(self, x):
            return self.norm(self.conv(x))

    class Compiled(nn.Module):
        """What torch.compile makes of a region: Triton kernels that
        Inductor's wrapper code launches through CachingAutotuner.run
        (here torch's own class, its launcher the fake's)."""

        def __init__(self):
            super().__init__()
            n = ops.fo_numel()
            self.y, self.t, self.out = (DeviceTensor(ops.fo_tri_buf(i), n) for i in range(3))
            if a.triton == "jit":
                from fake_triton_jit import user_kernels
                for b in (self.y, self.t, self.out):
                    b.dtype = torch.float32   # Triton's binder asks
                self.exp, self.mul = user_kernels(ops)
            else:
                self.exp = inductor_kernel(ops, "triton_poi_fused_exp_0", 0)
                self.mul = inductor_kernel(ops, "triton_poi_fused_mul_1", 1)
            if a.triton == "wide":   # 17 zero buffers, the exp's output, y
                self.zeros = [DeviceTensor(ops.fo_tri_buf(3 + i), n) for i in range(17)]
                self.sum = inductor_kernel(ops, "triton_poi_fused_sum_2", 0, n_in=19)

        def forward(self, x):
            ops.fo_tri_input(100.0 if train.step == a.at else 0.0)
            n = self.y.numel()
            if a.triton == "jit":
                self.exp[(n + 127) // 128,](self.y, self.t, n, BLOCK=128)
                self.mul[(n + 127) // 128,](self.t, self.out, n, BLOCK=128)
                return x
            self.exp.run(self.y, self.t, n, stream=0)
            if a.triton == "wide":
                self.sum.run(*self.zeros, self.t, self.y, self.out, n, stream=0)
                return x
            self.mul.run(self.t, self.out, n, stream=0)
            return x

    GateBackward = gate_function(ops)
    GradGemm = gate_function(ops, launch=ops.fo_grad_opaque)

    class Gate(nn.Module):
        value = 1.0

        def forward(self, x):
            if a.fault == "backward":
                GateBackward.value = self.value
                return GateBackward.apply(x)
            if a.clip:   # what the optimizer made of the last clip coefficient
                ops.fo_clip_apply()
            if a.clip == "gemm":   # the gradients' kernel, in the backward
                GradGemm.value = 100.0 if train.step == a.at else 1.0
                x = GradGemm.apply(x)
            if a.sum:
                ops.fo_gate_sum(3e38 if self.value == 100.0 else self.value)
            elif a.rope:
                ops.fo_gate_rope(3e38 if self.value == 100.0 else self.value,
                                 ROPE_HOW.index(a.rope))
            elif a.copy:
                ops.fo_gate_copy(self.value)
            elif a.cat or a.cat_split or a.cat_wide:
                ops.fo_gate_cat(self.value, 2 if a.cat_wide else int(a.cat_split))
            elif a.devices == 2:
                ops.fo_gate_dev1(self.value, int(a.peer_copy))
            else:
                ops.fo_gate(self.value)
            return x

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = (SDPA() if a.sdpa else MLP() if a.mlp
                         else ConvNorm() if a.gn or a.bn_cudnn
                         else ConvPair() if a.conv
                         else Compiled() if a.triton else Attn())
            self.gate = Gate()

        def forward(self, x):
            return self.gate(self.attn(x))

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 1)

        def forward(self, x):
            if a.fault == "forward":
                (ops.fo_head_attn if a.sdpa else ops.fo_head_mlp if a.mlp
                 else ops.fo_head_tri if a.triton
                 else ops.fo_head_sum if a.sum
                 else ops.fo_head_copy if (a.copy or a.cat or a.cat_split or a.cat_wide or a.gn or a.bn_cudnn
                                           or a.conv or a.rope)
                 else ops.fo_head)()
            return self.lin(x)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block()])
            self.head = Head()

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return self.head(x)

    torch.manual_seed(0)
    if a.clip:   # the gate stays finite; the gradient's norm overflows
        clip = (ops.fo_clip_norm if a.clip == "gemm" else
                lambda: ops.fo_clip(1e20 if train.step == a.at else 1.0))
        train(Model(), a, clip, gate_at=-1)
        return
    # the gate's gradient work, read after backward()
    train(Model(), a, ops.fo_head if a.fault == "backward" else None,
          gate_at=-1 if a.sdpa or a.mlp or a.gn or a.bn_cudnn or a.conv or a.triton
          else None)


def train(model, a, after_backward=None, opt_cls=torch.optim.SGD, gate_at=None):
    """The loop both jobs share: the gate overflows at step gate_at (--at),
    in training, or with --eval in the evaluation pass after its update."""
    gate_at = a.at if gate_at is None else gate_at
    opt = opt_cls(model.parameters(), lr=0.01)
    gate = model.blocks[0].gate
    for step in range(a.steps):
        train.step = opt.step_no = step
        gate.value = 100.0 if step == gate_at and not a.eval else 1.0
        opt.zero_grad()
        loss = model(torch.ones(2, 4, requires_grad=True)).sum()
        loss.backward()
        if after_backward:
            after_backward()
        opt.step()
        if a.eval:
            gate.value = 100.0 if step == gate_at else 1.0
            with torch.no_grad() if a.eval == "no_grad" else torch.inference_mode():
                model(torch.ones(2, 4))
        print("step %d loss %r" % (step, loss.item()), flush=True)
        time.sleep(0.05)            # the drain thread polls every 0.5 ms
    time.sleep(0.3)


def gate_function(ops, grad=lambda g: g, launch=None):
    """An autograd Function, identity forward, whose backward launches the
    gate's kernels (exp of the class's value; or launch(value)) and
    returns grad(g)."""
    class GateBackward(torch.autograd.Function):
        value = 1.0

        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            (launch or ops.fo_gate)(GateBackward.value)
            return grad(g)
    return GateBackward


class SaysCuda:
    """Mixed into a CPU tensor class: tells nanprof's agent the tensor is a
    CUDA tensor whose memory is one of the fake driver's buffers
    (device_address); module-level checks read that memory, not the
    tensor's."""
    __torch_function__ = torch._C._disabled_torch_function_impl

    @property
    def is_cpu(self):
        return False

    @property
    def is_cuda(self):
        return True

    def data_ptr(self):
        return self.device_address


class DeviceBuffer(SaysCuda, torch.Tensor):
    pass


class DeviceParam(SaysCuda, nn.Parameter):
    pass


class DeviceBuffer1(DeviceBuffer):
    """A DeviceBuffer on cuda:1 (--devices 2)."""
    @property
    def device(self):
        return torch.device("cuda", 1)


def modules_job(a, ops):
    """--modules: the forward pass's modules hand back the fake device
    buffers they wrote; the real (CPU) path carries the training."""
    import types
    # the agent asks torch for the current stream of the tensor's device:
    # the fake driver's legacy stream, where fake_ops launches
    torch.cuda.current_stream = lambda device=None: types.SimpleNamespace(cuda_stream=0)
    n = ops.fo_numel()

    def buf(i):
        t = torch.zeros(n).as_subclass(DeviceBuffer)
        t.device_address = ops.fo_buf(i)
        return t

    class Attn(nn.Module):
        def forward(self, x, dev):
            ops.fo_attn()           # a -inf mask inside, finite scores out
            if a.stale and train.step == a.at:
                ops.fo_set(2, float("-inf"))    # known -inf, then overwritten
            return x, buf(1)

    # its backward hands back, as gate.w's gradient, the fake buffer it wrote
    GateGrad = gate_function(ops, lambda g: buf(2))

    class Gate(nn.Module):
        value = 1.0

        def __init__(self):
            super().__init__()
            if a.fault == "backward":
                self.w = nn.Parameter(torch.zeros(n))

        def forward(self, x, dev):
            if a.fault == "backward":
                GateGrad.value = self.value
                return x + 0 * GateGrad.apply(self.w).sum(), buf(1)
            if a.devices == 2:      # its output a cuda:1 tensor
                ops.fo_gate_dev1(self.value, int(a.peer_copy))
                out = buf(4).as_subclass(DeviceBuffer1)
                out.device_address = ops.fo_buf(4)
                return x, out
            if a.opaque and a.inplace:
                ops.fo_gate_opaque_inplace(self.value, int(a.inplace == "add"))
            else:
                (ops.fo_gate_opaque if a.opaque else ops.fo_gate)(self.value)
            if a.fault == "activations":
                v = 1e-3 * 4.0 ** max(0, train.step - a.at + 1)
                ops.fo_set(2, v)    # a fill kernel: decoded, checked
                if a.cpu_outputs:
                    return x, torch.full((n,), v)
            return x, buf(2)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn, self.gate = SDPA() if a.sdpa else Attn(), Gate()

        def forward(self, x, dev):
            return self.gate(*self.attn(x, dev))

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 1)
            if a.fault == "optimizer" or (a.fault == "explode" and not a.cpu_grads):
                self.scale = DeviceParam(torch.zeros(n))
                self.scale.device_address = ops.fo_buf(0)
            elif a.fault == "explode":
                self.scale = nn.Parameter(torch.zeros(n))

        def forward(self, x, dev, dev0):
            ops.fo_head()           # s = e + x: reads the gate's output (and x)
            return self.lin(x), buf(3)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block()])
            self.head = Head()

        def forward(self, x):
            dev = dev0 = buf(0)
            for b in self.blocks:
                x, dev = b(x, dev)
            return self.head(x, dev, dev0)[0]

    class OverflowingSGD(torch.optim.SGD):
        """Its step writes +inf into x (head.scale's memory) at step --at,
        before the update, so that every optimizer hook sees it after."""
        def step(self, closure=None):
            if self.step_no == a.at:
                ops.fo_set(0, float("inf"))
            return super().step(closure)

    torch.manual_seed(0)
    model = Model()
    if a.fault == "optimizer":
        train(model, a, opt_cls=OverflowingSGD, gate_at=-1)
    elif a.fault == "explode":
        scale = model.head.scale
        step = [0]

        def growing_grad():
            g = torch.full((n,), 1e-3 * 4.0 ** max(0, step[0] - a.at + 1))
            if not a.cpu_grads:
                g = g.as_subclass(DeviceBuffer)
                g.device_address = ops.fo_buf(3)
            scale.grad = g
            step[0] += 1
        train(model, a, growing_grad, gate_at=-1)
    elif a.fault == "activations":
        train(model, a, gate_at=-1)
    elif a.fault == "backward":
        # on CUDA, AccumulateGrad keeps the node's gradient as .grad when
        # it can; here autograd copies it, so the job says so itself
        w = model.blocks[0].gate.w
        train(model, a, lambda: setattr(w, "grad", buf(2)))
    else:
        train(model, a)


if __name__ == "__main__":
    main()
