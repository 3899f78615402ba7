"""Turn a rank's raw byte stream into tagged records (the merged-log / console format).

A record is ``[host:rank]`` + SEP + SEGMENT + ``\\n`` where SEGMENT holds no newline and SEP is

- a space when the segment ended with a newline in the source (a whole line), or
- ``+`` when it did not: a partial line flushed because it grew past ``max_partial`` bytes
  (1 MiB), sat idle for ``idle_flush`` seconds (a ``\\r`` progress bar), or the stream ended.

So a rank's source bytes are ``concat(segment + ("\\n" if sep == " " else ""))`` over its
records, in order. Tagging works on whole chunks with ``bytes.replace`` (no per-line loop).
"""

from __future__ import annotations

Chunk = bytes | memoryview
MAX_PARTIAL = 1 << 20
IDLE_FLUSH_S = 1.0


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
