"""A policy-gradient job with action masking, as RL code writes it:
invalid actions' logits are set to -inf before the log-softmax, so every
step the policy's log-probabilities hold -inf (a mask, not a fault).

  mask_job.py [--steps N] [--dead-row-at K] [--mask-in module|loop]
              [--loss picked|smoothed] [--critic] [--nan-state-at K]
              [--lr-inf-at K] [--pass-on]

With --dead-row-at K, at step K sample 3 of the batch has no valid
action left: its row is all -inf, and log_softmax makes it NaN (the
loss goes NaN).  --mask-in module masks inside Policy.forward (its
output is the masked log-probabilities); loop masks in the training
loop, outside every module.  --loss smoothed weighs every action's
log-probability (label smoothing), masked ones too: -inf in the loss
from step 0, the mask's own fault.  --critic adds a value head, an
outermost call of its own between the policy's and the loss (actor-
critic); --nan-state-at K gives the critic a NaN in sample 5's state at
step K (data: not the mask's); --lr-inf-at K sets the policy's learning
rate to inf at step K (the update's: not the mask's); --pass-on hands
the masked log-probabilities through one more module (nn.Identity: its
input and output hold the mask).  Prints "step K loss X" per step.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 5))

    def forward(self, state, valid=None):
        logits = self.net(state)
        if valid is None:
            return logits
        return F.log_softmax(logits.masked_fill(~valid, float("-inf")), -1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--dead-row-at", type=int, default=-1)
    ap.add_argument("--mask-in", choices=["module", "loop"], default="module")
    ap.add_argument("--loss", choices=["picked", "smoothed"], default="picked")
    ap.add_argument("--critic", action="store_true")
    ap.add_argument("--nan-state-at", type=int, default=-1)
    ap.add_argument("--lr-inf-at", type=int, default=-1)
    ap.add_argument("--pass-on", action="store_true")
    args = ap.parse_args()
    torch.manual_seed(0)
    pi = Policy()
    critic = nn.Linear(8, 1)
    opt = torch.optim.Adam(list(pi.parameters()) + list(critic.parameters()), lr=1e-3)
    for step in range(args.steps):
        state = torch.randn(16, 8)
        valid = torch.rand(16, 5) > 0.3
        valid[:, 0] = True
        action = torch.multinomial(valid.float(), 1).squeeze(1)
        if step == args.dead_row_at:
            valid[3] = False
        if args.mask_in == "module":
            logp = pi(state, valid)
        else:
            logp = F.log_softmax(pi(state).masked_fill(~valid, float("-inf")), -1)
        if args.pass_on:
            logp = nn.Identity()(logp)
        advantage = torch.randn(16)
        if step == args.lr_inf_at:
            opt.param_groups[0]["lr"] = float("inf")
        if args.critic:
            seen = state.clone()
            if step == args.nan_state_at:
                seen[5, 2] = float("nan")
            advantage = advantage - critic(seen).squeeze(1).detach()
        if args.loss == "smoothed":
            weight = F.one_hot(action, 5) * 0.9 + 0.02
            loss = -((logp * weight).sum(-1) * advantage).mean()
        else:
            loss = -(logp.gather(1, action[:, None]).squeeze(1) * advantage).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step %d loss %s" % (step, loss.item()), flush=True)


if __name__ == "__main__":
    main()
