"""The busy/blocked sampler of the live agent (prints figures, asserts nothing).

1. Stop latency for a blocked rank: a real 3-rank gloo job under ``triage launch --hang-timeout 3``
   where rank 0 sleeps outside any collective while ranks 1-2 wait in a barrier. Figure: the time
   from the hang (the barrier entered, from the bundle's fr.json) to triage's stop decision
   (node.json ``stop_requested``), minus ``--hang-timeout``; the bound is ``--sample-interval`` (3 s).
   The monitor takes the first sample ahead (triage.agent.hang.presample: 1 s before the timeout), so the
   second comes at that start + interval; without it the figure was 3.56-3.72 s (the tick that sees
   the timeout elapse, up to 0.5 s, and the start of the action, ~0.15 s, came before the first sample).
2. Detection latency for an init hang: rank 0 never reaches init_process_group while ranks 1-2
   wait in it; from "the peers entered init" (their own timestamp) + --hang-timeout to the bundle
   start (bound: 2 s), and to the stop decision.
3. CPU used by the agent while it samples 8 busy ranks: 8 real processes (4 spinning, 4 writing)
   sampled twice 3 s apart, as the agent does at each check; CPU time of this process and of its
   py-spy children over the wall time of the check.
4. Detection latency for torchrun's own rendezvous: ``torchrun --nnodes 2 --rdzv-backend c10d`` on
   one node; from the agent's start + --hang-timeout to the bundle start (it includes torchrun's
   own start-up), and the time the agent counted in the rendezvous (from the first probe that saw
   the launcher there; it entered at most one probe, 1 s, earlier).
5. The cost of naming the child a rank waits on: the one extra ``py-spy dump --locals`` of that
   child (the DataLoader worker id), on a live pool worker blocked in a read.
Run: ``python bench/bench_agent_sampling.py [rounds]``.
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.helpers.launch import TIMEOUT_S, job_env, launch_argv, run_launch, torchrun
from tests.helpers.paths import program
from tests.helpers.processes import kill_tree
from triage.agent.hang import busy
from triage.parsing.flight_recorder.parse import load_fr_file

SAMPLE_INTERVAL = 3.0


def stop_latency() -> float | None:
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        env = job_env(AGENT_BUSY_MODE="sleep", AGENT_BUSY_SECONDS="300")
        done = run_launch(launch_argv(run_dir, torchrun(program("agent_busy_checkpoint.py"), nproc=3)), env, run_dir)
        if done.returncode != 75:
            print(f"  unexpected exit {done.returncode}")
            return None
        bundle = done.bundle()
        entered = []
        for rank in (1, 2):
            dump = load_fr_file(bundle / f"rank-{rank}" / "fr.json", rank)
            entered += [c.time_ns / 1e9 for c in dump.collectives if c.state.value != "completed" and c.time_ns]
        node = json.loads(next(run_dir.glob("*/node.json")).read_text())
        return float(node["stop_requested"] - min(entered) - TIMEOUT_S)


def init_latency() -> tuple[float, float] | None:
    import re

    from triage.bundle import read_manifest

    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        done = run_launch(launch_argv(run_dir, torchrun(program("agent_init_hang.py"), nproc=3)), job_env(), run_dir)
        if done.returncode != 75:
            print(f"  unexpected exit {done.returncode}")
            return None
        entered = max(float(t) for rank in (1, 2) for t in re.findall(
            r"entering init_process_group at ([0-9.]+)",
            next(run_dir.glob(f"*/ranks/{rank}/output.log")).read_text()))
        manifest = read_manifest(done.bundle())
        node = json.loads(next(run_dir.glob("*/node.json")).read_text())
        return manifest.created - entered - TIMEOUT_S, node["stop_requested"] - entered - TIMEOUT_S


def sampling_cpu() -> tuple[float, float]:
    procs = [subprocess.Popen([sys.executable, str(program("agent_activity.py")), mode],
                              stdout=subprocess.DEVNULL, start_new_session=True)
             for mode in ["spin"] * 4 + ["write"] * 4]
    try:
        time.sleep(2.0)
        targets = [(i, p.pid) for i, p in enumerate(procs)]
        own0, kids0 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        wall0 = time.monotonic()
        result = busy.sample_twice(targets, SAMPLE_INTERVAL)
        wall = time.monotonic() - wall0
        own1, kids1 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (own1.ru_utime + own1.ru_stime - own0.ru_utime - own0.ru_stime
               + kids1.ru_utime + kids1.ru_stime - kids0.ru_utime - kids0.ru_stime)
        busy_count = sum(1 for a in result if a.activity == busy.Activity.BUSY)
        print(f"  {busy_count}/8 judged busy; check took {wall:.2f} s")
        return cpu, wall
    finally:
        for proc in procs:
            kill_tree(proc.pid)


def rendezvous_latency() -> float | None:
    import socket

    from tests.helpers.launch import TORCHRUN
    from triage.bundle import read_manifest

    with tempfile.TemporaryDirectory() as tmp, socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        sock.close()
        run_dir = Path(tmp) / "run"
        job = [TORCHRUN, "--nnodes", "2", "--nproc-per-node", "1", "--rdzv-backend", "c10d", "--rdzv-endpoint",
               f"127.0.0.1:{port}", "--rdzv-id", "bench", "--rdzv-conf", "join_timeout=15",
               str(program("agent_init_hang.py"))]
        done = run_launch(launch_argv(run_dir, job), job_env(), run_dir, timeout=120)
        if "evidence saved to" not in done.stderr:
            print(f"  no bundle (exit {done.returncode})")
            return None
        node = json.loads(next(run_dir.glob("*/node.json")).read_text())
        manifest = read_manifest(done.bundle())
        waited = float(manifest.extra["init"]["seconds"])
        print(f"  the agent counted {waited:.1f} s in the rendezvous (from the first probe that saw it there)")
        return float(manifest.created - node["started"] - TIMEOUT_S)


def child_id_cost() -> list[float]:
    import os

    from tests.helpers.paths import PROGRAMS
    from tests.helpers.processes import running_program
    from triage.agent.hang.children import worker_id_from_locals
    from triage.collectors.pyspy import python_children

    with tempfile.TemporaryDirectory() as tmp:
        fifo = os.path.join(tmp, "object")
        os.mkfifo(fifo)
        argv = [sys.executable, "-u", str(PROGRAMS / "agent_child_wait.py"), "pool", fifo]
        with running_program(argv, cwd=str(PROGRAMS)) as proc:
            time.sleep(1.0)
            child = python_children(proc.pid)[0]
            costs = []
            for _ in range(5):
                started = time.monotonic()
                worker_id_from_locals(child)
                costs.append(time.monotonic() - started)
            return costs


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    print(f"blocked rank: stop decision after the hang, minus --hang-timeout {TIMEOUT_S:g} s "
          f"(bound: --sample-interval {SAMPLE_INTERVAL:g} s)")
    latencies = [x for x in (stop_latency() for _ in range(rounds)) if x is not None]
    if latencies:
        print(f"  median {statistics.median(latencies):.2f} s, max {max(latencies):.2f} s over {len(latencies)} runs")
    print(f"init hang: after the peers entered init + --hang-timeout {TIMEOUT_S:g} s: bundle start (bound 2 s), "
          "stop decision")
    inits = [x for x in (init_latency() for _ in range(rounds)) if x is not None]
    for detect, stop in inits:
        print(f"  detected {detect:.2f} s, stopped {stop:.2f} s")
    print("agent CPU while sampling 8 busy ranks (one check: two samples 3 s apart)")
    shares = []
    for _ in range(rounds):
        cpu, wall = sampling_cpu()
        shares.append(cpu / wall)
        print(f"  {cpu:.2f} s CPU over {wall:.2f} s = {100 * cpu / wall:.1f}% of one core")
    print(f"  median {100 * statistics.median(shares):.1f}% of one core during a check; a check runs once "
          "per --hang-timeout, so over time: that x (interval / hang-timeout)")
    print(f"torchrun's rendezvous waiting for a node: bundle start after the agent's start + --hang-timeout "
          f"{TIMEOUT_S:g} s (includes torchrun's start-up; target 2 s after the launcher enters its rendezvous)")
    for late in [x for x in (rendezvous_latency() for _ in range(rounds)) if x is not None]:
        print(f"  {late:.2f} s")
    costs = child_id_cost()
    print(f"naming the child: one py-spy --locals dump of it: median {1000 * statistics.median(costs):.0f} ms, "
          f"max {1000 * max(costs):.0f} ms (once per waiting rank, not per worker)")


if __name__ == "__main__":
    main()
