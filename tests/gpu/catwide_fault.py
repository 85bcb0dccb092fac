"""A block that concatenates many branches along the feature dimension,
as DenseNet's dense blocks, Inception's and mixture-of-heads layers do:
the first non-finite value is born in one branch, and reaches the next
layer only through torch.cat.

embed -> mixer (20 branches: Linear(64, 8) then exp(gain * x) each;
torch.cat of their (batch, seq, 8) outputs along dim -1, one launch of 20
inputs; proj: Linear(160, 64)) -> head.  At step --at branch 18's gain is
set to 1e4: its exp overflows.  The cat has more inputs than a check
keeps (16): its inputs past the 16th, branch 18's among them, are kept
beside its check (cupti/wide_inputs.h), so the origin is the exp in
mixer.branches.18, not the cat in mixer nor proj's matmul.

Prints "step N loss L" (L as repr(float)) like faults.py; --device cpu
runs the same steps, to check the script here.
"""

import torch
import torch.nn as nn

import fault_loop

BRANCHES = 20
FAULTY = 18          # past the 16 input words a check keeps


class Mixer(nn.Module):
    def __init__(self, d=64, width=8):
        super().__init__()
        self.branches = nn.ModuleList(fault_loop.ScaledExp(d, width)
                                      for _ in range(BRANCHES))
        self.proj = nn.Linear(BRANCHES * width, d)

    def forward(self, x):
        return self.proj(torch.cat([b(x) for b in self.branches], dim=-1))


def main():
    args = fault_loop.parser(__doc__).parse_args()
    dev = fault_loop.device(args)
    model = fault_loop.TokenNet("mixer", Mixer).to(dev)

    def corrupt():
        model.mixer.branches[FAULTY].gain.fill_(1e4)

    fault_loop.train(args, model, fault_loop.token_batch(dev, 32),
                     fault_loop.at_step(args, corrupt))


if __name__ == "__main__":
    main()
