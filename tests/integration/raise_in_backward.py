"""An error torch raises inside loss.backward(), with the agent's
wrapper of torch.autograd.backward in the stack (run with the agent
preloaded): the job gets torch's own exception, and the traceback names
the agent's frame "<nanprof agent>", not an anonymous "<string>".
Exits 0 when both hold, 1 (with the traceback) when not, 2 when the
agent's hooks never came in."""
import sys
import traceback

import torch
import torch.nn as nn

from agent_hooks import wait_for_agent_hooks

if not wait_for_agent_hooks():
    print("the agent's hooks never came in")
    sys.exit(2)
out = nn.Linear(4, 3)(torch.randn(2, 4))
try:
    out.backward()   # not a scalar: torch raises inside backward()
    print("no error raised")
    sys.exit(1)
except RuntimeError as e:
    tb = traceback.format_exc()
    ok = "only for scalar outputs" in str(e) and '"<nanprof agent>"' in tb and "<string>" not in tb
    print(tb)
    print("ok" if ok else "not as expected")
    sys.exit(0 if ok else 1)
