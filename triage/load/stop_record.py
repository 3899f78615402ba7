"""``<host>/stop.json`` (``triage.stop/1``): the live agent's decision to stop the job, read back
as a :class:`~triage.model.evidence.StopDecision` (the earliest decision of the run's hosts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from triage.model import MismatchKind, Verdict, VerdictKind
from triage.model.evidence import StopDecision
from triage.schemas import STOP_SCHEMA


def verdict_from_json(data: Any) -> Verdict | None:
    """A Verdict as ``Verdict.to_json`` wrote it; None when it is not one."""
    if not isinstance(data, dict) or not isinstance(data.get("summary"), str):
        return None
    try:
        kind = VerdictKind(data.get("kind"))
        sub = data.get("subkind")
        seq = data.get("seq")
        return Verdict(kind=kind, summary=data["summary"][:2000], subkind=MismatchKind(sub) if sub else None,
                       culprit_ranks=tuple(int(r) for r in data.get("culprit_ranks") or ()),
                       process_group=str(data["process_group"]) if data.get("process_group") is not None else None,
                       seq=int(seq) if isinstance(seq, int) and not isinstance(seq, bool) else None,
                       culprit_host=str(data["culprit_host"]) if data.get("culprit_host") else None)
    except (ValueError, TypeError):
        return None


def read_stop(path: Path, skipped: list[str]) -> StopDecision | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        skipped.append(f"{path}: unreadable stop record ({type(exc).__name__})")
        return None
    stop = stop_from_json(data, str(path), path.parent.name)
    if stop is None:
        skipped.append(f"{path}: not a {STOP_SCHEMA} stop record")
    return stop


def stop_from_json(data: Any, path: str, host: str) -> StopDecision | None:
    """A stop decision as the agent wrote it (stop.json, or its record in merged.log); None when
    ``data`` is not one. ``host``: the host to name when the record names none."""
    when = data.get("time") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("schema") != STOP_SCHEMA or not isinstance(when, (int, float)):
        return None
    return StopDecision(time=float(when), host=str(data.get("host") or host)[:200],
                        reason=str(data.get("reason") or "")[:600], verdict=verdict_from_json(data.get("verdict")),
                        path=path)


def load_stop(root: Path, skipped: list[str]) -> StopDecision | None:
    """The earliest stop decision any host of the run directory recorded for this run: one older
    than its host's agent start (node.json ``started``: a reused run directory) is not this run's."""
    from triage.layout import RunPaths  # (a run directory's: a log's report reads no stop.json)

    found = []
    for host in RunPaths(root).hosts():
        stop = read_stop(host.stop, skipped)
        if stop is not None and stop.time >= _started(host.node):
            found.append(stop)
    return min(found, key=lambda s: (s.time, s.host)) if found else None


def _started(node: Path) -> float:
    try:
        data = json.loads(node.read_text(encoding="utf-8", errors="replace"))
        started = data.get("started") if isinstance(data, dict) else None
        return float(started) if isinstance(started, (int, float)) else 0.0
    except (OSError, ValueError):
        return 0.0


__all__ = ["load_stop", "read_stop", "verdict_from_json"]
