"""Gather what surrounds a crash: the rank's run-dir files, the kernel log, crash banners.

I/O lives here (reading files, running ``dmesg``); the decoding of kernel lines is
``triage.parsing.dmesg``'s and of faulthandler text ``triage.parsing.stacks``'s.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from triage.layout import RankPaths, RunPaths
from triage.load.crash_records import LOG_TAIL_LINES
from triage.load.crash_records import rank_logs as parsed_rank_logs
from triage.model.evidence import KernelEvent, RankLogs
from triage.parsing.dmesg import OomEvent, SegfaultEvent, XidEvent, scan_dmesg
from triage.regular_files import loads_json, open_regular

LOG_TAIL_BYTES = 64 * 1024
DMESG_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class RankFiles:
    rank: int
    host: str
    pid: int | None
    paths: RankPaths
    worker: dict[str, Any]
    exit: dict[str, Any] | None


MAX_JSON_BYTES = 4 * 1024 * 1024


def _open_regular(path: Path) -> BinaryIO | None:
    """``path`` opened for reading if it is a regular file (never blocks on a FIFO), else None."""
    try:
        return open_regular(path)
    except OSError:
        return None


def _json(path: Path) -> dict[str, Any] | None:
    handle = _open_regular(path)
    if handle is None:
        return None
    with handle:
        raw = handle.read(MAX_JSON_BYTES + 1)
    if len(raw) > MAX_JSON_BYTES:
        return None
    try:
        data = loads_json(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def run_dir_ranks(run_dir: Path) -> list[RankFiles]:
    """Every rank the run directory knows, with its worker.json and exit.json."""
    ranks = []
    for host in RunPaths(run_dir).hosts():
        for rank in host.ranks():
            paths = host.rank(rank)
            worker = _json(paths.worker) or {}
            pid = worker.get("pid")
            ranks.append(RankFiles(rank, str(worker.get("host") or host.host), pid if isinstance(pid, int) else None,
                                   paths, worker, _json(paths.exit)))
    return ranks


def rank_for_pid(ranks: list[RankFiles], pid: int | None) -> RankFiles | None:
    if pid is None:
        return None
    return next((r for r in ranks if r.pid == pid), None)


def read_tail(path: Path, limit: int = LOG_TAIL_BYTES) -> str:
    handle = _open_regular(path)
    if handle is None:
        return ""
    try:
        with handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - limit))
            return handle.read(limit).decode("utf-8", "replace")
    except OSError:
        return ""


def mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None




def boot_time() -> float | None:
    try:
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return time.time() - uptime


def read_dmesg() -> tuple[str, str | None]:
    """The kernel ring buffer as ``dmesg`` prints it, or a one-line reason it could not be read."""
    tool = shutil.which("dmesg")
    if tool is None:
        return "", "dmesg is not on PATH: no kernel-log correlation"
    try:
        run = subprocess.run([tool], check=False, capture_output=True, timeout=DMESG_TIMEOUT_S,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as error:
        return "", f"dmesg failed: {error}"
    if run.returncode != 0:
        reason = run.stderr.decode("utf-8", "replace").strip().splitlines()
        return "", f"dmesg failed: {reason[0] if reason else 'exit ' + str(run.returncode)}"
    return run.stdout.decode("utf-8", "replace"), None


def kernel_events(text: str, boot: float | None) -> tuple[KernelEvent, ...]:
    """Xid, segfault and OOM lines as KernelEvents: unix times from the line's own wallclock stamp
    (``dmesg -T``, ISO) or from its seconds since boot and the boot time."""
    events = []
    for event in scan_dmesg(text):
        if isinstance(event, XidEvent):
            kind, pid, comm, code = "xid", event.pid, event.process, event.code
        elif isinstance(event, SegfaultEvent):
            kind, pid, comm, code = "segfault", event.pid, event.process, None
        elif isinstance(event, OomEvent):
            kind, pid, comm, code = "oom", event.pid, event.process, None
        else:
            continue
        when = event.timestamp.unix(boot)
        events.append(KernelEvent(kind=kind, time=when, pid=pid, text=event.raw.strip(), code=code, comm=comm))
    return tuple(events)



def rank_logs(rank: RankFiles) -> RankLogs:
    """What a rank's own files say about its crash, read once (parsed by triage.load.crash_records)."""
    lines: list[str] = []
    for path in (rank.paths.output, rank.paths.faulthandler):
        lines += read_tail(path).splitlines()[-LOG_TAIL_LINES:]
    exit_info = rank.exit or {}
    exception = exit_info.get("exception")
    if isinstance(exception, dict):
        lines.append(f"{exception.get('type')}: {exception.get('message')}")
    evidence = tuple(str(p) for p in (rank.paths.faulthandler, rank.paths.exit, rank.paths.output) if p.is_file())
    return parsed_rank_logs(rank.rank, rank.host, rank.pid, "\n".join(lines), read_tail(rank.paths.faulthandler),
                            faulthandler_mtime=mtime(rank.paths.faulthandler), exit_info=rank.exit,
                            evidence=evidence)
