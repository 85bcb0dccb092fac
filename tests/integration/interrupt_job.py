"""A training job that is interrupted (SIGINT, as Ctrl-C) while nanprof's
agent runs Python code inside a hook of its own.

torch registers a hook on an autograd node through Python code
(torch.utils.hooks.RemovableHandle); the agent hooks every node at the
start of backward().  At step --at this job sends itself SIGINT from
inside that code, so Python's handler raises KeyboardInterrupt inside
the agent's hook.  The agent must hand it back to the job, not clear it
as one of its own errors: the job then stops at step --at, in
backward(), and says so (exit status 3).  Had the agent swallowed it,
the job would train to the end (exit status 0).

Run only under nanprof (without it no node hook is registered, and the
job runs to its end).
"""
import argparse
import os
import signal
import sys

import torch
import torch.nn as nn
import torch.utils.hooks as hooks

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=8)
ap.add_argument("--at", type=int, default=3)
args = ap.parse_args()

armed = False
orig_init = hooks.RemovableHandle.__init__


def init(self, *a, **kw):
    global armed
    if armed:
        armed = False
        os.kill(os.getpid(), signal.SIGINT)   # handled at the next bytecode: in here
    orig_init(self, *a, **kw)


hooks.RemovableHandle.__init__ = init

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
step = 0
try:
    for step in range(args.steps):
        loss = model(torch.randn(8, 16)).pow(2).mean()
        opt.zero_grad()
        armed = step == args.at
        loss.backward()
        armed = False
        opt.step()
        print("step %d loss %r" % (step, loss.item()), flush=True)
except KeyboardInterrupt:
    print("interrupted at step %d" % step, flush=True)
    sys.exit(3)
print("ran to the end", flush=True)
