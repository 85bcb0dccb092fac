"""The training loop the GPU check's fault scripts share (bn_fault,
flash_fault, chain_fault, solve_fault, ...): their common options, a
token model around one block and its batches, then steps
of SGD on a mean-squared error, each step's start written for
gpu_records.py ("step N NS", CLOCK_MONOTONIC) and its loss printed as
faults.py prints it ("step N loss L", L as repr(float)).

Imported from the scripts' own directory (Python puts a script's
directory first on sys.path), so the GPU host needs nothing installed.
"""
import argparse
import contextlib
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def parser(doc):
    """The options every fault script takes; a script adds its own."""
    ap = argparse.ArgumentParser(description=doc.strip().splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cuda")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--at", type=int, default=6, help="step of the fault; -1: none")
    ap.add_argument("--step-times", metavar="FILE",
                    help="write 'step N NS' (CLOCK_MONOTONIC) as each step starts")
    ap.add_argument("--wait-file", metavar="FILE",
                    help="before step --wait-at, wait until FILE exists (`nanprof attach` "
                         "comes then)")
    ap.add_argument("--wait-at", type=int, default=0, metavar="N",
                    help="the step --wait-file waits before (default 0; later: the steps "
                         "before have built and cached what the job needs, as a job "
                         "attached to hours in has)")
    return ap


def device(args):
    """Seeds torch and keeps it to one CPU thread (the same steps, run
    after run); the device to build the model on."""
    torch.manual_seed(0)
    torch.set_num_threads(1)
    return torch.device(args.device)


def at_step(args, corrupt):
    """fault(step) for train(): corrupt() under no_grad, at step args.at
    only (the change a fault script makes to its model)."""
    def fault(step):
        if step == args.at:
            with torch.no_grad():
                corrupt()
    return fault


def token_batch(dev, seq, vocab=64, n=4):
    """batch(gen) for train(): n sequences of seq token ids below vocab,
    and a target for each."""
    def draw(gen):
        return (torch.randint(0, vocab, (n, seq), generator=gen).to(dev),
                torch.randn(n, generator=gen).to(dev))
    return draw


class ScaledExp(nn.Module):
    """Linear(d_in, d_out) then exp(gain * x): a branch or a stage whose
    gain (a buffer, 0.1) a fault script sets to 1e4 to overflow its exp."""

    def __init__(self, d_in=64, d_out=64):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)
        self.register_buffer("gain", torch.tensor(0.1))

    def forward(self, x):
        return torch.exp(self.lin(x) * self.gain)


class TokenNet(nn.Module):
    """A language model's shape around one block: embed, then x +
    block(x), then a head averaged over the sequence.  make() builds the
    block (after embed, before head: the seeded weights come in that
    order), registered under name, its module path in what nanprof
    reports."""

    def __init__(self, name, make, vocab=64, d=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.add_module(name, make())   # under that one name only
        self.block_name = name
        self.head = nn.Linear(d, 1)

    def forward(self, tokens):
        x = self.embed(tokens)
        x = x + getattr(self, self.block_name)(x)
        return self.head(x).mean(dim=1).squeeze(-1)


def train(args, model, batch, fault, around=None):
    """args.steps steps of SGD (lr 0.01) on mse_loss(model(inputs), target).

    batch(gen): (inputs, target) on the model's device, drawn from gen (a
    CPU generator, seeded the same every run); fault(step): called before
    each step's forward, changes the model when step is args.at (at_step
    makes one); around():
    a context manager the forward and backward run in (a kernel choice).
    """
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(1)
    times = open(args.step_times, "w") if args.step_times else None
    for step in range(args.steps):
        if getattr(args, "wait_file", None) and step == args.wait_at:
            while not os.path.exists(args.wait_file):
                time.sleep(0.05)
        if times:
            times.write("step %d %d\n" % (step, time.monotonic_ns()))
            times.flush()
        x, y = batch(gen)
        fault(step)
        opt.zero_grad()
        with around() if around else contextlib.nullcontext():
            loss = F.mse_loss(model(x), y)
            loss.backward()
        opt.step()
        sys.stdout.write("step %d loss %r\n" % (step, loss.item()))
        sys.stdout.flush()
    if times:
        times.write("end %d\n" % time.monotonic_ns())
        times.close()
