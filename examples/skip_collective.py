"""One rank skips a collective: rank 1 does not call the all_reduce of step 2.

gloo matches collectives by order and the sizes agree, so the ranks keep going, paired off by
one: from then on rank 1's collective number N is rank 0's number N-1. At the end rank 1 is in
the final barrier (seq 5) while rank 0 is in the all_reduce of step 4 (also seq 5): both hang.
In the Flight Recorder rank 1 has one all_reduce fewer than rank 0.
Ranks give up after EXAMPLE_HANG_SECONDS (default 120).
"""

import torch
import torch.distributed as dist
from _common import init, ready

import triage


def main() -> None:
    rank, _world = init()
    t = torch.ones(256)
    ready(rank)
    for step in range(5):
        if rank == 1 and step == 2:
            print(f"rank {rank}: skipping the all_reduce of step {step}", flush=True)
        else:
            dist.all_reduce(t)
        triage.step()
        print(f"rank {rank} step {step}", flush=True)
    dist.barrier()
    print(f"rank {rank}: done", flush=True)


if __name__ == "__main__":
    main()
