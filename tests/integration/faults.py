"""A small transformer-like training job with one injected fault.

Each --fault puts the first non-finite value in a known place, so that the
tests can assert nanprof's origin exactly (step, phase, module):

  none        clean training (no origin, no explosion warning)
  forward     blocks.1.gate: exp() of a boosted input overflows to +inf
  sample      blocks.1.gate: exp() overflows in one sample of the batch
              only, sample 5 of 8 (as a fully padded sequence or a corrupt
              record does): its output is non-finite along dim 0 at index 5
  reduction   blocks.1.gate: a sum of finite terms (each at most 3e38)
              overflows to +inf; on CUDA inside torch's reduce_kernel
  broadcast   blocks.1.gate: its output times a per-channel scale of 3e38,
              broadcast over batch and sequence, overflows; on CUDA in a
              strided elementwise kernel (the scale has stride 0)
  backward    blocks.0.root: sqrt() at exactly 0; the forward stays finite,
              its backward is +inf
  block-backward  blocks.0 itself, not a child: sqrt(0) in its own forward
              code, added to its output (+0); its backward is +inf
  custom      the same in a Python autograd.Function (HandSqrt, as fused
              kernels' and flash attention's wrappers are): its backward,
              HandSqrtBackward, is +inf
  inner       blocks.1.gate: log(0) = -inf inside the gate, before its
              proj (a child Linear: not the origin, its input is non-finite)
              and a residual add that makes the gate's output; the op
              named is the log, on a torch whose autograd graph shows the
              saved tensors (SavedTensor.unpack_hook: torch 2.13, not 1.13), else the gate's last op, add
  functional  blocks.1.attn (nn.MultiheadAttention): out_proj's weights
              are set to +-3e38, and MHA uses them functionally (out_proj's
              own hooks never run): the attention output overflows
  optimizer   the param group of `head` gets lr=inf: head.weight and
              head.bias become non-finite in the update (with
              --optimizers two, in the second optimizer's)
  param-edit  blocks.1.ff.2.weight[5, 17] = inf, written under no_grad
              between steps (as load_state_dict or an EMA swap would),
              not by the optimizer: output column 5 goes non-finite
  model-code  the model's own forward multiplies the embedding by inf,
              between its children: the outermost call is the origin
              (with --output dict its output is a dict subclass, as
              Hugging Face's ModelOutput is; with --output dataclass, a
              dataclass)
  input       a NaN in sample 2 of the batch: it comes into the model from outside
              (with --noise-kw as a keyword argument: net(tokens, noise=x))
  input-neginf  the same with -inf (as a positional attention mask holds:
              counted, not located)
  loss        log(0) in the loss, outside any module
  loss-xent   a cross-entropy written out in the loop,
              -(y * log(softmax(z))).sum(-1).mean(): at the fault's step
              sample 5's logits saturate, its softmax holds an exact 0,
              and log(0) = -inf (kept by no node: found by computing the
              log again)
  loss-untracked  the loss weighs each sample by a weight made without
              gradient from the batch; at the fault's step it is scaled by
              the std of one element, NaN (as an advantage normalised over
              a one-step episode is): the loss's mul read it
  loss-grad   sqrt(0) in the loss, outside any module: the forward is
              finite, its backward (SqrtBackward0, of no module) is +inf
  ignored     a cross-entropy term whose targets are all ignore_index: the
              mean over no targets is 0/0 = NaN, outside any module (on
              CUDA in nll_loss's kernel); the term is there every step
  explode     the learning rate grows 1.6x per step from --at on: gradients
              explode over several steps before the first Inf
  eval        after step --at's update, an evaluation pass (model.eval(),
              torch.no_grad()) in which blocks.1.gate overflows, as
              `forward` does; training stays finite.  Work after step N's
              update is step N+1: the origin is at step --at + 1
  infer       the same pass under torch.inference_mode()

Prints "step N loss L" with L as repr(float), so runs can be compared
bit for bit.

With --scaler INIT the loss is scaled by a GradScaler (torch.amp, on the
model's device) whose scale starts at INIT: with a large INIT its first
iterations overflow in backward and are skipped, as mixed-precision
training's are; --persist keeps the fault switched on from --at on, so
that every later iteration is non-finite at any scale.

With --checkpoint every block runs under reentrant activation
checkpointing: its forward runs again inside backward, called by torch's
checkpoint code, and a fault there must still be named in its block.
With --checkpoint-mode nonreentrant the checkpointing is torch's other
kind, by saved-tensor hooks: nanprof must not unpack those (unpacking
recomputes the block).

With --device cuda the model and every batch go to the GPU; the batches
are still drawn on the CPU generator and moved with .to(), so both
devices train on the same data (tests/gpu/, scripts/gpu_check.sh).

With --dist (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT from the
environment; gloo on CPU) every rank trains on its own batches and the
gradients are averaged across ranks: with `manual`, by dist.all_reduce of
each .grad (as hand-written data parallel code does); with `ddp`, by
DistributedDataParallel (whose all-reduce runs in C++).  The fault is
injected on --fault-rank only; the other ranks receive it through the
all-reduce.
"""
import argparse
import dataclasses
import math
import sys
import time
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class Gate(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.boost = 1.0            # plain attribute: the fault sets it
        self.pool = 0.0             # --fault reduction sets it to 3e38
        self.chan = None            # --fault broadcast: a per-channel scale
        self.row_boost = None       # --fault sample: a boost per sample of the batch
        self.log_zero = False       # --fault inner: log(0) before proj

    def forward(self, x):
        if self.log_zero:
            return x + self.proj(torch.log(x * x * 0.0))
        if self.row_boost is not None:
            return x * torch.sigmoid(self.proj(x)) + torch.exp(x * self.row_boost)
        if self.chan is not None:
            return (x * torch.sigmoid(self.proj(x))) * self.chan
        if self.pool:
            # |x| clamped to 1, times 3e38: every term finite, their sum is not
            return x * torch.sigmoid(self.proj(x)) + \
                (x.clamp(-1, 1).abs() * self.pool).sum(-1, keepdim=True)
        return x * torch.sigmoid(self.proj(x)) + 1e-3 * torch.exp(x * self.boost).clamp(max=1e4) \
            if self.boost == 1.0 else x * torch.sigmoid(self.proj(x)) + torch.exp(x * self.boost)


class HandSqrt(torch.autograd.Function):
    """sqrt with a hand-written backward: g / (2 sqrt(x))."""
    @staticmethod
    def forward(ctx, x):
        y = torch.sqrt(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g / (2 * y)


class Root(nn.Module):
    """sqrt(x^2 + eps): smooth |x|.  With eps = 0 and x scaled by 0 the
    forward is sqrt(0) = 0 (finite) and its gradient 1/(2*0) = inf."""
    def __init__(self):
        super().__init__()
        self.eps = 1e-6
        self.scale = 1.0
        self.custom = False         # --fault custom: HandSqrt instead of torch.sqrt

    def forward(self, x):
        sq = (x * self.scale) ** 2 + self.eps
        return HandSqrt.apply(sq) if self.custom else torch.sqrt(sq)


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.norm1 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, d))
        self.norm2 = nn.LayerNorm(d)
        self.gate = Gate(d)
        self.root = Root()

    nap = 0.0                       # --sleep-at module: seconds asleep in here
    nap_before_root = 0.0           # --sleep-at root: asleep between gate and root
    own_sqrt = False                # --fault block-backward: sqrt(0) in this forward itself

    def forward(self, x, mask):
        if self.nap:
            time.sleep(self.nap)
        a, _ = self.attn(x, x, x, attn_mask=mask, need_weights=False)
        x = self.norm1(x + a)
        x = self.norm2(x + self.ff(x))
        g = self.gate(x)
        if self.nap_before_root:
            time.sleep(self.nap_before_root)
        out = g + 0.1 * self.root(x)
        if self.own_sqrt:
            out = out + torch.sqrt((out * 0) ** 2)   # + 0; its backward is +inf
        return out


class Learner(nn.Module):
    """Runs a whole training step (forward, backward, optimizer.step())
    in its own forward, as reinforcement-learning learners do: the step
    is called from inside a module."""
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, train_step):
        return train_step()


class Out(OrderedDict):
    """A model output as Hugging Face's ModelOutput is: a dict subclass."""


@dataclasses.dataclass
class OutFields:
    """A model output as research code often returns it: a dataclass."""
    pred: torch.Tensor
    steps_taken: int = 1


class Model(nn.Module):
    def __init__(self, vocab=50, d=32, heads=2, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
        self.head = nn.Linear(d, 1)
        self.mask_device = None     # None: the model's device
        self.checkpoint = False     # --checkpoint
        self.reentrant = True       # --checkpoint-mode
        self.scale = 1.0            # --fault model-code sets it to inf
        self.output_kind = "tensor"   # --output

    def forward(self, tokens, noise):
        x = self.embed(tokens) + noise
        if self.scale != 1.0:
            x = x * self.scale      # the model's own code, between its children
        t = tokens.shape[1]
        # a causal mask filled with -inf: non-finite inside attention every
        # step, by design, and never an origin.  Built where the model runs
        # (on CUDA: by kernels the GPU checks see), or on the CPU and copied
        where = x.device if self.mask_device is None else self.mask_device
        mask = torch.triu(torch.full((t, t), float("-inf"), device=where), diagonal=1).to(x.device)
        for b in self.blocks:
            # reentrant checkpointing runs each block again inside backward,
            # called by torch's checkpoint code, not by this forward
            x = checkpoint(b, x, mask, use_reentrant=self.reentrant) if self.checkpoint \
                else b(x, mask)
        pred = self.head(x).mean(dim=1).squeeze(-1)
        if self.output_kind == "dict":
            return Out(pred=pred)
        return OutFields(pred=pred) if self.output_kind == "dataclass" else pred


class SleepySGD(torch.optim.SGD):
    """SGD that can sleep inside step(), before the update (--sleep-at step)."""
    nap = 0.0

    def step(self, closure=None):
        if self.nap:
            time.sleep(self.nap)
        return super().step(closure)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fault", default="none",
                    choices=["none", "forward", "sample", "reduction", "broadcast", "backward", "block-backward", "custom",
                             "inner", "functional",
                             "optimizer", "param-edit", "model-code", "input", "input-neginf", "loss", "loss-xent", "loss-untracked",
                             "loss-grad",
                             "ignored",
                             "explode", "eval", "infer"])
    ap.add_argument("--at", type=int, default=6, help="step of the fault")
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--sleep", type=float, default=0.0, help="seconds between steps")
    ap.add_argument("--sleep-at", choices=["end", "backward", "step", "module", "root"],
                    default="end",
                    help="where the --sleep goes: after each step, between its "
                         "forward and its backward, inside optimizer.step() before "
                         "the update, inside blocks.0's forward, or in the last "
                         "block's between its gate and its root, a module with no "
                         "parameters (an attach then lands mid-step, or mid-call)")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--wait-file", help="wait for this file before the first step")
    ap.add_argument("--ready-file", help="write this file after step 2")
    ap.add_argument("--end-file", help="after the last step, wait (30 s at most) for this file")
    ap.add_argument("--dist", choices=["none", "manual", "ddp"], default="none")
    ap.add_argument("--fault-rank", type=int, default=0)
    ap.add_argument("--report-hooks", action="store_true",
                    help="at the end, say whether anything of nanprof's is left in torch")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--checkpoint", action="store_true",
                    help="run each block under reentrant activation checkpointing "
                         "(torch.utils.checkpoint, use_reentrant=True)")
    ap.add_argument("--checkpoint-mode", choices=["reentrant", "nonreentrant"],
                    default="reentrant",
                    help="with --checkpoint: torch's reentrant kind, or the one by "
                         "saved-tensor hooks (use_reentrant=False)")
    ap.add_argument("--output", choices=["tensor", "dict", "dataclass"], default="tensor",
                    help="dict: the model returns a dict subclass (Out), as Hugging Face "
                         "models return their ModelOutput; dataclass: a dataclass "
                         "(OutFields), as research code often does")
    ap.add_argument("--closure", action="store_true",
                    help="opt.step(closure): forward and backward run inside step(), "
                         "as with LBFGS and Lightning")
    ap.add_argument("--optimizers", choices=["one", "two"], default="one",
                    help="two: the head's parameters have their own AdamW, stepped right "
                         "after the SGD of the rest (as Muon + AdamW or sparse + dense "
                         "jobs do): two optimizer.step() calls per iteration")
    ap.add_argument("--learner", action="store_true",
                    help="run each training step inside a module's forward (Learner)")
    ap.add_argument("--print-grad-norm", action="store_true",
                    help="print each step's gradient norm over all parameters")
    ap.add_argument("--noise-kw", action="store_true",
                    help="pass the noise as a keyword argument: net(tokens, noise=noise)")
    ap.add_argument("--mask-from", choices=["device", "host"], default="device",
                    help="build the -inf attention mask on the model's device or on the "
                         "CPU (then copied); the same on CPU")
    ap.add_argument("--deterministic", action="store_true",
                    help="torch.use_deterministic_algorithms, so that CUDA runs compare "
                         "bit for bit")
    ap.add_argument("--step-times", metavar="FILE",
                    help="write 'step N NS' (CLOCK_MONOTONIC) as each step starts, to place "
                         "the agent's GPU records in steps without nanprof")
    ap.add_argument("--scaler", type=float, metavar="INIT",
                    help="scale the loss with a GradScaler starting at INIT")
    ap.add_argument("--accum", type=int, default=1, metavar="N",
                    help="gradient accumulation: N forward/backward passes per step")
    ap.add_argument("--persist", action="store_true",
                    help="the fault stays on from --at on (default: that step only)")
    args = ap.parse_args()
    if args.optimizers == "two" and (args.closure or args.scaler):
        ap.error("--optimizers two goes with neither --closure nor --scaler")
    if args.deterministic:
        import os
        # cuBLAS is deterministic only with a fixed workspace, set before its first use
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True, warn_only=True)
    dev = torch.device(args.device)
    times = open(args.step_times, "w") if args.step_times else None

    torch.manual_seed(0)
    torch.set_num_threads(1)
    rank, world = 0, 1
    if args.dist != "none":
        import torch.distributed as dist
        dist.init_process_group("gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
    model = Model().to(dev)
    model.checkpoint = args.checkpoint
    model.reentrant = args.checkpoint_mode == "reentrant"
    model.output_kind = args.output
    if args.mask_from == "host":
        model.mask_device = torch.device("cpu")
    net = model
    learner = Learner(model) if args.learner else None
    if args.dist == "ddp":
        net = torch.nn.parallel.DistributedDataParallel(model)
    head = list(model.head.parameters())
    rest = [p for n, p in model.named_parameters() if not n.startswith("head.")]
    if args.optimizers == "two":
        opt = SleepySGD(rest, lr=args.lr)
        opt2 = torch.optim.AdamW(head, lr=args.lr)
        head_group = opt2.param_groups[0]
    else:
        opt = SleepySGD([{"params": rest}, {"params": head}], lr=args.lr)
        opt2 = None
        head_group = opt.param_groups[1]
    opt.nap = args.sleep if args.sleep_at == "step" else 0.0
    model.blocks[0].nap = args.sleep if args.sleep_at == "module" else 0.0
    model.blocks[-1].nap_before_root = args.sleep if args.sleep_at == "root" else 0.0
    gen = torch.Generator().manual_seed(1 + rank)
    scaler = None
    if args.scaler:
        scaler = torch.amp.GradScaler(args.device, init_scale=args.scaler)
    # what an attached nanprof replaces, to check it is all back at the end
    scaler_cls = getattr(getattr(torch, "amp", None), "GradScaler", None)
    orig = (torch.autograd.backward, torch.autograd.grad, type(opt).__dict__["step"],
            scaler_cls and scaler_cls.__dict__.get("scale"),
            scaler_cls and scaler_cls.__dict__.get("update"))
    if args.wait_file:
        import os
        while not os.path.exists(args.wait_file):
            time.sleep(0.05)

    for step in range(args.steps):
        if times:
            times.write("step %d %d\n" % (step, time.monotonic_ns()))
            times.flush()
        tokens = torch.randint(0, 50, (8, 12), generator=gen)
        noise = 0.01 * torch.randn(8, 12, 32, generator=gen)
        target = torch.randn(8, generator=gen)
        at = (step == args.at or (args.persist and step > args.at)) and \
            rank == args.fault_rank
        if at and args.fault == "forward":
            model.blocks[1].gate.boost = 1e4
        if at and args.fault == "sample":
            boost = torch.ones(tokens.shape[0], 1, 1)
            boost[5] = 1e4
            model.blocks[1].gate.row_boost = boost.to(dev)
        model.blocks[1].gate.log_zero = bool(at) and args.fault == "inner"
        if at and args.fault == "reduction":
            model.blocks[1].gate.pool = 3e38
        if at and args.fault == "broadcast":
            model.blocks[1].gate.chan = torch.full((32,), 3e38, device=dev)
        if at and args.fault in ("backward", "custom"):
            model.blocks[0].root.eps = 0.0
            model.blocks[0].root.scale = 0.0
            model.blocks[0].root.custom = args.fault == "custom"
        model.blocks[0].own_sqrt = bool(at) and args.fault == "block-backward"
        if at and args.fault == "functional":
            with torch.no_grad():
                w = model.blocks[1].attn.out_proj.weight
                w.copy_(torch.where(w >= 0, 3e38, -3e38))
        if at and args.fault == "model-code":
            model.scale = float("inf")
        if at and args.fault == "param-edit":
            with torch.no_grad():
                model.blocks[1].ff[2].weight[5, 17] = float("inf")
        if at and args.fault == "input":
            noise[2, 5, 7] = float("nan")   # sample 2 of the batch
        if at and args.fault == "input-neginf":
            noise[2, 5, 7] = float("-inf")
        # the same numbers on either device (.to(cpu) is the tensor itself)
        tokens, noise, target = tokens.to(dev), noise.to(dev), target.to(dev)
        if args.fault == "explode" and step >= args.at:
            for g in opt.param_groups:
                g["lr"] *= 1.6
        def forward_backward():
            opt.zero_grad()
            if opt2:
                opt2.zero_grad()
            for _ in range(args.accum):   # the same batch each time: it is the count that matters
                out = net(tokens, noise=noise) if args.noise_kw else net(tokens, noise)
                if isinstance(out, dict):
                    out = out["pred"]
                elif dataclasses.is_dataclass(out):
                    out = out.pred
                loss = F.mse_loss(out, target)
                if at and args.fault == "loss":
                    loss = loss + torch.log(torch.zeros((), device=loss.device))
                if args.fault == "loss-xent":
                    z = torch.stack([-out, out], -1)
                    if at:
                        z = z * torch.where(torch.arange(len(z), device=z.device) == 5,
                                            1e6, 1.0)[:, None]
                    y = F.one_hot((out > target).long(), 2).to(z.dtype)
                    loss = loss - (y * torch.log(torch.softmax(z, -1))).sum(-1).mean()
                if args.fault == "loss-untracked":
                    weight = torch.ones_like(target)
                    if at:
                        weight = weight * target[:1].std()   # one element: NaN
                    loss = (weight * (out - target) ** 2).mean()
                if at and args.fault == "loss-grad":
                    loss = loss + torch.sqrt((out * 0).pow(2).sum())
                if args.fault == "ignored":
                    # is each output above its target?  A class per sample, all
                    # of them ignore_index (-100) at the fault's step
                    labels = (out > target).long() if not at else \
                        torch.full_like(target, -100, dtype=torch.long)
                    loss = loss + F.cross_entropy(torch.stack([-out, out], -1), labels)
                if args.sleep and args.sleep_at == "backward":
                    time.sleep(args.sleep)
                if scaler:
                    scaler.scale(loss).backward()
                else:
                    loss.backward()
            if args.dist == "manual":
                for p in model.parameters():
                    dist.all_reduce(p.grad)
                    p.grad /= world
            return loss

        if at and args.fault == "optimizer":
            head_group["lr"] = math.inf
        def train_step():
            if args.closure:
                # as LBFGS and Lightning do: step() runs forward and backward
                return opt.step(forward_backward)
            loss = forward_backward()
            if scaler:
                scaler.step(opt)
                scaler.update()
            else:
                opt.step()
                if opt2:
                    opt2.step()   # right after: no module call or backward between
            return loss

        # --learner: the whole step inside a module's forward, as RL learners do
        loss = learner(train_step) if learner else train_step()
        if args.print_grad_norm:
            sq = sum(float(p.grad.double().pow(2).sum()) for p in model.parameters()
                     if p.grad is not None)
            print("step %d grad_norm %r" % (step, math.sqrt(sq)))
        if at and args.fault == "optimizer":
            head_group["lr"] = args.lr
        if at and args.fault in ("eval", "infer"):
            model.eval()
            model.blocks[1].gate.boost = 1e4
            with torch.inference_mode() if args.fault == "infer" else torch.no_grad():
                out = net(tokens, noise)
            print("eval %d nonfinite %d" % (step, int((~torch.isfinite(out if torch.is_tensor(out)
                                                                        else out["pred"])).sum())))
            model.train()
        # undo the fault's switch (not its damage)
        model.blocks[1].gate.boost = 1.0
        model.blocks[1].gate.row_boost = None
        model.blocks[0].root.eps, model.blocks[0].root.scale = 1e-6, 1.0
        model.blocks[0].root.custom = False
        sys.stdout.write("%sstep %d loss %r%s\n" % ("rank %d " % rank if world > 1 else "",
                                                   step, loss.item(),
                                                   " scale %g" % scaler.get_scale() if scaler else ""))
        sys.stdout.flush()
        if args.ready_file and step == 2:
            open(args.ready_file, "w").write("ready\n")
        if args.sleep and args.sleep_at == "end":
            time.sleep(args.sleep)
    if times:
        times.write("end %d\n" % time.monotonic_ns())
        times.close()
    if args.end_file:
        import os
        for _ in range(600):
            if os.path.exists(args.end_file):
                break
            time.sleep(0.05)
    if args.report_hooks:
        import torch.nn.modules.module as M
        import torch.optim.optimizer as O
        now = (torch.autograd.backward, torch.autograd.grad, type(opt).__dict__["step"],
               scaler_cls and scaler_cls.__dict__.get("scale"),
               scaler_cls and scaler_cls.__dict__.get("update"))
        left = len(M._global_forward_hooks) + sum(a is not b for a, b in zip(orig, now))
        left += len(getattr(O, "_global_optimizer_pre_hooks", {}))
        left += len(getattr(O, "_global_optimizer_post_hooks", {}))
        print("nanprof hooks left: %d" % left)
    if args.dist != "none":
        # every rank done before any tears gloo down: a rank that goes
        # while a peer still talks to it dies in std::terminate (torch 2.x)
        dist.barrier()
        dist.destroy_process_group()
        # gloo's worker thread drops the barrier's work after waking us, and
        # the drop can take the GIL; if that lands once finalization began,
        # CPython ends the thread mid-destructor and std::terminate kills the
        # rank (pytorch/pytorch#179291). A short sleep lets it finish first.
        time.sleep(0.2)


if __name__ == "__main__":
    main()
