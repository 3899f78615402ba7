"""Whole-log reading for NcclTracker in a few C-speed passes (``bulk_read``).

A log of several hundred MB holds ~1M collective lines for a few dozen communicators; a
Python loop over every line is ~30x slower than grep. Instead:

1. The last ~1 MB is read line by line: it gives the last ops of every comm busy at the end
   (the set A) and late init/WARN lines.
2. One regex pass over the rest finds init lines and comm-pointer occurrences, with a
   negative lookahead that skips, at C speed, every pointer of A whose first line has been
   seen; WARN lines are found with ``bytes.find`` and merged in by position. Pointers not in A
   (comms that went quiet) keep matching, so the same pass
   records their first and last line; a pointer that matches too often is excluded too and
   searched for later, backward, in growing windows.
3. The last lines of the quiet comms are read around their last position.

The result is the same as feeding every line (tests/parsing/test_nccl.py checks that).
``bulk_read`` knows nothing of the tracker: it is given the comms the tracker already holds and
the ops of the tail (read by the tracker's per-line path), and returns a :class:`BulkRead` that the
tracker takes in; or None when it cannot be sure: one comm pointer used by two processes (ASLR
off: the pointer alone no longer names a comm), or too many comms.
"""

from __future__ import annotations

import mmap
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from triage.parsing import needles, pages
from triage.parsing.nccl.comm_scan import CommFinder
from triage.parsing.nccl.lines import NcclColl, NcclEvent, parse_nccl_segments

Buffer = bytes | mmap.mmap
OpKey: TypeAlias = tuple[str, str, str]      # host, pid (as printed), comm
OpItem: TypeAlias = str | NcclColl           # a raw line (parsed lazily) or a parsed op
TAIL_BYTES = 1 << 20         # the end of a log read line by line
MAX_COMMS = 512              # more distinct comm pointers: per-line path
WARN = b"NCCL WARN"          # a pass over the whole log that finds it may keep its hits (see _warn_lines)
HEAVY_MATCHES = 20000        # a quiet-candidate pointer matching more often is excluded from the pass


def _trie_regex(words: Iterable[bytes]) -> bytes:
    """An alternation of byte strings factored by common prefixes (fast in sre)."""
    trie: dict[int, Any] = {}
    for word in words:
        node = trie
        for byte in word:
            node = node.setdefault(byte, {})
        node[-1] = {}

    def emit(node: dict[int, Any]) -> bytes:
        alts = [re.escape(bytes([k])) + emit(v) for k, v in sorted(node.items()) if k != -1]
        if not alts:
            return b""
        body = alts[0] if len(alts) == 1 and -1 not in node else b"(?:" + b"|".join(alts) + b")"
        return body + (b"?" if -1 in node and alts else b"")

    return emit(trie)


_MM = b"mm "
NEAR_MISSES = 10000      # "mm " outside " comm " this often: the pass scans for " comm " itself


def _scan_regex(excluded: Iterable[bytes], spaced: bool = False) -> re.Pattern[bytes]:
    """``mm X`` for every pointer X not excluded: the pass wants `` comm X``, but sre scans for
    the first byte of a pattern's literal prefix, and ``m`` is ~7x rarer than the space in NCCL
    lines (a fifth less time per GB); :func:`_next_comm` checks the `` co`` before it. ``spaced``:
    `` comm X`` itself, for a log where ``mm `` is common outside NCCL's lines."""
    words = list(excluded)
    head = b" co" + _MM if spaced else _MM
    if not words:
        return re.compile(head + rb"(\S+)")
    return re.compile(head + rb"(?!(?:" + _trie_regex(words) + rb")[ \r\n])(\S+)")



def _next_comm(scan: _Scan, pattern: re.Pattern[bytes], pos: int, end: int) -> tuple[int, bytes] | None:
    """(start, pointer) of the first `` comm X`` in data[pos:end] with X not excluded by ``pattern``;
    past :data:`NEAR_MISSES` near misses of an ``mm `` pattern, ``scan.spaced`` is set and the rest
    of the search is spaced (the caller builds its next patterns spaced)."""
    data = scan.data
    while (match := pages.search(pattern, data, pos, end)) is not None:
        if pattern.pattern.startswith(b" co"):
            return match.start(), match.group(1)
        start = match.start() - 3
        if start >= pos and data[start:start + 3] == b" co":
            return start, match.group(1)
        pos = match.start() + 1
        scan.near_misses += 1
        if scan.near_misses > NEAR_MISSES:
            scan.spaced = True
            pattern = re.compile(b" co" + pattern.pattern)
    return None


def _next(scan: _Scan, finder: CommFinder | None, pattern: re.Pattern[bytes] | None, excluded: set[bytes], pos: int,
          end: int) -> tuple[int, bytes] | None:
    """:func:`_next_comm`, by the hyperscan prefilter where there is one (the same answer; ``pattern``, None
    there, is built only where it fails: sre alone from there on)."""
    if finder is not None and not finder.failed:
        found = finder.find(pos, excluded)
        if not finder.failed:
            return found
    return _next_comm(scan, pattern or _scan_regex(excluded, True), pos, end)


def _warn_lines(data: Buffer, start: int, end: int) -> list[tuple[int, int]]:
    """Spans of the lines holding "NCCL WARN": from the hits an earlier pass over a mapped log kept
    (:data:`WARN`, triage.load.logs.large's marker pass), else by bytes.find (faster than any regex pass)."""
    spans: list[tuple[int, int]] = []
    known = needles.kept(data, WARN, start, end)
    if known is not None:
        behind = start      # the pages read around the lines before this are handed back, as the find below does
        for index in known:
            if not spans or index >= spans[-1][1]:      # the next line's (as the find below goes on from a line's end)
                if spans and spans[-1][0] - behind >= pages.WINDOW:
                    pages.drop(data, behind, spans[-1][0])
                    behind = spans[-1][0]
                spans.append(_line_span(data, index, index))
        pages.drop(data, behind, end)
        return spans
    index = pages.find(data, WARN, start, end, pivot=5)
    while index >= 0:
        span = _line_span(data, index, index)
        spans.append(span)
        index = pages.find(data, WARN, span[1], end, pivot=5)
    return spans


class _Warns(list[tuple[int, int]]):
    """The spans of the "NCCL WARN" lines in data[start:end], known up to a point (:meth:`until`): where
    a later pass asked the communicator pass to find its needles as it reads (needles.ride_along, the large
    log's marker pass, which also finds "NCCL WARN"), from the hits of that riding scan; else all at once by
    :func:`_warn_lines`. The same spans either way."""

    def __init__(self, data: Buffer, start: int, end: int) -> None:
        super().__init__()
        self._data, self._end = data, end
        self._rider = needles.rider(data)
        if self._rider is not None and WARN in self._rider.words:
            self._rider.begin(start)
            self._known = start
        else:
            self.extend(_warn_lines(data, start, end))
            self._known = end

    def until(self, stop: int) -> None:
        """Every line holding a "NCCL WARN" that starts before ``stop`` is in the list."""
        stop = min(stop, self._end)
        if stop <= self._known or self._rider is None:
            return
        data, known = self._data, self._known
        if self._rider.extend(stop):
            spans = [_line_span(data, index, index) for index in self._rider.hits(WARN, known, stop)
                     if index + len(WARN) <= self._end]
        else:       # the riding scan failed (too many hits): the rest as _warn_lines finds it
            spans, stop, self._rider = _warn_lines(data, known, self._end), self._end, None
        for span in spans:
            if not self or span[0] >= self[-1][1]:     # one span a line
                self.append(span)
        self._known = stop


def _line_span(data: Buffer, start: int, end: int) -> tuple[int, int]:
    line_start = data.rfind(b"\n", 0, start) + 1
    line_end = data.find(b"\n", end)
    return line_start, len(data) if line_end < 0 else line_end


def _text(data: Buffer, start: int, end: int) -> str:
    return bytes(data[start:end]).decode("utf-8", "replace")


@dataclass(frozen=True)
class BulkRead:
    """What a bulk read found, taken in by the tracker in this order: the init, WARN and first-op
    events before the tail, (the tail's own init and WARN lines,) the last ops of each comm, and
    the first op of each comm, for comms new to the tracker."""

    events: tuple[NcclEvent, ...]
    last: dict[OpKey, list[OpItem]]
    first: dict[OpKey, NcclColl]


def tail_start(data: Buffer) -> int:
    """Where the tail read line by line begins: the first line start in the last TAIL_BYTES."""
    start = max(0, len(data) - TAIL_BYTES)
    if start:
        start = data.find(b"\n", start) + 1 or len(data)
    return start


class _Scan:
    """State of one bulk read; nothing reaches the tracker unless the read succeeds."""

    def __init__(self, data: Buffer, known: set[bytes], history: int) -> None:
        self.data, self.known, self.history = data, known, history
        self.owner: dict[bytes, tuple[str, str]] = {}
        self.first: dict[bytes, NcclColl] = {}
        self.first_pos: dict[bytes, int] = {}
        self.last_pos: dict[bytes, int] = {}          # line start of the last line seen in the pass
        self.hits: dict[bytes, int] = {}
        self.heavy: set[bytes] = set()
        self.events: list[NcclEvent] = []
        self.safe = True
        self.near_misses = 0      # "mm " outside " comm " (see _next_comm)
        self.spaced = False

    def own(self, ptr: bytes, host: str, pid: str) -> None:
        if self.owner.setdefault(ptr, (host, pid)) != (host, pid):
            self.safe = False


def bulk_read(data: Buffer, known: Sequence[OpKey], history: int, tail_at: int,
              tail_ops: Mapping[OpKey, Iterable[OpItem]], start: int = 0) -> BulkRead | None:
    """Read data[start:tail_at] for a tracker that holds the comms ``known`` and keeps ``history`` ops
    per comm; ``tail_ops`` are the ops that data[tail_at:] gave, per comm (a fresh tracker's).
    ``start``: a line start before which no line holds "NCCL"."""
    scan = _Scan(data, {comm.encode() for _host, _pid, comm in known}, history)
    for host, pid, comm in known:
        scan.own(comm.encode(), host, pid)
    busy = {comm.encode() for _host, _pid, comm in tail_ops}
    for host, pid, comm in tail_ops:
        scan.own(comm.encode(), host, pid)
    if not scan.safe or not _pass(scan, busy, start, tail_at):
        return None
    last: dict[bytes, list[OpItem]] = {comm.encode(): list(items) for (_h, _p, comm), items in
                                       tail_ops.items()}
    if not _quiet_last_ops(scan, busy, tail_at, last):
        return None
    return _result(scan, last)


def _pass(scan: _Scan, busy: set[bytes], start: int, end: int) -> bool:
    """Step 2 of the module docstring over data[start:end]; WARN lines are merged in by position."""
    finder = CommFinder.start(scan.data, end)      # hyperscan finds the candidates, where it is installed
    try:
        return _pass_with(scan, busy, start, end, finder)
    finally:
        if finder is not None:
            finder.close()      # (its threads scanning ahead, if any, hold no view of the mapping past this)


def _pass_with(scan: _Scan, busy: set[bytes], start: int, end: int, finder: CommFinder | None) -> bool:
    data = scan.data
    excluded = busy & scan.known  # busy comms whose first line the tracker already has
    # sre's pattern (rebuilt as the excluded set grows: ~1.5 ms each) where there is no prefilter
    pattern = _scan_regex(excluded) if finder is None else None
    warns = _Warns(data, start, end)
    next_warn = 0
    pos = start
    while (found := _next(scan, finder, pattern, excluded, pos, end)) is not None:
        at, ptr_found = found
        ptr: bytes | None = ptr_found
        line_start, line_end = _line_span(data, at, at + 6 + len(ptr_found))
        pos = line_end
        grew = False
        warns.until(line_end)
        while next_warn < len(warns) and warns[next_warn][0] <= line_start:
            grew |= _parse_line(scan, *warns[next_warn], busy, excluded)
            next_warn += 1
            if next_warn and warns[next_warn - 1][0] == line_start:
                ptr = None  # this line was just parsed whole
        if ptr is not None and ptr in scan.owner and ptr not in busy and \
                data.find(b"opCount", line_start, at) >= 0:
            scan.last_pos[ptr] = line_start        # a repeat op line of a quiet candidate: no parsing
            scan.hits[ptr] += 1
            if scan.hits[ptr] > HEAVY_MATCHES:
                scan.heavy.add(ptr)
                excluded.add(ptr)
                grew = True
        elif ptr is not None:
            grew |= _parse_line(scan, line_start, line_end, busy, excluded)
        if not scan.safe or len(scan.owner) > MAX_COMMS:
            return False
        if finder is not None and not finder.failed:
            pattern = None
        elif grew or pattern is None or (scan.spaced and not pattern.pattern.startswith(b" co")):
            pattern = _scan_regex(excluded, scan.spaced or finder is not None)
    warns.until(end)
    for span in warns[next_warn:]:
        _parse_line(scan, *span, busy, excluded)
    return scan.safe and len(scan.owner) <= MAX_COMMS


def _parse_line(scan: _Scan, start: int, end: int, busy: set[bytes], excluded: set[bytes]) -> bool:
    """Record a line's events; True when the exclusion set grew."""
    grew = False
    for event in parse_nccl_segments(_text(scan.data, start, end)):
        if not isinstance(event, NcclColl):
            scan.events.append(event)
            continue
        ptr = event.comm.encode()
        new = ptr not in scan.first and ptr not in excluded
        scan.own(ptr, event.host, str(event.pid))
        if new:
            scan.first[ptr], scan.first_pos[ptr] = event, start
        if ptr in busy:
            excluded.add(ptr)
            grew = True
        else:
            scan.last_pos[ptr] = start
            scan.hits[ptr] = scan.hits.get(ptr, 0) + 1
    return grew


def _quiet_last_ops(scan: _Scan, busy: set[bytes], end: int, last: dict[bytes, list[OpItem]]) -> bool:
    """Step 3: the last ops of comms not busy at the end."""
    count = scan.history
    found: dict[bytes, list[NcclColl]] = {}
    for ptr, pos in scan.last_pos.items():
        if ptr not in busy and ptr not in scan.heavy:
            _start, line_end = _line_span(scan.data, pos, pos)
            found[ptr] = _rfind_ops(scan.data, ptr, line_end, count, scan.first_pos.get(ptr, 0))
    found.update(_last_ops_before(scan.data, sorted(scan.heavy), end, count, scan.first_pos))
    for ptr, ops in found.items():
        if any(scan.owner.get(ptr) != (op.host, str(op.pid)) for op in ops):
            return False
        if ops:
            last[ptr] = list(ops)
    return True


def _last_ops_before(data: Buffer, ptrs: list[bytes], end: int, count: int,
                     starts: dict[bytes, int]) -> dict[bytes, list[NcclColl]]:
    """The last ``count`` ops of each pointer before ``end``, scanning back in growing windows
    with one regex for all pointers still missing (about two passes at worst)."""
    remaining = set(ptrs)
    found: dict[bytes, list[NcclColl]] = {}
    high, size = end, 4 << 20
    while remaining and high > 0:
        low = max(0, high - size)
        if low:
            low = data.rfind(b"\n", 0, low) + 1
        pattern = re.compile(rb" comm (" + _trie_regex(remaining) + rb")[ \r\n]")
        last_end: dict[bytes, int] = {}
        for match in pattern.finditer(data, low, high):
            last_end[match.group(1)] = match.end()
        for ptr, match_end in last_end.items():
            ops = _rfind_ops(data, ptr, match_end, count, starts.get(ptr, 0))
            if ops:
                found[ptr] = ops
            remaining.discard(ptr)
        pages.drop(data, low, high)
        high, size = low, size * 2
    return found


def _rfind_ops(data: Buffer, ptr: bytes, end: int, count: int, start: int = 0) -> list[NcclColl]:
    """Up to ``count`` last ops of a pointer in data[start:end], oldest first. Stops at
    opCount 0 (the comm's first op), so short-lived comms cost no long backward scan."""
    needle = b" comm " + ptr
    found: list[NcclColl] = []
    while len(found) < count and (not found or found[-1].op_count > 0):
        index = data.rfind(needle, start, end)
        if index < 0:
            break
        line_start, line_end = _line_span(data, index, index + len(needle))
        end = line_start
        for event in reversed(parse_nccl_segments(_text(data, line_start, line_end))):
            if isinstance(event, NcclColl) and event.comm.encode() == ptr:
                found.append(event)
    found.reverse()
    return found[-count:]


def _result(scan: _Scan, last: dict[bytes, list[OpItem]]) -> BulkRead:
    ops: dict[OpKey, list[OpItem]] = {}
    first: dict[OpKey, NcclColl] = {}
    for ptr, items in last.items():
        host, pid = scan.owner[ptr]
        key = (host, pid, ptr.decode())
        ops[key] = items
        if ptr in scan.first:
            first[key] = scan.first[ptr]
    return BulkRead(events=tuple(scan.events), last=ops, first=first)
