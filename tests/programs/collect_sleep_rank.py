"""Rank 1 sleeps in Python (outside any collective) while the others wait in the next all_reduce.

Run under ``triage launch -- torchrun --nproc-per-node 2``. Rank 1 sleeps in
``sleep_in_python`` for COLLECT_SLEEP_SECONDS (default 120), then joins the all_reduce and
the job ends normally.
"""

import datetime
import os
import time

import torch
import torch.distributed as dist

import triage


def sleep_in_python(seconds: float) -> None:
    time.sleep(seconds)


def main() -> None:
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=120))
    rank = dist.get_rank()
    t = torch.ones(64)
    for _ in range(2):
        dist.all_reduce(t)
        triage.step()
    if rank == 0:
        print("READY", flush=True)
    if rank == 1:
        print("rank 1: sleeping outside any collective", flush=True)
        sleep_in_python(float(os.environ.get("COLLECT_SLEEP_SECONDS", "120")))
    dist.all_reduce(t)
    print(f"rank {rank}: done", flush=True)


if __name__ == "__main__":
    main()
