"""Ops that read finite values outside their domain: NaN made by rounding.

  domain_job.py --op sqrt   a layer norm written by hand, whose variance
                            E[x^2] - E[x]^2 rounds below 0 for a sample
                            whose features are all equal: its sqrt is NaN
  domain_job.py --op acos   an angular head: acos of the cosine between a
                            sample and a reference direction it is a
                            multiple of, which rounds past 1
  domain_job.py --op log    a log of a probability of exactly 0: -inf
  domain_job.py --op pow    a "soft" magnitude x ** 0.5 of a signed value

The fault is in sample 2 of step --at (default 3), in the module `feat`;
every other value stays finite.  Prints one line per step.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class HandNorm(nn.Module):
    """A layer norm without eps, written by hand."""

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = (x * x).mean(-1, keepdim=True) - mean * mean
        return (x - mean) / torch.sqrt(var)


class Angle(nn.Module):
    """The angle between each sample and a reference direction."""

    def forward(self, x, ref):
        cos = (F.normalize(x, dim=-1) * F.normalize(ref, dim=-1)).sum(-1, keepdim=True)
        return torch.acos(cos) * x


class LogProb(nn.Module):
    def forward(self, x):
        p = torch.sigmoid(x)
        return torch.log(p * (x > -50))   # a probability masked to exactly 0


class SoftMag(nn.Module):
    def forward(self, x):
        return x ** 0.5


class Net(nn.Module):
    def __init__(self, op, n):
        super().__init__()
        self.inp = nn.Linear(n, n)
        self.feat = {"sqrt": HandNorm, "acos": Angle, "log": LogProb, "pow": SoftMag}[op]()
        self.out = nn.Linear(n, 1)
        self.register_buffer("ref", torch.randn(1, n).abs() + 1.0)

    def forward(self, h, at_fault):
        h = self.inp(h).abs() + 1.0   # > 0: every op in its domain
        if at_fault is not None:      # sample 2 replaced
            h = torch.cat([h[:2], at_fault, h[3:]])
        if isinstance(self.feat, Angle):
            return self.out(self.feat(h, self.ref.expand_as(h)))
        return self.out(self.feat(h))


# What rounds out of the domain depends on torch's summation order and
# the CPU's: searched for, not assumed.
def rounds_below_zero(n):
    """A constant feature value whose E[x^2] - E[x]^2 rounds below 0."""
    for k in range(1, 1000):
        x = torch.full((1, n), 0.01 * k)
        m = x.mean(-1, keepdim=True)
        if ((x * x).mean(-1, keepdim=True) - m * m).item() < 0:
            return x
    raise SystemExit("no constant rounds below 0 here")


def rounds_past_one(ref):
    """A reference direction (written into ref) and a multiple of it whose
    cosine with it rounds past 1."""
    g = torch.Generator().manual_seed(1)
    for _ in range(100):
        ref.copy_(torch.randn(ref.shape, generator=g).abs() + 1.0)
        for k in range(1, 300):
            x = ref * (1.0 + 0.01 * k)
            if (F.normalize(x, dim=-1) * F.normalize(ref, dim=-1)).sum(-1).item() > 1:
                return x
    raise SystemExit("no multiple rounds past 1 here")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--op", choices=["sqrt", "acos", "log", "pow"], required=True)
    ap.add_argument("--at", type=int, default=3)
    ap.add_argument("--steps", type=int, default=6)
    a = ap.parse_args()
    torch.manual_seed(0)
    n = 16
    model = Net(a.op, n)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    with torch.no_grad():
        fault = {"sqrt": lambda: rounds_below_zero(n),
                 "acos": lambda: rounds_past_one(model.ref),
                 "log": lambda: torch.full((1, n), -60.0),
                 "pow": lambda: -torch.ones(1, n)}[a.op]()
    for step in range(a.steps):
        x = torch.randn(8, n) + 3.0
        loss = model(x, fault if step == a.at else None).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step %d loss %.4f" % (step, loss.item()), flush=True)

if __name__ == "__main__":
    main()
