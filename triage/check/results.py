"""The check directory: where every node and rank of one `triage check` writes, and how it is read.

Layout (paths relative to the check directory)::

    nodes/<host>-<pid>.json   one per `triage check` process (one per node): master probe, launcher exit
    nodes/<host>-<pid>.log    what the launcher (torchrun) and the ranks printed on that node
    ranks/rank-<RANK>.json    one per rank, rewritten after every step (see worker.py)
    verdict.json              written by the lead node when the check is over

Files that cannot be read are listed (``unreadable``), never fatal: a half-written directory is
exactly what a failed check leaves behind.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from triage.layout import CheckPaths
from triage.private_files import write_json_atomic
from triage.schemas import CHECK_VERDICT_FORMAT as VERDICT_FORMAT


@dataclass(frozen=True)
class CheckData:
    """Everything the verdict is computed from."""

    nodes: tuple[dict[str, Any], ...]
    ranks: dict[int, dict[str, Any]]
    expected: dict[str, Any]
    unreadable: tuple[str, ...] = field(default=())


def node_path(check_dir: Path, host: str, pid: int) -> Path:
    return CheckPaths(check_dir).node(host, pid)


def _load(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def load_check(check_dir: Path, expected: dict[str, Any]) -> CheckData:
    nodes: list[dict[str, Any]] = []
    ranks: dict[int, dict[str, Any]] = {}
    unreadable: list[str] = []
    paths = CheckPaths(check_dir)
    for path in sorted(paths.nodes_dir.glob("*.json")):
        node = _load(path)
        if node is None:
            unreadable.append(str(path))
        else:
            nodes.append(node)
    for path in sorted(paths.ranks_dir.glob(CheckPaths.RANK_GLOB)):
        rank = _load(path)
        if rank is None or not isinstance(rank.get("rank"), int):
            unreadable.append(str(path))
        else:
            ranks[int(rank["rank"])] = rank
    return CheckData(nodes=tuple(nodes), ranks=ranks, expected=expected, unreadable=tuple(unreadable))


def read_verdict(check_dir: Path) -> dict[str, Any] | None:
    """The verdict a finished check left in ``check_dir`` (None when there is none or it is unreadable)."""
    data = _load(CheckPaths(check_dir).verdict)
    if data is None or data.get("format") != VERDICT_FORMAT:
        return None
    return data


def write_verdict(check_dir: Path, data: dict[str, Any]) -> None:
    write_json_atomic(CheckPaths(check_dir).verdict, {"format": VERDICT_FORMAT, **data})
