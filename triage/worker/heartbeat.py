"""The worker's heartbeat thread: it only beats.

Every interval it rewrites ``heartbeat.json`` (step, Flight Recorder progress, the in-flight
entries). It serves no requests: the control socket has its own thread
(:mod:`triage.worker.control`), so no peer of that socket can delay a beat. The thread keeps
running while the main thread is blocked in a gloo/NCCL collective (those release the GIL).
Heartbeat cost when nothing is in flight: microseconds.

A collective still pending a whole interval later costs one Flight Recorder dump (to find its entry), and
torch holds the GIL for all of that dump (0.5-1 s with 20,000 gloo entries): the rank's other threads, and
its main thread when it is not blocked in the collective, wait. So the thread dumps once per distinct
pending set, never on the rank's main thread, and after a dump that took ``d`` seconds takes no other for
``max(DUMP_SHARE_INVERSE * d, DUMP_MIN_GAP_BEATS * interval)``: dumps hold the rank's GIL at most 1% of its
time plus one dump. A collective that stays pending (a hang) gets its dump once that wait is over; a
healthy job whose collectives often outlast an interval is not dumped on every step.
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

DUMP_SHARE_INVERSE = 100     # a dump that took d seconds: none other for 100 d (1% of the rank's time)
DUMP_MIN_GAP_BEATS = 10      # and none other for 10 intervals

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
        self._next_dump = 0.0                # monotonic: no Flight Recorder dump before this
        self.dumps = {"count": 0, "seconds": 0.0, "last": None}   # in heartbeat.json as fr_dumps
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
        if self.dumps["count"]:
            data["fr_dumps"] = dict(self.dumps)    # the in-rank cost of the lookups, this beat's included
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
        elif self._cached[0] != pending and time.monotonic() >= self._next_dump \
                and threading.current_thread() is not threading.main_thread():
            # Still pending one interval later: worth a dump to find the entry (its cost bounded above).
            self._cached = (pending, self._dump(pending))
        entries = self._cached[1] if pending and self._cached[0] == pending else []
        data["in_flight_since"] = self._pending_since
        mini = {k: doc[k] for k in flight.FR_VERSION_KEYS if k in doc}
        mini["entries"] = entries
        data["fr"] = mini

    def _dump(self, pending: tuple[tuple[str, int], ...]) -> list[dict[str, Any]]:
        start = time.monotonic()
        try:
            return flight.in_flight_entries(list(pending))
        finally:
            took = time.monotonic() - start
            self._next_dump = time.monotonic() + max(DUMP_SHARE_INVERSE * took, DUMP_MIN_GAP_BEATS * self.interval)
            self.dumps = {"count": int(self.dumps["count"] or 0) + 1,
                          "seconds": round(float(self.dumps["seconds"] or 0.0) + took, 6), "last": round(took, 6)}
