"""Shared pieces of every collector: targets, bounds, tool lookup and a bounded tool runner.

Every collector is a function ``collect_x(target, out_dir, options) -> CollectorRecord`` that
never raises, is bounded in time (the tool runs in its own process group, which is killed at
the time bound) and in output size (output beyond the byte bound is dropped and the status is
PARTIAL).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from triage.bundle import CollectorRecord, CollectorStatus
from triage.collectors.redact import redact_text, redaction_enabled
from triage.console import visible
from triage.layout import RankPaths
from triage.private_files import FILE_MODE, make_private_dir

DENIED_HINT = (
    "ptrace was refused: run triage as the job's user or root, set "
    "/proc/sys/kernel/yama/ptrace_scope to 0 (sysctl kernel.yama.ptrace_scope=0), "
    "or in a container add --cap-add SYS_PTRACE (docker) / securityContext.capabilities SYS_PTRACE (k8s); "
    "only one tracer can attach at a time (is a debugger or strace already attached?)"
)
INSTALL_HINTS = {
    "py-spy": "install it: `pip install py-spy` (in the same environment as triage)",
    "gdb": "install it: `apt-get install gdb` / `dnf install gdb`",
    "strace": "install it: `apt-get install strace` / `dnf install strace`",
    "dmesg": "install util-linux (`apt-get install util-linux`)",
}
_DENIED_MARKERS = ("operation not permitted", "permission denied", "os error 1)", "os error 13)",
                   "eperm", "ptrace_attach", "ptrace: ")


@dataclass(frozen=True)
class Target:
    """One local rank to collect from."""

    rank: int
    pid: int | None
    local_rank: int | None = None
    paths: RankPaths | None = None     # the rank's run-dir files, when launched under triage
    alive: bool = True


@dataclass
class ToolRun:
    argv: list[str]
    returncode: int | None = None
    timed_out: bool = False
    truncated: bool = False
    stdout: bytes = b""
    stderr: bytes = b""
    duration_s: float = 0.0
    start_error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", "replace").strip()


def find_tool(name: str) -> str | None:
    """The tool on PATH, or None. A pyenv shim is resolved to the binary next to our interpreter."""
    found = shutil.which(name)
    if found is None:
        return None
    if "/.pyenv/shims/" in found:
        real = Path(sys.executable).resolve().parent / name
        if real.is_file() and os.access(real, os.X_OK):
            return str(real)
    return found


def run_tool(argv: Sequence[str], timeout: float, max_bytes: int,
             on_start: Callable[[subprocess.Popen[bytes]], None] | None = None,
             env: Mapping[str, str] | None = None) -> ToolRun:
    """Run a tool in its own process group; kill the group at ``timeout``; keep ``max_bytes`` of stdout."""
    result = ToolRun(argv=list(argv))
    start = time.monotonic()
    try:
        proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, start_new_session=True,
                                env=None if env is None else dict(env))
    except OSError as error:
        result.start_error = f"{argv[0]}: {error.strerror or error}"
        return result
    if on_start is not None:
        on_start(proc)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        result.timed_out = True
        kill_group(proc)
        out, err = _reap_after_kill(proc)
    result.returncode = proc.returncode
    result.duration_s = time.monotonic() - start
    result.truncated = len(out) > max_bytes
    result.stdout = out[:max_bytes]
    result.stderr = err[-65536:]
    return result


def _reap_after_kill(proc: subprocess.Popen[bytes], grace: float = 5.0) -> tuple[bytes, bytes]:
    """Output of a killed tool. A tool stuck in uninterruptible sleep (D state, e.g. on a GPU
    that fell off the bus) cannot die: give up on it after ``grace`` rather than block forever."""
    try:
        return proc.communicate(timeout=grace)
    except subprocess.TimeoutExpired:
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        return b"", b"(the tool did not die after SIGKILL; left behind in D state?)"


def kill_group(proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def write_private(path: Path, data: bytes | str, redact: bool | None = None, escape: bool = False) -> None:
    """Write an output file owner-only (0600), with secret values redacted from text
    (``redact`` None: unless ``--no-redact`` turned redaction off). ``escape``: a text file a user may
    ``cat`` that holds the target's own strings (thread, function and file names, locals): every control
    character but newline and tab is written as a visible ``\\xNN`` (:func:`triage.console.visible`, what
    the report shows of them), so the file runs no terminal escape of the target's."""
    redact = redaction_enabled() if redact is None else redact
    make_private_dir(path.parent)
    text = (data.decode("utf-8", "replace") if (redact or escape) else None) if isinstance(data, bytes) else data
    if escape and text is not None:
        text = visible(text)
    payload = (redact_text(text) if redact else text).encode("utf-8") if text is not None else (
        data if isinstance(data, bytes) else data.encode("utf-8"))
    fd = os.open(str(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
    with os.fdopen(fd, "wb") as handle:
        os.fchmod(handle.fileno(), FILE_MODE)
        handle.write(payload)


def chmod_private(path: Path) -> bool:
    """Make an existing regular file owner-only, never through a symlink (False: left alone)."""
    try:
        fd = os.open(str(path), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        os.fchmod(fd, FILE_MODE)
        return True
    finally:
        os.close(fd)


def process_uid(pid: int | None) -> int | None:
    """The real uid of a process (None: gone or unreadable)."""
    if pid is None:
        return None
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except (OSError, ValueError, OverflowError):
        return None


def may_touch(pid: int | None, all_users: bool = False) -> bool:
    """triage adopts only the invoking user's processes, unless --all-users (for root) says otherwise."""
    if all_users:
        return True
    return process_uid(pid) == os.getuid()


def looks_denied(text: str) -> bool:
    lowered = text.lower()
    return any(marker in lowered for marker in _DENIED_MARKERS)


def record(name: str, status: CollectorStatus, target: Target | None, started: float,
           files: Sequence[str] = (), error: str | None = None, hint: str | None = None) -> CollectorRecord:
    return CollectorRecord(
        name=name, status=status, rank=target.rank if target else None,
        pid=target.pid if target else None, duration_s=round(time.monotonic() - started, 3),
        files=tuple(files), error=error, hint=hint,
    )


def missing(name: str, tool: str, target: Target | None, started: float) -> CollectorRecord:
    return record(name, CollectorStatus.MISSING, target, started,
                  error=f"{tool} not found on PATH", hint=INSTALL_HINTS.get(tool))


def process_alive(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError, ValueError):
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


def process_state(pid: int | None) -> str | None:
    """The one-letter state of /proc/PID/stat (R, S, D, T, t, Z...), None if unreadable."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return None


def resume_if_left_stopped(pid: int | None, state_before: str | None) -> None:
    """After killing a ptrace tool at its time bound: never leave a rank stopped that was running."""
    if pid is None or state_before in ("T", "t"):
        return
    time.sleep(0.05)
    if process_state(pid) in ("T", "t"):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGCONT)


def gone(name: str, target: Target, started: float) -> CollectorRecord:
    return record(name, CollectorStatus.SKIPPED, target, started,
                  error=f"process {target.pid} is not running")


def safe(name: str, target: Target | None, func: Callable[[], CollectorRecord]) -> CollectorRecord:
    """Run a collector body; turn any unexpected exception into a FAILED record (never raise)."""
    started = time.monotonic()
    try:
        return func()
    except Exception as error:  # noqa: BLE001 - a collector must never raise
        return record(name, CollectorStatus.FAILED, target, started,
                      error=f"{type(error).__name__}: {error}")


def tool_error(run: ToolRun, limit: int = 400) -> str:
    text = run.stderr_text or run.stdout.decode("utf-8", "replace").strip()
    text = " ".join(text.split())
    return (text[:limit] if text else f"exit status {run.returncode}")
