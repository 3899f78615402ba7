"""What the Flight Recorder dump at a rank's exit costs a thread that must keep running (prints figures,
asserts nothing).

A real 2-rank torchrun gloo job (tests/programs/exit_dump_job.py) runs COLLECTIVES all_reduces with
``TORCH_FR_BUFFER_SIZE`` = COLLECTIVES, then starts a daemon thread that wakes every millisecond. Each
rank calls the full JSON dump itself (the call the agent's atexit makes) and reports its time and the
thread's longest wait during it; then it returns, and the thread's ticks after the main thread's end
show how long the interpreter's exit held it. Two launches: under ``triage launch`` (its atexit writes
``exit.json`` and ``fr-exit.json``) and plain torchrun (the same exit without triage).

Run: ``python bench/bench_exit_dump.py [COLLECTIVES]`` (default 20000).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.helpers.launch import job_env, launch_argv, run_launch, torchrun
from tests.helpers.paths import program


def _exit_wait(out: Path, rank: int) -> tuple[float, float]:
    """(the thread's longest wait after the main thread's end, its last tick after that end), seconds."""
    end = float((out / f"end-{rank}.txt").read_text())
    data = (out / f"ticks-{rank}.bin").read_bytes()
    ticks = [t for (t,) in struct.iter_unpack("d", data[:len(data) // 8 * 8]) if t >= end - 0.002]
    waits = [b - a for a, b in itertools.pairwise(ticks)]
    return max(waits, default=0.0), (ticks[-1] - end) if ticks else 0.0


def one(collectives: int, under_triage: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run_dir, out = Path(tmp) / "run", Path(tmp) / "out"
        out.mkdir()
        job = torchrun(program("exit_dump_job.py"), 2, str(collectives), str(out))
        env = job_env(TORCH_FR_BUFFER_SIZE=str(collectives))
        start = time.monotonic()
        if under_triage:
            done = run_launch(launch_argv(run_dir, job, quick_hang=False), env, run_dir, timeout=900)
            text = "\n".join(p.read_text(errors="replace") for p in sorted(run_dir.glob("*/ranks/*/output.log")))
            rc = done.returncode
        else:
            plain = subprocess.run(job, env=env, capture_output=True, text=True, timeout=900, check=False,
                                   cwd=tmp)
            text, rc = plain.stdout + plain.stderr, plain.returncode
        wall = time.monotonic() - start
        label = "triage launch" if under_triage else "plain torchrun"
        if rc != 0:
            print(f"{label}: the job ended {rc}:\n{text[-3000:]}")
            return
        for match in sorted(re.findall(r"DUMP (\{.*\})", text)):
            d = json.loads(match)
            wait, last = _exit_wait(out, d["rank"])
            size = ""
            if under_triage:
                fr = next(run_dir.glob(f"*/ranks/{d['rank']}/fr-exit.json"), None)
                size = f", fr-exit.json {fr.stat().st_size / 1e6:.1f} MB" if fr else ", no fr-exit.json"
            print(f"{label} rank {d['rank']}: {d['entries']} entries, {d['bytes'] / 1e6:.1f} MB; the dump "
                  f"{d['seconds']:.3f} s, the thread's longest wait in it {d['thread_longest_wait']:.3f} s; "
                  f"at exit: its longest wait {wait:.3f} s, last tick {last:.3f} s after main's end{size}")
        print(f"{label}: job wall {wall:.1f} s")


def main() -> None:
    collectives = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    print(f"cores {os.cpu_count()}, load {os.getloadavg()[0]:.1f}")
    one(collectives, True)
    one(collectives, False)
    print(f"load after {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
