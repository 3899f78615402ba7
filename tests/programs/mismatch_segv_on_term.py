"""A collective mismatch whose rank 0 segfaults when it receives SIGTERM.

Rank 1 calls all_gather while rank 0 calls all_reduce: both wait forever. Rank 0's SIGTERM
handler is set (with libc's signal(), so it runs even while the rank is blocked in C++) to an
address that cannot be executed: the SIGTERM that stops the job turns into a SIGSEGV. triage's
verdict, fixed when it decided to stop the job, must stay the mismatch.
"""

import ctypes
import signal
import time

import torch
import torch.distributed as dist
from _common import init, ready


def segfault_on_sigterm() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.signal.restype = ctypes.c_void_p
    libc.signal.argtypes = (ctypes.c_int, ctypes.c_void_p)
    libc.signal(int(signal.SIGTERM), ctypes.c_void_p(0x10))   # jumping there faults: SIGSEGV


def main() -> None:
    rank, world = init()
    t = torch.ones(1024)
    for _ in range(3):
        dist.all_reduce(t)
    ready(rank)
    time.sleep(0.5)
    if rank == world - 1:
        print(f"rank {rank}: calling all_gather (the others call all_reduce)", flush=True)
        dist.all_gather([torch.zeros(1024) for _ in range(world)], t)
    else:
        segfault_on_sigterm()
        print(f"rank {rank}: calling all_reduce; SIGTERM will crash this rank", flush=True)
        dist.all_reduce(t)


if __name__ == "__main__":
    main()
