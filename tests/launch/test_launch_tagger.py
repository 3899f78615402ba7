"""Unit tests of the record format: tagging, partial lines, reconstruction."""

from __future__ import annotations

import os

from tests.helpers.tagged import iter_records, reconstruct
from triage.agent.launch.tagger import Tagger


def _tag_stream(chunks: list[bytes], max_partial: int = 1 << 20) -> bytes:
    tagger = Tagger("h:3", max_partial=max_partial)
    out = b"".join(b"".join(tagger.feed(c, 0.0)[0]) for c in chunks)
    return out + tagger.flush_partial()


def test_whole_lines_are_tagged_with_a_space() -> None:
    out = _tag_stream([b"a\nb", b"c\n\n"])
    assert out == b"[h:3] a\n[h:3] bc\n[h:3] \n"


def test_feed_returns_whole_lines_raw() -> None:
    tagger = Tagger("h:0")
    tagged, whole = tagger.feed(b"x\ny\npart", 0.0)
    assert whole == b"x\ny\n"
    assert b"".join(tagged) == b"[h:0] x\n[h:0] y\n"
    assert tagger.pending == b"part"


def test_partial_line_at_end_is_a_plus_record() -> None:
    out = _tag_stream([b"line\nno newline"])
    assert out == b"[h:3] line\n[h:3]+no newline\n"
    assert reconstruct(out, "h", "3") == b"line\nno newline"


def test_long_line_is_flushed_in_pieces_and_rebuilt() -> None:
    data = b"x" * 5000 + b"\nend"
    out = _tag_stream([data[i:i + 700] for i in range(0, len(data), 700)], max_partial=1024)
    records = list(iter_records(out))
    assert all(len(r[3]) <= 1024 + 700 for r in records)
    assert any(not r[2] for r in records)
    assert reconstruct(out, "h", "3") == data


def test_idle_partial_line_is_flushed_after_a_second() -> None:
    tagger = Tagger("h:1")
    assert tagger.feed(b"50%\r", 10.0) == ([], b"")
    assert tagger.idle_flush(10.5) == b""
    assert tagger.idle_flush(11.0) == b"[h:1]+50%\r\n"
    tagged, _ = tagger.feed(b"100%\n", 12.0)
    assert b"".join(tagged) == b"[h:1] 100%\n"


def test_binary_bytes_round_trip() -> None:
    data = os.urandom(200_000)
    out = _tag_stream([data[i:i + 4096] for i in range(0, len(data), 4096)], max_partial=8192)
    assert reconstruct(out, "h", "3") == data


def test_interleaved_ranks_and_foreign_lines() -> None:
    a, b = Tagger("n1:0"), Tagger("n1:1")

    def tag(t: Tagger, data: bytes) -> bytes:
        return b"".join(t.feed(data, 0)[0])

    merged = tag(a, b"a1\na2") + b"triage: a message\n" + tag(b, b"b1\n") + tag(a, b"\n")
    merged += b.flush_partial() + a.flush_partial()
    assert reconstruct(merged, "n1", "0") == b"a1\na2\n"
    assert reconstruct(merged, "n1", "1") == b"b1\n"
    assert {(h, r) for h, r, _, _ in iter_records(merged)} == {("n1", "0"), ("n1", "1")}


def test_launcher_tag_and_hosts_with_dots() -> None:
    out = _tag_stream([b"x\n"]).replace(b"[h:3]", b"[node-1.a:launcher]")
    assert list(iter_records(out)) == [("node-1.a", "launcher", True, b"x")]
