"""What the agent's op search (agent/birth_op.h) costs a forward pass.

Six modules, each a TransformerEncoderLayer(256, 8, 1024) whose output is
made +inf; each is called 4 times, a step apiece: its first 2 births are
searched (and get a spread), the later 2 are not.  Prints the median
process time of both kinds of call, from the same run:

  LD_PRELOAD=$PWD/libnanprof_agent.so NANPROF_AGENT_RECORDS=/tmp/b.rec python3 bench/birth_op_cost.py
"""
import time, torch, torch.nn as nn
torch.set_num_threads(1)
hooks = torch.nn.modules.module._global_forward_hooks
for _ in range(200):
    if len(hooks): break
    time.sleep(0.05)
class Boom(nn.Module):
    def __init__(s):
        super().__init__(); s.layer = nn.TransformerEncoderLayer(256, 8, 1024, batch_first=True)
    def forward(s, x):
        return s.layer(x) * 3e38 * 3e38
ms = [Boom().train() for _ in range(6)]
x = torch.randn(32, 128, 256, requires_grad=True)
opt = torch.optim.SGD([x], lr=0)
walked, plain = [], []
for m in ms:
    for i in range(4):
        t = time.process_time(); y = m(x); dt = time.process_time() - t
        opt.step()
        (walked if i < 2 else plain).append(dt)
walked.sort(); plain.sort()
print("median forward: first 2 births (searched) %.1f ms, later %.1f ms" % (walked[len(walked)//2]*1e3, plain[len(plain)//2]*1e3))
