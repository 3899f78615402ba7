"""A 2+-rank gloo training job where one rank segfaults (ctypes) in the middle of training.

The crashing rank (PM_CRASH_RANK, default 1) dereferences NULL at step PM_CRASH_STEP (default 3)
from inside a named Python function; the survivors block in the next all_reduce until the
launcher tears them down. Prints READY once every rank has finished step 0.
"""

import ctypes
import os
import time

import torch
import torch.distributed as dist


def poke_null_pointer() -> None:
    ctypes.string_at(0)          # SIGSEGV inside libc (memmove), called from _ctypes


def train_step(model: torch.nn.Linear, step: int, rank: int) -> None:
    out = model(torch.ones(4, 8)).sum()
    out.backward()
    for param in model.parameters():
        assert param.grad is not None
        dist.all_reduce(param.grad)
    if rank == int(os.environ.get("PM_CRASH_RANK", "1")) and step == int(os.environ.get("PM_CRASH_STEP", "3")):
        poke_null_pointer()


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 2)
    for step in range(int(os.environ.get("PM_STEPS", "1000"))):
        train_step(model, step, rank)
        if step == 0 and rank == 0:
            print("READY", flush=True)
        time.sleep(0.05)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
