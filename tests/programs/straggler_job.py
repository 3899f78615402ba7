"""A gloo job for the straggler tests: STRAG_STEPS steps of compute + all_reduce (+ an all_gather
every 10 steps), then exit 0 (the agent saves each rank's Flight Recorder at exit).

STRAG_SLOW_RANK (default -1: none) sleeps STRAG_EXTRA_MS (default 40) more than the others before
each collective. Every rank also sleeps STRAG_BASE_MS (default 5) with a random jitter of up to
STRAG_JITTER_MS (default 3) before each collective: an equal job has some noise, not none.
Rank 0 prints READY after its first step.

STRAG_UNTIL (a path): after the STRAG_STEPS steps, go on until that file exists (the ranks agree
on it with an all_reduce every 10 steps), so a test can end the job once what it waits for happened.
"""

import os
import random
import time

import torch
import torch.distributed as dist

import triage


def pause(slow: bool, base_ms: float, jitter_ms: float, extra_ms: float) -> None:
    time.sleep((base_ms + random.uniform(0.0, jitter_ms) + (extra_ms if slow else 0.0)) / 1000.0)


def agreed_to_stop(until: str) -> bool:
    """Every rank the same answer: does the file exist for any of them?"""
    flag = torch.tensor([1.0 if os.path.exists(until) else 0.0])
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    return bool(flag.item() > 0.0)


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    steps = int(os.environ.get("STRAG_STEPS", "150"))
    slow = rank == int(os.environ.get("STRAG_SLOW_RANK", "-1"))
    base_ms = float(os.environ.get("STRAG_BASE_MS", "5"))
    jitter_ms = float(os.environ.get("STRAG_JITTER_MS", "3"))
    extra_ms = float(os.environ.get("STRAG_EXTRA_MS", "40"))
    until = os.environ.get("STRAG_UNTIL")
    random.seed(rank * 7919 + os.getpid())
    weights = torch.ones(4096)
    step = 0
    while step < steps or (until is not None and not (step % 10 == 0 and agreed_to_stop(until))):
        grad = weights * 0.5 + 1.0
        pause(slow, base_ms, jitter_ms, extra_ms)
        dist.all_reduce(grad)
        if step % 10 == 9:
            pause(slow, base_ms, jitter_ms, extra_ms)
            out = [torch.zeros(8) for _ in range(dist.get_world_size())]
            dist.all_gather(out, grad[:8])
        triage.step()
        if step == 0 and rank == 0:
            print("READY", flush=True)
        step += 1
    print(f"rank {rank} done", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
