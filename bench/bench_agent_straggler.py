"""The agent's extra CPU while it watches for stragglers (triage.agent.straggler_watch). Prints
figures; asserts nothing. Target: under 1% of one core.

Usage: python bench/bench_agent_straggler.py [--steps 700] [--interval 5] [--slow-rank 1]

One invocation launches the same real 4-rank torchrun gloo job (tests/programs/straggler_job.py,
one rank 40 ms late before each collective) twice under `triage launch`: the watch on (a check
every --interval seconds, far more often than the default 60 s, to time many checks), then off.
For each run: the agent process's own CPU (user+system, polled with psutil: the workers, torchrun
and py-spy are other processes), and the CPU of the agent with all its descendants (wait4).
With the watch on, <host>/stragglers/watch.json gives the checks run and the CPU of the watch's
thread; its cost per check, divided by the default interval, is the steady-state overhead.
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

import psutil

ROOT = Path(__file__).resolve().parent.parent
JOB = ROOT / "tests" / "programs" / "straggler_job.py"
TORCHRUN = str(Path(sys.executable).parent / "torchrun")
DEFAULT_INTERVAL_S = 60.0


def one_run(workdir: Path, watch: bool, steps: int, interval: float, slow: int) -> dict[str, float]:
    run_dir = workdir / ("on" if watch else "off")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRIAGE_")}
    env.update({"TRIAGE_STRAGGLER_WATCH": "true" if watch else "false",
                "TRIAGE_STRAGGLER_CHECK_INTERVAL": str(interval), "STRAG_SLOW_RANK": str(slow),
                "STRAG_EXTRA_MS": "40", "STRAG_STEPS": str(steps)})
    argv = [sys.executable, "-m", "triage", "launch", "--run-dir", str(run_dir), "--console", "none", "--",
            TORCHRUN, "--standalone", "--nproc-per-node", "4", str(JOB)]
    started = time.monotonic()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=workdir)
    agent = psutil.Process(proc.pid)
    own = 0.0
    while True:
        pid, _status, usage = os.wait4(proc.pid, os.WNOHANG)    # not poll(): wait4 gives the rusage
        if pid:
            break
        try:
            times = agent.cpu_times()
            own = times.user + times.system
        except psutil.Error:
            pass
        time.sleep(0.2)
    proc.returncode = _status
    wall = time.monotonic() - started
    total = usage.ru_utime + usage.ru_stime
    out = {"wall_s": wall, "agent_cpu_s": own, "total_cpu_s": total, "checks": 0.0, "watch_cpu_s": 0.0,
           "samples": 0.0}
    for path in run_dir.glob("*/stragglers/watch.json"):
        doc = json.loads(path.read_text())
        out.update(checks=float(doc["checks"]), watch_cpu_s=float(doc["cpu_s"]), samples=float(doc["samples"]))
    if proc.stderr is not None:
        out["warned"] = float(b"arrives last" in proc.stderr.read())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=700)
    parser.add_argument("--interval", type=float, default=5.0)
    parser.add_argument("--slow-rank", type=int, default=1)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-agent-straggler-") as tmp:
        on = one_run(Path(tmp), True, args.steps, args.interval, args.slow_rank)
        off = one_run(Path(tmp), False, args.steps, args.interval, args.slow_rank)
    print(f"4-rank gloo job, {args.steps} steps, rank {args.slow_rank} 40 ms late; watch check every "
          f"{args.interval:g} s in the 'on' run")
    print(f"{'watch':6} {'wall s':>7} {'agent CPU s':>12} {'agent % core':>13} {'agent+job CPU s':>16} "
          f"{'checks':>7} {'watch CPU s':>12} {'line':>5}")
    for name, run in (("on", on), ("off", off)):
        print(f"{name:6} {run['wall_s']:7.1f} {run['agent_cpu_s']:12.2f} "
              f"{100 * run['agent_cpu_s'] / run['wall_s']:12.2f}% {run['total_cpu_s']:16.1f} "
              f"{run['checks']:7.0f} {run['watch_cpu_s']:12.3f} {'yes' if run.get('warned') else 'no':>5}")
    extra = on["agent_cpu_s"] / on["wall_s"] - off["agent_cpu_s"] / off["wall_s"]
    print(f"agent CPU, on - off: {100 * extra:+.2f}% of one core at a check every {args.interval:g} s "
          "(two runs on a shared machine: noisy)")
    if on["checks"]:
        per_check = on["watch_cpu_s"] / on["checks"]
        print(f"watch thread: {1000 * per_check:.1f} ms CPU per check (fetch 4 dumps, parse, analyze) "
              f"-> {100 * per_check / args.interval:.2f}% of one core at every {args.interval:g} s, "
              f"{100 * per_check / DEFAULT_INTERVAL_S:.3f}% at the default {DEFAULT_INTERVAL_S:g} s "
              f"(target < 1%); py-spy recordings: {on['samples']:.0f} (separate processes, bounded)")
        job = (on["total_cpu_s"] - on["agent_cpu_s"]) - (off["total_cpu_s"] - off["agent_cpu_s"])
        print(f"job side (workers answering the dumps, torchrun, py-spy), on - off: {job:+.1f} s CPU, "
              f"{1000 * job / on['checks'] / 4:+.0f} ms per rank per check (the worker also writes fr.pickle "
              "after each dump; noisy)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
