"""Turn a rank's raw byte stream into tagged records (the merged-log / console format).

A record is ``[host:rank]`` + SEP + SEGMENT + ``\\n`` where SEGMENT holds no newline and SEP is

- a space when the segment ended with a newline in the source (a whole line), or
- ``+`` when it did not: a partial line flushed because it grew past ``max_partial`` bytes
  (1 MiB), sat idle for ``idle_flush`` seconds (a ``\\r`` progress bar), or the stream ended.

So a rank's source bytes are ``concat(segment + ("\\n" if sep == " " else ""))`` over its
records, in order. Tagging works on whole chunks with ``bytes.replace`` (no per-line loop).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

Chunk = bytes | memoryview
MAX_PARTIAL = 1 << 20
IDLE_FLUSH_S = 1.0
_RECORD = re.compile(rb"^\[([^\]\n]*):([^\]\n:]*)\]([ +])", re.MULTILINE)


class Tagger:
    """Stateful per-stream tagger. ``feed`` returns (tagged pieces, whole-line raw bytes)."""

    def __init__(self, tag: str, max_partial: int = MAX_PARTIAL) -> None:
        self.tag = f"[{tag}]".encode()
        self._whole = self.tag + b" "
        self._nl_whole = b"\n" + self._whole
        self._partial_prefix = self.tag + b"+"
        self.max_partial = max_partial
        self.pending = b""
        self.pending_since = 0.0

    def feed(self, data: bytes, now: float = 0.0) -> tuple[list[Chunk], bytes]:
        """Tag the whole lines in ``pending + data``; keep the rest pending (flushed when too long).

        Returns (tagged pieces to write in order, the whole lines' raw bytes). The pieces avoid
        copying big buffers: joining them is the tagged text.
        """
        if not data:
            return [], b""
        cut = data.rfind(b"\n")
        if cut < 0:
            if not self.pending:
                self.pending_since = now
            self.pending += data
            if len(self.pending) >= self.max_partial:
                return [self.flush_partial()], b""
            return [], b""
        whole = data if cut == len(data) - 1 else data[:cut + 1]
        if self.pending:
            whole = self.pending + whole
        rest = data[cut + 1:]
        self.pending = rest
        self.pending_since = now
        # whole ends with b"\n": tag every "\n", then leave out the tag after the last one
        tagged = whole.replace(b"\n", self._nl_whole)
        pieces: list[Chunk] = [self._whole, memoryview(tagged)[:-len(self._whole)]]
        if len(rest) >= self.max_partial:
            pieces.append(self.flush_partial())
        return pieces, whole

    def flush_partial(self) -> bytes:
        """Emit the pending partial line as a ``+`` record (idle, too long, or end of stream)."""
        if not self.pending:
            return b""
        out = self._partial_prefix + self.pending + b"\n"
        self.pending = b""
        return out

    def idle_flush(self, now: float, idle: float = IDLE_FLUSH_S) -> bytes:
        if self.pending and now - self.pending_since >= idle:
            return self.flush_partial()
        return b""


def iter_records(merged: bytes) -> Iterator[tuple[str, str, bool, bytes]]:
    """(host, rank, whole_line, segment) for each record of a merged log or console capture.

    Lines that are not records (e.g. triage's own messages) are skipped.
    """
    for line in merged.split(b"\n")[:-1] if merged.endswith(b"\n") else merged.split(b"\n"):
        match = _RECORD.match(line)
        if match is None:
            continue
        host, rank, sep = match.group(1), match.group(2), match.group(3)
        yield host.decode(), rank.decode(), sep == b" ", line[match.end():]


def reconstruct(merged: bytes, host: str, rank: str) -> bytes:
    """The source byte stream of one ``host:rank`` from a merged log (inverse of tagging)."""
    return b"".join(_source_bytes(r) for r in iter_records(merged) if r[0] == host and r[1] == rank)


def _source_bytes(record: tuple[str, str, bool, bytes]) -> bytes:
    return record[3] + b"\n" if record[2] else record[3]


def reconstruct_all(records: Iterable[tuple[str, str, bool, bytes]]) -> dict[tuple[str, str], bytes]:
    out: dict[tuple[str, str], list[bytes]] = {}
    for rec in records:
        out.setdefault((rec[0], rec[1]), []).append(_source_bytes(rec))
    return {key: b"".join(parts) for key, parts in out.items()}
