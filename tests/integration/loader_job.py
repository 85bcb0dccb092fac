"""A job whose batches come from DataLoader worker processes, started
with `spawn` (each a new Python that imports torch: under `nanprof run`
each is traced and gets the agent), into an LSTM classifier.  Sample
20 * 32 + 5 holds one +inf ([3, 2] of its 12 x 8): at step 20 it is
sample 5 of the batch, seen first by the model's first child, `emb`.

  loader_job.py [--steps N] [--workers K]
"""
import argparse
import sys

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

BATCH = 32
BAD = 20 * BATCH + 5


class Samples(Dataset):
    def __len__(self):
        return 64 * BATCH

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        x = torch.randn(12, 8, generator=g)
        if i == BAD:
            x[3, 2] = float("inf")   # a corrupt record
        return x, torch.randint(0, 4, (), generator=g)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Linear(8, 16)
        self.rnn = nn.LSTM(16, 32, num_layers=2, batch_first=True)
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        h, _ = self.rnn(self.emb(x))
        return self.head(h[:, -1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=24)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    torch.manual_seed(0)
    net = Net()
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    loader = DataLoader(Samples(), batch_size=BATCH, num_workers=a.workers,
                        multiprocessing_context="spawn" if a.workers else None)
    for step, (x, y) in enumerate(loader):
        if step == a.steps:
            break
        loss = nn.functional.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step %d loss %r" % (step, loss.item()))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
