"""PyTorch watchdog messages in the ranks' output, for the hang monitor.

Each output chunk is checked for the watchdog parser's own markers first (a substring test on the
bytes); only chunks that hold one are decoded and scanned. Each message becomes one summary line
(``collective timeout: all_reduce seq 42 (pg 0) ran for 600000 ms``), at most :data:`MAX_EVENTS`.
"""

from __future__ import annotations

import threading

from triage.analysis.ranks import rank_word
from triage.parsing.watchdog import SCAN_MARKERS_BYTES, WatchdogEvent, WatchdogKind, scan_watchdog

MAX_EVENTS = 100


class WatchdogWatch:
    """(rank, summary) of every PyTorch watchdog message seen; fed from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: list[tuple[int, str]] = []

    def feed_output(self, rank: int, chunk: bytes) -> None:
        if not any(marker in chunk for marker in SCAN_MARKERS_BYTES):
            return
        for event in scan_watchdog(chunk.decode("utf-8", "replace")):
            summary = watchdog_summary(event)
            with self._lock:
                if len(self._events) < MAX_EVENTS:
                    self._events.append((rank, summary))

    def events(self) -> list[tuple[int, str]]:
        with self._lock:
            return list(self._events)


def watchdog_summary(event: WatchdogEvent) -> str:
    """``collective timeout: all_reduce seq 42 (pg 0) ran for 600000 ms`` and the like."""
    what = {
        WatchdogKind.TIMEOUT: "collective timeout",
        WatchdogKind.TIMEOUT_AT: "collective timeout",
        WatchdogKind.EXCEPTION_DETECTED: "exception detected by the watchdog",
        WatchdogKind.HEARTBEAT_TIMEOUT: "heartbeat monitor timed out (watchdog stuck)",
        WatchdogKind.DESYNC: "desync report",
        WatchdogKind.SERVING_STALL: "serving engine's forward stalled (SGLang's watchdog, vLLM's RPC timeout)",
    }.get(event.kind, event.kind.value)
    parts = [what]
    if event.op or event.seq is not None:
        where = " ".join(p for p in (event.op, f"seq {event.seq}" if event.seq is not None else None) if p)
        parts.append(where + (f" (pg {event.pg})" if event.pg else ""))
    if event.ran_for_ms is not None:
        parts.append(f"ran for {event.ran_for_ms} ms")
    if event.ranks:
        parts.append(f"blames {rank_word(event.ranks)}")
    return ": ".join(parts[:2]) + (" " + " ".join(parts[2:]) if len(parts) > 2 else "")


__all__ = ["MAX_EVENTS", "WatchdogWatch", "watchdog_summary"]
