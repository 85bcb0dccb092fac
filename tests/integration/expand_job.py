"""A module whose output is an expanded tensor (stride 0 along the
batch), as learned positional embeddings and class tokens are returned:

  pos (Pos: p * boost, expanded to [B, 6, 8]) + x -> mix (Linear) -> out

At step --at, boost is +Inf: pos's output is non-finite.  nanprof must
check an expanded tensor by the values it stores and name pos, with the
output's own shape [4, 6, 8] and counts, not the model after it.

Prints "step N loss L".  Usage: expand_job.py [--steps N] [--at K]
"""
import argparse

import torch
import torch.nn as nn


class Pos(nn.Module):
    def __init__(self):
        super().__init__()
        self.p = nn.Parameter(torch.randn(6, 8) * 0.1)
        self.boost = 1.0

    def forward(self, x):
        return (self.p * self.boost).expand(x.shape[0], -1, -1)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos = Pos()
        self.mix = nn.Linear(8, 8)
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        return self.out(self.mix(x + self.pos(x))).mean(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--at", type=int, default=3)
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Model()
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    for step in range(args.steps):
        model.pos.boost = float("inf") if step == args.at else 1.0
        loss = model(torch.randn(4, 6, 8)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step %d loss %r" % (step, loss.item()), flush=True)


if __name__ == "__main__":
    main()
