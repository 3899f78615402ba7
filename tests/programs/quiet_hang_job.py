"""Two ranks print three progress lines each, then rank 1 stops (it sleeps) and rank 0 waits for it in an
all_reduce: a job that hangs without a word, whose log ends in the middle of its work. Used by
tests/report/test_end_not_shown.py, which reads the log while the job hangs."""

import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
tensor = torch.ones(4)
for step in range(1, 4):
    dist.all_reduce(tensor)
    print(f"epoch 1 step {step} loss {1.0 / step:.3f}", flush=True)
if rank == 1:
    time.sleep(600)
dist.all_reduce(tensor)
dist.destroy_process_group()
