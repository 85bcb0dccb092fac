"""An inference-only job: a model in eval mode under torch.inference_mode()
(or torch.no_grad() with --no-grad) runs --batches batches and never
steps an optimizer.  Batch --at holds a NaN in sample 2 (a corrupt
record).  With no optimizer step, everything is step 0: nanprof must say
which call of the model it was (outermost_call, batch --at + 1) and that
it was an inference pass.

Prints "batch N finite B".  Usage: infer_job.py [--batches N] [--at K]
[--no-grad] [--hold DIR]

With --hold DIR it writes DIR/ready once torch is imported and a global
forward hook is in (nanprof's agent: at most 10 s), waits (at most 60 s)
for DIR/go before its first batch, and writes DIR/done as it
returns, its model freed: a test can stop nanprof in between, so that
nanprof reads the job's events only once it is gone.
"""
import argparse
import os
import time

import torch
import torch.nn as nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=12)
    ap.add_argument("--at", type=int, default=7)
    ap.add_argument("--no-grad", action="store_true")
    ap.add_argument("--hold", metavar="DIR")
    args = ap.parse_args()
    if args.hold:
        from torch.nn.modules import module
        for _ in range(100):
            if module._global_forward_hooks:
                break
            time.sleep(0.1)
        open(os.path.join(args.hold, "ready"), "w").close()
        for _ in range(600):
            if os.path.exists(os.path.join(args.hold, "go")):
                break
            time.sleep(0.1)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)).eval()
    with torch.no_grad() if args.no_grad else torch.inference_mode():
        for i in range(args.batches):
            x = torch.randn(4, 8)
            if i == args.at:
                x[2] = float("nan")
            y = model(x)
            print("batch %d finite %s" % (i, bool(torch.isfinite(y).all())), flush=True)
    del model, x, y
    if args.hold:
        open(os.path.join(args.hold, "done"), "w").close()


if __name__ == "__main__":
    main()
