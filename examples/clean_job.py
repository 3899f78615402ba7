"""A clean 2-rank gloo job: a few collectives, a line of output per step, exit 0.

Run it with: ``triage launch -- torchrun --nproc-per-node 2 examples/clean_job.py``
"""

import os

import torch
import torch.distributed as dist

import triage


def main() -> None:
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    steps = int(os.environ.get("EXAMPLE_STEPS", "5"))
    t = torch.ones(8)
    for step in range(steps):
        dist.all_reduce(t)
        triage.step()
        print(f"rank {rank}/{world} step {step} sum {t.sum().item():.0f}", flush=True)
    out = [torch.zeros(8) for _ in range(world)]
    dist.all_gather(out, t)
    dist.broadcast(t, src=0)
    dist.barrier()
    print(f"rank {rank} done", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
