"""The launcher process of ``triage launch``: started in its own session with its output in
``launcher.log``, the user's signals forwarded to it, stopped (SIGTERM; after the grace period,
SIGKILL to every process of the job), and taken down with triage if triage itself fails. Whatever
triage's own tools (py-spy, gdb, strace...) left running is killed too."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import psutil

from triage.agent.launch import envsetup
from triage.agent.launch.processes import ProcessTracker
from triage.errors import UsageError

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@dataclass
class Signals:
    """What the agent's signal handlers saw: SIGUSR1s not yet served, signals forwarded."""

    usr1: int = 0
    forwarded: list[int] = field(default_factory=list)
    forwarded_at: float | None = None     # unix time of the first signal forwarded (node.json)


def install_signals(flags: Signals, launcher: Callable[[], subprocess.Popen[bytes] | None]) -> dict[int, Any]:
    """SIGINT/SIGTERM/SIGHUP are forwarded to the launcher (its own session), unless triage started
    with that signal ignored (``nohup``); SIGUSR1 is counted.
    Returns the previous handlers, for :func:`restore_signals`."""
    previous: dict[int, Any] = {}

    def forward(signum: int, _frame: FrameType | None) -> None:
        if flags.forwarded_at is None:
            flags.forwarded_at = time.time()
        flags.forwarded.append(signum)
        proc = launcher()
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signum)

    def usr1(_signum: int, _frame: FrameType | None) -> None:
        flags.usr1 += 1

    for sig in FORWARDED:
        if signal.getsignal(sig) == signal.SIG_IGN:
            continue        # ignored when triage started (nohup: SIGHUP): the user asked that it not stop the job
        previous[sig] = signal.signal(sig, forward)
    previous[signal.SIGUSR1] = signal.signal(signal.SIGUSR1, usr1)
    return previous


def restore_signals(previous: dict[int, Any]) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)


def start_launcher(argv: Sequence[str], env: dict[str, str], log: Path, cores: bool) -> subprocess.Popen[bytes]:
    """The launcher in its own session, stdout and stderr appended to ``log``; a launcher that
    cannot be run is a usage error."""
    log_fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        with envsetup.core_limit_raised(cores):
            return subprocess.Popen(list(argv), stdout=log_fd, stderr=log_fd, env=env, start_new_session=True)
    except FileNotFoundError:
        raise UsageError(f"launcher not found: {argv[0]!r}",
                         hint="give the command after --, e.g. `triage launch -- torchrun ...`") from None
    except PermissionError:
        raise UsageError(f"launcher not executable: {argv[0]!r}") from None
    finally:
        os.close(log_fd)


def terminate(proc: subprocess.Popen[bytes] | None, say: Callable[[str], None]) -> None:
    """The polite stop: SIGTERM to a launcher still running."""
    if proc is not None and proc.poll() is None:
        say("stopping the job (SIGTERM to the launcher)")
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGTERM)


def kill_job(proc: subprocess.Popen[bytes], tracker: ProcessTracker, workers: Iterable[psutil.Process],
             say: Callable[[str], None]) -> None:
    """The grace period is over and the launcher still runs: SIGKILL to every process of the job."""
    say("the launcher is still running: killing the job (SIGKILL)")
    tracker.snapshot(workers)
    tracker.signal_all(signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGKILL)


def take_down(proc: subprocess.Popen[bytes], tracker: ProcessTracker | None) -> None:
    """triage itself failed: take the job down with it rather than leave it orphaned."""
    tracker = tracker or ProcessTracker(proc.pid)
    tracker.snapshot()
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
    tracker.kill_stragglers(2.0)
    if proc.poll() is None:
        proc.kill()
    proc.wait(5)


def kill_own_helpers(launcher_pid: int | None, say: Callable[[str], None]) -> None:
    """Tools a collection left running (py-spy, gdb, strace...) must not outlive triage."""
    helpers = ProcessTracker(os.getpid())
    helpers.snapshot()
    helpers.known.pop(launcher_pid if launcher_pid is not None else -1, None)
    killed = helpers.kill_stragglers(2.0)
    if killed:
        say(f"stopped {len(killed)} helper process(es) still running: " + " ".join(map(str, killed)))
