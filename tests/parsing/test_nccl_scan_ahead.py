"""The chunks ahead of the NCCL communicator pass scanned on threads (triage.parsing.nccl.comm_scan, a large
input on several CPUs) give the answers of the one-thread pass: the prefilter's answers while the excluded set
grows, the bulk read's tracker, the riding marker scan's LogScan (generated logs and every corpus log, with
chunks and windows that cut lines), and a real `triage report` of a log past the threshold gives the same
JSON, byte for byte, on all CPUs and on one. The threads end with the pass."""

from __future__ import annotations

import mmap
import os
import random
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.load.test_riding_marker_pass import _read
from tests.parsing.test_nccl_comm_scan import POINTERS, _log, _nccl_log, _sre_all, _summary, _walk
from tests.realworld.scoring import load_cases
from triage.load.logs import large
from triage.parsing import needles, pages
from triage.parsing.nccl import bulk as nccl_bulk
from triage.parsing.nccl import comm_scan
from triage.parsing.nccl import tracker as nccl_tracker
from triage.parsing.nccl.tracker import NcclTracker

pytestmark = pytest.mark.skipif(not needles.available(), reason="the hyperscan package is not installed here")


class _Taken:
    """Counts the chunks the pass took from the threads, and checks that none is left running after it."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.hits = 0
        take = comm_scan._Ahead.take

        def counted(ahead: comm_scan._Ahead, *args: object) -> object:
            result = take(ahead, *args)  # type: ignore[arg-type]
            self.hits += result is not None
            return result

        monkeypatch.setattr(comm_scan._Ahead, "take", counted)

    @staticmethod
    def running() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == "triage-scan-ahead" and t.is_alive()]


@pytest.fixture
def ahead(monkeypatch: pytest.MonkeyPatch) -> _Taken:
    """Chunks ahead scanned on threads from the first byte, as on a machine of several CPUs."""
    monkeypatch.setattr(comm_scan, "AHEAD_FROM", 0)
    monkeypatch.setattr(comm_scan, "_threads", lambda: 3)
    return _Taken(monkeypatch)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("chunk", [64, 1000])
def test_the_prefilter_with_chunks_scanned_ahead_finds_what_the_look_ahead_search_finds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ahead: _Taken, seed: int, chunk: int) -> None:
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
            assert finder is not None and finder._ahead is not None
            assert _walk(mapped, steps, end, finder) == expected, end
            finder.close()
    assert ahead.hits > 0 and not ahead.running()


def test_a_single_cpu_a_busy_machine_or_a_small_input_scans_on_the_pass_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(comm_scan, "AHEAD_FROM", 0)
    for cpus, load, threads in ((1, 0.0, 1), (2, 0.0, 2), (2, 0.7, 2), (2, 1.2, 1), (2, 9.0, 1), (16, 3.5, 4),
                                (16, 14.5, 2)):
        monkeypatch.setattr(comm_scan, "_cpus", lambda cpus=cpus: cpus)
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, load, load))
        assert comm_scan._threads() == threads, (cpus, load)
        finder = comm_scan.CommFinder.start(b"x comm 0x1 y", 12)
        assert finder is not None and (finder._ahead is not None) == (threads > 1)
        finder.close()
    monkeypatch.setattr(comm_scan, "AHEAD_FROM", 13)
    finder = comm_scan.CommFinder.start(b"x comm 0x1 y", 12)
    assert finder is not None and finder._ahead is None
    assert finder.find(0, set()) == (1, b"0x1")


def _corpus() -> list[bytes]:
    return [case.log.read_bytes() for case in load_cases()]


@pytest.mark.parametrize("source", ["generated", "corpus", "corpus concatenated"])
def test_the_bulk_read_with_chunks_scanned_ahead_gives_the_same_tracker(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ahead: _Taken, source: str) -> None:
    """Chunks of 64 bytes in the corpus's logs (the largest is under 3 KB), of 3,000 in the others."""
    monkeypatch.setattr(pages, "WINDOW", 4096)
    monkeypatch.setattr(pages, "OVERLAP", 256)
    monkeypatch.setattr(comm_scan, "CHUNK", 3000 if source == "generated" else 64)
    monkeypatch.setattr(nccl_tracker, "BULK_MIN_BYTES", 0)
    monkeypatch.setattr(nccl_bulk, "TAIL_BYTES", 2048 if source == "generated" else 256)
    datas = {"generated": [_nccl_log()], "corpus": _corpus(),
             "corpus concatenated": [b"\n".join(_corpus())] * 2}[source]
    checked = 0
    for index, data in enumerate(datas):
        if b"NCCL" not in data:
            continue
        path = tmp_path / f"{index}.log"
        path.write_bytes(data)
        with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            threaded = NcclTracker(16)
            threaded.feed_bytes(mapped)
            assert not ahead.running()
            with monkeypatch.context() as one:
                one.setattr(comm_scan, "_threads", lambda: 1)
                alone = NcclTracker(16)
                alone.feed_bytes(mapped)
        assert _summary(threaded) == _summary(alone), index
        assert [w.message for w in threaded.warnings()] == [w.message for w in alone.warnings()], index
        assert threaded.bulk_fallbacks == alone.bulk_fallbacks, index
        checked += 1
    assert checked >= (10 if source == "corpus" else 1) and ahead.hits > 0


@pytest.mark.slow
def test_every_corpus_log_with_the_riding_scan_ahead_gives_the_one_thread_answers(
        monkeypatch: pytest.MonkeyPatch, ahead: _Taken) -> None:
    """The marker pass's needles found in the chunks scanned ahead (the riding scan): the same LogScan, excerpt,
    comms, WARN lines and covered ranges as one thread gives."""
    monkeypatch.setattr(pages, "WINDOW", 4096)
    monkeypatch.setattr(pages, "OVERLAP", 256)
    monkeypatch.setattr(comm_scan, "CHUNK", 64)
    monkeypatch.setattr(nccl_tracker, "BULK_MIN_BYTES", 0)
    monkeypatch.setattr(nccl_bulk, "TAIL_BYTES", 256)
    compared = 0
    for case in load_cases():
        if b"NCCL" not in case.log.read_bytes():
            continue
        threaded = _read(case.log, True, monkeypatch)
        with monkeypatch.context() as one:
            one.setattr(comm_scan, "_threads", lambda: 1)
            alone = _read(case.log, True, monkeypatch)
        assert threaded == alone, case.name
        compared += 1
    assert compared > 10 and ahead.hits > 0 and not ahead.running()


def _big_nccl_log(path: Path, size: int) -> None:
    """``size`` bytes and more of 16 ranks' collectives on two comms each (one goes quiet half-way), a WARN now
    and then, a rank's CUDA OOM and the others' watchdog timeouts at the end."""
    rnd = random.Random(7)
    with open(path, "w", encoding="utf-8") as out:
        out.writelines(f"node{r // 8}:{4000 + r}:{4000 + r} [{r % 8}] NCCL INFO ncclCommInitRank comm 0x55{r:02x}a0 "
                      f"rank {r} nranks 16 cudaDev {r % 8} busId {r % 8 + 1}b000 commId 0x9e2f - Init COMPLETE\n" for r in range(16))
        op = 0
        while out.tell() < size:
            lines = []
            for _ in range(4000):
                r = rnd.randrange(16)
                comm = f"0x55{r:02x}a0" if rnd.random() < 0.7 or out.tell() > size // 2 else f"0x66{r:02x}b0"
                lines.append(f"node{r // 8}:{4000 + r}:{4011 + r} [{r % 8}] NCCL INFO AllReduce: opCount {op:x} "
                             f"sendbuff 0x7f{op:09x} recvbuff 0x7f{op:09x} count 1048576 datatype 7 op 0 root 0 "
                             f"comm {comm} [nranks=16] stream 0x5\n")
                op += 1
                if rnd.random() < 0.0002:
                    lines.append(f"node{r // 8}:{4000 + r}:{4020 + r} [{r % 8}] transport/net_ib.cc:1295 NCCL WARN "
                                 "NET/IB : Got completion from peer with status=12 opcode=0 len=0 vendor err 129\n")
            out.write("".join(lines))
        out.write("[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 5 has a "
                  "total capacity of 79.10 GiB of which 1.06 GiB is free.\n")
        for r in (0, 1, 2, 3, 4, 6, 7):
            out.write(f"[rank{r}]:[E1001 10:00:00.1 90{r} ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught "
                      "collective operation timeout: WorkNCCL(SeqNum=9001, OpType=ALLREDUCE, NumelIn=1024, "
                      "NumelOut=1024, Timeout(ms)=600000) ran for 600010 milliseconds before timing out.\n")


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="one CPU here: the report never scans ahead")
def test_a_real_report_of_a_log_past_the_threshold_is_the_same_on_all_cpus_and_on_one(tmp_path: Path) -> None:
    """(Threads scan ahead in the first run only where the machine has a CPU idle: comm_scan._threads.)"""
    path = tmp_path / "nccl.log"
    _big_nccl_log(path, comm_scan.AHEAD_FROM + (1 << 20))
    assert path.stat().st_size > max(comm_scan.AHEAD_FROM, large.LARGE_LOG_BYTES)
    argv = [sys.executable, "-m", "triage", "report", str(path), "--format", "json"]
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    cpu = min(os.sched_getaffinity(0))
    outs = [subprocess.run(argv, check=False, capture_output=True, env=env, cwd=tmp_path, timeout=600,
                           preexec_fn=(lambda: os.sched_setaffinity(0, {cpu})) if one else None)
            for one in (False, True)]
    assert outs[0].stdout == outs[1].stdout and outs[0].returncode == outs[1].returncode
    assert b'"kind": "exception"' in outs[0].stdout and b"CUDA out of memory" in outs[0].stdout
