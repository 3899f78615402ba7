"""A run's running agents, asked for a node bundle: a request file in each host's
``dump-requests/`` (agents on other nodes see it through the shared run directory), then the
``<request>.done`` marker each agent writes, naming its bundle."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from triage.collectors.common import process_alive
from triage.layout import HostPaths, RunPaths, short_hostname
from triage.private_files import read_json, write_json_atomic

POLL_S = 0.1


def agent_running(host: HostPaths) -> bool:
    """node.json says the host's agent runs; on this node its pid must be alive too (an agent killed
    by SIGKILL leaves a stale node.json). Agents on other nodes are taken at their word."""
    try:
        node: Any = read_json(host.node)
    except (OSError, ValueError):
        return False
    if not isinstance(node, dict) or node.get("status") != "running":
        return False
    if host.host != short_hostname():
        return True
    pid = node.get("agent_pid")
    return isinstance(pid, int) and process_alive(pid)


def running_agents(run: RunPaths) -> list[HostPaths]:
    """The hosts of ``run`` whose agent is running."""
    return [host for host in run.hosts() if agent_running(host)]


@dataclass(frozen=True)
class AgentAnswers:
    bundles: dict[str, str]          # host -> the bundle its agent wrote
    missing: tuple[str, ...]         # hosts whose agent gave no bundle in time


def ask_agents(agents: Sequence[HostPaths], reason: str, wait_s: float, tag: str = "") -> AgentAnswers:
    """Ask each agent for a bundle and wait (at most ``wait_s``) for their answers."""
    name = f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{tag + '-' if tag else ''}{uuid.uuid4().hex[:8]}.json"
    for host in agents:
        write_json_atomic(host.dump_requests / name, {"reason": reason, "time": time.time(),
                                                      "requester_pid": os.getpid()})
    deadline = time.monotonic() + wait_s
    done: dict[str, str | None] = {}
    while len(done) < len(agents) and time.monotonic() < deadline:
        for host in agents:
            if host.host not in done:
                answered, bundle = _answer(host, name)
                if answered:
                    done[host.host] = bundle
        if len(done) < len(agents):
            time.sleep(POLL_S)
    bundles = {host: bundle for host, bundle in done.items() if bundle}
    return AgentAnswers(bundles, tuple(h.host for h in agents if h.host not in bundles))


def _answer(host: HostPaths, request: str) -> tuple[bool, str | None]:
    """Whether the agent answered ``request`` yet, and the bundle it names (None: it made none)."""
    marker = host.dump_requests / f"{request}.done"
    if not marker.is_file():
        return False, None
    try:
        info: Any = read_json(marker)
    except (OSError, ValueError):
        return False, None           # being written: read it at the next poll
    bundle = info.get("bundle") if isinstance(info, dict) else None
    return True, str(bundle) if bundle else None
