"""`triage report` on very large logs vs `grep -c NCCL` on the same file (issue: at most 3x grep's
time and 1 GB of memory). Prints figures, asserts nothing.

Two generated logs (in /tmp, removed afterwards unless --keep):
- a NCCL_DEBUG=INFO log of --mb MB (default 1024), made by bench_parsing_nccl's generator, with a
  rank's CUDA OOM and the others' watchdog timeouts appended near the end;
- a log of --lines short lines (default 10 million): training lines of 8 ranks, a few NCCL WARN
  lines, and the same failure.
Each is timed warm (best of --runs) and triage's peak memory is read from getrusage.

Usage: python bench/bench_report_logs.py [--mb 1024] [--lines 10000000] [--runs 3] [--keep]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_parsing_nccl import generate

FAILURE = (
    "[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 5 has a total capacity "
    "of 79.10 GiB of which 1.06 GiB is free.\n"
    + "".join(f"[rank{r}]:[E1001 10:00:00.1 {900 + r} ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught "
              "collective operation timeout: WorkNCCL(SeqNum=9001, OpType=ALLREDUCE, NumelIn=1024, NumelOut=1024, "
              "Timeout(ms)=600000) ran for 600010 milliseconds before timing out.\n" for r in (0, 1, 2, 3, 4, 6, 7))
)


def make_nccl_log(path: Path, megabytes: int) -> None:
    generate(path, megabytes)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(FAILURE)


def make_line_log(path: Path, lines: int) -> None:
    chunk = "".join(f"[rank{i % 8}]: step {i // 8} loss 2.{i % 97:02d} lr 3e-4\n" for i in range(100_000))
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(chunk for _ in range(max(1, lines // 100_000)))
        handle.write("gpu-node-00:4001:4099 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.5<50532> with "
                     "status=12 opcode=0 len=0 vendor err 129\n")
        handle.write(FAILURE)


def best(argv: list[str], runs: int) -> tuple[float, int, str]:
    """Best wall time of ``runs`` runs, the peak RSS (KiB) of the children, and the last stdout."""
    times = []
    out = ""
    for _ in range(runs):
        start = time.perf_counter()
        result = subprocess.run(argv, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - start)
        out = result.stdout
    return min(times), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, out


def measure(label: str, path: Path, runs: int) -> None:
    size = path.stat().st_size
    grep, _, count = best(["grep", "-c", "NCCL", str(path)], runs)
    report, rss, out = best([sys.executable, "-m", "triage", "report", str(path), "--format", "json"], runs)
    verdict = out.split('"summary": ', 1)[-1].split("\n", 1)[0][:100]
    print(f"{label}: {size / 1e6:,.0f} MB, grep -c NCCL {grep:.2f} s ({count.strip()} lines), "
          f"triage report {report:.2f} s = {report / grep:.1f}x grep, peak memory {rss / 1024:,.0f} MiB")
    print(f"  verdict: {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=1024)
    parser.add_argument("--lines", type=int, default=10_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="triage-bench-logs-") as tmp:
        nccl = Path(tmp) / "nccl.log"
        lines = Path(tmp) / "lines.log"
        make_nccl_log(nccl, args.mb)
        make_line_log(lines, args.lines)
        measure("NCCL_DEBUG=INFO log", nccl, args.runs)
        measure(f"{args.lines:,}-line log", lines, args.runs)
        if args.keep:
            for path in (nccl, lines):
                kept = Path("/tmp") / path.name
                path.replace(kept)
                print(f"kept {kept}")


if __name__ == "__main__":
    main()
