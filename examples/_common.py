"""Shared set-up for the examples: a gloo process group whose timeout is EXAMPLE_HANG_SECONDS.

The hanging examples hang until gloo gives up after EXAMPLE_HANG_SECONDS (default 120 s;
gloo's own default is 30 min), so tests and demos do not wait forever.
"""

import datetime
import os

import torch.distributed as dist


def hang_seconds() -> float:
    return float(os.environ.get("EXAMPLE_HANG_SECONDS", "120"))


def init() -> tuple[int, int]:
    timeout = datetime.timedelta(seconds=hang_seconds())
    dist.init_process_group("gloo", timeout=timeout)
    return dist.get_rank(), dist.get_world_size()


def ready(rank: int) -> None:
    """Rank 0 prints READY once every rank is in the process group (tests wait for it)."""
    if rank == 0:
        print("READY", flush=True)
