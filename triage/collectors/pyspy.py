"""py-spy dump of one rank, as JSON (for analysis) and as text (for people).

py-spy pauses the target while it reads the stacks (a few tens of milliseconds per dump) so the
snapshot is consistent; ``--nonblocking`` (option ``pyspy_nonblocking``) avoids the pause at the
price of possibly torn stacks. We keep the default (blocking): the pause is this rank's own
snapshot and nothing else. ``--native`` (option ``pyspy_native``) adds C/C++ frames and is slower.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import psutil

from triage.bundle import CollectorRecord, CollectorStatus
from triage.collectors.common import (
    DENIED_HINT,
    INSTALL_HINTS,
    Target,
    ToolRun,
    gone,
    looks_denied,
    process_alive,
    process_state,
    record,
    resume_if_left_stopped,
    run_tool,
    tool_error,
    write_private,
)
from triage.collectors.executable import find_environment_tool
from triage.layout import BundlePaths, BundleRankPaths
from triage.options import CollectSettings

NAME = "pyspy"


def find_pyspy() -> tuple[str | None, str]:
    """(py-spy from triage's own environment or PATH, or None; where it was looked for)."""
    tool, dirs = find_environment_tool("py-spy")
    return tool, " and ".join([*(str(d) for d in dirs), "PATH"])


def _argv(tool: str, pid: int, options: CollectSettings, as_json: bool) -> list[str]:
    argv = [tool, "dump", "--pid", str(pid)]
    if as_json:
        argv.append("--json")
    if options.pyspy_native:
        argv.append("--native")
    if options.pyspy_nonblocking:
        argv.append("--nonblocking")
    return argv


def _status(run: ToolRun) -> tuple[CollectorStatus, str | None, str | None]:
    if run.start_error:
        return CollectorStatus.FAILED, run.start_error, None
    if run.timed_out:
        return CollectorStatus.TIMEOUT, f"py-spy did not finish in {run.duration_s:.1f}s", (
            "raise --collector-timeout; a process in state D (uninterruptible) cannot be read")
    if run.returncode != 0:
        error = tool_error(run)
        if looks_denied(error):
            return CollectorStatus.DENIED, error, DENIED_HINT
        return CollectorStatus.FAILED, error, None
    if run.truncated:
        return CollectorStatus.PARTIAL, "output cut at the size bound", None
    return CollectorStatus.OK, None, None


def collect_pyspy(target: Target, rank_out: Path, bundle: Path, options: CollectSettings) -> CollectorRecord:
    started = time.monotonic()
    tool, looked = find_pyspy()
    if tool is None:
        return record(NAME, CollectorStatus.MISSING, target, started,
                      error=f"py-spy not found (looked in {looked})", hint=INSTALL_HINTS.get("py-spy"))
    if target.pid is None or not process_alive(target.pid):
        return gone(NAME, target, started)
    files: list[str] = []
    results: list[tuple[CollectorStatus, str | None, str | None]] = []
    paths = BundleRankPaths(rank_out)
    for as_json, path in ((True, paths.pyspy_json), (False, paths.pyspy_txt)):
        before = process_state(target.pid)
        run = run_tool(_argv(tool, target.pid, options, as_json), options.collector_timeout, options.max_bytes)
        if run.timed_out:
            resume_if_left_stopped(target.pid, before)
        status = _status(run)
        results.append(status)
        if run.stdout:
            write_private(path, run.stdout, escape=not as_json)   # JSON escapes its own strings
            files.append(BundlePaths(bundle).relative(path))
        if status[0] in (CollectorStatus.DENIED, CollectorStatus.TIMEOUT):
            break                      # a second try would be refused or hang the same way
    first = results[0]
    if first[0] == CollectorStatus.OK and any(r[0] != CollectorStatus.OK for r in results[1:]):
        bad = next(r for r in results[1:] if r[0] != CollectorStatus.OK)
        return record(NAME, CollectorStatus.PARTIAL, target, started, files,
                      error=f"text dump: {bad[1]}", hint=bad[2])
    if first[0] != CollectorStatus.OK and len(results) > 1 and results[1][0] == CollectorStatus.OK:
        return record(NAME, CollectorStatus.PARTIAL, target, started, files,
                      error=f"json dump: {first[1]}", hint=first[2])
    return record(NAME, first[0], target, started, files, error=first[1], hint=first[2])


def sample_stacks(pid: int, timeout: float = 5.0) -> tuple[object, str | None]:
    """One ``py-spy dump --json --nonblocking`` of ``pid`` (the process is never paused).

    Returns ``(parsed JSON or None, error or None)``. Used to tell a busy rank from a blocked
    one (two samples a few seconds apart); the bundle's own dumps are taken by
    :func:`collect_pyspy`.
    """
    tool, looked = find_pyspy()
    if tool is None:
        return None, f"py-spy not found (looked in {looked})"
    run = run_tool([tool, "dump", "--pid", str(pid), "--json", "--nonblocking"], timeout, 4 * 1024 * 1024)
    if run.start_error or run.timed_out or run.returncode != 0:
        return None, run.start_error or ("timed out" if run.timed_out else tool_error(run))
    try:
        return json.loads(run.stdout.decode("utf-8", "replace")), None
    except ValueError as error:
        return None, f"py-spy output is not JSON: {error}"


CHILD_NAME = "pyspy-child"


def python_children(pid: int) -> list[int]:
    """The rank's Python child processes, all levels (DataLoader workers, pools, subprocesses)."""
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []
    found = []
    for child in children:
        try:
            exe = os.path.basename(child.exe() or "")
            argv0 = os.path.basename((child.cmdline() or [""])[0])
        except psutil.Error:
            continue
        if exe.startswith("python") or argv0.startswith("python"):
            found.append(child.pid)
    return found


def collect_pyspy_children(target: Target, rank_out: Path, bundle: Path,
                           options: CollectSettings) -> list[CollectorRecord]:
    """One ``py-spy dump`` text file per Python child of the rank: ``children/pyspy-<pid>.txt``."""
    records: list[CollectorRecord] = []
    if target.pid is None:
        return records
    tool, _looked = find_pyspy()
    for pid in python_children(target.pid)[:32]:
        started = time.monotonic()
        child = Target(rank=target.rank, pid=pid, local_rank=target.local_rank)
        if tool is None:
            records.append(record(CHILD_NAME, CollectorStatus.MISSING, child, started, error="py-spy not found",
                                  hint=INSTALL_HINTS.get("py-spy")))
            continue
        before = process_state(pid)
        run = run_tool(_argv(tool, pid, options, as_json=False), options.collector_timeout, options.max_bytes)
        if run.timed_out:
            resume_if_left_stopped(pid, before)
        status, error, hint = _status(run)
        files = []
        if run.stdout:
            path = BundleRankPaths(rank_out).child_pyspy(pid)
            write_private(path, run.stdout, escape=True)
            files.append(BundlePaths(bundle).relative(path))
        records.append(record(CHILD_NAME, status, child, started, files, error=error, hint=hint))
    return records
