"""Kernel log lines since the job started: ``node/dmesg.txt`` (raw) and ``node/dmesg-relevant.txt``
(+ ``node/dmesg-events.json``: the relevant events decoded).

Raw lines come from ``dmesg --since -Ns`` (N = seconds since the job started, plus a margin);
older dmesg without ``--since`` gives the whole ring buffer. The relevant lines (NVRM Xid,
NVSwitch SXid, segfaults, oom-killer) are chosen by ``triage.parsing.dmesg`` — the one parser
of kernel log lines — and written as they were; decoding happens when the bundle is analysed.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import psutil

from triage.bundle import CollectorRecord, CollectorStatus
from triage.collectors.common import (
    find_tool,
    looks_denied,
    missing,
    record,
    run_tool,
    write_private,
)
from triage.layout import BundleNodePaths, BundlePaths
from triage.options import CollectSettings
from triage.parsing import dmesg as dmesg_parser
from triage.private_files import write_json_atomic

SINCE_MARGIN_S = 5


def _boot_time() -> float | None:
    try:
        return float(psutil.boot_time())
    except (psutil.Error, OSError, ValueError):
        return None


def _events_json(text: str, boot: float | None) -> list[dict[str, Any]]:
    """Relevant events, decoded (Xid code -> meaning, likely cause, what to do), each with its unix
    ``time``: from the line's wallclock, else the node's boot time plus the line's seconds since
    boot (then ``wallclock`` is filled in, ISO, UTC; null only when neither is known)."""
    events: list[dict[str, Any]] = []
    for event in dmesg_parser.scan_dmesg(text):
        data = asdict(event)
        data["type"] = type(event).__name__
        when = event.timestamp.unix(boot)
        data["time"] = when
        if when is not None and not data["timestamp"].get("wallclock"):
            data["timestamp"]["wallclock"] = datetime.fromtimestamp(when, timezone.utc).isoformat()
        events.append(data)
    return events


def collect_dmesg(node_out: Path, bundle: Path, options: CollectSettings, job_started: float | None) -> CollectorRecord:
    started = time.monotonic()
    tool = find_tool("dmesg")
    if tool is None:
        return missing("dmesg", "dmesg", None, started)
    argv = [tool]
    if job_started is not None:
        argv += ["--since", f"-{int(max(0.0, time.time() - job_started)) + SINCE_MARGIN_S}s"]
    run = run_tool(argv, options.collector_timeout, options.max_bytes)
    if run.returncode not in (0, None) and job_started is not None and "since" in run.stderr_text.lower():
        run = run_tool([tool], options.collector_timeout, options.max_bytes)   # old util-linux
    if run.start_error or run.returncode != 0:
        error = run.start_error or run.stderr_text[:300] or f"exit status {run.returncode}"
        if looks_denied(error):
            return record("dmesg", CollectorStatus.DENIED, None, started, error=error,
                          hint="reading the kernel log needs root or kernel.dmesg_restrict=0 "
                               "(sysctl kernel.dmesg_restrict=0); `journalctl -k` may work instead")
        if run.timed_out:
            return record("dmesg", CollectorStatus.TIMEOUT, None, started, error="dmesg hung")
        return record("dmesg", CollectorStatus.FAILED, None, started, error=error)
    text = run.stdout.decode("utf-8", "replace")
    paths = BundleNodePaths(node_out)
    write_private(paths.dmesg, text)
    relevant = dmesg_parser.relevant_lines(text)
    write_private(paths.dmesg_relevant, "".join(line.rstrip("\n") + "\n" for line in relevant))
    write_json_atomic(paths.dmesg_events, _events_json(text, _boot_time()))
    files = [BundlePaths(bundle).relative(p) for p in (paths.dmesg, paths.dmesg_relevant, paths.dmesg_events)]
    status = CollectorStatus.PARTIAL if run.truncated else CollectorStatus.OK
    return record("dmesg", status, None, started, files,
                  error="output cut at the size bound" if run.truncated else None)
