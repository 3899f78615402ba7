"""Passes over a memory-mapped log that do not keep the whole file resident.

Every page of a mapping that a pass reads stays in the process's resident set until it is
unmapped: one ``find`` over a 1 GB log makes ``triage report`` a 1 GB process. These helpers
do what ``find`` and ``Pattern.search`` do, one window at a time, and hand the pages already
passed back to the kernel (``MADV_DONTNEED``: for a read-only file mapping the data stays in
the page cache and is mapped again if read again). On bytes (a small log read whole) they are
the plain calls.
"""

from __future__ import annotations

import contextlib
import mmap
import re

WINDOW = 64 << 20        # bytes read between two drops
OVERLAP = 64 << 10       # a regex match that starts in a window may read this far past it


def drop(data: bytes | mmap.mmap, start: int, stop: int) -> None:
    """Release the pages of ``data[start:stop]`` (whole pages only; nothing for bytes)."""
    if not isinstance(data, mmap.mmap) or stop <= start:
        return
    first = start - start % mmap.PAGESIZE
    with contextlib.suppress(OSError, ValueError, AttributeError):   # no madvise here: only memory is at stake
        data.madvise(mmap.MADV_DONTNEED, first, stop - first)


_MARKS: dict[int, int] = {}   # id of a mapping -> the start of the window a forward pass is in


def _behind(data: mmap.mmap, pos: int) -> None:
    """A forward pass is at ``pos``: release the whole windows it has left behind (once each; a
    call at an earlier position than the last starts a new pass)."""
    key = id(data)
    edge = pos - pos % WINDOW
    mark = _MARKS.get(key, 0)
    if pos < mark:
        mark = edge
    if edge > mark:
        drop(data, mark, edge)
        mark = edge
    if len(_MARKS) > 64:
        _MARKS.clear()
    _MARKS[key] = mark


def find(data: bytes | mmap.mmap, needle: bytes, start: int, end: int, pivot: int | None = None) -> int:
    """``data.find(needle, start, end)``, releasing the pages behind every :data:`WINDOW` bytes.

    ``pivot``: the index of a byte of ``needle`` that is rare in logs (the ``W`` of ``NCCL WARN``).
    The search then runs ``memchr`` on that byte and compares the needle at each hit, several
    times faster than the substring search (which slows down on the hex digits and common
    letters of NCCL lines); where the byte turns out to be common (more than one hit in
    :data:`DENSE` bytes), it goes on with the plain search. The result is the same either way."""
    if not isinstance(data, mmap.mmap):
        if pivot is not None:
            return _pivot_find(data, needle, start, end, pivot)
        return data.find(needle, start, end)
    _behind(data, start)
    pos = start
    while pos < end:
        stop = min(end, pos + WINDOW)
        if pivot is None:
            hit = data.find(needle, pos, min(end, stop + len(needle) - 1))
        else:
            hit = _pivot_find(data, needle, pos, min(end, stop + len(needle) - 1), pivot)
        if hit >= 0:
            return hit
        drop(data, pos, stop)
        pos = stop
    return -1


DENSE = 4096     # a pivot byte seen more often than once in this many bytes is not rare here


def _pivot_find(data: bytes | mmap.mmap, needle: bytes, start: int, end: int, pivot: int) -> int:
    """``data.find(needle, start, end)`` by ``memchr`` on ``needle[pivot]`` (see :func:`find`)."""
    byte = needle[pivot:pivot + 1]
    size = len(needle)
    if end - start < size:      # (else the bound below goes negative: bytes.find would count it from the end)
        return -1
    pos = start + pivot         # where the pivot byte of a match starting at ``start`` would be
    budget = (end - start) // DENSE + 16
    while budget > 0:
        hit = data.find(byte, pos, end - size + pivot + 1)
        if hit < 0:
            return -1
        if data[hit - pivot:hit - pivot + size] == needle:
            return hit - pivot
        pos = hit + 1
        budget -= 1
    return data.find(needle, pos - pivot, end)    # a common byte here: the plain search from where it was


def search(pattern: re.Pattern[bytes], data: bytes | mmap.mmap, start: int, end: int) -> re.Match[bytes] | None:
    """``pattern.search(data, start, end)`` for patterns without ``^``, ``$`` or look-behind whose
    matches (look-ahead included) are shorter than :data:`OVERLAP`, releasing pages as :func:`find`.
    The first match that starts in a window is the first match of the whole range: a match cut
    short by the window's end is searched again to the real end."""
    if not isinstance(data, mmap.mmap):
        return pattern.search(data, start, end)
    _behind(data, start)
    pos = start
    while pos < end:
        stop = min(end, pos + WINDOW)
        bound = min(end, stop + OVERLAP)
        match = pattern.search(data, pos, bound)
        if match is not None and match.start() < stop:
            if match.end() >= bound > match.start() and bound < end:
                match = pattern.search(data, match.start(), end)
            return match
        drop(data, pos, stop)
        pos = stop
    return None
