"""A small CNN whose BatchNorm2d makes the first NaN, on PyTorch's own
batch-norm kernels (cuDNN off: with it, cuDNN's kernels run instead, which
nanprof cannot decode; SyncBatchNorm uses the same native kernels).

conv -> bn -> relu -> pool -> head.  At step --at bn's weight is set to
3e38: its output, weight * (x - mean) * invstd + bias, overflows to +-inf
wherever |x - mean| * invstd > 1.13, from finite inputs, finite statistics
and a finite parameter.  The first kernel to hold the non-finite value is
the transform kernel: batch_norm_transform_input_kernel (NCHW, sized from
its tensor accessor) or, with --channels-last,
batch_norm_transform_input_channels_last_kernel (cupti/kdecode_rows.c).

--cudnn leaves cuDNN on, as torch has it by default: conv and bn then run
cuDNN's kernels, and the agent sees the batch norm at its call
(cupti/dnn.h).  --fault conv sets conv's weight to 3e38 instead: the
convolution's output overflows in cuDNN's kernel, and the batch norm is
the first to read it.  The convolution is seen at its cudnnBackendExecute
(cupti/dnn_graph.h: torch's Conv_v8.cpp); failing that, the batch norm's
call checks its input as the convolution's output (run it without the
guards, NANPROF_GPU_GUARD=0, or they name conv at its module's exit
anyway).

Prints "step N loss L" (L as repr(float)) like faults.py; --device cpu
runs the same steps, to check the script here.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

import fault_loop


class Net(nn.Module):
    def __init__(self, ch=16):
        super().__init__()
        self.conv = nn.Conv2d(3, ch, 3, padding=1)
        self.bn = nn.BatchNorm2d(ch)
        self.head = nn.Linear(ch, 1)

    def forward(self, x):
        x = F.relu(self.bn(self.conv(x)))
        return self.head(F.adaptive_avg_pool2d(x, 1).flatten(1)).squeeze(-1)


def main():
    ap = fault_loop.parser(__doc__)
    ap.add_argument("--channels-last", action="store_true")
    ap.add_argument("--cudnn", action="store_true", help="leave cuDNN on (torch's default)")
    ap.add_argument("--fault", choices=["bn", "conv"], default="bn",
                    help="bn: bn's weight 3e38; conv: conv's weight 3e38")
    args = ap.parse_args()

    torch.backends.cudnn.enabled = args.cudnn
    dev = fault_loop.device(args)
    fmt = torch.channels_last if args.channels_last else torch.contiguous_format
    model = Net().to(dev, memory_format=fmt)

    def batch(gen):
        return (torch.randn(8, 3, 12, 12, generator=gen).to(dev, memory_format=fmt),
                torch.randn(8, generator=gen).to(dev))

    def corrupt():
        (model.conv if args.fault == "conv" else model.bn).weight.fill_(3e38)

    fault_loop.train(args, model, batch, fault_loop.at_step(args, corrupt))


if __name__ == "__main__":
    main()
