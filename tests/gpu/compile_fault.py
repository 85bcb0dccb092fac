"""A torch.compile'd model whose Triton kernel makes the first Inf: where
the agent's wrapper of Inductor's CachingAutotuner.run (cupti/triton.h)
is seen on a GPU.

embed -> mix (compiled: Linear, then exp(h * gain) - 1, normalised by
its norm: Inductor's Triton kernels, the exp fused into them) -> head.
gain is a buffer (ones), so that the fault changes no guard and nothing
is compiled again: at step --at it is set to 1e4, and exp overflows to
+inf in the Triton kernel that computes it; the normalisation makes NaN
of it.  Every input of that kernel is finite.

Prints "step N loss L" (L as repr(float)) like faults.py.  --device cpu
compiles for the CPU (C++ kernels, no Triton), to check the script here;
--eager runs it uncompiled.
"""
import torch
import torch.nn as nn

import fault_loop


class Mix(nn.Module):
    """exp(proj(x) * gain) - 1, normalised; scaled_exp(h, gain) computes
    exp(h * gain) - 1 (jit_fault.py puts its Triton kernel there)."""
    def __init__(self, d, scaled_exp=None):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.register_buffer("gain", torch.ones(d))
        self.scaled_exp = scaled_exp or (lambda h, g: torch.exp(h * g) - 1)

    def forward(self, x):
        a = self.scaled_exp(self.proj(x), self.gain)
        return a / (a.norm(dim=-1, keepdim=True) + 1)


class Net(nn.Module):
    def __init__(self, vocab=64, d=256, scaled_exp=None):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.mix = Mix(d, scaled_exp)
        self.head = nn.Linear(d, 1)

    def forward(self, tokens):
        return self.head(self.mix(self.embed(tokens))).mean(dim=1).squeeze(-1)


def train(args, model, dev):
    """fault_loop.train on token batches, gain set to 1e4 at step --at."""
    def batch(gen):
        return (torch.randint(0, 64, (4, 96), generator=gen).to(dev),
                torch.randn(4, generator=gen).to(dev))

    def corrupt():
        model.mix.gain.fill_(1e4)

    fault_loop.train(args, model, batch, fault_loop.at_step(args, corrupt))


def main():
    ap = fault_loop.parser(__doc__)
    ap.add_argument("--eager", action="store_true", help="do not compile (the script's check)")
    args = ap.parse_args()
    dev = fault_loop.device(args)
    model = Net().to(dev)
    if not args.eager:
        model.mix = torch.compile(model.mix)
    train(args, model, dev)


if __name__ == "__main__":
    main()
