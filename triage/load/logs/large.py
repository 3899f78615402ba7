"""Logs of hundreds of MB or GB (``NCCL_DEBUG=INFO`` of a long run): read without a Python loop over
every line and without decoding the whole file.

- NCCL lines go to the tracker's whole-log path (a few C-speed passes, see triage.parsing.nccl.bulk).
- Lines holding one of :data:`MARKERS`: ``rror`` (every ``...Error:``, ``CUDA error``, ``Fatal Python error``,
  ``ncclRemoteError``), ``atchdog`` (watchdog timeouts) or one of the plain failure words of
  :data:`WORD_MARKERS` (``died``, ``killed``, ``signal``, ``exit``, ``failed``...: what the plain-words fallback,
  triage.parsing.named_failure, reads in a small log) are found in one pass of the multi-needle
  scanner (triage.parsing.needles), or where it is not installed with one pass per marker (the same
  lines either way; many times slower there: bench/bench_report_logs.py); they and the last 256 KiB of the
  file (torchrun's summary, each rank's last lines) make the excerpt that the line-by-line reader
  takes, as for a pasted log. The same pass finds the ``NCCL WARN`` lines and keeps them for the NCCL
  reader (triage.parsing.needles.kept), which otherwise makes a pass of its own for them.
- One pass over the bytes, not two: the NCCL reader runs first, and its communicator pass finds the markers
  and the ``NCCL WARN`` lines in the same Hyperscan scan as its own pattern (triage.parsing.needles.ride_along);
  the marker pass then reads only the bytes that pass did not (before the first NCCL line, the last MB, all
  of a log without NCCL lines). The NCCL reader's search for its first line is made in the same scan as the
  markers too (triage.parsing.needles.Rider.find): a log without NCCL lines is read once. The answers are those
  of the separate passes (tests/load/test_riding_marker_pass.py).
"""

from __future__ import annotations

import mmap
import re

from triage.lazy_regex import lazy_regex
from triage.load.logs.records import CHANNEL, nccl_tracker
from triage.load.logs.scan import LogScan
from triage.load.logs.text import scan_log_text
from triage.parsing import needles, pages
from triage.parsing.nccl.bulk import WARN
from triage.parsing.textclean import decoded

Buffer = bytes | mmap.mmap
LARGE_LOG_BYTES = 16 << 20       # larger logs take this path
TAIL_BYTES = 256 << 10
# the plain words a rank's failure is told in (triage.parsing.named_failure's, as its case-insensitive
# words are written: lower case, capitalised, upper case), so that a large log's excerpt holds every line
# that the plain-words fallback reads in the same text small ("rank 5 died from signal 11")
WORD_MARKERS = (b"RROR", b"xception", b"died", b"Died", b"dead", b"Dead", b"illed", b"KILL", b"rash", b"ignal",
                b"SIG", b"xit", b"ailed", b"ailure", b"FAIL", b"imeout", b"imed out", b"ime out", b"bort",
                b"ore dumped", b"OOM", b"of memory", b"egmentation", b"llegal", b"atal", b"FATAL", b"erminated")
MARKERS = (b"rror", b"atchdog") + WORD_MARKERS  # a line holding one of these is read (one pass finds all)
# How each marker is searched, the fastest way measured (bench/bench_report_logs.py): sre's literal
# scan finds "rror" in half bytes.find's time; "atchdog" by memchr on its "h", rare in most logs
# (triage.parsing.pages.find falls back to the plain search where it is not)
_LITERAL = {marker: lazy_regex(re.escape(marker)) for marker in (b"rror", *WORD_MARKERS)}
_PIVOT = {b"atchdog": 3}
MAX_MARKED_LINES = 200_000       # of more, the first and the last halves are kept
CONTEXT_LINES = 2                # lines kept after a marked one (a what(): line, a cut message)
MAX_LINE_BYTES = 64 << 10        # of a longer line, its first 64 KiB are read (a 2 GB line is not 2 GB of str)


def _spans(data: Buffer, end: int) -> list[tuple[int, int]]:
    """(start, stop) of every marked line before ``end``, and of the lines right after it."""
    starts: set[int] = set()
    # the same pass finds the NCCL WARN lines, kept for the NCCL reader (its own pass over the log otherwise), and
    # whether there is any channel line (the NCCL reader's pass for them is then left out where there is none);
    # where they are too many for the scanner's hit budget, the markers alone
    found = needles.find_all(data, (*MARKERS, WARN), 0, end, keep=(WARN,), probe=(CHANNEL,))
    if found is None and needles.available():
        found = needles.find_all(data, MARKERS, 0, end)
    for marker in MARKERS:
        pos = 0
        hits = None if found is None else found[marker]
        while (hit := _find(data, marker, pos, end) if hits is None else needles.next_hit(hits, pos)) >= 0:
            start = max(data.rfind(b"\n", max(0, hit - MAX_LINE_BYTES), hit) + 1, hit - MAX_LINE_BYTES // 2, 0)
            starts.add(start)
            stop = data.find(b"\n", hit, end)
            pos = end if stop < 0 else stop + 1
            for _ in range(CONTEXT_LINES):
                if pos >= end:
                    break
                starts.add(pos)
                nxt = data.find(b"\n", pos, end)
                pos = end if nxt < 0 else nxt + 1
    ordered = sorted(starts)
    if len(ordered) > MAX_MARKED_LINES:
        half = MAX_MARKED_LINES // 2
        ordered = ordered[:half] + ordered[-half:]
    spans = []
    for start in ordered:
        stop = data.find(b"\n", start, min(end, start + MAX_LINE_BYTES))
        spans.append((start, min(end, start + MAX_LINE_BYTES) if stop < 0 else stop))
    return spans


def _find(data: Buffer, marker: bytes, start: int, end: int) -> int:
    """``data.find(marker, start, end)``, the fastest way for this marker, keeping no page resident."""
    literal = _LITERAL.get(marker)
    if literal is None:
        return pages.find(data, marker, start, end, _PIVOT.get(marker))
    match = pages.search(literal, data, start, end)
    return -1 if match is None else match.start()


def scan_large_log(data: Buffer, path: str, scan: LogScan, default_rank: int | None = None) -> None:
    """Fold a large log into ``scan`` (see the module docstring)."""
    # the NCCL reader first: its communicator pass finds the markers (and the NCCL WARN lines it wants, and
    # whether there is a channel line) in the bytes it reads, while they are in memory; the marker pass below
    # then reads only what that pass did not (one pass over the file where there were two)
    needles.ride_along(data, (*MARKERS, WARN), probe=(CHANNEL,))
    nccl = nccl_tracker(data)
    pages.drop(data, 0, len(data))      # (what that pass left mapped: the excerpt is built on top of it otherwise)
    size = len(data)
    tail = max(0, size - TAIL_BYTES)
    if tail:
        newline = data.find(b"\n", tail)
        tail = size if newline < 0 else newline + 1
    pieces = [bytes(data[start:stop]) for start, stop in _spans(data, tail)]
    pieces.append(bytes(data[tail:]))
    excerpt = decoded(b"\n".join(pieces))
    scan_log_text(excerpt, path, scan, default_rank, nccl_source=data, nccl=nccl)
