"""NCCL-line parsing throughput: NcclTracker vs `grep -c 'NCCL INFO'` on the same file.

Generates a realistic interleaved NCCL_DEBUG=INFO log (default 200 MB, 2 nodes x 8 ranks,
a world and a TP communicator per rank plus a comm used only at start-up, init lines, some
channel/INFO noise, WARN lines, training log lines, launcher prefixes on a share of the lines)
in /tmp, then times both on the warm page cache (interleaved, best of --runs) and prints
MB/s and the ratio. Target: the
tracker (whole-file path, ``feed_file``) within 5x of grep. Also prints the per-line
(live-stream) path's throughput for reference. Prints figures, asserts nothing.

Usage: python bench/bench_parsing_nccl.py [--mb 200] [--keep]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from triage.parsing.nccl.tracker import NcclTracker

OPS = [("AllReduce", 7, 0), ("AllGather", 9, 0), ("ReduceScatter", 9, 0), ("Broadcast", 7, 0)]


def _ranks() -> list[tuple[str, int, int, str, str]]:
    out = []
    for rank in range(16):
        host = f"gpu-node-{rank // 8:02d}"
        pid = 40000 + rank * 7
        out.append((host, pid, rank % 8, f"0x{0x55d0c3a00000 + rank * 0x1000:x}",
                    f"0x{0x55d0c4a00000 + rank * 0x1000:x}"))
    return out


def generate(path: Path, megabytes: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    ranks = _ranks()
    target = megabytes * 1024 * 1024
    with path.open("w") as out:
        for rank, (host, pid, dev, world, tp) in enumerate(ranks):
            out.write(f"{host}:{pid}:{pid} [{dev}] NCCL INFO ncclCommInitRank comm {world} rank {rank} "
                      f"nranks 16 cudaDev {dev} nvmlDev {dev} busId {dev + 1}b000 commId 0x9e2f1c7a - "
                      "Init COMPLETE\n")
            out.write(f"{host}:{pid}:{pid + 1} [{dev}] NCCL INFO Broadcast: opCount 0 sendbuff 0x7f00 recvbuff "
                      f"0x7f00 count 1 datatype 4 op 0 root 0 comm 0x77{rank:04x}00 [nranks=16] stream 0x1\n")
            out.write(f"{host}:{pid}:{pid} [{dev}] NCCL INFO ncclCommSplit comm {tp} rank {rank % 8} "
                      f"nranks 8 cudaDev {dev} nvmlDev {dev} busId {dev + 1}b000 parent {world} color "
                      f"{rank // 8} key {rank % 8} commId 0x77{rank // 8:02x}aa - Init COMPLETE\n")
        written = out.tell()
        op_count = [0] * (len(ranks) * 2)
        while written < target:
            chunk = []
            for _ in range(2000):
                index = rng.randrange(len(ranks))
                host, pid, dev, world, tp = ranks[index]
                roll = rng.random()
                if roll < 0.0001:
                    chunk.append(f"{host}:{pid}:{pid + 4} [{dev}] transport/net_ib.cc:1295 NCCL WARN NET/IB : "
                                 "Got completion from peer with status=12 opcode=0 len=0 vendor err 129\n")
                    continue
                if roll < 0.03:
                    chunk.append(f"[rank{index}]: step {op_count[index]} loss 2.{rng.randrange(1000):03d}\n")
                    continue
                if roll < 0.05:
                    chunk.append(f"{host}:{pid}:{pid + 3} [{dev}] NCCL INFO Channel {rng.randrange(32):02d}/32 :"
                                 " 0 1 2 3 4 5 6 7\n")
                    continue
                use_tp = roll < 0.4
                slot = index * 2 + int(use_tp)
                opname, dtype, redop = OPS[rng.randrange(len(OPS))]
                buf = f"0x7f{rng.randrange(1 << 36):09x}"
                prefix = f"[rank{index}]:" if roll > 0.9 else ""
                chunk.append(
                    f"{prefix}{host}:{pid}:{pid + 11} [{dev}] NCCL INFO {opname}: opCount {op_count[slot]:x} "
                    f"sendbuff {buf} recvbuff {buf} count {rng.choice((262144, 1048576, 8192))} "
                    f"datatype {dtype} op {redop} root 0 comm {tp if use_tp else world} "
                    f"[nranks={8 if use_tp else 16}] stream 0x55d0c1f{index:x}\n")
                op_count[slot] += 1
            text = "".join(chunk)
            out.write(text)
            written += len(text)


def time_grep(path: Path) -> tuple[float, int]:
    start = time.perf_counter()
    result = subprocess.run(["grep", "-c", "NCCL INFO", str(path)], capture_output=True, text=True, check=False)
    return time.perf_counter() - start, int(result.stdout.strip() or 0)


def time_tracker(path: Path) -> tuple[float, NcclTracker]:
    start = time.perf_counter()
    tracker = NcclTracker()
    with path.open("r", encoding="utf-8", errors="replace", newline="") as handle:
        tracker.feed_file(handle)
    states = tracker.last_ops()
    assert states
    return time.perf_counter() - start, tracker


def time_lines(path: Path) -> float:
    start = time.perf_counter()
    tracker = NcclTracker()
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            tracker.feed(line)
    tracker.last_ops()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--keep", action="store_true", help="keep the generated log")
    parser.add_argument("--skip-lines", action="store_true", help="do not time the per-line path")
    parser.add_argument("--runs", type=int, default=5, help="interleaved runs of each; the best is kept")
    args = parser.parse_args()
    fd, name = tempfile.mkstemp(prefix="bench_nccl_", suffix=".log", dir="/tmp")
    os.close(fd)
    path = Path(name)
    try:
        t0 = time.perf_counter()
        generate(path, args.mb)
        size_mb = path.stat().st_size / 1e6
        print(f"generated {size_mb:.0f} MB in {time.perf_counter() - t0:.1f} s: {path}")
        time_grep(path)  # warm the page cache
        grep_runs, tracker_runs = [], []
        for _ in range(args.runs):  # interleaved, best of N: the box is shared and noisy
            grep_runs.append(time_grep(path))
            tracker_runs.append(time_tracker(path))
        grep_s, grep_n = min(grep_runs, key=lambda r: r[0])
        tracker_s, tracker = min(tracker_runs, key=lambda r: r[0])
        ops = tracker.last_ops()
        print(f"grep -c 'NCCL INFO': {grep_s:.2f} s  {size_mb / grep_s:8.1f} MB/s  ({grep_n} lines)")
        print(f"NcclTracker (file) : {tracker_s:.2f} s  {size_mb / tracker_s:8.1f} MB/s  "
              f"({len(ops)} comms, {sum(s.ops_seen for s in ops)} ops, {len(tracker.warnings())} WARN, "
              f"{tracker.bulk_fallbacks} fallbacks)")
        print(f"ratio tracker/grep : {tracker_s / grep_s:.2f}x (target <= 5x)")
        if not args.skip_lines:
            lines_s = time_lines(path)
            print(f"per-line feed()    : {lines_s:.2f} s  {size_mb / lines_s:8.1f} MB/s  "
                  f"(live-stream path, {lines_s / grep_s:.1f}x grep)")
    finally:
        if not args.keep:
            path.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
