#!/usr/bin/env python3
"""nanprof's bundled example: a small transformer-style classifier whose
training produces a NaN at a known step and module.

The job is ordinary PyTorch: synthetic "sensor" sequences from a fixed seed,
an input projection, an encoder of two pre-norm blocks and a linear head,
trained with Adam and CrossEntropyLoss.  Nothing in it writes a NaN on
purpose.  The NaN comes from two realistic faults meeting:

* the data pipeline (``SensorBatches``) normalises raw sensor readings, but
  the shard it serves at step ``--nan-step`` was cached before normalisation
  was added, so that one batch arrives in raw units (RMS about 8 instead
  of about 1.2);
* each block ends with a ``SalienceGate`` that scales every token by
  ``exp(temperature * (energy / energy_ref - 1))`` with no clamp and no
  log-space stabiliser.

In ``encoder.layers.0.gate`` the outlier batch's tokens are amplified
(by up to exp(5..10): large, but still finite); in ``encoder.layers.1.gate`` their relative energy
is then so high that ``exp`` overflows float32 to +inf, and the gate's output
holds +/-inf.  The first NaN appears one module later, in ``encoder.norm``
(LayerNorm of a row holding +inf and -inf: inf - inf), and then in the head,
the loss, the gradients and, after ``optimizer.step()``, the parameters.

So the first non-finite module output is ``encoder.layers.1.gate``, in the
forward pass of step ``--nan-step`` (steps are counted from 0; step N is the
N-th ``optimizer.step()``).  With ``--accum K`` the outlier is the first
micro-batch of that step.

The script carries on after the NaN until ``--steps`` (losses print as nan)
unless ``--stop-on-nan`` is given, and exits 0 either way.  It prints
``step N loss X`` on stdout once per optimizer step.

Runs on torch 1.13 and newer.
"""

import argparse
import math
import sys
import time

import torch
import torch.nn as nn

NAN_MODULE = "encoder.layers.1.gate"

# Data shape and model size: small enough for a couple of CPU cores.
BATCH = 32
SEQ_LEN = 16
N_FEATURES = 16
D_MODEL = 64
N_HEADS = 4
D_MLP = 128
N_CLASSES = 4

# Raw sensor units: the loader normalises (raw - RAW_MEAN) / RAW_STD.
RAW_MEAN = 6.0
RAW_STD = 5.0


class SensorBatches:
    """Deterministic synthetic data pipeline.

    Batch ``i`` depends only on ``(seed, i)``, so runs are reproducible
    whatever ``--steps``/``--accum`` are.  Labels come from a fixed random
    "teacher" projection of the sequence mean, so the task is learnable.

    ``raw_batches`` lists the batch indices that are served without
    normalisation (the stale-cache shard).
    """

    def __init__(self, seed, raw_batches=()):
        self.seed = seed
        self.raw_batches = set(raw_batches)
        g = torch.Generator().manual_seed(seed ^ 0x5EED)
        self.teacher = torch.randn(N_FEATURES, N_CLASSES, generator=g)
        self.mixing = torch.randn(N_FEATURES, N_FEATURES, generator=g) / math.sqrt(N_FEATURES)

    def batch(self, index):
        g = torch.Generator().manual_seed(self.seed * 1_000_003 + index)
        z = torch.randn(BATCH, SEQ_LEN, N_FEATURES, generator=g)
        # Correlated features, as real sensors have.
        z = z @ self.mixing + 0.5 * torch.randn(BATCH, 1, N_FEATURES, generator=g)
        raw = RAW_MEAN + RAW_STD * z
        y = (z.mean(dim=1) @ self.teacher).argmax(dim=-1)
        if index in self.raw_batches:
            x = raw                      # the bug: this shard skipped normalisation
        else:
            x = (raw - RAW_MEAN) / RAW_STD
        return x, y


class SalienceGate(nn.Module):
    """Per-token salience gate.

    Scales each token by ``exp(temperature * (e / e_ref - 1))`` where ``e`` is
    the token's mean squared activation and ``e_ref`` a running average of it
    (kept like BatchNorm's running statistics).  Tokens with more energy than
    usual are emphasised, quieter ones damped.  The exponent is not clamped,
    so a token whose energy is far above ``e_ref`` overflows ``exp`` to +inf
    (float32 ``exp`` overflows above about 88.7).
    """

    def __init__(self, d_model, temperature=0.1, momentum=0.05):
        super().__init__()
        self.temperature = temperature
        self.momentum = momentum
        self.scale = nn.Parameter(torch.ones(d_model))
        # Prior: a unit-variance residual stream has energy 1.
        self.register_buffer("energy_ref", torch.ones(()))

    def forward(self, x):
        energy = x.pow(2).mean(dim=-1, keepdim=True)
        ref = self.energy_ref.clone()        # the statistics from before this batch
        relative = energy / ref
        salience = torch.exp(self.temperature * (relative - 1.0))   # no clamp: can overflow
        if self.training:
            with torch.no_grad():
                m = self.momentum
                self.energy_ref.mul_(1.0 - m).add_(m * energy.mean())
        return x * salience * self.scale


class Block(nn.Module):
    """Pre-norm transformer block followed by a salience gate."""

    def __init__(self, d_model, n_heads, d_mlp):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.norm2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, d_mlp),
            nn.GELU(),
            nn.Linear(d_mlp, d_model),
        )
        self.gate = SalienceGate(d_model)

    def forward(self, x):
        h = self.norm1(x)
        a, _ = self.attn(h, h, h, need_weights=False)
        x = x + a
        x = x + self.mlp(self.norm2(x))
        return self.gate(x)


class Encoder(nn.Module):
    def __init__(self, n_layers, d_model, n_heads, d_mlp):
        super().__init__()
        self.layers = nn.ModuleList(Block(d_model, n_heads, d_mlp) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


class SensorClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_proj = nn.Linear(N_FEATURES, D_MODEL)
        self.pos = nn.Parameter(0.02 * torch.randn(SEQ_LEN, D_MODEL))
        self.encoder = Encoder(2, D_MODEL, N_HEADS, D_MLP)
        self.head = nn.Linear(D_MODEL, N_CLASSES)

    def forward(self, x):
        x = self.input_proj(x) + self.pos
        x = self.encoder(x)
        return self.head(x.mean(dim=1))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=60, help="optimizer steps to run (default 60)")
    p.add_argument("--nan-step", type=int, default=40,
                   help="0-based optimizer step whose data is the outlier batch (default 40; -1: none)")
    p.add_argument("--stop-on-nan", action="store_true",
                   help="stop after the first step whose loss is not finite")
    p.add_argument("--sleep", type=float, default=0.0, metavar="SEC",
                   help="sleep SEC seconds after every step (lets a test attach live)")
    p.add_argument("--accum", type=int, default=1, metavar="K",
                   help="gradient accumulation: K forward/backward passes per optimizer step")
    p.add_argument("--threads", type=int, default=None,
                   help="torch.set_num_threads(N) (default: leave torch's choice)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lr", type=float, default=1e-3)
    args = p.parse_args(argv)
    if args.steps < 0 or args.accum < 1:
        p.error("--steps must be >= 0 and --accum >= 1")
    return args


def run(args, setup=None):
    """Train.  ``setup(model, optimizer)``, if given, is called before the
    first step (used by tests to add hooks).  Returns the list of losses."""
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    if args.nan_step >= 0:
        print("example: nan planned at step %d module %s" % (args.nan_step, NAN_MODULE),
              file=sys.stderr, flush=True)
        raw = [args.nan_step * args.accum]     # first micro-batch of that step
    else:
        print("example: no nan planned", file=sys.stderr, flush=True)
        raw = []

    data = SensorBatches(args.seed, raw_batches=raw)
    model = SensorClassifier()
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    if setup is not None:
        setup(model, optimizer)

    losses = []
    for step in range(args.steps):
        optimizer.zero_grad()
        total = 0.0
        for micro in range(args.accum):
            x, y = data.batch(step * args.accum + micro)
            loss = loss_fn(model(x), y)
            (loss / args.accum).backward()
            total += loss.item()
        optimizer.step()
        mean_loss = total / args.accum
        losses.append(mean_loss)
        print("step %d loss %.6f" % (step, mean_loss), flush=True)
        if args.stop_on_nan and not math.isfinite(mean_loss):
            print("example: loss not finite at step %d, stopping" % step,
                  file=sys.stderr, flush=True)
            break
        if args.sleep > 0:
            time.sleep(args.sleep)
    return losses


def main(argv=None):
    run(parse_args(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
