"""A GAN's training loop: the discriminator and the generator each have
their own forward, backward and optimizer.step(), in turn, so nanprof
counts two steps an iteration (one per optimizer call).

  gan_job.py [--iterations N] [--fault-at K] [--fault d|g]

With --fault-at K, at iteration K: d) the generator's output is made NaN
between module calls (in the loop): the discriminator's first call on it
receives it, in the discriminator's half (step 2K); g) the generator's
learning rate is inf: its update at step 2K + 1 is non-finite.  Prints
"iteration K d_loss X g_loss Y".
"""
import argparse

import torch
import torch.nn as nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--fault-at", type=int, default=-1)
    ap.add_argument("--fault", choices=["d", "g"], default="d")
    args = ap.parse_args()
    torch.manual_seed(0)
    gen = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
    disc = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    opt_g = torch.optim.Adam(gen.parameters(), 1e-3)
    opt_d = torch.optim.Adam(disc.parameters(), 1e-3)
    bce = nn.BCEWithLogitsLoss()
    ones, zeros = torch.ones(16, 1), torch.zeros(16, 1)
    for it in range(args.iterations):
        at = it == args.fault_at
        real, z = torch.randn(16, 8), torch.randn(16, 4)
        fake = gen(z)
        if at and args.fault == "d":
            fake = fake * float("nan")
        if at and args.fault == "g":
            opt_g.param_groups[0]["lr"] = float("inf")
        d_loss = bce(disc(real), ones) + bce(disc(fake.detach()), zeros)
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        g_loss = bce(disc(fake), ones)
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
        print("iteration %d d_loss %s g_loss %s" % (it, d_loss.item(), g_loss.item()), flush=True)


if __name__ == "__main__":
    main()
