"""Starts WORLD copies of faults.py as the ranks of one gloo job, as
torchrun would (Debian's torch.distributed.run fails on python 3.11):
dist_launcher.py WORLD FAULTS_ARGS..."""
import os
import socket
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
world = int(sys.argv[1])
with socket.socket() as s:          # a free port for the rendezvous
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
procs = []
for rank in range(world):
    env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank),
               MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    procs.append(subprocess.Popen([sys.executable, os.path.join(here, "faults.py")] + sys.argv[2:],
                                  env=env))
status = 0
for rank, p in enumerate(procs):
    rc = p.wait()
    if rc < 0:                      # a rank killed by a signal fails the job too
        sys.stderr.write("dist_launcher: rank %d ended by signal %d\n" % (rank, -rc))
        rc = 128 - rc
    status = status or rc
sys.exit(status)
