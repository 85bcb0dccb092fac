"""A user's own @triton.jit kernel makes the first Inf: where the agent's
reading of such kernels (agent/triton_jit.py: outputs from the source,
planned through the wrapped JITFunction.run) is seen on a GPU.

compile_fault.py's model, uncompiled, its exp(h * gain) - 1 computed by
scaled_exp_kernel, one Triton program per row, as Liger's kernels are
launched (its backward in PyTorch).  gain is a buffer (ones): at step
--at it is set to 1e4, and exp overflows to +inf in the Triton kernel;
every input of that kernel is finite.

With --compile the mix is torch.compile'd: Inductor recompiles the
user's kernel from its source into its own CachingAutotuner
(custom_kernel), which the agent reads from the source too.

Prints "step N loss L" like faults.py.  --device cpu runs the same
arithmetic in PyTorch (no Triton), to check the script here.
"""
import torch

import compile_fault
import fault_loop

try:
    import triton
    import triton.language as tl
except ImportError:   # --device cpu needs none
    triton = None

if triton is not None:
    @triton.jit
    def scaled_exp_kernel(y_ptr, x_ptr, g_ptr, row_stride, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * row_stride + cols, mask=mask, other=0.0)
        g = tl.load(g_ptr + cols, mask=mask, other=0.0)
        tl.store(y_ptr + row * row_stride + cols, tl.exp(x * g) - 1.0, mask=mask)


class ScaledExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, gain):
        ctx.save_for_backward(x, gain)
        if not x.is_cuda:
            return torch.exp(x * gain) - 1
        x2 = x.contiguous().view(-1, x.shape[-1])
        y = torch.empty_like(x2)
        n_cols = x2.shape[1]
        scaled_exp_kernel[(x2.shape[0],)](y, x2, gain, x2.stride(0), n_cols,
                                          BLOCK=triton.next_power_of_2(n_cols))
        return y.view_as(x)

    @staticmethod
    def backward(ctx, dy):
        x, gain = ctx.saved_tensors
        return dy * torch.exp(x * gain) * gain, None


def main():
    ap = fault_loop.parser(__doc__)
    ap.add_argument("--compile", action="store_true",
                    help="torch.compile the mix (the kernel inside a compiled graph)")
    args = ap.parse_args()
    dev = fault_loop.device(args)
    if dev.type == "cuda" and triton is None:
        raise SystemExit("jit_fault: no triton in this python")
    model = compile_fault.Net(scaled_exp=ScaledExp.apply).to(dev)
    if args.compile:
        model.mix = torch.compile(model.mix)
    compile_fault.train(args, model, dev)


if __name__ == "__main__":
    main()
