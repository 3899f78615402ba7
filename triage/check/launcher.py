"""What `triage check` learns from the user's launcher command, and the command it really runs.

The user gives the launcher without a program (``torchrun --nnodes 2 --nproc-per-node 8 ...``);
triage appends its worker. From the torchrun options (or the SLURM allocation) it learns how many
nodes and ranks to expect, this node's rank when it is fixed, and the master endpoint to probe.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from triage.errors import InputError, UsageError
from triage.parsing.torchrun_args import (
    TorchrunArgs,
    parse_torchrun_args,
    read_count,
    read_endpoint,
    read_nnodes,
    read_port,
    torchrun_index,
)

WORKER = Path(__file__).resolve().parent / "worker.py"
T = TypeVar("T")


@dataclass(frozen=True)
class Expected:
    """What the launcher and the allocation say the check should see (None: not known)."""

    nnodes: int | None
    nproc_per_node: int | None
    node_rank: int | None             # this node's torch node rank when fixed (--node-rank, --standalone)
    master_host: str | None
    master_port: int | None
    standalone: bool
    slurm_nodes: tuple[str, ...]      # host names of the SLURM allocation, if any
    elastic: bool = False             # --nnodes MIN:MAX with MIN < MAX
    slurm_node_id: int | None = None  # SLURM_NODEID (not the torch node rank under c10d rendezvous)

    @property
    def world_size(self) -> int | None:
        if self.nnodes is None or self.nproc_per_node is None:
            return None
        return self.nnodes * self.nproc_per_node


@dataclass(frozen=True)
class Launch:
    argv: list[str]                  # the user's launcher command, unchanged
    torchrun_at: int                 # index of the first torchrun option in argv
    expected: Expected

    def command(self, check_dir: Path, deadline: float) -> list[str]:
        return [*self.argv, str(WORKER), "--check-dir", str(check_dir), "--deadline", f"{deadline:.3f}"]


def _options(argv: list[str], start: int) -> TorchrunArgs:
    """torchrun's options after ``start``; refuses a program or script."""
    args = parse_torchrun_args(argv, start)
    if args.program_flags:
        word = args.program_flags[0]
        raise UsageError(f"{word}: triage check runs its own worker program; drop {word} from the launcher",
                         hint="give only the launcher and its options: `triage check -- torchrun --nproc-per-node 4`")
    if args.program_at is not None:
        raise UsageError(f"{argv[args.program_at]!r}: triage check supplies the program itself; give no script "
                         "after the launcher",
                         hint="e.g. `triage check -- torchrun --nnodes 2 --nproc-per-node 8 --rdzv-endpoint HOST:PORT`")
    if args.missing_value is not None:
        raise UsageError(f"{args.missing_value}: missing its value")
    return args


def _checked(read: tuple[T, str | None]) -> T:
    value, problem = read
    if problem is not None:
        raise UsageError(problem)
    return value


def _count(options: TorchrunArgs, name: str, minimum: int) -> int | None:
    value = options.get(name)
    return None if value is None else _checked(read_count(name, value, minimum))


def _nnodes(value: str | None) -> tuple[int | None, bool]:
    if value is None:
        return None, False
    low, high = _checked(read_nnodes(value)) or (None, None)
    return high, low != high


def _endpoint(options: TorchrunArgs) -> tuple[str | None, int | None]:
    if options.has("--standalone"):
        return None, None
    backend = options.get("--rdzv-backend")
    backend = "static" if backend is None else backend
    endpoint = options.get("--rdzv-endpoint")
    if backend != "static" and endpoint:
        return _checked(read_endpoint(endpoint)) or (None, None)
    host = options.get("--master-addr")
    port = options.get("--master-port")
    host = os.environ.get("MASTER_ADDR", "127.0.0.1") if host is None else host
    port = os.environ.get("MASTER_PORT", "29500") if port is None else port
    return host, _checked(read_port("--master-port", port))


def slurm_hosts(environ: dict[str, str]) -> tuple[str, ...]:
    """Host names of the SLURM allocation (empty when not under SLURM or scontrol is missing)."""
    nodelist = environ.get("SLURM_JOB_NODELIST") or environ.get("SLURM_NODELIST")
    if not nodelist or shutil.which("scontrol") is None:
        return ()
    try:
        shown = subprocess.run(["scontrol", "show", "hostnames", nodelist], capture_output=True, text=True,
                               timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ()
    return tuple(line.strip() for line in shown.stdout.splitlines() if line.strip())


def parse_launch(argv: list[str], environ: dict[str, str] | None = None) -> Launch:
    """Check the launcher command and learn what to expect from it (UsageError/InputError, exit 2)."""
    env = dict(os.environ if environ is None else environ)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise UsageError("no launcher given: put it after --",
                         hint="e.g. `triage check -- torchrun --nproc-per-node 4` (triage supplies the program)")
    if shutil.which(argv[0]) is None:
        raise InputError(f"launcher {argv[0]!r} not found (not on PATH and not an executable file)",
                         hint="install it or give its full path, e.g. `triage check -- $(which torchrun) ...`")
    at = torchrun_index(argv)
    if at is None:
        raise UsageError(f"{' '.join(argv)[:200]}: triage check needs torchrun in the launcher command "
                         f"(torchrun or python -m torch.distributed.run; it starts the ranks and their store)",
                         hint="e.g. `triage check -- torchrun --nproc-per-node 4`; under SLURM "
                              "`srun --ntasks-per-node 1 triage check -- torchrun ...`")
    options = _options(argv, at)
    nnodes, elastic = _nnodes(options.get("--nnodes"))
    nproc = _count(options, "--nproc-per-node", 1)
    node_rank = _count(options, "--node-rank", 0)
    standalone = options.has("--standalone")
    if standalone:
        nnodes, node_rank = 1, 0
    nproc = nproc if nproc is not None or options.has("--nproc-per-node") else 1
    hosts = slurm_hosts(env)
    if nnodes is None:
        slurm_count = env.get("SLURM_JOB_NUM_NODES") or env.get("SLURM_NNODES")
        nnodes = int(slurm_count) if slurm_count and slurm_count.isdigit() else (len(hosts) or 1)
    slurm_node_id = int(env["SLURM_NODEID"]) if env.get("SLURM_NODEID", "").isdigit() else None
    master_host, master_port = _endpoint(options)
    expected = Expected(nnodes=nnodes, nproc_per_node=nproc, node_rank=node_rank, master_host=master_host,
                        master_port=master_port, standalone=standalone, slurm_nodes=hosts, elastic=elastic,
                        slurm_node_id=slurm_node_id)
    return Launch(argv=list(argv), torchrun_at=at, expected=expected)
