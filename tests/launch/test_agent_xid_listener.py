"""When the node agent starts its NVML Xid listener (triage.collectors.nvml_xids): only on a host with
NVIDIA's driver, and only once the job has run ``AGENT_LISTEN_AFTER_S``, so that a job that ends sooner,
or any job on a host without a GPU, pays no NVML import and init (bench/bench_agent_overhead.py).

The agent runs in this process on real jobs; ``nvml_xids.start`` is wrapped, not replaced: the real
listener starts (on this machine it finds no NVML and says why). The driver's device node is a file
made here: the gate looks only at whether it exists."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from triage.agent.launch.supervisor import NodeAgent
from triage.collectors import nvml_xids
from triage.options import ConsoleMode, LaunchSettings

DEADLINE_S = 120.0


def test_gpu_host_is_whether_a_driver_node_exists(tmp_path: Path) -> None:
    node = tmp_path / "nvidiactl"
    assert not nvml_xids.gpu_host((str(node),))
    node.touch()
    assert nvml_xids.gpu_host((str(tmp_path / "nvidia0"), str(node)))


def _agent(tmp_path: Path, argv: list[str]) -> NodeAgent:
    settings = LaunchSettings(run_dir=str(tmp_path / "run"), host="xidhost", job_id="xid", console=ConsoleMode.NONE)
    return NodeAgent(argv, settings, None, sys.stderr)


def _spy(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, list[float]]:
    started, at = threading.Event(), []
    real = nvml_xids.start

    def start(nvml: Any = None) -> nvml_xids.XidListener:
        at.append(time.monotonic())
        started.set()
        return real(nvml)

    monkeypatch.setattr(nvml_xids, "start", start)
    return started, at


def test_on_a_gpu_host_the_listener_starts_once_the_job_has_run_a_while(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    node, release = tmp_path / "nvidiactl", tmp_path / "release"
    node.touch()
    monkeypatch.setattr(nvml_xids, "DRIVER_NODES", (str(node),))
    started, at = _spy(monkeypatch)
    job = [sys.executable, "-c", f"import os, time\nwhile not os.path.exists({str(release)!r}): time.sleep(0.02)"]

    def release_when_started() -> None:          # the job runs until the listener has started (or the deadline)
        started.wait(DEADLINE_S)
        release.touch()

    helper = threading.Thread(target=release_when_started, daemon=True)
    helper.start()
    begun = time.monotonic()
    try:
        assert _agent(tmp_path, job).run() == 0
    finally:
        release.touch()
        helper.join(DEADLINE_S)
    assert len(at) == 1 and at[0] - begun >= nvml_xids.AGENT_LISTEN_AFTER_S
    assert nvml_xids.current() is None            # stopped at the job's end


def test_without_a_driver_the_agent_never_starts_the_listener(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nvml_xids, "DRIVER_NODES", (str(tmp_path / "absent"),))
    _started, at = _spy(monkeypatch)
    job = [sys.executable, "-c", f"import time; time.sleep(2 * {nvml_xids.AGENT_LISTEN_AFTER_S!r})"]
    assert _agent(tmp_path, job).run() == 0
    assert at == []
