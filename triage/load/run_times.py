"""The times a run directory records, for the HTML report's timeline strip (one place).

Read, per host: ``run.json`` / ``node.json`` (job start, the agent's stop request, job end), each
rank's ``worker.json`` (start), ``heartbeat.json`` (``progress_time``: when its collectives or step
last moved, the worker's clock), ``exit.json`` (``time``), else the modification time of a
``faulthandler.log`` that holds a dump (faulthandler writes it when the rank is signalled; only
within the job's recorded start and end: a copied run directory has new modification times), and
the hang bundles' manifests (``created``: the agent noticed; ``finished``: the evidence saved).
A file that is missing or unreadable gives no time: the strip leaves that mark out.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from triage.layout import BundlePaths, HostPaths, RunPaths
from triage.load.run_dir import looks_like_run_dir
from triage.load.stop_record import load_stop
from triage.regular_files import is_special_file

MAX_JSON_BYTES = 1 << 20      # the agent's small records; a bigger file is not one of them
MTIME_SLACK_S = 60.0          # a rank may outlive its agent's end record by this much


@dataclass(frozen=True)
class RankExit:
    rank: int
    time: float
    how: str                  # "ended (exit code 1)", "ended (exception)", "signalled (faulthandler.log written)"
    from_mtime: bool = False  # the time is a file's modification time, not a record


@dataclass(frozen=True)
class RunTimes:
    """Unix times from one run directory; every field may be empty (not recorded)."""

    job_start: float | None = None
    ranks_started: float | None = None            # the first worker.json's start
    progress: tuple[tuple[int, float], ...] = ()  # (rank, its last progress)
    detected: tuple[tuple[str, float], ...] = ()  # (host, a hang bundle's start)
    bundles: tuple[tuple[str, float], ...] = ()   # (host, a hang bundle's end)
    stop_requested: float | None = None           # the agent's stop request (node.json), earliest host
    exits: tuple[RankExit, ...] = ()
    job_end: float | None = None                  # the last agent's end (node.json)


def _time(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and value > 0 else None


def _json(path: Path) -> dict[str, Any]:
    try:
        if not path.is_file() or path.stat().st_size > MAX_JSON_BYTES:
            return {}
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _first(values: Iterable[float | None]) -> float | None:
    found = [v for v in values if v is not None]
    return min(found) if found else None


def _rank_exit(host: HostPaths, rank: int) -> RankExit | None:
    paths = host.rank(rank)
    record = _json(paths.exit)
    when = _time(record.get("time"))
    if when is not None:
        code = record.get("exit_code")
        how = f"exit code {code}" if isinstance(code, int) and not isinstance(code, bool) else str(
            record.get("how") or "no exit code")[:40]
        return RankExit(rank, when, f"ended ({how})")
    try:
        info = paths.faulthandler.stat()
    except OSError:
        return None
    if info.st_size > 0 and not is_special_file(paths.faulthandler):
        return RankExit(rank, info.st_mtime, "signalled (faulthandler.log written)", from_mtime=True)
    return None


def _stop_time(root: Path, nodes: dict[str, dict[str, Any]]) -> float | None:
    """The stop decision's time: stop.json (the decision that fixed the verdict), else the agents'
    stop request in node.json (run directories of agents without stop records)."""
    decision = load_stop(root, [])
    if decision is not None:
        return decision.time
    return _first(_time(n.get("stop_requested")) for n in nodes.values())


def load_run_times(root: Path) -> RunTimes | None:
    """The run directory's times, or None when ``root`` is not a run directory."""
    if not root.is_dir() or not looks_like_run_dir(root):
        return None
    run = RunPaths(root)
    nodes = {host.host: _json(host.node) for host in run.hosts()}
    started: list[float | None] = []
    progress: list[tuple[int, float]] = []
    exits: list[RankExit] = []
    detected: list[tuple[str, float]] = []
    bundles: list[tuple[str, float]] = []
    for host in run.hosts():
        for rank in host.ranks():
            started.append(_time(_json(host.rank(rank).worker).get("started")))
            moved = _time(_json(host.rank(rank).heartbeat).get("progress_time"))
            if moved is not None:
                progress.append((rank, moved))
            ended = _rank_exit(host, rank)
            if ended is not None:
                exits.append(ended)
        for bundle in host.bundles():
            manifest = _json(BundlePaths(bundle).manifest)
            if manifest.get("trigger") != "hang":
                continue
            if (created := _time(manifest.get("created"))) is not None:
                detected.append((host.host, created))
            if (finished := _time(manifest.get("finished"))) is not None:
                bundles.append((host.host, finished))
    ends = [_time(node.get("ended")) for node in nodes.values()]
    start = _first([_time(_json(run.run_json).get("created"))] + [_time(n.get("started")) for n in nodes.values()])
    end = max((e for e in ends if e is not None), default=None)
    exits = [e for e in exits if not e.from_mtime or (start is not None and start <= e.time
                                                      and (end is None or e.time <= end + MTIME_SLACK_S))]
    return RunTimes(
        job_start=start,
        ranks_started=_first(started), progress=tuple(sorted(progress)), detected=tuple(sorted(detected)),
        bundles=tuple(sorted(bundles)), stop_requested=_stop_time(root, nodes),
        exits=tuple(sorted(exits, key=lambda e: (e.time, e.rank))),
        job_end=end)
