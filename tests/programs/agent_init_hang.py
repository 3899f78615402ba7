"""One rank never reaches ``init_process_group`` while the others wait in it.

Run under ``triage launch -- torchrun --nproc-per-node N``. Rank AGENT_INIT_RANK (default 0)
first runs ``load_before_init`` for AGENT_INIT_SECONDS (default 300): it sleeps
(AGENT_INIT_MODE=sleep, the default: blocked) or computes (AGENT_INIT_MODE=busy: a slow start-up).
The other ranks print READY and call ``init_process_group`` at once. Every rank that gets through
does one all_reduce and prints ``rank N: last line``.
"""

import datetime
import os
import time

import torch
import torch.distributed as dist


def load_before_init(seconds: float, mode: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if mode == "busy":
            sum(i * i for i in range(10000))
        else:
            time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))


def main() -> None:
    rank = int(os.environ["RANK"])
    if rank == int(os.environ.get("AGENT_INIT_RANK", "0")):
        load_before_init(float(os.environ.get("AGENT_INIT_SECONDS", "300")), os.environ.get("AGENT_INIT_MODE", "sleep"))
    else:
        print(f"READY rank {rank}: entering init_process_group at {time.time():.3f}", flush=True)
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=600))
    t = torch.ones(8)
    dist.all_reduce(t)
    print(f"rank {rank}: last line", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
