"""Did the node agent end properly? Its end record is ``node.json`` rewritten with ``ended`` set.

A ``node.json`` still saying ``running`` (no end record) whose ``agent_pid`` is gone on this very
host means the agent died (SIGKILL, OOM): the job may have gone on without it, and the run directory
holds nothing the agent would have written after that moment. From another host the pid cannot be
checked: the note says so instead of guessing.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from triage.layout import HostPaths
from triage.load.teardown import output_tail
from triage.model.evidence import Event, EventKind
from triage.parsing.disk_guard import disk_full_note


def agent_end_event(host: HostPaths) -> Event | None:
    """An AGENT_DIED event when this host's agent left no end record; None when it ended, or is running."""
    node = _json(host.node)
    if not isinstance(node, dict) or node.get("ended") is not None or node.get("status") != "running":
        return None
    pid = node.get("agent_pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    if _disk_was_full(host):
        detail = (f"pid {pid} on {host.host} left no end record: the run directory's disk was full (its ranks' "
                  "disk guard said so), so how the agent and its job ended is not recorded there")
    elif not _on_this_host(host):
        detail = (f"pid {pid} on {host.host} left no end record; whether it died "
                  "cannot be checked from this host")
    elif _agent_alive(pid):
        return None
    else:
        detail = (f"pid {pid} on {host.host} died (no end record); the job went on "
                  "without it: nothing after that moment was watched or collected")
    return Event(EventKind.AGENT_DIED, detail, host=host.host, evidence=(str(host.node),))


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return None


def _disk_was_full(host: HostPaths) -> bool:
    return any(disk_full_note(output_tail(host.rank(rank).output)) for rank in host.ranks())


def _on_this_host(host: HostPaths) -> bool:
    """A rank of this host recorded the machine's real name, and it is this machine's."""
    here = socket.gethostname()
    for rank in host.ranks():
        worker = _json(host.rank(rank).worker)
        if isinstance(worker, dict) and worker.get("real_host") == here:
            return True
    return False


def _agent_alive(pid: int) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"triage" in cmdline
