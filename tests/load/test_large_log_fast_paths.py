"""The fast searches of the large-log path (triage.load.logs.large, triage.parsing.nccl.bulk,
triage.parsing.pages) find what the plain searches and the line-by-line reader find: on every log
of the real-world corpus, and on generated large logs with the failure near the start, in the
middle and at the end, its line cut by a window edge."""

from __future__ import annotations

import mmap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.realworld.scoring import load_cases
from triage.analysis.analyze import analyze
from triage.errors import InputError
from triage.load import inputs
from triage.load.inputs import load_inputs, load_log_texts
from triage.load.logs import large
from triage.parsing import needles, pages
from triage.parsing.nccl import bulk as nccl_bulk
from triage.parsing.nccl import tracker as nccl_tracker
from triage.parsing.nccl.tracker import NcclTracker

CASES = load_cases()


@pytest.fixture
def small_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows of 4 KiB, NCCL's bulk path from the first byte, its line-by-line tail 2 KiB."""
    monkeypatch.setattr(pages, "WINDOW", 4096)
    monkeypatch.setattr(pages, "OVERLAP", 256)
    monkeypatch.setattr(nccl_tracker, "BULK_MIN_BYTES", 0)
    monkeypatch.setattr(nccl_bulk, "TAIL_BYTES", 2048)


def _plain_hits(data: bytes, needle: bytes) -> list[int]:
    hits, pos = [], 0
    while (hit := data.find(needle, pos)) >= 0:
        hits.append(hit)
        pos = hit + 1
    return hits


def _summary(tracker: NcclTracker) -> list[tuple[object, ...]]:
    return sorted((s.host, s.pid, s.comm, s.rank, s.nranks, s.global_rank, s.comm_id, s.last, s.ops_seen,
                   s.history, s.first) for s in tracker.last_ops())


@pytest.mark.usefixtures("small_windows")
def test_on_every_corpus_log_the_fast_searches_find_what_the_plain_ones_find(tmp_path: Path) -> None:
    nccl_logs = 0
    for case in CASES:
        data = case.log.read_bytes()
        if not data:
            continue
        with open(case.log, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            for marker in (*large.MARKERS, b"NCCL WARN", b"NCCL"):
                found, pos = [], 0
                while (hit := large._find(mapped, marker, pos, len(data))) >= 0:
                    found.append(hit)
                    pos = hit + 1
                assert found == _plain_hits(data, marker), (case.name, marker)
            if b"NCCL" in data:
                nccl_logs += 1
                bulk, reference = NcclTracker(16), NcclTracker(16)
                bulk.feed_bytes(mapped)
                reference._feed_lines(data.decode("utf-8", "replace"))
                assert _summary(bulk) == _summary(reference), case.name
                assert [w.message for w in bulk.warnings()] == [w.message for w in reference.warnings()], case.name
    assert len(CASES) > 150 and nccl_logs > 10


def _verdict(report: object) -> tuple[object, ...]:
    verdict = report.verdict  # type: ignore[attr-defined]
    return verdict.kind.value, verdict.culprit_ranks, verdict.summary


@pytest.mark.usefixtures("small_windows")
def test_on_every_corpus_log_the_mapped_path_gives_the_verdict_of_the_text_path(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every corpus log read as a large one (memory-mapped, NCCL lines by the bulk pass) gives the
    verdict its text gives."""
    monkeypatch.setattr(inputs, "LARGE_LOG_BYTES", 0)
    for case in CASES:
        text = case.log.read_text(encoding="utf-8", errors="replace")
        if not text.strip() or case.log.stat().st_size > large.TAIL_BYTES:
            continue
        mapped = _outcome(load_inputs, [case.log])
        assert mapped == _outcome(load_log_texts, [(str(case.log), text)]), case.name


def _outcome(load: Callable[[list[Any]], object], arg: list[Any]) -> tuple[object, ...]:
    """The verdict, or the refusal (a corpus case triage does not read yet must be refused on both paths)."""
    try:
        return _verdict(analyze(load(arg)))  # type: ignore[arg-type]
    except InputError:
        return ("refused",)


OOM = ("[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 5 has a total "
       "capacity of 79.10 GiB of which 1.06 GiB is free.\n")
WARN = ("n0:1005:1099 [5] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.0.0.5<50532> "
        "with status=12 opcode=0 len=0 vendor err 129\n")
TIMEOUT = ("[rank{r}]:[E1001 10:00:00.1 90{r} ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective "
           "operation timeout: WorkNCCL(SeqNum=9001, OpType=ALLREDUCE, NumelIn=1024, NumelOut=1024, "
           "Timeout(ms)=600000) ran for 600010 milliseconds before timing out.\n")


def _nccl_line(r: int, n: int) -> str:
    return (f"n0:{1000 + r}:{1001 + r} [{r}] NCCL INFO AllReduce: opCount {n:x} sendbuff 0x7f0 recvbuff 0x7f0 "
            f"count 1024 datatype 7 op 0 root 0 comm 0x5{r:03x}0 [nranks=8] stream 0x1\n")


def _large_log(failure: str, at: float) -> str:
    """~1.5 MB of training and NCCL lines, ``failure`` at the share ``at`` of it (its line cut by a
    4 KiB window edge), the other ranks' watchdog timeouts at the end."""
    body = "".join(f"n0:{1000 + r}:{1000 + r} [{r}] NCCL INFO ncclCommInitRank comm 0x5{r:03x}0 rank {r} nranks 8 "
                   f"cudaDev {r} busId {r + 1}b000 commId 0x9e2f - Init COMPLETE\n" for r in range(8))
    body += "".join(f"[rank{i % 8}]: step {i // 8} loss 2.{i % 97:02d} lr 3e-4\n" + _nccl_line(i % 8, i // 8)
                   for i in range(12_000))
    cut = int(len(body) * at)
    cut = body.find("\n", cut) + 1 if at else 0
    edge = -(-cut // 4096) * 4096 - len(failure) // 2      # the failure line straddles this window edge
    filler = "[rank0]: step 0 loss 2.00 lr 3e-4 " + "x" * max(0, edge - cut - 36) + "\n" if edge - cut > 36 else ""
    return body[:cut] + filler + failure + body[cut:] + "".join(TIMEOUT.format(r=r) for r in (0, 1, 2, 3, 4, 6, 7))


@pytest.mark.usefixtures("small_windows")
@pytest.mark.parametrize("at", [0.0, 0.5, 0.97])
@pytest.mark.parametrize("failure", [OOM, WARN], ids=["oom", "nccl-warn"])
def test_a_large_log_gives_the_verdict_of_its_whole_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         failure: str, at: float) -> None:
    monkeypatch.setattr(inputs, "LARGE_LOG_BYTES", 64 << 10)
    text = _large_log(failure, at)
    path = tmp_path / "job.log"
    path.write_text(text, encoding="utf-8")
    assert path.stat().st_size > 4 * large.TAIL_BYTES
    mapped = analyze(load_inputs([path]))
    whole = analyze(load_log_texts([(str(path), text)]))
    assert _verdict(mapped) == _verdict(whole)
    assert (mapped.verdict.kind.value, "rank 5" in mapped.verdict.summary) == (
        "exception" if failure == OOM else "network_error", True)


def _variants(text: str) -> list[bytes]:
    """The log as written, with CRLF lines, with NUL bytes around its failure lines, without its last newline."""
    data = text.encode()
    return [data, data.replace(b"\n", b"\r\n"), data.replace(b"rror", b"\x00rror\x00").replace(b"Watchdog", b"\x00Watchdog"),
            data.rstrip(b"\n")]


@pytest.mark.usefixtures("small_windows")
@pytest.mark.parametrize("at", [0.0, 0.5, 0.97])
def test_the_one_pass_scanner_marks_the_lines_the_per_marker_passes_mark(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, at: float) -> None:
    """The excerpt of a large log is the same with the multi-needle scanner (triage.parsing.needles)
    and with one pass per marker: failure near the start, in the middle, at the end, its line cut by a
    window edge; CRLF, NUL bytes, no trailing newline; and on every corpus log."""
    if not needles.available():
        pytest.skip("the hyperscan package is not installed here")
    datas = [d for failure in (OOM, WARN) for d in _variants(_large_log(failure, at))]
    datas += [case.log.read_bytes() for case in CASES] if at == 0.0 else []
    for index, data in enumerate(datas):
        if not data:
            continue
        path = tmp_path / f"{index}.log"
        path.write_bytes(data)
        with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            fast = large._spans(mapped, len(data))
            with monkeypatch.context() as plain:
                plain.setattr(needles, "_hs", None)
                assert large._spans(mapped, len(data)) == fast, index
        assert fast or b"rror" not in data
