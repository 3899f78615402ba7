"""The communicator pass of the bulk read (triage.parsing.nccl.bulk) with hyperscan as a prefilter.

The pass wants, again and again, the first `` comm X`` at or after a position whose pointer ``X``
is not in a growing set of excluded pointers (the busy comms, whose lines are millions). sre does
that with a negative look-ahead, stopping at every `` comm `` of the log (~0.7 s of CPU per GB).
The set of runs that are *not* an excluded pointer is a regular language too: :func:`prefilter`
writes it as a regex without look-around, which hyperscan runs in one SIMD pass, reporting only the
lines of comms that are not excluded. Every candidate it reports is checked by the sre pattern, and
the last bytes before the end, where hyperscan cannot see what follows a pointer, are searched by
sre as well: the answers are those of ``pattern.search(data, pos, end)`` (tests/parsing/test_nccl_comm_scan.py
compares them).

Where a later pass over the same mapping asked for its needles (triage.parsing.needles.ride_along: the large
log's marker pass), they are in the same database as the prefilter, and the hits of each chunk go to it: the
file is read once for both. A probe of that pass (a needle whose presence alone it asks for) that its scans have
found is left out of the databases built after (needles.Rider.settled): ~0.02 s of CPU per GB of NCCL lines.

On a large input (:data:`AHEAD_FROM` bytes or more) and a CPU left idle (:func:`_threads`), the chunks ahead of
the pass are scanned on threads (hyperscan releases the GIL while it scans; each thread has its own scratch) with the
database the pass holds when they are handed out: a chunk's scan is used only where the pass, reaching it,
would scan the very same bytes (the same start, end and reach) with the very same database; else (the excluded
set grew, the pass starts mid-chunk after a line that crossed the edge) it is dropped and the chunk scanned
again, as it would have been. What hyperscan reports is a function of the database and the bytes alone, so
the answers are those of the one-thread pass (tests/parsing/test_nccl_scan_ahead.py compares them). A scan that
fails on a thread (a hyperscan without per-thread scratch) ends the scanning ahead: the pass goes on alone.
"""

from __future__ import annotations

import mmap
import os
import re
import threading
import weakref
from collections.abc import Iterable
from typing import Any

from triage.lazy_regex import lazy_regex
from triage.parsing import needles, pages

Buffer = bytes | mmap.mmap
CHUNK = 1 << 20            # bytes scanned per call: at most a chunk's lines are reported past a new exclusion
_WHITE = b" \t\n\r\x0c\x0b"    # what sre's bytes ``\s`` matches
_HEAD = b" comm "
_OTHER_WHITE = b"\t\x0c\x0b"     # whitespace that does not end an excluded pointer (sre's look-ahead wants [ \r\n])
MAX_TRIE_NODES = 20_000    # a larger exclusion set: sre alone (a prefilter this large may not compile fast)
AHEAD_FROM = 64 << 20      # bytes from which chunks ahead are scanned on threads (where there are CPUs for them)
MAX_THREADS = 4            # scanning threads at most (each ~1.3 GB/s: a page cache read soon limits more)


def _hex(chars: Iterable[int]) -> str:
    return "".join(f"\\x{c:02x}" for c in chars)


def prefilter(excluded: Iterable[bytes]) -> str | None:
    """A hyperscan regex matching, from each `` comm `` whose run of non-space bytes is not an
    excluded pointer followed by one of space, CR or LF, a few bytes (one end per start: ending at the
    first byte that decides it); None for a set too large."""
    trie: dict[int, Any] = {}
    nodes = 0
    for word in excluded:
        node = trie
        for byte in word:
            if byte not in node:
                nodes += 1
            node = node.setdefault(byte, {})
        node[-1] = {}
    if nodes > MAX_TRIE_NODES:
        return None

    def emit(node: dict[int, Any], root: bool) -> str:
        children = sorted(k for k in node if k != -1)
        alts = [_hex([k]) + emit(node[k], False) for k in children]
        alts.append(f"[^{_hex(_WHITE + bytes(children))}]")       # the run leaves every excluded pointer
        if -1 in node:
            alts.append(f"[{_hex(_OTHER_WHITE)}]")                  # an excluded pointer, ended by no space/CR/LF
        elif not root:
            alts.append(f"[{_hex(_WHITE)}]")                        # the run ends inside an excluded pointer
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return _hex(_HEAD) + emit(trie, True)


_RUN = lazy_regex(re.escape(_HEAD) + rb"(\S+)")
_ENDS_EXCLUDED = frozenset(b" \r\n")     # an excluded pointer is one followed by one of these (not by the range's end)


def _unexcluded(data: Buffer, at: int, end: int, excluded: set[bytes]) -> bytes | None:
    """The pointer of the `` comm X`` at ``at`` in data[:end] unless it is excluded: what
    `` comm (?!excluded[ \\r\\n])(\\S+)`` matches there (X is the whole run of non-space bytes, and an excluded
    pointer is never a longer run's prefix followed by one of space, CR, LF: so only X itself can exclude it)."""
    match = _RUN.match(data, at, end)
    if match is None:
        return None
    pointer, after = match.group(1), match.end()
    if pointer in excluded and after < end and data[after] in _ENDS_EXCLUDED:
        return None
    return pointer


class CommFinder:
    """``verify.search(data, pos, end)``, for a growing ``excluded`` set and a ``verify`` pattern of
    the form `` comm (?!excluded[ \\r\\n])(\\S+)``, with hyperscan finding the candidates (see the module
    docstring). ``CommFinder.start`` answers None where hyperscan is not there."""

    def __init__(self, database_type: Any, data: Buffer, end: int) -> None:
        self._type, self.data, self.end = database_type, data, end
        self._database: Any = None
        self._built: int = -1                   # the size of the excluded set the database was built for
        self._depth = 0                         # its longest pointer
        self._candidates: list[int] = []
        self._next = 0
        self._scanned = 0                       # where the next chunk starts
        self._dropped = 0                       # pages before this were handed back
        self.failed = False
        self._riding = False                    # whether the database holds a later pass's needles too
        self._left_out: frozenset[int] = frozenset()    # the rider's probes it leaves out (found before it was built)
        self._ahead: _Ahead | None = None       # chunks scanned ahead on threads (a large input, several CPUs)

    def _compile(self, excluded: set[bytes], rider: needles.Rider | None) -> bool:
        regex = prefilter(excluded)
        if regex is None:
            return False
        # (a probe the rider has found is left out: whether it occurs is all it answers. Only where the database is
        # built anyway, for a grown exclusion set: no compilation of its own)
        settled = rider.settled() if rider is not None else frozenset()
        expressions, flags, ids = rider.expressions(settled) if rider is not None else ([], [], [])
        try:
            database = self._type.Database(mode=self._type.HS_MODE_BLOCK)
            database.compile(expressions=[regex.encode(), *expressions], ids=[0, *(1 + index for index in ids)],
                             elements=1 + len(expressions), flags=[0, *flags])
        except Exception:   # noqa: BLE001  (a pattern it cannot take: sre alone)
            return False
        self._database, self._built, self._riding = database, len(excluded), rider is not None
        self._left_out = settled
        self._depth = max((len(word) for word in excluded), default=0)
        return True

    @classmethod
    def start(cls, data: Buffer, end: int) -> CommFinder | None:
        hs = needles.module()
        if hs is None:
            return None
        finder = cls(hs, data, end)
        threads = _threads() if end >= AHEAD_FROM else 1
        if threads > 1:
            finder._ahead = _Ahead(hs, data, threads)
            weakref.finalize(finder, finder._ahead.close)
        return finder

    def close(self) -> None:
        """Stop the threads scanning ahead (waiting for a scan under way: none then holds a view of ``data``)."""
        if self._ahead is not None:
            self._ahead.close()
            self._ahead = None

    def find(self, pos: int, excluded: set[bytes]) -> tuple[int, bytes] | None:
        """(start, pointer) of the first match in data[pos:end] of `` comm (?!excluded[ \\r\\n])(\\S+)`` (the
        sre pattern the caller would otherwise build and search with). ``failed`` is set (and None answered)
        if hyperscan fails: the caller then searches with sre alone."""
        data, end = self.data, self.end
        while True:
            while self._next < len(self._candidates):
                at = self._candidates[self._next]
                self._next += 1
                if at >= pos and (found := _unexcluded(data, at, end, excluded)) is not None:
                    return at, found
            if self._scanned >= end:
                # the last bytes: a pointer that runs to the end is decided by what hyperscan cannot see
                for match in _RUN.finditer(data, max(pos, end - self._depth - len(_HEAD) - 2), end):
                    if (found := _unexcluded(data, match.start(), end, excluded)) is not None:
                        return match.start(), found
                return None
            if not self._scan(max(pos, self._scanned), excluded):
                self.failed = True
                self.close()
                return None

    def _scan(self, low: int, excluded: set[bytes]) -> bool:
        """Candidates of data[low:low + CHUNK] (sorted), the database rebuilt if ``excluded`` grew. Where a
        later pass asked this one to find its needles (needles.ride_along), the same scan finds them."""
        data = self.data
        rider = needles.rider(data)
        if rider is not None and (rider.end() or 0) < low:
            rider.extend(low)               # (bytes this pass skipped: a line it had read to its end)
        riding = rider is not None and rider.end() == low
        stale = self._database is None or len(excluded) != self._built or riding != self._riding \
            or (rider is not None and riding and not self._left_out <= rider.settled())     # (a rider begun anew)
        if stale and not self._compile(excluded, rider if riding else None):
            return False
        high = min(self.end, low + CHUNK)
        reach = min(self.end, high + self._depth + len(_HEAD) + 2)
        if rider is not None and riding:
            reach = max(reach, rider.reach(high))
        scanned = None if self._ahead is None else self._ahead.take(low, high, reach, self._database)
        if scanned is None:
            scanned = _scan_chunk(self._database, None, data, low, reach)
        if scanned is None:
            self.close()
            return False
        ends, found = scanned
        starts = set()
        for to in ends:
            at = data.rfind(_HEAD, max(low, low + to - self._depth - 2 * len(_HEAD) - 2), low + to - 1)
            if 0 <= at < high:
                starts.add(at)
        self._candidates, self._next = sorted(starts), 0
        if rider is not None and riding:
            rider.cover(high, found)
        if low - CHUNK - self._dropped >= pages.WINDOW:     # hand back what the pass has left behind
            pages.drop(data, self._dropped, low - CHUNK)
            self._dropped = low - CHUNK
        self._scanned = high
        if self._ahead is not None:         # the next chunks, as the pass will ask for them if nothing changes
            if high >= self.end:
                self.close()
            else:
                self._ahead.plan(high, self._chunks_after(high), self._database)
        return True

    def _chunks_after(self, low: int) -> list[tuple[int, int, int]]:
        """(low, high, reach) of the chunks from ``low`` on, as :meth:`_scan` would compute them with the
        database it holds now (and the rider, if it rides, going on from ``low``)."""
        rider = needles.rider(self.data) if self._riding else None
        chunks = []
        for _ in range(self._ahead.depth if self._ahead is not None else 0):
            if low >= self.end:
                break
            high = min(self.end, low + CHUNK)
            reach = min(self.end, high + self._depth + len(_HEAD) + 2)
            if rider is not None:
                reach = max(reach, rider.reach(high))
            chunks.append((low, high, reach))
            low = high
        return chunks


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _threads() -> int:
    """How many threads scan: one more than the CPUs (of those this process may run on) that the last minute left
    idle (its load average), at most :data:`MAX_THREADS`; 1 (the pass alone) where none was. On CPUs that others
    keep busy, threads only add hand-offs: under load ~10 on 2 CPUs a report of the 1 GB log took 3.97 s of wall
    time with them against 3.06 s without (docs/performance.md)."""
    cpus = _cpus()
    try:
        idle = int(cpus - os.getloadavg()[0])
    except (AttributeError, OSError):
        return 1
    return max(1, min(MAX_THREADS, cpus, 1 + idle))


ScanResult = tuple[list[int], list[tuple[int, int]]]


def _scan_chunk(database: Any, scratch: Any, data: Buffer, low: int, reach: int) -> ScanResult | None:
    """The prefilter's match ends (relative to ``low``) and the riding needles' (id, end in the file) in
    data[low:reach], in the order reported; None on a scan error. Touches no state: any thread may run it
    (with a ``scratch`` of its own for ``database``; None: the database's own, the pass's thread only)."""
    ends: list[int] = []
    found: list[tuple[int, int]] = []

    def hit(ident: int, _from: int, to: int, _flags: int, _context: object) -> bool:
        if ident:
            found.append((ident - 1, low + to))
        else:
            ends.append(to)
        return False

    with memoryview(data) as view:
        try:
            if scratch is None:
                database.scan(needles.block(view[low:reach]), match_event_handler=hit)
            else:
                database.scan(needles.block(view[low:reach]), match_event_handler=hit, scratch=scratch)
        except Exception:   # noqa: BLE001  (a scan error: sre alone)
            return None
    return ends, found


class _Ahead:
    """Chunks scanned ahead of the pass on threads (see the module docstring): :meth:`plan` hands out the next
    chunks with a database, :meth:`take` gives a chunk's scan where it was made of the same bytes with the same
    database (waiting for it if under way), else None. Threads are made as needed, at most ``threads`` (the
    pass's own mostly waits for them), and end when :meth:`close` is called."""

    def __init__(self, hs: Any, data: Buffer, threads: int) -> None:
        self._hs, self._data = hs, data
        self.depth = 2 * threads                # chunks handed out ahead of the pass
        self._workers = threads
        self._lock = threading.Condition()
        self._queue: list[tuple[int, int, int, Any]] = []        # (low, high, reach, database) to scan
        self._jobs: dict[int, tuple[int, int, Any]] = {}         # low -> (high, reach, database) handed out
        self._done: dict[int, ScanResult | None] = {}            # low -> its scan
        self._busy: set[int] = set()                             # lows being scanned
        self._threads: list[threading.Thread] = []
        self._closed = False
        self._failed = False                    # a scan failed on a thread: no more are handed out

    def plan(self, low: int, chunks: list[tuple[int, int, int]], database: Any) -> None:
        with self._lock:
            if self._closed or self._failed:
                return
            for key in [k for k in self._jobs if k < low or self._jobs[k][2] is not database]:
                self._forget(key)
            for start, high, reach in chunks:
                if start not in self._jobs:
                    self._jobs[start] = (high, reach, database)
                    self._queue.append((start, high, reach, database))
            while len(self._threads) < min(self._workers, len(self._queue)):
                thread = threading.Thread(target=self._work, name="triage-scan-ahead", daemon=True)
                self._threads.append(thread)
                thread.start()
            self._lock.notify_all()

    def _forget(self, low: int) -> None:
        self._jobs.pop(low, None)
        self._done.pop(low, None)
        self._queue = [job for job in self._queue if job[0] != low]

    def take(self, low: int, high: int, reach: int, database: Any) -> ScanResult | None:
        with self._lock:
            job = self._jobs.get(low)
            if job is None or job != (high, reach, database):
                return None
            while low not in self._done:        # queued or under way (the threads start once the pass waits)
                if self._closed:
                    return None
                self._lock.wait()
            result = self._done.pop(low)
            self._jobs.pop(low, None)
            return result

    def _work(self) -> None:
        scratches: dict[int, tuple[Any, Any]] = {}      # id of a database -> (database, this thread's scratch)
        while True:
            with self._lock:
                while not self._queue and not self._closed:
                    self._lock.wait()
                if self._closed:
                    return
                low, high, reach, database = self._queue.pop(0)
                self._busy.add(low)
            result: ScanResult | None = None       # (None: the pass scans the chunk itself)
            try:
                mine = scratches.get(id(database))
                if mine is None or mine[0] is not database:
                    scratches.clear()       # (one database at a time: the pass's)
                    mine = scratches[id(database)] = (database, self._hs.Scratch(database))
                result = _scan_chunk(database, mine[1], self._data, low, reach)
            except Exception:   # noqa: BLE001  (no scratch for it: the pass scans the chunk itself)
                result = None
            finally:        # (whatever happened, the pass waiting for this chunk is answered)
                with self._lock:
                    self._failed |= result is None
                    self._busy.discard(low)
                    if self._jobs.get(low) == (high, reach, database):     # (still wanted, as handed out)
                        self._done[low] = result
                    self._lock.notify_all()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._queue.clear()
            self._lock.notify_all()
            while self._busy:
                self._lock.wait()
            self._jobs.clear()
            self._done.clear()
            threads, self._threads = self._threads, []
        for thread in threads:      # (each is at most returning from its wait: no scan is under way)
            if thread is not threading.current_thread():
                thread.join()
