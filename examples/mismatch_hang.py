"""Collective mismatch: the last rank calls all_gather while the others call all_reduce.

Every rank then waits forever in collective number N+1 (same sequence number, different op).
This is what `triage launch` detects as a hang; the report names the rank and the two ops.
Ranks give up after EXAMPLE_HANG_SECONDS (default 120) when gloo times out.

    triage launch -- torchrun --nproc-per-node 2 examples/mismatch_hang.py
"""

import time

import torch
import torch.distributed as dist
from _common import init, ready

import triage


def main() -> None:
    rank, world = init()
    t = torch.ones(1024)
    for step in range(3):
        dist.all_reduce(t)
        triage.step()
        print(f"rank {rank} step {step} ok", flush=True)
    ready(rank)
    time.sleep(0.5)
    if rank == world - 1:
        print(f"rank {rank}: calling all_gather (the others call all_reduce)", flush=True)
        out = [torch.zeros(1024) for _ in range(world)]
        dist.all_gather(out, t)
    else:
        print(f"rank {rank}: calling all_reduce", flush=True)
        dist.all_reduce(t)
    print(f"rank {rank}: finished (should not happen)", flush=True)


if __name__ == "__main__":
    main()
