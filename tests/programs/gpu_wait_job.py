"""Rank 1 waits on its "GPU" (``cuda.synchronize`` of tests/programs/gpu_stub, a spin that never
ends) while rank 0 waits in all_reduce. Run under ``triage launch -- torchrun --nproc-per-node 2``."""

import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu_stub"))

import cuda


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    t = torch.ones(64)
    for _ in range(2):
        dist.all_reduce(t)
    if rank == 0:
        print("READY", flush=True)
    if rank == 1:
        print("rank 1: waiting on the GPU", flush=True)
        cuda.synchronize()
    dist.all_reduce(t)
    print(f"rank {rank}: done", flush=True)


if __name__ == "__main__":
    main()
