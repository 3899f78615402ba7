"""One rank skips a collective: rank 1 does not call the all_reduce of step 2.

The ranks stay paired off by one (gloo matches collectives by order, and the sizes agree),
so the job runs on until rank 0 waits in one more collective than rank 1 ever calls:
rank 0 hangs in the final barrier while rank 1 has already left it... or exited.
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
    # rank 1 is one collective ahead: keep it alive in a last barrier, as a real job would
    dist.barrier()


if __name__ == "__main__":
    main()
