"""For jobs run with the agent preloaded alone: wait until its hooks are
in.  The agent installs its global forward hook (and its wrappers of
torch.autograd.backward and .grad) from its own thread, soon after
torch's import; a job that tests what those do must wait for them."""
import time

from torch.nn.modules import module as M


def wait_for_agent_hooks(seconds=10.0):
    """True once the agent's global forward hook is registered; False
    when it has not come within `seconds`."""
    deadline = time.monotonic() + seconds
    while not M._global_forward_hooks:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
