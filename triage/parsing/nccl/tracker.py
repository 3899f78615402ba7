"""NcclTracker: the last NCCL operation per (host, pid, comm), comm -> rank, WARN lines.

Two ways in, same results:
- ``feed(line)`` for live streams: lines without "NCCL" are skipped at C speed, collective
  lines are matched by one regex and kept raw (parsed only when asked), anything else takes
  the tolerant parser.
- ``feed_bytes`` / ``feed_file`` / ``feed_text`` for whole logs: a few C-speed passes instead
  of a Python loop over every line (see ``bulk``). They fall back to the per-line path when a
  log is small or a comm pointer is used by two processes (no ASLR), where the bulk shortcut
  could be wrong.

The bulk reader is in ``bulk``: it returns what it found and the tracker takes it in
(``_take_bulk``), so the tracker's fields are only ever touched here.

``ops_seen`` is the opCount span of the comm in what was read: last.op_count - first.op_count + 1
(NCCL increments opCount by one per operation), or the number of kept ops if opCount went back.

How its ops become Collectives (``seq = opCount + 1``, ``pg`` from the commId) is said once, in
``triage.parsing.nccl.lines``.
"""

from __future__ import annotations

import mmap
import os
from collections import Counter, deque
from dataclasses import dataclass, replace
from typing import IO, Literal, TypeAlias

from triage.lazy_regex import lazy_regex
from triage.parsing import needles
from triage.parsing.nccl.bulk import BulkRead, OpItem, OpKey, bulk_read, tail_start
from triage.parsing.nccl.lines import NcclColl, NcclEvent, NcclInit, NcclWarn, parse_nccl_segments


@dataclass(frozen=True)
class NcclCommState:
    """One NCCL communicator of a process: its set-up and the collectives it ran."""
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
_FAST = lazy_regex(
    r"([\w.-]+):(\d+):\d+ \[\d+\] NCCL INFO \w+: opCount [0-9a-fA-F]+ sendbuff \S+ recvbuff \S+ "
    r"count \d+ datatype \d+ op \d+ root -?\d+ comm (\S+)(?: \[nranks=\d+\])? stream \S+"
    r"(?: \w+ -?\w+)*[ \t\r\n]*\Z"  # RCCL adds "task N globalrank N"
)
_Key: TypeAlias = OpKey
_Item: TypeAlias = OpItem
BULK_MIN_BYTES = 4 << 20         # smaller inputs take the per-line path


SetupReading: TypeAlias = Literal["failed", "recovered"]
# NCCL's files that set a communicator up (with transport/* and graph/*: a transport's connection, the topology's
# search)
SETUP_FILES = frozenset({"init.cc", "bootstrap.cc", "transport.cc", "channel.cc", "proxy.cc", "p2p.cc", "shm.cc",
                         "net.cc", "net_ib.cc", "net_socket.cc", "coll_net.cc", "nvls.cc", "topo.cc", "search.cc",
                         "connect.cc", "paths.cc", "xml.cc", "tuning.cc"})
# a kernel's fault, sticky: any later CUDA call of the process reports it, set-up's or not
_KERNEL_FAULT = lazy_regex(r"(?i)illegal (?:memory access|address|instruction)|misaligned address|launch failure"
                           r"|unspecified launch")


@dataclass(frozen=True)
class _SetupAt:
    """The set-up state of a process's communicators when a line came."""
    comms: frozenset[str]       # its process's communicators in set-up when it came
    in_use: bool                # a communicator of its process had completed its set-up before


class NcclTracker:
    """Follows NCCL output; ``history`` is how many recent ops to keep per comm."""

    def __init__(self, history: int = 8, max_warnings: int = 1000) -> None:
        self._history = max(1, history)
        self._ops: dict[_Key, deque[_Item]] = {}
        self._first: dict[_Key, _Item] = {}
        self._inits: dict[_Key, NcclInit] = {}
        self._warnings: list[NcclWarn] = []                 # the first ones (the root cause is early)
        self._late_warnings: deque[NcclWarn] = deque(maxlen=max(1, max_warnings // 2))  # and the latest
        self._max_warnings = max(1, max_warnings - max_warnings // 2)
        self.warnings_dropped = 0
        # each process's communicators whose set-up began (an "Init START" or "nRanks" line) and has not ended (no "Init
        # COMPLETE" yet); the processes that had a communicator complete its set-up; and, for the warnings kept (the
        # first ones and the latest, as the warnings list: capped), those a process printed while one of its
        # communicators was being set up: those communicators, and whether one of the process's had completed before
        self._setting_up: dict[tuple[str, str], set[str]] = {}
        self._in_use: set[tuple[str, str]] = set()
        self._setup_first: dict[NcclWarn, _SetupAt] = {}
        self._setup_late: dict[NcclWarn, _SetupAt] = {}
        self._late_counts: Counter[NcclWarn] = Counter()
        self.lines_seen = 0          # NCCL lines looked at by the per-line path
        self.bulk_fallbacks = 0      # bulk inputs that had to take the per-line path

    # ---- per-line path -------------------------------------------------------------
    def feed(self, line: str) -> None:
        if "NCCL" not in line:
            return
        self.lines_seen += 1
        match = _FAST.search(line)
        if match is not None and (match.start() == 0 or "NCCL" not in line[:match.start()]):
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

    def _record(self, event: NcclEvent, setup: _SetupAt | None = None) -> None:
        if isinstance(event, NcclColl):
            self._add_op((event.host, str(event.pid), event.comm), event)
            return
        if isinstance(event, NcclInit):
            self._add_init(event)
            return
        if setup is None:
            process = (event.host, str(event.pid))
            if pending := self._setting_up.get(process):
                setup = _SetupAt(frozenset(pending), process in self._in_use)
        if len(self._warnings) < self._max_warnings:
            self._warnings.append(event)
            if setup is not None:
                self._setup_first[event] = setup
            return
        late = self._late_warnings
        if len(late) == late.maxlen:
            self.warnings_dropped += 1
            dropped = late[0]
            self._late_counts[dropped] -= 1
            if self._late_counts[dropped] <= 0:
                del self._late_counts[dropped]
                self._setup_late.pop(dropped, None)
        late.append(event)
        self._late_counts[event] += 1
        if setup is not None:
            self._setup_late[event] = setup
        else:
            self._setup_late.pop(event, None)

    def _add_init(self, event: NcclInit) -> None:
        key = (event.host, str(event.pid), event.comm)
        old = self._inits.get(key)
        pending = self._setting_up.setdefault((event.host, str(event.pid)), set())
        if event.complete:
            pending.discard(event.comm)
            self._in_use.add((event.host, str(event.pid)))
        elif old is None or not old.complete:
            pending.add(event.comm)
        # an "Init COMPLETE" line has more fields than the earlier "nRanks" line: merge them
        self._inits[key] = event if old is None else replace(
            event, comm_id=event.comm_id or old.comm_id, bus_id=event.bus_id or old.bus_id,
            function=event.function or old.function, parent=event.parent or old.parent,
            nranks=event.nranks if event.nranks is not None else old.nranks, complete=event.complete or old.complete)

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
            self.feed_bytes(text.encode("utf-8", "surrogatepass"))

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
        if len(data) < BULK_MIN_BYTES:
            self._feed_lines(bytes(data).decode("utf-8", "replace"))
            return
        # every line the tracker reads holds "NCCL": the lines before the first one are skipped
        # (a log with a few NCCL lines at its end costs one pass, that keeps no page resident; where a later pass
        # asked for its needles to be found as the mapping is read, the same scan finds them: see needles.Rider.find)
        first = needles.find_first(data, b"NCCL", 0, len(data), pivot=0)
        if first < 0:
            return
        start = data.rfind(b"\n", 0, first) + 1
        if not self._feed_bulk(data, start):
            self.bulk_fallbacks += 1
            self._feed_lines(bytes(data[start:]).decode("utf-8", "replace"))

    def _feed_bulk(self, data: bytes | mmap.mmap, start: int = 0) -> bool:
        """The bulk path (see ``bulk``) from ``start`` (a line start; the lines before it hold no
        "NCCL"); False, nothing changed, when it cannot be sure."""
        tail_at = tail_start(data)
        tail = NcclTracker(self._history)
        tail._feed_lines(bytes(data[max(start, tail_at):]).decode("utf-8", "replace"))
        found = bulk_read(data, tuple(self._ops), self._history, tail_at, tail._ops, start=min(start, tail_at))
        if found is None:
            return False
        self._take_bulk(found, tail)
        return True

    def _take_bulk(self, found: BulkRead, tail: NcclTracker) -> None:
        for event in found.events:
            self._record(event)
        for init in tail._inits.values():
            self._add_init(init)
        for warn in tail.warnings():
            # (the tail's own reading of its set-up: its inits were taken above, all before its warnings)
            self._record(warn, tail._setup_first.get(warn) or tail._setup_late.get(warn))
        for key, items in found.last.items():
            new = key not in self._first
            for item in items:
                self._add_op(key, item)
            if new and key in found.first:  # the last lines may include the first one: keep history unique
                self._first[key] = found.first[key]
            elif new and key in tail._first:  # a comm whose lines are all in the tail: its first op is there
                self._first[key] = tail._first[key]

    # ---- results -------------------------------------------------------------------
    def _resolve(self, key: _Key, item: _Item) -> NcclColl | None:
        if isinstance(item, NcclColl):
            return item
        for event in parse_nccl_segments(item):
            if isinstance(event, NcclColl) and event.comm == key[2]:
                return event
        return None

    def setup_reading(self, warn: NcclWarn) -> SetupReading | None:
        """What a CUDA failure's WARN tells of its process's communicator set-up, as far as the lines read in order
        tell:

        - None: it came while no communicator of its process was being set up (after a communicator's first set-up line,
          "Init START" or "nRanks", before its "Init COMPLETE"), or it is a collective's or a kernel's: its file is
          enqueue.cc (a collective's launch), its message a kernel's fault that any later CUDA call reports (an illegal
          memory access or address, a misaligned address, a launch failure, an illegal instruction), or its file is no
          set-up file (``SETUP_FILES``, transport/*, graph/*) and a communicator of its process had completed its set-up
          before (that process ran collectives: the WARN may be one's);
        - "recovered": every communicator being set up then completed its set-up (NCCL got past it: a peer access
          refused, another transport taken);
        - "failed": the set-up of one of them never completed in the input (the set-up failed on that CUDA call).
        """
        setup = self._setup_first.get(warn) or self._setup_late.get(warn)
        if setup is None:
            return None
        path = warn.source_file or ""
        name = path.rsplit("/", 1)[-1]
        if name == "enqueue.cc" or _KERNEL_FAULT.search(warn.message) is not None:
            return None
        if setup.in_use and name not in SETUP_FILES and not path.startswith(("transport/", "graph/")):
            return None
        host, pid = warn.host, str(warn.pid)
        for comm in setup.comms:
            init = self._inits.get((host, pid, comm))
            if init is None or not init.complete:
                return "failed"
        return "recovered"

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
        """WARN lines in order: the first ``max_warnings / 2`` and the latest ones (a count of
        those dropped in between is in ``warnings_dropped``)."""
        return (*self._warnings, *self._late_warnings)

