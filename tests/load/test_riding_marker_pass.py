"""One pass over a large NCCL log where there were two: the NCCL reader's communicator pass finds the
marker pass's needles in the bytes it reads (triage.parsing.needles.ride_along), and the marker pass
reads only what it did not cover. The answers are those of the two separate passes (the riding scan
asked for nothing): the hits on any range, the NCCL reader's comms and WARN lines, the whole LogScan;
on generated logs whose windows and chunks cut lines, and on every corpus log."""

from __future__ import annotations

import dataclasses
import mmap
import random
from pathlib import Path

import pytest

from tests.helpers.report import bytes_find_all
from tests.load.test_large_log_fast_paths import OOM, WARN, _large_log, _summary, _variants
from tests.realworld.scoring import load_cases
from triage.load.logs import large
from triage.load.logs.records import CHANNEL, nccl_tracker
from triage.load.logs.scan import LogScan
from triage.parsing import needles, pages
from triage.parsing.nccl import bulk, comm_scan
from triage.parsing.nccl import tracker as tracker_module

pytestmark = pytest.mark.skipif(not needles.available(), reason="the hyperscan package is not installed here")

NEEDLES = (*large.NEEDLES, bulk.WARN)     # (the patterns too)


@pytest.fixture
def cut_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows of 4 KiB, chunks of the communicator pass of 1,000 bytes (they cut lines), NCCL's bulk
    path from the first byte with a line-by-line tail of 2 KiB."""
    monkeypatch.setattr(pages, "WINDOW", 4096)
    monkeypatch.setattr(pages, "OVERLAP", 256)
    monkeypatch.setattr(comm_scan, "CHUNK", 1000)
    monkeypatch.setattr(tracker_module, "BULK_MIN_BYTES", 0)
    monkeypatch.setattr(bulk, "TAIL_BYTES", 2048)


def _fields(scan: LogScan) -> dict[str, object]:
    """The LogScan's fields."""
    return {field.name: getattr(scan, field.name) for field in dataclasses.fields(scan)}


def _read(path: Path, ride: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[
        dict[str, object], list[tuple[int, int]], list[tuple[object, ...]], list[str], list[tuple[int, int]]]:
    """The LogScan of the large-log path, its excerpt's spans, the NCCL reader's comms and WARN lines, and
    what the riding scan covered (nothing where it was not asked)."""
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped, \
            monkeypatch.context() as patch:
        if ride:
            needles.ride_along(mapped, NEEDLES, probe=(CHANNEL,))
        else:
            patch.setattr(needles, "ride_along", lambda *_args, **_kwargs: None)
        tracker = nccl_tracker(mapped)
        spans = large._spans(mapped, len(mapped))
        rider = needles.rider(mapped)
        covered = [] if rider is None else list(rider.intervals)
        scan = LogScan()
        large.scan_large_log(mapped, str(path), scan)
    return _fields(scan), spans, _summary(tracker), [w.message for w in tracker.warnings()], covered


@pytest.mark.usefixtures("cut_windows")
@pytest.mark.parametrize("at", [0.0, 0.5, 0.97])
def test_generated_logs_read_in_one_pass_give_the_two_passes_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      at: float) -> None:
    for index, data in enumerate(d for failure in (OOM, WARN) for d in _variants(_large_log(failure, at))):
        path = tmp_path / f"{index}.log"
        path.write_bytes(data)
        riding, alone = _read(path, True, monkeypatch), _read(path, False, monkeypatch)
        assert riding[:4] == alone[:4], index
        assert alone[4] == [] and sum(high - low for low, high in riding[4]) > len(data) // 2, index
        assert riding[1] and riding[2]


@pytest.mark.usefixtures("cut_windows")
def test_every_corpus_log_read_in_one_pass_gives_the_two_passes_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    compared = 0
    for case in load_cases():
        data = case.log.read_bytes()
        if b"NCCL" not in data:
            continue
        assert _read(case.log, True, monkeypatch)[:4] == _read(case.log, False, monkeypatch)[:4], case.name
        compared += 1
    assert compared > 10


def _random_log(seed: int) -> bytes:
    rnd = random.Random(seed)
    words = [b"NCCL WARN", b"NCCL INFO Channel 00/0", b"CUDA error", b"rror", b"atchdog", b"died", b"xit", b"\n",
             b"\r\n", b"\x00", b"x" * 40, b"NCCL", b"rro"]
    return b" ".join(rnd.choice(words) for _ in range(20_000))


def _written_log(tmp_path: Path, seed: int) -> tuple[bytes, Path]:
    """The random log of ``seed``, and the file it was written to."""
    data = _random_log(seed)
    path = tmp_path / "log"
    path.write_bytes(data)
    return data, path


@pytest.mark.parametrize("seed", range(4))
def test_the_hits_taken_from_a_riding_scan_are_those_of_a_scan_of_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Rides of random lengths (a pass that goes on from where it was, or starts again elsewhere), then
    find_all on ranges inside, across and outside what was covered: the same hits, and the same probe."""
    monkeypatch.setattr(pages, "WINDOW", 4096)
    rnd = random.Random(seed)
    data, path = _written_log(tmp_path, seed)
    size = len(data)
    ranges = [(0, size), (0, size - 3), (17, size // 2), (size // 3, size - 1), (size - 25, size), (5, 5)]
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        rider = needles.ride_along(mapped, NEEDLES, probe=(CHANNEL,))
        assert rider is not None and needles.rider(mapped) is rider
        rider.begin(rnd.randrange(size // 4))
        while rider.intervals[-1][1] < size * 3 // 4:
            assert rider.extend(rider.intervals[-1][1] + rnd.randrange(1, 9000))
            if rnd.random() < 0.1:       # a pass that starts again further on (the hits so far are forgotten)
                rider.begin(rider.intervals[-1][1] + rnd.randrange(1, 500))
        assert rider.intervals
        for start, end in ranges:
            found = needles.find_all(mapped, NEEDLES, start, end, probe=(CHANNEL,))
            assert found is not None
            for needle in NEEDLES:
                assert found[needle] == bytes_find_all(data, needle, start, end), (start, end, needle)
            assert needles.seen(mapped, CHANNEL) is not None
            probed = needles._SEEN[mapped].pop()[2][CHANNEL]
            assert probed == bool(bytes_find_all(data, CHANNEL, start, end)), (start, end)


def test_a_rider_that_fails_leaves_the_marker_pass_its_whole_range(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the hit budget the riding scan gives up: nothing is taken from it, and the WARN lines of the
    NCCL reader are those of its own search."""
    monkeypatch.setattr(needles, "MAX_HITS", 50)
    data = _random_log(9)
    path = tmp_path / "log"
    path.write_bytes(data)
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        rider = needles.ride_along(mapped, NEEDLES)
        assert rider is not None
        warns = bulk._Warns(mapped, 0, len(data))
        warns.until(len(data) // 2)
        assert rider.failed and needles.rider(mapped) is None
        warns.until(len(data))
        assert list(warns) == bulk._warn_lines(mapped, 0, len(data))
        assert needles.find_all(mapped, (bulk.WARN,), max_hits=10**6) is not None


def _late_nccl_log(share: float) -> bytes:
    """Training lines, the NCCL lines of the generated log from ``share`` of it on (none at 1.0; the first
    one cut by a 4 KiB window edge), a failure in the training lines."""
    training = "".join(f"[rank{i % 8}]: step {i // 8} loss 2.{i % 97:02d} lr 3e-4\n" for i in range(20_000))
    head = training[:int(len(training) * share)]
    edge = -(-len(head) // 4096) * 4096 - 20       # "NCCL" of the first NCCL line straddles this window edge
    head += "[rank0]: step 0 loss " + "x" * max(0, edge - len(head) - 30) + "\n"
    nccl = "" if share >= 1 else _large_log(OOM, 0.5)
    return (head[:len(head) // 2] + OOM + head[len(head) // 2:] + nccl).encode()


@pytest.mark.usefixtures("cut_windows")
@pytest.mark.parametrize("share", [0.0, 0.3, 1.0])
def test_the_search_for_the_first_nccl_line_rides_as_well(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           share: float) -> None:
    """The NCCL reader's search for its first line finds the markers in the same scan (needles.Rider.find):
    a log without NCCL lines, or with them late, is read once; the answers are those of the separate passes."""
    for index, data in enumerate(_variants(_late_nccl_log(share).decode())):
        path = tmp_path / f"{index}.log"
        path.write_bytes(data)
        riding, alone = _read(path, True, monkeypatch), _read(path, False, monkeypatch)
        assert riding[:4] == alone[:4], index
        covered = sum(high - low for low, high in riding[4])
        assert covered == len(data) if b"NCCL" not in data else covered > len(data) // 2, index


@pytest.mark.parametrize("seed", range(6))
def test_a_riding_search_answers_what_find_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Rider.find: ``data.find(needle, start, end)`` from random starts and ends, a needle rare, dense or absent;
    what it covered then gives find_all the hits and probe of a scan of its own."""
    monkeypatch.setattr(pages, "WINDOW", 4096)
    rnd = random.Random(seed)
    data, path = _written_log(tmp_path, seed)
    size = len(data)
    for needle in (b"NCCL", b"Channel 00/0 ", b"absent needle", b"x" * 40 + b" NCCL WARN"):
        start = rnd.choice([0, rnd.randrange(size), size - 30])
        end = rnd.choice([size, rnd.randrange(start, size + 1)])
        with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            needles._SEEN.pop(mapped, None)
            rider = needles.ride_along(mapped, NEEDLES, probe=(CHANNEL,))
            assert rider is not None
            assert needles.find_first(mapped, needle, start, end) == data.find(needle, start, end), (needle, start)
            assert rider.intervals and rider.intervals[0][0] == start
            for low, high in ((0, size), (start, end), (start, size)):
                found = needles.find_all(mapped, NEEDLES, low, high, probe=(CHANNEL,))
                assert found is not None
                for word in NEEDLES:
                    assert found[word] == bytes_find_all(data, word, low, high), (low, high, word)
                assert needles._SEEN[mapped].pop()[2][CHANNEL] == bool(bytes_find_all(data, CHANNEL, low, high))


def test_a_riding_search_where_the_rider_cannot_is_the_plain_one(tmp_path: Path) -> None:
    """A needle of the rider's own, or a rider that covers past the start: the plain search, nothing covered."""
    data = _random_log(3)
    path = tmp_path / "log"
    path.write_bytes(data)
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        rider = needles.ride_along(mapped, NEEDLES, probe=(CHANNEL,))
        assert rider is not None and rider.find(bulk.WARN, 0, len(data)) is None
        assert needles.find_first(mapped, bulk.WARN, 0, len(data)) == data.find(bulk.WARN)
        rider.begin(0)
        assert rider.extend(5000)
        assert rider.find(b"NCCL", 100, len(data)) is None and rider.intervals == [(0, 5000)]


def _channel_log() -> bytes:
    """The generated log of a rank's OOM with NCCL's channel lines: one at its start, four more through it."""
    lines = _large_log(OOM, 0.5).splitlines(keepends=True)
    channel = "n0:1003:1003 [3] NCCL INFO Channel 00/0 : 3[3b000] -> 4[4b000] via P2P/IPC\n"
    for index in range(len(lines) * 4 // 5, -1, -(len(lines) // 5)):
        lines.insert(index, channel)
    return "".join(lines).encode()


@pytest.mark.usefixtures("cut_windows")
def test_a_probe_found_is_left_out_of_the_pass_s_later_databases(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the riding scan has found the channel probe, the communicator pass's databases built after it leave it
    out (whether it occurs is all a probe answers): the answers are those of the separate passes, and find_all's
    probe is right on every range, those from past its first hit (a scan of their own) included."""
    left_out: list[frozenset[int]] = []
    compile_ = comm_scan.CommFinder._compile

    def recording(finder: comm_scan.CommFinder, excluded: set[bytes], rider: needles.Rider | None) -> bool:
        built = compile_(finder, excluded, rider)
        left_out.append(finder._left_out)
        return built

    monkeypatch.setattr(comm_scan.CommFinder, "_compile", recording)
    data = _channel_log()
    path = tmp_path / "log"
    path.write_bytes(data)
    riding, alone = _read(path, True, monkeypatch), _read(path, False, monkeypatch)
    assert riding[:4] == alone[:4]
    assert any(left_out)
    size, hit = len(data), data.find(CHANNEL)
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        needles.ride_along(mapped, NEEDLES, probe=(CHANNEL,))
        nccl_tracker(mapped)
        rider = needles.rider(mapped)
        assert rider is not None and rider.settled()
        for low, high in ((0, size), (hit, size), (hit + 1, size), (0, hit + len(CHANNEL)), (0, hit + 3),
                          (size // 2, size), (hit + 1, hit + 2), (size - 30, size)):
            found = needles.find_all(mapped, NEEDLES, low, high, probe=(CHANNEL,))
            assert found is not None
            probed = needles._SEEN[mapped].pop()[2][CHANNEL]
            assert probed == bool(bytes_find_all(data, CHANNEL, low, high)), (low, high)
