"""Regenerate the Flight Recorder fixtures in this folder from a real torchrun gloo job.

Usage: torchrun --nproc-per-node 2 tests/parsing/data/make_fr_fixtures.py OUTDIR

Every rank runs a few collectives (all_reduce, broadcast, all_gather on a subgroup,
send/recv, barrier), then rank 1 calls all_gather while rank 0 calls all_reduce (a hang).
A background thread dumps the Flight Recorder as JSON and pickle while the main thread is
blocked, writes ``fr_json_RANK`` / ``fr_pickle_RANK`` to OUTDIR, and exits the process once every rank has dumped.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import torch
import torch.distributed as dist


def dump_later(out: Path, rank: int, world: int, delay: float) -> None:
    time.sleep(delay)
    c10d = torch._C._distributed_c10d
    (out / f"fr_json_{rank}").write_bytes(bytes(c10d._dump_fr_trace_json(True, False)))
    (out / f"fr_pickle_{rank}").write_bytes(bytes(c10d._dump_fr_trace(True, True, False)))
    (out / f".dumped_{rank}").touch()
    print(f"rank {rank} dumped", flush=True)
    deadline = time.monotonic() + 60  # exit only when every rank has dumped (no peer-closed errors)
    while time.monotonic() < deadline and len(list(out.glob(".dumped_*"))) < world:
        time.sleep(0.05)
    os._exit(0)


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    sub = dist.new_group([0, 1])
    t = torch.ones(4)
    dist.all_reduce(t)
    dist.broadcast(t, src=0)
    gathered = [torch.zeros(2, dtype=torch.bfloat16) for _ in range(2)]
    dist.all_gather(gathered, torch.ones(2, dtype=torch.bfloat16), group=sub)
    if rank == 0:
        dist.send(torch.arange(3), dst=1)
    else:
        dist.recv(torch.zeros(3, dtype=torch.int64), src=0)
    dist.barrier()
    threading.Thread(target=dump_later, args=(out, rank, dist.get_world_size(), 2.0), daemon=True).start()
    try:
        if rank == 0:
            dist.all_reduce(torch.ones(8))
        else:
            dist.all_gather([torch.zeros(8) for _ in range(2)], torch.ones(8))
    except RuntimeError:
        pass  # the peer exited first after dumping: the dump thread ends this process
    time.sleep(60)


if __name__ == "__main__":
    main()
