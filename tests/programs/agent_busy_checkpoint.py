"""Rank 0 is busy outside any collective (writing a "checkpoint") while the others wait in a barrier.

Run under ``triage launch -- torchrun --nproc-per-node 3``. After two all_reduces, rank 0
writes to a file in ``save_checkpoint`` for AGENT_BUSY_SECONDS (default 30), in chunks of
1 MiB (fsync'd now and then, so the bytes really move), while ranks 1-2 wait in a barrier.
Then every rank joins the barrier and prints ``rank N: last line``; the job exits 0.
AGENT_BUSY_MODE=sleep makes rank 0 sleep instead (a rank that does nothing: a real hang).
AGENT_BUSY_RANK picks another rank than 0 for that part.
"""

import datetime
import os
import tempfile
import time

import torch
import torch.distributed as dist

import triage


def save_checkpoint(path: str, seconds: float) -> int:
    chunk = os.urandom(1 << 20)
    written = 0
    deadline = time.monotonic() + seconds
    with open(path, "wb") as handle:
        while time.monotonic() < deadline:
            handle.write(chunk)
            written += len(chunk)
            if written % (64 << 20) == 0:
                handle.flush()
                os.fsync(handle.fileno())
                handle.seek(0)       # keep the file small: the bytes still go to the disk
    return written


def sleep_outside_collectives(seconds: float) -> None:
    time.sleep(seconds)


def main() -> None:
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=600))
    rank = dist.get_rank()
    t = torch.ones(64)
    for _ in range(2):
        dist.all_reduce(t)
        triage.step()
    if rank == 0:
        print("READY", flush=True)
    if rank == int(os.environ.get("AGENT_BUSY_RANK", "0")):
        seconds = float(os.environ.get("AGENT_BUSY_SECONDS", "30"))
        if os.environ.get("AGENT_BUSY_MODE") == "sleep":
            sleep_outside_collectives(seconds)
        else:
            with tempfile.TemporaryDirectory(prefix="triage-ckpt-") as tmp:
                written = save_checkpoint(os.path.join(tmp, "ckpt.bin"), seconds)
            print(f"rank {rank}: checkpoint written ({written >> 20} MiB)", flush=True)
    dist.barrier()
    print(f"rank {rank}: last line", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
