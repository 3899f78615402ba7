"""Collect one node bundle: every collector for every local rank, in parallel.

Each rank gets its own thread which runs, in order: ``proc`` (psutil snapshot, before anything
perturbs the process), ``fr`` + ``stacks`` (in-worker agent, no ptrace), ``fr-torch``,
``pyspy``, ``pystack`` (when py-spy failed or is missing), ``gdb`` (always, or automatically when
py-spy failed) and last ``strace`` (only one tracer may attach at a time, so strace never overlaps
py-spy/gdb on the same rank; it does overlap the other ranks' strace windows). Node collectors (``dmesg``, ``facts``,
``nvidia-smi``) run in a thread of their own. ``manifest.json`` is written at the start (no
collectors yet, ``finished`` null) and rewritten at the end, so even an interrupted collection
leaves a readable bundle.
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from triage.bundle import (
    BundleRank,
    CollectorRecord,
    CollectorStatus,
    Manifest,
    Trigger,
    create_bundle_dir,
    write_manifest,
)
from triage.collectors.common import Target, process_alive, safe
from triage.collectors.dmesg import collect_dmesg
from triage.collectors.gdb import collect_gdb
from triage.collectors.gpu import collect_gpus
from triage.collectors.procinfo import collect_node_facts, collect_proc
from triage.collectors.pyframes import collect_pystack_live
from triage.collectors.pyspy import collect_pyspy
from triage.collectors.strace import collect_strace
from triage.collectors.worker import collect_torch_fr_files, collect_worker
from triage.layout import BundlePaths
from triage.options import CollectSettings
from triage.private_files import make_private_dir

_PYSPY_FAILED = (CollectorStatus.FAILED, CollectorStatus.MISSING, CollectorStatus.DENIED,
                 CollectorStatus.TIMEOUT)
_PYSPY_UNREADABLE = (CollectorStatus.FAILED, CollectorStatus.MISSING)


@dataclass(frozen=True)
class JobInfo:
    job_id: str
    host: str = field(default_factory=lambda: socket.gethostname().split(".")[0])
    started: float | None = None          # unix time the job started (dmesg window)
    run_dir: Path | None = None


def collect_rank(target: Target, bundle: Path, options: CollectSettings) -> list[CollectorRecord]:
    """All per-rank collectors for one rank, in the safe order. Never raises."""
    out = make_private_dir(BundlePaths(bundle).rank(target.rank).root)
    records: list[CollectorRecord] = []
    records.append(safe("proc", target, lambda: collect_proc(target, out, bundle, options)))
    worker = _safe_list(("fr", "stacks"), target, lambda: collect_worker(target, out, bundle, options))
    records.extend(worker)
    records.append(safe("fr-torch", target, lambda: collect_torch_fr_files(target, out, bundle, options)))
    pyspy = safe("pyspy", target, lambda: collect_pyspy(target, out, bundle, options))
    records.append(pyspy)
    want_gdb = options.gdb == "always" or (options.gdb == "auto" and pyspy.status in _PYSPY_FAILED
                                           and process_alive(target.pid))
    if pyspy.status in _PYSPY_UNREADABLE and process_alive(target.pid):
        # Python frames without py-spy (say, a Python it does not know yet): pystack reads them from the
        # process's memory and runs nothing of the target's. Not after a timeout or a refused ptrace: it
        # would wait or be refused the same way.
        reason = f"py-spy {pyspy.status.value}"
        records.append(safe("pystack", target, lambda: collect_pystack_live(target, out, bundle, options, reason)))
    if want_gdb:
        why = "requested" if options.gdb == "always" else f"py-spy {pyspy.status.value}"
        records.append(safe("gdb", target, lambda: collect_gdb(target, out, bundle, options, why)))
    else:
        records.append(CollectorRecord(name="gdb", status=CollectorStatus.SKIPPED, rank=target.rank,
                                       pid=target.pid,
                                       error=f"not run (gdb={options.gdb}, py-spy {pyspy.status.value})"))
    records.append(safe("strace", target, lambda: collect_strace(target, out, bundle, options)))
    return records


def _safe_list(names: Sequence[str], target: Target,
               func: Callable[[], list[CollectorRecord]]) -> list[CollectorRecord]:
    started = time.monotonic()
    try:
        return func()
    except Exception as error:  # noqa: BLE001 - collectors never raise
        return [CollectorRecord(name=n, status=CollectorStatus.FAILED, rank=target.rank, pid=target.pid,
                                duration_s=round(time.monotonic() - started, 3),
                                error=f"{type(error).__name__}: {error}") for n in names]


def collect_node(bundle: Path, options: CollectSettings, job_started: float | None,
                 targets: Sequence[Target] = ()) -> list[CollectorRecord]:
    out = make_private_dir(BundlePaths(bundle).node.root)
    records = [safe("dmesg", None, lambda: collect_dmesg(out, bundle, options, job_started)),
               safe("gpu", None, lambda: collect_gpus(out, bundle, options, targets, job_started))]
    started = time.monotonic()
    try:
        records.extend(collect_node_facts(out, bundle, options))
    except Exception as error:  # noqa: BLE001
        records.append(CollectorRecord(name="facts", status=CollectorStatus.FAILED,
                                       duration_s=round(time.monotonic() - started, 3),
                                       error=f"{type(error).__name__}: {error}"))
    return records


def _manifest(job: JobInfo, targets: Sequence[Target], trigger: Trigger, reason: str, created: float,
              records: Sequence[CollectorRecord], finished: float | None, extra: dict[str, Any]) -> Manifest:
    ranks = tuple(BundleRank(rank=t.rank, pid=t.pid, local_rank=t.local_rank, alive=t.alive) for t in targets)
    ordered = sorted(records, key=lambda r: (r.rank is not None, r.rank if r.rank is not None else -1))
    return Manifest(job_id=job.job_id, host=job.host, trigger=trigger, created=created, ranks=ranks,
                    collectors=tuple(ordered), reason=reason, finished=finished, extra=extra)


def _oldest_start(targets: Sequence[Target]) -> float | None:
    """Without a known job start (standalone dump), the start of the oldest target process."""
    times = []
    for target in targets:
        if target.pid is None:
            continue
        with contextlib.suppress(psutil.Error):
            times.append(psutil.Process(target.pid).create_time())
    return min(times, default=None)


def collect_node_bundle(
    job: JobInfo, targets: Sequence[Target], trigger: Trigger, reason: str, options: CollectSettings,
    bundles_dir: Path, extra: dict[str, Any] | None = None,
) -> Path:
    """Collect a node bundle under ``bundles_dir``; returns its directory. Never raises on tool failures."""
    created = time.time()
    bundle = create_bundle_dir(make_private_dir(bundles_dir), trigger, created)
    targets = [Target(rank=t.rank, pid=t.pid, local_rank=t.local_rank, paths=t.paths,
                      alive=process_alive(t.pid)) for t in targets]
    info: dict[str, Any] = dict(extra or {})
    info.setdefault("options", {k: getattr(options, k) for k in options.__dataclass_fields__})
    write_manifest(bundle, _manifest(job, targets, trigger, reason, created, (), None, info))
    records: list[CollectorRecord] = []
    wall = time.monotonic()
    with ThreadPoolExecutor(max_workers=len(targets) + 1, thread_name_prefix="triage-collect") as pool:
        node_future = pool.submit(collect_node, bundle, options, job.started or _oldest_start(targets), targets)
        rank_futures = [pool.submit(collect_rank, t, bundle, options) for t in targets]
        for future in rank_futures:
            records.extend(future.result())
        records.extend(node_future.result())
    info["wall_s"] = round(time.monotonic() - wall, 3)
    write_manifest(bundle, _manifest(job, targets, trigger, reason, created, records, time.time(), info))
    return bundle
