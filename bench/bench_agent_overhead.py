"""The fixed cost of `triage launch` per job: what a job that does nothing pays at start and stop.
Prints figures; asserts nothing.

Each case is run --runs times (median of wall time and of the CPU of all processes):
- ``true`` and ``python -c pass`` alone, then each under ``triage launch`` (the second includes the
  worker bootstrap that triage's sitecustomize loads into a Python rank);
- ``false`` under ``triage launch``: a failed job, which also prints the run's report at stop;
- the imports alone, each in a fresh interpreter: the CLI, the agent (``triage.agent.launch.supervisor``),
  the report loaders and rich (what a failed job loads at stop);
- the agent's own start: an interpreter plus what ``triage launch`` imports (the CLI's parser and the
  agent), beside the rest of ``true``'s fixed cost (starting the job, the watches, the end).
Byte-code is compiled first and written (PYTHONDONTWRITEBYTECODE is dropped for the children): an
installed triage has its .pyc files; one case runs with none, to show what compiling costs.

Usage: python bench/bench_agent_overhead.py [--runs 7]
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
TRIAGE = [sys.executable, "-m", "triage"]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(argv: list[str], runs: int, cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Median wall seconds and median CPU seconds (all processes) of ``argv``."""
    walls, cpus = [], []
    for _ in range(runs):
        cpu, start = _cpu(), time.perf_counter()
        subprocess.run(argv, cwd=cwd, env=env or ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        walls.append(time.perf_counter() - start)
        cpus.append(_cpu() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    compileall.compile_dir(REPO / "triage", quiet=1)
    with tempfile.TemporaryDirectory(prefix="triage-bench-agent-") as tmp:
        cwd = Path(tmp)
        launch = [*TRIAGE, "launch", "--run-dir", str(cwd / "run"), "--"]
        print(f"median of {args.runs} runs: wall s / CPU s of all processes")
        base: dict[str, tuple[float, float]] = {}
        cost_true = (0.0, 0.0)
        for label, argv in (("true", ["true"]), ("python -c pass", [sys.executable, "-c", "pass"])):
            base[label] = measure(argv, args.runs, cwd)
            wall, cpu = measure([*launch, *argv], args.runs, cwd)
            if label == "true":
                cost_true = (wall - base[label][0], cpu - base[label][1])
            print(f"  {label:28s} alone {base[label][0]:.3f} / {base[label][1]:.3f}   under triage launch "
                  f"{wall:.3f} / {cpu:.3f}   fixed cost {wall - base[label][0]:+.3f} / {cpu - base[label][1]:+.3f}")
        wall, cpu = measure([*launch, "false"], args.runs, cwd)
        print(f"  {'false (a failed job: report)':28s} under triage launch {wall:.3f} / {cpu:.3f}")
        cold = {**ENV, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": str(cwd / "no-pyc")}
        wall, cpu = measure([*launch, "true"], args.runs, cwd, cold)
        print(f"  {'true, no byte-code':28s} under triage launch {wall:.3f} / {cpu:.3f}   (an editable install "
              "under PYTHONDONTWRITEBYTECODE=1 without scripts/setup.sh's compileall)")
        print("imports, each in a fresh interpreter (minus python -c pass):")
        bare = measure([sys.executable, "-c", "pass"], args.runs, cwd)
        for module in ("triage.cli", "triage.cli.launch", "triage.agent.launch.supervisor", "triage.agent.hang.actions",
                       "triage.report", "rich.console"):
            wall, cpu = measure([sys.executable, "-c", f"import {module}"], args.runs, cwd)
            print(f"  {module:28s} {wall - bare[0]:.3f} / {cpu - bare[1]:.3f}")
        wall, cpu = measure([sys.executable, "-c", "import triage.cli.launch, triage.agent.launch.supervisor"],
                            args.runs, cwd)
        print(f"the agent's own start (an interpreter {bare[0]:.3f} / {bare[1]:.3f} + what `triage launch` imports "
              f"{wall - bare[0]:.3f} / {cpu - bare[1]:.3f}) = {wall:.3f} / {cpu:.3f}; the rest of `true`'s fixed "
              f"cost (starting the job, the watches, the end) {cost_true[0] - wall:+.3f} / {cost_true[1] - cpu:+.3f}")


if __name__ == "__main__":
    main()
