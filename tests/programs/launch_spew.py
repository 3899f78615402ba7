"""Test program for tests/launch: each rank writes a deterministic byte stream, then maybe dies.

Usage: launch_spew.py LINES [--big-line] [--binary] [--die segv|kill] [--wait-for N] [--slow S]
The stream of rank R is ``expected_stream(R, ...)``; it is written through several paths
(Python stdout, stderr, os.write, libc write) so the test covers all of them. No torch import.
Every rank writes a ``done`` marker into SPEW_MARKERS once all its bytes are written; with
--wait-for N, a dying rank then waits until N markers exist (its own included), so that
torchrun's tear-down cannot cut the other ranks short. Dying ranks ignore SIGTERM.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import random
import signal
import sys
import time


def lines_block(rank: int, lines: int) -> bytes:
    return b"".join(b"rank %d line %d some payload text\n" % (rank, i) for i in range(lines))


def big_line(rank: int) -> bytes:
    return (b"%d" % rank) * (10 * 1024 * 1024)   # 10 MiB, no newline


def binary_block(rank: int) -> bytes:
    rng = random.Random(rank)
    return bytes(rng.getrandbits(8) for _ in range(256 * 1024))


def expected_stream(rank: int, lines: int, big: bool, binary: bool, die: str | None) -> bytes:
    parts = [b"start of rank %d\n" % rank, b"via stderr\n", b"via libc write\n", lines_block(rank, lines)]
    if binary:
        parts.append(binary_block(rank))
    if big:
        parts.append(big_line(rank))
    if die:
        parts.append(b"last words of rank %d before %s, no newline" % (rank, die.encode()))
    return b"".join(parts)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("lines", type=int)
    parser.add_argument("--big-line", action="store_true")
    parser.add_argument("--binary", action="store_true")
    parser.add_argument("--die", choices=("segv", "kill"))
    parser.add_argument("--die-rank", type=int, default=-1)
    parser.add_argument("--wait-for", type=int, default=0)
    parser.add_argument("--slow", type=float, default=0.0, help="seconds to spread the lines over")
    args = parser.parse_args()
    rank = int(os.environ.get("RANK", os.environ.get("SLURM_PROCID", "0")))
    die = args.die if args.die_rank in (-1, rank) else None
    sys.stdout.write(f"start of rank {rank}\n")
    sys.stdout.flush()
    sys.stderr.write("via stderr\n")
    sys.stderr.flush()
    libc = ctypes.CDLL(None)
    msg = b"via libc write\n"
    libc.write(1, msg, len(msg))
    block = lines_block(rank, args.lines)
    if args.slow:
        pieces = 20
        step = len(block) // pieces + 1
        for i in range(0, len(block), step):
            write_all(1, block[i:i + step])
            time.sleep(args.slow / pieces)
    else:
        sys.stdout.buffer.write(block)
        sys.stdout.buffer.flush()
    if args.binary:
        write_all(2, binary_block(rank))
    if args.big_line:
        write_all(1, big_line(rank))
    markers = os.environ.get("SPEW_MARKERS")
    if die:
        # die by our own hand even if torchrun, seeing another rank die first, sends SIGTERM
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        write_all(1, b"last words of rank %d before %s, no newline" % (rank, die.encode()))
    if markers:
        open(os.path.join(markers, f"done-{rank}"), "w").close()
    if die:
        if markers and args.wait_for:
            deadline = time.time() + 60
            while len(os.listdir(markers)) < args.wait_for and time.time() < deadline:
                time.sleep(0.05)
        if die == "segv":
            ctypes.string_at(0)
        os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    main()
