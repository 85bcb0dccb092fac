"""Starts one workload process per rank, as torchrun would (Debian's
torch.distributed.run fails on python 3.11, so the tests use this)."""
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
world = int(sys.argv[1]) if len(sys.argv) > 1 else 2
steps = sys.argv[2] if len(sys.argv) > 2 else "4"
procs = []
for rank in range(world):
    env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world))
    # a few steps with a pause: module names are read from the live
    # process, which a job of a few milliseconds may not leave time for
    procs.append(subprocess.Popen([sys.executable, os.path.join(here, "workload.py"),
                                   "--steps", steps, "--sleep", "0.05"], env=env))
sys.exit(max(p.wait() for p in procs))
