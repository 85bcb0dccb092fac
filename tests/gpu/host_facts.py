#!/usr/bin/env python3
"""Facts about this host's Python for scripts/gpu_check.sh, one line each.

  host_facts.py torch   torch's version, CUDA version, cuda_available=...,
                        the device, where torch is, the libcupti beside it
  host_facts.py usdt    stapsdt (USDT) notes in the python binary and its
                        libpython (readelf -n when there is one)
Python 3.8+; `usdt` imports no torch.
"""
import glob
import os
import subprocess
import sys
import sysconfig


def torch_facts():
    import torch
    avail = torch.cuda.is_available()
    tdir = os.path.dirname(torch.__file__)
    cupti = sorted(glob.glob(os.path.join(tdir, "lib", "libcupti*")) +
                   glob.glob(os.path.join(tdir, "..", "nvidia", "*", "lib", "libcupti*")))
    print("%s cuda %s cuda_available=%s device=%r torch=%s libcupti_beside_torch=%s" % (
        torch.__version__, torch.version.cuda, avail,
        torch.cuda.get_device_name(0) if avail else "", tdir,
        ",".join(os.path.normpath(p) for p in cupti) or "none"))


def stapsdt_notes(path):
    try:
        out = subprocess.run(["readelf", "-n", path], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, timeout=20).stdout
        return out.count(b"stapsdt"), "readelf"
    except (OSError, subprocess.TimeoutExpired):
        with open(path, "rb") as f:   # no readelf: the provider name's bytes
            return f.read().count(b"stapsdt"), "bytes"


def usdt_facts():
    files = [os.path.realpath(sys.executable)]
    libdir, soname = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("INSTSONAME")
    if libdir and soname and os.path.exists(os.path.join(libdir, soname)):
        files.append(os.path.realpath(os.path.join(libdir, soname)))
    print("; ".join("%s: %d stapsdt (%s)" % ((f,) + stapsdt_notes(f)) for f in files))


if __name__ == "__main__":
    {"torch": torch_facts, "usdt": usdt_facts}[sys.argv[1]]()
