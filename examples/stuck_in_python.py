"""One rank is stuck in Python, outside any collective: rank 1 spins in a loop.

The others wait in the next all_reduce. The report should say rank 1 is outside any
collective (and show its stack), not blame the ranks waiting for it.
Rank 1 spins for EXAMPLE_HANG_SECONDS (default 120) and then exits with an error.
"""

import sys
import time

import torch
import torch.distributed as dist
from _common import hang_seconds, init, ready

import triage


def busy_wait_for_data(seconds: float) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        sum(i * i for i in range(10000))


def main() -> None:
    rank, _world = init()
    t = torch.ones(128)
    for step in range(2):
        dist.all_reduce(t)
        triage.step()
    ready(rank)
    if rank == 1:
        print("rank 1: waiting for data (spinning outside any collective)", flush=True)
        busy_wait_for_data(hang_seconds() + 5)
        sys.exit("rank 1: gave up waiting for data")
    dist.all_reduce(t)
    print(f"rank {rank}: finished", flush=True)


if __name__ == "__main__":
    main()
