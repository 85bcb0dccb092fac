"""Errors torch raises inside its autograd engine, which a training job
catches and goes on from.  nanprof's probes must leave them to Python:
a return probe on a C++ frame the exception crosses would end the job in
std::terminate ("terminate called after throwing an instance of
'c10::Error'") instead.

  step 2: backward() a second time through a freed graph;
  step 3: anomaly mode's check, a sqrt of 0 whose gradient is +inf (the
          birth nanprof names: SqrtBackward0, not anomaly mode's
          PowBackward0);
  step 4: backward() of a tensor that needs no gradient (raised before
          the engine runs).
Each caught; the job then finishes its steps and prints how many errors
it caught.
"""
import argparse

import torch
import torch.nn as nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=6)
    args = ap.parse_args()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    caught = 0
    for step in range(args.steps):
        opt.zero_grad()
        h = model(torch.randn(3, 4))
        if step == 3:
            h = h * 0          # a distance of exactly 0
        loss = h.pow(2).sum(1).sqrt().sum()
        try:
            if step == 3:
                with torch.autograd.detect_anomaly():
                    loss.backward()
            else:
                loss.backward()
            if step == 2:
                loss.backward()            # the graph is freed
            if step == 4:
                torch.zeros(1).backward()  # needs no gradient
        except RuntimeError as e:
            caught += 1
            print("step %d caught: %s" % (step, str(e).splitlines()[0][:60]), flush=True)
        opt.step()
        print("step %d loss %.4f" % (step, loss.item()), flush=True)
    print("caught %d errors, finished %d steps" % (caught, args.steps), flush=True)


if __name__ == "__main__":
    main()
