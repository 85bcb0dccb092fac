"""A training step captured once in a CUDA graph and replayed, with a fault.

A small model (in_proj -> act -> out_proj) whose whole step (forward,
backward, SGD) is captured in one torch.cuda.CUDAGraph on static input and
target tensors, after a warm-up on a side stream, as PyTorch's CUDA graph
docs show for whole-network capture; each step copies its batch into the
static tensors and replays the graph.  At step --at the static input gets
a huge value (1e4) in its first row, so that exp() inside the module `act`
overflows to +inf inside the replay: kernels of a replayed graph fire no
launch callbacks, so only the checks captured with them can see it.
--fault backward: act is `root` = sqrt(x * x) after a bias-free in_proj,
and the static input's first row is zeroed: the forward stays finite,
sqrt's backward (grad / (2 * sqrt(0))) makes +inf inside the replay.

Prints "step N loss L" (L as repr(float)) like faults.py.  --device cpu
(or --no-graph) runs the same steps eagerly, to check the script here.
Python 3.8+.
"""
import argparse
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class ExpAct(nn.Module):
    """x * sigmoid(x) + 1e-3 * exp(x): finite for ordinary inputs, +inf
    where the input is over about 88."""

    def forward(self, x):
        return x * torch.sigmoid(x) + 1e-3 * torch.exp(x)


class SqrtAbs(nn.Module):
    """sqrt(x * x) = |x|: finite both ways but at x = 0, where its
    backward divides by 2 * sqrt(0): +inf, born in the backward only."""

    def forward(self, x):
        return torch.sqrt(x * x)


class Net(nn.Module):
    """in_proj -> act -> out_proj; with backward=True in_proj has no bias
    and act is SqrtAbs, named `root`, so a zero input row gives a zero
    pre-activation row and an infinite gradient."""

    def __init__(self, d_in=64, d=128, backward=False):
        super().__init__()
        self.in_proj = nn.Linear(d_in, d, bias=not backward)
        if backward:
            self.root = SqrtAbs()
        else:
            self.act = ExpAct()
        self.out_proj = nn.Linear(d, 1)

    def forward(self, x):
        act = self.root if hasattr(self, "root") else self.act
        return self.out_proj(act(self.in_proj(x))).squeeze(-1)


def train_step(model, opt, x, y):
    opt.zero_grad(set_to_none=True)
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss


def capture(model, opt, static_x, static_y, warmup=3):
    """Warm up on a side stream (so that lazy initialisation and the
    caching allocator's first allocations happen outside the capture),
    then capture one step.  Returns the graph and its static loss."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(warmup):
            train_step(model, opt, static_x, static_y)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        static_loss = F.mse_loss(model(static_x), static_y)
        static_loss.backward()
        opt.step()
    return g, static_loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cuda")
    ap.add_argument("--no-graph", action="store_true", help="eager steps, no capture")
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--at", type=int, default=6, help="step of the fault; -1: none")
    ap.add_argument("--fault", choices=["forward", "backward"], default="forward",
                    help="forward: exp() overflows in `act`; backward: a zero input "
                         "row makes SqrtAbs's gradient +inf in `root`")
    ap.add_argument("--step-times", metavar="FILE",
                    help="write 'step N NS' (CLOCK_MONOTONIC) as each step starts")
    args = ap.parse_args()

    torch.manual_seed(0)
    torch.set_num_threads(1)
    dev = torch.device(args.device)
    model = Net(backward=args.fault == "backward").to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(1)
    batches = [(torch.randn(16, 64, generator=gen), torch.randn(16, generator=gen))
               for _ in range(args.steps)]
    static_x = torch.zeros(16, 64, device=dev)
    static_y = torch.zeros(16, device=dev)
    graph = None
    if dev.type == "cuda" and not args.no_graph:
        static_x.copy_(batches[0][0])
        static_y.copy_(batches[0][1])
        graph, static_loss = capture(model, opt, static_x, static_y)
        sys.stderr.write("graph_fault: captured one training step in a CUDA graph\n")
    times = open(args.step_times, "w") if args.step_times else None

    for step in range(args.steps):
        if times:
            times.write("step %d %d\n" % (step, time.monotonic_ns()))
            times.flush()
        x, y = batches[step]
        static_x.copy_(x)
        static_y.copy_(y)
        if step == args.at and args.fault == "forward":
            static_x[0].fill_(1e4)   # the fault: exp() in `act` overflows
        if step == args.at and args.fault == "backward":
            static_x[0].zero_()      # the fault: d sqrt(u) / du at u = 0
        if graph is not None:
            graph.replay()
            loss = static_loss
        else:
            loss = train_step(model, opt, static_x, static_y)
        sys.stdout.write("step %d loss %r\n" % (step, loss.item()))
        sys.stdout.flush()
    if times:
        times.write("end %d\n" % time.monotonic_ns())
        times.close()


if __name__ == "__main__":
    main()
