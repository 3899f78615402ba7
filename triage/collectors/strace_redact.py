"""Redaction of strace output across system calls (docs/security.md, "Secrets split across calls").

A rank that writes a secret in several ``write()`` calls shows up in strace as several lines, each
with a piece: the per-line rules of :mod:`triage.redact` see ``-----BEGIN ... KEY-----`` in one line
and a bare base64 line in the next, and miss the later pieces. This pass reads the payload strings
of the calls that move a process's bytes (write/read/send/recv and their vector forms) as one
stream per (file descriptor, direction), and:

- **PEM blocks:** after a ``-----BEGIN ...-----`` marker (even one split over two calls) every
  following payload on that stream is redacted until ``-----END`` or a payload that is not base64;
- **any other rule** (a token, ``password=...``, an ``Authorization:`` header split over calls):
  each window of consecutive payloads of a stream (at least :data:`WINDOW` calls and
  :data:`WINDOW_CHARS` characters, so a token written a byte at a time is seen whole) is joined and
  redacted; what the rules change in the joined text is redacted in the pieces it came from.

The syscall structure (time, pid, call, fd, return value) is kept; only payload characters change.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from triage.collectors.redact import REDACTED, redact_text, redaction_enabled
from triage.lazy_regex import lazy_regex

WINDOW = 4
WINDOW_CHARS = 256
_OUT = frozenset({"write", "pwrite64", "writev", "pwritev", "pwritev2", "send", "sendto", "sendmsg", "sendmmsg"})
_IN = frozenset({"read", "pread64", "readv", "preadv", "preadv2", "recv", "recvfrom", "recvmsg", "recvmmsg"})
_PID = lazy_regex(r"^\[pid\s+(\d+)\]")
_CALL = lazy_regex(r"(?:^|\s)([a-z0-9_]+)\((\d+)[,<]")
_RESUMED = lazy_regex(r"<\.\.\. ([a-z0-9_]+) resumed>")
_STRING = lazy_regex(r'"((?:[^"\\\n]|\\.)*)"')
_BEGIN = lazy_regex(r"-----BEGIN [A-Z0-9 ]{1,64}-----")
_END = "-----END "
_NOT_BODY = lazy_regex(r"(?:[^A-Za-z0-9+/= \t\\]|\\[^rnt])")    # base64, blanks and \n \r \t escapes


@dataclass
class _Piece:
    line: int
    start: int            # offset of the payload (inside its quotes) in the line
    text: str
    hidden: list[tuple[int, int]] = field(default_factory=list)   # ranges of text to redact


def _stream_key(line: str, last_fd: dict[tuple[str, str], str]) -> tuple[str, str] | None:
    pid_match = _PID.match(line)
    pid = pid_match.group(1) if pid_match else ""
    resumed = _RESUMED.search(line)
    if resumed:
        call = resumed.group(1)
        fd = last_fd.get((pid, call))
    else:
        found = _CALL.search(line)
        if found is None:
            return None
        call, fd = found.group(1), found.group(2)
        last_fd[(pid, call)] = fd
    if fd is None or (call not in _OUT and call not in _IN):
        return None
    return fd, "out" if call in _OUT else "in"


def _pieces(lines: list[str]) -> dict[tuple[str, str], list[_Piece]]:
    streams: dict[tuple[str, str], list[_Piece]] = {}
    last_fd: dict[tuple[str, str], str] = {}
    for number, line in enumerate(lines):
        key = _stream_key(line, last_fd)
        if key is None:
            continue
        for match in _STRING.finditer(line):
            streams.setdefault(key, []).append(_Piece(number, match.start(1), match.group(1)))
    return streams


def _body_end(text: str, start: int) -> int:
    """Where a key body that runs from ``start`` ends in ``text``: its END marker, else the first
    character no base64 body holds (len(text) when the whole rest looks like body)."""
    end = text.find(_END, start)
    stop = _NOT_BODY.search(text, start, end if end >= 0 else len(text))
    if stop is not None:
        return stop.start()
    return end if end >= 0 else len(text)


def _mark_pem(pieces: list[_Piece]) -> None:
    """Hide a key body after a BEGIN marker until END (or until a payload that is not base64: the
    body was cut by strace and the stream went on), across the pieces of one stream."""
    inside = False
    tail = ""
    for piece in pieces:
        if inside:
            end = _body_end(piece.text, 0)
            piece.hidden.append((0, end))
            inside = end == len(piece.text)
        joined = tail + piece.text
        for begin in _BEGIN.finditer(joined):
            after = max(begin.end() - len(tail), 0)
            end = _body_end(piece.text, after)
            piece.hidden.append((after, end))
            inside = end == len(piece.text)
        tail = joined[-80:]


def _changed(text: str, redacted: str) -> list[tuple[int, int]]:
    """The ranges of ``text`` the rules replaced by REDACTED; when they cannot be told apart, one range
    from the first change to the last (all but the common prefix and suffix: errs on hiding)."""
    if text == redacted:
        return []
    exact = _replaced(text, redacted)
    if exact is not None:
        return exact
    prefix = 0
    limit = min(len(text), len(redacted))
    while prefix < limit and text[prefix] == redacted[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and text[-1 - suffix] == redacted[-1 - suffix]:
        suffix += 1
    return [(prefix, len(text) - suffix)]


def _replaced(text: str, redacted: str) -> list[tuple[int, int]] | None:
    """Align ``redacted`` on ``text``: each REDACTED stands for the text up to where the rest matches
    again. None unless the ranges found rebuild ``redacted`` exactly."""
    ranges: list[tuple[int, int]] = []
    i = j = 0
    while j < len(redacted):
        if redacted.startswith(REDACTED, j) and not text.startswith(REDACTED, i):
            rest = redacted[j + len(REDACTED):j + len(REDACTED) + 12]
            end = text.find(rest, i) if rest else len(text)
            if end < 0:
                return None
            ranges.append((i, end))
            i, j = end, j + len(REDACTED)
        elif i < len(text) and text[i] == redacted[j]:
            i, j = i + 1, j + 1
        else:
            return None
    if i != len(text):
        return None
    rebuilt, position = [], 0
    for low, high in ranges:
        rebuilt.append(text[position:low] + REDACTED)
        position = high
    return ranges if "".join(rebuilt) + text[position:] == redacted else None


def _mark_windows(pieces: list[_Piece]) -> None:
    for first in range(max(len(pieces) - 1, 0)):
        last, size = first, 0
        while last < len(pieces) and (last - first < WINDOW or size < WINDOW_CHARS):
            size += len(pieces[last].text)
            last += 1
        window = pieces[first:last]
        # PEM blocks are _mark_pem's (the rule would run on past a body that strace cut): same length
        joined = "".join(piece.text for piece in window).replace("-----BEGIN ", "-----BEG!N ")
        for changed in _changed(joined, redact_text(joined)):
            offset = 0
            for piece in window:
                low, high = max(changed[0] - offset, 0), min(changed[1] - offset, len(piece.text))
                if low < high:
                    piece.hidden.append((low, high))
                offset += len(piece.text)


def _apply(piece: _Piece) -> str:
    merged: list[list[int]] = []
    for low, high in sorted(piece.hidden):
        if merged and low <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], high)
        elif low < high:
            merged.append([low, high])
    out: list[str] = []
    position = 0
    for low, high in merged:
        out.append(piece.text[position:low] + REDACTED)
        position = high
    out.append(piece.text[position:])
    return "".join(out)


def redact_strace(text: str) -> str:
    """strace output with secrets split across the calls of one stream redacted (the per-line rules
    still run when the file is written)."""
    if not text or not redaction_enabled():
        return text
    lines = text.split("\n")
    edits: dict[int, list[tuple[_Piece, str]]] = {}
    for pieces in _pieces(lines).values():
        _mark_pem(pieces)
        _mark_windows(pieces)
        for piece in pieces:
            if piece.hidden:
                edits.setdefault(piece.line, []).append((piece, _apply(piece)))
    for number, changes in edits.items():
        line = lines[number]
        for piece, new in sorted(changes, key=lambda change: -change[0].start):
            line = line[:piece.start] + new + line[piece.start + len(piece.text):]
        lines[number] = line
    return "\n".join(lines)
