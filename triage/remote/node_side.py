"""The half of `triage collect` that runs ON a node (through srun or SSH).

Finds what to collect on this node, gets a node bundle and hands it back:

1. the job was started by `triage launch` and its agent runs here: ask that agent (a request
   file in ``<run>/<host>/dump-requests/``, only for this host) and wait for its bundle;
2. otherwise collect standalone from the job's ranks: the pids given, else the Python processes
   whose environment names a rank (RANK / SLURM_PROCID, ...), of the invoking user only unless
   ``--all-users``; for a SLURM job only the pids ``scontrol listpids`` assigns to it here (never
   the processes' own SLURM_JOB_ID); filtered by ``--match``.

A run directory a process declares (TRIAGE_RUN_DIR) is used only when it is private to the
invoking user; otherwise the bundle goes to a new private temporary directory (0700, mkdtemp).

The bundle is then streamed to stdout as a tar (``stream=True``) or, when the caller reads the
same shared run directory, named in a one-line JSON on stdout.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from triage.bundle import Trigger
from triage.collectors.common import Target
from triage.collectors.discover import find_ranks
from triage.collectors.node_bundle import JobInfo, collect_node_bundle
from triage.collectors.procinfo import read_environ
from triage.console import say
from triage.dump.agents import agent_running, ask_agents
from triage.dump.targets import pid_targets
from triage.layout import HostPaths, RunPaths, short_hostname
from triage.options import CollectSettings
from triage.private_files import directory_problem, write_json_atomic
from triage.remote.slurm import job_pids_here
from triage.remote.transfer import pack
from triage.schemas import RUN_LAYOUT


@dataclass(frozen=True)
class NodeRequest:
    job_id: str | None
    run_dir: Path | None            # the job's run directory, if known (else discovered from the ranks)
    out_dir: Path | None            # where a standalone bundle goes without a run dir (None: a new mkdtemp)
    pids: tuple[int, ...] = ()
    match: str | None = None
    reason: str = "triage collect"
    wait_s: float = 60.0
    options: CollectSettings = field(default_factory=CollectSettings)
    all_users: bool = False


def _say(text: str) -> None:
    say(text, host=short_hostname())


def _job_ranks(job_id: str | None, match: str | None, all_users: bool) -> list[Target]:
    if job_id is None:
        return find_ranks(match, all_users=all_users)
    return find_ranks(match, all_users=all_users, only_pids=job_pids_here(job_id))


def _run_dir_of(targets: Sequence[Target]) -> Path | None:
    for target in targets:
        value = read_environ(target.pid).get("TRIAGE_RUN_DIR")
        if not value or not RunPaths(Path(value)).is_run_dir():
            continue
        problem = directory_problem(Path(value))
        if problem:
            _say(f"not using the run directory {value} that pid {target.pid} names: {problem}")
            continue
        return Path(value)
    return None


def private_out_dir(label: str) -> Path:
    """A new private directory (mkdtemp, 0700) under $XDG_RUNTIME_DIR when it is ours, else /tmp."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    if not base or directory_problem(Path(base)) is not None:
        base = tempfile.gettempdir()
    return Path(tempfile.mkdtemp(prefix=f"triage-collect-{label}-", dir=base))


def _standalone(request: NodeRequest, run_dir: Path, targets: list[Target], host: str) -> Path:
    run = RunPaths(run_dir)
    if not run.is_run_dir():
        write_json_atomic(run.run_json, {"layout": RUN_LAYOUT, "job_id": request.job_id or run_dir.name,
                                         "created": time.time(), "hosts": [host], "standalone": True})
    job = JobInfo(job_id=request.job_id or run_dir.name, host=host, run_dir=run_dir)
    reason = request.reason if targets else f"{request.reason} (no rank process found on {host})"
    return collect_node_bundle(job, targets, Trigger.REMOTE, reason, request.options, run.host(host).bundles_dir,
                               extra={"standalone": True, "collected_by": "triage collect"})


def collect_here(request: NodeRequest) -> tuple[Path, Path]:
    """Collect this node's bundle; returns (run directory, bundle directory)."""
    host = short_hostname()
    if request.pids:
        targets = pid_targets(request.pids, request.all_users, where=host)
    else:
        targets = _job_ranks(request.job_id, request.match, request.all_users)
    run_dir = request.run_dir or _run_dir_of(targets)
    here = RunPaths(run_dir).host(host) if run_dir is not None else None
    if run_dir is not None and here is not None and agent_running(here) and not request.pids:
        _say(f"asking the triage agent of {run_dir} for a bundle")
        answers = ask_agents([here], request.reason, request.wait_s, tag="collect")
        if here.host in answers.bundles:
            return run_dir, Path(answers.bundles[here.host])
        _say("the agent gave no bundle in time: collecting directly")
    target_dir = run_dir if run_dir is not None else (
        request.out_dir or private_out_dir(request.job_id or "node"))
    _say(f"collecting from {len(targets)} process(es)"
         + (": " + ", ".join(f"rank {t.rank} pid {t.pid}" for t in targets) if targets else ""))
    return target_dir, _standalone(request, target_dir, targets, host)


def serve(request: NodeRequest, stream: bool, temporary: Path | None) -> None:
    """The whole node side: collect this node's bundle, then hand it back on stdout (:func:`emit`);
    ``temporary``, our private directory for a bundle without a run directory, is removed once it is
    unused or streamed, or when no bundle was made (a pid that is gone: nothing there to keep)."""
    # stdout carries the bundle: while collecting, fd 1 points at stderr so nothing else lands in it.
    sys.stdout.flush()
    real_stdout = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    try:
        try:
            run_dir, bundle = collect_here(request)
        except BaseException:
            if temporary is not None:
                shutil.rmtree(temporary, ignore_errors=True)
            raise
        sent = False
        with contextlib.suppress(BrokenPipeError):
            emit(run_dir, bundle, stream, real_stdout)
            sent = True
        if temporary is not None and (run_dir != temporary or (sent and stream)):
            shutil.rmtree(temporary, ignore_errors=True)   # our private temporary copy: unused or streamed
    finally:
        with contextlib.suppress(BrokenPipeError):
            real_stdout.close()


def emit(run_dir: Path, bundle: Path, stream: bool, out: BinaryIO) -> None:
    """Hand the bundle back on stdout: a tar of the bundle (+ node.json), or a JSON line naming it."""
    host_dir = bundle.parent.parent
    if not stream:
        line = {"host": host_dir.name, "run_dir": str(run_dir), "bundle": str(bundle)}
        out.write((json.dumps(line) + "\n").encode())
        out.flush()
        return
    members = [bundle]
    node_json = HostPaths(host_dir).node
    if node_json.is_file():
        members.append(node_json)
    pack(host_dir.parent, members, out)
    out.flush()
