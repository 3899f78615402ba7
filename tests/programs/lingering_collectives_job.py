"""A healthy gloo job whose collectives often outlast a heartbeat interval (for the heartbeat's dump budget).

argv: ROUNDS, DELAY (seconds), OUT (a directory). Rank 0 prints READY once in the process group, then runs
ROUNDS all_reduces; rank 1 sleeps DELAY before each, so each stays enqueued but not completed on rank 0 for
DELAY (a slow step, not a hang). Then rank 0 prints ``ROUNDS DONE`` and both ranks wait, in the process group,
until OUT/stop exists (the test reads the last heartbeat meanwhile), and leave normally.
"""

import os
import sys
import time

import torch
import torch.distributed as dist

rounds, delay, out = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.ones(8)
dist.all_reduce(t)
if rank == 0:
    print("READY", flush=True)
for _ in range(rounds):
    if rank == 1:
        time.sleep(delay)
    dist.all_reduce(t)
if rank == 0:
    print("ROUNDS DONE", flush=True)
deadline = time.monotonic() + 120
while not os.path.exists(os.path.join(out, "stop")) and time.monotonic() < deadline:
    time.sleep(0.05)
dist.barrier()
dist.destroy_process_group()
