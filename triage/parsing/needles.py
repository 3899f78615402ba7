"""Several byte strings found in one pass over a large log.

Python has no multi-needle search: one ``find`` pass per needle costs ~0.5 s of CPU per GB each,
and one regex alternation is ~10x slower than the separate passes. Hyperscan (the ``hyperscan``
package: its wheels carry the library, x86-64 and aarch64 Linux) finds any number of literals in one SIMD
pass, ~0.2 s per GB for a handful. :func:`find_all` uses it where it is installed and works; where it is
not, an Aho-Corasick automaton (the ``ahocorasick-rs`` package: wheels for macOS, Windows and x86-64 and
aarch64 Linux; ~2 s per GB for the large-log pass's 200 needles, where one pass per needle takes ~100 s);
it answers None where neither is there (or when the needles are found too often: each hit costs a Python
call), so that the caller takes its plain per-needle path: the result is the same either way
(tests/parsing/test_needles.py compares them).

Like :mod:`triage.parsing.pages`, a pass over a memory-mapped log hands back the pages it has read
every :data:`triage.parsing.pages.WINDOW` bytes, so that a 1 GB log does not make a 1 GB process.
"""

from __future__ import annotations

import mmap
import re
import weakref
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from triage.parsing import pages


def _load() -> ModuleType | None:
    try:   # an optional accelerator: without it (another platform, a CPU without SSSE3) the plain path
        import hyperscan
    except Exception:   # noqa: BLE001  (any failure to load it only means the plain path)
        return None
    return hyperscan




def _load_automaton() -> ModuleType | None:
    try:   # the second accelerator, for platforms without the first (see the module docstring)
        import ahocorasick_rs

        ahocorasick_rs.BytesAhoCorasick     # noqa: B018  (a version without the bytes automaton: not used)
    except Exception:   # noqa: BLE001  (any failure to load it only means the plain path)
        return None
    module: ModuleType = ahocorasick_rs
    return module




def _takes_views(hs: ModuleType | None) -> bool:
    """Whether this hyperscan scans a memoryview in place: 0.7.23 (the newest with aarch64 wheels) takes
    only bytes, so each window is then copied (~10 ms per 64 MiB) rather than left to the plain path."""
    if hs is None:
        return False
    try:
        database = hs.Database(mode=hs.HS_MODE_BLOCK)
        database.compile(expressions=[b"x"], ids=[0], elements=1)
        with memoryview(b"x") as view:
            database.scan(view, match_event_handler=lambda *_: False)
    except Exception:   # noqa: BLE001  (a TypeError on a view, or a scanner that does not work at all)
        return False
    return True


# The scanners are loaded at their first use, not at import (hyperscan's import and the test of its views ~3 ms,
# the automaton's ~0.5 ms: a small log's report never scans with them): _hs, _ac and _VIEWS are bound in this
# module's namespace then (a test or bench may bind them itself first); this module's code reads them through
# _hyperscan(), _automaton() and _views(), anyone else as attributes (the module's __getattr__ below).
_hs: ModuleType | None
_ac: ModuleType | None
_VIEWS: bool


def _load_views() -> bool:
    return _takes_views(_hyperscan())


_LAZY: dict[str, Callable[[], Any]] = {"_hs": _load, "_ac": _load_automaton, "_VIEWS": _load_views}


def _bound(name: str) -> Any:
    """The module global ``name`` (one of _LAZY's), loaded and bound at its first use."""
    space = globals()
    if name not in space:
        space[name] = _LAZY[name]()
    return space[name]


def _hyperscan() -> ModuleType | None:
    hs: ModuleType | None = _bound("_hs")
    return hs


def _automaton() -> ModuleType | None:
    ac: ModuleType | None = _bound("_ac")
    return ac


def _views() -> bool:
    return bool(_bound("_VIEWS"))


def __getattr__(name: str) -> Any:
    """``needles._hs``, ``_ac``, ``_VIEWS`` from outside, loaded at the first use; any other name is not here
    (refused at once: the import system asks a module for ``__path__`` at every ``from ... import``)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _bound(name)

Buffer = bytes | mmap.mmap
MAX_HITS = 1_000_000     # more hits than this in one call: None (the plain path skips a line's repeats)
_DATABASES: dict[tuple[tuple[bytes, ...], int], Any] = {}
# hits a pass was asked to keep, per mapping (gone with it): (start, end, {needle: hits}) of each such pass
_KEPT: weakref.WeakKeyDictionary[mmap.mmap, list[tuple[int, int, dict[bytes, list[int]]]]] = \
    weakref.WeakKeyDictionary()
# needles a pass only looked out for, per mapping: (start, end, {needle: whether it is in data[start:end]})
_SEEN: weakref.WeakKeyDictionary[mmap.mmap, list[tuple[int, int, dict[bytes, bool]]]] = weakref.WeakKeyDictionary()


# needles that are patterns, not literals: their source (what the caller passes as the needle) and the fixed width
# of every match (a match's start is its end less the width, as a literal's is); see :func:`pattern`
_WIDTHS: dict[bytes, int] = {}
# of a pattern, literals one of which every match holds, each at its offset in the match (see :func:`pattern`)
_KEYS: dict[bytes, tuple[tuple[bytes, int], ...]] = {}


def pattern(source: bytes, width: int, keys: Sequence[tuple[bytes, int]] = ()) -> bytes:
    """``source`` (a regular expression, in the syntax that both Python's ``re`` and Hyperscan take, every match of
    which is ``width`` bytes long and holds no newline) made a needle: :func:`find_all` and the passes that find
    needles report the start of each of its matches as they do a literal's. ``keys``: (literal, offset) pairs such
    that every match holds one of the literals at its offset from the match's start; the automaton (which takes
    literals only) then finds the keys and ``re`` checks the pattern at each, rather than a pass of ``re`` of its
    own (~6 s per GB for a pattern that opens with a class). Returns ``source``."""
    _WIDTHS[source] = width
    if keys:
        _KEYS[source] = tuple(keys)
    return source


def keys(needle: bytes) -> tuple[tuple[bytes, int], ...]:
    """A pattern's keys (see :func:`pattern`); none for a literal or a pattern made without."""
    return _KEYS.get(needle, ())


def width(needle: bytes) -> int:
    """How long a match of ``needle`` is: a literal's length, a :func:`pattern`'s width."""
    return _WIDTHS.get(needle, len(needle))


def _expression(needle: bytes) -> bytes:
    return needle if needle in _WIDTHS else re.escape(needle)


def _flag(hs: ModuleType, needle: bytes, flag: int) -> int:
    """The Hyperscan flags of ``needle`` in a database: ``flag``, and for a pattern that reports every match, the
    leftmost start's tracking: the same matches (a pattern's width is fixed: its end gives its start), but a database
    of the large-log pass's 200 literals and the glog head compiles in ~5 ms rather than ~30 ms (each database of
    the NCCL reader's communicator pass is one: several a report)."""
    return flag | hs.HS_FLAG_SOM_LEFTMOST if needle in _WIDTHS and not flag & hs.HS_FLAG_SINGLEMATCH else flag


def module() -> ModuleType | None:
    """The hyperscan module, or None where it is not there (see the module docstring)."""
    return _hyperscan()


def available() -> bool:
    """Whether a one-pass scanner is there for :func:`find_all` (the hyperscan package loaded, or the automaton)."""
    return _hyperscan() is not None or _automaton() is not None


def block(view: memoryview) -> memoryview | bytes:
    """What to hand the scanner for ``view``: the view itself, or a copy where it takes only bytes."""
    return view if _views() else bytes(view)


def _database(hs: ModuleType, needles: tuple[bytes, ...], once: int = 0) -> Any:
    """A compiled block-mode database for ``needles`` (cached: ~0.3 ms each to compile); the last ``once``
    of them report one match a scan at most."""
    database = _DATABASES.get((needles, once))
    if database is None:
        database = hs.Database(mode=hs.HS_MODE_BLOCK)
        flags = [0] * (len(needles) - once) + [hs.HS_FLAG_SINGLEMATCH] * once
        database.compile(expressions=[_expression(n) for n in needles], ids=list(range(len(needles))),
                         elements=len(needles), flags=[_flag(hs, n, f) for n, f in zip(needles, flags)])
        if len(_DATABASES) > 32:
            _DATABASES.clear()
        _DATABASES[(needles, once)] = database
    return database


FIND_CHUNK = 8 << 20     # bytes a Rider.find scans at a time (a chunk its threads scan ahead, where they do)


def _find_database(hs: ModuleType, needle: bytes, words: tuple[bytes, ...], probes: tuple[bytes, ...]) -> Any:
    """The database of a :meth:`Rider.find`: ``needle`` (id 0, one match a scan), then ``words`` and ``probes`` (one
    match a scan each), cached as :func:`_database`'s are."""
    key = ((needle, *words, *probes), -1 - len(words))     # (_database's counts are 0 or more: never this key)
    database = _DATABASES.get(key)
    if database is None:
        database = hs.Database(mode=hs.HS_MODE_BLOCK)
        every = (needle, *words, *probes)
        flags = [hs.HS_FLAG_SINGLEMATCH] + [0] * len(words) + [hs.HS_FLAG_SINGLEMATCH] * len(probes)
        database.compile(expressions=[_expression(n) for n in every], ids=list(range(len(every))),
                         elements=len(every), flags=[_flag(hs, n, f) for n, f in zip(every, flags)])
        if len(_DATABASES) > 32:
            _DATABASES.clear()
        _DATABASES[key] = database
    return database


def find_all(data: Buffer, needles: Sequence[bytes], start: int = 0, end: int | None = None,
             max_hits: int = MAX_HITS, keep: Sequence[bytes] = (),
             probe: Sequence[bytes] = ()) -> dict[bytes, list[int]] | None:
    """The start of every occurrence of each needle in ``data[start:end]`` (overlapping ones
    included, ascending): what a loop of ``data.find(needle, pos, end)`` with ``pos = hit + 1``
    finds. None when the scanner is not installed or fails, or past ``max_hits`` hits in all.
    ``keep``: needles whose hits in a mapped ``data`` a later reader of the same mapping asks
    :func:`kept` for, rather than making a pass of its own. ``probe``: needles not in ``needles`` whose mere
    presence in a mapped ``data[start:end]`` the same scan records, for :func:`seen` (one hit a window at
    most: a needle found often costs nothing). The ranges an earlier pass over the mapping had a
    :class:`Rider` scan for these needles are taken from it, not read again."""
    end = len(data) if end is None else min(end, len(data))
    words = tuple(dict.fromkeys(n for n in needles if n))
    probes = tuple(n for n in dict.fromkeys(probe) if n and n not in words) if isinstance(data, mmap.mmap) else ()
    if not words:
        return None
    hs = _hyperscan()
    if hs is None:
        ac = _automaton()
        scanned = None if ac is None else _automaton_scan(ac, data, words + probes, len(probes), start, end,
                                                          max_hits)
        return None if scanned is None else _found(data, words, probes, scanned, start, end, keep)
    try:
        database = _database(hs, words + probes, len(probes))
    except Exception:   # noqa: BLE001  (a needle it cannot compile, an unsupported CPU: the plain path)
        return None
    found: list[list[int]] = [[] for _ in words + probes]
    lengths = [width(w) for w in words + probes]
    pos = start
    rider = _RIDERS.get(data) if isinstance(data, mmap.mmap) else None
    if rider is not None and rider.serves(words, probes, start):
        for low, high in rider.intervals:
            low, high = max(low, pos), min(high, end)
            if low >= high:
                continue
            if pos < low and not _scan_range(database, lengths, data, pos, low, end, found, max_hits):
                return None
            rider.hits_into(words + probes, low, high, end, found)
            pos = high
    if pos < end and not _scan_range(database, lengths, data, pos, end, end, found, max_hits):
        return None
    if sum(map(len, found)) > max_hits:
        return None
    return _found(data, words, probes, found, start, end, keep)


def _found(data: Buffer, words: tuple[bytes, ...], probes: tuple[bytes, ...], found: list[list[int]], start: int,
           end: int, keep: Sequence[bytes]) -> dict[bytes, list[int]]:
    """:func:`find_all`'s answer from the hits of ``words + probes`` (one list each), kept and probed as it says."""
    for hits in found:
        hits.sort()
    result = dict(zip(words, found))
    if keep and isinstance(data, mmap.mmap):
        _KEPT.setdefault(data, []).append((start, end, {n: result[n] for n in keep if n in result}))
    if probes and isinstance(data, mmap.mmap):
        _SEEN.setdefault(data, []).append((start, end, {n: bool(hits) for n, hits in
                                                        zip(probes, found[len(words):])}))
    return result


_AUTOMATA: dict[tuple[bytes, ...], Any] = {}
AUTOMATON_CHUNK = 1 << 20    # bytes the automaton reads a call (its hits come back as one list: a bounded one)


def _automaton_scan(ac: ModuleType, data: Buffer, needles: tuple[bytes, ...], once: int, start: int, end: int,
                    max_hits: int) -> list[list[int]] | None:
    """:func:`find_all`'s hits of ``needles`` (one list each, unsorted; the last ``once`` of them, probes, one hit
    at most) found by an Aho-Corasick automaton of their literals (of a pattern: its keys, :func:`pattern`, each
    key's hit checked by ``re``; a pattern without keys: ``re`` alone), :data:`AUTOMATON_CHUNK` bytes a call, the
    pages handed back every :data:`pages.WINDOW` bytes; None past ``max_hits`` hits or where the automaton cannot
    be made."""
    keys: dict[bytes, list[tuple[int, int]]] = {}     # literal -> (index of its needle, offset in the needle's match)
    alone: list[int] = []       # patterns without keys
    for index, needle in enumerate(needles):
        if needle not in _WIDTHS:
            keys.setdefault(needle, []).append((index, 0))
        elif needle in _KEYS:
            for key, offset in _KEYS[needle]:
                keys.setdefault(key, []).append((index, offset))
        else:
            alone.append(index)
    literals = tuple(keys)
    automaton: Any = _AUTOMATA.get(literals)
    if automaton is None and literals:
        try:
            automaton = ac.BytesAhoCorasick(literals, implementation=ac.Implementation.DFA)
        except Exception:   # noqa: BLE001  (a set it cannot take: the plain path)
            return None
        if len(_AUTOMATA) > 8:
            _AUTOMATA.clear()
        _AUTOMATA[literals] = automaton
    found: list[list[int]] = [[] for _ in needles]
    checked: dict[int, set[int]] = {}       # a pattern's match starts (several keys may point at one)
    longest = max(map(len, literals), default=1)
    probes = range(len(needles) - once, len(needles))
    count = 0
    with memoryview(data) as view:
        pos = dropped = start
        while pos < end and literals:
            stop = min(end, pos + AUTOMATON_CHUNK)
            try:
                hits = automaton.find_matches_as_indexes(view[pos:min(end, stop + longest - 1)], overlapping=True)
            except Exception:   # noqa: BLE001  (a scan error: the plain path answers)
                return None
            for key_index, low, _high in hits:
                if low >= stop - pos:       # (a match starting past the chunk is found by the next one)
                    continue
                for index, offset in keys[literals[key_index]]:
                    at = pos + low - offset
                    if index in probes and found[index]:
                        continue
                    if not offset and needles[index] not in _WIDTHS:
                        found[index].append(at)
                        count += 1
                    elif start <= at <= end - _WIDTHS[needles[index]] and at not in checked.get(index, ()):
                        checked.setdefault(index, set()).add(at)
                        if _regex(needles[index]).match(data, at, at + _WIDTHS[needles[index]]):
                            found[index].append(at)
                            count += 1
            if count > max_hits:
                return None
            if stop - dropped >= pages.WINDOW or stop == end:
                pages.drop(data, dropped, stop)
                dropped = stop
            pos = stop
    for index in alone:
        regex, pos = _regex(needles[index]), start
        while pos < end and (match := pages.search(regex, data, pos, end)) is not None:
            found[index].append(match.start())
            count += 1
            if count > max_hits:
                return None
            pos = end if index in probes else match.start() + 1
    return found


def _regex(source: bytes) -> re.Pattern[bytes]:
    return re.compile(source)     # (re's own cache holds it)


def _scan_range(database: Any, lengths: list[int], data: Buffer, start: int, stop_at: int, end: int,
                found: list[list[int]], max_hits: int, drop: bool = True) -> bool:
    """Add to ``found`` (one list per id of ``database``, whose needles have these ``lengths``) the
    matches starting in data[start:stop_at] that end by ``end``, a :data:`pages.WINDOW` at a time (each
    window's pages handed back after it unless not ``drop``); False past ``max_hits`` or on a scan error."""
    window = [start, start]         # where the scanned view starts, where the window ends
    count = sum(map(len, found))

    def hit(ident: int, _from: int, to: int, _flags: int, _context: object) -> bool:
        nonlocal count
        at = window[0] + to - lengths[ident]
        if at < window[1]:          # a match starting past the window is found by the next one
            found[ident].append(at)
            count += 1
        return count > max_hits     # True stops the scan

    with memoryview(data) as view:
        pos = start
        while pos < stop_at:
            stop = min(stop_at, pos + pages.WINDOW)
            window[:] = [pos, stop]
            try:
                database.scan(block(view[pos:min(end, stop + max(lengths) - 1)]), match_event_handler=hit)
            except Exception:   # noqa: BLE001  (stopped past max_hits, or a scan error: the plain path answers)
                return False
            if count > max_hits:
                return False
            if drop:
                pages.drop(data, pos, stop)
            pos = stop
    return True


class Rider:
    """Needles that another pass over a mapping finds as it goes (:func:`ride_along`): that pass calls
    :meth:`extend` over the bytes it has just read (in memory: no page read twice), and :func:`find_all`
    later takes the hits of the ranges covered (intervals, ascending) rather than reading them again."""

    def __init__(self, data: mmap.mmap, database: Any, words: tuple[bytes, ...], probes: tuple[bytes, ...],
                 single: int) -> None:
        self.data, self._database, self.words, self.probes, self._single = data, database, words, probes, single
        self._lengths = [width(w) for w in words + probes]
        self.intervals: list[tuple[int, int]] = []
        self._found: list[list[int]] = [[] for _ in words + probes]
        self.failed = False

    def serves(self, words: tuple[bytes, ...], probes: tuple[bytes, ...], start: int = 0) -> bool:
        """Whether the hits of the ranges covered answer a :func:`find_all` from ``start`` for these needles: a probe
        found there is known only up to its first hit (a pass may leave it out from there on: :meth:`settled`)."""
        if self.failed or not set(words) <= set(self.words) or not set(probes) <= set(self.probes):
            return False
        every = self.words + self.probes
        return all(not (hits := self._found[every.index(probe)]) or start <= hits[0] for probe in probes)

    def settled(self) -> frozenset[int]:
        """The probes (their indices in ``words + probes``) found in the range covered: whether one occurs is all a
        probe answers, so a pass that finds this rider's needles may leave them out of its scans from here on."""
        count = len(self.words)
        return frozenset(index for index in range(count, count + len(self.probes)) if self._found[index])

    def begin(self, start: int) -> None:
        """The riding pass starts at ``start``: within the last interval, it goes on from that interval's end;
        elsewhere what was found so far is forgotten (the intervals stay ascending and the hits sorted)."""
        if self.intervals and self.intervals[-1][0] <= start <= self.intervals[-1][1]:
            return
        self.intervals = [(start, start)]
        self._found = [[] for _ in self._found]

    def extend(self, stop: int) -> bool:
        """Scan from the end of the last interval to ``stop`` (False, and no interval any more, on failure)."""
        if self.failed or not self.intervals:
            return False
        low, high = self.intervals[-1]
        if stop <= high:
            return True
        stop = min(stop, len(self.data))
        if not _scan_range(self._database, self._lengths, self.data, high, stop, len(self.data), self._found, MAX_HITS,
                           drop=stop - high > pages.WINDOW):
            self.failed, self.intervals = True, []
            return False
        self.intervals[-1] = (low, stop)
        return True

    # ---- for a pass that finds them in its own scan (one database for its pattern and these needles) ----
    def expressions(self, leave_out: frozenset[int] = frozenset()) -> tuple[list[bytes], list[int], list[int]]:
        """The needles as a database's expressions, with their flags (a probe: one match a scan) and ids (each one's
        index in ``words + probes``), less those of ``leave_out`` (probes already found: :meth:`settled`)."""
        every = self.words + self.probes
        ids = [index for index in range(len(every)) if index not in leave_out]
        flags = [0 if index < len(self.words) else self._single for index in ids]
        if (hs := _hyperscan()) is not None:
            flags = [_flag(hs, every[index], flag) for index, flag in zip(ids, flags)]
        return [_expression(every[index]) for index in ids], flags, ids

    def end(self) -> int | None:
        """Where the last interval ends: a pass that scans from there for the needles may :meth:`cover`."""
        return None if self.failed or not self.intervals else self.intervals[-1][1]

    def reach(self, stop: int) -> int:
        """How far a scan must read to see every needle that starts before ``stop``."""
        return min(len(self.data), stop + max(self._lengths) - 1)

    def cover(self, stop: int, hits: Sequence[tuple[int, int]]) -> None:
        """A pass scanned from :meth:`end` to :meth:`reach` of ``stop``: ``hits`` are its (needle index, end
        offset in the file) of these needles, in the order found; those starting before ``stop`` are kept."""
        end = self.end()
        if end is None:
            return
        for ident, to in hits:
            at = to - self._lengths[ident]
            if end <= at < stop:
                self._found[ident].append(at)
        self.intervals[-1] = (self.intervals[-1][0], stop)
        if sum(map(len, self._found)) > MAX_HITS:
            self.failed, self.intervals = True, []

    def find(self, needle: bytes, start: int, end: int) -> int | None:
        """``data.find(needle, start, end)`` (``needle`` not one of this rider's), found in scans that find this
        rider's needles as well, so that a search that reads the mapping from ``start`` (the NCCL reader's
        search for its first line) is no pass of its own: the range read is covered up to the line of the hit
        (all of it where there is none). None (nothing covered) where it cannot: the rider failed, already
        covers past ``start``, holds ``needle``, or the scanner cannot take it.

        The range is read :data:`FIND_CHUNK` bytes at a time; past the first chunk, on a large range
        (``comm_scan.AHEAD_FROM`` bytes or more) and where a CPU is idle (``comm_scan._threads``, the gate of the
        communicator pass's threads), the chunks ahead are scanned on threads as that pass's are (its ``_Ahead``:
        a chunk's scan is used only where it was made of the very same bytes with the very same database). What
        Hyperscan reports is a function of the database and the bytes alone: the answers are those of one thread
        (tests/load/test_rider_scan_ahead.py)."""
        hs = _hyperscan()
        if hs is None or self.failed or needle in self.words + self.probes or not needle:
            return None
        end = min(end, len(self.data))
        self.begin(start)
        if self.end() != start:
            return None
        try:    # (the needle first: the scan of a chunk gives its ends apart from the rider's needles' hits)
            database = _find_database(hs, needle, self.words, self.probes)
        except Exception:   # noqa: BLE001  (a needle it cannot compile: the caller's plain search)
            return None
        # (comm_scan imports this module; the threads are its own)
        from triage.parsing.nccl import comm_scan

        data = self.data
        step = max(1, min(pages.WINDOW, FIND_CHUNK))

        def chunk(low: int) -> tuple[int, int, int]:
            high = min(end, low + step)
            return low, high, max(self.reach(high), min(end, high + len(needle) - 1))

        ahead: Any = None
        pos = start
        try:
            while pos < end:
                low, stop, reach = chunk(pos)
                scanned = None if ahead is None else ahead.take(low, stop, reach, database)
                if scanned is None:
                    scanned = comm_scan._scan_chunk(database, None, data, low, reach)
                if scanned is None:     # a scan error: what is left is searched plainly
                    self.failed, self.intervals = True, []
                    return pages.find(data, needle, pos, end)
                reported, found = scanned
                at = data.find(needle, pos, min(end, stop + len(needle) - 1)) if reported else -1
                if at >= 0:     # covered up to the hit's line (the reader reads on from there)
                    self.cover(max(pos, data.rfind(b"\n", pos, at) + 1), found)
                    return at
                self.cover(stop, found)
                pages.drop(data, pos, stop)
                pos = stop
                if self.failed:
                    return pages.find(data, needle, pos, end)
                if ahead is None and pos == start + step and end - pos >= comm_scan.AHEAD_FROM \
                        and (threads := comm_scan._threads()) > 1:
                    ahead = comm_scan._Ahead(hs, data, threads)
                if ahead is not None and pos < end:     # the next chunks, as this loop will ask for them
                    chunks: list[tuple[int, int, int]] = []
                    while len(chunks) < ahead.depth and (chunks[-1][1] if chunks else pos) < end:
                        chunks.append(chunk(chunks[-1][1] if chunks else pos))
                    ahead.plan(pos, chunks, database)
        finally:
            if ahead is not None:
                ahead.close()       # (waits for a scan under way: none holds a view of the mapping after it)
        return -1

    def hits(self, needle: bytes, start: int, stop: int) -> list[int]:
        """The hits of ``needle`` starting in data[start:stop] (a covered range)."""
        found = self._found[(self.words + self.probes).index(needle)]
        return found[bisect_left(found, start):bisect_left(found, stop)]

    def hits_into(self, needles: tuple[bytes, ...], start: int, stop: int, end: int, found: list[list[int]]) -> None:
        for needle, into in zip(needles, found):
            into.extend(at for at in self.hits(needle, start, stop) if at + width(needle) <= end)


_RIDERS: weakref.WeakKeyDictionary[mmap.mmap, Rider] = weakref.WeakKeyDictionary()


def ride_along(data: Buffer, needles: Sequence[bytes], probe: Sequence[bytes] = ()) -> Rider | None:
    """Ask the passes over the mapping ``data`` (the NCCL reader's communicator pass) to find ``needles`` (and
    whether ``probe`` occurs: one hit a scan at most) in the bytes they read, for a later :func:`find_all`;
    None (nothing asked) where the scanner is not there or ``data`` is not a mapping."""
    if not isinstance(data, mmap.mmap) or (hs := _hyperscan()) is None:
        return None
    words = tuple(dict.fromkeys(n for n in needles if n))
    probes = tuple(n for n in dict.fromkeys(probe) if n and n not in words)
    try:
        database = _database(hs, words + probes, len(probes))
    except Exception:   # noqa: BLE001  (the plain path: find_all reads it all)
        return None
    rider = Rider(data, database, words, probes, hs.HS_FLAG_SINGLEMATCH)
    _RIDERS[data] = rider
    return rider


def rider(data: Buffer) -> Rider | None:
    """The :class:`Rider` asked for on the mapping ``data`` (see :func:`ride_along`), if any and working."""
    found = _RIDERS.get(data) if isinstance(data, mmap.mmap) else None
    return None if found is None or found.failed else found


def find_first(data: Buffer, needle: bytes, start: int, end: int, pivot: int | None = None) -> int:
    """``data.find(needle, start, end)``: where a :class:`Rider` was asked for on the mapping ``data``, in scans
    that find its needles as well (:meth:`Rider.find`), else by :func:`triage.parsing.pages.find` (``pivot``)."""
    found = rider(data)
    at = None if found is None else found.find(needle, start, end)
    return pages.find(data, needle, start, end, pivot) if at is None else at


def seen(data: Buffer, needle: bytes) -> tuple[int, int, bool] | None:
    """(start, end, whether ``needle`` is in data[start:end]) from an earlier :func:`find_all` over this
    mapping that probed for it (a match that a range's end cuts is not in it); None where none did."""
    if not isinstance(data, mmap.mmap):
        return None
    for low, high, found in _SEEN.get(data, ()):
        if needle in found:
            return low, high, found[needle]
    return None


def kept(data: Buffer, needle: bytes, start: int, end: int) -> list[int] | None:
    """The hits of ``needle`` in ``data[start:end]`` (what :func:`find_all` would answer for it) from an
    earlier pass over this mapping that kept them and covered that range; None where none did."""
    if not isinstance(data, mmap.mmap):
        return None
    for low, high, hits in _KEPT.get(data, ()):
        if low <= start and end <= high and needle in hits:
            found = hits[needle]
            return found[bisect_left(found, start):bisect_left(found, end - width(needle) + 1)]
    return None


def next_hit(hits: Sequence[int], pos: int) -> int:
    """The first of the ascending ``hits`` (one needle's, from :func:`find_all`) at or after ``pos``, or -1:
    what ``data.find(needle, pos, end)`` answers."""
    index = bisect_left(hits, pos)
    return hits[index] if index < len(hits) else -1


_GATES: dict[tuple[tuple[str, ...], tuple[str, ...]], Any] = {}
# a few lines are tested word by word in Python (~50 ns a test) rather than by a database compiled for them (~3 ms
# for the report's hundred words): up to this many tests a process, then the database is built
_PER_WORD_BUDGET = 40_000
_per_word_spent = 0


def lines_holding(pieces: Sequence[str], literals: Sequence[str], caseless: Sequence[str] = ()) -> set[int] | None:
    """The indices of the ``pieces`` (a block's lines) that hold one of ``literals``, or one of the ``caseless``
    literals in any case, or that are not ASCII (the caller reads these as before: past ASCII, Python's case
    rules are not the scanner's), found in one scan of the block (~2 ms to compile a hundred literals, once), or
    word by word for a few lines (:func:`_per_word`, with or without the scanner: a small log's report loads no
    scanner); None where neither answers (the scanner is not there or fails: the caller then reads every line). A
    piece it leaves out holds none of them: ``any(word in piece for word in literals)`` and the same of
    ``piece.lower()`` and the caseless ones are False (tests/parsing/test_needles.py compares them)."""
    key = (tuple(literals), tuple(caseless))
    database = _GATES.get(key)
    if database is None and (few := _per_word(pieces, literals, caseless)) is not None:
        return few
    hs = _hyperscan()
    if hs is None:
        return None
    if database is None:
        try:
            database = hs.Database(mode=hs.HS_MODE_BLOCK)
            words = [*literals, *caseless]
            database.compile(expressions=[re.escape(word.encode()) for word in words], ids=list(range(len(words))),
                             elements=len(words), flags=[0] * len(literals) + [hs.HS_FLAG_CASELESS] * len(caseless))
        except Exception:   # noqa: BLE001  (a needle it cannot take, an unsupported CPU: every line is read)
            return None
        if len(_GATES) > 8:
            _GATES.clear()
        _GATES[key] = database
    starts: list[int] = []
    chunks: list[bytes] = []
    loud: set[int] = set()
    at = 0
    for index, piece in enumerate(pieces):
        if piece.isascii():
            chunk = piece.encode("ascii")
        else:
            loud.add(index)
            chunk = b"\x00" * len(piece)     # (read whole by the caller: its bytes need no scan)
        starts.append(at)
        chunks.append(chunk)
        at += len(chunk) + 1

    def hit(_ident: int, _from: int, to: int, _flags: int, _context: object) -> bool:
        loud.add(bisect_right(starts, to - 1) - 1)
        return False

    try:
        database.scan(b"\n".join(chunks), match_event_handler=hit)
    except Exception:   # noqa: BLE001  (a scan error: every line is read)
        return None
    return loud


def _per_word(pieces: Sequence[str], literals: Sequence[str], caseless: Sequence[str]) -> set[int] | None:
    """:func:`lines_holding`'s answer for a few lines, word by word (the scanner's: ASCII lines, its caseless
    match ASCII's); None past the process's budget, or for a word the scanner would find across two lines."""
    global _per_word_spent
    tests = len(pieces) * (len(literals) + len(caseless))
    if _per_word_spent + tests > _PER_WORD_BUDGET or any("\n" in word for word in (*literals, *caseless)):
        return None
    _per_word_spent += tests
    folded = [word.lower() for word in caseless if word.isascii()]    # (one past ASCII holds in no ASCII line)
    return {index for index, piece in enumerate(pieces)
            if not piece.isascii() or any(word in piece for word in literals)
            or (folded and any(word in piece.lower() for word in folded))}
