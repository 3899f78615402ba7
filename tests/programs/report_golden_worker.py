"""A real gloo job that misbehaves on purpose, for triage report's golden bundles.

Usage: torchrun --nproc-per-node N tests/programs/report_golden_worker.py SCENARIO RUN_DIR
With REPORT_FR_DIR=DIR, hung ranks also write plain fr_json_<rank> / fr_pickle_<rank> dumps to DIR.

Every rank writes <RUN_DIR>/<host>/ranks/<rank>/worker.json (host = node01 for ranks 0-1,
node02 for 2-3, like two nodes). On a hang, a background thread dumps the Flight Recorder
(JSON) and the Python stacks (faulthandler) of its own process into a node bundle
<RUN_DIR>/<host>/bundles/<id>/rank-<r>/ after a delay, then exits the process.
A clean run saves fr-exit.json and exit.json like the in-worker agent does at normal exit.
"""

from __future__ import annotations

import faulthandler
import json
import os
import sys
import threading
import time
from pathlib import Path

import torch
import torch.distributed as dist

DUMP_DELAY = 4.0
BUNDLE_ID = "20261122T000000.000-hang"


def host_of(rank: int) -> str:
    return "node01" if rank < 2 else "node02"


def write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def fr_json() -> bytes:
    return bytes(torch._C._distributed_c10d._dump_fr_trace_json(True, False))


def dump_later(run: Path, rank: int, world: int, skip: bool) -> None:
    time.sleep(DUMP_DELAY)
    plain = os.environ.get("REPORT_FR_DIR")
    if plain:  # plain PREFIX<rank> dumps, as a job without triage would leave them
        c10d = torch._C._distributed_c10d
        Path(plain, f"fr_json_{rank}").write_bytes(fr_json())
        Path(plain, f"fr_pickle_{rank}").write_bytes(bytes(c10d._dump_fr_trace(True, True, False)))
    if not skip:
        out = run / host_of(rank) / "bundles" / BUNDLE_ID / f"rank-{rank}"
        out.mkdir(parents=True, exist_ok=True)
        (out / "fr.json").write_bytes(fr_json())
        with open(out / "stacks.txt", "w") as handle:
            faulthandler.dump_traceback(handle, all_threads=True)
        manifest = run / host_of(rank) / "bundles" / BUNDLE_ID / "manifest.json"
        local = [r for r in range(world) if host_of(r) == host_of(rank)]
        write_json(manifest, {"schema": "triage.bundle/1", "job_id": "golden", "host": host_of(rank),
                              "trigger": "hang", "reason": "golden", "created": 0.0, "finished": 0.0,
                              "ranks": [{"rank": r, "pid": None, "local_rank": r % 2, "alive": True}
                                        for r in local],
                              "collectors": [], "extra": {}})
    print(f"rank {rank} dumped", flush=True)
    os._exit(0)


def save_checkpoint_slowly() -> None:
    time.sleep(60)


def warmup(rank: int) -> None:
    t = torch.ones(4)
    dist.all_reduce(t)
    dist.broadcast(t, src=0)
    dist.all_reduce(torch.ones(16))


def scenario(name: str, rank: int) -> None:
    if name == "op_mismatch":
        if rank == 3:
            dist.all_gather([torch.zeros(8) for _ in range(4)], torch.ones(8))
        else:
            dist.all_reduce(torch.ones(8))
    elif name == "size_mismatch":
        dist.all_reduce(torch.ones(6 if rank == 2 else 8))
        dist.barrier()
    elif name in ("dtype_mismatch", "silent_dtype"):
        # same bytes per element: gloo completes it without complaint (wrong results)
        dist.all_reduce(torch.ones(8, dtype=torch.int32 if rank == 1 else torch.float32))
        dist.barrier()
    elif name == "crash":
        # 8 vs 4 bytes per element: gloo aborts the receiving process (SIGABRT)
        dist.all_reduce(torch.ones(8, dtype=torch.float64 if rank == 1 else torch.float32))
        dist.barrier()
    elif name == "skipped":
        if rank != 1:
            dist.broadcast(torch.ones(4), src=0)
        dist.all_reduce(torch.ones(32))
        dist.barrier()
    elif name in ("missing_rank", "stuck_outside"):
        if rank == 2:
            save_checkpoint_slowly()
        dist.all_reduce(torch.ones(8))
    elif name == "subgroup_mismatch":
        sub = dist.new_group([0, 1, 2])
        dist.new_group([3])
        if rank < 3:
            dist.all_reduce(torch.ones(4), group=sub)
            if rank == 2:
                dist.broadcast(torch.ones(4), src=0, group=sub)
            else:
                dist.all_reduce(torch.ones(4), group=sub)
        dist.barrier()
    elif name == "clean":
        for _ in range(3):
            dist.all_reduce(torch.ones(8))
        dist.all_gather([torch.zeros(2) for _ in range(dist.get_world_size())], torch.ones(2))
        dist.barrier()
    else:
        raise SystemExit(f"unknown scenario {name}")


def main() -> None:
    name, run = sys.argv[1], Path(sys.argv[2])
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    rdir = run / host_of(rank) / "ranks" / str(rank)
    write_json(rdir / "worker.json", {"rank": rank, "world_size": world, "pid": os.getpid(),
                                      "host": host_of(rank), "local_rank": rank % 2})
    fault_log = open(rdir / "faulthandler.log", "w")  # noqa: SIM115 - kept open for the process' life
    faulthandler.enable(file=fault_log, all_threads=True)
    warmup(rank)
    finishes = name in ("clean", "silent_dtype")
    if not finishes and name != "crash":
        skip = name == "missing_rank" and rank == 2
        threading.Thread(target=dump_later, args=(run, rank, world, skip), daemon=True).start()
    try:
        scenario(name, rank)
    except Exception as exc:  # noqa: BLE001 - gloo may raise on mismatches: keep hanging until dumped
        print(f"rank {rank} raised {type(exc).__name__}: {exc}", flush=True)
        if name == "crash":  # record it the way the in-worker agent's excepthook does, then fail
            now = time.time()
            write_json(rdir / "exit.json", {"pid": os.getpid(), "rank": rank, "how": "exception", "exit_code": 1,
                                            "time": now, "step": None,
                                            "exception": {"type": type(exc).__name__, "module": "builtins",
                                                          "message": str(exc)[:300], "time": now}})
            os._exit(1)
        time.sleep(60)
    if finishes:
        write_json(rdir / "fr-exit.json", json.loads(fr_json()))
        write_json(rdir / "exit.json", {"pid": os.getpid(), "rank": rank, "how": "exit", "exit_code": 0,
                                        "time": time.time(), "exception": None, "step": None})
        dist.destroy_process_group()
        return
    time.sleep(60)


if __name__ == "__main__":
    main()
