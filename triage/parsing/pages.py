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


def find(data: bytes | mmap.mmap, needle: bytes, start: int, end: int) -> int:
    """``data.find(needle, start, end)``, releasing the pages behind every :data:`WINDOW` bytes."""
    if not isinstance(data, mmap.mmap):
        return data.find(needle, start, end)
    _behind(data, start)
    pos = start
    while pos < end:
        stop = min(end, pos + WINDOW)
        hit = data.find(needle, pos, min(end, stop + len(needle) - 1))
        if hit >= 0:
            return hit
        drop(data, pos, stop)
        pos = stop
    return -1


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
