"""A gradient penalty computed by a TorchScript function, scripted once
the agent's hooks are in (--wait-agent: with the agent preloaded) so that
torch.autograd.grad is the agent's wrapper by then.  TorchScript maps
torch.autograd.grad to its builtin aten::grad by the function's identity:
the wrapper must map there too, or scripting fails ("annotated
assignments without assigned value aren't supported", in torch's own
grad).  The scripted grad runs the autograd engine from C++, with no
Python backward() around it: nanprof must not take it for a backward
pass it would never see end.  Then the usual backward() and step, and a
forward after them; each step's loss printed.  Exits 2 when --wait-agent
and the hooks never came.
"""
import argparse
import sys

import torch
import torch.nn as nn

from agent_hooks import wait_for_agent_hooks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--wait-agent", action="store_true")
    args = ap.parse_args()
    if args.wait_agent and not wait_for_agent_hooks():
        print("the agent's hooks never came in")
        sys.exit(2)

    @torch.jit.script
    def penalty(y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        g = torch.autograd.grad([y.sum()], [x], create_graph=True)[0]
        assert g is not None
        return g.pow(2).mean()

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(args.steps):
        x = torch.randn(3, 4, requires_grad=True)
        y = model(x)
        loss = y.pow(2).mean() + penalty(y, x)
        opt.zero_grad()
        loss.backward()
        opt.step()
        model(torch.randn(2, 4))   # a forward after the backward
        print("step %d loss %.6f" % (step, loss.item()), flush=True)


if __name__ == "__main__":
    main()
