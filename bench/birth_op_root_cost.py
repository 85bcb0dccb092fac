"""What the op search costs at its widest (agent/birth_op.h: 256 autograd
nodes): a birth in the own code of the parent of a 6-layer
TransformerEncoder(256, 8, 1024), whose graph is walked up to the bound.
Each round makes a fresh model (a module's first two births are
searched) and times, by process time, one clean forward and one whose
output the parent makes non-finite (h / (h - h)); an optimizer step
between rounds restarts the agent's per-step bounds.  Run with the agent
preloaded alone (docs/benchmarks.md):

  LD_PRELOAD=$PWD/libnanprof_agent.so NANPROF_AGENT_RECORDS=/tmp/b.rec \\
      python3 bench/birth_op_root_cost.py
"""
import statistics
import time

import torch
import torch.nn as nn


class Parent(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(256, 8, 1024, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 6)
        self.poison = False

    def forward(self, x):
        h = self.enc(x)
        return h / (h - h) if self.poison else h


def main():
    torch.manual_seed(0)
    times = {False: [], True: []}
    for _ in range(24):
        m = Parent()
        x = torch.randn(16, 64, 256)
        for poison in (False, True):
            m.poison = poison
            t0 = time.process_time()
            m(x)
            times[poison].append((time.process_time() - t0) * 1e3)
        torch.optim.SGD(m.parameters(), lr=0.1).step()
    n = len(times[True]) - 2   # the first two rounds warm up
    print("searched birth %.1f ms, clean %.1f ms (medians of %d forwards)" % (
        statistics.median(times[True][2:]), statistics.median(times[False][2:]), n))


if __name__ == "__main__":
    main()
