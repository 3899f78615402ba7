"""Worker overhead of `triage launch`: a 2-rank gloo loop of 20k small all_reduce calls,
with and without triage (the in-worker agent, its heartbeat thread, faulthandler...).

The time of the loop is measured inside rank 0, and the whole job's wall time outside it (the
job's start and stop: torchrun, the interpreter, torch's import, the process group; under triage
also the agent's own start and stop); runs alternate. Prints figures; asserts nothing.
On a GPU host, ``--device cuda`` runs the loop on NCCL with CUDA tensors (``--nproc 1``: one GPU
cannot hold two NCCL ranks).

    python bench/bench_launch_worker_overhead.py [--iters 20000] [--repeat 3] [--device cuda --nproc 1]
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

WORKER = """\
import sys, time
marks = [time.time()]
import torch, torch.distributed as dist
marks.append(time.time())
cuda = sys.argv[2] == "cuda"
if cuda:
    torch.cuda.set_device(0)
dist.init_process_group("nccl" if cuda else "gloo")
marks.append(time.time())
t = torch.ones(16, device="cuda" if cuda else "cpu")
n = int(sys.argv[1])
for _ in range(200):
    dist.all_reduce(t)
dist.barrier()
start, cpu = time.perf_counter(), time.process_time()
for _ in range(n):
    dist.all_reduce(t)
if cuda:
    torch.cuda.synchronize()
elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
marks.append(time.time())
rank = dist.get_rank()
dist.destroy_process_group()
marks.append(time.time())
if rank == 0:
    print(f"LOOP_SECONDS {elapsed:.4f} CPU {cpu:.4f}", flush=True)
    print("MARKS " + " ".join(f"{m:.6f}" for m in marks), flush=True)
"""

# Where a job's wall time goes, from rank 0's clock marks (time.time(), the same clock as the bench's):
# the launcher until rank 0's interpreter runs its first line, torch's import, the process group's
# start, the loop with its warm-up, the group's destruction, and from there until the job has ended
# (rank 0's exit, the launcher's and, under triage, the agent's stop and report).
PHASES = ("start to torchrun's process", "torchrun to rank 0's process", "rank 0's process to its first line",
          "import torch", "init_process_group", "warm-up + loop",
          "destroy_process_group", "to the job's end")


BEAT_COST = """\
import os, sys, time
import torch, torch.distributed as dist
from triage.worker.agent import _State
from triage.worker.heartbeat import HeartbeatThread
cuda = sys.argv[2] == "cuda"
if cuda:
    torch.cuda.set_device(0)
dist.init_process_group("nccl" if cuda else "gloo", rank=0, world_size=1, init_method="tcp://127.0.0.1:PORT")
t = torch.ones(16, device="cuda" if cuda else "cpu")
for _ in range(2000):
    dist.all_reduce(t)
if cuda:
    torch.cuda.synchronize()
state = _State(0, sys.argv[1], "h")
state.control_name = f"triage-bench-{os.getpid()}"
beat = HeartbeatThread(state, 1.0)
n = 2000
start = time.perf_counter()
for _ in range(n):
    beat.beat()
print(f"BEAT_US {(time.perf_counter() - start) / n * 1e6:.1f}", flush=True)
"""


def beat_cost(work: Path, env: dict[str, str], device: str) -> float:
    """Microseconds one heartbeat costs a worker with a full (2000-entry) Flight Recorder."""
    script = work / "beat.py"
    script.write_text(BEAT_COST.replace("PORT", str(free_port())))
    out = subprocess.run([sys.executable, str(script), str(work), device], capture_output=True, env=env,
                         check=False).stdout.decode()
    match = re.search(r"BEAT_US (\d+\.\d+)", out)
    return float(match.group(1)) if match else float("nan")


class Spawns(threading.Thread):
    """When the job's torchrun and its (first) rank process were created, in seconds after the job's own
    process (the kernel's start times, to a clock tick: psutil's create_time, whose boot-time base can be off
    by up to a second from time.time(), so only differences are used), polled every 5 ms while the job runs."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.done = threading.Event()
        self.torchrun = float("nan")
        self.rank = float("nan")

    def run(self) -> None:
        try:
            top = psutil.Process(self.pid)
            base = top.create_time()
        except psutil.Error:
            return
        while not self.done.wait(0.005) and self.rank != self.rank:
            try:
                procs = [top, *top.children(recursive=True)]
            except psutil.Error:
                continue
            for proc in procs:
                try:
                    cmd = " ".join(proc.cmdline())
                    created = proc.create_time()
                except psutil.Error:
                    continue
                if "torchrun" in cmd and "triage" not in cmd and self.torchrun != self.torchrun:
                    self.torchrun = created - base
                elif "loop.py" in cmd and "torchrun" not in cmd and self.rank != self.rank:
                    self.rank = created - base


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, float, list[float]]:
    """(rank 0's loop wall s, its CPU s, the whole job's wall s, the job's phases in s: PHASES)."""
    started, wall_start = time.perf_counter(), time.time()
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=cwd) as proc:
        seen = Spawns(proc.pid)
        seen.start()
        out = proc.communicate()[0].decode()
        seen.done.set()
        seen.join()
    job, wall_end = time.perf_counter() - started, time.time()
    match = re.search(r"LOOP_SECONDS (\d+\.\d+) CPU (\d+\.\d+)", out)
    marks = re.search(r"MARKS ([\d. ]+)", out)
    if not match or not marks:
        raise SystemExit(f"no timing in output:\n{out[-2000:]}")
    points = [wall_start, wall_start + seen.torchrun, wall_start + seen.rank,
              *(float(m) for m in marks.group(1).split()), wall_end]
    return float(match.group(1)), float(match.group(2)), job, [b - a for a, b in itertools.pairwise(points)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iters", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--nproc", type=int, default=2)
    args = parser.parse_args()
    backend = "nccl" if args.device == "cuda" else "gloo"
    with tempfile.TemporaryDirectory(prefix="bench-launch-overhead-") as tmp:
        work = Path(tmp)
        script = work / "loop.py"
        script.write_text(WORKER)
        env = {k: v for k, v in os.environ.items() if not k.startswith("TRIAGE_")}
        exe = str(Path(sys.executable).with_name("torchrun"))
        plain: list[tuple[float, float, float, list[float]]] = []
        triage: list[tuple[float, float, float, list[float]]] = []
        for i in range(args.repeat):
            tr = [exe, "--nproc-per-node", str(args.nproc), "--master-port", str(free_port()), str(script),
                  str(args.iters), args.device]
            plain.append(run(tr, env, work))
            triage.append(run([sys.executable, "-m", "triage", "launch", "--run-dir", str(work / f"run{i}"),
                               "--", *tr], env, work))
        cost = beat_cost(work, env, args.device)
        print(f"heartbeat cost: {cost:.1f} us per beat (FR with 2000 entries, nothing in flight); "
              f"at the default 1 s interval that is {cost / 1e6 * 100:.4f}% of one core")
        print(f"worker overhead: {args.nproc} rank(s) x {args.iters} all_reduce(16 floats, {backend}), rank 0's "
              f"loop, median of {args.repeat}")
        for label, index in (("wall", 0), ("cpu", 1), ("job wall", 2)):
            p = statistics.median(r[index] for r in plain)
            t = statistics.median(r[index] for r in triage)
            per_op = (lambda s: f" ({s / args.iters * 1e6:6.1f} us/op)") if index < 2 else (lambda s: "")
            print(f"  {label}: plain torchrun {p:7.3f} s{per_op(p)}, "
                  f"triage launch {t:7.3f} s{per_op(t)}, ratio {t / p:5.3f}x, difference {t - p:+.3f} s")
            plain_runs = [round(r[index], 3) for r in plain]
            print(f"        runs plain {plain_runs} triage {[round(r[index], 3) for r in triage]}")
        print("  where the job's wall time goes (rank 0's clock marks), median s: plain / triage / difference")
        for i, phase in enumerate(PHASES):
            p = statistics.median(r[3][i] for r in plain)
            t = statistics.median(r[3][i] for r in triage)
            print(f"    {phase:30s} {p:7.3f} / {t:7.3f} / {t - p:+.3f}")


if __name__ == "__main__":
    main()
