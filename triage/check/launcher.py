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

from triage.errors import InputError, UsageError

WORKER = Path(__file__).resolve().parent / "worker.py"
TORCHRUN_MODULES = ("torch.distributed.run", "torch.distributed.launch")
# torchrun options that take no value (every other option takes one, as --opt VALUE or --opt=VALUE)
_FLAGS = {"--standalone", "--virtual-local-rank", "--virtual_local_rank"}
_PROGRAM_FLAGS = {"-m", "--module", "--no-python", "--no_python", "--run-path", "--run_path"}


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


def _torchrun_index(argv: list[str]) -> int | None:
    for index, word in enumerate(argv):
        if os.path.basename(word) == "torchrun":
            return index + 1
        if word in TORCHRUN_MODULES and index > 0 and argv[index - 1] == "-m":
            return index + 1
    return None


def _options(argv: list[str], start: int) -> dict[str, str]:
    """torchrun options after ``start`` as {--name-with-dashes: value}; refuses a program or script."""
    found: dict[str, str] = {}
    index = start
    while index < len(argv):
        word = argv[index]
        if word in _PROGRAM_FLAGS:
            raise UsageError(f"{word}: triage check runs its own worker program; drop {word} from the launcher",
                             hint="give only the launcher and its options: "
                                  "`triage check -- torchrun --nproc-per-node 4`")
        if not word.startswith("-"):
            raise UsageError(f"{word!r}: triage check supplies the program itself; give no script after the launcher",
                             hint="e.g. `triage check -- torchrun --nnodes 2 --nproc-per-node 8 "
                                  "--rdzv-endpoint HOST:PORT`")
        name, eq, value = word.partition("=")
        name = name.replace("_", "-")
        if eq:
            found[name] = value
        elif name in _FLAGS:
            found[name] = ""
        elif index + 1 < len(argv):
            found[name] = argv[index + 1]
            index += 1
        else:
            raise UsageError(f"{word}: missing its value")
        index += 1
    return found


def _int_option(options: dict[str, str], name: str) -> int | None:
    value = options.get(name)
    if value is None:
        return None
    try:
        number = int(value)
    except ValueError:
        if name == "--nproc-per-node" and value in ("gpu", "cpu", "auto", "xpu"):
            return None
        raise UsageError(f"{name} {value!r}: not a whole number") from None
    if number < (0 if name == "--node-rank" else 1):
        raise UsageError(f"{name} {value!r}: out of range")
    return number


def _nnodes(value: str | None) -> tuple[int | None, bool]:
    if value is None:
        return None, False
    low, _, high = value.partition(":")
    try:
        lo, hi = int(low), int(high or low)
    except ValueError:
        raise UsageError(f"--nnodes {value!r}: expected N or MIN:MAX") from None
    if lo < 1 or hi < lo:
        raise UsageError(f"--nnodes {value!r}: expected N or MIN:MAX with 1 <= MIN <= MAX")
    return hi, lo != hi


def _endpoint(options: dict[str, str]) -> tuple[str | None, int | None]:
    if "--standalone" in options:
        return None, None
    backend = options.get("--rdzv-backend", "static")
    endpoint = options.get("--rdzv-endpoint")
    if backend != "static" and endpoint:
        host, colon, port = endpoint.rpartition(":")
        if not colon or host.count(":") and not host.startswith("["):
            host, port = endpoint, ""          # no port (or a bare IPv6 address)
        try:
            return host.strip("[]"), int(port) if port else 29400
        except ValueError:
            raise UsageError(f"--rdzv-endpoint {endpoint!r}: port is not a number") from None
    host = options.get("--master-addr", os.environ.get("MASTER_ADDR", "127.0.0.1"))
    port = options.get("--master-port", os.environ.get("MASTER_PORT", "29500"))
    try:
        return host, int(port)
    except ValueError:
        raise UsageError(f"--master-port {port!r}: not a number") from None


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
    at = _torchrun_index(argv)
    if at is None:
        raise UsageError(f"{' '.join(argv)[:200]}: triage check needs torchrun in the launcher command "
                         f"(torchrun or python -m torch.distributed.run; it starts the ranks and their store)",
                         hint="e.g. `triage check -- torchrun --nproc-per-node 4`; under SLURM "
                              "`srun --ntasks-per-node 1 triage check -- torchrun ...`")
    options = _options(argv, at)
    nnodes, elastic = _nnodes(options.get("--nnodes"))
    nproc = _int_option(options, "--nproc-per-node")
    node_rank = _int_option(options, "--node-rank")
    standalone = "--standalone" in options
    if standalone:
        nnodes, node_rank = 1, 0
    nproc = nproc if nproc is not None or "--nproc-per-node" in options else 1
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
