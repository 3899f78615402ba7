"""One rank segfaults mid-training (a NULL read through ctypes) after printing a partial line.

faulthandler writes rank 1's Python stack to ranks/1/faulthandler.log ("Segmentation fault").
Rank 0, waiting in the next all_reduce, fails with a gloo connection error or is torn down by
torchrun (SIGTERM: its stack is saved too). The per-rank log keeps the last bytes written
before the crash, even without a trailing newline; torchrun exits 1 and reports exitcode -11.
"""

import ctypes
import os
import time

import torch
import torch.distributed as dist
from _common import init, ready

import triage


def crash() -> None:
    os.write(1, b"rank 1: about to crash (no newline)")
    ctypes.string_at(0)


def main() -> None:
    rank, _world = init()
    t = torch.ones(128)
    for step in range(3):
        dist.all_reduce(t)
        triage.step()
        print(f"rank {rank} step {step}", flush=True)
    ready(rank)
    time.sleep(0.5)
    if rank == 1:
        crash()
    dist.all_reduce(t)
    print(f"rank {rank}: finished (should not happen)", flush=True)


if __name__ == "__main__":
    main()
