"""Time to a report on a core of a torch process vs a plain `gdb -batch -ex 'thread apply all bt'`.

Makes a real core (a Python process with torch loaded that segfaults through ctypes; RLIMIT_CORE
raised for that child only, core_pattern untouched), then times, on the same core:
  * `gdb -batch -ex 'thread apply all bt' EXE CORE`            (the baseline)
  * `triage postmortem CORE --format json`                      (end to end: notes, gdb with our
    settings + info sharedlibrary + py-bt, dmesg, classification, report)
Each is run REPEAT times, interleaved (the first run also warms the page cache). Prints figures, asserts nothing.
Usage: python bench/bench_postmortem_core.py [REPEAT]
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROGRAM = REPO / "tests" / "programs" / "pm_torch_segv.py"


def _core_limit() -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def make_core(where: Path) -> tuple[Path, int]:
    proc = subprocess.Popen([sys.executable, str(PROGRAM)], cwd=where, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, preexec_fn=_core_limit)  # noqa: PLW1509
    proc.wait(timeout=120)
    for name in ("core", f"core.{proc.pid}"):
        if (where / name).is_file():
            return where / name, proc.pid
    found = sorted(where.glob("core*"))
    if not found:
        raise SystemExit(f"no core was written in {where} (core_pattern must be 'core')")
    return found[0], proc.returncode


def timed(argv: list[str]) -> tuple[float, int, int]:
    started = time.perf_counter()
    run = subprocess.run(argv, capture_output=True, timeout=600, check=False, cwd=REPO)
    return time.perf_counter() - started, run.returncode, len(run.stdout) + len(run.stderr)


def main() -> None:
    repeat = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    exe = os.path.realpath(sys.executable)
    where = Path(tempfile.mkdtemp(prefix="bench-pm-"))
    try:
        started = time.perf_counter()
        core, _ = make_core(where)
        made = time.perf_counter() - started
        size_mb = core.stat().st_size / 1e6
        print(f"core: {size_mb:.0f} MB of a torch process ({exe}), made in {made:.1f} s")
        cases = {
            "gdb -batch 'thread apply all bt'": ["gdb", "-batch", "-ex", "thread apply all bt", exe, str(core)],
            "triage postmortem --format json": [sys.executable, "-m", "triage", "postmortem", str(core),
                                                "--format", "json"],
        }
        results: dict[str, list[float]] = {}
        outcome: dict[str, tuple[int, int]] = {}
        for _ in range(repeat):              # interleaved, so load from other work hits both alike
            for name, argv in cases.items():
                seconds, code, size = timed(argv)
                results.setdefault(name, []).append(seconds)
                outcome[name] = (code, size)
        print(f"load average before/after: {os.getloadavg()[0]:.1f} (2-core machine: figures are noisy)")
        for name in cases:
            code, size = outcome[name]
            print(f"{name:36s} exit {code:3d}  output {size / 1024:7.1f} KiB  "
                  f"first {results[name][0]:.2f} s  median {statistics.median(results[name]):.2f} s  "
                  f"min {min(results[name]):.2f} s  ({repeat} runs)")
        base = statistics.median(results["gdb -batch 'thread apply all bt'"])
        ours = statistics.median(results["triage postmortem --format json"])
        print(f"triage / plain gdb (median): {ours / base:.2f}x  (+{ours - base:.2f} s)")
    finally:
        shutil.rmtree(where, ignore_errors=True)


if __name__ == "__main__":
    main()
