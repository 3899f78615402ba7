"""Prints a PyTorch ProcessGroupNCCL watchdog timeout (as torch 2.x does) on rank 1's stderr, then waits.

No real NCCL here (CPU box); the line is what the watchdog prints, prefixes included.
"""

import os
import sys
import time

rank = int(os.environ["RANK"])
print(f"rank {rank} started", flush=True)
time.sleep(0.5)
if rank == 1:
    sys.stderr.write(
        "[rank1]:[E1122 10:00:00.123456789 ProcessGroupNCCL.cpp:632] [PG ID 0 PG GUID 0(default_pg) Rank 1] "
        "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=42, OpType=ALLREDUCE, NumelIn=262144, "
        "NumelOut=262144, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n")
    sys.stderr.flush()
time.sleep(float(os.environ.get("COLLECT_SLEEP_SECONDS", "60")))
