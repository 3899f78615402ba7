"""A 2-rank gloo job whose work finishes (every collective done, destroy_process_group called), then
one rank dies in the process's teardown, after the interpreter has finalized: a C-level exit handler
(``__cxa_atexit``) that calls ``abort()`` (with TEARDOWN_SAY, the rank first prints what libstdc++
prints for a joinable thread left behind). The worker's exit record (written at interpreter exit) then
says exit 0 while torchrun sees SIGABRT."""

import ctypes
import os

import torch
import torch.distributed as dist

BAD = int(os.environ.get("TEARDOWN_RANK", "0"))


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    t = torch.ones(4)
    for step in range(3):
        dist.all_reduce(t)
        print(f"rank {rank} step {step} sum {t.sum().item():g}", flush=True)
    dist.destroy_process_group()
    if rank == BAD:
        libc = ctypes.CDLL(None)
        if os.environ.get("TEARDOWN_SAY"):      # what libstdc++ prints for a joinable thread left behind
            os.write(2, b"terminate called without an active exception\n")
        libc.__cxa_atexit(ctypes.cast(libc.abort, ctypes.c_void_p), None, None)

if __name__ == "__main__":
    main()
