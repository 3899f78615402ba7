"""triage.load.agent_end: a node agent that left no end record, on constructed run directories."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from triage.layout import HostPaths
from triage.load.agent_end import agent_end_event
from triage.model.evidence import EventKind


def _host(tmp_path: Path, node: dict[str, object], real_host: str | None = None) -> HostPaths:
    host = HostPaths(tmp_path / "h1")
    rank = host.rank(0)
    rank.root.mkdir(parents=True)
    rank.worker.write_text(json.dumps({"pid": 1, "real_host": real_host or socket.gethostname()}))
    host.node.write_text(json.dumps(node))
    return host


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_a_running_node_json_whose_agent_is_gone_says_it_died(tmp_path: Path) -> None:
    pid = _dead_pid()
    event = agent_end_event(_host(tmp_path, {"agent_pid": pid, "status": "running", "ended": None}))
    assert event is not None and event.kind is EventKind.AGENT_DIED and event.host == "h1"
    assert event.detail.startswith(f"pid {pid} on h1 died (no end record)")


def test_an_agent_that_ended_or_still_runs_is_not_named(tmp_path: Path) -> None:
    assert agent_end_event(_host(tmp_path, {"agent_pid": _dead_pid(), "status": "exited", "ended": 5.0})) is None


def test_still_running_agent(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "print('READY', flush=True); import time; time.sleep(30)",
                             "triage"], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"READY\n"   # exec'd: its own cmdline
        assert agent_end_event(_host(tmp_path, {"agent_pid": proc.pid, "status": "running", "ended": None})) is None
    finally:
        proc.kill()
        proc.wait()


def test_from_another_host_it_is_said_plainly_that_it_cannot_be_checked(tmp_path: Path) -> None:
    host = _host(tmp_path, {"agent_pid": 12345, "status": "running", "ended": None}, real_host="elsewhere-node")
    event = agent_end_event(host)
    assert event is not None and "cannot be checked from this host" in event.detail


def test_damaged_node_json_gives_nothing(tmp_path: Path) -> None:
    for node in ({"agent_pid": "x", "status": "running"}, {"agent_pid": True, "status": "running"}, {}):
        assert agent_end_event(_host(tmp_path / str(len(str(node))), node)) is None
