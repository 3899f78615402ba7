"""Test program for tests/launch/test_stop_story.py: a 2-rank gloo job that steps (an all-reduce a
step) until it is stopped from outside, printing ``READY`` once both ranks have stepped.

Usage: stop_story_job.py MARKERS [--fail-rank R]
Each rank touches ``MARKERS/ready-<rank>`` after its first step. With --fail-rank R, rank R raises
``RuntimeError: stop story failure`` after its first step and touches ``MARKERS/failed-<R>`` just
before (the failure comes before any stop the test sends); the other rank goes on waiting.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import torch
import torch.distributed as dist


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("markers")
    parser.add_argument("--fail-rank", type=int, default=-1)
    args = parser.parse_args()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    markers = Path(args.markers)
    step = 0
    while True:
        tensor = torch.ones(4)
        dist.all_reduce(tensor)
        step += 1
        if step == 1:
            print(f"READY rank {rank}", flush=True)
            (markers / f"ready-{rank}").touch()
            if rank == args.fail_rank:
                time.sleep(0.5)
                (markers / f"failed-{rank}").touch()
                raise RuntimeError("stop story failure")
        if args.fail_rank >= 0:
            time.sleep(0.2)      # the other rank waits in its next all-reduce for the one that failed
        else:
            time.sleep(0.1)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
