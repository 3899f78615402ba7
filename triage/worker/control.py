"""The worker's control socket: one thread that serves requests, apart from the heartbeat.

The socket is a Linux abstract unix socket (its name is in worker.json as ``control_socket``,
``@`` standing for the leading NUL). Commands, one line each, one JSON line back:

- ``ping`` -> ``{"ok": true, "pid": ..., "rank": ...}``
- ``dump DIR`` -> writes ``stacks.txt`` (all threads, faulthandler, from this thread: no signal)
  and ``fr.json`` into DIR. ``fr.pickle`` is answered ``skipped``: PyTorch's stack-trace pickle
  imports torch's compiler stack (``torch._dynamo``, ``torch._inductor``, sympy) into the rank on
  its first call, seconds of the rank's CPU, and fr.json already holds every entry.
- ``fr PATH`` -> the Flight Recorder only, as JSON at PATH (the straggler watch).

The job owns this socket, so a stranger can never stall it or the heartbeat:

- the heartbeat runs on its own thread (:mod:`triage.worker.heartbeat`); nothing here delays it;
- only the same user or root is served (SO_PEERCRED, checked before a byte is read); others get
  one non-blocking refusal and are closed;
- every send is MSG_NOSIGNAL: a peer that went away never raises SIGPIPE, which kills a rank whose
  program restored SIGPIPE's default action;
- one peer at a time, each bounded: the command line must arrive within ``READ_DEADLINE_S`` (a
  peer that holds the socket open or drips bytes is dropped), the reply is sent with a bound;
  a peer that connects and goes away costs one accept;
- a name squatted in advance (someone bound it first) does not cost the job its live dumps: the
  socket is bound under the name plus a random suffix instead, and worker.json records the
  squatted name (``control_socket_squatted``).
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import socket
import struct
import threading
import time
from typing import TYPE_CHECKING, Any

from triage.worker import flight
from triage.worker.files import WRITE_FLAGS, write_bytes

if TYPE_CHECKING:
    from triage.worker.agent import _State

MAX_COMMAND = 65536
READ_DEADLINE_S = 2.0           # the whole command line, from accept
SEND_DEADLINE_S = 5.0
BACKLOG = 128
PICKLE_SKIPPED = ("not taken: PyTorch's stack-trace pickle imports torch's compiler stack into the rank; "
                  "fr.json holds every entry")


def bind_control(state: _State) -> socket.socket | None:
    """Bind and listen on ``state.control_name``; if someone holds that name, on the name plus a
    random suffix (recorded in ``state.control_squatted``). None (and no name) when both fail."""
    wanted = state.control_name
    for attempt in range(4):
        name = wanted if attempt == 0 else f"{wanted}/{os.urandom(8).hex()}"
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        try:
            sock.bind("\0" + name)
            sock.listen(BACKLOG)
        except OSError:
            sock.close()
            continue
        state.control_name = name
        if attempt:
            state.control_squatted = "@" + wanted
        return sock
    state.control_name = ""
    return None


class ControlThread(threading.Thread):
    def __init__(self, state: _State) -> None:
        super().__init__(name="triage-control", daemon=True)
        self.state = state
        self.sock = bind_control(state)
        self.served = 0
        self.refused = 0

    def run(self) -> None:
        if self.sock is None:
            return
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                time.sleep(0.01)        # EMFILE and the like: never spin, never die
                continue
            with contextlib.suppress(Exception):    # a peer's misbehaviour never ends this thread
                self.serve(conn)
            conn.close()

    def serve(self, conn: socket.socket) -> None:
        if not _same_user(conn):
            self.refused += 1
            conn.send(b'{"ok": false, "error": "permission denied"}\n', socket.MSG_DONTWAIT | socket.MSG_NOSIGNAL)
            return
        command = _read_line(conn, time.monotonic() + READ_DEADLINE_S)
        if command is None:
            return
        reply = self.handle(command)
        self.served += 1
        _send_all(conn, json.dumps(reply).encode() + b"\n", time.monotonic() + SEND_DEADLINE_S)

    def handle(self, command: str) -> dict[str, Any]:
        verb, _, arg = command.strip().partition(" ")
        if verb == "ping":
            return {"ok": True, "pid": self.state.pid, "rank": self.state.rank}
        if verb == "dump" and arg:
            return self.dump(arg)
        if verb == "fr" and arg:
            return self.flight_recorder(arg)
        return {"ok": False, "error": f"unknown command {command.strip()[:80]!r}"}

    def dump(self, out_dir: str) -> dict[str, Any]:
        os.makedirs(out_dir, mode=0o700, exist_ok=True)
        files = {
            "stacks.txt": _guard(lambda: _write_stacks(os.path.join(out_dir, "stacks.txt"))),
            "fr.json": _guard(lambda: _write_bytes(os.path.join(out_dir, "fr.json"), flight.full_json())),
            "fr.pickle": {"status": "skipped", "bytes": 0, "error": PICKLE_SKIPPED},
        }
        ok = all(f["status"] in ("ok", "skipped") for f in files.values())
        reply = {"ok": ok, "pid": self.state.pid, "rank": self.state.rank, "files": files}
        if self.state.control_squatted:
            reply["control_socket_squatted"] = self.state.control_squatted
        return reply

    def flight_recorder(self, path: str) -> dict[str, Any]:
        """The Flight Recorder only, as JSON at ``path`` (the straggler watch's check): no stacks."""
        os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
        written = _guard(lambda: _write_bytes(path, flight.full_json()))
        return {"ok": written["status"] == "ok", "pid": self.state.pid, "rank": self.state.rank,
                "files": {"fr.json": written}}


def _guard(action: Any) -> dict[str, Any]:
    try:
        result: dict[str, Any] = action()
        return result
    except Exception as exc:  # noqa: BLE001
        return {"status": "failed", "bytes": 0, "error": f"{type(exc).__name__}: {exc}"}


def _write_stacks(path: str) -> dict[str, Any]:
    # From this thread, with the GIL held: every other Python thread is between bytecodes, so the
    # walk never meets a frame in the middle of a change (unlike a dump from a signal handler).
    fd = os.open(path, WRITE_FLAGS | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        faulthandler.dump_traceback(file=handle, all_threads=True)
    return {"status": "ok", "bytes": os.path.getsize(path), "error": None}


def _write_bytes(path: str, data: bytes | None) -> dict[str, Any]:
    if data is None:
        return {"status": "skipped", "bytes": 0, "error": "torch.distributed is not in use in this process"}
    write_bytes(path, data)
    return {"status": "ok", "bytes": len(data), "error": None}


def _send_all(conn: socket.socket, data: bytes, deadline: float) -> None:
    """Send ``data`` before ``deadline``. MSG_NOSIGNAL: a peer gone away must never raise SIGPIPE in a
    rank whose program set SIGPIPE back to its default (which kills the process)."""
    view = memoryview(data)
    while view:
        left = deadline - time.monotonic()
        if left <= 0:
            return
        conn.settimeout(left)
        view = view[conn.send(view, socket.MSG_NOSIGNAL):]


def _read_line(conn: socket.socket, deadline: float) -> str | None:
    """The first line the peer sends before ``deadline``; None when it sends none in time."""
    buf = b""
    while b"\n" not in buf and len(buf) < MAX_COMMAND:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        conn.settimeout(left)
        try:
            chunk = conn.recv(4096)
        except TimeoutError:
            return None
        if not chunk:
            break
        buf += chunk
    if not buf:
        return None
    return buf.split(b"\n", 1)[0].decode("utf-8", "replace")


def _same_user(conn: socket.socket) -> bool:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid in (0, os.getuid())
