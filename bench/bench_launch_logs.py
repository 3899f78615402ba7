"""Log throughput of `triage launch`: 2 ranks each printing 2M lines.

Compares the wall time of `triage launch -- torchrun ...` with plain `torchrun ...` and with
`torchrun --tee 3 --role HOST:` (torchrun's own prefixing), in the same run, output to a file.
Also checks that triage kept and tagged every line. Prints figures; asserts nothing.

    python bench/bench_launch_logs.py [--lines 2000000] [--repeat 2]
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORKER = """\
import os, sys
rank = int(os.environ["RANK"])
n = int(sys.argv[1])
for i in range(n):
    print(f"rank {rank} step {i} loss 0.{i % 997:03d} lr 3e-4 tokens/s 123456")
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def torchrun(*args: str) -> list[str]:
    exe = str(Path(sys.executable).with_name("torchrun"))
    return [exe, "--nproc-per-node", "2", "--master-port", str(free_port()), *args]


def timed(argv: list[str], out: Path, env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of every process of the run: user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(out, "wb") as handle:
        subprocess.run(argv, stdout=handle, stderr=subprocess.STDOUT, env=env, cwd=cwd, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-launch-logs-") as tmp:
        work = Path(tmp)
        script = work / "spew.py"
        script.write_text(WORKER)
        env = {k: v for k, v in os.environ.items() if not k.startswith("TRIAGE_")}
        variants = {
            "torchrun": lambda i: torchrun(str(script), str(args.lines)),
            "torchrun --tee 3 --role HOST:": lambda i: torchrun(
                "--tee", "3", "--role", f"{socket.gethostname()}:", "--log-dir", str(work / f"tee{i}"),
                str(script), str(args.lines)),
            "triage launch -- torchrun": lambda i: [
                sys.executable, "-m", "triage", "launch", "--run-dir", str(work / f"run{i}"), "--",
                *torchrun(str(script), str(args.lines))],
        }
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
        for i in range(args.repeat):
            for name, make in variants.items():
                times[name].append(timed(make(i), work / "out.txt", env, work))
                if name.startswith("triage"):
                    check_triage(work / "out.txt", work / f"run{i}", args.lines)
        print(f"log throughput: 2 ranks x {args.lines} lines, median of {args.repeat} runs, output to a file")
        for label, index in (("wall", 0), ("cpu (all processes)", 1)):
            base = statistics.median(v[index] for v in times["torchrun"])
            print(f" {label}:")
            for name, values in times.items():
                med = statistics.median(v[index] for v in values)
                runs = [round(v[index], 2) for v in values]
                print(f"  {name:32s} {med:7.2f} s   ratio {med / base:5.2f}x   runs {runs}")


def check_triage(console: Path, run: Path, lines: int) -> None:
    host_dirs = [p for p in run.iterdir() if p.is_dir()]
    merged = host_dirs[0] / "merged.log"
    expected = 2 * lines
    with open(console, "rb") as handle:
        tagged = sum(1 for line in handle if line.startswith(b"[") and (b":0] " in line[:80] or b":1] " in line[:80]))
    with open(merged, "rb") as handle:
        kept = sum(1 for line in handle if b":launcher]" not in line[:80])
    status = "ok" if tagged == expected and kept == expected else "MISMATCH"
    print(f"  triage check: {tagged} tagged rank lines on the console, {kept} in merged.log, "
          f"expected {expected}: {status}", flush=True)


if __name__ == "__main__":
    main()
