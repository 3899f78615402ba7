"""The NCCL reader's search for its first line, made in the scans that find the marker pass's needles
(triage.parsing.needles.Rider.find), with its chunks scanned ahead on threads (a large range, a CPU idle: the
communicator pass's gate and threads, triage.parsing.nccl.comm_scan): the answers of one thread, the position
found, the range covered and every needle's hits in it; on random logs with random ranges and needles, on logs
whose NCCL lines start late (the whole large-log path: its LogScan, excerpt, comms and WARN lines), and on every
corpus log. No thread is left running after a search."""

from __future__ import annotations

import mmap
import random
from pathlib import Path

import pytest

from tests.load.test_large_log_fast_paths import _variants
from tests.load.test_riding_marker_pass import NEEDLES, _late_nccl_log, _read, _written_log
from tests.parsing.test_nccl_scan_ahead import _Taken
from tests.realworld.scoring import load_cases
from triage.load.logs.records import CHANNEL
from triage.parsing import needles, pages
from triage.parsing.nccl import bulk, comm_scan
from triage.parsing.nccl import tracker as tracker_module

pytestmark = pytest.mark.skipif(not needles.available(), reason="the hyperscan package is not installed here")


@pytest.fixture
def ahead(monkeypatch: pytest.MonkeyPatch) -> _Taken:
    """Chunks scanned ahead on threads on any range, as on a machine of several CPUs."""
    monkeypatch.setattr(comm_scan, "AHEAD_FROM", 0)
    monkeypatch.setattr(comm_scan, "_threads", lambda: 3)
    return _Taken(monkeypatch)


def _search(path: Path, needle: bytes, start: int, end: int) -> tuple[int, list[tuple[int, int]], list[list[int]]]:
    """find_first's answer on a fresh mapping with a rider, the range the rider then covers, its hits."""
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        rider = needles.ride_along(mapped, NEEDLES, probe=(CHANNEL,))
        assert rider is not None
        at = needles.find_first(mapped, needle, start, end)
        return at, list(rider.intervals), [list(hits) for hits in rider._found]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("chunk", [64, 1000])
def test_a_search_with_chunks_scanned_ahead_answers_what_one_thread_answers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ahead: _Taken, seed: int, chunk: int) -> None:
    """Random starts and ends, a needle rare, dense or absent, chunks that cut lines and needles."""
    monkeypatch.setattr(pages, "WINDOW", 4096)
    monkeypatch.setattr(needles, "FIND_CHUNK", chunk)
    rnd = random.Random(seed)
    data, path = _written_log(tmp_path, seed)
    size = len(data)
    cases = [(b"absent needle", 0, size)]      # (the whole log: chunks surely taken from the threads)
    for needle in (b"NCCL", b"Channel 00/0 ", b"absent needle", b"x" * 40 + b" NCCL WARN"):
        start = rnd.choice([0, rnd.randrange(size), size - 30])
        cases.append((needle, start, rnd.choice([size, rnd.randrange(start, size + 1)])))
    for needle, start, end in cases:
        threaded = _search(path, needle, start, end)
        assert not ahead.running()
        with monkeypatch.context() as one:
            one.setattr(comm_scan, "_threads", lambda: 1)
            alone = _search(path, needle, start, end)
        assert threaded == alone, (needle, start, end)
        assert threaded[0] == data.find(needle, start, end), (needle, start, end)
    assert ahead.hits > 0


@pytest.mark.parametrize("share", [0.0, 0.3, 1.0])
def test_the_large_log_path_with_the_search_scanned_ahead_gives_the_one_thread_answers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ahead: _Taken, share: float) -> None:
    """Logs whose NCCL lines start at the first byte, a third of the way in, or never: the same LogScan, excerpt,
    comms, WARN lines and covered ranges."""
    monkeypatch.setattr(pages, "WINDOW", 4096)
    monkeypatch.setattr(pages, "OVERLAP", 256)
    monkeypatch.setattr(needles, "FIND_CHUNK", 1000)
    monkeypatch.setattr(comm_scan, "CHUNK", 1000)
    monkeypatch.setattr(tracker_module, "BULK_MIN_BYTES", 0)
    monkeypatch.setattr(bulk, "TAIL_BYTES", 2048)
    for index, data in enumerate(_variants(_late_nccl_log(share).decode())):
        path = tmp_path / f"{index}.log"
        path.write_bytes(data)
        threaded = _read(path, True, monkeypatch)
        assert not ahead.running()
        with monkeypatch.context() as one:
            one.setattr(comm_scan, "_threads", lambda: 1)
            alone = _read(path, True, monkeypatch)
        assert threaded == alone, index
    assert ahead.hits > 0


@pytest.mark.slow
def test_every_corpus_log_with_the_search_scanned_ahead_gives_the_one_thread_answers(
        monkeypatch: pytest.MonkeyPatch, ahead: _Taken) -> None:
    """Chunks of 64 bytes (the corpus's logs are a few KB; ~8 s under load)."""
    monkeypatch.setattr(pages, "WINDOW", 4096)
    monkeypatch.setattr(pages, "OVERLAP", 256)
    monkeypatch.setattr(needles, "FIND_CHUNK", 64)
    monkeypatch.setattr(comm_scan, "CHUNK", 64)
    monkeypatch.setattr(tracker_module, "BULK_MIN_BYTES", 0)
    monkeypatch.setattr(bulk, "TAIL_BYTES", 256)
    compared = 0
    for case in load_cases():
        threaded = _read(case.log, True, monkeypatch)
        with monkeypatch.context() as one:
            one.setattr(comm_scan, "_threads", lambda: 1)
            alone = _read(case.log, True, monkeypatch)
        assert threaded == alone, case.name
        compared += 1
    assert compared > 100 and ahead.hits > 0 and not ahead.running()
