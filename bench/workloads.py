#!/usr/bin/env python3
"""Benchmark workloads for nanprof's overhead measurements.

Three small CPU training jobs, one per run, selected with --model:

  mlp          64 -> 256 -> 256 -> 10, ReLU between, batch 32
  cnn          1x28x28 -> conv(8) -> pool -> conv(16) -> pool -> linear(10), batch 32
  transformer  nn.TransformerEncoder, 2 layers, d_model 64, 4 heads, seq 32,
               batch 16, mean-pooled linear head (10 classes)

All use CrossEntropyLoss and SGD (lr 0.01).  A run does --warmup steps, then
--steps timed steps (time.perf_counter_ns around each whole step: zero_grad,
forward, loss, backward, optimizer.step), and writes a JSON file (--out):

  {"model", "config", "python", "python_version", "torch", "threads", "warmup",
   "steps", "step_times_us": [...], "median_us", "p90_us", "blas"}

Configurations (what runs inside the process; nanprof itself wraps the
process from outside and needs nothing here):

  (default)   plain training
  --anomaly   torch.autograd.set_detect_anomaly(True) around the steps
  --hooks     the "Python hooks" baseline: a forward hook and a full backward
              hook on every module, checking torch.isfinite(t).all() of each
              output / each gradient the module's backward produces

The hooks / anomaly mode are in force for the warm-up steps too, so the timed
steps see the configuration's steady state.  Nothing is printed per step.
Runs on torch 1.13 and newer.
"""

import argparse
import json
import os
import platform
import sys
import time
import warnings

import torch
import torch.nn as nn

N_BATCHES = 8          # distinct pre-generated batches, cycled


def build_mlp(g):
    model = nn.Sequential(
        nn.Linear(64, 256), nn.ReLU(),
        nn.Linear(256, 256), nn.ReLU(),
        nn.Linear(256, 10),
    )
    data = [(torch.randn(32, 64, generator=g), torch.randint(0, 10, (32,), generator=g))
            for _ in range(N_BATCHES)]
    return model, data


def build_cnn(g):
    model = nn.Sequential(
        nn.Conv2d(1, 8, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),    # 8x14x14
        nn.Conv2d(8, 16, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 16x7x7
        nn.Flatten(),
        nn.Linear(16 * 7 * 7, 10),
    )
    data = [(torch.randn(32, 1, 28, 28, generator=g), torch.randint(0, 10, (32,), generator=g))
            for _ in range(N_BATCHES)]
    return model, data


class TransformerClassifier(nn.Module):
    def __init__(self, d_model=64, n_heads=4, n_layers=2, n_classes=10):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model, n_heads, dim_feedforward=4 * d_model,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, n_classes)

    def forward(self, x):
        return self.head(self.encoder(x).mean(dim=1))


def build_transformer(g):
    model = TransformerClassifier()
    data = [(torch.randn(16, 32, 64, generator=g), torch.randint(0, 10, (16,), generator=g))
            for _ in range(N_BATCHES)]
    return model, data


MODELS = {"mlp": build_mlp, "cnn": build_cnn, "transformer": build_transformer}


# ---- the "Python hooks" baseline ----------------------------------------

class HookStats:
    def __init__(self):
        self.checks = 0
        self.bad = 0


def _tensors(obj):
    if torch.is_tensor(obj):
        yield obj
    elif isinstance(obj, (tuple, list)):
        for o in obj:
            if torch.is_tensor(o):
                yield o


def add_finite_hooks(model, stats):
    """Forward hook + full backward hook on every module, checking finiteness
    the way a user would write it."""

    def check(tensors):
        for t in tensors:
            if t.is_floating_point():
                stats.checks += 1
                if not torch.isfinite(t).all().item():
                    stats.bad += 1

    def fwd_hook(module, inputs, output):
        check(_tensors(output))

    def bwd_hook(module, grad_input, grad_output):
        check(_tensors(grad_input))

    handles = []
    for _, module in model.named_modules():
        handles.append(module.register_forward_hook(fwd_hook))
        handles.append(module.register_full_backward_hook(bwd_hook))
    return handles


# ---- BLAS identification ---------------------------------------------------

def blas_info():
    """What BLAS this torch uses: the build's own words (BLAS_INFO /
    LAPACK_INFO and any line naming BLAS or MKL in torch.__config__.show())
    and the BLAS/LAPACK libraries actually mapped into this process (Debian's
    torch says BLAS_INFO=generic but loads whatever libblas.so.3 the
    alternatives system points at: reference BLAS or OpenBLAS)."""
    lines = []
    for line in torch.__config__.show().splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("- Build settings:"):
            for item in line[len("- Build settings:"):].split(","):
                item = item.strip()
                if item.startswith(("BLAS_INFO=", "LAPACK_INFO=", "USE_MKL=", "USE_OPENBLAS=")):
                    lines.append(item)
        elif ("BLAS" in line or "LAPACK" in line or "Math Kernel Library" in line
              or "MKL" in line.replace("MKL-DNN", "")):
            lines.append(line.lstrip("- "))
    mapped = set()
    try:
        with open("/proc/self/maps") as f:
            for entry in f:
                parts = entry.split()
                if len(parts) >= 6:
                    base = os.path.basename(parts[5]).lower()
                    if "blas" in base or "lapack" in base or base.startswith("libmkl"):
                        mapped.add(parts[5])
    except OSError:
        pass
    return {"config": lines, "mapped": sorted(mapped)}


# ---- the run -----------------------------------------------------------------

def percentile(sorted_vals, q):
    """Nearest-rank style linear interpolation, q in [0, 100]."""
    if not sorted_vals:
        return float("nan")
    pos = (len(sorted_vals) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", choices=sorted(MODELS), required=True)
    p.add_argument("--steps", type=int, default=300, help="timed steps (default 300)")
    p.add_argument("--warmup", type=int, default=50, help="untimed warm-up steps (default 50)")
    p.add_argument("--out", required=True, metavar="PATH", help="write the JSON result here")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--anomaly", action="store_true",
                      help="run the steps under torch.autograd.set_detect_anomaly(True)")
    mode.add_argument("--hooks", action="store_true",
                      help="Python forward + full backward hooks checking isfinite on every module")
    p.add_argument("--threads", type=int, default=None,
                   help="torch.set_num_threads(N) (default: torch's choice)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.steps < 1 or args.warmup < 0:
        p.error("--steps must be >= 1 and --warmup >= 0")
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    g = torch.Generator().manual_seed(args.seed)
    model, data = MODELS[args.model](g)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()

    config = "anomaly" if args.anomaly else "hooks" if args.hooks else "none"
    stats = HookStats()
    if args.hooks:
        # torch 2.x warns once that a full backward hook on the first layer
        # fires with respect to outputs only (its input needs no grad): expected.
        warnings.filterwarnings("ignore", message="Full backward hook is firing")
        add_finite_hooks(model, stats)

    def step(i):
        x, y = data[i % len(data)]
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()

    times_ns = []
    clock = time.perf_counter_ns
    with torch.autograd.set_detect_anomaly(args.anomaly):
        for i in range(args.warmup):
            step(i)
        for i in range(args.steps):
            t0 = clock()
            step(i)
            times_ns.append(clock() - t0)

    step_us = [t / 1000.0 for t in times_ns]
    ordered = sorted(step_us)
    result = {
        "model": args.model,
        "config": config,
        "python": sys.executable,
        "python_version": platform.python_version(),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "warmup": args.warmup,
        "steps": args.steps,
        "step_times_us": step_us,
        "median_us": percentile(ordered, 50),
        "p90_us": percentile(ordered, 90),
        "blas": blas_info(),
    }
    if args.hooks:
        result["hook_checks_per_step"] = stats.checks / float(args.warmup + args.steps)
        result["hook_nonfinite"] = stats.bad
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f)
        f.write("\n")
    os.replace(tmp, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
