"""A triangular solve that divides by zero, among cuBLAS's calls that are
not matrix multiplies: where the agent's wrappers of cublasStrsm_v2,
cublasSgemv_v2 and cublasSdot_v2 (cupti/blas.h) are seen on a GPU.

embed -> proj (Linear 128 -> 128) -> solve (x = L^-1 h for a learned
128 x 128 lower triangle L: torch.linalg.solve_triangular, which torch
runs as one cublasStrsm_v2 for one matrix of at least 64 rows) -> head
(torch.mv of the solution and a vector: cublasSgemv_v2; plus torch.dot
of two vectors: cublasSdot_v2, its result kept on the device).  At step
--at one diagonal entry of L is set to 0: the solve divides by it, and
its output holds +-inf (NaN where 0/0), born in cuBLAS's trsm kernel
inside `solve`; head's gemv reads it next.

Prints "step N loss L" (L as repr(float)) like faults.py; --device cpu
runs the same steps, to check the script here.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

import fault_loop


class Solve(nn.Module):
    """x = L^-1 h, L lower triangular: its strict lower part learned, its
    diagonal a buffer (ones, but for the fault)."""

    def __init__(self, d):
        super().__init__()
        self.lower = nn.Parameter(torch.randn(d, d) * (0.1 / d ** 0.5))
        self.register_buffer("diag", torch.ones(d))

    def forward(self, h):
        L = torch.tril(self.lower, -1) + torch.diag(self.diag)
        # h is (tokens, d): solve for its columns, one right-hand side each
        return torch.linalg.solve_triangular(L, h.t(), upper=False).t()


class Head(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.q = nn.Parameter(torch.randn(d) / d ** 0.5)
        self.r = nn.Parameter(torch.randn(d) / d ** 0.5)

    def forward(self, x):
        # mv: gemv over the solution; dot: two vectors, a scalar on the device
        return torch.mv(x, self.q) + torch.dot(self.q, self.r)


class Net(nn.Module):
    def __init__(self, vocab=64, d=128):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.proj = nn.Linear(d, d)
        self.solve = Solve(d)
        self.head = Head(d)

    def forward(self, tokens):
        return self.head(self.solve(self.proj(self.embed(tokens))))


def main():
    args = fault_loop.parser(__doc__).parse_args()
    dev = fault_loop.device(args)
    model = Net().to(dev)

    def batch(gen):
        return (torch.randint(0, 64, (96,), generator=gen).to(dev),
                torch.randn(96, generator=gen).to(dev))

    def corrupt():
        model.solve.diag[7] = 0.0

    fault_loop.train(args, model, batch, fault_loop.at_step(args, corrupt))


if __name__ == "__main__":
    main()
