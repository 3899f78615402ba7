"""What one hang bundle costs a rank (prints figures, asserts nothing).

A real 2-rank torchrun gloo job under `triage launch` (tests/programs/rank_cost_job.py): rank 0
waits in all_reduce while rank 1 sleeps outside any collective for PAUSE seconds. Each rank
records its modules (``sys.modules``), CPU seconds (``os.times``) and peak RSS (``VmHWM``) before
and after the pause. Two runs on the same machine, back to back:

- **bundle**: a 3 s hang timeout and ``--on-hang report-and-wait``: the agent detects the hang,
  samples the ranks twice (busy or blocked), takes the bundle (in-worker dump, py-spy, strace
  1 s) and leaves the job running; rank 1 then wakes and the job ends;
- **no bundle**: the same job with a hang timeout longer than the pause.

The bundle's cost to a rank is the difference. Then, for comparison, what the stack-trace pickle
the worker no longer takes would cost: a one-rank gloo process calls
``_dump_fr_trace(True, True, False)`` once and reports the modules and CPU it added.

Run: ``python bench/bench_rank_cost.py [PAUSE [ROUNDS]]`` (default 20 s, 2 rounds; CPU: the median).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.helpers.launch import job_env, launch_argv, run_launch, torchrun
from tests.helpers.paths import program

PICKLE_COST = """\
import os, socket, sys, time
import torch, torch.distributed as dist
with socket.socket() as s:
    s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
dist.init_process_group("gloo", rank=0, world_size=1, init_method=f"tcp://127.0.0.1:{port}")
t = torch.ones(16)
for _ in range(50):
    dist.all_reduce(t)
c10d = torch._C._distributed_c10d
c10d._dump_fr_trace_json(True, False)
before, cpu = len(sys.modules), os.times()
c10d._dump_fr_trace(True, True, False)
after = os.times()
print(f"PICKLE {len(sys.modules) - before} {before} {after.user + after.system - cpu.user - cpu.system:.3f}")
c10d._dump_fr_trace(True, True, False)
again = os.times()
print(f"AGAIN {again.user + again.system - after.user - after.system:.3f}", flush=True)
"""


def one_run(pause: float, bundle: bool) -> tuple[dict[int, dict[str, Any]], int]:
    with tempfile.TemporaryDirectory() as tmp:
        run_dir, out = Path(tmp) / "run", Path(tmp) / "out"
        out.mkdir()
        options = ("--on-hang", "report-and-wait") if bundle else ("--hang-timeout", str(pause * 6),
                                                                    "--stop-timeout", str(pause * 6))
        argv = launch_argv(run_dir, torchrun(program("rank_cost_job.py"), 2), *options)
        env = job_env(RANK_COST_OUT=str(out), RANK_COST_PAUSE=str(pause))
        done = run_launch(argv, env, run_dir, timeout=pause * 10 + 120)
        if done.returncode != 0:
            print(f"  the job ended {done.returncode}: {done.explain()[-3000:]}")
        bundles = len(list(run_dir.glob("*/bundles/*/manifest.json")))
        return {int(p.stem.split("-")[1]): json.loads(p.read_text()) for p in out.glob("rank-*.json")}, bundles


def pickle_cost() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "pickle_cost.py"
        script.write_text(PICKLE_COST)
        text = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=False,
                              env={**os.environ, "TORCH_NCCL_TRACE_BUFFER_SIZE": "2000"}).stdout
    for line in text.splitlines():
        parts = line.split()
        if parts[:1] == ["PICKLE"]:
            print(f"the stack-trace pickle (no longer taken), first call in a process: +{parts[1]} modules "
                  f"(on {parts[2]}), {float(parts[3]):.2f} s of CPU")
        elif parts[:1] == ["AGAIN"]:
            print(f"  its second call: {float(parts[1]) * 1000:.0f} ms of CPU")


def main() -> None:
    pause = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    runs: dict[bool, list[dict[int, dict[str, Any]]]] = {True: [], False: []}
    bundles = []
    for _ in range(rounds):                  # alternated, so both modes see the same machine load
        for mode in (True, False):
            ranks, count = one_run(pause, bundle=mode)
            runs[mode].append(ranks)
            if mode:
                bundles.append(count)
    print(f"2-rank gloo job, rank 0 in all_reduce, rank 1 sleeping, {pause:g} s pause, {rounds} runs each; "
          f"bundles taken per bundle run: {bundles}")
    print(f"{'rank':>4} {'modules':>8} {'added (bundle)':>15} {'added (none)':>13} {'CPU ms (bundle)':>16} "
          f"{'CPU ms (none)':>14} {'CPU ms per bundle':>18} {'peak RSS +kB (bundle/none)':>27}")
    for rank in sorted(runs[True][0]):
        a = [r[rank] for r in runs[True] if rank in r]
        b = [r[rank] for r in runs[False] if rank in r]
        cpu_a = statistics.median(x["cpu_s"] for x in a) * 1000
        cpu_b = statistics.median(x["cpu_s"] for x in b) * 1000
        added_a = sorted({m for x in a for m in x["modules_added"]})
        added_b = sorted({m for x in b for m in x["modules_added"]})
        hwm = f"{max(x['hwm_added_kb'] for x in a)}/{max(x['hwm_added_kb'] for x in b)}"
        print(f"{rank:>4} {a[0]['modules_before']:>8} {len(added_a):>15} {len(added_b):>13} {cpu_a:>16.1f} "
              f"{cpu_b:>14.1f} {(cpu_a - cpu_b) / max(1, max(bundles)):>18.1f} {hwm:>27}")
        if added_a:
            print(f"     modules added during the bundle runs: {', '.join(added_a[:12])}")
    pickle_cost()


if __name__ == "__main__":
    main()
