"""A silent mismatch: ranks pass tensors that do not agree, and gloo does not complain.

What gloo 2.13 accepts silently (checked):
- MODE=dtype (default): all_reduce of float32 on rank 0 and int32 on rank 1 (same element size):
  both ranks finish, the results are garbage;
- MODE=bcast: broadcast of 4 floats from rank 0 into 8 floats on rank 1: finishes, half the
  buffer is never written;
- MODE=shape: all_reduce of shape (2, 4) against (8,) (same numel): finishes (harmless).
An all_reduce of different sizes (4 vs 8 floats) is NOT silent in gloo: rank 0 aborts
(gloo::EnforceNotMet "Received data size doesn't match expected size", SIGABRT).
The job exits 0; only the Flight Recorder (fr-exit.json) shows the mismatch.
"""

import os

import torch
import torch.distributed as dist
from _common import init

import triage


def main() -> None:
    rank, _world = init()
    mode = os.environ.get("MODE", "dtype")
    t = torch.ones(16)
    for _step in range(2):
        dist.all_reduce(t)
        triage.step()
    if mode == "dtype":
        x = torch.ones(4, dtype=torch.float32 if rank == 0 else torch.int32)
        dist.all_reduce(x)
    elif mode == "bcast":
        x = torch.ones(4 if rank == 0 else 8)
        dist.broadcast(x, src=0)
    elif mode == "shape":
        x = torch.ones((2, 4) if rank == 0 else (8,))
        dist.all_reduce(x)
    else:
        raise SystemExit(f"unknown MODE {mode!r}: dtype, bcast or shape")
    dist.barrier()
    print(f"rank {rank}: mode {mode} finished; result {x.flatten()[:4].tolist()}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
