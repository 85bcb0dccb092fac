"""Two matmuls in a row, the first of which overflows: where only seeing
cuBLAS's calls (cupti/blas.h) names the right one.

embed -> down (Linear 256 -> 16, no bias) -> up (Linear 16 -> 256, no
bias) -> head: a low-rank adapter's shape (LoRA's A then B), nothing
between the two products.  At step --at down's weights are set to
+-3e38: its product overflows (+-inf, or NaN where they meet) in a cuBLAS
kernel, and up's product, another cuBLAS kernel, reads it before any
kernel nanprof decodes.  The first non-finite value is down's output.
Without the calls' view the generic tier, which notes an undecoded
kernel's pointers for its first decoded reader, would name up (the last
undecoded kernel handed that memory); run it with NANPROF_GPU_GUARD=0,
or the guards name down at its module's exit instead.

Prints "step N loss L" (L as repr(float)) like faults.py; --device cpu
runs the same steps, to check the script here.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

import fault_loop


class Net(nn.Module):
    def __init__(self, vocab=64, d=256, rank=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.down = nn.Linear(d, rank, bias=False)
        self.up = nn.Linear(rank, d, bias=False)
        self.head = nn.Linear(d, 1)

    def forward(self, tokens):
        x = self.embed(tokens)
        x = x + self.up(self.down(x))
        return self.head(x).mean(dim=1).squeeze(-1)


def main():
    args = fault_loop.parser(__doc__).parse_args()
    dev = fault_loop.device(args)
    model = Net().to(dev)

    def corrupt():
        w = model.down.weight
        w.copy_(torch.where(w >= 0, 3e38, -3e38))

    fault_loop.train(args, model, fault_loop.token_batch(dev, 96),
                     fault_loop.at_step(args, corrupt))


if __name__ == "__main__":
    main()
