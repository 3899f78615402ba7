"""Cross-node hang trigger over the shared run directory.

When one node's agent detects a hang it calls :func:`announce`; every other node's agent calls
:func:`poll` on each tick (ticks of 0.5 s keep all nodes within the 2 s bound) and collects its own
bundle when a notice from another host appears. The mechanism is the run directory the nodes
already share (a parallel or NFS filesystem under SLURM): one small JSON file per announcement,
written atomically, under ``<run>/.cluster-trigger/``. No network protocol of our own.

The detecting node then calls :func:`wait_for_node_bundles` to wait until every node's bundle for
that event is present (or a deadline passes) and reports on what is there, naming the missing
nodes.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from triage.layout import RunPaths
from triage.lazy_regex import lazy_regex
from triage.private_files import write_json_atomic
from triage.schemas import TRIGGER_SCHEMA

TRIGGER_DIR = ".cluster-trigger"
# Bundles started this long before the announcement still count for it (the announcing node
# may have started its own bundle just before writing the notice).
BUNDLE_SLACK_S = 2.0
_SAFE_HOST = lazy_regex(r"[^A-Za-z0-9_.-]")


@dataclass(frozen=True)
class TriggerNotice:
    reason: str          # one line, as the detecting node printed it
    origin: str          # host that detected the hang
    time: float          # unix time of the announcement
    path: Path | None = None
    stop: bool = True    # the origin is stopping the job (False: its ranks are busy; evidence only)


def trigger_dir(run_dir: Path) -> Path:
    return Path(run_dir) / TRIGGER_DIR


def announce(run_dir: Path, host: str, reason: str, stop: bool = True) -> None:
    """Tell every node of the job to collect now (``stop``: the origin is stopping the job, not
    only collecting). Never raises on a full or read-only disk."""
    now = time.time()
    stamp = f"{now:.6f}".replace(".", "_")
    name = f"{stamp}-{_SAFE_HOST.sub('_', host)}.json"
    payload = {"schema": TRIGGER_SCHEMA, "origin": host, "reason": reason.splitlines()[0] if reason else "",
               "time": now, "stop": bool(stop)}
    try:
        write_json_atomic(trigger_dir(run_dir) / name, payload)
    except OSError:
        return


def _read_notice(path: Path) -> TriggerNotice | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return TriggerNotice(reason=str(data.get("reason", "")), origin=str(data["origin"]),
                             time=float(data["time"]), path=path, stop=data.get("stop") is not False)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def notices(run_dir: Path) -> list[TriggerNotice]:
    """Every announcement in the run directory, oldest first."""
    directory = trigger_dir(run_dir)
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith(".json") and not n.startswith("."))
    except OSError:
        return []
    found = [_read_notice(directory / n) for n in names]
    return sorted((n for n in found if n is not None), key=lambda n: n.time)


def poll(run_dir: Path, host: str, since: float) -> TriggerNotice | None:
    """The oldest announcement from ANOTHER host made after ``since`` (unix time), if any.

    Cheap (one directory listing); call it every agent tick and pass the time of the last notice
    handled (or the agent start time) as ``since``.
    """
    for notice in notices(run_dir):
        if notice.time > since and notice.origin != host:
            return notice
    return None


def run_hosts(run_dir: Path) -> list[str]:
    """Hosts that took part in the run: those whose agent wrote ``<host>/node.json``."""
    return [h.host for h in RunPaths(Path(run_dir)).hosts() if h.node.is_file()]


def bundle_since(run_dir: Path, host: str, since: float) -> Path | None:
    """The newest finished bundle of ``host`` started at or after ``since`` (minus a small slack)."""
    from triage.bundle import read_manifest  # (a bundle's record: only when another node has collected)
    for bundle in reversed(RunPaths(Path(run_dir)).host(host).bundles()):
        try:
            manifest = read_manifest(bundle)
        except (OSError, ValueError, KeyError):
            continue
        if manifest.created >= since - BUNDLE_SLACK_S and manifest.finished is not None:
            return bundle
    return None


def wait_for_node_bundles(
    run_dir: Path, hosts: list[str] | tuple[str, ...] | None, since: float, deadline: float,
    interval: float = 0.25,
) -> tuple[dict[str, Path], list[str]]:
    """Wait until every host has a finished bundle made after ``since``, or until ``deadline``.

    ``since`` and ``deadline`` are unix times; ``hosts=None`` means every host of the run
    (see :func:`run_hosts`). Returns ``(present: host -> bundle dir, missing hosts)``.
    """
    wanted = list(hosts) if hosts is not None else run_hosts(run_dir)
    present: dict[str, Path] = {}
    while True:
        for host in wanted:
            if host not in present:
                found = bundle_since(run_dir, host, since)
                if found is not None:
                    present[host] = found
        missing = [h for h in wanted if h not in present]
        if not missing or time.time() >= deadline:
            return present, missing
        time.sleep(min(interval, max(0.0, deadline - time.time())))
