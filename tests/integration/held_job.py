"""A corrupt sample that a saturating op hides from the model's output:

  enc (Linear 8 -> 16) -> act (Tanh) -> head (Linear 16 -> 1)
  or, with --model lstm: rnn (LSTM 8 -> 16, batch first) -> head, on the
  last time step

At step --at, sample 1 of the batch holds +Inf (--value inf) or -Inf
(--value -inf) in one feature.  enc's output is +-Inf there, tanh turns
it into +-1, the model's output and loss stay finite; the backward pass
then makes enc's weight gradient NaN (Inf * 0).  nanprof must name the
input enc received, in the forward pass, not enc's backward.  The LSTM's
gates saturate at once, so no module's output is ever non-finite: only
its backward node, which saved the input, shows it (torch >= 2).

Prints "step N loss L".  Usage: held_job.py [--value inf|-inf|none]
[--model mlp|lstm] [--steps N] [--at K]
"""
import argparse

import torch
import torch.nn as nn


class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(8, 16, batch_first=True)
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        return self.head(self.rnn(x)[0][:, -1])


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(8, 16)
        self.act = nn.Tanh()
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        return self.head(self.act(self.enc(x)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--value", choices=["inf", "-inf", "none"], default="inf")
    ap.add_argument("--model", choices=["mlp", "lstm"], default="mlp")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--at", type=int, default=4)
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    net = Recurrent() if args.model == "lstm" else Net()
    opt = torch.optim.SGD(net.parameters(), lr=1e-2)
    for step in range(args.steps):
        x = torch.randn(4, 5, 8) if args.model == "lstm" else torch.randn(4, 8)
        if step == args.at and args.value != "none":
            x[1, ..., 3] = float(args.value)
        loss = net(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        # the job skips a step whose gradients are not finite, as
        # clip_grad_norm_(error_if_nonfinite=True) users do
        if all(torch.isfinite(p.grad).all() for p in net.parameters()):
            opt.step()
        print("step %d loss %r" % (step, loss.item()), flush=True)


if __name__ == "__main__":
    main()
