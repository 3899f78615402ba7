"""The children of a stuck rank, live: which DataLoader worker each dumped child is, and which
child the rank waits on.

The DataLoader worker id is read from the child itself while it runs: one
``py-spy dump --json --locals --nonblocking`` (the child is never paused), of which only the
``worker_id`` argument of torch's ``_worker_loop`` frame is kept (the other locals may hold data
of the job: they are never stored or printed). When that fails (py-spy without locals support, a
frame not found), the workers of a rank are numbered by their start order (process start time,
then pid): torch starts worker 0 first. ``worker_id_from`` says which way each id was found.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from triage.analysis.child_wait import ChildWait, child_waited_on, classify_child
from triage.bundle import CollectorRecord
from triage.collectors.common import run_tool
from triage.collectors.pyspy import find_pyspy
from triage.layout import BundlePaths
from triage.load.agent_facts import stack_lines
from triage.model.evidence import ChildStack
from triage.parsing.stacks import parse_pyspy_json, parse_pyspy_text

_LOOP = "_worker_loop"


def worker_id_from_locals(pid: int, timeout: float = 5.0) -> int | None:
    """``worker_id`` of the child's ``_worker_loop`` frame (None: not a DataLoader worker, or unreadable)."""
    tool, _looked = find_pyspy()
    if tool is None:
        return None
    run = run_tool([tool, "dump", "--pid", str(pid), "--json", "--locals", "--nonblocking"], timeout, 8 << 20)
    if run.start_error or run.timed_out or run.returncode != 0:
        return None
    try:
        data: Any = json.loads(run.stdout.decode("utf-8", "replace"))
    except ValueError:
        return None
    return _worker_id(data)


def _worker_id(data: Any) -> int | None:
    for thread in data if isinstance(data, list) else ():
        for frame in thread.get("frames", ()) if isinstance(thread, dict) else ():
            if not isinstance(frame, dict) or frame.get("name") != _LOOP:
                continue
            for local in frame.get("locals") or ():
                if isinstance(local, dict) and local.get("name") == "worker_id" and local.get("arg"):
                    text = str(local.get("repr", ""))
                    return int(text) if text.isdigit() else None
    return None


def _start_time(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return float(handle.read().rsplit(")", 1)[-1].split()[19])
    except (OSError, IndexError, ValueError):
        return float("inf")


def child_facts(bundle: Path, records: Sequence[CollectorRecord]) -> list[dict[str, Any]]:
    """``extra.children`` entries for the dumped children (rank, pid, kind, dump file); worker ids
    are filled by :func:`name_waited_on` for the children a rank waits on."""
    entries: list[dict[str, Any]] = []
    for record in records:
        if record.pid is None or record.rank is None or not record.files:
            continue
        threads = parse_pyspy_text((bundle / record.files[0]).read_text(encoding="utf-8", errors="replace"))
        kind, _working, _where = classify_child(threads)
        entries.append({"rank": record.rank, "pid": record.pid, "kind": kind, "file": record.files[0],
                        "worker_id": None, "worker_id_from": None})
    return entries


def name_waited_on(bundle: Path, entries: list[dict[str, Any]]) -> list[ChildWait]:
    """The child each rank waits on, with its DataLoader worker id: read (py-spy locals) from that
    one child only (one more dump per waiting rank, not per worker); else the rank's workers are
    numbered by start order."""
    for wait in waits(bundle, entries):
        if wait.kind != "DataLoader worker":
            continue
        entry = next(e for e in entries if e["pid"] == wait.pid)
        worker = worker_id_from_locals(wait.pid)
        if worker is not None:
            entry.update(worker_id=worker, worker_id_from="py-spy locals")
        else:
            _number_by_start([e for e in entries if e["rank"] == wait.rank])
    return waits(bundle, entries)


def _number_by_start(entries: list[dict[str, Any]]) -> None:
    """Workers whose id could not be read: numbered by start order among the rank's workers,
    when none of that rank's workers has a read id (mixing both ways could give one id twice)."""
    for rank in {e["rank"] for e in entries}:
        workers = [e for e in entries if e["rank"] == rank and e["kind"] == "DataLoader worker"]
        if not workers or any(e["worker_id"] is not None for e in workers):
            continue
        for number, entry in enumerate(sorted(workers, key=lambda e: (_start_time(e["pid"]), e["pid"]))):
            entry.update(worker_id=number, worker_id_from="start order")


def _main_stack(dump: Path) -> tuple[str, ...]:
    return stack_lines(parse_pyspy_text(dump.read_text(encoding="utf-8", errors="replace")))


def waits(bundle: Path, entries: Sequence[dict[str, Any]]) -> list[ChildWait]:
    """The child each rank of the bundle waits on (from the rank's py-spy dump and its children's)."""
    out = []
    for rank in sorted({e["rank"] for e in entries}):
        try:
            threads = parse_pyspy_json(json.loads(BundlePaths(bundle).rank(rank).pyspy_json.read_text()))
        except (OSError, ValueError):
            continue
        children = [ChildStack(e["pid"], _main_stack(bundle / e["file"]), e["worker_id"], str(bundle / e["file"]))
                    for e in entries if e["rank"] == rank]
        found = child_waited_on(rank, threads, children)
        if found is not None:
            out.append(found)
    return out


__all__ = ["child_facts", "name_waited_on", "waits", "worker_id_from_locals"]
