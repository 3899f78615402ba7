"""One rank exits early (exit code 3) while the others go on to the next collective.

The others then fail or hang in the next all_reduce (gloo usually notices the closed
connection). The root cause is the early exit of rank 1, not the errors of the others.
"""

import sys
import time

import torch
import torch.distributed as dist
from _common import init, ready

import triage


def main() -> None:
    rank, _world = init()
    t = torch.ones(128)
    for step in range(2):
        dist.all_reduce(t)
        triage.step()
    ready(rank)
    time.sleep(0.5)
    if rank == 1:
        print("rank 1: exiting early with code 3", flush=True)
        sys.exit(3)
    dist.all_reduce(t)
    print(f"rank {rank}: finished (should not happen)", flush=True)


if __name__ == "__main__":
    main()
