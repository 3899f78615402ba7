"""Collection wall time for 8 local ranks (prints figures, asserts nothing).

First a real 8-rank gloo job hung under `triage launch` (mismatch_hang.py, torchrun
--nproc-per-node 8): the bundle the agent collects, without strace (the figure to compare with
the 5 s target) and with a 2 s strace window (reported separately). Then 8 plain processes
that import torch and idle, collected directly (the cost of the external tools alone).
Run: ``python bench/bench_collect_wall.py``.
"""

from __future__ import annotations

import contextlib
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.helpers.processes import kill_tree
from triage.bundle import Trigger, read_manifest
from triage.collectors.common import Target
from triage.collectors.node_bundle import JobInfo, collect_node_bundle
from triage.options import CollectSettings

RANKS = 8


def start_ranks() -> list[subprocess.Popen[bytes]]:
    procs = [subprocess.Popen([sys.executable, str(REPO / "tests/programs/collect_torch_idle.py")],
                              stdout=subprocess.PIPE, start_new_session=True) for _ in range(RANKS)]
    for proc in procs:
        assert proc.stdout is not None
        proc.stdout.readline()
    return procs


def collect(out: Path, strace_seconds: float) -> tuple[float, Path]:
    targets = [Target(rank=r, pid=p) for r, p in enumerate(PIDS)]
    started = time.monotonic()
    bundle = collect_node_bundle(JobInfo("bench", started=time.time() - 60), targets, Trigger.MANUAL, "bench",
                                 CollectSettings(strace_seconds=strace_seconds), out)
    return time.monotonic() - started, bundle


def per_collector(bundle: Path) -> dict[str, list[float]]:
    durations: dict[str, list[float]] = defaultdict(list)
    for record in read_manifest(bundle).collectors:
        durations[record.name].append(record.duration_s)
    return durations


def launched_hang_figures() -> None:
    """8 ranks of a real gloo job hung under `triage launch` (all blocked in a collective): the bundle
    the agent collects on its own (FR + stacks through the in-worker agents, py-spy, strace...)."""
    from tests.helpers.launch import job_env, launch_argv, run_launch, torchrun
    from tests.helpers.paths import example

    for window in ("0", "2"):
        with tempfile.TemporaryDirectory() as tmp:
            run_dir = Path(tmp) / "run"
            argv = launch_argv(run_dir, torchrun(example("mismatch_hang.py"), nproc=RANKS))
            argv[argv.index("--strace-seconds") + 1] = window
            done = run_launch(argv, job_env(), run_dir, timeout=300)
            bundle = done.bundle()
            manifest = read_manifest(bundle)
            print(f"triage launch, {RANKS} hung gloo ranks, strace window {window} s: "
                  f"collection wall {manifest.extra.get('wall_s')} s")
            if window == "0":
                for name, values in sorted(per_collector(bundle).items()):
                    print(f"  {name:11s} mean {statistics.mean(values):.3f} s  max {max(values):.3f} s")


if __name__ == "__main__":
    launched_hang_figures()
    procs = start_ranks()
    PIDS = [p.pid for p in procs]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            collect(Path(tmp) / "warmup", 0)
            wall_no_strace, bundle = collect(Path(tmp) / "a", 0)
            wall_strace, bundle_s = collect(Path(tmp) / "b", 2.0)
            print(f"ranks: {RANKS} (torch imported, idle), cpus: 2")
            print(f"collection wall time without strace: {wall_no_strace:.2f} s (target <= 5 s)")
            print(f"collection wall time with a 2.0 s strace window: {wall_strace:.2f} s "
                  f"(strace adds {wall_strace - wall_no_strace:.2f} s; windows overlap across ranks)")
            for name, values in sorted(per_collector(bundle).items()):
                print(f"  {name:11s} mean {statistics.mean(values):.3f} s  max {max(values):.3f} s  (n={len(values)})")
            strace = per_collector(bundle_s)["strace"]
            print(f"  strace      mean {statistics.mean(strace):.3f} s  max {max(strace):.3f} s  (with window)")
    finally:
        for proc in procs:
            with contextlib.suppress(Exception):
                kill_tree(proc.pid)
                proc.wait(timeout=5)
