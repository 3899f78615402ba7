"""Writes a realistic NCCL INFO/WARN stream (as NCCL 2.21 would) into NCCL_DEBUG_FILE, then hangs.

No torch: the only evidence of the hang is the NCCL stream. Both ranks issue AllReduce ops
(opCount 0..N, hexadecimal) on a 2-rank communicator; rank 1 stops one op early (opCount N-1)
and logs a WARN; then both ranks sleep (the "hang") for COLLECT_SLEEP_SECONDS (default 60).
"""

import os
import socket
import threading
import time

LAST_OP = 0x14


def line_prefix(rank: int) -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_native_id()} [{rank}] NCCL INFO "


def main() -> None:
    rank = int(os.environ["RANK"])
    path = os.environ.get("NCCL_DEBUG_FILE") or f"/tmp/nccl.{os.getpid()}.log"
    comm = f"0x55d0c3a0{rank:04x}"
    head = line_prefix(rank)
    with open(path, "a", buffering=1) as out:
        out.write(f"{head}NCCL version 2.21.5+cuda12.4\n")
        out.write(f"{head}ncclCommInitRank comm {comm} rank {rank} nranks 2 cudaDev {rank} nvmlDev {rank} "
                  f"busId {rank + 1}000 commId 0x9f3c2b1a0d4e5f60 - Init START\n")
        out.write(f"{head}ncclCommInitRank comm {comm} rank {rank} nranks 2 cudaDev {rank} nvmlDev {rank} "
                  f"busId {rank + 1}000 commId 0x9f3c2b1a0d4e5f60 - Init COMPLETE\n")
        last = LAST_OP if rank == 0 else LAST_OP - 1
        for op in range(last + 1):
            out.write(f"{head}AllReduce: opCount {op:x} sendbuff 0x7f01a0000000 recvbuff 0x7f01a0000000 "
                      f"count 262144 datatype 7 op 0 root 0 comm {comm} [nranks=2] stream 0x55d0c1f0\n")
            time.sleep(0.02)
        if rank == 1:
            out.write(f"{socket.gethostname()}:{os.getpid()}:{threading.get_native_id()} [1] "
                      "transport/net_socket.cc:493 NCCL WARN NET/Socket : peer 127.0.0.1<43521> "
                      "message truncated : receiving 1048576 bytes instead of 65536\n")
    print(f"rank {rank}: NCCL stream written up to opCount {last:#x}", flush=True)
    time.sleep(float(os.environ.get("COLLECT_SLEEP_SECONDS", "60")))


if __name__ == "__main__":
    main()
