"""Reads triage.worker.flight from a thread while the main thread waits in all_reduce (2 ranks).

Rank 1 enters the all_reduce PROBE_DELAY seconds late; meanwhile a thread of rank 0 fills a
heartbeat the way the worker does and prints it as one JSON line (``BEAT {...}``).
"""

import json
import os
import threading
import time

import torch
import torch.distributed as dist

from triage.worker import flight


def probe() -> None:
    time.sleep(1.0)
    data = {"progress": {}, "fr_state": "off"}
    doc = flight.status()
    if doc is None or not doc.get("pg_status"):
        flight.without_recorder(data, doc)
    print("BEAT " + json.dumps(data), flush=True)


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    dist.all_reduce(torch.ones(4))
    dist.barrier()
    if rank == 0:
        threading.Thread(target=probe, daemon=True).start()
    else:
        time.sleep(float(os.environ.get("PROBE_DELAY", "3")))
    dist.all_reduce(torch.ones(4))      # rank 0 waits here
    time.sleep(0.5)


if __name__ == "__main__":
    main()
