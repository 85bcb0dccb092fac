"""A small spectral model whose middle module's output is complex, with
one injected fault, for nanprof's origin on complex tensors:

  inp (Linear) -> spec (Spectrum: rfft, complex64 [B, 9]) -> mag (Mag:
  |sqrt(X)|, a compressed magnitude) -> out (Linear)

  spectrum  spec's spectrum gets 0/0 = NaN in frequency bin 4 of every
            sample (forward): the origin is spec's complex output, only
            index 4 along dim 1; mag after it reads it already NaN
  silent    sample 2 of the batch is silent (spec zeroes it, as padding
            does), so its spectrum is 0; |sqrt(X)| is finite there, its
            gradient is 0/0 (backward): the origin is mag's backward, a
            complex gradient; spec's backward after it only passes it on,
            as compressed magnitude spectrograms do with silent frames

Prints "step N loss L".  Usage: spectral_job.py [--fault none|spectrum|silent]
[--steps N] [--at K]
"""
import argparse

import torch
import torch.nn as nn


class Spectrum(nn.Module):
    def __init__(self):
        super().__init__()
        self.nan_bin = None
        self.silent = None

    def forward(self, x):
        if self.silent is not None:
            keep = torch.ones(x.shape[0], 1, device=x.device)
            keep[self.silent] = 0
            x = x * keep
        X = torch.fft.rfft(x, dim=-1)
        if self.nan_bin is not None:
            # 0/0 in one bin only, +0 elsewhere
            bins = torch.arange(X.shape[-1], device=x.device)
            X = X + torch.zeros_like(X) / (bins != self.nan_bin).to(X.dtype)
        return X


class Mag(nn.Module):
    def forward(self, X):
        return torch.sqrt(X).abs()


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(16, 16)
        self.spec = Spectrum()
        self.mag = Mag()
        self.out = nn.Linear(9, 1)

    def forward(self, x):
        return self.out(self.mag(self.spec(self.inp(x))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fault", choices=["none", "spectrum", "silent"], default="none")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--at", type=int, default=4)
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Model()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for step in range(args.steps):
        x = torch.randn(8, 16)
        at = step == args.at
        model.spec.nan_bin = 4 if at and args.fault == "spectrum" else None
        model.spec.silent = 2 if at and args.fault == "silent" else None
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step %d loss %r" % (step, loss.item()), flush=True)


if __name__ == "__main__":
    main()
