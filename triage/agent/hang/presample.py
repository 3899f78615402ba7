"""The first busy/blocked sample taken ahead of a hang, so a blocked rank is stopped within
``--hang-timeout`` + ``--sample-interval``.

Judging a rank busy or blocked takes two samples ``--sample-interval`` apart
(:mod:`triage.agent.hang.busy`). Taken only once the hang is suspected, the first sample began up to
a tick (0.5 s) after the timeout elapsed, plus the start of the action (~0.15 s): the stop came
0.6 s past timeout + interval. So the monitor takes the first sample ahead: once the ranks have
been stuck for ``--hang-timeout`` minus :data:`LEAD_S` (at most a third of the timeout), in a
background thread (``py-spy dump --nonblocking`` and /proc counters: the rank is never paused and
the tick never waits). When the hang is suspected a tick or two later, the action uses that sample
if it is of the same ranks (same pids), nothing moved since (same position) and it is less than an
interval old; its second sample comes at first-sample start + interval, as always. The judgement is
unchanged: two samples ``interval`` apart, the same floors. A stall that ends before the timeout
costs one unused sample (its ranks are then ``LEAD_S`` from being suspected anyway).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from triage.agent.hang import busy, detect
from triage.agent.state import LocalRankStatus

LEAD_S = 1.0                        # the first sample, this long before the timeout elapses


def targets_of(ranks: Sequence[LocalRankStatus], wanted: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """(rank, pid) of the ranks in ``wanted`` that have a pid."""
    return tuple((s.rank, s.pid) for s in ranks if s.rank in wanted and s.pid is not None)


class PreSampler:
    """First samples of the ranks about to be suspected (one per stall). Never raises."""

    def __init__(self, timeout: float, interval: float) -> None:
        self.timeout = timeout
        self.interval = interval
        self.lead = min(LEAD_S, timeout / 3)
        self._lock = threading.Lock()
        self._key: tuple[object, ...] | None = None       # (targets, position) of the stall sampled
        self._result: busy.FirstSample | None = None

    def tick(self, ranks: Sequence[LocalRankStatus], now: float) -> None:
        """Start a first sample when the ranks are ``lead`` seconds from being suspected."""
        early = detect.detect_progress_hang(ranks, self.timeout - self.lead, now) if self.lead > 0 else None
        targets = targets_of(ranks, detect.culprits(ranks, early)) if early is not None else ()
        key = (targets, detect.position(ranks)) if targets else None
        with self._lock:
            if key == self._key:
                return
            self._key, self._result = key, None
        if key is not None:
            threading.Thread(target=self._sample, args=(key, targets), name="triage-presample", daemon=True).start()

    def _sample(self, key: tuple[object, ...], targets: tuple[tuple[int, int], ...]) -> None:
        started = time.monotonic()
        try:
            samples = busy.sample_all(targets)
        except Exception:  # noqa: BLE001 - the action takes its own first sample then
            return
        with self._lock:
            if self._key == key:
                self._result = busy.FirstSample(started, samples)

    def take(self, ranks: Sequence[LocalRankStatus],
             targets: tuple[tuple[int, int], ...]) -> busy.FirstSample | None:
        """The first sample of ``targets`` taken ahead (used once), or None: none, still running,
        of other ranks, something moved since, or older than an interval."""
        with self._lock:
            key, result = self._key, self._result
            self._result = None
        if result is None or key != (targets, detect.position(ranks)):
            return None
        return result if time.monotonic() - result.started <= self.interval else None


__all__ = ["LEAD_S", "PreSampler", "targets_of"]
