"""Keeping track of every process the job started, so that none outlives ``triage launch``.

The launcher runs in its own session. Its descendants are snapshotted every tick (psutil,
create-time checked, so reused pids are never touched); together with the worker pids from
worker.json they are the processes killed after the grace period once the launcher is gone.
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Iterable

import psutil


class ProcessTracker:
    def __init__(self, launcher_pid: int) -> None:
        self.launcher_pid = launcher_pid
        self.known: dict[int, psutil.Process] = {}
        try:
            self.launcher: psutil.Process | None = psutil.Process(launcher_pid)
        except psutil.Error:
            self.launcher = None

    def snapshot(self, extra: Iterable[psutil.Process] = ()) -> None:
        """Remember the launcher's current descendants and the given processes."""
        if self.launcher is not None:
            with contextlib.suppress(psutil.Error):
                for proc in self.launcher.children(recursive=True):
                    self.known.setdefault(proc.pid, proc)
        for proc in extra:
            self.known.setdefault(proc.pid, proc)
        # Descendants of known processes that were re-parented (e.g. their parent died).
        for proc in list(self.known.values()):
            with contextlib.suppress(psutil.Error):
                if proc.is_running():
                    for child in proc.children(recursive=True):
                        self.known.setdefault(child.pid, child)

    def alive(self) -> list[psutil.Process]:
        out = []
        for proc in self.known.values():
            with contextlib.suppress(psutil.Error):
                if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                    out.append(proc)
        return out

    def wait_gone(self, timeout: float, poll: float = 0.1) -> list[psutil.Process]:
        deadline = time.monotonic() + timeout
        while True:
            self.snapshot()
            left = self.alive()
            if not left or time.monotonic() >= deadline:
                return left
            time.sleep(poll)

    def signal_all(self, sig: int) -> None:
        for proc in self.alive():
            with contextlib.suppress(psutil.Error):
                proc.send_signal(sig)

    def kill_stragglers(self, grace: float) -> list[int]:
        """SIGTERM what is still running, wait ``grace``, SIGKILL the rest; returns the pids signalled."""
        left = self.alive()
        if not left:
            return []
        pids = [p.pid for p in left]
        self.signal_all(signal.SIGTERM)
        left = self.wait_gone(grace)
        if left:
            self.signal_all(signal.SIGKILL)
            self.wait_gone(5.0)
        return pids
