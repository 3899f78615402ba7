"""Logs of hundreds of MB or GB (``NCCL_DEBUG=INFO`` of a long run): read without a Python loop over
every line and without decoding the whole file.

- NCCL lines go to the tracker's whole-log path (a few C-speed passes, see triage.parsing.nccl.bulk).
- Lines holding one of :data:`MARKERS` (literals) or :data:`PATTERNS` are found in one pass of the multi-needle
  scanner (triage.parsing.needles), or where it is not installed with one pass per needle (the same lines either
  way; many times slower there: bench/bench_report_logs.py); they and the last 256 KiB of the file (torchrun's
  summary, each rank's last lines) make the excerpt that the line-by-line reader takes, as for a pasted log. A
  marked line keeps the 2 lines after it; one that holds a code's box or block (triage.parsing.whole_text's
  BLOCK_MARKERS: QE's box, GROMACS's block, CP2K's [ABORT], VASP's box, ABINIT's document) keeps the 30 lines above
  it and the 40 below, its head and its message. The excerpt's cap (MAX_MARKED_LINES) bounds that context, never
  the marked lines: a log of thousands of lines of a code's repeated phrase ("Fatal error: ... (retrying)") keeps
  every marked line, its middle's included, and the context goes to the first and the last blocks, then to every
  marked line's 2 lines, then to the other blocks from the log's ends inwards (tests/load/test_large_log_cap.py).
  Where the marked lines alone are more than the cap, the first and the last halves are read, and the lines
  between are named in the report (Evidence.skipped), never left out silently.
- The needles are no list of this module's: they are made (:func:`markers`, on the first large log) from what the
  line-by-line reader's own line gate passes (triage.load.logs.text.GATE_LITERALS; the caseless words of
  triage.parsing.unread_failure.UNREAD_WORDS, in the cases lines write them; its glog head) and the words of every
  reader that reads the whole text (triage.parsing.whole_text.MARKERS), so that a line is read the same
  in a 1 GB log as in a pasted one (tests/load/test_large_log_markers.py); a word spelled in hex digits ("dead") is
  looked for outside hex numbers (NCCL's pointers), where the readers read it. The same pass finds the ``NCCL WARN``
  lines and keeps them for the NCCL reader (triage.parsing.needles.kept), which otherwise makes a pass of its own.
- One pass over the bytes, not two: the NCCL reader runs first, and its communicator pass finds the markers
  and the ``NCCL WARN`` lines in the same Hyperscan scan as its own pattern (triage.parsing.needles.ride_along);
  the marker pass then reads only the bytes that pass did not (before the first NCCL line, the last MB, all
  of a log without NCCL lines). The NCCL reader's search for its first line is made in the same scan as the
  markers too (triage.parsing.needles.Rider.find): a log without NCCL lines is read once. The answers are those
  of the separate passes (tests/load/test_riding_marker_pass.py).
"""

from __future__ import annotations

import functools
import mmap
import re
from collections import deque
from collections.abc import Iterator, Sequence

from triage.lazy_regex import lazy_regex
from triage.load.logs.records import CHANNEL, nccl_tracker
from triage.load.logs.scan import LogScan
from triage.load.logs.text import GATE_LITERALS, scan_log_text
from triage.parsing import needles, pages
from triage.parsing.named_failure import TIMEOUT_WORDS
from triage.parsing.nccl.bulk import WARN
from triage.parsing.rendezvous import RENDEZVOUS_WORDS, STORE_WORDS
from triage.parsing.textclean import decoded
from triage.parsing.unread_failure import GLOG_HEAD, GLOG_HEAD_WIDTH, SIGNAL_NAMES, UNREAD_WORDS
from triage.parsing.whole_text import BLOCK_MARKERS
from triage.parsing.whole_text import MARKERS as WHOLE_TEXT_MARKERS

Buffer = bytes | mmap.mmap
LARGE_LOG_BYTES = 16 << 20       # larger logs take this path
TAIL_BYTES = 256 << 10


def markers(literals: Sequence[str], caseless: Sequence[str]) -> tuple[bytes, ...]:
    """The byte needles that find every line holding one of ``literals`` (as written) or one of the ``caseless``
    words as lines write them (lower case, Capitalised, UPPER CASE, Title Case: "could not", "Could not",
    "COULD NOT", "Could Not"), fewest: a needle that holds another is left out (every line holding it holds the
    other). (Hyperscan's caseless matching would take any mixture of cases too, but costs ~0.25 s more on the
    1 GB bench's pass, several times what these literals cost.)"""
    words = {word.encode() for word in literals}
    for word in caseless:
        words |= {form.encode() for form in (word, word.capitalize(), word.upper(), word.title())}
    by_length = sorted(words, key=len)
    return tuple(sorted(word for index, word in enumerate(by_length)
                        if not any(other in word for other in by_length[:index] if len(other) < len(word))))


# Literals that the launchers' own line prefixes hold, each as a pattern that leaves the prefix out: torchrun's
# "[default0]:" holds "fault" (a marker every line of such a log would hit: the pass would then find too many)
# ("oom", caseless a failure word of named_failure's _WHAT, \bOOM\b, and of slurmstepd's "oom-kill", is in "zoom",
# "room" and "bloom", which a large log's progress lines may hold on every line: looked for where no letter is before
# it, as the readers read it; "OOM" in capitals stays a literal, the word as tools print it at a line's start too)
_PREFIX_SAFE = {b"fault": rb"[^e]fault", b"oom": rb"[^A-Za-z\n]oom", b"Oom": rb"[^A-Za-z\n]Oom"}
# (each: the marker at offset 1 of every match, its key for the automaton)
# Literals looked for where a character of a kind follows them: crashlog's "[F", the head of torch's glog FATAL line
# ("[F429 14:03:49.38 ProcessGroupNCCL.cpp:1554]"), and "[F]", a level, are no "[Fri Nov 29" date nor "[Frame 3]"
_SUFFIX_SAFE = {b"[F": rb"\[F[^a-z\n]"}   # (each: the marker at offset 0 of every match)
# A marker spelled in hex digits alone ("dead") is in the pointers and hashes that NCCL's INFO lines print
# ("sendbuff 0x7f99dead4ce": ~600 lines of the 1 GB bench log, and the two after each, read for nothing): it is looked
# for where a character that is not a hex digit stands on one side of it at least (two patterns) - never inside a
# hex number, where no reader reads a word (theirs are whole words: "is dead", "marked dead", \bdead\b)
_HEX = lazy_regex(rb"[0-9a-fA-F]+")
_NOT_HEX = rb"[^0-9a-fA-F]"
# Caseless words of one reader's branch, looked for as one needle (a pattern, :func:`one_needle`) rather than each
# form as a literal: named_failure's "timed out" words (six words, 22 literals; as "time", "Time" and "TIME" they were
# three, but marked every line of a simulation code's or Megatron's progress: "Time: 0.1234", "elapsed time per
# iteration"), within the scanner's needle budget (tests/load/test_large_log_markers.py)
# (the signals' names: 9 words, one needle, not 18; the store's waits, three of one length, and the rendezvous' two
# cases, one needle each)
ONE_NEEDLE = (TIMEOUT_WORDS, SIGNAL_NAMES, STORE_WORDS, RENDEZVOUS_WORDS)


def one_needle(words: Sequence[str]) -> bytes:
    """One pattern (triage.parsing.needles.pattern) that marks every line holding one of the caseless ``words`` in a
    case a line writes it (lower case, Capitalised, UPPER CASE, Title Case, and CamelCase where it has a space: "Timed
    Out", "TimedOut"): the alternation of those forms cut to the shortest one's length (a fixed width), each form
    its own key for the automaton."""
    forms = {form for word in words for form in (word, word.capitalize(), word.upper(), word.title(),
                                                 word.title().replace(" ", ""))}
    width = min(map(len, forms))
    cut = sorted({form[:width].encode() for form in forms})
    source = b"(?:" + b"|".join(re.escape(form).replace(b"\\ ", b"\\x20") for form in cut) + b")"
    return needles.pattern(source, width, tuple((form, 0) for form in cut))


# the glog head's keys for the automaton (triage.parsing.needles.pattern): every match opens with one of these, its
# level letter and the month's two digits ("[EF][01][0-9]": tests/load/test_large_log_markers.py checks the head)
_GLOG_KEYS = tuple((f"{level}{tens}{unit}".encode(), 0) for level in "EF" for tens in "01" for unit in "0123456789")


@functools.cache
def _needles() -> tuple[tuple[bytes, ...], tuple[bytes, ...]]:
    """(the literals, the patterns): made once, on the first large log (~10 ms: not at import, which every report
    pays)."""
    grouped = {word for words in ONE_NEEDLE for word in words}
    ones = tuple(map(one_needle, ONE_NEEDLE))
    found = tuple(marker for marker in markers((*GATE_LITERALS, *WHOLE_TEXT_MARKERS),
                                               tuple(word for word in UNREAD_WORDS if word not in grouped))
                  if not any(re.search(one, marker) for one in ones))   # (a literal that holds one's match: left out)
    hex_words = tuple(marker for marker in found if _HEX.fullmatch(marker))
    patterns = (needles.pattern(GLOG_HEAD.encode(), GLOG_HEAD_WIDTH, _GLOG_KEYS), *ones,
                *(needles.pattern(form, len(marker) + 1, ((marker, 1),))
                  for marker, form in _PREFIX_SAFE.items() if marker in found),
                *(needles.pattern(form, len(marker) + 1, ((marker, 0),))
                  for marker, form in _SUFFIX_SAFE.items() if marker in found),
                *(needles.pattern(form, len(word) + 1, ((word, offset),))
                  for word in hex_words for form, offset in ((_NOT_HEX + re.escape(word), 1),
                                                             (re.escape(word) + _NOT_HEX, 0))))
    return tuple(marker for marker in found if marker not in _PREFIX_SAFE and marker not in _SUFFIX_SAFE
                 and marker not in hex_words), patterns


def __getattr__(name: str) -> tuple[bytes, ...]:
    """MARKERS (the literals), PATTERNS (triage.parsing.needles.pattern: the glog head, the prefix-safe forms) and
    NEEDLES (both: what the pass looks for, one pass finding all), made on first use; any other name (the import
    system's ``__path__`` check at every ``from ... import``) is refused without making them (~15 ms)."""
    if name not in ("MARKERS", "PATTERNS", "NEEDLES"):
        raise AttributeError(name)
    literals, patterns = _needles()
    if name == "MARKERS":
        return literals
    if name == "PATTERNS":
        return patterns
    if name == "NEEDLES":
        return literals + patterns
    raise AttributeError(name)


# How each marker is searched where there is no scanner, the fastest way measured (bench/bench_report_logs.py):
# sre's literal scan (half bytes.find's time); "atchdog" by memchr on its "h", rare in most logs
# (triage.parsing.pages.find falls back to the plain search where it is not); a pattern by sre
_PIVOT = {b"atchdog": 3}
MAX_MARKED_LINES = 200_000       # lines of the excerpt; where more are marked, the first and the last halves are kept
CONTEXT_LINES = 2                # lines kept after a marked one (a what(): line, a cut message)
BLOCK_BEFORE, BLOCK_AFTER = 30, 40   # lines kept around a line that holds a code's box or block (BLOCK_MARKERS)
BLOCK_ENDS = 8                   # the first and the last this many blocks are widened whatever the excerpt's size


@functools.cache
def _block() -> re.Pattern[bytes]:
    return re.compile(b"|".join(re.escape(marker.encode()) for marker in BLOCK_MARKERS))
MAX_LINE_BYTES = 64 << 10        # of a longer line, its first 64 KiB are read (a 2 GB line is not 2 GB of str)


def _spans(data: Buffer, end: int, path: str = "", notes: list[str] | None = None) -> list[tuple[int, int]]:
    """(start, stop) of every marked line before ``end``, and of the lines kept around them (see :func:`_context`).
    Where more than MAX_MARKED_LINES lines are marked, the first and the last halves of them are kept and a note
    ("PATH: lines A-B not read: ...") is added to ``notes``."""
    # the same pass finds the NCCL WARN lines, kept for the NCCL reader (its own pass over the log otherwise), and
    # whether there is any channel line (the NCCL reader's pass for them is then left out where there is none);
    # where they are too many for the scanner's hit budget, the markers alone
    literals, patterns = _needles()
    every = literals + patterns
    found = needles.find_all(data, (*every, WARN), 0, end, keep=(WARN,), probe=(CHANNEL,))
    if found is None and needles.available():
        found = needles.find_all(data, every, 0, end)
    half = MAX_MARKED_LINES // 2
    marked: set[int] = set()
    for marker in every:
        # (a marker's hits come in order: its first and last halves are kept as they come, never a set of them all)
        first: list[int] = []
        last: deque[int] = deque(maxlen=half)
        pos = 0
        hits = None if found is None else found[marker]
        while (hit := _find(data, marker, pos, end) if hits is None else needles.next_hit(hits, pos)) >= 0:
            start = max(data.rfind(b"\n", max(0, hit - MAX_LINE_BYTES), hit) + 1, hit - MAX_LINE_BYTES // 2, 0)
            (first if len(first) < half else last).append(start)
            stop = data.find(b"\n", hit, end)
            pos = end if stop < 0 else stop + 1
        marked.update(first)
        marked.update(last)
        if len(marked) > 2 * MAX_MARKED_LINES:
            ordered = sorted(marked)
            marked = set(ordered[:half] + ordered[-half:])
    ordered = sorted(marked)
    if len(ordered) > MAX_MARKED_LINES:
        if notes is not None:
            # (the lines between the last of the first half and the first of the last, 1-based)
            first_cut = _newlines(data, 0, ordered[half - 1]) + 2
            last_cut = first_cut + _newlines(data, ordered[half - 1], ordered[-half]) - 2
            notes.append(f"{path}: lines {first_cut:,}-{last_cut:,} not read: more than {MAX_MARKED_LINES:,} of "
                         f"its lines hold a word the large-log reader looks for (error, time, ...); the first and "
                         f"the last {half:,} of them were read")
        ordered = ordered[:half] + ordered[-half:]
    starts = _context(data, end, ordered)
    spans = []
    for start in sorted(starts):
        stop = data.find(b"\n", start, min(end, start + MAX_LINE_BYTES))
        spans.append((start, min(end, start + MAX_LINE_BYTES) if stop < 0 else stop))
    return spans


def _context(data: Buffer, end: int, marked: list[int]) -> set[int]:
    """The starts of the ``marked`` lines (ascending) and of the lines kept around them, in this order while the
    excerpt holds fewer than MAX_MARKED_LINES lines: the first and the last BLOCK_ENDS lines that hold a code's box
    or block (BLOCK_MARKERS) with BLOCK_BEFORE lines above and BLOCK_AFTER below (these whatever the count), the
    CONTEXT_LINES after each marked line, then the other blocks' lines; the last two from both ends of the log
    inwards. Context never pushes a marked line out: a log of thousands of block lines (a code's warning phrase
    repeated) keeps every marked line, its middle's included."""
    starts = set(marked)
    blocks = [start for start in marked if _block().search(data, start, _line_end(data, start, end)) is not None]
    ends = blocks if len(blocks) <= 2 * BLOCK_ENDS else blocks[:BLOCK_ENDS] + blocks[-BLOCK_ENDS:]
    for start in ends:
        _widen(data, end, start, BLOCK_BEFORE, BLOCK_AFTER, starts, None)
    for start in _ends_first(marked):
        if len(starts) >= MAX_MARKED_LINES:
            return starts
        _widen(data, end, start, 0, CONTEXT_LINES, starts, MAX_MARKED_LINES)
    for start in _ends_first(blocks[BLOCK_ENDS:-BLOCK_ENDS] if len(blocks) > 2 * BLOCK_ENDS else []):
        if len(starts) >= MAX_MARKED_LINES:
            break
        _widen(data, end, start, BLOCK_BEFORE, BLOCK_AFTER, starts, MAX_MARKED_LINES)
    return starts


def _widen(data: Buffer, end: int, start: int, before: int, after: int, starts: set[int], limit: int | None) -> None:
    """Add to ``starts`` the ``before`` lines above the line at ``start`` and the ``after`` below it (while ``starts``
    holds fewer than ``limit``; a block's head above first, then its message below)."""
    back = start
    for _ in range(before):
        if back <= 0 or (limit is not None and len(starts) >= limit):
            break
        back = data.rfind(b"\n", 0, back - 1) + 1
        starts.add(back)
    pos = _line_end(data, start, end) + 1
    for _ in range(after):
        if pos >= end or (limit is not None and len(starts) >= limit):
            break
        starts.add(pos)
        pos = _line_end(data, pos, end) + 1


def _line_end(data: Buffer, start: int, end: int) -> int:
    stop = data.find(b"\n", start, end)
    return end if stop < 0 else stop


def _ends_first(items: list[int]) -> Iterator[int]:
    """The last item, the first, the last but one, the second, ...: the ends of a log before its middle."""
    low, high = 0, len(items) - 1
    while low <= high:
        yield items[high]
        if low < high:
            yield items[low]
        low, high = low + 1, high - 1


def _newlines(data: Buffer, start: int, stop: int) -> int:
    """The newlines in ``data[start:stop]`` (counted in pieces: a mapped GB is never one bytes object)."""
    count, piece = 0, 16 << 20
    for at in range(start, stop, piece):
        count += data[at:min(stop, at + piece)].count(b"\n")
    return count


def _find(data: Buffer, marker: bytes, start: int, end: int) -> int:
    """``data.find(marker, start, end)`` (a pattern's first match), the fastest way for this marker, keeping no page
    resident: a pattern of one key (triage.parsing.needles.pattern) by ``find`` of the key, ``re`` checking each hit
    (sre would try a pattern that opens with a class at every byte)."""
    if marker in _PIVOT:
        return pages.find(data, marker, start, end, _PIVOT[marker])
    keys = needles.keys(marker)
    if len(keys) == 1:
        (key, offset), width, regex = keys[0], needles.width(marker), _regex(marker)
        pos = start + offset
        while (hit := pages.find(data, key, pos, end)) >= 0 and hit - offset + width <= end:
            if regex.match(data, hit - offset, hit - offset + width):
                return hit - offset
            pos = hit + 1
        return -1
    match = pages.search(_regex(marker), data, start, end)
    return -1 if match is None else match.start()


@functools.cache
def _regex(marker: bytes) -> re.Pattern[bytes]:
    return re.compile(marker if marker in _needles()[1] else re.escape(marker))


def scan_large_log(data: Buffer, path: str, scan: LogScan, default_rank: int | None = None) -> None:
    """Fold a large log into ``scan`` (see the module docstring)."""
    # the NCCL reader first: its communicator pass finds the markers (and the NCCL WARN lines it wants, and
    # whether there is a channel line) in the bytes it reads, while they are in memory; the marker pass below
    # then reads only what that pass did not (one pass over the file where there were two)
    literals, patterns = _needles()
    needles.ride_along(data, (*literals, *patterns, WARN), probe=(CHANNEL,))
    nccl = nccl_tracker(data)
    pages.drop(data, 0, len(data))      # (what that pass left mapped: the excerpt is built on top of it otherwise)
    size = len(data)
    tail = max(0, size - TAIL_BYTES)
    if tail:
        newline = data.find(b"\n", tail)
        tail = size if newline < 0 else newline + 1
    pieces = [bytes(data[start:stop]) for start, stop in _spans(data, tail, path, scan.skipped)]
    pieces.append(bytes(data[tail:]))
    excerpt = decoded(b"\n".join(pieces))
    scan_log_text(excerpt, path, scan, default_rank, nccl_source=data, nccl=nccl)
