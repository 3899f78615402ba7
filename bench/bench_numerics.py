"""Cost of the numerics watch (`triage launch --numerics`): a small 2-rank DDP job on gloo (an MLP
of 4 Linear layers, 256 wide, batch 64, SGD). Prints figures; asserts nothing. Two measurements:

- **whole runs** (what a user sees): the job under `triage launch` without the watch, with
  ``--numerics-mode cheap`` and with ``--numerics-mode full``; the wall and CPU time of rank 0's
  training loop (after warm-up steps); runs alternate between the modes and the median of each is
  compared with the runs without the watch. Run-to-run noise on a shared machine is often larger
  than the cost itself.
- **interleaved in one job** (a bound under noise): one job under ``triage launch --numerics``;
  every ``--block`` steps all ranks stop the watch or start it again, in lockstep, in the order
  off, cheap, off, full, off, cheap, ... (:func:`triage.worker.numerics.stop` removes every hook;
  :func:`~triage.worker.numerics.start` installs them as ``--numerics`` did at the job's start:
  the same function). Rank 0 times each step (its main thread's CPU, ``time.thread_time``, where
  the hooks run; the process's CPU; the wall), drops the first ``--skip`` steps of each block
  (the watch's first step, the module hooks, a record written), and takes each block's median.
  Each watched block is compared with the mean of the two unwatched blocks beside it, so that
  load that drifts over seconds cancels out; the ratios of all blocks give a median and its 95%
  confidence interval (order statistics, no assumption about their spread).

    python bench/bench_numerics.py [--steps 300] [--repeat 3] [--blocks 150] [--block 8] [--skip 2]
                                   [--width 256] [--nproc 2] [--device cpu|cuda]

``--repeat 0`` or ``--blocks 0`` leaves that measurement out. ``--device cuda`` runs the same job on
the GPU (NCCL; one rank per GPU, so ``--nproc`` at most the number of GPUs): there each check is a
kernel whose result is read when it has arrived, never waited for (docs/numerics.md), and the
interleaved wall of a step is its block's (the steps after the first ``--skip``, up to a
``synchronize()`` at the block's end, divided by their number): the CPU queues work ahead of the GPU,
so one step's wall would time only its queueing.

Also printed: what a removed watch leaves behind (torch keeps an empty hook table on each parameter
it hooked: one call per parameter per backward into an empty dict), measured in this process.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PRELUDE = """\
import json, os, statistics, sys, time
import torch, torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
steps, width, device = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
dist.init_process_group("nccl" if device == "cuda" else "gloo")
if device == "cuda":
    device = f"cuda:{dist.get_rank()}"
    torch.cuda.set_device(device)
torch.manual_seed(0)
layers = []
for i in range(4):
    layers += [nn.Linear(width if i else 32, width), nn.ReLU()]
model = DistributedDataParallel(nn.Sequential(*layers, nn.Linear(width, 1)).to(device))
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x, y = torch.randn(64, 32, device=device), torch.randn(64, 1, device=device)
sync = torch.cuda.synchronize if device != "cpu" else (lambda: None)
def step():
    opt.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    opt.step()
for _ in range(20):
    step()
dist.barrier()
sync()
"""

WHOLE = PRELUDE + """\
start, cpu = time.perf_counter(), time.process_time()
for _ in range(steps):
    step()
sync()
elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
if dist.get_rank() == 0:
    print(f"LOOP_SECONDS {elapsed:.4f} CPU {cpu:.4f}", flush=True)
dist.destroy_process_group()
"""

INTERLEAVED = PRELUDE + """\
from triage.worker import numerics
blocks, block, skip = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
first = numerics.current()                       # started by the in-worker agent (--numerics)
if first is None or first.mode != "cheap" or not first.local:
    sys.exit(f"the watch of --numerics is not running in local mode: {first and first.document()}")
rank_dir, rank = os.path.dirname(first.path), first.rank
order = ("off", "cheap", "off", "full")
rows = []
for index in range(4 * blocks + 1):
    mode = order[index % 4]
    numerics.stop()
    if mode != "off":
        numerics.start(rank_dir, rank, mode)
    times = []
    for i in range(block):
        if i == skip:
            sync()
            began = time.perf_counter()
        wall, thread, proc = time.perf_counter(), time.thread_time(), time.process_time()
        step()
        times.append((time.thread_time() - thread, time.process_time() - proc, time.perf_counter() - wall))
    sync()
    gpu_wall = (time.perf_counter() - began) / (block - skip)     # GPU: the CPU runs ahead, so the block's wall
    watch = numerics.current()
    state = None if watch is None else (watch.mode, watch.iteration, bool(watch.module_hooks), watch.local)
    want = {"off": None, "cheap": ("cheap", block - 1, False, True), "full": ("full", block - 1, True, False)}
    if state != want[mode] or (watch is not None and watch.first is not None):
        sys.exit(f"block {index} ({mode}): the watch is {state}, not {want[mode]}")
    if mode == "cheap":                          # which path checked the local gradients (numerics_backward)
        path = [getattr(watch, "grad_path", "a hook per parameter"), getattr(watch, "one_call_checks", 0)]
    kept = times[skip:]
    rows.append([mode] + [statistics.median(t[k] for t in kept) for k in range(2)]
                + [statistics.median(t[2] for t in kept) if device == "cpu" else gpu_wall])
numerics.stop()
if dist.get_rank() == 0:
    print("PATH " + json.dumps(path), flush=True)
    print("BLOCKS " + json.dumps(rows), flush=True)
dist.destroy_process_group()
"""

MODES = {"off": (), "cheap": ("--numerics", "--numerics-mode", "cheap"),
         "full": ("--numerics", "--numerics-mode", "full")}
METRICS = ("CPU of rank 0's main thread", "CPU of rank 0", "wall of rank 0")


def launch(job: Path, tmp: Path, args: argparse.Namespace, name: str, flags: tuple[str, ...],
           extra: tuple[str, ...] = ()) -> str:
    torchrun = Path(sys.executable).parent / "torchrun"
    argv = [sys.executable, "-m", "triage", "launch", "--run-dir", str(tmp / name), "--console", "all", *flags,
            "--", str(torchrun), "--standalone", "--nproc-per-node", str(args.nproc), str(job), str(args.steps),
            str(args.width), args.device, *extra]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=1800, check=False, cwd=tmp)
    if proc.returncode != 0:
        raise SystemExit(f"{name}: the job failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    return proc.stdout


def whole_runs(tmp: Path, args: argparse.Namespace) -> None:
    job = tmp / "whole.py"
    job.write_text(WHOLE)
    times: dict[str, list[tuple[float, float]]] = {mode: [] for mode in MODES}
    for index in range(args.repeat):
        for mode, flags in MODES.items():
            match = re.search(r"LOOP_SECONDS (\S+) CPU (\S+)", launch(job, tmp, args, f"{mode}-{index}", flags))
            if match is None:
                raise SystemExit(f"{mode}: no timing in the job's output")
            times[mode].append((float(match.group(1)), float(match.group(2))))
    wall0 = statistics.median(w for w, _ in times["off"])
    cpu0 = statistics.median(c for _, c in times["off"])
    print(f"whole runs: {args.steps} steps after 20 warm-up steps, rank 0's loop, median of {args.repeat} runs each")
    for mode, values in times.items():
        wall = statistics.median(w for w, _ in values)
        cpu = statistics.median(c for _, c in values)
        print(f"  {mode:<5} wall {wall * 1000 / args.steps:7.2f} ms/step {wall / wall0:5.3f}x   "
              f"CPU {cpu * 1000 / args.steps:7.2f} ms/step {cpu / cpu0:5.3f}x   "
              f"(wall of each run: {', '.join(f'{w:.2f}s' for w, _ in values)})")


def median_ci(values: list[float], level: float = 0.95) -> tuple[float, float, float]:
    """The median and a distribution-free confidence interval for it: the order statistics k and n-k+1,
    with k the largest for which P(Binomial(n, 1/2) <= k-1) <= (1-level)/2."""
    ordered, n = sorted(values), len(values)
    tail, k = 0.0, 0
    while k < n and tail + math.comb(n, k) / 2 ** n <= (1 - level) / 2:
        tail += math.comb(n, k) / 2 ** n
        k += 1
    k = max(k, 1)
    return statistics.median(ordered), ordered[k - 1], ordered[n - k]


def interleaved(tmp: Path, args: argparse.Namespace) -> None:
    job = tmp / "interleaved.py"
    job.write_text(INTERLEAVED)
    out = launch(job, tmp, args, "interleaved", MODES["cheap"], (str(args.blocks), str(args.block), str(args.skip)))
    match = re.search(r"BLOCKS (\[.*\])$", out, re.MULTILINE)
    if match is None:
        raise SystemExit("interleaved: no timing in the job's output")
    rows = json.loads(match.group(1))
    path = re.search(r"PATH (\[.*\])$", out, re.MULTILINE)
    if path is not None:
        how, count = json.loads(path.group(1))
        print(f"cheap mode's local gradients: {how} (the last cheap block: {count} backwards checked in one call)")
    print(f"interleaved in one job: {args.blocks} blocks of each mode, {args.block} steps each "
          f"(first {args.skip} dropped), off, cheap, off, full, ...; rank 0's per-step median of each block, "
          f"a watched block / the mean of the unwatched blocks beside it")
    for index, metric in enumerate(METRICS):
        off = statistics.median(r[1 + index] for r in rows if r[0] == "off")
        parts = [f"off {off * 1000:6.3f} ms/step"]
        for mode in ("cheap", "full"):
            ratios = [rows[i][1 + index] / ((rows[i - 1][1 + index] + rows[i + 1][1 + index]) / 2)
                      for i in range(1, len(rows) - 1) if rows[i][0] == mode]
            mid, low, high = median_ci(ratios)
            parts.append(f"{mode} {mid:5.3f}x (95% CI {low:5.3f}-{high:5.3f})")
        print(f"  {metric:<28} " + "   ".join(parts))


def residue(width: int) -> None:
    """A model's backward with parameters never hooked / hooked and the hook removed (one process)."""
    import torch
    from torch import nn

    def model() -> nn.Module:
        torch.manual_seed(0)
        layers: list[nn.Module] = []
        for i in range(4):
            layers += [nn.Linear(width if i else 32, width), nn.ReLU()]
        return nn.Sequential(*layers, nn.Linear(width, 1))

    clean, hooked = model(), model()
    for param in hooked.parameters():
        param.register_post_accumulate_grad_hook(lambda p: None).remove()
    x, y = torch.randn(64, 32), torch.randn(64, 1)

    def backward(m: nn.Module) -> float:
        start = time.thread_time()
        m.zero_grad()
        nn.functional.mse_loss(m(x), y).backward()
        return time.thread_time() - start

    pairs = [(backward(clean), backward(hooked)) for _ in range(2000)][100:]
    a, b = statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)
    print(f"after stop(): forward+backward {a * 1e6:.0f} us never hooked, {b * 1e6:.0f} us hooked and removed "
          f"({b / a:5.3f}x; one process, {len(pairs)} alternating steps)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--blocks", type=int, default=150)
    parser.add_argument("--block", type=int, default=8)
    parser.add_argument("--skip", type=int, default=2)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--nproc", type=int, default=2)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    args = parser.parse_args()
    if args.block <= args.skip:
        parser.error("--block must be larger than --skip")
    backend = "NCCL on the GPU" if args.device == "cuda" else "gloo"
    with open("/proc/loadavg", encoding="ascii") as loadavg:
        load = loadavg.read().split()[0]
    print(f"{args.nproc}-rank DDP on {backend}, MLP 4x{args.width}, batch 64; load average {load} at the start",
          flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-numerics-") as name:
        tmp = Path(name)
        if args.blocks:
            interleaved(tmp, args)
        if args.repeat:
            whole_runs(tmp, args)
    if args.device == "cpu":
        residue(args.width)
    with open("/proc/loadavg", encoding="ascii") as loadavg:
        print(f"load average {loadavg.read().split()[0]} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
