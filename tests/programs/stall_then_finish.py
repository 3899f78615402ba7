"""A gloo job whose rank 1 stalls, then goes on: the hang ends by itself and the job exits 0.

Both ranks do one all_reduce (progress), then rank 1 waits outside any collective until GO_FILE
(argv[1]) exists (the test creates it once the agent has dumped the job and left it running; 300 s
at most), while rank 0 waits in the second all_reduce. Then both finish, tear down, and exit 0.
Rank 0 prints READY after the first all_reduce. With a count in argv[2] (default 1) rank 1 stalls that
many times: before each further all_reduce it waits for GO_FILE, then GO_FILE.2, GO_FILE.3, ...
"""

import os
import sys
import time

import torch
import torch.distributed as dist


def wait_for_go(path: str) -> None:
    deadline = time.monotonic() + 300
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.1)


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    dist.all_reduce(torch.ones(16))
    if rank == 0:
        print("READY", flush=True)
    stalls = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    for i in range(stalls):
        if rank == 1:
            wait_for_go(sys.argv[1] + (f".{i + 1}" if i else ""))
        dist.all_reduce(torch.ones(16))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
