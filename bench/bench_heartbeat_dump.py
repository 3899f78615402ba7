"""What the heartbeat's Flight Recorder lookups cost a rank (prints figures, asserts nothing).

A collective still pending a whole heartbeat interval later makes the heartbeat thread dump the Flight
Recorder to find its entry; torch holds the GIL for all of the dump. tests/programs/heartbeat_dump_job.py,
2 gloo ranks, ``TORCH_FR_BUFFER_SIZE`` = COLLECTIVES, rank 0 with a thread that wakes every millisecond:

1. plain torchrun: one pending collective's lookup as the heartbeat did it before session 41 (a whole dump,
   then ``json.loads`` of all of it) and now (``flight.in_flight_entries``), with the thread's longest wait;
2. ``triage launch --heartbeat-interval 0.2`` of this checkout (and of ``--before DIR``, another checkout,
   e.g. a worktree of the commit before): ROUNDS collectives each pending 0.6 s on rank 0 (a slow step, not a
   hang): the heartbeat's dumps (``fr_dumps`` in heartbeat.json) and the thread's waits over 20 ms.

Run: ``python bench/bench_heartbeat_dump.py [COLLECTIVES] [ROUNDS] [--before DIR]`` (default 20000, 20).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.helpers.launch import job_env, launch_argv, run_launch, torchrun
from tests.helpers.paths import EXAMPLES, program

INTERVAL = 0.2
DELAY = 0.6


def calls(collectives: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        job = torchrun(program("heartbeat_dump_job.py"), 2, "calls", str(collectives), "0", "0", tmp)
        done = subprocess.run(job, env=job_env(TORCH_FR_BUFFER_SIZE=str(collectives)), capture_output=True,
                              text=True, timeout=900, check=False, cwd=tmp)
        found = re.findall(r"CALL (\{.*\})", done.stdout)
        if done.returncode or not found:
            print(f"calls: the job ended {done.returncode}:\n{(done.stdout + done.stderr)[-3000:]}")
        for line in found:
            d = json.loads(line)
            print(f"  lookup {d['label']:6}: {d['seconds']:.3f} s, {d['found']} entry, the thread's longest wait "
                  f"{d['thread_longest_wait']:.3f} s")


def rounds(collectives: int, count: int, repo: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        job = torchrun(program("heartbeat_dump_job.py"), 2, "rounds", str(collectives), str(count), str(DELAY), tmp)
        env = job_env(TORCH_FR_BUFFER_SIZE=str(collectives))
        env["PYTHONPATH"] = os.pathsep.join((str(repo), str(EXAMPLES)))
        argv = launch_argv(run_dir, job, "--heartbeat-interval", str(INTERVAL), quick_hang=False)
        start = time.monotonic()
        done = run_launch(argv, env, run_dir, timeout=900)     # `python -m triage` of that checkout (PYTHONPATH)
        text = "\n".join(p.read_text(errors="replace") for p in sorted(run_dir.glob("*/ranks/0/output.log")))
        found = re.findall(r"ROUNDS (\{.*\})", text)
        if done.returncode or not found:
            print(f"  {repo}: the job ended {done.returncode}:\n{text[-3000:]}")
            return
        d = json.loads(found[0])
        beat = next(run_dir.glob("*/ranks/0/heartbeat.json"), None)
        dumps = json.loads(beat.read_text()).get("fr_dumps") if beat else None
        said = (f"{dumps['count']} dumps, {dumps['seconds']:.2f} s in all" if dumps else
                "fr_dumps not recorded (before session 41)")
        print(f"  {repo.name}: {count} rounds in {d['seconds']:.1f} s; the heartbeat: {said}; the thread's waits "
              f"over 20 ms: {d['waits_over_20ms']}, {d['sum']:.2f} s in all, longest {d['longest']:.3f} s "
              f"(job wall {time.monotonic() - start:.1f} s)")


def main() -> None:
    args = sys.argv[1:]
    before = None
    if "--before" in args:
        at = args.index("--before")
        before = Path(args[at + 1]).resolve()
        del args[at:at + 2]
    collectives = int(args[0]) if args else 20000
    count = int(args[1]) if len(args) > 1 else 20
    print(f"cores {os.cpu_count()}, load {os.getloadavg()[0]:.1f}; {collectives} Flight Recorder entries")
    print("one pending collective's lookup (plain torchrun):")
    calls(collectives)
    print(f"{count} collectives each pending {DELAY} s, heartbeat every {INTERVAL} s (triage launch):")
    if before is not None:
        rounds(collectives, count, before)
    rounds(collectives, count, REPO)
    print(f"load after {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
