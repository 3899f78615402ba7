"""Test program for tests/launch/test_launch_disk_full.py: a rank that goes on printing after the run
directory's disk filled up. No torch import.

Each rank prints READY, waits (at most 120 s) for the file DISK_GO to exist, then prints
DISK_MB MiB of 10 KB lines (more than the disk has left) through print() and os.write, and at the
end writes its marker DISK_MARKERS/done-RANK: a rank that a full disk killed writes none.
"""

from __future__ import annotations

import os
import time


def main() -> None:
    rank = os.environ["RANK"]
    print(f"READY rank {rank}", flush=True)
    deadline = time.monotonic() + 120.0
    while not os.path.exists(os.environ["DISK_GO"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    line = "y" * 10_000
    for i in range(int(float(os.environ["DISK_MB"]) * 100)):
        print(f"rank {rank} line {i} {line}", flush=True)
        if i % 10 == 0:
            os.write(2, b"stderr line\n")
    with open(os.path.join(os.environ["DISK_MARKERS"], f"done-{rank}"), "w") as marker:
        marker.write("ok")


if __name__ == "__main__":
    main()
