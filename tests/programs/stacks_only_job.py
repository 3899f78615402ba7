"""A job that triage did not launch: 4 gloo ranks, then one of three hangs (STACKS_MODE):
- ``mismatch``: rank 3 calls broadcast while the others call all_reduce;
- ``outside``: rank 2 sleeps in Python (save_checkpoint) while the others wait in all_reduce;
- ``group``: rank 3 passes another process group (of the same ranks) to the same all_reduce call:
  every stack shows the same call; only a Flight Recorder shows the difference.
Rank 0 prints READY once every rank has passed the last common barrier.
"""

import datetime
import os
import time

import torch
import torch.distributed as dist


def save_checkpoint(seconds: float) -> None:
    time.sleep(seconds)


def main() -> None:
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=300))
    rank, world = dist.get_rank(), dist.get_world_size()
    mode = os.environ.get("STACKS_MODE", "mismatch")
    t = torch.ones(16)
    other = dist.new_group(list(range(world)))
    dist.all_reduce(t)
    dist.barrier()
    if rank == 0:
        print("READY", flush=True)
    if mode == "mismatch" and rank == world - 1:
        dist.broadcast(t, src=0)
    elif mode == "outside" and rank == 2:
        save_checkpoint(300)
    else:
        dist.all_reduce(t, group=other if mode == "group" and rank == world - 1 else None)
    time.sleep(300)


if __name__ == "__main__":
    main()
