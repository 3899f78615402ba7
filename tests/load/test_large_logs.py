"""Large logs are memory-mapped and read in C-speed passes: the verdict is the one the line-by-line
reader gives on the same failure."""

from __future__ import annotations

from pathlib import Path

from triage.analysis.analyze import analyze
from triage.load.inputs import load_inputs
from triage.load.logs.large import LARGE_LOG_BYTES

OOM = ("[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 5 has a total "
       "capacity of 79.10 GiB of which 1.06 GiB is free.\n")
TIMEOUT = ("[rank{r}]:[E1001 10:00:00.1 90{r} ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective "
           "operation timeout: WorkNCCL(SeqNum=9001, OpType=ALLREDUCE, NumelIn=1024, NumelOut=1024, "
           "Timeout(ms)=600000) ran for 600010 milliseconds before timing out.\n")
STEPS = "".join(f"[rank{i % 8}]: step {i // 8} loss 2.{i % 97:02d}\n" for i in range(20_000))


def _write(path: Path, middle: str, timed_out: tuple[int, ...] = (0, 1, 2, 3, 4, 6, 7)) -> Path:
    with open(path, "w", encoding="utf-8") as handle:
        while handle.tell() < LARGE_LOG_BYTES // 2:
            handle.write(STEPS)
        handle.write(middle)                      # far from the end: only the marker pass finds it
        while handle.tell() < LARGE_LOG_BYTES + (1 << 20):
            handle.write(STEPS)
        handle.write("".join(TIMEOUT.format(r=r) for r in timed_out))
    return path


def test_a_failure_far_from_the_end_of_a_large_log_is_the_root_cause(tmp_path: Path) -> None:
    path = _write(tmp_path / "big.log", OOM)
    assert path.stat().st_size > LARGE_LOG_BYTES
    report = analyze(load_inputs([path]))
    assert (report.verdict.kind.value, report.verdict.culprit_ranks) == ("exception", (5,))
    assert report.to_json()["extra"]["coverage"]["ranks"] == "0-7"


def test_a_large_log_with_timeouts_only_is_a_hang_not_an_all_clear(tmp_path: Path) -> None:
    report = analyze(load_inputs([_write(tmp_path / "big.log", "", timed_out=tuple(range(8)))]))
    assert report.verdict.kind.value == "hang" and report.verdict.culprit_ranks == ()


def test_the_rank_that_did_not_time_out_in_a_large_log_is_stuck_outside(tmp_path: Path) -> None:
    report = analyze(load_inputs([_write(tmp_path / "big.log", "")]))
    assert (report.verdict.kind.value, report.verdict.culprit_ranks) == ("stuck_outside_collective", (5,))
