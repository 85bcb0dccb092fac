"""A small real training job for the integration tests.

Nested modules (a ModuleList of blocks with their own children, a
Python autograd.Function inside them), an
optional gradient accumulation, an optional sleep per step (so a test can
attach to it live).  Runs on torch 1.13 and 2.x.
"""
import argparse
import os
import sys
import time

import torch
import torch.nn as nn


class Clip(torch.autograd.Function):
    """A Python autograd.Function (straight-through clamp to +-1e4, which
    these values never reach): its backward nodes are torch's one C++
    PyNode class, and nanprof must still name them ClipBackward."""
    @staticmethod
    def forward(ctx, x):
        return x.clamp(-1e4, 1e4)

    @staticmethod
    def backward(ctx, g):
        return g


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        return self.norm(Clip.apply(torch.relu(self.fc(x))) + x)


class Net(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.inp = nn.Linear(8, d)
        self.layers = nn.ModuleList([Block(d), Block(d)])
        self.head = nn.Linear(d, 4)

    def forward(self, x):
        x = self.inp(x)
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--accum", type=int, default=1)
    ap.add_argument("--sleep", type=float, default=0.0)
    ap.add_argument("--grad-penalty", action="store_true",
                    help="each batch adds a gradient penalty (WGAN-GP): torch.autograd.grad "
                         "of the output by the input, create_graph=True, a backward pass "
                         "before the batch's second forward and its backward()")
    ap.add_argument("--ready-file")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(8, 8)
    y = torch.randint(0, 4, (8,))
    if args.ready_file:
        open(args.ready_file, "w").write(str(os.getpid()))
    for step in range(args.steps):
        opt.zero_grad()
        for _ in range(args.accum):
            loss = loss_fn(model(x), y) / args.accum
            if args.grad_penalty:
                xi = x.clone().requires_grad_(True)
                g, = torch.autograd.grad(model(xi).sum(), xi, create_graph=True)
                loss = loss + 1e-3 * g.pow(2).sum() + 0 * loss_fn(model(x), y)
            loss.backward()
        opt.step()
        if args.sleep:
            time.sleep(args.sleep)
    # one write: ranks share stdout, and with PYTHONUNBUFFERED print()
    # writes the text and its newline separately, so lines could interleave
    sys.stdout.write("finished %d steps rank=%s loss=%.6f\n"
                     % (args.steps, os.environ.get("RANK", "-"), loss.item()))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
