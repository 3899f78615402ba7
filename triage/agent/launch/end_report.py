"""One report per job when a job of several nodes fails on its own: the first node's agent to end
claims ``end_report.json`` at the run directory's top (created exclusively, never through a link),
prints the report and records its verdict there; every other node's agent prints one line pointing
to it and says the same verdict. A node whose claimer never records a verdict (it died) prints the
report itself after :data:`WAIT_S`: a report is never lost to the rule. A claim older than this
agent's start is an earlier run's (a reused run directory) and is replaced."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from triage.agent.lines import say
from triage.layout import RunPaths
from triage.model import Verdict
from triage.private_files import read_json, write_json_atomic
from triage.schemas import END_REPORT_SCHEMA

WAIT_S = 60.0        # how long another node waits for the claimer's verdict (its report may take a while)
SETTLE_S = 10.0      # how long the claimer waits for the other nodes' end records before its report
_POLL_S = 0.1


def several_nodes(run_dir: Path, me: str) -> bool:
    """Another node's agent writes to this run directory."""
    with contextlib.suppress(OSError):
        return any(h.host != me and h.node.is_file() for h in RunPaths(run_dir).hosts())
    return False


def _others_ended(run_dir: Path, me: str, started: float) -> bool:
    """Every other node of this run has recorded its end (node.json: ``ended`` since ``started``)."""
    for host in RunPaths(run_dir).hosts():
        if host.host == me or not host.node.is_file():
            continue
        try:
            node = read_json(host.node)
        except (OSError, ValueError):
            continue                         # unreadable: nothing to wait for
        ended = node.get("ended") if isinstance(node, dict) else None
        agent_started = node.get("started") if isinstance(node, dict) else None
        if isinstance(agent_started, (int, float)) and agent_started < started - 3600:
            continue                         # an earlier run's node
        if not isinstance(ended, (int, float)):
            return False
    return True


def _claim(path: Path, me: str, started: float) -> bool:
    """Create the claim for ``me``; False when another node's claim of this run is there."""
    for _ in range(2):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            record = _read(path)
            claimed = record.get("time") if record else None
            if isinstance(claimed, (int, float)) and claimed >= started:
                return False
            with contextlib.suppress(OSError):
                if not path.is_symlink() and record is not None:
                    path.unlink()            # an earlier run's claim
                    continue
            return False                     # a link or an unreadable file: not ours to replace or follow
        except OSError:
            return True                      # cannot claim (read-only, full disk): print, as a single node would
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"schema": END_REPORT_SCHEMA, "host": me, "time": time.time(), "verdict": None}, handle)
        return True
    return False


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = read_json(path)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("schema") == END_REPORT_SCHEMA else None


def report_once(run_dir: Path, me: str, started: float, print_report: Callable[[], Verdict | None]) -> Verdict | None:
    """Print the run's report here unless another node of the job prints it; the verdict either way
    (None when it could not be made)."""
    if not several_nodes(run_dir, me):
        return print_report()
    path = RunPaths(run_dir).end_report
    if _claim(path, me, started):
        settle = time.monotonic() + SETTLE_S     # the report reads every node's end: wait for them a while
        while not _others_ended(run_dir, me, started) and time.monotonic() < settle:
            time.sleep(_POLL_S)
        verdict = print_report()
        with contextlib.suppress(OSError):
            write_json_atomic(path, {"schema": END_REPORT_SCHEMA, "host": me, "time": time.time(),
                                     "verdict": verdict.to_json() if verdict is not None else None, "done": True})
        return verdict
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        record = _read(path)
        if record is not None and record.get("done"):
            from triage.load.stop_record import verdict_from_json  # the loader's own reader (only here)

            verdict = verdict_from_json(record.get("verdict"))
            say(f"report printed by {str(record.get('host'))[:120]}; triage report {run_dir}")
            return verdict
        time.sleep(_POLL_S)
    say(f"the report claimed in {path} never came: printed here")
    return print_report()


__all__ = ["SETTLE_S", "WAIT_S", "report_once", "several_nodes"]
