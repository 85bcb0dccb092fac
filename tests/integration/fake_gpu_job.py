"""A PyTorch training job whose modules launch CUDA kernels on the fake
driver (tests/fakecuda/fake_ops.c, through ctypes): the whole GPU path of
nanprof without a GPU.  blocks.0.attn makes a -inf mask that spreads inside
it and is overwritten; blocks.0.gate computes exp(), which overflows at
step --at; head reads the gate's output.  With --fault backward the gate's
exp() runs in the backward of an autograd.Function inside blocks.0.gate,
and the training loop reads its output after backward().  The optimizer
steps a real (CPU) parameter, so nanprof counts steps as in any job.

  fake_gpu_job.py LIBFAKEOPS [--fault forward|backward] [--at N] [--steps N]
"""
import argparse
import ctypes
import sys
import time

import torch
import torch.nn as nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--at", type=int, default=3, help="step of the overflow; -1: none")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--fault", choices=["forward", "backward"], default="forward")
    a = ap.parse_args()
    ops = ctypes.CDLL(a.lib)
    ops.fo_gate.argtypes = [ctypes.c_float]
    if ops.fo_init():
        sys.exit("fake_gpu_job: fake CUDA init failed")
    for _ in range(200):            # the agent subscribes within a poll or two
        if ops.fo_subscribed():
            break
        time.sleep(0.02)
    else:
        sys.exit("fake_gpu_job: the agent never subscribed to CUPTI")

    class Attn(nn.Module):
        def forward(self, x):
            ops.fo_attn()
            return x

    class GateBackward(torch.autograd.Function):
        """Identity forward; its backward launches the gate's kernels."""
        value = 1.0

        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            ops.fo_gate(GateBackward.value)
            return g

    class Gate(nn.Module):
        value = 1.0

        def forward(self, x):
            if a.fault == "backward":
                GateBackward.value = self.value
                return GateBackward.apply(x)
            ops.fo_gate(self.value)
            return x

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn, self.gate = Attn(), Gate()

        def forward(self, x):
            return self.gate(self.attn(x))

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 1)

        def forward(self, x):
            if a.fault == "forward":
                ops.fo_head()
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
    model = Model()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(a.steps):
        model.blocks[0].gate.value = 100.0 if step == a.at else 1.0
        opt.zero_grad()
        loss = model(torch.ones(2, 4, requires_grad=True)).sum()
        loss.backward()
        if a.fault == "backward":
            ops.fo_head()           # the gate's gradient work, read after backward()
        opt.step()
        print("step %d loss %r" % (step, loss.item()), flush=True)
        time.sleep(0.05)            # the drain thread polls every 0.5 ms
    time.sleep(0.3)


if __name__ == "__main__":
    main()
