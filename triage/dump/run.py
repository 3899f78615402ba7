"""What `triage dump` does, as one library call: ask a run's running agents for their bundles, or,
with none running, collect straight from the run's live ranks on this node; or collect standalone
from given processes into a new run-directory-shaped directory that `triage report` reads."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from triage.bundle import Trigger
from triage.collectors.discover import find_matching, find_ranks
from triage.collectors.node_bundle import JobInfo, collect_node_bundle
from triage.dump.agents import ask_agents, running_agents
from triage.dump.targets import pid_targets, run_targets
from triage.errors import InputError
from triage.layout import RunPaths, short_hostname
from triage.options import CollectSettings
from triage.private_files import check_private_dir, read_json, write_json_atomic
from triage.schemas import RUN_LAYOUT

DEFAULT_WAIT_S = 120.0
Say = Callable[[str], None]


@dataclass(frozen=True)
class DumpRequest:
    run_dir: Path | None = None         # a `triage launch` run directory: ask its agents
    pids: tuple[int, ...] = ()          # else these processes
    match: str | None = None            # else the Python ranks whose command line matches
    out: Path | None = None             # where standalone bundles go (default ./triage-dump-TIME)
    reason: str = ""
    wait_s: float = DEFAULT_WAIT_S      # for the agents' bundles
    options: CollectSettings = field(default_factory=CollectSettings)
    all_users: bool = False


@dataclass(frozen=True)
class DumpResult:
    bundles: tuple[str, ...]
    report_on: Path                     # the run directory `triage report` reads next
    missing: tuple[str, ...] = ()       # hosts whose agent gave no bundle in time


def dump(request: DumpRequest, say: Say) -> DumpResult:
    """Collect the bundles ``request`` asks for; ``say`` gets the progress lines."""
    if request.pids or request.match:
        return _standalone(request, say)
    if request.run_dir is None:
        raise ValueError("a dump needs a run directory, pids or a pattern")
    return _from_run_dir(request.run_dir, request, say)


def _from_run_dir(run_dir: Path, request: DumpRequest, say: Say) -> DumpResult:
    run = RunPaths(run_dir)
    if not run.is_run_dir():
        raise InputError(f"{run_dir}: not a triage run directory (no run.json)",
                         hint="give the directory `triage launch` printed as `run dir`")
    agents = running_agents(run)
    if not agents:
        return _standalone_run_dir(run, request, say)
    say(f"asked {len(agents)} agent(s) for a bundle: {', '.join(h.host for h in agents)}")
    answers = ask_agents(agents, request.reason or f"triage dump (pid {os.getpid()})", request.wait_s)
    bundles = tuple(answers.bundles[h.host] for h in agents if h.host in answers.bundles)
    return DumpResult(bundles, run_dir, answers.missing)


def _standalone_run_dir(run: RunPaths, request: DumpRequest, say: Say) -> DumpResult:
    host = run.host(short_hostname())
    targets = run_targets(host, request.all_users)
    if not targets:
        raise InputError(f"{run.root}: no running agent and no live rank on this node",
                         hint=f"the job has ended: `triage report {run.root}`")
    say(f"no running agent: collecting directly from {len(targets)} rank(s)")
    job_id = str(_read_dict(run.run_json).get("job_id", run.root.name))
    started = _read_dict(host.node).get("started")
    job = JobInfo(job_id=job_id, host=host.host, started=float(started) if started else None, run_dir=run.root)
    bundle = collect_node_bundle(job, targets, Trigger.MANUAL, request.reason or "triage dump (no agent)",
                                 request.options, host.bundles_dir, extra={"standalone": True})
    return DumpResult((str(bundle),), run.root)


def _read_dict(path: Path) -> dict[str, Any]:
    try:
        data: Any = read_json(path)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _standalone(request: DumpRequest, say: Say) -> DumpResult:
    if request.pids:
        targets = pid_targets(request.pids, request.all_users)
    else:
        pattern = request.match or ""
        targets = (find_ranks(pattern, all_users=request.all_users)
                   or find_matching(pattern, all_users=request.all_users))
        if not targets:
            raise InputError(f"no Python process matches {pattern!r} on this node",
                             hint="check the pattern with `pgrep -af REGEX`, or give --pid")
    out = request.out or Path.cwd() / time.strftime("triage-dump-%Y%m%dT%H%M%S", time.gmtime())
    host = short_hostname()
    job_id = f"dump-{out.name}"
    run = RunPaths(out)
    if not run.is_run_dir():
        write_json_atomic(run.run_json, {"layout": RUN_LAYOUT, "job_id": job_id, "created": time.time(),
                                         "hosts": [host], "standalone": True})
    check_private_dir(out)
    say(f"collecting from {len(targets)} process(es): " + ", ".join(f"rank {t.rank} pid {t.pid}" for t in targets))
    bundle = collect_node_bundle(JobInfo(job_id=job_id, host=host, run_dir=out), targets, Trigger.MANUAL,
                                 request.reason or "triage dump", request.options, run.host(host).bundles_dir,
                                 extra={"standalone": True})
    return DumpResult((str(bundle),), out)
