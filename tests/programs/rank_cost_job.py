"""What one hang bundle costs a rank, measured by the rank itself (bench/bench_rank_cost.py).

Two ranks warm up (a few all_reduce calls, then RANK_COST_WARM seconds so the in-worker agent's
first heartbeats have run), record their modules, CPU seconds and peak RSS, then rank 1 sleeps
RANK_COST_PAUSE seconds outside any collective while rank 0 waits in all_reduce. After it, each
rank writes ``rank-<r>.json`` into RANK_COST_OUT: the modules added during the pause, the CPU
seconds and the peak-RSS growth.
"""

import json
import os
import sys
import time
from typing import Any

import torch
import torch.distributed as dist


def _status_kb(field: str) -> int:
    with open("/proc/self/status", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def snapshot() -> dict[str, Any]:
    return {"modules": sorted(sys.modules), "cpu_s": time.process_time(),
            "hwm_kb": _status_kb("VmHWM"), "rss_kb": _status_kb("VmRSS"), "time": time.time()}


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    t = torch.ones(1024)
    for _ in range(3):
        dist.all_reduce(t)
    time.sleep(float(os.environ.get("RANK_COST_WARM", "3")))
    dist.barrier()
    before = snapshot()
    if rank == 0:
        print("READY", flush=True)
    if rank == 1:
        time.sleep(float(os.environ.get("RANK_COST_PAUSE", "20")))
    dist.all_reduce(t)
    after = snapshot()
    result = {"rank": rank, "pid": os.getpid(), "modules_before": len(before["modules"]),
              "modules_added": sorted(set(after["modules"]) - set(before["modules"])),
              "cpu_s": after["cpu_s"] - before["cpu_s"], "hwm_added_kb": after["hwm_kb"] - before["hwm_kb"],
              "rss_added_kb": after["rss_kb"] - before["rss_kb"], "wall_s": after["time"] - before["time"]}
    out = os.environ.get("RANK_COST_OUT")
    if out:
        with open(os.path.join(out, f"rank-{rank}.json"), "w", encoding="utf-8") as handle:
            json.dump(result, handle)
    print(f"rank {rank}: done", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
