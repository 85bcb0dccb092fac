"""A model split over two GPUs in one process, as accelerate's
device_map="auto" or a hand-made pipeline splits one.

embed and `first` (Linear(64, 64) then exp(gain * x)) on cuda:0;
`second` (the same) and head on cuda:1.  The activations move to cuda:1
with .to(), torch's copy between devices, issued on the source's device
and stream; torch keeps cuda:0 current between ops, so the hooks of the
modules on cuda:1 run with cuda:0 current.  At step --at second's gain
is 1e4: its exp overflows, on cuda:1.  The origin must be that exp in
`second`, on cuda:1 (`cuda_device` 1), and the job must run to its end:
a check run in the wrong context would read another device's memory (an
illegal address without P2P: the job's context lost).

Needs two CUDA devices: with fewer it prints "split_fault: needs two
CUDA devices" and exits 3 (scripts/gpu_check.sh skips the row first).
--device cpu runs both parts on the CPU, to check the script here.
Prints "step N loss L" (L as repr(float)) like faults.py.
"""
import sys

import torch
import torch.nn as nn

import fault_loop


class Split(nn.Module):
    def __init__(self, dev0, dev1, vocab=64, d=64):
        super().__init__()
        self.dev1 = dev1
        self.embed = nn.Embedding(vocab, d).to(dev0)
        self.first = fault_loop.ScaledExp(d, d).to(dev0)
        self.second = fault_loop.ScaledExp(d, d).to(dev1)
        self.head = nn.Linear(d, 1).to(dev1)

    def forward(self, tokens):
        x = self.first(self.embed(tokens))
        x = x.to(self.dev1)          # the copy between devices
        return self.head(self.second(x)).mean(dim=1).squeeze(-1)


def main():
    args = fault_loop.parser(__doc__).parse_args()
    dev = fault_loop.device(args)
    if dev.type == "cuda" and torch.cuda.device_count() < 2:
        print("split_fault: needs two CUDA devices", file=sys.stderr)
        sys.exit(3)
    dev0, dev1 = (torch.device("cuda", 0), torch.device("cuda", 1)) if dev.type == "cuda" \
        else (dev, dev)
    model = Split(dev0, dev1)
    tokens = fault_loop.token_batch(dev0, 32)

    def batch(gen):                  # the tokens on cuda:0, the target on cuda:1
        x, y = tokens(gen)
        return x, y.to(dev1)

    def corrupt():
        model.second.gain.fill_(1e4)

    fault_loop.train(args, model, batch, fault_loop.at_step(args, corrupt))


if __name__ == "__main__":
    main()
