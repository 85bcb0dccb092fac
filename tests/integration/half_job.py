"""A small attention model trained in float16 on the CPU (model.half()).

At step --at the inputs of sample 2 are 300 times larger: its unscaled
attention scores q @ k^T pass float16's largest value (65504) and become
+inf, and the softmax over them makes NaN.  The softmax keeps only its
result and the bmm only its factors, so the agent computes the bmm again
from q and k to name it (agent/birth_op.c), and the origin says what
float16 holds.  Needs CPU float16 matmul (torch 2; torch 1.13 has none):
exits 3 without it.
"""
import argparse
import sys

import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, x):
        scores = self.q(x) @ self.k(x).transpose(-1, -2)   # no 1/sqrt(d): the bug
        return scores.softmax(-1) @ self.v(x)


class Net(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.inp, self.attn, self.out = nn.Linear(d, d), Attention(d), nn.Linear(d, 1)

    def forward(self, x):
        return self.out(self.attn(self.inp(x))).mean(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--at", type=int, default=5, help="step whose sample 2 is 300x larger")
    ap.add_argument("--steps", type=int, default=8)
    args = ap.parse_args()
    torch.manual_seed(0)
    try:
        torch.ones(2, 2, dtype=torch.half) @ torch.ones(2, 2, dtype=torch.half)
    except RuntimeError as e:
        print("no float16 matmul on the CPU in torch %s: %s" % (torch.__version__, e))
        return 3
    model = Net().half()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for step in range(args.steps):
        x = torch.randn(4, 8, 16).half()
        y = torch.randn(4, 1).half()
        if step == args.at:
            x[2] *= 300
        loss = ((model(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step %d loss %.4f" % (step, loss.item()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
