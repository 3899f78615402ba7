"""Real GPU scenarios for tests/gpu (one GPU is enough: gloo carries the collectives between ranks,
CUDA does the work; NCCL scenarios use one rank, or two ranks on one GPU where that is the fault).

Usage: torchrun --nproc-per-node N tests/programs/gpu_job.py SCENARIO [ITERATIONS]
- ``kernel_hang`` (2 ranks, gloo): rank 1 launches a kernel that spins for hours and synchronizes;
  rank 0 waits in all_reduce;
- ``device_assert`` (2 ranks, gloo): rank 1 indexes out of bounds on the GPU (device-side assert);
- ``oom`` (2 ranks, gloo): rank 1 allocates far more than the GPU holds (torch.OutOfMemoryError);
- ``duplicate_gpu`` (2 ranks, NCCL): both ranks on GPU 0 (NCCL: "Duplicate GPU detected");
- ``watchdog`` (1 rank, NCCL, 5 s timeout): an all_reduce queued behind a spinning kernel, so
  the NCCL watchdog times the collective out and aborts;
- ``nccl_loop`` (1 rank, NCCL): ITERATIONS small all_reduces (the overhead bench), then exits 0.
"""

from __future__ import annotations

import datetime
import sys
import time

import torch
import torch.distributed as dist

SPIN_CYCLES = 1 << 50            # torch.cuda._sleep: far longer than any test


def spin_on_gpu() -> None:
    torch.cuda._sleep(SPIN_CYCLES)
    torch.cuda.synchronize()


def bad_index() -> None:
    values = torch.zeros(4, device="cuda")
    print(values[torch.tensor([10], device="cuda")].sum().item(), flush=True)


def allocate_too_much() -> None:
    _free, total = torch.cuda.mem_get_info()
    torch.empty(int(total * 4), dtype=torch.uint8, device="cuda")


def gloo_scenario(name: str) -> None:
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=120))
    rank = dist.get_rank()
    torch.cuda.set_device(0)
    t = torch.ones(16)
    for _ in range(2):
        dist.all_reduce(t)
    if rank == 0:
        print("READY", flush=True)
    if rank == 1:
        {"kernel_hang": spin_on_gpu, "device_assert": bad_index, "oom": allocate_too_much}[name]()
    dist.all_reduce(t)


def nccl_scenario(name: str, iterations: int) -> None:
    torch.cuda.set_device(0)        # duplicate_gpu: every rank on GPU 0
    timeout = datetime.timedelta(seconds=5 if name == "watchdog" else 120)
    dist.init_process_group("nccl", timeout=timeout)
    t = torch.ones(1024, device="cuda")
    if name == "watchdog":
        dist.all_reduce(t)
        torch.cuda.synchronize()
        torch.cuda._sleep(SPIN_CYCLES)
        dist.all_reduce(t)          # queued behind the spinning kernel: the watchdog times it out
        time.sleep(600)
    started = time.perf_counter()
    for _ in range(iterations):
        dist.all_reduce(t)
    torch.cuda.synchronize()
    print(f"rank {dist.get_rank()}: {iterations} all_reduce in {time.perf_counter() - started:.3f} s", flush=True)
    dist.destroy_process_group()


def main() -> None:
    name = sys.argv[1]
    if name in ("kernel_hang", "device_assert", "oom"):
        gloo_scenario(name)
    else:
        nccl_scenario(name, int(sys.argv[2]) if len(sys.argv) > 2 else 10)


if __name__ == "__main__":
    main()
