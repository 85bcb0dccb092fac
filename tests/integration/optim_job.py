"""An optimizer's update makes the parameters non-finite from finite ones.

  optim_job.py --fault eps0 [--optim adam|adamw|nadam|radam|rmsprop|adagrad|adadelta|adamax]
      eps=0: embedding rows 5..9 are never looked up, so their gradient and
      the optimizer's second moment stay 0 there, and the first update
      divides 0 by 0: rows 5..9 of 0.weight are NaN at step 0 (20 values;
      RAdam divides by its second moment from step 5 on, NaN there)
  optim_job.py --fault half
      the model and Adam in float16 with the default eps=1e-8, which
      float16 rounds to 0: the same rows, the classic "Adam in pure
      float16 goes NaN"; exits 3 where the CPU has no float16 matmul and
      Adam (torch 1.13)
  optim_job.py --fault lr
      SGD with a square-root decay schedule built for 3 steps, run for 6:
      its learning rate is sqrt(1 - 4/3) = nan at step 4, every parameter
      NaN there
  optim_job.py --fault overflow
      SGD with lr=1e38 and targets of 1e4 overflows the update at step 0:
      no denominator, no bad learning rate, nothing for nanprof to explain

Prints one line per step; nanprof names 0.weight after the update.
"""
import argparse
import sys

import torch
import torch.nn as nn

OPTIMS = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW, "nadam": torch.optim.NAdam,
          "radam": torch.optim.RAdam, "rmsprop": torch.optim.RMSprop,
          "adagrad": torch.optim.Adagrad, "adadelta": torch.optim.Adadelta,
          "adamax": torch.optim.Adamax}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fault", choices=["eps0", "half", "lr", "overflow"], required=True)
    ap.add_argument("--optim", choices=sorted(OPTIMS), default="adam")
    ap.add_argument("--steps", type=int, default=6)
    a = ap.parse_args()

    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 2))
    sched = None
    if a.fault == "half":
        try:
            w = torch.ones(2, 2, dtype=torch.half)
            w @ w
            w.addcmul_(w, w)
        except RuntimeError as e:
            print("no float16 matmul or addcmul on the CPU in torch %s: %s"
                  % (torch.__version__, e))
            return 3
        model = model.half()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    elif a.fault == "eps0":
        opt = OPTIMS[a.optim](model.parameters(), lr=1e-3, eps=0.0)
    elif a.fault == "lr":
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        total = 3   # the schedule's length: the run goes on past it
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda s: float(torch.tensor(1.0 - s / total).sqrt()) if s else 1.0)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=1e38)
    idx = torch.arange(8) % 5   # rows 0..4 only
    scale = 1e4 if a.fault == "overflow" else 1.0
    target = torch.full((8, 2), scale, dtype=model[1].weight.dtype)
    for step in range(a.steps):
        out = model(idx)
        loss = (out - target).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        print("step %d loss %.4f lr %s finite %s" % (
            step, loss.item(), opt.param_groups[0]["lr"],
            bool(torch.isfinite(model[0].weight).all())), flush=True)


if __name__ == "__main__":
    sys.exit(main())
