"""Live NCCL debug output per local rank, for the hang monitor.

Reads each rank's ``nccl.log`` incrementally (only the new bytes, whole lines) on every tick and
feeds one :class:`triage.parsing.nccl.tracker.NcclTracker` per rank; NCCL lines that arrive on a rank's
stdout/stderr (no ``NCCL_DEBUG_FILE``) are fed from the output chunks instead. Remembers when
each rank's last op changed so the detector can tell how long a rank has been silent.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from triage.agent.hang.detect import NcclRankOps
from triage.agent.state import LocalRankStatus

if TYPE_CHECKING:
    from triage.parsing.nccl.tracker import NcclCommState, NcclTracker

_READ_LIMIT = 4 * 1024 * 1024      # per rank per tick


def _new_tracker() -> NcclTracker:
    # The NCCL line parser is loaded with the first NCCL line a rank prints (most jobs print none
    # unless NCCL_DEBUG is set): its import is part of the agent's fixed cost otherwise.
    from triage.parsing.nccl.tracker import NcclTracker

    return NcclTracker()


@dataclass
class _RankStream:
    tracker: NcclTracker = field(default_factory=_new_tracker)
    offset: int = 0
    partial: bytes = b""
    from_file: bool = False
    last_key: tuple[str, int] | None = None
    changed: float = 0.0


class NcclWatch:
    def __init__(self) -> None:
        self._streams: dict[int, _RankStream] = {}
        self._lock = threading.Lock()

    def _stream(self, rank: int) -> _RankStream:
        stream = self._streams.get(rank)
        if stream is None:
            stream = self._streams[rank] = _RankStream()
        return stream

    def poll_files(self, ranks: Sequence[LocalRankStatus], now: float) -> None:
        for status in ranks:
            if status.paths is None:
                continue
            path = status.paths.nccl
            try:
                size = os.path.getsize(path)
            except OSError:
                continue
            with self._lock:
                stream = self._stream(status.rank)
                if size < stream.offset:   # NCCL reopens the file with "w" after an elastic restart
                    stream = self._streams[status.rank] = _RankStream()
                stream.from_file = True
                if size > stream.offset:
                    with open(path, "rb") as handle:
                        handle.seek(stream.offset)
                        data = handle.read(min(size - stream.offset, _READ_LIMIT))
                    stream.offset += len(data)
                    self._feed(stream, data)
        with self._lock:
            for stream in self._streams.values():
                self._note_change(stream, now)

    def feed_output(self, rank: int, chunk: bytes) -> None:
        with self._lock:
            stream = self._stream(rank)
            if not stream.from_file:
                self._feed(stream, chunk)

    @staticmethod
    def _feed(stream: _RankStream, data: bytes) -> None:
        data = stream.partial + data
        cut = data.rfind(b"\n")
        if cut < 0:
            stream.partial = data[-65536:]
            return
        stream.partial = data[cut + 1:]
        stream.tracker.feed_text(data[:cut + 1].decode("utf-8", "replace"))

    @staticmethod
    def _widest(states: Sequence[NcclCommState]) -> NcclCommState | None:
        return max(states, key=lambda s: (s.nranks or 0, s.ops_seen), default=None)

    def _note_change(self, stream: _RankStream, now: float) -> None:
        widest = self._widest(stream.tracker.last_ops())
        if widest is None:
            return
        key = (widest.comm, widest.last.op_count)
        if key != stream.last_key:
            stream.last_key = key
            stream.changed = now

    def rank_ops(self) -> list[NcclRankOps]:
        out: list[NcclRankOps] = []
        with self._lock:
            for rank, stream in sorted(self._streams.items()):
                widest = self._widest(stream.tracker.last_ops())
                if widest is None or not stream.changed:
                    continue
                warnings = tuple(w.message for w in stream.tracker.warnings()[-3:])
                out.append(NcclRankOps(rank=rank, op=widest.last.op, op_count=widest.last.op_count,
                                       nranks=widest.nranks, seen=stream.changed, warnings=warnings))
        return out
