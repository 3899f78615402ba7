"""Real gloo jobs for the torch-version matrix (tests/matrix): one misbehaviour each.

Usage: torchrun --nproc-per-node N tests/programs/matrix_job.py SCENARIO
- ``exception``: rank 1 raises ValueError after two steps; the others wait in all_reduce;
- ``dtype``: rank 1 all_reduces int32 where the others use float32 (same bytes per element:
  gloo completes it, the results are wrong), then the job finishes cleanly;
- ``subgroup`` (3 ranks): in the group of ranks 0,1 rank 1 calls broadcast while rank 0 calls
  all_reduce; rank 2 waits in the world's barrier.
"""

from __future__ import annotations

import sys

import torch
import torch.distributed as dist
from _common import init, ready


def load_batch(step: int) -> None:
    raise ValueError(f"matrix: bad batch at step {step}")


def main() -> None:
    name = sys.argv[1]
    rank, _world = init()
    t = torch.ones(16)
    for _ in range(2):
        dist.all_reduce(t)
    ready(rank)
    if name == "exception":
        if rank == 1:
            load_batch(2)
        dist.all_reduce(t)
    elif name == "dtype":
        dist.all_reduce(torch.ones(8, dtype=torch.int32 if rank == 1 else torch.float32))
        dist.barrier()
    elif name == "subgroup":
        sub = dist.new_group([0, 1])
        if rank == 0:
            dist.all_reduce(torch.ones(4), group=sub)
        elif rank == 1:
            dist.broadcast(torch.ones(4), src=0, group=sub)
        dist.barrier()
    else:
        raise SystemExit(f"unknown scenario {name}")
    print(f"rank {rank}: finished", flush=True)


if __name__ == "__main__":
    main()
