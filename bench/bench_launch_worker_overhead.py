"""Worker overhead of `triage launch`: a 2-rank gloo loop of 20k small all_reduce calls,
with and without triage (the in-worker agent, its heartbeat thread, faulthandler...).

The time of the loop is measured inside rank 0; runs alternate. Prints figures; asserts nothing.

    python bench/bench_launch_worker_overhead.py [--iters 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

WORKER = """\
import sys, time
import torch, torch.distributed as dist
dist.init_process_group("gloo")
t = torch.ones(16)
n = int(sys.argv[1])
for _ in range(200):
    dist.all_reduce(t)
dist.barrier()
start, cpu = time.perf_counter(), time.process_time()
for _ in range(n):
    dist.all_reduce(t)
elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
if dist.get_rank() == 0:
    print(f"LOOP_SECONDS {elapsed:.4f} CPU {cpu:.4f}", flush=True)
dist.destroy_process_group()
"""


BEAT_COST = """\
import os, sys, time
import torch, torch.distributed as dist
from triage.worker.agent import _State
from triage.worker.heartbeat import HeartbeatThread
dist.init_process_group("gloo", rank=0, world_size=1, init_method="tcp://127.0.0.1:PORT")
t = torch.ones(16)
for _ in range(2000):
    dist.all_reduce(t)
state = _State(0, sys.argv[1], "h")
state.control_name = f"triage-bench-{os.getpid()}"
beat = HeartbeatThread(state, 1.0)
n = 2000
start = time.perf_counter()
for _ in range(n):
    beat.beat()
print(f"BEAT_US {(time.perf_counter() - start) / n * 1e6:.1f}", flush=True)
"""


def beat_cost(work: Path, env: dict[str, str]) -> float:
    """Microseconds one heartbeat costs a worker with a full (2000-entry) Flight Recorder."""
    script = work / "beat.py"
    script.write_text(BEAT_COST.replace("PORT", str(free_port())))
    out = subprocess.run([sys.executable, str(script), str(work)], capture_output=True, env=env,
                         check=False).stdout.decode()
    match = re.search(r"BEAT_US (\d+\.\d+)", out)
    return float(match.group(1)) if match else float("nan")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    out = subprocess.run(argv, capture_output=True, env=env, cwd=cwd, check=False).stdout.decode()
    match = re.search(r"LOOP_SECONDS (\d+\.\d+) CPU (\d+\.\d+)", out)
    if not match:
        raise SystemExit(f"no timing in output:\n{out[-2000:]}")
    return float(match.group(1)), float(match.group(2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iters", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-launch-overhead-") as tmp:
        work = Path(tmp)
        script = work / "loop.py"
        script.write_text(WORKER)
        env = {k: v for k, v in os.environ.items() if not k.startswith("TRIAGE_")}
        exe = str(Path(sys.executable).with_name("torchrun"))
        plain: list[tuple[float, float]] = []
        triage: list[tuple[float, float]] = []
        for i in range(args.repeat):
            tr = [exe, "--nproc-per-node", "2", "--master-port", str(free_port()), str(script), str(args.iters)]
            plain.append(run(tr, env, work))
            triage.append(run([sys.executable, "-m", "triage", "launch", "--run-dir", str(work / f"run{i}"),
                               "--", *tr], env, work))
        cost = beat_cost(work, env)
        print(f"heartbeat cost: {cost:.1f} us per beat (FR with 2000 entries, nothing in flight); "
              f"at the default 1 s interval that is {cost / 1e6 * 100:.4f}% of one core")
        print(f"worker overhead: 2 ranks x {args.iters} all_reduce(16 floats, gloo), rank 0's loop, "
              f"median of {args.repeat}")
        for label, index in (("wall", 0), ("cpu", 1)):
            p = statistics.median(r[index] for r in plain)
            t = statistics.median(r[index] for r in triage)
            print(f"  {label}: plain torchrun {p:7.3f} s ({p / args.iters * 1e6:6.1f} us/op), "
                  f"triage launch {t:7.3f} s ({t / args.iters * 1e6:6.1f} us/op), ratio {t / p:5.3f}x")
            plain_runs = [round(r[index], 3) for r in plain]
            print(f"        runs plain {plain_runs} triage {[round(r[index], 3) for r in triage]}")


if __name__ == "__main__":
    main()
