"""`triage collect` on the login node, as one library call: find the nodes (a SLURM job's, or the
SSH hosts given), run the node side on each of them at once, and record what came back
(run.json, collect.json) in the local run directory that `triage report` then reads."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from triage.layout import RunPaths
from triage.private_files import write_json_atomic
from triage.remote.fanout import NodeOutcome, fan_out
from triage.remote.gather import GatherPlan, srun_worker, ssh_worker
from triage.remote.slurm import JobNotCollectable, find_job
from triage.remote.ssh import SshOptions
from triage.schemas import COLLECT_SCHEMA, RUN_LAYOUT


@dataclass(frozen=True)
class CollectPlan:
    job_id: str | None                     # a running SLURM job (srun --overlap on each node) ...
    hosts: tuple[str, ...] = ()            # ... else these SSH hosts
    run_dir: Path | None = None            # default ./triage-collect-<job<ID>|hosts>-TIME
    remote_triage: tuple[str, ...] = ("triage",)
    node_args: tuple[str, ...] = ()        # flags for `triage collect --node-side`
    timeout_s: float = 120.0               # per node, connection included
    shared: bool = False                   # read the bundles from the shared run directory
    ssh: SshOptions = field(default_factory=SshOptions)
    fanout: int = 32
    progress: bool = True


@dataclass(frozen=True)
class Collected:
    outcomes: tuple[NodeOutcome, ...]
    report_dirs: tuple[Path, ...]          # the run directories to report on


def default_run_dir(label: str) -> Path:
    return Path.cwd() / time.strftime(f"triage-collect-{label}-%Y%m%dT%H%M%S", time.gmtime())


def collect(plan: CollectPlan, say: Callable[[str], None]) -> Collected:
    """Collect every node's bundle into the local run directory; ``say`` gets the progress lines."""
    if plan.job_id is not None:
        job = find_job(plan.job_id)
        nodes: list[str] = list(job.nodes)
        run_dir = plan.run_dir or default_run_dir(f"job{job.job_id}")
        say(f"job {job.job_id} ({job.state}) on {len(nodes)} node(s): {', '.join(nodes)}")
        worker = srun_worker(_gather(plan, run_dir), job.job_id)
        run_id = job.job_id
    else:
        nodes = list(plan.hosts)
        run_dir = plan.run_dir or default_run_dir("hosts")
        worker = ssh_worker(_gather(plan, run_dir))
        run_id = run_dir.name
    started = time.monotonic()
    existed = run_dir.exists()
    outcomes = fan_out(nodes, worker, plan.fanout, progress=plan.progress)
    elapsed = time.monotonic() - started
    if plan.job_id is not None and not any(o.ok for o in outcomes):
        _ended_meanwhile(plan.job_id, run_dir, existed)
    return Collected(tuple(outcomes), tuple(_record(run_dir, run_id, outcomes, elapsed, plan.shared)))


def _gather(plan: CollectPlan, run_dir: Path) -> GatherPlan:
    return GatherPlan(run_dir=run_dir, remote_triage=plan.remote_triage, node_args=plan.node_args,
                      timeout_s=plan.timeout_s, shared=plan.shared, ssh=plan.ssh)


def _ended_meanwhile(job_id: str, run_dir: Path, existed: bool) -> None:
    """No node answered: if the job ended (or is ending) meanwhile, say so (exit 2) and leave no
    empty directory behind."""
    try:
        find_job(job_id)
    except JobNotCollectable:
        if not existed:
            with contextlib.suppress(OSError):
                for path in sorted(run_dir.rglob("*"), key=lambda p: len(p.parts), reverse=True):
                    if path.is_dir():
                        path.rmdir()          # only empty directories: never a byte collected
                run_dir.rmdir()
        raise


def _record(run_dir: Path, run_id: str, outcomes: Sequence[NodeOutcome], elapsed: float, shared: bool) -> list[Path]:
    """Write run.json (if new) and collect.json; return the run directories to report on."""
    run = RunPaths(run_dir)
    if not run.is_run_dir():
        write_json_atomic(run.run_json, {"layout": RUN_LAYOUT, "job_id": run_id, "created": time.time(),
                                         "hosts": [o.node for o in outcomes], "collected": True})
    nodes: dict[str, Any] = {
        o.node: {"ok": o.ok, "bundle": str(o.bundle) if o.bundle else None, "error": o.error,
                 "seconds": round(o.duration_s, 3), "bytes": o.bytes_moved}
        for o in outcomes}
    write_json_atomic(run.collect_json, {"schema": COLLECT_SCHEMA, "elapsed_s": round(elapsed, 3),
                                                 "nodes": nodes, "missing": [o.node for o in outcomes if not o.ok]})
    dirs = [run_dir]
    if shared:
        dirs = sorted({o.bundle.parent.parent.parent for o in outcomes if o.bundle is not None}) or [run_dir]
    return dirs
