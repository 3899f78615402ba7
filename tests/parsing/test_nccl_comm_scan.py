"""The hyperscan prefilter of the NCCL communicator pass (triage.parsing.nccl.comm_scan) answers what
sre's look-ahead search answers, and the bulk read gives the same tracker with and without it: random
logs with pointers that share prefixes, are prefixes of each other, end the log, are followed by a tab,
CR, NUL or nothing, across chunk edges, while the excluded set grows; and the real-world corpus."""

from __future__ import annotations

import mmap
import random
from pathlib import Path

import pytest

from tests.realworld.scoring import load_cases
from triage.parsing import needles, pages
from triage.parsing.nccl import bulk as nccl_bulk
from triage.parsing.nccl import comm_scan
from triage.parsing.nccl import tracker as nccl_tracker
from triage.parsing.nccl.tracker import NcclTracker

pytestmark = pytest.mark.skipif(not needles.available(), reason="the hyperscan package is not installed here")
POINTERS = [b"0x55d0c3a00000", b"0x55d0c3a0000", b"0x55d0c3a01000", b"0x7f", b"0x7f0", b"0xab", b"0x55d0c4a00000"]


def _log(seed: int) -> bytes:
    rnd = random.Random(seed)
    ends = [b" ", b"\n", b"\r\n", b"\t", b"\x00", b" [nranks=8]\n", b"\x0b", b""]
    parts = []
    for _ in range(3000):
        head = rnd.choice([b"n0:1:2 [0] NCCL INFO AllReduce: opCount 1 comm", b"x comm", b"comm", b" comm  comm",
                           b"commcomm"])
        parts.append(head + b" " + rnd.choice(POINTERS) + rnd.choice(ends) + rnd.choice([b"", b"pad " * 20]))
    return b"".join(parts) + rnd.choice([b"", b" comm 0x7f", b" comm 0x55d0c3a0000", b" comm 0x7f0\n"])


def _sre_all(data: bytes, excluded_steps: list[set[bytes]], end: int) -> list[tuple[int, bytes]]:
    return _walk(data, excluded_steps, end, None)


def _walk(data: bytes | mmap.mmap, excluded_steps: list[set[bytes]], end: int,
          finder: comm_scan.CommFinder | None) -> list[tuple[int, bytes]]:
    """Every answer of a pass that moves past each match and grows its excluded set as it goes."""
    out: list[tuple[int, bytes]] = []
    excluded: set[bytes] = set(excluded_steps[0])
    pos, step = 0, 0
    while True:
        pattern = nccl_bulk._scan_regex(excluded, spaced=True)
        if finder is None:
            match = pattern.search(data, pos, end)
            found = None if match is None else (match.start(), match.group(1))
        else:
            found = finder.find(pos, excluded)
            assert not finder.failed
        if found is None:
            return out
        out.append(found)
        pos = found[0] + 1
        step += 1
        if step % 50 == 0 and step // 50 < len(excluded_steps):
            excluded |= excluded_steps[step // 50]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("chunk", [64, 1000, 1 << 20])
def test_the_prefilter_finds_what_the_look_ahead_search_finds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              seed: int, chunk: int) -> None:
    monkeypatch.setattr(comm_scan, "CHUNK", chunk)
    monkeypatch.setattr(pages, "WINDOW", 4096)
    data = _log(seed)
    rnd = random.Random(seed)
    steps = [set(rnd.sample(POINTERS, k)) for k in (0, 1, 2, 3, 5)]
    path = tmp_path / "log"
    path.write_bytes(data)
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        for end in (len(data), len(data) - 1, len(data) // 2):
            expected = _sre_all(data, steps, end)
            finder = comm_scan.CommFinder.start(mapped, end)
            assert finder is not None
            assert _walk(mapped, steps, end, finder) == expected, end
            assert expected


def test_an_excluded_set_too_large_for_the_prefilter_gives_way(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(comm_scan, "MAX_TRIE_NODES", 5)
    finder = comm_scan.CommFinder.start(b"x comm 0x55d0c3a00000 y", 23)
    assert finder is not None
    excluded = {b"0x55d0c3a00000"}
    assert finder.find(0, excluded) is None and finder.failed


def _summary(tracker: NcclTracker) -> list[tuple[object, ...]]:
    return sorted((s.host, s.pid, s.comm, s.rank, s.nranks, s.global_rank, s.comm_id, s.last, s.ops_seen,
                   s.history, s.first) for s in tracker.last_ops())


def _nccl_log() -> bytes:
    """Busy comms, comms that go quiet early and late, one that only starts near the end, CRLF lines."""
    lines = [f"n0:{100 + r}:{100 + r} [{r}] NCCL INFO ncclCommInitRank comm 0x5{r:03x}0 rank {r} nranks 4 cudaDev {r} "
             f"busId {r}b000 commId 0x9e - Init COMPLETE" for r in range(4)]
    for i in range(6000):
        r = i % 4
        comm = f"0x5{r:03x}0" if i < 5000 or r < 2 else f"0x6{r:03x}0"
        lines.append(f"n0:{100 + r}:{101 + r} [{r}] NCCL INFO AllReduce: opCount {i // 4:x} sendbuff 0x1 recvbuff 0x1 "
                     f"count 8 datatype 7 op 0 root 0 comm {comm} [nranks=4] stream 0x1")
        if i == 3000:
            lines.append("n0:103:104 [3] transport/net.cc:1 NCCL WARN NET/IB : Got completion with status=12")
    text = "\n".join(lines[:4000]) + "\r\n" + "\r\n".join(lines[4000:])
    return text.encode()


@pytest.mark.parametrize("source", ["generated", "corpus"])
def test_the_bulk_read_gives_the_same_tracker_with_and_without_hyperscan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> None:
    monkeypatch.setattr(pages, "WINDOW", 4096)
    monkeypatch.setattr(pages, "OVERLAP", 256)
    monkeypatch.setattr(comm_scan, "CHUNK", 3000)
    monkeypatch.setattr(nccl_tracker, "BULK_MIN_BYTES", 0)
    monkeypatch.setattr(nccl_bulk, "TAIL_BYTES", 2048)
    datas = [_nccl_log()] if source == "generated" else [c.log.read_bytes() for c in load_cases()]
    checked = 0
    for index, data in enumerate(datas):
        if b"NCCL" not in data:
            continue
        path = tmp_path / f"{index}.log"
        path.write_bytes(data)
        with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            fast = NcclTracker(16)
            fast.feed_bytes(mapped)
            with monkeypatch.context() as plain:
                plain.setattr(needles, "_hs", None)
                slow = NcclTracker(16)
                slow.feed_bytes(mapped)
        assert _summary(fast) == _summary(slow), index
        assert [w.message for w in fast.warnings()] == [w.message for w in slow.warnings()], index
        assert fast.bulk_fallbacks == slow.bulk_fallbacks, index
        checked += 1
    assert checked >= (1 if source == "generated" else 10)
