"""Rank 1 waits on one DataLoader worker: worker 1 blocks in a read that never returns.

Run under ``triage launch -- torchrun --nproc-per-node 2``. After two all_reduces, rank 1 reads
two batches from ``DataLoader(num_workers=2)``. Worker 0 serves its batch; worker 1's
``__getitem__`` opens a FIFO nobody writes to (``read_from_store``: a dead object store), so
rank 1 waits for batch 1 forever. Rank 0 waits in the next all_reduce.
"""

import datetime
import os
import tempfile

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset, get_worker_info

import triage


def read_from_store(path: str) -> bytes:
    with open(path, "rb") as fifo:          # blocks: no writer ever opens the FIFO
        return fifo.read()


class StoreDataset(Dataset):
    def __init__(self, fifo: str) -> None:
        self.fifo = fifo

    def __len__(self) -> int:
        return 64

    def __getitem__(self, index: int) -> torch.Tensor:
        info = get_worker_info()
        if info is not None and info.id == 1:
            return torch.tensor(len(read_from_store(self.fifo)))
        return torch.tensor(index)


def main() -> None:
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=300))
    rank = dist.get_rank()
    t = torch.ones(16)
    for _ in range(2):
        dist.all_reduce(t)
        triage.step()
    if rank == 0:
        print("READY", flush=True)
    if rank == 1:
        fifo = os.path.join(tempfile.mkdtemp(prefix="triage-store-"), "object")
        os.mkfifo(fifo)
        for index, batch in enumerate(DataLoader(StoreDataset(fifo), batch_size=4, num_workers=2)):
            t += batch.sum()
            if index == 1:
                break
    dist.all_reduce(t)
    print(f"rank {rank}: last line", flush=True)


if __name__ == "__main__":
    main()
