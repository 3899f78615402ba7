"""triage.parsing.pages: windowed find/search over a mapped file give what the plain calls give,
and a pass over a mapping larger than a window does not keep it all resident."""

from __future__ import annotations

import mmap
import re
from pathlib import Path

import pytest

from triage.parsing import pages

PATTERN = re.compile(rb" comm (?!(?:0xaaa|0xbbbbbbbb)[ \r\n])(\S+)")


def _mapped(tmp_path: Path, data: bytes) -> tuple[object, mmap.mmap]:
    path = tmp_path / "log"
    path.write_bytes(data)
    handle = open(path, "rb")  # noqa: SIM115 (closed by the caller)
    return handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)


@pytest.fixture
def small_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pages, "WINDOW", 4096)
    monkeypatch.setattr(pages, "OVERLAP", 64)


def _log() -> bytes:
    """Hits on and across every window edge, an excluded pointer right at an edge, long gaps."""
    parts = []
    for i in range(400):
        parts.append(b"x" * (i * 37 % 5000))
        parts.append(b" comm 0xaaa \n" if i % 3 == 0 else b" comm 0x%x rror\n" % i)
        parts.append(b"NCCL WARN %d\n" % i if i % 7 == 0 else b"")
    return b"".join(parts)


@pytest.mark.usefixtures("small_windows")
def test_windowed_passes_find_every_hit_the_plain_calls_find(tmp_path: Path) -> None:
    data = _log()
    handle, mapped = _mapped(tmp_path, data)
    try:
        for needle in (b"rror", b"NCCL WARN", b"comm 0xaaa", b"absent"):
            plain, windowed, pos = [], [], 0
            while (hit := data.find(needle, pos, len(data))) >= 0:
                plain.append(hit)
                pos = hit + 1
            pos = 0
            while (hit := pages.find(mapped, needle, pos, len(data))) >= 0:
                windowed.append(hit)
                pos = hit + 1
            assert windowed == plain, needle
        plain_matches = [(m.start(), m.group(1)) for m in PATTERN.finditer(data)]
        found, pos = [], 0
        while (match := pages.search(PATTERN, mapped, pos, len(data))) is not None:
            found.append((match.start(), match.group(1)))
            pos = match.end()
        assert found == plain_matches and found
    finally:
        mapped.close()
        handle.close()  # type: ignore[attr-defined]


def test_bytes_are_searched_as_they_are() -> None:
    data = b"a comm 0x1 b rror"
    assert pages.find(data, b"rror", 0, len(data)) == data.find(b"rror")
    match = pages.search(PATTERN, data, 0, len(data))
    assert match is not None and match.group(1) == b"0x1"


def _rss_kib() -> int:
    status = Path("/proc/self/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0])


def test_a_pass_releases_the_pages_it_has_read(tmp_path: Path) -> None:
    size = 6 * pages.WINDOW // 2 + 12345          # three windows and a bit, no hit
    path = tmp_path / "big"
    with open(path, "wb") as out:
        out.truncate(size)                         # sparse zeros: no disk used
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        before = _rss_kib()
        assert pages.find(mapped, b"rror", 0, size) == -1
        after_windowed = _rss_kib()
        assert mapped.find(b"rror") == -1          # the plain call keeps every page it read
        after_plain = _rss_kib()
    assert after_windowed - before < (pages.WINDOW + (8 << 20)) // 1024
    assert after_plain - before > (2 * pages.WINDOW) // 1024


def _all_hits(find: object, data: object, needle: bytes, size: int) -> list[int]:
    hits, pos = [], 0
    while (hit := find(data, needle, pos, size)) >= 0:  # type: ignore[operator]
        hits.append(hit)
        pos = hit + 1
    return hits


@pytest.mark.usefixtures("small_windows")
@pytest.mark.parametrize("dense", [4096, 1 << 40])
def test_a_pivot_search_finds_every_hit_the_plain_search_finds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               dense: int) -> None:
    """memchr on a rare byte of the needle, then a compare: the same hits as ``bytes.find``, on and
    across window edges, at the very start and end, with false pivot hits and near misses, and
    where the byte turns out to be common (a huge ``DENSE``: the plain search takes over after 16
    pivot hits, mid-window)."""
    monkeypatch.setattr(pages, "DENSE", dense)
    parts = [b"NCCL WARN at the start\n"]
    for i in range(300):
        parts.append(b"x" * (i * 53 % 4200))
        parts.append((b"W NCCL WAR W NCCL WARNING\n", b"node NCCL WARN %d\n" % i, b"WWWW\n")[i % 3])
    parts.append(b"y" * (4096 - (sum(map(len, parts)) + 4) % 4096))
    parts.append(b"NCCL WARN")                   # straddles a window edge
    parts.append(b" z\nNCCL WARN")               # and ends the data
    data = b"".join(parts)
    handle, mapped = _mapped(tmp_path, data)
    try:
        for needle, pivot in ((b"NCCL WARN", 5), (b"NCCL WARN", 0), (b"NCCL", 0), (b"WARN", 0), (b"absent", 2)):
            plain = _all_hits(lambda d, n, s, e: d.find(n, s, e), data, needle, len(data))
            for buffer in (mapped, data):
                found = _all_hits(lambda d, n, s, e, p=pivot: pages.find(d, n, s, e, p), buffer, needle, len(data))
                assert found == plain, (needle, pivot, type(buffer))
        assert pages.find(data, b"NCCL WARN", 1, len(data) - 3, 5) == data.find(b"NCCL WARN", 1, len(data) - 3)
        assert pages.find(mapped, b"NCCL WARN", 50, 40, 5) == -1
        edge = b"x" + b"W" * 17 + b"ARN"    # the plain search takes over one byte before its pivot's
        assert pages.find(edge, b"WWARN", 0, len(edge), 1) == edge.find(b"WWARN") == 16
    finally:
        mapped.close()
        handle.close()  # type: ignore[attr-defined]


def test_a_range_shorter_than_the_needle_holds_no_match_on_bytes_as_on_a_map() -> None:
    # a bound below the needle's length went negative, and bytes.find counted it from the end
    data = b"x" * 40 + b"host:1:2 [0] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed\n" + b"y" * 40
    for start, end in ((0, 0), (3, 7), (len(data), len(data))):
        assert pages.find(data, b"NCCL WARN", start, end, pivot=5) == -1
        assert pages._pivot_find(data, b"NCCL WARN", start, end, 5) == -1
    at = data.find(b"NCCL WARN")
    assert pages.find(data, b"NCCL WARN", 0, len(data), pivot=5) == at
    assert pages.find(data, b"NCCL WARN", at, at + 9, pivot=5) == at
