"""The job of the captured Slurm logs: 2 ranks on gloo (rank and world from srun), all-reduce in a loop;
MODE "exit": rank 1 exits with code 3 at step 100; "kill": rank 1 SIGKILLs itself there; "forever": runs on."""

import os
import sys
import time

import torch
import torch.distributed as dist

rank = int(os.environ["SLURM_PROCID"])
world = int(os.environ["SLURM_NTASKS"])
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29761", rank=rank, world_size=world)
mode = sys.argv[1]
for step in range(1000000):
    t = torch.ones(4)
    dist.all_reduce(t)
    if step % 50 == 0:
        print(f"step {step} sum {t.sum().item()}", flush=True)
    if mode == "exit" and rank == 1 and step == 100:
        print("rank 1: giving up", flush=True)
        sys.exit(3)
    if mode == "kill" and rank == 1 and step == 100:
        os.kill(os.getpid(), 9)
    time.sleep(0.02)
