"""Rotary position embeddings as complex numbers, as LLaMA's reference
code and torchtitan apply them: the first non-finite value is born in
torch's complex64 multiply.

embed -> attn (wq, then q * freqs_cis on q viewed as complex64, viewed
back as real; wo) -> head.  At step --at freqs_cis is set to 3e38 + 3e38i,
finite: q's (a + bi) times it has real part (a - b) 3e38 and imaginary
part (a + b) 3e38, which overflow wherever |a -+ b| > 1.14.  The complex
multiply (BinaryFunctor<c10::complex<float>, ..., MulFunctor>, strided:
freqs_cis is broadcast over batch and heads) is the origin, checked as
its real view (complex64, viewed_as_real); view_as_real and flatten are
views, wo's matmul reads it next.

Prints "step N loss L" (L as repr(float)) like faults.py; --device cpu
runs the same steps, to check the script here.
"""

import torch
import torch.nn as nn

import fault_loop


def rotate(x, freqs_cis):
    """x (batch, seq, heads, dim) rotated pairwise by freqs_cis (seq, dim / 2)."""
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    out = torch.view_as_real(xc * freqs_cis[None, :, None, :]).flatten(3)
    return out.type_as(x)


class Attn(nn.Module):
    def __init__(self, d=64, heads=4, seq=32):
        super().__init__()
        self.heads = heads
        self.wq = nn.Linear(d, d, bias=False)
        self.wo = nn.Linear(d, d, bias=False)
        half = d // heads // 2
        theta = 1.0 / (10000 ** (torch.arange(half).float() / half))
        angles = torch.outer(torch.arange(seq).float(), theta)
        self.register_buffer("freqs_cis", torch.polar(torch.ones_like(angles), angles))

    def forward(self, x):
        b, t, d = x.shape
        q = self.wq(x).view(b, t, self.heads, d // self.heads)
        q = rotate(q, self.freqs_cis[:t])
        return self.wo(q.reshape(b, t, d))


def main():
    args = fault_loop.parser(__doc__).parse_args()
    dev = fault_loop.device(args)
    model = fault_loop.TokenNet("attn", Attn).to(dev)

    def corrupt():
        model.attn.freqs_cis.fill_(complex(3e38, 3e38))

    fault_loop.train(args, model, fault_loop.token_batch(dev, 32),
                     fault_loop.at_step(args, corrupt))


if __name__ == "__main__":
    main()
