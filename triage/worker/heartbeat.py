"""The worker's heartbeat thread: it only beats.

Every interval it rewrites ``heartbeat.json`` (step, Flight Recorder progress, the in-flight
entries). It serves no requests: the control socket has its own thread
(:mod:`triage.worker.control`), so no peer of that socket can delay a beat. The thread keeps
running while the main thread is blocked in a gloo/NCCL collective (those release the GIL).
Heartbeat cost when nothing is in flight: microseconds.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from typing import TYPE_CHECKING, Any

from triage.worker import flight
from triage.worker.diskguard import DiskGuard, min_free_from_env
from triage.worker.files import write_json

if TYPE_CHECKING:
    from triage.worker.agent import _State


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
        self.guard = DiskGuard(state.rank_dir, min_free_from_env())

    def run(self) -> None:
        next_beat = time.monotonic()
        while True:
            with contextlib.suppress(Exception):    # never die, never raise into the process
                self.guard.check()                  # before the beat: its write needs room too
            with contextlib.suppress(Exception):
                self.beat()
            next_beat = max(next_beat + self.interval, time.monotonic())
            time.sleep(max(0.0, next_beat - time.monotonic()))

    # -- heartbeat -------------------------------------------------------------------------
    def beat(self) -> None:
        self.beats += 1
        data: dict[str, Any] = {
            "pid": self.state.pid, "rank": self.state.rank, "time": time.time(), "beat": self.beats,
            "step": self.state.step, "step_time": self.state.step_time,
            "progress": {}, "fr": None, "fr_state": "off", "in_flight_since": None,
        }
        if self.guard.discarded_since is not None:
            data["output_discarded_since"] = self.guard.discarded_since
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
