"""Prints a realistic live NCCL_DEBUG=INFO stream (as two ranks sharing one log), over time.

Each rank has a world communicator (2 ranks) and a split one (1 rank). Rank r does
``--ops`` operations on the world comm (op i is OPS[i % 4]) and ``--ops // 2`` all_reduces on the
split comm, interleaved between ranks, then rank 1 hits a WARN. Rank 1's lines carry the
``[rank1]:`` prefix that torchrun adds. Lines are flushed one by one with ``--interval`` s
between operations. Prints READY first and STREAM-END last, then exits.

With ``--stall-rank R --stall-at N`` rank R issues no world-comm op from opCount N on (a rank
that never entered the collective the others wait in); with ``--hold`` the process stays alive
after STREAM-END until killed, like a hung job.

Usage: python nccl_stream.py [--ops 40] [--interval 0.005] [--stall-rank R --stall-at N] [--hold]
"""

from __future__ import annotations

import argparse
import sys
import time

OPS = [("AllReduce", 7, 262144), ("AllGather", 9, 4096), ("ReduceScatter", 9, 65536), ("Broadcast", 7, 1024)]
HOST = "trn-node-3"
PIDS = (52110, 52111)
WORLD = ("0x55a1c9e4b2d0", "0x5601e33f8a10")
SPLIT = ("0x55a1ca0113f0", "0x5601e3410c20")


def emit(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def head(rank: int, tid_offset: int = 0) -> str:
    prefix = "[rank1]:" if rank == 1 else ""
    return f"{prefix}{HOST}:{PIDS[rank]}:{PIDS[rank] + 40 + tid_offset} [{rank}]"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", type=int, default=40)
    parser.add_argument("--interval", type=float, default=0.005)
    parser.add_argument("--hold", action="store_true", help="sleep after STREAM-END until killed")
    parser.add_argument("--stall-rank", type=int, default=None)
    parser.add_argument("--stall-at", type=int, default=None)
    args = parser.parse_args()
    emit("READY")
    emit("NCCL version 2.21.5+cuda12.4")
    for rank in (0, 1):
        emit(f"{head(rank)} NCCL INFO Bootstrap : Using eth0:10.1.0.{rank + 5}<0>")
        emit(f"{head(rank)} NCCL INFO comm {WORLD[rank]} rank {rank} nRanks 2 nNodes 1 localRanks 2 "
             f"localRank {rank} MNNVL 0")
        emit(f"{head(rank)} NCCL INFO ncclCommInitRank comm {WORLD[rank]} rank {rank} nranks 2 cudaDev {rank} "
             f"nvmlDev {rank} busId {rank + 1}8000 commId 0x4d1f9e2a7c3b8e10 - Init COMPLETE")
        emit(f"{head(rank)} NCCL INFO ncclCommSplit comm {SPLIT[rank]} rank 0 nranks 1 cudaDev {rank} "
             f"nvmlDev {rank} busId {rank + 1}8000 parent {WORLD[rank]} color {rank} key 0 "
             f"commId 0x{rank + 7:x}a2b3c4d5e6f7081 - Init COMPLETE")
    split_count = [0, 0]
    for i in range(args.ops):
        name, dtype, count = OPS[i % len(OPS)]
        for rank in (0, 1):
            if rank == args.stall_rank and args.stall_at is not None and i >= args.stall_at:
                continue
            buf = f"0x7f{rank}c{i:06x}00"
            emit(f"{head(rank, 2)} NCCL INFO {name}: opCount {i:x} sendbuff {buf} recvbuff {buf} count {count} "
                 f"datatype {dtype} op 0 root 0 comm {WORLD[rank]} [nranks=2] stream 0x55a1c9e0{rank}f00")
            if i % 2 == 1:
                emit(f"{head(rank, 2)} NCCL INFO AllReduce: opCount {split_count[rank]:x} sendbuff {buf} "
                     f"recvbuff {buf} count 8 datatype 4 op 2 root 0 comm {SPLIT[rank]} [nranks=1] "
                     f"stream 0x55a1c9e0{rank}f00")
                split_count[rank] += 1
        if i % 10 == 0:
            emit(f"[rank0]: step {i} loss 1.{i:03d}")
        time.sleep(args.interval)
    emit("")
    emit(f"{head(1, 5)} transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.1.0.5<41235> "
         "with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.1.0.6")
    emit(f"{head(1, 5)} NCCL INFO transport/net.cc:1298 -> 6")
    emit("STREAM-END")
    if args.hold:
        time.sleep(600)


if __name__ == "__main__":
    main()
