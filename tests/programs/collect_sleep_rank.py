"""Rank 1 sleeps in Python (outside any collective) while the others wait in the next all_reduce.

Run under ``triage launch -- torchrun --nproc-per-node 2``. Rank 1 sleeps in
``sleep_in_python`` for COLLECT_SLEEP_SECONDS (default 120), then joins the all_reduce and
the job ends normally, tearing its process group down (a gloo job that exits without
destroy_process_group() can die of SIGABRT in torch's own teardown, "terminate called without an
active exception", with or without triage: docs/hang-policy.md). With COLLECT_TEARDOWN_ABORT=1,
rank 1 then dies in the process's teardown anyway, after its work and its exit record: a C-level
exit handler that calls abort() after printing what libstdc++ prints for a joinable thread left behind.
"""

import ctypes
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
    dist.destroy_process_group()
    if rank == 1 and os.environ.get("COLLECT_TEARDOWN_ABORT") == "1":
        os.write(2, b"terminate called without an active exception\n")
        libc = ctypes.CDLL(None)
        libc.__cxa_atexit(ctypes.cast(libc.abort, ctypes.c_void_p), None, None)


if __name__ == "__main__":
    main()
