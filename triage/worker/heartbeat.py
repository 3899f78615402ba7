"""The worker's heartbeat and control thread.

One daemon thread blocks in ``select()`` on a Linux abstract unix socket (its name is in
worker.json as ``control_socket``, ``@`` standing for the leading NUL). On timeout (the
heartbeat interval) it rewrites ``heartbeat.json``; on a connection it serves one command:

- ``ping`` -> ``{"ok": true, "pid": ..., "rank": ...}``
- ``dump DIR`` -> writes ``stacks.txt`` (all threads, faulthandler) and ``fr.json`` into DIR,
  answers, and then writes ``fr.pickle`` (raw, never unpickled here; deferred because the first
  pickle dump in a process costs ~2 s of CPU). The answer is
  ``{"ok": bool, "files": {name: {"status", "bytes", "error"}}}``.

Replies are one JSON line. Only the same user (or root) may connect (SO_PEERCRED).
The thread keeps running while the main thread is blocked in a gloo/NCCL collective
(those release the GIL). Heartbeat cost when nothing is in flight: microseconds.
"""

from __future__ import annotations

import faulthandler
import json
import os
import select
import socket
import struct
import threading
import time
from typing import TYPE_CHECKING, Any

from triage.worker import flight
from triage.worker.files import write_bytes, write_json

if TYPE_CHECKING:
    from triage.worker.agent import _State

MAX_COMMAND = 65536


class HeartbeatThread(threading.Thread):
    def __init__(self, state: _State, interval: float) -> None:
        super().__init__(name="triage-heartbeat", daemon=True)
        self.state = state
        self.interval = max(0.05, interval)
        self.path = os.path.join(state.rank_dir, "heartbeat.json")
        self.beats = 0
        self._last_pending: tuple[tuple[str, int], ...] = ()
        self._pending_since: float | None = None
        self._cached: tuple[tuple[tuple[str, int], ...], list[dict[str, Any]]] = ((), [])
        self._progress_key: Any = None
        self._progress_time: float | None = None
        self._deferred_pickle: str | None = None
        self.sock: socket.socket | None = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        try:
            self.sock.bind("\0" + state.control_name)
            self.sock.listen(8)
        except OSError:
            self.sock.close()       # no control socket, but heartbeats still run
            self.sock = None
            state.control_name = ""

    def run(self) -> None:
        next_beat = time.monotonic()
        listen = [self.sock] if self.sock is not None else []
        while True:
            try:
                timeout = max(0.0, next_beat - time.monotonic())
                readable, _, _ = select.select(listen, [], [], timeout)
                if readable:
                    self._serve_one()
                if time.monotonic() >= next_beat:
                    self.beat()
                    next_beat = time.monotonic() + self.interval
            except Exception:  # noqa: BLE001 - never die, never raise into the process
                time.sleep(self.interval)

    # -- heartbeat -------------------------------------------------------------------------
    def beat(self) -> None:
        self.beats += 1
        data: dict[str, Any] = {
            "pid": self.state.pid, "rank": self.state.rank, "time": time.time(), "beat": self.beats,
            "step": self.state.step, "step_time": self.state.step_time,
            "progress": {}, "fr": None, "fr_state": "off", "in_flight_since": None,
        }
        try:
            self._add_flight(data)
        except Exception as exc:  # noqa: BLE001
            data["fr_state"] = f"error: {type(exc).__name__}: {exc}"
        key = (json.dumps(data["progress"], sort_keys=True), data["step"])
        if key != self._progress_key:
            self._progress_key, self._progress_time = key, data["time"]
        data["progress_time"] = self._progress_time   # when progress or step last moved (worker clock)
        write_json(self.path, data)

    def _add_flight(self, data: dict[str, Any]) -> None:
        doc = flight.status()
        if doc is None or not doc.get("pg_status"):
            flight.without_recorder(data, doc)   # no FR (torch 2.4, or off): sequence numbers and the frame
            return
        data["fr_state"] = "ok"
        data["progress"] = flight.progress(doc)
        pending = tuple(sorted(flight.enqueued_not_completed(doc)))
        if not pending:
            self._last_pending, self._pending_since = (), None
        elif pending != self._last_pending:
            self._last_pending, self._pending_since = pending, time.time()
        elif self._cached[0] != pending:
            # Still pending one interval later: worth a full dump to find the entry.
            self._cached = (pending, flight.in_flight_entries(list(pending)))
        entries = self._cached[1] if pending and self._cached[0] == pending else []
        data["in_flight_since"] = self._pending_since
        mini = {k: doc[k] for k in flight.FR_VERSION_KEYS if k in doc}
        mini["entries"] = entries
        data["fr"] = mini

    # -- control ---------------------------------------------------------------------------
    def _serve_one(self) -> None:
        if not (self.sock is not None):
            raise RuntimeError("internal error: expected self.sock is not None")
        conn, _ = self.sock.accept()
        with conn:
            conn.settimeout(5.0)
            if not _same_user(conn):
                conn.sendall(b'{"ok": false, "error": "permission denied"}\n')
                return
            command = _read_line(conn)
            reply = self.handle(command)
            conn.sendall(json.dumps(reply).encode() + b"\n")
        self._write_deferred_pickle()

    def _write_deferred_pickle(self) -> None:
        """fr.pickle is written after the reply: the first pickle dump in a process costs ~2 s of
        CPU (stack-trace set-up), and the collector needs only fr.json and stacks.txt to go on."""
        out_dir, self._deferred_pickle = self._deferred_pickle, None
        if out_dir is None:
            return
        tmp = os.path.join(out_dir, ".fr.pickle.partial")
        result = _guard(lambda: _write_bytes(tmp, flight.full_pickle()))
        if result["status"] == "ok":
            os.replace(tmp, os.path.join(out_dir, "fr.pickle"))

    def handle(self, command: str) -> dict[str, Any]:
        verb, _, arg = command.strip().partition(" ")
        if verb == "ping":
            return {"ok": True, "pid": self.state.pid, "rank": self.state.rank, "beat": self.beats}
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
        }
        self._deferred_pickle = out_dir
        files["fr.pickle"] = {"status": "skipped", "bytes": 0,
                              "error": "written right after this reply (fr.pickle appears within seconds)"}
        ok = all(f["status"] in ("ok", "skipped") for f in files.values())
        return {"ok": ok, "pid": self.state.pid, "rank": self.state.rank, "files": files}


    def flight_recorder(self, path: str) -> dict[str, Any]:
        """The Flight Recorder only, as JSON at ``path`` (the straggler watch's check): no stacks, no pickle."""
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
    with open(path, "w", encoding="utf-8") as handle:
        os.chmod(path, 0o600)
        faulthandler.dump_traceback(file=handle, all_threads=True)
    return {"status": "ok", "bytes": os.path.getsize(path), "error": None}


def _write_bytes(path: str, data: bytes | None) -> dict[str, Any]:
    if data is None:
        return {"status": "skipped", "bytes": 0, "error": "torch.distributed is not in use in this process"}
    write_bytes(path, data)
    return {"status": "ok", "bytes": len(data), "error": None}


def _read_line(conn: socket.socket) -> str:
    buf = b""
    while b"\n" not in buf and len(buf) < MAX_COMMAND:
        chunk = conn.recv(4096)
        if not chunk:
            break
        buf += chunk
    return buf.split(b"\n", 1)[0].decode("utf-8", "replace")


def _same_user(conn: socket.socket) -> bool:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid in (0, os.getuid())
