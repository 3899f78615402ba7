"""NcclTracker: the last NCCL operation per (host, pid, comm), comm -> rank, WARN lines.

Two ways in, same results:
- ``feed(line)`` for live streams: lines without "NCCL" are skipped at C speed, collective
  lines are matched by one regex and kept raw (parsed only when asked), anything else takes
  the tolerant parser.
- ``feed_bytes`` / ``feed_file`` / ``feed_text`` for whole logs: a few C-speed passes instead
  of a Python loop over every line (see ``_bulk``). They fall back to the per-line path when a
  log is small or a comm pointer is used by two processes (no ASLR), where the bulk shortcut
  could be wrong.

``ops_seen`` is the opCount span of the comm in what was read: last.op_count - first.op_count + 1
(NCCL increments opCount by one per operation), or the number of kept ops if opCount went back.

``to_collectives`` uses ``seq = opCount + 1``: NCCL's opCount counts from 0 per communicator,
FR's collective_seq_id counts from 1, so in the simple case (one NCCL op per collective) the
two line up. ``pg`` is the commId (the same on every rank of a communicator, NCCL 2.17+) when
an init line gave it, else "comm:" + the comm pointer (only meaningful inside one process).
"""

from __future__ import annotations

import mmap
import os
import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import IO, Any, TypeAlias

from triage.analysis.model import Collective, CollectiveState
from triage.parsing.nccl import NcclColl, NcclEvent, NcclInit, NcclWarn, parse_nccl_segments


@dataclass(frozen=True)
class NcclCommState:
    host: str
    pid: int
    comm: str
    rank: int | None             # this process's rank in the communicator (from its init line)
    nranks: int | None
    last: NcclColl
    ops_seen: int                # opCount span seen (see the module docstring)
    comm_id: str | None = None
    global_rank: int | None = None  # rank in the process's largest communicator, else launcher rank
    history: tuple[NcclColl, ...] = ()  # the last few ops, oldest first (ends with ``last``)
    first: NcclColl | None = None    # the first op seen


# The common collective line, matched in one go. Anything else takes the tolerant path.
_FAST = re.compile(
    r"([^\s:\[\]+]+):(\d+):\d+ \[\d+\] NCCL INFO \w+: opCount [0-9a-fA-F]+ sendbuff \S+ recvbuff \S+ "
    r"count \d+ datatype \d+ op \d+ root -?\d+ comm (\S+)(?: \[nranks=\d+\])? stream \S+[ \t\r\n]*\Z"
)
_Key: TypeAlias = tuple[str, str, str]      # host, pid (as printed), comm
_Item: TypeAlias = str | NcclColl           # a raw line (parsed lazily) or a parsed op
BULK_MIN_BYTES = 4 << 20         # smaller inputs take the per-line path
_TAIL_BYTES = 1 << 20            # the end of a log read line by line in bulk mode
_MAX_BULK_COMMS = 512


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


def _discovery_regex(known: Iterable[bytes]) -> re.Pattern[bytes]:
    words = list(known)
    if not words:
        return re.compile(rb" (?:comm (\S+)|NCCL WARN)")
    return re.compile(rb" (?:comm (?!(?:" + _trie_regex(words) + rb")[ \r\n])(\S+)|NCCL WARN)")


def _line_at(data: bytes | mmap.mmap, start: int, end: int) -> tuple[str, int, int]:
    line_start = data.rfind(b"\n", 0, start) + 1
    line_end = data.find(b"\n", end)
    if line_end < 0:
        line_end = len(data)
    return bytes(data[line_start:line_end]).decode("utf-8", "replace"), line_start, line_end


class NcclTracker:
    """Follows NCCL output; ``history`` is how many recent ops to keep per comm."""

    def __init__(self, history: int = 8, max_warnings: int = 1000) -> None:
        self._history = max(1, history)
        self._ops: dict[_Key, deque[_Item]] = {}
        self._first: dict[_Key, _Item] = {}
        self._inits: dict[_Key, NcclInit] = {}
        self._warnings: list[NcclWarn] = []
        self._max_warnings = max_warnings
        self.lines_seen = 0          # NCCL lines looked at by the per-line path
        self.bulk_fallbacks = 0      # bulk inputs that had to take the per-line path

    # ---- per-line path -------------------------------------------------------------
    def feed(self, line: str) -> None:
        if "NCCL" not in line:
            return
        self.lines_seen += 1
        match = _FAST.search(line)
        if match is not None:
            self._add_op((match.group(1), match.group(2), match.group(3)), line)
            return
        for event in parse_nccl_segments(line):
            self._record(event)

    def _add_op(self, key: _Key, item: _Item) -> None:
        ops = self._ops.get(key)
        if ops is None:
            ops = self._ops[key] = deque(maxlen=self._history)
            self._first[key] = item
        ops.append(item)

    def _record(self, event: NcclEvent) -> None:
        if isinstance(event, NcclColl):
            self._add_op((event.host, str(event.pid), event.comm), event)
        elif isinstance(event, NcclInit):
            self._add_init(event)
        elif len(self._warnings) < self._max_warnings:
            self._warnings.append(event)

    def _add_init(self, event: NcclInit) -> None:
        key = (event.host, str(event.pid), event.comm)
        old = self._inits.get(key)
        # an "Init COMPLETE" line has more fields than the earlier "nRanks" line: merge them
        self._inits[key] = event if old is None else replace(
            event, comm_id=event.comm_id or old.comm_id, bus_id=event.bus_id or old.bus_id,
            function=event.function or old.function, parent=event.parent or old.parent,
            nranks=event.nranks if event.nranks is not None else old.nranks)

    def _feed_lines(self, text: str) -> None:
        feed = self.feed
        for line in text.splitlines():
            if "NCCL" in line:
                feed(line)

    # ---- whole-log path ------------------------------------------------------------
    def feed_text(self, text: str) -> None:
        if len(text) < BULK_MIN_BYTES:
            self._feed_lines(text)
        else:
            self.feed_bytes(text.encode("utf-8", "surrogateescape"))

    def feed_file(self, handle: IO[str] | IO[bytes]) -> None:
        """Read a whole (regular or piped) file; regular files are memory-mapped."""
        try:
            fileno = handle.fileno()
            size = os.fstat(fileno).st_size
        except (OSError, AttributeError, ValueError):
            fileno, size = -1, 0
        if fileno >= 0 and size >= BULK_MIN_BYTES:
            with mmap.mmap(fileno, 0, access=mmap.ACCESS_READ) as mapped:
                self.feed_bytes(mapped)
            return
        data = handle.read()
        if isinstance(data, bytes):
            self.feed_bytes(data)
        else:
            self.feed_text(data)

    def feed_bytes(self, data: bytes | mmap.mmap) -> None:
        if len(data) < BULK_MIN_BYTES or not _bulk(self, data):
            if len(data) >= BULK_MIN_BYTES:
                self.bulk_fallbacks += 1
            self._feed_lines(bytes(data).decode("utf-8", "replace"))

    # ---- results -------------------------------------------------------------------
    def _resolve(self, key: _Key, item: _Item) -> NcclColl | None:
        if isinstance(item, NcclColl):
            return item
        for event in parse_nccl_segments(item):
            if isinstance(event, NcclColl) and event.comm == key[2]:
                return event
        return None

    def inits(self) -> tuple[NcclInit, ...]:
        return tuple(self._inits.values())

    def global_rank(self, host: str, pid: int) -> int | None:
        """The rank of a process in its largest communicator (the world, usually)."""
        best: NcclInit | None = None
        for (h, p, _), init in self._inits.items():
            if h == host and p == str(pid) and (best is None or (init.nranks or 0) > (best.nranks or 0)):
                best = init
        return best.rank if best else None

    def last_ops(self) -> tuple[NcclCommState, ...]:
        states: list[NcclCommState] = []
        for key, items in self._ops.items():
            history = tuple(c for c in (self._resolve(key, i) for i in items) if c is not None)
            if not history:
                continue
            last = history[-1]
            first = self._resolve(key, self._first[key])
            span = last.op_count - first.op_count + 1 if first else 0
            init = self._inits.get(key)
            grank = self.global_rank(last.host, last.pid)
            states.append(NcclCommState(
                host=last.host, pid=last.pid, comm=last.comm,
                rank=init.rank if init else None,
                nranks=init.nranks if init and init.nranks is not None else last.nranks,
                last=last, ops_seen=max(span, len(history)),
                comm_id=init.comm_id if init else None,
                global_rank=grank if grank is not None else last.launcher_rank,
                history=history, first=first,
            ))
        return tuple(states)

    def warnings(self) -> tuple[NcclWarn, ...]:
        return tuple(self._warnings)

    def to_collectives(self) -> tuple[Collective, ...]:
        """Every kept op as a Collective (seq = opCount + 1; see the module docstring).

        State is SCHEDULED: NCCL logs an op when it is enqueued and never logs completion.
        Ops of processes whose rank is unknown get rank -1.
        """
        out: list[Collective] = []
        for state in self.last_ops():
            pg = state.comm_id or f"comm:{state.comm}"
            rank = state.global_rank if state.global_rank is not None else -1
            for op in state.history:
                p2p = op.op in ("send", "recv")
                out.append(Collective(
                    rank=rank, pg=pg, seq=op.op_count + 1, op=op.op, count=op.count, dtype=op.dtype,
                    state=CollectiveState.SCHEDULED, is_p2p=p2p, peer=op.root if p2p else None,
                    source="nccl",
                ))
        return tuple(out)


def _bulk(tracker: NcclTracker, data: bytes | mmap.mmap) -> bool:
    """Read a whole log in a few C-speed passes. Returns False (touching nothing) when the
    per-line path must be used instead.

    1. One regex pass finds WARN lines and the first line of every comm pointer not yet
       known (a negative lookahead over the known pointers skips the rest at C speed);
       init lines are found on the way because they name the comm before its first op.
    2. The last ~1 MB is read line by line (last ops of the busy comms, late init lines).
    3. For comms quiet in that tail, ``rfind`` finds their last lines.
    A comm pointer seen with two different (host, pid) means the shortcut is unsafe.
    """
    owner: dict[bytes, tuple[str, str]] = {}
    for host, pid, comm in tracker._ops:
        if owner.setdefault(comm.encode(), (host, pid)) != (host, pid):
            return False
    new_first: dict[bytes, NcclColl] = {}
    first_pos: dict[bytes, int] = {}
    events: list[NcclEvent] = []
    pattern = _discovery_regex(owner)
    pos = 0
    while (match := pattern.search(data, pos)) is not None:
        line, line_start, line_end = _line_at(data, match.start(), match.end())
        pos = line_end
        grew = False
        for event in parse_nccl_segments(line):
            if not isinstance(event, NcclColl):
                events.append(event)
                continue
            ptr = event.comm.encode()
            if ptr not in owner:
                owner[ptr] = (event.host, str(event.pid))
                new_first[ptr] = event
                first_pos[ptr] = line_start
                grew = True
        if grew:
            if len(owner) > _MAX_BULK_COMMS:
                return False
            pattern = _discovery_regex(owner)
    tail_start = max(0, len(data) - _TAIL_BYTES)
    if tail_start:
        tail_start = data.find(b"\n", tail_start) + 1 or len(data)
    tail = NcclTracker(tracker._history)
    tail._feed_lines(bytes(data[tail_start:]).decode("utf-8", "replace"))
    last: dict[bytes, list[_Item]] = {}
    for (host, pid, comm), items in tail._ops.items():
        ptr = comm.encode()
        if owner.get(ptr, (host, pid)) != (host, pid):
            return False
        owner.setdefault(ptr, (host, pid))
        last[ptr] = list(items)
    quiet = [ptr for ptr in owner if ptr not in last]
    for ptr, found in _last_ops_before(data, quiet, tail_start, tracker._history, first_pos).items():
        if any(op.host != owner[ptr][0] or str(op.pid) != owner[ptr][1] for op in found):
            return False
        last[ptr] = list(found)
    _commit(tracker, owner, new_first, last, events, tail)
    return True


def _last_ops_before(data: bytes | mmap.mmap, ptrs: list[bytes], end: int, count: int,
                     starts: dict[bytes, int]) -> dict[bytes, list[NcclColl]]:
    """The last ``count`` ops of each comm pointer before ``end``, scanning back in growing
    windows with one regex for all pointers still missing (about two passes at worst)."""
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
        high, size = low, size * 2
    return found


def _rfind_ops(data: bytes | mmap.mmap, ptr: bytes, end: int, count: int, start: int = 0) -> list[NcclColl]:
    """Up to ``count`` last ops of a comm pointer in data[start:end], oldest first. Stops early
    at opCount 0 (the comm's first op), so quiet comms cost no full backward scan."""
    needle = b" comm " + ptr
    found: list[NcclColl] = []
    while len(found) < count and (not found or found[-1].op_count > 0):
        index = data.rfind(needle, start, end)
        if index < 0:
            break
        line, line_start, _ = _line_at(data, index, index + len(needle))
        end = line_start
        for event in parse_nccl_segments(line):
            if isinstance(event, NcclColl) and event.comm.encode() == ptr:
                found.append(event)
    found.reverse()
    return found[-count:]


def _commit(tracker: NcclTracker, owner: dict[bytes, tuple[str, str]], new_first: dict[bytes, NcclColl],
            last: dict[bytes, list[_Item]], events: list[NcclEvent], tail: NcclTracker) -> None:
    for event in events:
        tracker._record(event)
    for init in tail._inits.values():
        tracker._add_init(init)
    for ptr, items in last.items():
        host, pid = owner[ptr]
        key = (host, pid, ptr.decode())
        for item in items:
            tracker._add_op(key, item)
        if ptr in new_first:  # the last lines may include the first one: keep the history unique
            tracker._first[key] = new_first[ptr]
