"""`triage report` on logs of many repeated failure records: is its time linear in their number? Prints figures,
asserts nothing.

Three generated logs, each at --count records and at twice that (in /tmp, removed afterwards):
- "code banners": MPAS's `CRITICAL ERROR: ...` lines with no task header (its error log as a user pastes it), the
  shape whose banner-to-task lookup once scanned the text before each banner (20,000 lines took 18.7 s at ac1cd6d);
- "WRF banners": WRF's `taskid: N hostname: H` headers and `----- FATAL CALLED -----` banners, the same lookup;
- "death records": mpirun's `process rank N with PID P on node H exited on signal 9 (Killed).` lines among training
  lines, whose line numbers were once counted from the text's start for each record.

Each log is timed as `triage report --format json` (CPU of the child, best of --runs, peak RSS), and the ratio of the
doubled log's time to the single one's is printed: about 2 is linear, about 4 quadratic. --baseline DIR also times
another checkout (the directory that holds its triage/) in the same runs.

Usage: python bench/bench_report_banners.py [--count 10000] [--runs 2] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = str(Path(__file__).resolve().parent.parent)


def mpas(count: int) -> str:
    return "".join(f"CRITICAL ERROR: xtime {i} is out of range for the time levels of the stream\n"
                   for i in range(count))


def wrf(count: int) -> str:
    lines = []
    for i in range(count):
        lines.append(f"taskid: {i % 512} hostname: node{i % 64:03d}")
        lines.append(f" d01 2026-11-28_{i % 24:02d}:00:00 wrf: SUCCESS COMPLETE step {i}")
        if i % 10 == 9:
            lines += ["-------------- FATAL CALLED ---------------", f"module_io.F: cannot open file wrfbdy_d0{i % 9}",
                      "-------------------------------------------"]
    return "\n".join(lines) + "\n"


def deaths(count: int) -> str:
    lines = []
    for i in range(count):
        lines.append(f"[rank{i % 8}]: step {i} loss 2.{i % 97:02d}")
        lines.append(f"mpirun noticed that process rank {i % 4096} with PID {10000 + i} on node node{i % 512:03d} "
                     "exited on signal 9 (Killed).")
    return "\n".join(lines) + "\n"


def aborts(count: int) -> str:
    lines = [f"step {i} loss 0.{i % 97:02d} lr 3e-4 tokens/s 123456" for i in range(20 * count)]
    for rank in range(count):
        lines.insert(10 * count + rank * 10, f"MPI_ABORT was invoked on rank {rank} in communicator MPI_COMM_WORLD "
                     "with errorcode 1.")
    return "\n".join(lines) + "\n"


def timed(path: str, pythonpath: str, runs: int) -> tuple[float, int]:
    """Best CPU seconds (user + system) of the child over ``runs``, and its peak RSS in MiB."""
    best, rss = float("inf"), 0
    for _ in range(runs):
        env = dict(os.environ, PYTHONPATH=pythonpath)
        proc = subprocess.Popen([sys.executable, "-m", "triage", "report", path, "--format", "json"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                                cwd=tempfile.gettempdir())     # (not here: `-m` puts the cwd's triage/ first)
        _pid, _status, usage = os.wait4(proc.pid, 0)
        best = min(best, usage.ru_utime + usage.ru_stime)
        rss = max(rss, usage.ru_maxrss // 1024)
    return best, rss


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--baseline", help="another checkout (the directory that holds its triage/), timed too")
    args = parser.parse_args(argv)
    sides = [("this code", ROOT)] + ([("baseline", args.baseline)] if args.baseline else [])
    with tempfile.TemporaryDirectory(prefix="bench-banners-") as tmp:
        for name, make in (("code banners", mpas), ("WRF banners", wrf), ("death records", deaths),
                           ("MPI aborts", aborts)):
            for side, code in sides:
                figures = []
                for count in (args.count, 2 * args.count):
                    path = os.path.join(tmp, f"{name.split()[0]}-{count}.log")
                    if not os.path.exists(path):
                        Path(path).write_text(make(count), encoding="utf-8")
                    figures.append((count, *timed(path, code, args.runs)))
                (n1, t1, r1), (n2, t2, r2) = figures
                print(f"{name:14} {side:9}  {n1:>7,} records {t1:6.2f} s {r1:5d} MiB   {n2:>7,} records {t2:6.2f} s "
                      f"{r2:5d} MiB   x{t2 / t1:.1f} for twice the records", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
