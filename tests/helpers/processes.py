"""Real target programs and guaranteed clean-up.

``running_program`` starts a real program (from tests/programs/, or triage itself), waits until it
prints a "ready" line, and always terminates and reaps it (and anything it started) on exit.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import psutil

from tests.helpers.paths import PROGRAMS

READY = "READY"
T = TypeVar("T")


def kill_tree(pid: int, grace: float = 3.0) -> None:
    """SIGTERM a process and all its descendants, then SIGKILL what is left, and reap."""
    try:
        root = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return
    procs = [root, *root.children(recursive=True)]
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.send_signal(signal.SIGTERM)
    _gone, alive = psutil.wait_procs(procs, timeout=grace)
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(alive, timeout=grace)


def kill_pids(pids: Sequence[int]) -> None:
    """SIGKILL processes by pid (and their descendants) at once and wait until they are gone."""
    procs: list[psutil.Process] = []
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            proc = psutil.Process(pid)
            procs.append(proc)
            procs.extend(proc.children(recursive=True))
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.send_signal(signal.SIGKILL)
    psutil.wait_procs(procs, timeout=10)


@contextlib.contextmanager
def running_program(
    argv: Sequence[str],
    *,
    ready: str | None = READY,
    timeout: float = 60.0,
    env: dict[str, str] | None = None,
    cwd: str | Path | None = None,
    core: bool = False,
) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``argv``; wait until a line containing ``ready`` appears on its stdout.

    Lines read before the ready line are kept on ``proc.pre_ready_output`` (list of bytes).
    The process (and its descendants) is always terminated and reaped afterwards.
    """
    def _preexec() -> None:
        os.setsid()
        # the program starts as from an interactive shell, whatever started the tests: under `nohup` or a
        # shell's `&` SIGHUP/SIGINT are inherited ignored, and triage launch (rightly) never forwards a
        # signal ignored at its start (a test wanting that runs `nohup` itself)
        for number in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
            signal.signal(number, signal.SIG_DFL)
        if core:
            resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

    proc = subprocess.Popen(
        list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        env=env, cwd=cwd, preexec_fn=_preexec,  # noqa: PLW1509 - single-threaded setup
    )
    seen: list[bytes] = []
    try:
        if ready is not None:
            assert proc.stdout is not None
            deadline = time.monotonic() + timeout
            while True:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{argv!r} did not print {ready!r} in {timeout}s: {b''.join(seen)!r}")
                line = proc.stdout.readline()
                if not line:
                    raise RuntimeError(f"{argv!r} exited before {ready!r}: {b''.join(seen)!r}")
                seen.append(line)
                if ready.encode() in line:
                    break
        proc.pre_ready_output = seen  # type: ignore[attr-defined]
        yield proc
    finally:
        kill_tree(proc.pid)
        with contextlib.suppress(Exception):
            proc.wait(timeout=5)
        if proc.stdout:
            proc.stdout.close()


def wait_for(predicate: Callable[[], T], timeout: float, what: str, poll: float = 0.1) -> T:
    """Poll ``predicate`` until it returns something true; that value, or AssertionError after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def python_program(name: str, *args: str) -> list[str]:
    """The argv that runs tests/programs/NAME with this interpreter (as it is: no realpath)."""
    return [sys.executable, str(PROGRAMS / name), *args]


def triage_cmd(*args: str) -> list[str]:
    """The triage CLI as a subprocess (a real process, as users run it)."""
    return [sys.executable, "-m", "triage", *args]
