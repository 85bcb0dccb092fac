"""A reused device buffer reloaded by a pitched copy, as a cache
offloaded to the host comes back (cudaMemcpy2DAsync of padded rows).

`cache` holds the buffer kv and reads it: x + kv * w.  Between steps,
outside every module, kv is reset to 0.5 (torch's fill kernel: with
--gpu-defer its check waits for its list), then cuMemcpy2DAsync
(libcuda's, through ctypes: the driver call a pitched cudaMemcpy2DAsync
becomes) copies the step's rows over it on torch's current stream, from
pinned host rows padded to a wider pitch.  At step --at one row holds a
NaN.  No kernel made it: the origin must be cache's multiply, the first
kernel reading kv, never the fill whose check was waiting when the copy
overwrote kv (what nanprof named, deferred, before it saw 2D copies:
cupti/driver_writes.h), and the job must run to its end.

--device cpu copies the rows with torch instead, to check the script
here (the origin the same: cache's mul).  Prints "step N loss L" (L as
repr(float)) like faults.py.
"""
import ctypes

import torch
import torch.nn as nn

import fault_loop

ROWS, D, PAD = 64, 64, 16      # the batch's rows, their floats, the host rows' padding


class CudaMemcpy2D(ctypes.Structure):
    """CUDA_MEMCPY2D (cuda.h, the _v2 layout)."""
    _fields_ = [("srcXInBytes", ctypes.c_size_t), ("srcY", ctypes.c_size_t),
                ("srcMemoryType", ctypes.c_int), ("srcHost", ctypes.c_void_p),
                ("srcDevice", ctypes.c_uint64), ("srcArray", ctypes.c_void_p),
                ("srcPitch", ctypes.c_size_t),
                ("dstXInBytes", ctypes.c_size_t), ("dstY", ctypes.c_size_t),
                ("dstMemoryType", ctypes.c_int), ("dstHost", ctypes.c_void_p),
                ("dstDevice", ctypes.c_uint64), ("dstArray", ctypes.c_void_p),
                ("dstPitch", ctypes.c_size_t),
                ("WidthInBytes", ctypes.c_size_t), ("Height", ctypes.c_size_t)]


MEMORYTYPE_HOST, MEMORYTYPE_DEVICE = 1, 2


class PitchedCopy:
    """host rows (ROWS x (D + PAD) floats, pinned) -> dst (ROWS x D) on
    torch's current stream"""

    def __init__(self):
        self.cuda = ctypes.CDLL("libcuda.so.1")
        self.copy = self.cuda.cuMemcpy2DAsync_v2
        self.copy.argtypes = [ctypes.POINTER(CudaMemcpy2D), ctypes.c_void_p]
        self.copy.restype = ctypes.c_int

    def __call__(self, dst, host):
        c = CudaMemcpy2D()
        c.srcMemoryType, c.srcHost, c.srcPitch = MEMORYTYPE_HOST, host.data_ptr(), (D + PAD) * 4
        c.dstMemoryType, c.dstDevice, c.dstPitch = MEMORYTYPE_DEVICE, dst.data_ptr(), D * 4
        c.WidthInBytes, c.Height = D * 4, ROWS
        r = self.copy(ctypes.byref(c), ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
        if r != 0:
            raise RuntimeError("cuMemcpy2DAsync_v2 failed: %d" % r)


class Cache(nn.Module):
    """x + kv * w, kv a buffer the loop reloads"""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(D))
        self.register_buffer("kv", torch.zeros(ROWS, D))

    def forward(self, x):
        return x + self.kv * self.w


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = Cache()
        self.proj = nn.Linear(D, D)
        self.head = nn.Linear(D, 1)

    def forward(self, x):
        return self.head(torch.relu(self.proj(self.cache(x)))).squeeze(-1)


def main():
    args = fault_loop.parser(__doc__).parse_args()
    dev = fault_loop.device(args)
    model = Net().to(dev)
    cuda = dev.type == "cuda"
    host = torch.zeros(ROWS, D + PAD, pin_memory=cuda)
    kv = model.cache.kv
    copy = PitchedCopy() if cuda else None
    steps = iter(range(args.steps))

    def batch(gen):
        step = next(steps)
        host[:, :D] = torch.randn(ROWS, D, generator=gen)
        if step == args.at:
            host[3, 5] = float("nan")
        x = torch.randn(ROWS, D, generator=gen).to(dev)
        target = torch.randn(ROWS, generator=gen).to(dev)
        with torch.no_grad():
            kv.fill_(0.5)                     # its check may wait (deferred)
            if copy:
                copy(kv, host)
            else:
                kv.copy_(host[:, :D])
        return x, target

    fault_loop.train(args, model, batch, lambda step: None)
    if cuda:
        torch.cuda.synchronize()


if __name__ == "__main__":
    main()
