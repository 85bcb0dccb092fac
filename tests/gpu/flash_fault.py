"""A small transformer layer whose attention makes the first NaN, in one
of PyTorch's fused attention kernels:

  --kernel flash (default): bf16, SDPA forced to FLASH_ATTENTION, the NaN
      made by pytorch_flash::flash_fwd_kernel (cupti/kdecode_flash.c);
  --kernel memeff: fp32, SDPA forced to EFFICIENT_ATTENTION, the NaN made
      by fmha_cutlassF_f32_* (cupti/kdecode_memeff.c): the kernel every
      fp32 transformer's attention runs;
  --kernel cudnn: bf16, SDPA forced to CUDNN_ATTENTION (what recent
      transformers prefer on Hopper), the NaN made by cuDNN's fused
      attention kernel, whose graph execution names O and its statistics
      (cupti/dnn_graph.h).

embed -> attn (qkv Linear, scaled_dot_product_attention with is_causal,
proj Linear) -> head.  At step --at the attention's queries and keys are
made positive and at least 1e20: finite in bf16 and fp32 (the largest
of both is 3.4e38), but every product of two of them is over 1e40, +inf
in the kernel's fp32 scores, and the softmax of a row of +inf (exp of
s - max) is NaN.  Every input of the attention kernel is finite; its
output O is the first non-finite value.  (The CPU's SDPA may treat such
rows otherwise: --device cpu only checks that the script runs.)

Prints "step N loss L" (L as repr(float)) like faults.py; --device cpu
runs the same steps on SDPA's math path, to check the script here.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

import fault_loop


class Attn(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.heads = heads
        self.boost = 1.0            # plain attribute: the fault sets it

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        if self.boost != 1.0:   # every query and key element at least boost
            q, k = (z.abs() * self.boost + self.boost for z in (q, k))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, c))


class Net(nn.Module):
    def __init__(self, vocab=64, d=256, heads=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.attn = Attn(d, heads)
        self.head = nn.Linear(d, 1)

    def forward(self, tokens):
        x = self.embed(tokens)
        x = x + self.attn(x)
        return self.head(x).mean(dim=1).squeeze(-1)


def kernel_only(device, kernel):
    """SDPA restricted to one kernel on CUDA (an error, not another kernel,
    if it cannot run); any backend on the CPU."""
    if device.type != "cuda":
        return torch.enable_grad()
    from torch.nn.attention import SDPBackend, sdpa_kernel
    return sdpa_kernel({"flash": SDPBackend.FLASH_ATTENTION,
                        "memeff": SDPBackend.EFFICIENT_ATTENTION,
                        "cudnn": SDPBackend.CUDNN_ATTENTION}[kernel])


def main():
    ap = fault_loop.parser(__doc__)
    ap.add_argument("--kernel", choices=["flash", "memeff", "cudnn"], default="flash",
                    help="flash: bf16 on the flash kernel; memeff: fp32 on the "
                    "memory-efficient one; cudnn: bf16 on cuDNN's")
    args = ap.parse_args()

    dev = fault_loop.device(args)
    dtype = torch.float32 if args.kernel == "memeff" else torch.bfloat16
    model = Net().to(dev, dtype=dtype)

    def batch(gen):
        return (torch.randint(0, 64, (4, 96), generator=gen).to(dev),
                torch.randn(4, generator=gen).to(dev, dtype=dtype))

    def fault(step):
        model.attn.boost = 1e20 if step == args.at else 1.0

    fault_loop.train(args, model, batch, fault, around=lambda: kernel_only(dev, args.kernel))


if __name__ == "__main__":
    main()
