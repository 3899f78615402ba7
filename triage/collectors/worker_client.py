"""Client of the in-worker control socket (see triage.worker.heartbeat).

``request_dump(target, out_dir, timeout)`` asks one worker to write ``fr.json`` and ``stacks.txt``
into ``out_dir`` (``fr.pickle`` is answered ``skipped`` by current workers) and returns a
:class:`DumpResult` with a status per file.
``target`` is a rank directory (RankPaths or its path: the socket name is read from its
worker.json) or a socket name (``@name`` for the Linux abstract namespace, or a path).
It never raises for an unreachable or dead worker: the result says what went wrong.
"""

from __future__ import annotations

import json
import os
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from triage.layout import BundleRankPaths, RankPaths

DUMP_FILES = BundleRankPaths.WORKER_DUMP_FILES
Target = RankPaths | Path | str


@dataclass(frozen=True)
class FileResult:
    name: str
    status: str                 # ok | skipped | failed | missing
    path: Path | None
    bytes: int = 0
    error: str | None = None


@dataclass(frozen=True)
class DumpResult:
    ok: bool                    # the worker answered and every file is ok or skipped
    files: dict[str, FileResult] = field(default_factory=dict)
    error: str | None = None    # why the request failed as a whole (no socket, refused, timeout...)
    pid: int | None = None
    rank: int | None = None
    duration_s: float = 0.0


def socket_name(target: Target) -> str:
    """The control socket name for a rank dir, worker.json path, or a name given directly."""
    if isinstance(target, RankPaths):
        return _from_worker_json(target.worker)
    text = str(target)
    if text.startswith(("@", "\0")):
        return text
    path = Path(text)
    if path.is_dir():
        return _from_worker_json(RankPaths(path).worker)
    if path.name == RankPaths.WORKER:
        return _from_worker_json(path)
    return text


def _from_worker_json(path: Path) -> str:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise LookupError(f"{path}: cannot read the worker's control socket: {err}") from None
    name = data.get("control_socket") if isinstance(data, dict) else None
    if not isinstance(name, str) or not name:
        raise LookupError(f"{path}: no control_socket recorded")
    return name


def _address(name: str) -> str:
    return "\0" + name[1:] if name.startswith("@") else name


def send_command(target: Target, command: str, timeout: float) -> dict[str, Any]:
    """Send one command line, return the decoded JSON reply. Raises OSError/LookupError/ValueError."""
    name = socket_name(target)
    deadline = time.monotonic() + timeout
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC) as sock:
        sock.settimeout(timeout)
        _connect(sock, _address(name), deadline)
        sock.sendall(command.encode() + b"\n")
        buf = b""
        while b"\n" not in buf:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = sock.recv(65536)
            if not chunk:
                break
            buf += chunk
    reply = json.loads(buf.split(b"\n", 1)[0].decode("utf-8", "replace"))
    if not isinstance(reply, dict):
        raise TypeError("reply is not a JSON object")
    return reply


def _connect(sock: socket.socket, address: str, deadline: float) -> None:
    """Connect, waiting while the worker's backlog is full (a unix socket answers EAGAIN at once
    then, e.g. while someone floods it) until ``deadline``."""
    while True:
        try:
            sock.connect(address)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise TimeoutError("the worker's control socket stayed busy (its backlog full)") from None
            time.sleep(0.02)


def ping(target: Target, timeout: float = 2.0) -> bool:
    try:
        return bool(send_command(target, "ping", timeout).get("ok"))
    except (OSError, LookupError, ValueError, TypeError):
        return False


def request_dump(target: Target, out_dir: Path | str, timeout: float = 10.0) -> DumpResult:
    """Ask a worker to write fr.json, fr.pickle and stacks.txt into ``out_dir``."""
    out = Path(out_dir).absolute()
    started = time.monotonic()
    try:
        os.makedirs(out, mode=0o700, exist_ok=True)
        reply = send_command(target, f"dump {out}", timeout)
    except LookupError as err:
        return _failed(str(err), started)
    except TimeoutError:
        return _failed(f"no answer within {timeout:g}s (the worker may hold the GIL or be stopped)", started)
    except ConnectionRefusedError:
        return _failed("connection refused: the worker is gone", started)
    except FileNotFoundError:
        return _failed("no such control socket: the worker is gone or never started", started)
    except (OSError, ValueError, TypeError) as err:
        return _failed(f"{type(err).__name__}: {err}", started)
    return _result(reply, out, started)


def _failed(error: str, started: float) -> DumpResult:
    return DumpResult(ok=False, error=error, duration_s=time.monotonic() - started)


def _result(reply: dict[str, Any], out: Path, started: float) -> DumpResult:
    files: dict[str, FileResult] = {}
    raw_files = reply.get("files") if isinstance(reply.get("files"), dict) else {}
    for name in DUMP_FILES:
        info = raw_files.get(name) if isinstance(raw_files, dict) else None
        if not isinstance(info, dict):
            files[name] = FileResult(name, "missing", None, 0, "not in the worker's answer")
            continue
        status = str(info.get("status", "failed"))
        path = out / name if status == "ok" else None
        files[name] = FileResult(name, status, path, int(info.get("bytes") or 0), info.get("error"))
    ok = bool(reply.get("ok")) and all(f.status in ("ok", "skipped") for f in files.values())
    return DumpResult(ok=ok, files=files, error=reply.get("error"), pid=reply.get("pid"),
                      rank=reply.get("rank"), duration_s=time.monotonic() - started)
