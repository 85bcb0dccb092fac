"""A Fourier layer (FNO's SpectralConv1d): the first non-finite value is
born in cuBLAS's complex product.

lift (Linear) -> spectral (rfft, the lowest modes times complex weights
by einsum, irfft) -> head.  The einsum of complex64 tensors is a batched
complex matmul (cublasCgemmStridedBatched, or cublasCgemm_v2).  At step
--at the weights' real and imaginary parts are set to 3e38: the products
overflow there.  The origin is that call's kernel in spectral, its
output checked as its real view (complex64, viewed_as_real); irfft after
it only carries the values on.

Prints "step N loss L" (L as repr(float)) like faults.py; --device cpu
runs the same steps, to check the script here.
"""

import torch
import torch.nn as nn

import fault_loop


class SpectralConv1d(nn.Module):
    def __init__(self, channels=16, modes=8):
        super().__init__()
        self.modes = modes
        scale = 1.0 / channels
        self.weight = nn.Parameter(scale * torch.randn(channels, channels, modes,
                                                       dtype=torch.complex64))

    def forward(self, x):
        n = x.shape[-1]
        xf = torch.fft.rfft(x, dim=-1)
        low = torch.einsum("bix,iox->box", xf[:, :, :self.modes], self.weight)
        out = torch.zeros(x.shape[0], self.weight.shape[1], n // 2 + 1, dtype=torch.complex64,
                          device=x.device)
        out[:, :, :self.modes] = low
        return torch.fft.irfft(out, n=n, dim=-1)


class Net(nn.Module):
    def __init__(self, channels=16, length=64):
        super().__init__()
        self.lift = nn.Linear(length, length)
        self.spectral = SpectralConv1d(channels)
        self.head = nn.Linear(length, 1)

    def forward(self, x):
        return self.head(self.spectral(self.lift(x))).mean(dim=(1, 2))


def main():
    args = fault_loop.parser(__doc__).parse_args()
    dev = fault_loop.device(args)
    model = Net().to(dev)

    def batch(gen):
        return (torch.randn(4, 16, 64, generator=gen).to(dev),
                torch.randn(4, generator=gen).to(dev))

    def corrupt():
        model.spectral.weight.fill_(complex(3e38, 3e38))

    fault_loop.train(args, model, batch, fault_loop.at_step(args, corrupt))


if __name__ == "__main__":
    main()
