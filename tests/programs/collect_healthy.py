"""A healthy 2-rank gloo job that keeps training for COLLECT_SECONDS (default 60): all_reduce + step.

Rank 0 prints READY after the first steps. Its stacks show ``train_loop``.
"""

import os
import time

import torch
import torch.distributed as dist

import triage


def train_loop(seconds: float) -> None:
    rank = dist.get_rank()
    t = torch.ones(256)
    deadline = time.time() + seconds
    step = 0
    while time.time() < deadline:
        dist.all_reduce(t)
        t.fill_(1.0)
        triage.step()
        step += 1
        if step == 3 and rank == 0:
            print("READY", flush=True)
        time.sleep(0.1)


def main() -> None:
    dist.init_process_group("gloo")
    train_loop(float(os.environ.get("COLLECT_SECONDS", "60")))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
