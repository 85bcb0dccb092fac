"""A training job whose model runs under torch.compile (inductor, on the
CPU), with one fault at step --at: blocks.1.lin's first weight row
becomes 3e38 (finite: its output overflows, an output born non-finite),
or, with --fault inf-weight, one weight becomes +inf (a parameter
written outside the optimizer).
Prints each step's loss with repr(), so that two runs can be compared
bit for bit: nanprof must not change what the compiled code computes.

  compiled_fault.py [--steps N] [--at N] [--fault overflow|inf-weight] [--sleep SEC]
                    [--ready-file F]

--at -1: no fault.  --ready-file F is written after step 3 (compiled by
then), for a test that attaches.
"""
import argparse
import time

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 16)
        self.norm = nn.LayerNorm(16)

    def forward(self, x):
        return self.norm(torch.relu(self.lin(x)) + x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(2)])
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--at", type=int, default=6)
    ap.add_argument("--sleep", type=float, default=0.0, help="seconds after each step")
    ap.add_argument("--ready-file")
    ap.add_argument("--fault", choices=["overflow", "inf-weight"], default="overflow")
    a = ap.parse_args()
    torch.manual_seed(0)
    model = Net()
    compiled = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(8, 16)
    for step in range(a.steps):
        if step == a.at:
            with torch.no_grad():
                if a.fault == "inf-weight":
                    model.blocks[1].lin.weight[0, 0] = float("inf")
                else:
                    model.blocks[1].lin.weight[0, :] = 3e38
        opt.zero_grad()
        loss = compiled(x).pow(2).mean()
        loss.backward()
        opt.step()
        print("step %d loss %r" % (step, loss.item()), flush=True)
        if a.ready_file and step == 3:
            open(a.ready_file, "w").write("ready\n")
        time.sleep(a.sleep)


if __name__ == "__main__":
    main()
