"""`triage report` on the hostile inputs of docs/security.md ("Inputs that could hang triage or exhaust
its memory"): wall time, exit code and peak resident memory of each. Prints figures, asserts nothing.

Inputs (in a temporary directory, removed afterwards):
- one log line of --line-mb MB (default 2048: the 2 GB attack);
- a 15 MB line in a small log;
- a 2 KB Flight Recorder dump named nccl_trace_rank_99999999;
- a sparse 8 GiB dump;
- a dump nested 200,000 deep.

Usage: python bench/bench_security_bombs.py [--line-mb 2048]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _run(*args: str) -> tuple[int, float, float, float]:
    """Exit code, wall seconds, peak RSS and peak anonymous RSS (MB) of one `triage report`: the RSS
    from os.wait4 (this child's own), the anonymous part polled from /proc/PID/status."""
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "triage", "report", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    anon = 0
    while True:
        try:
            with open(f"/proc/{proc.pid}/status") as status:
                for line in status:
                    if line.startswith("RssAnon:"):
                        anon = max(anon, int(line.split()[1]))
        except (OSError, ValueError):
            pass
        pid, code, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        time.sleep(0.05)
    proc.returncode = os.waitstatus_to_exitcode(code)
    return proc.returncode, time.monotonic() - started, usage.ru_maxrss / 1024, anon / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--line-mb", type=int, default=2048)
    options = parser.parse_args()
    fr = json.loads(next((REPO / "tests/golden/stuck_outside/run").rglob("fr.json")).read_text())
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        cases: list[tuple[str, Path]] = []
        small = root / "small.log"
        small.write_bytes(b"[rank0]: RuntimeError: boom\n" + b"x" * (15 << 20) + b"\n")
        cases.append(("15 MB line in a small log", small))
        rank = root / "nccl_trace_rank_99999999"
        rank.write_text(json.dumps(fr))
        cases.append((f"{rank.stat().st_size} B dump named rank 99999999", rank))
        sparse = root / "sparse" / "nccl_trace_rank_0"
        sparse.parent.mkdir()
        with open(sparse, "wb") as handle:
            handle.truncate(8 << 30)
        cases.append(("sparse 8 GiB dump", sparse))
        deep = root / "deep" / "nccl_trace_rank_0"
        deep.parent.mkdir()
        deep.write_text('{"entries": ' + "[" * 200_000 + "]" * 200_000 + "}")
        cases.append(("dump nested 200,000 deep", deep))
        long = root / "long.log"
        chunk = b"a" * (1 << 20)
        with open(long, "wb") as handle:
            handle.write(b"[rank0]: RuntimeError: boom\n")
            handle.writelines(chunk for _ in range(options.line_mb))
            handle.write(b"\n")
        cases.append((f"one {options.line_mb} MB line", long))
        print(f"{'input':<36} {'exit':>4} {'wall s':>7} {'peak RSS MB':>12} {'anonymous MB':>13}")
        for name, path in cases:
            code, wall, peak, anon = _run(str(path))
            print(f"{name:<36} {code:>4} {wall:>7.2f} {peak:>12.0f} {anon:>13.0f}")
    print("(peak RSS of each run: a memory-mapped log's pages count in it; anonymous: triage's own memory)")


if __name__ == "__main__":
    main()
