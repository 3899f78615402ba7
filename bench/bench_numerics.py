"""Cost of the numerics watch (`triage launch --numerics`): a small 2-rank DDP job on gloo (an MLP
of 4 Linear layers, 256 wide, batch 64, SGD), under `triage launch` without the watch, with
``--numerics-mode cheap`` and with ``--numerics-mode full``.

The wall and CPU time of the training loop are measured inside rank 0 (after warm-up steps); runs alternate
between the modes and the median of each is compared with the run without the watch, in one run
of this script. Prints figures; asserts nothing.

    python bench/bench_numerics.py [--steps 300] [--repeat 3] [--width 256] [--nproc 2] [--device cpu|cuda]

``--device cuda`` runs the same job on the GPU (NCCL; one rank per GPU, so ``--nproc`` at most the
number of GPUs): there each check is a kernel and the one read of its result per step waits for the GPU.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

JOB = """\
import sys, time
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
start, cpu = time.perf_counter(), time.process_time()
for _ in range(steps):
    step()
sync()
elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
if dist.get_rank() == 0:
    print(f"LOOP_SECONDS {elapsed:.4f} CPU {cpu:.4f}", flush=True)
dist.destroy_process_group()
"""

MODES = {"off": (), "cheap": ("--numerics", "--numerics-mode", "cheap"),
         "full": ("--numerics", "--numerics-mode", "full")}


def run(mode: str, job: Path, tmp: Path, args: argparse.Namespace, index: int) -> tuple[float, float]:
    torchrun = Path(sys.executable).parent / "torchrun"
    argv = [sys.executable, "-m", "triage", "launch", "--run-dir", str(tmp / f"{mode}-{index}"),
            "--console", "all", *MODES[mode], "--", str(torchrun), "--standalone", "--nproc-per-node",
            str(args.nproc), str(job), str(args.steps), str(args.width), args.device]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False, cwd=tmp)
    match = re.search(r"LOOP_SECONDS (\S+) CPU (\S+)", proc.stdout)
    if proc.returncode != 0 or match is None:
        raise SystemExit(f"{mode}: the job failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    return float(match.group(1)), float(match.group(2))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--nproc", type=int, default=2)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-numerics-") as name:
        tmp = Path(name)
        job = tmp / "job.py"
        job.write_text(JOB)
        times: dict[str, list[tuple[float, float]]] = {mode: [] for mode in MODES}
        for index in range(args.repeat):
            for mode in MODES:
                times[mode].append(run(mode, job, tmp, args, index))
    wall0 = statistics.median(w for w, _ in times["off"])
    cpu0 = statistics.median(c for _, c in times["off"])
    backend = "NCCL on the GPU" if args.device == "cuda" else "gloo"
    print(f"{args.nproc}-rank DDP on {backend}, MLP 4x{args.width}, batch 64, {args.steps} steps, rank 0's loop, "
          f"median of {args.repeat} runs each")
    for mode, values in times.items():
        wall = statistics.median(w for w, _ in values)
        cpu = statistics.median(c for _, c in values)
        print(f"  {mode:<5} wall {wall * 1000 / args.steps:7.2f} ms/step {wall / wall0:5.3f}x   "
              f"CPU {cpu * 1000 / args.steps:7.2f} ms/step {cpu / cpu0:5.3f}x   "
              f"(wall of each run: {', '.join(f'{w:.2f}s' for w, _ in values)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
