"""An inference-only job: a model in eval mode under torch.inference_mode()
(or torch.no_grad() with --no-grad) runs --batches batches and never
steps an optimizer.  Batch --at holds a NaN in sample 2 (a corrupt
record).  With no optimizer step, everything is step 0: nanprof must say
which call of the model it was (outermost_call, batch --at + 1) and that
it was an inference pass.

Prints "batch N finite B".  Usage: infer_job.py [--batches N] [--at K]
[--no-grad]
"""
import argparse

import torch
import torch.nn as nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=12)
    ap.add_argument("--at", type=int, default=7)
    ap.add_argument("--no-grad", action="store_true")
    args = ap.parse_args()
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


if __name__ == "__main__":
    main()
