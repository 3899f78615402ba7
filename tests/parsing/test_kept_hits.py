"""Hits one pass keeps for a later reader of the same mapping (triage.parsing.needles.kept): the large
log's marker pass finds the NCCL WARN lines too, and the NCCL reader takes them instead of a pass of
its own. What it is given is what its own search finds, on any range the kept pass covered; elsewhere
(another range, another needle, bytes, another mapping) it searches itself."""

from __future__ import annotations

import mmap
import random
from pathlib import Path

import pytest

from tests.helpers.report import bytes_find_all
from triage.load.logs import large
from triage.parsing import needles, pages
from triage.parsing.nccl import bulk

pytestmark = pytest.mark.skipif(not needles.available(), reason="the hyperscan package is not installed here")


def _log(seed: int) -> bytes:
    rnd = random.Random(seed)
    words = [b"NCCL WARN", b"NCCL WARN NCCL WARN", b"NCCL", b"WARN", b"NCCL WAR", b"CUDA error", b"x" * 30, b"\n",
             b"\r\n", b"\n\n", b"\x00"]
    return b"h:1:2 [0] " + b" ".join(rnd.choice(words) for _ in range(30_000)) + b" NCCL WARN"   # no newline


@pytest.mark.parametrize("window", [4096, 1 << 20])
@pytest.mark.parametrize("seed", range(3))
def test_the_warn_lines_from_the_marker_pass_are_those_the_nccl_reader_finds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, window: int) -> None:
    monkeypatch.setattr(pages, "WINDOW", window)
    data = _log(seed)
    path = tmp_path / "nccl.log"
    path.write_bytes(data)
    size = len(data)
    ranges = [(0, size), (0, size - 5), (9, size // 2), (size // 3, size - 1), (size - 20, size)]
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        own = {span: bulk._warn_lines(mapped, *span) for span in ranges}
        assert needles.kept(mapped, bulk.WARN, 0, size) is None      # nothing kept yet: its own search
        large._spans(mapped, size)                                   # the marker pass keeps the WARN hits
        for start, end in ranges:
            assert needles.kept(mapped, bulk.WARN, start, end) == bytes_find_all(data, bulk.WARN, start, end)
            assert bulk._warn_lines(mapped, start, end) == own[(start, end)], (start, end)
        assert sum(len(spans) for spans in own.values()) > 100
        assert needles.kept(mapped, b"CUDA error", 0, size) is None     # a needle not kept
    assert needles.kept(data, bulk.WARN, 0, size) is None               # bytes: nothing is kept for them


def test_a_range_the_pass_did_not_cover_is_searched_again(tmp_path: Path) -> None:
    data = _log(7)
    path = tmp_path / "nccl.log"
    path.write_bytes(data)
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        assert needles.find_all(mapped, (bulk.WARN,), 100, 5000, keep=(bulk.WARN,)) is not None
        assert needles.kept(mapped, bulk.WARN, 100, 5000) == bytes_find_all(data, bulk.WARN, 100, 5000)
        assert needles.kept(mapped, bulk.WARN, 99, 5000) is None
        assert needles.kept(mapped, bulk.WARN, 100, 5001) is None
        assert bulk._warn_lines(mapped, 0, len(data)) == bulk._warn_lines(data, 0, len(data))
